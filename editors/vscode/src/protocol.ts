// The language server's protocol as this extension uses it (docs/lsp.md, docs/panels.md): method,
// notification and command names; the request and answer types come from the generated
// `web/protocol.d.ts`, the one copy the panels and this extension share. No `vscode` import: the unit and integration tests load this file in
// plain Node.

/** Custom requests (client → server): `threadRadar/<method>` for every protocol method. */
export const Requests = {
  overview: "threadRadar/overview",
  detail: "threadRadar/detail",
  glyph: "threadRadar/glyph",
  threads: "threadRadar/threads",
  runs: "threadRadar/runs",
  filter: "threadRadar/filter",
  documentArtifacts: "threadRadar/documentArtifacts",
  artifactAt: "threadRadar/artifactAt",
  compare: "threadRadar/compare",
  timeline: "threadRadar/timeline",
  sections: "threadRadar/sections",
  waits: "threadRadar/waits",
  traceCompare: "threadRadar/traceCompare",
  views: "threadRadar/views",
  runSet: "threadRadar/runSet",
  navigate: "threadRadar/navigate",
  splitCommand: "threadRadar/splitCommand",
} as const satisfies Record<keyof P.MethodTypes, `threadRadar/${keyof P.MethodTypes}`>;

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
  openTimeline: "threadradar.openTimeline",
  openSections: "threadradar.openSections",
  openWaits: "threadradar.openWaits",
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
  doctor: "threadradar.doctor",
  refreshViews: "threadradar.refreshViews",
  selectRunItem: "threadradar.runs.select",
  deleteRunItem: "threadradar.runs.delete",
  labelRunItem: "threadradar.runs.label",
  pinRunItem: "threadradar.runs.pin",
  compareRunItemWithPrevious: "threadradar.runs.compareWithPrevious",
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
  compareAsTraces: "threadradar.compareAsTraces",
  showTimeline: "threadradar.showTimeline",
  showWaits: "threadradar.showWaits",
  showSections: "threadradar.showSections",
} as const;

// Every request's parameters and answer are generated from the server's Rust types
// (`web/protocol.d.ts`, kept current by the server's tests): no shape is written here twice.
import type * as P from "../../../web/protocol";
export type { GlyphCell, ProtocolError, ErrorCode, Trend, Change } from "../../../web/protocol";

export type ArtifactKey = P.ArtifactKey;
export type ThreadId = number;
/** A radar level: the three-level scale of a cluster's average or sum. */
export type Level = P.RadarLevel;
export type Colour = P.ClusterColour;

export type RunEntry = P.RunItem;
export type RunSummary = P.RunSummary;
export type RunsResult = P.RunsResult;
export type SplitCommandResult = P.SplitCommandResult;
export type Cluster = P.ClusterInfo;
/** An entry of the overview's `functions` and `classes`. */
export type OverviewEntry = P.ArtifactEntry;
export type OverviewResult = P.OverviewResponse;
export type OverviewParams = Partial<P.OverviewRequest>;
export type ThreadInfo = P.ThreadEntry;
export type ThreadsResult = P.ThreadsResponse;
/** The answer of the `threadradar.setThreadFilter` command (not a protocol method). */
export interface SetThreadFilterResult {
  excluded: { id: ThreadId; name: string }[];
}
export type GlyphTheme = P.Theme;
export type DocumentArtifactsParams = Partial<P.DocumentArtifactsParams>;
export type DocumentArtifactCell = P.GlyphCell;
export type DocumentArtifact = P.DocumentArtifact;
export type DocumentArtifactsResult = P.DocumentArtifactsResult;
export type ArtifactAtParams = P.ArtifactAtParams;
export type ArtifactAtResult = P.ArtifactAtResult;
export type FilterResult = P.FilterResult;

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
  /** Words, or one line the server splits (`threadRadar/splitCommand`'s rules). */
  command?: string[] | string;
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

export type CompareLevel = P.Level;
export type CompareParams = Partial<P.CompareParams>;
/** One run of a comparison (docs/compare.md, `compare --json`). */
export type CompareRun = P.SideSummary;
/** One side of a compared artifact. */
export type CompareFigures = P.SideFigures;
export type CompareArtifact = P.ArtifactDelta;
export type CompareResult = P.Comparison;

export type OpenPanelParams =
  | { panel: "overview"; file: string | null }
  | { panel: "detail"; artifact: ArtifactKey }
  | { panel: "timeline"; artifact: ArtifactKey }
  | { panel: "sections"; section: SectionRef }
  /** The wait lens: the Waits view on the lens's object (its label in the view), when it says. */
  | { panel: "waits"; object: string | null };

/** A critical section as the section lens names it (file, function, lock, entry line). */
export type SectionRef = P.SectionRef;

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
  if (v.panel === "timeline" && typeof v.artifact === "string" && v.artifact !== "") {
    return { panel: "timeline", artifact: v.artifact };
  }
  if (v.panel === "waits") {
    return { panel: "waits", object: typeof v.object === "string" && v.object !== "" ? v.object : null };
  }
  if (v.panel === "sections" && isRecord(v.section)) {
    const s = v.section;
    if (typeof s.file === "string" && typeof s.function === "string" && typeof s.lock === "string" && typeof s.line === "number") {
      return { panel: "sections", section: { file: s.file, function: s.function, lock: s.lock, line: s.line } };
    }
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
