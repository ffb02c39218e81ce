//! `threadradar doctor` (issue #33) against real processes: each cause of a failed recording is
//! produced here (another user's process, perf events a user may not open, a program that is not
//! Python, a chrooted one, a bad configuration) and the doctor names it with the next step.

mod common;

use common::{bin, python, skip, stderr};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A process killed when the test ends, however it ends.
struct Target(Child);

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Target {
    fn pid(&self) -> String {
        self.0.id().to_string()
    }
}

/// A Python program that has printed `ready` (its interpreter is up) and then sleeps.
fn python_target(cmd: &mut Command) -> Target {
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready", "the target did not start");
    Target(child)
}

const SLEEPER: &str = "import time; print('ready', flush=True); time.sleep(60)";

/// `doctor --json` run in `cwd` (with `args`) by `cmd`'s program: its parsed report, exit code.
fn doctor_json(mut cmd: Command, cwd: &Path, args: &[&str]) -> (Value, i32) {
    let o = cmd.arg("doctor").arg("--json").args(args).current_dir(cwd).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}\nstderr: {}", stderr(&o)));
    (v, o.status.code().unwrap_or(-1))
}

fn check<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no {id} check in {report:#}"))
}

fn as_root(cwd: &Path, args: &[&str]) -> (Value, i32) {
    doctor_json(Command::new(bin()), cwd, args)
}

/// The binary copied where user 65534 may run it (the build's is under root's home), and the
/// command that runs it as that user; `None` (a skip) without root or setpriv.
fn as_nobody(dir: &Path) -> Option<Command> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("root", "dropping to another user needs root");
        return None;
    }
    if !Command::new("setpriv").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success()) {
        skip("setpriv", "no setpriv (util-linux) to drop to another user");
        return None;
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let copy = dir.join("threadradar");
    std::fs::copy(bin(), &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(&copy).env("HOME", dir);
    Some(cmd)
}

#[test]
fn the_json_report_has_every_check_with_a_status_and_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (v, code) = as_root(dir.path(), &[]);
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["pid"], Value::Null);
    let ids: Vec<&str> = v["checks"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["ptrace", "sched", "config", "python", "runs"], "{v:#}");
    for c in v["checks"].as_array().unwrap() {
        assert!(["ok", "warn", "error"].contains(&c["status"].as_str().unwrap()), "{c}");
        assert!(!c["summary"].as_str().unwrap().is_empty(), "{c}");
        // A problem always says what to do; a good answer has nothing to add.
        assert_eq!(c["status"] != "ok", c.get("next").is_some_and(|n| n.is_string()), "{c}");
    }
    assert_eq!(v["ok"], code == 0, "exit code {code} and ok agree");
    let runs = check(&v, "runs");
    assert_eq!(runs["status"], "ok");
    assert!(runs["summary"].as_str().unwrap().contains(&dir.path().join(".threadradar/runs").display().to_string()), "{runs}");
    assert!(check(&v, "config")["summary"].as_str().unwrap().contains("the defaults apply"), "{v:#}");
    // The text form: one line per check, the summary sentence at the end.
    let o = Command::new(bin()).arg("doctor").current_dir(dir.path()).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("threadradar ") && text.contains("sched ") && text.contains("runs are written to"), "{text}");
}

#[test]
fn a_plain_python_process_is_named_with_its_version_and_reader() {
    let target = python_target(Command::new(python()).args(["-c", SLEEPER]));
    let dir = tempfile::tempdir().unwrap();
    let (v, code) = as_root(dir.path(), &["--pid", &target.pid()]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "pid")["status"], "ok");
    let version = Command::new(python()).args(["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"]).output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    let interp = check(&v, "interpreter");
    let s = interp["summary"].as_str().unwrap();
    assert_eq!(interp["status"], "ok", "{interp}");
    assert!(s.starts_with(&format!("Python {version} (with the GIL), read by ")), "{s}");
    assert!(s.contains("read by threadradar: ") || s.contains("read by py-spy"), "{s}");
    assert_eq!(check(&v, "root")["status"], "ok");
    assert!(check(&v, "root")["summary"].as_str().unwrap().contains("no chroot or container"));
}

#[test]
fn a_process_that_is_not_python_is_named_and_the_next_step_given() {
    let target = Target(Command::new("sleep").arg("60").spawn().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let (v, code) = as_root(dir.path(), &["--pid", &target.pid()]);
    assert_eq!(code, 1, "an error exits 1: {v:#}");
    assert_eq!(v["ok"], false);
    let interp = check(&v, "interpreter");
    assert_eq!(interp["status"], "error");
    assert!(interp["summary"].as_str().unwrap().contains("(sleep) is not a Python program"), "{interp}");
    assert!(interp["next"].as_str().unwrap().contains("threadradar record -- python3"), "{interp}");
    // No such process at all.
    let (v, _) = as_root(dir.path(), &["--pid", "999999999"]);
    assert_eq!(check(&v, "pid")["status"], "error");
    assert!(check(&v, "pid")["next"].as_str().unwrap().contains("pgrep"), "{v:#}");
}

#[test]
fn another_users_process_cannot_be_read_and_the_doctor_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nobody) = as_nobody(dir.path()) else { return };
    let target = python_target(Command::new(python()).args(["-c", SLEEPER]));
    let (v, code) = doctor_json(nobody, dir.path(), &["--pid", &target.pid()]);
    assert_eq!(code, 1, "{v:#}");
    let pid = check(&v, "pid");
    assert_eq!(pid["status"], "error", "{pid}");
    let s = pid["summary"].as_str().unwrap();
    assert!(s.contains(&format!("cannot read the memory of process {}", target.pid())) && s.contains("owned by uid 0; threadradar runs as uid 65534"), "{s}");
    let next = pid["next"].as_str().unwrap();
    assert!(next.contains("run threadradar as root or as the process's owner") && next.contains("threadradar record -- "), "{next}");
    // What cannot be read is not looked into further.
    assert!(v["checks"].as_array().unwrap().iter().all(|c| c["id"] != "interpreter"), "{v:#}");
}

#[test]
fn a_user_without_perf_event_permission_is_told_scheduler_events_are_off_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let paranoid: i64 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap().trim().parse().unwrap();
    if paranoid <= -1 {
        // A machine that lets every user open tracepoints: nothing to refuse.
        skip("perf_event_paranoid", &format!("kernel.perf_event_paranoid is {paranoid}: every user may record scheduler events"));
        return;
    }
    let Some(nobody) = as_nobody(dir.path()) else { return };
    let (v, _) = doctor_json(nobody, dir.path(), &[]);
    let sched = check(&v, "sched");
    assert_eq!(sched["status"], "warn", "{sched}");
    let s = sched["summary"].as_str().unwrap();
    assert!(s.starts_with(&format!("kernel.perf_event_paranoid = {paranoid}: scheduler events are not recorded")), "{s}");
    assert!(sched["next"].as_str().unwrap().contains("sudo sysctl kernel.perf_event_paranoid=-1"), "{sched}");
    // Root may: the same check is good there (the probe opened sched_switch).
    let (v, _) = as_root(dir.path(), &[]);
    let sched = check(&v, "sched");
    assert_eq!(sched["status"], "ok", "{sched}");
    assert!(sched["summary"].as_str().unwrap().contains("will be recorded"), "{sched}");
}

/// The sid chroot of tests/pythons.sh (as tests/cpython_versions.rs finds it).
fn sid_root() -> Option<PathBuf> {
    let root = std::env::var_os("THREADRADAR_SID").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/threadradar/sid"));
    if !root.join("usr/bin/python3.14").exists() {
        skip("python", &format!("no sid chroot at {} (run `bash tests/pythons.sh 3.14`)", root.display()));
        return None;
    }
    Some(root)
}

#[test]
fn a_chrooted_program_is_recognised_with_its_root_and_its_interpreter() {
    let Some(root) = sid_root() else { return };
    let target = python_target(Command::new("chroot").arg(&root).args(["/usr/bin/python3.14", "-c", SLEEPER]));
    let dir = tempfile::tempdir().unwrap();
    let (v, code) = as_root(dir.path(), &["--pid", &target.pid()]);
    assert_eq!(code, 0, "{v:#}");
    let r = check(&v, "root");
    assert_eq!(r["status"], "ok", "{r}");
    assert!(r["summary"].as_str().unwrap().contains(&format!("runs in a chroot or container whose / is {} here", root.display())), "{r}");
    let interp = check(&v, "interpreter");
    assert!(interp["summary"].as_str().unwrap().starts_with("Python 3.14"), "{interp}");
    assert!(interp["summary"].as_str().unwrap().contains("read by threadradar: _Py_DebugOffsets"), "{interp}");
}

#[test]
fn a_bad_configuration_is_one_sentence_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"x\"\n\n[tool.threadradar]\nintervall = 2\n").unwrap();
    let sub = dir.path().join("pkg");
    std::fs::create_dir(&sub).unwrap();
    // From a subdirectory: the project's file is found above it, as a run made there finds it.
    let (v, code) = as_root(&sub, &[]);
    assert_eq!(code, 1, "{v:#}");
    let c = check(&v, "config");
    assert_eq!(c["status"], "error", "{c}");
    let s = c["summary"].as_str().unwrap();
    assert!(s.contains("unknown key `intervall`") && s.contains(&format!("{} line 5", dir.path().join("pyproject.toml").display())), "{s}");
    std::fs::write(dir.path().join("pyproject.toml"), "[tool.threadradar]\ninterval-ms = 2\n").unwrap();
    let (v, _) = as_root(&sub, &[]);
    let c = check(&v, "config");
    assert_eq!(c["status"], "ok", "{c}");
    assert!(c["summary"].as_str().unwrap().starts_with(&format!("{} parsed", dir.path().join("pyproject.toml").display())), "{c}");
}
