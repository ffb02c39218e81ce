// Generated from the Rust types of the panel protocol (lsp-server/src/protocol): do not edit.
// Regenerate with `UPDATE_EXPECT=1 cargo test --test protocol`.

export const PROTOCOL_VERSION = 2;

/** Every method: `threadRadar/<name>` over LSP, `POST /api/<name>` over HTTP. */
export const Methods = {
  overview: "overview",
  detail: "detail",
  glyph: "glyph",
  threads: "threads",
  runs: "runs",
  filter: "filter",
  compare: "compare",
  documentArtifacts: "documentArtifacts",
  artifactAt: "artifactAt",
  timeline: "timeline",
  sections: "sections",
  waits: "waits",
  traceCompare: "traceCompare",
  views: "views",
  runSet: "runSet",
  navigate: "navigate",
  splitCommand: "splitCommand",
} as const;

/** The parameters and result of each method. */
export interface MethodTypes {
  overview: { params: OverviewRequest; result: OverviewResponse };
  detail: { params: DetailRequest; result: DetailResponse };
  glyph: { params: GlyphRequest; result: GlyphResult };
  threads: { params: ThreadsRequest; result: ThreadsResponse };
  runs: { params: RunsParams; result: RunsResult };
  filter: { params: FilterParams; result: FilterResult };
  compare: { params: CompareParams; result: Comparison };
  documentArtifacts: { params: DocumentArtifactsParams; result: DocumentArtifactsResult };
  artifactAt: { params: ArtifactAtParams; result: ArtifactAtResult };
  timeline: { params: LayoutRequest; result: Layout };
  sections: { params: SectionsParams; result: SectionsResult };
  waits: { params: WaitsParams; result: WaitsResult };
  traceCompare: { params: TraceCompareParams; result: TraceCompareResult };
  views: { params: ViewsParams; result: ViewsResult };
  runSet: { params: RunSetParams; result: RunSetAnswer };
  navigate: { params: NavigateParams; result: NavigateResult };
  splitCommand: { params: SplitCommandParams; result: SplitCommandResult };
}

/**
 * What kind of failure a [`ProtocolError`] is; decides the HTTP status and the JSON-RPC code.
 */
export type ErrorCode = "invalid_params" | "unknown_method" | "no_run" | "not_found" | "conflict" | "unprocessable" | "internal";

/**
 * Why a request failed: one sentence that says what to do, and its kind.
 */
export type ProtocolError = { code: ErrorCode, message: string, };

/**
 * The thread states whose samples the metrics count.
 *
 * The paper counts only Java `Runnable` threads: on CPU, ready to run, or in blocking I/O. The
 * Python equivalent is [`ThreadState::Computing`]. Including threads that wait for the GIL shows
 * contention as runtime; including idle threads is there for completeness (the paper tried it
 * for deadlocks, §7.3, and found nothing). [`CountedStates::CpuTime`] weighs every observation by
 * the CPU time the kernel accounted to its thread, which is exact for a thread's total where
 * counting is not (threads that compute in bursts shorter than the interval), but lands a blocked
 * thread's CPU on the frames it blocked in. [`CountedStates::ComputingCpu`] takes the best of
 * both: the computing samples say which code ran, the kernel says how much CPU it took. The
 * default, [`CountedStates::Auto`], is that whenever a run has the kernel's accounting
 * (docs/metrics.md, "Counted states").
 *
 * Defined once for every surface: `report --states`, the panels' and the language server's
 * `states` parameter and setting all spell it `auto`, `computing`, `computing-cpu`,
 * `computing+gil`, `all` or `cpu`.
 */
export type CountedStates = "auto" | "computing" | "computing-cpu" | "computing+gil" | "all" | "waiting" | "cpu";

/**
 * What the views count as units of concurrency.
 */
export type Units = "threads" | "tasks";

/**
 * The four levels of abstraction the paper computes metrics at. Defined once for `report
 * --level`, `compare --level` and the `level` parameter of the panels and the language server.
 */
export type Level = "function" | "class" | "file" | "program";

/**
 * What kind of source-code artifact an [`ArtifactId`] names.
 */
export type ArtifactKind = "function" | "class" | "file";

/**
 * The artifact filter as every surface spells it: `--include`, `--exclude`, `--no-stdlib` and
 * `--no-third-party` on the command line; `include`, `exclude`, `hide_stdlib` and
 * `hide_third_party` in the panels' and the language server's parameters.
 *
 * The one default everywhere: everything is listed, the standard library and third-party code
 * included (the paper's overview offers "exclude" checkboxes, unchecked at first). A thread's
 * `threading` bootstrap is then visible, which is honest: that code ran.
 */
export type FilterSpec = { 
/**
 * Only list artifacts whose qualified name or file path matches REGEX (repeatable: any).
 */
include: Array<string>, 
/**
 * Do not list artifacts whose qualified name or file path matches REGEX (repeatable).
 */
exclude: Array<string>, 
/**
 * Do not list standard-library code.
 */
hide_stdlib: boolean, 
/**
 * Do not list third-party code (site-packages).
 */
hide_third_party: boolean, };

/**
 * A time window as the protocol and the panels name it: seconds from the run's start. The
 * global "window" of the language server and `serve` (like the global thread filter): every
 * figure, hint, lens and panel is then computed over the samples in `[from_s, to_s)`.
 */
export type Window = { from_s: number, to_s: number, };

/**
 * Light or dark background: `radar --theme`, the panels' and the language server's `theme`.
 */
export type Theme = "light" | "dark";

/**
 * Which of the three stable cluster colours a cluster gets.
 */
export type ClusterColour = "low" | "middle" | "high";

/**
 * A value on the glyph's three-level radius scale (paper §3.2): low < 33 %, medium ≥ 33 % and
 * < 66 %, high ≥ 66 %.
 */
export type RadarLevel = "low" | "medium" | "high";

/**
 * The colours of one theme. Cluster colours are indexed by `glyph::ClusterColour` (low, middle,
 * high): blue, amber and red, which differ in hue *and* lightness so they stay apart at 32 px and
 * for the common colour-vision deficiencies; `weak` has the same hue at a lower saturation.
 */
export type Palette = { strong: [string, string, string], weak: [string, string, string], 
/**
 * Guide circles and pedestals.
 */
guide: string, text: string, background: string, 
/**
 * The outline of a hovered sector (the paper's orange).
 */
outline: string, 
/**
 * Deselected threads.
 */
deselected: string, };

/**
 * [`GlyphCell`] as the protocol carries it.
 */
export type GlyphCell = { colour: ClusterColour, 
/**
 * Threads in the cluster (the sector's angle).
 */
threads: number, 
/**
 * Level of the cluster's average (the strong sector's radius).
 */
avg: RadarLevel, 
/**
 * Level of the cluster's sum (the weak sector's radius).
 */
sum: RadarLevel, 
/**
 * The cell as text: average level, sum level, thread count (`▂▅×9`).
 */
text: string, };

/**
 * Where a source file comes from, for the overview's "exclude standard library / third-party".
 */
export type FileKind = "user" | "stdlib" | "third_party" | "unknown";

/**
 * Where absolute times come from.
 */
export type TimeSource = "kernel" | "samples";

/**
 * A stable name for an artifact of a run, serialised as a string:
 * `function:<file>:<line>:<qualname>`, `class:<file>:<line>:<qualname>`, `file:<path>` or
 * `program`. Keys are compared as strings, never parsed, so paths and names may hold `:`.
 */
export type ArtifactKey = string;

/**
 * What every request carries: the analysis to answer from.
 */
export type Params = { 
/**
 * Threads left out of every metric and clustering (ids in the run).
 */
exclude_threads: Array<number>, states: CountedStates, 
/**
 * Only the samples of this time window count (the global window); the whole run when absent.
 */
window?: Window, };

/**
 * `overview`: the lists of methods and classes, the Program ThreadRadar and the threads tab.
 */
export type OverviewRequest = { 
/**
 * "Only the current file": list only artifacts in this file (exact path).
 */
only_file: string | null, 
/**
 * At most this many entries per list.
 */
top: number | null, theme: Theme, 
/**
 * In-situ glyph height in px [32].
 */
glyph_size: number | null, 
/**
 * Threads left out of every metric and clustering (ids in the run).
 */
exclude_threads: Array<number>, states: CountedStates, 
/**
 * Only the samples of this time window count (the global window); the whole run when absent.
 */
window?: Window, 
/**
 * Only list artifacts whose qualified name or file path matches REGEX (repeatable: any).
 */
include: Array<string>, 
/**
 * Do not list artifacts whose qualified name or file path matches REGEX (repeatable).
 */
exclude: Array<string>, 
/**
 * Do not list standard-library code.
 */
hide_stdlib: boolean, 
/**
 * Do not list third-party code (site-packages).
 */
hide_third_party: boolean, };

export type OverviewResponse = { run: RunInfo, 
/**
 * The Program ThreadRadar (`key` = `program`).
 */
program: ArtifactEntry, 
/**
 * Functions/methods and classes by `crt` descending, after the artifact filters.
 */
functions: Array<ArtifactEntry>, classes: Array<ArtifactEntry>, 
/**
 * How many passed the filters before `top`.
 */
listed_functions: number, listed_classes: number, 
/**
 * Every thread of the run (excluded ones flagged), by id.
 */
threads: Array<ThreadEntry>, 
/**
 * Files with counted samples, for "only the current file".
 */
files: Array<string>, palette: PaletteView, 
/**
 * Something the page should say instead of figures (e.g. every thread excluded).
 */
note: string | null, };

/**
 * The run being shown.
 */
export type RunInfo = { command: Array<string>, duration_s: number, sample_count: number, thread_count: number, 
/**
 * FRQ (Eq. 4) under the request's filter and states.
 */
counted_samples: number, states: CountedStates, excluded_threads: Array<number>, 
/**
 * The time window every figure is computed over; absent for the whole run.
 */
window?: Window, 
/**
 * What the figures count as units: absent for threads; `tasks` when asyncio tasks are
 * units (`thread_count` and every thread figure then count tasks and threads).
 */
units?: Units, };

/**
 * The palettes, so the page colours its text with the glyph's colours.
 */
export type PaletteView = { light: Palette, dark: Palette, };

/**
 * One listed artifact (or the program).
 */
export type ArtifactEntry = { key: ArtifactKey, 
/**
 * `function`, `class`, `file` or `program`.
 */
kind: "function" | "class" | "file" | "program", name: string, qualname: string, file: string, line: number, file_kind: FileKind, 
/**
 * `crt(a)` (Eq. 5); 1 for the program.
 */
crt: number, self_crt: number, seconds: number, samples: number, 
/**
 * Lower and upper pedestal.
 */
threads: number, thread_types: number, clusters: Array<ClusterInfo>, 
/**
 * The ThreadRadar as SVG (in situ in lists, enlarged and interactive in `detail`).
 */
glyph_svg: string, };

/**
 * One cluster of an artifact: one sector.
 */
export type ClusterInfo = { index: number, colour: ClusterColour, threads: Array<number>, 
/**
 * Average and sum of `crt(a, th)` (`crt(th)` for the program) over the members.
 */
avg: number, sum: number, avg_level: RadarLevel, sum_level: RadarLevel, thread_types: number, 
/**
 * The cluster as a text-glyph cell (with its characters), for text clients.
 */
cell: GlyphCell, };

/**
 * One thread in the threads tab.
 */
export type ThreadEntry = { id: number, name: string, type: string, is_main: boolean, 
/**
 * `crt(th)` (Eq. 7) under the filter; 0 when excluded.
 */
crt: number, samples: number, seconds: number, 
/**
 * Program cluster and its colour; `None` when excluded or never counted.
 */
cluster: number | null, colour: ClusterColour | null, excluded: boolean, 
/**
 * Where to navigate: the program's own function this thread spent most counted samples in.
 */
file: string | null, line: number, };

/**
 * `detail`: one artifact (or `program`) under a thread selection.
 */
export type DetailRequest = { artifact: ArtifactKey, theme: Theme, 
/**
 * Enlarged glyph height in px [200].
 */
size: number | null, 
/**
 * The histogram's box in px [480 × 120].
 */
histogram_width: number | null, histogram_height: number | null, 
/**
 * Also bin the histogram into this many text columns (`histogram_bins`), for text clients.
 */
histogram_columns: number | null, 
/**
 * Threads left out of every metric and clustering (ids in the run).
 */
exclude_threads: Array<number>, states: CountedStates, 
/**
 * Only the samples of this time window count (the global window); the whole run when absent.
 */
window?: Window, };

export type DetailResponse = { 
/**
 * Figures and clusters under the selection; `glyph_svg` is enlarged and interactive.
 */
artifact: ArtifactEntry, selection: Selection, 
/**
 * Every thread that executed the artifact when no thread is excluded, so deselected threads
 * can be selected again; by id.
 */
threads: Array<DetailThread>, 
/**
 * The same threads grouped by thread type (the tree's second tab).
 */
types: Array<TypeGroup>, 
/**
 * Fig. 11 histogram of `crt(a, th)` of the selected threads.
 */
histogram_svg: string, 
/**
 * The same histogram in `histogram_columns` text columns; empty unless asked for.
 */
histogram_bins: Array<HistogramBin>, callers: Array<EdgeEntry>, callees: Array<EdgeEntry>, note: string | null, };

/**
 * The info panel's "whole selection" figures.
 */
export type Selection = { 
/**
 * Σ crt(a, th) of the selected threads, each measured with no thread excluded: the share of
 * the artifact's runtime the selection covers (1 when nothing is deselected).
 */
crt_sum: number, 
/**
 * `crt(a)` under the selection.
 */
crt: number, threads: number, thread_types: number, };

/**
 * One entry of the thread tree.
 */
export type DetailThread = { id: number, name: string, type: string, 
/**
 * `crt(a, th)` under the selection (`crt(th)` for the program); `None` when excluded.
 */
crt: number | null, 
/**
 * `crt(a, th)` with no thread excluded.
 */
crt_all: number, cluster: number | null, colour: ClusterColour | null, excluded: boolean, samples: number, file: string | null, line: number, };

export type TypeGroup = { name: string, threads: Array<number>, };

/**
 * A caller or callee with its shares (see [`crate::view::EdgeView`]).
 */
export type EdgeEntry = { key: ArtifactKey, qualname: string, file: string, line: number, crt: number, share: number, seconds: number, };

/**
 * One column of a text histogram (e.g. Neovim's): the threads whose value falls on it, lowest
 * value first, stacked.
 */
export type HistogramBin = { 
/**
 * 0-based column, 0 to `columns - 1`: value / largest value × (columns − 1), rounded.
 */
column: number, threads: Array<number>, colours: Array<ClusterColour>, };

/**
 * `glyph`: one ThreadRadar as SVG.
 */
export type GlyphRequest = { artifact: ArtifactKey, theme: Theme, size: number | null, interactive: boolean, 
/**
 * Threads left out of every metric and clustering (ids in the run).
 */
exclude_threads: Array<number>, states: CountedStates, 
/**
 * Only the samples of this time window count (the global window); the whole run when absent.
 */
window?: Window, };

/**
 * `glyph`'s result.
 */
export type GlyphResult = { svg: string, };

/**
 * `threads`: the threads tab.
 */
export type ThreadsRequest = { 
/**
 * Threads left out of every metric and clustering (ids in the run).
 */
exclude_threads: Array<number>, states: CountedStates, 
/**
 * Only the samples of this time window count (the global window); the whole run when absent.
 */
window?: Window, };

export type ThreadsResponse = { threads: Array<ThreadEntry>, types: Array<TypeGroup>, counted_samples: number, };

/**
 * `runs`: list the runs; with `select`, make that run (a path or a file name) the active one.
 */
export type RunsParams = { select?: string, 
/**
 * Label a run (issue 19).
 */
label?: RunLabel, 
/**
 * Pin or unpin a run (issue 19).
 */
pin?: RunPin, };

export type RunsResult = { 
/**
 * The protocol version ([`super::VERSION`]).
 */
protocol: number, 
/**
 * The active run's path.
 */
active: string | null, 
/**
 * The user chose the active run: newer runs do not replace it.
 */
pinned: boolean, 
/**
 * Newest first.
 */
runs: Array<RunItem>, 
/**
 * The global thread filter (ids of the active run's threads).
 */
exclude_threads: Array<number>, 
/**
 * The global time window; `null`: the whole run.
 */
window: Window | null, summary: RunSummary | null, };

export type RunItem = { path: string, 
/**
 * The file name, e.g. `20250101T120000Z-buggy.json`.
 */
name: string, 
/**
 * The workspace folder (or served directory) whose runs these are.
 */
folder: string, modified_unix_ms: number, size: number, active: boolean, 
/**
 * Test, outcome, duration, threads, date, label, pin (issue 19); absent for unreadable runs.
 */
history?: RunHistory, };

/**
 * The active run in a few figures (status bars, run pickers).
 */
export type RunSummary = { name: string, samples: number, threads: number, processes: number, duration_s: number, command: string, start_unix_ms: number, python_version: string | null, 
/**
 * What the figures count as units (the `units` setting): absent for threads; `tasks` when
 * the run's asyncio tasks are units (`threads` then counts tasks and threads).
 */
units?: Units, 
/**
 * The run's asyncio tasks (recorded on CPython 3.14+), whichever units are shown; absent
 * when it has none.
 */
tasks?: number, };

/**
 * `runs`' `label`: sets (or with `null`/empty removes) a run's label.
 */
export type RunLabel = { 
/**
 * A run path or file name.
 */
run: string, label: string | null, };

/**
 * `runs`' `pin`: a pinned run is never pruned.
 */
export type RunPin = { run: string, pinned: boolean, };

/**
 * A test run's outcome, from pytest's JUnit XML report.
 */
export type RunOutcome = { passed: number, failed: number, errors: number, skipped: number, first_failure?: string, };

/**
 * What the run list shows of one run besides its file.
 */
export type RunHistory = { 
/**
 * The profiled test (pytest node id or arguments), for runs of `threadradar test`.
 */
test?: string, 
/**
 * `null` inside `history` when pytest wrote no report (killed, cancelled).
 */
outcome?: RunOutcome, 
/**
 * The program that was recorded.
 */
command: string, duration_s: number, threads: number, start_unix_ms: number, label?: string, pinned: boolean, 
/**
 * The run holds only what was flushed before the recorder ended (e.g. a cancelled test).
 */
partial: boolean, 
/**
 * For the newest run of a test: the run before it of the same test ("Compare with previous").
 */
previous?: string, };

/**
 * `filter`: read the global thread filter, or set it with `exclude_threads`.
 */
export type FilterParams = { exclude_threads?: Array<number>, 
/**
 * The global time window: `{from_s, to_s}` sets it, `null` clears it, absent leaves it.
 * Hints, lenses, hovers and the overview and detail figures then count only its samples.
 */
window?: Window | null, };

export type FilterResult = { exclude_threads: Array<number>, 
/**
 * The global time window; `null`: the whole run.
 */
window: Window | null, };

/**
 * `compare`: two runs (paths or file names; by default the active run against the run recorded
 * before it). The thread filter does not apply: thread ids differ between runs. A side may be a
 * **run set**: `base`/`new` naming a run set's manifest, or `base_runs`/`new_runs` listing its
 * runs; the table shows each side's first run and every change is tested against the sets'
 * spread (`Comparison::significance`, docs/compare.md "Run sets").
 */
export type CompareParams = { base?: string, new?: string, 
/**
 * The base side as a set of runs (names or paths, or run sets' manifests); instead of `base`.
 */
base_runs?: Array<string>, 
/**
 * The new side as a set of runs; instead of `new`.
 */
new_runs?: Array<string>, level: Level, top?: number, 
/**
 * Counted states for both runs; the configured ones when left out.
 */
states?: CountedStates, 
/**
 * Only list artifacts whose qualified name or file path matches REGEX (repeatable: any).
 */
include: Array<string>, 
/**
 * Do not list artifacts whose qualified name or file path matches REGEX (repeatable).
 */
exclude: Array<string>, 
/**
 * Do not list standard-library code.
 */
hide_stdlib: boolean, 
/**
 * Do not list third-party code (site-packages).
 */
hide_third_party: boolean, };

/**
 * Two runs side by side.
 */
export type Comparison = { level: Level, 
/**
 * The earlier run (before the change).
 */
base: SideSummary, 
/**
 * The later run (after the change).
 */
new: SideSummary, 
/**
 * Matched, added and removed artifacts that pass the filter, by `|crt_delta|` descending
 * (then qualified name), at most `top`.
 */
artifacts: Array<ArtifactDelta>, 
/**
 * How many artifacts passed the filter before `top` cut the list.
 */
listed: number, 
/**
 * Of those, how many were executed only in the base run (`removed`)…
 */
only_in_base: number, 
/**
 * …and only in the new run (`added`).
 */
only_in_new: number, 
/**
 * What changed, as data with its words: the listed artifacts' changes (and, from `compare`
 * and the trace comparison, the trace's and the waits'), ranked by [`crate::changes::rank`].
 */
changes: Array<Change>, 
/**
 * Changes left out because they rest on too few samples or events ([`crate::changes::supported`]).
 */
suppressed: number, 
/**
 * Why, in one sentence with the next step; `None` when nothing was left out.
 */
suppressed_note: string | null, 
/**
 * How the changes were tested against the runs' own spread, when a side is a run set
 * (`crate::runset::mark_significance`); `None` for one run against one run.
 */
significance: Significance | null, };

/**
 * One run of a comparison.
 */
export type SideSummary = { 
/**
 * The run file, when the caller knows it.
 */
path: string | null, command: Array<string>, duration_s: number, sample_count: number, 
/**
 * All threads the run saw, included or not.
 */
thread_count: number, 
/**
 * Which thread states counted: `computing`, `computing-cpu`, `computing+gil`, `all`, `waiting` or `cpu`.
 */
states: string, 
/**
 * Where seconds come from: `kernel` CPU accounting or `samples` × period.
 */
time_source: TimeSource, 
/**
 * Seconds attributed to all counted samples.
 */
seconds: number, 
/**
 * The thread samples counted (see `ReportView::counted_samples`).
 */
counted_samples: number, program: ProgramFigures, };

/**
 * The program ThreadRadar of one run.
 */
export type ProgramFigures = { 
/**
 * Threads with counted samples (lower pedestal).
 */
threads: number, 
/**
 * Their distinct thread types (upper pedestal).
 */
thread_types: number, 
/**
 * Number of program clusters.
 */
clusters: number, glyph: Array<GlyphCell>, };

/**
 * One artifact's figures in one run: the same values as [`crate::view::ArtifactView`].
 */
export type SideFigures = { 
/**
 * `crt(a)` (Eq. 5), inclusive.
 */
crt: number, self_crt: number, seconds: number, 
/**
 * `frq(a)` (Eq. 2).
 */
samples: number, 
/**
 * Threads that executed it (lower pedestal).
 */
threads: number, 
/**
 * Their thread types (upper pedestal).
 */
thread_types: number, 
/**
 * Number of thread clusters.
 */
clusters: number, glyph: Array<GlyphCell>, };

/**
 * Whether an artifact was executed in both runs or in one.
 */
export type DeltaStatus = "changed" | "added" | "removed";

/**
 * The direction of a change of `crt(a)`.
 */
export type Trend = "increase" | "decrease" | "same";

/**
 * One artifact of a comparison. Deltas are new − base, with an absent side counting as 0.
 */
export type ArtifactDelta = { kind: ArtifactKind, qualname: string, file_base: string | null, file_new: string | null, 
/**
 * Declaration lines; 0 for files and unknown lines.
 */
line_base: number | null, line_new: number | null, 
/**
 * The new run's, else the base run's.
 */
file_kind: FileKind, base: SideFigures | null, new: SideFigures | null, 
/**
 * Change of `crt(a)`, a difference of fractions (0.1 = 10 percentage points).
 */
crt_delta: number, seconds_delta: number, threads_delta: number, status: DeltaStatus, 
/**
 * `crt_delta` as clients print it: `+12.3pp`, `-0.4pp`, `0.0pp`.
 */
crt_delta_text: string, 
/**
 * Whether crt rose, fell or stayed within a twentieth of a percentage point.
 */
trend: Trend, 
/**
 * What changed, in words (the words of this artifact's [`Change`]s, each backed by the figures
 * above); empty when nothing did.
 */
statements: Array<string>, };

/**
 * One change between the runs: a figure of an artifact, before and after, and its evidence.
 */
export type Change = { 
/**
 * The artifact's qualified name (`program` for the whole run; for an object's figures, the
 * function it was first waited in).
 */
artifact: string, kind: ArtifactKind, 
/**
 * The artifact's file and declaration line in the new run, else in the base run, where known.
 */
file: string | null, line: number | null, 
/**
 * The program's own code, the standard library, third-party code; `unknown` for the program
 * as a whole and objects waited on outside any known function.
 */
file_kind: FileKind, 
/**
 * The waited-on object, for [`Figure::FutileWakeups`] and [`Figure::ObjectMeanWait`].
 */
object: string | null, 
/**
 * The cluster's colour, for [`Figure::Cluster`].
 */
cluster: ClusterColour | null, figure: Figure, 
/**
 * `added` / `removed`: the artifact ran in one run only (its figure counts 0 in the other).
 */
status: DeltaStatus, before: number, after: number, evidence: ChangeEvidence, 
/**
 * `|after − before| / max(|before|, |after|)`: 0 (none) to 1 (from or to nothing).
 */
effect: number, 
/**
 * What the ranking orders by within a tier: `effect` × [`weight`] of the evidence.
 */
score: number, 
/**
 * The change in words ([`render`]).
 */
statement: string, 
/**
 * The evidence in words: `sampled: 92 → 9 samples`, `kernel-exact: 4479 → 0 wake-ups`.
 */
evidence_text: string, 
/**
 * Whether the change exceeds the runs' own spread; `None` when each side is one run, so
 * there is no spread to compare with.
 */
significant: boolean | null, 
/**
 * The test's p-value (before Holm's correction), when the change was tested.
 */
p: number | null, };

/**
 * Which figure of an artifact a change is about; `before` and `after` are in its unit.
 */
export type Figure = "threads" | "clusters" | "cluster" | "crt" | "finish" | "stack_time" | "wait_time" | "mean_wait" | "futile_wakeups" | "object_mean_wait";

/**
 * The observations behind a change, per run.
 */
export type ChangeEvidence = { source: EvidenceSource, unit: EvidenceUnit, 
/**
 * Observations behind the base run's figure…
 */
base: number, 
/**
 * …and behind the new run's.
 */
new: number, 
/**
 * Threads those samples came from in each run (0 where the figure is not counted per thread).
 */
threads_base: number, threads_new: number, };

/**
 * How the observations behind a change were obtained.
 */
export type EvidenceSource = "sampled" | "inferred" | "kernel-exact";

/**
 * What the evidence counts.
 */
export type EvidenceUnit = "samples" | "waits" | "wake_ups";

/**
 * How a comparison of run sets tested its changes: `Comparison::significance`.
 */
export type Significance = { 
/**
 * The test, in words ([`TEST`]).
 */
test: string, 
/**
 * Runs on each side (the table and the trace show each side's first run).
 */
n_base: number, n_new: number, 
/**
 * Family-wise significance level.
 */
alpha: number, 
/**
 * Changes whose figure could be tested (the correction is over these).
 */
tested: number, 
/**
 * What the reader needs to know: how it was tested, or why nothing could be.
 */
note: string, };

/**
 * `documentArtifacts`: the profiled declarations of a document (`uri`, or `file` on disk).
 */
export type DocumentArtifactsParams = { uri?: string, file?: string, 
/**
 * Also draw each glyph as SVG.
 */
glyph?: GlyphImageOptions, };

export type GlyphImageOptions = { 
/**
 * The configured theme when left out.
 */
theme?: Theme, 
/**
 * Height in px [32], 8 to 512.
 */
size?: number, };

export type DocumentArtifactsResult = { 
/**
 * The active run's file name.
 */
run: string | null, 
/**
 * Changes whenever another run becomes active.
 */
generation: number, exclude_threads: Array<number>, 
/**
 * Declarations the run has in this file that the current text no longer has.
 */
stale: number, file: FileEntry | null, 
/**
 * By line.
 */
artifacts: Array<DocumentArtifact>, };

/**
 * The file artifact of a document.
 */
export type FileEntry = { key: ArtifactKey | null, crt: number, seconds: number, };

/**
 * One profiled declaration where it is now.
 */
export type DocumentArtifact = { key: ArtifactKey, kind: ArtifactKind, name: string, qualname: string, 
/**
 * 0-based line of the `def` / `class` keyword in the current text.
 */
line: number, 
/**
 * UTF-16 column of the declaration's first character, and the line's length in UTF-16.
 */
character: number, end_character: number, 
/**
 * 1-based line in the run (as recorded).
 */
recorded_line: number, crt: number, self_crt: number, seconds: number, samples: number, threads: number, thread_types: number, 
/**
 * The text glyph: one cell per cluster, low → high.
 */
cells: Array<GlyphCell>, 
/**
 * The cells as one string.
 */
text: string, 
/**
 * The inlay hint's label.
 */
label: string, 
/**
 * With `glyph` in the parameters.
 */
glyph_svg?: string, };

/**
 * `artifactAt`: a position in a document (`uri`, or `file` on disk); 0-based line, UTF-16
 * character.
 */
export type ArtifactAtParams = { uri?: string, file?: string, line: number, character: number, };

/**
 * The innermost profiled function and the innermost profiled class that contain the position
 * (a method's class is the class); `null` where there is none.
 */
export type ArtifactAtResult = { function: DocumentArtifact | null, class: DocumentArtifact | null, };

/**
 * A viewport request. Times are seconds from the run's start.
 */
export type LayoutRequest = { 
/**
 * Start of the viewport; the run's first sample when absent.
 */
from_s: number | null, 
/**
 * End of the viewport; the end of the run's last sample interval when absent.
 */
to_s: number | null, width_px: number, threads: ThreadSelection, 
/**
 * θ of `logscale` per millisecond; 0 is linear.
 */
theta: number, fold: Fold, 
/**
 * An artifact whose frames are marked [`FrameInfo::highlighted`], with its place on the
 * whole run in [`Layout::focus`].
 */
highlight?: ArtifactKey, 
/**
 * Also answer the textual per-thread overview of the viewport ([`Layout::overview`]).
 */
overview?: boolean, 
/**
 * Threads whose lanes `fold.depth` leaves whole (the user expanded them).
 */
expand?: Array<number>, };

/**
 * Stack folding.
 */
export type Fold = { 
/**
 * Collapse this many outermost levels into one band (0 or 1: none).
 */
top: number, 
/**
 * Fold runs of consecutive standard-library frames into one band each (the interpreter's
 * import machinery, `<frozen importlib._bootstrap>`, and the modules it runs are such runs).
 */
stdlib: boolean, 
/**
 * At most this many rows per lane (after the other folds); a deeper lane's innermost levels
 * are folded into its last row, which then holds the frames at that depth (each covers the
 * deeper frames it called), and the lane says how many levels it folded
 * ([`LaneLayout::folded_below`]). 0: no cap. Lanes in [`LayoutRequest::expand`] are not capped.
 */
depth?: number, };

/**
 * Which threads get a lane, in which order.
 */
export type ThreadSelection = null | Array<number>;

/**
 * Everything needed to draw one viewport.
 */
export type Layout = { from_s: number, to_s: number, 
/**
 * The run's first sample and the end of its last sample interval, s.
 */
run_from_s: number, run_to_s: number, width_px: number, theta: number, fold: Fold, 
/**
 * The sampling period, s: every bar edge is uncertain by this much.
 */
period_s: number, 
/**
 * How the figures were obtained.
 */
obtained: string, 
/**
 * The underlay colour of each state (the one definition, shared with the SVG chart).
 */
state_colours: StateColours, axis: Array<AxisTick>, frames: Array<FrameInfo>, lanes: Array<LaneLayout>, 
/**
 * Where the highlighted artifact ran, over the whole run.
 */
focus?: Focus, 
/**
 * With `overview`: per shown thread (in lane order) its busy and waiting shares, longest
 * wait and top frames over the viewport (Trümper et al.'s textual overview).
 */
overview?: Array<ThreadOverview>, };

/**
 * The underlay colours of the three states.
 */
export type StateColours = { computing: string, gil: string, idle: string, };

/**
 * A labelled position on the time axis.
 */
export type AxisTick = { x: number, t_s: number, };

/**
 * A frame shown in the layout; bars refer to it by index.
 */
export type FrameInfo = { 
/**
 * Qualified name.
 */
function: string, file: string, 
/**
 * The line executed at the first sample of the bar(s) that show this frame.
 */
line: number, stdlib: boolean, 
/**
 * The frame's colour (by function name, stable across runs and viewports).
 */
colour: string, 
/**
 * `true`: the frame is one of the highlighted artifact's functions (absent otherwise).
 */
highlighted?: boolean, };

/**
 * One thread's lane.
 */
export type LaneLayout = { thread: number, name: string, type: string, 
/**
 * `crt(th)` (Eq. 7) with computing samples counted: the thread's share of the program's
 * computing samples, over the whole run.
 */
crt: number, 
/**
 * Time of the thread's first sample, s.
 */
first_s: number, 
/**
 * Rows (depths) after folding.
 */
depth: number, 
/**
 * Rows the lane would have without `fold.depth`'s cap (the other folds applied).
 */
full_depth: number, 
/**
 * Levels `fold.depth` folded into the lane's last row (0: none; `full_depth - depth`).
 */
folded_below: number, states: Array<StateBox>, bars: Array<BarBox>, blocks: Array<Block>, 
/**
 * A task unit's lane: the lane (thread id) of the event-loop thread that ran it, which it
 * follows in the default order (timeline/tasks.rs). Absent for a thread's lane.
 */
parent?: number, 
/**
 * A task unit's recorded awaiting time in the viewport (evidence `task-state`); absent when
 * none was recorded.
 */
awaits?: Array<AwaitBox>, };

/**
 * A piece of the state underlay.
 */
export type StateBox = { x0: number, x1: number, state: BarState, blocked: BlockedKind | null, 
/**
 * `true` when the runs in this box were narrower than a pixel and this is the state at the
 * middle of each column, not every state of the box.
 */
sampled: boolean, };

/**
 * An awaiting span as drawn in a viewport (a lane's wait underlay): its pixels, and the span.
 */
export type AwaitBox = { x0: number, x1: number, start_s: number, end_s: number, 
/**
 * The name of the task it awaited, when the recorder found one (otherwise a future that is
 * not a task: a sleep, a queue, an event…).
 */
awaits?: string, 
/**
 * Always [`AWAIT_EVIDENCE`]: the recorded task state, read at the sampler's ticks.
 */
evidence: string, };

/**
 * A bar as drawn.
 */
export type BarBox = { x0: number, x1: number, depth: number, 
/**
 * Index into [`Layout::frames`].
 */
frame: number, start_s: number, end_s: number, state: BarState, blocked: BlockedKind | null, 
/**
 * Levels folded into this band by `fold.top` (0: not a folded band).
 */
folded_levels: number, 
/**
 * The band stands for consecutive standard-library frames (`fold.stdlib`).
 */
stdlib_band: boolean, };

/**
 * Bars narrower than a pixel, aggregated.
 */
export type Block = { x0: number, x1: number, depth: number, 
/**
 * Bars in the block.
 */
count: number, start_s: number, end_s: number, };

/**
 * What a thread was doing, as the timeline shows it.
 */
export type BarState = "computing" | "gil" | "idle";

/**
 * What an idle thread was blocked in, or the I/O a computing thread was in (see the module docs
 * for how it is inferred).
 */
export type BlockedKind = "lock" | "condition" | "queue" | "join" | "sleep" | "io" | "process" | "other";

/**
 * One artifact's place on the timeline.
 */
export type Focus = { artifact: ArtifactKey, 
/**
 * Qualified name (the path for a file, `program` for the program).
 */
name: string, 
/**
 * From the start of its first span to the end of its last one, s (0–0 when it never ran).
 */
from_s: number, to_s: number, 
/**
 * The threads it ran on, by id.
 */
threads: Array<number>, 
/**
 * Merged intervals per thread in which one of its functions was on the stack, by start time;
 * at most [`MAX_SPANS`].
 */
spans: Array<Span>, span_count: number, 
/**
 * How the spans were obtained.
 */
obtained: string, };

export type Span = { thread: number, from_s: number, to_s: number, };

/**
 * One thread's row.
 */
export type ThreadOverview = { thread: number, name: string, type: string, 
/**
 * Samples of the thread in the window.
 */
samples: number, 
/**
 * Share of those samples computing.
 */
busy: number, 
/**
 * Share waiting for the GIL.
 */
gil: number, 
/**
 * Share idle (blocked or sleeping).
 */
idle: number, 
/**
 * The longest run of samples waiting (GIL or idle) in one state and kind, if any.
 */
longest_wait: Wait | null, 
/**
 * The functions most often innermost in the thread's samples (any state), most first, at
 * most three.
 */
top_frames: Array<TopFrame>, };

export type Wait = { start_s: number, duration_s: number, state: BarState, blocked: BlockedKind | null, };

export type TopFrame = { function: string, file: string, line: number, 
/**
 * Share of the thread's samples in the window.
 */
share: number, };

/**
 * Parameters of `waits`.
 */
export type WaitsParams = { 
/**
 * Only objects whose label, type or name contains this (case-insensitive).
 */
object: string | null, 
/**
 * The time range, seconds from the run's start (the whole run when absent).
 */
from_s: number | null, to_s: number | null, 
/**
 * The width of the caller's time axis in pixels: edges are then bundled per pixel column,
 * waker, wakee, object and evidence.
 */
width_px: number | null, 
/**
 * Ignore the run's kernel scheduler events (inference only).
 */
no_kernel: boolean, };

/**
 * Result of `waits`.
 */
export type WaitsResult = { view: WaitsView, 
/**
 * With `width_px`: the edges bundled (and `view.edges` then lists them all still, for hover
 * and navigation of a single edge). `None` without `width_px`.
 */
bundles: Array<EdgeBundle> | null, 
/**
 * `view`'s edges counted by evidence (all, and per object) and its waits' ends by source.
 */
counts: WaitCounts, 
/**
 * `view`'s objects grouped by type and site, each group's waker → wakee matrix, and
 * whether the edges separate at `width_px` (issue 32: SyncTrace's aggregation).
 */
groups: WaitsGroups, };

/**
 * Edges that fall in one pixel column with the same waker, wakee, object and evidence.
 */
export type EdgeBundle = { waker_thread: number, wakee_thread: number, object_index: number, evidence: Evidence, 
/**
 * The first and last edge's time, seconds from the run's start.
 */
from_s: number, to_s: number, count: number, 
/**
 * The mean confidence of the bundled edges.
 */
confidence: number, futile: number, 
/**
 * The index in `view.edges` of the bundle's first edge (same waker, wakee and object as
 * the others): what hovering and clicking the bundle show and open.
 */
first_edge: number, };

/**
 * The waits view of a run.
 */
export type WaitsView = { 
/**
 * Unix seconds of the run's t = 0 (`None` in runs recorded before it was stored).
 */
started_at: number | null, 
/**
 * The run's sampling period ([`crate::period`]), seconds.
 */
period_s: number, evidence: EvidenceAvailable, threads: Array<WaitThread>, objects: Array<ObjectSummary>, intervals: Array<WaitInterval>, edges: Array<WakeEdge>, };

/**
 * The counts of a [`WaitsView`].
 */
export type WaitCounts = { 
/**
 * Every edge the view lists.
 */
edges: EdgeCounts, 
/**
 * Per object, in the order of the view's `objects`.
 */
objects: Array<EdgeCounts>, 
/**
 * Starts and ends of the listed waits (two per wait), and those that are the kernel's.
 */
ends: number, kernel_ends: number, };

/**
 * The view's objects as groups, and whether its edges separate.
 */
export type WaitsGroups = { 
/**
 * Most wait time first.
 */
groups: Array<ObjectGroup>, 
/**
 * Per object of the view, its group (index into `groups`).
 */
group_of: Array<number>, 
/**
 * Every thread a group names (wakers that never waited included).
 */
threads: Array<WaitThread>, 
/**
 * At the width asked for, the edges can be drawn one by one: all but [`CROWDED_SHARE`] of
 * them are at least `separate_px` from the previous edge of their lane pair. `None` without
 * a width.
 */
separate: boolean | null, 
/**
 * The pixel distance that counts as separate.
 */
separate_px: number, 
/**
 * The narrowest time range (seconds) over which the edges' densest stretch would separate
 * at that width: zoom to this or less.
 */
separate_below_s: number | null, };

/**
 * Objects of one type waited on at one site.
 */
export type ObjectGroup = { 
/**
 * `threading.Condition self._monitor`, `concurrent.futures.Future ×37 in Worker.run`.
 */
label: string, type: string, 
/**
 * The name in the waiting code when every object of the group has the same one.
 */
name: string | null, 
/**
 * Where the group was waited on first.
 */
site: Location | null, 
/**
 * Indices into [`WaitsView::objects`], the named one first.
 */
objects: Array<number>, 
/**
 * Objects that joined by inference, one sentence each (an anonymous lock waited on at the
 * same line as a named object: its inner lock).
 */
merged: Array<string>, waits: number, wait_s: number, futile_wakeups: number, lock_handoffs: number, 
/**
 * Waits no edge ended (no evidence of a waker); open waits included.
 */
unexplained: number, 
/**
 * Kernel-exact, recorded (asyncio tasks' awaits) and inferred edges (lock hand-offs not
 * counted).
 */
kernel_edges: number, recorded_edges: number, inferred_edges: number, 
/**
 * The threads that woke it and that it woke, most wake-ups first: the matrix's rows and
 * columns.
 */
wakers: Array<number>, wakees: Array<number>, 
/**
 * The non-empty cells of the matrix, most wake-ups first.
 */
cells: Array<WakeCell>, };

/**
 * One waker → wakee pair of a group.
 */
export type WakeCell = { waker: number, wakee: number, 
/**
 * Wake-ups (edges), futile ones included, lock hand-offs not.
 */
count: number, 
/**
 * Of which futile: the woken thread waited again on the same object.
 */
futile: number, 
/**
 * Kernel-exact edges among `count` (the rest are inferred).
 */
kernel: number, 
/**
 * The wait time the non-futile wake-ups ended (the wakee's waits, sampled or kernel-exact
 * where their ends are), seconds.
 */
wait_s: number, 
/**
 * First and last wake-up, seconds since the run's start.
 */
first_s: number, last_s: number, };

/**
 * Wake edges counted by their evidence.
 */
export type EdgeCounts = { all: number, 
/**
 * Measured by the kernel, exact: its scheduler's wake-ups, and the lock hand-offs of
 * `record --exact-locks` (evidence `lock-event`).
 */
kernel: number, 
/**
 * Read from recorded program state, not inferred: an asyncio task's await of another task
 * (evidence `task-state`).
 */
recorded: number, 
/**
 * Inferred from samples (`all − kernel − recorded`).
 */
inferred: number, 
/**
 * The inferred ones by rule, in the order of [`Evidence`]; rules without an edge left out.
 */
inferred_by: Array<EvidenceCount>, };

/**
 * Edges of one kind of evidence.
 */
export type EvidenceCount = { evidence: Evidence, count: number, };

/**
 * Which evidence the run holds, in words.
 */
export type EvidenceAvailable = { 
/**
 * The run recorded the scheduler's wake-ups (`record --sched`) and they were used.
 */
kernel: boolean, 
/**
 * The run recorded what each waiting sample waited on (`Run::waits`).
 */
targets: boolean, 
/**
 * One sentence per missing kind of evidence, and what was used instead.
 */
notes: Array<string>, };

/**
 * A thread as the waits view names it.
 */
export type WaitThread = { id: number, 
/**
 * The name the program gave it.
 */
name: string, type: string, };

/**
 * One wait of one thread.
 */
export type WaitInterval = { thread: number, 
/**
 * Index into [`WaitsView::objects`].
 */
object: number, 
/**
 * Seconds since the run's start: the first waiting sample, and the thread's next sample —
 * or the kernel's times where [`WaitInterval::kernel_start`]/[`WaitInterval::kernel_end`] say so.
 */
start_s: number, end_s: number, 
/**
 * `start_s` is the kernel's: the context switch that began the sleep the first waiting
 * sample saw (after the thread's previous sample). Else sampled: within one period.
 */
kernel_start: boolean, 
/**
 * `end_s` is the kernel's: the wake-up that ended the sleep the last waiting sample saw
 * (before the thread's next sample). Else sampled: within one period.
 */
kernel_end: boolean, samples: number, 
/**
 * The blocking system call seen most (`futex`, `read`, …); `None` for the GIL.
 */
syscall: string | null, 
/**
 * The waiting frame: the innermost frame of the program's own code.
 */
frame: Location | null, 
/**
 * The run ended (or the thread vanished) while it waited: no end was seen.
 */
open: boolean, 
/**
 * The wait ended in a futile wake-up (the thread waited again in the same loop).
 */
futile: boolean, };

/**
 * A waker → wakee edge.
 */
export type WakeEdge = { 
/**
 * Seconds since the run's start: the kernel's wake-up, or the end of the wait it ended.
 */
time_s: number, waker_thread: number, wakee_thread: number, 
/**
 * The names the program gave the two threads.
 */
waker: string, wakee: string, 
/**
 * The object's label, and its index into [`WaitsView::objects`].
 */
object: string, object_index: number, 
/**
 * Index into [`WaitsView::intervals`] of the wait this edge ended (or woke futilely).
 */
interval: number, evidence: Evidence, confidence: number, 
/**
 * The wake-up did not end the wait: the thread went on waiting on the same object.
 */
futile: boolean, 
/**
 * A wake-up for the object, or a hand-off of its lock (kernel evidence only).
 */
kind: WakeKind, 
/**
 * Where the waker was at the sample nearest the edge.
 */
waker_frame: Location | null, 
/**
 * For a `lock-event` edge: the lock, the wakee's exact wait and the hold the release ended.
 */
exact?: ExactHandoff, };

/**
 * How an edge was found.
 */
export type Evidence = "kernel" | "gil-holder" | "same-object" | "running-thread" | "lock-event" | "task-state";

/**
 * What a kernel wake-up did to a wait on a condition-like object (`Condition`, `Event`,
 * `Queue`, …), told apart by the futex the woken thread slept on.
 */
export type WakeKind = "wake" | "lock-handoff";

/**
 * What the lock events say about one hand-off (the `exact` field of a `lock-event` edge).
 */
export type ExactHandoff = { 
/**
 * The lock's address in the target (the lock functions' first argument), as hex.
 */
lock: string, 
/**
 * When the wakee called the acquire function and when it returned with the lock, seconds
 * since the run's start (the release is the edge's `time_s`).
 */
called_s: number, acquired_s: number, 
/**
 * `acquired_s − called_s`: the wakee's exact wait to enter.
 */
wait_s: number, 
/**
 * How long the lock had been held when it was released, and by whom: the waker, or, for a
 * lock used as a signal (a `Condition`'s waiter lock), the wakee itself.
 */
hold_s: number | null, held_by: string | null, };

/**
 * Per waited-on object.
 */
export type ObjectSummary = { 
/**
 * What the view calls it: `threading.Condition self._monitor`, `lock in Storage`, `GIL`.
 */
object: string, type: string, 
/**
 * The name in the waiting code, when recorded (`self.not_empty`).
 */
name: string | null, 
/**
 * The object's address, when recorded.
 */
addr: number | null, 
/**
 * Whether the object was recorded (`recorded`) or inferred from the stack (`wait-site`).
 */
identity: string, waits: number, wait_s: number, p50_s: number, p95_s: number, 
/**
 * Waiting threads by name, with their number of waits.
 */
waiters: { [key in string]: number }, 
/**
 * Wakers by name, with the number of edges (futile ones included, lock hand-offs not).
 */
wakers: { [key in string]: number }, futile_wakeups: number, 
/**
 * Kernel wake-ups that handed the object's lock on (not counted among the wakers).
 */
lock_handoffs: number, 
/**
 * The waiting radar (spec §1): the threads that waited on the object, clustered by their
 * share of its wait time — `crt(a, th)` (Eq. 6) over waiting samples instead of computing
 * ones —, low → high. Sampled, like the wait times.
 */
radar: Array<GlyphCell>, 
/**
 * Thread types among the waiters (the radar's upper pedestal; the lower one is
 * `waiters.len()`).
 */
waiter_types: number, 
/**
 * Where it was waited on first.
 */
frame: Location | null, };

/**
 * A source location, for navigation.
 */
export type Location = { file: string, line: number, function: string, };

/**
 * `navigate`: show `file` at `line` (1-based).
 */
export type NavigateParams = { file: string, line: number, };

export type NavigateResult = { ok: boolean, 
/**
 * `file:line` as it was shown.
 */
shown: string, };

/**
 * `splitCommand`: `line` split into words, or `words` joined into a line (one of the two).
 */
export type SplitCommandParams = { line?: string, words?: Array<string>, };

/**
 * The words and the one line that reads back into them; `error` (one sentence) instead when
 * the line cannot be split (an unclosed quote): the words are then empty.
 */
export type SplitCommandResult = { words: Array<string>, line: string, error: string | null, };

/**
 * Parameters of `traceCompare`.
 */
export type TraceCompareParams = { 
/**
 * Run A, drawn above (typically before a fix): a run's name or path. Default: the run
 * recorded before B.
 */
a?: string, 
/**
 * Run B, drawn below (typically after the fix). Default: the active run.
 */
b?: string, 
/**
 * Run A as a run set (names or paths): A is its first run, and the changes in words are
 * tested against the sets' spread, as `compare`'s (`Change::significant`); instead of `a`.
 */
a_runs?: Array<string>, 
/**
 * Run B as a run set; instead of `b`.
 */
b_runs?: Array<string>, 
/**
 * The width of the caller's time axis in pixels (at least 1): bars and edges are laid out in it.
 */
width_px: number, 
/**
 * Minimal stack similarity τ of a match, in (0, 1] (default 0.2).
 */
tau?: number, };

/**
 * Result of `traceCompare`.
 */
export type TraceCompareResult = { a: TraceSide, b: TraceSide, tau: number, 
/**
 * Matched stack time / all stack time, both runs.
 */
matched_share: number, 
/**
 * A shift within this many seconds counts as the same time.
 */
same_shift_s: number, width_px: number, 
/**
 * Seconds the axis spans (the longer run): both runs share one scale from their own start.
 */
axis_s: number, 
/**
 * What changed, in words (the statements of `compare` and of the trace comparison).
 */
changes: Array<Change>, lanes: Array<PairLane>, 
/**
 * Every match group (edges and bars point into it).
 */
groups: Array<MatchGroup>, edges: Array<CompareEdge>, 
/**
 * Threads with stack time that have no partner in the other run.
 */
unmatched_a: Array<TraceThread>, unmatched_b: Array<TraceThread>, 
/**
 * How the figures were obtained, then what the reader must know (intervals, banding, …).
 */
notes: Array<string>, };

/**
 * One run of the two.
 */
export type TraceSide = { path: string, 
/**
 * The run file's name.
 */
name: string, command: Array<string>, duration_s: number, 
/**
 * The sampling interval, ms.
 */
period_ms: number, 
/**
 * Seconds of stack time sampled, all threads.
 */
stack_s: number, };

/**
 * When a matched stretch happens in B compared with A, within the runs' uncertainty
 * ([`TraceDiff::same_shift_s`]): the one classification every client shows.
 */
export type Shift = "earlier" | "same" | "later";

/**
 * One bar of a lane: a match group's stretch in this run, or a stretch only in this run;
 * stretches narrower than a pixel are merged with their neighbours of the same kind.
 */
export type CompareBar = { 
/**
 * Pixels from the axis' start.
 */
x0: number, x1: number, 
/**
 * Seconds from the run's start.
 */
start_s: number, 
/**
 * Stack time of the bar's stretches, s.
 */
duration_s: number, 
/**
 * The (longest) match group of the bar (index into `groups`), or `None`: only in this run.
 */
group: number | null, 
/**
 * For a stretch only in this run: the qualified names on its longest segment's stack, root
 * first, with file and line of the innermost (for hover and click).
 */
stack?: Array<TraceFrame>, 
/**
 * How many stretches the bar stands for.
 */
count: number, };

/**
 * A matched thread pair: A's lane above, B's lane below.
 */
export type PairLane = { a: TraceThread, b: TraceThread, paired_by: PairedBy, 
/**
 * Weighted Jaccard index of the two threads' per-function stack time.
 */
similarity: number, 
/**
 * Matched stack time of the pair / its stack time.
 */
matched_share: number, a_bars: Array<CompareBar>, b_bars: Array<CompareBar>, };

/**
 * Match groups joining one lane pair, bundled per (A pixel column, B pixel column, shift).
 */
export type CompareEdge = { 
/**
 * Index into `lanes`.
 */
lane: number, 
/**
 * The centre of the groups' stretches in A and in B, pixels.
 */
a_x: number, b_x: number, 
/**
 * Matched stack time, s (the edge's width is their mean).
 */
a_duration_s: number, b_duration_s: number, 
/**
 * Time-weighted mean of the groups' shifts, s.
 */
shift_s: number, shift: Shift, 
/**
 * The bundled groups (indices into `groups`), longest first.
 */
groups: Array<number>, };

/**
 * One thread of one run.
 */
export type TraceThread = { 
/**
 * Its id in its run.
 */
id: number, name: string, thread_type: string, 
/**
 * Qualified name of its entry point (see the module documentation).
 */
entry: string | null, 
/**
 * Seconds the thread had a sampled stack.
 */
stack_s: number, 
/**
 * For an asyncio task unit (`--units tasks`): the name of its event loop's thread, whose
 * pair it is listed after.
 */
parent?: string, };

/**
 * One function of a stack, for showing it and for navigating to it.
 */
export type TraceFrame = { qualname: string, file: string, 
/**
 * The line executed at the first sample of the bar.
 */
line: number, };

/**
 * How a thread pair was found.
 */
export type PairedBy = "key" | "assignment";

/**
 * Consecutive matched segments.
 */
export type MatchGroup = { 
/**
 * Index into [`TraceDiff::pairs`].
 */
pair: number, 
/**
 * Seconds from run A's start.
 */
a_start_s: number, 
/**
 * Stack time of the group's segments in A.
 */
a_duration_s: number, b_start_s: number, b_duration_s: number, 
/**
 * `b_start_s − a_start_s`: negative when the stretch happens earlier in B.
 */
shift_s: number, 
/**
 * `shift_s` classified by [`TraceDiff::same_shift_s`].
 */
shift: Shift, 
/**
 * Its stack time changed by more than [`TraceDiff::same_shift_s`] (A's against B's).
 */
resized: boolean, 
/**
 * Mean stack similarity of the matched segments, weighted by their time.
 */
similarity: number, segments: number, 
/**
 * The stacks (root first) of the group's longest segment in A and in B.
 */
stack_a: Array<TraceFrame>, stack_b: Array<TraceFrame>, 
/**
 * Qualified names of the program's own functions on any of the group's stacks (both runs),
 * sorted: what links the group to the artifact table.
 */
functions: Array<string>, };

/**
 * What counts as an outlier; both default as in `threadradar sections`.
 */
export type SectionsParams = { 
/**
 * An execution longer than this many medians is an outlier (5).
 */
outlier_factor?: number, 
/**
 * An execution longer than this quantile of its section is an outlier (0.99).
 */
outlier_quantile?: number, };

/**
 * The sections view, with what discovery could not use.
 */
export type SectionsResult = { 
/**
 * Sentences about files whose sections are not shown (unreadable, changed since recording).
 */
notes: Array<string>, 
/**
 * The `pyproject.toml` whose `[tool.threadradar]` was read, if any.
 */
config_file: string | null, 
/**
 * The run's sampling period ([`crate::period`]), in seconds: the resolution of every duration.
 */
interval_s: number, wait_source: WaitSource, 
/**
 * How the figures were obtained, as a sentence for the views.
 */
how: string, 
/**
 * What the sampling could not resolve, over every section: the panel's banner.
 */
unseen: Unseen, sections: Array<SectionFigures>, };

/**
 * All sections of a run with their executions.
 */
export type SectionsView = { 
/**
 * The run's sampling period ([`crate::period`]), in seconds: the resolution of every duration.
 */
interval_s: number, wait_source: WaitSource, 
/**
 * How the figures were obtained, as a sentence for the views.
 */
how: string, 
/**
 * What the sampling could not resolve, over every section: the panel's banner.
 */
unseen: Unseen, sections: Array<SectionFigures>, };

/**
 * One section and its executions.
 */
export type SectionFigures = { file: string, function: string, 
/**
 * The entry line (`with`, `acquire()`, `def`).
 */
line: number, body_start: number, end_line: number, lock: string, lock_type: string | null, kind: SectionKind, 
/**
 * How the section was found, in words (from `kind`): named in the source, configured, or
 * from the recorded waits.
 */
found: string, 
/**
 * Listed executions (seen in two samples or more), in time order.
 */
executions: Array<Execution>, 
/**
 * Indices into `executions` of the outliers.
 */
outliers: Array<number>, 
/**
 * The listed executions' durations on a log axis (the panel's histogram).
 */
histogram: LogHistogram, 
/**
 * Executions seen in one sample only: shorter than about two intervals.
 */
short: ShortExecutions, 
/**
 * Listed executions plus the short ones' lower bound.
 */
execution_count: number, 
/**
 * Estimated time the lock was held in this section, all executions.
 */
total_hold_s: number, median_s: number, p95_s: number, p99_s: number, max_s: number, mean_s: number, 
/**
 * Coefficient of variation (standard deviation / mean) of the durations; 0 without any.
 */
cv: number, 
/**
 * Share of the samples inside this section in which another thread waited for its lock.
 */
waited_share: number, 
/**
 * Time threads were seen waiting to enter this section (sampled), summed over threads.
 */
others_waited_s: number, 
/**
 * The duration above which an execution is an outlier (min of p99 and factor × median).
 */
outlier_threshold_s: number, 
/**
 * Indices (into the view's `sections`) of the sections seen on the stack around this one.
 */
nested_in: Array<number>, 
/**
 * The lock objects threads were seen blocked on at the entry line, from the run's recorded
 * wait targets (`record` reads them): type and address, most often seen first. How a lock
 * the source gives no name (created dynamically) is told apart; empty without such waits.
 */
lock_objects: Array<LockObject>, };

/**
 * A distribution of durations on a log axis (bins of equal ratio), as the Sections panel draws
 * it: the client draws the bins, it never computes them.
 */
export type LogHistogram = { 
/**
 * The axis' ends, seconds: the shortest and the longest duration, widened to at least a
 * factor 10^0.2 apart.
 */
from_s: number, to_s: number, 
/**
 * Every bin in order, empty ones included.
 */
bins: Array<LogBin>, 
/**
 * The durations counted (the positive ones).
 */
count: number, };

/**
 * One bin of a [`LogHistogram`].
 */
export type LogBin = { from_s: number, to_s: number, count: number, };

/**
 * One execution of a section by one thread.
 */
export type Execution = { 
/**
 * The thread's name.
 */
thread: string, 
/**
 * Index into the run's threads.
 */
thread_id: number, 
/**
 * Estimated start, seconds since the run's start.
 */
start_s: number, 
/**
 * Estimated duration.
 */
duration_s: number, 
/**
 * The true duration is within `duration_s ± error_s`.
 */
error_s: number, 
/**
 * Time the thread waited to enter; `None` when the run has no wait data.
 */
wait_s: number | null, 
/**
 * Samples seen inside.
 */
samples: number, 
/**
 * Other threads seen waiting for the same lock meanwhile (thread ids, ascending).
 */
waiters: Array<number>, };

/**
 * Executions too short to list one by one.
 */
export type ShortExecutions = { 
/**
 * Samples in which such an execution was seen: at least this many executions.
 */
count_at_least: number, 
/**
 * Sightings × interval: the sampling estimate of their total time.
 */
total_s: number, };

/**
 * Executions the samples saw but could not list (seen in one sample only), over every section,
 * and the sampling interval that would list more of them. The panel shows it first.
 */
export type Unseen = { 
/**
 * Executions listed one by one (seen in two samples or more), every section.
 */
listed: number, 
/**
 * Executions seen in one sample only: at least this many, every section.
 */
short_at_least: number, 
/**
 * Their sampling estimate of total time (sightings × period), seconds.
 */
short_total_s: number, 
/**
 * Executions shorter than this (about two periods) are counted, not listed, seconds.
 */
shorter_than_s: number, 
/**
 * How many sections had such executions.
 */
sections_with_short: number, 
/**
 * The section with the most of them (index into `sections`).
 */
worst: number | null, 
/**
 * A `record --interval-ms` a quarter of this run's period (at least the recorder's 0.05 ms):
 * it lists executions longer than half this run's period. `None` when the run was sampled
 * that fast already (only `record --exact-locks` sees every execution then).
 */
interval_ms: number | null, 
/**
 * The banner in one sentence, rendered here so every client says the same.
 */
sentence: string, };

/**
 * A lock object seen in the recorded wait targets of threads waiting to enter a section.
 */
export type LockObject = { 
/**
 * Its Python type, as the recorder read it: `_thread.lock`, `_thread.RLock`, `threading.Condition`, ….
 */
type_name: string, 
/**
 * Its address in the profiled process, `0x…`.
 */
address: string, 
/**
 * Samples in which a thread waited on it at the entry line.
 */
samples: number, };

/**
 * How the wait-to-enter times were obtained.
 */
export type WaitSource = "sampled" | "kernel" | "none";

/**
 * How a section was found.
 */
export type SectionKind = "with" | "acquire_release" | "decorated" | "configured" | "from_waits";

export type RunSetParams = { 
/**
 * The run set's manifest (a path, or its file name in the active run's directory); by
 * default the one in the active run's directory that lists the active run.
 */
runset?: string, level: Level, 
/**
 * At most this many artifacts, highest mean crt first.
 */
top?: number, 
/**
 * Counted states; the configured ones when left out.
 */
states?: CountedStates, 
/**
 * Only list artifacts whose qualified name or file path matches REGEX (repeatable: any).
 */
include: Array<string>, 
/**
 * Do not list artifacts whose qualified name or file path matches REGEX (repeatable).
 */
exclude: Array<string>, 
/**
 * Do not list standard-library code.
 */
hide_stdlib: boolean, 
/**
 * Do not list third-party code (site-packages).
 */
hide_third_party: boolean, };

/**
 * The answer: the set, or `null` with a sentence when the active run belongs to none (not an
 * error: most runs are not in a set, and a view asks for every run).
 */
export type RunSetAnswer = { set: RunSetResult | null, 
/**
 * Why there is no set, and how to record one.
 */
note: string | null, };

export type RunSetResult = { 
/**
 * The manifest's path.
 */
path: string, label: string, 
/**
 * The set's runs, in recording order.
 */
runs: Array<string>, 
/**
 * The index in `runs` of the active run, if it is one of them.
 */
active_index: number | null, level: Level, states: CountedStates, program: ProgramSpread, 
/**
 * Highest mean crt first, at most `top`.
 */
artifacts: Array<ArtifactSpread>, 
/**
 * Artifacts before `top` cut the list.
 */
listed: number, 
/**
 * How the figures were obtained, as a sentence for the views.
 */
how: string, 
/**
 * Anything a reader should know (one run: no spread; runs of different programs).
 */
notes: Array<string>, };

/**
 * One artifact's figures over the runs of a set (an artifact a run did not execute counts 0).
 */
export type ArtifactSpread = { kind: ArtifactKind, qualname: string, file: string, 
/**
 * The declaration's line, as the first run that executed it records it.
 */
line: number, file_kind: FileKind, 
/**
 * Runs that executed it in a counted state (the others count 0).
 */
executed_in: number, crt: Spread, seconds: Spread, threads: Spread, clusters: Spread, };

/**
 * The program's figures over the runs of a set.
 */
export type ProgramSpread = { duration_s: Spread, seconds: Spread, threads: Spread, clusters: Spread, };

/**
 * The mean and spread of one figure over the runs of a set.
 */
export type Spread = { n: number, mean: number, 
/**
 * Sample standard deviation (n − 1); `None` for one run: no spread can be measured.
 */
sd: number | null, min: number, max: number, };

/**
 * `views`: lists the saved views; with `save` first saves one, with `delete` first deletes one.
 */
export type ViewsParams = { save?: SaveView, 
/**
 * The id of a view to delete.
 */
delete?: string, };

/**
 * A selection of the active run's Sections panel to save.
 */
export type SaveView = { 
/**
 * A section of the active run (as `sections` lists it).
 */
section: SectionRef, note: string, 
/**
 * A thread of the active run, by name.
 */
thread?: string, 
/**
 * An execution: index into the section's `executions` in the active run.
 */
execution?: number, };

/**
 * The saved views, newest first.
 */
export type ViewsResult = { 
/**
 * Where they are stored.
 */
file: string, 
/**
 * The active run's file name.
 */
run: string, views: Array<ViewItem>, 
/**
 * The id of the view `save` just saved.
 */
saved: string | null, };

/**
 * One saved view and what the active run has of it.
 */
export type ViewItem = { 
/**
 * Saved on the active run itself.
 */
same_run: boolean, 
/**
 * Index into the active run's `sections` of the view's section; `null`: not in this run.
 */
section_index: number | null, 
/**
 * What was found, in a sentence (e.g. that the section moved, or is not in this run).
 */
status: string, id: string, note: string, created_unix_ms: number, 
/**
 * The file name of the run it was saved on.
 */
run: string, section: SectionRef, 
/**
 * A thread (by name: thread ids differ between runs).
 */
thread?: string, execution?: SavedExecution, };

/**
 * A saved view as stored.
 */
export type SavedView = { id: string, note: string, created_unix_ms: number, 
/**
 * The file name of the run it was saved on.
 */
run: string, section: SectionRef, 
/**
 * A thread (by name: thread ids differ between runs).
 */
thread?: string, execution?: SavedExecution, };

/**
 * Which section a view means: file, function and lock identify it across runs; `line` (the entry
 * line when it was saved) only chooses among several sections of the same lock in one function.
 */
export type SectionRef = { file: string, function: string, lock: string, line: number, };

/**
 * One execution of the saved section, as it was in the run the view was saved on.
 */
export type SavedExecution = { 
/**
 * Index into the section's executions in that run (time order).
 */
index: number, 
/**
 * Seconds since that run's start.
 */
start_s: number, duration_s: number, };
