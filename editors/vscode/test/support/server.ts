// The real language server for the integration tests: a workspace with a real recorded run, and
// `threadradar lsp` spoken to over stdio with vscode-jsonrpc, as vscode-languageclient does.

import { execFileSync, spawn } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";
import type { MessageConnection } from "vscode-jsonrpc/node";
import type { ServerPort } from "../../src/router";
import { serverSettings } from "../../src/settings";

export const EXTENSION_DIR = path.resolve(__dirname, "../..");
export const REPO = path.resolve(EXTENSION_DIR, "../..");

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** `$THREADRADAR_BIN`, else the repository's release build, else `threadradar` on PATH. */
export function serverBinary(): string {
  const candidates = [
    process.env.THREADRADAR_BIN,
    path.join(REPO, "target/release/threadradar"),
    ...(process.env.PATH ?? "").split(":").filter((d) => d !== "").map((d) => path.join(d, "threadradar")),
  ].filter((p): p is string => typeof p === "string" && p !== "");
  const found = candidates.find(isExecutable);
  if (found === undefined) throw new Error("no threadradar binary: build it (cargo build --release) or set THREADRADAR_BIN");
  return found;
}

export interface Workspace {
  dir: string;
  /** The recorded run. */
  run: string;
  cleanup(): void;
}

/** Records `script` (relative to the workspace) into `<ws>/.threadradar/runs/<name>.json`. */
export function record(ws: string, name: string, script: string, args: string[] = []): string {
  const run = path.join(ws, ".threadradar", "runs", `${name}.json`);
  execFileSync(serverBinary(), ["record", "--no-progress", "-o", run, "--", "python3", script, ...args], {
    cwd: ws,
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 120_000,
  });
  return run;
}

/** A temporary workspace holding a copy of the Bug 1 sample and a real run of it (6 workers). */
export function bug1Workspace(): Workspace {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "threadradar-vscode-")));
  const samples = path.join(REPO, "samples/python");
  fs.mkdirSync(path.join(dir, "samples/python"), { recursive: true });
  fs.cpSync(path.join(samples, "bug1_worker_manager"), path.join(dir, "samples/python/bug1_worker_manager"), { recursive: true });
  fs.copyFileSync(path.join(samples, "common.py"), path.join(dir, "samples/python/common.py"));
  const run = record(dir, "20250101T000000Z-bug1", "samples/python/bug1_worker_manager/buggy.py", ["--workers", "6", "--timeout", "1.5"]);
  return { dir, run, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A temporary workspace with a run of tests/scripts/hostile_names.py (HTML in names). */
export function hostileWorkspace(): Workspace {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "threadradar-vscode-hostile-")));
  fs.copyFileSync(path.join(REPO, "tests/scripts/hostile_names.py"), path.join(dir, "hostile_names.py"));
  const run = record(dir, "20250101T000000Z-hostile", "hostile_names.py");
  return { dir, run, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export const BUGGY = "samples/python/bug1_worker_manager/buggy.py";

export interface ServerSession extends ServerPort {
  conn: MessageConnection;
  child: ChildProcessWithoutNullStreams;
  /** Every notification the server sent, in order. */
  notifications: { method: string; params: unknown }[];
  /** `window/showDocument` requests the server sent. */
  shownDocuments: unknown[];
  capabilities: Record<string, unknown>;
  waitForNotification(method: string, pred?: (p: unknown) => boolean, ms?: number): Promise<unknown>;
  open(file: string): Promise<string>;
  stop(): Promise<void>;
}

/** Starts `threadradar lsp` on the workspace with the settings the extension sends. */
export async function startServer(ws: string, overrides: Record<string, unknown> = {}): Promise<ServerSession> {
  const child = spawn(serverBinary(), ["lsp"], { stdio: ["pipe", "pipe", "pipe"] });
  child.stderr.resume();
  const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const notifications: { method: string; params: unknown }[] = [];
  const shownDocuments: unknown[] = [];
  const waiters: { method: string; pred: (p: unknown) => boolean; resolve: (p: unknown) => void }[] = [];
  conn.onNotification((method: string, params: unknown) => {
    notifications.push({ method, params });
    for (const w of [...waiters]) {
      if (w.method === method && w.pred(params)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(params);
      }
    }
  });
  conn.onRequest((method: string, params: unknown) => {
    if (method === "window/showDocument") {
      shownDocuments.push(params);
      return { success: true };
    }
    if (method === "workspace/configuration") return [];
    return null;
  });
  conn.listen();
  // The settings exactly as the extension builds them (a light theme, defaults), plus overrides.
  const settings = { ...serverSettings({ get: () => undefined }, 1), ...overrides };
  const folder = pathToFileURL(ws).toString();
  const init = await conn.sendRequest<{ capabilities: Record<string, unknown> }>("initialize", {
    processId: process.pid,
    clientInfo: { name: "Visual Studio Code", version: "1.85.0" },
    rootUri: folder,
    workspaceFolders: [{ uri: folder, name: path.basename(ws) }],
    capabilities: {
      window: { showDocument: { support: true }, workDoneProgress: false },
      workspace: { configuration: true, inlayHint: { refreshSupport: true }, codeLens: { refreshSupport: true } },
      textDocument: { synchronization: { dynamicRegistration: false } },
    },
    initializationOptions: settings,
  });
  await conn.sendNotification("initialized", {});
  let version = 0;
  const session: ServerSession = {
    conn,
    child,
    notifications,
    shownDocuments,
    capabilities: init.capabilities,
    sendRequest: (method, params) => conn.sendRequest(method, params),
    executeCommand: (command, arg) => conn.sendRequest("workspace/executeCommand", { command, arguments: arg === undefined ? [] : [arg] }),
    waitForNotification(method, pred = () => true, ms = 10_000) {
      const seen = notifications.find((n) => n.method === method && pred(n.params));
      if (seen) return Promise.resolve(seen.params);
      return new Promise((resolve, reject) => {
        const w = { method, pred, resolve: (p: unknown) => { clearTimeout(t); resolve(p); } };
        const t = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`no ${method} within ${ms} ms; got ${JSON.stringify(notifications.map((n) => n.method))}`));
        }, ms);
        waiters.push(w);
      });
    },
    async open(file) {
      const uri = pathToFileURL(file).toString();
      await conn.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "python", version: ++version, text: fs.readFileSync(file, "utf8") } });
      return uri;
    },
    async stop() {
      try {
        await Promise.race([conn.sendRequest("shutdown"), new Promise((r) => setTimeout(r, 2000))]);
        await conn.sendNotification("exit");
      } catch {
        // already gone
      }
      conn.dispose();
      if (child.exitCode === null) child.kill();
    },
  };
  return session;
}
