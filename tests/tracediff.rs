//! The trace comparison, the changes in words and run sets, on real recordings of the paper's three
//! bugs (`samples/python`). Where the program logs its own events (Bug 2: wake-ups per unit; Bug 3:
//! how many readers spun until the limit), the words are checked against that log.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

struct Runs {
    dir: PathBuf,
    /// Run sets of 3 runs: Bug 1 buggy, Bug 1 fixed, and Bug 1 fixed again.
    bug1_buggy: PathBuf,
    /// What the buggy runs printed (each run's `constructor ran in N threads`, in run order).
    bug1_buggy_log: String,
    bug1_fixed: PathBuf,
    bug1_fixed_again: PathBuf,
    /// One run of Bug 1 fixed sampled every 6 ms (the others: 3 ms).
    bug1_fixed_6ms: PathBuf,
    bug2_buggy: (PathBuf, String),
    /// A run set of one run.
    bug2_fixed_set: (PathBuf, String),
    bug3_buggy: (PathBuf, String),
    bug3_fixed: (PathBuf, String),
}

fn sample(bug: &str, variant: &str) -> String {
    repo().join("samples/python").join(bug).join(format!("{variant}.py")).display().to_string()
}

/// Records `bug/variant.py ARGS` to `dir/name.json` with `extra` flags; returns the path and what
/// the program printed.
fn rec(dir: &Path, name: &str, extra: &[&str], bug: &str, variant: &str, args: &[&str]) -> (PathBuf, String) {
    let out = dir.join(format!("{name}.json"));
    let script = sample(bug, variant);
    let mut all = vec![script.as_str()];
    all.extend_from_slice(args);
    let o = record(&out, extra, &all);
    assert!(o.status.success(), "recording {name} failed: {}", stderr(&o));
    (out, String::from_utf8_lossy(&o.stdout).into_owned())
}

fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let _g = serial();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tracediff");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let b1 = "bug1_worker_manager";
        let b1_args = ["--workers", "6", "--timeout", "1.5"];
        let (bug1_buggy, bug1_buggy_log) = rec(&dir, "bug1-buggy", &["--repeat", "3"], b1, "buggy", &b1_args);
        let bug1_fixed = rec(&dir, "bug1-fixed", &["--repeat", "3"], b1, "fixed", &b1_args).0;
        let bug1_fixed_again = rec(&dir, "bug1-fixed-again", &["--repeat", "3"], b1, "fixed", &b1_args).0;
        let bug1_fixed_6ms = rec(&dir, "bug1-fixed-6ms", &["--interval-ms", "6"], b1, "fixed", &b1_args).0;
        let b2 = "bug2_producer_consumer";
        let b2_args = ["--producers", "1", "--consumers", "10", "--duration", "1.5"];
        let bug2_buggy = rec(&dir, "bug2-buggy", &[], b2, "buggy", &b2_args);
        let bug2_fixed_set = rec(&dir, "bug2-fixed", &["--repeat", "1"], b2, "fixed", &b2_args);
        let b3 = "bug3_readers_writers";
        // A longer limit than the sample's 4 s: on a loaded machine the writers of the fixed
        // program may not reach the target within 4 s, and then nothing was fixed to be seen.
        // Bug 3 is a race (a reader misses the moment counter == N): most runs show it, and when
        // the program logs that every reader saw the target, it is recorded again (three tries).
        let mut bug3_buggy = rec(&dir, "bug3-buggy", &[], b3, "buggy", &["--timeout", "8"]);
        for attempt in 2..=3 {
            if readers_spun(&bug3_buggy.1) > 0 {
                break;
            }
            bug3_buggy = rec(&dir, &format!("bug3-buggy-{attempt}"), &[], b3, "buggy", &["--timeout", "8"]);
        }
        let bug3_fixed = rec(&dir, "bug3-fixed", &[], b3, "fixed", &["--timeout", "8"]);
        Runs { dir, bug1_buggy, bug1_buggy_log, bug1_fixed, bug1_fixed_again, bug1_fixed_6ms, bug2_buggy, bug2_fixed_set, bug3_buggy, bug3_fixed }
    })
}

/// Bug 3's own log: how many readers spun until the time limit (0: every reader saw the target).
fn readers_spun(log: &str) -> u64 {
    let l = log.lines().find(|l| l.contains("readers saw counter")).unwrap_or_else(|| panic!("no summary in {log:?}"));
    let rest = &l[l.find("; ").unwrap() + 2..];
    if rest.starts_with("finished in") {
        return 0;
    }
    rest.split_whitespace().next().unwrap().parse().unwrap_or_else(|_| panic!("unexpected summary {l:?}"))
}

fn run_ok(cwd: &Path, args: &[&str]) -> Output {
    let o = threadradar(cwd, args);
    assert!(o.status.success(), "threadradar {args:?} failed: {}", stderr(&o));
    o
}

fn json(cwd: &Path, args: &[&str]) -> Value {
    serde_json::from_slice(&run_ok(cwd, args).stdout).expect("--json prints JSON")
}

fn compare(a: &Path, b: &Path) -> Value {
    json(a.parent().unwrap(), &["compare", "--json", a.to_str().unwrap(), b.to_str().unwrap()])
}

fn changes(v: &Value) -> Vec<(String, String, Value)> {
    v["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| (c["artifact"].as_str().unwrap().to_string(), c["statement"].as_str().unwrap().to_string(), c["significant"].clone()))
        .collect()
}

/// The two integers of `… N → M …` after `prefix` in a statement.
fn counts_after(statement: &str, prefix: &str) -> Option<(u64, u64)> {
    let rest = &statement[statement.find(prefix)? + prefix.len()..];
    let mut nums = rest.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse::<u64>().unwrap());
    Some((nums.next()?, nums.next()?))
}

#[test]
fn bug1_the_words_name_the_fix_constructor_threads_to_one_significant() {
    let r = runs();
    let v = compare(&r.bug1_buggy, &r.bug1_fixed);
    let ch = changes(&v);
    let init = ch
        .iter()
        .find(|c| c.0 == "WorkerManager.__init__" && c.1.contains(": run by "))
        .unwrap_or_else(|| panic!("no 'run by' statement on the constructor: {ch:#?}"));
    let (before, after) = counts_after(&init.1, "run by ").unwrap();
    assert!(before >= 2 && after == 1, "{}", init.1);
    // Checked against each run's own report: the fixed runs all ran the constructor in 1 thread.
    let set: Value = serde_json::from_str(&std::fs::read_to_string(&r.bug1_fixed).unwrap()).unwrap();
    for run in set["runs"].as_array().unwrap() {
        let path = r.dir.join(run.as_str().unwrap());
        let rep = json(&r.dir, &["report", path.to_str().unwrap(), "--json", "--include", r"^WorkerManager\.__init__$"]);
        assert_eq!(rep["artifacts"][0]["threads"], 1, "{}", path.display());
    }
    // And each buggy run against the program's own log: the constructor ran in as many threads as
    // it printed (a module or class body sampled at a `class`/`def` line once passed for it).
    let logged: Vec<u64> = r
        .bug1_buggy_log
        .lines()
        .filter_map(|l| l.split("constructor ran in ").nth(1)?.split_whitespace().next()?.parse().ok())
        .collect();
    let set: Value = serde_json::from_str(&std::fs::read_to_string(&r.bug1_buggy).unwrap()).unwrap();
    let runs = set["runs"].as_array().unwrap();
    assert_eq!(logged.len(), runs.len(), "{}", r.bug1_buggy_log);
    for (run, n) in runs.iter().zip(&logged) {
        let path = r.dir.join(run.as_str().unwrap());
        let rep = json(&r.dir, &["report", path.to_str().unwrap(), "--json", "--include", r"^WorkerManager\.__init__$"]);
        assert_eq!(rep["artifacts"][0]["threads"], *n, "{}: the program logged {n} constructor threads", path.display());
    }
    assert_eq!(init.2, Value::Bool(true), "10 → 1 over 3 × 3 runs exceeds the spread: {:?}", init);
    // Every change is tested on run sets of 3.
    assert!(ch.iter().all(|c| c.2.is_boolean()), "{ch:#?}");
    // The trace: every worker thread paired, most of the stack time matched.
    let t = &v["trace"];
    assert_eq!(t["unmatched_a"].as_array().unwrap().len(), 0, "{}", t["unmatched_a"]);
    let pairs = t["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 7, "main + 6 workers");
    assert!(pairs.iter().all(|p| p["a"]["name"] == p["b"]["name"]), "paired by name");
    let groups = t["groups"].as_array().unwrap();
    assert!(!groups.is_empty());
    for g in groups {
        let shift = g["b_start_s"].as_f64().unwrap() - g["a_start_s"].as_f64().unwrap();
        assert!((g["shift_s"].as_f64().unwrap() - shift).abs() < 1e-9);
        assert!(g["similarity"].as_f64().unwrap() >= 0.2 - 1e-6);
        assert!(!g["stack_a"].as_array().unwrap().is_empty() && !g["stack_b"].as_array().unwrap().is_empty());
    }
    // The constructor's groups exist: the one thread that builds the manager in the fixed run.
    assert!(groups.iter().any(|g| g["functions"].as_array().unwrap().iter().any(|f| f == "WorkerManager.__init__")));
    let share = t["matched_share"].as_f64().unwrap();
    assert!(share > 0.0 && share <= 1.0, "{share}");
}

/// Bug 2's fix in words: the consumers' futile wake-ups on the storage fall (issue #16's wait
/// analysis: a woken consumer that waits again on the same object without leaving its wait loop).
/// Checked against the program's own count (`truth: {"futile_wakeups": N}`): with ten consumers
/// the buggy version logs ≈ 8 futile wake-ups per unit (one notify_all wakes all, one unit is
/// there), the fixed one ≈ 0.35 — a third of its wake-ups: a consumer notified by `put` often
/// finds the unit already taken by a consumer that came back from its work first.
///
/// The two sides are measured differently well, so the measured fall is not the program's
/// (≈ 23×):
/// - buggy: several futile wake-ups between the same two samples count once, so the count is
///   capped near one per consumer and sampling period (2 500 of the 10 900 logged at 333 Hz);
/// - fixed: few enough to be counted one by one, 0.9–1.6× the log. Over the log: a consumer that
///   took a unit and came back to the loop between two samples while every sleep in between was
///   ended by another thread — `time.sleep`'s deadline is absolute and can pass while the thread
///   waits for its GIL switch, and then no timer wakes it (docs/waits.md).
///
/// Asserted: each side against its log within those limits, and a fall of at least 2× (measured
/// 3.8–4.8×; before the own 3.11 reader, with py-spy's walker, 3.7–23×, its fixed side below the log).
#[test]
fn bug2_the_words_name_the_futile_wake_ups_gone_as_the_program_logs() {
    let r = runs();
    // The program's own figures: units per second and wake-ups per unit.
    let logged = |log: &str| -> (f64, f64) {
        let l = log.lines().find(|l| l.contains("wake-ups per unit")).unwrap_or_else(|| panic!("no summary in {log:?}"));
        let per_unit = l.rsplit(';').next().unwrap().split_whitespace().next().unwrap().parse().unwrap();
        let rate = l.split("producers ").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
        (per_unit, rate)
    };
    let ((truth_b, rate_b), (truth_f, rate_f)) = (logged(&r.bug2_buggy.1), logged(&r.bug2_fixed_set.1));
    assert!(truth_b > 2.0 * truth_f, "the sample itself: {truth_b} vs {truth_f} wake-ups per unit");
    // The program's own count of futile wake-ups (a woken consumer that found the storage empty).
    let logged_futile = |log: &str| -> f64 {
        let l = log.lines().find_map(|l| l.strip_prefix("truth: ")).unwrap_or_else(|| panic!("no truth line in {log:?}"));
        serde_json::from_str::<Value>(l).unwrap()["futile_wakeups"].as_f64().unwrap()
    };
    let (lb, lf) = (logged_futile(&r.bug2_buggy.1), logged_futile(&r.bug2_fixed_set.1));
    let v = compare(&r.bug2_buggy.0, &r.bug2_fixed_set.0);
    let ch = changes(&v);
    // `Storage.take: threading.Condition self._monitor: N futile wake-ups → M` (the statement's
    // artifact is the function the object was first waited in: `take` or `put` of the storage).
    let futile: Vec<(u64, u64, &str)> = ch
        .iter()
        .filter(|c| c.0 == "Storage.take" || c.0 == "Storage.put")
        .filter_map(|c| {
            let (head, tail) = c.1.split_once(" futile wake-ups → ")?;
            Some((head.rsplit(' ').next()?.parse().ok()?, tail.split_whitespace().next()?.parse().ok()?, c.1.as_str()))
        })
        .collect();
    assert!(!futile.is_empty(), "no futile wake-up statement on the storage: {ch:#?}");
    // Summed over the storage's objects, so that a renamed condition does not pass for a fix.
    let (before, after) = futile.iter().fold((0, 0), |(x, y), f| (x + f.0, y + f.1));
    assert!(before > 0 && after < before, "the program logs {lb} → {lf} futile wake-ups; the words say {futile:?}");
    let storage_futile = |run: &Path| -> u64 {
        let w = json(r.dir.as_path(), &["waits", run.to_str().unwrap(), "--json"]);
        w["objects"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["frame"]["function"].as_str().is_some_and(|f| f.starts_with("Storage.")))
            .map(|o| o["futile_wakeups"].as_u64().unwrap())
            .sum()
    };
    let set: Value = serde_json::from_str(&std::fs::read_to_string(&r.bug2_fixed_set.0).unwrap()).unwrap();
    let fixed_run = r.dir.join(set["runs"][0].as_str().unwrap());
    let (mb, mf) = (storage_futile(&r.bug2_buggy.0) as f64, storage_futile(&fixed_run) as f64);
    // Per unit (same duration: per unit ∝ count / rate).
    let (fb, ff) = (mb / rate_b, mf / rate_f);
    eprintln!("bug2: futile wake-ups on the storage {mb} → {mf} (the program logged {lb} → {lf}); per unit/s {fb:.2} → {ff:.2}");
    // Each side against the program: never more than it had (the fixed side's over-count, above,
    // allowed up to 2×), and the fixed side, counted one by one, not less than half of it.
    assert!(mb <= lb * 1.1 + 5.0, "buggy: {mb} futile wake-ups stated, the program logged {lb}");
    assert!(mf <= lf * 2.0 + 5.0, "fixed: {mf} futile wake-ups stated, the program logged {lf}");
    assert!(mf >= lf * 0.5 - 5.0, "fixed: {mf} futile wake-ups stated, the program logged {lf}");
    assert!(fb > 2.0 * ff, "futile wake-ups per unit (× duration): {fb:.2} → {ff:.2}; the program logged {lb} → {lf} ({truth_b} → {truth_f} wake-ups per unit)");
    // A set of one run: no spread, said, and nothing marked.
    assert!(ch.iter().all(|c| c.2.is_null()), "{ch:#?}");
    let notes: Vec<&str> = v["trace"]["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.iter().any(|n| n.contains("significance unavailable")), "{notes:?}");
}

#[test]
fn bug3_the_words_name_the_readers_time_cut() {
    let r = runs();
    let (sb, sf) = (readers_spun(&r.bug3_buggy.1), readers_spun(&r.bug3_fixed.1));
    assert!(sb > sf, "the sample itself: {sb} readers spun to the limit in the buggy run, {sf} in the fixed one");
    let v = compare(&r.bug3_buggy.0, &r.bug3_fixed.0);
    let ch = changes(&v);
    let readers: Vec<_> = ch.iter().filter(|c| c.0 == "Reader.run").collect();
    assert!(
        readers.iter().any(|c| c.1.contains("time in it cut") || c.1.contains("waiting time cut") || c.1.contains("earlier")),
        "no statement that the readers' (busy-)waiting was cut: {ch:#?}"
    );
}

#[test]
fn the_same_program_twice_changes_nothing_significantly_and_matches_its_trace() {
    let r = runs();
    let v = compare(&r.bug1_fixed, &r.bug1_fixed_again);
    let ch = changes(&v);
    let significant: Vec<_> = ch.iter().filter(|c| c.2 == Value::Bool(true)).collect();
    assert!(significant.is_empty(), "{significant:#?}");
    let share = v["trace"]["matched_share"].as_f64().unwrap();
    assert!(share >= 0.9, "matched {share}");
}

#[test]
fn report_on_a_run_set_has_each_runs_figures_mean_and_spread_and_the_stability() {
    let r = runs();
    let set = json(&r.dir, &["report", r.bug1_buggy.to_str().unwrap(), "--json", "--no-stdlib", "--no-third-party"]);
    let members: Vec<PathBuf> = set["runset"]["runs"].as_array().unwrap().iter().map(|p| PathBuf::from(p.as_str().unwrap())).collect();
    assert_eq!(members.len(), 3);
    // Checked against `report --json` on each run.
    let singles: Vec<Value> = members.iter().map(|p| json(&r.dir, &["report", p.to_str().unwrap(), "--json", "--no-stdlib", "--no-third-party"])).collect();
    for a in set["artifacts"].as_array().unwrap() {
        let crts: Vec<f64> = singles
            .iter()
            .map(|s| {
                s["artifacts"].as_array().unwrap().iter().find(|x| x["qualname"] == a["qualname"] && x["file"] == a["file"]).map_or(0.0, |x| x["crt"].as_f64().unwrap())
            })
            .collect();
        let mean = crts.iter().sum::<f64>() / 3.0;
        assert!((a["crt"]["mean"].as_f64().unwrap() - mean).abs() < 1e-9, "{} {crts:?}", a["qualname"]);
        let min = crts.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!(a["crt"]["min"].as_f64().unwrap(), min);
        assert_eq!(a["crt"]["n"], 3);
        assert!(a["crt"]["sd"].is_f64());
    }
    for k in ["cop_kmeans_ari", "kmeans_ari"] {
        let x = set["stability"][k].as_f64().unwrap_or_else(|| panic!("{k}: {}", set["stability"]));
        assert!((-1.0..=1.0).contains(&x), "{k} = {x}");
    }
    assert_eq!(set["stability"]["pairs"], 3);
    // A set of one run: spread and stability unavailable, said.
    let one = json(&r.dir, &["report", r.bug2_fixed_set.0.to_str().unwrap(), "--json"]);
    assert!(one["artifacts"].as_array().unwrap().iter().all(|a| a["crt"]["sd"].is_null()));
    assert!(one["stability"]["cop_kmeans_ari"].is_null());
    assert!(one["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("one run")), "{}", one["notes"]);
    let text = String::from_utf8_lossy(&run_ok(&r.dir, &["report", r.bug1_buggy.to_str().unwrap()]).stdout).into_owned();
    assert!(text.contains("Stability") && text.contains(" ± "), "{text}");
}

#[test]
fn bad_input_is_said_and_still_compared() {
    let r = runs();
    // Different intervals: compared in time, noted.
    // Asked 3 ms and 6 ms; what counts is each run's sampling period (the one definition,
    // `threadradar_analysis::period`: on a loaded machine both may fall to the same).
    let v = compare(&r.bug1_fixed, &r.bug1_fixed_6ms);
    let notes = v["trace"]["notes"].to_string();
    let set: Value = serde_json::from_str(&std::fs::read_to_string(&r.bug1_fixed).unwrap()).unwrap();
    let first = read(&r.dir.join(set["runs"][0].as_str().unwrap()));
    let period = |run: &threadradar_profiler::Run| threadradar_analysis::period::sampling_period_ns(run) as f64 / 1e6;
    let (pa, pb) = (period(&first), period(&read(&r.bug1_fixed_6ms)));
    assert!((v["trace"]["a_period_ms"].as_f64().unwrap() - pa).abs() < 0.01 && (v["trace"]["b_period_ms"].as_f64().unwrap() - pb).abs() < 0.01);
    assert_eq!(notes.contains("different intervals"), (pa - pb).abs() > 0.1 * pa.max(pb), "{pa} ms vs {pb} ms: {notes}");
    assert!(v["trace"]["matched_share"].as_f64().unwrap() > 0.5);
    // Different programs: said, still compared by name.
    let v = compare(&r.bug1_fixed_6ms, &r.bug3_fixed.0);
    assert!(v["trace"]["notes"].to_string().contains("different programs"), "{}", v["trace"]["notes"]);
    assert!(!v["artifacts"].as_array().unwrap().is_empty());
    // A manifest listing a missing run: one sentence, exit 2.
    let broken = r.dir.join("broken.json");
    std::fs::write(&broken, r#"{"format":"threadradar-runset","version":1,"label":"x","command":[],"runs":["nope.json"]}"#).unwrap();
    let o = threadradar(&r.dir, &["report", broken.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("does not exist") && err.trim().lines().count() == 1 && !err.contains("panicked"), "{err}");
    // A bad τ.
    let o = threadradar(&r.dir, &["compare", r.bug1_fixed.to_str().unwrap(), r.bug1_fixed.to_str().unwrap(), "--tau", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--tau"), "{}", stderr(&o));
}
