//! The panels' JSON API (spec §5; paper §4.2, §6.1): the requests the overview and detail views
//! make and the responses they get, transport-agnostic.
//!
//! The same functions back `threadradar serve` (HTTP: `POST /api/<method>` with the request as
//! JSON) and the language server's custom requests `threadRadar/overview`, `threadRadar/detail`,
//! `threadRadar/glyph` and `threadRadar/threads` (params = the request, result = the response).
//! Every clustering and every SVG is computed here: the web page only asks and displays.
//!
//! Two ways in:
//! - [`Panels`]: owns a run and caches one [`Analysis`] per (counted states, excluded threads), so
//!   a preview toggling threads back and forth does not recompute. Use it in servers.
//! - the free functions [`overview`], [`detail`], [`glyph`], [`threads`]: one request, one fresh
//!   analysis.
//!
//! Threads are named by their id in the run ([`ThreadId`], the index in `run.threads`), artifacts
//! by an [`ArtifactKey`]. All requests accept `exclude_threads` (the thread filter: the global one,
//! or for a preview the global one plus the deselected threads) and `states` (`computing`,
//! `computing+gil`, `all`); every field of a request is optional in JSON except `artifact`.
//!
//! ```
//! use threadradar_analysis::panel::{self, OverviewRequest};
//! let req: OverviewRequest = serde_json::from_str(r#"{"exclude_threads":[2],"hide_stdlib":true}"#).unwrap();
//! assert_eq!(req.params.exclude_threads, vec![2]);
//! # let _ = panel::overview;
//! ```

use crate::analysis::Analysis;
use crate::artifact::{Artifact, ArtifactId, ArtifactKind};
use crate::error::AnalysisError;
use crate::filter::FilterSpec;
use crate::glyph::{self, ClusterColour, GlyphCell, Palette, RadarLevel, RadarSpec, SvgOptions, Theme};
use crate::histogram::{self, HistogramBin, HistogramPoint};
use crate::metrics::ratio;
use crate::threads::{CountedStates, ThreadFilter};
use crate::view::{artifact_view, ArtifactView, ClusterView};
use crate::{ClusterMethod, Options, Window};
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use threadradar_profiler::run::{FileKind, Run, ThreadId};

mod detail;
mod entries;
mod keys;
mod overview;

use detail::*;
use entries::*;
pub use keys::{find, resolve, Target};
use keys::*;
use overview::*;

// ------------------------------------------------------------------------------------------------
// Keys and common parameters
// ------------------------------------------------------------------------------------------------

/// A stable name for an artifact of a run, serialised as a string:
/// `function:<file>:<line>:<qualname>`, `class:<file>:<line>:<qualname>`, `file:<path>` or
/// `program`. Keys are compared as strings, never parsed, so paths and names may hold `:`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(transparent)]
pub struct ArtifactKey(pub String);

impl ArtifactKey {
    pub fn program() -> ArtifactKey {
        ArtifactKey("program".into())
    }
    pub fn is_program(&self) -> bool {
        self.0 == "program"
    }
    pub fn function(file: &str, line: u32, qualname: &str) -> ArtifactKey {
        ArtifactKey(format!("function:{file}:{line}:{qualname}"))
    }
    pub fn class(file: &str, line: u32, qualname: &str) -> ArtifactKey {
        ArtifactKey(format!("class:{file}:{line}:{qualname}"))
    }
    pub fn file(path: &str) -> ArtifactKey {
        ArtifactKey(format!("file:{path}"))
    }
    /// The key of a described artifact.
    pub fn of(a: &Artifact) -> ArtifactKey {
        match a.id.kind {
            ArtifactKind::Function => ArtifactKey::function(a.file, a.line, a.qualname),
            ArtifactKind::Class => ArtifactKey::class(a.file, a.line, a.qualname),
            ArtifactKind::File => ArtifactKey::file(a.file),
        }
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ArtifactKey {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What every request carries: the analysis to answer from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(default)]
pub struct Params {
    /// Threads left out of every metric and clustering (ids in the run).
    pub exclude_threads: Vec<ThreadId>,
    pub states: CountedStates,
    /// Only the samples of this time window count (the global window); the whole run when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub window: Option<Window>,
}

impl Params {
    fn normalised(&self) -> Params {
        let set: BTreeSet<ThreadId> = self.exclude_threads.iter().copied().collect();
        Params { exclude_threads: set.into_iter().collect(), states: self.states, window: self.window }
    }
    /// The analysis of `run` under these parameters (in their window, checked against the run).
    fn analyse(&self, run: &Run) -> Result<Analysis, PanelError> {
        let window = self.window.map(|w| w.check(run)).transpose()?;
        Ok(Analysis::in_window(run, &self.options(), window)?)
    }
    fn options(&self) -> Options {
        Options {
            states: self.states,
            threads: ThreadFilter::excluding(self.exclude_threads.iter().copied()),
            method: ClusterMethod::default(),
        }
    }
}

/// Why a panel request failed; each one sentence.
#[derive(Debug, thiserror::Error)]
pub enum PanelError {
    #[error("no artifact {key} in this run{}", close_list(.close))]
    UnknownArtifact { key: String, close: Vec<String> },
    #[error("no thread with id {0} in this run")]
    UnknownThread(ThreadId),
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
}

fn close_list(close: &[String]) -> String {
    if close.is_empty() {
        String::new()
    } else {
        format!(" (close matches: {})", close.join(", "))
    }
}

// ------------------------------------------------------------------------------------------------
// Requests and responses
// ------------------------------------------------------------------------------------------------

/// `overview`: the lists of methods and classes, the Program ThreadRadar and the threads tab.
#[derive(Clone, Debug, Default, Serialize, Deserialize, TS)]
#[serde(default)]
pub struct OverviewRequest {
    #[serde(flatten)]
    pub params: Params,
    /// Which artifacts are listed (`include`, `exclude`, `hide_stdlib`, `hide_third_party`).
    #[serde(flatten)]
    pub filter: FilterSpec,
    /// "Only the current file": list only artifacts in this file (exact path).
    pub only_file: Option<String>,
    /// At most this many entries per list.
    pub top: Option<usize>,
    pub theme: Theme,
    /// In-situ glyph height in px [32].
    pub glyph_size: Option<u32>,
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct OverviewResponse {
    pub run: RunInfo,
    /// The Program ThreadRadar (`key` = `program`).
    pub program: ArtifactEntry,
    /// Functions/methods and classes by `crt` descending, after the artifact filters.
    pub functions: Vec<ArtifactEntry>,
    pub classes: Vec<ArtifactEntry>,
    /// How many passed the filters before `top`.
    pub listed_functions: usize,
    pub listed_classes: usize,
    /// Every thread of the run (excluded ones flagged), by id.
    pub threads: Vec<ThreadEntry>,
    /// Files with counted samples, for "only the current file".
    pub files: Vec<String>,
    pub palette: PaletteView,
    /// Something the page should say instead of figures (e.g. every thread excluded).
    pub note: Option<String>,
}

/// The run being shown.
#[derive(Clone, Debug, Serialize, TS)]
pub struct RunInfo {
    pub command: Vec<String>,
    pub duration_s: f64,
    pub sample_count: u64,
    pub thread_count: usize,
    /// FRQ (Eq. 4) under the request's filter and states.
    pub counted_samples: u64,
    pub states: CountedStates,
    pub excluded_threads: Vec<ThreadId>,
    /// The time window every figure is computed over; absent for the whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub window: Option<Window>,
    /// What the figures count as units: absent for threads; `tasks` when asyncio tasks are
    /// units (`thread_count` and every thread figure then count tasks and threads).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub units: Option<crate::units::Units>,
}

/// The palettes, so the page colours its text with the glyph's colours.
#[derive(Clone, Debug, Serialize, TS)]
pub struct PaletteView {
    pub light: Palette,
    pub dark: Palette,
}

/// One listed artifact (or the program).
#[derive(Clone, Debug, Serialize, TS)]
pub struct ArtifactEntry {
    pub key: ArtifactKey,
    /// `function`, `class`, `file` or `program`.
    #[ts(type = "\"function\" | \"class\" | \"file\" | \"program\"")]
    pub kind: &'static str,
    pub name: String,
    pub qualname: String,
    pub file: String,
    pub line: u32,
    pub file_kind: FileKind,
    /// `crt(a)` (Eq. 5); 1 for the program.
    pub crt: f64,
    pub self_crt: f64,
    pub seconds: f64,
    pub samples: u64,
    /// Lower and upper pedestal.
    pub threads: usize,
    pub thread_types: usize,
    pub clusters: Vec<ClusterInfo>,
    /// The ThreadRadar as SVG (in situ in lists, enlarged and interactive in `detail`).
    pub glyph_svg: String,
}

/// One cluster of an artifact: one sector.
#[derive(Clone, Debug, Serialize, TS)]
pub struct ClusterInfo {
    pub index: usize,
    pub colour: ClusterColour,
    pub threads: Vec<ThreadId>,
    /// Average and sum of `crt(a, th)` (`crt(th)` for the program) over the members.
    pub avg: f64,
    pub sum: f64,
    pub avg_level: RadarLevel,
    pub sum_level: RadarLevel,
    pub thread_types: usize,
    /// The cluster as a text-glyph cell (with its characters), for text clients.
    pub cell: GlyphCell,
}

/// One thread in the threads tab.
#[derive(Clone, Debug, Serialize, TS)]
pub struct ThreadEntry {
    pub id: ThreadId,
    pub name: String,
    #[serde(rename = "type")]
    pub thread_type: String,
    pub is_main: bool,
    /// `crt(th)` (Eq. 7) under the filter; 0 when excluded.
    pub crt: f64,
    pub samples: u64,
    pub seconds: f64,
    /// Program cluster and its colour; `None` when excluded or never counted.
    pub cluster: Option<usize>,
    pub colour: Option<ClusterColour>,
    pub excluded: bool,
    /// Where to navigate: the program's own function this thread spent most counted samples in.
    pub file: Option<String>,
    pub line: u32,
}

/// `detail`: one artifact (or `program`) under a thread selection.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct DetailRequest {
    pub artifact: ArtifactKey,
    #[serde(flatten)]
    pub params: Params,
    #[serde(default)]
    pub theme: Theme,
    /// Enlarged glyph height in px [200].
    #[serde(default)]
    pub size: Option<u32>,
    /// The histogram's box in px [480 × 120].
    #[serde(default)]
    pub histogram_width: Option<u32>,
    #[serde(default)]
    pub histogram_height: Option<u32>,
    /// Also bin the histogram into this many text columns (`histogram_bins`), for text clients.
    #[serde(default)]
    pub histogram_columns: Option<u32>,
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct DetailResponse {
    /// Figures and clusters under the selection; `glyph_svg` is enlarged and interactive.
    pub artifact: ArtifactEntry,
    pub selection: Selection,
    /// Every thread that executed the artifact when no thread is excluded, so deselected threads
    /// can be selected again; by id.
    pub threads: Vec<DetailThread>,
    /// The same threads grouped by thread type (the tree's second tab).
    pub types: Vec<TypeGroup>,
    /// Fig. 11 histogram of `crt(a, th)` of the selected threads.
    pub histogram_svg: String,
    /// The same histogram in `histogram_columns` text columns; empty unless asked for.
    pub histogram_bins: Vec<HistogramBin>,
    pub callers: Vec<EdgeEntry>,
    pub callees: Vec<EdgeEntry>,
    pub note: Option<String>,
}

/// The info panel's "whole selection" figures.
#[derive(Clone, Debug, Serialize, TS)]
pub struct Selection {
    /// Σ crt(a, th) of the selected threads, each measured with no thread excluded: the share of
    /// the artifact's runtime the selection covers (1 when nothing is deselected).
    pub crt_sum: f64,
    /// `crt(a)` under the selection.
    pub crt: f64,
    pub threads: usize,
    pub thread_types: usize,
}

/// One entry of the thread tree.
#[derive(Clone, Debug, Serialize, TS)]
pub struct DetailThread {
    pub id: ThreadId,
    pub name: String,
    #[serde(rename = "type")]
    pub thread_type: String,
    /// `crt(a, th)` under the selection (`crt(th)` for the program); `None` when excluded.
    pub crt: Option<f64>,
    /// `crt(a, th)` with no thread excluded.
    pub crt_all: f64,
    pub cluster: Option<usize>,
    pub colour: Option<ClusterColour>,
    pub excluded: bool,
    pub samples: u64,
    pub file: Option<String>,
    pub line: u32,
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct TypeGroup {
    pub name: String,
    pub threads: Vec<ThreadId>,
}

/// A caller or callee with its shares (see [`crate::view::EdgeView`]).
#[derive(Clone, Debug, Serialize, TS)]
pub struct EdgeEntry {
    pub key: ArtifactKey,
    pub qualname: String,
    pub file: String,
    pub line: u32,
    pub crt: f64,
    pub share: f64,
    pub seconds: f64,
}

/// `glyph`: one ThreadRadar as SVG.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct GlyphRequest {
    pub artifact: ArtifactKey,
    #[serde(flatten)]
    pub params: Params,
    #[serde(default)]
    pub theme: Theme,
    #[serde(default)]
    pub size: Option<u32>,
    #[serde(default)]
    pub interactive: bool,
}

/// `threads`: the threads tab.
#[derive(Clone, Debug, Default, Serialize, Deserialize, TS)]
#[serde(default)]
pub struct ThreadsRequest {
    #[serde(flatten)]
    pub params: Params,
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct ThreadsResponse {
    pub threads: Vec<ThreadEntry>,
    pub types: Vec<TypeGroup>,
    pub counted_samples: u64,
}

// ------------------------------------------------------------------------------------------------
// Entry points
// ------------------------------------------------------------------------------------------------

/// A run with a cache of analyses, shared by the requests of one server.
pub struct Panels {
    run: Arc<Run>,
    cache: Mutex<Vec<(Params, Arc<Analysis>)>>,
}

const CACHE: usize = 16;

impl Panels {
    pub fn new(run: impl Into<Arc<Run>>) -> Panels {
        Panels { run: run.into(), cache: Mutex::new(Vec::new()) }
    }

    pub fn run(&self) -> &Run {
        &self.run
    }

    /// The analysis for `params`, computed once per distinct (states, exclusion set).
    pub fn analysis(&self, params: &Params) -> Result<Arc<Analysis>, PanelError> {
        let key = params.normalised();
        if let Some(a) = self.cache.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(k, _)| *k == key).map(|(_, a)| a.clone()) {
            return Ok(a);
        }
        let a = Arc::new(key.analyse(&self.run)?);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CACHE {
            cache.remove(0);
        }
        cache.push((key, a.clone()));
        Ok(a)
    }

    pub fn overview(&self, req: &OverviewRequest) -> Result<OverviewResponse, PanelError> {
        overview_with(&self.run, &|p| self.analysis(p), req)
    }
    pub fn detail(&self, req: &DetailRequest) -> Result<DetailResponse, PanelError> {
        detail_with(&self.run, &|p| self.analysis(p), req)
    }
    pub fn glyph(&self, req: &GlyphRequest) -> Result<String, PanelError> {
        glyph_with(&self.run, &|p| self.analysis(p), req)
    }
    pub fn threads(&self, req: &ThreadsRequest) -> Result<ThreadsResponse, PanelError> {
        threads_with(&self.run, &|p| self.analysis(p), req)
    }
}

pub(super) type Analyse<'a> = dyn Fn(&Params) -> Result<Arc<Analysis>, PanelError> + 'a;

fn fresh(run: &Run) -> impl Fn(&Params) -> Result<Arc<Analysis>, PanelError> + '_ {
    move |p| Ok(Arc::new(p.analyse(run)?))
}

/// The overview of `run` (one fresh analysis; see [`Panels`] to cache).
pub fn overview(run: &Run, req: &OverviewRequest) -> Result<OverviewResponse, PanelError> {
    overview_with(run, &fresh(run), req)
}

/// The detail view of one artifact under a selection.
pub fn detail(run: &Run, req: &DetailRequest) -> Result<DetailResponse, PanelError> {
    detail_with(run, &fresh(run), req)
}

/// One glyph as an SVG document.
pub fn glyph(run: &Run, req: &GlyphRequest) -> Result<String, PanelError> {
    glyph_with(run, &fresh(run), req)
}

/// The threads tab.
pub fn threads(run: &Run, req: &ThreadsRequest) -> Result<ThreadsResponse, PanelError> {
    threads_with(run, &fresh(run), req)
}
