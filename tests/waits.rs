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
        .filter(|e| e["wakee"].as_str().unwrap().starts_with("waiter-") && e["object"] != "GIL" && e["futile"] == false)
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

/// Records with the scheduler's events; fails with the recorder's own reason when it could not
/// record them (CI runs as root, where `perf_event_open` on the sched tracepoints is permitted).
fn record_sched(run_path: &Path, script_and_args: &[&str]) -> threadradar_profiler::Run {
    let rec = record(run_path, &["--sched"], script_and_args);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let run = read(run_path);
    assert!(run.sched.is_some(), "no scheduler events were recorded: {}", stderr(&rec));
    run
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
    assert!(edges.iter().all(|e| e["evidence"] == "kernel"), "with kernel events nothing is inferred");
    // The kernel's wake-up follows the logged time.time() by microseconds: 1 ms either way.
    let (precision, recall, rows) = score(edges, &log, 0.001, 0.001);
    eprintln!("kernel: precision {:.0} %, recall {:.0} %", precision * 100.0, recall * 100.0);
    eprintln!("| object | logged | found | edges | right | evidence |\n|---|---|---|---|---|---|\n{}", rows.join("\n"));
    assert!(recall >= 0.95, "recall {recall:.2} < 0.95: {rows:#?}");
    assert!(precision >= 0.95, "precision {precision:.2} < 0.95: {rows:#?}");
}

/// Bug 2 (paper §5.2): one condition with `notify_all` wakes consumers for consumers, who find
/// nothing and wait again; the fix's two conditions wake a consumer only for a producer.
#[test]
#[ignore = "not yet true: the fixed version still shows consumers woken by consumers (86 vs 631 by producers) and 659 \
            futile wake-ups with kernel events — the condition's lock hand-off between consumers is taken for a wake-up; see docs/waits.md"]
fn bug2_consumers_wake_consumers_only_in_the_buggy_version() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut figures = Vec::new();
    for variant in ["buggy", "fixed"] {
        let run_path = dir.path().join(format!("bug2-{variant}.json"));
        let prog = repo().join(format!("samples/python/bug2_producer_consumer/{variant}.py"));
        record_sched(&run_path, &[prog.to_str().unwrap(), "--duration", "2"]);
        let out = json(&threadradar(dir.path(), &["waits", run_path.to_str().unwrap(), "--json", "--object", "Condition"]));
        let edges = out["edges"].as_array().unwrap();
        let consumer_wakes = |by: &str| {
            edges.iter().filter(|e| e["wakee"].as_str().unwrap().starts_with("consumer-") && e["waker"].as_str().unwrap().starts_with(by)).count()
        };
        let futile: u64 = out["objects"].as_array().unwrap().iter().map(|o| o["futile_wakeups"].as_u64().unwrap()).sum();
        let (by_consumers, by_producers) = (consumer_wakes("consumer-"), consumer_wakes("producer-"));
        eprintln!("{variant}: consumers woken by consumers {by_consumers}, by producers {by_producers}, futile wake-ups {futile}");
        figures.push((variant, by_consumers, by_producers, futile));
    }
    let (buggy, fixed) = (figures[0], figures[1]);
    assert!(buggy.1 > 0 && buggy.3 > 0, "buggy: consumers woken by consumers and futile wake-ups expected: {buggy:?}");
    assert!(fixed.2 > 0, "fixed: consumers are woken by producers: {fixed:?}");
    assert_eq!((fixed.1, fixed.3), (0, 0), "fixed: no consumer wakes a consumer, no futile wake-up: {fixed:?}");
}
