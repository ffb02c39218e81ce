//! `record` reads asyncio tasks from outside on CPython 3.14 and 3.15 (issue #34, docs/asyncio.md),
//! checked against a program that logs its own truth (tests/scripts/asyncio_truth.py): the names
//! and coroutines of its tasks, the CPU time each task measured around its own steps, and which
//! task awaited which.
//!
//! - every task of the log is in `run.tasks` with its coroutine, and is `done` when it finished
//!   0.3 s or more before the program ended;
//! - each task's share of the event loop thread's computing samples (attributed through
//!   `task_runs`) is within 2 percentage points of its share of the logged CPU time;
//! - a task that awaited another task has that task as `awaits` in some state;
//! - on CPython 3.11 the run has no tasks, and its `tasks_info.note` (and `record`'s last lines)
//!   say tasks need 3.14+.
//!
//! 3.14 and 3.15 are Debian sid's in a chroot (`~/.cache/threadradar/pythons/3.1x/bin/…`, see
//! tests/pythons.sh): a missing one is skipped, or fails the test with
//! `THREADRADAR_REQUIRE_PYTHONS=1`.

mod common;
use common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use threadradar_profiler::run::{Run, ThreadState};
use threadradar_profiler::tasks::TaskStateKind;

fn chrooted(label: &str) -> Option<String> {
    let dir = std::env::var_os("THREADRADAR_PYTHONS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/threadradar/pythons"));
    let exe = dir.join(label).join("bin").join(format!("python{label}"));
    let runs = Command::new(&exe).args(["-c", "import asyncio"]).output().is_ok_and(|o| o.status.success());
    if !runs {
        assert!(std::env::var("THREADRADAR_REQUIRE_PYTHONS").map_or(true, |v| v != "1"), "CPython {label} is required here but {} does not run (bash tests/pythons.sh {label})", exe.display());
        skip("python", &format!("CPython {label}: {} does not run (bash tests/pythons.sh {label})", exe.display()));
        return None;
    }
    Some(exe.display().to_string())
}

fn record_truth(python: &str, dir: &Path) -> (Run, Value, String) {
    let out = dir.join("run.json");
    let log = dir.join("truth.json");
    // Twice the default work (about 6 s of CPU): ~2 500 samples of the loop, so that sampling
    // alone puts a 12 % share within about 0.65 pp (one standard deviation) of its truth.
    let args = ["record", "--no-progress", "-o", out.to_str().unwrap(), "--", python, &script("asyncio_truth.py"), log.to_str().unwrap(), "2"];
    let o = threadradar(dir, &args);
    assert!(o.status.success(), "record failed: {}", stderr(&o));
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("the program wrote no log {}: {e}", log.display()));
    (read(&out), serde_json::from_str(&text).unwrap(), stderr(&o))
}

fn check(label: &str) {
    let Some(python) = chrooted(label) else { return };
    let _guard = serial();
    let dir = tempfile::tempdir().unwrap();
    let (run, truth, _) = record_truth(&python, dir.path());
    let info = run.tasks_info.as_ref().unwrap_or_else(|| panic!("{label}: the run says nothing about tasks"));
    assert!(info.source.contains("_asyncio debug offsets") && info.note.is_none(), "{label}: {info:?}");

    // Names and coroutines.
    let logged = truth["tasks"].as_array().unwrap();
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut ended_early = 0;
    for t in logged {
        let name = t["name"].as_str().unwrap();
        let found: Vec<(u32, &threadradar_profiler::tasks::Task)> = run.tasks.iter().enumerate().filter(|(_, r)| r.name == name).map(|(i, r)| (i as u32, r)).collect();
        assert_eq!(found.len(), 1, "{label}: task {name} should be recorded once: {:?}", run.tasks.iter().map(|t| &t.name).collect::<Vec<_>>());
        let (id, task) = found[0];
        assert_eq!(task.coro, t["coro"].as_str().unwrap(), "{label}: the coroutine of {name}");
        let f = task.function.unwrap_or_else(|| panic!("{label}: {name}'s coroutine is no function of the run"));
        let fname = &run.strings[run.functions[f as usize].qualname as usize];
        assert_eq!(fname, task.coro.as_str(), "{label}: {name}'s function");
        // A task that finished a while before the program did was seen to (the lists are read
        // again within 50 ms of a change here); one that finished in its last moments may not be.
        let before_end = t["finished_before_end_s"].as_f64().unwrap();
        ended_early += (before_end >= 0.3) as usize;
        assert!(task.done || before_end < 0.3, "{label}: {name} finished {before_end:.2} s before the program ended, but the run does not say it is done");
        ids.insert(name.to_string(), id);
    }

    assert!(ended_early >= 1, "{label}: only {ended_early} tasks finished 0.3 s before the end: the done check checks little");

    // CPU shares: the loop thread's computing samples, attributed to tasks by task_runs.
    let loop_tid = truth["loop_tid"].as_u64().unwrap() as u32;
    let thread = run.threads.iter().position(|t| t.tid == loop_tid).unwrap_or_else(|| panic!("{label}: no thread {loop_tid}")) as u32;
    let mut by_task: HashMap<u32, u64> = HashMap::new();
    for r in run.task_runs.iter().filter(|r| r.thread == thread) {
        for s in r.first..=r.last {
            let computing = run.samples[s as usize].threads.iter().any(|t| t.thread == thread && t.state == ThreadState::Computing);
            if computing {
                *by_task.entry(r.task).or_default() += 1;
            }
        }
    }
    let total_cpu: f64 = logged.iter().map(|t| t["cpu_ns"].as_f64().unwrap()).sum();
    let total_samples: f64 = ids.values().map(|id| by_task.get(id).copied().unwrap_or(0) as f64).sum();
    assert!(total_samples > 1000.0, "{label}: only {total_samples} computing samples attributed to the logged tasks");
    let mut report = String::new();
    let mut worst: f64 = 0.0;
    for t in logged {
        let name = t["name"].as_str().unwrap();
        let truth_share = 100.0 * t["cpu_ns"].as_f64().unwrap() / total_cpu;
        let got = 100.0 * by_task.get(&ids[name]).copied().unwrap_or(0) as f64 / total_samples;
        worst = worst.max((got - truth_share).abs());
        report += &format!("\n  {name:<8} logged {truth_share:5.1} %  sampled {got:5.1} %");
    }
    eprintln!("{label}: CPU share per task ({total_samples} samples):{report}");
    assert!(worst <= 2.0, "{label}: a task's sampled CPU share is {worst:.1} pp off its logged share:{report}");

    // Await edges between tasks.
    for pair in truth["awaited"].as_array().unwrap() {
        let (waiter, awaited) = (ids[pair[0].as_str().unwrap()], ids[pair[1].as_str().unwrap()]);
        let seen = run.task_states.iter().any(|s| s.task == waiter && s.state == TaskStateKind::Awaiting && s.awaits == Some(awaited));
        assert!(seen, "{label}: {pair} awaited a task, but no state of it says so");
    }
    // Await chains: an awaiting parse task's chain ends in its own coroutine (the outermost frame).
    let parse = ids["parse-1"];
    let chain = run.task_states.iter().filter(|s| s.task == parse && s.state == TaskStateKind::Awaiting).find_map(|s| s.chain);
    let chain = chain.unwrap_or_else(|| panic!("{label}: parse-1 awaited the queue, but no chain was read"));
    let names: Vec<String> = run.stack_frames(chain).map(|f| run.qualname(f.function).to_string()).collect();
    assert_eq!(names.last().map(String::as_str), Some("parse"), "{label}: parse-1's chain {names:?}");
    assert!(names.iter().any(|n| n == "Queue.get"), "{label}: parse-1 awaited Queue.get: {names:?}");
}

#[test]
fn tasks_on_3_14() {
    check("3.14");
}

#[test]
fn tasks_on_3_15() {
    check("3.15");
}

#[test]
fn tasks_need_3_14() {
    let _guard = serial();
    let dir = tempfile::tempdir().unwrap();
    let (run, truth, err) = record_truth(&python(), dir.path());
    assert!(run.meta.python_version.as_deref().is_some_and(|v| !v.starts_with("3.14") && !v.starts_with("3.15")), "{:?}", run.meta.python_version);
    assert!(truth["tasks"].as_array().is_some_and(|t| t.len() == 9));
    assert!(run.tasks.is_empty() && run.task_runs.is_empty() && run.task_states.is_empty());
    let note = run.tasks_info.as_ref().and_then(|i| i.note.clone()).expect("a note that tasks were not recorded");
    assert!(note.contains("3.14+"), "{note}");
    assert!(err.contains(&note), "record says it: {err}");
}
