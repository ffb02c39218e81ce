// The activity-bar views: runs, hot functions and classes, threads, and the comparison of two runs.
// Data from the server, labels from `views.ts` and `compare.ts`; every entry with a source location
// opens it.

import * as vscode from "vscode";
import type { ServerConnection } from "./client";
import { compareHeader, compareItems } from "./compare";
import type { CompareHeader, CompareItem } from "./compare";
import { Commands, Requests } from "./protocol";
import type { CompareResult, OverviewResult, RunsResult, ThreadsResult } from "./protocol";
import { runNodeView } from "./record";
import type { RunHistoryView } from "./record";
import { hotItems, runItems, threadItems } from "./views";
import type { HotItem, RunItem, ThreadItem } from "./views";

const HOT_TOP = 15;
/** What the Hot view leaves out: everything that is not the program's own code. */
export const HOT_FILTER = { hide_stdlib: true, hide_third_party: true } as const;

/** Common parts: refresh on demand, an error item instead of an exception. */
abstract class View<T> implements vscode.TreeDataProvider<T>, vscode.Disposable {
  protected readonly emitter = new vscode.EventEmitter<T | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;

  constructor(protected readonly server: ServerConnection) {}

  refresh(): void {
    this.emitter.fire(undefined);
  }

  abstract getTreeItem(element: T): vscode.TreeItem;
  abstract getChildren(element?: T): Promise<T[]>;

  dispose(): void {
    this.emitter.dispose();
  }
}

/** A run with its history (issue 19): test, outcome, label, pin, the previous run of its test. */
export type RunNode = RunItem & { history?: RunHistoryView };
export type { RunHistoryView };

export class RunsView extends View<RunNode> {
  getTreeItem(r: RunNode): vscode.TreeItem {
    const v = runNodeView(r);
    const item = new vscode.TreeItem(v.label, vscode.TreeItemCollapsibleState.None);
    item.description = v.description;
    const command = r.history?.command !== undefined && r.history.command !== "" ? `\n${r.history.command}` : "";
    const test = r.history?.test !== undefined ? `${r.history.test}: ${v.icon.words}\n` : "";
    const active = r.active ? "The active run (its figures are shown).\n" : "";
    const tooltip = `${test}${active}${r.tooltip}${command}`;
    item.tooltip = r.history?.outcome?.first_failure !== undefined ? `${tooltip}\nFirst failure: ${r.history.outcome.first_failure}` : tooltip;
    item.id = r.path;
    // A test run's icon is its outcome; the active run says "active" in its description.
    item.iconPath = new vscode.ThemeIcon(v.icon.id, v.icon.colour === "" ? undefined : new vscode.ThemeColor(v.icon.colour));
    item.contextValue = v.contextValue;
    item.command = { command: Commands.selectRunItem, title: "Show this run", arguments: [r] };
    return item;
  }

  async getChildren(element?: RunNode): Promise<RunNode[]> {
    if (element !== undefined || this.server.state !== "running") return [];
    try {
      const res = (await this.server.sendRequest(Requests.runs, {})) as RunsResult;
      const history = new Map(res.runs.map((r) => [r.path, (r as { history?: RunHistoryView }).history]));
      return runItems(res).map((i) => ({ ...i, history: history.get(i.path) }));
    } catch {
      return [];
    }
  }
}

export type HotNode = { group: "function" | "class"; label: string } | HotItem;

export class HotView extends View<HotNode> {
  private data: Promise<OverviewResult | undefined> | undefined;

  override refresh(): void {
    this.data = undefined;
    super.refresh();
  }

  private overview(): Promise<OverviewResult | undefined> {
    if (this.data === undefined) {
      this.data = (async () => {
        if (this.server.state !== "running") return undefined;
        try {
          // The program's own code (issue 32): neither the standard library nor site-packages
          // (pytest, pluggy, the program's dependencies); the overview panel shows everything.
          return (await this.server.sendRequest(Requests.overview, { top: HOT_TOP, ...HOT_FILTER })) as OverviewResult;
        } catch {
          return undefined;
        }
      })();
    }
    return this.data;
  }

  getTreeItem(n: HotNode): vscode.TreeItem {
    if ("group" in n) {
      const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group:${n.group}`;
      return item;
    }
    const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.None);
    item.description = n.description;
    item.tooltip = n.tooltip;
    item.id = n.key;
    item.iconPath = new vscode.ThemeIcon(n.kind === "class" ? "symbol-class" : "symbol-method");
    item.contextValue = "threadradar.artifact";
    item.command = { command: Commands.openArtifact, title: "Go to the declaration", arguments: [n] };
    return item;
  }

  async getChildren(element?: HotNode): Promise<HotNode[]> {
    if (element === undefined) {
      const ov = await this.overview();
      if (ov === undefined || (ov.functions.length === 0 && ov.classes.length === 0)) return [];
      return [
        { group: "function", label: "Functions and methods" },
        { group: "class", label: "Classes" },
      ];
    }
    if (!("group" in element)) return [];
    const ov = await this.overview();
    if (ov === undefined) return [];
    return hotItems(element.group === "class" ? ov.classes : ov.functions, HOT_TOP);
  }
}

export type ThreadNode = ThreadItem;

export class ThreadsView extends View<ThreadNode> {
  getTreeItem(t: ThreadNode): vscode.TreeItem {
    const item = new vscode.TreeItem(t.label, vscode.TreeItemCollapsibleState.None);
    item.description = t.description;
    item.tooltip = t.tooltip + "\nUncheck to exclude this thread from every figure (the thread filter).";
    item.id = `thread:${t.id}`;
    item.checkboxState = t.included ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked;
    item.iconPath = new vscode.ThemeIcon("debug-thread");
    item.contextValue = "threadradar.thread";
    if (t.file !== null && t.line > 0) {
      item.command = { command: Commands.openThread, title: "Go to where the thread started", arguments: [t] };
    }
    return item;
  }

  async getChildren(element?: ThreadNode): Promise<ThreadNode[]> {
    if (element !== undefined || this.server.state !== "running") return [];
    try {
      return threadItems((await this.server.sendRequest(Requests.threads, {})) as ThreadsResult);
    } catch {
      return [];
    }
  }
}

export type ComparisonNode = ({ header: true } & CompareHeader) | ({ header: false } & CompareItem);

/**
 * The comparison of two runs (`threadRadar/compare`), shown as the commands fetched it: a header
 * `<base> → <new>`, then one item per artifact. Empty (the welcome view) until a comparison is made.
 */
export class ComparisonView extends View<ComparisonNode> {
  private result: CompareResult | undefined;

  /** The comparison shown, if any. */
  get current(): CompareResult | undefined {
    return this.result;
  }

  show(result: CompareResult | undefined): void {
    this.result = result;
    this.refresh();
  }

  getTreeItem(n: ComparisonNode): vscode.TreeItem {
    const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.None);
    item.description = n.description;
    const tooltip = new vscode.MarkdownString(n.tooltip);
    // The names come from the profiled program: never trusted, no HTML, no command links.
    tooltip.isTrusted = false;
    tooltip.supportHtml = false;
    item.tooltip = tooltip;
    if (n.header) {
      item.id = "comparison:header";
      item.iconPath = new vscode.ThemeIcon("git-compare");
      item.contextValue = "threadradar.comparison.header";
      return item;
    }
    item.id = `comparison:${n.id}`;
    item.iconPath = new vscode.ThemeIcon(n.icon, n.colour === undefined ? undefined : new vscode.ThemeColor(n.colour));
    item.contextValue = "threadradar.comparison.artifact";
    if (n.target !== null) {
      item.command = { command: Commands.compareOpen, title: "Go to the declaration", arguments: [n] };
    }
    return item;
  }

  getChildren(element?: ComparisonNode): Promise<ComparisonNode[]> {
    const r = this.result;
    if (element !== undefined || r === undefined) return Promise.resolve([]);
    return Promise.resolve([{ header: true, ...compareHeader(r) }, ...compareItems(r).map((i) => ({ header: false as const, ...i }))]);
  }
}
