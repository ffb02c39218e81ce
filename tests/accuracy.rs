//! How true the recorder's per-thread figures are: a real program whose threads measure their own
//! CPU time (`time.thread_time()`) is recorded at the default rate, and each thread's share of
//! the counted samples (program-level crt) is compared with its share of the program's CPU time as
//! the threads measured it. Issue #13's goal: ≤ 1 percentage point mean absolute error. Figures are
//! printed (`--nocapture`) for docs/metrics.md.

mod common;

use common::*;
use std::collections::HashMap;
use threadradar_profiler::run::{Run, ThreadState};

/// `name → (tid, cpu seconds)` as `tests/scripts/cpu_truth.py` logged them.
fn truth(log: &std::path::Path) -> HashMap<String, (u32, f64)> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(log).unwrap()).unwrap();
    v.as_object().unwrap().iter().map(|(k, t)| (k.clone(), (t["tid"].as_u64().unwrap() as u32, t["cpu_s"].as_f64().unwrap()))).collect()
}

/// Per-thread shares in percent (by tid) of `weight` summed over each thread's observations.
fn shares(run: &Run, tids: &[u32], weight: impl Fn(&threadradar_profiler::run::ThreadSample) -> f64) -> HashMap<u32, f64> {
    let mut w: HashMap<u32, f64> = HashMap::new();
    for s in &run.samples {
        for ts in &s.threads {
            let tid = run.threads[ts.thread as usize].tid;
            if tids.contains(&tid) {
                *w.entry(tid).or_default() += weight(ts);
            }
        }
    }
    let total: f64 = w.values().sum::<f64>().max(f64::MIN_POSITIVE);
    tids.iter().map(|t| (*t, 100.0 * w.get(t).copied().unwrap_or(0.0) / total)).collect()
}

/// Mean absolute error in percentage points, and the table behind it.
fn mae(truth: &HashMap<String, (u32, f64)>, got: &HashMap<u32, f64>) -> (f64, Vec<(String, f64, f64)>) {
    let total: f64 = truth.values().map(|t| t.1).sum();
    let mut rows: Vec<(String, f64, f64)> = truth.iter().map(|(n, (tid, cpu))| (n.clone(), got[tid], 100.0 * cpu / total)).collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let e = rows.iter().map(|r| (r.1 - r.2).abs()).sum::<f64>() / rows.len() as f64;
    (e, rows)
}

struct Measured {
    /// MAE of counting computing samples (`--states computing`, the paper's metric), in
    /// percentage points.
    counted: f64,
    /// MAE of the kernel-weighted shares (`--states cpu`), summed here from the run file.
    weighted: f64,
    /// MAE of the default (`auto`), as `threadradar report` computes it.
    auto: f64,
    /// The states the report says the default resolved to.
    auto_states: String,
    rows: Vec<(String, f64, f64)>,
}

/// Records `cpu_truth.py` at the default rate and compares three ways of counting with its log.
fn measure() -> Measured {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let log = dir.path().join("truth.json");
    let o = record(&out, &[], &[&script("cpu_truth.py"), log.to_str().unwrap(), "4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out);
    let truth = truth(&log);
    assert_eq!(truth.len(), 8);
    let tids: Vec<u32> = truth.values().map(|t| t.0).collect();
    for tid in &tids {
        assert!(run.threads.iter().any(|t| t.tid == *tid), "thread {tid} was recorded");
    }
    // Observations counted when computing (`--states computing`).
    let counted = shares(&run, &tids, |ts| if ts.state == ThreadState::Computing { 1.0 } else { 0.0 });
    let (e_counted, rows) = mae(&truth, &counted);
    // The kernel's CPU accounting since each thread's previous observation (`--states cpu`).
    let weighted = shares(&run, &tids, |ts| ts.cpu_ns as f64);
    let (e_weighted, wrows) = mae(&truth, &weighted);
    // The default (`auto`, no --states): each thread's program-level crt as the report computes
    // it, the main thread (which only starts and joins the others) left out as the truth leaves
    // it out.
    let o = threadradar(dir.path(), &["report", out.to_str().unwrap(), "--level", "program", "--exclude-type", "_MainThread", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let auto_states = v["run"]["states"].as_str().unwrap_or_default().to_string();
    let reported: HashMap<u32, f64> = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| Some((t["tid"].as_u64()? as u32, 100.0 * t["crt"].as_f64()?)))
        .filter(|(tid, _)| tids.contains(tid))
        .collect();
    let reported: HashMap<u32, f64> = tids.iter().map(|t| (*t, reported.get(t).copied().unwrap_or(0.0))).collect();
    let (e_auto, drows) = mae(&truth, &reported);
    println!("thread | crt by computing samples % | crt by kernel CPU time (cpu) % | report, default ({auto_states}) % | own CPU time %");
    for (((n, got, want), (_, w, _)), (_, d, _)) in rows.iter().zip(&wrows).zip(&drows) {
        println!("{n} | {got:.2} | {w:.2} | {d:.2} | {want:.2}");
    }
    println!(
        "MAE: computing samples {e_counted:.2} pp, kernel CPU time (cpu) {e_weighted:.2} pp, the default ({auto_states}) {e_auto:.2} pp; {:.0} Hz achieved",
        run.meta.achieved_rate_hz
    );
    Measured { counted: e_counted, weighted: e_weighted, auto: e_auto, auto_states, rows: drows }
}

#[test]
fn per_thread_crt_is_within_one_point_of_the_threads_own_cpu_time_by_default() {
    let m = measure();
    assert!(m.weighted <= 1.0, "kernel-weighted shares are {:.2} pp off the threads' own CPU time", m.weighted);
    // A run recorded here has the kernel's accounting, so the default (`auto`) counts computing
    // samples weighted by their thread's CPU time.
    assert_eq!(m.auto_states, "computing-cpu", "what the default resolves to for a run with kernel accounting");
    assert!(m.auto <= 1.0, "the report's per-thread crt by default is {:.2} pp off the threads' own CPU time: {:?}", m.auto, m.rows);
    // Counting computing samples one each (`--states computing`, the paper's metric) misses the
    // light threads' bursts, which are shorter than the interval, more so on a loaded machine.
    // Printed, not asserted: it varies with the machine's load.
    println!("counting computing samples (--states computing): {:.2} pp", m.counted);
}
