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
