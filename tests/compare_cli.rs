//! `threadradar compare` on real recordings of the paper's Bug 1 (§5.1): the buggy and the fixed
//! program are different files, yet `WorkerManager.__init__` is matched across them and goes from
//! several threads to one. Every figure is checked against `threadradar report --json` on the same
//! run, never against recorded values.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

/// The two recordings, made once for all tests of this file.
struct Runs {
    dir: PathBuf,
    buggy: PathBuf,
    fixed: PathBuf,
}

fn sample(variant: &str) -> String {
    repo().join("samples/python/bug1_worker_manager").join(format!("{variant}.py")).display().to_string()
}

fn record_bug1(dir: &Path, variant: &str, attempt: usize) -> PathBuf {
    let out = dir.join(format!("{variant}-{attempt}.json"));
    let o = record(&out, &[], &[&sample(variant), "--workers", "6", "--timeout", "1.5"]);
    assert!(o.status.success(), "recording {variant}.py failed: {}", stderr(&o));
    out
}

fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let _g = serial();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compare_cli");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // The race nearly always lets several workers construct a manager; it need not. And the
        // compare lists a change of threads only on enough samples of it (two per thread, at
        // least 10: `changes::supported`); a loaded machine can start the constructors before
        // the sampler attaches, so a recording without that evidence is recorded again.
        let mut seen = Vec::new();
        let mut buggy = None;
        for attempt in 0..5 {
            let run = record_bug1(&dir, "buggy", attempt);
            let (threads, samples) = init(&report_json(&run, &["--include", r"^WorkerManager\.__init__$"]))
                .map_or((0, 0), |a| (a["threads"].as_u64().unwrap(), a["samples"].as_u64().unwrap_or(0)));
            seen.push((threads, samples));
            if threads >= 2 && samples >= 10.max(2 * threads) {
                buggy = Some(run);
                break;
            }
        }
        let buggy = buggy.unwrap_or_else(|| panic!("buggy: WorkerManager.__init__ (threads, samples) per recording: {seen:?}"));
        let fixed = record_bug1(&dir, "fixed", 0);
        Runs { dir, buggy, fixed }
    })
}

fn run_ok(cwd: &Path, args: &[&str]) -> Output {
    let o = threadradar(cwd, args);
    assert!(o.status.success(), "threadradar {args:?} failed: {}", stderr(&o));
    o
}

fn report_json(run: &Path, args: &[&str]) -> Value {
    let mut all = vec!["report", run.to_str().unwrap(), "--json"];
    all.extend_from_slice(args);
    serde_json::from_slice(&run_ok(run.parent().unwrap(), &all).stdout).expect("report --json prints JSON")
}

fn compare_json(cwd: &Path, args: &[&str]) -> Value {
    let mut all = vec!["compare", "--json"];
    all.extend_from_slice(args);
    serde_json::from_slice(&run_ok(cwd, &all).stdout).expect("compare --json prints JSON")
}

fn init(report: &Value) -> Option<&Value> {
    report["artifacts"].as_array()?.iter().find(|a| a["qualname"] == "WorkerManager.__init__")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The rows of a table: the lines below its column header.
fn rows(table: &str) -> usize {
    table.lines().skip_while(|l| !l.contains("crt base → new")).skip(1).count()
}

/// Fails with exit code 2 and one line on stderr containing `needle`.
fn assert_fails_with(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one sentence, not a backtrace: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(stdout(o).is_empty());
}

/// A run directory holding copies of the recordings under timestamped names, oldest first.
fn project_with(names_and_runs: &[(&str, &Path)]) -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    let dir = project.path().join(".threadradar/runs");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, run) in names_and_runs {
        std::fs::copy(run, dir.join(name)).unwrap();
    }
    project
}

#[test]
fn the_constructor_goes_from_several_threads_to_one() {
    let r = runs();
    let v = compare_json(&r.dir, &[r.buggy.to_str().unwrap(), r.fixed.to_str().unwrap()]);
    assert_eq!(v["level"], "function");
    assert_eq!(v["base"]["path"], r.buggy.to_str().unwrap());
    assert_eq!(v["new"]["path"], r.fixed.to_str().unwrap());
    let arts = v["artifacts"].as_array().unwrap();
    let inits: Vec<&Value> = arts.iter().filter(|a| a["qualname"] == "WorkerManager.__init__").collect();
    assert_eq!(inits.len(), 1, "matched across buggy.py and fixed.py: {inits:?}");
    let d = inits[0];
    assert_eq!(d["status"], "changed");
    assert!(d["file_base"].as_str().unwrap().ends_with("bug1_worker_manager/buggy.py"), "{d}");
    assert!(d["file_new"].as_str().unwrap().ends_with("bug1_worker_manager/fixed.py"), "{d}");
    let (before, after) = (d["base"]["threads"].as_i64().unwrap(), d["new"]["threads"].as_i64().unwrap());
    assert!(before > 1, "buggy: several workers construct a manager: {d}");
    assert_eq!(after, 1, "fixed: exactly one: {d}");
    assert_eq!(d["threads_delta"].as_i64().unwrap(), after - before);
    assert!(d["threads_delta"].as_i64().unwrap() < 0);
    // `common.py` is the same file in both runs: matched by file and name.
    let busy = arts.iter().find(|a| a["qualname"] == "busy_work").expect("busy_work ran in both");
    assert_eq!(busy["file_base"], busy["file_new"]);
}

/// Comma lists are run sets (issue 17): `BUGGY,BUGGY FIXED,FIXED` has no spread on either side,
/// so the constructor's change (several threads → 1, each run's own report) is exact and
/// significant; the same two runs on both sides (`BUGGY,FIXED FIXED,BUGGY`: the table shows the
/// buggy and the fixed run) cannot exceed their own spread. The test and n per side are said.
#[test]
fn comma_lists_are_run_sets_tested_against_their_spread() {
    let r = runs();
    let (b, f) = (r.buggy.to_str().unwrap(), r.fixed.to_str().unwrap());
    let threads = |run: &Path| init(&report_json(run, &[])).expect("the constructor ran")["threads"].as_i64().unwrap();
    let (tb, tf) = (threads(&r.buggy), threads(&r.fixed));
    let v = compare_json(&r.dir, &[&format!("{b},{b}"), &format!("{f},{f}")]);
    let sig = &v["significance"];
    assert_eq!((sig["n_base"].as_i64(), sig["n_new"].as_i64()), (Some(2), Some(2)), "{sig}");
    assert!(sig["test"].as_str().unwrap().starts_with("Welch's t-test"), "{sig}");
    assert_eq!(v["base"]["path"], format!("{b},{b}"));
    let changes = v["changes"].as_array().unwrap();
    let run_by = changes.iter().find(|c| c["artifact"] == "WorkerManager.__init__" && c["statement"].as_str().unwrap().contains("run by")).expect("the constructor's statement");
    assert_eq!(run_by["statement"], format!("WorkerManager.__init__: run by {tb} threads → {tf}"));
    assert_eq!(run_by["significant"], true, "{run_by}");
    assert!(changes.iter().all(|c| c["significant"].is_boolean() && c["p"].is_f64()), "every change tested: {changes:?}");

    let v = compare_json(&r.dir, &[&format!("{b},{f}"), &format!("{f},{b}")]);
    assert_eq!((v["base"]["path"].as_str(), v["new"]["path"].as_str()), (Some(format!("{b},{f}").as_str()), Some(format!("{f},{b}").as_str())));
    let changes = v["changes"].as_array().unwrap();
    assert!(!changes.is_empty() && changes.iter().all(|c| c["significant"] == false), "{changes:?}");
    let text = stdout(&run_ok(&r.dir, &["compare", &format!("{b},{f}"), &format!("{f},{b}")]));
    assert!(text.contains("(within noise)") && !text.contains("(significant)"), "{text}");
    // A missing member: the run file's own sentence.
    assert_fails_with(&threadradar(&r.dir, &["compare", &format!("{b},{b}.missing"), f]), "no run file at");
}

#[test]
fn each_side_has_the_report_figures_and_the_list_is_sorted() {
    let r = runs();
    let v = compare_json(&r.dir, &[r.buggy.to_str().unwrap(), r.fixed.to_str().unwrap()]);
    let arts = v["artifacts"].as_array().unwrap();
    assert_eq!(v["listed"].as_u64().unwrap() as usize, arts.len(), "--json lists everything");
    let count = |status: &str| arts.iter().filter(|a| a["status"] == status).count() as u64;
    assert_eq!(v["only_in_base"], count("removed"));
    assert_eq!(v["only_in_new"], count("added"));

    for (run, side, file_key, line_key) in [(&r.buggy, "base", "file_base", "line_base"), (&r.fixed, "new", "file_new", "line_new")] {
        let report = report_json(run, &[]);
        assert_eq!(v[side]["counted_samples"], report["counted_samples"]);
        assert_eq!(v[side]["seconds"], report["run"]["seconds"]);
        assert_eq!(v[side]["program"]["threads"], report["program"]["threads"]);
        assert_eq!(v[side]["program"]["glyph"], report["program"]["glyph"]);
        let listed = report["artifacts"].as_array().unwrap();
        assert_eq!(arts.iter().filter(|a| !a[side].is_null()).count(), listed.len(), "{side}: every executed function once");
        for a in listed.iter().take(8) {
            let d = arts
                .iter()
                .find(|d| d["qualname"] == a["qualname"] && d[file_key] == a["file"] && d[line_key] == a["line"])
                .unwrap_or_else(|| panic!("{side}: {} is in the comparison", a["qualname"]));
            for key in ["crt", "self_crt", "seconds", "samples", "threads", "thread_types", "glyph"] {
                assert_eq!(d[side][key], a[key], "{side} {key} of {}", a["qualname"]);
            }
            assert_eq!(d[side]["clusters"].as_u64().unwrap() as usize, a["clusters"].as_array().unwrap().len());
        }
    }

    let crt = |d: &Value, side: &str| d[side]["crt"].as_f64().unwrap_or(0.0);
    let mut previous = f64::INFINITY;
    for d in arts {
        let delta = d["crt_delta"].as_f64().unwrap();
        assert!((delta - (crt(d, "new") - crt(d, "base"))).abs() < 1e-12, "{d}");
        assert!(delta.abs() <= previous, "sorted by |crt_delta| descending: {} after {previous}", delta.abs());
        previous = delta.abs();
    }
}

#[test]
fn the_table_has_arrow_rows_and_top_cuts_it() {
    let r = runs();
    let (buggy, fixed) = (r.buggy.to_str().unwrap(), r.fixed.to_str().unwrap());
    let out = stdout(&run_ok(&r.dir, &["compare", buggy, fixed, "--color", "never"]));
    // The words first (issue 17), then the header and the table.
    assert!(out.starts_with("What changed:"), "{out}");
    assert!(out.contains(&format!("\nBase  {buggy}  (buggy: ")), "{out}");
    assert!(out.contains("\nTrace    "), "{out}");
    assert!(out.contains(&format!("\nNew   {fixed}  (fixed: ")), "{out}");
    assert!(out.contains("crt base → new") && out.contains("radar base → new"), "{out}");
    assert!(!out.contains('\x1b'), "--color never: {out:?}");
    assert_eq!(rows(&out), 20, "20 rows by default: {out}");
    // The program's own code, where the constructor is (imports of the standard library can
    // change more than it).
    let out = stdout(&run_ok(&r.dir, &["compare", buggy, fixed, "--color", "never", "--no-stdlib"]));
    assert!(!out.contains("[stdlib]"), "{out}");
    let row = out
        .lines()
        .skip_while(|l| !l.contains("crt base → new"))
        .find(|l| l.contains("WorkerManager.__init__"))
        .unwrap_or_else(|| panic!("a row for the constructor: {out}"));
    assert!(row.contains("% → ") && row.contains("pp "), "{row}");
    assert!(row.contains("bug1_worker_manager/buggy.py:") && row.contains(" → fixed.py:"), "{row}");

    let out = stdout(&run_ok(&r.dir, &["compare", buggy, fixed, "--color", "never", "--top", "3"]));
    assert!(out.contains(", 3 of "), "{out}");
    assert_eq!(rows(&out), 3, "{out}");
    let v = compare_json(&r.dir, &[buggy, fixed, "--top", "3"]);
    assert_eq!(v["artifacts"].as_array().unwrap().len(), 3);
    assert!(v["listed"].as_u64().unwrap() > 3);

    // The program's own classes: in a 0.3 s fixed run, the standard library's import machinery
    // (FrozenImporter, _LoaderBasics) can change by more than WorkerManager and fill the 20 rows.
    let out = stdout(&run_ok(&r.dir, &["compare", buggy, fixed, "--color", "always", "--level", "class", "--no-stdlib"]));
    assert!(out.contains("Classes by change") && out.contains("WorkerManager  ("), "{out}");
    assert!(out.contains("\x1b[32m") || out.contains("\x1b[31m"), "a coloured change: {out}");
}

#[test]
fn default_runs_come_from_the_runs_directory() {
    let r = runs();
    let project = project_with(&[("20260101T000000Z-buggy.json", &r.buggy), ("20260102T000000Z-fixed.json", &r.fixed)]);
    let v = compare_json(project.path(), &[]);
    assert!(v["base"]["path"].as_str().unwrap().ends_with("20260101T000000Z-buggy.json"), "the older run is BASE: {}", v["base"]["path"]);
    assert!(v["new"]["path"].as_str().unwrap().ends_with("20260102T000000Z-fixed.json"));
    // One argument is BASE; NEW is the newest run.
    let v = compare_json(project.path(), &[r.buggy.to_str().unwrap()]);
    assert_eq!(v["base"]["path"], r.buggy.to_str().unwrap());
    assert!(v["new"]["path"].as_str().unwrap().ends_with("20260102T000000Z-fixed.json"));
    // A directory means its newest run.
    let v = compare_json(project.path(), &[r.buggy.to_str().unwrap(), ".threadradar/runs"]);
    assert!(v["new"]["path"].as_str().unwrap().ends_with("20260102T000000Z-fixed.json"));
}

#[test]
fn comparing_a_run_with_itself_is_allowed_but_said() {
    let r = runs();
    let o = run_ok(&r.dir, &["compare", r.fixed.to_str().unwrap(), r.fixed.to_str().unwrap(), "--json"]);
    assert!(stderr(&o).contains("comparing a run with itself"), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["artifacts"].as_array().unwrap().iter().all(|d| d["crt_delta"] == 0.0 && d["threads_delta"] == 0 && d["base"] == d["new"]));
}

#[test]
fn fewer_than_two_runs_say_what_to_record() {
    let r = runs();
    let project = project_with(&[("20260101T000000Z-buggy.json", &r.buggy)]);
    assert_fails_with(
        &threadradar(project.path(), &["compare"]),
        "holds only one run (20260101T000000Z-buggy.json): record another run with `threadradar record -- ",
    );
    let empty = tempfile::tempdir().unwrap();
    assert_fails_with(&threadradar(empty.path(), &["compare"]), "holds no runs: record two runs with `threadradar record -- ");
    assert_fails_with(
        &threadradar(empty.path(), &["compare", r.buggy.to_str().unwrap()]),
        "NEW defaults to the newest run in ./.threadradar/runs",
    );
}

#[test]
fn unreadable_runs_are_one_sentence() {
    let r = runs();
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(&r.fixed).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &good[..good.len() / 2]).unwrap();
    assert_fails_with(&threadradar(dir.path(), &["compare", r.buggy.to_str().unwrap(), "cut.json"]), "cut.json is truncated");
    assert_fails_with(&threadradar(dir.path(), &["compare", "nope.json", r.fixed.to_str().unwrap()]), "no run file at nope.json");
    assert_fails_with(
        &threadradar(dir.path(), &["compare", r.buggy.to_str().unwrap(), r.fixed.to_str().unwrap(), "--include", "("]),
        "is not a valid regular expression",
    );
}

/// Bug 2 (§5.2) recorded once for the ranking tests: the buggy and the fixed program, 1.5 s each.
fn bug2() -> &'static (PathBuf, PathBuf) {
    static RUNS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    RUNS.get_or_init(|| {
        let _g = serial();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compare_cli_bug2");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let rec = |variant: &str| {
            let out = dir.join(format!("{variant}.json"));
            let script = repo().join("samples/python/bug2_producer_consumer").join(format!("{variant}.py")).display().to_string();
            let o = record(&out, &[], &[&script, "--producers", "1", "--consumers", "10", "--duration", "1.5"]);
            assert!(o.status.success(), "recording bug 2 {variant}.py failed: {}", stderr(&o));
            out
        };
        (rec("buggy"), rec("fixed"))
    })
}

/// The observations a listed change rests on, by the rule of docs/compare.md ("Ranking"): the
/// side with fewer threads for threads and clusters, the present side for an added or removed
/// artifact, both sides otherwise.
fn rests_on(c: &Value) -> (u64, u64) {
    let e = &c["evidence"];
    let (b, n) = (e["base"].as_u64().unwrap(), e["new"].as_u64().unwrap());
    let (tb, tn) = (e["threads_base"].as_u64().unwrap(), e["threads_new"].as_u64().unwrap());
    match (c["figure"].as_str().unwrap(), c["status"].as_str().unwrap()) {
        ("threads" | "clusters" | "cluster", _) => (if tb <= tn { b } else { n }, 2 * tb.max(tn)),
        (_, "added") => (n, 0),
        (_, "removed") => (b, 0),
        _ => (b + n, 0),
    }
}

/// Every change of `compare --json` is data: the figure, before → after, the evidence and its
/// words, and none listed rests on fewer observations than the rule allows; what was left out is
/// counted and said.
fn assert_typed_and_supported(v: &Value) {
    let changes = v["changes"].as_array().unwrap();
    assert!(!changes.is_empty(), "{v}");
    for c in changes {
        assert!(c["figure"].is_string() && c["before"].is_f64() && c["after"].is_f64(), "{c}");
        let source = c["evidence"]["source"].as_str().unwrap();
        assert!(["sampled", "inferred", "kernel-exact"].contains(&source), "{c}");
        assert!(c["evidence_text"].as_str().unwrap().starts_with(&format!("{source}: ")), "{c}");
        let (n, per_thread) = rests_on(c);
        assert!(n >= 10 && n >= per_thread, "a listed change on too few observations ({n}, {per_thread} needed): {c}");
    }
    let suppressed = v["suppressed"].as_u64().unwrap();
    match v["suppressed_note"].as_str() {
        Some(note) => assert!(suppressed > 0 && note.starts_with(&format!("{suppressed} change")), "{note}"),
        None => assert_eq!(suppressed, 0),
    }
}

/// Bug 1 leads with its constructor's threads: several → 1, on the samples of the fixed run.
#[test]
fn bug1_leads_with_the_constructors_threads() {
    let r = runs();
    let v = compare_json(&r.dir, &[r.buggy.to_str().unwrap(), r.fixed.to_str().unwrap()]);
    assert_typed_and_supported(&v);
    let first = &v["changes"][0];
    assert_eq!((first["figure"].as_str(), first["artifact"].as_str()), (Some("threads"), Some("WorkerManager.__init__")), "{:#}", v["changes"]);
    let init = init(&report_json(&r.buggy, &[])).expect("the constructor ran").clone();
    assert_eq!(first["before"].as_f64().unwrap(), init["threads"].as_f64().unwrap(), "{first}");
    assert_eq!(first["after"], 1.0);
    assert_eq!((first["evidence"]["source"].as_str(), first["evidence"]["unit"].as_str()), (Some("sampled"), Some("samples")));
    assert_eq!(first["evidence"]["base"], init["samples"], "the buggy run's samples of the constructor: {first}");
    assert!(first["file"].as_str().unwrap().ends_with("bug1_worker_manager/fixed.py"), "{first}");
    // The table says it first too, with its evidence.
    let text = stdout(&run_ok(&r.dir, &["compare", r.buggy.to_str().unwrap(), r.fixed.to_str().unwrap()]));
    let listed = text.lines().nth(1).unwrap_or_default();
    assert_eq!(listed, format!("  - {}  [{}]", first["statement"].as_str().unwrap(), first["evidence_text"].as_str().unwrap()), "{text}");
}

/// Bug 2 leads with the futile wake-ups on the storage's one condition (`self._monitor`), gone in
/// the fix — not with "run by 10 threads → 6" on a handful of samples, nor with import-time
/// `<module>`s "added" from one sample (those are suppressed and counted).
#[test]
fn bug2_leads_with_the_futile_wake_ups_on_the_monitor() {
    let (buggy, fixed) = bug2();
    let dir = buggy.parent().unwrap();
    let v = compare_json(dir, &[buggy.to_str().unwrap(), fixed.to_str().unwrap()]);
    assert_typed_and_supported(&v);
    let first = &v["changes"][0];
    assert_eq!(first["figure"], "futile_wakeups", "{:#}", v["changes"]);
    assert!(first["artifact"].as_str().unwrap().starts_with("Storage."), "{first}");
    let object = first["object"].as_str().unwrap();
    assert!(object.contains("_monitor"), "{first}");
    let (before, after) = (first["before"].as_f64().unwrap(), first["after"].as_f64().unwrap());
    assert!(before > 100.0 && after < before / 10.0, "{first}");
    assert_eq!(first["evidence"]["unit"], "wake_ups");
    assert_eq!((first["evidence"]["base"].as_f64(), first["evidence"]["new"].as_f64()), (Some(before), Some(after)));
    // The figure is the waits view's own count of futile wake-ups on that object.
    let waits = |run: &Path| -> Value { serde_json::from_slice(&run_ok(dir, &["waits", run.to_str().unwrap(), "--json"]).stdout).unwrap() };
    let futile_on = |w: &Value| -> Option<f64> {
        w["objects"].as_array().unwrap().iter().find(|o| o["object"] == object).map(|o| o["futile_wakeups"].as_f64().unwrap())
    };
    assert_eq!(futile_on(&waits(buggy)), Some(before), "{object} in the buggy run's waits");
    assert_eq!(futile_on(&waits(fixed)).unwrap_or(0.0), after, "{object} in the fixed run's waits");
}
