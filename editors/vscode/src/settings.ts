// VS Code's `threadradar.*` configuration → the server's settings object (docs/lsp.md, "Settings"),
// sent as `initializationOptions` and with `workspace/didChangeConfiguration`. Pure.

import { glyphThemeFor } from "./placement";
import type { ThemeKind } from "./placement";

type Spec =
  | { key: string; type: "boolean"; default: boolean; description: string }
  | { key: string; type: "number"; default: number; minimum: number; maximum: number; description: string }
  | { key: string; type: "string"; default: string; enum?: readonly string[]; description: string }
  | { key: string; type: "array"; default: readonly string[]; description: string };

/** The server's settings, as the extension exposes them (`threadradar.<key>`). */
export const SERVER_SETTINGS: readonly Spec[] = [
  { key: "annotations", type: "string", default: "hints", enum: ["glyph", "hints", "all"], description: "How much ThreadRadar writes into the code: `glyph` (the glyph only), `hints` (the glyph and one inlay hint per profiled declaration: the default, it keeps the code readable) or `all` (also the code lenses: figures, Timeline, the file's lens, waits and critical sections). Hovers and the ▶ Profile lenses on tests are there at every level." },
  { key: "inlayHints", type: "boolean", default: true, description: "Show inlay hints with each profiled function's and class's figures." },
  { key: "hintSeconds", type: "boolean", default: true, description: "Show the seconds in the inlay hints." },
  { key: "hintThreads", type: "boolean", default: true, description: "Show the threads and thread types in the inlay hints." },
  { key: "hintClusters", type: "boolean", default: true, description: "Show the clusters (text glyph) in the inlay hints." },
  { key: "codeLens", type: "boolean", default: true, description: "Show code lenses above profiled declarations (when `annotations` is `all`)." },
  { key: "timelineLens", type: "boolean", default: true, description: "Show a \"Timeline\" code lens beside each declaration's lens (opens the timeline on its bars)." },
  { key: "fileLens", type: "boolean", default: true, description: "Show the code lens at the top of each profiled file." },
  { key: "hover", type: "boolean", default: true, description: "Show hovers with the glyph, the figures and the clusters." },
  { key: "classes", type: "boolean", default: true, description: "Annotate classes as well as functions and methods." },
  { key: "states", type: "string", default: "auto", enum: ["auto", "computing", "computing-cpu", "computing+gil", "all", "waiting", "cpu"], description: "Thread states counted as runtime. `auto` (the default) is `computing-cpu` when the run has the kernel's per-thread CPU accounting, else `computing`: `computing` counts the samples where a thread was computing (the paper's metric); `computing-cpu` weighs those samples by the CPU time the kernel accounted to their thread (exact per-thread shares, same threads per artifact); `cpu` weighs every sample by its CPU time (a blocked thread's CPU lands on the frames it blocked in); `waiting` counts the waiting samples instead (idle or waiting for the GIL): the waiting radar." },
  { key: "units", type: "string", default: "threads", enum: ["threads", "tasks"], description: "What every figure, glyph, cluster, hint and panel counts as a unit of concurrency: `threads` (the default), or `tasks`, the program's asyncio tasks (recorded on CPython 3.14+): each task is a unit named by its task name, its type its coroutine; samples outside any task (the event loop's own code, `to_thread` pool workers, plain threads) stay with their thread. A run without tasks is shown with threads, and the server says so." },
  { key: "minCrt", type: "number", default: 0.1, minimum: 0, maximum: 100, description: "Annotate only artifacts with at least this computational runtime share, in percent." },
  { key: "glyphTheme", type: "string", default: "auto", enum: ["auto", "light", "dark"], description: "Colours of the glyph images: `auto` follows VS Code's colour theme." },
  { key: "hoverImage", type: "string", default: "auto", enum: ["auto", "svg", "png", "none"], description: "The glyph image in hovers: `auto` (an SVG data URI in VS Code), `svg`, `png` or `none`." },
  { key: "pollMs", type: "number", default: 1000, minimum: 100, maximum: 60000, description: "How often the server checks the runs directories for new runs, in milliseconds." },
  { key: "recordCommand", type: "array", default: ["python3", "-m", "pytest"], description: "The program and its arguments that “Record a Run… → Test suite” profiles." },
  { key: "recordSubprocesses", type: "boolean", default: true, description: "Recording from the editor samples Python subprocesses too." },
  { key: "repeat", type: "number", default: 1, minimum: 1, maximum: 100, description: "How many times recording or profiling a test runs the program: more than 1 records a run set (the mean and spread of each figure; comparisons say what is more than noise)." },
  // The project's `[tool.threadradar]` keys the editor overrides (docs/testing.md, "Configuration"):
  // the empty default (`[]`, `0`, `""`) leaves each one to the project's file.
  { key: "testCommand", type: "array", default: [], description: "How ▶ Profile runs tests; overrides `[tool.threadradar] test-command`. A template with `{python}` and `{tests}`, or `[\"pytest\"]` / `[\"unittest\"]`. Empty: the project's, else pytest." },
  { key: "intervalMs", type: "number", default: 0, minimum: 0, maximum: 10000, description: "Milliseconds between samples of ▶ Profile and Record a Run… (0.05–10000); overrides `[tool.threadradar] interval-ms`. 0: the project's, else 3." },
  { key: "runsDir", type: "string", default: "", description: "Where runs are written and listed, relative to the workspace folder (or absolute); overrides `[tool.threadradar] runs-dir`. Empty: the project's, else .threadradar/runs." },
  { key: "keepRuns", type: "number", default: 0, minimum: 0, maximum: 1000000, description: "After ▶ Profile, keep this many runs (labelled and pinned runs are always kept); overrides `[tool.threadradar] keep-runs`. 0: the project's, else every run." },
  { key: "include", type: "array", default: [], description: "Regular expressions on qualified name or file path: the artifacts the overview lists; overrides `[tool.threadradar] include`. Empty: the project's." },
  { key: "exclude", type: "array", default: [], description: "Regular expressions on qualified name or file path: artifacts the overview leaves out; overrides `[tool.threadradar] exclude`. Empty: the project's." },
];

/** Settings only the extension reads. */
export const EXTENSION_SETTINGS = {
  serverPath: { default: "" },
  glyphs: { default: true },
} as const;

/** Reads one `threadradar.*` value (`vscode.WorkspaceConfiguration.get`). */
export interface ConfigReader {
  get(key: string): unknown;
}

function valid(spec: Spec, v: unknown): boolean {
  switch (spec.type) {
    case "boolean":
      return typeof v === "boolean";
    case "number":
      return typeof v === "number" && Number.isFinite(v) && v >= spec.minimum && v <= spec.maximum;
    case "string":
      return typeof v === "string" && (spec.enum === undefined || spec.enum.includes(v));
    case "array":
      return Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string" && x !== "");
  }
}

/**
 * The settings object for the server. Values of the wrong type or out of range fall back to the
 * default (the server would ignore them with a warning); `glyphTheme: "auto"` becomes the editor
 * theme's palette; `panels`, `notifyChanges` and `markdownImages` are always on (this client opens the panels and
 * refreshes its glyphs on `threadRadar/changed`).
 */
export function serverSettings(config: ConfigReader, themeKind: ThemeKind): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of SERVER_SETTINGS) {
    const v = config.get(spec.key);
    const value: unknown = valid(spec, v) ? v : spec.default;
    // Lists are copied: the configuration's own objects are read-only.
    out[spec.key] = Array.isArray(value) ? [...(value as unknown[])] : value;
  }
  out.glyphTheme = glyphThemeFor(themeKind, out.glyphTheme as "auto" | "light" | "dark");
  out.panels = true;
  out.notifyChanges = true;
  // VS Code (and code-server, which names itself otherwise) renders images in hover Markdown:
  // the server's `hoverImage: auto` sends the glyph as an SVG data URI on this flag.
  out.markdownImages = true;
  return out;
}

/** The `recordCommand` setting (a non-empty list of non-empty strings, else the default). */
export function recordCommand(config: ConfigReader): string[] {
  const v = serverSettings(config, 1).recordCommand;
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : ["python3", "-m", "pytest"];
}

export interface ExtensionSettings {
  serverPath: string;
  glyphs: boolean;
  glyphTheme: "auto" | "light" | "dark";
}

export function extensionSettings(config: ConfigReader): ExtensionSettings {
  const path = config.get("serverPath");
  const glyphs = config.get("glyphs");
  const theme = config.get("glyphTheme");
  return {
    serverPath: typeof path === "string" ? path.trim() : EXTENSION_SETTINGS.serverPath.default,
    glyphs: typeof glyphs === "boolean" ? glyphs : EXTENSION_SETTINGS.glyphs.default,
    glyphTheme: theme === "light" || theme === "dark" ? theme : "auto",
  };
}

/** Whether a configuration change needs the server restarted (vs. only new settings sent). */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return affects("threadradar.serverPath");
}
