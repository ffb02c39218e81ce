//! Parameter and result types of the methods whose data is the workspace's rather than one
//! analysis's (runs, filter, compare, documents, navigation). View models of one run live in
//! `threadradar_analysis::panel` and `threadradar_analysis::compare`.

use serde::{Deserialize, Serialize};
use threadradar_analysis::glyph::{GlyphCell, Theme};
use threadradar_analysis::panel::ArtifactKey;
use threadradar_analysis::{ArtifactKind, CountedStates, FilterSpec, Level, Window};
use threadradar_profiler::run::ThreadId;
use ts_rs::TS;

/// `glyph`'s result.
#[derive(Clone, Debug, Serialize, TS)]
pub struct GlyphResult {
    pub svg: String,
}

/// `runs`: list the runs; with `select`, make that run (a path or a file name) the active one.
#[derive(Clone, Debug, Default, Deserialize, TS)]
#[serde(default, deny_unknown_fields)]
pub struct RunsParams {
    #[ts(optional)]
    pub select: Option<String>,
    /// Label a run (issue 19).
    #[ts(optional)]
    pub label: Option<super::RunLabel>,
    /// Pin or unpin a run (issue 19).
    #[ts(optional)]
    pub pin: Option<super::RunPin>,
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct RunsResult {
    /// The protocol version ([`super::VERSION`]).
    pub protocol: u32,
    /// The active run's path.
    pub active: Option<String>,
    /// The user chose the active run: newer runs do not replace it.
    pub pinned: bool,
    /// Newest first.
    pub runs: Vec<RunItem>,
    /// The global thread filter (ids of the active run's threads).
    pub exclude_threads: Vec<ThreadId>,
    /// The global time window; `null`: the whole run.
    pub window: Option<Window>,
    pub summary: Option<RunSummary>,
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct RunItem {
    pub path: String,
    /// The file name, e.g. `20250101T120000Z-buggy.json`.
    pub name: String,
    /// The workspace folder (or served directory) whose runs these are.
    pub folder: String,
    pub modified_unix_ms: u64,
    pub size: u64,
    pub active: bool,
    /// Test, outcome, duration, threads, date, label, pin (issue 19); absent for unreadable runs.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<super::RunHistory>,
}

/// The active run in a few figures (status bars, run pickers).
#[derive(Clone, Debug, Serialize, TS)]
pub struct RunSummary {
    pub name: String,
    pub samples: u64,
    pub threads: usize,
    pub processes: usize,
    pub duration_s: f64,
    pub command: String,
    pub start_unix_ms: u64,
    pub python_version: Option<String>,
    /// What the figures count as units (the `units` setting): absent for threads; `tasks` when
    /// the run's asyncio tasks are units (`threads` then counts tasks and threads).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub units: Option<threadradar_analysis::Units>,
    /// The run's asyncio tasks (recorded on CPython 3.14+), whichever units are shown; absent
    /// when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tasks: Option<usize>,
}

/// `filter`: read the global thread filter, or set it with `exclude_threads`.
#[derive(Clone, Debug, Default, Deserialize, TS)]
#[serde(default, deny_unknown_fields)]
pub struct FilterParams {
    #[ts(optional)]
    pub exclude_threads: Option<Vec<ThreadId>>,
    /// The global time window: `{from_s, to_s}` sets it, `null` clears it, absent leaves it.
    /// Hints, lenses, hovers and the overview and detail figures then count only its samples.
    #[serde(default, deserialize_with = "present")]
    #[ts(optional, type = "Window | null")]
    pub window: Option<Option<Window>>,
}

/// A field that is present (even as `null`) is `Some`; absent is `None` (`#[serde(default)]`).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct FilterResult {
    pub exclude_threads: Vec<ThreadId>,
    /// The global time window; `null`: the whole run.
    pub window: Option<Window>,
}

/// `compare`: two runs (paths or file names; by default the active run against the run recorded
/// before it). The thread filter does not apply: thread ids differ between runs. A side may be a
/// **run set**: `base`/`new` naming a run set's manifest, or `base_runs`/`new_runs` listing its
/// runs; the table shows each side's first run and every change is tested against the sets'
/// spread (`Comparison::significance`, docs/compare.md "Run sets").
#[derive(Clone, Debug, Default, Deserialize, TS)]
#[serde(default)]
pub struct CompareParams {
    #[ts(optional)]
    pub base: Option<String>,
    #[ts(optional)]
    pub new: Option<String>,
    /// The base side as a set of runs (names or paths, or run sets' manifests); instead of `base`.
    #[ts(optional)]
    pub base_runs: Option<Vec<String>>,
    /// The new side as a set of runs; instead of `new`.
    #[ts(optional)]
    pub new_runs: Option<Vec<String>>,
    pub level: Level,
    #[ts(optional)]
    pub top: Option<usize>,
    #[serde(flatten)]
    pub filter: FilterSpec,
    /// Counted states for both runs; the configured ones when left out.
    #[ts(optional)]
    pub states: Option<CountedStates>,
}

/// `documentArtifacts`: the profiled declarations of a document (`uri`, or `file` on disk).
#[derive(Clone, Debug, Default, Deserialize, TS)]
#[serde(default)]
pub struct DocumentArtifactsParams {
    #[ts(optional)]
    pub uri: Option<String>,
    #[ts(optional)]
    pub file: Option<String>,
    /// Also draw each glyph as SVG.
    #[ts(optional)]
    pub glyph: Option<GlyphImageOptions>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, TS)]
#[serde(default)]
pub struct GlyphImageOptions {
    /// The configured theme when left out.
    #[ts(optional)]
    pub theme: Option<Theme>,
    /// Height in px [32], 8 to 512.
    #[ts(optional)]
    pub size: Option<u32>,
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct DocumentArtifactsResult {
    /// The active run's file name.
    pub run: Option<String>,
    /// Changes whenever another run becomes active.
    pub generation: u64,
    pub exclude_threads: Vec<ThreadId>,
    /// Declarations the run has in this file that the current text no longer has.
    pub stale: usize,
    pub file: Option<FileEntry>,
    /// By line.
    pub artifacts: Vec<DocumentArtifact>,
}

/// The file artifact of a document.
#[derive(Clone, Debug, Serialize, TS)]
pub struct FileEntry {
    pub key: Option<ArtifactKey>,
    pub crt: f64,
    pub seconds: f64,
}

/// One profiled declaration where it is now.
#[derive(Clone, Debug, Serialize, TS)]
pub struct DocumentArtifact {
    pub key: ArtifactKey,
    pub kind: ArtifactKind,
    pub name: String,
    pub qualname: String,
    /// 0-based line of the `def` / `class` keyword in the current text.
    pub line: u32,
    /// UTF-16 column of the declaration's first character, and the line's length in UTF-16.
    pub character: u32,
    pub end_character: u32,
    /// 1-based line in the run (as recorded).
    pub recorded_line: u32,
    pub crt: f64,
    pub self_crt: f64,
    pub seconds: f64,
    pub samples: u64,
    pub threads: usize,
    pub thread_types: usize,
    /// The text glyph: one cell per cluster, low → high.
    pub cells: Vec<GlyphCell>,
    /// The cells as one string.
    pub text: String,
    /// The inlay hint's label.
    pub label: String,
    /// With `glyph` in the parameters.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub glyph_svg: Option<String>,
}

/// `artifactAt`: a position in a document (`uri`, or `file` on disk); 0-based line, UTF-16
/// character.
#[derive(Clone, Debug, Default, Deserialize, TS)]
#[serde(default)]
pub struct ArtifactAtParams {
    #[ts(optional)]
    pub uri: Option<String>,
    #[ts(optional)]
    pub file: Option<String>,
    pub line: u32,
    pub character: u32,
}

/// The innermost profiled function and the innermost profiled class that contain the position
/// (a method's class is the class); `null` where there is none.
#[derive(Clone, Debug, Serialize, TS)]
pub struct ArtifactAtResult {
    pub function: Option<DocumentArtifact>,
    pub class: Option<DocumentArtifact>,
}

/// `splitCommand`: `line` split into words, or `words` joined into a line (one of the two).
#[derive(Clone, Debug, Default, Deserialize, TS)]
pub struct SplitCommandParams {
    #[serde(default)]
    #[ts(optional)]
    pub line: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub words: Option<Vec<String>>,
}

/// The words and the one line that reads back into them; `error` (one sentence) instead when
/// the line cannot be split (an unclosed quote): the words are then empty.
#[derive(Clone, Debug, Serialize, TS)]
pub struct SplitCommandResult {
    pub words: Vec<String>,
    pub line: String,
    pub error: Option<String>,
}

/// `navigate`: show `file` at `line` (1-based).
#[derive(Clone, Debug, Deserialize, TS)]
pub struct NavigateParams {
    pub file: String,
    #[serde(default)]
    pub line: u32,
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct NavigateResult {
    pub ok: bool,
    /// `file:line` as it was shown.
    pub shown: String,
}
