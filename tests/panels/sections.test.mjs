// The Sections tab of the served page (issue 18; web/sections.js), in headless Chromium against a
// real `threadradar serve` of a real recording of tests/scripts/sections_truth.py (threads taking
// turns at one lock, every 50th hold ~40 times longer, each execution logged by the program). The
// copy that is recorded has hostile names: its file is called `<img src=x onerror=alert(1)>.py` and
// its threads `<script>alert(1)</script>-N`, which must reach the page as text.
// - the three views render: a tree row per section of `threadradar sections --json`, the treemap,
//   the selected section's graph (a point per listed execution) and histogram;
// - clicking a tree row selects the same section in the treemap and the graph;
// - the graph's outliers are exactly the CLI's (and no more executions listed than the program logged);
// - clicking an execution opens the Timeline tab at that moment, its thread's lane highlighted;
// - saved views: the selected section, an execution and a note are saved (in the runs directory's
//   views file, here `.views.json` beside the run), listed as text, kept across a reload, reopened
//   on their section and execution, deleted; a broken views file is one sentence on the page;
// - `?view=sections&file=…&function=…&lock=…&line=…` (what the editors' section lens opens) selects
//   that section.
//
//   THREADRADAR_BIN=/path/to/threadradar node --test --test-concurrency=1 sections.test.mjs
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { BIN, launch, out, python, root, serve, tmpDir, watchedPage } from "./harness.mjs";

const tmp = tmpDir("sections-panel");
const HOSTILE_FILE = "<img src=x onerror=alert(1)>.py";
const HOSTILE_THREAD = "<script>alert(1)</script>";

let browser, server, page, cli, logged, idx;
const problems = [];

before(async () => {
  const src = fs.readFileSync(path.join(root, "tests/scripts/sections_truth.py"), "utf8");
  const hostile = src.replace('name=f"worker-{i}"', `name=f"${HOSTILE_THREAD}-{i}"`);
  assert.notEqual(hostile, src, "sections_truth.py no longer names its threads worker-{i}: update this test");
  const script = path.join(tmp, HOSTILE_FILE);
  fs.writeFileSync(script, hostile);
  const run = path.join(tmp, "sections.json"), log = path.join(tmp, "log.jsonl");
  execFileSync(BIN, ["record", "--no-progress", "--interval-ms", "2", "-o", run, "--", python, script, log, "3", "100"], { cwd: tmp, timeout: 120000 });
  logged = fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  cli = JSON.parse(execFileSync(BIN, ["sections", run, "--json"], { cwd: tmp }).toString());
  idx = cli.sections.findIndex((s) => s.function === "Store.update");
  assert.ok(idx >= 0, "Store.update's section in `threadradar sections --json`: " + cli.sections.map((s) => s.function).join(", "));
  server = await serve(run);
  browser = await launch();
  page = await watchedPage(browser, problems);
});
after(async () => {
  if (browser) await browser.close();
  if (server) server.child.kill();
});

describe("the Sections tab (sections_truth.py, hostile names)", () => {
  test("the three views render from the run's sections, saying how they were obtained", async () => {
    await page.goto(server.url);
    await page.waitForSelector("#functions li.entry");
    await page.click("#open-sections");
    await page.waitForSelector("#sections[data-rendered]", { timeout: 30000 });
    const rows = await page.$$eval("#sections tr.sx-row", (trs) => trs.map((tr) => Number(tr.getAttribute("data-section"))));
    assert.deepEqual([...rows].sort((a, b) => a - b), cli.sections.map((_, i) => i), "a tree row per section");
    const cells = await page.$$eval("#sections g.sx-cell", (gs) => gs.map((g) => Number(g.getAttribute("data-section"))));
    const held = cli.sections.map((s, i) => [s, i]).filter(([s]) => s.total_hold_s > 0).map(([, i]) => i);
    assert.deepEqual([...cells].sort((a, b) => a - b), held, "a treemap cell per section with a hold time");
    // The tree's figures are the CLI's.
    const s = cli.sections[idx];
    const count = await page.textContent(`#sections tr.sx-row[data-section="${idx}"] td:nth-child(2)`);
    assert.ok(count.startsWith(String(s.execution_count)), `${count} vs ${s.execution_count}`);
    const how = await page.textContent("#sections .sx-how");
    assert.ok(how.includes(cli.how) && /± one sampling interval/.test(how) && /counted, not listed/.test(how), how);
    await page.screenshot({ path: path.join(out, "sections.png"), fullPage: true });
  });

  test("a tree row selects the treemap cell and the graph; the graph's outliers are the CLI's", async () => {
    // Select another section first where there is one, so the click must change the selection.
    if (cli.sections.length > 1) await page.evaluate((i) => window.ThreadRadarPanels.sections().select(i), idx === 0 ? 1 : 0);
    await page.click(`#sections tr.sx-row[data-section="${idx}"] .sx-name`);
    assert.equal(await page.getAttribute("#sections", "data-selected"), String(idx));
    assert.deepEqual(await page.$$eval("#sections tr.sx-row.selected", (x) => x.map((r) => r.getAttribute("data-section"))), [String(idx)]);
    assert.deepEqual(await page.$$eval("#sections g.sx-cell.selected", (x) => x.map((r) => r.getAttribute("data-section"))), [String(idx)]);
    const s = cli.sections[idx];
    const points = await page.$$eval("#sections .sx-graph circle.sx-exec", (cs) => cs.map((c) => ({ k: Number(c.getAttribute("data-exec")), outlier: c.getAttribute("data-outlier") === "1" })));
    assert.equal(points.length, s.executions.length, "a point per listed execution");
    assert.deepEqual(points.filter((p) => p.outlier).map((p) => p.k), s.outliers, "the marked outliers are the CLI's");
    // Truth: the program logged every execution; the listed ones cannot outnumber them. (Whether
    // each outlier is a logged slow hold is tests/sections.rs's business: on a loaded machine the
    // sampler's lag makes some fast holds look long, and the panel must show what the analysis says.)
    assert.ok(s.executions.length <= logged.length, `${s.executions.length} listed, ${logged.length} logged`);
    // The histogram counts every listed execution with a duration.
    const binned = await page.$$eval("#sections .sx-hist rect.sx-bar", (rs) => rs.reduce((t, r) => t + Number(r.getAttribute("data-count")), 0));
    assert.equal(binned, s.executions.filter((e) => e.duration_s > 0).length);
    // The bars are the server's bins (the page bins nothing): one per non-empty bin, in order.
    const bars = await page.$$eval("#sections .sx-hist rect.sx-bar", (rs) => rs.map((r) => ({ bin: Number(r.getAttribute("data-bin")), count: Number(r.getAttribute("data-count")) })));
    assert.deepEqual(bars, s.histogram.bins.map((b, k) => ({ bin: k, count: b.count })).filter((b) => b.count > 0));
  });

  test("the selected section says which lock, how it was found and the lock objects waited on, as the CLI does", async () => {
    for (const [i, s] of cli.sections.entries()) {
      await page.evaluate((k) => window.ThreadRadarPanels.sections().select(k), i);
      const line = await page.textContent("#sections .sx-lock");
      assert.ok(line.includes("Lock " + s.lock + (s.lock_type ? " (" + s.lock_type + ")" : " (type unknown)")), line);
      assert.ok(line.includes("found " + s.found), `${line} vs ${s.found}`);
      const objects = await page.$$eval("#sections .sx-lock-object", (li) => li.map((x) => x.textContent));
      assert.deepEqual(objects.map((t) => t.split(" · ")[0]), s.lock_objects.map((o) => o.type_name + " at " + o.address));
    }
  });

  test("clicking an execution opens the Timeline tab at that moment with its thread's lane highlighted", async () => {
    const s = cli.sections[idx];
    const k = s.outliers.length ? s.outliers[0] : 0;
    const e = s.executions[k];
    await page.click(`#sections .sx-graph circle.sx-exec[data-exec="${k}"]`);
    await page.waitForFunction(() => !document.getElementById("timeline").hidden);
    await page.waitForSelector(`#timeline .tr-lane-label[data-thread="${e.thread_id}"][data-lit="1"]`, { timeout: 30000 });
    await page.waitForFunction((t) => { const l = window.ThreadRadarPanels.timeline().layout(); return l && l.from_s <= t && l.to_s >= t && l.from_s > l.run_from_s - 1e-9 && l.to_s - l.from_s < (l.run_to_s - l.run_from_s); }, e.start_s, { timeout: 30000 });
    const lit = await page.$$eval('#timeline .tr-lane-label[data-lit="1"]', (x) => x.map((d) => Number(d.getAttribute("data-thread"))));
    assert.deepEqual(lit, [e.thread_id]);
    assert.equal(await page.getAttribute('#view-tabs button[data-view="timeline"]', "class"), "active");
    await page.screenshot({ path: path.join(out, "sections-to-timeline.png"), fullPage: true });
  });

  test("hostile file and thread names are text, never markup", async () => {
    await page.click("#open-sections");
    const where = await page.textContent(`#sections tr.sx-row[data-section="${idx}"] .sx-where`);
    assert.ok(where.startsWith(HOSTILE_FILE + ":"), where);
    const titles = await page.$$eval("#sections .sx-graph circle title", (ts) => ts.map((t) => t.textContent));
    assert.ok(titles.some((t) => t.includes(HOSTILE_THREAD)), titles.slice(0, 3).join(" | "));
    assert.equal(await page.$$eval("#sections img, #sections script, #timeline img, #timeline script", (x) => x.length), 0);
  });

  test("a saved view is listed as text, kept across a reload and reopens its section and execution", async () => {
    const s = cli.sections[idx];
    const k = s.outliers.length ? s.outliers[0] : 0;
    await page.goto(server.url + "?view=sections");
    await page.waitForSelector("#sections[data-rendered] .sx-saved[data-count]", { timeout: 30000 });
    assert.equal(await page.getAttribute("#sections .sx-saved", "data-count"), "0");
    await page.click(`#sections tr.sx-row[data-section="${idx}"] .sx-name`);
    const note = HOSTILE_THREAD + " the slow hold";
    await page.fill("#sections .sx-note-input", note);
    await page.selectOption("#sections .sx-save-exec", String(k));
    await page.click("#sections .sx-save");
    await page.waitForSelector('#sections .sx-saved[data-count="1"]');
    assert.equal(await page.textContent("#sections li.sx-view .sx-view-note"), note);
    assert.equal(await page.$$eval("#sections script, #sections img", (x) => x.length), 0);
    const stored = JSON.parse(fs.readFileSync(path.join(tmp, ".views.json"), "utf8"));
    assert.equal(stored.views.length, 1);
    assert.deepEqual([stored.views[0].note, stored.views[0].section.function, stored.views[0].section.lock, stored.views[0].execution.index, stored.views[0].thread],
      [note, s.function, s.lock, k, s.executions[k].thread]);
    // Kept across a reload; opening it selects its section and marks its execution.
    const other = cli.sections.length > 1 ? (idx === 0 ? 1 : 0) : idx;
    await page.goto(server.url + "?view=sections");
    await page.waitForSelector('#sections[data-rendered] .sx-saved[data-count="1"]', { timeout: 30000 });
    if (other !== idx) await page.evaluate((i) => window.ThreadRadarPanels.sections().select(i), other);
    assert.ok((await page.textContent("#sections li.sx-view .sx-view-status")).startsWith("Saved on this run"));
    await page.click("#sections li.sx-view .sx-view-open");
    assert.equal(await page.getAttribute("#sections", "data-selected"), String(idx));
    assert.deepEqual(await page.$$eval("#sections circle.sx-exec.sx-saved", (cs) => cs.map((c) => Number(c.getAttribute("data-exec")))), [k]);
    await page.screenshot({ path: path.join(out, "sections-saved-view.png"), fullPage: true });
    await page.click("#sections li.sx-view .sx-view-delete");
    await page.waitForSelector('#sections .sx-saved[data-count="0"]');
    assert.equal(JSON.parse(fs.readFileSync(path.join(tmp, ".views.json"), "utf8")).views.length, 0);
    // A broken views file: one sentence on the page, the rest of the panel still works.
    fs.writeFileSync(path.join(tmp, ".views.json"), "{ not json");
    const before = problems.length;
    await page.goto(server.url + "?view=sections");
    await page.waitForSelector("#sections .sx-saved[data-error]", { timeout: 30000 });
    const err = await page.getAttribute("#sections .sx-saved", "data-error");
    assert.ok(/is not a saved-views file/.test(err) && /delete it/.test(err), err);
    assert.equal(await page.$$eval("#sections tr.sx-row", (x) => x.length), cli.sections.length);
    fs.rmSync(path.join(tmp, ".views.json"));
    // The browser logs the refused request (HTTP 422) itself; that one is expected here.
    const logged = problems.splice(before);
    assert.deepEqual(logged.filter((p) => !/status of 422/.test(p)), []);
  });

  test("the section lens's URL opens the Sections tab on that section", async () => {
    const pick = cli.sections.length > 1 ? (idx === 0 ? 1 : 0) : idx; // not the one selected by default
    const s = cli.sections[pick];
    const q = new URLSearchParams({ view: "sections", file: s.file, function: s.function, lock: s.lock, line: String(s.line) });
    await page.goto(server.url + "?" + q.toString());
    await page.waitForSelector("#sections[data-wanted]", { timeout: 30000 });
    assert.equal(await page.getAttribute("#sections", "data-wanted"), String(pick));
    assert.equal(await page.getAttribute("#sections", "data-selected"), String(pick));
    assert.equal(await page.getAttribute('#view-tabs button[data-view="sections"]', "class"), "active");
    // A section this run does not have: said, not silently replaced.
    q.set("line", "99999");
    await page.goto(server.url + "?" + q.toString());
    await page.waitForSelector("#sections[data-wanted]", { timeout: 30000 });
    assert.equal(await page.getAttribute("#sections", "data-wanted"), "-1");
    assert.ok((await page.textContent("#sections .sx-detail-note")).includes("is not in this run"));
  });

  test("no dialogs, page errors or console errors", () => {
    assert.deepEqual(problems, []);
  });
});
