//! Exact lock hand-offs as edges of the waits view (evidence `lock-event`), for runs recorded
//! with `record --exact-locks` (docs/waits.md, "Exact lock hand-offs"). A hand-off: thread B
//! called an acquire function of a lock, thread A released it after that call, and B's acquire
//! returned with it — A is the waker, at the moment of its release. The rules, stated once here:
//!
//! - **Which wait.** A hand-off becomes an edge of the waits view when the wakee has a wait
//!   interval (not on the GIL) that overlaps its exact wait `[called, acquired]`; of several, the
//!   one that overlaps most. A hand-off whose wait no sample saw (shorter than a period) has no
//!   interval to end: it is counted in a note, and `threadradar waits` lists it in its table.
//! - **Wake or lock hand-off.** A lock the wakee itself held before the release (it took it, then
//!   blocked taking it again until another thread released it: a `Condition`'s waiter lock, a
//!   `Lock` used as a signal) ends a wait for a wake-up: `kind: wake`. A lock passed from one
//!   holder to the next ends a wait for that lock: `wake` when the wait was on a lock, and
//!   `lock-handoff` when it was on something built on one (a `Condition`'s own lock taken at
//!   `with cond:` or back inside `wait()`), as the kernel's edges are told apart.
//! - **Never twice.** An exact edge replaces what describes the same wake-up: a kernel edge of
//!   the same interval from the same waker within [`SAME_WAKEUP_NS`] of the release (its `futile`
//!   flag is kept), and, when the exact edge is a wake-up, the inferred edges of the interval
//!   (placed at its end, they guessed at the same release).

use crate::locksections::RETRY_NS;
use crate::waits::{Evidence, Location, WaitInterval, WakeEdge, WakeKind};
use serde::Serialize;
use std::collections::HashMap;
use threadradar_profiler::lockevents::kind;
use threadradar_profiler::run::{Run, ThreadId};
use ts_rs::TS;

/// A kernel wake-up this close to an exact release by the same thread is that release's.
pub const SAME_WAKEUP_NS: u64 = 1_000_000;

/// What the lock events say about one hand-off (the `exact` field of a `lock-event` edge).
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct ExactHandoff {
    /// The lock's address in the target (the lock functions' first argument), as hex.
    pub lock: String,
    /// When the wakee called the acquire function and when it returned with the lock, seconds
    /// since the run's start (the release is the edge's `time_s`).
    pub called_s: f64,
    pub acquired_s: f64,
    /// `acquired_s − called_s`: the wakee's exact wait to enter.
    pub wait_s: f64,
    /// How long the lock had been held when it was released, and by whom: the waker, or, for a
    /// lock used as a signal (a `Condition`'s waiter lock), the wakee itself.
    pub hold_s: Option<f64>,
    pub held_by: Option<String>,
}

/// What a waited-on object is, as far as telling a lock's hand-off from a wake-up goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    Gil,
    /// A lock (`threading.Lock`, `RLock`, a lock's futex): its release is the wake-up.
    Lock,
    /// Anything else (a condition, an event, a queue, I/O).
    Other,
}

/// The waits view's parts the edges attach to.
pub struct Inputs<'a> {
    pub intervals: &'a [WaitInterval],
    /// Per object of the view.
    pub kinds: &'a [ObjectKind],
    pub labels: &'a [String],
}

/// One exact hand-off, before it is matched to a wait.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RawHandoff {
    pub lock: u64,
    pub waker_tid: u32,
    pub wakee_tid: u32,
    pub released: u64,
    pub called: u64,
    pub acquired: u64,
    /// The execution the release ended: its holder and how long it held.
    pub held_by: Option<u32>,
    pub hold_ns: Option<u64>,
    /// The wakee held the lock before the release (a signal, not a mutual exclusion).
    pub signal: bool,
}

/// Every hand-off of the run's lock events, in the order of the acquisitions. The attempts and
/// nested acquisitions follow [`crate::locksections`]'s rules; a hand-off is made at the
/// acquisition (a `Condition`'s waiter lock is taken the second time and never released, so
/// executions, which end at a release, would not see it).
pub fn raw_handoffs(run: &Run) -> Vec<RawHandoff> {
    // Per (thread, lock): the attempt's first call, and the failed return that may be retried.
    let mut attempts: HashMap<(u32, u64), (u64, Option<u64>)> = HashMap::new();
    // Per lock: its holder and since when; its last release (releaser, time, the holder then).
    let mut held: HashMap<u64, (u32, u64)> = HashMap::new();
    let mut last_release: HashMap<u64, (u32, u64, Option<(u32, u64)>)> = HashMap::new();
    let mut out = Vec::new();
    for e in &run.lock_events {
        let key = (e.tid, e.lock);
        match e.kind {
            kind::CALL => {
                let a = attempts.entry(key).or_insert((e.t, None));
                if let Some(f) = a.1.take() {
                    if e.t.saturating_sub(f) > RETRY_NS {
                        a.0 = e.t;
                    }
                }
            }
            kind::FAILED => {
                if let Some(a) = attempts.get_mut(&key) {
                    a.1 = Some(e.t);
                }
            }
            kind::ACQUIRED => {
                let called = attempts.remove(&key).map_or(e.t, |a| a.0);
                if held.get(&e.lock).is_some_and(|h| h.0 == e.tid) {
                    continue;
                }
                held.insert(e.lock, (e.tid, e.t));
                let Some(&(waker, released, before)) = last_release.get(&e.lock).filter(|r| r.1 >= called && r.0 != e.tid) else { continue };
                out.push(RawHandoff {
                    lock: e.lock,
                    waker_tid: waker,
                    wakee_tid: e.tid,
                    released,
                    called,
                    acquired: e.t,
                    held_by: before.map(|h| h.0),
                    hold_ns: before.map(|h| released - h.1),
                    signal: before.is_some_and(|h| h.0 == e.tid),
                });
            }
            kind::RELEASED => {
                let before = held.remove(&e.lock);
                last_release.insert(e.lock, (e.tid, e.t, before));
            }
            _ => {}
        }
    }
    out
}

/// Every hand-off of the run's lock events counted per (lock, releaser, waiter), most frequent
/// first, with the place of the lock from `exact` (the hand-off table of `threadradar waits`).
/// Unlike [`crate::locksections::handoffs`], which counts the executions' hand-offs, it has the
/// acquisitions never released too (a `Condition`'s waiter lock after `notify`).
pub fn handoff_table(run: &Run, exact: &crate::locksections::ExactSectionsView) -> Vec<crate::locksections::Handoff> {
    let places: HashMap<&str, &Option<String>> = exact.locks.iter().map(|l| (l.lock.as_str(), &l.place)).collect();
    let thread = crate::waits::thread_of_tid(run);
    let name = |tid: u32, t: u64| thread(tid, t).map_or_else(|| tid.to_string(), |th| run.threads[th as usize].name.clone());
    let mut pairs: HashMap<(String, String, String), (usize, f64)> = HashMap::new();
    for h in raw_handoffs(run) {
        let p = pairs.entry((format!("{:#x}", h.lock), name(h.waker_tid, h.released), name(h.wakee_tid, h.acquired))).or_default();
        p.0 += 1;
        p.1 += (h.acquired - h.called) as f64 / 1e9;
    }
    let mut out: Vec<crate::locksections::Handoff> = pairs
        .into_iter()
        .map(|((lock, from, to), (count, waited_s))| crate::locksections::Handoff { place: places.get(lock.as_str()).and_then(|p| (*p).clone()), lock, from, to, count, waited_s })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| (&a.lock, &a.from, &a.to).cmp(&(&b.lock, &b.from, &b.to))));
    out
}

/// Adds the run's exact hand-offs to `edges` (rules in the module's documentation); gives how
/// many became edges and how many had no sampled wait to end.
pub fn add_edges(run: &Run, inputs: &Inputs, edges: &mut Vec<WakeEdge>, mut waker_frame: impl FnMut(ThreadId, u64) -> Option<Location>) -> (usize, usize) {
    if run.locks.is_none() {
        return (0, 0);
    }
    let thread = crate::waits::thread_of_tid(run);
    let ns = |s: f64| (s * 1e9).round().max(0.0) as u64;
    // Each thread's waits (not on the GIL), in order of start.
    let mut waits_of: Vec<Vec<u32>> = vec![Vec::new(); run.threads.len()];
    for (k, w) in inputs.intervals.iter().enumerate() {
        if inputs.kinds.get(w.object as usize) != Some(&ObjectKind::Gil) {
            waits_of[w.thread as usize].push(k as u32);
        }
    }
    let (mut added, mut unseen) = (0, 0);
    let mut exact: Vec<WakeEdge> = Vec::new();
    for h in raw_handoffs(run) {
        let (Some(waker), Some(wakee)) = (thread(h.waker_tid, h.released), thread(h.wakee_tid, h.acquired)) else {
            unseen += 1;
            continue;
        };
        let list = &waits_of[wakee as usize];
        let upto = list.partition_point(|&k| ns(inputs.intervals[k as usize].start_s) <= h.acquired);
        let best = list[..upto]
            .iter()
            .rev()
            .take(4)
            .map(|&k| {
                let w = &inputs.intervals[k as usize];
                (k, h.acquired.min(ns(w.end_s)).saturating_sub(h.called.max(ns(w.start_s))))
            })
            .filter(|&(_, overlap)| overlap > 0)
            .max_by_key(|&(k, overlap)| (overlap, k));
        let Some((k, _)) = best else {
            unseen += 1;
            continue;
        };
        let w = &inputs.intervals[k as usize];
        let kind = if h.signal || inputs.kinds[w.object as usize] == ObjectKind::Lock { WakeKind::Wake } else { WakeKind::LockHandoff };
        let name = |th: ThreadId| run.threads[th as usize].name.clone();
        exact.push(WakeEdge {
            time_s: h.released as f64 / 1e9,
            waker_thread: waker,
            wakee_thread: wakee,
            waker: name(waker),
            wakee: name(wakee),
            object: inputs.labels[w.object as usize].clone(),
            object_index: w.object,
            interval: k,
            evidence: Evidence::LockEvent,
            confidence: 1.0,
            futile: false,
            kind,
            waker_frame: waker_frame(waker, h.released),
            exact: Some(ExactHandoff {
                lock: format!("{:#x}", h.lock),
                called_s: h.called as f64 / 1e9,
                acquired_s: h.acquired as f64 / 1e9,
                wait_s: (h.acquired - h.called) as f64 / 1e9,
                hold_s: h.hold_ns.map(|d| d as f64 / 1e9),
                held_by: h.held_by.map(|tid| thread(tid, h.released).map_or_else(|| tid.to_string(), name)),
            }),
        });
        added += 1;
    }
    replace_same_wakeups(edges, &mut exact);
    edges.extend(exact);
    (added, unseen)
}

/// Drops from `edges` what an exact edge describes too ("never twice" in the module's
/// documentation), moving a dropped kernel edge's `futile` flag to the exact one.
fn replace_same_wakeups(edges: &mut Vec<WakeEdge>, exact: &mut [WakeEdge]) {
    let mut by_interval: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, e) in exact.iter().enumerate() {
        by_interval.entry(e.interval).or_default().push(i);
    }
    edges.retain(|e| {
        let Some(xs) = by_interval.get(&e.interval) else { return true };
        if e.evidence == Evidence::Kernel {
            let same = xs.iter().copied().find(|&i| exact[i].waker_thread == e.waker_thread && ((exact[i].time_s - e.time_s).abs() * 1e9) as u64 <= SAME_WAKEUP_NS);
            if let Some(i) = same {
                exact[i].futile |= e.futile;
                return false;
            }
            return true;
        }
        // An inferred edge guessed at the end of a wait an exact release ended.
        !xs.iter().any(|&i| exact[i].kind == WakeKind::Wake)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use threadradar_profiler::lockevents::kind::{ACQUIRED as A, CALL as C, RELEASED as R};
    use threadradar_profiler::run::{LockEvent, LockInfo, Meta};

    fn edge(interval: u32, waker: ThreadId, time_s: f64, evidence: Evidence, futile: bool) -> WakeEdge {
        WakeEdge {
            time_s,
            waker_thread: waker,
            wakee_thread: 9,
            waker: String::new(),
            wakee: String::new(),
            object: String::new(),
            object_index: 0,
            interval,
            evidence,
            confidence: 1.0,
            futile,
            kind: WakeKind::Wake,
            waker_frame: None,
            exact: None,
        }
    }

    #[test]
    fn an_exact_edge_replaces_the_kernel_and_inferred_edges_of_the_same_wake_up_only() {
        let mut edges = vec![
            edge(0, 1, 0.0100, Evidence::Kernel, true),      // the same wake-up: replaced, futile kept
            edge(0, 2, 0.0101, Evidence::Kernel, false),     // another waker: kept
            edge(0, 1, 0.0300, Evidence::Kernel, false),     // 20 ms later: another wake-up, kept
            edge(1, 1, 0.0100, Evidence::Kernel, false),     // another wait: kept
            edge(2, 3, 0.0500, Evidence::SameObject, false), // a guess at the wait an exact wake-up ended
            edge(3, 3, 0.0500, Evidence::RunningThread, false),
        ];
        let mut exact = vec![edge(0, 1, 0.0102, Evidence::LockEvent, false), edge(2, 1, 0.049, Evidence::LockEvent, false)];
        replace_same_wakeups(&mut edges, &mut exact);
        let left: Vec<(u32, ThreadId, Evidence)> = edges.iter().map(|e| (e.interval, e.waker_thread, e.evidence)).collect();
        assert_eq!(left, [(0, 2, Evidence::Kernel), (0, 1, Evidence::Kernel), (1, 1, Evidence::Kernel), (3, 3, Evidence::RunningThread)]);
        assert!(exact[0].futile && !exact[1].futile);
    }

    #[test]
    fn a_condition_waiter_lock_is_a_signal_and_a_mutex_is_handed_over() {
        let mut run = Run::new(Meta::default());
        run.locks = Some(LockInfo::default());
        let events = [
            // Thread 2 takes its waiter lock, then blocks on it until 1 releases it (a notify).
            (10, 2, C, 0xb),
            (11, 2, A, 0xb),
            (12, 2, C, 0xb),
            (40, 1, R, 0xb),
            (41, 2, A, 0xb),
            // A mutex: 1 holds it 20..60, 3 waits from 30 and gets it at 61.
            (19, 1, C, 0xa),
            (20, 1, A, 0xa),
            (30, 3, C, 0xa),
            (60, 1, R, 0xa),
            (61, 3, A, 0xa),
            (70, 3, R, 0xa),
        ];
        let mut ev: Vec<LockEvent> = events.iter().map(|&e| LockEvent::from(e)).collect();
        ev.sort_by_key(|e| e.t);
        run.lock_events = ev;
        let h = raw_handoffs(&run);
        assert_eq!(h.len(), 2, "{h:?}");
        let sig = h.iter().find(|x| x.lock == 0xb).unwrap();
        assert!(sig.signal && sig.waker_tid == 1 && sig.wakee_tid == 2 && sig.released == 40 && sig.hold_ns == Some(29) && sig.held_by == Some(2));
        let mtx = h.iter().find(|x| x.lock == 0xa).unwrap();
        assert!(!mtx.signal && mtx.waker_tid == 1 && mtx.wakee_tid == 3 && (mtx.called, mtx.released, mtx.acquired) == (30, 60, 61) && mtx.hold_ns == Some(40));
    }
}
