//! `traceCompare`: two runs compared as traces (TraceDiff, `threadradar_analysis::tracediff`), laid
//! out for the trace compare panel: one lane pair per matched thread pair, the bars of A and of B
//! in pixels of one shared, run-relative time axis, the match groups as edges between them
//! (bundled per pixel column), and the changes in words at the top.

use serde::{Deserialize, Serialize};
use threadradar_analysis::compare::Change;
pub use threadradar_analysis::tracediff::Shift;
use threadradar_analysis::tracediff::{MatchGroup, PairedBy, TraceThread};
use ts_rs::TS;

/// Parameters of `traceCompare`.
#[derive(Clone, Debug, Default, Deserialize, TS)]
#[serde(default, deny_unknown_fields)]
pub struct TraceCompareParams {
    /// Run A, drawn above (typically before a fix): a run's name or path. Default: the run
    /// recorded before B.
    #[ts(optional)]
    pub a: Option<String>,
    /// Run B, drawn below (typically after the fix). Default: the active run.
    #[ts(optional)]
    pub b: Option<String>,
    /// Run A as a run set (names or paths): A is its first run, and the changes in words are
    /// tested against the sets' spread, as `compare`'s (`Change::significant`); instead of `a`.
    #[ts(optional)]
    pub a_runs: Option<Vec<String>>,
    /// Run B as a run set; instead of `b`.
    #[ts(optional)]
    pub b_runs: Option<Vec<String>>,
    /// The width of the caller's time axis in pixels (at least 1): bars and edges are laid out in it.
    pub width_px: u32,
    /// Minimal stack similarity τ of a match, in (0, 1] (default 0.2).
    #[ts(optional)]
    pub tau: Option<f64>,
}

/// One run of the two.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct TraceSide {
    pub path: String,
    /// The run file's name.
    pub name: String,
    pub command: Vec<String>,
    pub duration_s: f64,
    /// The sampling interval, ms.
    pub period_ms: f64,
    /// Seconds of stack time sampled, all threads.
    pub stack_s: f64,
}

/// One bar of a lane: a match group's stretch in this run, or a stretch only in this run;
/// stretches narrower than a pixel are merged with their neighbours of the same kind.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct CompareBar {
    /// Pixels from the axis' start.
    pub x0: f64,
    pub x1: f64,
    /// Seconds from the run's start.
    pub start_s: f64,
    /// Stack time of the bar's stretches, s.
    pub duration_s: f64,
    /// The (longest) match group of the bar (index into `groups`), or `None`: only in this run.
    pub group: Option<u32>,
    /// For a stretch only in this run: the qualified names on its longest segment's stack, root
    /// first, with file and line of the innermost (for hover and click).
    #[ts(optional)]
    pub stack: Option<Vec<threadradar_analysis::tracediff::TraceFrame>>,
    /// How many stretches the bar stands for.
    pub count: u32,
}

/// A matched thread pair: A's lane above, B's lane below.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct PairLane {
    pub a: TraceThread,
    pub b: TraceThread,
    pub paired_by: PairedBy,
    /// Weighted Jaccard index of the two threads' per-function stack time.
    pub similarity: f64,
    /// Matched stack time of the pair / its stack time.
    pub matched_share: f64,
    pub a_bars: Vec<CompareBar>,
    pub b_bars: Vec<CompareBar>,
}

/// Match groups joining one lane pair, bundled per (A pixel column, B pixel column, shift).
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct CompareEdge {
    /// Index into `lanes`.
    pub lane: u32,
    /// The centre of the groups' stretches in A and in B, pixels.
    pub a_x: f64,
    pub b_x: f64,
    /// Matched stack time, s (the edge's width is their mean).
    pub a_duration_s: f64,
    pub b_duration_s: f64,
    /// Time-weighted mean of the groups' shifts, s.
    pub shift_s: f64,
    pub shift: Shift,
    /// The bundled groups (indices into `groups`), longest first.
    pub groups: Vec<u32>,
}

/// Result of `traceCompare`.
#[derive(Clone, Debug, Serialize, TS)]
pub struct TraceCompareResult {
    pub a: TraceSide,
    pub b: TraceSide,
    pub tau: f64,
    /// Matched stack time / all stack time, both runs.
    pub matched_share: f64,
    /// A shift within this many seconds counts as the same time.
    pub same_shift_s: f64,
    pub width_px: u32,
    /// Seconds the axis spans (the longer run): both runs share one scale from their own start.
    pub axis_s: f64,
    /// What changed, in words (the statements of `compare` and of the trace comparison).
    pub changes: Vec<Change>,
    pub lanes: Vec<PairLane>,
    /// Every match group (edges and bars point into it).
    pub groups: Vec<MatchGroup>,
    pub edges: Vec<CompareEdge>,
    /// Threads with stack time that have no partner in the other run.
    pub unmatched_a: Vec<TraceThread>,
    pub unmatched_b: Vec<TraceThread>,
    /// How the figures were obtained, then what the reader must know (intervals, banding, …).
    pub notes: Vec<String>,
}
