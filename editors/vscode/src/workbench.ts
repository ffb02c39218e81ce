// What the extension's parts share once it is activated: the server connection, the panels, the
// activity-bar views and the refresh that brings them in step with the server. `activate` builds
// one `Workbench`; each `*Commands.ts` registers its commands on it.

import * as vscode from "vscode";
import type { ServerConnection } from "./client";
import type { Panels } from "./panels";
import { errorSentence } from "./protocol";
import type { ComparisonView, HotView, RunsView, ThreadsView } from "./tree";

export interface Workbench {
  context: vscode.ExtensionContext;
  output: vscode.LogOutputChannel;
  server: ServerConnection;
  panels: Panels;
  runsView: RunsView;
  hotView: HotView;
  threadsView: ThreadsView;
  comparisonView: ComparisonView;
  /** Refreshes every view shortly (bursts of changes coalesce); `0`: at once. */
  refresh(ms?: number): void;
  /** Refreshes every view now. */
  refreshNow(): Promise<void>;
}

/** Runs a command body; a failure is one error message, never an unhandled rejection. */
export function guarded<A extends unknown[]>(body: (...args: A) => unknown): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await body(...args);
    } catch (e) {
      void vscode.window.showErrorMessage(errorSentence(e));
    }
  };
}

/** Registers `body` as command `id`, guarded. */
export function command(id: string, body: (...args: never[]) => unknown): vscode.Disposable {
  return vscode.commands.registerCommand(id, guarded(body));
}

export function isPythonEditor(e: vscode.TextEditor | undefined): e is vscode.TextEditor {
  return e !== undefined && e.document.languageId === "python" && e.document.uri.scheme === "file";
}

/** Sets a context key for `when` clauses (menus, the command palette). */
export function setContext(key: string, value: unknown): void {
  void vscode.commands.executeCommand("setContext", key, value);
}
