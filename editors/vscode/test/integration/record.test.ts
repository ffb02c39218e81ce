// Recording through the real server as the extension asks for it: `threadradar.record` with the
// argument "ThreadRadar: Record a Run…" builds (record.ts), then `threadRadar/changed` while it runs
// and when it ends, the new run in the list, the program's output as log messages; a custom command
// line sent as typed (the server splits it; the prompt validates it with `threadRadar/splitCommand`), stopped with `threadradar.stopRecording` (the run so far is kept).

import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "expect";
import { after, before, describe, test } from "node:test";
import type { ChangedParams, RecordResult, RunsResult, SplitCommandResult } from "../../src/protocol";
import { Requests, ServerCommands, parseChanged } from "../../src/protocol";
import { formatCommand, inputError, recordChoices } from "../../src/record";
import { recordCommand } from "../../src/settings";
import { BUGGY, bug1Workspace, startServer } from "../support/server";
import type { ServerSession, Workspace } from "../support/server";

let ws: Workspace;
let server: ServerSession;

before(async () => {
  ws = bug1Workspace();
  server = await startServer(ws.dir, { pollMs: 100 });
  // The first run is loaded (and announced) before anything is recorded.
  await server.waitForNotification("threadRadar/changed", (p) => parseChanged(p)?.run === ws.run);
});

after(async () => {
  await server?.stop();
  ws?.cleanup();
});

const runs = async () => (await server.sendRequest(Requests.runs, {})) as RunsResult;
/** The first `threadRadar/changed` at or after notification `from` that satisfies `pred`. */
async function changed(from: number, pred: (c: ChangedParams) => boolean, ms = 60_000): Promise<ChangedParams> {
  const end = Date.now() + ms;
  for (;;) {
    const hit = changedSince(from).find(pred);
    if (hit !== undefined) return hit;
    if (Date.now() > end) throw new Error(`no such threadRadar/changed within ${ms} ms: ${JSON.stringify(changedSince(from))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const changedSince = (from: number) => server.notifications.slice(from).filter((n) => n.method === "threadRadar/changed").map((n) => parseChanged(n.params) as ChangedParams);

describe("recording from the editor", () => {
  test("Current file: the argument the extension sends records a new run, followed by threadRadar/changed", async () => {
    const file = path.join(ws.dir, BUGGY);
    const choice = recordChoices({ recordCommand: recordCommand({ get: () => undefined }), activeFile: file, folders: [ws.dir] }).find((c) => c.kind === "file");
    expect(choice?.params).toEqual({ command: ["python3", BUGGY], cwd: ws.dir });
    const before = (await runs()).runs.map((r) => r.path);
    expect(before).toEqual([ws.run]);
    const from = server.notifications.length;

    const answer = (await server.executeCommand(ServerCommands.record, choice?.params)) as RecordResult;
    expect(answer).toMatchObject({ recording: true, command: ["python3", BUGGY], cwd: ws.dir });
    expect(path.dirname(answer.output)).toBe(path.join(ws.dir, ".threadradar", "runs"));
    expect(path.basename(answer.output)).toMatch(/^\d{8}T\d{6}Z-buggy(-\d+)?\.json$/);

    const started = await changed(from, (c) => c.reason === "recording" && c.recording !== null && c.recording !== undefined, 10_000);
    expect(started.recording).toEqual({ command: ["python3", BUGGY], output: answer.output });
    // A second recording is refused while one runs.
    await expect(server.executeCommand(ServerCommands.record, choice?.params)).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/already being recorded/) });

    const shown = await changed(from, (c) => c.reason === "run" && c.run === answer.output);
    const ended = await changed(from, (c) => c.reason === "recording" && c.recording === null);
    expect(shown.run).toBe(answer.output);
    expect(ended.run).toBe(answer.output);
    // The order the status bar sees: recording started, the new run shown, recording ended (the
    // server's poll may announce the run file before the recorder has exited, hence `some`).
    const seen = changedSince(from).filter((c) => c.reason === "recording" || c.reason === "run");
    expect(seen[0]).toMatchObject({ reason: "recording", recording: { output: answer.output } });
    expect(seen.at(-1)).toMatchObject({ reason: "recording", recording: null, run: answer.output });
    expect(seen.slice(1, -1).some((c) => c.reason === "run" && c.run === answer.output)).toBe(true);
    expect(seen.filter((c) => c.reason === "recording")).toHaveLength(2);

    const after = await runs();
    expect(after.runs.map((r) => r.path).sort()).toEqual([...before, answer.output].sort());
    expect(after.active).toBe(answer.output);
    expect(after.pinned).toBe(false);
    expect(after.summary?.command).toBe(`python3 ${BUGGY}`);
    expect(fs.existsSync(answer.output)).toBe(true);

    // The program's output arrives as log messages (type 4, Log: vscode-languageclient appends those
    // to the output channel as they are); the summary as one information message.
    const logs = server.notifications.slice(from).filter((n) => n.method === "window/logMessage").map((n) => n.params as { type: number; message: string });
    expect(logs.some((l) => l.type === 4 && /^constructor ran in \d+ threads/.test(l.message))).toBe(true);
    const shownMessages = server.notifications.slice(from).filter((n) => n.method === "window/showMessage").map((n) => n.params as { type: number; message: string });
    expect(shownMessages).toEqual([{ type: 3, message: expect.stringMatching(/^ThreadRadar: recorded /) }]);
  });

  test("the prompt's splitter is the server's: every shared case (lsp-server/src/cmdline_cases.json), its sentences, and formatCommand read back", async () => {
    const split = async (line: string) => (await server.sendRequest(Requests.splitCommand, { line })) as SplitCommandResult;
    const file = path.join(__dirname, "..", "..", "..", "..", "lsp-server", "src", "cmdline_cases.json");
    const cases = JSON.parse(fs.readFileSync(file, "utf8")) as { line: string; words?: string[] }[];
    expect(cases.length).toBeGreaterThanOrEqual(10);
    for (const c of cases) {
      const r = await split(c.line);
      if (c.words !== undefined) expect({ line: c.line, words: r.words, error: r.error }).toEqual({ line: c.line, words: c.words, error: null });
      else expect({ line: c.line, error: r.error }).toEqual({ line: c.line, error: expect.stringContaining("a quote is not closed") });
    }
    expect(inputError(await split("python3 'app.py"))).toMatch(/^cannot split the command line .*a quote is not closed/);
    expect(inputError(await split("   "))).toBe("Type the program to record and its arguments.");
    expect(inputError(await split("python3 app.py"))).toBeUndefined();
    const tricky = ["python3", "my app.py", "it's", 'say "hi"', "$HOME", "a\\b", "", "*", "tab\there", "ünï"];
    expect((await split(formatCommand(tricky))).words).toEqual(tricky);
  });

  test("a custom command line, stopped: the run so far is kept and shown", async () => {
    // Sent as typed: the server splits it (quotes keep the blanks and the line breaks).
    const line = `python3 -c "import time\nend = time.time() + 60\nwhile time.time() < end: pass" 'spin forever'`;
    const count = (await runs()).runs.length;
    const t0 = Date.now();
    const from = server.notifications.length;
    const answer = (await server.executeCommand(ServerCommands.record, { command: line, cwd: ws.dir })) as RecordResult;
    await changed(from, (c) => c.reason === "recording" && c.recording?.output === answer.output, 10_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await server.executeCommand(ServerCommands.stopRecording)).toEqual({ stopping: true });
    await changed(from, (c) => c.reason === "run" && c.run === answer.output, 30_000);
    await changed(from, (c) => c.reason === "recording" && c.recording === null, 30_000);
    // Stopped long before the program's 60 s.
    expect(Date.now() - t0).toBeLessThan(30_000);
    const after = await runs();
    expect(after.runs).toHaveLength(count + 1);
    expect(after.active).toBe(answer.output);
    expect(after.summary?.samples).toBeGreaterThan(0);
    // Nothing is being recorded any more.
    await expect(server.executeCommand(ServerCommands.stopRecording)).rejects.toMatchObject({ code: -32602, message: "nothing is being recorded" });
  });
});
