//! `waits`: who waited for whom in the active run (`threadradar_analysis::waits`): wait intervals
//! per thread for a time range, wake edges (bundled per pixel column when the caller gives its
//! width), the objects table and the evidence notes.

use serde::{Deserialize, Serialize};
use threadradar_analysis::waitcounts::WaitCounts;
use threadradar_analysis::waits_groups::WaitsGroups;
use threadradar_analysis::waits::{Evidence, WaitsView};
use ts_rs::TS;

/// Parameters of `waits`.
#[derive(Clone, Debug, Default, Deserialize, TS)]
#[serde(default, deny_unknown_fields)]
pub struct WaitsParams {
    /// Only objects whose label, type or name contains this (case-insensitive).
    pub object: Option<String>,
    /// The time range, seconds from the run's start (the whole run when absent).
    pub from_s: Option<f64>,
    pub to_s: Option<f64>,
    /// The width of the caller's time axis in pixels: edges are then bundled per pixel column,
    /// waker, wakee, object and evidence.
    pub width_px: Option<u32>,
    /// Ignore the run's kernel scheduler events (inference only).
    pub no_kernel: bool,
}

/// Edges that fall in one pixel column with the same waker, wakee, object and evidence.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct EdgeBundle {
    pub waker_thread: u32,
    pub wakee_thread: u32,
    pub object_index: u32,
    pub evidence: Evidence,
    /// The first and last edge's time, seconds from the run's start.
    pub from_s: f64,
    pub to_s: f64,
    pub count: u32,
    /// The mean confidence of the bundled edges.
    pub confidence: f64,
    pub futile: u32,
    /// The index in `view.edges` of the bundle's first edge (same waker, wakee and object as
    /// the others): what hovering and clicking the bundle show and open.
    pub first_edge: u32,
}

/// Result of `waits`.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct WaitsResult {
    pub view: WaitsView,
    /// With `width_px`: the edges bundled (and `view.edges` then lists them all still, for hover
    /// and navigation of a single edge). `None` without `width_px`.
    pub bundles: Option<Vec<EdgeBundle>>,
    /// `view`'s edges counted by evidence (all, and per object) and its waits' ends by source.
    pub counts: WaitCounts,
    /// `view`'s objects grouped by type and site, each group's waker → wakee matrix, and
    /// whether the edges separate at `width_px` (issue 32: SyncTrace's aggregation).
    pub groups: WaitsGroups,
}
