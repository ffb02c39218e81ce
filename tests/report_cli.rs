//! `threadradar report` from the outside: output on a hand-made run file, and one clear sentence
//! for each way its input can be wrong.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
use threadradar_profiler::run::{FileKind, Meta, Run, Sample, ThreadSample, ThreadState};

fn report(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_threadradar")).arg("report").args(args).current_dir(cwd).output().expect("running threadradar")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Fails with exit code 2 and one line on stderr containing `needle`.
fn assert_fails_with(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one sentence, not a backtrace: {err}");
    assert!(stdout(o).is_empty());
}

/// A worker pool: `main` runs in MainThread, `Pool.work > crunch` in two workers, one of them
/// three times busier. `state` is the state of every worker sample.
fn pool_run(state: ThreadState) -> Run {
    let mut b = RunBuilder::new(Meta { interval_ms: 3.0, cwd: "/app".into(), command: vec!["python3".into(), "pool.py".into()], ..Meta::default() });
    let f = b.file("/app/pool.py", FileKind::User, None);
    let lib = b.file("/usr/lib/python3.11/json/encoder.py", FileKind::Stdlib, None);
    let main = b.function(f, &FunctionSpec { qualname: "main", line: 30, ..Default::default() });
    let work = b.function(f, &FunctionSpec { qualname: "Pool.work", class: Some("Pool"), line: 12, end_line: 20, class_line: 5 });
    let crunch = b.function(lib, &FunctionSpec { qualname: "JSONEncoder.encode", class: Some("JSONEncoder"), line: 183, ..Default::default() });
    let (fm, fw, fc) = (b.frame(main, 31), b.frame(work, 14), b.frame(crunch, 190));
    let s_main = b.stack(&[fm]);
    let s_work = b.stack(&[fw, fc]);
    let t0 = b.thread(new_thread(7, 7, 1, "MainThread", "_MainThread"));
    let t1 = b.thread(new_thread(7, 8, 2, "busy", "Pool"));
    let t2 = b.thread(new_thread(7, 9, 3, "lazy", "Pool"));
    for tick in 0..40u64 {
        let mut threads = vec![
            ThreadSample { thread: t0, stack: s_main, state: ThreadState::Idle, ..Default::default() },
            ThreadSample { thread: t1, stack: s_work, state, ..Default::default() },
        ];
        if tick % 3 == 0 {
            threads.push(ThreadSample { thread: t2, stack: s_work, state, ..Default::default() });
        }
        b.push_sample(Sample { t: tick * 3_000_000, threads });
    }
    b.finish()
}

fn write(dir: &Path, name: &str, run: &Run) -> String {
    let path = dir.join(name);
    threadradar_profiler::runfile::write(run, &path).unwrap();
    path.display().to_string()
}

#[test]
fn json_report_of_a_run_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.json", &pool_run(ThreadState::Computing));
    let o = report(dir.path(), &[&path, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    // busy: 40 samples, lazy: 14 (ticks 0, 3, …, 39); MainThread is idle throughout.
    assert_eq!(v["counted_samples"], 54);
    assert_eq!(v["run"]["path"], path.as_str());
    let work = v["artifacts"].as_array().unwrap().iter().find(|a| a["qualname"] == "Pool.work").unwrap();
    assert_eq!(work["kind"], "function");
    assert_eq!(work["line"], 12);
    assert_eq!(work["threads"], 2);
    assert_eq!(work["thread_types"], 1);
    assert_eq!(work["crt"], 1.0);
    assert_eq!(work["clusters"].as_array().unwrap().len(), 2, "40/54 and 14/54 are far apart");
    assert_eq!(work["callees"][0]["qualname"], "JSONEncoder.encode");
    let threads = v["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 3);
    assert_eq!(threads[1]["name"], "busy");
    assert_eq!(threads[1]["samples"], 40);
}

#[test]
fn table_levels_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.json", &pool_run(ThreadState::Computing));
    let o = report(dir.path(), &[&path, "--color", "never"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Functions by computational runtime"), "{out}");
    assert!(out.contains("Pool.work  pool.py:12"), "{out}");
    assert!(out.contains("JSONEncoder.encode") && out.contains("[stdlib]"), "{out}");
    let o = report(dir.path(), &[&path, "--no-stdlib", "--color", "never"]);
    assert!(!stdout(&o).contains("JSONEncoder"));
    let o = report(dir.path(), &[&path, "--level", "class", "--exclude", "^Pool$", "--color", "never"]);
    let out = stdout(&o);
    assert!(out.contains("Classes") && out.contains("JSONEncoder") && !out.contains("Pool  "), "{out}");
    let o = report(dir.path(), &[&path, "--level", "program", "--color", "never"]);
    let out = stdout(&o);
    assert!(out.contains("busy") && out.contains("lazy") && out.contains("MainThread"), "{out}");
    // Excluding a thread recomputes the shares: `busy` alone does all of Pool.work.
    let o = report(dir.path(), &[&path, "--exclude-thread", "lazy", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["counted_samples"], 40);
    assert_eq!(v["run"]["excluded_threads"], serde_json::json!([2]));
    assert_eq!(v["program"]["clusters"][0]["threads"], serde_json::json!([1]));
}

#[test]
fn a_directory_means_its_newest_run() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    write(&runs, "20260101-000000-old.json", &pool_run(ThreadState::Gil));
    let newest = write(&runs, "20260102-000000-new.json", &pool_run(ThreadState::Computing));
    let o = report(dir.path(), &["--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let chosen = v["run"]["path"].as_str().unwrap();
    assert!(chosen.ends_with("20260102-000000-new.json") && newest.ends_with(chosen.trim_start_matches("./")), "{chosen}");
    let o = report(dir.path(), &[runs.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["run"]["path"].as_str().unwrap().ends_with("new.json"));
}

#[test]
fn missing_run_file() {
    let dir = tempfile::tempdir().unwrap();
    assert_fails_with(&report(dir.path(), &["nope.json"]), "no run file at nope.json");
    assert_fails_with(&report(dir.path(), &[]), "record a run with `threadradar record");
    std::fs::create_dir_all(dir.path().join(".threadradar/runs")).unwrap();
    assert_fails_with(&report(dir.path(), &[]), "holds no run files");
}

#[test]
fn corrupt_run_files() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(write(dir.path(), "good.json", &pool_run(ThreadState::Computing))).unwrap();
    std::fs::write(dir.path().join("cut.json"), &good[..good.len() / 2]).unwrap();
    assert_fails_with(&report(dir.path(), &["cut.json"]), "is truncated");
    std::fs::write(dir.path().join("other.json"), r#"{"hello": "world"}"#).unwrap();
    assert_fails_with(&report(dir.path(), &["other.json"]), "is not a ThreadRadar run file");
    std::fs::write(dir.path().join("empty.json"), "").unwrap();
    assert_fails_with(&report(dir.path(), &["empty.json"]), "is empty");
    // Valid JSON whose ids point nowhere.
    let bad = good.replacen("\"samples\":[{\"t\":0,\"threads\":[[0,", "\"samples\":[{\"t\":0,\"threads\":[[99,", 1);
    assert_ne!(bad, good, "the fixture's first sample starts with thread 0");
    std::fs::write(dir.path().join("dangling.json"), bad).unwrap();
    assert_fails_with(&report(dir.path(), &["dangling.json"]), "is corrupt");
}

#[test]
fn bad_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.json", &pool_run(ThreadState::Computing));
    assert_fails_with(&report(dir.path(), &[&path, "--include", "Pool("]), "the --include pattern \"Pool(\" is not a valid regular expression");
    assert_fails_with(&report(dir.path(), &[&path, "--exclude", "["]), "--exclude pattern");
    assert_fails_with(&report(dir.path(), &[&path, "--exclude-thread", "nobody"]), "no thread is named \"nobody\" in this run (threads: MainThread, busy, lazy)");
    assert_fails_with(&report(dir.path(), &[&path, "--exclude-type", "Nope"]), "no thread has the type \"Nope\"");
    let o = report(dir.path(), &[&path, "--level", "method-ish"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("possible values: function, class, file, program"), "{}", stderr(&o));
}

#[test]
fn nothing_counted_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.json", &pool_run(ThreadState::Idle));
    assert_fails_with(&report(dir.path(), &[&path]), "count more states with `--states all`");
    let o = report(dir.path(), &[&path, "--states", "all", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["counted_samples"], 94);
    assert_eq!(v["run"]["states"], "all");
    assert_fails_with(&report(dir.path(), &[&path, "--states", "all", "--exclude-type", "Pool", "--exclude-thread", "MainThread"]), "after excluding 3 threads");
}

/// `[tool.threadradar] states` of the project the report is run in is the default; `--states`
/// still wins (issue 19).
#[test]
fn the_projects_counted_states_are_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.json", &pool_run(ThreadState::Idle));
    let explicit = report(dir.path(), &[&path, "--states", "all", "--json"]);
    assert!(explicit.status.success(), "{}", stderr(&explicit));
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"x\"\n\n[tool.threadradar]\nstates = \"all\"\n").unwrap();
    let configured = report(dir.path(), &[&path, "--json"]);
    assert!(configured.status.success(), "{}", stderr(&configured));
    assert_eq!(stdout(&configured), stdout(&explicit));
    let v: Value = serde_json::from_str(&stdout(&configured)).unwrap();
    assert_eq!(v["counted_samples"], 94);
    assert_fails_with(&report(dir.path(), &[&path, "--states", "computing"]), "count more states with `--states all`");
}

#[test]
fn the_projects_include_and_exclude_are_the_default_listing() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.json", &pool_run(ThreadState::Computing));
    let names = |out: &std::process::Output| -> Vec<String> {
        let v: Value = serde_json::from_str(&stdout(out)).unwrap();
        v["artifacts"].as_array().unwrap().iter().map(|a| a["qualname"].as_str().unwrap().to_string()).collect()
    };
    let all = report(dir.path(), &[&path, "--json"]);
    assert!(all.status.success(), "{}", stderr(&all));
    assert!(names(&all).contains(&"JSONEncoder.encode".to_string()), "{:?}", names(&all));
    std::fs::write(dir.path().join("pyproject.toml"), "[tool.threadradar]\nexclude = [\"json/\"]\n").unwrap();
    let configured = report(dir.path(), &[&path, "--json"]);
    assert!(configured.status.success(), "{}", stderr(&configured));
    assert!(!names(&configured).contains(&"JSONEncoder.encode".to_string()), "{:?}", names(&configured));
    assert!(names(&configured).contains(&"Pool.work".to_string()));
    // A pattern on the command line replaces the project's.
    let explicit = report(dir.path(), &[&path, "--json", "--include", "encode"]);
    assert!(names(&explicit).contains(&"JSONEncoder.encode".to_string()), "{:?}", names(&explicit));
    assert!(!names(&explicit).contains(&"Pool.work".to_string()), "{:?}", names(&explicit));
}

/// The lines of `out` from the one starting with `header` to the next blank line.
fn table<'a>(out: &'a str, header: &str) -> Vec<&'a str> {
    out.lines().skip_while(|l| !l.starts_with(header)).take_while(|l| !l.trim().is_empty()).collect()
}

/// `threadradar demo` records the bundled Bug 1 and shows the program's own code. That is not a
/// second default: it prints the `report` flags that give the same tables, and `report` without
/// them lists the standard library too, as the panels and editors do.
#[test]
fn the_demo_is_report_with_the_flags_it_prints() {
    let dir = tempfile::tempdir().unwrap();
    let demo = Command::new(env!("CARGO_BIN_EXE_threadradar")).arg("demo").current_dir(dir.path()).output().unwrap();
    let out = stdout(&demo);
    assert!(demo.status.success(), "{}", stderr(&demo));
    let command = out.lines().find_map(|l| l.split("own code only: `threadradar report ").nth(1)).unwrap_or_else(|| panic!("{out}"));
    let command = command.split('`').next().unwrap().replace(" [--level class]", "");
    let args: Vec<&str> = command.split(' ').collect();
    assert_eq!(&args[1..], ["--no-stdlib", "--no-third-party", "--top", "10"]);
    let functions = stdout(&report(dir.path(), &args));
    let demo_functions = table(&out, "Functions by");
    assert!(demo_functions.iter().any(|l| l.contains("WorkerManager.__init__")), "{out}");
    assert_eq!(demo_functions, table(&functions, "Functions by"));
    let mut with_classes = args.clone();
    with_classes.extend(["--level", "class"]);
    let classes = stdout(&report(dir.path(), &with_classes));
    assert_eq!(table(&out, "Classes by"), table(&classes, "Classes by"));
    // Without the flags, the standard library is listed (a worker's `threading` bootstrap ran).
    let everything = stdout(&report(dir.path(), &[args[0], "--top", "50"]));
    assert!(everything.contains("Thread._bootstrap"), "{everything}");
    assert!(!out.contains("Thread._bootstrap"), "{out}");
}
