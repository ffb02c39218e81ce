//! Names and objects on real recordings (issue #32), checked against what the program says about
//! itself (tests/scripts/names_and_objects.py):
//!
//! - a `concurrent.futures.ThreadPoolExecutor`'s work queue (a C `queue.SimpleQueue`) is one
//!   object, named and typed, and no wait borrows a name from a line that does not wait on it
//!   (`os.environ.get(…)`);
//! - threads started with `_thread.start_new_thread` (as execnet starts its own) are named by
//!   their root function and tid and typed by that function, not `python` × 3;
//! - `info --json` counts a thread blocked in `os.read` on a pipe for the whole run as blocking
//!   I/O (still computing for the metrics), with next to no CPU.

mod common;

use common::*;
use serde_json::Value;

fn json(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "threadradar failed: {}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// The last line the program printed, as JSON.
fn printed(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}", stderr(out));
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.lines().last().expect("the program's report")).expect("the program's JSON report")
}

#[test]
fn an_executors_work_queue_is_one_named_typed_object() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("pool.json");
    let rec = record(&run, &["--interval-ms", "2"], &[&script("names_and_objects.py"), "pool", "3"]);
    let report = printed(&rec);
    let workers: Vec<&str> = report["workers"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    assert_eq!(workers.len(), 8, "{report}");
    let view = json(&threadradar(dir.path(), &["waits", run.to_str().unwrap(), "--json"]));
    let worker_ids: Vec<&Value> = view["threads"].as_array().unwrap().iter().filter(|t| workers.contains(&t["name"].as_str().unwrap())).map(|t| &t["id"]).collect();
    assert_eq!(worker_ids.len(), 8, "every worker recorded: {}", view["threads"]);
    let objects = view["objects"].as_array().unwrap();
    // What the workers waited on, by object, in samples (the GIL aside).
    let mut on: std::collections::BTreeMap<usize, u64> = Default::default();
    for iv in view["intervals"].as_array().unwrap().iter().filter(|iv| worker_ids.contains(&&iv["thread"])) {
        let o = iv["object"].as_u64().unwrap() as usize;
        if objects[o]["type"] != "GIL" {
            *on.entry(o).or_default() += iv["samples"].as_u64().unwrap();
        }
    }
    let total: u64 = on.values().sum();
    let describe = |o: usize| format!("{} ({} samples)", objects[o]["object"], on[&o]);
    let all: Vec<String> = on.keys().map(|&o| describe(o)).collect();
    let queues: Vec<usize> = on.keys().copied().filter(|&o| objects[o]["type"] == "queue.SimpleQueue").collect();
    assert_eq!(queues.len(), 1, "the work queue is one object: {all:?}");
    let q = &objects[queues[0]];
    assert_eq!(q["name"], "work_queue", "{q}");
    assert!(q["addr"].as_u64().is_some_and(|a| a != 0), "read from the target: {q}");
    // Nothing else the workers wait on is the queue under another name: no anonymous futex
    // (`lock at 0x…`), no object named but not read (`unknown …`), no `os.environ`.
    for (&o, _) in &on {
        let ty = objects[o]["type"].as_str().unwrap();
        assert!(ty != "lock" && ty != "unknown", "a second face of the queue: {all:?}");
        assert_ne!(objects[o]["name"], "os.environ", "{all:?}");
    }
    assert!(on[&queues[0]] * 10 >= total * 9, "the workers' waits are on the queue: {all:?}");
    eprintln!("{} jobs; the workers' {total} wait samples: {all:?}", report["jobs"]);
}

#[test]
fn threads_not_started_by_threading_are_named_by_their_root_function() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("raw.json");
    let rec = record(&run, &["--interval-ms", "5"], &[&script("names_and_objects.py"), "raw", "2"]);
    let report = printed(&rec);
    let logged = report["threads"].as_array().unwrap();
    assert_eq!(logged.len(), 3, "{report}");
    let info = json(&threadradar(dir.path(), &["info", run.to_str().unwrap(), "--json"]));
    let threads = info["threads"].as_array().unwrap();
    let mut names = Vec::new();
    for l in logged {
        let tid = l["tid"].as_u64().unwrap();
        let t = threads.iter().find(|t| t["tid"] == tid).unwrap_or_else(|| panic!("thread {tid} ({}) not recorded: {threads:?}", l["runs"]));
        assert_eq!(t["name"], format!("_perform_spawn-{tid}"), "named by its root function and tid: {t}");
        assert_eq!((t["type"].as_str(), t["type_source"].as_str()), (Some("WorkerPool._perform_spawn"), Some("root_function")), "{t}");
        names.push(t["name"].as_str().unwrap().to_string());
        if l["runs"] == "reader" {
            // The program's truth: its one read blocked from its start until the pipe closed.
            let read_s = l["read_s"].as_f64().unwrap();
            assert!(read_s >= 1.9 && l["read_bytes"] == 0, "{l}");
            let s = &t["samples"];
            let (computing, io) = (s["computing"].as_u64().unwrap(), s["blocking_io"].as_u64().unwrap());
            let all = computing + s["gil"].as_u64().unwrap() + s["idle"].as_u64().unwrap();
            assert!(all >= 200, "sampled through its read: {s}");
            assert!(io <= computing, "blocking I/O is part of computing: {s}");
            assert!(io * 10 >= all * 9, "blocked in read nearly every sample: {s}");
            let cpu_s = (t["cpu_ns_last"].as_u64().unwrap() - t["cpu_ns_first"].as_u64().unwrap()) as f64 / 1e9;
            assert!(cpu_s < 0.05 * read_s, "a thread blocked in read uses next to no CPU: {cpu_s} s over {read_s} s");
            eprintln!("reader: {s}, {:.4} s CPU over a {read_s:.2} s read", cpu_s);
        }
    }
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 3, "alike threads told apart: {names:?}");
    // The table says it too.
    let text = threadradar(dir.path(), &["info", run.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("blocking I/O"), "{text}");
}
