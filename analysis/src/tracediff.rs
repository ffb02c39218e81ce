//! Two runs compared as traces (TraceDiff, paper `001`): which stretches of run A correspond to
//! which stretches of run B, what got shorter, what moved, what is only in one run.
//!
//! # Threads
//!
//! Two runs share no thread ids. Threads are paired in two steps:
//!
//! 1. **by key**: name, thread type and entry point (the outermost function of the program's own
//!    code on the thread's stacks, else its outermost function), when that key belongs to exactly
//!    one thread in each run;
//! 2. **by assignment**: the rest (renamed threads, keys shared by several threads, different
//!    thread counts) by a maximum-weight assignment (Hungarian / Kuhn–Munkres) whose weight is the
//!    threads' total stack similarity — the weighted Jaccard index of their per-function stack time,
//!    `Σ_f min(tA(f), tB(f)) / Σ_f max(tA(f), tB(f))` — plus a bonus for the same type, entry point
//!    and name. A pair with no stack time in common and neither type nor entry point in common is
//!    not a pair: both threads are listed as unmatched.
//!
//! # Segments
//!
//! The unit matched is a **segment** of a thread's timeline (see [`crate::timeline`]): the stretch
//! between two consecutive bar boundaries of its icicle, over which the bars covering it — one per
//! depth, root to leaf — do not change. Its stack `Γ(f)` is the set of functions of those bars.
//! Functions of two runs are the same function when their qualified names are equal and, outside
//! the program's own code, their files too (a fix may rename `buggy.py` to `fixed.py`; two
//! libraries' `<module>` are not the same). Durations are in seconds of each run's own clock (a
//! segment covers the sampling intervals of its samples), so runs sampled at different intervals
//! are compared in time, not in samples; [`TraceDiff::notes`] says so when the intervals differ.
//!
//! # Matching (per thread pair)
//!
//! Stack similarity `s(a, b) = |Γ(a) ∩ Γ(b)| / |Γ(a) ∪ Γ(b)|`; `a` and `b` may match when
//! `s ≥ τ` (default 0.2). The matching is the monotone alignment (an LCS-style dynamic programme,
//! as in TraceDiff) that maximises the similarity-weighted matched time `Σ s·(dA + dB)` over the
//! matched pairs: a long stretch under the same caller does not displace an identical stack. Consecutive matches `(i, j), (i+1, j+1)` form a **match group** with
//! its start and duration in A and in B and its **time shift** (start in B − start in A).
//! Unmatched consecutive segments form stretches **only in A** / **only in B**.
//!
//! The programme is exact while `n·m` stays within [`TraceOptions::max_cells`] (4 M); beyond that it is
//! restricted to a band around the diagonal `j ≈ i·m/n` (as DTW's Sakoe–Chiba band) holding about
//! that many cells, and the pair says `banded: true`.
//!
//! `matched_share` = matched stack time of both runs / all stack time of both runs (matched
//! threads and unmatched ones).

use crate::artifact::ArtifactKind;
use crate::changes::{Change, ChangeEvidence as Evidence, EvidenceSource as Source, EvidenceUnit as Unit, Figure};
use crate::compare::DeltaStatus;
use crate::timeline::{Lane, TimelineIndex};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use threadradar_profiler::run::{FileKind, FrameId, Run, ThreadId, ThreadState};

/// How two runs are matched.
#[derive(Clone, Debug)]
pub struct TraceOptions {
    /// Minimal stack similarity of a match, τ.
    pub tau: f64,
    /// The dynamic programme of one thread pair is exact up to this many cells, banded beyond.
    pub max_cells: usize,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions { tau: 0.2, max_cells: 4_000_000 }
    }
}

/// One function of a stack, for showing it and for navigating to it.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct TraceFrame {
    pub qualname: String,
    pub file: String,
    /// The line executed at the first sample of the bar.
    pub line: u32,
}

/// One thread of one run.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct TraceThread {
    /// Its id in its run.
    pub id: u32,
    pub name: String,
    pub thread_type: String,
    /// Qualified name of its entry point (see the module documentation).
    pub entry: Option<String>,
    /// Seconds the thread had a sampled stack.
    pub stack_s: f64,
    /// For an asyncio task unit (`--units tasks`): the name of its event loop's thread, whose
    /// pair it is listed after.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent: Option<String>,
}

/// How a thread pair was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum PairedBy {
    /// The same name, type and entry point, unique in both runs.
    Key,
    /// The maximum-similarity assignment.
    Assignment,
}

/// Two threads matched, with their timelines' alignment.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct ThreadPair {
    pub a: TraceThread,
    pub b: TraceThread,
    pub paired_by: PairedBy,
    /// Weighted Jaccard index of the two threads' per-function stack time.
    pub similarity: f64,
    /// Matched stack time of the two threads / their stack time.
    pub matched_share: f64,
    /// Whether the alignment was restricted to a band around the diagonal (see the module docs).
    pub banded: bool,
    pub only_in_a: Vec<Stretch>,
    pub only_in_b: Vec<Stretch>,
}

/// When a matched stretch happens in B compared with A, within the runs' uncertainty
/// ([`TraceDiff::same_shift_s`]): the one classification every client shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Shift {
    Earlier,
    Same,
    Later,
}

impl Shift {
    /// The class of a shift `shift_s` (B − A, seconds) when shifts within `same_s` are the same time.
    pub fn of(shift_s: f64, same_s: f64) -> Shift {
        if shift_s < -same_s {
            Shift::Earlier
        } else if shift_s > same_s {
            Shift::Later
        } else {
            Shift::Same
        }
    }
}

/// Consecutive matched segments.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct MatchGroup {
    /// Index into [`TraceDiff::pairs`].
    pub pair: usize,
    /// Seconds from run A's start.
    pub a_start_s: f64,
    /// Stack time of the group's segments in A.
    pub a_duration_s: f64,
    pub b_start_s: f64,
    pub b_duration_s: f64,
    /// `b_start_s − a_start_s`: negative when the stretch happens earlier in B.
    pub shift_s: f64,
    /// `shift_s` classified by [`TraceDiff::same_shift_s`].
    pub shift: Shift,
    /// Its stack time changed by more than [`TraceDiff::same_shift_s`] (A's against B's).
    pub resized: bool,
    /// Mean stack similarity of the matched segments, weighted by their time.
    pub similarity: f64,
    pub segments: usize,
    /// The stacks (root first) of the group's longest segment in A and in B.
    pub stack_a: Vec<TraceFrame>,
    pub stack_b: Vec<TraceFrame>,
    /// Qualified names of the program's own functions on any of the group's stacks (both runs),
    /// sorted: what links the group to the artifact table.
    pub functions: Vec<String>,
}

/// Consecutive segments of one thread that match nothing in the other run.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct Stretch {
    pub start_s: f64,
    pub duration_s: f64,
    pub segments: usize,
    /// The stack of the stretch's longest segment, root first.
    pub stack: Vec<TraceFrame>,
}

/// Two runs compared as traces.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct TraceDiff {
    pub tau: f64,
    /// Matched stack time / all stack time, both runs together.
    pub matched_share: f64,
    /// Stack time of all threads, per run.
    pub a_stack_s: f64,
    pub b_stack_s: f64,
    pub a_duration_s: f64,
    pub b_duration_s: f64,
    /// Sampling periods, ms.
    pub a_period_ms: f64,
    pub b_period_ms: f64,
    /// A shift within this many seconds (two sampling periods of the coarser run) is "the same
    /// time": a segment's edges are uncertain by one period in each run.
    pub same_shift_s: f64,
    pub pairs: Vec<ThreadPair>,
    /// All pairs' match groups, by pair then start in A.
    pub groups: Vec<MatchGroup>,
    pub unmatched_a: Vec<TraceThread>,
    pub unmatched_b: Vec<TraceThread>,
    /// What the reader must know: different intervals, unrelated programs, banding.
    pub notes: Vec<String>,
}

/// Both runs' functions, interned by the cross-run identity of the module documentation.
struct Keys {
    ids: HashMap<(bool, String, String), u32>,
    /// Per key: qualified name and whether it is the program's own code.
    info: Vec<(String, bool)>,
}

impl Keys {
    fn of_run(&mut self, run: &Run) -> Vec<u32> {
        run.functions
            .iter()
            .map(|f| {
                let file = &run.files[f.file as usize];
                let user = file.kind == FileKind::User;
                let qualname = run.strings[f.qualname as usize].clone();
                let path = if user { String::new() } else { run.strings[file.path as usize].clone() };
                let next = self.ids.len() as u32;
                *self.ids.entry((user, path, qualname.clone())).or_insert_with(|| {
                    self.info.push((qualname, user));
                    next
                })
            })
            .collect()
    }
}

/// One run's segments of one thread.
#[derive(Default)]
struct Segments {
    /// Per segment: start and end in ns, stack class.
    start: Vec<u64>,
    end: Vec<u64>,
    class: Vec<u32>,
}

/// The distinct stacks of a run: sorted, deduplicated function keys and the frames, root first.
#[derive(Default)]
struct Classes {
    by_frames: HashMap<Vec<FrameId>, u32>,
    sets: Vec<Vec<u32>>,
    frames: Vec<Vec<FrameId>>,
}

struct Side<'r> {
    run: &'r Run,
    classes: Classes,
    threads: Vec<Segments>,
    /// Per thread: ns of stack time per function key.
    profiles: Vec<HashMap<u32, u64>>,
    entries: Vec<Option<String>>,
}

fn lane_segments(lane: &Lane, times: &[u64], keys: &[u32], run: &Run, classes: &mut Classes) -> Segments {
    let mut out = Segments::default();
    let mut ptr = vec![0usize; lane.rows.len()];
    let mut path: Vec<FrameId> = Vec::new();
    for w in lane.boundaries.windows(2) {
        let (t0, t1) = (w[0], w[1]);
        path.clear();
        for (d, row) in lane.rows.iter().enumerate() {
            let p = &mut ptr[d];
            while *p < row.len() && row[*p].end() <= t0 {
                *p += 1;
            }
            match row.get(*p) {
                Some(bar) if bar.start() <= t0 => path.push(bar.frame()),
                _ => break,
            }
        }
        if path.is_empty() {
            continue; // a gap: the thread was not sampled
        }
        let next = classes.sets.len() as u32;
        let class = match classes.by_frames.get(&path) {
            Some(&c) => c,
            None => {
                let mut set: Vec<u32> = path.iter().map(|&f| keys[run.frames[f as usize].function as usize]).collect();
                set.sort_unstable();
                set.dedup();
                classes.sets.push(set);
                classes.frames.push(path.clone());
                classes.by_frames.insert(path.clone(), next);
                next
            }
        };
        // Consecutive boundaries can delimit the same stack (a bar of another depth ended and the
        // same function began again): one segment.
        if out.class.last() == Some(&class) && out.end.last() == Some(&times[t0 as usize]) {
            *out.end.last_mut().unwrap() = times[t1 as usize];
            continue;
        }
        out.start.push(times[t0 as usize]);
        out.end.push(times[t1 as usize]);
        out.class.push(class);
    }
    out
}

impl<'r> Side<'r> {
    fn new(run: &'r Run, index: &'r TimelineIndex, all: &mut Keys) -> Side<'r> {
        let keys = all.of_run(run);
        let mut classes = Classes::default();
        let threads: Vec<Segments> =
            index.lanes(run).iter().map(|lane| lane_segments(lane, &index.times, &keys, run, &mut classes)).collect();
        let profiles = threads
            .iter()
            .map(|s| {
                let mut p: HashMap<u32, u64> = HashMap::new();
                for k in 0..s.class.len() {
                    for &f in &classes.sets[s.class[k] as usize] {
                        *p.entry(f).or_default() += s.end[k] - s.start[k];
                    }
                }
                p
            })
            .collect();
        let entries = threads
            .iter()
            .map(|s| {
                let frames = &classes.frames[*s.class.first()? as usize];
                let user = frames.iter().find(|&&f| all.info[keys[run.frames[f as usize].function as usize] as usize].1);
                let f = user.or(frames.first())?;
                Some(all.info[keys[run.frames[*f as usize].function as usize] as usize].0.clone())
            })
            .collect();
        Side { run, classes, threads, profiles, entries }
    }

    fn stack_ns(&self, t: usize) -> u64 {
        let s = &self.threads[t];
        s.end.iter().zip(&s.start).map(|(e, s)| e - s).sum()
    }

    fn thread(&self, t: usize) -> TraceThread {
        let th = &self.run.threads[t];
        TraceThread {
            id: t as u32,
            name: th.name.clone(),
            thread_type: th.thread_type.clone(),
            entry: self.entries[t].clone(),
            stack_s: secs(self.stack_ns(t)),
            parent: crate::timeline::tasks::parent(self.run, t as ThreadId).map(|p| self.run.threads[p as usize].name.clone()),
        }
    }

    fn stack(&self, class: u32) -> Vec<TraceFrame> {
        let run = self.run;
        self.classes.frames[class as usize]
            .iter()
            .map(|&f| {
                let frame = &run.frames[f as usize];
                let func = &run.functions[frame.function as usize];
                TraceFrame {
                    qualname: run.strings[func.qualname as usize].clone(),
                    file: run.strings[run.files[func.file as usize].path as usize].clone(),
                    line: frame.line,
                }
            })
            .collect()
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Weighted Jaccard index of two per-function time profiles.
fn weighted_jaccard(a: &HashMap<u32, u64>, b: &HashMap<u32, u64>) -> f64 {
    let (mut min, mut max) = (0u64, 0u64);
    for (k, &x) in a {
        let y = b.get(k).copied().unwrap_or(0);
        min += x.min(y);
        max += x.max(y);
    }
    for (k, &y) in b {
        if !a.contains_key(k) {
            max += y;
        }
    }
    if max == 0 {
        0.0
    } else {
        min as f64 / max as f64
    }
}

/// `|A ∩ B| / |A ∪ B|` of two sorted, deduplicated sets.
fn jaccard(a: &[u32], b: &[u32]) -> f64 {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    if union == 0 {
        0.0
    } else {
        common as f64 / union as f64
    }
}

/// Pairs the threads of two runs (module documentation): `(a, b, paired_by, similarity)`.
fn pair_threads(a: &Side, b: &Side) -> Vec<(usize, usize, PairedBy, f64)> {
    let live = |s: &Side| -> Vec<usize> { (0..s.threads.len()).filter(|&t| !s.threads[t].class.is_empty()).collect() };
    let (la, lb) = (live(a), live(b));
    let key = |s: &Side, t: usize| (s.run.threads[t].name.clone(), s.run.threads[t].thread_type.clone(), s.entries[t].clone());
    let mut count: HashMap<_, (Vec<usize>, Vec<usize>)> = HashMap::new();
    for &t in &la {
        count.entry(key(a, t)).or_default().0.push(t);
    }
    for &t in &lb {
        count.entry(key(b, t)).or_default().1.push(t);
    }
    let mut out = Vec::new();
    let (mut used_a, mut used_b) = (HashSet::new(), HashSet::new());
    for (xs, ys) in count.values() {
        if let ([x], [y]) = (xs.as_slice(), ys.as_slice()) {
            out.push((*x, *y, PairedBy::Key, weighted_jaccard(&a.profiles[*x], &b.profiles[*y])));
            used_a.insert(*x);
            used_b.insert(*y);
        }
    }
    let ra: Vec<usize> = la.into_iter().filter(|t| !used_a.contains(t)).collect();
    let rb: Vec<usize> = lb.into_iter().filter(|t| !used_b.contains(t)).collect();
    if !ra.is_empty() && !rb.is_empty() {
        // Weights in thousandths: similarity (≤ 1000) + 300 same type + 300 same entry + 100
        // same name; 0 for a pair that must not be made.
        let score = |x: usize, y: usize| -> (i64, f64) {
            let (ta, tb) = (&a.run.threads[x], &b.run.threads[y]);
            let sim = weighted_jaccard(&a.profiles[x], &b.profiles[y]);
            let same_type = ta.thread_type == tb.thread_type;
            let same_entry = a.entries[x].is_some() && a.entries[x] == b.entries[y];
            if sim == 0.0 && !same_type && !same_entry {
                return (0, sim);
            }
            let w = (sim * 1000.0).round() as i64 + 300 * same_type as i64 + 300 * same_entry as i64 + 100 * (ta.name == tb.name) as i64;
            (w.max(1), sim)
        };
        let transpose = ra.len() > rb.len();
        let (rows, cols) = if transpose { (&rb, &ra) } else { (&ra, &rb) };
        let weights: Vec<Vec<i64>> = rows
            .iter()
            .map(|&r| cols.iter().map(|&c| if transpose { score(c, r).0 } else { score(r, c).0 }).collect())
            .collect();
        let matrix = pathfinding::matrix::Matrix::from_rows(weights).expect("rows of equal length");
        let (_, assignment) = pathfinding::kuhn_munkres::kuhn_munkres(&matrix);
        for (r, &c) in assignment.iter().enumerate() {
            if matrix[(r, c)] <= 0 {
                continue;
            }
            let (x, y) = if transpose { (cols[c], rows[r]) } else { (rows[r], cols[c]) };
            out.push((x, y, PairedBy::Assignment, score(x, y).1));
        }
    }
    // In A's thread order, each task unit's pair right after its event loop thread's (as the
    // timeline groups them).
    let ids: Vec<ThreadId> = (0..a.run.threads.len() as ThreadId).collect();
    let mut rank = vec![0usize; ids.len()];
    for (r, t) in crate::timeline::tasks::grouped(a.run, &ids).into_iter().enumerate() {
        rank[t as usize] = r;
    }
    out.sort_by_key(|p| (rank[p.0], p.1));
    out
}

/// The stack similarity of the classes of one thread pair.
///
/// The alignment asks for `s` at every cell of its programme (up to [`TraceOptions::max_cells`]
/// per pair), and when segments rarely repeat (a new stack at most samples) nearly every cell is
/// a class pair not seen before, so a cache does not help. Instead the functions on the pair's
/// stacks are numbered densely (a thread pair runs few of the runs' functions) and each class
/// becomes a bitset of them: `|Γ(a) ∩ Γ(b)|` is a popcount over a few words, and the sets' sizes
/// are kept, so the union is `|Γ(a)| + |Γ(b)| − |Γ(a) ∩ Γ(b)|`. A pair with more than
/// [`BITSET_FUNCTIONS`] functions keeps the sorted-set merge with a cache ([`SimCache`]). Both give
/// the same values: the ratio of the same two counts, rounded to `f32` as the cache stores it.
trait Similarity {
    /// The similarity of segment `i` of A and segment `j` of B if it is at least `tau`.
    fn at_least(&mut self, i: usize, j: usize, tau: f64) -> Option<f64>;
}

/// Up to this many distinct functions on a thread pair's stacks, similarities are bitset popcounts.
const BITSET_FUNCTIONS: usize = 1024;

#[cfg(test)]
thread_local! {
    /// Tests compare the fast path (bitset similarity, pruned programme) with the reference
    /// (sorted-set merge, every cell's similarity) by forcing the latter.
    static REFERENCE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a test asked for the reference computation.
#[inline]
fn reference() -> bool {
    #[cfg(test)]
    return REFERENCE.with(|f| f.get());
    #[cfg(not(test))]
    false
}

/// The alignment of one thread pair with the fastest similarity that applies (see [`BitSim`]).
fn align_pair(a: &[Vec<u32>], b: &[Vec<u32>], sa: &Segments, sb: &Segments, tau: f64, max_cells: usize) -> (Vec<(usize, usize, f64)>, bool) {
    if !reference() {
        if let Some(mut bits) = BitSim::new(a, b, sa, sb) {
            return align(sa, sb, &mut bits, tau, max_cells);
        }
    }
    align(sa, sb, &mut SimCache::new(a, b, sa, sb), tau, max_cells)
}

/// Renumbers the classes of a segment sequence densely: per segment its local number, and per
/// local number its class.
fn renumber(classes: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut of: HashMap<u32, u32> = HashMap::new();
    let mut back = Vec::new();
    let local = classes
        .iter()
        .map(|&c| {
            *of.entry(c).or_insert_with(|| {
                back.push(c);
                back.len() as u32 - 1
            })
        })
        .collect();
    (local, back)
}

/// [`Similarity`] by bitsets: per local class, `words` words of function bits and the set's size.
struct BitSim {
    words: usize,
    /// Per segment of each side: its class's local number.
    local_a: Vec<u32>,
    local_b: Vec<u32>,
    bits_a: Vec<u64>,
    bits_b: Vec<u64>,
    len_a: Vec<u32>,
    len_b: Vec<u32>,
}

impl BitSim {
    /// `None` when the pair's stacks hold more than [`BITSET_FUNCTIONS`] distinct functions.
    fn new(a: &[Vec<u32>], b: &[Vec<u32>], sa: &Segments, sb: &Segments) -> Option<BitSim> {
        let (local_a, class_a) = renumber(&sa.class);
        let (local_b, class_b) = renumber(&sb.class);
        let mut function: HashMap<u32, usize> = HashMap::new();
        for &f in class_a.iter().flat_map(|&c| &a[c as usize]).chain(class_b.iter().flat_map(|&c| &b[c as usize])) {
            let next = function.len();
            function.entry(f).or_insert(next);
            if function.len() > BITSET_FUNCTIONS {
                return None;
            }
        }
        let words = function.len().div_ceil(64).max(1);
        let sets = |classes: &[u32], sets: &[Vec<u32>]| -> (Vec<u64>, Vec<u32>) {
            let mut bits = vec![0u64; classes.len() * words];
            let len = classes
                .iter()
                .enumerate()
                .map(|(k, &c)| {
                    for f in &sets[c as usize] {
                        let n = function[f];
                        bits[k * words + n / 64] |= 1 << (n % 64);
                    }
                    sets[c as usize].len() as u32
                })
                .collect();
            (bits, len)
        };
        let (bits_a, len_a) = sets(&class_a, a);
        let (bits_b, len_b) = sets(&class_b, b);
        Some(BitSim { words, local_a, local_b, bits_a, bits_b, len_a, len_b })
    }

}

impl Similarity for BitSim {
    #[inline]
    fn at_least(&mut self, i: usize, j: usize, tau: f64) -> Option<f64> {
        let (x, y) = (self.local_a[i] as usize, self.local_b[j] as usize);
        let w = self.words;
        let (p, q) = (&self.bits_a[x * w..(x + 1) * w], &self.bits_b[y * w..(y + 1) * w]);
        let common = p.iter().zip(q).map(|(u, v)| (u & v).count_ones()).sum::<u32>() as f64;
        let union = (self.len_a[x] + self.len_b[y]) as f64 - common;
        // Clearly below τ without dividing (most cells of unrelated stretches): the f32 rounding
        // below moves a ratio by less than 1e-7 of itself, so a margin of 1e-6 keeps this exact.
        if common < tau * union * (1.0 - 1e-6) {
            return None;
        }
        // As `jaccard`, and rounded to f32 as [`SimCache`] stores it.
        let s = if union == 0.0 { 0.0 } else { common / union };
        Some(s as f32 as f64).filter(|&s| s >= tau)
    }
}

/// The stack similarity of the classes of one thread pair by merging their sorted function sets,
/// computed on first use (pairs whose stacks hold too many functions for [`BitSim`]). The pair's
/// classes are renumbered densely (a thread uses few of its run's distinct stacks), so that the
/// cache is a flat matrix whenever it fits in 16 M entries.
struct SimCache<'s> {
    a: &'s [Vec<u32>],
    b: &'s [Vec<u32>],
    /// Per segment of each side: its class's local number.
    local_a: Vec<u32>,
    local_b: Vec<u32>,
    /// Local number → class.
    class_a: Vec<u32>,
    class_b: Vec<u32>,
    dense: Vec<f32>,
    sparse: HashMap<(u32, u32), f32>,
}

impl<'s> SimCache<'s> {
    fn new(a: &'s [Vec<u32>], b: &'s [Vec<u32>], sa: &Segments, sb: &Segments) -> Self {
        let (local_a, class_a) = renumber(&sa.class);
        let (local_b, class_b) = renumber(&sb.class);
        let n = class_a.len().saturating_mul(class_b.len());
        let dense = if n <= 16_000_000 { vec![-1.0; n] } else { Vec::new() };
        SimCache { a, b, local_a, local_b, class_a, class_b, dense, sparse: HashMap::new() }
    }

    /// The similarity of segment `i` of A and segment `j` of B.
    #[inline]
    fn get(&mut self, i: usize, j: usize) -> f64 {
        let (x, y) = (self.local_a[i], self.local_b[j]);
        let (ca, cb) = (self.class_a[x as usize] as usize, self.class_b[y as usize] as usize);
        if !self.dense.is_empty() {
            let k = x as usize * self.class_b.len() + y as usize;
            if self.dense[k] < 0.0 {
                self.dense[k] = jaccard(&self.a[ca], &self.b[cb]) as f32;
            }
            return self.dense[k] as f64;
        }
        let (a, b) = (self.a, self.b);
        *self.sparse.entry((x, y)).or_insert_with(|| jaccard(&a[ca], &b[cb]) as f32) as f64
    }
}

impl Similarity for SimCache<'_> {
    #[inline]
    fn at_least(&mut self, i: usize, j: usize, tau: f64) -> Option<f64> {
        Some(self.get(i, j)).filter(|&s| s >= tau)
    }
}

/// The alignment of two segment sequences: matched index pairs (ascending) and whether it was
/// banded.
fn align<S: Similarity>(a: &Segments, b: &Segments, sim: &mut S, tau: f64, max_cells: usize) -> (Vec<(usize, usize, f64)>, bool) {
    let (n, m) = (a.class.len(), b.class.len());
    if n == 0 || m == 0 {
        return (Vec::new(), false);
    }
    // Rows i = 0..=n (prefix lengths of A), columns j in [lo_i, hi_i] ⊆ 0..=m.
    let full = (n + 1).saturating_mul(m + 1) <= max_cells;
    let half = if full { m } else { (max_cells / (2 * (n + 1))).max(m.div_ceil(n) + 1) };
    let range = |i: usize| -> (usize, usize) {
        if full {
            return (0, m);
        }
        let c = (i as u128 * m as u128 / n as u128) as usize;
        (c.saturating_sub(half), (c + half).min(m))
    };
    let dur = |s: &Segments, k: usize| (s.end[k] - s.start[k]) as f64;
    let prune = !reference();
    // Directions: 0 = start, 1 = up (skip a[i-1]), 2 = left (skip b[j-1]), 3 = diagonal (match).
    let mut offsets = Vec::with_capacity(n + 2);
    let mut dirs: Vec<u8> = Vec::new();
    let (lo0, hi0) = range(0);
    let mut prev: Vec<f64> = vec![0.0; hi0 - lo0 + 1];
    let mut prev_range = (lo0, hi0);
    offsets.push(0usize);
    dirs.extend(std::iter::repeat_n(2u8, hi0 - lo0 + 1));
    dirs[0] = 0;
    let mut cur: Vec<f64> = Vec::new();
    for i in 1..=n {
        let (lo, hi) = range(i);
        offsets.push(dirs.len());
        cur.clear();
        for j in lo..=hi {
            let mut best = f64::NEG_INFINITY;
            let mut dir = 0u8;
            if j >= prev_range.0 && j <= prev_range.1 {
                best = prev[j - prev_range.0];
                dir = 1;
            }
            if j > lo && cur[j - 1 - lo] > best {
                best = cur[j - 1 - lo];
                dir = 2;
            }
            if j >= 1 && j > prev_range.0 && j - 1 <= prev_range.1 {
                let (p, d) = (prev[j - 1 - prev_range.0], dur(a, i - 1) + dur(b, j - 1));
                // s ≤ 1, so a match here is worth at most p + d (rounding is monotone): when that
                // cannot beat the best so far, its similarity is not needed.
                if p + d > best || !prune {
                    if let Some(s) = sim.at_least(i - 1, j - 1, tau) {
                        let v = p + d * s;
                        if v > best {
                            best = v;
                            dir = 3;
                        }
                    }
                }
            }
            cur.push(best);
            dirs.push(dir);
        }
        std::mem::swap(&mut prev, &mut cur);
        prev_range = (lo, hi);
    }
    // Traceback from (n, m).
    let mut pairs = Vec::new();
    let (mut i, mut j) = (n, m);
    let lo_of = |i: usize| range(i).0;
    while i > 0 || j > 0 {
        match dirs[offsets[i] + j - lo_of(i)] {
            3 => {
                // A match: its similarity is at least τ.
                pairs.push((i - 1, j - 1, sim.at_least(i - 1, j - 1, tau).expect("the programme matched it")));
                i -= 1;
                j -= 1;
            }
            1 => i -= 1,
            2 => j -= 1,
            _ => break,
        }
    }
    pairs.reverse();
    (pairs, !full)
}

impl TraceDiff {
    /// Matches run `b` against run `a` (both indexed by [`TimelineIndex::new`]).
    pub fn build(run_a: &Run, index_a: &TimelineIndex, run_b: &Run, index_b: &TimelineIndex, opts: &TraceOptions) -> TraceDiff {
        let mut keys = Keys { ids: HashMap::new(), info: Vec::new() };
        let a = Side::new(run_a, index_a, &mut keys);
        let b = Side::new(run_b, index_b, &mut keys);
        let mut notes = Vec::new();
        let (pa, pb) = (index_a.period_ns as f64 / 1e6, index_b.period_ns as f64 / 1e6);
        let same_shift_s = secs(2 * index_a.period_ns.max(index_b.period_ns));
        if (pa - pb).abs() > 0.1 * pa.max(pb) {
            notes.push(format!(
                "the runs were sampled at different intervals ({pa:.2} ms and {pb:.2} ms): stretches are compared in seconds, and edges are uncertain by one interval of each run"
            ));
        }
        // Runs of unrelated programs: fewer than half of the own functions that ran in either run
        // ran in both (a fix keeps most names; another program shares a helper or two).
        let program = |s: &Side| -> HashMap<u32, u64> {
            let mut p: HashMap<u32, u64> = HashMap::new();
            for prof in &s.profiles {
                for (&k, &v) in prof {
                    if keys.info[k as usize].1 {
                        *p.entry(k).or_default() += v;
                    }
                }
            }
            p
        };
        let (ua, ub) = (program(&a), program(&b));
        let common = ua.keys().filter(|k| ub.contains_key(k)).count();
        let union = ua.len() + ub.len() - common;
        if !ua.is_empty() && !ub.is_empty() && (common as f64) < 0.5 * union as f64 {
            notes.push(format!(
                "the runs look like different programs ({} and {} of their own functions ran, {common} of them in both): threads and functions are still matched by name, but read the result with care",
                ua.len(),
                ub.len()
            ));
        }

        let mut pairs = Vec::new();
        let mut groups = Vec::new();
        let mut matched_ns = 0.0;
        let mut banded_pairs = 0;
        let paired = pair_threads(&a, &b);
        for &(ta, tb, paired_by, similarity) in &paired {
            let (sa, sb) = (&a.threads[ta], &b.threads[tb]);
            let (matches, banded) = align_pair(&a.classes.sets, &b.classes.sets, sa, sb, opts.tau, opts.max_cells);
            banded_pairs += banded as usize;
            let pair = pairs.len();
            let mut in_a = vec![false; sa.class.len()];
            let mut in_b = vec![false; sb.class.len()];
            let mut pair_matched = 0.0;
            let mut k = 0;
            while k < matches.len() {
                let mut e = k + 1;
                while e < matches.len() && matches[e].0 == matches[e - 1].0 + 1 && matches[e].1 == matches[e - 1].1 + 1 {
                    e += 1;
                }
                let run = &matches[k..e];
                let (mut da, mut db, mut ws) = (0u64, 0u64, 0.0);
                let (mut long_a, mut long_b) = ((0u64, 0usize), (0u64, 0usize));
                let mut class_a = HashSet::new();
                let mut class_b = HashSet::new();
                for &(i, j, s) in run {
                    in_a[i] = true;
                    in_b[j] = true;
                    let (xa, xb) = (sa.end[i] - sa.start[i], sb.end[j] - sb.start[j]);
                    da += xa;
                    db += xb;
                    ws += s * (xa + xb) as f64;
                    long_a = long_a.max((xa, i));
                    long_b = long_b.max((xb, j));
                    class_a.insert(sa.class[i]);
                    class_b.insert(sb.class[j]);
                }
                let mut functions: Vec<String> = class_a
                    .iter()
                    .flat_map(|&c| &a.classes.sets[c as usize])
                    .chain(class_b.iter().flat_map(|&c| &b.classes.sets[c as usize]))
                    .filter(|&&f| keys.info[f as usize].1)
                    .map(|&f| keys.info[f as usize].0.clone())
                    .collect::<HashSet<_>>()
                    .into_iter()
                    .collect();
                functions.sort_unstable();
                let (a0, b0) = (secs(sa.start[run[0].0]), secs(sb.start[run[0].1]));
                pair_matched += (da + db) as f64;
                groups.push(MatchGroup {
                    pair,
                    a_start_s: a0,
                    a_duration_s: secs(da),
                    b_start_s: b0,
                    b_duration_s: secs(db),
                    shift_s: b0 - a0,
                    shift: Shift::of(b0 - a0, same_shift_s),
                    resized: (secs(da) - secs(db)).abs() > same_shift_s,
                    similarity: if da + db == 0 { 0.0 } else { ws / (da + db) as f64 },
                    segments: run.len(),
                    stack_a: a.stack(sa.class[long_a.1]),
                    stack_b: b.stack(sb.class[long_b.1]),
                    functions,
                });
                k = e;
            }
            let total = (a.stack_ns(ta) + b.stack_ns(tb)) as f64;
            matched_ns += pair_matched;
            pairs.push(ThreadPair {
                a: a.thread(ta),
                b: b.thread(tb),
                paired_by,
                similarity,
                matched_share: if total == 0.0 { 0.0 } else { pair_matched / total },
                banded,
                only_in_a: stretches(&a, sa, &in_a),
                only_in_b: stretches(&b, sb, &in_b),
            });
        }
        if banded_pairs > 0 {
            notes.push(format!(
                "{banded_pairs} thread pair(s) had too many segments for the exact alignment: it was searched in a band around the diagonal"
            ));
        }
        let used_a: HashSet<usize> = paired.iter().map(|p| p.0).collect();
        let used_b: HashSet<usize> = paired.iter().map(|p| p.1).collect();
        let unmatched = |s: &Side, used: &HashSet<usize>| -> Vec<TraceThread> {
            (0..s.threads.len()).filter(|t| !used.contains(t) && !s.threads[*t].class.is_empty()).map(|t| s.thread(t)).collect()
        };
        let total = |s: &Side| (0..s.threads.len()).map(|t| s.stack_ns(t)).sum::<u64>();
        let (ta, tb) = (total(&a), total(&b));
        TraceDiff {
            tau: opts.tau,
            matched_share: if ta + tb == 0 { 0.0 } else { matched_ns / (ta + tb) as f64 },
            a_stack_s: secs(ta),
            b_stack_s: secs(tb),
            a_duration_s: index_a.duration_s(),
            b_duration_s: index_b.duration_s(),
            a_period_ms: pa,
            b_period_ms: pb,
            same_shift_s,
            unmatched_a: unmatched(&a, &used_a),
            unmatched_b: unmatched(&b, &used_b),
            pairs,
            groups,
            notes,
        }
    }
}

/// Unmatched consecutive segments as stretches.
fn stretches(side: &Side, s: &Segments, matched: &[bool]) -> Vec<Stretch> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < matched.len() {
        if matched[k] {
            k += 1;
            continue;
        }
        let mut e = k;
        let (mut d, mut long) = (0u64, (0u64, k));
        while e < matched.len() && !matched[e] {
            let x = s.end[e] - s.start[e];
            d += x;
            long = long.max((x, e));
            e += 1;
        }
        out.push(Stretch { start_s: secs(s.start[k]), duration_s: secs(d), segments: e - k, stack: side.stack(s.class[long.1]) });
        k = e;
    }
    out
}

/// Per function of the program's own code in one run: when it was last on a stack, how long
/// threads had it on their stack, how long they waited with it there, and in how many waits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FunctionTimes {
    /// End of the last sampling interval with the function on a stack, s from the run's start.
    pub finish_s: f64,
    /// Sampling intervals of all samples with the function on the stack, all threads, s.
    pub stack_s: f64,
    /// …of those samples in which the thread was not computing (idle or waiting for the GIL), s.
    pub idle_s: f64,
    /// Waits: runs of consecutive samples of one thread not computing with the function on the
    /// stack (a wait shorter than the sampling interval can be missed).
    pub waits: u64,
    /// Thread samples with the function on the stack (the evidence behind `stack_s` and `finish_s`)…
    pub samples: u64,
    /// …and of those, the ones not computing (behind `idle_s`).
    pub idle_samples: u64,
}

/// [`FunctionTimes`] of the program's own functions of a run, by qualified name.
pub fn function_times(run: &Run) -> HashMap<String, FunctionTimes> {
    let mut out: HashMap<String, FunctionTimes> = HashMap::new();
    let period = crate::period::sampling_period_ns(run);
    let mut seen: Vec<u64> = vec![u64::MAX; run.functions.len()];
    // Per thread: the functions it was waiting in at its previous sample.
    let mut waiting_in: Vec<Vec<usize>> = vec![Vec::new(); run.threads.len()];
    let mut now: Vec<usize> = Vec::new();
    for (k, sample) in run.samples.iter().enumerate() {
        let next = run.samples.get(k + 1).map_or(sample.t + period, |s| s.t);
        let dt = next.saturating_sub(sample.t);
        for (n, ts) in sample.threads.iter().enumerate() {
            let stamp = ((k as u64) << 20) | n as u64;
            now.clear();
            let waiting = ts.state != ThreadState::Computing;
            let mut node = ts.stack;
            while let Some(id) = node {
                let st = &run.stacks[id as usize];
                node = st.parent;
                let fid = run.frames[st.frame as usize].function as usize;
                if seen[fid] == stamp {
                    continue; // recursion: once per stack
                }
                seen[fid] = stamp;
                let f = &run.functions[fid];
                if run.files[f.file as usize].kind != FileKind::User {
                    continue;
                }
                let e = out.entry(run.strings[f.qualname as usize].clone()).or_default();
                e.finish_s = e.finish_s.max(secs(next));
                e.stack_s += secs(dt);
                e.samples += 1;
                if waiting {
                    e.idle_s += secs(dt);
                    e.idle_samples += 1;
                    if !waiting_in[ts.thread as usize].contains(&fid) {
                        e.waits += 1;
                    }
                    now.push(fid);
                }
            }
            std::mem::swap(&mut waiting_in[ts.thread as usize], &mut now);
        }
    }
    out
}

/// What the trace's changes are measured against: the smallest shift worth stating (two sampling
/// periods of the coarser run) and the runs' durations. From a [`TraceDiff`], or from the runs
/// alone where no trace was built (the `compare` method): the same figures.
#[derive(Clone, Copy, Debug)]
pub struct TraceScale {
    pub same_shift_s: f64,
    pub a_duration_s: f64,
    pub b_duration_s: f64,
}

impl TraceScale {
    pub fn of(diff: &TraceDiff) -> TraceScale {
        TraceScale { same_shift_s: diff.same_shift_s, a_duration_s: diff.a_duration_s, b_duration_s: diff.b_duration_s }
    }

    /// As [`TraceDiff::build`] and [`TimelineIndex::duration_s`] compute them.
    pub fn of_runs(a: &Run, b: &Run) -> TraceScale {
        let (pa, pb) = (crate::period::sampling_period_ns(a), crate::period::sampling_period_ns(b));
        let duration = |r: &Run, p: u64| r.samples.last().map_or(0.0, |s| secs(s.t + p));
        TraceScale { same_shift_s: secs(2 * pa.max(pb)), a_duration_s: duration(a, pa), b_duration_s: duration(b, pb) }
    }
}

/// The changes that only a trace comparison can find, each backed by figures of the two runs:
/// the program or a function finishing earlier or later, a function's threads waiting less or more.
/// `artifacts` are the listed artifacts of the program's own code (name, kind, file, line), so
/// changes stay on artifacts the table shows; at most five of each kind, largest first.
pub fn trace_changes(scale: TraceScale, base: &Run, new: &Run, artifacts: &[(String, ArtifactKind, Option<String>, Option<u32>)]) -> Vec<Change> {
    let mut out = Vec::new();
    let same_s = scale.same_shift_s.max(0.1);
    let d = scale.b_duration_s - scale.a_duration_s;
    let samples = |r: &Run| r.samples.len() as u64;
    let sampled = |b: u64, n: u64, unit: Unit| Evidence { source: Source::Sampled, unit, base: b, new: n, threads_base: 0, threads_new: 0 };
    if d.abs() >= same_s && d.abs() >= 0.05 * scale.a_duration_s.max(scale.b_duration_s) {
        let ev = sampled(samples(base), samples(new), Unit::Samples);
        out.push(Change::new("program", ArtifactKind::File, FileKind::Unknown, Figure::Finish, DeltaStatus::Changed, scale.a_duration_s, scale.b_duration_s, ev));
    }
    let (ta, tb) = (function_times(base), function_times(new));
    let mut finish: Vec<(f64, Change)> = Vec::new();
    let mut waits: Vec<(f64, Change)> = Vec::new();
    let mut time_in: Vec<(f64, Change)> = Vec::new();
    let mut wait_length: Vec<(f64, Change)> = Vec::new();
    for (name, kind, file, line) in artifacts {
        let (Some(x), Some(y)) = (ta.get(name), tb.get(name)) else { continue };
        let change = |figure: Figure, before: f64, after: f64, ev: Evidence| {
            Change::new(name, *kind, FileKind::User, figure, DeltaStatus::Changed, before, after, ev).at(file.clone(), *line)
        };
        let d = y.finish_s - x.finish_s;
        if d.abs() >= same_s && d.abs() >= 0.05 * x.finish_s.max(y.finish_s) {
            finish.push((d.abs(), change(Figure::Finish, x.finish_s, y.finish_s, sampled(x.samples, y.samples, Unit::Samples))));
        }
        let w = y.idle_s - x.idle_s;
        if w.abs() >= same_s && w.abs() >= 0.25 * x.idle_s.max(y.idle_s) {
            waits.push((w.abs(), change(Figure::WaitTime, x.idle_s, y.idle_s, sampled(x.idle_samples, y.idle_samples, Unit::Samples))));
        }
        let t = y.stack_s - x.stack_s;
        if t.abs() >= same_s && t.abs() >= 0.25 * x.stack_s.max(y.stack_s) {
            time_in.push((t.abs(), change(Figure::StackTime, x.stack_s, y.stack_s, sampled(x.samples, y.samples, Unit::Samples))));
        }
        // The mean wait, when both runs saw enough waits for a mean to say something.
        if x.waits >= 5 && y.waits >= 5 {
            let (mx, my) = (x.idle_s / x.waits as f64, y.idle_s / y.waits as f64);
            // At least half again, and by more than one sampling period (the edges' uncertainty).
            if (my - mx).abs() >= 0.5 * mx.min(my) && (my - mx).abs() >= scale.same_shift_s / 2.0 {
                wait_length.push(((my / mx).ln().abs(), change(Figure::MeanWait, mx, my, sampled(x.waits, y.waits, Unit::Waits))));
            }
        }
    }
    for list in [&mut waits, &mut wait_length, &mut time_in, &mut finish] {
        list.sort_by(|x, y| y.0.total_cmp(&x.0).then_with(|| x.1.artifact.cmp(&y.1.artifact)));
        out.extend(list.drain(..).take(5).map(|(_, c)| c));
    }
    out.extend(wait_changes(base, new));
    out
}

/// Changes of futile wake-ups and wait lengths per waited-on object (issue #16's `waits`
/// analysis, [`crate::waits`]), e.g. "Consumer.take: threading.Condition self.not_empty: 412 futile
/// wake-ups → 0". None unless both runs have wait data (wait intervals): a run recorded without it
/// says nothing about waits, not "no waits".
pub fn wait_changes(base: &Run, new: &Run) -> Vec<Change> {
    let opts = crate::waits::WaitsOptions::default();
    wait_changes_of(&crate::waits::waits(base, &opts), &crate::waits::waits(new, &opts))
}

/// What identifies an object across two runs: its label, unless that is only an address (which
/// differs from run to run), then its type and the function it was first waited in.
pub(crate) fn object_key(o: &crate::waits::ObjectSummary) -> String {
    match (&o.name, o.addr, &o.frame) {
        (None, Some(_), Some(f)) => format!("{} in {}", o.type_name, f.function),
        _ => o.object.clone(),
    }
}

/// How an object's waits were observed in both runs: the kernel's wake-ups where both runs had
/// them, else inferred from the samples.
pub(crate) fn wait_source(a: &crate::waits::WaitsView, b: &crate::waits::WaitsView) -> Source {
    if a.evidence.kernel && b.evidence.kernel {
        Source::KernelExact
    } else {
        Source::Inferred
    }
}

/// [`wait_changes`] on the two runs' waits views. Futile wake-ups: a change when they differ by
/// at least 5 and a quarter (an object waited on in one run only counts 0 in the other). Mean wait:
/// when both runs saw at least 5 waits on the object and the mean changed by half again and by
/// more than one sampling period (the intervals' uncertainty).
pub fn wait_changes_of(a: &crate::waits::WaitsView, b: &crate::waits::WaitsView) -> Vec<Change> {
    if a.intervals.is_empty() || b.intervals.is_empty() {
        return Vec::new();
    }
    let mut keys: Vec<String> = a.objects.iter().chain(&b.objects).map(object_key).collect();
    keys.sort();
    keys.dedup();
    let period = a.period_s.max(b.period_s);
    let source = wait_source(a, b);
    let mut futile: Vec<(u64, Change)> = Vec::new();
    let mut mean: Vec<(f64, Change)> = Vec::new();
    for key in keys {
        let (x, y) = (a.objects.iter().find(|o| object_key(o) == key), b.objects.iter().find(|o| object_key(o) == key));
        let Some(any) = x.or(y) else { continue };
        let artifact = any.frame.as_ref().map_or_else(|| key.clone(), |f| f.function.clone());
        // Which function the object is waited in (the program's own code, or not known).
        let file_kind = if any.frame.is_some() { FileKind::User } else { FileKind::Unknown };
        let at = (any.frame.as_ref().map(|f| f.file.clone()), any.frame.as_ref().map(|f| f.line));
        let change = |figure: Figure, before: f64, after: f64, unit: Unit, eb: u64, en: u64| {
            let ev = Evidence { source, unit, base: eb, new: en, threads_base: 0, threads_new: 0 };
            Change::new(&artifact, ArtifactKind::Function, file_kind, figure, DeltaStatus::Changed, before, after, ev).at(at.0.clone(), at.1).on_object(&key)
        };
        let (fx, fy) = (x.map_or(0, |o| o.futile_wakeups), y.map_or(0, |o| o.futile_wakeups));
        if fx.abs_diff(fy) >= 5 && fx.abs_diff(fy) * 4 >= fx.max(fy) {
            futile.push((fx.abs_diff(fy), change(Figure::FutileWakeups, fx as f64, fy as f64, Unit::WakeUps, fx, fy)));
        }
        if let (Some(x), Some(y)) = (x, y) {
            if x.waits >= 5 && y.waits >= 5 {
                let (mx, my) = (x.wait_s / x.waits as f64, y.wait_s / y.waits as f64);
                if (my - mx).abs() >= 0.5 * mx.min(my) && (my - mx).abs() > period {
                    mean.push(((my / mx).ln().abs(), change(Figure::ObjectMeanWait, mx, my, Unit::Waits, x.waits, y.waits)));
                }
            }
        }
    }
    futile.sort_by(|x, y| y.0.cmp(&x.0).then_with(|| x.1.statement.cmp(&y.1.statement)));
    mean.sort_by(|x, y| y.0.total_cmp(&x.0).then_with(|| x.1.statement.cmp(&y.1.statement)));
    futile.into_iter().take(5).map(|(_, c)| c).chain(mean.into_iter().take(5).map(|(_, c)| c)).collect()
}

/// Cluster changes from two glyphs of one artifact: a colour present on one side only.
fn cluster_changes(a: &crate::compare::ArtifactDelta, base: &crate::compare::SideFigures, new: &crate::compare::SideFigures) -> Vec<Change> {
    let ev = Evidence { source: Source::Sampled, unit: Unit::Samples, base: base.samples, new: new.samples, threads_base: base.threads, threads_new: new.threads };
    let change = |colour, before: usize, after: usize| {
        Change::new(&a.qualname, a.kind, a.file_kind, Figure::Cluster, DeltaStatus::Changed, before as f64, after as f64, ev.clone())
            .at(a.file_new.clone().or_else(|| a.file_base.clone()), a.line_new.or(a.line_base))
            .of_cluster(colour)
    };
    let mut out = Vec::new();
    for cell in &base.glyph {
        if !new.glyph.iter().any(|c| c.colour == cell.colour) {
            out.push(change(cell.colour, cell.threads, 0));
        }
    }
    for cell in &new.glyph {
        if !base.glyph.iter().any(|c| c.colour == cell.colour) {
            out.push(change(cell.colour, 0, cell.threads));
        }
    }
    out
}

/// Adds the trace comparison's changes to a comparison's: clusters that dissolved or appeared (per
/// listed artifact of the program's own code), waiting time, earlier or later finishes
/// ([`trace_changes`]), futile wake-ups and waits per object ([`wait_changes`]); then ranks them
/// all ([`crate::changes::rank`]). Their `significant` is `None`: one run per side has no spread to
/// test against.
pub fn extend_changes(c: &mut crate::compare::Comparison, diff: &TraceDiff, base: &Run, new: &Run) {
    extend_changes_scaled(c, TraceScale::of(diff), base, new)
}

/// [`extend_changes`] without a trace comparison: its scale from the runs ([`TraceScale::of_runs`]).
pub fn extend_changes_scaled(c: &mut crate::compare::Comparison, scale: TraceScale, base: &Run, new: &Run) {
    let user: Vec<&crate::compare::ArtifactDelta> = c.artifacts.iter().filter(|a| a.file_kind == FileKind::User).collect();
    let mut added: Vec<Change> = Vec::new();
    for a in &user {
        if let (Some(b), Some(n)) = (&a.base, &a.new) {
            added.extend(cluster_changes(a, b, n));
        }
    }
    let listed: Vec<_> = if c.level == crate::artifact::Level::Function {
        user.iter().map(|a| (a.qualname.clone(), a.kind, a.file_new.clone().or_else(|| a.file_base.clone()), a.line_new.or(a.line_base))).collect()
    } else {
        Vec::new()
    };
    added.extend(trace_changes(scale, base, new, &listed));
    c.changes.extend(added);
    crate::changes::rank(c);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A waits view with one object (`futile`, `n` waits of `mean_s` each) waited on in `Consumer.take`.
    fn view(label: &str, addr: Option<u64>, futile: u64, n: u64, mean_s: f64) -> crate::waits::WaitsView {
        use crate::waits::*;
        let frame = Location { file: "/p/prog.py".into(), line: 12, function: "Consumer.take".into() };
        WaitsView {
            started_at: None,
            period_s: 0.005,
            evidence: EvidenceAvailable { kernel: false, targets: true, notes: Vec::new() },
            threads: vec![WaitThread { id: 0, name: "consumer-0".into(), thread_type: "Consumer".into() }],
            objects: vec![ObjectSummary {
                object: label.into(),
                type_name: "threading.Condition".into(),
                name: None,
                addr,
                identity: "recorded".into(),
                waits: n,
                wait_s: mean_s * n as f64,
                p50_s: mean_s,
                p95_s: mean_s,
                waiters: Default::default(),
                wakers: Default::default(),
                futile_wakeups: futile,
                lock_handoffs: 0,
                radar: Vec::new(),
                waiter_types: 1,
                frame: Some(frame.clone()),
            }],
            intervals: (0..n)
                .map(|k| WaitInterval {
                    thread: 0,
                    object: 0,
                    start_s: k as f64,
                    end_s: k as f64 + mean_s,
                    kernel_start: false,
                    kernel_end: false,
                    samples: 2,
                    syscall: None,
                    frame: Some(frame.clone()),
                    open: false,
                    futile: false,
                })
                .collect(),
            edges: Vec::new(),
        }
    }

    #[test]
    fn wait_statements_state_futile_wakeups_and_mean_waits_backed_by_both_runs() {
        // Addresses differ between runs: the object is matched by type and waiting function.
        let a = view("threading.Condition at 0x10", Some(0x10), 412, 40, 0.050);
        let b = view("threading.Condition at 0x99", Some(0x99), 0, 40, 0.010);
        let s: Vec<String> = wait_changes_of(&a, &b).into_iter().map(|c| c.statement).collect();
        assert_eq!(
            s,
            [
                "Consumer.take: threading.Condition in Consumer.take: 412 futile wake-ups → 0",
                "Consumer.take: threading.Condition in Consumer.take: mean wait 50.0 ms → 10.0 ms (40 → 40 waits)",
            ]
        );
        // Small changes say nothing: 3 futile wake-ups, a mean within one period.
        let c = view("threading.Condition at 0x99", Some(0x99), 409, 40, 0.052);
        assert!(wait_changes_of(&a, &c).is_empty());
        // A run without wait data: no statements at all.
        let mut none = b.clone();
        none.intervals.clear();
        none.objects.clear();
        assert!(wait_changes_of(&a, &none).is_empty());
        assert!(wait_changes_of(&none, &a).is_empty());
    }
    use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
    use threadradar_profiler::run::{Meta, Sample, ThreadSample};

    /// A run of threads (name, [(function path, samples)]): each thread runs its phases one after
    /// the other; every tick samples every thread still running.
    fn run(interval_ms: f64, threads: &[(&str, &[(&[&str], u32)])]) -> Run {
        let mut b = RunBuilder::new(Meta { interval_ms, cwd: "/p".into(), ..Meta::default() });
        let file = b.file("/p/prog.py", FileKind::User, None);
        let mut funcs: HashMap<String, u32> = HashMap::new();
        let mut plans = Vec::new();
        for (t, (name, phases)) in threads.iter().enumerate() {
            b.thread(new_thread(1, 10 + t as u32, t as u64, name, "Worker"));
            let mut plan = Vec::new();
            for (path, n) in phases.iter() {
                let frames: Vec<_> = path
                    .iter()
                    .map(|q| {
                        let line = funcs.len() as u32 * 10 + 1;
                        let f = *funcs.entry(q.to_string()).or_insert_with(|| {
                            b.function(file, &FunctionSpec { qualname: q, class: None, line, end_line: line + 5, class_line: 0 })
                        });
                        b.frame(f, line + 1)
                    })
                    .collect();
                let stack = b.stack(&frames);
                plan.extend(std::iter::repeat_n(stack, *n as usize));
            }
            plans.push(plan);
        }
        let ticks = plans.iter().map(Vec::len).max().unwrap_or(0);
        for k in 0..ticks {
            let threads = plans
                .iter()
                .enumerate()
                .filter_map(|(t, p)| p.get(k).map(|&s| ThreadSample { thread: t as u32, stack: s, state: ThreadState::Computing, ..Default::default() }))
                .collect();
            b.push_sample(Sample { t: (k as f64 * interval_ms * 1e6) as u64, threads });
        }
        b.finish()
    }

    fn diff(a: &Run, b: &Run) -> TraceDiff {
        let (ia, ib) = (TimelineIndex::new(a).unwrap(), TimelineIndex::new(b).unwrap());
        TraceDiff::build(a, &ia, b, &ib, &TraceOptions::default())
    }

    /// The fast path (bitset similarity, pruned programme) against the reference (sorted-set
    /// merge, every cell): the same `TraceDiff` to the last bit, on recorded runs of the paper's
    /// bugs and on synthetic runs (random stacks at every tick, persistent stacks, banded).
    #[test]
    fn the_fast_similarity_gives_exactly_the_reference_results() {
        use threadradar_profiler::synth::{synthetic_run, SynthSpec};
        let read = |p: &str| threadradar_profiler::runfile::read(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(p)).unwrap();
        let bug = |n: &str| read(&format!("tests/fixtures/timeline/{n}.json"));
        let (b1, b2, b3) = (bug("bug1_worker_manager"), bug("bug2_producer_consumer"), bug("bug3_readers_writers"));
        let (buggy, fixed) = (read("../tests/fixtures/runs/20260101T000000Z-bug1-buggy.json"), read("../tests/fixtures/runs/20260101T000001Z-bug1-fixed.json"));
        let spec = SynthSpec { ticks: 1500, threads: 4, functions: 300, stacks: 400, seed: 1 };
        let (s1, s2) = (synthetic_run(spec), synthetic_run(SynthSpec { seed: 2, ..spec }));
        // Persistent stacks: every sample of the second half repeats the one before it.
        let mut steady = synthetic_run(SynthSpec { seed: 3, ..spec });
        for k in 1..steady.samples.len() {
            if k % 7 != 0 {
                let prev = steady.samples[k - 1].threads.clone();
                for (cur, p) in steady.samples[k].threads.iter_mut().zip(prev) {
                    cur.stack = p.stack;
                }
            }
        }
        let opts = |tau: f64, max_cells: usize| TraceOptions { tau, max_cells };
        let cases: [(&str, &Run, &Run, TraceOptions); 8] = [
            ("bug1 buggy vs fixed", &buggy, &fixed, TraceOptions::default()),
            ("bug1 fixed vs buggy, tau 0.5", &fixed, &buggy, opts(0.5, 4_000_000)),
            ("bug1 vs bug2 (different programs)", &b1, &b2, TraceOptions::default()),
            ("bug3 vs itself", &b3, &b3, TraceOptions::default()),
            ("bug2 vs bug3, banded", &b2, &b3, opts(0.2, 20_000)),
            ("synth seeds 1 vs 2", &s1, &s2, TraceOptions::default()),
            ("synth vs steady, banded", &s1, &steady, opts(0.2, 50_000)),
            ("steady vs synth, tau 0.05", &steady, &s2, opts(0.05, 4_000_000)),
        ];
        for (name, a, b, o) in cases {
            let (ia, ib) = (TimelineIndex::new(a).unwrap(), TimelineIndex::new(b).unwrap());
            let fast = TraceDiff::build(a, &ia, b, &ib, &o);
            REFERENCE.with(|f| f.set(true));
            let slow = TraceDiff::build(a, &ia, b, &ib, &o);
            REFERENCE.with(|f| f.set(false));
            assert!(!fast.pairs.is_empty() && !fast.groups.is_empty(), "{name}: nothing matched, nothing compared");
            assert_eq!(format!("{fast:#?}"), format!("{slow:#?}"), "{name}");
        }
    }

    #[test]
    fn a_run_matches_itself_completely() {
        let r = run(1.0, &[("main", &[(&["main", "load"], 30), (&["main", "work", "f"], 40)]), ("w", &[(&["run", "g"], 50)])]);
        let d = diff(&r, &r);
        assert_eq!(d.pairs.len(), 2);
        assert!((d.matched_share - 1.0).abs() < 1e-9, "{}", d.matched_share);
        assert!(d.groups.iter().all(|g| g.shift_s == 0.0 && g.similarity == 1.0));
        assert!(d.pairs.iter().all(|p| p.only_in_a.is_empty() && p.only_in_b.is_empty() && p.paired_by == PairedBy::Key));
        assert!(d.notes.is_empty(), "{:?}", d.notes);
    }

    #[test]
    fn a_removed_phase_is_only_in_a_and_what_follows_moves_earlier() {
        let a = run(1.0, &[("main", &[(&["main", "load"], 30), (&["main", "sleep"], 100), (&["main", "work"], 40)])]);
        let b = run(1.0, &[("main", &[(&["main", "load"], 30), (&["main", "work"], 40)])]);
        let d = diff(&a, &b);
        let p = &d.pairs[0];
        assert_eq!(p.only_in_a.len(), 1, "{:#?}", d);
        assert!((p.only_in_a[0].duration_s - 0.1).abs() < 1e-9, "{:#?}", d);
        assert_eq!(p.only_in_a[0].stack.last().unwrap().qualname, "sleep");
        assert!(p.only_in_b.is_empty());
        // `load` then `work`: two groups, the second 0.1 s earlier in B.
        assert_eq!(d.groups.len(), 2, "{:?}", d.groups);
        assert_eq!(d.groups[0].shift_s, 0.0);
        assert!((d.groups[1].shift_s + 0.1).abs() < 1e-9, "{}", d.groups[1].shift_s);
        assert!((d.groups[1].a_duration_s - 0.04).abs() < 1e-9);
        assert_eq!(d.groups[1].functions, ["main", "work"]);
        // 70 + 70 of 170 + 70 ms matched.
        assert!((d.matched_share - 140.0 / 240.0).abs() < 1e-9, "{}", d.matched_share);
    }

    #[test]
    fn dissimilar_stacks_do_not_match_and_tau_decides() {
        // Γ = {main, a, x} vs {main, b, y}: s = 1/5 = 0.2.
        let a = run(1.0, &[("main", &[(&["main", "a", "x"], 10)])]);
        let b = run(1.0, &[("main", &[(&["main", "b", "y"], 10)])]);
        let (ia, ib) = (TimelineIndex::new(&a).unwrap(), TimelineIndex::new(&b).unwrap());
        let at = |tau| TraceDiff::build(&a, &ia, &b, &ib, &TraceOptions { tau, ..TraceOptions::default() });
        assert_eq!(at(0.2).groups.len(), 1);
        assert!((at(0.2).groups[0].similarity - 0.2).abs() < 1e-6);
        assert!(at(0.21).groups.is_empty());
        assert_eq!(at(0.21).matched_share, 0.0);
    }

    #[test]
    fn renamed_threads_are_assigned_by_stack_similarity() {
        let a = run(1.0, &[("T-1", &[(&["reader"], 20)]), ("T-2", &[(&["writer"], 20)])]);
        let b = run(1.0, &[("X-1", &[(&["writer"], 20)]), ("X-2", &[(&["reader"], 20)]), ("X-3", &[(&["other"], 5)])]);
        let d = diff(&a, &b);
        let pairs: Vec<_> = d.pairs.iter().map(|p| (p.a.name.as_str(), p.b.name.as_str(), p.paired_by)).collect();
        assert_eq!(pairs, [("T-1", "X-2", PairedBy::Assignment), ("T-2", "X-1", PairedBy::Assignment)]);
        // Same type ("Worker") would allow pairing X-3, but it has no counterpart left.
        assert_eq!(d.unmatched_b.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["X-3"]);
    }

    #[test]
    fn different_intervals_are_compared_in_time_and_noted() {
        let a = run(1.0, &[("main", &[(&["main", "load"], 100), (&["main", "work"], 100)])]);
        let b = run(5.0, &[("main", &[(&["main", "load"], 20), (&["main", "work"], 20)])]);
        let d = diff(&a, &b);
        assert!(d.notes.iter().any(|n| n.contains("different intervals")), "{:?}", d.notes);
        assert_eq!(d.groups.len(), 1);
        assert!((d.groups[0].a_duration_s - d.groups[0].b_duration_s).abs() < 1e-9);
        assert!((d.matched_share - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_band_finds_the_diagonal_of_long_sequences() {
        // 2000 alternating segments: banded with a small cell budget, still all matched.
        let phases: Vec<(&[&str], u32)> = (0..2000).map(|k| if k % 2 == 0 { (&["main", "f"][..], 2) } else { (&["main", "g"][..], 3) }).collect();
        let a = run(1.0, &[("main", &phases)]);
        let (ia, ib) = (TimelineIndex::new(&a).unwrap(), TimelineIndex::new(&a).unwrap());
        let d = TraceDiff::build(&a, &ia, &a, &ib, &TraceOptions { tau: 0.2, max_cells: 100_000 });
        assert!(d.pairs[0].banded);
        assert!((d.matched_share - 1.0).abs() < 1e-9, "{}", d.matched_share);
        assert!(d.notes.iter().any(|n| n.contains("band")));
    }

    #[test]
    fn a_different_program_is_noted() {
        let a = run(1.0, &[("main", &[(&["main", "alpha"], 10)])]);
        let b = run(1.0, &[("main", &[(&["start", "beta", "gamma"], 10)])]);
        let d = diff(&a, &b);
        assert!(d.notes.iter().any(|n| n.contains("different programs")), "{:?}", d.notes);
        assert!(d.groups.is_empty());
        assert_eq!(d.pairs.len(), 1, "still paired by name");
    }

    #[test]
    fn statements_state_earlier_finishes() {
        let a = run(1.0, &[("main", &[(&["main", "load"], 300), (&["main", "work"], 400)])]);
        let b = run(1.0, &[("main", &[(&["main", "load"], 100), (&["main", "work"], 400)])]);
        let d = diff(&a, &b);
        let listed = |n: &str| (n.to_string(), ArtifactKind::Function, None, None);
        let s = trace_changes(TraceScale::of(&d), &a, &b, &[listed("load"), listed("work")]);
        let text: Vec<&str> = s.iter().map(|x| x.statement.as_str()).collect();
        // Without the trace, from the runs alone: the same changes.
        let plain: Vec<String> = trace_changes(TraceScale::of_runs(&a, &b), &a, &b, &[listed("load"), listed("work")]).into_iter().map(|c| c.statement).collect();
        assert_eq!(text, plain);
        assert!(text.contains(&"program: finishes 0.20 s earlier (0.70 s → 0.50 s)"), "{text:?}");
        assert!(text.contains(&"load: finishes 0.20 s earlier (0.30 s → 0.10 s after the start)"), "{text:?}");
    }
}
