// The Timeline tab of the served page with the rest of the panels, in headless Chromium against a
// real `threadradar serve` of a real recording of tests/scripts/phases.py, whose `phaser` thread
// logs when it computes and sleeps (the truth the figures are checked against):
// - opened on an artifact (`?view=timeline&artifact=KEY`, what the editors' "Timeline" lens
//   and `:ThreadRadarTimeline browser` open): its bars highlighted, the view zoomed to them, the
//   lanes coloured by the artifact's clusters;
// - the per-thread table beside the lanes;
// - a brush on the time axis sets the server's global time window: the overview's figures become
//   the window's (inside the logged sleep nobody computes), the header says "window a–b s", and
//   resetting restores the whole run's figures;
// - lanes and table rows follow the global thread filter applied in the detail view;
// - a function selected in the overview (its detail opened) is highlighted on the Timeline tab.
//
//   THREADRADAR_BIN=/path/to/threadradar node --test --test-concurrency=1 timeline_panel.test.mjs
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { BIN, api, launch, out, record, root, serve, tmpDir, watchedPage } from "./harness.mjs";

const tmp = tmpDir("timeline-panel");

let browser, server, page, logged, startUnix, key;
const problems = [];

before(async () => {
  const run = path.join(tmp, "phases.json");
  const stdout = record("tests/scripts/phases.py", run);
  logged = JSON.parse(stdout.trim().split("\n").at(-1));
  startUnix = JSON.parse(execFileSync(BIN, ["info", "--json", run]).toString()).meta.start_unix_ms / 1000;
  server = await serve(run);
  const ov = await api(server.url, "overview", {});
  const cp = ov.functions.find((f) => f.qualname === "compute_phase");
  assert.ok(cp, "compute_phase in the overview: " + ov.functions.map((f) => f.qualname).join(", "));
  key = cp.key;
  browser = await launch();
  page = await watchedPage(browser, problems);
});
after(async () => {
  if (browser) await browser.close();
  if (server) server.child.kill();
});

const phases = (name) => logged.filter((e) => e.thread === "phaser" && e.phase === name).map((e) => [e.start - startUnix, e.end - startUnix]);
const layoutOf = () => page.evaluate(() => window.ThreadRadarPanels.timeline().layout());

describe("the Timeline tab with the other panels (phases.py)", () => {
  test("opened on an artifact: its bars highlighted, zoomed to them, lanes in its cluster colours", async () => {
    await page.goto(server.url + "?view=timeline&artifact=" + encodeURIComponent(key));
    await page.waitForFunction((k) => document.querySelector("#timeline") && document.querySelector("#timeline").getAttribute("data-highlight") === k, key, { timeout: 30000 });
    // The focus zoom is one more layout: wait until the viewport is the artifact's.
    await page.waitForFunction(() => { const l = window.ThreadRadarPanels.timeline().layout(); return l && l.focus && l.from_s >= l.focus.from_s - (l.focus.to_s - l.focus.from_s) * 0.06 && l.from_s > l.run_from_s; }, null, { timeout: 30000 }).catch(() => {});
    const l = await layoutOf();
    assert.equal(l.focus.artifact, key);
    assert.equal(l.focus.name, "compute_phase");
    // Highlighted: exactly the frames of compute_phase.
    const lit = l.frames.filter((f) => f.highlighted).map((f) => f.function);
    assert.ok(lit.length > 0 && lit.every((f) => f === "compute_phase"), JSON.stringify(lit));
    // Its spans are the two logged compute phases, on the phaser thread only: each phase overlaps
    // one span for most of its length (the precision of bar edges against the program's clock is
    // tests/timeline_cli.rs's business; here the machine may be loaded).
    const phaser = l.lanes.find((x) => x.name === "phaser").thread;
    assert.deepEqual(l.focus.threads, [phaser]);
    const logged = phases("compute_phase");
    assert.equal(l.focus.span_count, logged.length, JSON.stringify(l.focus.spans));
    for (const [a, b] of logged) {
      const overlap = (s) => Math.max(0, Math.min(s.to_s, b) - Math.max(s.from_s, a));
      assert.ok(l.focus.spans.some((s) => overlap(s) > 0.5 * (b - a)), `no span over ${a.toFixed(3)}–${b.toFixed(3)} in ${JSON.stringify(l.focus.spans)}`);
    }
    // The view shows the artifact's bars: from (about) its first span to its last.
    assert.ok(l.from_s <= l.focus.from_s && l.to_s >= l.focus.to_s - 1e-6, `${l.from_s}-${l.to_s} vs ${l.focus.from_s}-${l.focus.to_s}`);
    // The phaser's lane carries the colour of its cluster for compute_phase (from `detail`).
    const detail = await api(server.url, "detail", { artifact: key });
    const colour = detail.artifact.clusters.find((c) => c.threads.includes(phaser)).colour;
    assert.equal(await page.getAttribute(`#timeline .tr-lane-label[data-thread="${phaser}"]`, "data-cluster"), colour);
    await page.screenshot({ path: path.join(out, "timeline-focused.png"), fullPage: true });
  });

  test("the per-thread table: the waiter mostly waiting, the phaser busy as long as it logged computing", async () => {
    await page.click("text=whole run");
    await page.waitForFunction(() => { const l = window.ThreadRadarPanels.timeline().layout(); return l.from_s === l.run_from_s; });
    const rows = await page.$$eval("#timeline table.tr-overview tbody tr", (trs) => trs.map((tr) => ({
      name: tr.children[0].textContent, busy: parseFloat(tr.querySelector('[data-field="busy"]').textContent), waiting: parseFloat(tr.querySelector('[data-field="waiting"]').textContent),
    })));
    const l = await layoutOf();
    assert.equal(rows.length, l.lanes.length, "a row per lane");
    const waiter = rows.find((r) => r.name === "waiter"), phaser = rows.find((r) => r.name === "phaser");
    // The truth from the program's log: the waiter waits for the phaser's whole first phase; the
    // phaser computes for the logged compute phases' share of its logged lifetime.
    const ph = logged.filter((e) => e.thread === "phaser");
    const life = Math.max(...ph.map((e) => e.end)) - Math.min(...ph.map((e) => e.start));
    const computing = ph.filter((e) => e.phase === "compute_phase").reduce((t, e) => t + e.end - e.start, 0);
    const expected = 100 * computing / life;
    assert.ok(waiter.waiting > 80, JSON.stringify(waiter));
    assert.ok(Math.abs(phaser.busy - expected) < 15, `phaser busy ${phaser.busy} %, logged ${expected.toFixed(1)} %`);
    assert.ok(Math.abs(phaser.busy + phaser.waiting - 100) < 0.2);
  });

  test("a brush over the logged sleep sets the global window: every figure is the window's, reset restores", async () => {
    await page.click('#view-tabs button[data-view="panels"]');
    await page.waitForSelector("#functions li.entry");
    const whole = await api(server.url, "overview", {});
    await page.click("#open-timeline");
    const [[s0, s1]] = phases("sleep_phase");
    // The brush: from the sleep's start + 50 ms to its end - 50 ms, through the axis' mapping.
    const xs = await page.evaluate(([a, b]) => {
      const l = window.ThreadRadarPanels.timeline().layout();
      const x = (t) => { const ax = l.axis; for (let i = 1; i < ax.length; i++) if (t <= ax[i].t_s) return ax[i - 1].x + (ax[i].x - ax[i - 1].x) * (t - ax[i - 1].t_s) / (ax[i].t_s - ax[i - 1].t_s); return ax.at(-1).x; };
      const c = document.querySelector("#timeline canvas").getBoundingClientRect();
      window.scrollTo(0, window.scrollY + c.bottom - 400);
      const r = document.querySelector("#timeline canvas").getBoundingClientRect();
      return { a: r.left + x(a), b: r.left + x(b), y: r.bottom - 8 };
    }, [s0 + 0.05, s1 - 0.05]);
    const filter = page.waitForRequest((q) => q.url().endsWith("/api/filter") && /window/.test(q.postData() || ""));
    await page.mouse.move(xs.a, xs.y);
    await page.mouse.down();
    await page.mouse.move(xs.b, xs.y, { steps: 6 });
    await page.mouse.up();
    const sent = JSON.parse((await filter).postData()).window;
    assert.ok(Math.abs(sent.from_s - (s0 + 0.05)) < 0.02 && Math.abs(sent.to_s - (s1 - 0.05)) < 0.02, JSON.stringify(sent));
    await page.waitForFunction(() => /window \d+\.\d\d–\d+\.\d\d s/.test(document.getElementById("filter-info").textContent));
    // The server holds it for everyone: another client's overview is the window's.
    const windowed = await api(server.url, "overview", {});
    assert.deepEqual(windowed.run.window, sent);
    // Inside the logged sleep nobody computes (the main thread joins, the waiter was released and
    // ended): almost no computing samples, against ~1 s of them in the whole run.
    assert.ok(windowed.run.counted_samples < whole.run.counted_samples * 0.1, `${windowed.run.counted_samples} vs ${whole.run.counted_samples}`);
    await page.click("text=reset time window");
    await page.waitForFunction(() => !/window/.test(document.getElementById("filter-info").textContent));
    const back = await api(server.url, "overview", {});
    assert.equal(back.run.window, undefined);
    assert.equal(back.run.counted_samples, whole.run.counted_samples);
    // A window outside the run is one sentence.
    const bad = await api(server.url, "filter", { window: { from_s: 1e6, to_s: 1e6 + 1 } });
    assert.match(bad.error, /^the time window .* is not inside the run/);
  });

  test("lanes and table rows follow the thread filter applied in the detail view", async () => {
    await page.click('#view-tabs button[data-view="panels"]');
    await page.click("#program-glyph");
    await page.waitForSelector("#tree li.thread");
    const l0 = await layoutOf();
    const phaser = l0.lanes.find((x) => x.name === "phaser").thread;
    await page.uncheck(`#tree li.thread[data-thread="${phaser}"] input`);
    await page.click("#apply");
    await page.waitForFunction(() => document.getElementById("filter-info").textContent.includes("1 threads excluded"));
    await page.click("#open-timeline");
    await page.waitForFunction((id) => !document.querySelector(`#timeline .tr-lane-label[data-thread="${id}"]`), phaser);
    const names = await page.$$eval("#timeline table.tr-overview tbody tr td:first-child", (tds) => tds.map((t) => t.textContent));
    assert.ok(!names.includes("phaser") && names.includes("waiter"), names.join(","));
    await page.click('#view-tabs button[data-view="panels"]');
    await page.click("#reset");
    await page.waitForFunction(() => document.getElementById("filter-info").textContent === "");
    await page.click("#open-timeline");
    await page.waitForSelector(`#timeline .tr-lane-label[data-thread="${phaser}"]`);
  });

  test("selecting a function in the overview, then the Timeline tab: its bars are highlighted", async () => {
    // A fresh page: the timeline opens on nothing selected.
    await page.goto(server.url);
    await page.waitForSelector("#functions li.entry");
    await page.click("#open-timeline");
    await page.waitForFunction(() => Number(document.querySelector("#timeline").getAttribute("data-rendered") || 0) >= 1, null, { timeout: 30000 });
    assert.equal(await page.getAttribute("#timeline", "data-highlight"), "");
    assert.ok((await layoutOf()).frames.every((f) => !f.highlighted), "nothing highlighted before a selection");
    // Select compute_phase in the overview: its entry's glyph opens its detail.
    await page.click('#view-tabs button[data-view="panels"]');
    await page.click(`#functions li.entry[data-key="${key}"] .glyph-button`);
    await page.waitForFunction(() => Number(document.querySelector("#detail").getAttribute("data-rendered") || 0) >= 1);
    await page.click("#open-timeline");
    await page.waitForFunction((k) => document.querySelector("#timeline").getAttribute("data-highlight") === k, key, { timeout: 30000 });
    const l = await layoutOf();
    assert.equal(l.focus.artifact, key);
    const lit = new Set(l.frames.flatMap((f, i) => (f.highlighted ? [i] : [])));
    assert.ok(lit.size > 0 && [...lit].every((i) => l.frames[i].function === "compute_phase"), JSON.stringify(l.frames.filter((f) => f.highlighted)));
    // Bars of it are drawn highlighted, on the phaser's lane only.
    const lanesWithLit = l.lanes.filter((x) => x.bars.some((b) => lit.has(b.frame))).map((x) => x.name);
    assert.deepEqual(lanesWithLit, ["phaser"]);
    await page.screenshot({ path: path.join(out, "timeline-selected-in-overview.png"), fullPage: true });
  });

  test("no dialogs, page errors or console errors", () => {
    assert.deepEqual(problems, []);
  });
});
