// The Waits tab (web/waits.js) on a run recorded with `record --exact-locks` (root: kernel
// uprobes), in headless Chromium against a real `threadradar serve`: tests/scripts/notify_truth.py
// hands 60 items from a producer to two consumers through a threading.Condition. The exact lock
// hand-offs (evidence `lock-event`) are counted as kernel-exact in the evidence line as the server
// counts them, the legend names their mark, and hovering a consumer's wait that one ended says
// "exact (uprobe)" with the wait to acquire from the edge's `exact` field.
//
//   THREADRADAR_BIN=/path/to/threadradar node --test --test-concurrency=1 waits_locks.test.mjs
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { api, launch, record, serve, tmpDir, watchedPage } from "./harness.mjs";

const tmp = tmpDir("waits-locks-panel");
const root = process.getuid && process.getuid() === 0;
let browser, server;

before(async () => {
  if (root) browser = await launch();
});
after(async () => {
  if (browser) await browser.close();
  if (server) server.child.kill();
});

describe("the Waits tab on exact lock hand-offs", () => {
  let page, answer;
  const problems = [];
  before(async () => {
    if (!root) return;
    const run = path.join(tmp, "notify.json");
    record("tests/scripts/notify_truth.py", run, { args: [path.join(tmp, "truth.jsonl"), "condition", "60", "0.012"], extra: ["--exact-locks", "--interval-ms", "2"] });
    server = await serve(run);
    page = await watchedPage(browser, problems);
    await page.goto(server.url);
    await page.click("#open-waits");
    await page.waitForFunction(() => { const w = document.querySelector("#waits"); return w && !w.hidden && (w.hasAttribute("data-drawn-edges") || w.hasAttribute("data-error")); }, null, { timeout: 60000 });
    const width = await page.$eval("#waits canvas", (c) => parseFloat(c.style.width));
    answer = await api(server.url, "waits", { width_px: width - 16 });
  });

  test("lock-event edges are counted kernel-exact and the legend names their mark", async (t) => {
    if (!root) {
      if (process.env.THREADRADAR_NO_SKIPS) throw new Error("record --exact-locks needs root, and THREADRADAR_NO_SKIPS is set");
      return t.skip("record --exact-locks needs root");
    }
    const v = answer.view;
    const exact = v.edges.filter((e) => e.evidence === "lock-event");
    assert.ok(exact.length >= 50, `exact hand-offs among the edges: ${exact.length}`);
    assert.ok(exact.every((e) => e.confidence === 1 && e.exact && e.exact.wait_s >= 0));
    const kernel = v.edges.filter((e) => e.evidence === "kernel" || e.evidence === "lock-event").length;
    assert.equal(answer.counts.edges.kernel, kernel, "the server counts them exact");
    const text = await page.$eval("#waits .tr-evidence", (e) => e.textContent);
    assert.ok(text.includes("Edges: " + kernel + " kernel-exact"), text);
    assert.ok(text.includes("square end: exact lock hand-off (uprobe)"), text);
    assert.ok(v.evidence.notes.some((n) => n.includes("exact lock hand-offs")) && text.includes("exact lock hand-offs"), text);
    assert.deepEqual(problems, []);
  });

  test("hovering a wait an exact hand-off ended says so, with the wait to acquire", async (t) => {
    if (!root) {
      if (process.env.THREADRADAR_NO_SKIPS) throw new Error("record --exact-locks needs root, and THREADRADAR_NO_SKIPS is set");
      return t.skip("record --exact-locks needs root");
    }
    const v = answer.view;
    const ended = new Set(v.edges.filter((e) => e.evidence === "lock-event" && e.kind === "wake").map((e) => e.interval));
    const cands = v.intervals.map((w, i) => ({ w, i })).filter((x) => ended.has(x.i)).sort((a, b) => (b.w.end_s - b.w.start_s) - (a.w.end_s - a.w.start_s));
    const box = await page.$eval("#waits canvas", (c) => { c.scrollIntoView({ block: "start" }); const r = c.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width }; });
    const lanes = await page.$$eval("#waits .tr-lane-label", (ls) => ls.map((l) => l.getAttribute("title")));
    let t1 = 0;
    for (const i of v.intervals) t1 = Math.max(t1, i.end_s);
    for (const e of v.edges) t1 = Math.max(t1, e.time_s);
    for (const { w } of cands.slice(0, 10)) {
      const lane = lanes.findIndex((s) => s.includes("(" + w.thread + ")"));
      const x0 = 8 + (w.start_s / t1) * (box.w - 16), x1 = Math.max(x0 + 2, 8 + (w.end_s / t1) * (box.w - 16));
      for (let k = 1; k < 12; k++) {
        await page.mouse.move(box.x + x0 + ((x1 - x0) * k) / 12, box.y + 22 + lane * 20 + 10);
        const tip = await page.$eval("#waits .tr-tip", (e) => (e.hidden ? null : { kind: e.getAttribute("data-kind"), text: e.textContent }));
        if (!tip || tip.kind !== "wait") continue;
        assert.ok(tip.text.includes("exact (uprobe)"), tip.text);
        assert.ok(/waited \S+ m?s to acquire/.test(tip.text), tip.text);
        return;
      }
    }
    assert.fail("no wait an exact hand-off ended could be hovered");
  });
});
