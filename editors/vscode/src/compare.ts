// The Comparison view's items from `threadRadar/compare` (docs/compare.md): the header, one item
// per artifact with its change of crt and threads, an icon by the server's trend, a tooltip,
// and where a click goes. Pure: `tree.ts` turns these into tree items.
//
// Names and paths come from the profiled program, so they reach the Markdown tooltips escaped
// (`escapeMarkdown`): a function named `[x](command:…)` or `<img …>` shows as text.

import type { CompareArtifact, CompareFigures, CompareLevel, CompareParams, CompareResult, CompareRun, GlyphCell, RunEntry, RunsResult } from "./protocol";
import { formatCommand } from "./record";

/** The view lists at most this many artifacts (the header says how many there are). */
export const COMPARE_TOP = 200;

/**
 * The `threadRadar/compare` request of the Comparison view: the two runs (none: the active run
 * against the one recorded before it), the level, without the standard library (as the hot view).
 */
export function compareParams(runs: CompareRuns, level: CompareLevel): CompareParams {
  const p: CompareParams = { level, hide_stdlib: true, top: COMPARE_TOP };
  // Several runs on a side form a run set: each change is then tested against the sets' spread.
  const side = (v: string | string[] | undefined, one: "base" | "new", many: "base_runs" | "new_runs"): void => {
    if (Array.isArray(v) && v.length > 1) p[many] = v;
    else if (Array.isArray(v) && v.length === 1) p[one] = v[0];
    else if (typeof v === "string") p[one] = v;
  };
  side(runs.base, "base", "base_runs");
  side(runs.new, "new", "new_runs");
  return p;
}

/** The runs of a comparison: one per side (a path), or a run set per side (paths). */
export interface CompareRuns {
  base?: string | string[];
  new?: string | string[];
}

/** How the changes were tested, in the header's words: the n's and the test, or why nothing was tested. */
export function significanceText(result: CompareResult): string {
  const s = result.significance;
  if (s === null) return "";
  return s.tested > 0
    ? `Run sets: base n = ${s.n_base}, new n = ${s.n_new}; ${s.test}, over ${s.tested} changes. The rows show each set's first run.`
    : `Run sets: base n = ${s.n_base}, new n = ${s.n_new}; ${s.note}`;
}

/** A change in words with its verdict against the sets' spread (none with one run per side). */
export function changeText(c: CompareResult["changes"][number]): string {
  const words = `${c.statement} [${c.evidence_text}]`;
  if (c.significant === null) return words;
  const p = c.p === null ? "" : `, p = ${c.p < 0.001 ? c.p.toExponential(1) : c.p.toFixed(3)}`;
  return `${words} (${c.significant ? "significant" : "within noise"}${p})`;
}

function pct(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}

/** The radar as text, each cell as the server spells it (`▂█×6 ██×1`). */
export function radarText(glyph: readonly GlyphCell[]): string {
  if (glyph.length === 0) return "—";
  return glyph.map((c) => c.text).join(" ");
}

/** Backslash-escapes every ASCII punctuation character (CommonMark) and flattens line breaks: the text shows as itself. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\r\n]+/g, " ").replace(/[!-/:-@[-`{-~]/g, (c) => `\\${c}`);
}

function baseName(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] || p;
}

/** A run's name as the Runs view shows it: the file name without `.json`. */
export function runName(run: Pick<CompareRun, "path"> | string): string {
  const name = baseName(typeof run === "string" ? run : (run.path ?? "?"));
  return name.endsWith(".json") ? name.slice(0, -5) : name;
}

export type CompareIcon = "arrow-up" | "arrow-down" | "dash" | "diff-added" | "diff-removed";
/** Red for more of the runtime, green for less (as `threadradar compare` colours Δcrt). */
export type CompareColour = "charts.red" | "charts.green" | undefined;

export interface CompareTarget {
  file: string;
  /** 1-based; 0 for a whole file. */
  line: number;
}

export interface CompareItem {
  /** Stable within a comparison: kind, qualname and the two locations. */
  id: string;
  /** The qualified name; with the file's name when several listed artifacts share it (`<module> (fixed.py)`). */
  label: string;
  qualname: string;
  description: string;
  /** Markdown, names escaped. */
  tooltip: string;
  icon: CompareIcon;
  colour: CompareColour;
  /** The new side's declaration (the base's for a removed artifact), if it has a file. */
  target: CompareTarget | null;
  status: CompareArtifact["status"];
}

export interface CompareHeader {
  label: string;
  description: string;
  tooltip: string;
}

const levelWords: Record<CompareResult["level"], [string, string]> = {
  function: ["function", "functions"],
  class: ["class", "classes"],
  file: ["file", "files"],
  program: ["program", "programs"],
};

function runLine(side: string, r: CompareRun): string {
  const cmd = r.command.length > 0 ? formatCommand(r.command) : "?";
  return (
    `**${side}** ${escapeMarkdown(runName(r))}: ${escapeMarkdown(cmd)} — ${r.duration_s.toFixed(1)} s, ${r.thread_count} threads, ` +
    `${r.seconds.toFixed(2)} s counted, radar ${radarText(r.program.glyph)}`
  );
}

/** The first item: `<base name> → <new name>`, with how many artifacts and what only one side has. */
export function compareHeader(result: CompareResult): CompareHeader {
  const [one, many] = levelWords[result.level] ?? ["artifact", "artifacts"];
  const shown = result.artifacts.length;
  const counts = shown < result.listed ? `${shown} of ${result.listed} ${many}` : `${result.listed} ${result.listed === 1 ? one : many}`;
  const sets = result.significance === null ? "" : ` · sets of ${result.significance.n_base} → ${result.significance.n_new} runs`;
  const description = `${counts} · ${result.only_in_new} added · ${result.only_in_base} removed${sets}`;
  const tooltip = [
    runLine("Base", result.base),
    runLine("New", result.new),
    `${escapeMarkdown(counts)} by change of computational runtime (crt); Δ in percentage points. ` +
      `crt is a share of each run's own counted runtime: read it with the seconds and the threads.`,
    result.base.path === result.new.path && result.significance === null ? "Both sides are the same run." : "",
    escapeMarkdown(significanceText(result)),
    ...result.changes.slice(0, 10).map((c) => `- ${escapeMarkdown(changeText(c))}`),
    result.suppressed_note === null ? "" : escapeMarkdown(result.suppressed_note),
  ]
    .filter((l) => l !== "")
    .join("\n\n");
  return { label: `${runName(result.base)} → ${runName(result.new)}`, description, tooltip };
}

function threadsText(a: CompareArtifact): string {
  const b = a.base?.threads ?? 0;
  const n = a.new?.threads ?? 0;
  return `${b} → ${n} ${b === 1 && n === 1 ? "thread" : "threads"}`;
}

/** The icon and colour of the server's `trend` (crt rose, fell or stayed the same). */
function iconOf(a: CompareArtifact): { icon: CompareIcon; colour: CompareColour } {
  const colour: CompareColour = a.trend === "increase" ? "charts.red" : a.trend === "decrease" ? "charts.green" : undefined;
  if (a.status === "added") return { icon: "diff-added", colour };
  if (a.status === "removed") return { icon: "diff-removed", colour };
  return { icon: a.trend === "increase" ? "arrow-up" : a.trend === "decrease" ? "arrow-down" : "dash", colour };
}

function where(file: string | null, line: number | null): string {
  if (file === null) return "—";
  return line !== null && line > 0 ? `${file}:${line}` : file;
}

function side<T>(f: CompareFigures | null, get: (f: CompareFigures) => T, show: (v: T) => string): string {
  return f === null ? "—" : show(get(f));
}

function tooltipOf(a: CompareArtifact): string {
  const row = (name: string, get: (f: CompareFigures) => number, show: (v: number) => string, extra = ""): string =>
    `- ${name}: ${side(a.base, get, show)} → ${side(a.new, get, show)}${extra}`;
  const status = a.status === "changed" ? "" : ` — **${a.status}** (only in the ${a.status === "added" ? "new" : "base"} run)`;
  const lines = [
    `**${escapeMarkdown(a.qualname)}** (${escapeMarkdown(a.kind)})${status}`,
    "",
    row("crt", (f) => f.crt, pct, ` (${a.crt_delta_text})`),
    row("seconds", (f) => f.seconds, (v) => `${v.toFixed(2)} s`),
    row("threads", (f) => f.threads, (v) => String(v)),
    `- radar: ${a.base === null ? "—" : radarText(a.base.glyph)} → ${a.new === null ? "—" : radarText(a.new.glyph)}`,
    "",
    `- base: ${escapeMarkdown(where(a.file_base, a.line_base))}`,
    `- new: ${escapeMarkdown(where(a.file_new, a.line_new))}`,
  ];
  return lines.join("\n");
}

function targetOf(a: CompareArtifact): CompareTarget | null {
  const [file, line] = a.status === "removed" ? [a.file_base, a.line_base] : [a.file_new, a.line_new];
  if (file === null || file === "" || file.startsWith("<")) return null;
  return { file, line: line ?? 0 };
}

/** The artifacts' items, by |Δcrt| (largest first), then name, file and line: the order of `threadradar compare`. */
export function compareItems(result: CompareResult): CompareItem[] {
  const seen = new Map<string, number>();
  for (const a of result.artifacts) seen.set(a.qualname, (seen.get(a.qualname) ?? 0) + 1);
  const labelOf = (a: CompareArtifact): string => {
    const file = a.file_new ?? a.file_base;
    return (seen.get(a.qualname) ?? 0) > 1 && file !== null ? `${a.qualname} (${baseName(file)})` : a.qualname;
  };
  const key = (a: CompareArtifact): string => `${a.file_new ?? a.file_base ?? ""}\u0000${String(a.line_new ?? a.line_base ?? 0).padStart(9, "0")}`;
  return [...result.artifacts]
    .sort((a, b) => Math.abs(b.crt_delta) - Math.abs(a.crt_delta) || (a.qualname < b.qualname ? -1 : a.qualname > b.qualname ? 1 : 0) || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
    .map((a) => {
      const { icon, colour } = iconOf(a);
      return {
        id: `${a.kind}:${a.qualname}:${a.file_base ?? ""}:${a.line_base ?? ""}:${a.file_new ?? ""}:${a.line_new ?? ""}`,
        label: labelOf(a),
        qualname: a.qualname,
        description: a.status === "changed" ? `${a.crt_delta_text} · ${threadsText(a)}` : a.status,
        tooltip: tooltipOf(a),
        icon,
        colour,
        target: targetOf(a),
        status: a.status,
      };
    });
}

export interface RunPick {
  label: string;
  description: string;
  detail: string;
  path: string;
}

/** The runs to pick from for "Compare Runs…", newest first, without `except` (the base already picked). */
export function runPicks(runs: RunsResult, except?: string): RunPick[] {
  return [...runs.runs]
    .filter((r: RunEntry) => r.path !== except)
    .sort((a, b) => b.name.localeCompare(a.name) || b.modified_unix_ms - a.modified_unix_ms)
    .map((r) => ({
      label: runName(r.path),
      description: r.path === runs.active ? "active" : "",
      detail: r.path,
      path: r.path,
    }));
}
