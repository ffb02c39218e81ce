// The commands that open a view: the overview, the detail at the cursor or of a Hot entry, the
// Timeline, Waits and Sections tabs (issue 32: each view has a palette command), the hottest
// function or class, the Doctor report; and the server's `threadRadar/openPanel` (lenses).

import * as vscode from "vscode";
import * as childProcess from "node:child_process";
import { locateServer } from "./client";
import { doctorMarkdown, parseDoctor } from "./doctor";
import { Commands, Requests, ServerCommands, errorSentence } from "./protocol";
import type { ArtifactAtResult, OpenPanelParams } from "./protocol";
import type { HotNode } from "./tree";
import { command, isPythonEditor } from "./workbench";
import type { Workbench } from "./workbench";

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

async function showDetailAtCursor(w: Workbench): Promise<void> {
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
    at = (await w.server.sendRequest(Requests.artifactAt, { uri: editor.document.uri.toString(), line: pos.line, character: pos.character })) as ArtifactAtResult;
  } catch (e) {
    void vscode.window.showErrorMessage(`ThreadRadar: ${errorSentence(e)}`);
    return;
  }
  const hit = at.function ?? at.class;
  if (hit === null) {
    void vscode.window.showInformationMessage("The cursor is not inside a function or class that the current run profiled.");
    return;
  }
  w.panels.showDetail(hit.key);
}

/** The server's `threadRadar/openPanel` (a lens was clicked): the view it names. */
export function openPanel(w: Workbench, p: OpenPanelParams): void {
  switch (p.panel) {
    case "overview":
      w.panels.showOverview(p.file);
      return;
    case "timeline":
      w.panels.showTimeline(p.artifact);
      return;
    case "sections":
      w.panels.showSections(p.section);
      return;
    case "waits":
      w.panels.showWaits(p.object);
      return;
    case "detail":
      w.panels.showDetail(p.artifact);
      return;
  }
}

export function registerViewCommands(w: Workbench): vscode.Disposable[] {
  return [
    w.server.onOpenPanel((p) => openPanel(w, p)),
    command(Commands.showOverview, (arg?: { file?: string }) => w.panels.showOverview(arg?.file ?? null)),
    command(Commands.showDetailAtCursor, () => showDetailAtCursor(w)),
    command(Commands.showDetailOf, (n?: HotNode) => n !== undefined && "key" in n && w.panels.showDetail(n.key)),
    command(Commands.showTimeline, () => w.panels.showTimeline()),
    command(Commands.showWaits, () => w.panels.showWaits()),
    command(Commands.showSections, () => w.panels.showSections()),
    // The server opens the declaration itself (window/showDocument).
    command(Commands.goToHottest, () => w.server.executeCommand(ServerCommands.goToHottest, { kind: "function" })),
    command(Commands.goToHottestClass, () => w.server.executeCommand(ServerCommands.goToHottest, { kind: "class" })),
    command(Commands.doctor, () => runDoctor(w.context.extensionPath, w.output)),
    command(Commands.refreshViews, () => w.refreshNow()),
    command(Commands.openArtifact, async (n?: HotNode) => {
      if (n !== undefined && "key" in n) await w.server.executeCommand(ServerCommands.goTo, { artifact: n.key });
    }),
  ];
}
