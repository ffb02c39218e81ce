//! Where one artifact is on the timeline: the bars of its functions, as spans per thread.
//!
//! "Selecting an artifact anywhere highlights all its bars" and the editors' "Timeline" lens both
//! start here: [`members`] says which of the run's functions belong to an artifact (a function
//! itself; every method of a class; every function of a file; every function for the program),
//! and [`focus`] merges, per thread, the intervals in which one of them was on the stack (a bar at
//! any depth) into spans. Sampled like every bar: each edge is uncertain by one sampling period.

use super::index::{Lane, TimelineIndex};
use super::{secs, TimelineError};
use crate::artifact::{ArtifactKind, Artifacts};
use crate::panel::ArtifactKey;
use serde::Serialize;
use threadradar_profiler::run::{Run, ThreadId};

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
pub fn focus(run: &Run, index: &TimelineIndex, key: &ArtifactKey) -> Result<Focus, TimelineError> {
    let (member, name) = members(run, key)?;
    let mut spans: Vec<Span> = Vec::new();
    let mut threads = Vec::new();
    for lane in &index.lanes {
        let before = spans.len();
        for (a, b) in lane_spans(run, lane, &member) {
            spans.push(Span { thread: lane.thread, from_s: secs(index.times[a as usize]), to_s: secs(index.times[b as usize]) });
        }
        if spans.len() > before {
            threads.push(lane.thread);
        }
    }
    spans.sort_by(|a, b| a.from_s.total_cmp(&b.from_s).then(a.thread.cmp(&b.thread)));
    let from_s = spans.first().map_or(0.0, |s| s.from_s);
    let to_s = spans.iter().map(|s| s.to_s).fold(0.0, f64::max);
    let span_count = spans.len();
    spans.truncate(MAX_SPANS);
    Ok(Focus { artifact: key.clone(), name, from_s, to_s, threads, spans, span_count, obtained: OBTAINED })
}

/// The lane's tick intervals `[start, end)` with a member function on the stack, merged.
fn lane_spans(run: &Run, lane: &Lane, member: &[bool]) -> Vec<(u32, u32)> {
    let mut iv: Vec<(u32, u32)> = lane
        .rows
        .iter()
        .flatten()
        .filter(|b| !b.folded() && member[run.frames[b.frame() as usize].function as usize])
        .map(|b| (b.start(), b.end()))
        .collect();
    iv.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(iv.len());
    for (a, b) in iv {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}
