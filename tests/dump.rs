//! `threadradar dump --pid N` on a real deadlock (tests/scripts/deadlock.py): two threads each
//! hold one lock and wait for the other's. With RLocks (which keep their owner) the dump names
//! each holder and the cycle; with plain Locks (which do not) it says the holder is unknown and
//! claims no deadlock. On every interpreter the other tests use that runs here (3.11, 3.13,
//! 3.13t, 3.14, 3.15).

mod common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The deadlocked program; killed when dropped.
struct Deadlocked {
    child: Child,
    pid: u32,
    /// Thread name → native id, as the program printed them.
    tids: Value,
}

impl Drop for Deadlocked {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(python: &str, kind: &str) -> Deadlocked {
    let mut child = Command::new(python).arg(script("deadlock.py")).arg(kind).stdout(Stdio::piped()).spawn().expect("starting python");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{python} deadlock.py printed {line:?}: {e}"));
    // The program prints just before its threads block: give them a moment to be asleep.
    std::thread::sleep(std::time::Duration::from_millis(300));
    Deadlocked { pid: v["pid"].as_u64().unwrap() as u32, tids: v["threads"].clone(), child }
}

/// The 1-based line of the script holding `text`.
fn line_of(text: &str) -> u32 {
    let src = std::fs::read_to_string(script("deadlock.py")).unwrap();
    let i = src.lines().position(|l| l.contains(text)).unwrap_or_else(|| panic!("{text:?} is not in deadlock.py"));
    i as u32 + 1
}

fn dump(pid: u32, json: bool) -> String {
    let pid = pid.to_string();
    let mut args = vec!["dump", "--pid", pid.as_str()];
    if json {
        args.push("--json");
    }
    let o = threadradar(&std::env::temp_dir(), &args);
    assert!(o.status.success(), "dump failed: {}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// `sys.version_info[:2]` of `path`, `None` when it does not run.
fn version(path: &str) -> Option<String> {
    let o = Command::new(path).args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"]).output().ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The default python3, and the interpreters of tests/cpython_versions.rs that run here
/// (3.13 must; 3.13t is free-threaded, with a larger object head before an RLock's owner; 3.14
/// and 3.15 run in a chroot through wrappers made by tests/pythons.sh).
fn interpreters() -> Vec<String> {
    let dir = match std::env::var_os("THREADRADAR_PYTHONS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/threadradar/pythons"),
    };
    let mut out = vec![python()];
    for minor in ["3.13", "3.13t", "3.14", "3.15"] {
        let path = dir.join(format!("{minor}/bin/python{minor}")).display().to_string();
        match version(&path) {
            Some(v) if v == minor.trim_end_matches('t') => out.push(path),
            found => skip("python", &format!("CPython {minor}: {path} {}", found.map_or("does not run (install it with `bash tests/pythons.sh`)".into(), |v| format!("is {v}")))),
        }
    }
    out
}

fn check_text(py: &str, kind: &str, p: &Deadlocked, out: &str) {
    let take = line_of("with second:");
    let join = line_of("a.join()");
    let lines: Vec<&str> = out.lines().collect();
    for (me, other) in [("a", "b"), ("b", "a")] {
        let tid = p.tids[me].as_u64().unwrap();
        let h = lines
            .iter()
            .position(|l| l.starts_with(&format!("Thread {tid} \"{me}\" (Thread)")))
            .unwrap_or_else(|| panic!("{py} {kind}: no header for thread {me} ({tid}) in:\n{out}"));
        let header = lines[h];
        assert!(header.contains("idle in futex, waiting for second ("), "{py} {kind}: {header}");
        if kind == "rlock" {
            assert!(header.contains("_thread.RLock at 0x") && header.ends_with(&format!("held by \"{other}\" ({})", p.tids[other])), "{py}: {header}");
        } else {
            assert!(header.contains("_thread.lock at 0x") && header.ends_with("holder unknown: a plain Lock does not record its owner"), "{py}: {header}");
        }
        // Innermost frame first: the line that waits for the second lock.
        assert!(lines[h + 1].starts_with("    take (") && lines[h + 1].ends_with(&format!("deadlock.py:{take})")), "{py} {kind}: {}", lines[h + 1]);
    }
    let main = lines.iter().position(|l| l.starts_with(&format!("Thread {} \"MainThread\"", p.pid))).unwrap_or_else(|| panic!("{py}: no main thread in:\n{out}"));
    // A join waits for the joined thread, which holds it until it ends.
    assert!(lines[main].ends_with(&format!(", waiting for a (threading.Thread at {}) held by \"a\" ({})", lines[main].split(" at ").nth(1).unwrap_or("").split(')').next().unwrap_or(""), p.tids["a"])), "{py}: {}", lines[main]);
    assert!(lines[main + 1..].iter().take_while(|l| l.starts_with("    ")).any(|l| l.starts_with("    main (") && l.ends_with(&format!("deadlock.py:{join})"))), "{py}: main not at line {join}:\n{out}");
    let deadlock: Vec<&&str> = lines.iter().filter(|l| l.starts_with("Deadlock:")).collect();
    if kind == "rlock" {
        assert_eq!(deadlock.len(), 1, "{py}: one deadlock in:\n{out}");
        let d = deadlock[0];
        assert!(
            d.starts_with("Deadlock: \"a\" waits for second (_thread.RLock at 0x") && d.contains(") held by \"b\", which waits for second (_thread.RLock at 0x") && d.ends_with(") held by \"a\"."),
            "{py}: {d}"
        );
    } else {
        assert!(deadlock.is_empty(), "{py}: a deadlock claimed without holders:\n{out}");
        assert!(out.contains("No deadlock found among the holders known; 2 waiting thread(s) wait on locks whose holder is unknown"), "{py}:\n{out}");
    }
}

fn check_json(py: &str, kind: &str, p: &Deadlocked, out: &str) {
    let v: Value = serde_json::from_str(out).unwrap_or_else(|e| panic!("{py}: not JSON ({e}):\n{out}"));
    assert_eq!(v["pid"].as_u64(), Some(p.pid as u64));
    let threads = v["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 3, "{py}: {out}");
    assert_eq!(threads[0]["name"], "MainThread", "the main thread comes first");
    let index = |name: &str| threads.iter().position(|t| t["name"] == name).unwrap_or_else(|| panic!("{py}: no thread {name}"));
    let (a, b) = (index("a"), index("b"));
    for (me, other) in [(a, b), (b, a)] {
        let t = &threads[me];
        let name = t["name"].as_str().unwrap();
        assert_eq!(t["tid"], p.tids[name], "{py}: native id of {name}");
        assert_eq!(t["state"], "idle");
        let f0 = &t["frames"][0];
        assert_eq!((f0["function"].as_str(), f0["line"].as_u64()), (Some("take"), Some(line_of("with second:") as u64)), "{py}: {t}");
        assert!(f0["file"].as_str().unwrap().ends_with("tests/scripts/deadlock.py"));
        let w = &t["wait"];
        assert_eq!(w["name"], "second");
        assert!(w["addr"].as_u64().is_some_and(|a| a > 0), "{py}: {w}");
        if kind == "rlock" {
            assert_eq!((w["kind"].as_str(), w["holder"].as_u64()), (Some("_thread.RLock"), Some(other as u64)), "{py}: {w}");
        } else {
            assert_eq!((w["kind"].as_str(), &w["holder"]), (Some("_thread.lock"), &Value::Null), "{py}: {w}");
            assert!(w["holder_unknown"].is_string());
        }
    }
    assert_eq!(threads[0]["wait"]["holder"].as_u64(), Some(a as u64), "{py}: the main thread joins a");
    // Each waits for the lock the other took first: two different locks.
    assert_ne!(threads[a]["wait"]["addr"], threads[b]["wait"]["addr"]);
    let deadlocks = v["deadlocks"].as_array().unwrap();
    if kind == "rlock" {
        assert_eq!(deadlocks.len(), 1, "{py}: {out}");
        let mut cycle: Vec<u64> = deadlocks[0]["threads"].as_array().unwrap().iter().map(|i| i.as_u64().unwrap()).collect();
        cycle.sort();
        assert_eq!(cycle, vec![a.min(b) as u64, a.max(b) as u64]);
        assert!(deadlocks[0]["sentence"].as_str().unwrap().starts_with("Deadlock: \"a\" waits for"));
    } else {
        assert!(deadlocks.is_empty(), "{py}: {out}");
    }
}

#[test]
fn a_deadlock_shows_both_threads_their_lines_and_the_cycle() {
    let _g = serial();
    for py in interpreters() {
        for kind in ["rlock", "lock"] {
            let p = start(&py, kind);
            check_text(&py, kind, &p, &dump(p.pid, false));
            check_json(&py, kind, &p, &dump(p.pid, true));
        }
    }
}

#[test]
fn a_missing_or_non_python_process_is_one_sentence() {
    let _g = serial();
    // A pid that is not in use: above the kernel's maximum.
    let o = threadradar(&std::env::temp_dir(), &["dump", "--pid", "99999999"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.trim(), "threadradar: there is no process with pid 99999999: check the number, e.g. with `pgrep -a python`");

    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    // Not Python is decided once the process has run for a while without a Python binary mapped.
    std::thread::sleep(std::time::Duration::from_millis(1600));
    let o = threadradar(&std::env::temp_dir(), &["dump", "--pid", &sleeper.id().to_string()]);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.starts_with(&format!("threadradar: process {} (sleep) is not a Python program", sleeper.id())), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
