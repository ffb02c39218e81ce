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

type Analyse<'a> = dyn Fn(&Params) -> Result<Arc<Analysis>, PanelError> + 'a;

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

/// What an [`ArtifactKey`] names in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Program,
    Artifact(ArtifactId),
}

/// Resolves a key, or fails with close matches.
pub fn resolve(run: &Run, analysis: &Analysis, key: &ArtifactKey) -> Result<Target, PanelError> {
    if key.is_program() {
        return Ok(Target::Program);
    }
    let arts = analysis.artifacts();
    for kind in ArtifactKind::ALL {
        if !key.0.starts_with(kind_name(kind)) {
            continue;
        }
        for id in arts.ids(kind) {
            if let Some(a) = arts.describe(run, id) {
                if ArtifactKey::of(&a) == *key {
                    return Ok(Target::Artifact(id));
                }
            }
        }
    }
    Err(PanelError::UnknownArtifact { key: key.0.clone(), close: close_matches(run, analysis, &key.0) })
}

/// Finds an artifact by key, by qualified name (`Worker.run`, `Worker`) or `program`, as the
/// command line spells it. Among equal names, the one with the most counted samples wins.
pub fn find(run: &Run, analysis: &Analysis, name: &str) -> Result<ArtifactKey, PanelError> {
    if name == "program" {
        return Ok(ArtifactKey::program());
    }
    if let Ok(Target::Artifact(_)) = resolve(run, analysis, &ArtifactKey(name.to_string())) {
        return Ok(ArtifactKey(name.to_string()));
    }
    let arts = analysis.artifacts();
    let m = analysis.metrics();
    let mut best: Option<(u64, ArtifactKey)> = None;
    for kind in [ArtifactKind::Function, ArtifactKind::Class] {
        for id in arts.ids(kind) {
            if let Some(a) = arts.describe(run, id) {
                if a.qualname == name {
                    let frq = m.artifact(id).map_or(0, |x| x.frq);
                    if best.as_ref().is_none_or(|(f, _)| frq > *f) {
                        best = Some((frq, ArtifactKey::of(&a)));
                    }
                }
            }
        }
        if best.is_some() {
            break;
        }
    }
    best.map(|(_, k)| k).ok_or_else(|| PanelError::UnknownArtifact { key: name.to_string(), close: close_matches(run, analysis, name) })
}

fn kind_name(kind: ArtifactKind) -> &'static str {
    match kind {
        ArtifactKind::Function => "function",
        ArtifactKind::Class => "class",
        ArtifactKind::File => "file",
    }
}

/// Up to five qualified names that look like `wanted` (same name after the last `:` or `.`,
/// a substring either way, or a few edits apart), executed ones first.
fn close_matches(run: &Run, analysis: &Analysis, wanted: &str) -> Vec<String> {
    let wanted = wanted.rsplit(':').next().unwrap_or(wanted).to_lowercase();
    let short = wanted.rsplit('.').next().unwrap_or(&wanted).to_string();
    let arts = analysis.artifacts();
    let m = analysis.metrics();
    let mut hits: Vec<(usize, std::cmp::Reverse<u64>, String)> = Vec::new();
    let mut seen = BTreeSet::new();
    for kind in [ArtifactKind::Function, ArtifactKind::Class] {
        for id in arts.ids(kind) {
            let Some(a) = arts.describe(run, id) else { continue };
            let q = a.qualname.to_lowercase();
            let d = edit_distance(&q, &wanted);
            let score = if q.contains(&wanted) || (!q.is_empty() && wanted.contains(&q)) {
                0
            } else if q.rsplit('.').next() == Some(short.as_str()) {
                1
            } else if d <= 3 {
                1 + d
            } else {
                continue;
            };
            if seen.insert(a.qualname.to_string()) {
                hits.push((score, std::cmp::Reverse(m.artifact(id).map_or(0, |x| x.frq)), a.qualname.to_string()));
            }
        }
    }
    hits.sort();
    hits.into_iter().take(5).map(|h| h.2).collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + usize::from(a[i - 1] != b[j - 1]));
        }
        prev = cur;
    }
    prev[b.len()]
}

// ------------------------------------------------------------------------------------------------
// Implementation
// ------------------------------------------------------------------------------------------------

fn check_threads(run: &Run, params: &Params) -> Result<(), PanelError> {
    match params.exclude_threads.iter().find(|&&t| t as usize >= run.threads.len()) {
        Some(&t) => Err(PanelError::UnknownThread(t)),
        None => Ok(()),
    }
}

fn cluster_infos(run: &Run, clusters: &[ClusterView]) -> Vec<ClusterInfo> {
    let n = clusters.len();
    clusters
        .iter()
        .enumerate()
        .map(|(i, c)| ClusterInfo {
            index: i,
            colour: ClusterColour::of(i, n),
            threads: c.threads.clone(),
            avg: c.avg,
            sum: c.sum,
            avg_level: c.avg_level,
            sum_level: c.sum_level,
            thread_types: type_count(run, &c.threads),
            cell: GlyphCell { colour: ClusterColour::of(i, n), threads: c.threads.len(), avg: c.avg_level, sum: c.sum_level },
        })
        .collect()
}

fn type_count(run: &Run, threads: &[ThreadId]) -> usize {
    threads.iter().filter_map(|&t| run.threads.get(t as usize)).map(|t| t.thread_type.as_str()).collect::<BTreeSet<_>>().len()
}

fn program_clusters(analysis: &Analysis) -> Vec<ClusterView> {
    analysis
        .program_clusters()
        .iter()
        .map(|c| ClusterView {
            threads: c.threads.clone(),
            avg: c.avg,
            sum: c.sum,
            avg_level: RadarLevel::of(c.avg),
            sum_level: RadarLevel::of(c.sum),
        })
        .collect()
}

fn glyph_opts(size: u32, theme: Theme, interactive: bool, title: String) -> SvgOptions {
    SvgOptions { size: size.clamp(8, 2048), theme, interactive, title: Some(title) }
}

fn program_entry(run: &Run, analysis: &Analysis, opts: &SvgOptions) -> ArtifactEntry {
    let clusters = program_clusters(analysis);
    let m = analysis.metrics();
    let active: Vec<ThreadId> = (0..run.threads.len() as ThreadId).filter(|&t| m.thread(t).frq > 0).collect();
    let spec = RadarSpec::from_clusters(&clusters, active.len(), type_count(run, &active));
    ArtifactEntry {
        key: ArtifactKey::program(),
        kind: "program",
        name: "Program".into(),
        qualname: "Program".into(),
        file: String::new(),
        line: 0,
        file_kind: FileKind::User,
        crt: if m.frq_total() > 0 { 1.0 } else { 0.0 },
        self_crt: 0.0,
        seconds: m.total_ns() as f64 / 1e9,
        samples: m.frq_total(),
        threads: spec.threads,
        thread_types: spec.thread_types,
        clusters: cluster_infos(run, &clusters),
        glyph_svg: glyph::svg(&spec, opts),
    }
}

fn artifact_entry(run: &Run, v: &ArtifactView, key: ArtifactKey, opts: &SvgOptions) -> ArtifactEntry {
    ArtifactEntry {
        key,
        kind: kind_name(v.kind),
        name: v.name.clone(),
        qualname: v.qualname.clone(),
        file: v.file.clone(),
        line: v.line,
        file_kind: v.file_kind,
        crt: v.crt,
        self_crt: v.self_crt,
        seconds: v.seconds,
        samples: v.samples,
        threads: v.threads,
        thread_types: v.thread_types,
        clusters: cluster_infos(run, &v.clusters),
        glyph_svg: glyph::svg(&RadarSpec::from(v), opts),
    }
}

/// For each thread, the program's own function (not `<module>` when another exists) in which it
/// spent the most counted samples: where "navigate to the thread" goes.
fn thread_sources(run: &Run, analysis: &Analysis) -> Vec<Option<(String, u32)>> {
    let m = analysis.metrics();
    let arts = analysis.artifacts();
    let mut best: Vec<Option<(bool, u64, ArtifactId)>> = vec![None; run.threads.len()];
    for id in arts.ids(ArtifactKind::Function) {
        let Some(am) = m.artifact(id) else { continue };
        if am.frq == 0 {
            continue;
        }
        let Some(a) = arts.describe(run, id) else { continue };
        if a.file_kind != FileKind::User {
            continue;
        }
        let real = a.line > 0;
        for c in &am.threads {
            let slot = &mut best[c.thread as usize];
            if slot.is_none_or(|(r, f, _)| (real, c.frq) > (r, f)) {
                *slot = Some((real, c.frq, id));
            }
        }
    }
    best.into_iter()
        .map(|b| b.and_then(|(_, _, id)| arts.describe(run, id)).map(|a| (a.file.to_string(), a.line)))
        .collect()
}

fn thread_entries(run: &Run, analysis: &Analysis, sources: &[Option<(String, u32)>]) -> Vec<ThreadEntry> {
    let m = analysis.metrics();
    let clusters = analysis.program_clusters();
    let mut cluster_of = vec![None; run.threads.len()];
    for (i, c) in clusters.iter().enumerate() {
        for &t in &c.threads {
            cluster_of[t as usize] = Some(i);
        }
    }
    let filter = &analysis.options().threads;
    run.threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let id = i as ThreadId;
            let tm = m.thread(id);
            let src = sources.get(i).cloned().flatten();
            ThreadEntry {
                id,
                name: t.name.clone(),
                thread_type: t.thread_type.clone(),
                is_main: t.is_main,
                crt: m.crt_of_thread(id),
                samples: tm.frq,
                seconds: tm.ns as f64 / 1e9,
                cluster: cluster_of[i],
                colour: cluster_of[i].map(|c| ClusterColour::of(c, clusters.len())),
                excluded: !filter.includes(id),
                line: src.as_ref().map_or(0, |s| s.1),
                file: src.map(|s| s.0),
            }
        })
        .collect()
}

fn type_groups(run: &Run, threads: impl Iterator<Item = ThreadId>) -> Vec<TypeGroup> {
    let mut by: BTreeMap<&str, Vec<ThreadId>> = BTreeMap::new();
    for t in threads {
        by.entry(run.threads[t as usize].thread_type.as_str()).or_default().push(t);
    }
    by.into_iter().map(|(name, threads)| TypeGroup { name: name.to_string(), threads }).collect()
}

fn no_counted_note(analysis: &Analysis, states: CountedStates) -> Option<String> {
    (analysis.counted_samples() == 0).then(|| {
        let excluded = analysis.options().threads.excluded().count();
        format!(
            "No counted samples: {} ({:?} states). Select more threads or count more states.",
            if excluded > 0 { format!("{excluded} threads are excluded") } else { "the run has none".to_string() },
            states.as_str()
        )
    })
}

fn overview_with(run: &Run, analyse: &Analyse, req: &OverviewRequest) -> Result<OverviewResponse, PanelError> {
    check_threads(run, &req.params)?;
    let analysis = analyse(&req.params)?;
    let unfiltered = analyse(&Params { exclude_threads: Vec::new(), states: req.params.states, window: req.params.window })?;
    let filter = req.filter.build()?;
    let size = req.glyph_size.unwrap_or(glyph::IN_SITU_PX);
    let m = analysis.metrics();
    let arts = analysis.artifacts();
    let mut lists: [(Vec<ArtifactEntry>, usize); 2] = Default::default();
    for (slot, kind) in [ArtifactKind::Function, ArtifactKind::Class].into_iter().enumerate() {
        let mut ids: Vec<ArtifactId> = arts
            .ids(kind)
            .filter(|&id| m.artifact(id).is_some_and(|a| a.frq > 0))
            .filter(|&id| {
                arts.describe(run, id)
                    .is_some_and(|a| filter.keeps(&a) && req.only_file.as_ref().is_none_or(|f| a.file == f.as_str()))
            })
            .collect();
        let frq = |id: ArtifactId| m.artifact(id).map_or((0, 0), |a| (a.frq, a.self_frq));
        ids.sort_by(|&a, &b| frq(b).cmp(&frq(a)).then(a.cmp(&b)));
        let listed = ids.len();
        ids.truncate(req.top.unwrap_or(usize::MAX));
        let entries = ids
            .into_iter()
            .filter_map(|id| {
                let a = arts.describe(run, id)?;
                let key = ArtifactKey::of(&a);
                let title = format!("{} ({:.1}%)", a.qualname, m.crt(id) * 100.0);
                let v = artifact_view(run, &analysis, id, 0);
                Some(artifact_entry(run, &v, key, &glyph_opts(size, req.theme, false, title)))
            })
            .collect();
        lists[slot] = (entries, listed);
    }
    // The program's own files first.
    let mut files: Vec<(bool, String)> = arts
        .ids(ArtifactKind::File)
        .filter(|&id| unfiltered.metrics().artifact(id).is_some_and(|a| a.frq > 0))
        .filter_map(|id| arts.describe(run, id).map(|a| (a.file_kind != FileKind::User, a.file.to_string())))
        .collect();
    files.sort();
    let files: Vec<String> = files.into_iter().map(|f| f.1).collect();
    let sources = thread_sources(run, &unfiltered);
    let [(functions, listed_functions), (classes, listed_classes)] = lists;
    Ok(OverviewResponse {
        run: RunInfo {
            command: run.meta.command.clone(),
            duration_s: run.meta.duration_s,
            sample_count: run.samples.len() as u64,
            thread_count: run.threads.len(),
            counted_samples: analysis.counted_samples(),
            states: req.params.states,
            excluded_threads: analysis.options().threads.excluded().collect(),
            window: req.params.window,
        },
        program: program_entry(run, &analysis, &glyph_opts(size * 2, req.theme, false, "Program ThreadRadar".into())),
        functions,
        classes,
        listed_functions,
        listed_classes,
        threads: thread_entries(run, &analysis, &sources),
        files,
        palette: PaletteView { light: glyph::LIGHT, dark: glyph::DARK },
        note: no_counted_note(&analysis, req.params.states),
    })
}

/// A thread of the detail tree: id, crt under the selection, crt with nothing excluded, samples.
type Member = (ThreadId, Option<f64>, f64, u64);

fn detail_with(run: &Run, analyse: &Analyse, req: &DetailRequest) -> Result<DetailResponse, PanelError> {
    check_threads(run, &req.params)?;
    let analysis = analyse(&req.params)?;
    let unfiltered = analyse(&Params { exclude_threads: Vec::new(), states: req.params.states, window: req.params.window })?;
    let target = resolve(run, &unfiltered, &req.artifact)?;
    let opts = glyph_opts(req.size.unwrap_or(glyph::ENLARGED_PX), req.theme, true, String::new());
    let m = analysis.metrics();
    let mu = unfiltered.metrics();
    let sources = thread_sources(run, &unfiltered);
    let filter = &analysis.options().threads;

    let (entry, members, callers, callees): (ArtifactEntry, Vec<Member>, _, _) = match target {
        Target::Program => {
            let mut opts = opts.clone();
            opts.title = Some("Program ThreadRadar".into());
            let members = (0..run.threads.len() as ThreadId)
                .filter(|&t| mu.thread(t).frq > 0)
                .map(|t| {
                    let sel = filter.includes(t).then(|| m.crt_of_thread(t));
                    (t, sel, mu.crt_of_thread(t), m.thread(t).frq)
                })
                .collect();
            (program_entry(run, &analysis, &opts), members, Vec::new(), Vec::new())
        }
        Target::Artifact(id) => {
            let v = artifact_view(run, &analysis, id, 10);
            let a = unfiltered.artifacts().describe(run, id);
            let mut opts = opts.clone();
            opts.title = a.as_ref().map(|a| a.qualname.to_string());
            let members = mu
                .artifact(id)
                .map(|am| {
                    am.threads
                        .iter()
                        .map(|c| {
                            let sel = filter.includes(c.thread).then(|| m.crt_thread(id, c.thread));
                            let samples = m
                                .artifact(id)
                                .and_then(|x| x.threads.iter().find(|y| y.thread == c.thread))
                                .map_or(0, |y| y.frq);
                            (c.thread, sel, ratio(c.frq, am.frq), samples)
                        })
                        .collect()
                })
                .unwrap_or_default();
            let edges = |list: &[crate::view::EdgeView]| -> Vec<EdgeEntry> {
                list.iter()
                    .map(|e| EdgeEntry {
                        key: ArtifactKey::function(&e.file, e.line, &e.qualname),
                        qualname: e.qualname.clone(),
                        file: e.file.clone(),
                        line: e.line,
                        crt: e.crt,
                        share: e.share,
                        seconds: e.seconds,
                    })
                    .collect()
            };
            let (callers, callees) = (edges(&v.callers), edges(&v.callees));
            (artifact_entry(run, &v, req.artifact.clone(), &opts), members, callers, callees)
        }
    };

    let n = entry.clusters.len();
    let mut cluster_of: BTreeMap<ThreadId, usize> = BTreeMap::new();
    for c in &entry.clusters {
        for &t in &c.threads {
            cluster_of.insert(t, c.index);
        }
    }
    let threads: Vec<DetailThread> = members
        .iter()
        .map(|&(t, sel, all, samples)| {
            let th = &run.threads[t as usize];
            let cluster = cluster_of.get(&t).copied();
            let src = sources.get(t as usize).cloned().flatten();
            DetailThread {
                id: t,
                name: th.name.clone(),
                thread_type: th.thread_type.clone(),
                crt: sel,
                crt_all: all,
                cluster,
                colour: cluster.map(|c| ClusterColour::of(c, n)),
                excluded: sel.is_none(),
                samples,
                line: src.as_ref().map_or(0, |s| s.1),
                file: src.map(|s| s.0),
            }
        })
        .collect();
    let selected: Vec<&DetailThread> = threads.iter().filter(|t| !t.excluded && t.crt.is_some_and(|c| c > 0.0)).collect();
    let selection = Selection {
        crt_sum: selected.iter().map(|t| t.crt_all).sum(),
        crt: entry.crt,
        threads: selected.len(),
        thread_types: selected.iter().map(|t| t.thread_type.as_str()).collect::<BTreeSet<_>>().len(),
    };
    let points: Vec<HistogramPoint> = selected
        .iter()
        .map(|t| HistogramPoint {
            thread: t.id,
            label: t.name.clone(),
            value: t.crt.unwrap_or(0.0),
            colour: t.colour.unwrap_or(ClusterColour::Low),
        })
        .collect();
    let histogram_bins = req.histogram_columns.map_or_else(Vec::new, |c| histogram::bins(&points, c.clamp(1, 1000)));
    let histogram_svg = histogram::svg(
        &points,
        &histogram::HistogramOptions {
            width: req.histogram_width.unwrap_or(480).clamp(60, 4096),
            height: req.histogram_height.unwrap_or(120).clamp(30, 4096),
            theme: req.theme,
        },
    );
    Ok(DetailResponse {
        artifact: entry,
        selection,
        types: type_groups(run, threads.iter().map(|t| t.id)),
        threads,
        histogram_svg,
        histogram_bins,
        callers,
        callees,
        note: no_counted_note(&analysis, req.params.states).or_else(|| {
            (selected_count(&members) == 0).then(|| "None of the selected threads executed this artifact.".to_string())
        }),
    })
}

fn selected_count(members: &[Member]) -> usize {
    members.iter().filter(|m| m.1.is_some_and(|c| c > 0.0)).count()
}

fn glyph_with(run: &Run, analyse: &Analyse, req: &GlyphRequest) -> Result<String, PanelError> {
    check_threads(run, &req.params)?;
    let analysis = analyse(&req.params)?;
    let target = resolve(run, &analysis, &req.artifact)?;
    let size = req.size.unwrap_or(if req.interactive { glyph::ENLARGED_PX } else { glyph::IN_SITU_PX });
    Ok(match target {
        Target::Program => program_entry(run, &analysis, &glyph_opts(size, req.theme, req.interactive, "Program ThreadRadar".into())).glyph_svg,
        Target::Artifact(id) => {
            let v = artifact_view(run, &analysis, id, 0);
            let title = v.qualname.clone();
            artifact_entry(run, &v, req.artifact.clone(), &glyph_opts(size, req.theme, req.interactive, title)).glyph_svg
        }
    })
}

fn threads_with(run: &Run, analyse: &Analyse, req: &ThreadsRequest) -> Result<ThreadsResponse, PanelError> {
    check_threads(run, &req.params)?;
    let analysis = analyse(&req.params)?;
    let unfiltered = analyse(&Params { exclude_threads: Vec::new(), states: req.params.states, window: req.params.window })?;
    let sources = thread_sources(run, &unfiltered);
    Ok(ThreadsResponse {
        threads: thread_entries(run, &analysis, &sources),
        types: type_groups(run, 0..run.threads.len() as ThreadId),
        counted_samples: analysis.counted_samples(),
    })
}
