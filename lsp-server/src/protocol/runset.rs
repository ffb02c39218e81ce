//! `runSet`: the mean and spread of every figure over the runs of a run set (`threadradar record
//! --repeat N`, or the editors' repeat count), by default the set the active run belongs to — what
//! `threadradar report RUNSET` prints, for the panels and the hover.

use serde::{Deserialize, Serialize};
use threadradar_analysis::runset::{ArtifactSpread, ProgramSpread};
use threadradar_analysis::{CountedStates, FilterSpec, Level};
use ts_rs::TS;

#[derive(Clone, Debug, Default, Deserialize, TS)]
#[serde(default)]
pub struct RunSetParams {
    /// The run set's manifest (a path, or its file name in the active run's directory); by
    /// default the one in the active run's directory that lists the active run.
    #[ts(optional)]
    pub runset: Option<String>,
    pub level: Level,
    /// At most this many artifacts, highest mean crt first.
    #[ts(optional)]
    pub top: Option<usize>,
    #[serde(flatten)]
    pub filter: FilterSpec,
    /// Counted states; the configured ones when left out.
    #[ts(optional)]
    pub states: Option<CountedStates>,
}

/// The answer: the set, or `null` with a sentence when the active run belongs to none (not an
/// error: most runs are not in a set, and a view asks for every run).
#[derive(Clone, Debug, Serialize, TS)]
pub struct RunSetAnswer {
    pub set: Option<RunSetResult>,
    /// Why there is no set, and how to record one.
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct RunSetResult {
    /// The manifest's path.
    pub path: String,
    pub label: String,
    /// The set's runs, in recording order.
    pub runs: Vec<String>,
    /// The index in `runs` of the active run, if it is one of them.
    pub active_index: Option<usize>,
    pub level: Level,
    pub states: CountedStates,
    pub program: ProgramSpread,
    /// Highest mean crt first, at most `top`.
    pub artifacts: Vec<ArtifactSpread>,
    /// Artifacts before `top` cut the list.
    pub listed: usize,
    /// How the figures were obtained, as a sentence for the views.
    pub how: String,
    /// Anything a reader should know (one run: no spread; runs of different programs).
    pub notes: Vec<String>,
}
