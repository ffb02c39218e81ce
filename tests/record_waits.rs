//! `threadradar record` reading what blocked threads wait on, and the scheduler's switches and
//! wake-ups, on real Python programs checked against what the programs log about themselves.

mod common;

use common::*;
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use threadradar_profiler::run::{EndReason, Run, WaitTarget};

/// The facts `tests/scripts/waits.py` logged, one JSON object each.
fn facts(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn fact<'a>(facts: &'a [serde_json::Value], kind: &str, name: &str) -> &'a serde_json::Value {
    facts.iter().find(|f| f["fact"] == kind && (name.is_empty() || f["name"] == name)).unwrap_or_else(|| panic!("no {kind} {name} in the log"))
}

/// The wait targets of a thread's samples, by thread name, with how often each was seen.
fn waits_of<'a>(run: &'a Run, thread: &str) -> Vec<(&'a WaitTarget, usize)> {
    let mut n: HashMap<u32, usize> = HashMap::new();
    for ts in run.samples.iter().flat_map(|s| &s.threads) {
        if run.threads[ts.thread as usize].name == thread {
            if let Some(w) = ts.wait {
                *n.entry(w).or_default() += 1;
            }
        }
    }
    let mut v: Vec<_> = n.into_iter().map(|(w, c)| (&run.waits[w as usize], c)).collect();
    v.sort_by_key(|&(_, c)| std::cmp::Reverse(c));
    v
}

/// The (type, name) of the object a thread waited on most often.
fn object_of(run: &Run, thread: &str) -> Option<(String, Option<String>)> {
    waits_of(run, thread).iter().find_map(|(w, _)| {
        let o = w.object.as_ref()?;
        Some((run.str(o.type_name).to_string(), o.name.map(|n| run.str(n).to_string())))
    })
}

fn tid_of(facts: &[serde_json::Value], name: &str) -> u32 {
    fact(facts, "thread", name)["tid"].as_u64().unwrap() as u32
}

#[test]
fn waits_name_the_objects_and_descriptors_threads_block_on() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let log = dir.path().join("facts.jsonl");
    let o = record(&out, &["--no-sched"], &[&script("waits.py"), log.to_str().unwrap(), "1.5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("scheduler events"), "--no-sched says nothing: {}", stderr(&o));
    let run = read(&out);
    let facts = facts(&log);
    // --no-sched: no scheduler tables at all.
    assert!(run.sched.is_none() && run.switches.is_empty() && run.wakeups.is_empty());
    // The process ended while `stuck` still waited: a clean end with its waits kept.
    assert_eq!(run.meta.end_reason, EndReason::Exited);
    assert_eq!(run.meta.exit_status.and_then(|s| s.code), Some(0));

    let expect = [
        ("q_waiter", "queue.Queue", Some("q")),
        ("cond_waiter", "threading.Condition", Some("cond")),
        ("buf_waiter", "threading.Condition", Some("self.not_empty")),
        ("lock_waiter", "_thread.lock", Some("lock")),
        ("ev_waiter", "threading.Event", Some("ev")),
        ("stuck", "threading.Event", Some("never")),
    ];
    for (thread, ty, name) in expect {
        let got = object_of(&run, thread).unwrap_or_else(|| panic!("{thread}: no object among {:?}", waits_of(&run, thread)));
        assert_eq!((got.0.as_str(), got.1.as_deref()), (ty, name), "{thread}");
    }
    // The objects are told apart by address, and the waits on a futex carry its address.
    let addr = |thread: &str| waits_of(&run, thread).iter().find_map(|(w, _)| w.object.as_ref().map(|o| o.addr)).unwrap();
    assert_ne!(addr("cond_waiter"), addr("buf_waiter"));
    assert_ne!(addr("ev_waiter"), addr("stuck"));
    for thread in ["q_waiter", "cond_waiter", "lock_waiter", "ev_waiter"] {
        let (w, _) = waits_of(&run, thread)[0];
        assert_eq!(run.str(w.syscall), "futex", "{thread}");
        assert!(w.futex.is_some_and(|a| a != 0), "{thread}: {w:?}");
    }
    // The name's frame is the caller's line in the program.
    let (w, _) = waits_of(&run, "q_waiter").into_iter().find(|(w, _)| w.object.is_some()).unwrap();
    let frame = run.frames[w.object.as_ref().unwrap().frame.unwrap() as usize];
    let src = std::fs::read_to_string(script("waits.py")).unwrap();
    let line = src.lines().position(|l| l.trim() == "item = q.get()").unwrap() as u32 + 1;
    assert_eq!((run.qualname(frame.function), frame.line), ("q_waiter", line));

    // The pipe read: the descriptor and the pipe the program itself reports.
    let pipe = fact(&facts, "pipe", "");
    let (w, _) = waits_of(&run, "pipe_reader")[0];
    assert_eq!(run.str(w.syscall), "read");
    assert_eq!(w.fd, Some(pipe["fd"].as_i64().unwrap() as i32));
    assert_eq!(w.fd_target.map(|t| run.str(t).to_string()), Some(format!("pipe:[{}]", pipe["inode"])));

    // Only samples blocked in a call carry a wait; the file has them in one table, no duplicates.
    for w in &run.waits {
        assert_eq!(run.waits.iter().filter(|x| *x == w).count(), 1);
    }
}

#[test]
fn without_wait_reading_the_run_has_no_waits() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let log = dir.path().join("facts.jsonl");
    let o = record(&out, &["--no-sched", "--no-waits"], &[&script("waits.py"), log.to_str().unwrap(), "0.5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out);
    assert!(run.waits.is_empty());
    assert!(run.samples.iter().flat_map(|s| &s.threads).all(|t| t.wait.is_none()));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains("\"waits\""));
}

/// The scheduler tests' start: the serial lock and a temporary directory where this machine lets
/// the recorder open the scheduler tracepoints (root or perf_event_paranoid <= -1); `None`, saying
/// why, where it does not.
fn sched_test() -> Option<(std::sync::MutexGuard<'static, ()>, tempfile::TempDir)> {
    if let Some(why) = threadradar_profiler::sched::not_permitted() {
        skip("perf events", &why);
        return None;
    }
    Some((serial(), tempfile::tempdir().unwrap()))
}

#[test]
fn sched_records_switches_and_the_wake_up_of_a_known_hand_off() {
    let Some((_g, dir)) = sched_test() else { return };
    let out = dir.path().join("run.json");
    let log = dir.path().join("facts.jsonl");
    let o = record(&out, &["--sched"], &[&script("waits.py"), log.to_str().unwrap(), "1.0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("scheduler events are not recorded"), "{}", stderr(&o));
    let run = read(&out);
    let facts = facts(&log);
    let sched = run.sched.as_ref().expect("sched info");
    assert_eq!(sched.source, "perf_event_open");
    let targets: std::collections::HashSet<u32> = run.threads.iter().map(|t| t.tid).collect();
    assert!(run.switches.len() > 20, "{} switches", run.switches.len());
    assert!(run.wakeups.len() > 5, "{} wake-ups", run.wakeups.len());
    // Kept only where a target thread is involved, in time order, within the run.
    let end_ns = (run.meta.duration_s * 1e9) as u64 + 1_000_000_000;
    assert!(run.switches.iter().all(|s| targets.contains(&s.prev_tid) || targets.contains(&s.next_tid)));
    assert!(run.wakeups.iter().all(|w| targets.contains(&w.wakee_tid)));
    assert!(run.switches.windows(2).all(|p| p[0].t <= p[1].t) && run.wakeups.windows(2).all(|p| p[0].t <= p[1].t));
    assert!(run.switches.iter().all(|s| s.t < end_ns));
    // Every waiter that started after the run's t = 0 went to sleep (S) at least once (events
    // before t = 0 are not kept: a waiter of a slow start-up may have blocked before it).
    let started_at = run.meta.started_at.unwrap();
    for name in ["q_waiter", "cond_waiter", "ev_waiter", "pipe_reader"] {
        if fact(&facts, "thread", name)["time"].as_f64().unwrap() < started_at + 0.01 {
            eprintln!("{name} blocked before the run's t = 0: its sleep is not in the run");
            continue;
        }
        let tid = tid_of(&facts, name);
        assert!(run.switches.iter().any(|s| s.prev_tid == tid && s.prev_state == b'S'), "{name} never slept");
    }
    // The hand-off the program logged: the main thread's q.put woke q_waiter, within 50 ms of
    // the logged time (the log line is written just before the put).
    let main = tid_of(&facts, "MainThread");
    let waiter = tid_of(&facts, "q_waiter");
    let put_t = ((fact(&facts, "put", "q_waiter")["time"].as_f64().unwrap() - started_at) * 1e9) as i64;
    let hand_off = run.wakeups.iter().find(|w| w.waker_tid == main && w.wakee_tid == waiter && (w.t as i64 - put_t).abs() < 50_000_000);
    assert!(
        hand_off.is_some(),
        "no wake-up main {main} → q_waiter {waiter} near {put_t} ns; wake-ups of q_waiter: {:?}",
        run.wakeups.iter().filter(|w| w.wakee_tid == waiter).collect::<Vec<_>>()
    );
}

#[test]
fn a_recorder_killed_with_sigkill_keeps_the_scheduler_events_it_flushed() {
    let Some((_g, dir)) = sched_test() else { return };
    let out = dir.path().join("run.json");
    // handoffs.py wakes one of its own threads every 40 ms for as long as it runs (100 rounds of
    // five hand-offs: about 20 s), so wake-ups of the program's threads reach the flushed chunks
    // whenever the recorder is killed.
    let mut rec = Command::new(bin())
        .args(["record", "--no-progress", "--sched", "-o", out.to_str().unwrap(), "--", &python(), &script("handoffs.py"), "100"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let live = threadradar_profiler::runfile::live_path(&out);
    // Kill once the flushed chunks hold a wake-up of one of the program's threads.
    let flushed = |run: &Run| run.wakeups.iter().any(|w| run.threads.iter().any(|t| t.tid == w.wakee_tid));
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(15) && !threadradar_profiler::runfile::read(&live).is_ok_and(|r| flushed(&r)) {
        std::thread::sleep(Duration::from_millis(200));
    }
    rec.kill().unwrap();
    rec.wait().unwrap();
    let run = read(&live);
    // The program (its own process group) lives on: end it.
    for &pid in &run.meta.pids {
        // SAFETY: kill takes no pointers; the pids are the test program's, which still runs.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    assert!(run.meta.partial);
    assert!(run.sched.is_some());
    assert!(!run.switches.is_empty(), "the switches flushed before the kill are kept");
    assert!(flushed(&run), "a flushed wake-up of one of the program's threads is kept");
    assert!(run.samples.iter().flat_map(|s| &s.threads).any(|t| t.wait.is_some()));
}
