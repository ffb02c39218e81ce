// The bundled extension, activated in plain Node against a stand-in `vscode` module (VS Code
// cannot be run here): the bundle loads, registers every contributed command and view, says once
// that a missing server is missing, and with the real server shows the active run in the status
// bar through vscode-languageclient.

import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "expect";
import { after, before, describe, test } from "node:test";
import { ServerCommands } from "../../src/protocol";
import { fakeEditor, fakeVscode } from "../support/fakeVscode";
import { until, useBundle } from "../support/bundle";
import { BUGGY, EXTENSION_DIR, bug1Workspace, serverBinary } from "../support/server";
import type { Workspace } from "../support/server";

const manifest = JSON.parse(fs.readFileSync(path.join(EXTENSION_DIR, "package.json"), "utf8")) as {
  contributes: { commands: { command: string }[]; views: Record<string, { id: string }[]> };
};

const activate = useBundle("activation");

describe("activation", () => {
  test("registers every contributed command and view; a missing server is one error message with the install command", async () => {
    const fake = fakeVscode({ "threadradar.serverPath": "/nonexistent/threadradar" }, EXTENSION_DIR);
    const { ext, subscriptions } = activate(fake, EXTENSION_DIR);
    await until("the missing-server message", () => fake.messages.length > 0);
    expect([...fake.commands.keys()].sort()).toEqual(manifest.contributes.commands.map((c) => c.command).sort());
    expect(Object.values(ServerCommands).filter((id) => fake.commands.has(id))).toEqual([]);
    expect(fake.treeViews).toEqual((manifest.contributes.views.threadradar ?? []).map((v) => v.id));
    expect(fake.messages).toHaveLength(1);
    expect(fake.messages[0]?.level).toBe("error");
    expect(fake.messages[0]?.text).toMatch(/^The ThreadRadar language server was not found at \/nonexistent\/threadradar: install it into the project.s Python environment with `pip install threadradar`.*`cargo install --path \.`/);
    expect(fake.messages[0]?.items).toEqual(["Open Settings"]);
    await until("the status bar", () => fake.status[0]?.text === "$(pulse) ThreadRadar: no server");
    expect(fake.status[0]?.shown).toBe(true);

    // Commands never throw: they say what is wrong.
    await fake.commands.get("threadradar.pickRun")?.();
    expect(fake.messages.at(-1)?.text).toMatch(/^The ThreadRadar language server was not found/);
    await ext.deactivate();
    for (const d of subscriptions) d.dispose();
  });

  describe("with the real server", () => {
    let ws: Workspace;
    before(() => {
      ws = bug1Workspace();
    });
    after(() => ws?.cleanup());

    test("vscode-languageclient starts threadradar lsp: status bar, panels from commands and lenses, glyph decorations", async () => {
      const file = path.join(ws.dir, BUGGY);
      const text = fs.readFileSync(file, "utf8");
      const editor = fakeEditor(file, text);
      const fake = fakeVscode({ "threadradar.serverPath": serverBinary(), "threadradar.trace.server": "off" }, ws.dir, [editor]);
      const { ext, subscriptions } = activate(fake, EXTENSION_DIR);
      await until("the run in the status bar", () => (fake.status[0]?.text ?? "").includes("samples"), 20_000);
      expect(fake.status[0]?.text).toMatch(/^\$\(pulse\) ThreadRadar: 20250101T000000Z-bug1 · [\d,]+ samples · 7 threads$/);
      expect(fake.status[0]?.command).toBe("threadradar.pickRun");
      expect(fake.messages.filter((m) => m.level === "error")).toEqual([]);
      await fake.commands.get("threadradar.showOverview")?.();
      expect(fake.webviewPanels).toEqual(["threadradar.overview"]);
      // vscode-languageclient registered the server's commands next to the extension's (a
      // collision would have thrown, as in VS Code).
      for (const id of Object.values(ServerCommands)) expect([id, fake.commands.has(id)]).toEqual([id, true]);
      // A lens's command: the server answers with threadRadar/openPanel, the extension opens the detail.
      await fake.commands.get(ServerCommands.openDetail)?.({ artifact: "program" });
      await until("the detail panel", () => fake.webviewPanels.length === 2);
      expect(fake.webviewPanels).toEqual(["threadradar.overview", "threadradar.detail"]);
      // A wait lens's command opens the Waits view (issue 32), and each view has a palette command.
      await fake.commands.get(ServerCommands.openWaits)?.({ file: path.join(ws.dir, BUGGY), line: 1 });
      await until("the waits panel", () => fake.webviewPanels.length === 3);
      await fake.commands.get("threadradar.showTimeline")?.();
      await fake.commands.get("threadradar.showSections")?.();
      expect(fake.webviewPanels).toEqual(["threadradar.overview", "threadradar.detail", "threadradar.waits", "threadradar.timeline", "threadradar.sections"]);

      // The glyphs: decoration types with the SVG as a data URI, on the declarations' header lines,
      // after the header's end; the theme is dark (the fake's colour theme); two lines of 19 px high
      // where the line below leaves room, else one line (17 px).
      await until("the glyph decorations", () => [...editor.decorations.values()].some((r) => r.length > 0));
      const lines = text.split("\n");
      const live = fake.decorationTypes.filter((t) => !t.disposed);
      expect(live.length).toBeGreaterThan(0);
      const placed: number[] = [];
      const heightAt = new Map<number, string>();
      for (const [type, ranges] of editor.decorations) {
        const t = (type as { record: { options: { after: { contentIconPath: { scheme: string; path: string }; height: string } } } }).record;
        expect(t.options.after.contentIconPath.scheme).toBe("data");
        expect(t.options.after.contentIconPath.path.startsWith("image/svg+xml;base64,")).toBe(true);
        expect(["38px", "17px"]).toContain(t.options.after.height);
        const svg = Buffer.from(t.options.after.contentIconPath.path.split(",")[1] ?? "", "base64").toString("utf8");
        expect(svg).toMatch(new RegExp(`^<svg[^>]* height="${t.options.after.height.replace("px", "")}"`));
        for (const r of ranges) {
          const [line, character] = r as [number, number];
          expect(character).toBe((lines[line] ?? "").length);
          placed.push(line);
          heightAt.set(line, t.options.after.height);
        }
      }
      const defLine = (re: RegExp) => lines.findIndex((l) => re.test(l));
      expect(placed).toContain(defLine(/^\s+def __init__\(self\) -> None:/));
      expect(placed).toContain(defLine(/^class WorkerManager\b/));
      // Its docstring is longer than the header: one line high, so it covers none of it.
      expect(heightAt.get(defLine(/^class WorkerManager\b/))).toBe("17px");
      for (const l of placed) expect([l, /^\s*(class|def|async def)\s/.test(lines[l] ?? "")]).toEqual([l, true]);

      // The detail of the function around the cursor: WorkerManager.__init__'s body.
      editor.selection = { active: { line: lines.findIndex((l) => l.includes("self.settings = self._load_settings()")), character: 8 } };
      await fake.commands.get("threadradar.showDetailAtCursor")?.();
      const detail = fake.panels.find((p) => p.viewType === "threadradar.detail");
      expect(detail?.title).toBe("ThreadRadar Detail: WorkerManager.__init__");
      expect(detail?.html).toMatch(/"panel":"detail","artifact":"function:[^"]*buggy\.py:\d+:WorkerManager\.__init__"/);
      expect(detail?.html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data: 'self' https:\/\/\*\.vscode-cdn\.net; style-src 'nonce-[0-9a-f]{32}'/);
      editor.selection = { active: { line: 0, character: 0 } };
      await fake.commands.get("threadradar.showDetailAtCursor")?.();
      expect(fake.messages.at(-1)).toMatchObject({ level: "info", text: "The cursor is not inside a function or class that the current run profiled." });

      const stopping = ext.deactivate();
      expect(stopping).toBeDefined();
      await stopping;
      for (const d of subscriptions) d.dispose();
    });

    test("a saved pyproject.toml with a mistake in [tool.threadradar] is said at once, with its key and line", async () => {
      const pyproject = path.join(ws.dir, "pyproject.toml");
      const before = fs.existsSync(pyproject) ? fs.readFileSync(pyproject, "utf8") : undefined;
      const fake = fakeVscode({ "threadradar.serverPath": serverBinary(), "threadradar.trace.server": "off" }, ws.dir, [fakeEditor(path.join(ws.dir, BUGGY), "")]);
      const { ext, subscriptions } = activate(fake, EXTENSION_DIR);
      try {
        await until("the run in the status bar", () => (fake.status[0]?.text ?? "").includes("samples"), 20_000);
        expect(fake.messages.filter((m) => m.text.includes("bogus-key"))).toEqual([]);
        fs.writeFileSync(pyproject, '[tool.threadradar]\nstates = "computing"\nbogus-key = 3\n');
        fake.save(pyproject);
        await until("the mistake said after the save", () => fake.messages.some((m) => m.text.includes("bogus-key")), 10_000);
        const said = fake.messages.find((m) => m.text.includes("bogus-key"));
        expect(said?.level).toBe("warning");
        expect(said?.text).toMatch(/line 3/);
      } finally {
        if (before === undefined) fs.rmSync(pyproject, { force: true });
        else fs.writeFileSync(pyproject, before);
        await ext.deactivate();
        for (const d of subscriptions) d.dispose();
      }
    });

    test("Record a Run…: the recording in the status bar, its progress as a notification with Cancel, the output in the channel; then Compare with Previous Run fills the Comparison view", async () => {
      const file = path.join(ws.dir, BUGGY);
      const editor = fakeEditor(file, fs.readFileSync(file, "utf8"));
      const fake = fakeVscode({ "threadradar.serverPath": serverBinary(), "threadradar.pollMs": 100 }, ws.dir, [editor]);
      const { ext, subscriptions } = activate(fake, EXTENSION_DIR);
      const runsDir = path.join(ws.dir, ".threadradar/runs");
      const runFiles = () => fs.readdirSync(runsDir).filter((f) => f.endsWith(".json")).sort();
      const before = runFiles();
      await until("the run in the status bar", () => (fake.status[0]?.text ?? "").includes("samples"), 20_000);
      expect(fake.contexts.get("threadradar.recording")).toBe(false);

      // "Current file" of the quick pick.
      fake.ui.quickPick = (items) => items.find((i) => i.label.startsWith("$(file-code)"));
      await fake.commands.get("threadradar.recordRun")?.();
      expect(fake.quickPicks[0]?.items.map((i) => i.label)).toEqual([
        "$(beaker) Test suite (python3 -m pytest)",
        `$(file-code) Current file (python3 ${BUGGY})`,
        "$(terminal) Custom command…",
      ]);
      await until("the recording in the status bar", () => fake.status[0]?.text === "$(record) ThreadRadar: recording buggy.py…");
      expect(fake.status[0]?.command).toBe("threadradar.stopRecordingCmd");
      expect(fake.contexts.get("threadradar.recording")).toBe(true);
      // The server's progress: a notification with Cancel (VS Code draws none in the status bar).
      await until("the progress notification", () => fake.progress.some((p) => p.options.location === 15));
      const shown = fake.progress.find((p) => p.options.location === 15);
      expect(shown?.options).toEqual({ location: 15, title: `ThreadRadar: recording \`python3 ${BUGGY}\``, cancellable: true });
      expect(fake.progress.filter((p) => p.options.location !== 15 && (p.options.title ?? "").includes("recording"))).toEqual([]);
      await until("the new run in the status bar", () => /^\$\(pulse\) ThreadRadar: \d{8}T\d{6}Z-buggy · [\d,]+ samples · \d+ threads$/.test(fake.status[0]?.text ?? ""), 60_000);
      expect(fake.status[0]?.command).toBe("threadradar.pickRun");
      await until("the progress to end", () => shown?.done === true);
      expect(fake.contexts.get("threadradar.recording")).toBe(false);
      const recorded = runFiles().filter((f) => !before.includes(f));
      expect(recorded).toHaveLength(1);
      // The program's output (window/logMessage, type Log) in the output channel, the summary as a message.
      expect(fake.log.some((l) => /^appendLine: constructor ran in \d+ threads/.test(l))).toBe(true);
      expect(fake.messages.some((m) => m.level === "info" && m.text.startsWith("ThreadRadar: recorded "))).toBe(true);
      expect(fake.messages.filter((m) => m.level === "error")).toEqual([]);

      // Compare with Previous Run: the Comparison view, header first, then an item per function.
      await fake.commands.get("threadradar.compareRuns")?.();
      const tree = fake.treeProviders.get("threadradar.comparison");
      type Item = { label: string; description: string; iconPath: { id: string; color?: { id: string } }; tooltip: { value: string; isTrusted: boolean; supportHtml: boolean }; command?: { command: string; arguments: { target: unknown }[] } };
      const items = async () => {
        const nodes = (await tree?.getChildren()) as unknown[];
        return nodes.map((n) => tree?.getTreeItem(n) as Item);
      };
      const fn = await items();
      expect(fn[0]?.label).toBe(`20250101T000000Z-bug1 → ${(recorded[0] ?? "").replace(/\.json$/, "")}`);
      const init = fn.find((i) => i.label === "WorkerManager.__init__");
      expect(init?.description).toMatch(/^([+-]\d+\.\d|0\.0)pp · \d+ → \d+ threads?$/);
      expect(["arrow-up", "arrow-down", "dash"]).toContain(init?.iconPath.id);
      expect(init?.tooltip).toMatchObject({ isTrusted: false, supportHtml: false });
      expect(init?.tooltip.value).toContain("- threads: 6 → ");
      expect(init?.command?.command).toBe("threadradar.comparison.open");
      expect(init?.command?.arguments[0]?.target).toEqual({ file: file, line: fs.readFileSync(file, "utf8").split("\n").findIndex((l) => /^\s+def __init__\(self\) -> None:/.test(l)) + 1 });
      // The level switch (a view title action) asks again for the same two runs.
      expect(fake.contexts.get("threadradar.compareLevel")).toBe("function");
      await fake.commands.get("threadradar.comparison.showClasses")?.();
      expect(fake.contexts.get("threadradar.compareLevel")).toBe("class");
      const cls = await items();
      expect(cls[0]?.label).toBe(fn[0]?.label);
      expect(cls.map((i) => i.label)).toContain("WorkerManager");
      expect(cls.map((i) => i.label)).not.toContain("WorkerManager.__init__");

      // A custom command, stopped with the notification's Cancel: the run so far is kept.
      fake.ui.quickPick = (list) => list.find((i) => i.label.startsWith("$(terminal)"));
      let validate: ((v: string) => unknown) | undefined;
      fake.ui.inputBox = (o) => {
        validate = o.validateInput;
        return `python3 -c "import time\nend = time.time() + 60\nwhile time.time() < end: pass"`;
      };
      await fake.commands.get("threadradar.recordRun")?.();
      // The prompt checks the line with the server's splitter (asynchronously).
      expect(await validate?.("python3 'app.py")).toMatch(/^cannot split the command line .*a quote is not closed/);
      expect(await validate?.("  ")).toBe("Type the program to record and its arguments.");
      expect(await validate?.("python3 app.py")).toBeUndefined();
      await until("the second recording in the status bar", () => fake.status[0]?.text === "$(record) ThreadRadar: recording python -c…");
      await until("its progress notification", () => fake.progress.filter((p) => p.options.location === 15).length === 2);
      await new Promise((r) => setTimeout(r, 1000));
      const t0 = Date.now();
      fake.progress.filter((p) => p.options.location === 15)[1]?.cancel();
      await until("the stopped run in the status bar", () => /^\$\(pulse\) ThreadRadar: \d{8}T\d{6}Z-python-c · /.test(fake.status[0]?.text ?? ""), 30_000);
      expect(Date.now() - t0).toBeLessThan(30_000);
      expect(runFiles().filter((f) => !before.includes(f))).toHaveLength(2);
      // Nothing to stop any more: said, not an error.
      await fake.commands.get("threadradar.stopRecordingCmd")?.();
      expect(fake.messages.at(-1)).toMatchObject({ level: "info", text: "ThreadRadar is not recording anything." });
      expect(fake.messages.filter((m) => m.level === "error")).toEqual([]);

      await ext.deactivate();
      for (const d of subscriptions) d.dispose();
    });
  });
});
