// The language client: finds and starts `threadradar lsp`, passes the settings, and forwards the
// server's ThreadRadar notifications. Everything else (hints, lenses, hovers, symbols, the server's
// own commands, its log messages in the output channel) is vscode-languageclient's standard
// handling, except the progress of a recording or a profiled test: see `RECORD_PROGRESS`.

import * as fs from "node:fs";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  ResponseError,
  State,
  WorkDoneProgressCancelNotification,
} from "vscode-languageclient/node";
import type { LanguageClientOptions, ServerOptions, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from "vscode-languageclient/node";
import { Notifications, errorSentence, parseChanged, parseOpenPanel } from "./protocol";
import type { ChangedParams, OpenPanelParams } from "./protocol";
import type { ServerPort } from "./router";
import { bundledServerPath, projectInterpreters, resolveServer } from "./serverPath";
import type { ServerLookup } from "./serverPath";
import { extensionSettings, serverSettings } from "./settings";
import { RUNS_WORKSPACE_CODE, selectedInterpreter, testSettings } from "./record";
import type { PythonExtensionApi } from "./record";
import type { ThemeKind } from "./placement";

export type ServerState = "starting" | "running" | "stopped" | "missing";

/**
 * The work-done progress tokens of `threadradar.record` (`threadradar/record/<n>`, lsp-server's
 * `server.rs`) and of `threadradar.profileTest` (`threadradar/test/<n>`, `server/testing.rs`).
 * vscode-languageclient shows server progress in the status bar (`ProgressLocation.Window`), where
 * VS Code draws no cancel button; their progress is shown as a notification instead, whose Cancel
 * sends `window/workDoneProgress/cancel`: the server stops the recording (or the test) and keeps
 * the run.
 */
const RECORD_PROGRESS = ["threadradar/record/", "threadradar/test/"];

function readText(p: string): string | undefined {
  try {
    return fs.readFileSync(p, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The server binary, found as `resolveServer` says: the setting, the bundled binary, the project's
 * Python environments (a `pip install threadradar`), PATH. Also for `threadradar doctor`.
 */
export async function locateServer(extensionPath: string | undefined): Promise<ServerLookup> {
  if (selectedPython === undefined) await refreshSelectedPython();
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  // An untrusted workspace's own environments (its pyproject's `python`, `.venv`, `venv`, and an
  // interpreter selected inside it) may hold any program named threadradar: only the setting,
  // the bundled binary and PATH are used until the workspace is trusted.
  const interpreters = vscode.workspace.isTrusted ? projectInterpreters(folder, selectedPython, process.env, readText) : [];
  const setting = extensionSettings(config()).serverPath;
  return resolveServer(setting, extensionPath === undefined ? undefined : bundledServerPath(extensionPath), process.env, isExecutable, process.platform, interpreters);
}

function isExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("threadradar");
}

export function themeKind(): ThemeKind {
  return vscode.window.activeColorTheme.kind as number as ThemeKind;
}

/** The interpreter the Python extension has selected (issue 19), when it is installed. */
let selectedPython: string | undefined;

/** The Python extension's exported API, activating it when needed; `undefined` without it. */
async function pythonApi(): Promise<unknown> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  return ext === undefined ? undefined : ext.isActive ? ext.exports : await ext.activate();
}

/** Asks the Python extension for its active environment; true when the answer changed. */
export async function refreshSelectedPython(): Promise<boolean> {
  const before = selectedPython;
  try {
    selectedPython = selectedInterpreter(await pythonApi(), vscode.workspace.workspaceFolders?.[0]?.uri);
  } catch {
    selectedPython = undefined;
  }
  return selectedPython !== before;
}

/**
 * Reads the Python extension's interpreter now and again whenever the user selects another one
 * (its `onDidChangeActiveEnvironmentPath`), calling `onChange` when it changed; the returned
 * disposable stops following.
 */
export async function followSelectedPython(onChange: () => unknown): Promise<vscode.Disposable> {
  if (await refreshSelectedPython()) await onChange();
  let api: unknown;
  try {
    api = await pythonApi();
  } catch {
    api = undefined;
  }
  const envs = (api as PythonExtensionApi | undefined)?.environments;
  if (envs === undefined || typeof envs.onDidChangeActiveEnvironmentPath !== "function") return new vscode.Disposable(() => undefined);
  const sub = envs.onDidChangeActiveEnvironmentPath(() => void refreshSelectedPython().then((changed) => (changed ? onChange() : undefined)));
  return new vscode.Disposable(() => void sub.dispose());
}

export function currentServerSettings(): Record<string, unknown> {
  return { ...serverSettings(config(), themeKind()), ...testSettings(vscode.workspace.isTrusted, selectedPython) };
}

export class ServerConnection implements ServerPort, vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private stateValue: ServerState = "stopped";
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly changedEmitter = new vscode.EventEmitter<ChangedParams>();
  private readonly openPanelEmitter = new vscode.EventEmitter<OpenPanelParams>();
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  /** The recordings' progress notifications, by token. */
  private readonly progress = new Map<string, { report(message: string): void; end(): void }>();
  /** Fires when the state changes (status bar, views). */
  readonly onDidChangeState = this.stateEmitter.event;
  /** `threadRadar/changed`. */
  readonly onChanged = this.changedEmitter.event;
  /** `threadRadar/openPanel`. */
  readonly onOpenPanel = this.openPanelEmitter.event;
  /** Fires each time a server has started and initialized. */
  readonly onReady = this.readyEmitter.event;
  /**
   * A saved `pyproject.toml` or `threadradar.toml`: the server hears of saves only of the
   * documents it is given (Python files), so it is told of this one and checks the configuration
   * again (a new mistake is said when it is made).
   */
  private readonly configSaves = vscode.workspace.onDidSaveTextDocument((doc) => {
    if (this.client === undefined || doc.uri.scheme !== "file" || !/(^|[\\/])(pyproject|threadradar)\.toml$/.test(doc.uri.fsPath)) return;
    void this.client.sendNotification("textDocument/didSave", { textDocument: { uri: doc.uri.toString() } });
  });

  constructor(
    private readonly output: vscode.LogOutputChannel,
    /** The extension's folder (a platform-specific .vsix carries the server in `server/`). */
    private readonly extensionPath?: string,
  ) {}

  get state(): ServerState {
    return this.stateValue;
  }

  /** Whether the running server sends `threadRadar/changed` (older servers do not). */
  get sendsChanges(): boolean {
    const exp: unknown = this.client?.initializeResult?.capabilities.experimental;
    const tr = (exp as { threadRadar?: { notifications?: unknown } } | undefined)?.threadRadar;
    return Array.isArray(tr?.notifications) && tr.notifications.includes(Notifications.changed);
  }

  private setState(s: ServerState): void {
    if (s === this.stateValue) return;
    this.stateValue = s;
    this.stateEmitter.fire(s);
  }

  /** Starts the server; never rejects (a failure is one message to the user). */
  start(): Promise<void> {
    if (this.starting === undefined) {
      this.starting = this.doStart().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private async doStart(): Promise<void> {
    if (this.client !== undefined) return;
    const lookup = await locateServer(this.extensionPath);
    if (!lookup.found) {
      this.setState("missing");
      this.output.error(lookup.message);
      void vscode.window.showErrorMessage(lookup.message, "Open Settings").then((pick) => {
        if (pick === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "threadradar.serverPath");
      });
      return;
    }
    this.setState("starting");
    this.output.info(`Using ${lookup.path} (${lookup.source})`);
    this.output.info(`Starting ${lookup.path} lsp`);
    const serverOptions: ServerOptions = { command: lookup.path, args: ["lsp"] };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", language: "python" }],
      initializationOptions: () => currentServerSettings(),
      // The program's output while recording arrives as `window/logMessage` (type Log), which
      // vscode-languageclient appends to this channel; so do the trace (no separate trace channel).
      outputChannel: this.output,
      middleware: {
        // An untrusted workspace's code is never run (capabilities.untrustedWorkspaces: limited).
        executeCommand: (command, args, next): unknown => {
          if (!vscode.workspace.isTrusted && RUNS_WORKSPACE_CODE.includes(command)) {
            void vscode.window.showWarningMessage("ThreadRadar: profiling runs this workspace's code: trust the workspace first (Workspaces: Manage Workspace Trust).");
            return undefined;
          }
          return next(command, args) as unknown;
        },
        handleWorkDoneProgress: (token, params, next) => {
          if (typeof token !== "string" || !RECORD_PROGRESS.some((p) => token.startsWith(p))) {
            next(token, params);
            return;
          }
          this.recordProgress(client, token, params);
          // vscode-languageclient's own part only cleans up on `end` (it never began).
          if (params.kind === "end") next(token, params);
        },
        workspace: {
          configuration: async (params, token, next): Promise<unknown[] | ResponseError> => {
            const result: unknown[] | ResponseError = await next(params, token);
            if (!Array.isArray(result)) return result;
            const values: unknown[] = result;
            return params.items.map((item, i): unknown => (item.section === "threadradar" ? currentServerSettings() : values[i]));
          },
        },
      },
    };
    const client = new LanguageClient("threadradar", "ThreadRadar", serverOptions, clientOptions);
    client.onNotification(Notifications.changed, (p: unknown) => {
      const c = parseChanged(p);
      if (c !== undefined) this.changedEmitter.fire(c);
    });
    client.onNotification(Notifications.openPanel, (p: unknown) => {
      const o = parseOpenPanel(p);
      if (o !== undefined) this.openPanelEmitter.fire(o);
    });
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Running) this.setState("running");
      else if (e.newState === State.Starting) this.setState("starting");
      else {
        // A server that ended cannot end its progress: close the notifications.
        this.endProgress();
        this.setState("stopped");
      }
    });
    this.client = client;
    try {
      await client.start();
      this.setState("running");
      this.readyEmitter.fire();
    } catch (e) {
      this.client = undefined;
      this.setState("stopped");
      const msg = `The ThreadRadar language server (${lookup.path}) could not be started: ${errorSentence(e)}`;
      this.output.error(msg);
      void vscode.window.showErrorMessage(msg);
      try {
        await client.dispose();
      } catch {
        // already gone
      }
    }
  }

  /** A recording's (or profiled test's) progress as a notification with a Cancel button (see `RECORD_PROGRESS`). */
  private recordProgress(client: LanguageClient, token: string, p: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd): void {
    if (p.kind === "begin") {
      // Reports and the end may come before VS Code runs the task: they are kept until it does.
      let message = p.message;
      let ended = false;
      let task: { report(m: string): void; resolve(): void } | undefined;
      this.progress.set(token, {
        report: (m) => {
          message = m;
          task?.report(m);
        },
        end: () => {
          ended = true;
          this.progress.delete(token);
          task?.resolve();
        },
      });
      void vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: p.title, cancellable: p.cancellable === true },
        (progress, cancel) =>
          new Promise<void>((resolve) => {
            if (ended) {
              resolve();
              return;
            }
            cancel.onCancellationRequested(() => {
              void client.sendNotification(WorkDoneProgressCancelNotification.type, { token }).catch(() => undefined);
            });
            task = { report: (m) => progress.report({ message: m }), resolve };
            if (message !== undefined) progress.report({ message });
          }),
      );
    } else if (p.kind === "report") {
      if (p.message !== undefined) this.progress.get(token)?.report(p.message);
    } else {
      this.progress.get(token)?.end();
    }
  }

  private endProgress(): void {
    for (const p of [...this.progress.values()]) p.end();
  }

  async stop(): Promise<void> {
    this.endProgress();
    const client = this.client;
    this.client = undefined;
    this.setState("stopped");
    if (client === undefined) return;
    try {
      await client.stop(2000);
    } catch (e) {
      this.output.warn(`Stopping the language server: ${errorSentence(e)}`);
    }
  }

  async restart(): Promise<void> {
    if (this.starting !== undefined) await this.starting;
    await this.stop();
    await this.start();
  }

  private async running(): Promise<LanguageClient> {
    if (this.starting !== undefined) await this.starting;
    const client = this.client;
    if (client === undefined || !client.isRunning()) {
      throw new Error(
        this.stateValue === "missing"
          ? "The ThreadRadar language server was not found: set threadradar.serverPath or put threadradar on PATH."
          : "The ThreadRadar language server is not running: run “ThreadRadar: Restart the Language Server”.",
      );
    }
    return client;
  }

  async sendRequest(method: string, params: unknown): Promise<unknown> {
    const client = await this.running();
    return client.sendRequest(method, params);
  }

  async executeCommand(command: string, arg?: unknown): Promise<unknown> {
    const client = await this.running();
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: arg === undefined ? [] : [arg] });
  }

  /** Sends the current settings (after a configuration or colour-theme change). */
  async sendSettings(): Promise<void> {
    const client = this.client;
    if (client === undefined || !client.isRunning()) return;
    try {
      await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { threadradar: currentServerSettings() } });
    } catch (e) {
      this.output.warn(`Sending the settings: ${errorSentence(e)}`);
    }
  }

  dispose(): void {
    this.configSaves.dispose();
    void this.stop();
    this.stateEmitter.dispose();
    this.changedEmitter.dispose();
    this.openPanelEmitter.dispose();
    this.readyEmitter.dispose();
  }
}
