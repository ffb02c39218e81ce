//! Which thread observations count: thread states (spec §1) and the thread filter (paper §4.2).

use crate::error::AnalysisError;
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use std::collections::{BTreeMap, BTreeSet};
use threadradar_profiler::run::{Run, ThreadId, ThreadState};

/// The thread states whose samples the metrics count.
///
/// The paper counts only Java `Runnable` threads: on CPU, ready to run, or in blocking I/O. The
/// Python equivalent is [`ThreadState::Computing`]. Including threads that wait for the GIL shows
/// contention as runtime; including idle threads is there for completeness (the paper tried it
/// for deadlocks, §7.3, and found nothing). [`CountedStates::CpuTime`] weighs every observation by
/// the CPU time the kernel accounted to its thread, which is exact for a thread's total where
/// counting is not (threads that compute in bursts shorter than the interval), but lands a blocked
/// thread's CPU on the frames it blocked in. [`CountedStates::ComputingCpu`] takes the best of
/// both: the computing samples say which code ran, the kernel says how much CPU it took. The
/// default, [`CountedStates::Auto`], is that whenever a run has the kernel's accounting
/// (docs/metrics.md, "Counted states").
///
/// Defined once for every surface: `report --states`, the panels' and the language server's
/// `states` parameter and setting all spell it `auto`, `computing`, `computing-cpu`,
/// `computing+gil`, `all` or `cpu`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum CountedStates {
    /// The default: [`CountedStates::ComputingCpu`] for a run with the kernel's per-thread CPU
    /// accounting (every run `record` makes on Linux), else [`CountedStates::Computing`]
    /// (imported profiles, runs whose `/proc` accounting could not be read). Resolved per run by
    /// [`CountedStates::resolve`] before anything is counted, so no figure is ever "auto".
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// Only [`ThreadState::Computing`] samples, one each: the paper's metric.
    #[serde(rename = "computing")]
    Computing,
    /// The [`ThreadState::Computing`] samples, each weighted by the CPU time the kernel accounted
    /// to its thread (`ThreadSample::cpu_ns`, in microseconds): which code a thread ran comes
    /// from the samples where it was seen computing, how much CPU it took from the kernel. CPU
    /// time that a thread used in an interval that ended with it blocked (it computed, then
    /// waited) is added to its previous computing sample, the code it was last seen running (to
    /// its next one when there was none yet). So every thread's total is its exact CPU time (but
    /// for a thread never seen computing), membership is the computing samples' (a blocked
    /// thread's frames never count), and FRQ is CPU microseconds. Needs kernel accounting.
    #[serde(rename = "computing-cpu")]
    #[cfg_attr(feature = "clap", value(name = "computing-cpu"))]
    ComputingCpu,
    /// [`ThreadState::Computing`] and [`ThreadState::Gil`].
    #[serde(rename = "computing+gil")]
    #[cfg_attr(feature = "clap", value(name = "computing+gil"))]
    ComputingAndGil,
    /// Every state, idle included.
    #[serde(rename = "all")]
    All,
    /// The waiting samples — idle (blocked on a lock, a condition, a queue, I/O, a sleep) or
    /// waiting for the GIL —, one each: the **waiting radar** (spec §1). Every figure (crt, the
    /// clusters, the glyphs, the hints) then says which threads *waited* in an artifact, and how
    /// the waiting was spread over them, instead of which computed there.
    #[serde(rename = "waiting")]
    #[cfg_attr(feature = "clap", value(name = "waiting"))]
    Waiting,
    /// Not a count of samples but of CPU time: every thread observation weighs the microseconds of
    /// CPU the kernel accounted to the thread since its previous sample (`ThreadSample::cpu_ns`),
    /// whatever its state. Eq. 1–7 hold unchanged with these weights, and FRQ becomes the total
    /// CPU time. Exact where sampling is noisy (threads that compute in bursts of microseconds
    /// between waits); the time is attributed to the stack seen at the end of its interval.
    /// Needs kernel accounting in the run.
    #[serde(rename = "cpu")]
    #[cfg_attr(feature = "clap", value(name = "cpu"))]
    CpuTime,
}

impl CountedStates {
    /// What [`CountedStates::Auto`] means for these runs: computing samples weighted by CPU time
    /// when every one of them has the kernel's accounting (runs compared with each other must
    /// count the same way), else computing samples. Any other choice is returned as it is.
    pub fn resolve(self, runs: &[&Run]) -> CountedStates {
        match self {
            CountedStates::Auto if !runs.is_empty() && runs.iter().all(|r| has_cpu_accounting(r)) => CountedStates::ComputingCpu,
            CountedStates::Auto => CountedStates::Computing,
            other => other,
        }
    }

    /// Whether a sample in `state` counts.
    #[inline]
    pub fn counts(self, state: ThreadState) -> bool {
        match self {
            CountedStates::Computing | CountedStates::ComputingCpu | CountedStates::Auto => state == ThreadState::Computing,
            CountedStates::ComputingAndGil => state != ThreadState::Idle,
            CountedStates::All | CountedStates::CpuTime => true,
            CountedStates::Waiting => state != ThreadState::Computing,
        }
    }

    /// What one thread observation adds to the frequencies: 1 or 0 by state, or its CPU
    /// microseconds for [`CountedStates::CpuTime`] (and, before the CPU of the thread's blocked
    /// samples is carried over, for [`CountedStates::ComputingCpu`], which the metrics apply).
    /// ([`CountedStates::Auto`] is resolved first; unresolved, it counts as computing.)
    #[inline]
    pub fn weight(self, state: ThreadState, cpu_ns: u64) -> u64 {
        match self {
            CountedStates::CpuTime => cpu_ns / 1_000,
            CountedStates::ComputingCpu => (state == ThreadState::Computing) as u64 * (cpu_ns / 1_000),
            _ => self.counts(state) as u64,
        }
    }

    /// `auto`, `computing`, `computing-cpu`, `computing+gil`, `all`, `waiting` or `cpu`, as every
    /// surface spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            CountedStates::Auto => "auto",
            CountedStates::Computing => "computing",
            CountedStates::ComputingCpu => "computing-cpu",
            CountedStates::ComputingAndGil => "computing+gil",
            CountedStates::All => "all",
            CountedStates::Waiting => "waiting",
            CountedStates::CpuTime => "cpu",
        }
    }

    pub const ALL: [CountedStates; 7] = [
        CountedStates::Auto,
        CountedStates::Computing,
        CountedStates::ComputingCpu,
        CountedStates::ComputingAndGil,
        CountedStates::All,
        CountedStates::Waiting,
        CountedStates::CpuTime,
    ];

    /// Whether frequencies are CPU microseconds rather than sample counts.
    pub fn is_cpu_weighted(self) -> bool {
        matches!(self, CountedStates::CpuTime | CountedStates::ComputingCpu)
    }
}

/// Whether a run carries the kernel's per-thread CPU accounting: every thread has its
/// `schedstat` readings and some observation carries CPU time (a run imported from another
/// profiler's format has none).
pub fn has_cpu_accounting(run: &Run) -> bool {
    !run.threads.is_empty()
        && run.threads.iter().all(|t| t.cpu_ns_first.is_some() && t.cpu_ns_last.is_some())
        && run.samples.iter().any(|s| s.threads.iter().any(|t| t.cpu_ns > 0))
}

impl std::fmt::Display for CountedStates {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for CountedStates {
    type Err = AnalysisError;
    fn from_str(s: &str) -> Result<Self, AnalysisError> {
        CountedStates::ALL.into_iter().find(|c| c.as_str() == s).ok_or_else(|| AnalysisError::BadValue {
            what: "counted states",
            value: s.to_string(),
            expected: "auto, computing, computing-cpu, computing+gil, all or cpu",
        })
    }
}

/// A thread filter: the set of threads left out of every metric and clustering.
///
/// Under a filter FRQ (Eq. 4) counts only the included threads, so `crt` values are shares of the
/// included threads' runtime, exactly as if the excluded threads had never been sampled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadFilter {
    excluded: BTreeSet<ThreadId>,
}

impl ThreadFilter {
    /// The filter that keeps every thread.
    pub fn all() -> Self {
        ThreadFilter::default()
    }

    /// A filter excluding the given threads.
    pub fn excluding(threads: impl IntoIterator<Item = ThreadId>) -> Self {
        ThreadFilter { excluded: threads.into_iter().collect() }
    }

    /// Excludes every thread whose name is in `names` and every thread whose type is in `types`.
    /// A name or type that matches no thread of the run is an error (most likely a typo).
    pub fn by_names(run: &Run, names: &[String], types: &[String]) -> Result<Self, AnalysisError> {
        let mut excluded = BTreeSet::new();
        let mut exclude_where = |matches: &dyn Fn(&threadradar_profiler::run::Thread) -> bool| {
            let hits: Vec<ThreadId> = (0..run.threads.len() as ThreadId).filter(|&i| matches(&run.threads[i as usize])).collect();
            excluded.extend(hits.iter().copied());
            !hits.is_empty()
        };
        for name in names {
            if !exclude_where(&|t| &t.name == name) {
                return Err(AnalysisError::UnknownThread { name: name.clone(), known: known(run.threads.iter().map(|t| t.name.as_str())) });
            }
        }
        for ty in types {
            if !exclude_where(&|t| &t.thread_type == ty) {
                return Err(AnalysisError::UnknownThreadType {
                    name: ty.clone(),
                    known: known(run.threads.iter().map(|t| t.thread_type.as_str())),
                });
            }
        }
        Ok(ThreadFilter { excluded })
    }

    /// Adds a thread to the excluded set.
    pub fn exclude(&mut self, thread: ThreadId) {
        self.excluded.insert(thread);
    }

    #[inline]
    pub fn includes(&self, thread: ThreadId) -> bool {
        self.excluded.is_empty() || !self.excluded.contains(&thread)
    }

    /// The excluded threads, ascending.
    pub fn excluded(&self) -> impl Iterator<Item = ThreadId> + '_ {
        self.excluded.iter().copied()
    }

    /// A dense lookup table for a run with `n` threads (`true` = included).
    pub(crate) fn mask(&self, n: usize) -> Vec<bool> {
        (0..n as ThreadId).map(|t| self.includes(t)).collect()
    }
}

fn known<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let set: BTreeSet<&str> = names.collect();
    let mut list: Vec<&str> = set.into_iter().take(12).collect();
    if list.is_empty() {
        return "none".to_string();
    }
    if list.len() == 12 {
        list.push("…");
    }
    list.join(", ")
}

/// A thread type (spec §1): the class of the Python `threading.Thread` object, or what the
/// profiler derived from the entry point; the threads of a run grouped by it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ThreadType {
    pub name: String,
    pub threads: Vec<ThreadId>,
}

/// The run's thread types, by name, each with its threads in id order.
pub fn thread_types(run: &Run) -> Vec<ThreadType> {
    let mut by: BTreeMap<&str, Vec<ThreadId>> = BTreeMap::new();
    for (i, t) in run.threads.iter().enumerate() {
        by.entry(t.thread_type.as_str()).or_default().push(i as ThreadId);
    }
    by.into_iter().map(|(name, threads)| ThreadType { name: name.to_string(), threads }).collect()
}
