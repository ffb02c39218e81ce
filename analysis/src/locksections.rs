//! Exact critical sections from the lock events of `record --exact-locks` (docs/sections.md,
//! "Exact lock events"): every execution of every lock's sections, from the interpreter's own
//! acquire and release calls, with no sampling error. The rules, stated once here:
//!
//! - **Attempt.** A thread's attempt to take a lock begins at its first call of an acquire function
//!   on it; calls that follow a failed return within [`RETRY_NS`] (CPython tries without blocking,
//!   then blocks; a signal interrupts and it retries) continue the same attempt. A failed return
//!   with no call after it ends the attempt (a try or a timeout): no execution.
//! - **Execution.** From the acquire's successful return to the next release of that lock (by any
//!   thread: a `threading.Lock` may be released by another). A successful return while the thread
//!   already holds the lock (a nested acquire function of the same lock) is not a new execution.
//! - **Wait to enter.** Acquired − first call of the attempt.
//! - **Waited for.** The thread whose release of the lock came last before the acquisition and
//!   after the attempt began: the hand-off. None when the lock was free at the call.
//! - **Where.** The innermost frame in the program's own code of the thread's first sample inside
//!   the execution (sampling gives the stack, the events the times); for the lock, the place most
//!   of its executions show.

use serde::Serialize;
use std::collections::HashMap;
use threadradar_profiler::lockevents::kind;
use threadradar_profiler::run::{FileKind, Run, StackId, ThreadId};

/// Calls within this long after a failed return continue the same attempt.
pub const RETRY_NS: u64 = 1_000_000;

/// One execution of a section, exact.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExactExecution {
    /// The kernel's thread id.
    pub tid: u32,
    /// The thread's name in the run (its tid when the sampler never saw it).
    pub thread: String,
    /// Index into the run's threads, when the sampler saw the thread.
    pub thread_id: Option<ThreadId>,
    /// When the thread called the acquire function, seconds since the run's start.
    pub called_s: f64,
    /// When it got the lock (the execution's start).
    pub start_s: f64,
    /// Held until the release.
    pub duration_s: f64,
    /// `start_s − called_s`: the wait to enter.
    pub wait_s: f64,
    /// The thread that handed the lock over (released it last while this one waited).
    pub waited_for: Option<String>,
    /// The place (`file:line function`) of the thread's first sample inside, if one fell inside.
    pub place: Option<String>,
}

/// One lock and its executions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExactLock {
    /// The lock's address in the target (the lock functions' first argument), as hex.
    pub lock: String,
    /// The lock object the samples read at this address from a waiting frame (see [`objects`]):
    /// its type and the program's name for it (`_thread.lock guard`).
    pub object: Option<String>,
    /// The place most of its executions show, and in how many.
    pub place: Option<String>,
    pub place_count: usize,
    pub executions: Vec<ExactExecution>,
    pub total_hold_s: f64,
    pub median_s: f64,
    pub p99_s: f64,
    pub max_s: f64,
    /// Sum of the waits to enter.
    pub waited_s: f64,
    /// Acquisitions that waited for another thread's release.
    pub handoffs: usize,
}

/// Every lock with sections in the run, busiest first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExactSectionsView {
    /// The probed functions (from the run).
    pub probes: Vec<String>,
    pub events: u64,
    pub lost_events: u64,
    /// Why the probes stopped early, if they did.
    pub stopped: Option<String>,
    /// Acquisitions never released before the run ended, and attempts that failed.
    pub unreleased: usize,
    pub failed_attempts: usize,
    pub locks: Vec<ExactLock>,
}

/// An execution as found, before names and places.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawExecution {
    pub lock: u64,
    pub tid: u32,
    pub called: u64,
    pub acquired: u64,
    pub released: u64,
    pub waited_for: Option<u32>,
}

#[derive(Clone, Copy, Debug)]
struct Attempt {
    called: u64,
    failed_at: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct Held {
    tid: u32,
    called: u64,
    acquired: u64,
    waited_for: Option<u32>,
}

/// The executions of the run's lock events (in time order), the acquisitions still held at the
/// end, and the failed attempts. Pure: the rules in the module's documentation.
pub fn executions(run: &Run) -> (Vec<RawExecution>, usize, usize) {
    let mut attempts: HashMap<(u32, u64), Attempt> = HashMap::new();
    let mut held: HashMap<u64, Held> = HashMap::new();
    let mut last_release: HashMap<u64, (u32, u64)> = HashMap::new();
    let mut out = Vec::new();
    let mut failed = 0;
    for e in &run.lock_events {
        let key = (e.tid, e.lock);
        match e.kind {
            kind::CALL => {
                let a = attempts.entry(key).or_insert(Attempt { called: e.t, failed_at: None });
                if let Some(f) = a.failed_at {
                    if e.t.saturating_sub(f) > RETRY_NS {
                        failed += 1;
                        a.called = e.t;
                    }
                    a.failed_at = None;
                }
            }
            kind::FAILED => {
                if let Some(a) = attempts.get_mut(&key) {
                    a.failed_at = Some(e.t);
                }
            }
            kind::ACQUIRED => {
                let called = attempts.remove(&key).map_or(e.t, |a| a.called);
                if held.get(&e.lock).is_some_and(|h| h.tid == e.tid) {
                    continue;
                }
                let waited_for = last_release.get(&e.lock).filter(|(tid, t)| *t >= called && *tid != e.tid).map(|r| r.0);
                held.insert(e.lock, Held { tid: e.tid, called, acquired: e.t, waited_for });
            }
            kind::RELEASED => {
                if let Some(h) = held.remove(&e.lock) {
                    out.push(RawExecution { lock: e.lock, tid: h.tid, called: h.called, acquired: h.acquired, released: e.t, waited_for: h.waited_for });
                }
                last_release.insert(e.lock, (e.tid, e.t));
            }
            _ => {}
        }
    }
    failed += attempts.values().filter(|a| a.failed_at.is_some()).count();
    (out, held.len(), failed)
}

/// `file:line function` of the innermost frame of the program's own code on `stack`.
fn place_of(run: &Run, stack: StackId) -> Option<String> {
    let mut node = Some(stack);
    while let Some(id) = node {
        let n = &run.stacks[id as usize];
        let frame = &run.frames[n.frame as usize];
        let func = &run.functions[frame.function as usize];
        let file = &run.files[func.file as usize];
        if file.kind == FileKind::User {
            return Some(format!("{}:{} {}", run.str(file.path), frame.line, run.str(func.qualname)));
        }
        node = n.parent;
    }
    None
}

/// The lock objects of the run's waits by the address a lock event gives them: the object's own
/// address where the lock methods were probed (the event's lock is `self`), and, where 3.13's
/// `_PyMutex_LockTimed` was probed by name, a `_thread.lock`'s address + 16 too (its `PyMutex`
/// follows the object's header). Each named `type name` (`type` alone when unnamed).
pub fn objects(run: &Run) -> HashMap<u64, String> {
    let mutex_field = run.locks.as_ref().is_some_and(|l| l.probes.iter().any(|p| p.starts_with("_PyMutex_LockTimed@")));
    let mut out = HashMap::new();
    for o in run.waits.iter().filter_map(|w| w.object.as_ref()) {
        let ty = run.str(o.type_name);
        if !matches!(ty, "_thread.lock" | "_thread.RLock" | "lock" | "RLock" | "threading.Lock" | "threading.RLock") {
            continue;
        }
        let label = o.name.map_or_else(|| ty.to_string(), |n| format!("{ty} {}", run.str(n)));
        out.entry(o.addr).or_insert_with(|| label.clone());
        if mutex_field && matches!(ty, "_thread.lock" | "lock" | "threading.Lock") {
            out.entry(o.addr + 16).or_insert(label);
        }
    }
    out
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The exact sections of a run with lock events; `None` when it was recorded without them.
pub fn analyse(run: &Run) -> Option<ExactSectionsView> {
    let info = run.locks.as_ref()?;
    let (raw, unreleased, failed_attempts) = executions(run);
    // Lock events name kernel tids: the threads', never a task's that shares its loop's tid.
    let by_tid: HashMap<u32, ThreadId> =
        run.threads.iter().enumerate().filter(|(_, t)| !crate::units::is_task(t)).map(|(i, t)| (t.tid, i as ThreadId)).collect();
    let name = |tid: u32| by_tid.get(&tid).map_or_else(|| tid.to_string(), |&i| run.threads[i as usize].name.clone());
    // Each thread's samples (time, stack), in time order, to find the first inside an execution.
    let mut samples: HashMap<ThreadId, Vec<(u64, Option<StackId>)>> = HashMap::new();
    for s in &run.samples {
        for ts in &s.threads {
            samples.entry(ts.thread).or_default().push((s.t, ts.stack));
        }
    }
    let s = |ns: u64| ns as f64 / 1e9;
    let mut locks: HashMap<u64, Vec<ExactExecution>> = HashMap::new();
    for r in &raw {
        let thread_id = by_tid.get(&r.tid).copied();
        let place = thread_id.and_then(|i| {
            let list = samples.get(&i)?;
            let k = list.partition_point(|x| x.0 < r.acquired);
            list.get(k).filter(|x| x.0 <= r.released).and_then(|x| x.1).and_then(|st| place_of(run, st))
        });
        locks.entry(r.lock).or_default().push(ExactExecution {
            tid: r.tid,
            thread: name(r.tid),
            thread_id,
            called_s: s(r.called),
            start_s: s(r.acquired),
            duration_s: s(r.released - r.acquired),
            wait_s: s(r.acquired - r.called),
            waited_for: r.waited_for.map(name),
            place,
        });
    }
    let named = objects(run);
    let mut out: Vec<ExactLock> = locks
        .into_iter()
        .map(|(lock, executions)| {
            let mut places: HashMap<&str, usize> = HashMap::new();
            for e in &executions {
                if let Some(p) = &e.place {
                    *places.entry(p).or_default() += 1;
                }
            }
            let (place, place_count) = places.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0))).map_or((None, 0), |(p, n)| (Some(p.to_string()), n));
            let mut d: Vec<f64> = executions.iter().map(|e| e.duration_s).collect();
            d.sort_by(f64::total_cmp);
            ExactLock {
                lock: format!("{lock:#x}"),
                object: named.get(&lock).cloned(),
                place,
                place_count,
                total_hold_s: d.iter().sum(),
                median_s: quantile(&d, 0.5),
                p99_s: quantile(&d, 0.99),
                max_s: d.last().copied().unwrap_or(0.0),
                waited_s: executions.iter().map(|e| e.wait_s).sum(),
                handoffs: executions.iter().filter(|e| e.waited_for.is_some()).count(),
                executions,
            }
        })
        .collect();
    out.sort_by(|a, b| b.executions.len().cmp(&a.executions.len()).then(a.lock.cmp(&b.lock)));
    Some(ExactSectionsView {
        probes: info.probes.clone(),
        events: info.events,
        lost_events: info.lost_events,
        stopped: info.stopped.clone(),
        unreleased,
        failed_attempts,
        locks: out,
    })
}

/// Lock hand-offs between two threads (evidence `lock-event`): the releasing thread, the waiter
/// it let in, on which lock, how often and how long the waiter had waited in all.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Handoff {
    pub lock: String,
    pub place: Option<String>,
    pub from: String,
    pub to: String,
    pub count: usize,
    pub waited_s: f64,
}

/// Every (lock, releaser, waiter) of the exact executions, most frequent first.
pub fn handoffs(view: &ExactSectionsView) -> Vec<Handoff> {
    let mut out: Vec<Handoff> = Vec::new();
    for l in &view.locks {
        let mut pairs: HashMap<(&str, &str), (usize, f64)> = HashMap::new();
        for e in &l.executions {
            if let Some(from) = &e.waited_for {
                let p = pairs.entry((from.as_str(), e.thread.as_str())).or_default();
                p.0 += 1;
                p.1 += e.wait_s;
            }
        }
        out.extend(pairs.into_iter().map(|((from, to), (count, waited_s))| Handoff {
            lock: l.lock.clone(),
            place: l.place.clone(),
            from: from.to_string(),
            to: to.to_string(),
            count,
            waited_s,
        }));
    }
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| (&a.lock, &a.from, &a.to).cmp(&(&b.lock, &b.from, &b.to))));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use threadradar_profiler::run::{LockEvent, LockInfo, Meta};

    fn run_of(events: &[(u64, u32, u8, u64)]) -> Run {
        let mut run = Run::new(Meta::default());
        run.locks = Some(LockInfo::default());
        run.lock_events = events.iter().map(|&e| LockEvent::from(e)).collect();
        run
    }

    /// A lock event's address names the lock object the samples read from a waiting frame: the
    /// object itself (method probes), or a `_thread.lock`'s `PyMutex` 16 bytes in (3.13 by name).
    #[test]
    fn the_lock_is_named_by_the_object_at_its_address() {
        use threadradar_profiler::run::{WaitObject, WaitTarget};
        let (c, a, r) = (kind::CALL, kind::ACQUIRED, kind::RELEASED);
        let events = [(10, 1, c, 0x1000), (11, 1, a, 0x1000), (12, 1, r, 0x1000), (20, 1, c, 0x2010), (21, 1, a, 0x2010), (22, 1, r, 0x2010), (30, 1, c, 0x3000), (31, 1, a, 0x3000), (32, 1, r, 0x3000)];
        let named = |probe: &str| {
            let mut run = run_of(&events);
            run.locks.as_mut().unwrap().probes = vec![format!("{probe}@/usr/bin/python3+0x1234")];
            run.strings = vec!["_thread.lock".into(), "guard".into(), "_thread.RLock".into(), "queue.Queue".into()];
            let obj = |addr, type_name, name| Some(WaitObject { addr, type_name, name, ..Default::default() });
            run.waits = vec![WaitTarget { object: obj(0x1000, 0, Some(1)), ..Default::default() }, WaitTarget { object: obj(0x2000, 2, None), ..Default::default() }, WaitTarget { object: obj(0x3000, 3, None), ..Default::default() }];
            let view = analyse(&run).unwrap();
            let mut out: Vec<(String, Option<String>)> = view.locks.iter().map(|l| (l.lock.clone(), l.object.clone())).collect();
            out.sort();
            out
        };
        let s = |x: &str| x.to_string();
        assert_eq!(named("_thread.lock.acquire/acquire_lock/__enter__"), vec![(s("0x1000"), Some(s("_thread.lock guard"))), (s("0x2010"), None), (s("0x3000"), None)], "not a lock type: no name");
        // By name on 3.13, 0x1010 would be guard's mutex; an RLock's lock is elsewhere.
        let mut run = run_of(&[(10, 1, c, 0x1010), (11, 1, a, 0x1010), (12, 1, r, 0x1010)]);
        run.locks.as_mut().unwrap().probes = vec!["_PyMutex_LockTimed@/x+0x1".into()];
        run.strings = vec!["_thread.lock".into(), "guard".into()];
        run.waits = vec![WaitTarget { object: Some(WaitObject { addr: 0x1000, type_name: 0, name: Some(1), ..Default::default() }), ..Default::default() }];
        assert_eq!(analyse(&run).unwrap().locks[0].object.as_deref(), Some("_thread.lock guard"));
        run.locks.as_mut().unwrap().probes = vec!["PyThread_acquire_lock_timed@/x+0x1".into()];
        assert_eq!(analyse(&run).unwrap().locks[0].object, None, "3.11's lock is a semaphore of its own");
    }

    #[test]
    fn a_try_then_a_blocking_call_is_one_wait_and_the_release_hands_over() {
        let (c, a, f, r) = (kind::CALL, kind::ACQUIRED, kind::FAILED, kind::RELEASED);
        let run = run_of(&[
            (10, 1, c, 0xa),
            (11, 1, a, 0xa),
            // Thread 2 tries (fails), blocks, and gets it when 1 releases at 50.
            (20, 2, c, 0xa),
            (21, 2, f, 0xa),
            (22, 2, c, 0xa),
            (50, 1, r, 0xa),
            (52, 2, a, 0xa),
            // A nested acquire function of the same lock by its holder: no new execution.
            (53, 2, c, 0xa),
            (54, 2, a, 0xa),
            (90, 2, r, 0xa),
            // A try that fails and is not retried.
            (100, 3, c, 0xa),
            (101, 3, f, 0xa),
        ]);
        let (ex, unreleased, failed) = executions(&run);
        assert_eq!(
            ex,
            vec![
                RawExecution { lock: 0xa, tid: 1, called: 10, acquired: 11, released: 50, waited_for: None },
                RawExecution { lock: 0xa, tid: 2, called: 20, acquired: 52, released: 90, waited_for: Some(1) },
            ]
        );
        assert_eq!((unreleased, failed), (0, 1));
        let view = analyse(&run).unwrap();
        assert_eq!(view.locks[0].handoffs, 1);
        assert_eq!(view.locks[0].executions[1].waited_for.as_deref(), Some("1"));
        let h = handoffs(&view);
        assert_eq!((h.len(), h[0].from.as_str(), h[0].to.as_str(), h[0].count), (1, "1", "2", 1));
    }
}
