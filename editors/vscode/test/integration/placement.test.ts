// Glyph placement from the real server's `threadRadar/documentArtifacts` on a real run: every
// decoration lands exactly on the `def`/`class` line of a profiled declaration, and follows edits.

import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "expect";
import { after, before, describe, test } from "node:test";
import { decorationSvg, glyphHeight, hintScaleFor, oneLineGlyphHeight, placeGlyphs } from "../../src/placement";
import type { ArtifactAtResult } from "../../src/protocol";
import type { DocumentArtifactsResult } from "../../src/protocol";
import { Requests } from "../../src/protocol";
import { BUGGY, bug1Workspace, startServer } from "../support/server";
import type { ServerSession, Workspace } from "../support/server";

let ws: Workspace;
let server: ServerSession;
let uri: string;
let lines: string[];
const SIZE = glyphHeight(19); // 14 px font, automatic line height on Linux → 38 px

before(async () => {
  ws = bug1Workspace();
  server = await startServer(ws.dir);
  const file = path.join(ws.dir, BUGGY);
  lines = fs.readFileSync(file, "utf8").split("\n");
  uri = await server.open(file);
});

after(async () => {
  await server?.stop();
  ws?.cleanup();
});

const artifacts = async (theme: "light" | "dark" = "light") =>
  (await server.sendRequest(Requests.documentArtifacts, { uri, glyph: { theme, size: SIZE } })) as DocumentArtifactsResult;

const lineOf = (re: RegExp): number => {
  const i = lines.findIndex((l) => re.test(l));
  if (i < 0) throw new Error(`no line ${re.source}`);
  return i;
};

function declares(line: string, kind: string, name: string): boolean {
  const re = kind === "class" ? new RegExp(`^\\s*class\\s+${name}\\b`) : new RegExp(`^\\s*(async\\s+)?def\\s+${name}\\s*\\(`);
  return re.test(line);
}

describe("decorations from documentArtifacts", () => {
  test("each glyph sits on its declaration's def or class line, at the end of the header", async () => {
    const r = await artifacts();
    expect(r.run).toBe(path.basename(ws.run));
    expect(r.stale).toBe(0);
    const groups = placeGlyphs(r, { lineCount: lines.length, height: SIZE });
    const placements = groups.flatMap((g) => g.placements);
    expect(placements.length).toBe(r.artifacts.length);
    expect(placements.length).toBeGreaterThanOrEqual(5);
    for (const p of placements) {
      const name = p.qualname.split(".").pop() ?? "";
      expect({ qualname: p.qualname, line: p.line, declares: declares(lines[p.line] ?? "", p.kind, name) }).toEqual({ qualname: p.qualname, line: p.line, declares: true });
      expect(p.endCharacter).toBe((lines[p.line] ?? "").length);
      expect(p.character).toBe((lines[p.line] ?? "").length - (lines[p.line] ?? "").trimStart().length);
    }
    const byName = new Map(placements.map((p) => [p.qualname, p.line]));
    expect(byName.get("WorkerManager.__init__")).toBe(lineOf(/^\s+def __init__\(self\) -> None:/));
    expect(byName.get("WorkerManager")).toBe(lineOf(/^class WorkerManager\b/));
    expect(byName.get("Worker.run")).toBe(lineOf(/^\s+def run\(self\)/));
  });

  test("two lines high only where the line below leaves room: never over class WorkerManager's docstring", async () => {
    const r = await artifacts();
    const rowsOf = (hintScale: number) => {
      const groups = placeGlyphs(r, { lineCount: lines.length, height: SIZE, oneLineHeight: oneLineGlyphHeight(19), lines, hintScale, lensLines: new Set(r.artifacts.map((a) => a.line)) });
      for (const g of groups) expect(g.height).toBe(g.rows === 2 ? SIZE : oneLineGlyphHeight(19));
      return new Map(groups.flatMap((g) => g.placements.map((p) => [p.qualname, p.rows] as const)));
    };
    const withoutHints = rowsOf(0);
    const withHints = rowsOf(hintScaleFor(true, "on", 0, 14));
    // The docstring under `class WorkerManager:` is longer than the header and its hint.
    expect(withoutHints.get("WorkerManager")).toBe(1);
    expect(withHints.get("WorkerManager")).toBe(1);
    // `self._start_gate.wait()` under `def run(self) -> None:` is longer than the header alone,
    // shorter than the header and its hint.
    expect(withoutHints.get("Worker.run")).toBe(1);
    expect(withHints.get("Worker.run")).toBe(2);
  });

  test("the images are the asked size with explicit width and height; identical ones share a group", async () => {
    const r = await artifacts();
    const groups = placeGlyphs(r, { lineCount: lines.length, height: SIZE, oneLineHeight: SIZE });
    for (const g of groups) {
      expect(g.svg).toMatch(new RegExp(`^<svg[^>]* width="${g.width}"[^>]* height="${SIZE}"`));
      expect(g.width).toBe(Math.round(SIZE * 1.75));
      expect(Buffer.from(g.uri.slice(g.uri.indexOf(",") + 1), "base64").toString("utf8")).toBe(g.svg);
    }
    const distinct = new Set(r.artifacts.map((a) => decorationSvg(a.glyph_svg ?? "", SIZE)?.svg));
    expect(groups.length).toBe(distinct.size);
    // Declarations with equal figures (a class and its only busy method) share one image.
    expect(groups.length).toBeLessThan(r.artifacts.length);
  });

  test("the dark theme gives other images", async () => {
    const light = await artifacts("light");
    const dark = await artifacts("dark");
    expect(dark.artifacts.map((a) => a.key)).toEqual(light.artifacts.map((a) => a.key));
    expect(dark.artifacts[0]?.glyph_svg).not.toBe(light.artifacts[0]?.glyph_svg);
  });

  test("the server finds the declaration around a cursor in WorkerManager.__init__'s body", async () => {
    const r = await artifacts();
    const body = lineOf(/self\.settings = self\._load_settings\(\)/);
    // The server answers from tree-sitter on the buffer (threadRadar/artifactAt): the extension's
    // "detail at cursor" asks it.
    const at = (line: number) => server.sendRequest("threadRadar/artifactAt", { uri, line, character: 4 }) as Promise<ArtifactAtResult>;
    const hit = await at(body);
    expect(hit.function?.qualname).toBe("WorkerManager.__init__");
    expect(hit.class?.qualname).toBe("WorkerManager");
    expect(r.artifacts.map((a) => a.key)).toContain(hit.function?.key);
    expect(await at(0)).toEqual({ function: null, class: null });
  });

  test("an edit above moves every glyph with its declaration; a thread filter changes the figures", async () => {
    const before = await artifacts();
    await server.conn.sendNotification("textDocument/didChange", {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: "# one\n# two\n# three\n" }],
    });
    const after = await artifacts();
    expect(after.artifacts.map((a) => [a.key, a.line])).toEqual(before.artifacts.map((a) => [a.key, a.line + 3]));
    const moved = ["# one", "# two", "# three", ...lines];
    for (const p of placeGlyphs(after, { lineCount: moved.length, height: SIZE }).flatMap((g) => g.placements)) {
      expect([p.qualname, declares(moved[p.line] ?? "", p.kind, p.qualname.split(".").pop() ?? "")]).toEqual([p.qualname, true]);
    }

    await server.executeCommand("threadradar.setThreadFilter", { exclude: [0] });
    const filtered = await artifacts();
    expect(filtered.exclude_threads).toEqual([0]);
    await server.executeCommand("threadradar.clearThreadFilter");
    expect((await artifacts()).exclude_threads).toEqual([]);
  });

  test("a document outside the run answers no artifacts, not an error", async () => {
    const other = path.join(ws.dir, "unprofiled.py");
    fs.writeFileSync(other, "def f():\n    return 1\n");
    const u = await server.open(other);
    const r = (await server.sendRequest(Requests.documentArtifacts, { uri: u })) as DocumentArtifactsResult;
    expect(r.artifacts).toEqual([]);
  });
});
