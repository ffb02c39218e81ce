//! What every exporter needs from a run, computed once: frame labels, how long each sample stands
//! for, each thread's samples in time order, and the intervals a thread spent not computing.
//!
//! Runs do not record wait objects, wake-up edges or critical sections yet. When they do, their
//! intervals and edges belong here beside [`state_intervals`], and each exporter draws them in its
//! own way (Firefox flow markers, Perfetto flows, pprof labels); nothing here invents them from
//! samples.

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

/// The nominal sampling interval in nanoseconds (3 ms when the run does not say).
pub fn interval_ns(run: &Run) -> u64 {
    if run.meta.interval_ms > 0.0 {
        (run.meta.interval_ms * 1e6).round() as u64
    } else {
        3_000_000
    }
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

/// How long each sample (by index) stands for: until the next tick in time, or one interval for
/// the last one (and never more than 10 intervals, so a sampler stall does not become a long
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
        let mut last_sample = None;
        for o in obs {
            let contiguous = last_sample.is_some_and(|l: u32| l + 1 >= o.sample);
            let blocked = o.blocked.map(|b| run.str(b).to_string());
            if let Some(cur) = open.as_mut() {
                if contiguous && cur.state == o.state && cur.blocked == blocked {
                    cur.end_ns = cur.end_ns.max(o.t_ns + o.duration_ns);
                    cur.samples += 1;
                    last_sample = Some(o.sample);
                    continue;
                }
                out.push(open.take().unwrap());
            }
            if o.state != ThreadState::Computing {
                open = Some(StateInterval {
                    thread: tid as ThreadId,
                    state: o.state,
                    blocked,
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

#[cfg(test)]
mod tests {
    use super::*;
    use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
    use threadradar_profiler::run::*;

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
}
