//! Critical sections: every execution of lock-holding code, its variability and its outliers
//! (CSI, paper `003`; spec §6 "Execution variability").
//!
//! Input: a run and the sections discovered in its source ([`Section`], plain data; discovery is
//! `threadradar_profiler::sections::discover`). Output: a [`SectionsView`] — per section, the
//! executions one by one and the figures over them. The rules, stated once here and in
//! `docs/sections.md`:
//!
//! - **Inside.** A sample of a thread is inside a section when the outermost frame of the
//!   section's function whose line is in the section's body is on its stack — unless the thread is
//!   in `threading.py`'s `Condition.wait`/`wait_for` below it (that releases the lock). Recursion
//!   inside a section therefore belongs to the outer execution.
//! - **Frame instances.** CPython's samples do not name frame instances, so an execution is a
//!   maximal stretch of the thread's consecutive samples inside the section at the *same depth
//!   under the same caller* (the same stack node above the frame). Two calls from the same line
//!   with no sample between them merge; a call from elsewhere or a sample outside splits.
//! - **Resolution.** An execution seen in samples at `first..=last`, with the thread's previous
//!   sample at `prev` and its next at `next`, started in `(prev, first]` and ended in
//!   `[last, next)`: the estimate is the midpoints, `± (first − prev)/2 + (next − last)/2`, about
//!   one interval. An execution seen in one sample only is shorter than about two intervals and is
//!   not listed: such sightings are counted (at least that many executions, sightings × interval in
//!   total) and stand in the quantiles as half an interval each.
//! - **Wait to enter**: [`wait_to_enter`]. With the kernel's scheduler events (`--sched`), the
//!   thread's off-CPU time that ended as it entered (kernel-exact); otherwise from the samples in
//!   which the thread was idle or waiting for the GIL at the section's entry line right before it
//!   entered.
//! - **Contention**: other threads seen waiting at an entry line of a section on the same lock
//!   (same `lock_key`) while the execution held it.
//! - **Outliers**: listed executions whose *shortest possible* duration (estimate − error) is above
//!   the p99 or above `factor ×` the median (5 by default), so that resolution alone never makes
//!   an outlier.

use serde::Serialize;
use std::collections::HashMap;
use threadradar_profiler::run::{FileKind, FunctionId, Run, StackId, StrId, ThreadId, ThreadState, WaitId};
pub use threadradar_profiler::sections::{Section, SectionKind};

/// What counts as an outlier.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SectionOptions {
    /// An execution longer than this quantile of its section's durations is an outlier (0.99).
    pub outlier_quantile: f64,
    /// An execution longer than this many medians is an outlier (5).
    pub outlier_factor: f64,
}

impl Default for SectionOptions {
    fn default() -> Self {
        SectionOptions { outlier_quantile: 0.99, outlier_factor: 5.0 }
    }
}

/// How the wait-to-enter times were obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum WaitSource {
    /// From the sampled thread states at the entry line (± one interval; waits shorter than an
    /// interval show as 0).
    Sampled,
    /// From the kernel's context switches (`--sched`): the time the thread was off the CPU,
    /// blocked, right before it entered — exact to the scheduler's clock.
    Kernel,
    /// The run has no thread states (an imported profile): no waits are known.
    None,
}

/// All sections of a run with their executions.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct SectionsView {
    /// The run's sampling period ([`crate::period`]), in seconds: the resolution of every duration.
    pub interval_s: f64,
    pub wait_source: WaitSource,
    /// How the figures were obtained, as a sentence for the views.
    pub how: String,
    /// What the sampling could not resolve, over every section: the panel's banner.
    pub unseen: Unseen,
    pub sections: Vec<SectionFigures>,
}

/// Executions the samples saw but could not list (seen in one sample only), over every section,
/// and the sampling interval that would list more of them. The panel shows it first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ts_rs::TS)]
pub struct Unseen {
    /// Executions listed one by one (seen in two samples or more), every section.
    pub listed: u64,
    /// Executions seen in one sample only: at least this many, every section.
    pub short_at_least: u64,
    /// Their sampling estimate of total time (sightings × period), seconds.
    pub short_total_s: f64,
    /// Executions shorter than this (about two periods) are counted, not listed, seconds.
    pub shorter_than_s: f64,
    /// How many sections had such executions.
    pub sections_with_short: u32,
    /// The section with the most of them (index into `sections`).
    pub worst: Option<usize>,
    /// A `record --interval-ms` a quarter of this run's period (at least the recorder's 0.05 ms):
    /// it lists executions longer than half this run's period. `None` when the run was sampled
    /// that fast already (only `record --exact-locks` sees every execution then).
    pub interval_ms: Option<f64>,
    /// The banner in one sentence, rendered here so every client says the same.
    pub sentence: String,
}

/// The recorder's shortest sampling interval (`record --interval-ms`), milliseconds.
const MIN_INTERVAL_MS: f64 = 0.05;

/// A quarter of the period, two significant digits rounded down, at least the recorder's
/// shortest interval; `None` when the run was sampled about that fast already.
fn suggested_interval_ms(period_ms: f64) -> Option<f64> {
    let quarter = period_ms / 4.0;
    if !(period_ms > MIN_INTERVAL_MS * 1.5 && quarter.is_finite()) {
        return None;
    }
    // Divided by a power of ten, not multiplied by its inverse: 3.8, not 3.8000000000000003.
    let e = quarter.log10().floor() as i32 - 1;
    let rounded = if e < 0 {
        let p = 10f64.powi(-e);
        (quarter * p).floor() / p
    } else {
        let p = 10f64.powi(e);
        (quarter / p).floor() * p
    };
    Some(rounded.max(MIN_INTERVAL_MS))
}

/// [`Unseen`] of a finished list of sections sampled every `period_s`.
fn unseen(sections: &[SectionFigures], period_s: f64) -> Unseen {
    let listed = sections.iter().map(|s| s.executions.len() as u64).sum();
    let short_at_least = sections.iter().map(|s| s.short.count_at_least).sum();
    let short_total_s = sections.iter().map(|s| s.short.total_s).sum();
    let sections_with_short = sections.iter().filter(|s| s.short.count_at_least > 0).count() as u32;
    let worst = (0..sections.len()).filter(|&i| sections[i].short.count_at_least > 0).max_by_key(|&i| (sections[i].short.count_at_least, std::cmp::Reverse(i)));
    let period_ms = period_s * 1e3;
    let interval_ms = suggested_interval_ms(period_ms);
    let fmt_ms = |ms: f64| if ms >= 10.0 { format!("{ms:.0} ms") } else if ms >= 1.0 { format!("{ms:.1} ms") } else { format!("{ms:.2} ms") };
    let shorter_than_s = 2.0 * period_s;
    let sentence = if short_at_least == 0 {
        format!("All {listed} executions seen were listed: none was shorter than the sampling could resolve (about {}).", fmt_ms(shorter_than_s * 1e3))
    } else {
        let total = listed + short_at_least;
        let worst_text = worst.map_or(String::new(), |i| {
            let s = &sections[i];
            format!(" Most of them in {} of {} ({} seen in one sample, {} listed).", s.lock, s.function, s.short.count_at_least, s.executions.len())
        });
        let next = match interval_ms {
            Some(ms) => format!(
                " Recording with `--interval-ms {ms}` would list executions longer than about {}; `record --exact-locks` sees every execution of a lock.",
                fmt_ms(2.0 * ms)
            ),
            None => " This run was sampled as fast as `record` allows; `record --exact-locks` sees every execution of a lock.".to_string(),
        };
        format!(
            "Listed {listed} of at least {total} executions: {short_at_least} ({:.1}%) were seen in one sample only — shorter than about {} at this run's period of {} — and are counted, not listed (about {} in all, sampled).{worst_text}{next}",
            100.0 * short_at_least as f64 / total as f64,
            fmt_ms(shorter_than_s * 1e3),
            fmt_ms(period_ms),
            fmt_ms(short_total_s * 1e3),
        )
    };
    Unseen { listed, short_at_least, short_total_s, shorter_than_s, sections_with_short, worst, interval_ms, sentence }
}

/// One section and its executions.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct SectionFigures {
    pub file: String,
    pub function: String,
    /// The entry line (`with`, `acquire()`, `def`).
    pub line: u32,
    pub body_start: u32,
    pub end_line: u32,
    pub lock: String,
    pub lock_type: Option<String>,
    pub kind: SectionKind,
    /// How the section was found, in words (from `kind`): named in the source, configured, or
    /// from the recorded waits.
    pub found: String,
    /// Listed executions (seen in two samples or more), in time order.
    pub executions: Vec<Execution>,
    /// Indices into `executions` of the outliers.
    pub outliers: Vec<usize>,
    /// The listed executions' durations on a log axis (the panel's histogram).
    pub histogram: crate::histogram::LogHistogram,
    /// Executions seen in one sample only: shorter than about two intervals.
    pub short: ShortExecutions,
    /// Listed executions plus the short ones' lower bound.
    pub execution_count: u64,
    /// Estimated time the lock was held in this section, all executions.
    pub total_hold_s: f64,
    pub median_s: f64,
    pub p95_s: f64,
    pub p99_s: f64,
    pub max_s: f64,
    pub mean_s: f64,
    /// Coefficient of variation (standard deviation / mean) of the durations; 0 without any.
    pub cv: f64,
    /// Share of the samples inside this section in which another thread waited for its lock.
    pub waited_share: f64,
    /// Time threads were seen waiting to enter this section (sampled), summed over threads.
    pub others_waited_s: f64,
    /// The duration above which an execution is an outlier (min of p99 and factor × median).
    pub outlier_threshold_s: f64,
    /// Indices (into the view's `sections`) of the sections seen on the stack around this one.
    pub nested_in: Vec<usize>,
    /// The lock objects threads were seen blocked on at the entry line, from the run's recorded
    /// wait targets (`record` reads them): type and address, most often seen first. How a lock
    /// the source gives no name (created dynamically) is told apart; empty without such waits.
    pub lock_objects: Vec<LockObject>,
}

/// A lock object seen in the recorded wait targets of threads waiting to enter a section.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct LockObject {
    /// Its Python type, as the recorder read it: `_thread.lock`, `_thread.RLock`, `threading.Condition`, ….
    pub type_name: String,
    /// Its address in the profiled process, `0x…`.
    pub address: String,
    /// Samples in which a thread waited on it at the entry line.
    pub samples: u64,
}

/// Executions too short to list one by one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, ts_rs::TS)]
pub struct ShortExecutions {
    /// Samples in which such an execution was seen: at least this many executions.
    pub count_at_least: u64,
    /// Sightings × interval: the sampling estimate of their total time.
    pub total_s: f64,
}

/// One execution of a section by one thread.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct Execution {
    /// The thread's name.
    pub thread: String,
    /// Index into the run's threads.
    pub thread_id: ThreadId,
    /// Estimated start, seconds since the run's start.
    pub start_s: f64,
    /// Estimated duration.
    pub duration_s: f64,
    /// The true duration is within `duration_s ± error_s`.
    pub error_s: f64,
    /// Time the thread waited to enter; `None` when the run has no wait data.
    pub wait_s: Option<f64>,
    /// Samples seen inside.
    pub samples: u32,
    /// Other threads seen waiting for the same lock meanwhile (thread ids, ascending).
    pub waiters: Vec<ThreadId>,
}

/// Where a stack stands relative to one section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Position {
    Inside,
    /// At the entry line with only the standard library below: acquiring, if the thread waits.
    AtEntry,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hit {
    section: usize,
    position: Position,
    depth: u16,
    caller: Option<StackId>,
}

/// A run of waiting samples at a section's entry.
#[derive(Clone, Copy, Debug)]
struct Pending {
    depth: u16,
    caller: Option<StackId>,
    /// Sample time of the thread before the first waiting sample, and the first waiting sample.
    prev_t: Option<u64>,
    first_t: u64,
    /// Position (in the thread's own samples) of the last waiting sample.
    last_pos: usize,
}

#[derive(Clone, Copy, Debug)]
struct Open {
    depth: u16,
    caller: Option<StackId>,
    prev_t: Option<u64>,
    first_t: u64,
    last_t: u64,
    first_sample: usize,
    last_sample: usize,
    samples: u32,
    wait_s: Option<f64>,
}

/// Where a thread stood right before an execution, for [`wait_to_enter`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry<'a> {
    /// The stretch of samples waiting at the entry line right before the first sample inside:
    /// (the thread's sample before that stretch, the stretch's first sample), times in ns.
    pub waiting: Option<(Option<u64>, u64)>,
    /// The thread's sample before its first sample inside, and that first sample.
    pub prev_t: Option<u64>,
    /// The thread's last sample before the execution that was not at the section's entry line
    /// (in whatever state): a wait for the lock began after it.
    pub elsewhere_t: Option<u64>,
    pub first_t: u64,
    /// The execution's estimated start (ns).
    pub entered_ns: f64,
    /// The thread's blocked off-CPU intervals `[out, in)` from the kernel's context switches, in
    /// time order (empty without scheduler events).
    pub off_cpu: &'a [(u64, u64)],
}

/// Off-CPU stretches this close together are one wait (e.g. a futex wake-up, then the GIL).
const CHAIN_GAP_NS: u64 = 500_000;
/// How much later than its tick a sample's stacks may have been read (at most a quarter interval).
const READ_SLACK_NS: u64 = 500_000;

/// The time a thread waited to enter a section, from what the run holds.
///
/// - [`WaitSource::Kernel`]: the thread's blocked off-CPU time that ended after its last sample
///   outside the section and before its first inside (give or take the 0.5 ms, at most a quarter
///   interval, by which reading a sample's stacks may follow its tick) — the last such interval, with the ones
///   right before it (less than 0.5 ms on the CPU between them) — provided it began after the
///   thread's last sample that was not at the entry line (an off-CPU stretch a sample saw
///   elsewhere, e.g. in `time.sleep`, is not a wait for the lock). 0 when the thread was not
///   blocked there: it entered without waiting. Exact to the scheduler's clock; a sleep elsewhere
///   that no sample saw and that ended right before the entry is taken for a wait.
/// - [`WaitSource::Sampled`]: the stretch of samples in which the thread was idle or waiting for
///   the GIL at the section's entry line right before its first sample inside, from the midpoint
///   before the first of them to the execution's estimated start (0 when no such sample: the wait,
///   if any, was shorter than an interval).
pub fn wait_to_enter(source: WaitSource, at: &Entry, interval_ns: f64) -> Option<f64> {
    let waiting = at.waiting;
    let entered_ns = at.entered_ns;
    match source {
        WaitSource::None => None,
        WaitSource::Kernel => {
            // After this the thread was seen elsewhere last: a wait for the lock began later.
            let seen_elsewhere = at.elsewhere_t;
            let after = at.prev_t.unwrap_or(0);
            let fits = |&(out, _): &(u64, u64)| seen_elsewhere.is_none_or(|b| out > b);
            // A sample's time stamp is its tick; its stacks are read a little later, so the thread
            // may have been switched in just after the tick of its first sample inside.
            let read_slack = (interval_ns / 4.0).min(READ_SLACK_NS as f64) as u64;
            let end = at.off_cpu.partition_point(|&(_, inn)| inn <= at.first_t + read_slack);
            let Some(last) = end.checked_sub(1).filter(|&i| at.off_cpu[i].1 > after && fits(&at.off_cpu[i])) else { return Some(0.0) };
            let (mut start, stop) = at.off_cpu[last];
            for iv in at.off_cpu[..last].iter().rev() {
                if iv.1 + CHAIN_GAP_NS < start || !fits(iv) {
                    break;
                }
                start = iv.0;
            }
            Some((stop - start) as f64 / 1e9)
        }
        WaitSource::Sampled => Some(match waiting {
            None => 0.0,
            Some((prev, first)) => {
                let began = prev.map_or(first as f64 - interval_ns / 2.0, |p| (p as f64 + first as f64) / 2.0);
                ((entered_ns - began) / 1e9).max(0.0)
            }
        }),
    }
}

/// Extends the stretch of samples of `h` at position `pos` of a thread, or starts one.
fn track(stretches: &mut HashMap<usize, Pending>, h: &Hit, prev_t: Option<u64>, t: u64, pos: usize) {
    match stretches.get_mut(&h.section) {
        Some(p) if p.depth == h.depth && p.caller == h.caller && p.last_pos + 1 == pos => p.last_pos = pos,
        _ => {
            stretches.insert(h.section, Pending { depth: h.depth, caller: h.caller, prev_t, first_t: t, last_pos: pos });
        }
    }
}

/// Every execution of every section in `run`.
pub fn analyse(run: &Run, sections: &[Section], options: &SectionOptions) -> SectionsView {
    let interval_ns = crate::period::sampling_period_ns(run) as f64;
    let off_cpu = off_cpu_intervals(run);
    let wait_source = match (&run.meta.imported, &off_cpu) {
        (Some(_), _) => WaitSource::None,
        (None, Some(_)) => WaitSource::Kernel,
        (None, None) => WaitSource::Sampled,
    };
    let no_intervals: Vec<(u64, u64)> = Vec::new();

    // Which sections each function of the run has.
    let mut by_function: HashMap<FunctionId, Vec<usize>> = HashMap::new();
    for (fi, f) in run.functions.iter().enumerate() {
        let path = run.file_path(f.file);
        let qual = run.str(f.qualname);
        for (si, s) in sections.iter().enumerate() {
            if s.file == path && s.function == qual && (f.line == 0 || f.line == s.function_line) {
                by_function.entry(fi as FunctionId).or_default().push(si);
            }
        }
    }
    // The `Condition.wait`s of threading.py: below one, a section's lock is released.
    let releases: Vec<bool> = run
        .functions
        .iter()
        .map(|f| {
            let q = run.str(f.qualname);
            run.file_path(f.file).ends_with("/threading.py") && (q == "Condition.wait" || q == "Condition.wait_for")
        })
        .collect();
    let stdlib: Vec<bool> = run.functions.iter().map(|f| run.files[f.file as usize].kind == FileKind::Stdlib).collect();

    let mut memo: HashMap<StackId, Vec<Hit>> = HashMap::new();
    let mut nested: Vec<Vec<usize>> = vec![Vec::new(); sections.len()];
    let mut hits_of = |stack: StackId, nested: &mut Vec<Vec<usize>>| -> Vec<Hit> {
        if let Some(h) = memo.get(&stack) {
            return h.clone();
        }
        // Root first.
        let mut nodes = Vec::new();
        let mut next = Some(stack);
        while let Some(n) = next {
            nodes.push(n);
            next = run.stacks[n as usize].parent;
        }
        nodes.reverse();
        let mut hits: Vec<Hit> = Vec::new();
        for (depth, &n) in nodes.iter().enumerate() {
            let frame = run.frames[run.stacks[n as usize].frame as usize];
            let Some(secs) = by_function.get(&frame.function) else { continue };
            for &si in secs {
                if hits.iter().any(|h| h.section == si && h.position == Position::Inside) {
                    continue;
                }
                let s = &sections[si];
                let below = &nodes[depth + 1..];
                let function_of = |m: &StackId| run.frames[run.stacks[*m as usize].frame as usize].function as usize;
                let hit = |position| Hit { section: si, position, depth: depth as u16, caller: run.stacks[n as usize].parent };
                if s.body_start <= frame.line && frame.line <= s.end_line {
                    if !below.iter().any(|m| releases[function_of(m)]) {
                        hits.retain(|h| h.section != si);
                        hits.push(hit(Position::Inside));
                    }
                } else if frame.line == s.line && below.iter().all(|m| stdlib[function_of(m)]) && !hits.iter().any(|h| h.section == si) {
                    hits.push(hit(Position::AtEntry));
                }
            }
        }
        let mut inside: Vec<&Hit> = hits.iter().filter(|h| h.position == Position::Inside).collect();
        inside.sort_by_key(|h| h.depth);
        for w in inside.windows(2) {
            if w[0].depth < w[1].depth && !nested[w[1].section].contains(&w[0].section) {
                nested[w[1].section].push(w[0].section);
            }
        }
        memo.insert(stack, hits.clone());
        hits
    };

    // Each thread's samples, in time order: (sample index, time, stack, state).
    let mut per_thread: Vec<Vec<(usize, u64, Option<StackId>, ThreadState, Option<WaitId>)>> = vec![Vec::new(); run.threads.len()];
    for (i, s) in run.samples.iter().enumerate() {
        for ts in &s.threads {
            per_thread[ts.thread as usize].push((i, s.t, ts.stack, ts.state, ts.wait));
        }
    }

    let mut executions: Vec<Vec<Execution>> = vec![Vec::new(); sections.len()];
    let mut short: Vec<ShortExecutions> = vec![ShortExecutions::default(); sections.len()];
    let mut inside_samples: Vec<Vec<(usize, ThreadId)>> = vec![Vec::new(); sections.len()];
    let mut waiting_samples: Vec<u64> = vec![0; sections.len()];
    // Per section: (address, type) of the objects waited on at its entry line, and how often.
    let mut objects: Vec<HashMap<(u64, StrId), u64>> = vec![HashMap::new(); sections.len()];
    // Per lock key: (sample index, thread) of every thread seen waiting to enter.
    let mut waiting_at: HashMap<&str, Vec<(usize, ThreadId)>> = HashMap::new();

    for (tid, samples) in per_thread.iter().enumerate() {
        let tid = tid as ThreadId;
        let mut open: HashMap<usize, Open> = HashMap::new();
        let mut pending: HashMap<usize, Pending> = HashMap::new();
        // The same, for samples at the entry line in any state (where the thread was last seen
        // before it entered, for kernel-exact waits).
        let mut at_entry: HashMap<usize, Pending> = HashMap::new();
        let close = |o: Open, next_t: Option<u64>, si: usize, executions: &mut Vec<Vec<Execution>>, short: &mut Vec<ShortExecutions>| {
            if o.samples < 2 {
                short[si].count_at_least += 1;
                short[si].total_s += interval_ns / 1e9;
                return;
            }
            let (start, err_start) = match o.prev_t {
                Some(p) => ((p + o.first_t) as f64 / 2.0, (o.first_t - p) as f64 / 2.0),
                None => (o.first_t as f64 - interval_ns / 2.0, interval_ns / 2.0),
            };
            let (end, err_end) = match next_t {
                Some(n) => ((o.last_t + n) as f64 / 2.0, (n - o.last_t) as f64 / 2.0),
                None => (o.last_t as f64 + interval_ns / 2.0, interval_ns / 2.0),
            };
            executions[si].push(Execution {
                thread: run.threads[tid as usize].name.clone(),
                thread_id: tid,
                start_s: start / 1e9,
                duration_s: (end - start) / 1e9,
                error_s: (err_start + err_end) / 1e9,
                wait_s: o.wait_s,
                samples: o.samples,
                waiters: vec![o.first_sample as u32, o.last_sample as u32], // resolved below
            });
        };
        for (pos, &(sample, t, stack, state, wait)) in samples.iter().enumerate() {
            let hits = stack.map(|s| hits_of(s, &mut nested)).unwrap_or_default();
            let prev_t = pos.checked_sub(1).map(|p| samples[p].1);
            // Close what this sample does not continue.
            let mut closing: Vec<usize> = open
                .iter()
                .filter(|(si, o)| !hits.iter().any(|h| h.section == **si && h.position == Position::Inside && h.depth == o.depth && h.caller == o.caller))
                .map(|(si, _)| *si)
                .collect();
            closing.sort_unstable();
            for si in closing {
                let o = open.remove(&si).unwrap();
                close(o, Some(t), si, &mut executions, &mut short);
            }
            for h in &hits {
                match h.position {
                    Position::Inside => {
                        inside_samples[h.section].push((sample, tid));
                        if let Some(o) = open.get_mut(&h.section) {
                            o.last_t = t;
                            o.last_sample = sample;
                            o.samples += 1;
                            continue;
                        }
                        let start_ns = prev_t.map_or(t as f64 - interval_ns / 2.0, |p| (p + t) as f64 / 2.0);
                        let waited = pending
                            .remove(&h.section)
                            .filter(|p| p.depth == h.depth && p.caller == h.caller && p.last_pos + 1 == pos)
                            .map(|p| (p.prev_t, p.first_t));
                        let elsewhere_t = match at_entry.remove(&h.section).filter(|p| p.depth == h.depth && p.caller == h.caller && p.last_pos + 1 == pos) {
                            Some(p) => p.prev_t,
                            None => prev_t,
                        };
                        let entry = Entry {
                            waiting: waited,
                            prev_t,
                            elsewhere_t,
                            first_t: t,
                            entered_ns: start_ns,
                            off_cpu: off_cpu.as_ref().map_or(&no_intervals[..], |v| &v[tid as usize][..]),
                        };
                        let wait_s = wait_to_enter(wait_source, &entry, interval_ns);
                        open.insert(
                            h.section,
                            Open { depth: h.depth, caller: h.caller, prev_t, first_t: t, last_t: t, first_sample: sample, last_sample: sample, samples: 1, wait_s },
                        );
                    }
                    Position::AtEntry => {
                        track(&mut at_entry, h, prev_t, t, pos);
                        if matches!(state, ThreadState::Idle | ThreadState::Gil) {
                            waiting_samples[h.section] += 1;
                            let object = wait.and_then(|w| run.waits.get(w as usize)).and_then(|w| w.object.as_ref());
                            if let Some(o) = object.filter(|o| o.addr != 0 && run.str(o.type_name) != "GIL") {
                                *objects[h.section].entry((o.addr, o.type_name)).or_default() += 1;
                            }
                            waiting_at.entry(sections[h.section].lock_key.as_str()).or_default().push((sample, tid));
                            track(&mut pending, h, prev_t, t, pos);
                        }
                    }
                }
            }
        }
        let mut rest: Vec<(usize, Open)> = open.into_iter().collect();
        rest.sort_by_key(|(si, _)| *si);
        for (si, o) in rest {
            close(o, None, si, &mut executions, &mut short);
        }
    }

    for v in waiting_at.values_mut() {
        v.sort_unstable();
    }
    let waiters_between = |key: &str, from: usize, to: usize, me: ThreadId| -> Vec<ThreadId> {
        let Some(v) = waiting_at.get(key) else { return Vec::new() };
        let lo = v.partition_point(|(s, _)| *s < from);
        let mut ts: Vec<ThreadId> = v[lo..].iter().take_while(|(s, _)| *s <= to).map(|(_, t)| *t).filter(|t| *t != me).collect();
        ts.sort_unstable();
        ts.dedup();
        ts
    };

    let mut out = Vec::with_capacity(sections.len());
    for (si, s) in sections.iter().enumerate() {
        let mut execs = std::mem::take(&mut executions[si]);
        execs.sort_by(|a, b| a.start_s.total_cmp(&b.start_s).then(a.thread_id.cmp(&b.thread_id)));
        for e in &mut execs {
            let (from, to) = (e.waiters[0] as usize, e.waiters[1] as usize);
            e.waiters = if wait_source == WaitSource::None { Vec::new() } else { waiters_between(&s.lock_key, from, to, e.thread_id) };
        }
        let sh = short[si];
        let half = interval_ns / 2e9;
        let mut durations: Vec<f64> = execs.iter().map(|e| e.duration_s).collect();
        durations.extend(std::iter::repeat_n(half, sh.count_at_least as usize));
        durations.sort_by(f64::total_cmp);
        let q = |p: f64| quantile(&durations, p);
        let n = durations.len() as f64;
        let mean = if durations.is_empty() { 0.0 } else { durations.iter().sum::<f64>() / n };
        let sd = if durations.len() < 2 { 0.0 } else { (durations.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() };
        let (median, p99) = (q(0.5), q(options.outlier_quantile));
        let threshold = p99.min(options.outlier_factor * median);
        let outliers = execs.iter().enumerate().filter(|(_, e)| e.duration_s - e.error_s > threshold).map(|(i, _)| i).collect();
        let inside = &inside_samples[si];
        let with_waiters = if wait_source == WaitSource::None {
            0
        } else {
            inside.iter().filter(|(sample, me)| !waiters_between(&s.lock_key, *sample, *sample, *me).is_empty()).count()
        };
        let mut nested_in = nested[si].clone();
        nested_in.sort_unstable();
        out.push(SectionFigures {
            file: s.file.clone(),
            function: s.function.clone(),
            line: s.line,
            body_start: s.body_start,
            end_line: s.end_line,
            lock: s.lock.clone(),
            lock_type: s.lock_type.clone(),
            kind: s.kind,
            found: s.kind.how_found().to_string(),
            execution_count: execs.len() as u64 + sh.count_at_least,
            total_hold_s: execs.iter().map(|e| e.duration_s).sum::<f64>() + sh.total_s,
            median_s: median,
            p95_s: q(0.95),
            p99_s: p99,
            max_s: durations.last().copied().unwrap_or(0.0),
            mean_s: mean,
            cv: if mean > 0.0 { sd / mean } else { 0.0 },
            waited_share: if inside.is_empty() { 0.0 } else { with_waiters as f64 / inside.len() as f64 },
            others_waited_s: waiting_samples[si] as f64 * interval_ns / 1e9,
            outlier_threshold_s: threshold,
            histogram: crate::histogram::log_histogram(execs.iter().map(|e| e.duration_s)),
            executions: execs,
            outliers,
            short: sh,
            nested_in,
            lock_objects: {
                let mut v: Vec<LockObject> = objects[si]
                    .iter()
                    .map(|(&(addr, ty), &n)| LockObject { type_name: run.str(ty).to_string(), address: format!("{addr:#x}"), samples: n })
                    .collect();
                v.sort_by(|a, b| b.samples.cmp(&a.samples).then_with(|| a.address.cmp(&b.address)));
                v
            },
        });
    }

    let how = format!(
        "Sampled every {:.3} ms: each duration is estimated within about ± one interval; executions seen in one sample only are counted, not listed; {}",
        interval_ns / 1e6,
        match wait_source {
            WaitSource::Sampled => "waits to enter are the samples idle or waiting for the GIL at the entry line (shorter waits show as 0).",
            WaitSource::Kernel => "waits to enter are kernel-exact: the time the thread was blocked off the CPU (the scheduler's context switches) right before it entered.",
            WaitSource::None => "this run has no thread states (imported), so no waits or contention are known.",
        }
    );
    let period_s = crate::period::sampling_period_s(run);
    SectionsView { interval_s: period_s, wait_source, how, unseen: unseen(&out, period_s), sections: out }
}

/// Every thread's blocked off-CPU intervals `[out, in)`, in time order, from the kernel's
/// context switches: from a switch-out in a sleeping state (not `R`, preempted) to the thread's
/// next switch-in. Some kernels do not trace every switch-in: seen on a 6.18 guest, whose second
/// CPU emitted no `sched_switch` when it left its idle task (`tracefs` showed the same gap), so a
/// thread was switched out twice with no switch-in between. There the thread's first wake-up
/// after it went to sleep (`sched_waking`, traced in the waker's context) ends the interval: the
/// moment it stopped being blocked, a few microseconds before it ran. With neither, no interval
/// is made (nothing is drawn without evidence).
fn off_cpu_intervals(run: &Run) -> Option<Vec<Vec<(u64, u64)>>> {
    if run.sched.is_none() || run.switches.is_empty() {
        return None;
    }
    let thread_of = crate::waits::thread_of_tid(run);
    enum Ev {
        Switch(u32, u8, u32),
        Wake(u32),
    }
    let mut events: Vec<(u64, Ev)> = run.switches.iter().map(|s| (s.t, Ev::Switch(s.prev_tid, s.prev_state, s.next_tid))).collect();
    events.extend(run.wakeups.iter().map(|w| (w.t, Ev::Wake(w.wakee_tid))));
    events.sort_by_key(|e| e.0);
    // Per thread: when it went to sleep, and when it was first woken since.
    let mut out: Vec<Option<(u64, Option<u64>)>> = vec![None; run.threads.len()];
    let mut per: Vec<Vec<(u64, u64)>> = vec![Vec::new(); run.threads.len()];
    for (t, e) in events {
        match e {
            Ev::Wake(tid) => {
                if let Some(th) = thread_of(tid, t) {
                    if let Some((_, woken @ None)) = &mut out[th as usize] {
                        *woken = Some(t);
                    }
                }
            }
            Ev::Switch(prev, state, next) => {
                if let Some(th) = thread_of(prev, t) {
                    // Switched out while still out: its switch-in was not traced.
                    if let Some((o, Some(w))) = out[th as usize] {
                        per[th as usize].push((o, w));
                    }
                    out[th as usize] = (state != b'R').then_some((t, None));
                }
                if let Some(th) = thread_of(next, t) {
                    if let Some((o, _)) = out[th as usize].take() {
                        per[th as usize].push((o, t));
                    }
                }
            }
        }
    }
    Some(per)
}

/// Nearest-rank quantile of sorted values (0 for none).
fn quantile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use threadradar_profiler::builder::RunBuilder;

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(quantile(&v, 1.0), 100.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }

    #[test]
    fn wait_source_none_knows_no_wait() {
        let at = |waiting, entered_ns| Entry { waiting, prev_t: None, elsewhere_t: None, first_t: 0, entered_ns, off_cpu: &[] };
        assert_eq!(wait_to_enter(WaitSource::None, &at(Some((Some(0), 1)), 5.0), 1.0), None);
        assert_eq!(wait_to_enter(WaitSource::Sampled, &at(None, 5.0), 1.0), Some(0.0));
        let w = wait_to_enter(WaitSource::Sampled, &at(Some((Some(1_000_000), 2_000_000)), 10_500_000.0), 1e6).unwrap();
        assert!((w - 0.009).abs() < 1e-12, "{w}");
    }

    #[test]
    fn kernel_waits_are_the_blocked_time_that_ended_at_the_entry() {
        const MS: u64 = 1_000_000;
        // Slept (seen sleeping at 2 ms), ran, blocked on the lock 10.2–14 ms (seen waiting at
        // 12 ms), woke, blocked 0.3 ms more for the GIL, entered; first sample inside at 16 ms.
        let off = [(MS, 10 * MS), (10 * MS + MS / 5, 14 * MS), (14 * MS + MS / 5, 14 * MS + MS / 2)];
        let at = |waiting: Option<(Option<u64>, u64)>, prev_t| Entry { waiting, prev_t, elsewhere_t: waiting.map_or(prev_t, |w| w.0), first_t: 16 * MS, entered_ns: 15e6, off_cpu: &off };
        let w = wait_to_enter(WaitSource::Kernel, &at(Some((Some(2 * MS), 12 * MS)), Some(12 * MS)), 2e6).unwrap();
        assert!((w - 0.0043).abs() < 1e-12, "{w}");
        // No sample saw it waiting, but its last sample (at 2 ms) was in the sleep: the same.
        let w = wait_to_enter(WaitSource::Kernel, &at(None, Some(2 * MS)), 2e6).unwrap();
        assert!((w - 0.0043).abs() < 1e-12, "{w}");
        // A sample at 15 ms already after the last block: it entered without waiting.
        assert_eq!(wait_to_enter(WaitSource::Kernel, &at(None, Some(15 * MS)), 2e6), Some(0.0));
        // The sleep a sample saw (at 5 ms) is never a wait for the lock.
        let sleep_only = [(MS, 10 * MS)];
        let e = Entry { waiting: None, prev_t: Some(5 * MS), elsewhere_t: Some(5 * MS), first_t: 11 * MS, entered_ns: 10.5e6, off_cpu: &sleep_only };
        assert_eq!(wait_to_enter(WaitSource::Kernel, &e, 2e6), Some(0.0));
    }

    #[test]
    fn an_untraced_switch_in_ends_at_the_wake_up() {
        use threadradar_profiler::builder::new_thread;
        use threadradar_profiler::run::{Meta, SchedInfo, SchedSwitch as Sw, SchedWakeup as Wk};
        let mut b = RunBuilder::new(Meta { interval_ms: 1.0, ..Default::default() });
        b.thread(new_thread(1, 7, 0, "A", "Thread"));
        let mut run = b.finish();
        run.sched = Some(SchedInfo { source: "perf_event_open".into(), lost_events: 0, note: None });
        let sw = |t, prev_tid, prev_state: u8, next_tid| Sw { t, prev_tid, prev_state, next_tid };
        run.switches = vec![
            sw(10, 7, b'S', 0), // slept…
            sw(50, 0, b'R', 7), // …ran again (traced): [10, 50)
            sw(60, 7, b'S', 0), // slept…
            sw(90, 7, b'S', 0), // …and slept again with no switch-in traced: woken at 80, [60, 80)
            sw(95, 7, b'R', 0), // preempted: not blocked
            sw(99, 0, b'R', 7),
            sw(120, 7, b'S', 0), // slept, no wake-up and no switch-in: no interval
            sw(130, 7, b'S', 0),
        ];
        run.wakeups = vec![Wk { t: 40, waker_tid: 3, wakee_tid: 7 }, Wk { t: 80, waker_tid: 3, wakee_tid: 7 }, Wk { t: 85, waker_tid: 3, wakee_tid: 7 }];
        assert_eq!(off_cpu_intervals(&run).unwrap(), vec![vec![(10, 50), (60, 80)]]);
    }

    fn section(function: &str, function_line: u32, line: u32, body: (u32, u32), lock: &str) -> Section {
        Section {
            file: "/p/a.py".into(),
            function: function.into(),
            function_line,
            line,
            body_start: body.0,
            end_line: body.1,
            lock: lock.into(),
            lock_key: lock.into(),
            lock_type: Some("Lock".into()),
            kind: SectionKind::With,
        }
    }

    /// Two threads taking turns at one lock, a recursive section, a section never executed.
    fn run() -> Run {
        use threadradar_profiler::builder::{new_thread, FunctionSpec};
        use threadradar_profiler::run::{Meta, Sample, ThreadSample};
        let mut b = RunBuilder::new(Meta { interval_ms: 1.0, ..Default::default() });
        let file = b.file("/p/a.py", FileKind::User, None);
        let main = b.function(file, &FunctionSpec { qualname: "main", line: 1, end_line: 8, ..Default::default() });
        let work = b.function(file, &FunctionSpec { qualname: "work", line: 10, end_line: 20, ..Default::default() });
        let rec = b.function(file, &FunctionSpec { qualname: "rec", line: 30, end_line: 40, ..Default::default() });
        let threads: Vec<ThreadId> = ["A", "B", "C"].iter().enumerate().map(|(i, n)| b.thread(new_thread(1, 2 + i as u32, i as u64, n, "Thread"))).collect();
        let m = b.frame(main, 2);
        let at = |b: &mut RunBuilder, f: FunctionId, lines: &[u32]| {
            let mut frames = vec![m];
            frames.extend(lines.iter().map(|l| b.frame(f, *l)));
            b.stack(&frames)
        };
        use ThreadState::{Computing as C, Idle as I};
        // (A's line, A's state, B's line, B's state, C's rec lines) per tick; 0 = only in main.
        let ticks: [(u32, ThreadState, u32, ThreadState, &[u32]); 9] = [
            (11, C, 11, C, &[33, 32]),
            (12, I, 11, C, &[33, 33, 32]),
            (12, I, 11, C, &[33, 33, 33]),
            (13, C, 12, I, &[33, 32]),
            (14, C, 12, I, &[33]),
            (14, C, 12, I, &[36]),
            (16, C, 13, C, &[36]),
            (16, C, 13, C, &[]),
            (16, C, 0, C, &[]),
        ];
        for (i, (la, sa, lb, sb, lc)) in ticks.iter().enumerate() {
            let sa_ = at(&mut b, work, &[*la]);
            let sb_ = if *lb == 0 { b.stack(&[m]) } else { at(&mut b, work, &[*lb]) };
            let sc_ = at(&mut b, rec, lc);
            let ts = |thread, stack, state| ThreadSample { thread, stack, state, ..Default::default() };
            b.push_sample(Sample { t: i as u64 * 1_000_000, threads: vec![ts(threads[0], sa_, *sa), ts(threads[1], sb_, *sb), ts(threads[2], sc_, C)] });
        }
        b.finish()
    }

    #[test]
    fn executions_waits_contention_recursion_and_a_section_never_run() {
        let run = run();
        let sections = [section("work", 10, 12, (13, 15), "L"), section("rec", 30, 31, (32, 34), "R"), section("work", 10, 17, (18, 19), "N")];
        let v = analyse(&run, &sections, &SectionOptions::default());
        assert_eq!(v.wait_source, WaitSource::Sampled);
        assert!((v.interval_s - 0.001).abs() < 1e-12);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let l = &v.sections[0];
        let got: Vec<_> = l.executions.iter().map(|e| (e.thread.as_str(), e.start_s, e.duration_s, e.error_s, e.wait_s.unwrap(), e.waiters.clone())).collect();
        assert_eq!(got.len(), 2, "{got:?}");
        // A: inside at ticks 3..=5, waited at 1..=2; B waited meanwhile.
        assert!(close(got[0].1, 0.0025) && close(got[0].2, 0.003) && close(got[0].3, 0.001) && close(got[0].4, 0.002), "{got:?}");
        assert_eq!((got[0].0, got[0].5.as_slice()), ("A", &[1][..]));
        // B: waited at 3..=5 while A held the lock, then inside at 6..=7.
        assert!(close(got[1].1, 0.0055) && close(got[1].2, 0.002) && close(got[1].4, 0.003), "{got:?}");
        assert_eq!((got[1].0, got[1].5.as_slice()), ("B", &[][..]));
        assert!(close(l.others_waited_s, 0.005), "{}", l.others_waited_s);
        assert!(close(l.waited_share, 3.0 / 5.0), "{}", l.waited_share);
        assert!(close(l.total_hold_s, 0.005) && close(l.median_s, 0.002) && close(l.max_s, 0.003));
        // Recursion inside the section is one execution of the outer frame.
        let r = &v.sections[1];
        assert_eq!(r.executions.len(), 1);
        assert_eq!((r.executions[0].samples, r.executions[0].thread.as_str()), (5, "C"));
        assert_eq!(r.executions[0].wait_s, Some(0.0));
        assert!(r.nested_in.is_empty());
        // Never executed: no executions, zero figures, nothing invented.
        let n = &v.sections[2];
        assert_eq!((n.execution_count, n.executions.len(), n.total_hold_s, n.median_s, n.cv), (0, 0, 0.0, 0.0, 0.0));
    }

    #[test]
    fn a_run_without_states_knows_no_waits() {
        let mut run = run();
        run.meta.imported = Some(Default::default());
        let v = analyse(&run, &[section("work", 10, 12, (13, 15), "L")], &SectionOptions::default());
        assert_eq!(v.wait_source, WaitSource::None);
        assert!(v.how.contains("no waits"));
        assert!(v.sections[0].executions.iter().all(|e| e.wait_s.is_none() && e.waiters.is_empty()));
        assert_eq!(v.sections[0].waited_share, 0.0);
    }
}

#[cfg(test)]
mod unseen_tests {
    use super::*;

    #[test]
    fn the_suggested_interval_is_a_quarter_period_in_two_digits_within_what_record_accepts() {
        assert_eq!(suggested_interval_ms(3.0), Some(0.75));
        assert_eq!(suggested_interval_ms(15.2), Some(3.8));
        assert_eq!(suggested_interval_ms(3.012), Some(0.75));
        assert_eq!(suggested_interval_ms(100.0), Some(25.0));
        assert_eq!(suggested_interval_ms(0.1), Some(MIN_INTERVAL_MS));
        assert_eq!(suggested_interval_ms(0.05), None);
        assert_eq!(suggested_interval_ms(f64::NAN), None);
    }

    #[test]
    fn without_sections_nothing_is_unseen() {
        let u = unseen(&[], 0.003);
        assert_eq!((u.listed, u.short_at_least, u.worst, u.interval_ms), (0, 0, None, Some(0.75)));
        assert!(u.sentence.starts_with("All 0 executions"), "{}", u.sentence);
    }
}
