// Recording from the editor: "Record a Run…" (the active file, the test suite, a command line)
// and "Stop Recording"; the recording in progress, as `threadRadar/changed` says, drives the
// status bar and the `threadradar.recording` context key.

import * as vscode from "vscode";
import { config } from "./client";
import { Commands, Requests, ServerCommands } from "./protocol";
import type { RecordingInfo, RecordParams, SplitCommandResult } from "./protocol";
import { inputError, recordChoices } from "./record";
import { recordCommand } from "./settings";
import type { RunStatus } from "./statusBar";
import { command, isPythonEditor, setContext } from "./workbench";
import type { Workbench } from "./workbench";

export class Recorder {
  /** The recording in progress, as the server's last `threadRadar/changed` said. */
  private recording: RecordingInfo | null = null;
  private lastCustomCommand = "";

  constructor(
    private readonly w: Workbench,
    private readonly status: RunStatus,
  ) {
    setContext("threadradar.recording", false);
  }

  set(r: RecordingInfo | null): void {
    this.recording = r;
    this.status.setRecording(r);
    setContext("threadradar.recording", r !== null);
  }

  async record(): Promise<void> {
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
        value: this.lastCustomCommand,
        // The server splits the line (`threadRadar/splitCommand`), as it will when recording it.
        validateInput: async (t: string) => inputError(await this.split(t)),
      });
      if (text === undefined) return;
      if (inputError(await this.split(text)) !== undefined) return;
      this.lastCustomCommand = text;
      params = { ...params, command: text };
    }
    // The program runs from disk: unsaved edits of the file it runs would not be profiled.
    if (pick.choice.kind === "file" && python?.document.isDirty === true) await python.document.save();
    // The server answers at once, reports progress (its cancel button stops the recording and keeps
    // the run), passes the program's output on as log messages, and says when the run is written;
    // `threadRadar/changed` ("recording") drives the status bar.
    await this.w.server.executeCommand(ServerCommands.record, params);
  }

  private async split(line: string): Promise<SplitCommandResult> {
    return (await this.w.server.sendRequest(Requests.splitCommand, { line })) as SplitCommandResult;
  }

  async stop(): Promise<void> {
    if (this.recording === null) {
      void vscode.window.showInformationMessage("ThreadRadar is not recording anything.");
      return;
    }
    await this.w.server.executeCommand(ServerCommands.stopRecording);
    void vscode.window.setStatusBarMessage("ThreadRadar: stopping the recording; the run so far is kept", 4000);
  }
}

export function registerRecordCommands(recorder: Recorder): vscode.Disposable[] {
  return [command(Commands.recordRun, () => recorder.record()), command(Commands.stopRecording, () => recorder.stop())];
}
