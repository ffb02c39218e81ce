// Comparing runs: with the previous run, two picked runs or run sets, a run of a test with its
// previous run, at the function or class level; as mirrored traces in the Trace compare tab.

import * as vscode from "vscode";
import { compareParams, runPicks, type CompareRuns } from "./compare";
import { openLocation } from "./panels";
import { Commands, Requests, isMethodNotFound } from "./protocol";
import type { CompareResult, RunsResult } from "./protocol";
import type { ComparisonNode, RunNode } from "./tree";
import { command, setContext } from "./workbench";
import type { Workbench } from "./workbench";

class Comparer {
  private level: "function" | "class" = "function";
  /** The runs of the comparison shown (a level switch asks for the same ones, sets included). */
  private runs: CompareRuns = {};

  constructor(private readonly w: Workbench) {
    setContext("threadradar.compareLevel", this.level);
  }

  async compare(runs: CompareRuns): Promise<void> {
    let result: CompareResult;
    try {
      result = (await this.w.server.sendRequest(Requests.compare, compareParams(runs, this.level))) as CompareResult;
    } catch (e) {
      if (isMethodNotFound(e)) throw new Error("this ThreadRadar language server cannot compare runs: update it (threadRadar/compare)");
      throw e;
    }
    this.runs = runs;
    this.w.comparisonView.show(result);
    void vscode.commands.executeCommand("threadradar.comparison.focus");
  }

  async pickAndCompare(): Promise<void> {
    const runs = (await this.w.server.sendRequest(Requests.runs, {})) as RunsResult;
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
    await this.compare({ base: base.map((b) => b.path), new: next.map((n) => n.path) });
  }

  async setLevel(level: "function" | "class"): Promise<void> {
    const previous = this.level;
    this.level = level;
    setContext("threadradar.compareLevel", level);
    const shown = this.w.comparisonView.current;
    if (shown === undefined) return;
    try {
      await this.compare(shown.significance !== null ? this.runs : { base: shown.base.path ?? undefined, new: shown.new.path ?? undefined });
    } catch (e) {
      // The view still shows the other level (e.g. a run of it was deleted): say so, keep the switch in step.
      this.level = previous;
      setContext("threadradar.compareLevel", previous);
      throw e;
    }
  }
}

export function registerCompareCommands(w: Workbench): vscode.Disposable[] {
  const c = new Comparer(w);
  return [
    command(Commands.compareWithPrevious, () => c.compare({})),
    command(Commands.compareRuns, () => c.pickAndCompare()),
    command(Commands.compareRunItemWithPrevious, async (n?: RunNode) => {
      if (n?.history?.previous === undefined) return;
      await c.compare({ base: n.history.previous, new: n.path });
    }),
    // The comparison shown in the view (else the active run and the one before) as mirrored traces.
    command(Commands.compareAsTraces, () => {
      const shown = w.comparisonView.current;
      w.panels.showTraceCompare(shown?.base.path ?? undefined, shown?.new.path ?? undefined);
    }),
    command(Commands.compareShowClasses, () => c.setLevel("class")),
    command(Commands.compareShowFunctions, () => c.setLevel("function")),
    command(Commands.compareOpen, async (n?: ComparisonNode) => {
      if (n !== undefined && !n.header && n.target !== null) await openLocation(n.target.file, n.target.line);
    }),
  ];
}
