// The in-situ glyphs: the ThreadRadar image of each profiled declaration at the right of its header
// (two lines high where that covers no text, one line high elsewhere), as editor decorations. The server says where (`threadRadar/documentArtifacts`);
// `placement.ts` decides how; this file only talks to VS Code.

import * as vscode from "vscode";
import type { ServerConnection } from "./client";
import { config, themeKind } from "./client";
import { attachmentStyle, editorLineHeight, glyphHeight, glyphThemeFor, hintScaleFor, oneLineGlyphHeight, placeGlyphs } from "./placement";
import type { GlyphGroup } from "./placement";
import { Requests, errorSentence, isMethodNotFound } from "./protocol";
import type { DocumentArtifactsResult } from "./protocol";
import { extensionSettings, serverSettings } from "./settings";

function isPython(doc: vscode.TextDocument): boolean {
  return doc.languageId === "python" && doc.uri.scheme === "file";
}

/** The two-line and one-line glyph heights in px and the tab size of a document's editor. */
export function glyphSizesFor(doc: vscode.TextDocument): { two: number; one: number; tabSize: number; fontSize: number; hintsEnabled: unknown; hintFontSize: unknown } {
  const editor = vscode.workspace.getConfiguration("editor", doc);
  const fontSize = editor.get<number>("fontSize") ?? 14;
  const lineHeight = editor.get<number>("lineHeight") ?? 0;
  const line = editorLineHeight(fontSize, lineHeight, process.platform);
  const tabSize: unknown = vscode.window.visibleTextEditors.find((e) => e.document === doc)?.options?.tabSize;
  return {
    two: glyphHeight(line),
    one: oneLineGlyphHeight(line),
    tabSize: typeof tabSize === "number" ? tabSize : (editor.get<number>("tabSize") ?? 4),
    fontSize,
    hintsEnabled: editor.get("inlayHints.enabled"),
    hintFontSize: editor.get("inlayHints.fontSize"),
  };
}

export function glyphSizeFor(doc: vscode.TextDocument): number {
  return glyphSizesFor(doc).two;
}

function documentLines(doc: vscode.TextDocument): string[] {
  const lines: string[] = [];
  for (let i = 0; i < doc.lineCount; i++) lines.push(doc.lineAt(i).text);
  return lines;
}

export class GlyphDecorations implements vscode.Disposable {
  /** One decoration type per distinct image, shared by every editor. */
  private readonly types = new Map<string, vscode.TextEditorDecorationType>();
  private readonly disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pass = 0;
  private unsupported = false;

  constructor(
    private readonly server: ServerConnection,
    private readonly output: vscode.LogOutputChannel,
  ) {
    const soon = (ms: number) => () => this.schedule(ms);
    this.disposables.push(
      vscode.window.onDidChangeVisibleTextEditors(soon(50)),
      vscode.window.onDidChangeActiveColorTheme(soon(50)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (isPython(e.document) && vscode.window.visibleTextEditors.some((ed) => ed.document === e.document)) this.schedule(400);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (["threadradar", "editor.fontSize", "editor.lineHeight", "editor.tabSize", "editor.inlayHints"].some((k) => e.affectsConfiguration(k))) this.schedule(100);
      }),
      server.onReady(() => {
        this.unsupported = false;
        this.schedule(0);
      }),
    );
  }

  /** Recomputes every visible editor's glyphs after `ms` (coalescing bursts of events). */
  schedule(ms = 100): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.update().catch((e: unknown) => this.output.warn(`Glyphs: ${errorSentence(e)}`));
    }, ms);
  }

  private clearAll(): void {
    for (const t of this.types.values()) t.dispose();
    this.types.clear();
  }

  private async update(): Promise<void> {
    const pass = ++this.pass;
    const settings = extensionSettings(config());
    if (!settings.glyphs || this.server.state !== "running" || this.unsupported) {
      this.clearAll();
      return;
    }
    const theme = glyphThemeFor(themeKind(), settings.glyphTheme);
    const editors = vscode.window.visibleTextEditors.filter((e) => isPython(e.document));
    const docs = [...new Set(editors.map((e) => e.document))];
    const perDoc = new Map<vscode.TextDocument, GlyphGroup[]>();
    await Promise.all(
      docs.map(async (doc) => {
        const sizes = glyphSizesFor(doc);
        try {
          const [answer, shownLenses] = await Promise.all([
            this.server.sendRequest(Requests.documentArtifacts, { uri: doc.uri.toString(), glyph: { theme, size: sizes.two } }),
            codeLensLines(doc),
          ]);
          const r = answer as DocumentArtifactsResult;
          // Code lenses sit above each declaration (and the file's above line 0), and above wait
          // sites, critical sections, tests and whatever other extensions annotate: a two-line
          // glyph must not hang over one.
          const server = serverSettings(config(), themeKind());
          const lensLines = new Set<number>(shownLenses);
          // The server sends figure lenses only at `annotations: all`.
          const lenses = server.annotations === "all";
          if (lenses && server.codeLens === true) for (const a of r.artifacts) lensLines.add(a.line);
          if (lenses && server.fileLens === true) lensLines.add(0);
          const lines = documentLines(doc);
          const hintScale = hintScaleFor(server.inlayHints === true && server.annotations !== "glyph", sizes.hintsEnabled, sizes.hintFontSize, sizes.fontSize);
          perDoc.set(doc, placeGlyphs(r, { lineCount: lines.length, height: sizes.two, oneLineHeight: sizes.one, lines, tabSize: sizes.tabSize, lensLines, hintScale }));
        } catch (e) {
          if (isMethodNotFound(e)) {
            if (!this.unsupported) this.output.warn("This threadradar server does not answer threadRadar/documentArtifacts: update it to see the glyphs beside the code.");
            this.unsupported = true;
          } else {
            this.output.warn(`Glyphs for ${doc.uri.fsPath}: ${errorSentence(e)}`);
          }
          perDoc.set(doc, []);
        }
      }),
    );
    if (pass !== this.pass) return; // a newer pass is under way
    const used = new Set<string>();
    for (const groups of perDoc.values()) for (const g of groups) used.add(g.uri);
    for (const [uri, type] of this.types) {
      if (!used.has(uri)) {
        type.dispose(); // also removes it from every editor
        this.types.delete(uri);
      }
    }
    for (const groups of perDoc.values()) {
      for (const g of groups) {
        if (!this.types.has(g.uri)) {
          this.types.set(
            g.uri,
            vscode.window.createTextEditorDecorationType({
              after: { contentIconPath: vscode.Uri.parse(g.uri), ...attachmentStyle(g.width, g.height, g.rows) },
              rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
            }),
          );
        }
      }
    }
    for (const editor of editors) {
      const groups = perDoc.get(editor.document) ?? [];
      const byUri = new Map(groups.map((g) => [g.uri, g]));
      for (const [uri, type] of this.types) {
        const g = byUri.get(uri);
        editor.setDecorations(
          type,
          g === undefined ? [] : g.placements.map((p) => new vscode.Range(p.line, p.endCharacter, p.line, p.endCharacter)),
        );
      }
    }
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.pass++;
    this.clearAll();
    for (const d of this.disposables) d.dispose();
  }
}

/**
 * The 0-based lines of `doc` that get a code lens, from every provider as the editor shows them
 * (ours for declarations, the file, wait sites, sections and tests, and other extensions'); none
 * when the editor cannot say.
 */
async function codeLensLines(doc: vscode.TextDocument): Promise<number[]> {
  try {
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[] | undefined>("vscode.executeCodeLensProvider", doc.uri);
    return (lenses ?? []).map((l) => l.range.start.line);
  } catch {
    return [];
  }
}
