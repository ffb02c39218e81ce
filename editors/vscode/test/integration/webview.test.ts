// The webview pages in headless Chromium, driven through the extension's message protocol: the
// page is the HTML webviewHtml.ts builds from web/, `acquireVsCodeApi().postMessage` reaches
// router.ts in Node (as `webview.onDidReceiveMessage` does in VS Code), router.ts asks the real
// `threadradar lsp`, and the answer goes back with `window.postMessage` (as `webview.postMessage`).
//
// Needs Debian's chromium (/usr/bin/chromium, or CHROMIUM=…). Screenshots go to test-output/;
// UPDATE_SCREENSHOTS=1 also refreshes images/overview.png for the README.

import * as fs from "node:fs";
import * as path from "node:path";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { expect } from "expect";
import { after, before, describe, test } from "node:test";
import type { OverviewResult, RunsResult } from "../../src/protocol";
import type * as P from "../../../../web/protocol";
import { Requests } from "../../src/protocol";
import { routeMessage } from "../../src/router";
import type { RouterHost } from "../../src/router";
import { buildWebviewHtml, makeNonce, readWebAssets } from "../../src/webviewHtml";
import type { PanelBoot, PanelCommand } from "../../src/webviewHtml";
import { BUGGY, EXTENSION_DIR, REPO, bug1Workspace, hostileWorkspace, startServer } from "../support/server";
import type { ServerSession, Workspace } from "../support/server";

const OUT = path.join(EXTENSION_DIR, "test-output");
const ORIGIN = "https://webview.threadradar.test";
// What `webview.cspSource` is in current VS Code.
const CSP_SOURCE = "'self' https://*.vscode-cdn.net";
const assets = readWebAssets(path.join(REPO, "web"));

interface Panel {
  page: Page;
  /** Every message the page posted to the "extension". */
  posted: unknown[];
  navigations: [string, number][];
  /** Posts a message from the "extension" to the page (`webview.postMessage`). */
  send(msg: PanelCommand): Promise<void>;
}

let browser: Browser;
const problems: string[] = [];

before(async () => {
  fs.mkdirSync(OUT, { recursive: true });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  await browser?.close();
});

/** A webview page for `boot`, wired to `server` through router.ts. */
async function openPanel(server: ServerSession, boot: PanelBoot): Promise<Panel> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 }, colorScheme: "light" });
  page.on("dialog", (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()}`);
  });
  const posted: unknown[] = [];
  const navigations: [string, number][] = [];
  const host: RouterHost = {
    sendRequest: (m, p) => server.sendRequest(m, p),
    executeCommand: (c, a) => server.executeCommand(c, a),
    navigate: (file, line) => {
      navigations.push([file, line]);
    },
  };
  await page.exposeFunction("__threadradarToExtension", async (msg: unknown) => {
    posted.push(msg);
    const answer = await routeMessage(host, msg);
    if (answer !== undefined) await page.evaluate((a) => window.postMessage(a, "*"), answer);
  });
  // VS Code's webview API, as the page sees it. (A string: functions passed to the browser must not
  // carry the helpers a TypeScript loader may add to them.)
  await page.addInitScript({
    content: `
      (function () {
        var state;
        window.acquireVsCodeApi = function () {
          return {
            postMessage: function (m) { window.__threadradarToExtension(m); },
            getState: function () { return state; },
            setState: function (s) { state = s; },
          };
        };
      })();`,
  });
  const html = buildWebviewHtml(assets, { nonce: makeNonce(), cspSource: CSP_SOURCE, boot });
  await page.route(`${ORIGIN}/**`, (route) => route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: html }));
  await page.goto(`${ORIGIN}/index.html`);
  return {
    page,
    posted,
    navigations,
    send: async (msg) => {
      await page.evaluate((m) => window.postMessage(m, "*"), msg);
    },
  };
}

const entryNames = (page: Page, list: string) => page.$$eval(`#${list} li.entry .name`, (els) => els.map((e) => e.textContent ?? ""));
const attr = (page: Page, sel: string, name: string) => page.getAttribute(sel, name);

/** Runs `action` and waits until `view` has rendered an answer since. */
async function rendered(page: Page, view: "overview" | "detail", action: () => Promise<unknown>): Promise<void> {
  const seq = Number((await attr(page, `#${view}`, "data-rendered")) ?? 0);
  await action();
  await page.waitForFunction(([v, n]) => Number(document.getElementById(v as string)?.getAttribute("data-rendered") ?? 0) > (n as number), [view, seq]);
}

describe("panels on a run of Bug 1", () => {
  let ws: Workspace;
  let server: ServerSession;
  let overview: Panel;
  let ov: OverviewResult;

  before(async () => {
    ws = bug1Workspace();
    server = await startServer(ws.dir);
    ov = (await server.sendRequest(Requests.overview, {})) as OverviewResult;
    overview = await openPanel(server, { panel: "overview" });
    await overview.page.waitForSelector("#functions li.entry");
  });

  after(async () => {
    await server?.stop();
    ws?.cleanup();
  });

  test("the overview lists the run's functions and classes with their glyphs", async () => {
    const { page } = overview;
    const names = await entryNames(page, "functions");
    expect(names).toEqual(expect.arrayContaining(["Worker.run", "WorkerManager.__init__"]));
    expect(names).toEqual(ov.functions.map((f) => f.qualname));
    expect(await attr(page, "#program-figures", "data-threads")).toBe("7");
    expect(await page.$$eval("#functions li.entry svg.threadradar", (els) => els.length)).toBe(names.length);
    expect(await entryNames(page, "classes")).toEqual(expect.arrayContaining(["Worker", "WorkerManager"]));
    // Every request went through the vscode transport: {id, method, params}.
    const methods = overview.posted.map((m) => (m as { method: string }).method);
    expect(methods).toEqual(expect.arrayContaining(["filter", "overview", "runs"]));
    for (const m of overview.posted) expect(typeof (m as { id: unknown }).id).toBe("number");
    // The README's screenshot: the program's own code (standard library hidden).
    await rendered(page, "overview", () => page.check("#hide-stdlib"));
    await page.screenshot({ path: path.join(OUT, "overview.png") });
    if (process.env.UPDATE_SCREENSHOTS === "1") {
      fs.copyFileSync(path.join(OUT, "overview.png"), path.join(EXTENSION_DIR, "images/overview.png"));
      const run = ov.functions.find((f) => f.qualname === "Worker.run");
      fs.writeFileSync(path.join(OUT, "screenshot-clusters.txt"), String(run?.clusters.length ?? 0));
    }
    await rendered(page, "overview", () => page.uncheck("#hide-stdlib"));
    expect(await entryNames(page, "functions")).toEqual(names);
  });

  test("clicking a function posts navigate with its file and line, without an id", async () => {
    const init = ov.functions.find((f) => f.qualname === "WorkerManager.__init__");
    expect(init).toBeDefined();
    const n = overview.posted.length;
    await overview.page.click(`#functions li.entry[data-key="${init?.key ?? ""}"] .name`);
    await overview.page.waitForFunction(() => (document.getElementById("status")?.textContent ?? "").startsWith("Opened "));
    expect(overview.posted.slice(n)).toEqual([{ method: "navigate", params: { file: path.join(ws.dir, BUGGY), line: init?.line } }]);
    expect(overview.navigations).toEqual([[path.join(ws.dir, BUGGY), init?.line]]);
    const lines = fs.readFileSync(path.join(ws.dir, BUGGY), "utf8").split("\n");
    expect(lines[(init?.line ?? 0) - 1]).toMatch(/^\s+def __init__\(self\)/);
  });

  test("the detail panel opens on its artifact, without the overview column", async () => {
    const key = ov.functions.find((f) => f.qualname === "Worker.run")?.key ?? "";
    const detail = await openPanel(server, { panel: "detail", artifact: key });
    const { page } = detail;
    await page.waitForSelector("#tree li.thread");
    expect(await page.textContent("#detail-title")).toMatch(/^Worker\.run {2}\(function, buggy\.py:\d+\)$/);
    expect(await page.$$eval("#tree li.thread", (els) => els.length)).toBe(6);
    expect(await page.textContent('#info-selection [data-field="threads"]')).toBe("6");
    expect(await page.isVisible("#overview")).toBe(false);
    expect(await page.isVisible("#close-detail")).toBe(false);
    await page.screenshot({ path: path.join(OUT, "detail.png") });

    // The extension switches the panel to another artifact with a message.
    const init = ov.functions.find((f) => f.qualname === "WorkerManager.__init__")?.key ?? "";
    await rendered(page, "detail", () => detail.send({ type: "threadradar.show", artifact: init }));
    expect(await page.textContent("#detail-title")).toMatch(/^WorkerManager\.__init__ /);
    await page.close();
  });

  test("apply in the detail sets the server's thread filter; the overview follows on refresh; reset clears it", async () => {
    const key = ov.functions.find((f) => f.qualname === "Worker.run")?.key ?? "";
    const detail = await openPanel(server, { panel: "detail", artifact: key });
    const { page } = detail;
    await page.waitForSelector("#tree li.thread");
    const shares = await page.$$eval("#tree li.thread", (els) => els.map((e) => [e.getAttribute("data-thread") ?? "", parseFloat(e.querySelector(".value")?.textContent ?? "0")] as const));
    const id = [...shares].sort((x, y) => y[1] - x[1])[0]?.[0] ?? "";
    await rendered(page, "detail", () => page.uncheck(`#tree li.thread[data-thread="${id}"] input`));
    expect(await page.textContent('#info-selection [data-field="threads"]')).toBe("5");
    await page.click("#apply");
    await page.waitForFunction(() => (document.getElementById("status")?.textContent ?? "").startsWith("Thread filter applied"));
    const runs = (await server.sendRequest(Requests.runs, {})) as RunsResult;
    expect(runs.exclude_threads).toEqual([Number(id)]);
    expect(detail.posted).toContainEqual(expect.objectContaining({ method: "filter", params: { exclude_threads: [Number(id)] } }));

    // The extension tells the other panel (on threadRadar/changed): its figures change.
    const before = await overview.page.textContent("#program-figures");
    await rendered(overview.page, "overview", () => overview.send({ type: "threadradar.refresh" }));
    expect(await attr(overview.page, "#program-figures", "data-threads")).toBe("6");
    expect(await overview.page.textContent("#program-figures")).not.toBe(before);
    expect(await overview.page.textContent("#filter-info")).toBe("1 threads excluded by the thread filter");
    await overview.page.screenshot({ path: path.join(OUT, "overview-filtered.png") });

    await rendered(page, "overview", () => page.click("#reset"));
    expect(((await server.sendRequest(Requests.runs, {})) as RunsResult).exclude_threads).toEqual([]);
    await rendered(overview.page, "overview", () => overview.send({ type: "threadradar.refresh" }));
    expect(await attr(overview.page, "#program-figures", "data-threads")).toBe("7");
    await page.close();
  });

  test("a refresh after VS Code switched to a dark theme redraws the page and its glyphs in the dark palette", async () => {
    const { page } = overview;
    const light = await page.$eval("#program-glyph svg", (e) => e.outerHTML);
    expect(await page.evaluate(() => document.body.classList.contains("dark"))).toBe(false);
    // VS Code sets these classes on the webview's body when the colour theme changes.
    await page.evaluate(() => document.body.classList.add("vscode-dark"));
    await rendered(page, "overview", () => overview.send({ type: "threadradar.refresh" }));
    expect(await page.evaluate(() => document.body.classList.contains("dark"))).toBe(true);
    // The overview's request (the run-set box asks `runSet` after it) in the dark palette.
    expect(overview.posted.filter((m) => (m as { method?: string }).method === "overview").at(-1)).toMatchObject({ method: "overview", params: { theme: "dark" } });
    expect(await page.$eval("#program-glyph svg", (e) => e.outerHTML)).not.toBe(light);
    await page.screenshot({ path: path.join(OUT, "overview-dark.png") });
    await page.evaluate(() => document.body.classList.remove("vscode-dark"));
    await rendered(page, "overview", () => overview.send({ type: "threadradar.refresh" }));
    expect(await page.evaluate(() => document.body.classList.contains("dark"))).toBe(false);
  });

  test("the overview narrowed to a file (threadRadar/openPanel with a file)", async () => {
    const file = path.join(ws.dir, BUGGY);
    const p = await openPanel(server, { panel: "overview", file });
    await p.page.waitForFunction(() => (document.getElementById("only-file") as HTMLInputElement | null)?.checked === true);
    await p.page.waitForFunction(() => document.getElementById("overview")?.getAttribute("data-rendered") === "2");
    const titles = await p.page.$$eval("#functions li.entry .name", (els) => els.map((e) => (e as HTMLElement).title));
    expect(titles.length).toBeGreaterThan(0);
    // A module's entry has no line: its title is the file alone.
    expect(titles.filter((t) => t !== file && !t.startsWith(`${file}:`))).toEqual([]);
    expect(p.posted).toContainEqual(expect.objectContaining({ method: "overview", params: expect.objectContaining({ only_file: file }) }));
    await p.page.close();
  });

  // Issue 32: the wait lens and the palette commands boot the page on the Waits, Timeline and
  // Sections tabs (no artifact, no section: the whole run).
  test("the Waits, Timeline and Sections panels boot on their tab", async () => {
    for (const [boot, id] of [[{ panel: "waits" }, "waits"], [{ panel: "timeline" }, "timeline"], [{ panel: "sections" }, "sections"]] as const) {
      const p = await openPanel(server, boot);
      await p.page.waitForFunction((v) => document.getElementById(v)?.hidden === false, id, { timeout: 30_000 });
      expect([id, await p.page.isHidden("#overview")]).toEqual([id, true]);
      await p.page.close();
    }
  });

  test("the Sections panel on the lens's section (threadRadar/openPanel sections); a view saved through the webview", async () => {
    const secs = (await server.sendRequest(Requests.sections, {})) as P.SectionsResult;
    expect(secs.sections.length).toBeGreaterThan(0);
    const i = secs.sections.length - 1;
    const s = secs.sections[i];
    if (s === undefined) throw new Error("no section");
    const p = await openPanel(server, { panel: "sections", section: { file: s.file, function: s.function, lock: s.lock, line: s.line } });
    await p.page.waitForSelector("#sections[data-wanted]");
    expect(await attr(p.page, "#sections", "data-wanted")).toBe(String(i));
    expect(await attr(p.page, "#sections", "data-selected")).toBe(String(i));
    expect(await p.page.isHidden("#overview")).toBe(true);
    // Saved through the webview → router → threadRadar/views, listed as text.
    await p.page.waitForSelector('#sections .sx-saved[data-count="0"]');
    await p.page.fill("#sections .sx-note-input", "<i>held too long</i>");
    await p.page.click("#sections .sx-save");
    await p.page.waitForSelector('#sections .sx-saved[data-count="1"]');
    expect(await p.page.textContent("#sections li.sx-view .sx-view-note")).toBe("<i>held too long</i>");
    const listed = (await server.sendRequest(Requests.views, {})) as P.ViewsResult;
    expect(listed.views.map((v) => [v.note, v.section.lock, v.section_index])).toEqual([["<i>held too long</i>", s.lock, i]]);
    await server.sendRequest(Requests.views, { delete: listed.views[0]?.id });
    await p.page.close();
  });

  test("an artifact key with markup in the boot data stays data", async () => {
    const p = await openPanel(server, { panel: "detail", artifact: "</script><script>window.__pwned=1</script>" });
    await p.page.waitForSelector("#overview[data-rendered]", { state: "attached" });
    await p.page.waitForFunction(() => !(document.getElementById("error")?.hidden ?? true));
    expect(await p.page.textContent("#error")).toMatch(/^No artifact <\/script><script>window\.__pwned=1<\/script> in this run/);
    expect(await p.page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await p.page.close();
  });

  test("no dialogs, page errors, console errors or CSP violations", () => {
    expect(problems).toEqual([]);
  });
});

describe("hostile names from the profiled program", () => {
  const THREAD = "<img src=x onerror=alert(1)>";
  const FUNCTION = '"><script>';
  let ws: Workspace;
  let server: ServerSession;

  before(async () => {
    ws = hostileWorkspace();
    server = await startServer(ws.dir);
  });

  after(async () => {
    await server?.stop();
    ws?.cleanup();
  });

  test("show as text in the overview, the threads tab and the detail, and run nothing", async () => {
    const { page } = await openPanel(server, { panel: "overview" });
    await page.waitForSelector("#functions li.entry");
    expect(await entryNames(page, "functions")).toContain(FUNCTION);
    await page.click('#overview-tabs button[data-tab="threads"]');
    const threads = await page.$$eval("#threads tbody .name", (els) => els.map((e) => e.textContent));
    expect(threads).toContain(THREAD);
    await page.click('#overview-tabs button[data-tab="functions"]');
    await rendered(page, "detail", () => page.click(`#functions li.entry[data-key$=':${FUNCTION}'] .glyph-button`));
    expect((await page.textContent("#detail-title"))?.startsWith(FUNCTION)).toBe(true);
    expect(await page.$$eval("#tree li.thread .name", (els) => els.map((e) => e.textContent))).toEqual([THREAD]);
    expect(await page.$$eval("img", (els) => els.length)).toBe(0);
    expect(await page.$$eval("script", (els) => els.length)).toBe(2);
    await page.screenshot({ path: path.join(OUT, "hostile.png") });
    expect(problems).toEqual([]);
    await page.close();
  });
});
