//! Recording a run from the editor (`threadradar.record`): the server starts `threadradar record`
//! as a child process in a workspace folder, passes the program's output on as log messages and
//! reports progress; stopping it (the progress's cancel button or `threadradar.stopRecording`)
//! is the recorder's Ctrl-C, so the run recorded so far is written, never lost.
//!
//! This module knows the child process; `server.rs` owns the protocol side.

use crate::project::{Overrides, ProjectConfig};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use threadradar_profiler::runfile;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::mpsc;

/// What to record, from the command's argument and the settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordRequest {
    /// The program and its arguments, e.g. `["python3", "-m", "pytest"]`.
    pub command: Vec<String>,
    /// Where the program runs; the run is written to this folder's `.threadradar/runs/` unless
    /// it is inside a workspace folder (then to that folder's).
    pub cwd: PathBuf,
    pub subprocesses: bool,
    /// Stop after this many seconds.
    pub duration: Option<f64>,
    /// Record the program this many times as one run set (`record --repeat N`); 1: one run.
    pub repeat: u32,
}

impl RecordRequest {
    /// Reads `{"command"?: [..] | "a b c", "cwd"?, "subprocesses"?, "duration"?}` (or just the
    /// command as an array or string), with the defaults from the settings. A command line given
    /// as one string is split by [`crate::cmdline::split`] (quotes as in a shell).
    pub fn parse(arg: &Value, default_command: &[String], default_subprocesses: bool, folders: &[PathBuf]) -> Result<RecordRequest, String> {
        Self::parse_with_repeat(arg, default_command, default_subprocesses, 1, folders)
    }

    /// [`RecordRequest::parse`] with the settings' repeat count for a request that names none.
    pub fn parse_with_repeat(arg: &Value, default_command: &[String], default_subprocesses: bool, default_repeat: u32, folders: &[PathBuf]) -> Result<RecordRequest, String> {
        let obj = match arg {
            Value::Object(_) => arg.clone(),
            Value::Null => Value::Object(Default::default()),
            other => serde_json::json!({ "command": other }),
        };
        let command: Vec<String> = match obj.get("command") {
            None | Some(Value::Null) => default_command.to_vec(),
            Some(Value::String(s)) => crate::cmdline::split(s)?,
            Some(Value::Array(a)) => {
                let mut v = Vec::new();
                for x in a {
                    match x.as_str() {
                        Some(s) => v.push(s.to_string()),
                        None => return Err("the command is a list of strings, e.g. [\"python3\", \"-m\", \"pytest\"]".into()),
                    }
                }
                v
            }
            Some(_) => return Err("the command is a list of strings, e.g. [\"python3\", \"-m\", \"pytest\"]".into()),
        };
        if command.is_empty() {
            return Err("there is no command to record: set `recordCommand` or pass {\"command\": [\"python3\", \"app.py\"]}".into());
        }
        let cwd = match obj.get("cwd").and_then(|c| c.as_str()) {
            Some(c) => PathBuf::from(c),
            None => folders.first().cloned().ok_or("open a folder first: the run is written to its .threadradar/runs")?,
        };
        if !cwd.is_dir() {
            return Err(format!("{} is not a directory", cwd.display()));
        }
        let subprocesses = obj.get("subprocesses").and_then(|s| s.as_bool()).unwrap_or(default_subprocesses);
        let duration = match obj.get("duration") {
            None | Some(Value::Null) => None,
            Some(d) => match d.as_f64() {
                Some(x) if x.is_finite() && x > 0.0 => Some(x),
                _ => return Err("the duration is a positive number of seconds".into()),
            },
        };
        let repeat = match obj.get("repeat") {
            None | Some(Value::Null) => default_repeat,
            Some(r) => match r.as_u64() {
                Some(n @ 1..=100) => n as u32,
                _ => return Err("the repeat count is a whole number from 1 to 100 (5 runs are usually enough to see the spread)".into()),
            },
        };
        Ok(RecordRequest { command, cwd, subprocesses, duration, repeat })
    }

    /// The workspace folder that encloses the recording's directory (else that directory).
    fn project<'a>(&'a self, folders: &'a [PathBuf]) -> &'a Path {
        folders.iter().filter(|f| self.cwd.starts_with(f)).max_by_key(|f| f.as_os_str().len()).unwrap_or(&self.cwd)
    }

    /// The runs directory this recording writes to: the enclosing workspace folder's.
    pub fn runs_dir(&self, folders: &[PathBuf]) -> PathBuf {
        runfile::runs_dir(self.project(folders))
    }

    /// The runs directory of a recording from the editor, where the language server lists the
    /// enclosing workspace folder's runs: the editor's `runsDir`, else the folder's
    /// `[tool.threadradar] runs-dir`, else `.threadradar/runs`.
    pub fn runs_dir_with(&self, folders: &[PathBuf], overrides: &Overrides) -> PathBuf {
        crate::project::folder_runs_dir(self.project(folders), overrides)
    }

    /// Milliseconds between samples: the editor's `intervalMs`, else the enclosing folder's
    /// `[tool.threadradar] interval-ms`; `None` leaves the recorder's default (3). A bad
    /// configuration file is its sentence (the recording would not be what the project says).
    pub fn interval_ms_with(&self, folders: &[PathBuf], overrides: &Overrides) -> Result<Option<f64>, String> {
        match overrides.interval_ms {
            Some(ms) => Ok(Some(ms)),
            None => Ok(ProjectConfig::load(self.project(folders))?.interval_ms),
        }
    }

    /// `threadradar record` arguments writing to `output`.
    pub fn recorder_args(&self, output: &Path) -> Vec<String> {
        self.recorder_args_with(output, None)
    }

    /// [`RecordRequest::recorder_args`] sampling every `interval_ms` (`None`: the default).
    pub fn recorder_args_with(&self, output: &Path, interval_ms: Option<f64>) -> Vec<String> {
        let mut args = vec!["record".to_string(), "--no-progress".into(), "-o".into(), output.display().to_string()];
        if let Some(ms) = interval_ms {
            args.push("--interval-ms".into());
            args.push(ms.to_string());
        }
        if self.subprocesses {
            args.push("--subprocesses".into());
        }
        if let Some(d) = self.duration {
            args.push("--duration".into());
            args.push(d.to_string());
        }
        if self.repeat > 1 {
            // `output` is then the run set's manifest; the runs are written beside it.
            args.push("--repeat".into());
            args.push(self.repeat.to_string());
        }
        args.push("--".into());
        args.extend(self.command.iter().cloned());
        args
    }
}

/// A line of the recording's output.
#[derive(Debug)]
pub enum Output {
    Stdout(String),
    Stderr(String),
}

/// A started recorder.
pub struct Started {
    pub child: tokio::process::Child,
    pub pid: u32,
    pub output: PathBuf,
    pub lines: mpsc::Receiver<Output>,
}

/// Starts `recorder record … -- command` in the request's directory, with the editor's
/// `runsDir` and `intervalMs` over the project's configuration.
pub fn start(recorder: &Path, req: &RecordRequest, folders: &[PathBuf], overrides: &Overrides) -> Result<Started, String> {
    let interval_ms = req.interval_ms_with(folders, overrides)?;
    let dir = req.runs_dir_with(folders, overrides);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let program = runfile::program_name(&req.command);
    let name = if req.repeat > 1 { format!("{program}.runset") } else { program };
    let output = runfile::new_run_path(&dir, &name, std::time::SystemTime::now());
    let mut child = tokio::process::Command::new(recorder)
        .args(req.recorder_args_with(&output, interval_ms))
        .current_dir(&req.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", recorder.display()))?;
    let pid = child.id().unwrap_or(0);
    let (tx, lines) = mpsc::channel(256);
    if let Some(out) = child.stdout.take() {
        tokio::spawn(forward(out, tx.clone(), Output::Stdout));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(forward(err, tx, Output::Stderr));
    }
    Ok(Started { child, pid, output, lines })
}

async fn forward<R: AsyncRead + Unpin>(r: R, tx: mpsc::Sender<Output>, wrap: fn(String) -> Output) {
    let mut lines = BufReader::new(r).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if tx.send(wrap(line)).await.is_err() {
            break;
        }
    }
}

/// Asks the recorder to stop as Ctrl-C does: it stops sampling, writes the run and ends the
/// program politely.
pub fn interrupt(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    // SAFETY: kill(2) takes no pointers; `pid` is not 0 (checked above: 0 would signal the
    // server's own group) and is the recorder this server started, and SIGINT is a valid signal.
    let sent = unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) == 0 };
    if sent {
        // The recorder passes one Ctrl-C to the program and waits for it; a program that does
        // not end on SIGINT (non-daemon threads, a handler) would keep an editor's "stop"
        // waiting. After a grace period the recorder gets its second Ctrl-C, which ends the
        // program's process group; the run written at the first is kept either way.
        std::thread::spawn(move || {
            std::thread::sleep(STOP_GRACE);
            // SAFETY: as above; signal 0 sends nothing, it only checks that the recorder is still
            // there. kill(2) cannot touch memory, so the worst a reused pid could get is a SIGINT.
            unsafe {
                if libc::kill(pid as libc::pid_t, 0) == 0 {
                    libc::kill(pid as libc::pid_t, libc::SIGINT);
                }
            }
        });
    }
    sent
}

/// How long an editor's stop waits for the program to end on its own before the recorder's
/// second Ctrl-C ends it.
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// The recorder's own lines (`threadradar: …`) are its summary or its error; the rest is the
/// program's output.
pub fn recorder_line(line: &str) -> Option<&str> {
    line.strip_prefix("threadradar: ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn requests_take_defaults_and_reject_bad_values() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let sub = root.join("tests");
        std::fs::create_dir_all(&sub).unwrap();
        let folders = vec![root.clone()];
        let default = v(&["python3", "-m", "pytest"]);
        let r = RecordRequest::parse(&Value::Null, &default, true, &folders).unwrap();
        assert_eq!(r, RecordRequest { command: default.clone(), cwd: root.clone(), subprocesses: true, duration: None, repeat: 1 });
        let r = RecordRequest::parse(&json!({ "command": "python3 app.py --n 3", "cwd": sub, "duration": 2.5, "subprocesses": false }), &default, true, &folders).unwrap();
        assert_eq!(r.command, v(&["python3", "app.py", "--n", "3"]));
        assert_eq!(r.runs_dir(&folders), root.join(".threadradar/runs"), "a subdirectory writes to its workspace folder's runs");
        let out = root.join(".threadradar/runs/x.json");
        assert_eq!(r.recorder_args(&out), v(&["record", "--no-progress", "-o", out.to_str().unwrap(), "--duration", "2.5", "--", "python3", "app.py", "--n", "3"]));
        assert_eq!(RecordRequest::parse(&json!(["python3", "x.py"]), &default, true, &folders).unwrap().command, v(&["python3", "x.py"]));
        assert!(RecordRequest::parse(&json!({ "command": [] }), &default, true, &folders).unwrap_err().contains("no command"));
        assert!(RecordRequest::parse(&json!({ "command": [1] }), &default, true, &folders).unwrap_err().contains("list of strings"));
        assert!(RecordRequest::parse(&json!({ "duration": -1 }), &default, true, &folders).unwrap_err().contains("positive"));
        assert!(RecordRequest::parse(&json!({ "cwd": "/no/such/dir" }), &default, true, &folders).unwrap_err().contains("not a directory"));
        assert!(RecordRequest::parse(&Value::Null, &default, true, &[]).unwrap_err().starts_with("open a folder first"));
    }

    #[test]
    fn the_editors_runs_dir_and_interval_win_over_the_projects() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let sub = root.join("app");
        std::fs::create_dir_all(&sub).unwrap();
        let folders = vec![root.clone()];
        let r = RecordRequest::parse(&json!({ "command": ["python3", "x.py"], "cwd": sub }), &[], true, &folders).unwrap();
        let none = Overrides::default();
        // Nothing configured: the default directory and interval.
        assert_eq!(r.runs_dir_with(&folders, &none), root.join(".threadradar/runs"));
        assert_eq!(r.interval_ms_with(&folders, &none), Ok(None));
        // The enclosing folder's configuration.
        std::fs::write(root.join("threadradar.toml"), "interval-ms = 2\nruns-dir = \"profiles\"\n").unwrap();
        assert_eq!(r.runs_dir_with(&folders, &none), root.join("profiles"));
        assert_eq!(r.interval_ms_with(&folders, &none), Ok(Some(2.0)));
        // The editor's settings; a relative runsDir is relative to the workspace folder.
        let o = Overrides { interval_ms: Some(4.0), runs_dir: Some("mine".into()), ..Default::default() };
        assert_eq!(r.runs_dir_with(&folders, &o), root.join("mine"));
        assert_eq!(r.interval_ms_with(&folders, &o), Ok(Some(4.0)));
        let out = root.join("mine/x.json");
        assert_eq!(r.recorder_args_with(&out, Some(4.0)), v(&["record", "--no-progress", "-o", out.to_str().unwrap(), "--interval-ms", "4", "--subprocesses", "--", "python3", "x.py"]));
    }
}
