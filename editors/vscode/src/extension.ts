// ThreadRadar for VS Code: a thin client of `threadradar lsp`. The server computes everything; this
// extension starts it, draws the glyphs beside the code, hosts the panels, and offers the runs,
// hot artifacts and threads in the activity bar.

import * as vscode from "vscode";
import { ServerConnection, config, currentServerSettings } from "./client";
import { GlyphDecorations } from "./decorations";
import { Panels, openLocation } from "./panels";
import { enclosingArtifact } from "./placement";
import { Commands, Requests, ServerCommands, errorSentence, isMethodNotFound } from "./protocol";
import type { DocumentArtifact, DocumentArtifactsResult, RunsResult, ThreadsResult } from "./protocol";
import { needsRestart } from "./settings";
import { RunStatus } from "./statusBar";
import { HotView, RunsView, ThreadsView } from "./tree";
import type { HotNode, RunNode, ThreadNode } from "./tree";
import { percent, runLabel, toggledFilter } from "./views";

/** Runs a command body; a failure is one error message, never an unhandled rejection. */
function guarded<A extends unknown[]>(body: (...args: A) => unknown): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await body(...args);
    } catch (e) {
      void vscode.window.showErrorMessage(errorSentence(e));
    }
  };
}

function isPythonEditor(e: vscode.TextEditor | undefined): e is vscode.TextEditor {
  return e !== undefined && e.document.languageId === "python" && e.document.uri.scheme === "file";
}

let running: ServerConnection | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("ThreadRadar", { log: true });
  const server = new ServerConnection(output);
  running = server;
  const status = new RunStatus(server);
  const decorations = new GlyphDecorations(server, output);
  const runsView = new RunsView(server);
  const hotView = new HotView(server);
  const threadsView = new ThreadsView(server);
  let lastRuns: RunsResult | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const refreshNow = async (): Promise<void> => {
    if (server.state === "running") {
      try {
        lastRuns = (await server.sendRequest(Requests.runs, {})) as RunsResult;
      } catch (e) {
        output.warn(`Runs: ${errorSentence(e)}`);
        lastRuns = undefined;
      }
    } else {
      lastRuns = undefined;
    }
    status.show(lastRuns);
    runsView.refresh();
    hotView.refresh();
    threadsView.refresh();
    decorations.schedule(0);
    panels.refresh();
  };
  /** Refreshes everything shortly (bursts of changes coalesce). */
  const refresh = (ms = 150): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void refreshNow();
    }, ms);
  };
  const panels = new Panels(context.extensionUri, server, () => refresh());

  const runsTree = vscode.window.createTreeView("threadradar.runs", { treeDataProvider: runsView });
  const hotTree = vscode.window.createTreeView("threadradar.hot", { treeDataProvider: hotView });
  const threadsTree = vscode.window.createTreeView("threadradar.threads", { treeDataProvider: threadsView, manageCheckboxStateManually: true });

  const setFilter = async (exclude: number[]): Promise<void> => {
    if (exclude.length === 0) await server.executeCommand(ServerCommands.clearThreadFilter);
    else await server.executeCommand(ServerCommands.setThreadFilter, { exclude });
    refresh(0);
  };

  const documentArtifacts = async (doc: vscode.TextDocument): Promise<Pick<DocumentArtifact, "key" | "line">[]> => {
    try {
      const r = (await server.sendRequest(Requests.documentArtifacts, { uri: doc.uri.toString() })) as DocumentArtifactsResult;
      return r.artifacts;
    } catch (e) {
      if (!isMethodNotFound(e)) throw e;
      // An older server: the inlay hints carry the same keys on the same lines.
      const end = doc.lineAt(doc.lineCount - 1).range.end;
      const hints = (await server.sendRequest("textDocument/inlayHint", {
        textDocument: { uri: doc.uri.toString() },
        range: { start: { line: 0, character: 0 }, end: { line: end.line, character: end.character } },
      })) as { position: { line: number }; data?: { artifact?: unknown } }[] | null;
      return (hints ?? []).flatMap((h) => (typeof h.data?.artifact === "string" ? [{ key: h.data.artifact, line: h.position.line }] : []));
    }
  };

  const pickRun = async (): Promise<void> => {
    const runs = (await server.sendRequest(Requests.runs, {})) as RunsResult;
    if (runs.runs.length === 0) {
      void vscode.window.showInformationMessage("There is no run in .threadradar/runs yet: record one with `threadradar record -- python3 app.py`.");
      return;
    }
    type Pick = vscode.QuickPickItem & { run: string };
    const items: Pick[] = [
      { label: "$(history) Newest run", description: runs.pinned ? "follow new runs again" : "followed now", run: "newest" },
      ...[...runs.runs]
        .sort((a, b) => b.name.localeCompare(a.name))
        .map((r) => ({
          label: `${r.path === runs.active ? "$(pass-filled)" : "$(circle-large-outline)"} ${runLabel(r.name)}`,
          description: r.path === runs.active ? "active" : "",
          detail: r.path,
          run: r.path,
        })),
    ];
    const pick = await vscode.window.showQuickPick(items, { title: "ThreadRadar: show which run?", matchOnDetail: true });
    if (pick === undefined) return;
    await server.executeCommand(ServerCommands.selectRun, pick.run === "newest" ? "newest" : { run: pick.run });
    refresh(0);
  };

  const applyThreadFilter = async (): Promise<void> => {
    const r = (await server.sendRequest(Requests.threads, {})) as ThreadsResult;
    type Pick = vscode.QuickPickItem & { id: number };
    const items: Pick[] = [...r.threads]
      .sort((a, b) => a.id - b.id)
      .map((t) => ({ label: t.name, description: `${t.type} · ${t.excluded ? "excluded" : percent(t.crt)}`, picked: t.excluded, id: t.id }));
    const picks = await vscode.window.showQuickPick(items, {
      title: "ThreadRadar: exclude which threads from every figure?",
      placeHolder: "Check the threads to exclude; none clears the filter",
      canPickMany: true,
    });
    if (picks === undefined) return;
    await setFilter(picks.map((p) => p.id));
    void vscode.window.setStatusBarMessage(picks.length ? `ThreadRadar: ${picks.length} threads excluded` : "ThreadRadar: thread filter cleared", 4000);
  };

  const showDetailAtCursor = async (): Promise<void> => {
    const editor = vscode.window.activeTextEditor;
    if (!isPythonEditor(editor)) {
      void vscode.window.showInformationMessage("Put the cursor inside a profiled function or class of a Python file first.");
      return;
    }
    const artifacts = await documentArtifacts(editor.document);
    const lines = Array.from({ length: editor.document.lineCount }, (_, i) => editor.document.lineAt(i).text);
    const hit = enclosingArtifact(artifacts, lines, editor.selection.active.line);
    if (hit === undefined) {
      void vscode.window.showInformationMessage("The cursor is not inside a function or class that the current run profiled.");
      return;
    }
    panels.showDetail(hit.key);
  };

  const goToHottest = async (kind: "function" | "class"): Promise<void> => {
    // The server opens the declaration itself (window/showDocument).
    await server.executeCommand(ServerCommands.goToHottest, { kind });
  };

  const deleteRun = async (node?: RunNode): Promise<void> => {
    if (node === undefined) return;
    const answer = await vscode.window.showWarningMessage(
      `Delete the run ${node.label}?`,
      { modal: true, detail: `${node.path} will be deleted from disk.` },
      "Delete",
    );
    if (answer !== "Delete") return;
    await server.executeCommand(ServerCommands.deleteRun, { run: node.path });
    refresh(0);
  };

  context.subscriptions.push(
    output,
    server,
    status,
    decorations,
    panels,
    runsView,
    hotView,
    threadsView,
    runsTree,
    hotTree,
    threadsTree,
    { dispose: () => timer !== undefined && clearTimeout(timer) },
    server.onChanged(() => refresh()),
    server.onReady(() => refresh(0)),
    server.onDidChangeState(() => {
      status.show(server.state === "running" ? lastRuns : undefined);
      if (server.state !== "running") refresh(0);
    }),
    server.onOpenPanel((p) => (p.panel === "overview" ? panels.showOverview(p.file) : panels.showDetail(p.artifact))),
    threadsTree.onDidChangeCheckboxState(
      guarded(async (e: vscode.TreeCheckboxChangeEvent<ThreadNode>) => {
        const runs = (await server.sendRequest(Requests.runs, {})) as RunsResult;
        let exclude = runs.exclude_threads;
        for (const [node, state] of e.items) exclude = toggledFilter(exclude, node.id, state === vscode.TreeItemCheckboxState.Checked);
        try {
          await setFilter(exclude);
        } finally {
          threadsView.refresh();
        }
      }),
    ),
    vscode.workspace.onDidChangeConfiguration(
      guarded(async (e: vscode.ConfigurationChangeEvent) => {
        if (!e.affectsConfiguration("threadradar")) return;
        if (needsRestart((s) => e.affectsConfiguration(s))) {
          await server.restart();
          return;
        }
        await server.sendSettings();
        refresh();
      }),
    ),
    vscode.window.onDidChangeActiveColorTheme(
      guarded(async () => {
        if (config().get("glyphTheme") !== "auto") return;
        await server.sendSettings();
        panels.refresh();
      }),
    ),
    vscode.commands.registerCommand(Commands.showOverview, guarded((arg?: { file?: string }) => panels.showOverview(arg?.file ?? null))),
    vscode.commands.registerCommand(Commands.showDetailAtCursor, guarded(showDetailAtCursor)),
    vscode.commands.registerCommand(Commands.showDetailOf, guarded((n?: HotNode) => n !== undefined && "key" in n && panels.showDetail(n.key))),
    vscode.commands.registerCommand(Commands.pickRun, guarded(pickRun)),
    vscode.commands.registerCommand(Commands.applyThreadFilter, guarded(applyThreadFilter)),
    vscode.commands.registerCommand(
      Commands.clearThreadFilter,
      guarded(async () => {
        await setFilter([]);
        void vscode.window.setStatusBarMessage("ThreadRadar: thread filter cleared", 4000);
      }),
    ),
    vscode.commands.registerCommand(Commands.goToHottest, guarded(() => goToHottest("function"))),
    vscode.commands.registerCommand(Commands.goToHottestClass, guarded(() => goToHottest("class"))),
    vscode.commands.registerCommand(Commands.restartServer, guarded(() => server.restart())),
    vscode.commands.registerCommand(Commands.refreshViews, guarded(() => refreshNow())),
    vscode.commands.registerCommand(
      Commands.selectRunItem,
      guarded(async (n?: RunNode) => {
        if (n === undefined) return pickRun();
        await server.executeCommand(ServerCommands.selectRun, { run: n.path });
        refresh(0);
      }),
    ),
    vscode.commands.registerCommand(Commands.deleteRunItem, guarded(deleteRun)),
    vscode.commands.registerCommand(
      Commands.openArtifact,
      guarded(async (n?: HotNode) => {
        if (n !== undefined && "key" in n) await server.executeCommand(ServerCommands.goTo, { artifact: n.key });
      }),
    ),
    vscode.commands.registerCommand(
      Commands.openThread,
      guarded(async (t?: ThreadNode) => {
        if (t !== undefined && t.file !== null && t.line > 0) await openLocation(t.file, t.line);
      }),
    ),
  );

  // Servers without `threadRadar/changed` (older builds): follow the runs directories ourselves.
  const watcher = vscode.workspace.createFileSystemWatcher("**/.threadradar/runs/*.json");
  const onRunFiles = (): void => {
    if (!server.sendsChanges) refresh(Number(currentServerSettings().pollMs) + 300);
  };
  context.subscriptions.push(watcher, watcher.onDidCreate(onRunFiles), watcher.onDidDelete(onRunFiles), watcher.onDidChange(onRunFiles));

  void server.start();
}

/** Stops the language server (VS Code waits for the promise). */
export function deactivate(): Promise<void> | undefined {
  const server = running;
  running = undefined;
  return server?.stop();
}
