// Routes the panels' messages (web/transport.js, "vscode" transport) to the language server.
//
// The page posts `{id, method, params}` and waits for `{id, result}` or `{id, error}`; navigation is
// `{method: "navigate", params: {file, line}}` without an id. The panel methods go to the server's
// `threadRadar/<method>` requests (`compare` too, its params unchanged); `filter` and `runs`, which `threadradar serve` answers itself,
// become the server's thread-filter and run commands, answered in the shape the page knows from
// `serve`. Pure: the caller supplies the connection, so tests run it against the real server.

import { Requests, ServerCommands, errorSentence } from "./protocol";
import type { FilterResult, RunsResult, ThreadId } from "./protocol";

/** What the router needs from the language client. */
export interface ServerPort {
  sendRequest(method: string, params: unknown): Promise<unknown>;
  /** `workspace/executeCommand` with one argument (or none when `arg` is undefined). */
  executeCommand(command: string, arg?: unknown): Promise<unknown>;
}

export interface RouterHost extends ServerPort {
  /** Open `file` at the 1-based `line`. */
  navigate(file: string, line: number): void | Promise<void>;
  /** Called after the page changed the thread filter or the run (views outside the page refresh). */
  changed?(what: "filter" | "run"): void;
}

export interface WebviewRequest {
  id: number;
  method: string;
  params: Record<string, unknown>;
}

export type WebviewAnswer = { id: number; result: unknown } | { id: number; error: string };

/** The answer of `runs` in the shape `threadradar serve` gives the page. */
export interface ServeRuns {
  runs: { path: string; name: string; current: boolean }[];
  current: string | null;
}

const PANEL_METHODS: Record<string, string> = {
  overview: Requests.overview,
  detail: Requests.detail,
  glyph: Requests.glyph,
  threads: Requests.threads,
  compare: Requests.compare,
};

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function threadIds(v: unknown): ThreadId[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const ids: ThreadId[] = [];
  for (const x of v) {
    if (typeof x !== "number" || !Number.isInteger(x) || x < 0) return undefined;
    ids.push(x);
  }
  return ids;
}

export function toServeRuns(r: RunsResult): ServeRuns {
  return {
    runs: r.runs.map((x) => ({ path: x.path, name: x.name, current: x.path === r.active })),
    current: r.active,
  };
}

/** The navigation target of a `navigate` message, or undefined when it is malformed. */
export function navigationTarget(params: unknown): { file: string; line: number } | undefined {
  if (!isRecord(params) || typeof params.file !== "string" || params.file === "") return undefined;
  const line = typeof params.line === "number" && Number.isFinite(params.line) ? Math.floor(params.line) : 1;
  return { file: params.file, line: Math.max(1, line) };
}

async function answer(host: RouterHost, req: WebviewRequest): Promise<unknown> {
  const p = req.params;
  const request = PANEL_METHODS[req.method];
  if (request !== undefined) return host.sendRequest(request, p);
  switch (req.method) {
    case "filter": {
      if (p.exclude_threads === undefined || p.exclude_threads === null) {
        const runs = (await host.sendRequest(Requests.runs, {})) as RunsResult;
        return { exclude_threads: runs.exclude_threads };
      }
      const ids = threadIds(p.exclude_threads);
      if (ids === undefined) throw new Error("exclude_threads must be a list of thread ids");
      const r = (ids.length === 0
        ? await host.executeCommand(ServerCommands.clearThreadFilter)
        : await host.executeCommand(ServerCommands.setThreadFilter, { exclude: ids })) as FilterResult;
      host.changed?.("filter");
      return { exclude_threads: r.excluded.map((t) => t.id).sort((a, b) => a - b) };
    }
    case "runs": {
      if (p.select === undefined || p.select === null) {
        return toServeRuns((await host.sendRequest(Requests.runs, {})) as RunsResult);
      }
      if (typeof p.select !== "string" || p.select === "") throw new Error("select must be the path of a run");
      const r = (await host.executeCommand(ServerCommands.selectRun, { run: p.select })) as RunsResult;
      host.changed?.("run");
      return toServeRuns(r);
    }
    default:
      throw new Error(`the panels have no method ${JSON.stringify(req.method)}`);
  }
}

/**
 * Handles one message from a panel. Returns the answer to post back, or undefined when the message
 * needs none (navigation, or something that is not a panel message at all). Never rejects.
 */
export async function routeMessage(host: RouterHost, message: unknown): Promise<WebviewAnswer | undefined> {
  if (!isRecord(message) || typeof message.method !== "string") return undefined;
  const params = isRecord(message.params) ? message.params : {};
  if (typeof message.id !== "number") {
    if (message.method !== "navigate") return undefined;
    const target = navigationTarget(params);
    if (target === undefined) return undefined;
    try {
      await host.navigate(target.file, target.line);
    } catch {
      // The host reports navigation failures itself.
    }
    return undefined;
  }
  const id = message.id;
  try {
    return { id, result: await answer(host, { id, method: message.method, params }) };
  } catch (e) {
    return { id, error: errorSentence(e) };
  }
}
