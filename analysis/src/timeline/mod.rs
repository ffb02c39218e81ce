//! The timeline (spec §6 "Icicle panel"; SyncTrace §IV-B, Trümper et al. §4): every thread's
//! sampled stacks over time as an icicle, all threads on one merged, log-scalable time axis.
//!
//! - [`index`]: [`TimelineIndex`], built once per run: per thread the icicle's bars (maximal runs
//!   of samples with the same function at a depth, under the same callers) and the state runs that
//!   the lanes draw as an underlay.
//! - [`axis`]: `logscale(Δt, θ)` and the merged axis that maps a time to the same position in
//!   every lane.
//! - [`layout`]: one viewport — only what can be drawn at a pixel width: bars of ≥ 1 px as they
//!   are, narrower ones aggregated per pixel column into blocks with their count; stack folding.
//! - [`lod`]: per row, a level-of-detail index that lets a zoomed-out layout pass a stretch of
//!   bars narrower than a pixel in one step instead of column by column.
//! - [`overview`]: the textual per-thread overview (busy %, waiting %, longest wait, top frames).
//! - [`svg`]: a layout as a static SVG chart (`threadradar timeline -o chart.svg`).
//! - [`tasks`]: with asyncio tasks as units, each task's lane under its loop thread's, and the
//!   task's recorded awaiting time (evidence `task-state`).
//!
//! Everything here is *sampled*: a bar starts at the first sample that saw its frame and ends where
//! the next sample no longer did, so its edges are uncertain by one sampling interval, and anything
//! shorter than an interval may be missed or be shown one interval long. `docs/timeline.md` says
//! this for users.

pub mod axis;
pub mod export;
pub mod focus;
pub mod index;
pub mod layout;
pub mod lod;
pub mod overview;
pub mod svg;
pub mod tasks;

pub use axis::{logscale, Axis};
pub use index::{run_heap_bytes, Bar, BarState, BlockedKind, Lane, Lanes, StateRun, TimelineIndex, MEMORY_BUDGET, TOLERATED_MISSED_TICKS};
pub use layout::{Fold, Layout, LayoutRequest, ThreadSelection};
pub use overview::{thread_overview, ThreadOverview};

/// Why a timeline request cannot be answered; each one sentence with what to do instead.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TimelineError {
    #[error("the time range {from:.3} s – {to:.3} s is outside the run, which lasts {duration:.3} s: pass --from/--to between 0 and {duration:.3}")]
    RangeOutside { from: f64, to: f64, duration: f64 },
    #[error("the time range {from:.3} s – {to:.3} s is empty: --to must be greater than --from")]
    EmptyRange { from: f64, to: f64 },
    #[error("θ = {0} is not allowed: pass 0 for a linear axis or a positive value (per millisecond) for a logarithmic one")]
    BadTheta(f64),
    #[error("a width of {0} px cannot be drawn: pass 1 to 100000 px")]
    BadWidth(u32),
    #[error("no thread {0} in this run (threads: {1}); pass a thread id or name from `threadradar info`")]
    UnknownThread(String, String),
    #[error("the thread pattern {pattern:?} is not a valid regular expression: {detail}")]
    BadPattern { pattern: String, detail: String },
    #[error("the run has {0} distinct frames, more than the timeline can index (33 554 431): record a shorter run")]
    TooManyFrames(usize),
    #[error("the run has {0} samples, more than the timeline can index (268 435 455): record a shorter run or with a longer --interval-ms")]
    TooManyTicks(usize),
    #[error("no artifact {0} in this run: pick a function or class from the overview (or `threadradar report`)")]
    UnknownArtifact(String),
    #[error("the thread pattern {0:?} matches no thread of this run (threads: {1})")]
    NoThreadMatches(String, String),
}

/// The threads whose name, type or `#id` matches a regular expression, by id.
pub fn select_threads(run: &threadradar_profiler::Run, pattern: &str) -> Result<Vec<threadradar_profiler::run::ThreadId>, TimelineError> {
    let re = regex::Regex::new(pattern).map_err(|e| {
        // regex's syntax errors draw a caret diagram over several lines; its last line says what.
        let text = e.to_string();
        let detail = text.lines().last().unwrap_or("").trim().trim_start_matches("error: ").to_string();
        TimelineError::BadPattern { pattern: pattern.to_string(), detail }
    })?;
    let ids: Vec<_> = run
        .threads
        .iter()
        .enumerate()
        .filter(|(i, t)| re.is_match(&t.name) || re.is_match(&t.thread_type) || re.is_match(&format!("#{i}")))
        .map(|(i, _)| i as u32)
        .collect();
    if ids.is_empty() {
        return Err(TimelineError::NoThreadMatches(pattern.to_string(), layout::known_threads(run)));
    }
    Ok(ids)
}

/// Seconds of a nanosecond count.
pub(crate) fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}
