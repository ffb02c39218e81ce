// The status-bar item: the active run (samples, threads); a click switches runs.

import * as vscode from "vscode";
import type { ServerConnection } from "./client";
import { Commands } from "./protocol";
import type { RunsResult } from "./protocol";
import { statusView } from "./views";

export class RunStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("threadradar.run", vscode.StatusBarAlignment.Left, 10);

  constructor(private readonly server: ServerConnection) {
    this.item.name = "ThreadRadar run";
    this.item.command = Commands.pickRun;
    this.show(undefined);
    this.item.show();
  }

  show(runs: RunsResult | undefined): void {
    const v = statusView(runs, this.server.state);
    this.item.text = v.text;
    this.item.tooltip = v.tooltip;
  }

  dispose(): void {
    this.item.dispose();
  }
}
