// The panels' HTML for a webview: the same page `threadradar serve` serves (web/index.html with
// style.css, transport.js and app.js inlined), under a fresh nonce and a CSP that allows nothing
// but the nonce'd style and scripts and `data:` images. A small boot script (also nonce'd) opens
// the detail of an artifact, narrows the overview to a file, and reloads the figures when the
// extension says the run or the thread filter changed. Pure except for reading the files.

import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

export interface WebAssets {
  index: string;
  style: string;
  transport: string;
  app: string;
}

/** What the page shows first. */
export type PanelBoot =
  | { panel: "overview"; file?: string | null }
  | { panel: "detail"; artifact: string }
  | { panel: "timeline"; artifact?: string }
  | { panel: "tracecompare"; a?: string; b?: string }
  | { panel: "sections"; section?: { file: string; function: string; lock: string; line: number } }
  | { panel: "waits"; object?: string };

/** Messages the extension posts to a page (never with an `id`, so the transport ignores them). */
export type PanelCommand = { type: "threadradar.refresh" } | { type: "threadradar.show"; artifact: string };

export const WEB_FILES = { index: "index.html", style: "style.css", timelineStyle: "timeline.css", transport: "transport.js", dom: "dom.js", timeline: "timeline.js", sectionsStyle: "sections.css", sections: "sections.js", waitsStyle: "waits.css", waits: "waits.js", traceCompareStyle: "tracecompare.css", traceCompare: "tracecompare.js", app: "app.js" } as const;

/** The page's files; the timeline's renderer and styles go with the transport and the styles, as `threadradar serve` inlines them. */
export function readWebAssets(dir: string): WebAssets {
  const read = (name: string): string => fs.readFileSync(path.join(dir, name), "utf8");
  return {
    index: read(WEB_FILES.index),
    style: `${read(WEB_FILES.style)}\n${read(WEB_FILES.timelineStyle)}\n${read(WEB_FILES.sectionsStyle)}\n${read(WEB_FILES.waitsStyle)}\n${read(WEB_FILES.traceCompareStyle)}`,
    transport: `${read(WEB_FILES.transport)}\n${read(WEB_FILES.dom)}\n${read(WEB_FILES.timeline)}\n${read(WEB_FILES.sections)}\n${read(WEB_FILES.waits)}\n${read(WEB_FILES.traceCompare)}`,
    app: read(WEB_FILES.app),
  };
}

/** 128 random bits, hex. */
export function makeNonce(): string {
  return randomBytes(16).toString("hex");
}

/**
 * The sources of `webview.cspSource` (e.g. `'self' https://*.vscode-cdn.net`) that are plain
 * source expressions: nothing that could end the directive or add another.
 */
export function cspSources(cspSource: string): string {
  return cspSource
    .split(/\s+/)
    .filter((t) => /^(?:'self'|[a-z][a-z0-9+.-]*:(?:\/\/[A-Za-z0-9*.:_-]+)?)$/i.test(t))
    .join(" ");
}

export function webviewCsp(nonce: string, cspSource: string): string {
  const img = ["data:", cspSources(cspSource)].filter((s) => s !== "").join(" ");
  return `default-src 'none'; img-src ${img}; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'`;
}

/** JSON that is safe inside a `<script>` element (no `</script>`, no `<!--`, no line separators). */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** Styles of the detail panel (the page without its overview column). */
const EXTRA_STYLE = `
body.threadradar-detail-panel #overview, body.threadradar-detail-panel #close-detail { display: none; }
body.threadradar-detail-panel #detail { border-left: none; padding-left: 0; }
`;

/** Runs after app.js; `BOOT` is replaced by the panel's JSON. Uses only app.js's public hooks. */
const BOOT_SCRIPT = `
(function () {
  "use strict";
  var boot = BOOT;
  var P = window.ThreadRadarPanels, T = window.ThreadRadarTransport;
  if (!P || !T) return;
  var overview = document.getElementById("overview");
  if (boot.panel === "detail") document.body.classList.add("threadradar-detail-panel");
  function afterFirstOverview(fn) {
    if (overview.hasAttribute("data-rendered")) { fn(); return; }
    var seen = new MutationObserver(function () {
      if (!overview.hasAttribute("data-rendered")) return;
      seen.disconnect();
      fn();
    });
    seen.observe(overview, { attributes: true, attributeFilter: ["data-rendered"] });
  }
  function showFile(file) {
    var select = document.getElementById("current-file"), only = document.getElementById("only-file");
    for (var i = 0; i < select.options.length; i++) {
      if (select.options[i].value === file) {
        select.value = file;
        only.checked = true;
        only.dispatchEvent(new Event("change"));
        return;
      }
    }
  }
  afterFirstOverview(function () {
    if (boot.panel === "detail" && boot.artifact) P.openDetail(boot.artifact);
    if (boot.panel === "timeline") { if (boot.artifact) P.openTimeline(boot.artifact); else P.showView("timeline"); }
    if (boot.panel === "sections") { if (boot.section && P.openSections) P.openSections(boot.section); else P.showView("sections"); }
    if (boot.panel === "waits") { if (boot.object && P.openWaits) P.openWaits(boot.object); else P.showView("waits"); }
    if (boot.panel === "overview" && boot.file) showFile(boot.file);
    if (boot.panel === "tracecompare" && P.openTraceCompare) P.openTraceCompare(boot.a, boot.b);
  });
  // The run, the thread filter or VS Code's colour theme changed: read the filter again, then let
  // the page re-pick its theme and reload what it shows (its own "theme" handler does both).
  function refresh() {
    T.request("filter", {}).then(function (f) {
      P.state.global = (f && f.exclude_threads) || [];
      P.state.excluded = new Set(P.state.global);
      P.state.window = (f && f.window) || null;
    }, function () { /* the reload shows the error */ }).then(function () {
      document.getElementById("theme").dispatchEvent(new Event("change"));
    });
  }
  window.addEventListener("message", function (ev) {
    var m = ev.data;
    if (!m || typeof m !== "object" || typeof m.id === "number") return;
    if (m.type === "threadradar.refresh") refresh();
    else if (m.type === "threadradar.show" && typeof m.artifact === "string") afterFirstOverview(function () { P.openDetail(m.artifact); });
  });
})();
`;

/**
 * The page for a webview. `cspSource` is `webview.cspSource`. Substitutes the template's
 * placeholders in one pass, so nothing substituted is ever substituted again (as serve.rs does).
 */
export function buildWebviewHtml(assets: WebAssets, opts: { nonce: string; cspSource: string; boot: PanelBoot }): string {
  if (!/^[A-Za-z0-9+/=_-]{16,}$/.test(opts.nonce)) throw new Error("the nonce must be at least 16 base64 or hex characters");
  const values: Record<string, string> = {
    CSP: webviewCsp(opts.nonce, opts.cspSource),
    NONCE: opts.nonce,
    STYLE: assets.style + EXTRA_STYLE,
    SCRIPT: `${assets.transport}\n${assets.app}\n${BOOT_SCRIPT.replace("BOOT", () => scriptJson(opts.boot))}`,
    DATA: "null",
  };
  let out = "";
  let rest = assets.index;
  for (;;) {
    const start = rest.indexOf("{{");
    if (start < 0) break;
    const after = rest.slice(start + 2);
    const end = after.indexOf("}}");
    if (end < 0) break;
    const name = after.slice(0, end);
    const value = values[name];
    out += rest.slice(0, start) + (value !== undefined ? value : `{{${name}}}`);
    rest = after.slice(end + 2);
  }
  return out + rest;
}
