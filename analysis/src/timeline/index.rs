//! The timeline's index: per thread, the icicle's bars and the state runs, built once per run.
//!
//! # Bars
//!
//! A bar is a maximal run of one thread's consecutive samples whose stacks have the same function
//! at the same depth (depth 0 = the outermost frame) under the same bars above it — an icicle:
//! when a caller's bar ends, its callees' bars end too. Its `start` is the tick of its first
//! sample and its `end` the tick after its last one, so a bar covers the sampling intervals of its
//! samples. The line shown is the one executed at the bar's first sample.
//!
//! **Gap tolerance:** a thread that is missing from at most [`TOLERATED_MISSED_TICKS`] consecutive
//! ticks (its observation was skipped because it could not be read) keeps its bars across the gap
//! if the samples on both sides agree; a longer absence ends every bar at the tick after the last
//! sample (a task unit's lane bridges no tick: a tick without the task is one at which its
//! thread ran something else, `timeline/tasks.rs`). Ticks the sampler itself skipped are not missing samples: they show as a longer interval
//! between two ticks, which the bar covers as every view of the run does.
//!
//! A bar's **state** is the state of the majority of its samples (ties: computing, then GIL, then
//! idle), with the blocking kind seen most often in those samples. The lanes' underlay shows the
//! exact per-sample states as [`StateRun`]s.
//!
//! # Blocking kinds
//!
//! The run records the blocking system call of an idle thread (`futex`, `clock_nanosleep`, `read`,
//! …). `futex` alone cannot tell a lock from a condition or a queue, so the innermost Python frames
//! decide, where they say so: inside `queue.py` → queue; inside `threading.py`'s `Condition`,
//! `Event`, `Semaphore` or `Barrier` → condition; `Thread.join` → join; otherwise → lock (a
//! `Lock.acquire` is C code, invisible on the Python stack).

use super::lod::RowLod;
use super::TimelineError;
use serde::Serialize;
use std::sync::{Arc, Mutex};
use threadradar_profiler::run::{FileKind, FrameId, FunctionId, Run, StackId, ThreadId, ThreadSample, ThreadState};

/// How many consecutive ticks a thread may be missing from without its bars being split.
pub const TOLERATED_MISSED_TICKS: u32 = 1;

/// What a thread was doing, as the timeline shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum BarState {
    Computing,
    /// Waiting to take the GIL.
    Gil,
    /// Sleeping or blocked (see [`BlockedKind`]).
    Idle,
}

impl BarState {
    fn of(s: ThreadState) -> BarState {
        match s {
            ThreadState::Computing => BarState::Computing,
            ThreadState::Gil => BarState::Gil,
            ThreadState::Idle => BarState::Idle,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            BarState::Computing => "computing",
            BarState::Gil => "gil",
            BarState::Idle => "idle",
        }
    }
    const ALL: [BarState; 3] = [BarState::Computing, BarState::Gil, BarState::Idle];
}

/// What an idle thread was blocked in, or the I/O a computing thread was in (see the module docs
/// for how it is inferred).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum BlockedKind {
    Lock,
    Condition,
    Queue,
    Join,
    Sleep,
    Io,
    /// Waiting for a child process.
    Process,
    /// Another system call.
    Other,
}

impl BlockedKind {
    const ALL: [BlockedKind; 8] = [
        BlockedKind::Lock,
        BlockedKind::Condition,
        BlockedKind::Queue,
        BlockedKind::Join,
        BlockedKind::Sleep,
        BlockedKind::Io,
        BlockedKind::Process,
        BlockedKind::Other,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            BlockedKind::Lock => "lock",
            BlockedKind::Condition => "condition",
            BlockedKind::Queue => "queue",
            BlockedKind::Join => "join",
            BlockedKind::Sleep => "sleep",
            BlockedKind::Io => "io",
            BlockedKind::Process => "process",
            BlockedKind::Other => "other",
        }
    }
    fn code(k: Option<BlockedKind>) -> u32 {
        k.map_or(0, |k| k as u32 + 1)
    }
    fn from_code(c: u32) -> Option<BlockedKind> {
        BlockedKind::ALL.get((c as usize).wrapping_sub(1)).copied()
    }
}

const FRAME_BITS: u32 = 25;
const FRAME_MASK: u32 = (1 << FRAME_BITS) - 1;
/// Bits of a tick in a [`Bar`]: runs of up to 268 435 455 samples (74 hours at 1 kHz).
const TICK_BITS: u32 = 28;
/// The most ticks a run may have to be indexed.
pub const MAX_TICKS: usize = (1 << TICK_BITS) - 1;
const TICK_MASK: u64 = (1 << TICK_BITS) - 1;

/// One bar of a thread's icicle: 11 bytes, alignment 1, because a run of a million
/// thread-samples can have twelve million of them (the worst case of `benches/timeline.rs`).
/// Times are tick indices into [`TimelineIndex::times`].
///
/// Layout (little-endian): bytes 0–6 hold the start tick (28 bits) and the end tick (28 bits);
/// bytes 7–10 hold frame (25 bits) | state (2) | blocked kind (4) | folded (1).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Bar {
    bytes: [u8; 11],
}

impl Bar {
    fn new(start: u32, end: u32, frame: FrameId, state: BarState, blocked: Option<BlockedKind>, folded: bool) -> Bar {
        debug_assert!(start as u64 <= TICK_MASK && end as u64 <= TICK_MASK);
        let packed = frame | (state as u32) << FRAME_BITS | BlockedKind::code(blocked) << (FRAME_BITS + 2) | (folded as u32) << 31;
        let ticks = (start as u64 & TICK_MASK) | (end as u64 & TICK_MASK) << TICK_BITS;
        let mut bytes = [0u8; 11];
        bytes[..7].copy_from_slice(&ticks.to_le_bytes()[..7]);
        bytes[7..].copy_from_slice(&packed.to_le_bytes());
        Bar { bytes }
    }
    #[inline]
    fn ticks(&self) -> u64 {
        let mut b = [0u8; 8];
        b[..7].copy_from_slice(&self.bytes[..7]);
        u64::from_le_bytes(b)
    }
    #[inline]
    fn packed(&self) -> u32 {
        u32::from_le_bytes([self.bytes[7], self.bytes[8], self.bytes[9], self.bytes[10]])
    }
    /// Tick of the first sample.
    #[inline]
    pub fn start(&self) -> u32 {
        (self.ticks() & TICK_MASK) as u32
    }
    /// Tick after the last sample (exclusive).
    #[inline]
    pub fn end(&self) -> u32 {
        (self.ticks() >> TICK_BITS) as u32
    }
    /// The frame (function and line) of the bar's first sample.
    pub fn frame(&self) -> FrameId {
        self.packed() & FRAME_MASK
    }
    pub fn state(&self) -> BarState {
        BarState::ALL[((self.packed() >> FRAME_BITS) & 3) as usize]
    }
    pub fn blocked(&self) -> Option<BlockedKind> {
        BlockedKind::from_code((self.packed() >> (FRAME_BITS + 2)) & 15)
    }
    /// Whether the bar stands for a band of folded standard-library frames.
    pub fn folded(&self) -> bool {
        self.packed() >> 31 != 0
    }
}

impl std::fmt::Debug for Bar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bar")
            .field("start", &self.start())
            .field("end", &self.end())
            .field("frame", &self.frame())
            .field("state", &self.state())
            .field("blocked", &self.blocked())
            .field("folded", &self.folded())
            .finish()
    }
}

/// A maximal run of one thread's samples in the same state and blocking kind (the lane underlay).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateRun {
    pub start: u32,
    pub end: u32,
    pub state: BarState,
    pub blocked: Option<BlockedKind>,
}

/// One thread's icicle.
#[derive(Clone, Debug, Default)]
pub struct Lane {
    pub thread: ThreadId,
    /// `rows[depth]`: the bars at that depth, ascending and non-overlapping.
    pub rows: Vec<Vec<Bar>>,
    /// `lod[depth]`: the level-of-detail index of `rows[depth]` (see [`super::lod`]).
    pub lod: Vec<RowLod>,
    pub states: Vec<StateRun>,
    /// Every tick at which one of the lane's bars starts or ends, ascending: the lane's events for
    /// the merged axis.
    pub boundaries: Vec<u32>,
    /// Samples of the thread.
    pub samples: u32,
    /// Samples of the thread in the computing state (`frq(th)` of Eq. 3 with the default states).
    pub computing: u32,
}

impl Lane {
    /// Number of bars at all depths.
    pub fn bar_count(&self) -> usize {
        self.rows.iter().map(Vec::len).sum()
    }
}

/// One set of lanes, one per thread of the run, indexed by thread id.
pub type Lanes = Arc<Vec<Lane>>;

/// The index may hold at most this many times the run's in-memory size ([`run_heap_bytes`]).
pub const MEMORY_BUDGET: usize = 3;

/// The bars and state runs of every thread of one run.
///
/// Built once per run (`new`); the layout of any viewport reads it. With stack folding of
/// standard-library frames the bars differ, so that second set of lanes is built on first use.
/// Both sets are kept while together they stay within [`MEMORY_BUDGET`] × the run's size; on a run
/// whose bars are too many for that, building one set drops the other, so switching folding on or
/// off costs one build of the lanes (see `docs/benchmarks.md`, "Memory with standard-library
/// folding"). The figures that do not depend on folding (a lane's thread, samples, computing
/// samples and state runs) are the same in both sets: [`TimelineIndex::any_lanes`].
#[derive(Debug)]
pub struct TimelineIndex {
    /// `times[k]` = nanoseconds from the run's start of tick `k`; one extra entry closes the last
    /// tick's interval (the last tick + one sampling period).
    pub times: Vec<u64>,
    /// The run's sampling period ([`crate::period`]), used for the last tick, ns.
    pub period_ns: u64,
    /// `[unfolded, standard-library folded]`.
    sets: Mutex<[Option<Lanes>; 2]>,
    /// [`MEMORY_BUDGET`] × the run's in-memory size.
    budget_bytes: usize,
    /// How many lane sets have been built (1 after `new`).
    builds: std::sync::atomic::AtomicU32,
}

impl TimelineIndex {
    /// Indexes a run. `run` must have passed [`Run::validate`] (an [`crate::Analysis`] of it exists
    /// or `runfile::read` returned it).
    pub fn new(run: &Run) -> Result<TimelineIndex, TimelineError> {
        if run.frames.len() > FRAME_MASK as usize {
            return Err(TimelineError::TooManyFrames(run.frames.len()));
        }
        if run.samples.len() > MAX_TICKS {
            return Err(TimelineError::TooManyTicks(run.samples.len()));
        }
        let period_ns = crate::period::sampling_period_ns(run);
        let mut times: Vec<u64> = run.samples.iter().map(|s| s.t).collect();
        times.push(times.last().map_or(0, |&t| t + period_ns));
        let lanes = Arc::new(with_lod(build_lanes(run, false), &times));
        Ok(TimelineIndex {
            times,
            period_ns,
            sets: Mutex::new([Some(lanes), None]),
            budget_bytes: MEMORY_BUDGET.saturating_mul(run_heap_bytes(run)),
            builds: std::sync::atomic::AtomicU32::new(1),
        })
    }

    /// The unfolded lanes (`run` must be the indexed run).
    pub fn lanes(&self, run: &Run) -> Lanes {
        self.lanes_for(run, false)
    }

    /// The lanes, with standard-library frames folded into one band per run of consecutive
    /// standard-library frames when `fold_stdlib` (`run` must be the indexed run). A set that is not
    /// held is built here; if the set held already is more than half the budget, it is dropped
    /// first (a folded set is never larger than the unfolded one: folding only merges bars).
    pub fn lanes_for(&self, run: &Run, fold_stdlib: bool) -> Lanes {
        let i = fold_stdlib as usize;
        {
            let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(l) = &sets[i] {
                return l.clone();
            }
            if let Some(other) = &sets[1 - i] {
                if self.times.capacity() * 8 + 2 * lanes_heap_bytes(other) > self.budget_bytes {
                    sets[1 - i] = None;
                }
            }
        }
        // Built without the lock: the build runs on rayon, whose workers may take another request's
        // job that asks for lanes too.
        let built = Arc::new(with_lod(build_lanes(run, fold_stdlib), &self.times));
        self.builds.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        sets[i].get_or_insert(built).clone()
    }

    /// A set of lanes for the figures that are the same with and without folding (a lane's
    /// thread, samples, computing samples and state runs): the set held, else the unfolded one.
    pub fn any_lanes(&self, run: &Run) -> Lanes {
        let held = {
            let sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
            sets.iter().flatten().next().cloned()
        };
        held.unwrap_or_else(|| self.lanes(run))
    }

    /// How many sets of lanes have been built since `new` (1 after it).
    pub fn builds(&self) -> u32 {
        self.builds.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Number of ticks (samples of the run).
    pub fn ticks(&self) -> usize {
        self.times.len() - 1
    }

    /// Seconds from the first tick to the end of the last one.
    pub fn duration_s(&self) -> f64 {
        super::secs(self.end_ns())
    }

    /// The end of the last tick's interval, ns from the run's start.
    pub fn end_ns(&self) -> u64 {
        if self.ticks() == 0 {
            0
        } else {
            *self.times.last().unwrap()
        }
    }

    /// The first tick whose time is ≥ `ns`.
    pub fn tick_at(&self, ns: u64) -> u32 {
        self.times[..self.ticks()].partition_point(|&t| t < ns) as u32
    }

    /// Heap bytes held by the index (for the memory budget in `docs/benchmarks.md`).
    pub fn heap_bytes(&self) -> usize {
        let sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        self.times.capacity() * 8 + sets.iter().flatten().map(|l| lanes_heap_bytes(l)).sum::<usize>()
    }
}

/// Heap bytes of one set of lanes.
fn lanes_heap_bytes(lanes: &[Lane]) -> usize {
    lanes
        .iter()
        .map(|l| {
            l.rows.capacity() * std::mem::size_of::<Vec<Bar>>()
                + l.rows.iter().map(|r| r.capacity() * std::mem::size_of::<Bar>()).sum::<usize>()
                + l.states.capacity() * std::mem::size_of::<StateRun>()
                + l.boundaries.capacity() * 4
                + l.lod.capacity() * std::mem::size_of::<RowLod>()
                + l.lod.iter().map(RowLod::heap_bytes).sum::<usize>()
        })
        .sum::<usize>()
        + std::mem::size_of_val(lanes)
}

/// The run's in-memory size: its samples, stacks, frames, functions, strings and threads (what the
/// index's memory budget is measured against).
pub fn run_heap_bytes(run: &Run) -> usize {
    use std::mem::size_of;
    use threadradar_profiler::run as r;
    run.samples.iter().map(|s| size_of::<r::Sample>() + s.threads.capacity() * size_of::<ThreadSample>()).sum::<usize>()
        + run.stacks.capacity() * size_of::<r::StackNode>()
        + run.frames.capacity() * size_of::<r::Frame>()
        + run.functions.capacity() * size_of::<r::Function>()
        + run.strings.iter().map(|s| s.capacity() + size_of::<String>()).sum::<usize>()
        + run.threads.capacity() * size_of::<r::Thread>()
}

/// One element of a sample's path (root first): the function that keys the bar, the frame shown.
#[derive(Clone, Copy, PartialEq, Eq)]
struct PathElem {
    function: FunctionId,
    frame: FrameId,
    folded: bool,
}

/// Per distinct stack, computed once: its root-first path and what a `futex` wait in it is.
struct Paths<'r> {
    run: &'r Run,
    fold_stdlib: bool,
    slot_of: Vec<u32>,
    spans: Vec<(u32, u32, Option<BlockedKind>)>,
    elems: Vec<PathElem>,
    scratch: Vec<FrameId>,
}

const NONE: u32 = u32::MAX;

impl<'r> Paths<'r> {
    fn new(run: &'r Run, fold_stdlib: bool) -> Self {
        Paths { run, fold_stdlib, slot_of: vec![NONE; run.stacks.len()], spans: Vec::new(), elems: Vec::new(), scratch: Vec::new() }
    }

    fn get(&mut self, stack: StackId) -> (&[PathElem], Option<BlockedKind>) {
        let mut slot = self.slot_of[stack as usize];
        if slot == NONE {
            slot = self.spans.len() as u32;
            self.slot_of[stack as usize] = slot;
            let run = self.run;
            self.scratch.clear();
            let mut s = Some(stack);
            while let Some(id) = s {
                let node = &run.stacks[id as usize];
                self.scratch.push(node.frame);
                s = node.parent;
            }
            let a = self.elems.len() as u32;
            for &frame in self.scratch.iter().rev() {
                let function = run.frames[frame as usize].function;
                let stdlib = self.fold_stdlib && run.files[run.functions[function as usize].file as usize].kind == FileKind::Stdlib;
                if stdlib && self.elems.len() as u32 > a && self.elems.last().unwrap().folded {
                    continue; // part of the band the outermost standard-library frame opened
                }
                self.elems.push(PathElem { function, frame, folded: stdlib });
            }
            let wait = futex_kind(run, &self.scratch);
            self.spans.push((a, self.elems.len() as u32, wait));
        }
        let (a, b, wait) = self.spans[slot as usize];
        (&self.elems[a as usize..b as usize], wait)
    }
}

/// What a `futex` wait is, from the innermost Python frames (innermost first): the outermost
/// standard-library frame that says, below the program's own code. `Queue.get` waits in
/// `Condition.wait` (`self.not_empty.wait()`), `Event.wait` too, and `Thread.join` in
/// `_wait_for_tstate_lock`: the wait is the queue's, the event's, the join's — what the program
/// called —, not the inner frame's.
fn futex_kind(run: &Run, frames_innermost_first: &[FrameId]) -> Option<BlockedKind> {
    let mut kind = None;
    for &frame in frames_innermost_first.iter().take(8) {
        let f = &run.functions[run.frames[frame as usize].function as usize];
        let path = run.file_path(f.file);
        let qual = run.str(f.qualname);
        if path.ends_with("/queue.py") {
            kind = Some(BlockedKind::Queue);
            continue;
        }
        if path.ends_with("/threading.py") {
            if ["Condition.", "Event.", "Semaphore.", "BoundedSemaphore.", "Barrier."].iter().any(|p| qual.starts_with(p)) {
                kind = Some(BlockedKind::Condition);
            } else if qual == "Thread.join" || qual == "Thread._wait_for_tstate_lock" {
                kind = Some(BlockedKind::Join);
            }
            continue;
        }
        if run.files[f.file as usize].kind != FileKind::Stdlib {
            break;
        }
    }
    kind.or(Some(BlockedKind::Lock))
}

/// The state and blocking kind of one observation.
fn classify(run: &Run, ts: &ThreadSample, futex: Option<BlockedKind>) -> (BarState, Option<BlockedKind>) {
    let state = BarState::of(ts.state);
    let name = ts.blocked.map(|b| run.str(b));
    let kind = match (state, name) {
        (BarState::Gil, _) | (_, None) => None,
        (_, Some("futex")) => futex.or(Some(BlockedKind::Lock)),
        (_, Some("nanosleep" | "clock_nanosleep" | "pause")) => Some(BlockedKind::Sleep),
        (_, Some("wait4" | "waitid")) => Some(BlockedKind::Process),
        (_, Some("kernel" | "GIL")) => None,
        (
            _,
            Some(
                "disk I/O" | "read" | "write" | "pread64" | "poll" | "ppoll" | "select" | "pselect6" | "epoll_wait" | "epoll_pwait"
                | "epoll_pwait2" | "accept" | "accept4" | "connect" | "recvfrom" | "recvmsg" | "sendto" | "sendmsg",
            ),
        ) => Some(BlockedKind::Io),
        (BarState::Computing, Some(_)) => None,
        (_, Some(_)) => Some(BlockedKind::Other),
    };
    (state, kind)
}

/// A bar being extended: its start, frame, function and the counts of its samples' states and
/// kinds. GIL samples have no kind and computing ones only I/O, so per state: samples, idle
/// samples per kind (code 0 = none), and computing samples in I/O.
struct Open {
    start: u32,
    function: FunctionId,
    frame: FrameId,
    folded: bool,
    states: [u32; 3],
    idle_kinds: [u32; 9],
    computing_io: u32,
}

impl Open {
    fn new(start: u32, p: &PathElem) -> Open {
        Open { start, function: p.function, frame: p.frame, folded: p.folded, states: [0; 3], idle_kinds: [0; 9], computing_io: 0 }
    }

    #[inline]
    fn add(&mut self, state: BarState, kind: u32) {
        self.states[state as usize] += 1;
        match state {
            BarState::Idle => self.idle_kinds[kind as usize] += 1,
            BarState::Computing => self.computing_io += (kind != 0) as u32,
            BarState::Gil => {}
        }
    }

    fn close(&self, end: u32) -> Bar {
        // Majority state (ties: computing, GIL, idle), then that state's most frequent kind.
        let s = (0..3).max_by_key(|&s| (self.states[s], std::cmp::Reverse(s))).unwrap_or(0);
        let kind = match BarState::ALL[s] {
            BarState::Idle => (0..9).max_by_key(|&k| (self.idle_kinds[k], std::cmp::Reverse(k))).unwrap_or(0) as u32,
            BarState::Computing if self.computing_io * 2 > self.states[0] => BlockedKind::code(Some(BlockedKind::Io)),
            _ => 0,
        };
        Bar::new(self.start, end, self.frame, BarState::ALL[s], BlockedKind::from_code(kind), self.folded)
    }
}

/// Adds each row's level-of-detail index (lanes in parallel).
fn with_lod(mut lanes: Vec<Lane>, times: &[u64]) -> Vec<Lane> {
    use rayon::prelude::*;
    lanes.par_iter_mut().for_each(|l| l.lod = l.rows.iter().map(|r| RowLod::new(r, times)).collect());
    lanes
}

/// Builds every thread's lane. Threads are independent, so they are split into one group per
/// core, each group scanning the samples for its own threads.
fn build_lanes(run: &Run, fold_stdlib: bool) -> Vec<Lane> {
    use rayon::prelude::*;
    let n = run.threads.len();
    let groups = rayon::current_num_threads().clamp(1, n.max(1));
    let mut lanes: Vec<Lane> = (0..groups)
        .into_par_iter()
        .flat_map_iter(|g| build_lanes_of(run, fold_stdlib, |th| th as usize % groups == g))
        .collect();
    lanes.sort_unstable_by_key(|l| l.thread);
    lanes
}

fn build_lanes_of(run: &Run, fold_stdlib: bool, mine: impl Fn(ThreadId) -> bool) -> Vec<Lane> {
    struct Builder {
        lane: Lane,
        open: Vec<Open>,
        last_tick: Option<u32>,
        state: Option<StateRun>,
        /// Missed ticks bridged: none for a task unit (a tick without it is one at which its
        /// thread ran something else, timeline/tasks.rs).
        tolerance: u32,
    }
    impl Builder {
        /// Notes an event of the lane at tick `k` (ticks arrive in ascending order).
        fn boundary(&mut self, k: u32) {
            if self.lane.boundaries.last() != Some(&k) {
                self.lane.boundaries.push(k);
            }
        }
        fn close_from(&mut self, depth: usize, end: u32) {
            if self.open.len() > depth {
                self.boundary(end);
            }
            while self.open.len() > depth {
                let o = self.open.pop().unwrap();
                let d = self.open.len();
                if self.lane.rows.len() <= d {
                    self.lane.rows.resize_with(d + 1, Vec::new);
                }
                self.lane.rows[d].push(o.close(end));
            }
        }
    }
    let mut paths = Paths::new(run, fold_stdlib);
    let mut builders: Vec<Builder> = (0..run.threads.len())
        .map(|i| {
            let tolerance = if crate::units::is_task(&run.threads[i]) { 0 } else { TOLERATED_MISSED_TICKS };
            Builder { lane: Lane { thread: i as ThreadId, ..Lane::default() }, open: Vec::new(), last_tick: None, state: None, tolerance }
        })
        .collect();
    for (k, sample) in run.samples.iter().enumerate() {
        let k = k as u32;
        for ts in &sample.threads {
            if !mine(ts.thread) {
                continue;
            }
            let b = &mut builders[ts.thread as usize];
            b.lane.samples += 1;
            b.lane.computing += (ts.state == ThreadState::Computing) as u32;
            // A gap longer than the tolerance ends everything at the tick after the last sample.
            if let Some(last) = b.last_tick {
                // (`saturating`: a thread entered twice at one tick is no gap; the run reader
                // keeps one entry, a run built otherwise may not.)
                if k.saturating_sub(last).saturating_sub(1) > b.tolerance {
                    b.close_from(0, last + 1);
                    if let Some(r) = b.state.take() {
                        b.lane.states.push(StateRun { end: last + 1, ..r });
                    }
                }
            }
            b.last_tick = Some(k);
            let (path, futex) = match ts.stack {
                Some(s) => paths.get(s),
                None => (&[][..], None),
            };
            let (state, kind) = classify(run, ts, futex);
            match &mut b.state {
                Some(r) if r.state == state && r.blocked == kind => {}
                slot => {
                    if let Some(r) = slot.take() {
                        b.lane.states.push(StateRun { end: k, ..r });
                    }
                    *slot = Some(StateRun { start: k, end: k, state, blocked: kind });
                }
            }
            let same = b.open.iter().zip(path).take_while(|(o, p)| o.function == p.function && o.folded == p.folded).count();
            b.close_from(same, k);
            if path.len() > same {
                b.boundary(k);
            }
            for p in &path[same..] {
                b.open.push(Open::new(k, p));
            }
            let code = BlockedKind::code(kind);
            for o in &mut b.open {
                o.add(state, code);
            }
        }
    }
    builders
        .into_iter()
        .filter(|b| mine(b.lane.thread))
        .map(|mut b| {
            if let Some(last) = b.last_tick {
                b.close_from(0, last + 1);
                if let Some(r) = b.state.take() {
                    b.lane.states.push(StateRun { end: last + 1, ..r });
                }
            }
            let mut lane = b.lane;
            // Bars were pushed as they closed; within a row that is start order already, since a
            // row's bars do not overlap. Boundaries were noted in tick order.
            lane.boundaries.shrink_to_fit();
            for r in &mut lane.rows {
                r.shrink_to_fit();
            }
            lane.states.shrink_to_fit();
            lane
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use threadradar_profiler::builder::{FunctionSpec, RunBuilder};
    use threadradar_profiler::run::Meta;

    /// `q.get()` waits in `Condition.wait` inside `Queue.get`, `ev.wait()` in `Condition.wait`
    /// inside `Event.wait`, `t.join()` in `_wait_for_tstate_lock`: the wait is what the program
    /// called (queue, condition, join), whatever the innermost frame is; a bare `lock.acquire()`
    /// (no Python frame of the standard library) is a lock.
    #[test]
    fn a_futex_wait_is_named_by_the_outermost_standard_library_frame_the_program_called() {
        let mut b = RunBuilder::new(Meta { interval_ms: 2.0, cwd: "/p".into(), ..Meta::default() });
        let prog = b.file("/p/prog.py", FileKind::User, None);
        let threading = b.file("/usr/lib/python3.12/threading.py", FileKind::Stdlib, None);
        let queue = b.file("/usr/lib/python3.12/queue.py", FileKind::Stdlib, None);
        let mut frame = |file, qualname: &str, line: u32| {
            let f = b.function(file, &FunctionSpec { qualname, class: None, line, end_line: line + 20, class_line: 0 });
            b.frame(f, line + 1)
        };
        let user = frame(prog, "stage", 1);
        let cond_wait = frame(threading, "Condition.wait", 300);
        let queue_get = frame(queue, "Queue.get", 154);
        let event_wait = frame(threading, "Event.wait", 600);
        let join = frame(threading, "Thread.join", 1100);
        let tstate = frame(threading, "Thread._wait_for_tstate_lock", 1140);
        let run = b.finish();
        assert_eq!(futex_kind(&run, &[cond_wait, queue_get, user]), Some(BlockedKind::Queue));
        assert_eq!(futex_kind(&run, &[cond_wait, event_wait, user]), Some(BlockedKind::Condition));
        assert_eq!(futex_kind(&run, &[cond_wait, user]), Some(BlockedKind::Condition));
        assert_eq!(futex_kind(&run, &[tstate, join, user]), Some(BlockedKind::Join));
        assert_eq!(futex_kind(&run, &[user]), Some(BlockedKind::Lock));
        // Below the program's code nothing counts: its own frame ends the walk.
        assert_eq!(futex_kind(&run, &[user, queue_get]), Some(BlockedKind::Lock));
    }

    #[test]
    fn a_bar_keeps_every_field_at_its_limits() {
        assert_eq!(std::mem::size_of::<Bar>(), 11);
        let ticks = [(0, 1), (5, MAX_TICKS as u32), (MAX_TICKS as u32 - 1, MAX_TICKS as u32), (123_456_789, 200_000_000)];
        for (start, end) in ticks {
            for frame in [0, 1, 4_242, FRAME_MASK] {
                for state in BarState::ALL {
                    for blocked in std::iter::once(None).chain(BlockedKind::ALL.map(Some)) {
                        for folded in [false, true] {
                            let b = Bar::new(start, end, frame, state, blocked, folded);
                            assert_eq!((b.start(), b.end(), b.frame(), b.state(), b.blocked(), b.folded()), (start, end, frame, state, blocked, folded));
                        }
                    }
                }
            }
        }
    }
}
