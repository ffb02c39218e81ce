//! Who waits for whom (paper 000's correspondences, spec §6): wait intervals per thread, the
//! wake edges that end them, and per waited-on object its waits, waiters, wakers and futile
//! wake-ups. Pure: a run goes in, a [`WaitsView`] comes out. `docs/waits.md` is the user's guide.
//!
//! # Wait intervals
//!
//! A thread *waits* in a sample that is idle (blocked in a system call other than a sleep) or
//! waiting for the GIL. A wait interval is a maximal run of one thread's consecutive waiting
//! samples on the same object from the same waiting frame (the innermost frame of the program's
//! own code). It starts at its first sample and ends at the thread's next sample (when the thread
//! was seen doing something else); a wait the run ends in is `open`.
//!
//! The *object* is the recorded wait target when the run has one (`Run::waits`, its object's
//! address, else the futex address, else the descriptor's target). Without one it is inferred from
//! the stack: the kind (`threading.Condition`, `queue.Queue`, `threading.Event`, `lock`, I/O, …,
//! from the innermost standard-library frames and the system call) *in* the class (or, outside a
//! class, the function) of the waiting frame — a "wait site", which is what the program's source
//! can say about the object. Sleeps wait for no one and are left out.
//!
//! # Wake edges, and their evidence
//!
//! An edge goes from the thread that released a wait (the *waker*) to the end of the wait it
//! ended. No edge is drawn without evidence:
//! - `kernel`: the scheduler's own wake-up of the waiting thread, recorded by `record --sched`,
//!   that ended a sleep a sample saw (no switch out of the wakee between that sample and the
//!   wake-up); a wake-up of an interrupt (a timer) or another process makes none, and an open
//!   wait takes wake-ups only up to its process's last sample. The waker is the thread that ran
//!   the wake-up. A GIL wait none of whose wake-ups qualifies (a timed wait) gets the
//!   `gil-holder` edge.
//! - `gil-holder` (sampled): for a wait for the GIL, the thread that held the GIL at the waiter's
//!   last waiting sample.
//! - `same-object` (inferred): a thread seen, at the last waiting sample or the next one, inside
//!   a releasing function of the object's type (`Condition.notify`, `Queue.put`, `Event.set`, …)
//!   or in the code of the object's wait site (e.g. another method of the same class).
//! - `running-thread` (inferred): nothing touched the object, but exactly one other thread was
//!   computing (and held the GIL, in a build with one) at those two samples.
//!
//! Each edge has a confidence in [0, 1]: 1 for kernel events; otherwise the share of the evidence
//! the chosen waker has among all candidates, scaled by how direct the evidence is.
//!
//! # Futile wake-ups (the Bug 2 signature)
//!
//! A wake-up is futile when the woken thread waits again on the same object without leaving the
//! wait loop:
//! - sampled: a wait ends, and the thread's next wait on the same object starts at the same
//!   waiting frame and line, while every sample between the two still has the waiting function
//!   at the same depth (the thread never returned from it);
//! - kernel: a wake-up of the thread falls between two samples that both see it waiting on the
//!   same object at the same frame (several wake-ups between the same two samples count once).

use crate::glyph::{text_glyph, GlyphCell};
use crate::waits_locks;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use threadradar_profiler::run::{FileKind, FrameId, Run, StackId, StrId, ThreadId, ThreadSample, ThreadState};
use ts_rs::TS;

mod objects;
mod tasks;
mod touching;

use objects::Builder;
use touching::Touching;

/// What to compute and show.
#[derive(Clone, Debug, Default)]
pub struct WaitsOptions {
    /// Only objects whose label, type or name contains this (case-insensitive).
    pub object: Option<String>,
    /// Only intervals and edges that overlap this range (seconds since the run's start).
    pub from_s: Option<f64>,
    pub to_s: Option<f64>,
    /// Ignore the run's kernel scheduler events (inference only).
    pub no_kernel: bool,
}

/// Which evidence the run holds, in words.
#[derive(Clone, Debug, Default, PartialEq, Serialize, TS)]
pub struct EvidenceAvailable {
    /// The run recorded the scheduler's wake-ups (`record --sched`) and they were used.
    pub kernel: bool,
    /// The run recorded what each waiting sample waited on (`Run::waits`).
    pub targets: bool,
    /// One sentence per missing kind of evidence, and what was used instead.
    pub notes: Vec<String>,
}

/// A source location, for navigation.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct Location {
    pub file: String,
    pub line: u32,
    pub function: String,
}

/// A thread as the waits view names it.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct WaitThread {
    pub id: ThreadId,
    /// The name the program gave it.
    pub name: String,
    #[serde(rename = "type")]
    pub thread_type: String,
}

/// One wait of one thread.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct WaitInterval {
    pub thread: ThreadId,
    /// Index into [`WaitsView::objects`].
    pub object: u32,
    /// Seconds since the run's start: the first waiting sample, and the thread's next sample —
    /// or the kernel's times where [`WaitInterval::kernel_start`]/[`WaitInterval::kernel_end`] say so.
    pub start_s: f64,
    pub end_s: f64,
    /// `start_s` is the kernel's: the context switch that began the sleep the first waiting
    /// sample saw (after the thread's previous sample). Else sampled: within one period.
    pub kernel_start: bool,
    /// `end_s` is the kernel's: the wake-up that ended the sleep the last waiting sample saw
    /// (before the thread's next sample). Else sampled: within one period.
    pub kernel_end: bool,
    pub samples: u32,
    /// The blocking system call seen most (`futex`, `read`, …); `None` for the GIL.
    pub syscall: Option<String>,
    /// The waiting frame: the innermost frame of the program's own code.
    pub frame: Option<Location>,
    /// The run ended (or the thread vanished) while it waited: no end was seen.
    pub open: bool,
    /// The wait ended in a futile wake-up (the thread waited again in the same loop).
    pub futile: bool,
}

/// How an edge was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    Kernel,
    GilHolder,
    SameObject,
    RunningThread,
    /// An exact lock hand-off from the lock events of `record --exact-locks` (kernel uprobes on
    /// the interpreter's lock functions): the waker's release, then the wakee's acquire returned.
    LockEvent,
    /// An asyncio task awaited another task, as the recorded task states say (`--units tasks`):
    /// who is recorded, the time is the sample at which the awaiting task was seen going on.
    TaskState,
}

impl Evidence {
    /// Measured by the kernel (the scheduler's wake-up, or a lock hand-off from uprobes), not
    /// inferred from samples.
    pub fn is_exact(self) -> bool {
        matches!(self, Evidence::Kernel | Evidence::LockEvent)
    }

    /// Read from the program's recorded state (an asyncio task's awaited task), not inferred from
    /// samples, though timed by them.
    pub fn is_recorded(self) -> bool {
        self == Evidence::TaskState
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Kernel => "kernel",
            Evidence::LockEvent => "lock-event",
            Evidence::GilHolder => "gil-holder",
            Evidence::SameObject => "same-object",
            Evidence::RunningThread => "running-thread",
            Evidence::TaskState => "task-state",
        }
    }
}

/// What a kernel wake-up did to a wait on a condition-like object (`Condition`, `Event`,
/// `Queue`, …), told apart by the futex the woken thread slept on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum WakeKind {
    /// The wake-up the wait was for: a notify, a set, a put, a lock's release (every inferred
    /// edge, and every kernel edge except lock hand-offs).
    Wake,
    /// The object's own lock passed on: the woken thread slept on the lock a condition is built
    /// on (`with cond:`, or taking it back inside `cond.wait()`), not on the condition itself.
    /// Neither a condition wake-up nor a futile one.
    LockHandoff,
}

/// A waker → wakee edge.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct WakeEdge {
    /// Seconds since the run's start: the kernel's wake-up, or the end of the wait it ended.
    pub time_s: f64,
    pub waker_thread: ThreadId,
    pub wakee_thread: ThreadId,
    /// The names the program gave the two threads.
    pub waker: String,
    pub wakee: String,
    /// The object's label, and its index into [`WaitsView::objects`].
    pub object: String,
    pub object_index: u32,
    /// Index into [`WaitsView::intervals`] of the wait this edge ended (or woke futilely).
    pub interval: u32,
    pub evidence: Evidence,
    pub confidence: f64,
    /// The wake-up did not end the wait: the thread went on waiting on the same object.
    pub futile: bool,
    /// A wake-up for the object, or a hand-off of its lock (kernel evidence only).
    pub kind: WakeKind,
    /// Where the waker was at the sample nearest the edge.
    pub waker_frame: Option<Location>,
    /// For a `lock-event` edge: the lock, the wakee's exact wait and the hold the release ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exact: Option<crate::waits_locks::ExactHandoff>,
}

/// Per waited-on object.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct ObjectSummary {
    /// What the view calls it: `threading.Condition self._monitor`, `lock in Storage`, `GIL`.
    pub object: String,
    #[serde(rename = "type")]
    pub type_name: String,
    /// The name in the waiting code, when recorded (`self.not_empty`).
    pub name: Option<String>,
    /// The object's address, when recorded.
    pub addr: Option<u64>,
    /// Whether the object was recorded (`recorded`) or inferred from the stack (`wait-site`).
    pub identity: String,
    pub waits: u64,
    pub wait_s: f64,
    pub p50_s: f64,
    pub p95_s: f64,
    /// Waiting threads by name, with their number of waits.
    pub waiters: BTreeMap<String, u64>,
    /// Wakers by name, with the number of edges (futile ones included, lock hand-offs not).
    pub wakers: BTreeMap<String, u64>,
    pub futile_wakeups: u64,
    /// Kernel wake-ups that handed the object's lock on (not counted among the wakers).
    pub lock_handoffs: u64,
    /// The waiting radar (spec §1): the threads that waited on the object, clustered by their
    /// share of its wait time — `crt(a, th)` (Eq. 6) over waiting samples instead of computing
    /// ones —, low → high. Sampled, like the wait times.
    pub radar: Vec<GlyphCell>,
    /// Thread types among the waiters (the radar's upper pedestal; the lower one is
    /// `waiters.len()`).
    pub waiter_types: usize,
    /// Where it was waited on first.
    pub frame: Option<Location>,
}

/// The waits view of a run.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct WaitsView {
    /// Unix seconds of the run's t = 0 (`None` in runs recorded before it was stored).
    pub started_at: Option<f64>,
    /// The run's sampling period ([`crate::period`]), seconds.
    pub period_s: f64,
    pub evidence: EvidenceAvailable,
    pub threads: Vec<WaitThread>,
    pub objects: Vec<ObjectSummary>,
    pub intervals: Vec<WaitInterval>,
    pub edges: Vec<WakeEdge>,
}

/// What one waiting sample waited on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// One GIL per process.
    Gil(u32),
    /// An object's (or a lock's futex) address in one process, with the object's type (none: a
    /// futex): the same address in two processes (a fork's copy) is two objects, and so is an
    /// address reused by an object of another type after the first was freed.
    Addr(u32, u64, Option<String>),
    Target(String),
    Site(String, Scope),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Scope {
    Class(StrId),
    Function(u32),
    None,
}

struct ObjInfo {
    key: Key,
    type_name: String,
    name: Option<String>,
    addr: Option<u64>,
    scope: Scope,
    frame: Option<FrameId>,
    /// `frame` is in the program's code. A scope of the standard library's (`Thread.run`,
    /// `_worker`) is shared by threads that never touch the object, so it is no evidence.
    user: bool,
}

/// One observation of a thread classified.
#[derive(Clone, Copy)]
struct Obs<'r> {
    tick: u32,
    ts: &'r ThreadSample,
    /// The object waited on, or `None` when not waiting (or sleeping).
    obj: Option<u32>,
    frame: Option<FrameId>,
    /// The thread sleeps on the lock of a condition-like object, not on the condition itself
    /// (see [`lock_futexes`]).
    lock: bool,
    /// `frame` is in the program's code (not a stack caught without it, e.g. while starting).
    user: bool,
}

/// How far a thread's reading and the kernel's events about it may disagree: the reading's time
/// is taken before its system calls, which take some microseconds (more on a loaded machine), and
/// a wake-up reaches the state that `/proc` shows a moment after its event.
const READ_SLACK_NS: u64 = 500_000;

/// The kernel's events per thread of the run: its wake-ups, `(t_ns, waker thread)`, and the
/// times it left a CPU (`sched_switch` out) with whether it went to sleep (not preempted), both
/// in time order.
pub struct KernelWakeups {
    pub wakeups: Vec<Vec<(u64, Option<ThreadId>)>>,
    pub switched_out: Vec<Vec<(u64, bool)>>,
    /// Whether the run recorded context switches at all (older `--sched` runs may not).
    pub has_switches: bool,
}

impl KernelWakeups {
    /// When the sleep that observation `first` of `thread` saw began: the thread's last switch
    /// out before it was read, if that was into a sleep, after its previous observation, and no
    /// wake-up came between the two (it still slept when read).
    ///
    /// A reading is not one instant: the kernel's view of the thread (its state, its system
    /// call) and the kernel's events may disagree for a moment. A thread that switched into a
    /// sleep within [`READ_SLACK_NS`] after the reading, not woken up in between, was awake when
    /// read — inside the blocking call, on its way into this sleep — whatever an earlier switch
    /// out says (the events of two CPUs may be some microseconds out of order): the sleep began
    /// then.
    fn sleep_began(&self, thread: ThreadId, obs: &[Obs], first: usize, t: impl Fn(u32) -> u64) -> Option<u64> {
        let seen = |o: &Obs| o.ts.seen_at(t(o.tick));
        let at = seen(&obs[first]);
        let before = first.checked_sub(1).map_or(0, |p| seen(&obs[p]));
        let outs = &self.switched_out[thread as usize];
        let k = outs.partition_point(|&(x, _)| x <= at);
        if let Some(&(x, true)) = outs.get(k) {
            if x <= at + READ_SLACK_NS && !self.woken_between(thread, at, x) {
                return Some(x);
            }
        }
        let (x, slept) = outs[k.checked_sub(1)?];
        (slept && x > before && !self.woken_between(thread, x, at)).then_some(x)
    }

    /// Whether `thread` was woken up after `from` and at or before `to`.
    fn woken_between(&self, thread: ThreadId, from: u64, to: u64) -> bool {
        let wakes = &self.wakeups[thread as usize];
        wakes.get(wakes.partition_point(|&(y, _)| y <= from)).is_some_and(|&(y, _)| y <= to)
    }

    /// When the sleep that observation `last` of `thread` saw ended: the first wake-up after it
    /// was read, if it came before the thread's next observation (`next`) and the thread was
    /// not switched out in between (it had not run).
    ///
    /// As for [`KernelWakeups::sleep_began`], a reading and the kernel's events may disagree
    /// for a moment: a thread seen runnable at its next observation may have been woken up to
    /// [`READ_SLACK_NS`] after that reading's time (a later wake-up cannot be another sleep's
    /// end, which needs a switch out first); and a thread still seen asleep may have been woken
    /// up to [`READ_SLACK_NS`] before — that wake-up ends this sleep when it followed a switch
    /// into a sleep and the thread had not switched out again by the reading.
    fn sleep_ended(&self, thread: ThreadId, obs: &[Obs], last: usize, next: Option<usize>, t: impl Fn(u32) -> u64) -> Option<u64> {
        let seen = |o: &Obs| o.ts.seen_at(t(o.tick));
        let (at, upto) = (seen(&obs[last]), seen(&obs[next?]) + READ_SLACK_NS);
        let wakes = &self.wakeups[thread as usize];
        let outs = &self.switched_out[thread as usize];
        let w = wakes.partition_point(|&(y, _)| y <= at);
        if let Some(&(y, _)) = wakes.get(w) {
            let ran = outs.get(outs.partition_point(|&(x, _)| x <= at)).is_some_and(|&(x, _)| x < y);
            if y <= upto && !ran {
                return Some(y);
            }
        }
        // Woken just before the reading that still saw it asleep.
        let &(y, _) = wakes.get(w.checked_sub(1)?)?;
        let k = outs.partition_point(|&(x, _)| x <= y);
        let slept_before = k.checked_sub(1).is_some_and(|i| outs[i].1);
        let out_since = outs.get(k).is_some_and(|&(x, _)| x <= at);
        (at.saturating_sub(y) <= READ_SLACK_NS && slept_before && !out_since).then_some(y)
    }
}

/// Computes the waits view. `run` must have passed [`Run::validate`].
pub fn waits(run: &Run, opts: &WaitsOptions) -> WaitsView {
    let period_ns = crate::period::sampling_period_ns(run);
    let mut b = Builder { run, objects: Vec::new(), index: HashMap::new(), stdlib_cache: FastMap::default() };
    let n = run.threads.len();

    // 1. Every thread's observations, classified.
    let lock_futexes = lock_futexes(run);
    let mut counts = vec![0usize; n];
    for s in &run.samples {
        for ts in &s.threads {
            if let Some(c) = counts.get_mut(ts.thread as usize) {
                *c += 1;
            }
        }
    }
    let mut per_thread: Vec<Vec<Obs>> = counts.iter().map(|&c| Vec::with_capacity(c)).collect();
    let mut waiting_at = WaitingAt::with_capacity(run.samples.len(), counts.iter().sum());
    // A sample's classification depends only on its stack, state, blocking call, wait target and
    // process: each distinct combination is classified once (objects are still made in the order
    // of their first sample).
    type ClassKey = (Option<StackId>, ThreadState, Option<StrId>, Option<u32>, u32);
    let mut classified: FastMap<ClassKey, (Option<u32>, Option<FrameId>, bool, bool)> = FastMap::default();
    let mut listed_at = vec![u32::MAX; n];
    for (tick, s) in run.samples.iter().enumerate() {
        waiting_at.start.push(waiting_at.obj.len());
        let mut repeated = false;
        for ts in &s.threads {
            let pid = run.threads.get(ts.thread as usize).map_or(0, |t| t.pid);
            let key = (ts.stack, ts.state, ts.blocked, ts.wait, pid);
            let (obj, frame, lock, user) = match classified.get(&key) {
                Some(&v) => v,
                None => {
                    let (obj, frame) = b.classify(ts);
                    let user = ts.stack.is_some_and(|st| b.stack_info(st).2);
                    let v = (obj, frame, sleeps_on_lock(run, ts, &lock_futexes), user);
                    classified.insert(key, v);
                    v
                }
            };
            waiting_at.obj.push(obj);
            match listed_at.get_mut(ts.thread as usize) {
                Some(l) => {
                    repeated |= *l == tick as u32;
                    *l = tick as u32;
                }
                None => repeated = true,
            }
            if let Some(v) = per_thread.get_mut(ts.thread as usize) {
                v.push(Obs { tick: tick as u32, ts, obj, frame, lock, user });
            }
        }
        if repeated {
            waiting_at.last_listing_wins(tick, &s.threads);
        }
    }
    waiting_at.start.push(waiting_at.obj.len());
    // A waiting sample whose object could not be read (the recorder reads locals only at some
    // samples) falls back to its wait site; when the run recorded exactly one object of that
    // type at that site, the sample waited on that object.
    let merged = b.merge_sites();
    if merged.iter().enumerate().any(|(i, &m)| m != i as u32) {
        for obs in &mut per_thread {
            for o in obs.iter_mut() {
                o.obj = o.obj.map(|x| merged[x as usize]);
            }
        }
        for v in &mut waiting_at.obj {
            *v = v.map(|x| merged[x as usize]);
        }
    }
    // Every object's label, made once (edges repeat them).
    let mut labels: Vec<String> = (0..b.objects.len() as u32).map(|o| b.label(o)).collect();
    // Each thread's observation times, side by side for the binary searches of `nearest_frame`.
    let times = Times::new(run, &per_thread);

    // 2. Intervals.
    let mut raws: Vec<Raw> = Vec::new();
    for (th, obs) in per_thread.iter().enumerate() {
        let mut i = 0;
        while i < obs.len() {
            let Some(obj) = obs[i].obj else {
                i += 1;
                continue;
            };
            // One wait: the same object at one site of the program's code, sample after
            // sample. A stack without the program's code (caught mid-change) names no site, so
            // it neither ends the wait nor fixes its site.
            let (mut j, mut site) = (i, i);
            while j + 1 < obs.len()
                && obs[j + 1].obj == Some(obj)
                && (!obs[j + 1].user || !obs[site].user || obs[j + 1].frame == obs[site].frame)
                && obs[j + 1].tick <= obs[j].tick + 2
            {
                j += 1;
                if obs[j].user && !obs[site].user {
                    site = j;
                }
            }
            let next = (j + 1 < obs.len() && obs[j + 1].tick <= obs[j].tick + 2).then_some(j + 1);
            raws.push(Raw { thread: th as ThreadId, obj, first: i, last: j, next, site });
            i = j + 1;
        }
    }

    let t = |tick: u32| run.samples[tick as usize].t;
    let kernel = if opts.no_kernel { None } else { kernel_wakeups(run) };
    let (mut intervals, kernel_ends): (Vec<WaitInterval>, Vec<(ThreadId, Option<u64>)>) = raws
        .par_iter()
        .map(|r| {
            let obs = &per_thread[r.thread as usize];
            let mut start = t(obs[r.first].tick);
            let mut end = match r.next {
                Some(k) => t(obs[k].tick),
                None => t(obs[r.last].tick) + period_ns,
            };
            // With context switches recorded, a wait's ends are the kernel's — but for the
            // GIL, whose waiter wakes itself every switch interval and sleeps again, so that
            // neither the sleep seen first nor the wake-up after the last is the wait's end.
            let exact = kernel.as_ref().filter(|kw| kw.has_switches && !matches!(b.objects[r.obj as usize].key, Key::Gil(_)));
            let kernel_start = exact.and_then(|kw| kw.sleep_began(r.thread, obs, r.first, t));
            let kernel_end = exact.and_then(|kw| kw.sleep_ended(r.thread, obs, r.last, r.next, t));
            start = kernel_start.unwrap_or(start);
            end = kernel_end.unwrap_or(end);
            // A wait sees one or two blocking calls: counted in a short list, not a map.
            let mut calls: Vec<(StrId, u32)> = Vec::new();
            for o in &obs[r.first..=r.last] {
                if let (Some(c), ThreadState::Idle) = (o.ts.blocked, o.ts.state) {
                    match calls.iter_mut().find(|e| e.0 == c) {
                        Some(e) => e.1 += 1,
                        None => calls.push((c, 1)),
                    }
                }
            }
            let syscall = calls.into_iter().max_by_key(|&(c, k)| (k, std::cmp::Reverse(c))).map(|(c, _)| run.str(c).to_string());
            (WaitInterval {
                thread: r.thread,
                object: r.obj,
                start_s: secs(start),
                end_s: secs(end),
                kernel_start: kernel_start.is_some(),
                kernel_end: kernel_end.is_some(),
                samples: (r.last - r.first + 1) as u32,
                syscall,
                frame: obs[r.site].frame.map(|f| location(run, f)),
                open: r.next.is_none(),
                futile: false,
            }, (r.thread, kernel_end))
        })
        .unzip();

    // 3. Futile wake-ups seen by sampling: the next wait of the same thread on the same object at
    //    the same frame, with the waiting function on the stack at the same depth all along.
    //    Only without kernel events: with them every wake-up is known (step 4), and a sampled
    //    guess — the thread may have left the loop and come back between two samples — would
    //    only add wrong ones.
    let mut futile_sampled = vec![false; raws.len()];
    for k in 0..if kernel.is_some() { 0 } else { raws.len().saturating_sub(1) } {
        let (a, c) = (&raws[k], &raws[k + 1]);
        if a.thread != c.thread || a.obj != c.obj || a.next.is_none() {
            continue;
        }
        let obs = &per_thread[a.thread as usize];
        let (Some(frame), Some(ts0)) = (obs[a.site].frame, obs[a.site].ts.stack) else { continue };
        // Taking the condition's lock back after a notify is the same wait going on, not a new one.
        if obs[c.site].frame != Some(frame) || matches!(b.objects[a.obj as usize].key, Key::Gil(_)) || obs[c.first].lock {
            continue;
        }
        let Some(depth) = depth_of(run, ts0, frame) else { continue };
        let function = run.frames[frame as usize].function;
        let stayed = obs[a.last + 1..c.first].iter().enumerate().all(|(i, o)| {
            let prev = if i == 0 { obs[a.last].tick } else { obs[a.last + i].tick };
            o.tick <= prev + 2 && o.ts.stack.is_some_and(|s| function_at_depth(run, s, depth) == Some(function))
        });
        if stayed {
            futile_sampled[k] = true;
            intervals[k].futile = true;
        }
    }

    // 4. Edges.
    // When each process's threads were last read (a kernel wake-up after it is unconfirmed).
    let mut last_of_process: HashMap<u32, u64> = HashMap::new();
    for (th, obs) in per_thread.iter().enumerate() {
        if let Some(o) = obs.last() {
            let e = last_of_process.entry(run.threads[th].pid).or_default();
            *e = (*e).max(o.ts.seen_at(t(o.tick)));
        }
    }
    let gil_build = run.samples.iter().any(|s| s.threads.iter().any(|o| o.gil));
    // Each wait's edges depend on nothing found for another wait: they are found in chunks of
    // consecutive waits on the threads of rayon's pool, each chunk's edges in the order of its
    // waits, and the chunks put back in order — the edges of one pass over the waits.
    let inputs = EdgeInputs {
        run,
        b: &b,
        per_thread: &per_thread,
        waiting_at: &waiting_at,
        kernel: kernel.as_ref(),
        last_of_process: &last_of_process,
        gil_build,
        labels: &labels,
        times: &times,
        touching: &Touching::new(run, &b.objects),
        kernel_ends: &kernel_ends,
    };
    let chunk = raws.len().div_ceil(4 * rayon::current_num_threads()).max(4096);
    let found: Vec<(Vec<WakeEdge>, Vec<u64>)> = raws
        .par_chunks(chunk)
        .enumerate()
        .map(|(c, rs)| {
            let mut scratch = EdgeScratch { cursor: vec![0; per_thread.len()], scope: None, weights: Vec::new(), running: Vec::new() };
            let mut edges = Vec::new();
            let futile = rs.iter().enumerate().map(|(j, r)| inputs.edges_of(&mut scratch, c * chunk + j, r, &mut edges)).collect();
            (edges, futile)
        })
        .collect();
    let mut edges: Vec<WakeEdge> = Vec::with_capacity(found.iter().map(|f| f.0.len()).sum());
    let mut futile_kernel: Vec<u64> = Vec::with_capacity(raws.len());
    for (e, f) in found {
        edges.extend(e);
        futile_kernel.extend(f);
    }
    // Exact lock hand-offs (`record --exact-locks`), replacing what describes the same wake-up.
    let kinds: Vec<waits_locks::ObjectKind> = b.objects.iter().map(object_kind).collect();
    let mut cursor = vec![0; per_thread.len()];
    let (exact_edges, exact_unseen) = waits_locks::add_edges(run, &waits_locks::Inputs { intervals: &intervals, kinds: &kinds, labels: &labels }, &mut edges, |th, t_ns| {
        nearest_frame(&per_thread[th as usize], &times, &mut cursor, th, t_ns).map(|f| location(run, f))
    });

    // Awaits between asyncio tasks, when tasks are units: recorded, not inferred.
    let task_edges = tasks::add(&mut b, &mut labels, &mut intervals, &mut edges);
    futile_sampled.resize(intervals.len(), false);
    futile_kernel.resize(intervals.len(), 0);

    // 5. Objects.
    let mut per_obj: Vec<Vec<f64>> = vec![Vec::new(); b.objects.len()];
    // Waiters and wakers are counted by thread, then added up by name (threads may share one).
    let mut waiting: Vec<FastMap<ThreadId, u64>> = vec![FastMap::default(); b.objects.len()];
    let mut futile = vec![0u64; b.objects.len()];
    let mut waited: Vec<BTreeMap<ThreadId, f64>> = vec![BTreeMap::new(); b.objects.len()];
    for (k, iv) in intervals.iter().enumerate() {
        *waited[iv.object as usize].entry(iv.thread).or_default() += iv.end_s - iv.start_s;
        per_obj[iv.object as usize].push(iv.end_s - iv.start_s);
        *waiting[iv.object as usize].entry(iv.thread).or_default() += 1;
        futile[iv.object as usize] += futile_sampled[k] as u64 + futile_kernel[k];
    }
    let mut waking: Vec<FastMap<ThreadId, u64>> = vec![FastMap::default(); b.objects.len()];
    let mut handoffs = vec![0u64; b.objects.len()];
    for e in &edges {
        match e.kind {
            WakeKind::Wake => *waking[e.object_index as usize].entry(e.waker_thread).or_default() += 1,
            WakeKind::LockHandoff => handoffs[e.object_index as usize] += 1,
        }
    }
    let by_name = |counts: &FastMap<ThreadId, u64>| {
        let mut named: BTreeMap<String, u64> = BTreeMap::new();
        for (&th, &c) in counts {
            *named.entry(run.threads[th as usize].name.clone()).or_default() += c;
        }
        named
    };
    let mut waiters: Vec<BTreeMap<String, u64>> = waiting.iter().map(by_name).collect();
    let mut wakers: Vec<BTreeMap<String, u64>> = waking.iter().map(by_name).collect();
    let objects: Vec<ObjectSummary> = (0..b.objects.len())
        .map(|o| {
            let info = &b.objects[o];
            let mut d = std::mem::take(&mut per_obj[o]);
            d.sort_by(f64::total_cmp);
            ObjectSummary {
                object: std::mem::take(&mut labels[o]),
                type_name: info.type_name.clone(),
                name: info.name.clone(),
                addr: info.addr,
                identity: if matches!(info.key, Key::Site(..)) { "wait-site" } else { "recorded" }.to_string(),
                waits: d.len() as u64,
                wait_s: d.iter().sum(),
                p50_s: quantile(&d, 0.5),
                p95_s: quantile(&d, 0.95),
                waiters: std::mem::take(&mut waiters[o]),
                wakers: std::mem::take(&mut wakers[o]),
                futile_wakeups: futile[o],
                lock_handoffs: handoffs[o],
                radar: waiting_radar(&waited[o]),
                waiter_types: waited[o].keys().map(|&th| run.threads[th as usize].thread_type.as_str()).collect::<BTreeSet<_>>().len(),
                frame: info.frame.map(|f| location(run, f)),
            }
        })
        .collect();

    let mut view = WaitsView {
        started_at: run.meta.started_at,
        period_s: crate::period::sampling_period_s(run),
        evidence: evidence_notes(run, kernel.is_some(), opts.no_kernel, (exact_edges, exact_unseen), task_edges),
        threads: run
            .threads
            .iter()
            .enumerate()
            .map(|(i, th)| WaitThread { id: i as ThreadId, name: th.name.clone(), thread_type: th.thread_type.clone() })
            .collect(),
        objects,
        intervals,
        edges,
    };
    sort_edges(&mut view.edges);
    restrict(&mut view, opts);
    view
}

/// A wait as step 2 of [`waits`] finds it: a thread's observations `first..=last` on one object,
/// and the observation after them (`None`: the wait is open).
struct Raw {
    thread: ThreadId,
    obj: u32,
    first: usize,
    last: usize,
    next: Option<usize>,
    /// The observation naming the wait's site: the first in the program's code, else `first`.
    site: usize,
}

/// What finding the edges of a wait reads, shared by the threads that find them.
#[derive(Clone, Copy)]
struct EdgeInputs<'a, 'r> {
    run: &'r Run,
    b: &'a Builder<'r>,
    per_thread: &'a [Vec<Obs<'r>>],
    waiting_at: &'a WaitingAt,
    kernel: Option<&'a KernelWakeups>,
    last_of_process: &'a HashMap<u32, u64>,
    gil_build: bool,
    labels: &'a [String],
    times: &'a Times,
    touching: &'a Touching<'r>,
    /// Each wait's end where it is the kernel's wake-up: that wake-up is this wait's, not the
    /// next one's (whose first sample may come a moment before it, see `sleep_ended`).
    kernel_ends: &'a [(ThreadId, Option<u64>)],
}

/// What one thread finding edges keeps from wait to wait: where its last search of each
/// thread's times ended, the last scope it asked about, and two lists it reuses.
struct EdgeScratch {
    cursor: Vec<usize>,
    scope: Option<(Scope, Arc<Vec<u64>>)>,
    weights: Vec<(ThreadId, u32)>,
    running: Vec<ThreadId>,
}

impl EdgeInputs<'_, '_> {
    /// The edges of wait `k` (`r`), appended to `edges`; gives the number of its futile kernel
    /// wake-ups.
    fn edges_of(&self, scratch: &mut EdgeScratch, k: usize, r: &Raw, edges: &mut Vec<WakeEdge>) -> u64 {
        let EdgeInputs { run, b, per_thread, waiting_at, kernel, last_of_process, gil_build, labels, times, touching, kernel_ends } = *self;
        let t = |tick: u32| run.samples[tick as usize].t;
        let obs = &per_thread[r.thread as usize];
        let info = &b.objects[r.obj as usize];
        let mut futile_kernel = 0;
        let pushed = std::cell::Cell::new(0u32);
        let mut push = |waker: ThreadId, time_ns: u64, evidence: Evidence, confidence: f64, futile: bool, kind: WakeKind| {
            pushed.set(pushed.get() + 1);
            edges.push(WakeEdge {
                time_s: secs(time_ns),
                waker_thread: waker,
                wakee_thread: r.thread,
                waker: run.threads[waker as usize].name.clone(),
                wakee: run.threads[r.thread as usize].name.clone(),
                object: labels[r.obj as usize].clone(),
                object_index: r.obj,
                interval: k as u32,
                evidence,
                confidence,
                futile,
                kind,
                waker_frame: nearest_frame(&per_thread[waker as usize], times, &mut scratch.cursor, waker, time_ns).map(|f| location(run, f)),
                exact: None,
            });
        };
        if let Some(kw) = kernel {
            let wakes = &kw.wakeups[r.thread as usize];
            let outs = &kw.switched_out[r.thread as usize];
            // When the sampler read each observation's thread (its tick plus the thread's read offset):
            // under load the threads of one tick are read milliseconds apart, and a wake-up
            // between the tick and the read is after, not before, what the sample saw.
            let seen = |o: &Obs| o.ts.seen_at(t(o.tick));
            let ts_of = |i: usize| seen(&obs[i]);
            // Switched out in (a, z]: the thread ran between the two moments.
            let outs_in = |a: u64, z: u64| &outs[outs.partition_point(|&(x, _)| x <= a)..outs.partition_point(|&(x, _)| x <= z)];
            let ran_between = |a: u64, z: u64| !outs_in(a, z).is_empty();
            // Every sleep begun in (a, z] was ended by a thread of the program (or lasts past the
            // run): none was a timed sleep or I/O, which a condition's wait loop does not do.
            let woken_by_threads = |a: u64, z: u64| {
                outs_in(a, z).iter().filter(|o| o.1).all(|&(x, _)| wakes.get(wakes.partition_point(|&(y, _)| y <= x)).is_none_or(|w| w.1.is_some()))
            };
            let first_t = ts_of(r.first);
            // A wait still open at the thread's last sample: wake-ups up to its process's last
            // sample. Later ones are unconfirmed — the one that ends a wait at the process's exit
            // is the exiting thread killing the others, not a release.
            let upto = r.next.map_or_else(|| last_of_process.get(&run.threads[r.thread as usize].pid).copied().unwrap_or(0), ts_of);
            let upto = kernel_ends[k].1.map_or(upto, |y| upto.max(y));
            // The previous wait's kernel end, when this wait's first sample came before it.
            let taken = k.checked_sub(1).map(|p| kernel_ends[p]).filter(|&(th, _)| th == r.thread).and_then(|(_, y)| y);
            let lo = wakes.partition_point(|&(x, _)| x <= first_t.max(taken.unwrap_or(0)));
            let hi = wakes.partition_point(|&(x, _)| x <= upto);
            let mut seen_gap = None;
            for wi in lo..hi {
                let (tw, waker) = wakes[wi];
                // A condition, an event, a lock or a pipe is released by a thread; a wake-up from
                // an interrupt (a timer: a timeout, a sleep) or another process ends no wait on
                // it that we can name, and often shows that the sample before it is older than
                // the thread's state (the sampler reads threads one after the other).
                let Some(waker) = waker else { continue };
                // The sample that saw the sleep this wake-up ended: the last waiting sample
                // before it, when the thread did not run between the two (without recorded
                // switches: only the first wake-up after that sample).
                let si = r.first + obs[r.first..=r.last].partition_point(|o| seen(o) < tw) - 1;
                let slept = if kw.has_switches {
                    !ran_between(ts_of(si), tw.saturating_sub(1))
                } else {
                    wakes.partition_point(|&(x, _)| x <= ts_of(si)) == wi
                };
                if !slept {
                    continue; // a sleep no sample saw: what it waited on is unknown, no edge
                }
                if obs[si].lock {
                    push(waker, tw, Evidence::Kernel, 1.0, false, WakeKind::LockHandoff);
                    continue;
                }
                // Futile: the thread slept on the object itself again later in this wait (it
                // ran in between), without leaving the wait loop: every sleep in between was
                // ended by a thread (the condition's lock, the GIL), none by a timer. Once per
                // sample gap.
                let futile = obs[si + 1..=r.last]
                    .iter()
                    .find(|o| !o.lock && seen(o) > tw && ran_between(tw, seen(o)))
                    .is_some_and(|o| woken_by_threads(tw, seen(o)));
                if futile {
                    if seen_gap == Some(si) {
                        continue;
                    }
                    seen_gap = Some(si);
                    futile_kernel += 1;
                }
                push(waker, tw, Evidence::Kernel, 1.0, futile, WakeKind::Wake);
            }
            // A wait for the GIL is a timed wait: CPython's waiter wakes itself (a timer, no
            // edge) every switch interval to ask for the GIL and sleeps again, and the holder's
            // hand-off ends that second sleep, which a sample rarely sees. Such a wait without
            // a kernel edge gets the sampled GIL holder's (below); every other wait keeps to
            // the kernel's events.
            if !(matches!(info.key, Key::Gil(_)) && pushed.get() == 0) {
                return futile_kernel;
            }
        }
        let Some(next) = r.next else { return futile_kernel };
        let (tb, te) = (obs[r.last].tick, obs[next].tick);
        let end_ns = t(te);
        if matches!(info.key, Key::Gil(_)) {
            // The GIL holder at the last waiting sample released it.
            let pid = run.threads[r.thread as usize].pid;
            let holder = run.samples[tb as usize].threads.iter().find(|o| o.gil && o.thread != r.thread && run.threads[o.thread as usize].pid == pid);
            if let Some(h) = holder {
                let handed = obs[next].ts.gil || obs[next].ts.state == ThreadState::Computing;
                push(h.thread, end_ns, Evidence::GilHolder, if handed { 0.9 } else { 0.6 }, false, WakeKind::Wake);
            }
            return futile_kernel;
        }
        // Same object: candidates touching the object at either sample (one entry per thread):
        // threads of the waiter's process (its objects are that process's: another process's
        // copy of a lock is another object) that are not themselves waiting then — a thread
        // blocked on this or any other object releases nothing. Waiting for the GIL is no such
        // block: a releaser often waits for it right after the release that woke the waiter.
        let pid = run.threads[r.thread as usize].pid;
        let blocked = |tick: u32, i: usize| waiting_at.get(tick, i).is_some_and(|x| !matches!(b.objects[x as usize].key, Key::Gil(_)));
        let weights = &mut scratch.weights;
        weights.clear();
        for tick in [tb, te] {
            for (i, o) in run.samples[tick as usize].threads.iter().enumerate() {
                if o.thread == r.thread || blocked(tick, i) || run.threads[o.thread as usize].pid != pid {
                    continue;
                }
                let w = o.stack.map_or(0, |st| touching.weight(&mut scratch.scope, st, r.obj, info));
                if w > 0 {
                    match weights.iter_mut().find(|e| e.0 == o.thread) {
                        Some(e) => e.1 += w,
                        None => weights.push((o.thread, w)),
                    }
                }
            }
        }
        if let Some(&(best, wb)) = weights.iter().max_by_key(|&&(th, w)| (w, std::cmp::Reverse(th))) {
            let total: u32 = weights.iter().map(|e| e.1).sum();
            let direct = if wb >= 2 { 0.9 } else { 0.7 };
            push(best, end_ns, Evidence::SameObject, direct * wb as f64 / total as f64, false, WakeKind::Wake);
            return futile_kernel;
        }
        // Running thread: the only other thread computing at those two samples (holding the
        // GIL, in a build that has one: a thread that is merely runnable cannot release anything).
        let running = &mut scratch.running;
        running.clear();
        for tick in [tb, te] {
            for (i, o) in run.samples[tick as usize].threads.iter().enumerate() {
                if o.thread != r.thread
                    && run.threads[o.thread as usize].pid == run.threads[r.thread as usize].pid
                    && o.state == ThreadState::Computing
                    && (o.gil || !gil_build)
                    && waiting_at.get(tick, i).is_none()
                    && !running.contains(&o.thread)
                {
                    running.push(o.thread);
                }
            }
        }
        if let [only] = running[..] {
            push(only, end_ns, Evidence::RunningThread, 0.5, false, WakeKind::Wake);
        }
        futile_kernel
    }
}

/// Sorts edges by time, then wakee, keeping the order they were found in among equals (a stable
/// sort): keys and indices are sorted, then the edges moved once.
fn sort_edges(edges: &mut [WakeEdge]) {
    let mut order: Vec<(f64, ThreadId, u32)> = edges.iter().enumerate().map(|(i, e)| (e.time_s, e.wakee_thread, i as u32)).collect();
    order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    // Position k takes the edge at `from[k]`: each cycle of the permutation is followed once,
    // swapping in place.
    let mut from: Vec<u32> = order.into_iter().map(|o| o.2).collect();
    const PLACED: u32 = u32::MAX;
    for start in 0..from.len() {
        let mut cur = start;
        while from[cur] != PLACED {
            let src = from[cur] as usize;
            from[cur] = PLACED;
            if src == start {
                break;
            }
            edges.swap(cur, src);
            cur = src;
        }
    }
}

/// Keeps what `opts` selects; object indices are kept stable (unselected objects stay listed
/// only when they are selected, so indices are remapped).
fn restrict(view: &mut WaitsView, opts: &WaitsOptions) {
    let needle = opts.object.as_deref().map(str::to_lowercase);
    let keep_obj: Vec<bool> = view
        .objects
        .iter()
        .map(|o| {
            needle.as_deref().is_none_or(|n| {
                o.object.to_lowercase().contains(n) || o.type_name.to_lowercase().contains(n) || o.name.as_deref().is_some_and(|x| x.to_lowercase().contains(n))
            }) && o.waits > 0
        })
        .collect();
    if opts.from_s.is_none() && opts.to_s.is_none() && keep_obj.iter().all(|&k| k) {
        return; // everything is kept, in place (times are never NaN)
    }
    let (from, to) = (opts.from_s.unwrap_or(f64::NEG_INFINITY), opts.to_s.unwrap_or(f64::INFINITY));
    let mut remap = vec![u32::MAX; view.objects.len()];
    let mut objects = Vec::new();
    for (i, o) in std::mem::take(&mut view.objects).into_iter().enumerate() {
        if keep_obj[i] {
            remap[i] = objects.len() as u32;
            objects.push(o);
        }
    }
    view.objects = objects;
    let mut iremap = vec![u32::MAX; view.intervals.len()];
    let mut intervals = Vec::new();
    for (i, mut iv) in std::mem::take(&mut view.intervals).into_iter().enumerate() {
        if remap[iv.object as usize] != u32::MAX && iv.end_s >= from && iv.start_s <= to {
            iv.object = remap[iv.object as usize];
            iremap[i] = intervals.len() as u32;
            intervals.push(iv);
        }
    }
    view.intervals = intervals;
    view.edges.retain_mut(|e| {
        let keep = iremap[e.interval as usize] != u32::MAX && e.time_s >= from && e.time_s <= to;
        e.interval = iremap[e.interval as usize];
        e.object_index = remap[e.object_index as usize];
        keep
    });
}

/// What a waited-on object is, for telling an exact lock hand-off from a wake-up.
fn object_kind(o: &ObjInfo) -> waits_locks::ObjectKind {
    let t = o.type_name.to_lowercase();
    if matches!(o.key, Key::Gil(_)) {
        waits_locks::ObjectKind::Gil
    } else if t.contains("lock") && !t.contains("condition") {
        waits_locks::ObjectKind::Lock
    } else {
        waits_locks::ObjectKind::Other
    }
}

fn evidence_notes(run: &Run, kernel: bool, no_kernel: bool, (exact, unseen): (usize, usize), task_edges: usize) -> EvidenceAvailable {
    let mut notes = Vec::new();
    if !crate::units::units_of(run).is_threads() {
        notes.push(format!(
            "{task_edges} awaits of one asyncio task on another or on asyncio's Event, Lock, Queue, Condition or Semaphore are edges: on a task with evidence task-state (the recorded task states say who awaited whom), on a primitive with evidence running-thread (the setter is inferred: the task the loop ran at the sample before the await ended, else at it); their times are the samples'"
        ));
    }
    if run.locks.is_some() {
        notes.push(format!(
            "{exact} exact lock hand-offs (record --exact-locks, evidence lock-event) are edges; {unseen} more ended waits no sample saw (shorter than a period) and are only in the hand-off table of `threadradar waits`"
        ));
    }
    let targets = has_targets(run);
    if !kernel {
        let rest = if run.locks.is_some() { "every edge but the exact lock hand-offs is inferred from the samples" } else { "every edge is inferred from the samples" };
        notes.push(if no_kernel {
            format!("kernel scheduler events were not used (--no-kernel): {rest}")
        } else {
            format!("no kernel scheduler events in this run (record with --sched where permitted): {rest}")
        });
    }
    if !targets {
        notes.push(format!(
            "no wait targets in this run (recorded by threadradar {} before they were recorded, or with --no-waits): objects are wait sites inferred from the stacks, so objects waited on at the same site are one",
            run.meta.threadradar_version
        ));
    }
    if let (true, Some(sched)) = (kernel, &run.sched) {
        if sched.lost_events > 0 {
            notes.push(format!("the kernel dropped {} scheduler events: some wake-ups have no edge", sched.lost_events));
        }
        if let Some(n) = &sched.note {
            notes.push(n.clone());
        }
    }
    if run.processes.len() > 1 {
        notes.push(format!(
            "{} processes: objects are per process, so a lock or semaphore shared between processes (multiprocessing) is listed once for each process that waited on it; {}",
            run.processes.len(),
            if kernel { "a waker in another process is named only by a kernel wake-up" } else { "wakers are inferred only within the waiter's process" }
        ));
    }
    if run.meta.started_at.is_none() {
        notes.push("no exact start time in this run: times cannot be lined up with the program's own log".to_string());
    }
    EvidenceAvailable { kernel, targets, notes }
}

/// The waiting radar of one object from each waiting thread's wait time on it: the threads
/// clustered (COP-KMeans, as the computing radars) by their share of the object's wait time.
fn waiting_radar(waited: &BTreeMap<ThreadId, f64>) -> Vec<GlyphCell> {
    let total: f64 = waited.values().sum();
    if total <= 0.0 {
        return Vec::new();
    }
    let ids: Vec<ThreadId> = waited.keys().copied().collect();
    let values: Vec<f64> = waited.values().map(|w| w / total).collect();
    match crate::analysis::clusters_of(crate::cluster::ClusterMethod::CopKMeans, &ids, &values) {
        Ok(clusters) => text_glyph(&clusters),
        Err(_) => Vec::new(), // only for non-finite values, which wait times are not
    }
}

fn has_targets(run: &Run) -> bool {
    !run.waits.is_empty()
}

/// The kernel's wake-ups per wakee thread, when the run recorded them. A tid names the thread of
/// the run that was alive at the event's time (the kernel reuses tids); wakers that are not
/// threads of the run (interrupts, other processes) are `None`.
fn kernel_wakeups(run: &Run) -> Option<KernelWakeups> {
    run.sched.as_ref()?;
    let thread_of = thread_of_tid(run);
    let mut outs = vec![Vec::new(); run.threads.len()];
    for s in &run.switches {
        if let Some(th) = thread_of(s.prev_tid, s.t) {
            outs[th as usize].push((s.t, s.prev_state != b'R'));
        }
    }
    let mut per = vec![Vec::new(); run.threads.len()];
    for w in &run.wakeups {
        let Some(wakee) = thread_of(w.wakee_tid, w.t) else { continue };
        let waker = thread_of(w.waker_tid, w.t).filter(|&x| x != wakee);
        per[wakee as usize].push((w.t, waker));
    }
    for v in &mut per {
        v.sort_by_key(|&(t, _)| t);
    }
    for v in &mut outs {
        v.sort_unstable();
    }
    Some(KernelWakeups { wakeups: per, switched_out: outs, has_switches: !run.switches.is_empty() })
}

/// The thread of the run that a kernel tid names at a time (the kernel reuses tids: the thread
/// alive then, give or take a second around its first and last samples); tid 0 (the idle task)
/// and tids of no thread of the run are `None`. Shared by every reader of scheduler events (the
/// exports' scheduler tracks too).
pub fn thread_of_tid(run: &Run) -> impl Fn(u32, u64) -> Option<ThreadId> + '_ {
    let mut by_tid: HashMap<u32, Vec<ThreadId>> = HashMap::new();
    // An asyncio task shown as a unit (`--units tasks`) shares its loop's tid: kernel events are
    // the thread's.
    for (i, th) in run.threads.iter().enumerate().filter(|(_, th)| !crate::units::is_task(th)) {
        by_tid.entry(th.tid).or_default().push(i as ThreadId);
    }
    let span = |th: ThreadId| {
        let t = &run.threads[th as usize];
        let at = |i: u32| run.samples.get(i as usize).map_or(0, |s| s.t);
        (at(t.first_sample), at(t.last_sample))
    };
    let slack = 1_000_000_000; // a thread lives up to a second beyond its first and last samples
    move |tid: u32, t: u64| -> Option<ThreadId> {
        if tid == 0 {
            return None;
        }
        let c = by_tid.get(&tid)?;
        if let [one] = c[..] {
            return Some(one);
        }
        c.iter().copied().find(|&th| {
            let (a, b) = span(th);
            t + slack >= a && t <= b + slack
        })
    }
}

/// Whether a stack's innermost frame takes a condition's lock: `with cond:`
/// (`Condition.__enter__`) or taking it back in `cond.wait()` (`Condition._acquire_restore`, the
/// Python version used for a plain `Lock`).
fn in_lock_frame(run: &Run, stack: StackId) -> bool {
    let Some(node) = run.stacks.get(stack as usize) else { return false };
    let func = &run.functions[run.frames[node.frame as usize].function as usize];
    matches!(run.str(func.qualname), "Condition.__enter__" | "Condition._acquire_restore") && run.file_path(func.file).ends_with("threading.py")
}

/// The futexes of the locks conditions are built on: the ones threads sleep on in a lock frame
/// ([`in_lock_frame`]), seen from at least two threads. With an `RLock` (the default), taking it
/// back inside `cond.wait()` is C code, so the waiting frame is `Condition.wait` as for the
/// condition itself, and only the futex tells the two apart: the condition's waiter lock is a
/// fresh one per wait, the condition's lock the same for everyone. (Two threads: from 3.13 a
/// thread sleeps on a futex of its own, whatever it waits for; those say nothing.)
fn lock_futexes(run: &Run) -> std::collections::HashSet<u64> {
    let mut seen: HashMap<u64, (ThreadId, bool)> = HashMap::new();
    for s in &run.samples {
        for ts in &s.threads {
            let (ThreadState::Idle, Some(stack)) = (ts.state, ts.stack) else { continue };
            let Some(f) = ts.wait.and_then(|w| run.waits.get(w as usize)).and_then(|w| w.futex) else { continue };
            if in_lock_frame(run, stack) {
                let e = seen.entry(f).or_insert((ts.thread, false));
                e.1 |= e.0 != ts.thread;
            }
        }
    }
    seen.into_iter().filter(|&(_, (_, many))| many).map(|(f, _)| f).collect()
}

/// Whether a waiting sample sleeps on the lock of a condition-like object rather than on the
/// object itself.
fn sleeps_on_lock(run: &Run, ts: &ThreadSample, locks: &std::collections::HashSet<u64>) -> bool {
    if ts.state != ThreadState::Idle {
        return false;
    }
    let Some(stack) = ts.stack else { return false };
    if in_lock_frame(run, stack) {
        return true;
    }
    // A known lock futex, slept on from inside the synchronisation module (the C `RLock` taken
    // back in `Condition.wait`); from the program's own `with lock:` the lock is what it waits for.
    let leaf = run.stacks.get(stack as usize).map(|n| &run.functions[run.frames[n.frame as usize].function as usize]);
    leaf.is_some_and(|f| run.file_path(f.file).ends_with("threading.py"))
        && ts.wait.and_then(|w| run.waits.get(w as usize)).and_then(|w| w.futex).is_some_and(|f| locks.contains(&f))
}

/// A stack's frame ids, innermost first.
fn frame_ids(run: &Run, stack: StackId) -> impl Iterator<Item = FrameId> + '_ {
    std::iter::successors(Some(stack), move |&s| run.stacks[s as usize].parent).map(move |s| run.stacks[s as usize].frame)
}

/// The depth (0 = outermost) of the innermost occurrence of `frame` in a stack.
fn depth_of(run: &Run, stack: StackId, frame: FrameId) -> Option<usize> {
    let mut found = None;
    let mut len = 0;
    for (i, f) in frame_ids(run, stack).enumerate() {
        if found.is_none() && f == frame {
            found = Some(i);
        }
        len = i + 1;
    }
    Some(len - 1 - found?)
}

/// The function of the frame at `depth` (0 = outermost) of a stack.
fn function_at_depth(run: &Run, stack: StackId, depth: usize) -> Option<u32> {
    let len = frame_ids(run, stack).count();
    let i = len.checked_sub(1 + depth)?;
    frame_ids(run, stack).nth(i).map(|f| run.frames[f as usize].function)
}

/// Each thread's observation times, for finding the observation nearest a time: a binary
/// search, begun (when the thread's times are in order, as a recorded run's are) from where the
/// searcher's last search of that thread ended (`cursor`), since edges come roughly in time order
/// per wakee.
struct Times {
    times: Vec<Vec<u64>>,
    sorted: Vec<bool>,
}

impl Times {
    fn new(run: &Run, per_thread: &[Vec<Obs>]) -> Self {
        let times: Vec<Vec<u64>> = per_thread.iter().map(|obs| obs.iter().map(|o| run.samples[o.tick as usize].t).collect()).collect();
        let sorted = times.iter().map(|t| t.windows(2).all(|w| w[0] <= w[1])).collect();
        Times { times, sorted }
    }

    /// `times[th].partition_point(|&t| t < t_ns)`.
    fn first_not_before(&self, cursor: &mut [usize], th: usize, t_ns: u64) -> usize {
        let times = &self.times[th];
        if !self.sorted[th] {
            return times.partition_point(|&t| t < t_ns);
        }
        // Gallop from the last answer to a range that holds the partition point, then search it.
        let from = cursor[th].min(times.len());
        let (mut lo, mut hi);
        if from < times.len() && times[from] < t_ns {
            let mut step = 1;
            lo = from + 1;
            hi = from + 1;
            while hi < times.len() && times[hi] < t_ns {
                lo = hi + 1;
                hi = (hi + step).min(times.len());
                step *= 2;
            }
        } else {
            let mut step = 1;
            hi = from;
            lo = from;
            while lo > 0 && times[lo - 1] >= t_ns {
                hi = lo - 1;
                lo = lo.saturating_sub(step);
                step *= 2;
            }
        }
        let i = lo + times[lo..hi].partition_point(|&t| t < t_ns);
        cursor[th] = i;
        i
    }
}

/// The waiting frame of a thread's observation nearest `t_ns`: the first at or after it, or the
/// one before.
fn nearest_frame(obs: &[Obs], times: &Times, cursor: &mut [usize], th: ThreadId, t_ns: u64) -> Option<FrameId> {
    let i = times.first_not_before(cursor, th as usize, t_ns);
    let times = &times.times[th as usize];
    let cand = [i.checked_sub(1), (i < obs.len()).then_some(i)];
    let best = cand.into_iter().flatten().min_by_key(|&k| times[k].abs_diff(t_ns))?;
    obs[best].frame
}

/// What each listed thread of each tick waited on, parallel to the tick's `threads`.
struct WaitingAt {
    /// Where each tick's entries begin in `obj` (and, last, the end of the last tick's).
    start: Vec<usize>,
    obj: Vec<Option<u32>>,
}

impl WaitingAt {
    fn with_capacity(ticks: usize, listed: usize) -> Self {
        WaitingAt { start: Vec::with_capacity(ticks + 1), obj: Vec::with_capacity(listed) }
    }

    /// The object the `i`-th thread listed at `tick` waited on.
    fn get(&self, tick: u32, i: usize) -> Option<u32> {
        self.obj[self.start[tick as usize] + i]
    }

    /// A thread listed twice in one tick waited, for the others, on what its last listing says.
    fn last_listing_wins(&mut self, tick: usize, threads: &[ThreadSample]) {
        let base = self.start[tick];
        for i in 0..threads.len() {
            if let Some(last) = (i..threads.len()).rev().find(|&j| threads[j].thread == threads[i].thread) {
                self.obj[base + i] = self.obj[base + last];
            }
        }
    }
}

/// A small, fast hash for the integer keys of this module's lookups (FxHash's multiply-rotate).
#[derive(Clone, Copy, Default)]
struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(b as u64);
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.add(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.add(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    fn write_isize(&mut self, n: isize) {
        self.add(n as u64);
    }
}

impl FastHasher {
    fn add(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

fn location(run: &Run, f: FrameId) -> Location {
    let fr = &run.frames[f as usize];
    let func = &run.functions[fr.function as usize];
    Location { file: run.file_path(func.file).to_string(), line: fr.line, function: run.str(func.qualname).to_string() }
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

#[cfg(test)]
mod tests {
    use super::*;
    use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
    use threadradar_profiler::run::{Meta, Sample, SchedInfo, WaitTarget};

    /// A thread first sampled waiting on a socket before its stack shows the program's code (a
    /// thread caught starting: only `Thread.run`) must not make `Thread.run` the socket's site:
    /// every thread is in it, and a thread asleep in its own loop would be credited with the
    /// wake-up (seen on CI: `releaser-socket` credited with each of the TCP waiter's ends). The
    /// socket's site is `Handoff.wait`, and the thread in `Handoff.release` woke it.
    #[test]
    fn a_wait_first_seen_without_the_programs_code_takes_its_site_from_a_later_sample() {
        let mut b = RunBuilder::new(Meta { interval_ms: 2.0, cwd: "/p".into(), ..Meta::default() });
        let (prog, lib) = (b.file("/p/prog.py", FileKind::User, None), b.file("/usr/lib/python3.11/threading.py", FileKind::Stdlib, None));
        let func = |b: &mut RunBuilder, file, qualname: &str, class: Option<&str>, line: u32| {
            let f = b.function(file, &FunctionSpec { qualname, class, line, end_line: line + 5, class_line: 0 });
            b.frame(f, line + 1)
        };
        let run_f = func(&mut b, lib, "Thread.run", Some("Thread"), 990);
        let (waiter, wait) = (func(&mut b, prog, "waiter", None, 1), func(&mut b, prog, "Handoff.wait", Some("Handoff"), 10));
        let (releaser, release) = (func(&mut b, prog, "releaser", None, 20), func(&mut b, prog, "Handoff.release", Some("Handoff"), 30));
        let sleeper = func(&mut b, prog, "sleeper", None, 40);
        // The sleeper comes first, so a tie between it and the releaser would go its way.
        for (t, name) in ["waiter", "sleeper", "releaser"].iter().enumerate() {
            b.thread(new_thread(1, 10 + t as u32, t as u64, name, "Thread"));
        }
        let (recv, nanosleep) = (b.string("recvfrom"), b.string("clock_nanosleep"));
        let socket = b.string("socket:[77]");
        let target = b.wait(WaitTarget { syscall: recv, fd: Some(3), fd_target: Some(socket), ..WaitTarget::default() });
        let starting = b.stack(&[run_f]);
        let (waiting, woken) = (b.stack(&[run_f, waiter, wait]), b.stack(&[run_f, waiter]));
        let (asleep, releasing) = (b.stack(&[run_f, sleeper]), b.stack(&[run_f, releaser, release]));
        let idle = |thread, stack, blocked, wait| ThreadSample { thread, stack, state: ThreadState::Idle, blocked: Some(blocked), wait, ..Default::default() };
        for k in 0..8u32 {
            let w = match k {
                0 => idle(0, starting, recv, Some(target)),
                1..=5 => idle(0, waiting, recv, Some(target)),
                _ => ThreadSample { thread: 0, stack: woken, state: ThreadState::Computing, gil: true, ..Default::default() },
            };
            let r = match k {
                5..=6 => ThreadSample { thread: 2, stack: releasing, state: ThreadState::Computing, gil: k == 5, ..Default::default() },
                _ => idle(2, b.stack(&[run_f, releaser]), nanosleep, None),
            };
            b.push_sample(Sample { t: k as u64 * 2_000_000, threads: vec![w, idle(1, asleep, nanosleep, None), r] });
        }
        let run = b.finish();
        let view = waits(&run, &WaitsOptions::default());
        let socket = view.objects.iter().position(|o| o.object.contains("socket:[77]")).expect("the socket") as u32;
        let edges: Vec<(&str, Evidence)> = view.edges.iter().filter(|e| e.object_index == socket).map(|e| (e.waker.as_str(), e.evidence)).collect();
        assert_eq!(edges, [("releaser", Evidence::SameObject)], "{:?}", view.edges);
        // One wait from the first sample to the wake-up, at the program's line.
        let on_socket: Vec<_> = view.intervals.iter().filter(|i| i.object == socket).collect();
        assert_eq!(on_socket.len(), 1, "{on_socket:?}");
        let (i, site) = (on_socket[0], on_socket[0].frame.as_ref().expect("a site"));
        assert_eq!((i.start_s, i.end_s, site.function.as_str()), (0.0, 0.012, "Handoff.wait"));
    }

    /// A thread's reading and the kernel's events about it disagree for a few microseconds
    /// (seen on CI in `for t in workers: t.join()`): read inside the blocking call just before
    /// it switched out, read runnable just before its wake-up's event, read still asleep just
    /// after it. The waits' ends are still the kernel's, and each wake-up is the edge of the
    /// wait it ended.
    #[test]
    fn kernel_ends_survive_readings_a_few_microseconds_off_the_events() {
        let mut b = RunBuilder::new(Meta { interval_ms: 2.0, cwd: "/p".into(), ..Meta::default() });
        let prog = b.file("/p/prog.py", FileKind::User, None);
        let func = |b: &mut RunBuilder, qualname: &str, line: u32| {
            let f = b.function(prog, &FunctionSpec { qualname, class: None, line, end_line: line + 5, class_line: 0 });
            b.frame(f, line + 1)
        };
        let (main, first, second, worker) = (func(&mut b, "main", 1), func(&mut b, "first", 10), func(&mut b, "second", 20), func(&mut b, "work", 30));
        b.thread(new_thread(1, 10, 1, "MainThread", "_MainThread"));
        b.thread(new_thread(1, 11, 2, "worker", "Thread"));
        let (recv, futex) = (b.string("recvfrom"), b.string("futex"));
        let (sock_a, sock_b) = (b.string("socket:[1]"), b.string("socket:[2]"));
        let a = b.wait(WaitTarget { syscall: recv, fd: Some(3), fd_target: Some(sock_a), ..WaitTarget::default() });
        let c = b.wait(WaitTarget { syscall: recv, fd: Some(4), fd_target: Some(sock_b), ..WaitTarget::default() });
        let (in_first, in_second, running) = (b.stack(&[main, first]), b.stack(&[main, second]), b.stack(&[main]));
        let working = b.stack(&[worker]);
        let ms = |x: f64| (x * 1e6).round() as u64;
        for k in 0..7u32 {
            let t = ms(1.0 + 2.0 * k as f64);
            let m = match k {
                0 | 1 => ThreadSample { thread: 0, stack: in_first, state: ThreadState::Idle, blocked: Some(recv), wait: Some(a), ..Default::default() },
                4 | 5 => ThreadSample { thread: 0, stack: in_second, state: ThreadState::Idle, blocked: Some(recv), wait: Some(c), ..Default::default() },
                _ => ThreadSample { thread: 0, stack: running, state: ThreadState::Computing, gil: true, ..Default::default() },
            };
            let w = ThreadSample { thread: 1, stack: working, state: ThreadState::Idle, blocked: Some(futex), ..Default::default() };
            b.push_sample(Sample { t, threads: vec![m, w] });
        }
        let mut run = b.finish();
        run.sched = Some(SchedInfo::default());
        let (s, r) = (b'S', b'R');
        run.switches = vec![
            // Read in the call at 1 ms, asleep 3 µs later.
            (ms(1.003), 10, s, 0).into(),
            // Read running at 5 ms: its wake-up's event says 2 µs later.
            (ms(5.010), 0, r, 10).into(),
            (ms(8.5), 10, s, 0).into(),
            // Read still asleep at 11 ms, woken 100 µs before.
            (ms(11.05), 0, r, 10).into(),
        ];
        run.wakeups = vec![(ms(5.002), 11, 10).into(), (ms(10.9), 11, 10).into()];
        let view = waits(&run, &WaitsOptions::default());
        let ends: Vec<(f64, f64, bool, bool)> = view.intervals.iter().filter(|i| i.thread == 0).map(|i| (i.start_s, i.end_s, i.kernel_start, i.kernel_end)).collect();
        assert_eq!(ends, [(0.001003, 0.005002, true, true), (0.0085, 0.0109, true, true)], "{:?}", view.intervals);
        let edges: Vec<(u32, f64, &str)> = view.edges.iter().map(|e| (e.interval, e.time_s, e.waker.as_str())).collect();
        assert_eq!(edges, [(0, 0.005002, "worker"), (1, 0.0109, "worker")]);
    }
}
