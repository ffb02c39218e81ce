import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "expect";
import { describe, test } from "node:test";
import { Commands, ServerCommands, errorSentence, isMethodNotFound, parseChanged, parseOpenPanel } from "../../src/protocol";

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "../../package.json"), "utf8")) as {
  contributes: { commands: { command: string; title: string; category: string }[] };
};

describe("commands", () => {
  test("the extension's command ids never collide with the server's (vscode-languageclient registers those)", () => {
    const server = new Set<string>(Object.values(ServerCommands));
    expect(Object.values(Commands).filter((c) => server.has(c))).toEqual([]);
  });

  test("the extension's recording command is not the server's stopRecording (vscode-languageclient registers that)", () => {
    expect(Commands.stopRecording).toBe("threadradar.stopRecordingCmd");
    expect(ServerCommands.stopRecording).toBe("threadradar.stopRecording");
    expect(ServerCommands.record).toBe("threadradar.record");
  });

  test("package.json contributes exactly the extension's commands, each with a title", () => {
    const contributed = manifest.contributes.commands.map((c) => c.command).sort();
    expect(contributed).toEqual([...Object.values(Commands)].sort());
    for (const c of manifest.contributes.commands) {
      expect(c.category).toBe("ThreadRadar");
      expect(c.title.length).toBeGreaterThan(3);
    }
  });
});

describe("notifications", () => {
  test("openPanel", () => {
    expect(parseOpenPanel({ panel: "overview", file: "/a.py" })).toEqual({ panel: "overview", file: "/a.py" });
    expect(parseOpenPanel({ panel: "overview", file: null })).toEqual({ panel: "overview", file: null });
    expect(parseOpenPanel({ panel: "overview" })).toEqual({ panel: "overview", file: null });
    expect(parseOpenPanel({ panel: "detail", artifact: "program" })).toEqual({ panel: "detail", artifact: "program" });
    expect(parseOpenPanel({ panel: "detail" })).toBeUndefined();
    expect(parseOpenPanel({ panel: "trace" })).toBeUndefined();
    // The wait lens: the Waits view (issue 32), not the overview.
    expect(parseOpenPanel({ panel: "waits", object: "queue.Queue q" })).toEqual({ panel: "waits", object: "queue.Queue q" });
    expect(parseOpenPanel({ panel: "waits", object: 12 })).toEqual({ panel: "waits", object: null });
    // The critical-section lens: the Sections panel on its section (file, function, lock, line).
    const section = { file: "/a.py", function: "Store.update", lock: "Store._lock", line: 38 };
    expect(parseOpenPanel({ panel: "sections", section })).toEqual({ panel: "sections", section });
    expect(parseOpenPanel({ panel: "sections", section: { ...section, line: "38" } })).toBeUndefined();
    expect(parseOpenPanel({ panel: "sections" })).toBeUndefined();
    expect(parseOpenPanel(null)).toBeUndefined();
  });

  test("changed", () => {
    expect(parseChanged({ reason: "filter", run: "/r.json", generation: 3, exclude_threads: [1, "x", 2] })).toEqual({ reason: "filter", run: "/r.json", generation: 3, exclude_threads: [1, 2] });
    expect(parseChanged({ reason: "run" })).toEqual({ reason: "run", run: null, generation: 0, exclude_threads: [] });
    expect(parseChanged({ reason: "weather" })).toBeUndefined();
    expect(parseChanged("run")).toBeUndefined();
  });

  test("changed: the recording in progress, null when none, absent when the server does not say", () => {
    const rec = { command: ["python3", "-m", "pytest"], output: "/ws/.threadradar/runs/x-pytest.json" };
    expect(parseChanged({ reason: "recording", run: null, generation: 1, exclude_threads: [], recording: rec })).toEqual({ reason: "recording", run: null, generation: 1, exclude_threads: [], recording: rec });
    const ended = parseChanged({ reason: "recording", recording: null });
    expect(ended?.recording).toBeNull();
    expect("recording" in (parseChanged({ reason: "run" }) ?? {})).toBe(false);
    expect(parseChanged({ reason: "run", recording: { command: [], output: "x" } })?.recording).toBeNull();
    expect(parseChanged({ reason: "run", recording: { command: ["a", 3, "b"] } })?.recording).toEqual({ command: ["a", "b"], output: "" });
  });
});

describe("errors", () => {
  test("one sentence, capitalised and closed", () => {
    expect(errorSentence(new Error("no thread with id 99 in this run"))).toBe("No thread with id 99 in this run.");
    expect(errorSentence({ code: -32602, message: "there is no run: record one with `threadradar record`." })).toBe("There is no run: record one with `threadradar record`.");
    expect(errorSentence("line one\n  line two")).toBe("Line one line two.");
    expect(errorSentence(undefined)).toBe("Something went wrong in ThreadRadar.");
    expect(errorSentence(new Error("Done?"))).toBe("Done?");
  });

  test("method not found", () => {
    expect(isMethodNotFound({ code: -32601, message: "Method not found" })).toBe(true);
    expect(isMethodNotFound(new Error("x"))).toBe(false);
  });
});
