// The panels (overview, detail, Timeline, Sections, Waits, Trace compare): webviews of the same web
// app `threadradar serve` serves, whose messages `router.ts` forwards to the language server. A
// thread filter change reloads their figures; a run switch reloads every open panel, so that no
// tab (the Timeline's lanes, the Sections, the run dropdown) keeps showing the run before.

import * as vscode from "vscode";
import type { ServerConnection } from "./client";
import { errorSentence } from "./protocol";
import { routeMessage } from "./router";
import { shortName } from "./views";
import type { RouterHost } from "./router";
import { buildWebviewHtml, makeNonce, readWebAssets } from "./webviewHtml";
import type { PanelBoot, PanelCommand, WebAssets } from "./webviewHtml";

export type Kind = "overview" | "detail" | "timeline" | "tracecompare" | "sections" | "waits";

const TITLES: Record<Kind, string> = {
  waits: "ThreadRadar Waits",
  overview: "ThreadRadar Overview",
  detail: "ThreadRadar Detail",
  timeline: "ThreadRadar Timeline",
  tracecompare: "ThreadRadar Trace Compare",
  sections: "ThreadRadar Sections",
};

/** Opens `file` at the 1-based `line` in a text editor (not over a panel). */
export async function openLocation(file: string, line: number): Promise<void> {
  const uri = vscode.Uri.file(file);
  try {
    await vscode.workspace.fs.stat(uri);
  } catch {
    void vscode.window.showWarningMessage(`ThreadRadar cannot open ${file}: there is no such file on this machine.`);
    return;
  }
  try {
    const doc = await vscode.workspace.openTextDocument(uri);
    const l = Math.min(Math.max(0, line - 1), Math.max(0, doc.lineCount - 1));
    const pos = new vscode.Position(l, doc.lineAt(l).firstNonWhitespaceCharacterIndex);
    const column = vscode.window.visibleTextEditors[0]?.viewColumn ?? vscode.ViewColumn.One;
    await vscode.window.showTextDocument(doc, { viewColumn: column, selection: new vscode.Range(pos, pos), preview: true });
  } catch (e) {
    void vscode.window.showErrorMessage(`ThreadRadar cannot open ${file}: ${errorSentence(e)}`);
  }
}

export class Panels implements vscode.Disposable {
  private readonly panels = new Map<Kind, vscode.WebviewPanel>();
  /** What each open panel was loaded with (a panel asked for the same thing is only revealed). */
  private readonly boots = new Map<Kind, string>();
  private assets: WebAssets | undefined;
  /** The panel that switched the run itself (its page already shows the new run). */
  private switchedBy: Kind | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly server: ServerConnection,
    private readonly onChanged: () => void,
  ) {}

  private webAssets(): WebAssets {
    if (this.assets === undefined) this.assets = readWebAssets(vscode.Uri.joinPath(this.extensionUri, "media", "web").fsPath);
    return this.assets;
  }

  private host(kind: Kind): RouterHost {
    return {
      sendRequest: (m, p) => this.server.sendRequest(m, p),
      executeCommand: (c, a) => this.server.executeCommand(c, a),
      navigate: (file, line) => openLocation(file, line),
      changed: (what) => {
        if (what === "run") this.switchedBy = kind;
        this.onChanged();
      },
    };
  }

  /** The kinds of the open panels. */
  get open(): Kind[] {
    return [...this.panels.keys()];
  }

  showOverview(file?: string | null): void {
    this.show("overview", { panel: "overview", file: file ?? null });
  }

  showDetail(artifact: string): void {
    this.show("detail", { panel: "detail", artifact });
  }

  /** The Timeline tab of the panel, focused on an artifact's bars (the "Timeline" code lens), or the whole run. */
  showTimeline(artifact?: string): void {
    this.show("timeline", artifact === undefined ? { panel: "timeline" } : { panel: "timeline", artifact });
  }

  /** The Waits tab of the panel (the wait lens on its object, "ThreadRadar: Open the Waits"). */
  showWaits(object?: string | null): void {
    this.show("waits", object ? { panel: "waits", object } : { panel: "waits" });
  }

  /** The Trace compare tab: run `a` above, `b` below (none: the active run and the one before it). */
  showTraceCompare(a?: string, b?: string): void {
    this.show("tracecompare", { panel: "tracecompare", a, b });
  }

  /** The Sections tab of the panel on one section (the critical-section code lens), or all of them. */
  showSections(section?: { file: string; function: string; lock: string; line: number }): void {
    this.show("sections", section === undefined ? { panel: "sections" } : { panel: "sections", section });
  }

  private show(kind: Kind, boot: PanelBoot): void {
    let panel = this.panels.get(kind);
    if (panel === undefined) {
      panel = vscode.window.createWebviewPanel(`threadradar.${kind}`, TITLES[kind], { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false }, {
        enableScripts: true,
        enableCommandUris: false,
        enableFindWidget: true,
        localResourceRoots: [],
        retainContextWhenHidden: false,
      });
      panel.iconPath = vscode.Uri.joinPath(this.extensionUri, "media", "threadradar.svg");
      const p = panel;
      p.webview.onDidReceiveMessage(async (msg: unknown) => {
        const answer = await routeMessage(this.host(kind), msg);
        if (answer !== undefined) void p.webview.postMessage(answer);
      });
      p.onDidDispose(() => {
        if (this.panels.get(kind) !== p) return;
        this.panels.delete(kind);
        this.boots.delete(kind);
      });
      this.panels.set(kind, p);
    } else {
      panel.reveal(undefined, false);
      if (this.boots.get(kind) === JSON.stringify(boot)) return;
    }
    this.boots.set(kind, JSON.stringify(boot));
    this.load(kind, panel, boot);
  }

  private load(kind: Kind, panel: vscode.WebviewPanel, boot: PanelBoot): void {
    panel.title = TITLES[kind];
    if (boot.panel === "detail") panel.title = `${TITLES.detail}: ${shortName(boot.artifact)}`;
    if (boot.panel === "timeline" && boot.artifact !== undefined) panel.title = `${TITLES.timeline}: ${shortName(boot.artifact)}`;
    if (boot.panel === "sections" && boot.section !== undefined) panel.title = `${TITLES.sections}: ${boot.section.lock}`;
    try {
      panel.webview.html = buildWebviewHtml(this.webAssets(), { nonce: makeNonce(), cspSource: panel.webview.cspSource, boot });
    } catch (e) {
      void vscode.window.showErrorMessage(`The ThreadRadar panels could not be loaded: ${errorSentence(e)}`);
    }
  }

  /**
   * The active run changed: every open panel is loaded again on what it was opened for, so each of
   * its tabs and its run dropdown show the new run. The panel whose own dropdown switched the run
   * has already reloaded what it shows and keeps its tab.
   */
  runChanged(): void {
    const by = this.switchedBy;
    this.switchedBy = undefined;
    for (const [kind, panel] of this.panels) {
      const boot = this.boots.get(kind);
      if (kind === by || boot === undefined) {
        if (kind === by) void panel.webview.postMessage({ type: "threadradar.refresh" } satisfies PanelCommand);
        continue;
      }
      this.load(kind, panel, JSON.parse(boot) as PanelBoot);
    }
  }

  /** Tells open panels that the thread filter (or the colour theme) changed. */
  refresh(): void {
    const msg: PanelCommand = { type: "threadradar.refresh" };
    for (const p of this.panels.values()) void p.webview.postMessage(msg);
  }

  dispose(): void {
    for (const p of [...this.panels.values()]) p.dispose();
    this.panels.clear();
  }
}
