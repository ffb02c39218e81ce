//! `sections`: the active run's critical sections and every execution of each
//! (`threadradar_analysis::sections`; rules in `docs/sections.md`).

use serde::{Deserialize, Serialize};
use threadradar_analysis::sections::SectionsView;
use ts_rs::TS;

/// What counts as an outlier; both default as in `threadradar sections`.
#[derive(Clone, Debug, Default, Deserialize, TS)]
#[serde(default, deny_unknown_fields)]
pub struct SectionsParams {
    /// An execution longer than this many medians is an outlier (5).
    #[ts(optional)]
    pub outlier_factor: Option<f64>,
    /// An execution longer than this quantile of its section is an outlier (0.99).
    #[ts(optional)]
    pub outlier_quantile: Option<f64>,
}

/// The sections view, with what discovery could not use.
#[derive(Clone, Debug, Serialize, TS)]
pub struct SectionsResult {
    #[serde(flatten)]
    pub view: SectionsView,
    /// Sentences about files whose sections are not shown (unreadable, changed since recording).
    pub notes: Vec<String>,
    /// The `pyproject.toml` whose `[tool.threadradar]` was read, if any.
    pub config_file: Option<String>,
}
