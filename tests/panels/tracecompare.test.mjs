// The Trace compare tab (web/tracecompare.js, issue 17: TraceDiff's mirrored timelines) in
// headless Chromium against a real `threadradar serve A --compare B` of real recordings:
// - the paper's Bug 1 (samples/python/bug1_worker_manager), buggy as A and fixed as B. Each
//   program logs which threads ran the singleton's constructor: the statement at the top says
//   that many threads → 1; the lanes, bars and edges drawn are the server's answer; hovering an
//   edge shows both stacks as text; a click navigates to the source; selecting the constructor
//   lights the groups whose stacks hold it;
// - tests/scripts/hostile_names.py recorded twice, whose thread is named
//   `<img src=x onerror=alert(1)>`: its lane label is that text and no script runs;
// - with asyncio tasks as units (`serve --units tasks`, issue #34), the run of
//   analysis/tests/fixtures/timeline/asyncio_tasks_units.json against a copy of itself: each
//   task's lane pair follows its event loop thread's, indented and marked with that thread.
//
//   THREADRADAR_BIN=/path/to/threadradar node --test --test-concurrency=1 tracecompare.test.mjs
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { BIN, api, launch, out, record as recordTo, root, serve as serveRun, tmpDir, watchedPage } from "./harness.mjs";

const tmp = tmpDir("tracecompare-panel");

function record(script, name, args = []) {
  const run = path.join(tmp, name + ".json");
  return { run, stdout: recordTo(script, run, { args }) };
}

// `serve A --compare B`: resolves with the page's address and the Trace compare tab's address.
async function serve(a, b) {
  const s = await serveRun(a, { args: ["--compare", b], until: /Trace compare of .*: (http:\/\/127\.0\.0\.1:\d+\/\?view=tracecompare\S+)/ });
  return { url: s.url, trace: s.match[1], child: s.child };
}

let browser;
const servers = [];
const newPage = (problems) => watchedPage(browser, problems);
const drawn = (page) => page.waitForFunction(() => { const t = document.querySelector("#tracecompare"); return t && !t.hidden && (t.hasAttribute("data-edges") || t.hasAttribute("data-error")); }, null, { timeout: 120000 });
const attr = (page, k) => page.$eval("#tracecompare", (t, k) => t.getAttribute("data-" + k), k);
// The parameters the page asked with: the same runs (from the address) and width.
async function sameAnswer(page, server) {
  const q = new URL(server.trace).searchParams;
  return api(server.url, "traceCompare", { a: q.get("a"), b: q.get("b"), width_px: Number(await attr(page, "width-px")) });
}

before(async () => {
  browser = await launch();
});
after(async () => {
  if (browser) await browser.close();
  for (const s of servers) s.child.kill();
});

// "constructor ran in 7 threads: …" → 7.
function constructorThreads(stdout) {
  const m = stdout.match(/constructor ran in (\d+) threads?/);
  assert.ok(m, "the program's summary: " + stdout);
  return Number(m[1]);
}

let bug1 = null; // the two recordings, for the Compare tab's test below

describe("the Trace compare tab on Bug 1, buggy (A) and fixed (B)", () => {
  let server, page, answer, logged;
  const problems = [];
  before(async () => {
    const args = ["--workers", "10", "--timeout", "1.5"];
    const buggy = record("samples/python/bug1_worker_manager/buggy.py", "bug1-buggy", args);
    const fixed = record("samples/python/bug1_worker_manager/fixed.py", "bug1-fixed", args);
    logged = { buggy: constructorThreads(buggy.stdout), fixed: constructorThreads(fixed.stdout) };
    bug1 = { buggy: buggy.run, fixed: fixed.run };
    server = await serve(buggy.run, fixed.run);
    servers.push(server);
    page = await newPage(problems);
    await page.goto(server.trace);
    await drawn(page);
    answer = await sameAnswer(page, server);
  });

  test("the tab is open, and lanes, bars and edges drawn are the server's answer", async () => {
    assert.equal(await attr(page, "error"), null);
    assert.ok(await page.isVisible("#open-tracecompare"), "the tab button is shown");
    assert.ok(await page.$eval("#open-tracecompare", (b) => b.classList.contains("active")));
    assert.ok(answer.lanes && answer.edges, JSON.stringify(answer).slice(0, 300));
    // Ten workers in each run (and the main thread): at least the workers are paired.
    assert.ok(answer.lanes.length >= 10, "thread pairs: " + answer.lanes.map((l) => l.a.name + "~" + l.b.name).join(", "));
    for (let i = 0; i < 10; i++) assert.ok(answer.lanes.some((l) => l.a.name === "worker-" + i && l.b.name === "worker-" + i), "worker-" + i + " paired with itself");
    assert.equal(Number(await attr(page, "lanes")), answer.lanes.length);
    assert.equal(Number(await attr(page, "groups")), answer.groups.length);
    assert.equal(Number(await attr(page, "edges")), answer.edges.length);
    assert.ok(answer.groups.length > 0 && answer.edges.length > 0);
    // Every group is in exactly one edge (bundle), and each edge joins its own lane pair.
    const inEdges = answer.edges.flatMap((e) => e.groups).sort((x, y) => x - y);
    assert.deepEqual(inEdges, answer.groups.map((_, i) => i));
    for (const e of answer.edges) for (const g of e.groups) assert.equal(answer.groups[g].pair, e.lane);
    // What is in the picture: one path per edge, one rect per bar, the hatched ones only in one run.
    assert.equal(await page.$$eval("#tracecompare path.tc-edge", (x) => x.length), answer.edges.length);
    const barsA = answer.lanes.reduce((n, l) => n + l.a_bars.length, 0), barsB = answer.lanes.reduce((n, l) => n + l.b_bars.length, 0);
    assert.equal(Number(await attr(page, "bars-a")), barsA);
    assert.equal(Number(await attr(page, "bars-b")), barsB);
    assert.equal(await page.$$eval("#tracecompare rect.tc-bar[data-side=a]", (x) => x.length), barsA);
    assert.equal(await page.$$eval("#tracecompare rect.tc-bar[data-side=b]", (x) => x.length), barsB);
    const onlyA = answer.lanes.reduce((n, l) => n + l.a_bars.filter((b) => b.group == null).length, 0);
    assert.equal(Number(await attr(page, "only-a")), onlyA);
    // The buggy workers that were never interrupted loop until the time limit: time only in A.
    assert.ok(onlyA > 0, "stretches only in A");
    // Edge colours follow the shift classes of the legend.
    const shifts = await page.$$eval("#tracecompare path.tc-edge", (ps) => ps.map((p) => p.getAttribute("data-shift")));
    assert.deepEqual(shifts, answer.edges.map((e) => e.shift));
    // A matched bar is coloured by its group's class as the server gave it (the page classifies nothing).
    const barShifts = await page.$$eval("#tracecompare rect.tc-bar.tc-matched", (rs) => rs.map((r) => [Number(r.getAttribute("data-group")), r.getAttribute("data-shift")]));
    assert.ok(barShifts.length > 0);
    for (const [g, shift] of barShifts) assert.equal(shift, answer.groups[g].shift, "group " + g);
    const labels = await page.$$eval("#tracecompare .tc-name-a > span:first-child", (s) => s.map((x) => x.textContent));
    assert.deepEqual(labels, answer.lanes.map((l) => l.a.name));
    await page.screenshot({ path: path.join(out, "tracecompare-bug1.png"), fullPage: true });
  });

  test("the words at the top name the fix: the constructor's threads, as the programs logged them → 1", async () => {
    assert.ok(logged.buggy >= 2, "the buggy run built several managers: " + logged.buggy);
    assert.equal(logged.fixed, 1);
    const items = await page.$$eval("#tracecompare .tc-changes li", (ls) => ls.map((l) => ({ artifact: l.getAttribute("data-artifact"), text: l.textContent, significant: l.getAttribute("data-significant") })));
    assert.equal(items.length, answer.changes.length);
    const init = items.find((i) => i.artifact === "WorkerManager.__init__" && i.text.includes("run by"));
    assert.ok(init, "no 'run by' statement on the constructor: " + items.map((i) => i.text).join(" | "));
    assert.ok(init.text.includes(`run by ${logged.buggy} threads → 1`), init.text + " (logged: " + logged.buggy + " → 1)");
    // One run per side: no spread, so no significance claimed either way.
    assert.equal(init.significant, "null");
    const how = await page.$eval("#tracecompare .tc-how", (e) => e.textContent);
    assert.ok(how.includes("sampled stacks") && how.includes("τ = 0.2"), how);
    assert.ok(how.includes((answer.matched_share * 100).toFixed(1) + "% of the stack time"), how);
  });

  // The middle of the widest edge on screen, and the edge drawn topmost there (another edge may
  // cross it at that point).
  async function widestEdge() {
    const k = answer.edges.reduce((best, e, i) => (e.a_duration_s + e.b_duration_s > answer.edges[best].a_duration_s + answer.edges[best].b_duration_s ? i : best), 0);
    const handle = (await page.$$("#tracecompare path.tc-edge"))[k];
    await handle.scrollIntoViewIfNeeded();
    const p = await handle.evaluate((path) => { const m = path.getPointAtLength(path.getTotalLength() / 2); const r = path.ownerSVGElement.getBoundingClientRect(); const vb = path.ownerSVGElement.viewBox.baseVal; return { x: r.left + m.x * (r.width / vb.width), y: r.top + m.y * (r.height / vb.height) }; });
    const top = await page.evaluate(({ x, y }) => { const hit = document.elementFromPoint(x, y); return [...document.querySelectorAll("#tracecompare path.tc-edge")].indexOf(hit); }, p);
    assert.ok(top >= 0, "an edge under the point");
    return { e: answer.edges[top], p };
  }

  test("hovering an edge shows both stacks side by side, as text", async () => {
    const { e, p } = await widestEdge();
    await page.mouse.move(p.x, p.y);
    await page.waitForSelector("#tracecompare .tc-tip:not([hidden])", { timeout: 5000 });
    assert.equal(await page.$eval("#tracecompare .tc-tip", (t) => t.getAttribute("data-kind")), "edge");
    const g = answer.groups[e.groups[0]];
    const stacks = await page.$$eval("#tracecompare .tc-tip .tc-stack", (ss) => ss.map((s) => ({ side: s.getAttribute("data-side"), frames: [...s.querySelectorAll(".tc-frame")].map((f) => f.textContent) })));
    assert.deepEqual(stacks.map((s) => s.side), ["a", "b"]);
    assert.deepEqual(stacks[0].frames.map((f) => f.split("  ")[0]), g.stack_a.map((f) => f.qualname).reverse());
    assert.deepEqual(stacks[1].frames.map((f) => f.split("  ")[0]), g.stack_b.map((f) => f.qualname).reverse());
    assert.ok(g.stack_a.length > 0 && g.stack_b.length > 0);
    // Only the panel's own elements: every program string is a text node.
    const tags = await page.$$eval("#tracecompare .tc-tip *", (xs) => [...new Set(xs.map((x) => x.tagName.toLowerCase()))].sort());
    assert.deepEqual(tags.filter((t) => !["div", "strong"].includes(t)), []);
    await page.screenshot({ path: path.join(out, "tracecompare-hover.png"), fullPage: false });
  });

  test("a click on an edge navigates to the source of its stack", async () => {
    const { e, p } = await widestEdge();
    const g = answer.groups[e.groups[0]];
    const req = page.waitForRequest((q) => q.url().endsWith("/api/navigate"), { timeout: 10000 });
    await page.mouse.click(p.x, p.y);
    const body = JSON.parse((await req).postData());
    const frames = [...g.stack_b, ...g.stack_a];
    assert.ok(frames.some((f) => f.file === body.file && f.line === body.line), JSON.stringify(body) + " not in " + JSON.stringify(frames));
    assert.ok(fs.existsSync(body.file), "a file on disk: " + body.file);
    assert.ok(/bug1_worker_manager\/(buggy|fixed)\.py$/.test(body.file), body.file);
  });

  test("selecting the constructor (its statement) lights the groups whose stacks hold it", async () => {
    await page.click('#tracecompare .tc-changes li[data-artifact="WorkerManager.__init__"]');
    assert.equal(await attr(page, "selected"), "WorkerManager.__init__");
    const want = answer.groups.filter((g) => g.functions.includes("WorkerManager.__init__")).length;
    assert.ok(want > 0, "groups holding the constructor");
    assert.equal(Number(await attr(page, "lit-groups")), want);
    const litEdges = answer.edges.filter((e) => e.groups.some((g) => answer.groups[g].functions.includes("WorkerManager.__init__"))).length;
    assert.equal(await page.$$eval("#tracecompare path.tc-edge.tc-lit", (x) => x.length), litEdges);
    assert.equal(await page.$eval("#tracecompare select.tc-artifact", (s) => s.value), "WorkerManager.__init__");
    await page.screenshot({ path: path.join(out, "tracecompare-selected.png"), fullPage: true });
    await page.selectOption("#tracecompare select.tc-artifact", "");
    assert.equal(await attr(page, "lit-groups"), "0");
  });

  test("the permutation colouring: edges coloured by their order in A", async () => {
    await page.selectOption("#tracecompare select.tc-colour", "order");
    assert.equal(await attr(page, "colour-by"), "order");
    const strokes = await page.$$eval("#tracecompare path.tc-edge", (ps) => ps.map((p) => p.getAttribute("stroke")));
    assert.ok(strokes.every((s) => s.startsWith("hsl(")), strokes.join(" "));
    assert.equal(await page.$$eval("#tracecompare path.tc-edge", (x) => x.length), answer.edges.length);
    await page.selectOption("#tracecompare select.tc-colour", "shift");
    assert.equal(await attr(page, "colour-by"), "shift");
  });

  test("no dialogs, page errors or console errors", () => assert.deepEqual(problems, []));
});

describe("from the Compare tab's artifact table (serve DIR)", () => {
  let page, url;
  const problems = [];
  before(async () => {
    // The directory holds just the two Bug 1 runs (the hostile ones are recorded later).
    const dir = path.dirname(bug1.buggy);
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort(), ["bug1-buggy.json", "bug1-fixed.json"]);
    const child = spawn(BIN, ["serve", dir, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    servers.push({ child });
    url = await new Promise((resolve, reject) => {
      let buf = "";
      child.stdout.on("data", (d) => { buf += d; const m = buf.match(/http:\/\/127\.0\.0\.1:\d+\//); if (m) resolve(m[0]); });
      child.on("exit", (code) => reject(new Error("serve exited with " + code)));
    });
    page = await newPage(problems);
    await page.goto(url);
    await page.click("#open-compare");
    await page.waitForSelector('#compare tr[data-qualname="WorkerManager.__init__"] button.cmp-trace', { timeout: 60000 });
  });

  test("a row's trace button opens the Trace compare tab on the same runs with its groups lit", async () => {
    assert.ok(await page.isVisible("#open-tracecompare"), "two runs: the tab is offered");
    await page.click('#compare tr[data-qualname="WorkerManager.__init__"] button.cmp-trace');
    await drawn(page);
    assert.equal(await attr(page, "error"), null);
    assert.ok(await page.$eval("#open-tracecompare", (b) => b.classList.contains("active")));
    assert.equal(await attr(page, "selected"), "WorkerManager.__init__");
    const base = await page.$eval("#compare-base", (s) => s.value), nw = await page.$eval("#compare-new", (s) => s.value);
    const answer = await api(url, "traceCompare", { a: base, b: nw, width_px: Number(await attr(page, "width-px")) });
    assert.ok(answer.a.path.endsWith("bug1-buggy.json") && answer.b.path.endsWith("bug1-fixed.json"), answer.a.path + " " + answer.b.path);
    const want = answer.groups.filter((g) => g.functions.includes("WorkerManager.__init__")).length;
    assert.ok(want > 0);
    assert.equal(Number(await attr(page, "lit-groups")), want);
    assert.equal(Number(await attr(page, "groups")), answer.groups.length);
  });

  test("no dialogs, page errors or console errors", () => assert.deepEqual(problems, []));
});

describe("the Trace compare tab on hostile_names.py", () => {
  const THREAD = "<img src=x onerror=alert(1)>";
  let page, answer;
  const problems = [];
  before(async () => {
    const a = record("tests/scripts/hostile_names.py", "hostile-a");
    const b = record("tests/scripts/hostile_names.py", "hostile-b");
    const server = await serve(a.run, b.run);
    servers.push(server);
    page = await newPage(problems);
    await page.goto(server.trace);
    await drawn(page);
    answer = await sameAnswer(page, server);
  });

  test("the hostile thread's lanes are labelled with its name, as text", async () => {
    assert.ok(answer.lanes.some((l) => l.a.name === THREAD && l.b.name === THREAD), "the hostile thread paired: " + answer.lanes.map((l) => l.a.name).join(", "));
    const a = await page.$$eval("#tracecompare .tc-name-a > span:first-child", (s) => s.map((x) => x.textContent));
    const b = await page.$$eval("#tracecompare .tc-name-b > span:first-child", (s) => s.map((x) => x.textContent));
    assert.ok(a.includes(THREAD) && b.includes(THREAD), a.join(", "));
    assert.equal(await page.$$eval("#tracecompare img, #tracecompare script", (x) => x.length), 0);
  });

  test("no script ran: no dialogs, page errors or console errors", () => assert.deepEqual(problems, []));
});

describe("the Trace compare tab with asyncio tasks as units", () => {
  let page, answer;
  const problems = [];
  before(async () => {
    const a = path.join(root, "analysis/tests/fixtures/timeline/asyncio_tasks_units.json");
    const b = path.join(tmp, "asyncio_tasks_units_b.json");
    fs.copyFileSync(a, b);
    const s = await serveRun(a, { args: ["--compare", b, "--units", "tasks"], until: /Trace compare of .*: (http:\/\/127\.0\.0\.1:\d+\/\?view=tracecompare\S+)/ });
    const server = { url: s.url, trace: s.match[1], child: s.child };
    servers.push(server);
    page = await newPage(problems);
    await page.goto(server.trace);
    await drawn(page);
    answer = await sameAnswer(page, server);
  });

  test("each task's pair follows its loop thread's pair, marked as a task of that thread", async () => {
    // The server's order: MainThread, then the tasks it ran, then the pool thread.
    const names = answer.lanes.map((l) => [l.a.name, l.a.parent ?? null, l.b.parent ?? null]);
    assert.deepEqual(names.map((n) => n[0]), ["MainThread", "fetch-1", "<img src=x onerror=window.pwned=1>", "fetch-3", "asyncio_0"], JSON.stringify(names));
    assert.deepEqual(names.map((n) => n[1]), [null, "MainThread", "MainThread", "MainThread", null]);
    assert.deepEqual(names.map((n) => n[2]), names.map((n) => n[1]), "B's tasks ran on B's MainThread too");
    // The page draws them in that order, the tasks indented and labelled.
    const rows = await page.$$eval("#tracecompare .tc-lane-label", (els) => els.map((e) => ({
      name: e.querySelector(".tc-name-a > span:first-child").textContent,
      parent: e.getAttribute("data-parent"),
      of: [...e.querySelectorAll(".tc-task-of")].map((x) => x.textContent),
      pad: parseFloat(getComputedStyle(e).paddingLeft),
    })));
    assert.deepEqual(rows.map((r) => r.name), names.map((n) => n[0]));
    for (const [i, r] of rows.entries()) {
      const task = names[i][1] != null;
      assert.equal(r.parent, task ? "MainThread" : "", r.name);
      assert.deepEqual(r.of, task ? [" · task of MainThread", " · task of MainThread"] : [], r.name);
      assert.ok(task ? r.pad > rows[0].pad : r.pad === rows[0].pad, `${r.name}: indented only if a task (${r.pad} px)`);
    }
    assert.match(await page.textContent("#tracecompare .tc-axis-label"), /^task \(↳\) or thread/);
    assert.equal(await page.$$eval("#tracecompare img, #tracecompare script", (x) => x.length), 0, "the hostile task name is text");
    await page.screenshot({ path: path.join(out, "tracecompare-tasks.png"), fullPage: true });
  });

  test("no script ran: no dialogs, page errors or console errors", () => assert.deepEqual(problems, []));
});
