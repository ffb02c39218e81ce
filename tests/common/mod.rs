//! Helpers shared by the end-to-end tests: run the real `threadradar` binary on real Python
//! programs and read what it wrote.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};
use threadradar_profiler::run::{Run, ThreadState};

/// Recordings measure timing: run them one at a time within a test binary.
static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_threadradar")
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn script(name: &str) -> String {
    repo().join("tests/scripts").join(name).display().to_string()
}

pub fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

/// `threadradar ARGS…` in `cwd`, waiting for it.
pub fn threadradar(cwd: &Path, args: &[&str]) -> Output {
    Command::new(bin()).args(args).current_dir(cwd).output().expect("running threadradar")
}

/// `threadradar record --no-progress -o OUT EXTRA… -- python3 SCRIPT ARGS…`.
pub fn record(out: &Path, extra: &[&str], script_and_args: &[&str]) -> Output {
    let py = python();
    let mut args: Vec<&str> = vec!["record", "--no-progress", "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.push("--");
    args.push(&py);
    args.extend_from_slice(script_and_args);
    threadradar(out.parent().unwrap(), &args)
}

pub fn read(path: &Path) -> Run {
    threadradar_profiler::runfile::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Samples of each thread in a given state, by thread name.
pub fn count_by_name(run: &Run, state: ThreadState) -> std::collections::HashMap<String, u64> {
    let mut m = std::collections::HashMap::new();
    for s in &run.samples {
        for t in &s.threads {
            if t.state == state {
                *m.entry(run.threads[t.thread as usize].name.clone()).or_insert(0) += 1;
            }
        }
    }
    m
}

/// A test (or part of one) that cannot run on this machine, and why: `requirement` names what is
/// missing (`root`, `perf events`, `pytest-xdist`, …). The reason is appended to the file named by
/// `THREADRADAR_SKIP_LOG` (tests/run_all.sh counts and prints them at the end); with
/// `THREADRADAR_NO_SKIPS=1` (set by tests/run_all.sh, which installs every requirement and runs
/// as root) a skip fails the test instead: there, a requirement that seems missing is a bug of
/// the test or of the setup, not a reason to pass.
pub fn skip(requirement: &str, why: &str) {
    let test = std::thread::current().name().unwrap_or("?").to_string();
    assert!(
        std::env::var("THREADRADAR_NO_SKIPS").map_or(true, |v| v != "1"),
        "{test} would be skipped ({requirement}: {why}), but every requirement is installed here (THREADRADAR_NO_SKIPS=1)"
    );
    eprintln!("skipped: {why}");
    if let Some(log) = std::env::var_os("THREADRADAR_SKIP_LOG") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
            let _ = writeln!(f, "{test}\t{requirement}\t{why}");
        }
    }
}
