// Recording a run from the editor (`threadradar.record`): what "ThreadRadar: Record a Run…" offers
// and the argument it sends, what is wrong with a custom command line as the server split it, and the short program name
// the status bar shows while the recording runs. Pure: `extension.ts` asks and sends.

import * as path from "node:path";
import type { RecordParams, SplitCommandResult } from "./protocol";

/** What is wrong with a typed command line as the server split it (`threadRadar/splitCommand`), or `undefined`. */
export function inputError(r: SplitCommandResult): string | undefined {
  if (r.error !== null) return r.error;
  return r.words.length === 0 ? "Type the program to record and its arguments." : undefined;
}

/** One word as a shell would need it typed: bare when safe, else in single quotes. */
export function quoteArg(arg: string): string {
  if (arg === "") return "''";
  if (/^[A-Za-z0-9_\-+=.,:/@%]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** A command as one line for display, quoted so that the server's splitter reads it back into the same words. */
export function formatCommand(args: readonly string[]): string {
  return args.map(quoteArg).join(" ");
}

function baseName(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] || p;
}

/**
 * What the program is called in the status bar, as the run's file name says it: the module of
 * `-m`, the script (`buggy.py`), else the program (`pytest` for `pytest -x`).
 */
export function programLabel(command: readonly string[]): string {
  for (let i = 1; i < command.length; i++) {
    const a = command[i] ?? "";
    if (a === "-m" && i + 1 < command.length) return command[i + 1] ?? "";
    if (a.endsWith(".py")) return baseName(a);
    if (a === "-c") return "python -c";
  }
  return baseName(command[0] ?? "") || "the program";
}

/** The interpreter for "Current file": the one of `recordCommand` when it names a Python, else `python3`. */
export function pythonFor(recordCommand: readonly string[]): string {
  const first = recordCommand[0] ?? "";
  return /^python[0-9.]*(\.exe)?$/i.test(baseName(first)) ? first : "python3";
}

/** The workspace folder holding `file` (the innermost one), if any. */
export function folderOf(file: string, folders: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const f of folders) {
    const rel = path.relative(f, file);
    const inside = rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
    if (inside && (best === undefined || f.length > best.length)) best = f;
  }
  return best;
}

export interface RecordContext {
  /** The `recordCommand` setting. */
  recordCommand: readonly string[];
  /** The active editor's file when it is a Python file on disk. */
  activeFile?: string | undefined;
  /** The workspace folders' paths, in order. */
  folders: readonly string[];
}

export interface RecordChoice {
  kind: "tests" | "file" | "custom";
  label: string;
  detail: string;
  /** What to send to `threadradar.record`; the custom choice gets its command from an input box. */
  params: RecordParams;
}

/** Where a recording runs: the active file's workspace folder, else the first folder, else nothing (the server's default). */
export function recordCwd(ctx: RecordContext): string | undefined {
  return (ctx.activeFile !== undefined ? folderOf(ctx.activeFile, ctx.folders) : undefined) ?? ctx.folders[0];
}

/** The choices of "ThreadRadar: Record a Run…": the test suite, the current file (when a Python file is active), a custom command. */
export function recordChoices(ctx: RecordContext): RecordChoice[] {
  const cwd = recordCwd(ctx);
  const where = (dir: string | undefined): string => (dir === undefined ? "in the first workspace folder" : `in ${dir}`);
  const withCwd = (p: RecordParams, dir: string | undefined): RecordParams => (dir === undefined ? p : { ...p, cwd: dir });
  const choices: RecordChoice[] = [
    {
      kind: "tests",
      label: `$(beaker) Test suite (${formatCommand(ctx.recordCommand)})`,
      detail: `${where(cwd)} · the threadradar.recordCommand setting`,
      params: withCwd({ command: [...ctx.recordCommand] }, cwd),
    },
  ];
  if (ctx.activeFile !== undefined) {
    const folder = folderOf(ctx.activeFile, ctx.folders);
    const dir = folder ?? path.dirname(ctx.activeFile);
    const script = folder !== undefined ? path.relative(folder, ctx.activeFile) : ctx.activeFile;
    const command = [pythonFor(ctx.recordCommand), script];
    choices.push({
      kind: "file",
      label: `$(file-code) Current file (${formatCommand(command)})`,
      detail: where(dir),
      params: { command, cwd: dir },
    });
  }
  choices.push({
    kind: "custom",
    label: "$(terminal) Custom command…",
    detail: `${where(cwd)} · quoted like a shell command line, without pipes or variables`,
    params: withCwd({}, cwd),
  });
  return choices;
}

// Profiling tests (issue 19) ------------------------------------------------------------------

/** What the Python extension (`ms-python.python`) exports, as far as the hand-off needs it. */
export interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: unknown): { path?: unknown } | undefined;
    /** Fires when the user selects another interpreter. */
    onDidChangeActiveEnvironmentPath?(listener: (e: unknown) => unknown): { dispose(): unknown };
  };
}

/**
 * The interpreter the Python extension has selected for a folder, from its exported API, or
 * `undefined` (no extension, an older API, or its default `python` that names no file). Pure.
 */
export function selectedInterpreter(api: unknown, resource?: unknown): string | undefined {
  const envs = (api as PythonExtensionApi | undefined)?.environments;
  if (typeof envs?.getActiveEnvironmentPath !== "function") return undefined;
  let p: unknown;
  try {
    p = envs.getActiveEnvironmentPath(resource)?.path;
  } catch {
    return undefined;
  }
  if (typeof p !== "string" || p === "" || !p.includes("/")) return undefined;
  return p;
}

/**
 * The settings that carry the interpreter hand-off and the workspace trust to the server: the
 * selected interpreter as `python`; in an untrusted workspace no "▶ Profile" lenses. Pure.
 */
export function testSettings(trusted: boolean, python: string | undefined): { python: string | null; testLens: boolean } {
  return { python: python ?? null, testLens: trusted };
}

/** The commands that run the workspace's code: refused in an untrusted workspace. */
export const RUNS_WORKSPACE_CODE: readonly string[] = ["threadradar.profileTest", "threadradar.record"];

/** Outcome counts as words: `5 passed, 1 failed`; `undefined`/`null`: unknown. Pure. */
export function outcomeWords(o: { passed: number; failed: number; errors: number; skipped: number } | null | undefined): string {
  if (o === null || o === undefined) return "outcome unknown";
  const parts = (["passed", "failed", "errors", "skipped"] as const).filter((k) => o[k] > 0).map((k) => `${o[k]} ${k}`);
  return parts.length > 0 ? parts.join(", ") : "no tests ran";
}

/** What the tree shows of `RunEntry.history` (from servers that send it). */
export interface RunHistoryView {
  test?: string;
  outcome?: { passed: number; failed: number; errors: number; skipped: number; first_failure?: string } | null;
  label?: string;
  pinned?: boolean;
  previous?: string;
  duration_s?: number;
  threads?: number;
  /** The recorded program and its arguments, as one string. */
  command?: string;
}

/** `2.3 s`, `1 min 5 s`; `""` for a missing or bad number. Pure. */
export function durationWords(s: number | undefined): string {
  if (s === undefined || !Number.isFinite(s) || s < 0) return "";
  if (s < 60) return `${s.toFixed(1)} s`;
  const whole = Math.round(s);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

/**
 * A command for a one-line description: paths as their file names (`python3 buggy.py --workers
 * 4`), at most `max` characters, cut with `…`. Pure.
 */
export function shortCommand(command: string, max = 60): string {
  const c = command
    .split(/\s+/)
    .filter((w) => w !== "")
    .map((w) => (w.includes("/") && !w.endsWith("/") ? w.slice(w.lastIndexOf("/") + 1) : w))
    .join(" ");
  return c.length <= max ? c : `${c.slice(0, max - 1)}…`;
}

/**
 * A test run's outcome as an icon (codicon id and theme colour), separate from the active-run
 * mark: failed (any failure) before errored before passed; none when no test ran or the outcome is
 * unknown. Pure.
 */
export function outcomeIcon(o: RunHistoryView["outcome"]): { id: string; colour: string; words: string } {
  if (o === null || o === undefined) return { id: "question", colour: "testing.iconQueued", words: "outcome unknown" };
  if (o.failed > 0) return { id: "error", colour: "testing.iconFailed", words: "failed" };
  if (o.errors > 0) return { id: "warning", colour: "testing.iconErrored", words: "errored" };
  if (o.passed > 0) return { id: "pass", colour: "testing.iconPassed", words: "passed" };
  return { id: "circle-slash", colour: "testing.iconSkipped", words: "no test passed or failed" };
}

/** `tests/t.py::TestA::test_b` → `TestA::test_b` (the file goes to the tooltip). */
export function shortTestId(id: string): string {
  const at = id.indexOf("::");
  return at < 0 ? id : id.slice(at + 2);
}

/**
 * The tree item's parts for a run: label, description, context value and icon. A test run shows
 * its test (without its file) and outcome first, so that "1 failed" shows at the default width,
 * with the outcome's icon; any other run the program it recorded, with the active-run mark as
 * its icon. The active run says "active" in both. Pure.
 */
export function runNodeView(r: { label: string; description: string; active: boolean; history?: RunHistoryView }): {
  label: string;
  description: string;
  contextValue: string;
  /** A codicon id and its theme colour (`""`: the default). */
  icon: { id: string; colour: string; words: string };
} {
  const h = r.history;
  let context = r.active ? "threadradar.run.active" : "threadradar.run";
  if (h?.pinned === true) context += ".pinned";
  if (h?.previous !== undefined) context += ".previous";
  const test = h?.test !== undefined ? shortTestId(h.test) : undefined;
  const label = h?.label !== undefined ? `${h.label} — ${test ?? r.label}` : (test ?? r.label);
  const what = h === undefined ? "" : h.test !== undefined ? outcomeWords(h.outcome) : shortCommand(h.command ?? "");
  const threads = h?.threads !== undefined && Number.isFinite(h.threads) ? `${h.threads} ${h.threads === 1 ? "thread" : "threads"}` : "";
  const bits = [what, h?.pinned === true ? "pinned" : "", durationWords(h?.duration_s), threads, r.description].filter((x) => x !== "");
  const icon = h?.test !== undefined ? outcomeIcon(h.outcome) : r.active ? { id: "circle-filled", colour: "", words: "active run" } : { id: "circle-large-outline", colour: "", words: "" };
  return { label, description: bits.join(" · "), contextValue: context, icon };
}

