//! `threadradar waits` end to end: real recordings of a program that logs its own hand-offs
//! (tests/scripts/handoffs.py), edges checked against that log; Bug 2 buggy vs fixed; runs
//! without wait data say what is missing.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn json(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "threadradar failed: {}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

struct Handoff {
    time_s: f64,
    releaser: String,
    waiter: String,
    object: String,
}

/// Records handoffs.py and returns the run's path and the program's own log, in run seconds.
fn record_handoffs(dir: &Path, extra: &[&str]) -> (std::path::PathBuf, Vec<Handoff>) {
    let run_path = dir.join("handoffs.json");
    let rec = record(&run_path, extra, &[&script("handoffs.py"), "8"]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let logged: Value = serde_json::from_str(String::from_utf8_lossy(&rec.stdout).lines().last().unwrap()).expect("the program's hand-off log");
    let run = read(&run_path);
    let t0 = run.meta.started_at.unwrap_or(run.meta.start_unix_ms as f64 / 1000.0);
    let log = logged
        .as_array()
        .unwrap()
        .iter()
        .map(|h| Handoff {
            time_s: h["time"].as_f64().unwrap() - t0,
            releaser: h["releaser"].as_str().unwrap().to_string(),
            waiter: h["waiter"].as_str().unwrap().to_string(),
            object: h["object"].as_str().unwrap().to_string(),
        })
        .collect::<Vec<_>>();
    assert_eq!(log.len(), 40, "5 kinds × 8 rounds");
    (run_path, log)
}

/// Precision and recall of the edges that end the logged waiters' waits (GIL hand-offs and
/// futile wake-ups aside), against the log: an edge is right when a logged hand-off has its waker
/// and wakee and lies within `tol` seconds of it.
fn score(edges: &[Value], log: &[Handoff], tol: f64, before: f64) -> (f64, f64, Vec<String>) {
    let ours: Vec<&Value> = edges
        .iter()
        .filter(|e| e["wakee"].as_str().unwrap().starts_with("waiter-") && e["object"] != "GIL" && e["futile"] == false && e["kind"] == "wake")
        .collect();
    let matches = |e: &Value, h: &Handoff| {
        let dt = e["time_s"].as_f64().unwrap() - h.time_s;
        e["wakee"] == h.waiter.as_str() && e["waker"] == h.releaser.as_str() && dt <= tol && dt >= -before
    };
    let right = ours.iter().filter(|e| log.iter().any(|h| matches(e, h))).count();
    let found = log.iter().filter(|h| ours.iter().any(|e| matches(e, h))).count();
    let mut rows = Vec::new();
    for kind in ["lock", "condition", "event", "queue", "pipe"] {
        let logged = log.iter().filter(|h| h.object == kind).count();
        let k_found = log.iter().filter(|h| h.object == kind && ours.iter().any(|e| matches(e, h))).count();
        let k_edges: Vec<&&Value> = ours.iter().filter(|e| e["wakee"] == format!("waiter-{kind}").as_str()).collect();
        let k_right = k_edges.iter().filter(|e| log.iter().any(|h| matches(e, h))).count();
        let ev: std::collections::BTreeSet<&str> = k_edges.iter().map(|e| e["evidence"].as_str().unwrap()).collect();
        rows.push(format!("| {kind} | {logged} | {k_found} | {} | {k_right} | {} |", k_edges.len(), ev.into_iter().collect::<Vec<_>>().join(", ")));
    }
    let precision = if ours.is_empty() { 0.0 } else { right as f64 / ours.len() as f64 };
    (precision, found as f64 / log.len() as f64, rows)
}

#[test]
fn inferred_edges_match_the_logged_handoffs() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let (run_path, log) = record_handoffs(dir.path(), &["--interval-ms", "2"]);
    let out = json(&threadradar(dir.path(), &["waits", run_path.to_str().unwrap(), "--json", "--no-kernel"]));
    assert_eq!(out["evidence"]["kernel"], false);
    let period = out["period_s"].as_f64().unwrap();
    let edges = out["edges"].as_array().unwrap();
    assert!(edges.iter().all(|e| e["evidence"] != "kernel"), "no kernel edge without kernel events");
    // An inferred edge is placed at the wakee's first sample after the wait: after the logged
    // release by up to a period (and the woken thread's way back to the CPU).
    let (precision, recall, rows) = score(edges, &log, 2.0 * period + 0.015, period);
    eprintln!("inference only, {:.1} ms period: precision {:.0} %, recall {:.0} %", period * 1e3, precision * 100.0, recall * 100.0);
    eprintln!("| object | logged | found | edges | right | evidence |\n|---|---|---|---|---|---|\n{}", rows.join("\n"));
    assert!(precision >= 0.9, "precision {precision:.2} < 0.9: {rows:#?}");
    assert!(recall >= 0.5, "recall {recall:.2} < 0.5: {rows:#?}");
    // Every edge's confidence is a probability, and the waker's frame is in the program.
    for e in edges {
        let c = e["confidence"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&c), "{e}");
    }
    // The objects table names the waiters and their wakers by the names the program gave them.
    let objects = out["objects"].as_array().unwrap();
    // (A sample at which the recorder could not read the object falls back to its wait site and
    // is merged into the one recorded condition of that class; the condition is the one waited
    // on most.)
    let cond = objects
        .iter()
        .filter(|o| o["type"] == "threading.Condition")
        .max_by_key(|o| o["waiters"]["waiter-condition"].as_u64().unwrap_or(0))
        .filter(|o| o["waiters"].get("waiter-condition").is_some())
        .expect("the condition");
    assert!(cond["wakers"].get("releaser-condition").is_some(), "{cond}");
    let q_waits: u64 = objects.iter().filter(|o| o["type"] == "queue.Queue").filter_map(|o| o["waiters"]["waiter-queue"].as_u64()).sum();
    assert!(q_waits >= 6, "waiter-queue waited {q_waits} times on the queue: {objects:?}");
}

#[test]
fn runs_without_wait_data_say_what_is_missing() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let fixture = repo().join("tests/fixtures/runs/20260101T000000Z-bug1-buggy.json");
    let o = threadradar(dir.path(), &["waits", fixture.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("no kernel scheduler events in this run"), "{text}");
    assert!(text.contains("no wait targets in this run"), "{text}");
    let out = json(&threadradar(dir.path(), &["waits", fixture.to_str().unwrap(), "--json"]));
    assert_eq!(out["evidence"]["kernel"], false);
    assert_eq!(out["evidence"]["targets"], false);
    // A filter that matches nothing says so and how to see everything.
    let o = threadradar(dir.path(), &["waits", fixture.to_str().unwrap(), "--object", "no-such-object"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("run without --object"), "{}", String::from_utf8_lossy(&o.stdout));
    // Not a run: one sentence, no panic.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"format\": 3}").unwrap();
    let o = threadradar(dir.path(), &["waits", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(!err.contains("panicked") && !err.trim().is_empty(), "{err}");
}

#[test]
fn kernel_edges_match_the_logged_handoffs() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let run_path = dir.path().join("handoffs.json");
    let rec = record(&run_path, &["--sched", "--interval-ms", "2"], &[&script("handoffs.py"), "8"]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let run = read(&run_path);
    assert!(run.sched.is_some(), "no scheduler events were recorded: {}", stderr(&rec));
    let logged: Value = serde_json::from_str(String::from_utf8_lossy(&rec.stdout).lines().last().unwrap()).unwrap();
    let t0 = run.meta.started_at.expect("an exact start time");
    let log: Vec<Handoff> = logged
        .as_array()
        .unwrap()
        .iter()
        .map(|h| Handoff {
            time_s: h["time"].as_f64().unwrap() - t0,
            releaser: h["releaser"].as_str().unwrap().into(),
            waiter: h["waiter"].as_str().unwrap().into(),
            object: h["object"].as_str().unwrap().into(),
        })
        .collect();
    let out = json(&threadradar(dir.path(), &["waits", run_path.to_str().unwrap(), "--json"]));
    assert_eq!(out["evidence"]["kernel"], true, "{}", out["evidence"]);
    let edges = out["edges"].as_array().unwrap();
    // With kernel events nothing is inferred, but for GIL waits the kernel could not attribute
    // (a timed wait; docs/waits.md), which get the sampled holder.
    assert!(
        edges.iter().all(|e| e["evidence"] == "kernel" || (e["evidence"] == "gil-holder" && e["object"] == "GIL")),
        "with kernel events nothing is inferred: {:?}",
        edges.iter().filter(|e| e["evidence"] != "kernel").collect::<Vec<_>>()
    );
    // The kernel's wake-up follows the logged time.time() by microseconds: 1 ms either way.
    let (precision, recall, rows) = score(edges, &log, 0.001, 0.001);
    eprintln!("kernel: precision {:.0} %, recall {:.0} %", precision * 100.0, recall * 100.0);
    eprintln!("| object | logged | found | edges | right | evidence |\n|---|---|---|---|---|---|\n{}", rows.join("\n"));
    assert!(recall >= 0.95, "recall {recall:.2} < 0.95: {rows:#?}");
    assert!(precision >= 0.95, "precision {precision:.2} < 0.95: {rows:#?}");
}

/// Consumers' condition wake-ups (not lock hand-offs) among `edges`.
fn woken_total(edges: &[Value]) -> usize {
    edges.iter().filter(|e| e["kind"] == "wake" && e["wakee"].as_str().unwrap().starts_with("consumer-")).count()
}

/// Bug 2 (paper §5.2): one condition with `notify_all` wakes every waiting consumer for each
/// unit, and all but one find nothing and wait again; the fix's two conditions wake one consumer,
/// for a producer. Checked against the program's own log (its last line, `truth: {…}`): who
/// notified the consumers (by role) and how many wake-ups found the condition unchanged.
/// Sampling sees a part of the wake-ups, so each figure may be below the log, never above it;
/// and a lock hand-off (a consumer leaving `with cond:` wakes the next one waiting for the lock)
/// is no condition wake-up.
#[test]
fn bug2_consumers_wake_consumers_only_in_the_buggy_version() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut figures = Vec::new();
    for variant in ["buggy", "fixed"] {
        let run_path = dir.path().join(format!("bug2-{variant}.json"));
        let prog = repo().join(format!("samples/python/bug2_producer_consumer/{variant}.py"));
        let rec = record(&run_path, &["--sched"], &[prog.to_str().unwrap(), "--duration", "2"]);
        assert!(rec.status.success(), "{}", stderr(&rec));
        assert!(read(&run_path).sched.is_some(), "no scheduler events were recorded: {}", stderr(&rec));
        let printed = String::from_utf8_lossy(&rec.stdout);
        let truth: Value = serde_json::from_str(printed.lines().find_map(|l| l.strip_prefix("truth: ")).expect("the program's own log")).unwrap();
        let logged_by = |role: &str| truth["consumers_woken_by"][role].as_u64().unwrap_or(0);
        let logged_futile = truth["futile_wakeups"].as_u64().unwrap();
        let out = json(&threadradar(dir.path(), &["waits", run_path.to_str().unwrap(), "--json", "--object", "Condition"]));
        assert_eq!(out["evidence"]["kernel"], true, "{}", out["evidence"]);
        let edges = out["edges"].as_array().unwrap();
        let consumer_wakes = |by: &str| {
            edges
                .iter()
                .filter(|e| e["kind"] == "wake" && e["wakee"].as_str().unwrap().starts_with("consumer-") && e["waker"].as_str().unwrap().starts_with(by))
                .count() as u64
        };
        let objects = out["objects"].as_array().unwrap();
        let futile: u64 = objects.iter().map(|o| o["futile_wakeups"].as_u64().unwrap()).sum();
        let handoffs: u64 = objects.iter().map(|o| o["lock_handoffs"].as_u64().unwrap()).sum();
        let (by_consumers, by_producers) = (consumer_wakes("consumer-"), consumer_wakes("producer-"));
        let woken = edges.iter().filter(|e| e["kind"] == "wake" && e["wakee"].as_str().unwrap().starts_with("consumer-")).count() as u64;
        eprintln!(
            "{variant}: consumers woken by consumers {by_consumers} (logged {}), by producers {by_producers} (logged {}), \
             futile wake-ups {futile} (logged {logged_futile}), lock hand-offs {handoffs}",
            logged_by("consumer"),
            logged_by("producer")
        );
        // A kernel edge is attributed through the sample that saw the sleep it ended, placed at
        // the moment that thread was read (`read_us`). Before reads were timed a sample's time
        // was older than its threads' states and pinned GIL or lock hand-offs on the condition:
        // 1.3 % of the buggy version's consumer wake-ups on a quiet machine, 4.2 % (176 of 4221)
        // in a CI run; with read times 0–0.1 % (docs/waits.md). Allowed: 6 %.
        let slack = (woken_total(edges) as f64 * 0.06) as u64;
        assert!(
            by_consumers <= logged_by("consumer") + slack,
            "{variant}: more consumers woken by consumers than the program notified: {by_consumers} > {} + {slack}: {truth}",
            logged_by("consumer")
        );
        // The same allowance on the producers' side: with ThreadRadar's own 3.11 reader the
        // sampler attributes 99–100 % of the fixed version's notifications (py-spy's reader:
        // 94–96 %), so the same few misattributed hand-offs can now push it past the log
        // (1649 against 1645 logged, 1838 against 1816 in two of eight runs).
        assert!(
            by_producers <= logged_by("producer") + slack,
            "{variant}: more consumers woken by producers than the program notified: {by_producers} > {} + {slack}: {truth}",
            logged_by("producer")
        );
        assert!(by_producers > 0, "{variant}: consumers are woken by producers: {truth}");
        // The same attribution error counted wake-ups as futile that were not (fixed: 577 against
        // 338 logged in a CI run before read times). Since 3.11 is read by ThreadRadar's own
        // walker (2026-11-26), whose stack read follows the kernel reading within microseconds
        // instead of milliseconds, the fixed version's kernel-futile count is 1.4–1.6× the log
        // (646/432, 679/428, 735/489, 699/397), where py-spy's slower walk gave 0.9× (226/248,
        // 190/202, 328/367). Understood (2026-11-26, the program's wake-ups logged with their
        // times and matched to the edges: 612 of 728 kernel-futile edges were logged futile, 116
        // were not, 27 logged ones were missed): a consumer that took a unit and came back to the
        // loop between two samples, every sleep in between ended by another thread — its
        // `time.sleep` (absolute deadline) expired while it waited for the GIL switch, so no
        // timer woke it and nothing in the kernel's events says it left the loop (docs/waits.md).
        // Allowed 2×.
        assert!(futile as f64 <= logged_futile as f64 * 2.0 + 5.0, "{variant}: far more futile wake-ups than the program had: {futile} > {truth}");
        figures.push((variant, by_consumers, by_producers, futile, woken, logged_futile, logged_by("producer") + logged_by("consumer") + logged_by("MainThread")));
    }
    let (buggy, fixed) = (figures[0], figures[1]);
    // The signature: most of the buggy version's wake-ups are futile (as the program logged), few of the fixed one's.
    assert!(buggy.3 > 0, "buggy: futile wake-ups expected: {buggy:?}");
    let share = |f: (&str, u64, u64, u64, u64, u64, u64)| f.3 as f64 / f.4.max(1) as f64;
    let logged_share = |f: (&str, u64, u64, u64, u64, u64, u64)| f.5 as f64 / f.6.max(1) as f64;
    eprintln!(
        "futile share of consumers' wake-ups: buggy {:.0} % (logged {:.0} %), fixed {:.0} % (logged {:.0} %)",
        share(buggy) * 100.0,
        logged_share(buggy) * 100.0,
        share(fixed) * 100.0,
        logged_share(fixed) * 100.0
    );
    // Under heavy load the fixed version's own futile share rises (a third of its wake-ups in one
    // run) while the buggy one's stays near nine in ten; the analysis must order them as the log does.
    assert!(logged_share(buggy) > 2.0 * logged_share(fixed), "the program itself no longer shows Bug 2: {buggy:?} {fixed:?}");
    assert!(share(buggy) > share(fixed), "futile share buggy {:.2} vs fixed {:.2}: {buggy:?} {fixed:?}", share(buggy), share(fixed));
}

/// A contended lock passed from thread to thread (tests/scripts/lock_handoffs.py: three workers
/// take turns on one `Condition(Lock())` with `with cond:`, each holding it 15 ms while the others
/// sleep on it): with kernel events every release that woke a sleeping worker is a `lock-handoff`
/// edge from the releaser to the next holder, checked against the program's own log of who let
/// the lock go, when, and who took it next. Never a condition wake-up: nobody notifies.
#[test]
fn kernel_lock_handoff_edges_match_the_logged_handoffs() {
    let _g = serial();
    if let Some(why) = threadradar_profiler::sched::not_permitted() {
        skip("perf events", &why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run_path = dir.path().join("locks.json");
    let rec = record(&run_path, &["--sched", "--interval-ms", "2"], &[&script("lock_handoffs.py"), "30", "3"]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let run = read(&run_path);
    assert!(run.sched.is_some(), "no scheduler events were recorded: {}", stderr(&rec));
    let t0 = run.meta.started_at.expect("an exact start time");
    let logged: Value = serde_json::from_str(String::from_utf8_lossy(&rec.stdout).lines().last().unwrap()).expect("the program's hand-off log");
    // The hand-offs to a worker that slept on the lock, within the run (the first ones may precede
    // the recorder's t = 0).
    let log: Vec<(f64, String, String)> = logged
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["slept"] == true)
        .map(|h| (h["time"].as_f64().unwrap() - t0, h["releaser"].as_str().unwrap().to_string(), h["waiter"].as_str().unwrap().to_string()))
        .filter(|h| h.0 > 0.05)
        .collect();
    assert!(log.len() >= 60, "the program logged {} hand-offs to a sleeping worker: {logged}", log.len());
    let out = json(&threadradar(dir.path(), &["waits", run_path.to_str().unwrap(), "--json"]));
    assert_eq!(out["evidence"]["kernel"], true, "{}", out["evidence"]);
    let edges = out["edges"].as_array().unwrap();
    let ours = |kind: &str| -> Vec<&Value> {
        edges.iter().filter(|e| e["kind"] == kind && e["wakee"].as_str().unwrap().starts_with("locker-") && e["waker"].as_str().unwrap().starts_with("locker-")).collect()
    };
    let handoffs = ours("lock-handoff");
    // The kernel's wake-up follows the releaser's logged time.time() by microseconds; 2 ms
    // either way leaves room for a releaser preempted between the two on a loaded machine.
    let matches = |e: &Value, h: &(f64, String, String)| {
        e["waker"] == h.1.as_str() && e["wakee"] == h.2.as_str() && (e["time_s"].as_f64().unwrap() - h.0).abs() <= 0.002
    };
    let found = log.iter().filter(|h| handoffs.iter().any(|e| matches(e, h))).count();
    let right = handoffs.iter().filter(|e| log.iter().any(|h| matches(e, h))).count();
    let recall = found as f64 / log.len() as f64;
    let precision = right as f64 / handoffs.len().max(1) as f64;
    eprintln!("lock hand-offs: {} logged, {} edges, recall {:.0} %, precision {:.0} %", log.len(), handoffs.len(), recall * 100.0, precision * 100.0);
    let missed: Vec<_> = log.iter().filter(|h| !handoffs.iter().any(|e| matches(e, h))).take(5).collect();
    assert!(recall >= 0.9, "recall {recall:.2} < 0.9; missed e.g. {missed:?}; edges e.g. {:?}", handoffs.iter().take(5).collect::<Vec<_>>());
    assert!(precision >= 0.9, "precision {precision:.2} < 0.9: {:?}", handoffs.iter().filter(|e| !log.iter().any(|h| matches(e, h))).take(5).collect::<Vec<_>>());
    // Nobody notifies: a worker-to-worker wake-up that is no GIL hand-off is a release of the
    // lock too (one whose waiting sample did not show the lock frame is filed under the lock's
    // futex as a plain wake-up), never anything the program did not log.
    let wakes = ours("wake");
    // Within the logged window only: a hand-off before 50 ms is a real one the log was cut to
    // leave out (CI saw one at 38 ms), not a stray (2 ms of the matching tolerance added).
    let stray: Vec<_> = wakes.iter().filter(|e| e["object"] != "GIL" && e["time_s"].as_f64().unwrap() > 0.052 && !log.iter().any(|h| matches(e, h))).collect();
    assert!(stray.is_empty(), "wake-ups between the workers that are no logged hand-off: {stray:?}");
    let objects = out["objects"].as_array().unwrap();
    let cond = objects.iter().find(|o| o["type"] == "threading.Condition").expect("the condition in the objects table");
    assert!(cond["lock_handoffs"].as_u64().unwrap() as usize >= handoffs.len() * 9 / 10, "{cond}");
    assert_eq!(cond["futile_wakeups"], 0, "{cond}");
}

/// tests/scripts/waits.py with kernel events: the pipe reader waits on the pipe itself
/// (`pipe:[inode]` as the program logged it) and is woken by the main thread's write; the daemon
/// thread still waiting on `never` when the process exits has an open wait and no wake-up — the
/// exiting thread's kill at exit is not a release.
#[test]
fn a_pipe_is_its_own_object_and_the_exit_wakes_no_waiter() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let run_path = dir.path().join("waits.json");
    let log = dir.path().join("facts.jsonl");
    let rec = record(&run_path, &[], &[&script("waits.py"), log.to_str().unwrap(), "1.0"]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let facts: Vec<Value> = std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let inode = facts.iter().find(|f| f["fact"] == "pipe").and_then(|f| f["inode"].as_u64()).expect("the pipe's inode in the log");
    let out = json(&threadradar(dir.path(), &["waits", run_path.to_str().unwrap(), "--json"]));
    if out["evidence"]["kernel"] != true {
        eprintln!("no scheduler events here: the exit check needs them");
        return;
    }
    let thread_id = |name: &str| out["threads"].as_array().unwrap().iter().find(|t| t["name"] == name).map(|t| t["id"].clone()).unwrap_or_else(|| panic!("no thread {name}: {}", out["threads"]));
    let (reader, stuck) = (thread_id("pipe_reader"), thread_id("stuck"));
    let objects = out["objects"].as_array().unwrap();
    let intervals = out["intervals"].as_array().unwrap();
    let edges = out["edges"].as_array().unwrap();
    let object_of = |iv: &Value| objects[iv["object"].as_u64().unwrap() as usize]["object"].as_str().unwrap().to_string();

    let pipe = format!("pipe:[{inode}]");
    let reader_waits: Vec<String> = intervals.iter().filter(|iv| iv["thread"] == reader).map(object_of).collect();
    assert!(reader_waits.iter().any(|o| o.ends_with(&pipe)), "pipe_reader waited on {reader_waits:?}, the pipe is {pipe}");
    let pipe_edges: Vec<&Value> = edges.iter().filter(|e| e["wakee"] == "pipe_reader" && e["object"].as_str().is_some_and(|o| o.ends_with(&pipe))).collect();
    assert!(pipe_edges.iter().any(|e| e["waker"] == "MainThread" && e["evidence"] == "kernel"), "the write woke the reader: {pipe_edges:?}");

    let stuck_waits: Vec<&Value> = intervals.iter().filter(|iv| iv["thread"] == stuck).collect();
    assert!(stuck_waits.iter().any(|iv| iv["open"] == true && object_of(iv).contains("never")), "stuck's wait on never is open: {stuck_waits:?}");
    // (Its start-up may wait on the log's lock, which another thread releases: a real edge.)
    let woke_stuck: Vec<&Value> = edges.iter().filter(|e| e["wakee"] == "stuck" && e["object"].as_str().is_some_and(|o| o.contains("never"))).collect();
    assert!(woke_stuck.is_empty(), "nothing released `never`, yet: {woke_stuck:?}");

    // `waits --json | head`: a reader that goes away ends it quietly, like other Unix tools.
    let mut w = std::process::Command::new(bin())
        .args(["waits", run_path.to_str().unwrap(), "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(w.stdout.take());
    let o = w.wait_with_output().unwrap();
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()));
}

/// GIL hand-offs are edges (#16): two threads spinning in pure Python take turns on the GIL,
/// every GIL wait of one ends with the other as its waker — with kernel events (where they can
/// attribute it) and without (the sampled holder) alike — and the hand-offs go both ways.
#[test]
fn gil_hand_offs_are_edges_between_the_threads_taking_turns() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let run_path = dir.path().join("spinners.json");
    let rec = record(&run_path, &[], &[&script("spinners.py"), "0.6"]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    for extra in [&[][..], &["--no-kernel"][..]] {
        let mut args = vec!["waits", run_path.to_str().unwrap(), "--json"];
        args.extend_from_slice(extra);
        let out = json(&threadradar(dir.path(), &args));
        let objects = out["objects"].as_array().unwrap();
        let gil = objects.iter().position(|o| o["object"] == "GIL").unwrap_or_else(|| panic!("no GIL waits: {objects:?}"));
        let ended = out["intervals"].as_array().unwrap().iter().filter(|iv| iv["object"] == gil && iv["open"] == false).count();
        let edges: Vec<&Value> = out["edges"].as_array().unwrap().iter().filter(|e| e["object"] == "GIL").collect();
        let between = |a: &str, b: &str| edges.iter().filter(|e| e["waker"] == a && e["wakee"] == b).count();
        let (one_way, other_way) = (between("spinner-0", "spinner-1"), between("spinner-1", "spinner-0"));
        eprintln!("{extra:?}: {ended} ended GIL waits, {} GIL edges, spinner-0 → spinner-1 {one_way}, spinner-1 → spinner-0 {other_way}", edges.len());
        assert!(ended >= 50, "{extra:?}: the spinners waited for the GIL: {ended}");
        // Every ended GIL wait of a spinner has the other spinner as its waker (or the main thread
        // at the start): no wait left without its hand-off, none given to the wrong thread.
        assert!(one_way + other_way >= ended * 9 / 10, "{extra:?}: {one_way} + {other_way} of {ended} GIL waits have the other spinner as waker");
        assert!(one_way * 3 >= other_way && other_way * 3 >= one_way, "{extra:?}: the GIL goes both ways: {one_way} vs {other_way}");
        for e in &edges {
            assert!(["kernel", "gil-holder"].contains(&e["evidence"].as_str().unwrap()), "{e}");
            assert_ne!(e["waker"], e["wakee"], "{e}");
        }
    }
}
