// ThreadRadar for VS Code: a thin client of `threadradar lsp`. The server computes everything; this
// extension starts it, draws the glyphs beside the code, hosts the panels, offers the runs, hot
// artifacts, threads and the comparison of two runs in the activity bar, and records runs through
// the server (`threadradar.record`).

import * as vscode from "vscode";
import * as childProcess from "node:child_process";
import { ServerConnection, config, currentServerSettings, followSelectedPython, locateServer, refreshSelectedPython } from "./client";
import { doctorMarkdown, parseDoctor } from "./doctor";
import { GlyphDecorations } from "./decorations";
import { Panels, openLocation } from "./panels";
import { compareParams, runPicks, type CompareRuns } from "./compare";
import { Commands, Requests, ServerCommands, errorSentence, isMethodNotFound } from "./protocol";
import type { ArtifactAtResult, CompareResult, RecordingInfo, RecordParams, RunsResult, ThreadsResult } from "./protocol";
import { recordChoices, splitCommandLine } from "./record";
import { needsRestart, recordCommand } from "./settings";
import { RunStatus } from "./statusBar";
import { ComparisonView, HotView, RunsView, ThreadsView } from "./tree";
import type { ComparisonNode, HotNode, RunNode, ThreadNode } from "./tree";
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

/**
 * "ThreadRadar: Doctor": `threadradar doctor --json` in the workspace folder, shown as Markdown and
 * logged to the output channel. Its exit code is 1 when a check failed: the report is still read.
 */
async function runDoctor(extensionPath: string, output: vscode.LogOutputChannel): Promise<void> {
  const lookup = await locateServer(extensionPath);
  if (!lookup.found) throw new Error(lookup.message);
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const stdout = await new Promise<string>((resolve, reject) => {
    childProcess.execFile(lookup.path, ["doctor", "--json"], { cwd, timeout: 30_000 }, (err, out, errText) => {
      if (out.trim() !== "") resolve(out);
      else reject(new Error(`\`${lookup.path} doctor --json\` failed: ${(errText || (err?.message ?? "no output")).trim()}`));
    });
  });
  const report = parseDoctor(stdout);
  if (typeof report === "string") throw new Error(report);
  for (const c of report.checks) {
    const line = `doctor ${c.id}: ${c.summary}${c.next !== undefined ? ` Next: ${c.next}` : ""}`;
    if (c.status === "error") output.error(line);
    else if (c.status === "warn") output.warn(line);
    else output.info(line);
  }
  const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: doctorMarkdown(report, lookup.path, lookup.source) });
  await vscode.window.showTextDocument(doc, { preview: true });
}

/** Sets a context key for `when` clauses (menus, the command palette). */
function setContext(key: string, value: unknown): void {
  void vscode.commands.executeCommand("setContext", key, value);
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("ThreadRadar", { log: true });
  const server = new ServerConnection(output, context.extensionPath);
  running = server;
  const status = new RunStatus(server);
  const decorations = new GlyphDecorations(server, output);
  const runsView = new RunsView(server);
  const hotView = new HotView(server);
  const threadsView = new ThreadsView(server);
  const comparisonView = new ComparisonView(server);
  let lastRuns: RunsResult | undefined;
  /** The recording in progress, as the server's last `threadRadar/changed` said. */
  let recording: RecordingInfo | null = null;
  let compareLevel: "function" | "class" = "function";
  let lastCustomCommand = "";
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
  const comparisonTree = vscode.window.createTreeView("threadradar.comparison", { treeDataProvider: comparisonView });

  const setRecording = (r: RecordingInfo | null): void => {
    recording = r;
    status.setRecording(r);
    setContext("threadradar.recording", r !== null);
  };
  setContext("threadradar.recording", false);
  setContext("threadradar.compareLevel", compareLevel);

  const recordRun = async (): Promise<void> => {
    const editor = vscode.window.activeTextEditor;
    const python = isPythonEditor(editor) && editor.document.uri.fsPath.endsWith(".py") ? editor : undefined;
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
    const choices = recordChoices({ recordCommand: recordCommand(config()), activeFile: python?.document.uri.fsPath, folders });
    const pick = await vscode.window.showQuickPick(
      choices.map((c) => ({ label: c.label, detail: c.detail, choice: c })),
      { title: "ThreadRadar: record a run of which program?", placeHolder: "The server records it; its output goes to the ThreadRadar output channel", matchOnDetail: true },
    );
    if (pick === undefined) return;
    let params: RecordParams = pick.choice.params;
    if (pick.choice.kind === "custom") {
      const text = await vscode.window.showInputBox({
        title: "ThreadRadar: record a run of",
        prompt: "The program and its arguments, quoted as on a shell command line (no pipes, redirections or variables)",
        placeHolder: "python3 app.py --workers 4",
        value: lastCustomCommand,
        validateInput: (t: string) => {
          const r = splitCommandLine(t);
          if (!r.ok) return r.error;
          return r.args.length === 0 ? "Type the program to record and its arguments." : undefined;
        },
      });
      if (text === undefined) return;
      const words = splitCommandLine(text);
      if (!words.ok || words.args.length === 0) return;
      lastCustomCommand = text;
      params = { ...params, command: words.args };
    }
    // The program runs from disk: unsaved edits of the file it runs would not be profiled.
    if (pick.choice.kind === "file" && python?.document.isDirty === true) await python.document.save();
    // The server answers at once, reports progress (its cancel button stops the recording and keeps
    // the run), passes the program's output on as log messages, and says when the run is written;
    // `threadRadar/changed` ("recording") drives the status bar.
    await server.executeCommand(ServerCommands.record, params);
  };

  const stopRecording = async (): Promise<void> => {
    if (recording === null) {
      void vscode.window.showInformationMessage("ThreadRadar is not recording anything.");
      return;
    }
    await server.executeCommand(ServerCommands.stopRecording);
    void vscode.window.setStatusBarMessage("ThreadRadar: stopping the recording; the run so far is kept", 4000);
  };

  // The runs of the comparison shown (a level switch asks for the same ones, sets included).
  let comparedRuns: CompareRuns = {};
  const compare = async (runs: CompareRuns): Promise<void> => {
    let result: CompareResult;
    try {
      result = (await server.sendRequest(Requests.compare, compareParams(runs, compareLevel))) as CompareResult;
    } catch (e) {
      if (isMethodNotFound(e)) throw new Error("this ThreadRadar language server cannot compare runs: update it (threadRadar/compare)");
      throw e;
    }
    comparedRuns = runs;
    comparisonView.show(result);
    void vscode.commands.executeCommand("threadradar.comparison.focus");
  };

  const compareRuns = async (): Promise<void> => {
    const runs = (await server.sendRequest(Requests.runs, {})) as RunsResult;
    if (runs.runs.length < 2) {
      void vscode.window.showInformationMessage("Comparing needs two runs: record another one (e.g. after a fix) with “ThreadRadar: Record a Run…”.");
      return;
    }
    // Several runs per side form a run set (e.g. 5 runs before a fix and 5 after): each change is
    // then tested against the sets' own spread.
    const base = await vscode.window.showQuickPick(runPicks(runs), {
      title: "ThreadRadar: compare — the base run(s) (before; pick several for a run set)",
      matchOnDetail: true,
      canPickMany: true,
    });
    if (base === undefined || base.length === 0) return;
    const names = base.map((b) => b.label).join(", ");
    const next = await vscode.window.showQuickPick(runPicks(runs, base.length === 1 ? base[0]?.path : undefined), {
      title: `ThreadRadar: compare ${names} with which run(s) (after; pick several for a run set)?`,
      matchOnDetail: true,
      canPickMany: true,
    });
    if (next === undefined || next.length === 0) return;
    await compare({ base: base.map((b) => b.path), new: next.map((n) => n.path) });
  };

  const setCompareLevel = async (level: "function" | "class"): Promise<void> => {
    const previous = compareLevel;
    compareLevel = level;
    setContext("threadradar.compareLevel", level);
    const shown = comparisonView.current;
    if (shown === undefined) return;
    try {
      await compare(shown.significance !== null ? comparedRuns : { base: shown.base.path ?? undefined, new: shown.new.path ?? undefined });
    } catch (e) {
      // The view still shows the other level (e.g. a run of it was deleted): say so, keep the switch in step.
      compareLevel = previous;
      setContext("threadradar.compareLevel", previous);
      throw e;
    }
  };

  const setFilter = async (exclude: number[]): Promise<void> => {
    if (exclude.length === 0) await server.executeCommand(ServerCommands.clearThreadFilter);
    else await server.executeCommand(ServerCommands.setThreadFilter, { exclude });
    refresh(0);
  };

  const pickRun = async (): Promise<void> => {
    const runs = (await server.sendRequest(Requests.runs, {})) as RunsResult;
    if (runs.runs.length === 0) {
      void vscode.window.showInformationMessage("There is no run in .threadradar/runs yet: record one with “ThreadRadar: Record a Run…” (or `threadradar record -- python3 app.py` in a terminal).");
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
    // The server finds the innermost profiled function (else class) around the cursor with
    // tree-sitter on the buffer as it is now.
    const pos = editor.selection.active;
    let at: ArtifactAtResult | undefined;
    try {
      at = (await server.sendRequest(Requests.artifactAt, { uri: editor.document.uri.toString(), line: pos.line, character: pos.character })) as ArtifactAtResult;
    } catch (e) {
      void vscode.window.showErrorMessage(`ThreadRadar: ${errorSentence(e)}`);
      return;
    }
    const hit = at.function ?? at.class;
    if (hit === null) {
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
    comparisonView,
    comparisonTree,
    { dispose: () => timer !== undefined && clearTimeout(timer) },
    server.onChanged((c) => {
      if (c.recording !== undefined) setRecording(c.recording);
      refresh();
    }),
    server.onReady(() => refresh(0)),
    server.onDidChangeState(() => {
      // A recording belongs to the server process: none survives a restart.
      if (server.state !== "running") setRecording(null);
      status.show(server.state === "running" ? lastRuns : undefined);
      if (server.state !== "running") refresh(0);
    }),
    server.onOpenPanel((p) =>
      p.panel === "overview"
        ? panels.showOverview(p.file)
        : p.panel === "timeline"
          ? panels.showTimeline(p.artifact)
          : p.panel === "sections"
            ? panels.showSections(p.section)
            : panels.showDetail(p.artifact),
    ),
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
    vscode.commands.registerCommand(Commands.doctor, guarded(() => runDoctor(context.extensionPath, output))),
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
    // Issue 19: the run history's context menu.
    vscode.commands.registerCommand(
      Commands.labelRunItem,
      guarded(async (n?: RunNode) => {
        if (n === undefined) return;
        const label = await vscode.window.showInputBox({ prompt: "Label of the run (empty: none). A labelled run is never pruned.", value: n.history?.label ?? "" });
        if (label === undefined) return;
        await server.sendRequest(Requests.runs, { label: { run: n.path, label } });
        refresh(0);
      }),
    ),
    vscode.commands.registerCommand(
      Commands.pinRunItem,
      guarded(async (n?: RunNode) => {
        if (n === undefined) return;
        await server.sendRequest(Requests.runs, { pin: { run: n.path, pinned: n.history?.pinned !== true } });
        refresh(0);
      }),
    ),
    vscode.commands.registerCommand(
      Commands.compareRunItemWithPrevious,
      guarded(async (n?: RunNode) => {
        if (n?.history?.previous === undefined) return;
        await compare({ base: n.history.previous, new: n.path });
      }),
    ),
    vscode.commands.registerCommand(
      Commands.openArtifact,
      guarded(async (n?: HotNode) => {
        if (n !== undefined && "key" in n) await server.executeCommand(ServerCommands.goTo, { artifact: n.key });
      }),
    ),
    vscode.commands.registerCommand(Commands.recordRun, guarded(recordRun)),
    vscode.commands.registerCommand(Commands.stopRecording, guarded(stopRecording)),
    vscode.commands.registerCommand(Commands.compareWithPrevious, guarded(() => compare({}))),
    vscode.commands.registerCommand(Commands.compareRuns, guarded(compareRuns)),
    // The comparison shown in the view (else the active run and the one before) as mirrored traces.
    vscode.commands.registerCommand(
      Commands.compareAsTraces,
      guarded(() => {
        const shown = comparisonView.current;
        panels.showTraceCompare(shown?.base.path ?? undefined, shown?.new.path ?? undefined);
        return Promise.resolve();
      }),
    ),
    vscode.commands.registerCommand(Commands.compareShowClasses, guarded(() => setCompareLevel("class"))),
    vscode.commands.registerCommand(Commands.compareShowFunctions, guarded(() => setCompareLevel("function"))),
    vscode.commands.registerCommand(
      Commands.compareOpen,
      guarded(async (n?: ComparisonNode) => {
        if (n !== undefined && !n.header && n.target !== null) await openLocation(n.target.file, n.target.line);
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
