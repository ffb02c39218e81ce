//! The run history's part of `runs` (issue 19): what a run list shows of a test run, and the
//! label and pin operations. Additive: every field is optional, so older clients see no change.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `runs`' `label`: sets (or with `null`/empty removes) a run's label.
#[derive(Clone, Debug, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct RunLabel {
    /// A run path or file name.
    pub run: String,
    pub label: Option<String>,
}

/// `runs`' `pin`: a pinned run is never pruned.
#[derive(Clone, Debug, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct RunPin {
    pub run: String,
    pub pinned: bool,
}

/// A test run's outcome, from pytest's JUnit XML report.
#[derive(Clone, Debug, Serialize, TS)]
pub struct RunOutcome {
    pub passed: u32,
    pub failed: u32,
    pub errors: u32,
    pub skipped: u32,
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<String>,
}

impl From<&threadradar_profiler::run::TestOutcome> for RunOutcome {
    fn from(o: &threadradar_profiler::run::TestOutcome) -> RunOutcome {
        RunOutcome { passed: o.passed, failed: o.failed, errors: o.errors, skipped: o.skipped, first_failure: o.first_failure.clone() }
    }
}

/// What the run list shows of one run besides its file.
#[derive(Clone, Debug, Default, Serialize, TS)]
pub struct RunHistory {
    /// The profiled test (pytest node id or arguments), for runs of `threadradar test`.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// `null` inside `history` when pytest wrote no report (killed, cancelled).
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<RunOutcome>,
    /// The program that was recorded.
    pub command: String,
    pub duration_s: f64,
    pub threads: usize,
    pub start_unix_ms: u64,
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub pinned: bool,
    /// The run holds only what was flushed before the recorder ended (e.g. a cancelled test).
    pub partial: bool,
    /// For the newest run of a test: the run before it of the same test ("Compare with previous").
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<String>,
}
