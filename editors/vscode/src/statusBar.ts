// The status-bar item: the active run (samples, threads), a click switches runs; while a recording
// started from the editor runs, the recording, a click stops it.

import * as vscode from "vscode";
import type { ServerConnection } from "./client";
import type { RecordingInfo, RunsResult } from "./protocol";
import { outcomeWords } from "./record";
import type { RunHistoryView } from "./record";
import { statusView } from "./views";

export class RunStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("threadradar.run", vscode.StatusBarAlignment.Left, 10);
  private runs: RunsResult | undefined;
  private recording: RecordingInfo | null = null;

  constructor(private readonly server: ServerConnection) {
    this.item.name = "ThreadRadar run";
    this.show(undefined);
    this.item.show();
  }

  show(runs: RunsResult | undefined): void {
    this.runs = runs;
    this.render();
  }

  /** The recording in progress (`null`: none), from `threadRadar/changed`. */
  setRecording(recording: RecordingInfo | null): void {
    this.recording = recording;
    this.render();
  }

  private render(): void {
    const v = statusView(this.runs, this.server.state, this.recording);
    // The active run of a profiled test: its outcome (issue 19).
    const active = this.recording === null ? this.runs?.runs.find((r) => r.path === this.runs?.active) : undefined;
    const h = (active as { history?: RunHistoryView } | undefined)?.history;
    const outcome = h?.test !== undefined ? ` · ${outcomeWords(h.outcome)}` : "";
    this.item.text = v.text + outcome;
    this.item.tooltip = h?.test !== undefined ? `${v.tooltip}\n${h.test}: ${outcomeWords(h.outcome)}` : v.tooltip;
    this.item.command = v.command;
  }

  dispose(): void {
    this.item.dispose();
  }
}
