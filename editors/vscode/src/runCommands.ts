// The commands on runs and threads: switch runs (quick pick, Runs view), delete, label and pin a
// run, the thread filter (quick pick, the Threads view's checkboxes).

import * as vscode from "vscode";
import { openLocation } from "./panels";
import { Commands, Requests, ServerCommands } from "./protocol";
import type { RunsResult, ThreadsResult } from "./protocol";
import type { RunNode, ThreadNode } from "./tree";
import { percent, runLabel, toggledFilter } from "./views";
import { command, guarded } from "./workbench";
import type { Workbench } from "./workbench";

async function setFilter(w: Workbench, exclude: number[]): Promise<void> {
  if (exclude.length === 0) await w.server.executeCommand(ServerCommands.clearThreadFilter);
  else await w.server.executeCommand(ServerCommands.setThreadFilter, { exclude });
  w.refresh(0);
}

async function pickRun(w: Workbench): Promise<void> {
  const runs = (await w.server.sendRequest(Requests.runs, {})) as RunsResult;
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
        label: `${r.path === runs.active ? "$(circle-filled)" : "$(circle-large-outline)"} ${runLabel(r.name)}`,
        description: r.path === runs.active ? "active" : "",
        detail: r.path,
        run: r.path,
      })),
  ];
  const pick = await vscode.window.showQuickPick(items, { title: "ThreadRadar: show which run?", matchOnDetail: true });
  if (pick === undefined) return;
  await w.server.executeCommand(ServerCommands.selectRun, pick.run === "newest" ? "newest" : { run: pick.run });
  w.refresh(0);
}

async function applyThreadFilter(w: Workbench): Promise<void> {
  const r = (await w.server.sendRequest(Requests.threads, {})) as ThreadsResult;
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
  await setFilter(w, picks.map((p) => p.id));
  void vscode.window.setStatusBarMessage(picks.length ? `ThreadRadar: ${picks.length} threads excluded` : "ThreadRadar: thread filter cleared", 4000);
}

async function deleteRun(w: Workbench, node?: RunNode): Promise<void> {
  if (node === undefined) return;
  const answer = await vscode.window.showWarningMessage(`Delete the run ${node.label}?`, { modal: true, detail: `${node.path} will be deleted from disk.` }, "Delete");
  if (answer !== "Delete") return;
  await w.server.executeCommand(ServerCommands.deleteRun, { run: node.path });
  w.refresh(0);
}

export function registerRunCommands(w: Workbench, threadsTree: vscode.TreeView<ThreadNode>): vscode.Disposable[] {
  return [
    threadsTree.onDidChangeCheckboxState(
      guarded(async (e: vscode.TreeCheckboxChangeEvent<ThreadNode>) => {
        const runs = (await w.server.sendRequest(Requests.runs, {})) as RunsResult;
        let exclude = runs.exclude_threads;
        for (const [node, state] of e.items) exclude = toggledFilter(exclude, node.id, state === vscode.TreeItemCheckboxState.Checked);
        try {
          await setFilter(w, exclude);
        } finally {
          w.threadsView.refresh();
        }
      }),
    ),
    command(Commands.pickRun, () => pickRun(w)),
    command(Commands.applyThreadFilter, () => applyThreadFilter(w)),
    command(Commands.clearThreadFilter, async () => {
      await setFilter(w, []);
      void vscode.window.setStatusBarMessage("ThreadRadar: thread filter cleared", 4000);
    }),
    command(Commands.selectRunItem, async (n?: RunNode) => {
      if (n === undefined) return pickRun(w);
      await w.server.executeCommand(ServerCommands.selectRun, { run: n.path });
      w.refresh(0);
    }),
    command(Commands.deleteRunItem, (n?: RunNode) => deleteRun(w, n)),
    // Issue 19: the run history's context menu.
    command(Commands.labelRunItem, async (n?: RunNode) => {
      if (n === undefined) return;
      const label = await vscode.window.showInputBox({ prompt: "Label of the run (empty: none). A labelled run is never pruned.", value: n.history?.label ?? "" });
      if (label === undefined) return;
      await w.server.sendRequest(Requests.runs, { label: { run: n.path, label } });
      w.refresh(0);
    }),
    command(Commands.pinRunItem, async (n?: RunNode) => {
      if (n === undefined) return;
      await w.server.sendRequest(Requests.runs, { pin: { run: n.path, pinned: n.history?.pinned !== true } });
      w.refresh(0);
    }),
    command(Commands.openThread, async (t?: ThreadNode) => {
      if (t !== undefined && t.file !== null && t.line > 0) await openLocation(t.file, t.line);
    }),
  ];
}
