//! `threadradar sections`: critical sections found in real programs' source, their executions
//! checked against what the program logged about itself.

mod common;
use common::*;
use serde_json::Value;

fn json(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "threadradar failed: {}", stderr(out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The ground-truth program: a section of ~1 ms, every 50th of ~40 ms, four threads. Every
/// execution at least 5 intervals long is found with its duration within one interval + 10 %, the
/// slow ones are the outliers and no fast one is.
#[test]
fn executions_match_the_programs_own_log() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let log = dir.path().join("log.jsonl");
    let interval_ms = 2.0;
    let rec = record(&out, &["--interval-ms", "2"], &[&script("sections_truth.py"), log.to_str().unwrap(), "4", "100"]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let run = read(&out);
    let started_at = run.meta.started_at.expect("the run records started_at");
    let v = json(&threadradar(dir.path(), &["sections", out.to_str().unwrap(), "--json"]));
    // `record` takes the scheduler's events where it may (root): waits are then kernel-exact.
    assert_eq!(v["wait_source"], if run.sched.is_some() && !run.switches.is_empty() { "kernel" } else { "sampled" });
    let sections = v["sections"].as_array().unwrap();
    let s = sections.iter().find(|s| s["function"] == "Store.update").unwrap_or_else(|| panic!("no section in Store.update: {v}"));
    assert_eq!((s["lock"].as_str(), s["lock_type"].as_str(), s["kind"].as_str()), (Some("Store._lock"), Some("Lock"), Some("with")));
    let script_text = std::fs::read_to_string(script("sections_truth.py")).unwrap();
    let with_line = script_text.lines().position(|l| l.trim() == "with self._lock:").unwrap() as u64 + 1;
    assert_eq!(s["line"].as_u64(), Some(with_line));

    let logged: Vec<Value> = std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(logged.len(), 400);
    let execs = s["executions"].as_array().unwrap();
    let interval = run.meta.duration_s / (run.samples.len() - 1) as f64;
    // "One interval" is the one the sampler achieved (on a loaded machine it may fall behind the
    // requested one; that is resolution, not an error of the analysis).
    eprintln!("requested interval {interval_ms} ms, achieved {:.3} ms", interval * 1e3);
    // The found execution of the same thread overlapping a logged one the most.
    let matching = |l: &Value| -> Option<usize> {
        let (start, dur) = (f(&l["start"]) - started_at, f(&l["duration"]));
        execs
            .iter()
            .enumerate()
            .filter(|(_, e)| e["thread"] == l["thread"])
            .map(|(i, e)| {
                let (a, b) = (f(&e["start_s"]), f(&e["start_s"]) + f(&e["duration_s"]));
                (i, (b.min(start + dur) - a.max(start)).max(0.0))
            })
            .filter(|(_, overlap)| *overlap > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    };
    let outliers: Vec<usize> = s["outliers"].as_array().unwrap().iter().map(|i| i.as_u64().unwrap() as usize).collect();
    // Ticks at which the run saw a thread, by name: an execution in which the (possibly
    // overloaded) sampler did not see its thread twice cannot be resolved, whatever its length.
    let seen = |name: &str, from: f64, to: f64| -> usize {
        let t = run.threads.iter().position(|t| t.name == name).unwrap() as u32;
        run.samples.iter().filter(|smp| (from..=to).contains(&(smp.t as f64 / 1e9)) && smp.threads.iter().any(|ts| ts.thread == t)).count()
    };
    // The stated rule splits executions only where the thread was seen outside: an execution
    // whose neighbours (same thread) are not separated from it by a sample merges with them.
    let apart = |l: &Value| -> bool {
        let (name, start) = (l["thread"].as_str().unwrap(), f(&l["start"]) - started_at);
        let end = start + f(&l["duration"]);
        let mine: Vec<(f64, f64)> = logged
            .iter()
            .filter(|o| o["thread"] == l["thread"])
            .map(|o| (f(&o["start"]) - started_at, f(&o["start"]) - started_at + f(&o["duration"])))
            .collect();
        let before = mine.iter().filter(|o| o.1 <= start).map(|o| o.1).fold(f64::MIN, f64::max);
        let after = mine.iter().filter(|o| o.0 >= end).map(|o| o.0).fold(f64::MAX, f64::min);
        (before == f64::MIN || seen(name, before, start) > 0) && (after == f64::MAX || seen(name, end, after) > 0)
    };
    let mut long = 0;
    for l in &logged {
        let dur = f(&l["duration"]);
        let start = f(&l["start"]) - started_at;
        let name = l["thread"].as_str().unwrap();
        if dur < 5.0 * interval.max(interval_ms / 1e3) || seen(name, start, start + dur) < 2 || !apart(l) {
            continue;
        }
        long += 1;
        let i = matching(l).unwrap_or_else(|| panic!("the {dur:.4} s execution of {name} at {start:.4} s was not found"));
        let found = f(&execs[i]["duration_s"]);
        // One interval: the requested one, or the gaps around this execution when the sampler
        // fell behind (its `error_s`); + 10 %.
        let tolerance = (interval_ms / 1e3).max(interval).max(f(&execs[i]["error_s"])) + 0.1 * dur;
        assert!((found - dur).abs() <= tolerance, "{name} held {dur:.4} s from {start:.4} s, found {} (± {tolerance:.4})", execs[i]);
        assert!((f(&execs[i]["start_s"]) - start).abs() <= tolerance, "{name} entered at {start:.4} s, found {}", execs[i]);
        // A slow one is an outlier wherever the sampler resolved it (not starved for > 5 intervals).
        if l["slow"] == true && f(&execs[i]["error_s"]) <= 5.0 * interval_ms / 1e3 {
            assert!(outliers.contains(&i), "the slow execution #{i} ({found:.4} s) is not an outlier (threshold {})", s["outlier_threshold_s"]);
        }
    }
    assert!(long >= 4, "only {long} executions of ≥ 5 intervals were sampled twice or more ({} slow ones logged)", logged.iter().filter(|l| l["slow"] == true).count());
    // No fast execution (true duration under 2 ms) is an outlier: every outlier that is one
    // logged execution is a long one. (Where the sampler saw no sample between two executions of
    // a thread they are one by the stated rule; such an outlier spans several logged ones.)
    for &i in &outliers {
        let e = &execs[i];
        let (a, b) = (f(&e["start_s"]), f(&e["start_s"]) + f(&e["duration_s"]));
        let covered: Vec<&Value> = logged
            .iter()
            .filter(|l| l["thread"] == e["thread"] && f(&l["start"]) - started_at < b && f(&l["start"]) - started_at + f(&l["duration"]) > a)
            .collect();
        if covered.len() == 1 {
            let truth = f(&covered[0]["duration"]);
            assert!(truth >= 2e-3, "outlier #{i} ({e}) is a fast execution ({}, {} samples of the thread meanwhile)", covered[0], seen(e["thread"].as_str().unwrap(), a, b));
        }
    }
    // Fast ones are counted, not invented: far fewer listed than executed, the total about right.
    let median = f(&s["median_s"]);
    assert!(median < 3e-3, "median {median} s of a ~1 ms section");
    let total_true: f64 = logged.iter().map(|l| f(&l["duration"])).sum();
    let total = f(&s["total_hold_s"]);
    assert!((total - total_true).abs() < 0.25 * total_true, "held {total} s, the program says {total_true} s");
    // The other threads waited while the slow ones held the lock.
    let contended = outliers.iter().filter(|&&i| !execs[i]["waiters"].as_array().unwrap().is_empty()).count();
    assert!(contended * 2 >= outliers.len(), "{contended} of {} outliers had waiters", outliers.len());
    assert!(f(&s["others_waited_s"]) > 0.1, "{}", s["others_waited_s"]);

    // The table says the same in words.
    let table = threadradar(dir.path(), &["sections", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("Store.update") && text.contains("outliers"), "{text}");
}

/// Configuration extends the set; a section never executed, a dynamically created lock and
/// recursion inside a section; bad configuration is one sentence.
#[test]
fn configured_unnamed_recursive_and_never_executed_sections() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("prog.py");
    std::fs::write(
        &prog,
        r#"import threading, time
locks = [threading.Lock() for _ in range(2)]
guard = threading.RLock()

def never():
    with guard:
        return 1

def dynamic(i):
    locks[i].acquire()
    try:
        time.sleep(0.03)
    finally:
        locks[i].release()

def recursive(n):
    with guard:
        if n:
            return recursive(n - 1)
        time.sleep(0.03)

def configured():
    x = 0
    time.sleep(0.03)
    return x

def run():
    for _ in range(3):
        dynamic(0)
        time.sleep(0.01)
        recursive(3)
        time.sleep(0.01)
        configured()
        time.sleep(0.01)

threading.Thread(target=run, name="t1").start()

def contended(i):
    mine = locks[i]
    mine.acquire()
    try:
        time.sleep(0.04)
    finally:
        mine.release()

def contend():
    for _ in range(4):
        contended(1)

for name in ("c1", "c2"):
    threading.Thread(target=contend, name=name).start()
"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[tool.threadradar]\ncritical_sections = [{file = \"prog.py\", line = 23, end_line = 24, lock = \"app state\"}]\n").unwrap();
    let out = dir.path().join("run.json");
    let rec = record(&out, &["--interval-ms", "2"], &[prog.to_str().unwrap()]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let v = json(&threadradar(dir.path(), &["sections", out.to_str().unwrap(), "--json"]));
    let by_fn = |name: &str| v["sections"].as_array().unwrap().iter().find(|s| s["function"] == name).unwrap_or_else(|| panic!("no {name}: {v}")).clone();
    let never = by_fn("never");
    assert_eq!((never["execution_count"].as_u64(), never["executions"].as_array().unwrap().len()), (Some(0), 0));
    let dynamic = by_fn("dynamic");
    assert_eq!((dynamic["lock"].as_str(), dynamic["kind"].as_str()), (Some("unnamed (locks[i])"), Some("acquire_release")));
    assert_eq!(dynamic["executions"].as_array().unwrap().len(), 3, "{dynamic}");
    // Recursion: each call of recursive(3) is one execution of the outer frame, not four.
    let rec_s = by_fn("recursive");
    assert_eq!(rec_s["executions"].as_array().unwrap().len(), 3, "{rec_s}");
    // A lock created dynamically (one of a list): its type and address come from the recorded
    // wait targets of the threads that waited for it (one object, whoever waited). The recorder
    // reads the object a line names when it is a local variable (`mine`), not `locks[i]`.
    let contended = by_fn("contended");
    assert_eq!(contended["kind"].as_str(), Some("acquire_release"), "{contended}");
    let objects = contended["lock_objects"].as_array().unwrap();
    assert_eq!(objects.len(), 1, "one lock object waited on: {contended}");
    let (ty, addr) = (objects[0]["type_name"].as_str().unwrap(), objects[0]["address"].as_str().unwrap());
    assert!(ty.contains("lock") && addr.starts_with("0x") && u64::from_str_radix(&addr[2..], 16).unwrap() > 0, "{objects:?}");
    assert!(dynamic["lock_objects"].as_array().unwrap().is_empty(), "nobody waited for locks[0]: {dynamic}");
    let table = String::from_utf8_lossy(&threadradar(dir.path(), &["sections", out.to_str().unwrap()]).stdout).into_owned();
    assert!(table.contains(&format!("threads waited on {ty} at {addr}")), "{table}");
    let conf = by_fn("configured");
    assert_eq!((conf["lock"].as_str(), conf["kind"].as_str(), conf["line"].as_u64()), (Some("app state"), Some("configured"), Some(23)));
    assert_eq!(conf["executions"].as_array().unwrap().len(), 3, "{conf}");
    for s in [&dynamic, &rec_s, &conf] {
        for e in s["executions"].as_array().unwrap() {
            // One under way when sampling began is cut by the run's start (its start is ~0).
            if f(&e["start_s"]) <= f(&e["error_s"]) {
                continue;
            }
            // A 30 ms sleep never takes less (it may take more on a loaded machine).
            assert!(f(&e["duration_s"]) + f(&e["error_s"]) >= 0.03, "{e}");
        }
    }

    std::fs::write(dir.path().join("pyproject.toml"), "[tool.threadradar]\nsynchronized = \"x\"\n").unwrap();
    let bad = threadradar(dir.path(), &["sections", out.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    let err = stderr(&bad);
    // The one schema's sentence: the file, the line, the key and what it takes.
    assert!(err.contains("pyproject.toml line 2: `synchronized` must be a list of decorator names") && err.lines().count() == 1, "{err}");
    let missing = threadradar(dir.path(), &["sections", dir.path().join("nope.json").to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(!stderr(&missing).contains("panicked"), "{}", stderr(&missing));
}

/// A run without wait data (imported from a profile without thread states) still lists
/// executions, and says that no waits are known.
#[test]
fn a_run_without_wait_data_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("p.py");
    std::fs::write(&prog, "import threading\nlock = threading.Lock()\n\ndef f():\n    with lock:\n        g()\n\ndef g():\n    pass\n").unwrap();
    let p = prog.display();
    let collapsed = dir.path().join("p.txt");
    std::fs::write(&collapsed, format!("MainThread;f ({p}:6);g ({p}:9) 5\nMainThread;f ({p}:5) 2\n")).unwrap();
    let out = dir.path().join("run.json");
    let imp = threadradar(dir.path(), &["import", collapsed.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(imp.status.success(), "{}", stderr(&imp));
    let v = json(&threadradar(dir.path(), &["sections", out.to_str().unwrap(), "--json"]));
    assert_eq!(v["wait_source"], "none", "{v}");
    assert!(v["how"].as_str().unwrap().contains("no waits"));
    let s = &v["sections"][0];
    assert_eq!(s["lock"], "lock");
    for e in s["executions"].as_array().unwrap() {
        assert!(e["wait_s"].is_null(), "{e}");
    }
}

/// With the kernel's scheduler events (`--sched`), the wait to enter is the thread's blocked time
/// that ended as it entered: checked against the wait the program logged for each execution
/// (from just before its `with` to inside). Holds of ~6 ms (every 50th ~40 ms) by four threads
/// that sleep 10 ms between them: most entries wait, and most executions are long enough to list.
#[test]
fn kernel_exact_waits_to_enter_match_the_programs_log() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let log = dir.path().join("log.jsonl");
    let rec = record(&out, &["--interval-ms", "2", "--sched"], &[&script("sections_truth.py"), log.to_str().unwrap(), "4", "40", "0.006"]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let run = read(&out);
    assert!(run.sched.is_some() && !run.switches.is_empty(), "--sched recorded no context switches: {}", stderr(&rec));
    let started_at = run.meta.started_at.unwrap();
    let v = json(&threadradar(dir.path(), &["sections", out.to_str().unwrap(), "--json"]));
    assert_eq!(v["wait_source"], "kernel", "{}", v["how"]);
    assert!(v["how"].as_str().unwrap().contains("kernel-exact"), "{}", v["how"]);
    let s = v["sections"].as_array().unwrap().iter().find(|s| s["function"] == "Store.update").unwrap();
    let execs = s["executions"].as_array().unwrap();
    let logged: Vec<Value> = std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let span = |l: &Value| (f(&l["start"]) - started_at, f(&l["start"]) - started_at + f(&l["duration"]));
    let tid = |name: &str| run.threads.iter().position(|t| t.name == name).unwrap() as u32;
    let seen = |name: &str, from: f64, to: f64| {
        let t = tid(name);
        run.samples.iter().any(|smp| (from..=to).contains(&(smp.t as f64 / 1e9)) && smp.threads.iter().any(|ts| ts.thread == t))
    };
    let (mut judged, mut waited, mut off) = (0, 0, Vec::new());
    for (n, l) in logged.iter().enumerate() {
        let name = l["thread"].as_str().unwrap();
        let (start, end) = span(l);
        let called = start - f(&l["wait"]);
        // The found execution overlapping it, if it overlaps this logged execution only.
        let Some(e) = execs.iter().find(|e| e["thread"] == l["thread"] && f(&e["start_s"]) < end && f(&e["start_s"]) + f(&e["duration_s"]) > start) else { continue };
        let (a, b) = (f(&e["start_s"]), f(&e["start_s"]) + f(&e["duration_s"]));
        if logged.iter().filter(|o| o["thread"] == l["thread"] && span(o).0 < b && span(o).1 > a).count() != 1 {
            continue;
        }
        // The rule needs a sample of the thread before it began to wait (after its previous hold):
        // an unseen sleep that ended right before the entry would be taken for a wait.
        let before = logged[..n].iter().filter(|o| o["thread"] == l["thread"]).map(|o| span(o).1).fold(0.0, f64::max);
        if !seen(name, before, called) {
            continue;
        }
        judged += 1;
        let (truth, found) = (f(&l["wait"]), f(&e["wait_s"]));
        if truth > 0.002 {
            waited += 1;
        }
        if (found - truth).abs() > 0.001 + 0.1 * truth {
            off.push(format!("{name} waited {truth:.5} s before {start:.4} s, found {found:.5} s"));
        }
    }
    eprintln!("{judged} executions judged, {waited} of them waited > 2 ms; off: {off:#?}");
    assert!(judged >= 20 && waited >= 5, "only {judged} executions could be judged ({waited} waited > 2 ms)");
    // Where the sampler read a stack more than 0.5 ms after its tick (a loaded machine), the wait
    // that ended in between is missed (found 0): allowed for at most 5 % of the judged executions.
    assert!(off.len() * 20 <= judged, "{} of {judged} waits to enter are not kernel-exact: {off:#?}", off.len());
}

/// Locks the source does not name as locks (`self._guard = make_guard()`, `with GUARDS[name]:`)
/// are found from the recorded waits: threads slept in `futex` entering those `with`s. Their
/// executions match the program's own log; without wait data (`--no-waits`) the source alone
/// does not make them sections.
#[test]
fn sections_found_from_recorded_waits_on_locks_the_source_does_not_name() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let (out, log) = (dir.path().join("run.json"), dir.path().join("log.jsonl"));
    let rec = record(&out, &["--interval-ms", "2"], &[&script("factory_locks.py"), log.to_str().unwrap(), "4", "15"]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let run = read(&out);
    let started_at = run.meta.started_at.expect("started_at");
    let v = json(&threadradar(dir.path(), &["sections", out.to_str().unwrap(), "--json"]));
    let text = std::fs::read_to_string(script("factory_locks.py")).unwrap();
    let line_of = |code: &str| text.lines().position(|l| l.trim() == code).unwrap_or_else(|| panic!("no {code:?} in factory_locks.py")) as u64 + 1;
    let sections = v["sections"].as_array().unwrap();
    let at = |line: u64| sections.iter().find(|s| s["line"].as_u64() == Some(line)).unwrap_or_else(|| panic!("no section at line {line}: {v}")).clone();
    let pool = at(line_of("with self._guard:"));
    let table = at(line_of("with GUARDS[name]:"));
    // The recorder reads the lock through `self._guard` (a `_thread.lock`); `GUARDS[name]` it only
    // names, so that one is a C-level lock of either kind.
    for (s, lock, ty) in [(&pool, "Pool._guard", "Lock"), (&table, "unnamed (GUARDS[name])", "Lock or RLock")] {
        assert_eq!((s["kind"].as_str(), s["lock"].as_str(), s["lock_type"].as_str()), (Some("from_waits"), Some(lock), Some(ty)), "{s}");
        assert!(s["found"].as_str().unwrap().contains("recorded waits"), "{s}");
    }
    // The executions are the logged ones: each hold is ~20 ms (10 intervals), so every logged
    // execution the sampler saw is listed with its duration within one interval + 10 %.
    let logged: Vec<Value> = std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(logged.len(), 120);
    let interval = run.meta.duration_s / (run.samples.len() - 1) as f64;
    for (s, name) in [(&pool, "pool"), (&table, "table")] {
        let execs = s["executions"].as_array().unwrap();
        let mine: Vec<&Value> = logged.iter().filter(|l| l["section"] == name).collect();
        let mut matched = 0;
        for l in &mine {
            let (start, dur) = (f(&l["start"]) - started_at, f(&l["duration"]));
            let best = execs
                .iter()
                .filter(|e| e["thread"] == l["thread"])
                .map(|e| (e, (f(&e["start_s"]) + f(&e["duration_s"])).min(start + dur) - f(&e["start_s"]).max(start)))
                .filter(|(_, o)| *o > 0.0)
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((e, _)) = best {
                let tolerance = interval.max(0.002).max(f(&e["error_s"])) + 0.1 * dur;
                if (f(&e["duration_s"]) - dur).abs() <= tolerance {
                    matched += 1;
                }
            }
        }
        assert!(matched * 10 >= mine.len() * 9, "{name}: {matched} of {} logged executions found within one interval + 10 % (interval {interval:.4} s): {s}", mine.len());
        assert!(execs.len() <= mine.len(), "{name}: {} listed, {} logged", execs.len(), mine.len());
    }
    // The lens's words say how it was found.
    let table_text = threadradar(dir.path(), &["sections", out.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&table_text.stdout).contains("found from the recorded waits"), "{}", String::from_utf8_lossy(&table_text.stdout));

    // Without wait data there is no evidence: neither `with` is a section.
    let bare = dir.path().join("bare.json");
    let rec = record(&bare, &["--interval-ms", "2", "--no-waits"], &[&script("factory_locks.py"), dir.path().join("log2.jsonl").to_str().unwrap(), "2", "3"]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let v = json(&threadradar(dir.path(), &["sections", bare.to_str().unwrap(), "--json"]));
    assert!(v["sections"].as_array().unwrap().iter().all(|s| s["kind"] != "from_waits"), "{v}");
}
