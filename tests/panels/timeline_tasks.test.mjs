// The timeline panel (web/timeline.js) with asyncio tasks as units (issue #34 part 4), in
// headless Chromium, fed real layouts from `threadradar timeline RUN --units tasks --layouts`.
// The run (analysis/tests/fixtures/timeline/asyncio_tasks_units.json) is tests/tasks_units.rs's
// `project(true)`: an event loop on MainThread runs three tasks of `Crawler.fetch` in turn (one
// of them named `<img src=x onerror=…>`), each seen awaiting between its runs; a pool thread
// `asyncio_0` works throughout.
//
//   THREADRADAR_BIN=/path/to/threadradar node --test --test-concurrency=1 timeline_tasks.test.mjs
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { BIN, launch, out, root, watchedPage } from "./harness.mjs";

const RUN = path.join(root, "analysis/tests/fixtures/timeline/asyncio_tasks_units.json");
const HOSTILE = "<img src=x onerror=window.pwned=1>";

let browser, page, child;
const problems = [];
before(async () => {
  browser = await launch();
  child = spawn(BIN, ["timeline", RUN, "--units", "tasks", "--layouts"], { stdio: ["pipe", "pipe", "inherit"] });
  const waiting = [];
  readline.createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", (l) => waiting.shift()(JSON.parse(l)));
  const request = (p) => new Promise((resolve) => { waiting.push(resolve); child.stdin.write(JSON.stringify(p) + "\n"); });
  page = await watchedPage(browser, problems, { width: 1260, height: 900 });
  await page.exposeFunction("fetchLayoutBridge", request);
  await page.setContent(`<!doctype html><html><body><div id="tl" style="width:1200px"></div></body></html>`);
  await page.addStyleTag({ path: path.join(root, "web/timeline.css") });
  await page.addScriptTag({ path: path.join(root, "web/dom.js") });
  await page.addScriptTag({ path: path.join(root, "web/timeline.js") });
  await page.evaluate(() => {
    window.tl = window.ThreadRadarTimeline.create(document.getElementById("tl"), { fetchLayout: (p) => window.fetchLayoutBridge(p), onNavigate: () => {}, onTimeWindow: () => {} });
  });
  await page.waitForFunction(() => { const tl = document.getElementById("tl"); return Number(tl.getAttribute("data-rendered") || 0) >= 1 || tl.hasAttribute("data-error"); }, null, { timeout: 60000 });
  const error = await page.getAttribute("#tl", "data-error");
  if (error != null) throw new Error("the panel shows an error instead of a layout: " + error);
});
after(async () => {
  if (child) child.stdin.end();
  if (browser) await browser.close();
});

/** The labels in lane order: [thread id, parent id or "", name, "task of …" or null]. */
const labels = () => page.$$eval("#tl .tr-lane-label", (els) => els.map((e) => [Number(e.getAttribute("data-thread")), e.getAttribute("data-parent"), e.querySelector(".tr-name").textContent, e.querySelector(".tr-task-of")?.textContent ?? null]));

describe("timeline with asyncio tasks as units", () => {
  test("each task's lane follows its loop thread's lane, indented and labelled 'task of MainThread'", async () => {
    const l = await labels();
    assert.deepEqual(l.map((x) => x[0]), [0, 2, 3, 4, 1], JSON.stringify(l));
    for (const [id, parent, , of] of l.slice(1, 4)) {
      assert.equal(parent, "0", `lane ${id}`);
      assert.equal(of, "task of MainThread", `lane ${id}`);
    }
    assert.deepEqual([l[0][3], l[4][3]], [null, null], "threads are not labelled as tasks");
    const pad = await page.$$eval("#tl .tr-lane-label", (els) => els.map((e) => parseFloat(getComputedStyle(e).paddingLeft)));
    assert.ok(pad[1] > pad[0] && pad[2] > pad[0] && pad[3] > pad[0], "task labels are indented: " + pad.join(","));
    assert.match(await page.textContent("#tl .tr-note"), /task-state/);
    await page.screenshot({ path: path.join(out, "timeline-tasks.png") });
  });

  test("the table under the lanes says it counts tasks and threads, and marks the tasks", async () => {
    assert.match(await page.textContent("#tl table caption"), /^Per asyncio task .* and thread over the viewport/);
    assert.equal(await page.textContent("#tl table thead th"), "task or thread");
    const rows = await page.$$eval("#tl table tbody tr", (trs) => trs.map((r) => [Number(r.getAttribute("data-thread")), r.getAttribute("data-task"), r.querySelector("td").textContent]));
    assert.deepEqual(rows.map((r) => r[0]), [0, 2, 3, 4, 1], JSON.stringify(rows));
    assert.deepEqual(rows.map((r) => r[1]), ["", "1", "1", "1", ""], JSON.stringify(rows));
    assert.ok(rows[1][2].startsWith("↳ ") && !rows[0][2].startsWith("↳"), JSON.stringify(rows));
  });

  test("a task named <img onerror> is a label's text", async () => {
    const names = (await labels()).map((x) => x[2]);
    assert.ok(names.includes(HOSTILE), names.join(" | "));
    assert.equal(await page.$$eval("#tl img, #tl script", (e) => e.length), 0);
    assert.equal(await page.evaluate(() => window.pwned), undefined);
  });

  test("sorting by name keeps each task under its thread", async () => {
    await page.selectOption("#tl select[aria-label='Sort lanes']", "name");
    const order = (await labels()).map((x) => x[0]);
    // asyncio_0 sorts before MainThread; the tasks stay right after MainThread, by name.
    assert.deepEqual(order, [1, 0, 3, 2, 4], order.join(","));
    await page.selectOption("#tl select[aria-label='Sort lanes']", "first");
  });

  test("hovering a task's awaiting time says so, with its evidence; it is not drawn as running", async () => {
    const spot = await page.evaluate(() => {
      const l = window.tl.layout();
      const r = document.querySelector("#tl canvas").getBoundingClientRect();
      for (const p of window.tl.lanesInOrder()) {
        const lane = l.lanes.find((x) => x.thread === p.thread);
        const a = (lane.awaits || []).find((a) => a.x1 - a.x0 >= 4);
        if (!a) continue;
        const x = (a.x0 + a.x1) / 2;
        const running = lane.states.some((s) => s.x0 <= x && x < s.x1) || lane.bars.some((b) => b.x0 <= x && x < b.x1);
        return { x: r.left + x, y: r.top + p.y + 6, lane: lane.name, running, threadLanes: l.lanes.filter((x) => x.parent == null).every((x) => !x.awaits) };
      }
      return null;
    });
    assert.ok(spot, "a task lane with an awaiting span");
    assert.equal(spot.running, false, "no state or bar of the task where it awaited");
    assert.equal(spot.threadLanes, true, "threads' lanes have no awaiting spans");
    await page.mouse.move(spot.x, spot.y);
    await page.waitForSelector("#tl .tr-tip:not([hidden])");
    const tip = await page.$$eval("#tl .tr-tip div", (els) => els.map((e) => e.textContent));
    assert.equal(tip[0], `task ${spot.lane} (Crawler.fetch)`);
    assert.equal(tip[1], "awaiting a future (not a task)");
    assert.match(tip[3], /^evidence: task-state/);
    assert.deepEqual(problems, []);
  });
});
