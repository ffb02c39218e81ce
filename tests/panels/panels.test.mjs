// The overview and detail panels in headless Chromium, against a real `threadradar serve` of
// real recordings (the paper's Bug 1 sample, and a program with hostile names).
//
//   THREADRADAR_BIN=/path/to/threadradar node --test --test-concurrency=1 .
//
// Needs Debian's chromium (/usr/bin/chromium, or CHROMIUM=…). Screenshots go to ./output/.
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { BIN, launch, out, record as recordTo, root, serve, tmpDir, watchedPage } from "./harness.mjs";

const tmp = tmpDir("panels");

/** Records `script` into `dir`/`name`.json; returns the run's path. */
function record(script, name, dir = tmp, args = []) {
  const file = path.join(dir, name + ".json");
  recordTo(script, file, { args });
  return file;
}

const crts = (page, list) => page.$$eval(`#${list} li.entry`, (els) => els.map((e) => Number(e.getAttribute("data-crt"))));
const names = (page, list) => page.$$eval(`#${list} li.entry .name`, (els) => els.map((e) => e.textContent));
const isSortedDesc = (xs) => xs.every((x, i) => i === 0 || xs[i - 1] >= x);
const waitFor = (page, method) => page.waitForResponse((r) => r.url().endsWith("/api/" + method) && r.request().method() === "POST");
/** Runs `action` and waits until the view (`overview` or `detail`) has rendered an answer since. */
async function rendered(page, view, action) {
  const seq = Number((await page.getAttribute("#" + view, "data-rendered")) || 0);
  await action();
  await page.waitForFunction(([v, n]) => Number(document.getElementById(v).getAttribute("data-rendered") || 0) > n, [view, seq]);
}

let browser;
before(async () => { browser = await launch(); });
after(async () => { if (browser) await browser.close(); });

describe("panels on Bug 1 (worker manager)", () => {
  let server, page;
  const problems = [];
  before(async () => {
    const run = record("samples/python/bug1_worker_manager/buggy.py", "bug1");
    server = await serve(run);
    page = await watchedPage(browser, problems);
    await page.goto(server.url);
    await page.waitForSelector("#functions li.entry");
  });
  after(() => { if (server) server.child.kill(); });

  test("the CSP carries a nonce and the page loads nothing from elsewhere", async () => {
    const res = await page.request.get(server.url);
    const csp = res.headers()["content-security-policy"];
    assert.match(csp, /script-src 'nonce-[0-9a-f]{32}'/);
    assert.match(csp, /default-src 'none'/);
    const again = (await (await page.request.get(server.url)).headers())["content-security-policy"];
    assert.notEqual(csp, again, "a fresh nonce per response");
  });

  test("methods and classes are sorted by crt, with in-situ glyphs, and the Program ThreadRadar", async () => {
    const f = await crts(page, "functions");
    assert.ok(f.length >= 5, "functions listed: " + f.length);
    assert.ok(isSortedDesc(f), "functions by crt descending: " + f);
    assert.ok((await names(page, "functions")).includes("Worker.run"));
    await page.click('#overview-tabs button[data-tab="classes"]');
    const c = await crts(page, "classes");
    assert.ok(c.length >= 2 && isSortedDesc(c), "classes by crt descending: " + c);
    assert.ok((await names(page, "classes")).includes("WorkerManager"));
    const glyphs = await page.$$eval("#functions li.entry svg.threadradar", (els) => els.map((e) => e.getAttribute("height")));
    assert.ok(glyphs.length === f.length && glyphs.every((h) => h === "32"), "one 32 px glyph per entry");
    assert.equal(await page.getAttribute("#program-figures", "data-threads"), "11");
    await page.click('#overview-tabs button[data-tab="functions"]');
    await page.screenshot({ path: path.join(out, "overview.png"), fullPage: true });
  });

  test("include, exclude and 'exclude standard library' narrow the lists", async () => {
    const all = await names(page, "functions");
    await rendered(page, "overview", () => page.fill("#include", "Worker"));
    const inc = await names(page, "functions");
    assert.ok(inc.length < all.length && inc.length > 0, `include: ${inc.length} of ${all.length}`);
    assert.ok(inc.every((n) => /Worker/.test(n)), "only matches: " + inc);
    await rendered(page, "overview", () => page.fill("#include", ""));
    await rendered(page, "overview", () => page.fill("#exclude", "_bootstrap"));
    const exc = await names(page, "functions");
    assert.ok(exc.length < all.length && exc.every((n) => !n.includes("_bootstrap")), "exclude: " + exc);
    await rendered(page, "overview", () => page.fill("#exclude", ""));
    await rendered(page, "overview", () => page.check("#hide-stdlib"));
    const files = await page.$$eval("#functions li.entry .name", (els) => els.map((e) => e.title));
    const stdlib = (f) => /<frozen /.test(f) || /\/python3\.\d+\/(?!site-packages|dist-packages)/.test(f);
    assert.ok(files.length < all.length && files.every((f) => !stdlib(f)), "no standard library: " + files);
    assert.ok(files.some((f) => f.includes("/samples/python/")));
    await rendered(page, "overview", () => page.check("#hide-third-party"));
    const own = await page.$$eval("#functions li.entry .name", (els) => els.map((e) => e.title));
    assert.ok(own.every((f) => !stdlib(f) && !/site-packages|dist-packages/.test(f)), "no third-party: " + own);
    await rendered(page, "overview", () => page.uncheck("#hide-third-party"));
    await rendered(page, "overview", () => page.uncheck("#hide-stdlib"));
    assert.equal((await names(page, "functions")).length, all.length);
  });

  test("the detail view: enlarged glyph, hover outline, info panel, tree, histogram", async () => {
    await rendered(page, "detail", () => page.click('#functions li.entry[data-key*=":Worker.run"] .glyph-button'));
    await page.waitForSelector("#preview svg.threadradar.interactive");
    const threads = await page.$$eval("#tree li.thread", (els) => els.length);
    assert.equal(threads, 10, "ten workers ran Worker.run");
    const squares = await page.$$eval("#histogram rect.sq", (els) => els.length);
    assert.equal(squares, threads, "one square per thread");
    assert.equal(await page.textContent('#info-selection [data-field="threads"]'), "10");
    assert.equal(await page.textContent('#info-selection [data-field="thread_types"]'), "1");
    // Hover the first sector: its outline shows, the info panel shows its cluster.
    // Hover a point inside the first sector (its bounding box's centre may lie on another
    // sector, depending on the recorded clusters).
    const hit = await page.$("#preview .hit");
    await hit.scrollIntoViewIfNeeded();
    const cluster = await hit.getAttribute("data-cluster");
    const point = await hit.evaluate((p) => {
      const b = p.getBBox();
      const m = p.getScreenCTM();
      const q = p.ownerSVGElement.createSVGPoint();
      for (let fy = 0.05; fy < 1; fy += 0.05) {
        for (let fx = 0.05; fx < 1; fx += 0.05) {
          q.x = b.x + fx * b.width;
          q.y = b.y + fy * b.height;
          if (!p.isPointInFill(q)) continue;
          const s = q.matrixTransform(m);
          if (document.elementFromPoint(s.x, s.y) === p) return { x: s.x, y: s.y };
        }
      }
      return null;
    });
    assert.ok(point, "a point inside the first sector is reachable");
    await page.mouse.move(point.x, point.y);
    assert.equal(await page.getAttribute(`#preview .outline[data-cluster="${cluster}"]`, "visibility"), "visible");
    assert.equal(await page.getAttribute("#info-hover", "data-cluster"), cluster);
    assert.notEqual(await page.textContent('#info-hover [data-field="threads"]'), "–");
    await page.screenshot({ path: path.join(out, "detail-hover.png"), fullPage: true });
    await page.mouse.move(5, 5);
    await page.click('#tree-tabs button[data-tab="type"]');
    assert.deepEqual(await page.$$eval("#tree summary", (els) => els.map((e) => e.textContent.trim())), ["Worker · 10 threads"]);
    await page.click('#tree-tabs button[data-tab="cluster"]');
  });

  test("deselecting a thread greys it and changes the preview glyph", async () => {
    const before = await page.$eval("#preview svg", (s) => s.outerHTML);
    const squares = await page.$$eval("#histogram rect.sq", (els) => els.length);
    // Deselect the thread with the highest share.
    const id = await page.$$eval("#tree li.thread", (els) => {
      const v = (e) => parseFloat(e.querySelector(".value").textContent);
      return els.sort((a, b) => v(b) - v(a))[0].getAttribute("data-thread");
    });
    await rendered(page, "detail", () => page.uncheck(`#tree li.thread[data-thread="${id}"] input`));
    await page.waitForFunction((n) => document.querySelectorAll("#histogram rect.sq").length === n - 1, squares);
    const li = `#tree li.thread[data-thread="${id}"]`;
    assert.ok((await page.getAttribute(li, "class")).includes("deselected"));
    const colour = await page.$eval(li + " .name", (e) => getComputedStyle(e).color);
    assert.equal(colour, "rgb(154, 154, 154)", "grey when deselected");
    const after = await page.$eval("#preview svg", (s) => s.outerHTML);
    assert.notEqual(after, before, "the preview glyph changed");
    assert.equal(await page.textContent('#info-selection [data-field="threads"]'), "9");
    await page.screenshot({ path: path.join(out, "detail-deselected.png"), fullPage: true });
  });

  test("apply filters the overview; reset restores it", async () => {
    const before = await page.textContent("#program-figures");
    const crtBefore = await crts(page, "functions");
    await rendered(page, "overview", () => page.click("#apply"));
    await page.waitForFunction(() => document.getElementById("filter-info").textContent.includes("1 threads excluded"));
    const after = await page.textContent("#program-figures");
    assert.notEqual(after, before, "program figures change");
    assert.equal(await page.getAttribute("#program-figures", "data-threads"), "10");
    assert.notDeepEqual(await crts(page, "functions"), crtBefore, "the list's figures change");
    await page.screenshot({ path: path.join(out, "overview-applied.png"), fullPage: true });
    await rendered(page, "overview", () => page.click("#reset"));
    await page.waitForFunction(() => document.getElementById("filter-info").textContent === "");
    assert.equal(await page.getAttribute("#program-figures", "data-threads"), "11");
    // The tree is the detail's, reloaded beside the overview: it may land a moment later.
    await page
      .waitForFunction(() => document.querySelectorAll("#tree li.thread.deselected").length === 0, null, { timeout: 5000 })
      .catch(() => undefined);
    assert.equal(await page.$$eval("#tree li.thread.deselected", (els) => els.length), 0, "reset selects every thread in the detail's tree");
  });

  test("the Timeline view draws the server's layout and a click on a bar navigates", async () => {
    const layout = waitFor(page, "timeline");
    await page.click("#open-timeline");
    const answer = await (await layout).json();
    assert.ok(answer.lanes.length >= 10, "a lane per thread: " + answer.lanes.length);
    assert.match(answer.obtained, /^sampled/);
    await page.waitForSelector("#timeline .tr-lane-label");
    assert.ok(await page.isHidden("#overview"));
    const labels = await page.$$eval("#timeline .tr-lane-label .tr-name", (els) => els.map((e) => e.textContent));
    assert.ok(labels.some((l) => /^worker-\d+$/.test(l)), labels.join(","));
    // The middle of the widest bar below the top level: clicking it opens its source.
    const hit = await page.evaluate(() => {
      const tl = window.ThreadRadarPanels.timeline();
      const l = tl.layout();
      const canvas = document.querySelector("#timeline canvas");
      let best = null;
      for (const p of tl.lanesInOrder()) {
        const lane = l.lanes.find((x) => x.thread === p.thread);
        for (const b of lane.bars) if (b.depth >= 1 && (!best || b.x1 - b.x0 > best.b.x1 - best.b.x0)) best = { p, b };
      }
      const y = best.p.y + 16 + best.b.depth * 12 + 6;
      window.scrollTo(0, Math.max(0, canvas.getBoundingClientRect().top + window.scrollY + y - 300));
      const r = canvas.getBoundingClientRect();
      return { x: r.left + (best.b.x0 + best.b.x1) / 2, y: r.top + y, frame: l.frames[best.b.frame] };
    });
    const req = page.waitForRequest((q) => q.url().endsWith("/api/navigate"));
    await page.mouse.click(hit.x, hit.y);
    const body = JSON.parse((await req).postData());
    assert.equal(body.file, hit.frame.file);
    await page.screenshot({ path: path.join(out, "timeline-view.png"), fullPage: true });
    await page.click('#view-tabs button[data-view="panels"]');
    assert.ok(await page.isVisible("#overview"));
  });

  test("entries, threads and callers navigate to their source", async () => {
    let req = page.waitForRequest((q) => q.url().endsWith("/api/navigate"));
    await page.click('#functions li.entry[data-key*=":Worker.run"] .name');
    const body = JSON.parse((await req).postData());
    assert.match(body.file, /bug1_worker_manager\/buggy\.py$/);
    assert.ok(body.line > 0);
    await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Opened "));
    assert.ok(server.lines.some((l) => l.startsWith("navigate ") && l.includes("buggy.py:" + body.line)), server.lines.join("\n"));
    await page.click('#overview-tabs button[data-tab="threads"]');
    const rows = await page.$$eval("#threads tbody tr", (els) => els.map((e) => Number(e.getAttribute("data-crt"))));
    assert.equal(rows.length, 11);
    assert.ok(isSortedDesc(rows));
    req = page.waitForRequest((q) => q.url().endsWith("/api/navigate"));
    await page.click("#threads tbody tr .name");
    assert.match(JSON.parse((await req).postData()).file, /buggy\.py$/);
    req = page.waitForRequest((q) => q.url().endsWith("/api/navigate"));
    await page.click("#tree li.thread .name");
    assert.match(JSON.parse((await req).postData()).file, /buggy\.py$/);
    req = page.waitForRequest((q) => q.url().endsWith("/api/navigate"));
    await page.click("#callees li .name");
    assert.ok(JSON.parse((await req).postData()).file);
    await page.screenshot({ path: path.join(out, "threads-tab.png"), fullPage: true });
  });

  test("a single run file has no Compare tab (the Timeline is there)", async () => {
    await page.waitForFunction(() => document.getElementById("runs").hidden);
    assert.ok(await page.isHidden("#open-compare"));
    assert.ok(await page.isVisible("#open-timeline"));
    assert.ok(await page.isHidden("#compare"));
  });

  test("no dialogs, page errors or console errors", () => {
    assert.deepEqual(problems, []);
  });
});

describe("comparing two runs of a directory (Bug 1 buggy → fixed)", () => {
  let server, page, dir;
  const problems = [];
  const FUNCTION = '"><script>';
  const row = (q) => `#compare-table tr.cmp-row[data-qualname='${q}']`;
  before(async () => {
    dir = fs.mkdtempSync(path.join(tmp, "runs-"));
    // Oldest first: a program with hostile names, then Bug 1 buggy (until the race let several
    // workers construct the manager, which it nearly always does), then fixed (the newest, shown).
    record("tests/scripts/hostile_names.py", "hostile", dir);
    const sample = (v) => `samples/python/bug1_worker_manager/${v}.py`;
    const initThreads = (run) => {
      const r = JSON.parse(execFileSync(BIN, ["report", run, "--json", "--include", "^WorkerManager\\.__init__$"], { encoding: "utf8" }));
      const a = r.artifacts.find((x) => x.qualname === "WorkerManager.__init__");
      return a ? a.threads : 0;
    };
    const seen = [];
    for (let i = 0; i < 3 && !(seen.at(-1) >= 2); i++) seen.push(initThreads(record(sample("buggy"), "buggy", dir, ["--workers", "6", "--timeout", "1.5"])));
    assert.ok(seen.at(-1) >= 2, "buggy: WorkerManager.__init__ ran in " + seen + " threads per recording");
    record(sample("fixed"), "fixed", dir, ["--workers", "6", "--timeout", "1.5"]);
    server = await serve(dir);
    page = await watchedPage(browser, problems);
    await page.goto(server.url);
    await page.waitForSelector("#functions li.entry");
    await page.waitForSelector("#view-tabs:not([hidden])");
  });
  after(() => { if (server) server.child.kill(); });

  test("the Compare tab fills base and new from the runs, and lists WorkerManager.__init__ 10 → 1", async () => {
    await rendered(page, "compare", () => page.click("#open-compare"));
    assert.ok(await page.isHidden("#overview"));
    const options = await page.$$eval("#compare-base option", (els) => els.map((e) => e.textContent));
    assert.deepEqual(options, ["fixed.json", "buggy.json", "hostile.json"]);
    // Defaults: new = the shown run, base = the one before it.
    assert.equal(await page.$eval("#compare-new", (s) => s.selectedOptions[0].textContent), "fixed.json");
    assert.equal(await page.$eval("#compare-base", (s) => s.selectedOptions[0].textContent), "buggy.json");
    // Pick them explicitly too.
    await rendered(page, "compare", () => page.selectOption("#compare-base", { label: "hostile.json" }));
    await rendered(page, "compare", () => page.selectOption("#compare-base", { label: "buggy.json" }));
    await rendered(page, "compare", () => page.selectOption("#compare-new", { label: "fixed.json" }));
    await page.waitForSelector(row("WorkerManager.__init__"));
    const cells = await page.$$eval(row("WorkerManager.__init__") + " td", (els) => els.map((e) => e.textContent));
    assert.match(cells[2], /^(\d+) → 1$/, "threads: " + cells[2]);
    assert.ok(Number(cells[2].split(" ")[0]) > 1, "threads: " + cells[2]);
    assert.match(cells[0], /^\d+\.\d% → \d+\.\d%$/, "crt: " + cells[0]);
    assert.match(cells[1], /^([-+]\d+\.\d|0\.0)pp$/, "Δ: " + cells[1]);
    assert.match(cells[3], /^[▂▅█]{2}×\d+( [▂▅█]{2}×\d+)* → [▂▅█]{2}×1$/, "radar: " + cells[3]);
    assert.equal(cells[4], "WorkerManager.__init__");
    assert.match(cells[5], /^buggy\.py:\d+ → fixed\.py:\d+$/, "where: " + cells[5]);
    const delta = await page.getAttribute(row("WorkerManager.__init__") + " td.delta", "class");
    assert.match(delta, /\b(increase|decrease|same)\b/);
    // The server's words for the fix, shown as text above the table.
    const changes = await page.$$eval("#compare-changes li", (els) => els.map((e) => e.textContent));
    // Ranked by evidence and effect: the constructor's threads lead, with their evidence.
    assert.match(changes[0] || "", /^WorkerManager\.__init__: run by \d+ threads → 1 \[sampled: \d+ → \d+ samples in \d+ → 1 threads\]$/, "changes: " + JSON.stringify(changes));
    // What the server left out for too few samples is said, in its words (or nothing).
    const suppressed = await page.textContent("#compare-suppressed");
    assert.ok(suppressed === "" || /^\d+ changes? not listed: /.test(suppressed), suppressed);
    const colours = await page.$$eval("#compare-table td.delta.increase, #compare-table td.delta.decrease", (els) => [...new Set(els.map((e) => getComputedStyle(e).color))]);
    assert.ok(colours.length >= 1 && !colours.includes("rgb(34, 34, 34)"), "coloured deltas: " + colours);
    await page.screenshot({ path: path.join(out, "compare.png"), fullPage: true });
  });

  test("clicking a row opens its new location", async () => {
    const req = page.waitForRequest((q) => q.url().endsWith("/api/navigate"));
    await page.click(row("WorkerManager.__init__"));
    const body = JSON.parse((await req).postData());
    assert.match(body.file, /bug1_worker_manager\/fixed\.py$/);
    assert.ok(body.line > 0);
    await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Opened "));
    assert.ok(server.lines.includes(`navigate ${body.file}:${body.line}`), server.lines.join("\n"));
  });

  test("classes and 'hide standard library'", async () => {
    await rendered(page, "compare", () => page.click('#compare-level button[data-level="class"]'));
    await page.waitForSelector(row("WorkerManager"));
    const all = await page.$$eval("#compare-table tr.cmp-row", (els) => els.length);
    await rendered(page, "compare", () => page.check("#compare-hide-stdlib"));
    const own = await page.$$eval("#compare-table tr.cmp-row .where", (els) => els.map((e) => e.textContent));
    assert.ok(own.length <= all && own.length > 0, `hidden: ${own.length} of ${all}`);
    await page.waitForSelector(row("WorkerManager"));
    await rendered(page, "compare", () => page.click('#compare-level button[data-level="function"]'));
    await rendered(page, "compare", () => page.uncheck("#compare-hide-stdlib"));
  });

  test("removed rows are marked, open their base location, and hostile names stay text", async () => {
    await rendered(page, "compare", () => page.selectOption("#compare-base", { label: "hostile.json" }));
    const r = row(FUNCTION);
    await page.waitForSelector(r);
    assert.equal(await page.getAttribute(r, "data-status"), "removed");
    assert.equal(await page.textContent(r + " .mark"), "removed");
    assert.equal(await page.textContent(r + " .cmp-name"), FUNCTION);
    assert.match(await page.textContent(r + " td"), /^\d+\.\d% → —$/);
    // Its base location (the hostile program names its code file `"><script>.py` too).
    const baseFile = await page.getAttribute(r + " .cmp-where", "title");
    assert.ok(baseFile && !baseFile.includes(" → "), "only a base file: " + baseFile);
    const req = page.waitForRequest((q) => q.url().endsWith("/api/navigate"));
    await page.click(r);
    assert.equal(JSON.parse((await req).postData()).file, baseFile);
    // The same run on both sides: every row matched.
    await rendered(page, "compare", () => page.selectOption("#compare-new", { label: "hostile.json" }));
    assert.equal(await page.$$eval("#compare-table tr.cmp-row:not(.changed)", (els) => els.length), 0);
    assert.equal(await page.textContent(row(FUNCTION) + " .cmp-name"), FUNCTION);
    assert.equal(await page.$$eval("img", (els) => els.length), 0);
    assert.equal(await page.$$eval("script", (els) => els.length), 2);
    await page.screenshot({ path: path.join(out, "compare-hostile.png"), fullPage: true });
  });

  test("back to the panels", async () => {
    await page.click('#view-tabs button[data-view="panels"]');
    assert.ok(await page.isVisible("#overview"));
    assert.ok(await page.isHidden("#compare"));
  });

  test("no script ran: no dialogs, page errors or console errors", () => {
    assert.deepEqual(problems, []);
  });

  // As in an editor when a test run becomes the active run (VS Code's refresh is the theme's
  // change event): the open detail's artifact is not in the new run, so its old figures go.
  test("a detail whose artifact is not in the newly active run is cleared, not left drawn", async () => {
    await rendered(page, "detail", () => page.click('#functions li.entry[data-key*=":Worker.run"] .glyph-button'));
    assert.ok((await page.$eval("#preview", (e) => e.children.length)) > 0);
    const before = problems.length;
    await page.evaluate(() => fetch("/api/runs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ select: "hostile.json" }) }));
    await page.dispatchEvent("#theme", "change");
    await page.waitForSelector("#detail[data-cleared]");
    for (const id of ["#preview", "#histogram", "#tree", "#callers", "#callees"]) assert.equal(await page.$eval(id, (e) => e.children.length), 0, id);
    assert.match(await page.textContent("#detail-note"), /Worker\.run/);
    assert.ok(await page.isVisible("#error"));
    // The only problem is the browser's line about the refused request.
    assert.ok(problems.slice(before).every((p) => /status of 4\d\d/.test(p)), problems.slice(before).join("\n"));
    problems.length = before;
    await page.evaluate(() => fetch("/api/runs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ select: "fixed.json" }) }));
  });
});

describe("hostile names are shown as text", () => {
  let server, page, run;
  const problems = [];
  const THREAD = "<img src=x onerror=alert(1)>";
  const FUNCTION = '"><script>';
  before(async () => {
    run = record("tests/scripts/hostile_names.py", "hostile");
    server = await serve(run);
    page = await watchedPage(browser, problems);
    await page.goto(server.url);
    await page.waitForSelector("#functions li.entry");
  });
  after(() => { if (server) server.child.kill(); });

  test("in the lists, the threads tab, the detail tree and the SVGs", async () => {
    assert.ok((await names(page, "functions")).includes(FUNCTION), "function listed by its name");
    await page.click('#overview-tabs button[data-tab="threads"]');
    const threads = await page.$$eval("#threads tbody .name", (els) => els.map((e) => e.textContent));
    assert.ok(threads.includes(THREAD), "thread listed by its name: " + threads);
    await page.click('#overview-tabs button[data-tab="functions"]');
    await rendered(page, "detail", () => page.click(`#functions li.entry[data-key$=':${FUNCTION}'] .glyph-button`));
    await page.waitForSelector("#tree li.thread");
    assert.ok((await page.textContent("#detail-title")).startsWith(FUNCTION));
    const tree = await page.$$eval("#tree li.thread .name", (els) => els.map((e) => e.textContent));
    assert.deepEqual(tree, [THREAD]);
    const svgTitle = await page.$eval("#preview svg > title", (e) => e.textContent);
    assert.equal(svgTitle, FUNCTION);
    const histTitle = await page.$eval("#histogram rect.sq title", (e) => e.textContent);
    assert.ok(histTitle.startsWith(THREAD), histTitle);
    // Nothing was turned into markup.
    assert.equal(await page.$$eval("img", (els) => els.length), 0);
    assert.equal(await page.$$eval("script", (els) => els.length), 2);
    await page.screenshot({ path: path.join(out, "hostile.png"), fullPage: true });
  });

  test("the exported SVG escapes them too", async () => {
    const svgFile = path.join(tmp, "hostile.svg");
    execFileSync(BIN, ["radar", run, "--artifact", FUNCTION, "-o", svgFile]);
    const svg = fs.readFileSync(svgFile, "utf8");
    assert.ok(svg.includes("&quot;&gt;&lt;script&gt;"), svg.slice(0, 400));
    assert.ok(!svg.includes("<script"));
  });

  test("a static export shows the same, and says what it cannot compute", async () => {
    const dir = path.join(tmp, "export");
    execFileSync(BIN, ["html", run, "-o", dir]);
    const p = await watchedPage(browser, problems);
    await p.goto("file://" + path.join(dir, "index.html"));
    await p.waitForSelector("#functions li.entry");
    assert.ok(!(await p.isHidden("#static-note")));
    assert.ok(await p.isHidden("#view-tabs"), "no Compare tab in a static export");
    assert.ok((await names(p, "functions")).includes(FUNCTION));
    await p.click(`#functions li.entry[data-key$=':${FUNCTION}'] .glyph-button`);
    await p.waitForSelector("#tree li.thread");
    await p.uncheck("#tree li.thread input");
    await p.waitForFunction(() => !document.getElementById("detail-note").hidden);
    assert.match(await p.textContent("#detail-note"), /static export cannot compute/);
    await p.screenshot({ path: path.join(out, "static-export.png"), fullPage: true });
    await p.close();
  });

  test("no script ran: no dialogs, page errors or console errors", () => {
    assert.deepEqual(problems, []);
  });
});

describe("panels with asyncio tasks as units (serve --units tasks)", () => {
  // analysis/tests/fixtures/timeline/asyncio_tasks_units.json: three tasks of Crawler.fetch on
  // MainThread's event loop (one named `<img src=x onerror=…>`) and a pool thread.
  let server, page;
  const problems = [];
  before(async () => {
    server = await serve(path.join(root, "analysis/tests/fixtures/timeline/asyncio_tasks_units.json"), { args: ["--units", "tasks"] });
    page = await watchedPage(browser, problems);
    await page.goto(server.url);
    await page.waitForSelector("#functions li.entry");
  });
  after(() => { if (server) server.child.kill(); });

  test("the overview counts tasks and threads and says so", async () => {
    const figures = await page.textContent("#program-figures");
    assert.match(figures, /^\d+ tasks\/threads, \d+ types/, figures);
    assert.match(await page.textContent("#run-info"), / \d+ tasks\/threads · /);
    assert.match(await page.textContent('#overview-tabs button[data-tab="threads"]'), /^Tasks\/threads /);
    await page.click('#overview-tabs button[data-tab="threads"]');
    const rows = await page.$$eval("#threads tr.thread-row .name", (els) => els.map((e) => e.textContent));
    assert.ok(rows.includes("fetch-1") && rows.includes("<img src=x onerror=window.pwned=1>"), "tasks listed by name: " + rows.join(", "));
    assert.equal(await page.$$eval("img", (x) => x.length), 0, "the hostile task name is text");
  });

  test("no script ran: no dialogs, page errors or console errors", () => assert.deepEqual(problems, []));
});
