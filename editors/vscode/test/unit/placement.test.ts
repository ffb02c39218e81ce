import { expect } from "expect";
import { describe, test } from "node:test";
import {
  attachmentStyle,
  editorLineHeight,
  glyphHeight,
  glyphThemeFor,
  placeGlyphs,
  sizedSvg,
  svgDataUri,
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
    const groups = placeGlyphs(result([artifact(3, SVG_A), artifact(10, SVG_C), artifact(20, SVG_A)]), { lineCount: 30, height: 38 });
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
  });
});

