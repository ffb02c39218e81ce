// The panels at real scale (issue 32), in headless Chromium against a real `threadradar serve` of
// real recordings:
// - Bug 2 (samples/python/bug2_producer_consumer/buggy.py) recorded with --sched: thousands of
//   kernel wake-ups. The Waits tab opens on the waker → wakee matrices (the server's groups, cell
//   for cell), draws no edge while they do not separate and draws them once zoomed to where they
//   do; the objects table and the panel fit the page (no sideways scroll); the time axis labels do
//   not touch.
// - The Timeline tab on the same run: MainThread's deep stacks are folded to the lane cap, every
//   lane is at most that high, a worker lane is on the first screen, and "+N" expands a lane.
// - The Sections tab on the same run: the banner of executions too short to list is at the top,
//   with the server's figures and the `--interval-ms` that would list them.
// - `serve A --compare B` (Bug 1 buggy and fixed): the Trace compare tab opened without `a=`/`b=`
//   compares A and B.
// - tests/panels/scripts/names_at_scale.py: pool threads whose names differ only at the end stay
//   distinguishable (lane labels and matrix headers), a thread named `<script>alert(1)</script>`
//   is text everywhere, and a program's `Future`s are one row.
//
//   THREADRADAR_BIN=/path/to/threadradar node --test --test-concurrency=1 scale.test.mjs
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { BIN, api, launch, out, python, record as recordTo, root, serve, tmpDir, watchedPage } from "./harness.mjs";

const tmp = tmpDir("scale-panels");
let browser;
const servers = [];

function record(script, name, { args = [], extra = [] } = {}) {
  const run = path.join(tmp, name + ".json");
  return { run, stdout: recordTo(script, run, { args, extra }) };
}

/** Whether this machine lets `record --sched` open the scheduler's tracepoints (`doctor --json`). */
function schedAllowed() {
  let checks;
  try { checks = JSON.parse(execFileSync(BIN, ["doctor", "--json"], { cwd: root }).toString()); } catch (e) { return { ok: false, why: String(e) }; }
  const list = Array.isArray(checks) ? checks : checks.checks || [];
  const sched = list.find((c) => /sched/i.test(JSON.stringify(c.name || c.id || c.check || "")));
  if (!sched) return { ok: false, why: "doctor names no scheduler check: " + JSON.stringify(checks).slice(0, 300) };
  const ok = sched.ok === true || sched.status === "ok" || sched.passed === true;
  return { ok, why: JSON.stringify(sched) };
}

const waitsDrawn = (page) => page.waitForFunction(() => { const w = document.querySelector("#waits"); return w && !w.hidden && (w.hasAttribute("data-drawn-edges") || w.hasAttribute("data-error")); }, null, { timeout: 120000 });
const waitsAttr = (page, k) => page.$eval("#waits", (w, k) => w.getAttribute("data-" + k), k);
const noSideways = (page) => page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, view: document.documentElement.clientWidth }));

before(async () => {
  browser = await launch();
});
after(async () => {
  if (browser) await browser.close();
  for (const s of servers) s.child.kill();
});

describe("Bug 2 recorded with --sched", () => {
  let server, run;
  const problems = [];
  before(async (t) => {
    const sched = schedAllowed();
    if (!sched.ok) {
      if (process.env.THREADRADAR_NO_SKIPS) throw new Error("record --sched is not allowed here, and THREADRADAR_NO_SKIPS is set: " + sched.why);
      t.skip && t.skip("record --sched is not allowed here: " + sched.why);
    }
    ({ run } = record("samples/python/bug2_producer_consumer/buggy.py", "bug2", { extra: sched.ok ? ["--sched"] : [] }));
    server = await serve(run);
    servers.push(server);
  });

  test("Waits: the matrices are the server's groups, no edge is drawn until the edges separate, the panel fits", async () => {
    const page = await watchedPage(browser, problems);
    await page.goto(server.url + "?view=waits");
    await waitsDrawn(page);
    assert.equal(await waitsAttr(page, "error"), null);
    const width = await page.$eval("#waits canvas", (c) => parseFloat(c.style.width));
    const answer = await api(server.url, "waits", { width_px: width - 16 });
    const v = answer.view, g = answer.groups;
    assert.ok(v.edges.length > 1000, "many wake edges in Bug 2: " + v.edges.length);
    assert.ok(answer.counts.edges.kernel > 0, "kernel-exact edges (--sched)");
    // Each object in exactly one group; the groups cover the objects.
    assert.equal(g.group_of.length, v.objects.length);
    assert.deepEqual(g.groups.flatMap((x) => x.objects).sort((a, b) => a - b), v.objects.map((_, i) => i));
    // Each group's cells sum to its edges (lock hand-offs apart), by evidence too.
    for (const x of g.groups) {
      const cells = x.cells.reduce((n, c) => n + c.count, 0);
      assert.equal(cells, x.kernel_edges + x.inferred_edges, x.label);
      const edges = v.edges.filter((e) => g.group_of[e.object_index] === g.groups.indexOf(x) && e.kind !== "lock-handoff");
      assert.equal(cells, edges.length, x.label);
      assert.equal(x.cells.reduce((n, c) => n + c.futile, 0), edges.filter((e) => e.futile).length, x.label);
    }
    // The Bug 2 signature: the monitor's futile wake-ups, in its matrix.
    const monitor = g.groups.find((x) => /_monitor/.test(x.label));
    assert.ok(monitor, "a group for Storage._monitor: " + g.groups.map((x) => x.label).join(", "));
    assert.ok(monitor.futile_wakeups > 0, "futile wake-ups on the monitor");
    // The page: one matrix block per group shown, its cells as the server's.
    assert.equal(Number(await waitsAttr(page, "groups")), g.groups.length);
    const mi = g.groups.indexOf(monitor);
    const block = await page.$(`#waits .tr-matrix[data-group="${mi}"]`);
    assert.ok(block, "the monitor's matrix is drawn");
    const counts = await block.$$eval("td.tr-cell .tr-count", (ts) => ts.map((t) => Number(t.textContent)));
    assert.equal(counts.reduce((a, b) => a + b, 0), monitor.cells.reduce((n, c) => n + c.count, 0), "every wake-up of the monitor is in a cell");
    // At the whole run the edges do not separate: none is drawn, and the page says how to zoom.
    assert.equal(g.separate, false, "11k edges over seconds do not separate on " + width + " px");
    assert.equal(await waitsAttr(page, "separate"), "false");
    assert.equal(await waitsAttr(page, "drawn-edges"), "0");
    assert.match(await page.$eval("#waits .tr-zoom-note", (n) => n.textContent), /drag across the lanes to zoom in/);
    // The table has one row per group, and nothing scrolls sideways.
    assert.equal(await page.$$eval("#waits table.tr-objects tbody tr", (r) => r.length), g.groups.length);
    const fit = await noSideways(page);
    assert.ok(fit.scroll <= fit.view, `the page scrolls sideways: ${fit.scroll} > ${fit.view}`);
    // Axis labels never touch.
    const boxes = JSON.parse(await waitsAttr(page, "axis-labels"));
    assert.ok(boxes.length >= 2);
    for (let i = 1; i < boxes.length; i++) assert.ok(boxes[i][0] >= boxes[i - 1][1] + 4, "axis labels collide: " + JSON.stringify(boxes));
    await page.screenshot({ path: path.join(out, "waits-bug2-matrices.png") });

    // Zoom, by dragging 12 px across the lanes around a wake-up, until the edges separate: each
    // step is the server's answer for the range dragged over, and edges are drawn once it says so.
    assert.ok(g.separate_below_s > 0, "the server says where the edges separate");
    const t = v.edges[Math.floor(v.edges.length / 2)].time_s;
    let zoomed = null;
    for (let step = 0; step < 6; step++) {
      const box = await page.$eval("#waits canvas", (c) => { c.scrollIntoView({ block: "start" }); const r = c.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
      const range = await waitsAttr(page, "range");
      const [t0, t1] = range.split("-").map(Number);
      const x = box.x + 8 + ((t - t0) / (t1 - t0)) * (box.w - 16), y = box.y + 30;
      await page.mouse.move(x - 6, y);
      await page.mouse.down();
      await page.mouse.move(x, y, { steps: 3 });
      await page.mouse.move(x + 6, y, { steps: 3 });
      await page.mouse.up();
      await page.waitForFunction((r) => document.querySelector("#waits").getAttribute("data-range") !== r, range, { timeout: 60000 });
      await page.waitForFunction(() => document.querySelector("#waits").hasAttribute("data-drawn-edges"));
      const [from, to] = (await waitsAttr(page, "range")).split("-").map(Number);
      assert.ok(from <= t && t <= to && to - from < (t1 - t0) / 10, `zoomed to ${from}–${to} around ${t}`);
      zoomed = await api(server.url, "waits", { width_px: width - 16, from_s: from, to_s: to });
      assert.equal(await waitsAttr(page, "separate"), String(zoomed.groups.separate !== false), `${from}–${to}`);
      if (zoomed.groups.separate !== false) break;
      assert.equal(await waitsAttr(page, "drawn-edges"), "0");
    }
    assert.notEqual(zoomed.groups.separate, false, "the edges separate after zooming");
    assert.ok(zoomed.view.edges.length > 0, "edges in the zoomed range");
    assert.equal(Number(await waitsAttr(page, "drawn-edges")), zoomed.bundles.length, "each bundle drawn");
    assert.ok(zoomed.bundles.length > 0);
    await page.screenshot({ path: path.join(out, "waits-bug2-zoomed.png") });
    await page.close();
  });

  test("Timeline: lanes are capped and folded, a worker lane is on the first screen, +N expands", async () => {
    const page = await watchedPage(browser, problems);
    await page.goto(server.url + "?view=timeline");
    await page.waitForSelector("#timeline[data-rendered] .tr-lane-label");
    const lanes = await page.$$eval("#timeline .tr-lane-label", (ls) => ls.map((l) => ({ name: l.querySelector(".tr-name").textContent, h: l.getBoundingClientRect().height, top: l.getBoundingClientRect().top, depth: Number(l.getAttribute("data-depth")), folded: Number(l.getAttribute("data-folded-below")), thread: Number(l.getAttribute("data-thread")) })));
    // With the standard library unfolded and no cap, MainThread is deeper than 8 rows (its
    // import-time stacks); with the cap, every lane has at most 8 and says how many it folded.
    const full = await api(server.url, "timeline", { width_px: 1000, fold: { top: 0, stdlib: false } });
    const capped = await api(server.url, "timeline", { width_px: 1000, fold: { top: 0, stdlib: false, depth: 8 } });
    const deepest = Math.max(...full.lanes.map((l) => l.depth));
    assert.ok(deepest > 8, "some lane is deeper than the cap: " + deepest);
    for (const l of capped.lanes) {
      const f = full.lanes.find((x) => x.thread === l.thread);
      assert.equal(l.depth, Math.min(8, f.depth), l.name);
      assert.equal(l.full_depth, f.depth, l.name);
      assert.equal(l.folded_below, f.depth - l.depth, l.name);
      assert.ok(l.bars.every((b) => b.depth < 8), l.name);
    }
    for (const l of lanes) assert.ok(l.depth <= 8, `${l.name}: ${l.depth} rows`);
    const tallest = Math.max(...lanes.map((l) => l.h));
    assert.ok(tallest <= 16 + 8 * 12 + 1, "a lane is " + tallest + " px high");
    const worker = lanes.find((l) => l.name !== "MainThread");
    const viewport = await page.evaluate(() => window.innerHeight);
    assert.ok(worker && worker.top < viewport, `the first worker lane starts at ${worker && worker.top} px, below the ${viewport} px screen`);
    // Unfold the standard library: MainThread's lane stays at 8 rows, with +N; +N expands it to
    // its full depth.
    let before = await page.getAttribute("#timeline", "data-rendered");
    await page.uncheck('#timeline input[aria-label="Fold standard library"]');
    await page.waitForFunction((b) => document.querySelector("#timeline").getAttribute("data-rendered") !== b, before);
    const unfolded = await page.$$eval("#timeline .tr-lane-label", (ls) => ls.map((l) => ({ name: l.querySelector(".tr-name").textContent, h: l.getBoundingClientRect().height, top: l.getBoundingClientRect().top, depth: Number(l.getAttribute("data-depth")), folded: Number(l.getAttribute("data-folded-below")), thread: Number(l.getAttribute("data-thread")) })));
    for (const l of unfolded) assert.ok(l.depth <= 8, `${l.name}: ${l.depth} rows`);
    const unfoldedWorker = unfolded.find((l) => l.name !== "MainThread");
    assert.ok(unfoldedWorker.top < viewport, `with the stdlib unfolded the first worker lane starts at ${unfoldedWorker.top} px`);
    const folded = unfolded.find((l) => l.folded > 0);
    assert.ok(folded, "a folded lane");
    const want = capped.lanes.find((l) => l.thread === folded.thread);
    assert.equal(folded.folded, want.folded_below);
    assert.match(await page.textContent("#timeline .tr-note"), /folded into the last row/);
    await page.screenshot({ path: path.join(out, "timeline-bug2-folded.png") });
    before = await page.getAttribute("#timeline", "data-rendered");
    await page.click(`#timeline .tr-lane-label[data-thread="${folded.thread}"] .tr-fold`);
    await page.waitForFunction((b) => document.querySelector("#timeline").getAttribute("data-rendered") !== b, before);
    assert.equal(Number(await page.getAttribute(`#timeline .tr-lane-label[data-thread="${folded.thread}"]`, "data-depth")), folded.depth + folded.folded);
    await page.close();
  });

  test("Sections: the banner of unseen executions is at the top, with the server's figures", async () => {
    const page = await watchedPage(browser, problems);
    await page.goto(server.url + "?view=sections");
    await page.waitForSelector("#sections[data-rendered]");
    const v = await api(server.url, "sections", {});
    const u = v.unseen;
    assert.ok(u.short_at_least > 0, "Bug 2's monitor sections are mostly shorter than a period");
    assert.equal(u.listed, v.sections.reduce((n, s) => n + s.executions.length, 0));
    assert.equal(u.short_at_least, v.sections.reduce((n, s) => n + s.short.count_at_least, 0));
    assert.ok(u.interval_ms > 0 && u.interval_ms < v.interval_s * 1000, "a shorter interval: " + u.interval_ms);
    const banner = await page.$("#sections .sx-unseen");
    assert.ok(await banner.isVisible());
    assert.equal(await banner.getAttribute("data-short"), String(u.short_at_least));
    assert.equal(await banner.getAttribute("data-listed"), String(u.listed));
    const text = await banner.textContent();
    assert.ok(text.includes("--interval-ms " + u.interval_ms), text);
    assert.ok(text.includes(u.short_at_least + " too short to list"), text);
    // First in the panel, above the fold, and in type at least as large as the panel's text.
    const first = await page.$eval("#sections", (s) => s.firstElementChild.classList.contains("sx-unseen"));
    assert.ok(first, "the banner is the panel's first element");
    const r = await banner.boundingBox();
    assert.ok(r.y < (await page.evaluate(() => window.innerHeight)), "on the first screen");
    const size = await page.$eval("#sections .sx-unseen-figures", (e) => parseFloat(getComputedStyle(e).fontSize));
    assert.ok(size >= 13, "font size " + size);
    await page.screenshot({ path: path.join(out, "sections-bug2-banner.png") });
    await page.close();
  });

  test("no dialogs, page errors or console errors", () => assert.deepEqual(problems, []));
});

describe("serve A --compare B: the Trace compare tab without a= and b=", () => {
  const problems = [];
  test("compares A (above) with B (below)", async () => {
    const args = ["--workers", "6", "--timeout", "1"];
    const a = record("samples/python/bug1_worker_manager/buggy.py", "bug1-buggy", { args });
    const b = record("samples/python/bug1_worker_manager/fixed.py", "bug1-fixed", { args });
    const server = await serve(a.run, { args: ["--compare", b.run], until: /Trace compare of/ });
    servers.push(server);
    const page = await watchedPage(browser, problems);
    await page.goto(server.url + "?view=tracecompare");
    await page.waitForFunction(() => { const t = document.querySelector("#tracecompare"); return t && !t.hidden && (t.hasAttribute("data-edges") || t.hasAttribute("data-error")); }, null, { timeout: 120000 });
    assert.equal(await page.getAttribute("#tracecompare", "data-error"), null);
    const sides = await page.$$eval("#tracecompare .tc-sides > div", (ds) => ds.map((d) => d.getAttribute("title")));
    assert.deepEqual(sides, [a.run, b.run]);
    // The same answer as naming them.
    const named = await api(server.url, "traceCompare", { a: a.run, b: b.run, width_px: Number(await page.getAttribute("#tracecompare", "data-width-px")) });
    const unnamed = await api(server.url, "traceCompare", { width_px: Number(await page.getAttribute("#tracecompare", "data-width-px")) });
    assert.deepEqual([unnamed.a.path, unnamed.b.path], [named.a.path, named.b.path]);
    assert.equal(Number(await page.getAttribute("#tracecompare", "data-lanes")), named.lanes.length);
    await page.screenshot({ path: path.join(out, "tracecompare-default.png") });
    await page.close();
  });
  test("no dialogs, page errors or console errors", () => assert.deepEqual(problems, []));
});

describe("names_at_scale.py: pool names kept apart, a <script> name as text, Futures as one row", () => {
  let server, names, answer;
  const problems = [];
  before(async () => {
    const rec = record("tests/panels/scripts/names_at_scale.py", "names", { args: ["30"], extra: ["--interval-ms", "1"] });
    names = JSON.parse(rec.stdout.trim().split("\n").at(-1));
    server = await serve(rec.run);
    servers.push(server);
  });

  test("the Waits tab: distinct names stay distinct, the hostile one is text, Futures are one group", async () => {
    const page = await watchedPage(browser, problems);
    await page.goto(server.url + "?view=waits");
    await waitsDrawn(page);
    const width = await page.$eval("#waits canvas", (c) => parseFloat(c.style.width));
    answer = await api(server.url, "waits", { width_px: width - 16 });
    // Lane labels: as many distinct texts as distinct threads, each the full name's start and end.
    const labels = await page.$$eval("#waits .tr-lane-label", (ls) => ls.map((l) => ({ text: l.querySelector(".tr-name").textContent, title: l.title })));
    const pool = labels.filter((l) => l.title.startsWith("ThreadPoolExecutor-LongServiceName-0_"));
    assert.ok(pool.length >= 4, "pool lanes: " + JSON.stringify(labels));
    assert.equal(new Set(pool.map((l) => l.text)).size, pool.length, "pool lanes read alike: " + pool.map((l) => l.text).join(", "));
    for (const l of pool) assert.ok(l.text.endsWith(l.title.split(" (")[0].slice(-3)), `${l.text} keeps the end of ${l.title}`);
    // The hostile name: text in the lanes and in the matrices, no element made of it.
    assert.ok(labels.some((l) => l.title.startsWith("<script>alert(1)</script>")), JSON.stringify(labels));
    const heads = await page.$$eval("#waits .tr-matrix-table th", (ts) => ts.map((t) => t.title));
    assert.ok(heads.some((t) => t.startsWith("<script>alert(1)</script>")), "the hostile thread in a matrix: " + heads.join(" | "));
    assert.equal(await page.$$eval("#waits script", (s) => s.length), 0);
    // Matrix headers of pool threads stay distinct too.
    const colTexts = await page.$$eval("#waits .tr-matrix-table th.tr-col", (ts) => ts.map((t) => [t.textContent, t.title]));
    const byText = new Map();
    for (const [t, title] of colTexts) { if (!byText.has(t)) byText.set(t, new Set()); byText.get(t).add(title); }
    for (const [t, titles] of byText) assert.equal(titles.size, 1, `"${t}" stands for ${[...titles].join(", ")}`);
    // Many Futures, recorded at their own addresses, are one row (one type at one site).
    const futures = answer.view.objects.filter((o) => /Future/.test(o.type));
    if (answer.view.evidence.targets) {
      assert.ok(futures.length > 1, "several Future objects: " + answer.view.objects.map((o) => o.object).join(", "));
      const groups = new Set(futures.map((o) => answer.groups.group_of[answer.view.objects.indexOf(o)]));
      assert.equal(groups.size, 1, "one group for the Futures");
    }
    const fit = await noSideways(page);
    assert.ok(fit.scroll <= fit.view, `the page scrolls sideways: ${fit.scroll} > ${fit.view}`);
    await page.screenshot({ path: path.join(out, "waits-names.png"), fullPage: true });
    await page.close();
  });

  test("no dialogs, page errors or console errors", () => assert.deepEqual(problems, []));
});
