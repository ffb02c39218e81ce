//! Where one artifact is on the timeline: the bars of its functions, as spans per thread.
//!
//! "Selecting an artifact anywhere highlights all its bars" and the editors' "Timeline" lens both
//! start here: [`members`] says which of the run's functions belong to an artifact (a function
//! itself; every method of a class; every function of a file; every function for the program),
//! and [`focus`] merges, per thread, the intervals in which one of them was on the stack (a bar at
//! any depth) into spans. Sampled like every bar: each edge is uncertain by one sampling period.

use super::index::{TimelineIndex, TOLERATED_MISSED_TICKS};
use super::{secs, TimelineError};
use crate::artifact::{ArtifactKind, Artifacts};
use crate::panel::ArtifactKey;
use serde::Serialize;
use threadradar_profiler::run::{Run, StackId, ThreadId};

/// At most this many spans are listed (the earliest); [`Focus::span_count`] has them all.
pub const MAX_SPANS: usize = 500;

/// One artifact's place on the timeline.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct Focus {
    pub artifact: ArtifactKey,
    /// Qualified name (the path for a file, `program` for the program).
    pub name: String,
    /// From the start of its first span to the end of its last one, s (0–0 when it never ran).
    pub from_s: f64,
    pub to_s: f64,
    /// The threads it ran on, by id.
    pub threads: Vec<ThreadId>,
    /// Merged intervals per thread in which one of its functions was on the stack, by start time;
    /// at most [`MAX_SPANS`].
    pub spans: Vec<Span>,
    pub span_count: usize,
    /// How the spans were obtained.
    pub obtained: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct Span {
    pub thread: ThreadId,
    pub from_s: f64,
    pub to_s: f64,
}

const OBTAINED: &str = "sampled: runs of samples with one of the artifact's functions on the stack (edges uncertain by one sampling period)";

/// For each function of the run, whether it belongs to the artifact `key`.
pub fn members(run: &Run, key: &ArtifactKey) -> Result<(Vec<bool>, String), TimelineError> {
    if key.is_program() {
        return Ok((vec![true; run.functions.len()], "program".into()));
    }
    let arts = Artifacts::new(run);
    for kind in ArtifactKind::ALL {
        for id in arts.ids(kind) {
            let Some(a) = arts.describe(run, id) else { continue };
            if ArtifactKey::of(&a) != *key {
                continue;
            }
            let name = a.qualname.to_string();
            let member: Vec<bool> = match kind {
                ArtifactKind::Function => (0..run.functions.len()).map(|f| f as u32 == id.index).collect(),
                ArtifactKind::Class => (0..run.functions.len() as u32).map(|f| arts.class_of(f) == Some(id.index)).collect(),
                ArtifactKind::File => run.functions.iter().map(|f| f.file == id.index).collect(),
            };
            return Ok((member, name));
        }
    }
    Err(TimelineError::UnknownArtifact(key.0.clone()))
}

/// Where `key` ran, over the whole run. `index` must have been built from `run`.
///
/// Read from the samples, with the bars' rules (so without depending on whether the timeline
/// folds standard-library frames): a sample with a member function on its stack covers its tick up
/// to the thread's next sample when that comes after at most [`TOLERATED_MISSED_TICKS`] missed
/// ticks (a bar spans such a gap), else up to the tick after it.
pub fn focus(run: &Run, index: &TimelineIndex, key: &ArtifactKey) -> Result<Focus, TimelineError> {
    let (member, name) = members(run, key)?;
    // Per stack: 0 not known yet, 1 no member on it, 2 a member on it.
    let mut on_stack = vec![0u8; run.stacks.len()];
    let mut chain = Vec::new();
    let mut has_member = |stack: StackId| -> bool {
        let mut s = Some(stack);
        while let Some(id) = s {
            if on_stack[id as usize] != 0 {
                break;
            }
            chain.push(id);
            s = run.stacks[id as usize].parent;
        }
        let mut above = s.map_or(false, |id| on_stack[id as usize] == 2);
        while let Some(id) = chain.pop() {
            above = above || member[run.frames[run.stacks[id as usize].frame as usize].function as usize];
            on_stack[id as usize] = 1 + above as u8;
        }
        on_stack[stack as usize] == 2
    };
    // Per thread: its last sample's tick and the open interval [start, last member tick].
    let n = run.threads.len();
    let mut last: Vec<Option<u32>> = vec![None; n];
    let mut open: Vec<Option<(u32, u32)>> = vec![None; n];
    let mut per_thread: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    let close = |iv: (u32, u32), end: u32, out: &mut Vec<(u32, u32)>| match out.last_mut() {
        Some(prev) if iv.0 <= prev.1 => prev.1 = prev.1.max(end),
        _ => out.push((iv.0, end)),
    };
    for (k, sample) in run.samples.iter().enumerate() {
        let k = k as u32;
        for ts in &sample.threads {
            let th = ts.thread as usize;
            let near = last[th].is_some_and(|l| k - l - 1 <= TOLERATED_MISSED_TICKS);
            let on = ts.stack.is_some_and(&mut has_member);
            if let Some(iv) = open[th] {
                // The open interval's last member sample covers up to here (a bridged gap) or
                // ends at the tick after it.
                let end = if near { k } else { iv.1 + 1 };
                if !(on && near) {
                    close(iv, end, &mut per_thread[th]);
                    open[th] = None;
                }
            }
            if on {
                let start = open[th].map_or(k, |iv| iv.0);
                open[th] = Some((start, k));
            }
            last[th] = Some(k);
        }
    }
    let mut spans: Vec<Span> = Vec::new();
    let mut threads = Vec::new();
    for th in 0..n {
        if let Some(iv) = open[th] {
            close(iv, iv.1 + 1, &mut per_thread[th]);
        }
        for &(a, b) in &per_thread[th] {
            spans.push(Span { thread: th as ThreadId, from_s: secs(index.times[a as usize]), to_s: secs(index.times[b as usize]) });
        }
        if !per_thread[th].is_empty() {
            threads.push(th as ThreadId);
        }
    }
    spans.sort_by(|a, b| a.from_s.total_cmp(&b.from_s).then(a.thread.cmp(&b.thread)));
    let from_s = spans.first().map_or(0.0, |s| s.from_s);
    let to_s = spans.iter().map(|s| s.to_s).fold(0.0, f64::max);
    let span_count = spans.len();
    spans.truncate(MAX_SPANS);
    Ok(Focus { artifact: key.clone(), name, from_s, to_s, threads, spans, span_count, obtained: OBTAINED })
}
