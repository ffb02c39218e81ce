// Where the in-situ glyphs go, from `threadRadar/documentArtifacts`: one image at the right of
// each profiled declaration's header line, two editor lines high (the paper's placement), grouped
// by identical SVG so the number of decoration types stays bounded. Pure: no `vscode` import.

import type { DocumentArtifactsResult, GlyphTheme } from "./protocol";
import type { ArtifactKind } from "./generated/protocol";

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

/** Width of a glyph of the given height (the server's glyphs are 1.75 × as wide as high). */
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
}

export interface GlyphGroup {
  /** The sized SVG shared by every placement of the group. */
  svg: string;
  uri: string;
  width: number;
  height: number;
  placements: GlyphPlacement[];
}

/**
 * Groups the artifacts of one document into decorations: one per declaration that has a glyph and
 * a line inside the document (never a line the server did not vouch for), one per line, grouped by
 * identical image.
 */
export function placeGlyphs(result: DocumentArtifactsResult, opts: { lineCount: number; height: number }): GlyphGroup[] {
  const groups = new Map<string, GlyphGroup>();
  const usedLines = new Set<number>();
  for (const a of result.artifacts) {
    if (typeof a.glyph_svg !== "string") continue;
    if (!Number.isInteger(a.line) || a.line < 0 || a.line >= opts.lineCount || usedLines.has(a.line)) continue;
    const sized = decorationSvg(a.glyph_svg, opts.height);
    if (sized === undefined) continue;
    usedLines.add(a.line);
    let g = groups.get(sized.svg);
    if (g === undefined) {
      g = { svg: sized.svg, uri: svgDataUri(sized.svg), width: sized.width, height: sized.height, placements: [] };
      groups.set(sized.svg, g);
    }
    const character = Number.isInteger(a.character) && a.character >= 0 ? a.character : 0;
    const end = Number.isInteger(a.end_character) && a.end_character >= character ? a.end_character : character;
    g.placements.push({ key: a.key, qualname: a.qualname, kind: a.kind, line: a.line, character, endCharacter: end, label: a.label });
  }
  return [...groups.values()];
}

/**
 * The CSS of a glyph attachment (an `after` decoration with `contentIconPath`): at the right of the
 * header, top-aligned with it so that it reaches down over the next line, drawn above the following
 * lines. `textDecoration` is the only attachment option that passes free CSS through.
 */
export function attachmentStyle(width: number, height: number): { width: string; height: string; margin: string; textDecoration: string } {
  return {
    width: `${width}px`,
    height: `${height}px`,
    margin: "0 0 0 1.5em",
    textDecoration: "none; vertical-align: top; position: relative; z-index: 1; pointer-events: none",
  };
}
