import { expect } from "expect";
import { describe, test } from "node:test";
import {
  attachmentStyle,
  editorLineHeight,
  glyphHeight,
  glyphThemeFor,
  hintScaleFor,
  oneLineGlyphHeight,
  placeGlyphs,
  sizedSvg,
  svgDataUri,
  twoLineGlyphFits,
  visualColumns,
} from "../../src/placement";
import type { DocumentArtifact, DocumentArtifactsResult } from "../../src/protocol";

const SVG_A = '<svg xmlns="http://www.w3.org/2000/svg" class="threadradar" width="63" height="36" viewBox="0 0 63 36"><title>a</title></svg>';
const SVG_B = '<svg xmlns="http://www.w3.org/2000/svg" class="threadradar" width="63" height="36" viewBox="0 0 63 36"><title>b</title></svg>';
const SVG_C = '<svg xmlns="http://www.w3.org/2000/svg" class="threadradar" width="63" height="36" viewBox="0 0 63 36"><title>c</title><path d="M0 0"/></svg>';

function artifact(line: number, svg: string | undefined, extra: Partial<DocumentArtifact> = {}): DocumentArtifact {
  return {
    key: `function:/ws/a.py:${line + 1}:f${line}`,
    kind: "function",
    name: `f${line}`,
    qualname: `f${line}`,
    line,
    character: 4,
    end_character: 30,
    recorded_line: line + 1,
    crt: 0.5,
    self_crt: 0.1,
    seconds: 1,
    samples: 10,
    threads: 2,
    thread_types: 1,
    cells: [],
    text: "▂▅×2",
    label: "50.0% 1.00s · 2 thr/1 type · ▂▅×2",
    ...(svg === undefined ? {} : { glyph_svg: svg }),
    ...extra,
  };
}

function result(artifacts: DocumentArtifact[]): DocumentArtifactsResult {
  return { run: "r.json", generation: 1, exclude_threads: [], stale: 0, file: null, artifacts };
}

describe("theme and size", () => {
  test("dark and high-contrast themes get the dark palette unless the setting says otherwise", () => {
    expect([1, 2, 3, 4].map((k) => glyphThemeFor(k as 1 | 2 | 3 | 4))).toEqual(["light", "dark", "dark", "light"]);
    expect(glyphThemeFor(2, "light")).toBe("light");
    expect(glyphThemeFor(1, "dark")).toBe("dark");
  });

  test("line height follows VS Code's rules for editor.lineHeight", () => {
    expect(editorLineHeight(14, 0, "linux")).toBe(19); // 14 × 1.35
    expect(editorLineHeight(12, 0, "darwin")).toBe(18); // 12 × 1.5
    expect(editorLineHeight(14, 1.5, "linux")).toBe(21); // a multiple
    expect(editorLineHeight(14, 22, "linux")).toBe(22); // px
    expect(editorLineHeight(Number.NaN, Number.NaN, "linux")).toBe(19);
  });

  test("the glyph is two lines high, within bounds", () => {
    expect(glyphHeight(19)).toBe(38);
    expect(glyphHeight(4)).toBe(16);
    expect(glyphHeight(200)).toBe(96);
  });
});

describe("SVG sizing", () => {
  test("explicit width and height are set to the asked height, keeping the aspect ratio and viewBox", () => {
    const s = sizedSvg(SVG_A, 38);
    expect(s).toBeDefined();
    expect(s?.height).toBe(38);
    expect(s?.width).toBe(67); // 38 × 63/36 = 66.5
    expect(s?.svg).toContain('width="67"');
    expect(s?.svg).toContain('height="38"');
    expect(s?.svg).toContain('viewBox="0 0 63 36"');
    expect(s?.svg).toContain("<title>a</title>");
  });

  test("an SVG without width and height gets them from its viewBox", () => {
    const s = sizedSvg('<svg viewBox="0 0 70 40"><g/></svg>', 20);
    expect(s?.width).toBe(35);
    expect(s?.svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" height="20" width="35" viewBox="0 0 70 40">/);
  });

  test("an SVG without any size gets 1.75 × its height and a viewBox from its old size when it had one", () => {
    expect(sizedSvg('<svg xmlns="http://www.w3.org/2000/svg"><g/></svg>', 32)?.width).toBe(56);
    expect(sizedSvg('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', 20)?.svg).toContain('viewBox="0 0 10 10"');
  });

  test("text that is not an SVG is refused", () => {
    expect(sizedSvg("<html></html>", 30)).toBeUndefined();
    expect(sizedSvg("", 30)).toBeUndefined();
  });

  test("the data URI is base64 (no characters CSS or a URI parser would change)", () => {
    const uri = svgDataUri('<svg><title>"><script>é</title></svg>');
    expect(uri).toMatch(/^data:image\/svg\+xml;base64,[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(uri.split(",")[1] ?? "", "base64").toString("utf8")).toBe('<svg><title>"><script>é</title></svg>');
  });
});

describe("placement", () => {
  test("one decoration per artifact with a glyph, after the header's end, grouped by identical image", () => {
    const lines = Array.from({ length: 30 }, () => "");
    const groups = placeGlyphs(result([artifact(3, SVG_A), artifact(10, SVG_C), artifact(20, SVG_A)]), { lineCount: 30, height: 38, lines });
    expect(groups).toHaveLength(2);
    const [a, b] = groups;
    expect(a?.placements.map((p) => p.line)).toEqual([3, 20]);
    expect(b?.placements.map((p) => p.line)).toEqual([10]);
    expect(a?.placements[0]).toMatchObject({ character: 4, endCharacter: 30, key: "function:/ws/a.py:4:f3" });
    expect(a?.height).toBe(38);
    expect(a?.uri.startsWith("data:image/svg+xml;base64,")).toBe(true);
  });

  test("images that differ only in their title (the artifact's name) share a group", () => {
    const groups = placeGlyphs(result([artifact(1, SVG_A), artifact(2, SVG_B)]), { lineCount: 5, height: 20 });
    expect(groups).toHaveLength(1);
    expect(groups[0]?.svg).not.toContain("<title>");
    expect(groups[0]?.placements.map((p) => p.line)).toEqual([1, 2]);
  });

  test("never on a line outside the document, never two on one line, nothing without a glyph", () => {
    const groups = placeGlyphs(result([artifact(-1, SVG_A), artifact(30, SVG_A), artifact(5, SVG_A), artifact(5, SVG_C), artifact(6, undefined), artifact(7, "not svg")]), {
      lineCount: 30,
      height: 38,
    });
    expect(groups.flatMap((g) => g.placements.map((p) => p.line))).toEqual([5]);
  });

  test("bad columns fall back to the line's start", () => {
    const [g] = placeGlyphs(result([artifact(2, SVG_A, { character: -3, end_character: 1.5 })]), { lineCount: 5, height: 20 });
    expect(g?.placements[0]).toMatchObject({ character: 0, endCharacter: 0 });
  });

  test("the attachment is as large as the image and aligned with the header's top", () => {
    const s = attachmentStyle(67, 38);
    expect(s).toMatchObject({ width: "67px", height: "38px" });
    expect(s.textDecoration).toContain("vertical-align: top");
    expect(attachmentStyle(33, 19, 1).margin).toBe("1px 0 0 1.5em");
  });
});

describe("a glyph never covers code", () => {
  const doc = [
    "class WorkerManager:", // 0: a docstring longer than the header below
    '    """Keeps the registered workers and tells each one when to stop."""',
    "",
    "    def get(self) -> WorkerManager:", // 3: a blank line below
    "",
    "    def short_body(self, a, b, c):", // 5: a shorter line below
    "        return a",
    "    def lens_below(self):", // 7: the next declaration has a lens above it
    "    def x(self):",
    "def last():", // 9: the last line
  ];

  test("columns: tabs to the next stop, wide characters two, combining marks none", () => {
    expect(visualColumns("\tx", 4)).toBe(5);
    expect(visualColumns("ab\tx", 4)).toBe(5);
    expect(visualColumns("ab\tx", 8)).toBe(9);
    expect(visualColumns("名前", 4)).toBe(4);
    expect(visualColumns("e\u0301", 4)).toBe(1);
    expect(visualColumns("abcdef", 4, 3)).toBe(3);
  });

  test("two lines high only where the line below is blank, missing or ends before the header does", () => {
    expect(twoLineGlyphFits(doc, 0, doc[0]?.length ?? 0)).toBe(false);
    expect(twoLineGlyphFits(doc, 3, doc[3]?.length ?? 0)).toBe(true);
    expect(twoLineGlyphFits(doc, 5, doc[5]?.length ?? 0)).toBe(true);
    expect(twoLineGlyphFits(doc, 9, doc[9]?.length ?? 0)).toBe(true);
    // A tab-indented line below is as wide as its expanded tabs.
    expect(twoLineGlyphFits(["def f(a):", "\t\treturn a"], 0, 9, 4)).toBe(false);
    expect(twoLineGlyphFits(["def f(a):", "\tpass"], 0, 9, 4)).toBe(true);
  });

  test("a lens above the line below (a view zone) takes the second row", () => {
    expect(twoLineGlyphFits(doc, 7, doc[7]?.length ?? 0)).toBe(true);
    expect(twoLineGlyphFits(doc, 7, doc[7]?.length ?? 0, 4, new Set([8]))).toBe(false);
  });

  test("placement: the paper's two-line glyph where it fits, a one-line glyph elsewhere, sized accordingly", () => {
    const groups = placeGlyphs(result([artifact(0, SVG_A), artifact(3, SVG_A), artifact(7, SVG_A)]), {
      lineCount: doc.length,
      height: glyphHeight(19),
      oneLineHeight: oneLineGlyphHeight(19),
      lines: doc,
      lensLines: new Set([8]),
    });
    const rows = new Map(groups.flatMap((g) => g.placements.map((p) => [p.line, { rows: p.rows, height: g.height, groupRows: g.rows }] as const)));
    expect(rows.get(0)).toEqual({ rows: 1, height: 17, groupRows: 1 });
    expect(rows.get(3)).toEqual({ rows: 2, height: 38, groupRows: 2 });
    expect(rows.get(7)).toEqual({ rows: 1, height: 17, groupRows: 1 });
    // The same glyph at two sizes is two images.
    expect(groups).toHaveLength(2);
  });

  test("an inlay hint that is always shown pushes the glyph right: a longer line below still fits", () => {
    const header = "    def run(self) -> None:";
    const below = "        self._start_gate.wait()";
    expect(twoLineGlyphFits([header, below], 0, header.length)).toBe(false);
    expect(twoLineGlyphFits([header, below], 0, header.length, 4, undefined, 10)).toBe(true);
    const label = "88.1% 1.07s · 6 thr/1 type · ▂×6"; // 32 columns
    const r = result([artifact(0, SVG_A, { label, end_character: header.length })]);
    const place = (hintScale: number) => placeGlyphs(r, { lineCount: 2, height: 38, oneLineHeight: 17, lines: [header, below], hintScale })[0]?.rows;
    expect(place(0)).toBe(1);
    expect(place(hintScaleFor(true, "on", 0, 14))).toBe(2);
  });

  test("hints count only when the server sends them and the editor always shows them, at their font size", () => {
    expect(hintScaleFor(true, "on", 0, 14)).toBeCloseTo(0.9);
    expect(hintScaleFor(true, "on", 7, 14)).toBeCloseTo(0.45);
    expect(hintScaleFor(true, "on", 30, 14)).toBeCloseTo(0.9); // larger than the editor's: the editor's size
    expect(hintScaleFor(true, "onUnlessPressed", 0, 14)).toBe(0);
    expect(hintScaleFor(true, "off", 0, 14)).toBe(0);
    expect(hintScaleFor(false, "on", 0, 14)).toBe(0);
  });

  test("without the document's text, no glyph is drawn two lines high", () => {
    const groups = placeGlyphs(result([artifact(3, SVG_A)]), { lineCount: 10, height: 38 });
    expect(groups[0]?.rows).toBe(1);
    expect(groups[0]?.height).toBe(19);
  });
});

