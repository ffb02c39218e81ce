// What the status bar, the activity-bar views and the quick picks show, from the server's
// answers. Pure: `tree.ts`, `statusBar.ts` and `extension.ts` turn these into VS Code objects.

import { Commands } from "./protocol";
import type { OverviewEntry, RecordingInfo, RunEntry, RunsResult, ThreadInfo, ThreadsResult } from "./protocol";
import { formatCommand, programLabel } from "./record";

/** `37.2 %` (a share in 0..1). */
export function percent(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return "–";
  return `${(share * 100).toFixed(1)} %`;
}

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** The run's file name without `.json`. */
export function runLabel(name: string): string {
  return name.endsWith(".json") ? name.slice(0, -5) : name;
}

function baseName(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] ?? p;
}

export interface StatusView {
  text: string;
  tooltip: string;
  /** The command a click runs: switch runs, or stop the recording. */
  command: string;
}

/** The status bar: the recording while one runs (a click stops it), else the active run (a click switches runs). */
export function statusView(
  runs: RunsResult | undefined,
  serverState: "starting" | "running" | "stopped" | "missing",
  recording: RecordingInfo | null = null,
): StatusView {
  if (recording !== null && serverState === "running") {
    return {
      text: `$(record) ThreadRadar: recording ${programLabel(recording.command)}…`,
      tooltip: `Recording ${formatCommand(recording.command)}${recording.output ? `\n→ ${recording.output}` : ""}\nClick to stop it: sampling stops, the run so far is kept and shown.`,
      command: Commands.stopRecording,
    };
  }
  return { ...runStatusView(runs, serverState), command: Commands.pickRun };
}

function runStatusView(runs: RunsResult | undefined, serverState: "starting" | "running" | "stopped" | "missing"): Omit<StatusView, "command"> {
  if (serverState === "missing") return { text: "$(pulse) ThreadRadar: no server", tooltip: "The ThreadRadar language server was not found; see `threadradar.serverPath`." };
  if (serverState === "stopped") return { text: "$(pulse) ThreadRadar: stopped", tooltip: "The ThreadRadar language server is not running: run “ThreadRadar: Restart the Language Server”." };
  if (runs === undefined) return { text: "$(pulse) ThreadRadar", tooltip: "Starting the ThreadRadar language server…" };
  if (runs.active === null) {
    return { text: "$(pulse) ThreadRadar: no run", tooltip: "No run in .threadradar/runs: record one with “ThreadRadar: Record a Run…” (or `threadradar record -- python3 app.py`)." };
  }
  const s = runs.summary;
  const name = runLabel(s ? s.name : baseName(runs.active));
  const parts = [`$(pulse) ThreadRadar: ${name}`];
  if (s) parts.push(plural(s.samples, "sample", "samples"), plural(s.threads, "thread", "threads"));
  // The global time window (set by a brush on the timeline): every figure is the window's.
  if (runs.window) parts.push(`window ${runs.window.from_s.toFixed(2)}–${runs.window.to_s.toFixed(2)} s`);
  const lines = [`Run ${runs.active}`];
  if (s) {
    lines.push(s.command, `${s.duration_s.toFixed(1)} s · ${plural(s.samples, "sample", "samples")} · ${plural(s.threads, "thread", "threads")} · ${plural(s.processes, "process", "processes")}${s.python_version ? " · Python " + s.python_version : ""}`);
  }
  if (runs.exclude_threads.length > 0) lines.push(`Thread filter: ${plural(runs.exclude_threads.length, "thread", "threads")} excluded`);
  if (runs.window) lines.push(`Time window: ${runs.window.from_s.toFixed(2)}–${runs.window.to_s.toFixed(2)} s (figures count only its samples; reset it on the timeline)`);
  lines.push(runs.pinned ? "Pinned (new runs are not followed)." : "Following the newest run.");
  lines.push("Click to switch runs.");
  return { text: parts.join(" · "), tooltip: lines.join("\n") };
}

function when(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return "";
  return new Date(ms).toISOString().replace("T", " ").slice(0, 16);
}

function size(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export interface RunItem {
  path: string;
  label: string;
  description: string;
  tooltip: string;
  active: boolean;
}

export function runItems(runs: RunsResult): RunItem[] {
  // Newest first (the file names start with a UTC time).
  return [...runs.runs]
    .sort((a, b) => b.name.localeCompare(a.name) || b.modified_unix_ms - a.modified_unix_ms)
    .map((r: RunEntry) => {
      const active = r.path === runs.active;
      const bits = [active ? (runs.pinned ? "active, pinned" : "active") : "", when(r.modified_unix_ms), size(r.size)].filter((x) => x !== "");
      return { path: r.path, label: runLabel(r.name), description: bits.join(" · "), tooltip: r.path, active };
    });
}

export interface HotItem {
  key: string;
  label: string;
  description: string;
  tooltip: string;
  kind: OverviewEntry["kind"];
}

/**
 * An artifact's name for a list: its qualified name, except that a module's code (`<module>`, one
 * per file) is named with its file, so that two modules' rows never read the same.
 */
export function artifactLabel(e: { qualname: string; file: string }): string {
  if (!e.qualname.startsWith("<module>")) return e.qualname;
  const file = e.file === "" ? "an unrecorded file" : baseName(e.file);
  return `${e.qualname} of ${file}`;
}

export function hotItems(entries: readonly OverviewEntry[], top: number): HotItem[] {
  return [...entries]
    .sort((a, b) => b.crt - a.crt)
    .slice(0, Math.max(0, top))
    .map((e) => ({
      key: e.key,
      label: artifactLabel(e),
      description: percent(e.crt),
      tooltip: `${e.qualname} — ${percent(e.crt)} of the computational runtime, ${e.seconds.toFixed(2)} s, ${plural(e.threads, "thread", "threads")} of ${plural(e.thread_types, "type", "types")}\n${e.file}:${e.line}`,
      kind: e.kind,
    }));
}

export interface ThreadItem {
  id: number;
  label: string;
  description: string;
  tooltip: string;
  included: boolean;
  file: string | null;
  line: number;
}

export function threadItems(result: ThreadsResult): ThreadItem[] {
  return [...result.threads]
    .sort((a: ThreadInfo, b: ThreadInfo) => Number(a.excluded) - Number(b.excluded) || (b.crt ?? 0) - (a.crt ?? 0) || a.id - b.id)
    .map((t) => ({
      id: t.id,
      label: t.name,
      description: `${t.type} · ${t.excluded ? "excluded" : percent(t.crt)}`,
      tooltip: `Thread ${t.id} “${t.name}” (${t.type}): ${plural(t.samples, "sample", "samples")}, ${t.seconds.toFixed(2)} s${t.file ? `\nstarted in ${t.file}${t.line > 0 ? `:${t.line}` : ""}` : ""}`,
      included: !t.excluded,
      file: t.file,
      line: t.line,
    }));
}

/** The thread filter after one thread is included or excluded. */
export function toggledFilter(current: readonly number[], id: number, include: boolean): number[] {
  const set = new Set(current);
  if (include) set.delete(id);
  else set.add(id);
  return [...set].sort((a, b) => a - b);
}

/** A short title for an artifact key: `Worker.run` for `function:/path/x.py:125:Worker.run`. */
export function shortName(key: string): string {
  if (key === "program") return "Program";
  if (key.startsWith("file:")) return baseName(key.slice(5));
  const m = /^(?:function|class):.*:\d+:(.+)$/s.exec(key);
  return m?.[1] ?? key;
}
