//! Profiling a test from the editor (issue 19): "▶ Profile" lenses on the tests of a module,
//! `threadradar.profileTest` (which runs `threadradar test` for one test or file, with progress
//! and cancellation, and answers with the run and its outcome), "▶ Profile again" and
//! `threadradar.compareWithPrevious`.

use super::*;
use crate::project::PytestConventions;
use crate::pytests::{self, TestKind};
use crate::test_job::{is_pytest_progress, progress_message, project_root, TestJob};

impl Backend {
    /// The current text of a document: the open buffer, else the file.
    fn text_of(&self, uri: &Uri, path: &Path) -> Option<String> {
        if let Some(d) = self.state().docs.get(uri.as_str()) {
            return Some(d.doc.text().to_string());
        }
        std::fs::read_to_string(path).ok()
    }

    /// "▶ Profile" above each test, "▶ Profile file" (and "▶ Profile again" for the last
    /// profiled test) at the top of a test module.
    pub(super) fn test_lenses(&self, uri: &Uri) -> Vec<CodeLens> {
        let Some(path) = uri.to_file_path().map(|p| p.into_owned()) else { return Vec::new() };
        let (enabled, folders, last) = {
            let s = self.state();
            (s.settings.test_lens, s.folders.clone(), s.last_test.clone())
        };
        if !enabled || path.extension().is_none_or(|e| e != "py") {
            return Vec::new();
        }
        let root = project_root(&path, &folders);
        let conv = PytestConventions::find(path.parent().unwrap_or(&root), Some(&root));
        if !conv.collects(&path) {
            return Vec::new();
        }
        let Some(text) = self.text_of(uri, &path) else { return Vec::new() };
        let lens = |line: u32, title: &str, name: Value| CodeLens {
            range: Range::new(Position::new(line, 0), Position::new(line, 0)),
            command: Some(Command {
                title: title.into(),
                command: "threadradar.profileTest".into(),
                arguments: Some(vec![json!({ "uri": uri.as_str(), "name": name })]),
            }),
            data: None,
        };
        let mut out = vec![lens(0, "▶ Profile file", Value::Null)];
        if let Some(last) = last.filter(|l| l["uri"].as_str() == Some(uri.as_str())) {
            out.push(CodeLens {
                command: Some(Command { title: "▶ Profile again".into(), command: "threadradar.profileTest".into(), arguments: Some(vec![last]) }),
                ..out[0].clone()
            });
        }
        for t in pytests::discover(&text, &conv) {
            let title = match t.kind {
                TestKind::Class => "▶ Profile class",
                _ => "▶ Profile",
            };
            out.push(lens(t.line, title, json!(t.id)));
        }
        out
    }

    /// `threadradar.profileTest [{uri, name | null}]`: runs the test (or the whole file) under the
    /// recorder and answers `{"run": path, "outcome": {...} | null}` once the run is written.
    pub(super) async fn profile_test(self: &Arc<Self>, arg: Value) -> Result<Option<Value>> {
        const USAGE: &str = "threadradar.profileTest needs [{\"uri\": test file URI, \"name\": \"TestClass::test_name\" | \"test_name\" | null, \"repeat\"?: 1–100}]";
        let uri_s = arg.get("uri").and_then(|u| u.as_str()).ok_or_else(|| invalid(USAGE))?;
        let name = match arg.get("name") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(_) => return Err(invalid(USAGE)),
        };
        // `repeat` > 1: the test N times as one run set (its mean and spread; compare tells noise).
        let repeat = match arg.get("repeat") {
            None | Some(Value::Null) => self.settings().repeat,
            Some(r) => r.as_u64().filter(|n| (1..=100).contains(n)).ok_or_else(|| invalid("the repeat count is a whole number from 1 to 100 (5 runs are usually enough to see the spread)"))? as u32,
        };
        let uri: Uri = uri_s.parse().map_err(|_| invalid(format!("{uri_s} is not a URI: {USAGE}")))?;
        let path = uri.to_file_path().map(|p| p.into_owned()).ok_or_else(|| invalid(format!("{uri_s} is not a file")))?;
        if !path.is_file() {
            return Err(invalid(format!("{} does not exist: open the test file again", path.display())));
        }
        let (folders, selected, overrides) = {
            let s = self.state();
            (s.folders.clone(), s.settings.python.clone(), s.settings.overrides())
        };
        // The rules and the command `threadradar mcp`'s profile_test shares (crate::test_job).
        let text = self.text_of(&uri, &path);
        let plan_path = path.clone();
        let plan_name = name.clone();
        let job = self
            .blocking(move |_| TestJob::plan_with(&plan_path, plan_name.as_deref(), text, &folders, selected.as_deref(), repeat, &overrides))
            .await
            .ok_or_else(Error::internal_error)?
            .map_err(invalid)?;
        let TestJob { root, node, output, args } = job;

        let (tx, rx) = tokio::sync::watch::channel(false);
        {
            let mut s = self.state();
            if let Some(r) = &s.recording {
                return Err(invalid(format!("`{}` is already being recorded: stop it first (threadradar.stopRecording)", r.command.join(" "))));
            }
            s.recording = Some(ActiveRecording { pid: 0, output: output.clone(), command: vec!["pytest".into(), node.clone()], token: None, done: rx });
            // "▶ Profile again" repeats a count the request named; else the setting decides then.
            let mut last = json!({ "uri": uri.as_str(), "name": name });
            if arg.get("repeat").is_some_and(|r| !r.is_null()) {
                last["repeat"] = json!(repeat);
            }
            s.last_test = Some(last);
        }
        let exe = match std::env::current_exe() {
            Ok(e) => e,
            Err(e) => {
                self.state().recording = None;
                return Err(invalid(format!("cannot find the threadradar binary: {e}")));
            }
        };
        let spawned = tokio::process::Command::new(&exe)
            .args(&args)
            .current_dir(&root)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                self.state().recording = None;
                return Err(invalid(format!("cannot start {}: {e}", exe.display())));
            }
        };
        let pid = child.id().unwrap_or(0);
        let (ltx, mut lines) = tokio::sync::mpsc::channel(256);
        if let Some(out) = child.stdout.take() {
            tokio::spawn(forward(out, ltx.clone()));
        }
        if let Some(err) = child.stderr.take() {
            tokio::spawn(forward(err, ltx));
        }
        let title = if repeat > 1 { format!("ThreadRadar: profiling {node} {repeat} times (a run set)") } else { format!("ThreadRadar: profiling {node}") };
        let mut progress = None;
        let mut token = None;
        if self.state().caps.work_done_progress {
            let t = format!("threadradar/test/{}", self.progress_counter.fetch_add(1, Ordering::SeqCst));
            let pt = ProgressToken::String(t.clone());
            if self.client.send_request::<request::WorkDoneProgressCreate>(WorkDoneProgressCreateParams { token: pt.clone() }).await.is_ok() {
                progress = Some(self.client.progress(pt, title.clone()).with_message("starting pytest").with_cancel_button().begin().await);
                token = Some(t);
            }
        }
        if let Some(r) = self.state().recording.as_mut() {
            r.pid = pid;
            r.token = token;
        }
        self.client.log_message(MessageType::INFO, format!("{title} in {} → {}", root.display(), output.display())).await;
        self.notify_changed(Change::Recording).await;

        // Follow it: pytest's output to the log, the recorder's progress and pytest's progress
        // line to `$/progress`.
        let mut recorder: Vec<String> = Vec::new();
        let mut sampled = String::from("starting");
        let mut pytest_line = String::new();
        let mut phase: Option<String> = None;
        let mut open = true;
        let mut status = None;
        while open || status.is_none() {
            tokio::select! {
                line = lines.recv(), if open => match line {
                    Some(l) => {
                        if let Some(own) = recording::recorder_line(&l) {
                            if let Some(p) = own.strip_prefix("progress ") {
                                sampled = match &phase {
                                    Some(ph) => format!("{ph} · {p}"),
                                    None => p.to_string(),
                                };
                                if let Some(pr) = &progress {
                                    pr.report_with_message(progress_message(&sampled, &pytest_line), None).await;
                                }
                            } else {
                                if own.starts_with("run ") && own.contains(" of ") {
                                    phase = Some(own.to_string()); // `run 2 of 5`
                                }
                                recorder.push(own.to_string());
                            }
                        } else {
                            if is_pytest_progress(&l) {
                                pytest_line = l.trim().to_string();
                                if let Some(pr) = &progress {
                                    pr.report_with_message(progress_message(&sampled, &pytest_line), None).await;
                                }
                            }
                            self.client.log_message(MessageType::LOG, l).await;
                        }
                    }
                    None => open = false,
                },
                s = child.wait(), if status.is_none() => status = Some(s),
            }
        }
        if let Some(p) = progress {
            p.finish().await;
        }
        self.state().recording = None;
        let _ = tx.send(true);
        self.notify_changed(Change::Recording).await;
        if !output.is_file() {
            let why = recorder.iter().rev().find(|l| !l.starts_with("testing ")).cloned().unwrap_or_else(|| "the recorder ended without writing a run".into());
            self.show(MessageType::ERROR, format!("ThreadRadar: nothing was recorded: {why}")).await;
            return Err(invalid(format!("nothing was recorded: {why}")));
        }
        // A run set: its runs (each with its own outcome); the message and answer give the last.
        let set_path = output.clone();
        let set_runs: Option<Vec<PathBuf>> = self.blocking(move |_| threadradar_profiler::runset::read(&set_path).ok().flatten().map(|s| s.runs)).await.flatten();
        let run_path = set_runs.as_ref().and_then(|r| r.last().cloned()).unwrap_or_else(|| output.clone());
        let read_path = run_path.clone();
        let runs_read = set_runs.clone().unwrap_or_else(|| vec![output.clone()]);
        let outcomes: Vec<Option<threadradar_profiler::run::TestOutcome>> =
            self.blocking(move |_| runs_read.iter().map(|p| threadradar_profiler::runfile::read(p).ok().and_then(|r| r.meta.test).and_then(|t| t.outcome)).collect()).await.unwrap_or_default();
        let run = self.blocking(move |_| threadradar_profiler::runfile::read(&read_path).ok()).await.flatten();
        let test = run.as_ref().and_then(|r| r.meta.test.clone());
        let outcome = test.as_ref().and_then(|t| t.outcome.clone());
        // Show it: the new run becomes the active one (and new runs are followed again).
        {
            let mut s = self.state();
            s.pinned = false;
            s.runs.clear();
        }
        self.rescan(true).await;
        self.refresh(Change::Run).await;
        let code = status.and_then(|s| s.ok()).and_then(|s| s.code());
        let (typ, msg) = match &outcome {
            Some(o) => {
                let first = o.first_failure.as_ref().map(|f| format!(" First failure: {f}")).unwrap_or_default();
                let typ = if o.failed + o.errors > 0 { MessageType::WARNING } else { MessageType::INFO };
                (typ, format!("ThreadRadar: {node}: {}.{first}", pytests::outcome_words(o)))
            }
            None => {
                let why =
                    recorder.iter().find(|l| l.starts_with("outcome unknown")).cloned().unwrap_or_else(|| "outcome unknown: pytest wrote no report".into());
                (MessageType::WARNING, format!("ThreadRadar: {node}: {why}; the run keeps what was sampled."))
            }
        };
        let msg = match &set_runs {
            Some(runs) => {
                let failing = outcomes.iter().filter(|o| o.as_ref().is_some_and(|o| o.failed + o.errors > 0)).count();
                let how = if failing > 0 { format!(" {failing} of them had failures.") } else { String::new() };
                format!("{msg} A run set of {} runs ({}): `threadradar report {}` shows each figure's mean and spread; the last run is shown.{how}", runs.len(), output.display(), output.display())
            }
            None => msg,
        };
        self.show(typ, msg).await;
        let _ = code;
        let to_json = |o: &Option<threadradar_profiler::run::TestOutcome>| o.as_ref().map(|o| serde_json::to_value(crate::protocol::RunOutcome::from(o)).unwrap_or(Value::Null));
        let outcome_json = to_json(&outcome);
        match set_runs {
            Some(runs) => Ok(Some(json!({ "run": run_path, "runset": output, "runs": runs, "outcomes": outcomes.iter().map(to_json).collect::<Vec<_>>(), "outcome": outcome_json, "test": node }))),
            None => Ok(Some(json!({ "run": output, "outcome": outcome_json, "test": node }))),
        }
    }

    /// `threadradar.compareWithPrevious {run?}`: the run (default: the active one) against the
    /// run before it of the same test.
    pub(super) async fn compare_with_previous(&self, arg: Value) -> Result<Option<Value>> {
        let runs = self.request(protocol::Runs::NAME, Value::Null).await?;
        let wanted = arg.get("run").and_then(|r| r.as_str()).map(String::from).or_else(|| runs["active"].as_str().map(String::from));
        let wanted = wanted.ok_or_else(|| invalid("there is no run: profile a test first"))?;
        let item = runs["runs"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["path"].as_str() == Some(wanted.as_str()) || r["name"].as_str() == Some(wanted.as_str())))
            .ok_or_else(|| invalid(format!("no run {wanted:?}: `threadRadar/runs` lists the runs")))?;
        let previous = item["history"]["previous"]
            .as_str()
            .ok_or_else(|| invalid(format!("{} has no earlier run of the same test to compare with", item["name"].as_str().unwrap_or("?"))))?;
        let cmp = self.request(protocol::Compare::NAME, json!({ "base": previous, "new": item["path"], "level": "function" })).await?;
        if self.settings().panels {
            self.client.send_notification::<OpenPanel>(json!({ "panel": "compare", "base": previous, "new": item["path"] })).await;
        }
        Ok(Some(cmp))
    }
}

async fn forward<R: tokio::io::AsyncRead + Unpin>(r: R, tx: tokio::sync::mpsc::Sender<String>) {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(r).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if tx.send(line).await.is_err() {
            break;
        }
    }
}
