// The extension's renderers fed the server's own answers: the JSON that `tests/protocol.rs`
// snapshots for every method (tests/fixtures/protocol/*.json, real runs of the Bug 1 sample, paths
// as `@ROOT@`). A protocol change that breaks what the extension shows fails here, not in a user's
// editor. Fixtures are read at run time, never copied.

import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "expect";
import { describe, test } from "node:test";
import { changeText, compareHeader, compareItems, escapeMarkdown, runName, runPicks, significanceText } from "../../src/compare";
import { MIN_PEDESTAL_FONT_PX, glyphHeight, oneLineGlyphHeight, placeGlyphs, readablePedestals } from "../../src/placement";
import type { CompareResult, DocumentArtifactsResult, OverviewResult, RunsResult, ThreadsResult } from "../../src/protocol";
import { hotItems, percent, runItems, statusView, threadItems } from "../../src/views";

const REPO = path.resolve(__dirname, "../../../..");
const FIXTURES = path.join(REPO, "tests/fixtures/protocol");

/** A fixture with `@ROOT@` made this checkout, so paths point at the real sample files. */
function fixture(name: string): unknown {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name), "utf8").split("@ROOT@").join(REPO));
}

/**
 * Which fixture each client view consumes. Every fixture must be named here, either with the
 * extension code tested below or as drawn by the web panels (which the extension hosts in its
 * webviews and tests/panels drives in Chromium): a new method's fixture fails this list until
 * someone decides who shows it.
 */
const CONSUMERS: Record<string, string> = {
  "artifact-at-init.json": "web (detail header), LSP hover",
  "artifact-at-module.json": "web (detail header), LSP hover",
  "compare-class.json": "compareHeader, compareItems",
  "compare-sets-same-runs.json": "significanceText, changeText",
  "compare-sets.json": "significanceText, changeText",
  "compare-half-tenth-pp.json": "compareItems (the icon by the server's trend)",
  "compare.json": "compareHeader, compareItems, changeText",
  "detail-init.json": "web (detail panel)",
  "detail-program.json": "web (detail panel)",
  "document-artifacts.json": "placeGlyphs",
  "filter.json": "web (thread filter)",
  "glyph.json": "web (glyph)",
  "join-command.json": "formatCommand's lines read back (test/integration/record.test.ts), Neovim's shown commands",
  "split-command.json": "Record a Run… prompt (inputError), Neovim :ThreadRadarRecord / :ThreadRadarCompare",
  "split-command-unclosed.json": "Record a Run… prompt (inputError: the server's sentence)",
  "overview-filtered.json": "hotItems",
  "overview.json": "hotItems",
  "run-set.json": "web (run set in the overview), LSP hover",
  "runs.json": "runItems, runPicks, statusView",
  "sections.json": "web (sections panel)",
  "threads.json": "threadItems",
  "timeline.json": "web (timeline panel)",
  "trace-compare-sets.json": "web (trace compare panel)",
  "trace-compare.json": "web (trace compare panel)",
  "views.json": "web (saved views)",
  "waits.json": "web (waits panel)",
};

describe("the protocol's fixtures", () => {
  test("every fixture has a consumer named, and every named fixture exists", () => {
    const files = fs
      .readdirSync(FIXTURES)
      .filter((f) => f.endsWith(".json"))
      .sort();
    expect(files.length).toBeGreaterThan(10);
    expect(files).toEqual(Object.keys(CONSUMERS).sort());
  });
});

describe("documentArtifacts → glyph placement", () => {
  const result = fixture("document-artifacts.json") as DocumentArtifactsResult;
  // The run is of samples/python/bug1_worker_manager/fixed.py: place on that very file's lines.
  const source = fs.readFileSync(path.join(REPO, "samples/python/bug1_worker_manager/fixed.py"), "utf8").split("\n");
  const height = glyphHeight(19);
  const groups = placeGlyphs(result, { lineCount: source.length, height, oneLineHeight: oneLineGlyphHeight(19), lines: source, tabSize: 4 });
  const placements = groups.flatMap((g) => g.placements);

  test("every artifact with a glyph gets one on the line the server gave, with the server's label", () => {
    const drawn = result.artifacts.filter((a) => typeof a.glyph_svg === "string");
    expect(drawn.length).toBeGreaterThan(3);
    expect(placements.map((p) => [p.key, p.line, p.label]).sort()).toEqual(drawn.map((a) => [a.key, a.line, a.label]).sort());
  });

  test("that line of the real file is the artifact's declaration, and the glyph goes after its end", () => {
    for (const p of placements) {
      const header = source[p.line] ?? "";
      const name = p.qualname.split(".").pop() ?? p.qualname;
      expect(header).toMatch(new RegExp(`^\\s*(async\\s+)?(def|class)\\s+${name}\\b`));
      expect(p.endCharacter).toBeGreaterThanOrEqual(header.trimEnd().length - 1);
      expect(p.endCharacter).toBeLessThanOrEqual(header.length);
    }
  });

  test("a glyph is two lines high only where the line below leaves room", () => {
    for (const g of groups) {
      for (const p of g.placements) {
        const below = (source[p.line + 1] ?? "").trimEnd();
        if (p.rows === 2) expect(below.length <= (source[p.line] ?? "").trimEnd().length).toBe(true);
      }
      expect(g.uri.startsWith("data:image/svg+xml")).toBe(true);
    }
  });

  test("a one-line glyph drops the pedestals' numbers it could not draw readably; a two-line one keeps them (issue 32)", () => {
    const texts = (svg: string): number => (svg.match(/<text\b/g) ?? []).length;
    // Without the document's lines every glyph is one line high: both sizes are checked.
    const oneLine = placeGlyphs(result, { lineCount: source.length, height, oneLineHeight: oneLineGlyphHeight(19) });
    const all = [...groups, ...oneLine];
    expect(all.some((g) => g.rows === 1)).toBe(true);
    const svg = result.artifacts.find((a) => typeof a.glyph_svg === "string")?.glyph_svg ?? "";
    expect(texts(readablePedestals(svg, height))).toBe(2);
    expect(texts(readablePedestals(svg, oneLineGlyphHeight(19)))).toBe(0);
    expect((readablePedestals(svg, oneLineGlyphHeight(19)).match(/<g class="pedestal /g) ?? []).length).toBe(2);
    for (const g of all) {
      const pedestals = (g.svg.match(/<g class="pedestal /g) ?? []).length;
      expect([g.rows, pedestals]).toEqual([g.rows, 2]);
      // 0.3 of the height is the numbers' size: 19 px lines give 38 px (11 px numbers) and 17 px glyphs (5 px numbers).
      expect([g.rows, g.height, texts(g.svg)]).toEqual([g.rows, g.height, g.height * 0.3 >= MIN_PEDESTAL_FONT_PX ? 2 : 0]);
    }
    const one = all.find((g) => g.rows === 1);
    expect(one?.height).toBeLessThan(MIN_PEDESTAL_FONT_PX / 0.3);
  });
});

describe("compare → the comparison view", () => {
  const result = fixture("compare.json") as CompareResult;

  test("the header names both runs and counts what the server counted", () => {
    const h = compareHeader(result);
    expect(h.label).toBe(`${runName(result.base)} → ${runName(result.new)}`);
    expect(h.description).toContain(`${result.only_in_new} added`);
    expect(h.description).toContain(`${result.only_in_base} removed`);
    for (const c of result.changes.slice(0, 10)) expect(h.tooltip).toContain(escapeMarkdown(c.statement));
  });

  test("one item per artifact, each with the server's Δ text and its side's figures", () => {
    const items = compareItems(result);
    expect(items).toHaveLength(result.artifacts.length);
    for (const a of result.artifacts) {
      // Qualnames repeat across files (two `run`s): an item is one artifact of one file and line.
      const item = items.find((i) => i.id === `${a.kind}:${a.qualname}:${a.file_base ?? ""}:${a.line_base ?? ""}:${a.file_new ?? ""}:${a.line_new ?? ""}`);
      expect(item).toBeDefined();
      if (a.status === "changed") expect(item?.description).toContain(a.crt_delta_text);
      else expect(item?.description).toBe(a.status);
      expect(item?.tooltip).toContain(escapeMarkdown(a.qualname));
    }
    // The Bug 1 fix: the constructor was run by several threads before and by one after.
    const ctor = result.changes.find((c) => c.artifact === "WorkerManager.__init__");
    expect(ctor?.statement).toMatch(/run by \d+ threads → 1/);
  });

  test("the class level renders too", () => {
    const cls = fixture("compare-class.json") as CompareResult;
    expect(cls.level).toBe("class");
    expect(compareItems(cls).map((i) => i.qualname)).toContain("WorkerManager");
    expect(compareHeader(cls).description).toMatch(/class/);
  });

  test("one run per side: no verdicts, only the statements", () => {
    expect(result.significance).toBeNull();
    expect(significanceText(result)).toBe("");
    for (const c of result.changes) expect(changeText(c)).toBe(`${c.statement} [${c.evidence_text}]`);
  });

  test("changes are the server's data: a figure, before → after and the evidence, shown as it words them", () => {
    expect(result.changes.length).toBeGreaterThan(0);
    for (const c of result.changes) {
      expect(typeof c.figure).toBe("string");
      expect(typeof c.before).toBe("number");
      expect(typeof c.after).toBe("number");
      expect(["sampled", "inferred", "kernel-exact"]).toContain(c.evidence.source);
      expect(c.evidence_text.startsWith(c.evidence.source + ":")).toBe(true);
    }
    // What the server left out for too few samples is said in the tooltip, as it says it.
    const h = compareHeader(result);
    if (result.suppressed_note !== null) expect(h.tooltip).toContain(escapeMarkdown(result.suppressed_note));
    else expect(result.suppressed).toBe(0);
  });

  test("run sets: the n's, the test, and each change's verdict as the server decided it", () => {
    const sets = fixture("compare-sets.json") as CompareResult;
    const s = sets.significance;
    expect(s).not.toBeNull();
    expect(significanceText(sets)).toContain(`base n = ${s?.n_base}, new n = ${s?.n_new}`);
    expect(compareHeader(sets).description).toContain(`sets of ${s?.n_base} → ${s?.n_new} runs`);
    for (const c of sets.changes) {
      expect(changeText(c)).toContain(c.statement);
      if (c.significant !== null) expect(changeText(c)).toContain(c.significant ? "(significant" : "(within noise");
    }
    // The same runs on both sides: nothing can be significant.
    const same = fixture("compare-sets-same-runs.json") as CompareResult;
    expect(same.changes.every((c) => c.significant !== true)).toBe(true);
    expect(same.changes.map(changeText).join("\n")).not.toContain("(significant");
  });

  test("the icon is the server's trend: a change of exactly 0.0005 is the same, though Δ × 1000 rounds to 1", () => {
    const half = fixture("compare-half-tenth-pp.json") as CompareResult;
    const f = half.artifacts.find((a) => a.qualname === "f");
    if (f === undefined) throw new Error("compare-half-tenth-pp.json has no f");
    expect(Math.round(f.crt_delta * 1000)).toBe(1);
    expect(f.trend).toBe("same");
    expect(compareItems(half).find((i) => i.qualname === "f")).toMatchObject({ icon: "dash", colour: undefined });
  });

  test("names from the program are escaped in the Markdown tooltip", () => {
    const evil = fixture("compare.json") as CompareResult;
    const first = evil.artifacts[0];
    if (first === undefined) throw new Error("compare.json has no artifact");
    first.qualname = "<script>alert(1)</script>*x*";
    const item = compareItems(evil).find((i) => i.qualname === first.qualname);
    expect(item?.tooltip).not.toContain("<script>");
    expect(item?.tooltip).not.toContain("*x*");
  });
});

describe("runs → run list, picker and status bar", () => {
  const runs = fixture("runs.json") as RunsResult;

  test("every run is listed once, the active one marked, newest first", () => {
    const items = runItems(runs);
    expect(items.map((i) => i.path).sort()).toEqual(runs.runs.map((r) => r.path).sort());
    expect(items.filter((i) => i.active).map((i) => i.path)).toEqual([runs.active]);
    const names = items.map((i) => i.label);
    expect([...names].sort().reverse()).toEqual(names);
  });

  test("the picker offers every other run", () => {
    const active = runs.active ?? "";
    expect(runPicks(runs, active).map((p) => p.path).sort()).toEqual(runs.runs.map((r) => r.path).filter((p) => p !== active).sort());
  });

  test("the status bar shows the active run with the server's counts", () => {
    const s = runs.summary;
    expect(s).not.toBeNull();
    const v = statusView(runs, "running");
    expect(v.text).toContain(s?.name.replace(/\.json$/, "") ?? "?");
    expect(v.text).toContain(`${s?.samples.toLocaleString("en-US")} samples`);
    expect(v.tooltip).toContain(`Run ${runs.active}`);
  });
});

describe("overview → hot artifacts", () => {
  for (const name of ["overview.json", "overview-filtered.json"]) {
    test(`${name}: the top functions by crt, each with the server's share`, () => {
      const ov = fixture(name) as OverviewResult;
      const items = hotItems(ov.functions, 5);
      expect(items.length).toBe(Math.min(5, ov.functions.length));
      const best = [...ov.functions].sort((a, b) => b.crt - a.crt).slice(0, items.length);
      expect(items.map((i) => i.key)).toEqual(best.map((e) => e.key));
      for (const [i, e] of best.entries()) {
        expect(items[i]?.description).toBe(percent(e.crt));
        expect(items[i]?.tooltip).toContain(`${e.file}:${e.line}`);
      }
    });
  }
});

describe("threads → the threads view", () => {
  test("every thread with its name, type and share; excluded ones last", () => {
    const result = fixture("threads.json") as ThreadsResult;
    const items = threadItems(result);
    expect(items.map((i) => i.id).sort((a, b) => a - b)).toEqual(result.threads.map((t) => t.id).sort((a, b) => a - b));
    for (const t of result.threads) {
      const item = items.find((i) => i.id === t.id);
      expect(item?.label).toBe(t.name);
      expect(item?.description).toBe(`${t.type} · ${t.excluded ? "excluded" : percent(t.crt)}`);
    }
    const firstExcluded = items.findIndex((i) => !i.included);
    if (firstExcluded >= 0) expect(items.slice(firstExcluded).every((i) => !i.included)).toBe(true);
  });
});
