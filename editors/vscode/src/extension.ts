// ThreadRadar for VS Code: a thin client of `threadradar lsp`. The server computes everything; this
// extension starts it, draws the glyphs beside the code, hosts the panels, offers the runs, hot
// artifacts, threads and the comparison of two runs in the activity bar, and records runs through
// the server (`threadradar.record`). `activate` wires the parts: the commands live in
// `viewCommands.ts`, `runCommands.ts`, `compareCommands.ts` and `recordCommands.ts`.

import * as vscode from "vscode";
import { ServerConnection, config, currentServerSettings, followSelectedPython, refreshSelectedPython } from "./client";
import { registerCompareCommands } from "./compareCommands";
import { GlyphDecorations } from "./decorations";
import { Panels } from "./panels";
import { Commands, Requests, errorSentence } from "./protocol";
import type { RunsResult } from "./protocol";
import { Recorder, registerRecordCommands } from "./recordCommands";
import { registerRunCommands } from "./runCommands";
import { needsRestart } from "./settings";
import { RunStatus } from "./statusBar";
import { ComparisonView, HotView, RunsView, ThreadsView } from "./tree";
import { registerViewCommands } from "./viewCommands";
import { command, guarded } from "./workbench";
import type { Workbench } from "./workbench";

let running: ServerConnection | undefined;

/**
 * The refresh of every view: the run list for the status bar, the trees, the glyphs and the open
 * panels. A switch of the active run reloads the panels (each of their tabs shows one run); any
 * other change only refreshes their figures.
 */
class Refresher implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;
  lastRuns: RunsResult | undefined;
  /** The active run the panels show (`undefined`: not known yet). */
  private shownRun: string | null | undefined;

  constructor(
    private readonly parts: Omit<Workbench, "refresh" | "refreshNow" | "context">,
    private readonly status: RunStatus,
    private readonly decorations: GlyphDecorations,
  ) {}

  async now(): Promise<void> {
    const { server, output, panels } = this.parts;
    if (server.state === "running") {
      try {
        this.lastRuns = (await server.sendRequest(Requests.runs, {})) as RunsResult;
      } catch (e) {
        output.warn(`Runs: ${errorSentence(e)}`);
        this.lastRuns = undefined;
      }
    } else {
      this.lastRuns = undefined;
    }
    this.status.show(this.lastRuns);
    this.parts.runsView.refresh();
    this.parts.hotView.refresh();
    this.parts.threadsView.refresh();
    this.decorations.schedule(0);
    const active = this.lastRuns?.active;
    if (active !== undefined && this.shownRun !== undefined && active !== this.shownRun) panels.runChanged();
    else panels.refresh();
    if (active !== undefined) this.shownRun = active;
  }

  /** Refreshes everything shortly (bursts of changes coalesce). */
  soon(ms = 150): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.now();
    }, ms);
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
  }
}

/** The server's notifications and the editor's events that call for a refresh or new settings. */
function watchChanges(w: Workbench, refresher: Refresher, recorder: Recorder, status: RunStatus): vscode.Disposable[] {
  const { server } = w;
  // Servers without `threadRadar/changed` (older builds): follow the runs directories ourselves.
  const watcher = vscode.workspace.createFileSystemWatcher("**/.threadradar/runs/*.json");
  const onRunFiles = (): void => {
    if (!server.sendsChanges) w.refresh(Number(currentServerSettings().pollMs) + 300);
  };
  return [
    watcher,
    watcher.onDidCreate(onRunFiles),
    watcher.onDidDelete(onRunFiles),
    watcher.onDidChange(onRunFiles),
    server.onChanged((c) => {
      if (c.recording !== undefined) recorder.set(c.recording);
      w.refresh();
    }),
    server.onReady(() => w.refresh(0)),
    server.onDidChangeState(() => {
      // A recording belongs to the server process: none survives a restart.
      if (server.state !== "running") recorder.set(null);
      status.show(server.state === "running" ? refresher.lastRuns : undefined);
      if (server.state !== "running") w.refresh(0);
    }),
    // Issue 19: the Python extension's interpreter and the workspace trust reach the server.
    vscode.workspace.onDidGrantWorkspaceTrust(() => refreshSelectedPython().then(() => server.sendSettings())),
    vscode.workspace.onDidChangeConfiguration(
      guarded(async (e: vscode.ConfigurationChangeEvent) => {
        if (!e.affectsConfiguration("threadradar")) return;
        if (needsRestart((s) => e.affectsConfiguration(s))) {
          await server.restart();
          return;
        }
        await server.sendSettings();
        w.refresh();
      }),
    ),
    vscode.window.onDidChangeActiveColorTheme(
      guarded(async () => {
        if (config().get("glyphTheme") !== "auto") return;
        await server.sendSettings();
        w.panels.refresh();
      }),
    ),
  ];
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("ThreadRadar", { log: true });
  const server = new ServerConnection(output, context.extensionPath);
  running = server;
  const status = new RunStatus(server);
  const decorations = new GlyphDecorations(server, output);
  const views = { runsView: new RunsView(server), hotView: new HotView(server), threadsView: new ThreadsView(server), comparisonView: new ComparisonView(server) };
  // The panels call back when their page switched the run or the filter: everything refreshes.
  const panels = new Panels(context.extensionUri, server, () => refresher.soon());
  const refresher = new Refresher({ output, server, panels, ...views }, status, decorations);
  const w: Workbench = { context, output, server, panels, ...views, refresh: (ms) => refresher.soon(ms), refreshNow: () => refresher.now() };
  const recorder = new Recorder(w, status);

  // In the order the activity bar lists them.
  const runsTree = vscode.window.createTreeView("threadradar.runs", { treeDataProvider: views.runsView });
  const hotTree = vscode.window.createTreeView("threadradar.hot", { treeDataProvider: views.hotView });
  // The Hot view lists the program's own code (issue 32); the overview panel lists everything.
  hotTree.description = "your code";
  const threadsTree = vscode.window.createTreeView("threadradar.threads", { treeDataProvider: views.threadsView, manageCheckboxStateManually: true });
  context.subscriptions.push(
    output,
    server,
    status,
    decorations,
    panels,
    ...Object.values(views),
    refresher,
    runsTree,
    hotTree,
    threadsTree,
    vscode.window.createTreeView("threadradar.comparison", { treeDataProvider: views.comparisonView }),
    ...watchChanges(w, refresher, recorder, status),
    ...registerViewCommands(w),
    ...registerRunCommands(w, threadsTree),
    ...registerCompareCommands(w),
    ...registerRecordCommands(recorder),
    command(Commands.restartServer, () => server.restart()),
  );

  void server.start();
  // The interpreter selected in the Python extension, when it is installed, now and whenever the
  // user selects another one (issue 19).
  void followSelectedPython(() => server.sendSettings()).then((d) => context.subscriptions.push(d));
}

/** Stops the language server (VS Code waits for the promise). */
export function deactivate(): Promise<void> | undefined {
  const server = running;
  running = undefined;
  return server?.stop();
}
