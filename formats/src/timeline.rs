//! What every exporter needs from a run, computed once: frame labels, how long each sample stands
//! for, each thread's samples in time order, the intervals a thread spent not computing, and the
//! [`Overlay`]: what the run knows beyond its samples.
//!
//! The overlay is computed by the analysis crate, the same figures `threadradar waits` and
//! `threadradar sections` show, never re-inferred here:
//! - wait intervals with the object waited on (`threading.Condition self.cond`, `pipe:[123]`) and
//!   the wake-up edges that ended them, each with its evidence (`kernel`, `gil-holder`,
//!   `same-object`, `running-thread`), from [`threadradar_analysis::waits::waits`];
//! - each thread's scheduler states (running, runnable, sleeping, uninterruptible), kernel-exact,
//!   from the run's context switches and wake-ups when it recorded them (`record --sched`);
//! - every execution of every critical section, with its lock and outlier flag, from
//!   [`threadradar_analysis::sections::analyse`] over the sections discovered in the program's
//!   source (when the source is found where it was recorded, unchanged).
//!
//! Each exporter draws the overlay its own way (Firefox markers with flow ids, Perfetto child
//! tracks with `flow_ids`/`terminating_flow_ids`, Chrome flow events and async slices).

use threadradar_profiler::run::{FrameId, Run, StackId, ThreadId, ThreadState};

/// `qualname (file:line)`, py-spy's spelling of a frame, with the file's base name.
pub fn frame_label(run: &Run, frame: FrameId) -> String {
    let fr = &run.frames[frame as usize];
    let func = &run.functions[fr.function as usize];
    let path = run.file_path(func.file);
    let base = path.rsplit('/').next().unwrap_or(path);
    format!("{} ({}:{})", run.str(func.qualname), base, fr.line)
}

/// Frames of a stack, outermost (the thread's entry) first.
pub fn frames_outermost_first(run: &Run, stack: Option<StackId>) -> Vec<FrameId> {
    let mut out = Vec::new();
    let mut next = stack;
    while let Some(s) = next {
        let node = &run.stacks[s as usize];
        out.push(node.frame);
        next = node.parent;
    }
    out.reverse();
    out
}

/// The run's sampling period in nanoseconds: the one definition every view uses
/// ([`threadradar_analysis::period`]), so an export states the same "± one period" as the views.
pub use threadradar_analysis::period::sampling_period_ns as interval_ns;

/// The sampling period in milliseconds as the exports' notes state it (to the microsecond).
pub fn period_ms_label(run: &Run) -> String {
    let ms = interval_ns(run) as f64 / 1e6;
    let s = format!("{ms:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Sample indices in time order. The sampler writes ticks in order; a run from elsewhere (an
/// import, a merge) may not, and every exporter needs time order.
pub fn time_order(run: &Run) -> Vec<usize> {
    let mut order: Vec<usize> = (0..run.samples.len()).collect();
    if run.samples.windows(2).any(|w| w[1].t < w[0].t) {
        order.sort_by_key(|&i| run.samples[i].t);
    }
    order
}

/// How long each sample (by index) stands for: until the next tick in time, or one period for
/// the last one (and never more than 10 periods, so a sampler stall does not become a long
/// stretch of one stack).
pub fn sample_durations_ns(run: &Run, order: &[usize]) -> Vec<u64> {
    let iv = interval_ns(run);
    let mut d = vec![iv; run.samples.len()];
    for w in order.windows(2) {
        d[w[0]] = run.samples[w[1]].t.saturating_sub(run.samples[w[0]].t).clamp(1, 10 * iv);
    }
    d
}

/// One thread's observation, in time order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observation {
    /// Position of the tick in time order (consecutive ticks have consecutive positions).
    pub sample: u32,
    pub t_ns: u64,
    pub duration_ns: u64,
    pub stack: Option<StackId>,
    pub state: ThreadState,
    pub cpu_ns: u64,
    pub blocked: Option<u32>,
}

/// Each thread's observations in time order, indexed by thread id.
pub fn per_thread(run: &Run) -> Vec<Vec<Observation>> {
    let order = time_order(run);
    let durations = sample_durations_ns(run, &order);
    let mut out: Vec<Vec<Observation>> = vec![Vec::new(); run.threads.len()];
    for (pos, &i) in order.iter().enumerate() {
        let s = &run.samples[i];
        for ts in &s.threads {
            let obs = &mut out[ts.thread as usize];
            // A thread listed twice in one tick (seen so in recorded runs) is kept twice, so
            // every sample counts, but the tick's time is not counted twice.
            let repeated = obs.last().is_some_and(|o| o.sample == pos as u32);
            obs.push(Observation {
                sample: pos as u32,
                t_ns: s.t,
                duration_ns: if repeated { 0 } else { durations[i] },
                stack: ts.stack,
                state: ts.state,
                cpu_ns: ts.cpu_ns,
                blocked: ts.blocked,
            });
        }
    }
    out
}

/// A stretch of consecutive samples in which a thread was in one state other than computing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateInterval {
    pub thread: ThreadId,
    pub state: ThreadState,
    /// The system call the thread was blocked in at the interval's first sample, when known.
    pub blocked: Option<String>,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Samples that make up the interval: it is inferred from sampling, so a wait shorter than an
    /// interval may be missed and the ends are known to within one interval.
    pub samples: u32,
}

/// Waiting for the GIL and idle intervals of every thread, from consecutive samples in the same
/// state (and, for idle, the same blocking call).
pub fn state_intervals(run: &Run, threads: &[Vec<Observation>]) -> Vec<StateInterval> {
    let mut out = Vec::new();
    for (tid, obs) in threads.iter().enumerate() {
        let mut open: Option<StateInterval> = None;
        // The open interval's blocking call, compared by its text (two ids may name one call).
        let mut open_blocked: Option<&str> = None;
        let mut last_sample = None;
        for o in obs {
            let contiguous = last_sample.is_some_and(|l: u32| l + 1 >= o.sample);
            let blocked = o.blocked.map(|b| run.str(b));
            if let Some(cur) = open.as_mut() {
                if contiguous && cur.state == o.state && open_blocked == blocked {
                    cur.end_ns = cur.end_ns.max(o.t_ns + o.duration_ns);
                    cur.samples += 1;
                    last_sample = Some(o.sample);
                    continue;
                }
                out.push(open.take().unwrap());
            }
            if o.state != ThreadState::Computing {
                open_blocked = blocked;
                open = Some(StateInterval {
                    thread: tid as ThreadId,
                    state: o.state,
                    blocked: blocked.map(str::to_string),
                    start_ns: o.t_ns,
                    end_ns: o.t_ns + o.duration_ns,
                    samples: 1,
                });
            }
            last_sample = Some(o.sample);
        }
        out.extend(open);
    }
    out
}

/// One level of a thread's flame chart rebuilt from samples: the thread's state (with the blocking
/// call when idle), outermost, or a frame beneath it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    State(ThreadState, Option<u32>),
    Frame(FrameId),
}

/// What [`slices`] reports, thread by thread, in time order within a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceEvent {
    /// The events that follow belong to this thread.
    Thread(ThreadId),
    Begin { level: Level, t_ns: u64 },
    End { t_ns: u64 },
}

/// Each thread's samples as nested slices, the way the trace exporters (Chrome JSON, Perfetto)
/// draw them: the outermost slice is the state observed at each sample, the sampled stack nests
/// under it, a slice begins at the first sample that shows its frame and ends where a sample no
/// longer does (or where the thread was last seen, when it is missing from a tick). The slices
/// are inferred from sampling: their ends are known to within one interval.
pub fn slices(run: &Run, mut on: impl FnMut(SliceEvent) -> std::io::Result<()>) -> std::io::Result<()> {
    let mut open: Vec<Level> = Vec::new();
    let mut want: Vec<Level> = Vec::new();
    for (tid, obs) in per_thread(run).into_iter().enumerate() {
        on(SliceEvent::Thread(tid as ThreadId))?;
        open.clear();
        let mut prev: Option<(u32, u64)> = None; // (tick position, end ns)
        for o in &obs {
            if let Some((ps, pend)) = prev {
                if o.sample > ps + 1 {
                    // The thread was not seen at some tick: close everything where it was last seen.
                    while open.pop().is_some() {
                        on(SliceEvent::End { t_ns: pend })?;
                    }
                }
            }
            let blocked = if o.state == ThreadState::Idle { o.blocked } else { None };
            want.clear();
            want.push(Level::State(o.state, blocked));
            let mut next = o.stack;
            while let Some(st) = next {
                let node = &run.stacks[st as usize];
                want.push(Level::Frame(node.frame));
                next = node.parent;
            }
            want[1..].reverse();
            let common = open.iter().zip(&want).take_while(|(a, b)| a == b).count();
            while open.len() > common {
                open.pop();
                on(SliceEvent::End { t_ns: o.t_ns })?;
            }
            for level in &want[common..] {
                on(SliceEvent::Begin { level: *level, t_ns: o.t_ns })?;
            }
            std::mem::swap(&mut open, &mut want);
            prev = Some((o.sample, (o.t_ns + o.duration_ns).max(prev.map_or(0, |p| p.1))));
        }
        if let Some((_, end)) = prev {
            while open.pop().is_some() {
                on(SliceEvent::End { t_ns: end })?;
            }
        }
    }
    Ok(())
}

/// The name of a state slice: `Idle (futex)` when the blocking call is known.
pub fn state_slice_name(run: &Run, state: ThreadState, blocked: Option<u32>) -> String {
    match blocked {
        Some(b) => format!("{} ({})", state_label(state), run.str(b)),
        None => state_label(state).to_string(),
    }
}

/// How a state is named in every export.
pub fn state_name(state: ThreadState) -> &'static str {
    match state {
        ThreadState::Computing => "computing",
        ThreadState::Gil => "gil",
        ThreadState::Idle => "idle",
    }
}

/// A sentence-case label of a state for viewers.
pub fn state_label(state: ThreadState) -> &'static str {
    match state {
        ThreadState::Computing => "Computing",
        ThreadState::Gil => "Waiting for the GIL",
        ThreadState::Idle => "Idle",
    }
}

/// The program-level cluster (`low`, `middle`, `high`) of each thread, by `crt(th)` over
/// computing samples, as `threadradar report --level program` shows it; `None` for threads that
/// never computed (or when nothing in the run computed).
pub fn program_clusters(run: &Run) -> Vec<Option<&'static str>> {
    use threadradar_analysis::glyph::ClusterColour;
    let mut out = vec![None; run.threads.len()];
    if let Ok(a) = threadradar_analysis::Analysis::new(run, &threadradar_analysis::Options::default()) {
        let clusters = a.program_clusters();
        for (i, c) in clusters.iter().enumerate() {
            for &t in &c.threads {
                out[t as usize] = Some(ClusterColour::of(i, clusters.len()).name());
            }
        }
    }
    out
}

// ------------------------------------------------------------------------------------------
// The overlay: waits, wake-ups, scheduler states, critical sections
// ------------------------------------------------------------------------------------------

/// One wait of one thread on one object, as `threadradar waits` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitSpan {
    pub thread: ThreadId,
    /// From the first waiting sample to the thread's next sample (or one period after the last
    /// waiting sample when the wait was still going on: `open`).
    pub start_ns: u64,
    pub end_ns: u64,
    /// What the waits view calls the object: `threading.Condition self.cond`, `pipe:[123]`, `GIL`
    /// (shared by the waits on one object).
    pub object: std::sync::Arc<str>,
    /// The blocking system call seen most, `None` for the GIL.
    pub syscall: Option<String>,
    pub samples: u32,
    pub open: bool,
    pub futile: bool,
}

/// A wake-up edge: `waker` released `wakee` from a wait on `object`.
#[derive(Clone, Debug, PartialEq)]
pub struct Wake {
    /// Unique in the export (1-based): the flow id.
    pub id: u64,
    pub waker: ThreadId,
    pub wakee: ThreadId,
    /// When the waker woke it: the kernel's wake-up, or (inferred edges) the end of the wait.
    pub wake_ns: u64,
    /// Where the flow ends on the wakee: the end of the wait it ended, or the wake-up itself for
    /// a futile wake-up or a lock hand-off, which did not end the wait; always at least 1 ns
    /// after `wake_ns`, so that readers that sort events by time (trace_processor) see the flow
    /// start before it ends even when the two are at one instant (inferred edges are placed at
    /// the end of the wait).
    pub resume_ns: u64,
    pub object: String,
    /// `kernel`, `gil-holder`, `same-object` or `running-thread`.
    pub evidence: &'static str,
    pub confidence: f64,
    pub futile: bool,
    pub lock_handoff: bool,
}

impl Wake {
    /// What the edge did, in a word: `wake`, `futile wake-up`, `lock hand-off`.
    pub fn kind(&self) -> &'static str {
        if self.lock_handoff {
            "lock hand-off"
        } else if self.futile {
            "futile wake-up"
        } else {
            "wake-up"
        }
    }
}

/// A thread's state as the kernel's scheduler had it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchedState {
    Running,
    /// Woken (or preempted) and waiting for a CPU (`R`).
    Runnable,
    /// Sleeping, interruptible (`S`).
    Sleeping,
    /// Uninterruptible sleep, usually I/O (`D`).
    Uninterruptible,
    /// Another state letter the kernel reported when the thread left the CPU (`T`, `t`, `I`, …).
    Other(u8),
}

impl SchedState {
    pub fn label(self) -> String {
        match self {
            SchedState::Running => "Running".into(),
            SchedState::Runnable => "Runnable (R)".into(),
            SchedState::Sleeping => "Sleeping (S)".into(),
            SchedState::Uninterruptible => "Uninterruptible (D)".into(),
            SchedState::Other(c) => format!("State {}", c as char),
        }
    }
}

/// A stretch of one scheduler state of one thread, kernel-exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedSpan {
    pub start_ns: u64,
    pub end_ns: u64,
    pub state: SchedState,
}

/// One execution of a critical section by one thread, as `threadradar sections` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct SectionSpan {
    pub thread: ThreadId,
    /// Index of the section in the export (executions of one section share it).
    pub section: u32,
    /// Estimated start and end (midpoints between samples); the true ends are within `error_ns`.
    pub start_ns: u64,
    pub end_ns: u64,
    pub error_ns: u64,
    /// `Store.update (app.py:12)`.
    pub label: String,
    /// The lock as the source names it, with its type when known: `Store._lock (Lock)`.
    pub lock: String,
    pub outlier: bool,
    /// Time the thread waited to enter, when the run knows it.
    pub wait_ns: Option<u64>,
    pub samples: u32,
    /// Other threads seen waiting for the same lock meanwhile.
    pub waiters: u32,
}

/// One execution of a lock by one thread from the lock events of `record --exact-locks`
/// (kernel uprobes on the interpreter's lock functions): exact, no sampling error.
#[derive(Clone, Debug, PartialEq)]
pub struct LockSpan {
    pub thread: ThreadId,
    /// `lock 0x7f… (app.py:12 Store.update)`: the address, and the place its samples show.
    pub lock: std::sync::Arc<str>,
    /// The acquire function called (the wait to enter begins), returned with the lock, and the
    /// release: `called_ns..acquired_ns` is the wait, `acquired_ns..released_ns` the hold.
    pub called_ns: u64,
    pub acquired_ns: u64,
    pub released_ns: u64,
    /// The thread whose release let it in, when it waited for one.
    pub waited_for: Option<String>,
}

/// What a run knows beyond its samples, computed once per export by the analysis crate.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    pub waits: Vec<WaitSpan>,
    pub wakes: Vec<Wake>,
    /// Per thread (by id), its scheduler states in time order; empty without `record --sched`.
    pub sched: Vec<Vec<SchedSpan>>,
    pub sections: Vec<SectionSpan>,
    /// Every lock execution of the run's lock events, by lock and then time; empty without
    /// `record --exact-locks`.
    pub locks: Vec<LockSpan>,
    /// How the edges were found (the waits view's evidence notes) and what is missing, as
    /// sentences.
    pub notes: Vec<String>,
    /// Per thread, the end and the index into `waits` of its waits, in time order (for
    /// [`Overlay::objects_during`]: a binary search over the ends).
    waits_by_thread: Vec<Vec<(u64, usize)>>,
    /// The waits view the above came from, kept to be freed with the overlay.
    view: Option<threadradar_analysis::waits::WaitsView>,
}

fn ns(s: f64) -> u64 {
    if s.is_finite() && s > 0.0 {
        (s * 1e9).round() as u64
    } else {
        0
    }
}

/// The exact lock executions of `run` ([`threadradar_analysis::locksections`]) of the threads
/// the sampler saw.
fn lock_spans(run: &Run) -> Vec<LockSpan> {
    let Some(view) = threadradar_analysis::locksections::analyse(run) else { return Vec::new() };
    let mut out = Vec::new();
    for l in view.locks {
        let label: std::sync::Arc<str> = match &l.place {
            Some(p) => format!("lock {} ({})", l.lock, p.rsplit('/').next().unwrap_or(p)).into(),
            None => format!("lock {}", l.lock).into(),
        };
        for e in l.executions {
            let Some(thread) = e.thread_id else { continue };
            let acquired_ns = ns(e.start_s);
            out.push(LockSpan {
                thread,
                lock: label.clone(),
                called_ns: ns(e.called_s).min(acquired_ns),
                acquired_ns,
                released_ns: acquired_ns + ns(e.duration_s),
                waited_for: e.waited_for,
            });
        }
    }
    out
}

/// Where a wait's slice goes on its thread's track after the previous slice (`prev`: its begin
/// and end): the previous slice's new end, if it must end sooner (where this one begins, never
/// before its own begin + 1 ns), and this slice's start and end. Every wait keeps a slice: one
/// of no length (a wait whose ends the kernel put at one instant) lasts 1 ns, since a track's
/// end and begin at one instant are ordered end first.
fn meet(prev: Option<(u64, u64)>, start: u64, end: u64) -> (Option<u64>, u64, u64) {
    let (mut start, mut cut) = (start, None);
    if let Some((begin, prev_end)) = prev.filter(|&(_, e)| start < e) {
        start = start.max(begin + 1).min(prev_end);
        cut = Some(start);
    }
    (cut, start, end.max(start + 1))
}

impl Overlay {
    /// Where each wait's slice goes (`waits[i]` → `(start_ns, end_ns)`) on a track that cannot
    /// overlap slices (Perfetto's) or pairs a thread's async begins and ends by one id (Chrome's).
    /// A thread's waits may overlap by microseconds — a kernel end just after the reading that
    /// saw the next wait; one sleep read at two sites, both ending at its wake-up — so, in time
    /// order, an earlier slice ends where the next begins (see [`meet`]). Every wait keeps a slice.
    pub fn wait_slices(&self) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = self.waits.iter().map(|w| (w.start_ns, w.end_ns)).collect();
        let mut order: Vec<usize> = (0..self.waits.len()).collect();
        order.sort_by_key(|&i| (self.waits[i].thread, self.waits[i].start_ns, i));
        let mut prev: Option<(u32, usize)> = None;
        for i in order {
            let th = self.waits[i].thread;
            let before = prev.filter(|&(t, _)| t == th).map(|(_, j)| j);
            let (cut, start, end) = meet(before.map(|j| out[j]), self.waits[i].start_ns, self.waits[i].end_ns);
            if let (Some(cut), Some(j)) = (cut, before) {
                out[j].1 = cut;
            }
            out[i] = (start, end);
            prev = Some((th, i));
        }
        out
    }
}

impl Overlay {
    /// The waits view, scheduler states and critical sections of `run` (which must have passed
    /// [`Run::validate`], as every run read from a file has). Sections need the program's source
    /// where it was recorded, unchanged: otherwise there are none, and a note says why.
    pub fn of(run: &Run) -> Overlay {
        // The three are independent: the scheduler states and the sections (which parse the
        // program's source) are found on a thread of their own while the waits view is computed.
        let others = |run: &Run| {
            let mut o = Overlay { sched: sched_spans(run), locks: lock_spans(run), ..Overlay::default() };
            o.add_sections(run);
            o
        };
        let mut o = Overlay::default();
        let rest = std::thread::scope(|s| {
            let h = std::thread::Builder::new().name("overlay-sections".into()).spawn_scoped(s, || others(run));
            o.add_waits(run);
            match h {
                Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                Err(_) => others(run), // no thread could be started: found here
            }
        });
        o.sched = rest.sched;
        o.sections = rest.sections;
        o.locks = rest.locks;
        // The notes in the order they were always given: the waits view's, then the sections'.
        o.notes.extend(rest.notes);
        o
    }

    fn add_waits(&mut self, run: &Run) {
        use threadradar_analysis::waits::{waits, WaitsOptions, WakeKind};
        self.waits_by_thread = vec![Vec::new(); run.threads.len()];
        if run.samples.is_empty() {
            return;
        }
        let mut view = waits(run, &WaitsOptions::default());
        self.notes.append(&mut view.evidence.notes);
        // Each object's label once, shared by its waits; the view's strings are moved, not copied.
        let labels: Vec<std::sync::Arc<str>> = view.objects.iter().map(|o| std::sync::Arc::from(o.object.as_str())).collect();
        let no_object: std::sync::Arc<str> = std::sync::Arc::from("");
        self.waits.reserve(view.intervals.len());
        for iv in &mut view.intervals {
            let start_ns = ns(iv.start_s);
            self.waits_by_thread[iv.thread as usize].push((ns(iv.end_s).max(start_ns), self.waits.len()));
            self.waits.push(WaitSpan {
                thread: iv.thread,
                start_ns,
                end_ns: ns(iv.end_s).max(start_ns),
                object: labels.get(iv.object as usize).unwrap_or(&no_object).clone(),
                syscall: iv.syscall.take(),
                samples: iv.samples,
                open: iv.open,
                futile: iv.futile,
            });
        }
        for v in &mut self.waits_by_thread {
            v.sort_by_key(|&(_, i)| self.waits[i].start_ns);
        }
        self.wakes.reserve(view.edges.len());
        for e in &mut view.edges {
            let wake_ns = ns(e.time_s);
            let lock_handoff = e.kind == WakeKind::LockHandoff;
            let resume_ns = match view.intervals.get(e.interval as usize) {
                Some(iv) if !e.futile && !lock_handoff => ns(iv.end_s),
                _ => wake_ns,
            }
            .max(wake_ns + 1);
            self.wakes.push(Wake {
                id: self.wakes.len() as u64 + 1,
                waker: e.waker_thread,
                wakee: e.wakee_thread,
                wake_ns,
                resume_ns,
                object: std::mem::take(&mut e.object),
                evidence: e.evidence.as_str(),
                confidence: e.confidence,
                futile: e.futile,
                lock_handoff,
            });
        }
        // What is left of the view (frames, names: two million small allocations on a 1 M-sample
        // run) is freed with the overlay, after the export (see [`drop_later`]), not while the
        // exporter allocates.
        self.view = Some(view);
    }

    fn add_sections(&mut self, run: &Run) {
        use threadradar_analysis::sections::{analyse, SectionOptions};
        if run.samples.is_empty() {
            return;
        }
        let found = match threadradar_profiler::sections::discover_run(run, None) {
            Ok(f) => f,
            Err(e) => {
                self.notes.push(format!("critical sections are not shown: {e}"));
                return;
            }
        };
        self.notes.extend(found.notes.iter().map(|n| format!("critical sections: {n}")));
        if found.sections.is_empty() {
            return;
        }
        let view = analyse(run, &found.sections, &SectionOptions::default());
        for (si, s) in view.sections.iter().enumerate() {
            let base = s.file.rsplit('/').next().unwrap_or(&s.file);
            let label = format!("{} ({}:{})", s.function, base, s.line);
            let lock = match &s.lock_type {
                Some(t) => format!("{} ({t})", s.lock),
                None => s.lock.clone(),
            };
            for (i, e) in s.executions.iter().enumerate() {
                let start_ns = ns(e.start_s);
                self.sections.push(SectionSpan {
                    thread: e.thread_id,
                    section: si as u32,
                    start_ns,
                    end_ns: start_ns + ns(e.duration_s),
                    error_ns: ns(e.error_s),
                    label: label.clone(),
                    lock: lock.clone(),
                    outlier: s.outliers.contains(&i),
                    wait_ns: e.wait_s.map(ns),
                    samples: e.samples,
                    waiters: e.waiters.len() as u32,
                });
            }
        }
    }

    /// The objects of the waits of `thread` that overlap `[start_ns, end_ns)`, distinct, in time
    /// order, joined by `, ` (empty when none: a sleep, or a wait the waits view does not count).
    pub fn objects_during(&self, thread: ThreadId, start_ns: u64, end_ns: u64) -> String {
        let mut out = String::new();
        self.objects_during_into(thread, start_ns, end_ns, &mut out);
        out
    }

    /// [`Overlay::objects_during`] into `out` (cleared first), for callers that ask once per
    /// stretch of every thread.
    pub fn objects_during_into(&self, thread: ThreadId, start_ns: u64, end_ns: u64, out: &mut String) {
        out.clear();
        let Some(idx) = self.waits_by_thread.get(thread as usize) else { return };
        // Waits of one thread follow one another: skip those that ended before `start_ns`.
        let first = idx.partition_point(|&(end, _)| end <= start_ns);
        let mut seen: [&str; 4] = [""; 4];
        let mut more: Vec<&str> = Vec::new();
        let mut n = 0;
        for &(_, i) in &idx[first..] {
            let w = &self.waits[i];
            if w.start_ns >= end_ns.max(start_ns + 1) {
                break;
            }
            let object: &str = &w.object;
            if w.end_ns > start_ns && !seen[..n.min(4)].contains(&object) && !more.contains(&object) {
                if n < 4 {
                    seen[n] = object;
                } else {
                    more.push(object);
                }
                n += 1;
                if n > 1 {
                    out.push_str(", ");
                }
                out.push_str(object);
            }
        }
    }
}

/// Drops `value` on a thread of its own, so that whoever waits for an export does not also wait
/// for its buffers to be freed (a 1 M-sample Firefox profile's millions of small allocations
/// take a fifth of a second). When no thread can be started, `spawn` drops it here.
pub fn drop_later<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new().name("drop".into()).spawn(move || drop(value));
}

/// Runs `f` while the overlay of `run` is computed on another thread (it costs about as much as
/// an export of the samples, and the two are independent), then gives both.
pub fn with_overlay<T>(run: &Run, of: fn(&Run) -> Overlay, f: impl FnOnce() -> T) -> (T, Overlay) {
    std::thread::scope(|s| {
        let h = std::thread::Builder::new().name("overlay".into()).spawn_scoped(s, || of(run));
        let out = f();
        let overlay = match h {
            Ok(h) => h.join().unwrap_or_default(),
            Err(_) => of(run), // no thread could be started: compute it here
        };
        (out, overlay)
    })
}

// The thread a kernel tid names at a time: `threadradar waits`' own rule.
use threadradar_analysis::waits::thread_of_tid;

/// How far apart two CPUs' stamps of one thread's switch off one and onto the other may be
/// taken to be out of order (the kernel's per-CPU clocks agree to within microseconds).
const CLOCK_SKEW_NS: u64 = 100_000;

/// Each thread's scheduler states from the run's context switches and wake-ups (`record
/// --sched`): running from a switch onto a CPU, then the state the kernel gave when it left
/// (`R` preempted → runnable, `S` sleeping, `D` uninterruptible), runnable from a wake-up until
/// it runs. Before a thread's first event its state is unknown (no span); its last state lasts
/// until its last sample (or its last event; to the run's end when it began after the last
/// sample). A thread that exited (`X`, `Z`) has no state after.
pub fn sched_spans(run: &Run) -> Vec<Vec<SchedSpan>> {
    let mut out = vec![Vec::new(); run.threads.len()];
    if run.sched.is_none() || run.switches.is_empty() {
        return out;
    }
    let thread_of = thread_of_tid(run);
    // Events per thread: (t, order, new state); `None` ends the thread's states (it exited).
    let mut events: Vec<Vec<(u64, u32, Option<SchedState>, bool)>> = vec![Vec::new(); run.threads.len()];
    let mut order = 0u32;
    for s in &run.switches {
        if let Some(th) = thread_of(s.prev_tid, s.t) {
            let st = match s.prev_state {
                b'R' => Some(SchedState::Runnable),
                b'S' => Some(SchedState::Sleeping),
                b'D' => Some(SchedState::Uninterruptible),
                b'X' | b'Z' => None,
                c => Some(SchedState::Other(c)),
            };
            events[th as usize].push((s.t, order, st, false));
            order += 1;
        }
        if let Some(th) = thread_of(s.next_tid, s.t) {
            events[th as usize].push((s.t, order, Some(SchedState::Running), false));
            order += 1;
        }
    }
    for w in &run.wakeups {
        if let Some(th) = thread_of(w.wakee_tid, w.t) {
            events[th as usize].push((w.t, order, Some(SchedState::Runnable), true));
            order += 1;
        }
    }
    let iv = interval_ns(run);
    for (th, ev) in events.iter_mut().enumerate() {
        if ev.is_empty() {
            continue;
        }
        // At one instant a wake-up comes before the switch that runs the woken thread.
        ev.sort_by_key(|&(t, o, _, wake)| (t, !wake, o));
        let spans = &mut out[th];
        let mut cur: Option<(SchedState, u64)> = None;
        // `again`: a new stretch of the same state begins (the kernel says so).
        let mut step = |cur: &mut Option<(SchedState, u64)>, t: u64, st: Option<SchedState>, again: bool| {
            if !again && cur.map(|c| c.0) == st {
                return;
            }
            if let Some((s, from)) = cur.take() {
                if t > from {
                    spans.push(SchedSpan { start_ns: from, end_ns: t, state: s });
                }
            }
            *cur = st.map(|s| (s, t));
        };
        let mut consumed = vec![false; ev.len()];
        for i in 0..ev.len() {
            let (t, _, st, wake) = ev[i];
            if consumed[i] {
                continue;
            }
            // A wake-up of a thread that is running or already runnable changes nothing.
            if wake && matches!(cur, Some((SchedState::Running | SchedState::Runnable, _))) {
                continue;
            }
            // Switched onto a CPU while it runs: its switch off the other CPU carries a slightly
            // later time (each CPU stamps its own events; a thread that migrates at once is
            // stamped out of order by a few microseconds). It left that CPU first.
            if !wake && st == Some(SchedState::Running) && matches!(cur, Some((SchedState::Running, _))) {
                let out_of_order = (i + 1..ev.len()).take_while(|&j| ev[j].0 <= t + CLOCK_SKEW_NS).find(|&j| !ev[j].3 && !consumed[j] && ev[j].2 != Some(SchedState::Running));
                match out_of_order {
                    Some(j) => {
                        consumed[j] = true;
                        step(&mut cur, t, ev[j].2, false);
                    }
                    // No switch off a CPU near it: the kernel dropped that event (a ring that
                    // overflowed, counted in `sched.lost_events`). The switch onto a CPU is still
                    // the kernel's: the running stretch before it ends here, a new one begins.
                    None => {
                        step(&mut cur, t, st, true);
                        continue;
                    }
                }
            }
            step(&mut cur, t, st, false);
        }
        if let Some((s, from)) = cur {
            let t = &run.threads[th];
            let last_seen = run.samples.get(t.last_sample as usize).map_or(0, |s| s.t + iv);
            let mut end = last_seen.max(ev.last().map_or(0, |e| e.0));
            if from >= last_seen {
                // Its last state began after its last sample (a switch onto a CPU as the recording
                // ended): the kernel's events were recorded to the run's end and none changed it.
                end = end.max((threadradar_analysis::analysis::run_end_s(run) * 1e9) as u64);
            }
            if end > from {
                spans.push(SchedSpan { start_ns: from, end_ns: end, state: s });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
    use threadradar_profiler::run::*;

    fn span(thread: u32, start_ns: u64, end_ns: u64) -> WaitSpan {
        WaitSpan { thread, start_ns, end_ns, object: "o".into(), syscall: None, samples: 1, open: false, futile: false }
    }

    /// Seen on CI: a one-sample wait inside a thread's longer wait, both ending at one wake-up
    /// (one sleep read at two sites), lost its slice in the Chrome export.
    #[test]
    fn every_wait_keeps_a_slice_and_a_threads_slices_do_not_overlap() {
        let waits = vec![span(0, 620, 808_094), span(1, 0, 50), span(0, 808_051, 808_094), span(0, 900_000, 900_000), span(1, 40, 60)];
        let o = Overlay { waits, ..Default::default() };
        assert_eq!(o.wait_slices(), vec![(620, 808_051), (0, 40), (808_051, 808_094), (900_000, 900_001), (40, 60)]);
    }
    /// A thread's waits may overlap by microseconds (a kernel end just after the reading that saw
    /// the next wait; one sleep read at two sites, both ending at its wake-up): the earlier slice
    /// ends where the next begins, and no wait loses its slice (seen on CI: one inside the other
    /// was dropped).
    #[test]
    fn overlapping_waits_meet_and_each_keeps_a_slice() {
        assert_eq!(meet(None, 10, 20), (None, 10, 20), "the first");
        assert_eq!(meet(Some((10, 20)), 25, 30), (None, 25, 30), "after: untouched");
        assert_eq!(meet(Some((10, 20)), 18, 30), (Some(18), 18, 30), "overlapping: meet at the next's start");
        assert_eq!(meet(Some((620, 808_094)), 808_051, 808_094), (Some(808_051), 808_051, 808_094), "inside, same end: both kept");
        assert_eq!(meet(Some((10, 20)), 10, 30), (Some(11), 11, 30), "same start: the earlier keeps 1 ns");
        assert_eq!(meet(Some((10, 20)), 12, 12), (Some(12), 12, 13), "of no length: 1 ns");
        assert_eq!(meet(None, 40, 40), (None, 40, 41), "of no length, alone: 1 ns");
    }


    #[test]
    fn waits_are_consecutive_samples_in_one_state() {
        let mut b = RunBuilder::new(Meta { interval_ms: 1.0, ..Meta::default() });
        let f = b.file("/p/a.py", FileKind::User, None);
        let func = b.function(f, &FunctionSpec { qualname: "main", line: 1, end_line: 9, ..Default::default() });
        let fr = b.frame(func, 2);
        let st = b.stack(&[fr]);
        let t = b.thread(new_thread(1, 1, 1, "MainThread", "_MainThread"));
        let futex = b.string("futex");
        let states = [ThreadState::Computing, ThreadState::Idle, ThreadState::Idle, ThreadState::Gil, ThreadState::Computing, ThreadState::Idle];
        for (i, s) in states.iter().enumerate() {
            let blocked = (*s == ThreadState::Idle).then_some(futex);
            b.push_sample(Sample {
                t: i as u64 * 1_000_000,
                threads: vec![ThreadSample { thread: t, stack: st, state: *s, blocked, ..Default::default() }],
            });
        }
        let run = b.finish();
        let iv = state_intervals(&run, &per_thread(&run));
        let got: Vec<_> = iv.iter().map(|i| (i.state, i.start_ns / 1_000_000, i.end_ns / 1_000_000, i.samples)).collect();
        assert_eq!(got, [(ThreadState::Idle, 1, 3, 2), (ThreadState::Gil, 3, 4, 1), (ThreadState::Idle, 5, 6, 1)]);
        assert_eq!(iv[0].blocked.as_deref(), Some("futex"));
        assert_eq!(frame_label(&run, fr), "main (a.py:2)");
    }

    /// A thread preempted on one CPU and switched in on another at once: the second CPU's stamp
    /// of the switch-in is a few microseconds earlier than the first's of the switch-out. It still
    /// runs twice (one Running span per switch onto a CPU), with no runnable gap.
    #[test]
    fn a_switch_in_stamped_before_the_switch_out_on_another_cpu_runs_again() {
        let mut b = RunBuilder::new(Meta { interval_ms: 1.0, ..Meta::default() });
        let t = b.thread(new_thread(1, 11, 1, "worker", "Thread"));
        for i in 0..=10u64 {
            b.push_sample(Sample { t: i * 10_000, threads: vec![ThreadSample { thread: t, ..Default::default() }] });
        }
        let mut run = b.finish();
        run.sched = Some(SchedInfo { source: "test".into(), ..Default::default() });
        let sw = |t, prev_tid, prev_state: u8, next_tid| SchedSwitch { t, prev_tid, prev_state, next_tid };
        // In at 10 µs on CPU 0; in at 40 µs on CPU 1, stamped 2 µs before CPU 0's switch-out at 42 µs; out at 70 µs.
        run.switches = vec![sw(10_000, 0, b'R', 11), sw(40_000, 0, b'R', 11), sw(42_000, 11, b'R', 0), sw(70_000, 11, b'S', 0)];
        let spans = sched_spans(&run);
        use SchedState::*;
        let got: Vec<_> = spans[t as usize].iter().map(|s| (s.start_ns, s.end_ns, s.state)).collect();
        assert_eq!(got, [(10_000, 40_000, Running), (40_000, 70_000, Running), (70_000, 110_000, Sleeping)]);
        // The switch-out was lost (the kernel's ring overflowed): still one Running per switch-in.
        // (Its switch-out comes far later than any clock skew, at 300 µs.)
        run.switches = vec![sw(10_000, 0, b'R', 11), sw(40_000, 0, b'R', 11), sw(300_000, 11, b'S', 0)];
        let got: Vec<_> = sched_spans(&run)[t as usize].iter().map(|s| (s.start_ns, s.end_ns, s.state)).collect();
        assert_eq!(got, [(10_000, 40_000, Running), (40_000, 300_000, Running)]);
    }

    #[test]
    fn scheduler_states_follow_switches_and_wakeups() {
        let mut b = RunBuilder::new(Meta { interval_ms: 1.0, ..Meta::default() });
        let t = b.thread(new_thread(1, 11, 1, "worker", "Thread"));
        let other = b.thread(new_thread(1, 12, 2, "other", "Thread"));
        for i in 0..=10u64 {
            b.push_sample(Sample { t: i * 10, threads: vec![ThreadSample { thread: t, ..Default::default() }, ThreadSample { thread: other, ..Default::default() }] });
        }
        let mut run = b.finish();
        run.sched = Some(SchedInfo { source: "test".into(), ..Default::default() });
        let sw = |t, prev_tid, prev_state: u8, next_tid| SchedSwitch { t, prev_tid, prev_state, next_tid };
        run.switches = vec![sw(10, 0, b'R', 11), sw(20, 11, b'S', 12), sw(35, 12, b'R', 11), sw(50, 11, b'R', 0), sw(60, 0, b'R', 11), sw(70, 11, b'D', 0)];
        run.wakeups = vec![
            SchedWakeup { t: 30, waker_tid: 12, wakee_tid: 11 },
            SchedWakeup { t: 40, waker_tid: 12, wakee_tid: 11 }, // while it runs: no change
            SchedWakeup { t: 80, waker_tid: 0, wakee_tid: 11 },
        ];
        let spans = sched_spans(&run);
        let got: Vec<_> = spans[t as usize].iter().map(|s| (s.start_ns, s.end_ns, s.state)).collect();
        use SchedState::*;
        assert_eq!(
            got,
            [(10, 20, Running), (20, 30, Sleeping), (30, 35, Runnable), (35, 50, Running), (50, 60, Runnable), (60, 70, Running), (70, 80, Uninterruptible), (80, 110, Runnable)]
        );
        // The last state lasts to one sampling period (the ticks' distance, 10 ns) after the last sample.
        // `other` ran from 20 to 35, then was preempted; its state lasts to its last sample.
        let got: Vec<_> = spans[other as usize].iter().map(|s| (s.start_ns, s.end_ns, s.state)).collect();
        assert_eq!(got, [(20, 35, Running), (35, 110, Runnable)]);
        // Without recorded scheduler events there are none.
        run.sched = None;
        assert!(sched_spans(&run).iter().all(Vec::is_empty));
    }

    #[test]
    fn objects_during_a_stretch_are_the_waits_overlapping_it() {
        let w = |start_ns, end_ns, object: &str| WaitSpan { thread: 0, start_ns, end_ns, object: object.into(), syscall: None, samples: 1, open: false, futile: false };
        let o = Overlay { waits: vec![w(0, 10, "a"), w(10, 20, "b"), w(20, 30, "a"), w(40, 50, "c")], waits_by_thread: vec![vec![(10, 0), (20, 1), (30, 2), (50, 3)]], ..Default::default() };
        assert_eq!(o.objects_during(0, 5, 25), "a, b");
        assert_eq!(o.objects_during(0, 30, 40), "");
        assert_eq!(o.objects_during(0, 45, 45), "c");
        assert_eq!(o.objects_during(1, 0, 100), "", "a thread without waits");
    }
}
