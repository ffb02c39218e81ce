// Routes the panels' messages (web/transport.js, "vscode" transport) to the language server.
//
// The page posts `{id, method, params}` and waits for `{id, result}` or `{id, error}`; navigation is
// `{method: "navigate", params: {file, line}}` without an id. Every protocol method goes unchanged to
// the server's `threadRadar/<method>`: the page gets exactly what `threadradar serve` would answer
// (one protocol, one dispatcher in the server). Pure: the caller supplies the connection, so tests
// run it against the real server.

import { Requests, errorSentence } from "./protocol";

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

const PANEL_METHODS: Record<string, string> = Requests;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The navigation target of a `navigate` message, or undefined when it is malformed. */
export function navigationTarget(params: unknown): { file: string; line: number } | undefined {
  if (!isRecord(params) || typeof params.file !== "string" || params.file === "") return undefined;
  const line = typeof params.line === "number" && Number.isFinite(params.line) ? Math.floor(params.line) : 1;
  return { file: params.file, line: Math.max(1, line) };
}

async function answer(host: RouterHost, req: WebviewRequest): Promise<unknown> {
  const request = req.method === "navigate" ? undefined : PANEL_METHODS[req.method];
  if (request === undefined) throw new Error(`the panels have no method ${JSON.stringify(req.method)}`);
  const result = await host.sendRequest(request, req.params);
  // Views outside the page (decorations, trees, status bar) follow what the page changed.
  if (req.method === "filter" && ((req.params.exclude_threads !== undefined && req.params.exclude_threads !== null) || req.params.window !== undefined)) host.changed?.("filter");
  if (req.method === "runs" && req.params.select !== undefined && req.params.select !== null) host.changed?.("run");
  return result;
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
