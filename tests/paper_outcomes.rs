//! The paper's demonstration study (§5) end to end: record the Python versions of its three bugs
//! with the real profiler, run `threadradar report --json`, and check that the metrics and
//! clusters show what the paper's ThreadRadars showed.
//!
//! Recordings are statistical and the bugs are races, so each property is asserted the way it is
//! robust: a race that need not happen in every run (Bug 1, Bug 3) must show up in one of several
//! recordings; a share (Bug 2) is the median of three recordings. As in the paper, threads
//! of other types (here the main thread) are left out with the thread filter.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn sample(bug: &str, variant: &str) -> String {
    repo().join("samples/python").join(bug).join(format!("{variant}.py")).display().to_string()
}

/// Records one run of a sample program.
fn record_sample(dir: &Path, bug: &str, variant: &str, attempt: usize) -> PathBuf {
    record_sample_with_output(dir, bug, variant, attempt).0
}

/// Records one run of a sample program; also returns what the program printed.
fn record_sample_with_output(dir: &Path, bug: &str, variant: &str, attempt: usize) -> (PathBuf, String) {
    let out = dir.join(format!("{bug}-{variant}-{attempt}.json"));
    let o = record(&out, &[], &[&sample(bug, variant)]);
    assert!(o.status.success(), "recording {bug}/{variant}.py failed: {}", stderr(&o));
    (out, String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The producers' CPU share that Bug 2 measured itself (`CPU: producers 0.15 s (50 %)`).
fn printed_producer_share(stdout: &str) -> f64 {
    let after = stdout.split("CPU: producers ").nth(1).expect("Bug 2 prints its CPU accounting");
    let pct = after.split('(').nth(1).and_then(|s| s.split(' ').next()).expect("a share in %");
    pct.parse::<f64>().expect("a number") / 100.0
}

fn report_json(run: &Path, args: &[&str]) -> Value {
    let mut all = vec!["report", run.to_str().unwrap(), "--json"];
    all.extend_from_slice(args);
    let o = threadradar(run.parent().unwrap(), &all);
    assert!(o.status.success(), "report {args:?} failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("report --json prints JSON")
}

fn artifact<'v>(v: &'v Value, qualname: &str) -> Option<&'v Value> {
    v["artifacts"].as_array()?.iter().find(|a| a["qualname"] == qualname)
}

/// Thread type by thread id.
fn type_of(v: &Value, id: &Value) -> String {
    v["threads"].as_array().unwrap().iter().find(|t| &t["id"] == id).map_or(String::new(), |t| t["type"].as_str().unwrap_or("").to_string())
}

/// The thread types in each program cluster, low → high.
fn program_cluster_types(v: &Value) -> Vec<BTreeSet<String>> {
    v["program"]["clusters"].as_array().unwrap().iter().map(|c| c["threads"].as_array().unwrap().iter().map(|id| type_of(v, id)).collect()).collect()
}

/// Σ crt(th) over the threads of one type.
fn type_share(v: &Value, ty: &str) -> f64 {
    v["threads"].as_array().unwrap().iter().filter(|t| t["type"] == ty).map(|t| t["crt"].as_f64().unwrap()).sum()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Bug 1 (§5.1, Fig. 7): the unsynchronised singleton's constructor is executed by several
/// worker threads; with double-checked locking by exactly one.
#[test]
fn bug1_constructor_is_run_by_several_threads_only_when_buggy() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let args = ["--include", r"^WorkerManager\.__init__$"];
    let mut seen = Vec::new();
    for attempt in 0..3 {
        let v = report_json(&record_sample(dir.path(), "bug1_worker_manager", "buggy", attempt), &args);
        let init = artifact(&v, "WorkerManager.__init__").expect("the constructor was sampled");
        assert_eq!(init["kind"], "function");
        assert_eq!(init["thread_types"], 1, "only Worker threads construct managers");
        seen.push(init["threads"].as_u64().unwrap());
        if seen.last() >= Some(&2) {
            break;
        }
    }
    assert!(seen.iter().any(|&n| n >= 2), "buggy: WorkerManager.__init__ ran in {seen:?} threads per recording");

    for attempt in 0..2 {
        let v = report_json(&record_sample(dir.path(), "bug1_worker_manager", "fixed", attempt), &args);
        let init = artifact(&v, "WorkerManager.__init__").expect("the constructor was sampled");
        assert_eq!(init["threads"], 1, "fixed: exactly one thread constructs the singleton");
        assert_eq!(init["clusters"].as_array().unwrap().len(), 1);
    }
}

/// Bug 2 (§5.2, Figs. 8–9): with one condition and `notify_all()`, the consumers burn the CPU in
/// futile wake-ups, so the producer's aggregated share is far below half and the two thread types
/// fall into separate clusters; with separate conditions each side has about half.
///
/// These threads compute in bursts of microseconds between waits, far shorter than the 3 ms
/// sampling interval, so the assertion is made on the CPU-time weighting (`--states cpu`: every
/// sample weighs the CPU time the kernel accounted to its thread), which is exact for them. The
/// sample counts must still point the same way (computing + GIL waits).
#[test]
fn bug2_producer_share_is_far_from_half_only_when_buggy() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cpu_args = ["--level", "program", "--states", "cpu", "--exclude-type", "_MainThread"];
    let sample_args = ["--level", "program", "--states", "computing+gil", "--exclude-type", "_MainThread"];
    let measure = |variant: &str| {
        let (mut cpu, mut sampled, mut separated, mut truth, mut free_threaded) = (Vec::new(), Vec::new(), 0, Vec::new(), false);
        for attempt in 0..3 {
            let (run, printed) = record_sample_with_output(dir.path(), "bug2_producer_consumer", variant, attempt);
            truth.push(printed_producer_share(&printed));
            free_threaded = read(&run).meta.python_version.is_some_and(|v| v.ends_with('t'));
            let v = report_json(&run, &cpu_args);
            cpu.push(type_share(&v, "Producer"));
            let types = program_cluster_types(&v);
            if types.len() >= 2 && types.iter().all(|t| t.len() == 1) {
                separated += 1;
            }
            sampled.push(type_share(&report_json(&run, &sample_args), "Producer"));
        }
        (median(cpu), median(sampled), separated, median(truth), free_threaded)
    };
    let (buggy, buggy_sampled, buggy_separated, buggy_truth, _) = measure("buggy");
    let (fixed, fixed_sampled, fixed_separated, fixed_truth, free_threaded) = measure("fixed");
    let msg = format!(
        "producer's CPU share: buggy {buggy:.2} (producer and consumers in separate clusters in {buggy_separated}/3), \
         fixed {fixed:.2} (separate in {fixed_separated}/3); by samples: buggy {buggy_sampled:.2}, fixed {fixed_sampled:.2}; \
         as the program measured it: buggy {buggy_truth:.2}, fixed {fixed_truth:.2}"
    );
    assert!(buggy < 0.38, "buggy: the producer's share is far below 50 %; {msg}");
    if free_threaded {
        // Without a GIL the fixed program itself does not split 50/50 (its own accounting gives
        // the producer 35–41 % on 3.13t): the recording must agree with what it measured.
        assert!((fixed - fixed_truth).abs() <= 0.08, "fixed: the producer's share as the program measured it; {msg}");
    } else {
        assert!((0.38..=0.62).contains(&fixed), "fixed: close to 50/50; {msg}");
    }
    assert!(fixed - buggy > 0.08, "{msg}");
    if free_threaded {
        // Without a GIL the buggy producer's share is lower still (12 % by the program's own
        // accounting on 3.13t, about what each of the 10 consumers has), too close for separate
        // clusters; what must hold is that the recording agrees with the program.
        assert!((buggy - buggy_truth).abs() <= 0.08, "buggy: the producer's share as the program measured it; {msg}");
    } else {
        assert!(buggy_separated >= 2, "buggy: the producer and the consumers form separate clusters (Fig. 8a); {msg}");
    }
    assert!(buggy_sampled < fixed_sampled, "the sample counts agree in direction; {msg}");
}

/// Bug 3 (§5.3, Fig. 10): readers that miss the exact counter value keep spinning, so the
/// readers split, and the readers that stopped share a cluster with the writers. With `>=`
/// every reader stops and none stands out.
#[test]
fn bug3_a_cluster_mixes_readers_and_writers_when_buggy() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let args = ["--level", "program", "--exclude-type", "_MainThread"];
    // Which readers see the exact value is a race; in some runs every reader does (the program then
    // ends in ~1.3 s), and such a run looks like the fixed one. Up to six tries.
    let mut seen = Vec::new();
    for attempt in 0..6 {
        let v = report_json(&record_sample(dir.path(), "bug3_readers_writers", "buggy", attempt), &args);
        let types = program_cluster_types(&v);
        let mixed = types.iter().any(|t| t.contains("Reader") && t.contains("Writer"));
        seen.push(types.clone());
        if mixed && types.len() >= 2 {
            break;
        }
    }
    assert!(
        seen.iter().any(|types| types.len() >= 2 && types.iter().any(|t| t.contains("Reader") && t.contains("Writer"))),
        "buggy: two or more clusters, one mixing readers and writers; cluster types per recording: {seen:?}"
    );

    let v = report_json(&record_sample(dir.path(), "bug3_readers_writers", "fixed", 0), &args);
    let readers: Vec<f64> =
        v["threads"].as_array().unwrap().iter().filter(|t| t["type"] == "Reader").map(|t| t["crt"].as_f64().unwrap()).collect();
    assert_eq!(readers.len(), 10);
    let max = readers.iter().copied().fold(0.0, f64::max);
    assert!(max < 3.0 * median(readers.clone()), "fixed: no reader keeps spinning; reader shares {readers:?}");
}
