// Where the in-situ glyphs go, from `threadRadar/documentArtifacts`: one image at the right of
// each profiled declaration's header line, grouped by identical SVG so the number of decoration
// types stays bounded. The paper's glyph is two editor lines high; it hangs down beside the line
// under the header, so it is drawn that size only where that line's text ends before the glyph
// starts (a blank line, a short statement, a line shorter than the header and its inlay hint).
// Elsewhere (a docstring under a short `def`) the glyph is one line high and the two-line one is
// in the hover and the panels: a glyph never covers code. Pure: no `vscode` import.

import type { DocumentArtifactsResult, GlyphTheme } from "./protocol";
import type { ArtifactKind } from "../../../web/protocol";

/** VS Code's theme kinds (`vscode.ColorThemeKind`: Light = 1, Dark = 2, HighContrast = 3, HighContrastLight = 4). */
export type ThemeKind = 1 | 2 | 3 | 4;

/** The glyph colours for an editor theme: dark and high-contrast (dark) themes get the dark palette. */
export function glyphThemeFor(kind: ThemeKind, setting: "auto" | GlyphTheme = "auto"): GlyphTheme {
  if (setting === "light" || setting === "dark") return setting;
  return kind === 2 || kind === 3 ? "dark" : "light";
}

/**
 * The editor's line height in px, as VS Code computes it from `editor.fontSize` and
 * `editor.lineHeight`: 0 = automatic (1.5 × the font size on macOS, 1.35 × elsewhere), a value
 * below 8 = a multiple of the font size, otherwise px.
 */
export function editorLineHeight(fontSize: number, lineHeight: number, platform: string): number {
  const size = Number.isFinite(fontSize) && fontSize > 0 ? fontSize : platform === "darwin" ? 12 : 14;
  let px: number;
  if (!Number.isFinite(lineHeight) || lineHeight <= 0) px = size * (platform === "darwin" ? 1.5 : 1.35);
  else if (lineHeight < 8) px = size * lineHeight;
  else px = lineHeight;
  return Math.max(8, Math.round(px));
}

/** The glyph's height: two editor lines (the paper's in-situ size), within sane bounds. */
export function glyphHeight(lineHeightPx: number): number {
  return Math.min(96, Math.max(16, Math.round(2 * lineHeightPx)));
}

/** The one-line glyph's height: the editor line, less a pixel above and below. */
export function oneLineGlyphHeight(lineHeightPx: number): number {
  return Math.max(8, Math.round(lineHeightPx) - 2);
}

/** Width of a glyph of the given height (the server's glyphs are 1.75 × as wide as high). */
/**
 * The hint scale for `PlaceOptions.hintScale`: 0 unless the editor always shows inlay hints
 * (`editor.inlayHints.enabled` "on": with "onUnlessPressed" they vanish while a key is held and the
 * glyph moves left). VS Code draws hints at `editor.inlayHints.fontSize` when that is between 5 and
 * the editor's font size, else at the editor's; a tenth is kept as a margin for their padding and
 * proportional glyphs.
 */
export function hintScaleFor(serverShowsHints: boolean, enabled: unknown, hintFontSize: unknown, fontSize: number): number {
  if (!serverShowsHints || enabled !== "on") return 0;
  const size = Number.isFinite(fontSize) && fontSize > 0 ? fontSize : 14;
  const hint = typeof hintFontSize === "number" && hintFontSize >= 5 && hintFontSize <= size ? hintFontSize : size;
  return 0.9 * (hint / size);
}

export function glyphWidth(height: number): number {
  return Math.round(height * 1.75);
}

const SVG_OPEN = /<svg\b[^>]*>/;

function attribute(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)')`).exec(tag);
  return m ? (m[2] ?? m[3]) : undefined;
}

function setAttribute(tag: string, name: string, value: string): string {
  const re = new RegExp(`(\\s${name}\\s*=\\s*)("[^"]*"|'[^']*')`);
  if (re.test(tag)) return tag.replace(re, `$1"${value}"`);
  return tag.replace(/^<svg\b/, `<svg ${name}="${value}"`);
}

/**
 * The SVG with an explicit `width` and `height` in px on its root (an image without them has no
 * intrinsic size in a CSS `content: url(…)`), keeping its `viewBox` so it scales. Returns undefined
 * for text that is not an SVG document.
 */
export function sizedSvg(svg: string, height: number): { svg: string; width: number; height: number } | undefined {
  const m = SVG_OPEN.exec(svg);
  if (m === null) return undefined;
  const tag = m[0];
  let width = glyphWidth(height);
  const viewBox = attribute(tag, "viewBox");
  const w0 = Number.parseFloat(attribute(tag, "width") ?? "");
  const h0 = Number.parseFloat(attribute(tag, "height") ?? "");
  let ratio: number | undefined;
  if (w0 > 0 && h0 > 0) ratio = w0 / h0;
  else if (viewBox !== undefined) {
    const parts = viewBox.trim().split(/[\s,]+/).map(Number);
    const vw = parts[2];
    const vh = parts[3];
    if (parts.length === 4 && vw !== undefined && vh !== undefined && vw > 0 && vh > 0) ratio = vw / vh;
  }
  if (ratio !== undefined && Number.isFinite(ratio)) width = Math.max(1, Math.round(height * ratio));
  let out = setAttribute(tag, "width", String(width));
  out = setAttribute(out, "height", String(height));
  if (viewBox === undefined && w0 > 0 && h0 > 0) out = setAttribute(out, "viewBox", `0 0 ${w0} ${h0}`);
  if (!/\sxmlns\s*=/.test(out)) out = setAttribute(out, "xmlns", "http://www.w3.org/2000/svg");
  return { svg: svg.slice(0, m.index) + out + svg.slice(m.index + tag.length), width, height };
}

/**
 * The image of a glyph for a decoration: sized, and without its `<title>` (the artifact's name,
 * which a CSS image never shows), so that artifacts with equal figures share one image.
 */
export function decorationSvg(svg: string, height: number): { svg: string; width: number; height: number } | undefined {
  return sizedSvg(svg.replace(/<title>[^<]*<\/title>/g, ""), height);
}

/** The smallest rendered font size in px at which the pedestals' numbers stay readable. */
export const MIN_PEDESTAL_FONT_PX = 8;

/**
 * The glyph without its pedestals' numbers when they would be drawn smaller than
 * `MIN_PEDESTAL_FONT_PX` at `height` px (the server draws them at 0.3 of the glyph's height: at
 * a one-line 17 px glyph they were 5 px, unreadable). The pedestals' shapes stay; the threads and
 * thread types are in the inlay hint and the hover.
 */
export function readablePedestals(svg: string, height: number): string {
  if (height * 0.3 >= MIN_PEDESTAL_FONT_PX) return svg;
  return svg.replace(/(<g class="pedestal [^"]*"[^>]*>(?:(?!<\/g>)[\s\S])*?)<text\b[^>]*>[^<]*<\/text>/g, "$1");
}

/** A `data:` URI of an SVG (base64: VS Code's CSS and markdown need it, microsoft/vscode#51290). */
export function svgDataUri(svg: string): string {
  return "data:image/svg+xml;base64," + Buffer.from(svg, "utf8").toString("base64");
}

export interface GlyphPlacement {
  key: string;
  qualname: string;
  kind: ArtifactKind;
  /** 0-based line of the declaration header. */
  line: number;
  /** Start and end (UTF-16 columns) of the header line's text; the glyph goes after the end. */
  character: number;
  endCharacter: number;
  label: string;
  /** How many editor lines the glyph spans: 2 (the paper's size) where it fits, else 1. */
  rows: 1 | 2;
}

export interface GlyphGroup {
  /** The sized SVG shared by every placement of the group. */
  svg: string;
  uri: string;
  width: number;
  height: number;
  rows: 1 | 2;
  placements: GlyphPlacement[];
}

export interface PlaceOptions {
  lineCount: number;
  /** The two-line glyph's height in px (`glyphHeight`). */
  height: number;
  /** The one-line glyph's height in px (`oneLineGlyphHeight`); without it, every glyph is one line of `height / 2`. */
  oneLineHeight?: number;
  /** The document's lines: where they are missing, no glyph is drawn two lines high. */
  lines?: readonly string[];
  /** `editor.tabSize` (4). */
  tabSize?: number;
  /** 0-based lines that get a code lens above them (a view zone between them and the line above). */
  lensLines?: ReadonlySet<number>;
  /**
   * When the inlay hints are always shown: how many editor columns one column of a hint's label
   * takes at least (its font size over the editor's, less a margin). The hint sits between the
   * header and the glyph, so it pushes the glyph right by at least that much. 0 or absent: hints
   * are not counted.
   */
  hintScale?: number;
}

// East Asian wide and fullwidth characters take two columns in the editor (as in VS Code's own
// column computations); everything else outside the BMP's combining marks takes one.
const WIDE = /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]|[\u{1f300}-\u{1faff}\u{20000}-\u{3fffd}]/u;
const ZERO_WIDTH = /^(?:[\u0300-\u036f]|[\u200b-\u200f]|[\ufe00-\ufe0f])$/u;

/** The editor columns the first `end` UTF-16 units of `text` take (tabs to the next tab stop). */
export function visualColumns(text: string, tabSize = 4, end = text.length): number {
  const tab = Number.isInteger(tabSize) && tabSize > 0 ? tabSize : 4;
  let col = 0;
  for (const ch of text.slice(0, Math.max(0, end))) {
    if (ch === "\t") col += tab - (col % tab);
    else if (ZERO_WIDTH.test(ch)) continue;
    else col += WIDE.test(ch) ? 2 : 1;
  }
  return col;
}

/**
 * Whether the two-line glyph after the end of header `line` (which ends at UTF-16 column
 * `endCharacter`) leaves the line below uncovered: that line is blank (or there is none), gets no
 * code lens in between, and its text ends no further right than the header's plus `extraColumns`
 * (the glyph starts a margin after them).
 */
export function twoLineGlyphFits(
  lines: readonly string[],
  line: number,
  endCharacter: number,
  tabSize = 4,
  lensLines?: ReadonlySet<number>,
  /** Columns between the header's end and the glyph that are known to be taken (an inlay hint). */
  extraColumns = 0,
): boolean {
  const header = lines[line];
  if (header === undefined) return false;
  const below = line + 1;
  if (below >= lines.length) return true;
  if (lensLines?.has(below) === true) return false;
  const text = (lines[below] ?? "").trimEnd();
  if (text === "") return true;
  return visualColumns(text, tabSize) <= visualColumns(header, tabSize, endCharacter) + Math.max(0, Math.floor(extraColumns));
}

/**
 * Groups the artifacts of one document into decorations: one per declaration that has a glyph and
 * a line inside the document (never a line the server did not vouch for), one per line, two lines
 * high where that covers no text and one line high elsewhere, grouped by identical image.
 */
export function placeGlyphs(result: DocumentArtifactsResult, opts: PlaceOptions): GlyphGroup[] {
  const groups = new Map<string, GlyphGroup>();
  const usedLines = new Set<number>();
  const oneLine = opts.oneLineHeight ?? Math.max(8, Math.round(opts.height / 2));
  for (const a of result.artifacts) {
    if (typeof a.glyph_svg !== "string") continue;
    if (!Number.isInteger(a.line) || a.line < 0 || a.line >= opts.lineCount || usedLines.has(a.line)) continue;
    const character = Number.isInteger(a.character) && a.character >= 0 ? a.character : 0;
    const end = Number.isInteger(a.end_character) && a.end_character >= character ? a.end_character : character;
    const hint = opts.hintScale !== undefined && opts.hintScale > 0 && typeof a.label === "string" ? visualColumns(a.label) * opts.hintScale : 0;
    const rows: 1 | 2 = opts.lines !== undefined && twoLineGlyphFits(opts.lines, a.line, end, opts.tabSize, opts.lensLines, hint) ? 2 : 1;
    const height = rows === 2 ? opts.height : oneLine;
    const sized = decorationSvg(readablePedestals(a.glyph_svg, height), height);
    if (sized === undefined) continue;
    usedLines.add(a.line);
    let g = groups.get(sized.svg);
    if (g === undefined) {
      g = { svg: sized.svg, uri: svgDataUri(sized.svg), width: sized.width, height: sized.height, rows, placements: [] };
      groups.set(sized.svg, g);
    }
    g.placements.push({ key: a.key, qualname: a.qualname, kind: a.kind, line: a.line, character, endCharacter: end, label: a.label, rows });
  }
  return [...groups.values()];
}

/**
 * The CSS of a glyph attachment (an `after` decoration with `contentIconPath`): at the right of the
 * header, top-aligned with it (a two-line glyph reaches down beside the next line, which
 * `placeGlyphs` checked is short enough), drawn above the following lines. `textDecoration` is the
 * only attachment option that passes free CSS through.
 */
export function attachmentStyle(width: number, height: number, rows: 1 | 2 = 2): { width: string; height: string; margin: string; textDecoration: string } {
  return {
    width: `${width}px`,
    height: `${height}px`,
    margin: rows === 2 ? "0 0 0 1.5em" : "1px 0 0 1.5em",
    textDecoration: "none; vertical-align: top; position: relative; z-index: 1; pointer-events: none",
  };
}
