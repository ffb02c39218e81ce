//! Thread-aware runtime metrics (paper §2.2, spec §2): frequencies of artifacts per thread, and
//! the thread-blind inclusive, self, caller and callee figures beside them.
//!
//! # How it is computed, and why that way
//!
//! A run stores one `(thread, stack, state)` per thread per tick; a program that runs for a while
//! repeats the same few thousand stacks. So the samples are first reduced to the distinct
//! `(thread, stack)` pairs in the counted states, each with its count and CPU nanoseconds. Each
//! distinct stack is then walked once to list its artifacts at every level, deduplicated with a
//! stamp array (an artifact counts once per sample even under recursion, Eq. 1), and every pair adds
//! its count to those artifacts' per-thread rows. The cost is one hash lookup per thread-sample plus
//! work proportional to the distinct pairs, not to the samples.

use crate::analysis::TimeWindow;
use crate::artifact::{ArtifactId, ArtifactKind, Artifacts, NONE};
use crate::threads::{CountedStates, ThreadFilter};
use serde::Serialize;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use threadradar_profiler::run::{FunctionId, Run, StackId, ThreadId, ThreadState};

/// `frq(a, th)` and the CPU time of one thread in one artifact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadCount {
    pub thread: ThreadId,
    /// `frq(a, th)`: counted samples of `thread` whose stack contains the artifact (> 0); CPU
    /// microseconds under [`CountedStates::CpuTime`].
    pub frq: u64,
    /// Nanoseconds of the thread in the artifact (see [`TimeSource`]).
    pub ns: u64,
    /// The thread samples behind `frq`: equal to it when samples are counted, the samples that
    /// carried CPU time under [`CountedStates::CpuTime`].
    pub samples: u64,
}

/// The frequencies of one artifact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArtifactMetrics {
    /// `frq(a)` (Eq. 2): counted samples, over all included threads, whose stack contains `a`
    /// (CPU microseconds under [`CountedStates::CpuTime`]).
    pub frq: u64,
    /// The thread samples behind `frq` (see [`ThreadCount::samples`]).
    pub samples: u64,
    /// Nanoseconds with `a` on the stack, over all included threads.
    pub ns: u64,
    /// Counted samples whose innermost frame is in `a` (self time).
    pub self_frq: u64,
    pub self_ns: u64,
    /// `frq(a, th)` (Eq. 1) for every thread that executed `a`, ascending thread id.
    pub threads: Vec<ThreadCount>,
}

/// A caller or callee of a function: samples in which the two functions are adjacent on the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The other function (the caller in a callers list, the callee in a callees list).
    pub function: FunctionId,
    /// Counted samples whose stack has this call, once per sample even if it recurs.
    pub frq: u64,
    pub ns: u64,
}

/// The program-level frequencies of one thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadMetrics {
    /// `frq(th)` (Eq. 3): counted samples of the thread (CPU microseconds under
    /// [`CountedStates::CpuTime`]).
    pub frq: u64,
    /// The thread samples behind `frq` (see [`ThreadCount::samples`]).
    pub samples: u64,
    /// Nanoseconds of the thread.
    pub ns: u64,
    /// Samples of the thread in any state (whether or not they count).
    pub observed: u64,
}

/// Where absolute times come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum TimeSource {
    /// The kernel's per-thread CPU accounting: each sample's `cpu_ns` (CPU time since the thread's
    /// previous sample) is attributed to the stack seen at that sample, whatever the thread's state
    /// then. CPU time is computing by definition, so no state filter is needed; and a thread that
    /// computes in bursts shorter than the interval is mostly seen waiting, so filtering would
    /// lose most of its time.
    Kernel,
    /// Counted samples × the sampling period ([`crate::period`]), when the run has no kernel accounting.
    Samples,
}

/// Frequencies of every artifact at every level, for one choice of counted states and thread filter.
#[derive(Clone, Debug)]
pub struct Metrics {
    total: u64,
    total_samples: u64,
    total_ns: u64,
    threads: Vec<ThreadMetrics>,
    levels: [Vec<ArtifactMetrics>; 3],
    callers: Vec<Vec<Edge>>,
    callees: Vec<Vec<Edge>>,
    time_source: TimeSource,
    period_ns: f64,
}

impl Metrics {
    /// Computes all frequencies over the samples of `window` (every sample when `None`). `run`
    /// must have passed [`Run::validate`].
    pub(crate) fn compute(
        run: &Run,
        artifacts: &Artifacts,
        states: CountedStates,
        filter: &ThreadFilter,
        window: Option<TimeWindow>,
    ) -> Metrics {
        let n_threads = run.threads.len();
        let mask = filter.mask(n_threads);
        let mut threads = vec![ThreadMetrics::default(); n_threads];

        // 1. Distinct (thread, stack) pairs of the included threads, with the number of samples in
        //    a counted state and the CPU time of all samples (see `TimeSource::Kernel`).
        let mut index: FxMap<u64, u32> = FxMap::default();
        let mut entries: Vec<Entry> = Vec::new();
        let mut any_cpu = false;
        // ComputingCpu: each thread's latest computing entry, and CPU seen before its first one.
        let carry_cpu = states == CountedStates::ComputingCpu;
        let mut last_entry: Vec<u32> = if carry_cpu { vec![u32::MAX; n_threads] } else { Vec::new() };
        let mut pending: Vec<u64> = if carry_cpu { vec![0; n_threads] } else { Vec::new() };
        let samples = match window {
            Some(w) => w.samples(run),
            None => &run.samples[..],
        };
        for sample in samples {
            for ts in &sample.threads {
                let th = ts.thread as usize;
                if th >= n_threads || !mask[th] {
                    continue;
                }
                threads[th].observed += 1;
                if carry_cpu {
                    // ComputingCpu: a blocked sample's CPU goes to the thread's computing samples.
                    if ts.state != ThreadState::Computing {
                        if ts.cpu_ns > 0 {
                            any_cpu = true;
                            match last_entry[th] {
                                u32::MAX => pending[th] += ts.cpu_ns,
                                i => {
                                    let e = &mut entries[i as usize];
                                    e.count += ts.cpu_ns / 1_000;
                                    e.ns += ts.cpu_ns;
                                }
                            }
                        }
                        continue;
                    }
                    let ns = ts.cpu_ns + std::mem::take(&mut pending[th]);
                    any_cpu |= ns > 0;
                    let i = entry_index(&mut index, &mut entries, ts.thread, ts.stack.unwrap_or(NONE));
                    let e = &mut entries[i as usize];
                    e.count += ns / 1_000;
                    e.samples += 1;
                    e.ns += ns;
                    last_entry[th] = i;
                    continue;
                }
                let weight = states.weight(ts.state, ts.cpu_ns);
                if weight == 0 && ts.cpu_ns == 0 {
                    continue;
                }
                any_cpu |= ts.cpu_ns > 0;
                let i = entry_index(&mut index, &mut entries, ts.thread, ts.stack.unwrap_or(NONE));
                let e = &mut entries[i as usize];
                e.count += weight;
                e.samples += (weight > 0) as u64;
                e.ns += ts.cpu_ns;
            }
        }
        drop(index);
        entries.sort_unstable_by_key(|e| (e.thread, e.stack));

        for e in &entries {
            threads[e.thread as usize].frq += e.count;
            threads[e.thread as usize].samples += e.samples;
        }
        // Kernel time only when every thread that counts has accounting; mixing the two sources
        // would make seconds of different threads incomparable.
        let kernel = any_cpu
            && threads.iter().zip(&run.threads).all(|(m, t)| m.frq == 0 || (t.cpu_ns_first.is_some() && t.cpu_ns_last.is_some()));
        let period_ns = crate::period::sampling_period_ns(run) as f64;
        if !kernel {
            for e in &mut entries {
                e.ns = (e.count as f64 * period_ns).round() as u64;
            }
        }
        let mut total = 0;
        let mut total_ns = 0;
        let mut total_samples = 0;
        for e in &entries {
            threads[e.thread as usize].ns += e.ns;
            total += e.count;
            total_ns += e.ns;
            total_samples += e.samples;
        }

        // 2. Walk each distinct stack once; accumulate per-thread rows at every level. The pairs
        //    are sorted by thread, so one thread's counts gather in small dense arrays (cache
        //    friendly) and are appended to the artifacts' rows when the thread changes.
        let mut stacks = StackTable::new(run, artifacts);
        let mut levels: [Vec<ArtifactMetrics>; 3] =
            ArtifactKind::ALL.map(|k| vec![ArtifactMetrics::default(); artifacts.count(k)]);
        let mut acc: [ThreadAccumulator; 3] = ArtifactKind::ALL.map(|k| ThreadAccumulator::new(artifacts.count(k)));
        let mut stack_totals: Vec<(u64, u64)> = Vec::new();
        let mut current = None;
        for e in &entries {
            if current != Some(e.thread) {
                if let Some(th) = current {
                    for (a, rows) in acc.iter_mut().zip(levels.iter_mut()) {
                        a.flush(th, rows);
                    }
                }
                current = Some(e.thread);
            }
            if e.stack == NONE || e.stack as usize >= run.stacks.len() {
                continue;
            }
            let slot = stacks.slot(e.stack);
            if stack_totals.len() <= slot {
                stack_totals.resize(slot + 1, (0, 0));
            }
            stack_totals[slot].0 += e.count;
            stack_totals[slot].1 += e.ns;
            for kind in ArtifactKind::ALL {
                let a = &mut acc[kind.slot()];
                for &id in stacks.artifacts(slot, kind) {
                    a.add(id, e.count, e.ns, e.samples);
                }
                let inner = stacks.innermost(slot, kind);
                if inner != NONE {
                    let rows = &mut levels[kind.slot()];
                    rows[inner as usize].self_frq += e.count;
                    rows[inner as usize].self_ns += e.ns;
                }
            }
        }
        if let Some(th) = current {
            for (a, rows) in acc.iter_mut().zip(levels.iter_mut()) {
                a.flush(th, rows);
            }
        }

        // 3. Callers and callees, thread-blind: summed per stack, then per call pair.
        let mut pairs: FxMap<u64, (u64, u64)> = FxMap::default();
        for (slot, &(count, ns)) in stack_totals.iter().enumerate() {
            for &p in stacks.calls(slot) {
                let v = pairs.entry(p).or_default();
                v.0 += count;
                v.1 += ns;
            }
        }
        let n_functions = artifacts.count(ArtifactKind::Function);
        let mut callers = vec![Vec::new(); n_functions];
        let mut callees = vec![Vec::new(); n_functions];
        for (p, (frq, ns)) in pairs {
            if frq == 0 {
                continue;
            }
            let (caller, callee) = ((p >> 32) as u32, p as u32);
            callers[callee as usize].push(Edge { function: caller, frq, ns });
            callees[caller as usize].push(Edge { function: callee, frq, ns });
        }
        for list in callers.iter_mut().chain(callees.iter_mut()) {
            list.sort_unstable_by(|a, b| b.frq.cmp(&a.frq).then(a.function.cmp(&b.function)));
        }

        Metrics {
            total,
            total_samples,
            total_ns,
            threads,
            levels,
            callers,
            callees,
            time_source: if kernel { TimeSource::Kernel } else { TimeSource::Samples },
            period_ns,
        }
    }

    /// `FRQ` (Eq. 4): the number of counted thread observations, Σ over samples of the counted
    /// threads in each (Fig. 2: 3 samples × 4 threads = 12).
    pub fn frq_total(&self) -> u64 {
        self.total
    }

    /// The thread samples behind FRQ: equal to it when samples are counted; under
    /// [`CountedStates::CpuTime`], the samples that carried CPU time.
    pub fn counted_samples(&self) -> u64 {
        self.total_samples
    }

    /// Nanoseconds attributed to all counted observations.
    pub fn total_ns(&self) -> u64 {
        self.total_ns
    }

    /// The frequencies of one artifact; `None` when the id is out of range.
    pub fn artifact(&self, id: ArtifactId) -> Option<&ArtifactMetrics> {
        self.levels[id.kind.slot()].get(id.index as usize)
    }

    /// All artifacts of a kind, indexed like [`Artifacts::ids`].
    pub fn level(&self, kind: ArtifactKind) -> &[ArtifactMetrics] {
        &self.levels[kind.slot()]
    }

    /// The program-level frequencies of one thread (zero for an excluded thread).
    pub fn thread(&self, th: ThreadId) -> ThreadMetrics {
        self.threads.get(th as usize).copied().unwrap_or_default()
    }

    /// The callers of a function, most frequent first.
    pub fn callers(&self, f: FunctionId) -> &[Edge] {
        self.callers.get(f as usize).map_or(&[], |v| v.as_slice())
    }

    /// The callees of a function, most frequent first.
    pub fn callees(&self, f: FunctionId) -> &[Edge] {
        self.callees.get(f as usize).map_or(&[], |v| v.as_slice())
    }

    pub fn time_source(&self) -> TimeSource {
        self.time_source
    }

    /// The run's sampling period ([`crate::period::sampling_period_ns`]), used for
    /// [`TimeSource::Samples`], in nanoseconds.
    pub fn period_ns(&self) -> f64 {
        self.period_ns
    }

    /// `crt(a)` (Eq. 5) = frq(a) / FRQ: the artifact's share of all counted runtime.
    pub fn crt(&self, id: ArtifactId) -> f64 {
        ratio(self.artifact(id).map_or(0, |m| m.frq), self.total)
    }

    /// `crt(a, th)` (Eq. 6) = frq(a, th) / frq(a): the thread's share of the artifact's runtime.
    /// Sums to 1 over the threads that executed `a`.
    pub fn crt_thread(&self, id: ArtifactId, th: ThreadId) -> f64 {
        let Some(m) = self.artifact(id) else { return 0.0 };
        let frq = m.threads.binary_search_by_key(&th, |c| c.thread).map_or(0, |i| m.threads[i].frq);
        ratio(frq, m.frq)
    }

    /// `crt(th)` (Eq. 7) = frq(th) / FRQ: the thread's share of the program's runtime.
    pub fn crt_of_thread(&self, th: ThreadId) -> f64 {
        ratio(self.thread(th).frq, self.total)
    }

    /// Self share: counted samples whose innermost frame is in `a`, over FRQ.
    pub fn self_crt(&self, id: ArtifactId) -> f64 {
        ratio(self.artifact(id).map_or(0, |m| m.self_frq), self.total)
    }
}

/// `num / den`, and 0 when there is nothing to divide by (no counted samples).
pub(crate) fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

/// The index of the (thread, stack) pair's entry, added when it is new.
fn entry_index(index: &mut FxMap<u64, u32>, entries: &mut Vec<Entry>, thread: ThreadId, stack: StackId) -> u32 {
    let key = (thread as u64) << 32 | stack as u64;
    *index.entry(key).or_insert_with(|| {
        entries.push(Entry { thread, stack, count: 0, ns: 0, samples: 0 });
        (entries.len() - 1) as u32
    })
}

/// One thread's `frq(a, th)` and nanoseconds per artifact of one level, dense, with the list of
/// artifacts touched so a flush costs only what the thread executed.
struct ThreadAccumulator {
    frq: Vec<u64>,
    ns: Vec<u64>,
    samples: Vec<u64>,
    seen: Vec<bool>,
    touched: Vec<u32>,
}

impl ThreadAccumulator {
    fn new(n: usize) -> Self {
        ThreadAccumulator { frq: vec![0; n], ns: vec![0; n], samples: vec![0; n], seen: vec![false; n], touched: Vec::new() }
    }

    #[inline]
    fn add(&mut self, a: u32, count: u64, ns: u64, samples: u64) {
        let i = a as usize;
        if !self.seen[i] {
            self.seen[i] = true;
            self.touched.push(a);
        }
        self.frq[i] += count;
        self.ns[i] += ns;
        self.samples[i] += samples;
    }

    /// Adds the thread's counts to the artifacts (threads arrive in ascending order, so rows stay
    /// sorted by thread) and clears the accumulator. A thread enters an artifact's row only if it
    /// executed it in a counted state; CPU time from its other samples still adds to the total.
    fn flush(&mut self, thread: ThreadId, rows: &mut [ArtifactMetrics]) {
        for &a in &self.touched {
            let i = a as usize;
            let (frq, ns, samples) = (self.frq[i], self.ns[i], self.samples[i]);
            let m = &mut rows[i];
            m.frq += frq;
            m.ns += ns;
            m.samples += samples;
            // A thread ran the artifact when it has counted samples of it: under computing-cpu a
            // computing sample that got no CPU in its interval (runnable, not running, on a busy
            // machine) still says which code the thread was executing.
            if frq > 0 || samples > 0 {
                m.threads.push(ThreadCount { thread, frq, ns, samples });
            }
            self.frq[i] = 0;
            self.ns[i] = 0;
            self.samples[i] = 0;
            self.seen[i] = false;
        }
        self.touched.clear();
    }
}

#[derive(Clone, Copy)]
struct Entry {
    thread: ThreadId,
    stack: StackId,
    count: u64,
    ns: u64,
    samples: u64,
}

/// Per distinct stack, computed once: its artifacts at each level (deduplicated), its innermost
/// artifact at each level, and its caller→callee pairs (deduplicated).
struct StackTable<'r> {
    run: &'r Run,
    class_of: &'r [u32],
    slot_of: Vec<u32>,
    spans: Vec<[(u32, u32); 4]>,
    inner: Vec<[u32; 3]>,
    lists: [Vec<u32>; 3],
    calls: Vec<u64>,
    marks: [Vec<u32>; 3],
    scratch: Vec<u64>,
}

impl<'r> StackTable<'r> {
    fn new(run: &'r Run, artifacts: &'r Artifacts) -> Self {
        StackTable {
            run,
            class_of: artifacts.class_of_raw(),
            slot_of: vec![NONE; run.stacks.len()],
            spans: Vec::new(),
            inner: Vec::new(),
            lists: Default::default(),
            calls: Vec::new(),
            marks: ArtifactKind::ALL.map(|k| vec![0; artifacts.count(k)]),
            scratch: Vec::new(),
        }
    }

    fn slot(&mut self, stack: StackId) -> usize {
        let s = self.slot_of[stack as usize];
        if s != NONE {
            return s as usize;
        }
        let slot = self.spans.len();
        let stamp = slot as u32 + 1;
        let mut spans = [(0u32, 0u32); 4];
        for (k, l) in self.lists.iter().enumerate() {
            spans[k].0 = l.len() as u32;
        }
        let mut inner = [NONE; 3];
        self.scratch.clear();
        let mut callee: Option<FunctionId> = None;
        for (depth, frame) in self.run.stack_frames(stack).enumerate() {
            let f = frame.function;
            let file = self.run.functions[f as usize].file;
            let class = self.class_of[f as usize];
            for (k, a) in [f, class, file].into_iter().enumerate() {
                if depth == 0 {
                    inner[k] = a;
                }
                if a != NONE && self.marks[k][a as usize] != stamp {
                    self.marks[k][a as usize] = stamp;
                    self.lists[k].push(a);
                }
            }
            // A call within one function (direct recursion) is not listed as its own caller.
            if let Some(c) = callee.filter(|&c| c != f) {
                self.scratch.push((f as u64) << 32 | c as u64);
            }
            callee = Some(f);
        }
        self.scratch.sort_unstable();
        self.scratch.dedup();
        spans[3].0 = self.calls.len() as u32;
        self.calls.extend_from_slice(&self.scratch);
        for (k, l) in self.lists.iter().enumerate() {
            spans[k].1 = l.len() as u32;
        }
        spans[3].1 = self.calls.len() as u32;
        self.spans.push(spans);
        self.inner.push(inner);
        self.slot_of[stack as usize] = slot as u32;
        slot
    }

    fn artifacts(&self, slot: usize, kind: ArtifactKind) -> &[u32] {
        let (a, b) = self.spans[slot][kind.slot()];
        &self.lists[kind.slot()][a as usize..b as usize]
    }

    fn innermost(&self, slot: usize, kind: ArtifactKind) -> u32 {
        self.inner[slot][kind.slot()]
    }

    fn calls(&self, slot: usize) -> &[u64] {
        let (a, b) = self.spans[slot][3];
        &self.calls[a as usize..b as usize]
    }
}

/// Rust's `FxHasher` (rustc): the keys here are small integers from the run, not attacker
/// controlled, so a multiply-rotate hash is enough and several times faster than SipHash.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64)
    }
    #[inline]
    fn finish(&self) -> u64 {
        // Fold the high half down: keys put the thread in the high 32 bits, and the table picks
        // buckets from the low bits.
        self.0 ^ (self.0 >> 32)
    }
}

pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
