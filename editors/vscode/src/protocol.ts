// The language server's protocol as this extension uses it (docs/lsp.md): method, notification
// and command names, and the shapes of the answers it reads. No `vscode` import: the unit and
// integration tests load this file in plain Node.

/** Custom requests (client → server). */
export const Requests = {
  overview: "threadRadar/overview",
  detail: "threadRadar/detail",
  glyph: "threadRadar/glyph",
  threads: "threadRadar/threads",
  runs: "threadRadar/runs",
  documentArtifacts: "threadRadar/documentArtifacts",
  compare: "threadRadar/compare",
} as const;

/** Custom notifications (server → client). */
export const Notifications = {
  openPanel: "threadRadar/openPanel",
  changed: "threadRadar/changed",
} as const;

/**
 * The server's commands (`workspace/executeCommand`). vscode-languageclient registers each of them
 * as a VS Code command of the same id, so the extension's own commands must use other ids.
 */
export const ServerCommands = {
  openOverview: "threadradar.openOverview",
  openDetail: "threadradar.openDetail",
  selectRun: "threadradar.selectRun",
  setThreadFilter: "threadradar.setThreadFilter",
  clearThreadFilter: "threadradar.clearThreadFilter",
  goTo: "threadradar.goTo",
  deleteRun: "threadradar.deleteRun",
  goToHottest: "threadradar.goToHottest",
  record: "threadradar.record",
  stopRecording: "threadradar.stopRecording",
} as const;

/** The extension's own commands (contributed in package.json). */
export const Commands = {
  showOverview: "threadradar.showOverview",
  showDetailAtCursor: "threadradar.showDetailAtCursor",
  pickRun: "threadradar.pickRun",
  applyThreadFilter: "threadradar.applyThreadFilter",
  clearThreadFilter: "threadradar.clearThreadFilterCmd",
  goToHottest: "threadradar.goToHottestFunction",
  goToHottestClass: "threadradar.goToHottestClass",
  restartServer: "threadradar.restartServer",
  refreshViews: "threadradar.refreshViews",
  selectRunItem: "threadradar.runs.select",
  deleteRunItem: "threadradar.runs.delete",
  openArtifact: "threadradar.openArtifact",
  openThread: "threadradar.openThread",
  showDetailOf: "threadradar.showDetailOf",
  recordRun: "threadradar.recordRun",
  stopRecording: "threadradar.stopRecordingCmd",
  compareWithPrevious: "threadradar.compareRuns",
  compareRuns: "threadradar.compareRunsPick",
  compareShowClasses: "threadradar.comparison.showClasses",
  compareShowFunctions: "threadradar.comparison.showFunctions",
  compareOpen: "threadradar.comparison.open",
} as const;

export type ArtifactKey = string;
export type ThreadId = number;
export type Level = "low" | "medium" | "high";
export type Colour = "low" | "middle" | "high";

export interface RunEntry {
  path: string;
  name: string;
  folder: string;
  modified_unix_ms: number;
  size: number;
  active: boolean;
}

/** `summary` of the active run (server addition E; absent from older servers). */
export interface RunSummary {
  name: string;
  samples: number;
  threads: number;
  processes: number;
  duration_s: number;
  command: string;
  start_unix_ms: number;
  python_version: string;
}

export interface RunsResult {
  active: string | null;
  pinned: boolean;
  runs: RunEntry[];
  exclude_threads: ThreadId[];
  summary?: RunSummary | null;
}

export interface Cluster {
  index: number;
  colour: Colour;
  avg: number;
  sum: number;
  avg_level: Level;
  sum_level: Level;
  thread_types: number;
  threads: ThreadId[];
}

/** An entry of the overview's `functions` and `classes`. */
export interface OverviewEntry {
  key: ArtifactKey;
  kind: "function" | "class";
  name: string;
  qualname: string;
  file: string;
  line: number;
  file_kind: string;
  crt: number;
  self_crt: number;
  seconds: number;
  samples: number;
  threads: number;
  thread_types: number;
  clusters: Cluster[];
  glyph_svg: string;
}

export interface OverviewResult {
  functions: OverviewEntry[];
  classes: OverviewEntry[];
  listed_functions: number;
  listed_classes: number;
  files: string[];
  note: string | null;
}

export interface OverviewParams {
  exclude_threads?: ThreadId[];
  states?: "computing" | "computing+gil" | "all";
  include?: string[];
  exclude?: string[];
  hide_stdlib?: boolean;
  hide_third_party?: boolean;
  only_file?: string | null;
  top?: number;
  theme?: "light" | "dark";
  glyph_size?: number;
}

export interface ThreadInfo {
  id: ThreadId;
  name: string;
  type: string;
  crt: number | null;
  samples: number;
  seconds: number;
  excluded: boolean;
  is_main: boolean;
  file: string | null;
  line: number;
  cluster: number | null;
  colour: Colour | null;
}

export interface ThreadsResult {
  threads: ThreadInfo[];
  types: { name: string; threads: ThreadId[] }[];
  counted_samples: number;
}

export interface FilterResult {
  excluded: { id: ThreadId; name: string }[];
}

export type GlyphTheme = "light" | "dark";

/** `threadRadar/documentArtifacts` (server addition A). */
export interface DocumentArtifactsParams {
  uri: string;
  glyph?: { theme?: GlyphTheme; size?: number };
}

export interface DocumentArtifactCell {
  colour: Colour;
  threads: number;
  avg: Level;
  sum: Level;
  text: string;
}

export interface DocumentArtifact {
  key: ArtifactKey;
  kind: "function" | "class";
  name: string;
  qualname: string;
  /** 0-based line in the current text. */
  line: number;
  /** UTF-16 column where the line's text starts. */
  character: number;
  /** UTF-16 column of the line's end. */
  end_character: number;
  /** 1-based line in the run. */
  recorded_line: number;
  crt: number;
  self_crt: number;
  seconds: number;
  samples: number;
  threads: number;
  thread_types: number;
  cells: DocumentArtifactCell[];
  text: string;
  label: string;
  glyph_svg?: string;
}

export interface DocumentArtifactsResult {
  run: string | null;
  generation: number;
  exclude_threads: ThreadId[];
  stale: number;
  file: { key: ArtifactKey; crt: number; seconds: number } | null;
  artifacts: DocumentArtifact[];
}

/** A recording started with `threadradar.record`, as `threadRadar/changed` reports it. */
export interface RecordingInfo {
  /** The program and its arguments. */
  command: string[];
  /** The run file it writes. */
  output: string;
}

/** `threadRadar/changed` (server addition B). */
export interface ChangedParams {
  reason: "run" | "filter" | "runs" | "settings" | "recording";
  run: string | null;
  generation: number;
  exclude_threads: ThreadId[];
  /**
   * The recording in progress (`null`: none). Absent when the server does not say (servers without
   * `threadradar.record`), so "not recording" and "unknown" stay apart.
   */
  recording?: RecordingInfo | null;
}

/** The argument of `threadradar.record` (docs/lsp.md). */
export interface RecordParams {
  command?: string[];
  cwd?: string;
  subprocesses?: boolean;
  duration?: number;
}

/** The answer of `threadradar.record`: it answers at once, the run follows when it ends. */
export interface RecordResult {
  recording: boolean;
  output: string;
  command: string[];
  cwd: string;
}

export type CompareLevel = "function" | "class" | "file";

/** `threadRadar/compare`'s params. */
export interface CompareParams {
  base?: string;
  new?: string;
  level?: CompareLevel;
  top?: number;
  include?: string[];
  exclude?: string[];
  hide_stdlib?: boolean;
  hide_third_party?: boolean;
}

export interface GlyphCell {
  colour: Colour;
  threads: number;
  avg: Level;
  sum: Level;
}

/** One run of a comparison (docs/compare.md, `compare --json`). */
export interface CompareRun {
  path: string;
  command: string[];
  duration_s: number;
  sample_count: number;
  thread_count: number;
  states: string;
  time_source: string;
  seconds: number;
  counted_samples: number;
  program: { threads: number; thread_types: number; clusters: number; glyph: GlyphCell[] };
}

/** One side of a compared artifact. */
export interface CompareFigures {
  crt: number;
  self_crt: number;
  seconds: number;
  samples: number;
  threads: number;
  thread_types: number;
  clusters: number;
  glyph: GlyphCell[];
}

export interface CompareArtifact {
  kind: "function" | "class" | "file";
  qualname: string;
  file_base: string | null;
  file_new: string | null;
  line_base: number | null;
  line_new: number | null;
  file_kind: string;
  base: CompareFigures | null;
  new: CompareFigures | null;
  crt_delta: number;
  seconds_delta: number;
  threads_delta: number;
  status: "changed" | "added" | "removed";
}

export interface CompareResult {
  level: CompareLevel;
  base: CompareRun;
  new: CompareRun;
  artifacts: CompareArtifact[];
  listed: number;
  only_in_base: number;
  only_in_new: number;
}

export type OpenPanelParams =
  | { panel: "overview"; file: string | null }
  | { panel: "detail"; artifact: ArtifactKey };

/** `threadradar.goToHottest` (server addition D). */
export interface HottestResult {
  artifact: ArtifactKey;
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  qualname: string;
  crt: number;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Reads a `threadRadar/openPanel` notification; anything malformed is `undefined`. */
export function parseOpenPanel(v: unknown): OpenPanelParams | undefined {
  if (!isRecord(v)) return undefined;
  if (v.panel === "overview") {
    return { panel: "overview", file: typeof v.file === "string" && v.file !== "" ? v.file : null };
  }
  if (v.panel === "detail" && typeof v.artifact === "string" && v.artifact !== "") {
    return { panel: "detail", artifact: v.artifact };
  }
  return undefined;
}

/** Reads a `threadRadar/changed` notification; anything malformed is `undefined`. */
export function parseChanged(v: unknown): ChangedParams | undefined {
  if (!isRecord(v)) return undefined;
  const reasons = ["run", "filter", "runs", "settings", "recording"];
  if (typeof v.reason !== "string" || !reasons.includes(v.reason)) return undefined;
  const changed: ChangedParams = {
    reason: v.reason as ChangedParams["reason"],
    run: typeof v.run === "string" ? v.run : null,
    generation: typeof v.generation === "number" ? v.generation : 0,
    exclude_threads: Array.isArray(v.exclude_threads) ? v.exclude_threads.filter((x): x is number => Number.isInteger(x)) : [],
  };
  if ("recording" in v) changed.recording = parseRecording(v.recording);
  return changed;
}

/** The `recording` of `threadRadar/changed`: `null` unless it is a recording with a command. */
function parseRecording(v: unknown): RecordingInfo | null {
  if (!isRecord(v) || !Array.isArray(v.command)) return null;
  const command = v.command.filter((x): x is string => typeof x === "string");
  if (command.length === 0) return null;
  return { command, output: typeof v.output === "string" ? v.output : "" };
}

/** The message of an error from the server or anywhere else, as one sentence. */
export function errorSentence(e: unknown): string {
  let text = "";
  if (e instanceof Error) text = e.message;
  else if (isRecord(e) && typeof e.message === "string") text = e.message;
  else if (typeof e === "string") text = e;
  text = text.replace(/\s+/g, " ").trim();
  if (text === "") return "Something went wrong in ThreadRadar.";
  text = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(text) ? text : text + ".";
}

/** JSON-RPC "Method not found": the server is older than this extension. */
export function isMethodNotFound(e: unknown): boolean {
  return isRecord(e) && e.code === -32601;
}
