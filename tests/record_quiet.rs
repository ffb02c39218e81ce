//! Quiet threads: a thread the scheduler has not run since it was last read asleep is not read
//! again, and when its stack is unchanged the reader leaves it out and its last sample is repeated
//! (`profiler/src/sampler.rs`, `quiet_threads` and `repeat_elided`). What must hold: a thread
//! that slept long and then moved on is seen where it moved to, at once — never at the line it
//! slept at (`tests/scripts/quiet_stages.py` logs when its workers moved).

mod common;
use common::*;
use threadradar_profiler::run::{Run, ThreadState};

/// The name of the first function named `stage_*` on the stack, from the innermost frame out.
fn stage(run: &Run, stack: Option<u32>) -> Option<&str> {
    let mut node = stack;
    while let Some(n) = node {
        let s = run.stacks[n as usize];
        let f = &run.functions[run.frames[s.frame as usize].function as usize];
        let name = run.strings[f.name as usize].as_str();
        if name.starts_with("stage_") {
            return Some(name);
        }
        node = s.parent;
    }
    None
}

#[test]
fn threads_that_slept_long_are_seen_where_they_moved_to() {
    if let Some(why) = threadradar_profiler::sched::not_permitted() {
        skip("perf events", &why);
        return;
    }
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quiet.json");
    let rec = record(&path, &["--interval-ms", "3"], &[&script("quiet_stages.py"), "80", "1.5"]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let log: serde_json::Value = serde_json::from_slice(rec.stdout.split(|&b| b == b'\n').find(|l| l.starts_with(b"{")).expect("the program's log")).unwrap();
    let run = read(&path);
    let t0 = run.meta.started_at.expect("an exact start time");
    let ready = log["ready"].as_f64().unwrap() - t0;
    let (released, settled, second) = (log["released"].as_f64().unwrap() - t0, log["settled"].as_f64().unwrap() - t0, log["second"].as_f64().unwrap() - t0);
    // The quiet path was taken: most observations of the sleeping workers were not read.
    let observations: u64 = run.samples.iter().map(|s| s.threads.len() as u64).sum();
    let unchanged = run.meta.unchanged_thread_reads;
    eprintln!("{unchanged} of {observations} observations not read; released at {released:.3} s, settled at {settled:.3} s");
    assert!(unchanged * 2 > observations, "only {unchanged} of {observations} observations were taken as unchanged");
    let workers: Vec<usize> = (0..run.threads.len()).filter(|&i| run.threads[i].name.starts_with("quiet-")).collect();
    assert_eq!(workers.len(), 80);
    let (mut before, mut after, mut stale) = (0, 0, Vec::new());
    for s in &run.samples {
        let at = s.t as f64 / 1e9;
        for t in s.threads.iter().filter(|t| workers.contains(&(t.thread as usize))) {
            let name = &run.threads[t.thread as usize].name;
            let seen = stage(&run, t.stack);
            if at > ready + 0.01 && at < released - 0.01 {
                before += 1;
                if seen != Some("stage_one") || t.state != ThreadState::Idle {
                    stale.push(format!("{name} at {at:.3} s, before the release (ready at {ready:.3} s): {seen:?}, {t:?}"));
                }
            } else if at > settled + 0.01 && at < second - 0.01 {
                after += 1;
                if seen != Some("stage_two") || t.state != ThreadState::Idle {
                    stale.push(format!("{name} at {at:.3} s: {seen:?}, {:?}", t.state));
                }
            }
        }
    }
    eprintln!("{before} worker samples before the release, {after} after every worker moved");
    assert!(before > 80 * 100 && after > 80 * 100, "{before} samples before, {after} after");
    assert!(stale.is_empty(), "{} samples after the move show the old line or state: {:?}", stale.len(), &stale[..stale.len().min(10)]);
}

/// Many threads that begin to wait together (`tests/scripts/many_waiters.py`): their samples
/// stand unread while their wait objects and types are read a few threads per walk, and the
/// objects, once read, go to the samples before too. What must hold: every waiter's every sample
/// in the wait carries the gate the program reports (`id(gate)`), and every waiter is typed by its
/// class.
#[test]
fn many_threads_that_wait_together_all_get_their_wait_object_and_type() {
    if let Some(why) = threadradar_profiler::sched::not_permitted() {
        skip("perf events", &why);
        return;
    }
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("waiters.json");
    let rec = record(&path, &["--interval-ms", "3"], &[&script("many_waiters.py"), "400", "2"]);
    assert!(rec.status.success(), "{}", stderr(&rec));
    let log: serde_json::Value = serde_json::from_slice(rec.stdout.split(|&b| b == b'\n').find(|l| l.starts_with(b"{")).expect("the program's log")).unwrap();
    let run = read(&path);
    let t0 = run.meta.started_at.expect("an exact start time");
    let gate = log["gate"].as_u64().unwrap();
    let (ready, released) = (log["ready"].as_f64().unwrap() - t0, log["released"].as_f64().unwrap() - t0);
    let waiters: Vec<usize> = (0..run.threads.len()).filter(|&i| run.threads[i].name.starts_with("waiter-")).collect();
    assert_eq!(waiters.len(), 400);
    let untyped: Vec<&str> = waiters.iter().map(|&i| &run.threads[i]).filter(|t| t.thread_type != "Waiter").map(|t| t.name.as_str()).collect();
    assert!(untyped.is_empty(), "{} waiters not typed Waiter: {:?}", untyped.len(), &untyped[..untyped.len().min(10)]);
    let unchanged = run.meta.unchanged_thread_reads;
    let (mut samples, mut wrong) = (0, Vec::new());
    for s in &run.samples {
        let at = s.t as f64 / 1e9;
        if at <= ready + 0.01 || at >= released - 0.01 {
            continue;
        }
        for t in s.threads.iter().filter(|t| waiters.contains(&(t.thread as usize))) {
            samples += 1;
            let object = t.wait.and_then(|w| run.waits[w as usize].object.as_ref()).map(|o| (o.addr, run.strings[o.type_name as usize].as_str()));
            if object.map(|o| o.0) != Some(gate) {
                wrong.push(format!("{} at {at:.3} s: {object:?}", run.threads[t.thread as usize].name));
            }
        }
    }
    eprintln!("{samples} waiter samples in the wait, {unchanged} observations not read");
    assert!(samples > 400 * 300, "{samples} waiter samples in the wait");
    assert!(wrong.is_empty(), "{} of {samples} waiter samples do not carry the gate ({gate:#x}): {:?}", wrong.len(), &wrong[..wrong.len().min(10)]);
}
