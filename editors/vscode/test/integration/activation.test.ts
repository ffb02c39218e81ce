// The bundled extension, activated in plain Node against a stand-in `vscode` module (VS Code
// cannot be run here): the bundle loads, registers every contributed command and view, says once
// that a missing server is missing, and with the real server shows the active run in the status
// bar through vscode-languageclient.

import * as fs from "node:fs";
import Module, { createRequire } from "node:module";
import * as path from "node:path";
import * as esbuild from "esbuild";
import { expect } from "expect";
import { after, before, describe, test } from "node:test";
import { ServerCommands } from "../../src/protocol";
import { fakeEditor, fakeVscode } from "../support/fakeVscode";
import type { FakeVscode } from "../support/fakeVscode";
import { BUGGY, EXTENSION_DIR, bug1Workspace, serverBinary } from "../support/server";
import type { Workspace } from "../support/server";

const BUNDLE = path.join(EXTENSION_DIR, "test-output/activation/extension.js");
const manifest = JSON.parse(fs.readFileSync(path.join(EXTENSION_DIR, "package.json"), "utf8")) as {
  contributes: { commands: { command: string }[]; views: Record<string, { id: string }[]> };
};

interface Extension {
  activate(context: unknown): void;
  deactivate(): Promise<void> | undefined;
}

const loader = Module as unknown as { _load: (request: string, parent: unknown, isMain: boolean) => unknown };
const originalLoad = loader._load;
let current: FakeVscode | undefined;

before(async () => {
  await esbuild.build({ entryPoints: [path.join(EXTENSION_DIR, "src/extension.ts")], bundle: true, outfile: BUNDLE, external: ["vscode"], format: "cjs", platform: "node", logLevel: "error" });
  loader._load = function (request: string, parent: unknown, isMain: boolean) {
    if (request === "vscode") {
      if (current === undefined) throw new Error("no fake vscode");
      return current.module as unknown;
    }
    return originalLoad.call(this, request, parent, isMain);
  };
});

after(() => {
  loader._load = originalLoad;
});

/** A fresh copy of the bundle, activated with `fake`. */
function activate(fake: FakeVscode, extensionPath: string): { ext: Extension; subscriptions: { dispose(): unknown }[] } {
  current = fake;
  const req = createRequire(__filename);
  Reflect.deleteProperty(req.cache, BUNDLE);
  const ext = req(BUNDLE) as Extension;
  const subscriptions: { dispose(): unknown }[] = [];
  ext.activate({ subscriptions, extensionUri: { scheme: "file", path: extensionPath, fsPath: extensionPath, toString: () => `file://${extensionPath}` }, extensionPath });
  return { ext, subscriptions };
}

async function until(what: string, f: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

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
    expect(fake.messages[0]?.text).toMatch(/^The ThreadRadar language server was not found at \/nonexistent\/threadradar: build and install it with `cargo install --path \.`/);
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

      // The glyphs: decoration types with the SVG as a data URI, on the declarations' header lines,
      // after the header's end; the theme is dark (the fake's colour theme), two lines of 19 px high.
      await until("the glyph decorations", () => [...editor.decorations.values()].some((r) => r.length > 0));
      const lines = text.split("\n");
      const live = fake.decorationTypes.filter((t) => !t.disposed);
      expect(live.length).toBeGreaterThan(0);
      const placed: number[] = [];
      for (const [type, ranges] of editor.decorations) {
        const t = (type as { record: { options: { after: { contentIconPath: { scheme: string; path: string }; height: string } } } }).record;
        expect(t.options.after.contentIconPath.scheme).toBe("data");
        expect(t.options.after.contentIconPath.path.startsWith("image/svg+xml;base64,")).toBe(true);
        expect(t.options.after.height).toBe("38px");
        const svg = Buffer.from(t.options.after.contentIconPath.path.split(",")[1] ?? "", "base64").toString("utf8");
        expect(svg).toMatch(/^<svg[^>]* height="38"/);
        for (const r of ranges) {
          const [line, character] = r as [number, number];
          expect(character).toBe((lines[line] ?? "").length);
          placed.push(line);
        }
      }
      const defLine = (re: RegExp) => lines.findIndex((l) => re.test(l));
      expect(placed).toContain(defLine(/^\s+def __init__\(self\) -> None:/));
      expect(placed).toContain(defLine(/^class WorkerManager\b/));
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
  });
});
