// The Waits tab (web/waits.js, issue 16's correspondence view) in headless Chromium against a real
// `threadradar serve` of real recordings:
// - tests/scripts/handoffs.py, whose threads hand off through a Lock, a Condition, an Event, a
//   queue and a pipe and log every hand-off (releaser, waiter, object): the lanes, waits and edges
//   drawn are the server's answer; the logged releaser → waiter pairs are among the edges drawn;
//   hovering a wait shows its object; clicking it navigates to its waiting line; selecting an
//   object's row highlights it; the evidence notes say what was inferred;
// - tests/scripts/hostile_names.py, whose thread is named `<img src=x onerror=alert(1)>`: every
//   thread name reaches the page as text and no script runs.
//
//   THREADRADAR_BIN=/path/to/threadradar node --test --test-concurrency=1 waits.test.mjs
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { api, launch, out, record as recordTo, serve, tmpDir, watchedPage } from "./harness.mjs";

const tmp = tmpDir("waits-panel");

function record(script, name, args = [], extra = []) {
  const run = path.join(tmp, name + ".json");
  return { run, stdout: recordTo(script, run, { args, extra }) };
}

let browser;
const servers = [];
const newPage = (problems) => watchedPage(browser, problems);
const drawn = (page) => page.waitForFunction(() => { const w = document.querySelector("#waits"); return w && !w.hidden && (w.hasAttribute("data-drawn-edges") || w.hasAttribute("data-error")); }, null, { timeout: 60000 });
const attrs = (page) => page.$eval("#waits", (w) => Object.fromEntries(["data-lanes", "data-intervals", "data-edges", "data-drawn-edges", "data-bundled", "data-error", "data-selected-object", "data-colour-by", "data-separate"].map((k) => [k.slice(5), w.getAttribute(k)])));

before(async () => {
  browser = await launch();
});
after(async () => {
  if (browser) await browser.close();
  for (const s of servers) s.child.kill();
});

describe("the Waits tab on handoffs.py", () => {
  let server, page, log, answer;
  const problems = [];
  before(async () => {
    const rec = record("tests/scripts/handoffs.py", "handoffs", ["8"], ["--interval-ms", "2"]);
    log = JSON.parse(rec.stdout.trim().split("\n").at(-1));
    assert.equal(log.length, 40, "5 kinds × 8 rounds");
    server = await serve(rec.run);
    servers.push(server);
    page = await newPage(problems);
    await page.goto(server.url);
    await page.click("#open-waits");
    await drawn(page);
    // The same request the panel made (its width is the canvas's time area).
    const width = await page.$eval("#waits canvas", (c) => parseFloat(c.style.width));
    // The lanes use the page's width (1400 px), not the width of the empty section it was opened in.
    assert.ok(width > 1000, `the canvas is ${width} px wide in a 1400 px page`);
    answer = await api(server.url, "waits", { width_px: width - 16 });
  });

  test("lanes, waits and edges drawn are the server's answer; the logged hand-offs are among the edges", async () => {
    const a = await attrs(page);
    assert.equal(a.error, null);
    const v = answer.view;
    const threads = new Set(v.threads.map((t) => t.id));
    for (const e of v.edges) { threads.add(e.waker_thread); threads.add(e.wakee_thread); }
    assert.equal(Number(a.lanes), threads.size);
    assert.equal(Number(a.intervals), v.intervals.length);
    assert.equal(Number(a.edges), v.edges.length);
    assert.ok(answer.bundles, "the panel asks for bundles (width_px)");
    // Edges are drawn one by one only where the server says they separate (issue 32).
    assert.equal(a.separate, String(answer.groups.separate !== false));
    assert.equal(Number(a["drawn-edges"]), answer.groups.separate === false ? 0 : answer.bundles.length);
    assert.equal(answer.bundles.reduce((n, b) => n + b.count, 0), v.edges.length, "every edge is in one bundle");
    assert.ok(v.intervals.length > 0 && v.edges.length > 0, JSON.stringify(a));
    // The truth: each logged releaser → waiter pair of threads has at least one edge drawn.
    const pairs = new Set(v.edges.map((e) => e.waker + " → " + e.wakee));
    const loggedPairs = [...new Set(log.map((h) => h.releaser + " → " + h.waiter))];
    const found = loggedPairs.filter((p) => pairs.has(p));
    assert.ok(found.length >= 3, `logged pairs found among the edges: ${found.join(", ")} of ${loggedPairs.join(", ")}; edges: ${[...pairs].join(", ")}`);
    // Lane labels are the thread names, as text, in the lanes' order.
    // (Cut in the middle when long: the full name is the label's title.)
    const labels = await page.$$eval("#waits .tr-lane-label", (s) => s.map((x) => x.title.replace(/ \(\d+\)( · .*)?$/, "")));
    assert.equal(labels.length, threads.size);
    for (const h of log) assert.ok(labels.includes(h.waiter), `no lane for ${h.waiter}: ${labels.join(", ")}`);
    await page.screenshot({ path: path.join(out, "waits-handoffs.png"), fullPage: true });
  });

  test("the evidence notes say how the edges were obtained", async () => {
    const text = await page.$eval("#waits .tr-evidence", (e) => e.textContent);
    const kernel = answer.view.edges.filter((e) => e.evidence === "kernel").length;
    assert.ok(text.includes(kernel + " kernel-exact, " + (answer.view.edges.length - kernel) + " inferred"), text);
    // The counts are the server's, by rule in its order: the page counts nothing.
    const c = answer.counts.edges;
    assert.deepEqual([c.all, c.kernel], [answer.view.edges.length, kernel]);
    const rules = c.inferred ? " (" + c.inferred_by.map((x) => x.count + " " + x.evidence).join(", ") + ")" : "";
    assert.ok(text.includes("Edges: " + c.kernel + " kernel-exact, " + c.inferred + " inferred" + rules + "."), text);
    if (answer.counts.kernel_ends) assert.ok(text.includes(answer.counts.kernel_ends + " of " + answer.counts.ends + " starts and ends"), text);
    assert.ok(text.includes("sampled every"), text);
    for (const n of answer.view.evidence.notes) assert.ok(text.includes(n), `note missing: ${n}`);
    // As root the recorder takes the scheduler's events when the kernel lets it; either way the
    // page says which.
    if (answer.view.evidence.kernel) assert.ok(text.includes("Scheduler wake-ups were recorded"), text);
    else assert.ok(text.includes("every edge is inferred"), text);
  });

  // The centre of a wait on the canvas, in page coordinates (the panel's own scale: whole run).
  async function waitPoint(pred) {
    const v = answer.view;
    const idx = v.intervals.findIndex(pred);
    assert.ok(idx >= 0, "no such wait");
    const w = v.intervals[idx];
    const box = await page.$eval("#waits canvas", (c) => { c.scrollIntoView({ block: "start" }); const r = c.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width }; });
    const lanes = await page.$$eval("#waits .tr-lane-label", (ls) => ls.map((l) => l.getAttribute("title")));
    const lane = lanes.findIndex((t) => t.includes("(" + w.thread + ")"));
    let t1 = 0;
    for (const i of v.intervals) t1 = Math.max(t1, i.end_s);
    for (const e of v.edges) t1 = Math.max(t1, e.time_s);
    const x0 = 8 + (w.start_s / t1) * (box.w - 16), x1 = Math.max(x0 + 2, 8 + (w.end_s / t1) * (box.w - 16));
    const y = box.y + 22 + lane * 20 + 10;
    // An edge crossing the lane is drawn over the wait and wins the hover there: find a point
    // along the bar where the tooltip is the wait's.
    for (let k = 1; k < 12; k++) {
      const x = box.x + x0 + ((x1 - x0) * k) / 12;
      await page.mouse.move(x, y);
      const kind = await page.$eval("#waits .tr-tip", (t) => (t.hidden ? null : t.getAttribute("data-kind")));
      if (kind === "wait") return { w, idx, x, y };
    }
    assert.fail("no point of the wait's bar shows the wait's tooltip");
  }
  // The longest wait of a waiter thread with a source line (wide enough to hit without an edge on it).
  const longest = () => {
    const v = answer.view;
    const names = Object.fromEntries(v.threads.map((t) => [t.id, t.name]));
    const cands = v.intervals.filter((i) => i.frame && (names[i.thread] || "").startsWith("waiter-") && v.objects[i.object].object !== "GIL");
    cands.sort((a, b) => (b.end_s - b.start_s) - (a.end_s - a.start_s));
    return cands[0];
  };

  test("hovering a wait shows its object, duration and evidence as text", async () => {
    const target = longest();
    const p = await waitPoint((i) => i === target);
    await page.waitForSelector("#waits .tr-tip:not([hidden])", { timeout: 5000 });
    const tip = await page.$eval("#waits .tr-tip", (t) => ({ text: t.textContent, kind: t.getAttribute("data-kind"), children: t.children.length }));
    assert.equal(tip.kind, "wait", tip.text);
    assert.equal(tip.children, 0, "the tooltip is plain text");
    assert.ok(tip.text.includes("object: " + answer.view.objects[p.w.object].object), tip.text);
    assert.ok(tip.text.includes("waited: "), tip.text);
    // Each end says how it was obtained, as the answer does.
    const ends = /from \S+ m?s \((kernel|sampled)\) to \S+ m?s \((kernel|sampled)\)/.exec(tip.text);
    assert.ok(ends, tip.text);
    assert.deepEqual([ends[1] === "kernel", ends[2] === "kernel"], [p.w.kernel_start, p.w.kernel_end], tip.text);
    assert.ok(/woken by|no evidence/.test(tip.text), tip.text);
  });

  test("a click on a wait navigates to its waiting line", async () => {
    const target = longest();
    const p = await waitPoint((i) => i === target);
    const req = page.waitForRequest((q) => q.url().endsWith("/api/navigate"), { timeout: 10000 });
    await page.mouse.click(p.x, p.y);
    const body = JSON.parse((await req).postData());
    assert.equal(body.file, target.frame.file);
    assert.equal(body.line, target.frame.line);
    assert.ok(body.file.endsWith("handoffs.py"), body.file);
  });

  test("Alt+click on a wait opens where it was released; hover says where", async () => {
    const v = answer.view;
    const names = Object.fromEntries(v.threads.map((t) => [t.id, t.name]));
    // The longest waiter wait that an edge with a known waker frame ended.
    const cands = v.intervals
      .map((w, idx) => ({ w, idx, e: v.edges.filter((e) => e.interval === idx && e.waker_frame).at(-1) }))
      .filter((c) => c.e && c.w.frame && (names[c.w.thread] || "").startsWith("waiter-") && v.objects[c.w.object].object !== "GIL");
    assert.ok(cands.length > 0, "a released wait with its waker's frame");
    cands.sort((a, b) => (b.w.end_s - b.w.start_s) - (a.w.end_s - a.w.start_s));
    const c = cands[0];
    const p = await waitPoint((i) => i === c.w);
    const tip = await page.$eval("#waits .tr-tip", (t) => t.textContent);
    const rf = c.e.waker_frame;
    assert.ok(tip.includes("released at: " + rf.function + " " + rf.file + ":" + rf.line), tip);
    const req = page.waitForRequest((q) => q.url().endsWith("/api/navigate"), { timeout: 10000 });
    await page.keyboard.down("Alt");
    await page.mouse.click(p.x, p.y);
    await page.keyboard.up("Alt");
    const body = JSON.parse((await req).postData());
    assert.deepEqual([body.file, body.line], [rf.file, rf.line]);
  });

  test("a click on an edge (a bundle when zoomed out) opens the waker's line", async () => {
    let res = answer, v = answer.view;
    const where = () => page.$eval("#waits canvas", (c) => { c.scrollIntoView({ block: "start" }); const r = c.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width }; });
    const laneTitles = () => page.$$eval("#waits .tr-lane-label", (ls) => ls.map((l) => l.getAttribute("title")));
    let box = await where(), lanes = await laneTitles();
    const laneOf = (id) => lanes.findIndex((t) => t.includes("(" + id + ")"));
    // The time range drawn (`data-range`: "t0-t1").
    const range = async () => (await page.$eval("#waits", (r) => r.getAttribute("data-range"))).split("-").map(Number);
    let [t0, t1] = await range();
    const xOf = (t) => box.x + 8 + ((t - t0) / (t1 - t0)) * (box.w - 16);
    // Bundles whose first edge has a waker frame, between lanes at least two apart (room to hover).
    // (The server bundles edges where one pixel column holds several; otherwise each is drawn.)
    const lines = (r) => r.bundles || r.view.edges.map((e, i) => ({ to_s: e.time_s, waker_thread: e.waker_thread, wakee_thread: e.wakee_thread, first_edge: i }));
    const usable = (r) => lines(r).filter((b) => r.view.edges[b.first_edge] && r.view.edges[b.first_edge].waker_frame && Math.abs(laneOf(b.waker_thread) - laneOf(b.wakee_thread)) >= 2);
    let cands = usable(res);
    assert.ok(cands.length > 0, "an edge with its waker's frame");
    const zoomed = (await page.$eval("#waits", (r) => r.getAttribute("data-separate"))) === "false";
    if (zoomed) {
      // Too dense over the whole run to draw one by one (the server says so for this width, and
      // how narrow a range would separate): drag across such a range around an edge, as a user
      // zooms, and take the server's answer for the range the panel then shows.
      const span = Math.min(0.8 * (res.groups.separate_below_s || 0.1), (t1 - t0) / 4);
      const mid = Math.min(Math.max(cands[Math.floor(cands.length / 2)].to_s, t0 + span / 2), t1 - span / 2);
      const y = box.y + 22 + 5;
      await page.mouse.move(xOf(mid - span / 2), y);
      await page.mouse.down();
      await page.mouse.move(xOf(mid), y, { steps: 4 });
      await page.mouse.move(xOf(mid + span / 2), y, { steps: 4 });
      await page.mouse.up();
      await page.waitForFunction((before) => document.querySelector("#waits").getAttribute("data-range") !== before, t0 + "-" + t1, { timeout: 30000 });
      await drawn(page);
      [t0, t1] = await range();
      // A range shows the lanes of the threads that wait in it: they are laid out again.
      box = await where();
      lanes = await laneTitles();
      // The same request the panel made for the range.
      const widthPx = Number(await page.$eval("#waits", (r) => r.getAttribute("data-width-px")));
      res = await api(server.url, "waits", { width_px: widthPx, from_s: t0, to_s: t1 });
      v = res.view;
      cands = usable(res);
      assert.equal(await page.$eval("#waits", (r) => r.getAttribute("data-separate")), "true", "zoomed to " + t0 + "–" + t1 + " s, below " + answer.groups.separate_below_s + " s");
    }
    const seen = [];
    for (const b of cands.slice(0, 20)) {
      const x = xOf(b.to_s);
      const y = box.y + 22 + ((laneOf(b.waker_thread) + laneOf(b.wakee_thread)) / 2) * 20 + 10;
      await page.mouse.move(x, y);
      const tip = await page.$eval("#waits .tr-tip", (t) => (t.hidden ? null : { kind: t.getAttribute("data-kind"), text: t.textContent }));
      const m = tip && tip.kind === "edge" && /waker at: \S+ (.+):(\d+)/.exec(tip.text);
      seen.push(tip ? tip.kind + ": " + tip.text.slice(0, 160) : "no tip at " + Math.round(x) + "," + Math.round(y) + " lanes " + laneOf(b.waker_thread) + "/" + laneOf(b.wakee_thread) + " t " + b.to_s.toFixed(4));
      if (!m) continue;
      // The frame shown is the waker frame of one of the answer's edges.
      assert.ok(v.edges.some((e) => e.waker_frame && e.waker_frame.file === m[1] && e.waker_frame.line === Number(m[2])), tip.text);
      const req = page.waitForRequest((q) => q.url().endsWith("/api/navigate"), { timeout: 10000 });
      await page.mouse.click(x, y);
      const body = JSON.parse((await req).postData());
      assert.deepEqual([body.file, body.line], [m[1], Number(m[2])]);
      if (zoomed) {
        // Back to the whole run for the tests after this one.
        const at = t0 + "-" + t1;
        await page.click("#waits .tr-whole");
        await page.waitForFunction((before) => document.querySelector("#waits").getAttribute("data-range") !== before, at, { timeout: 30000 });
      }
      return;
    }
    const sep = await page.$eval("#waits", (r) => r.getAttribute("data-separate") + " drawn " + r.getAttribute("data-drawn-edges"));
    const shown = await page.$eval("#waits", (r) => r.getAttribute("data-range") + " width " + r.getAttribute("data-width-px") + " lanes " + r.getAttribute("data-lanes"));
    assert.fail("no edge's tooltip named its waker's line (" + shown + "; box " + JSON.stringify(box) + ", " + lanes.length + " lane labels, range " + t0 + "-" + t1 + "): separate " + sep + ", " + cands.length + " candidates; " + JSON.stringify(seen));
  });

  test("the objects table: one row per group of objects, wakers from the log; selecting a row highlights it", async () => {
    const rows = await page.$$eval("#waits table.tr-objects tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    const g = answer.groups;
    assert.equal(rows.length, g.groups.length);
    g.groups.forEach((x, i) => { assert.equal(rows[i][0], x.label); assert.equal(rows[i][3], String(x.waits)); assert.equal(rows[i][5], String(x.futile_wakeups)); });
    // The waiting radar column is the server's glyph, cell for cell, for a row of one object.
    g.groups.forEach((x, i) => {
      const o = answer.view.objects[x.objects[0]];
      if (x.objects.length - x.merged.length === 1) assert.equal(rows[i][7], o.radar.length ? o.radar.map((c) => c.text).join(" ") : "—");
    });
    // The Condition's waker is the thread the program logged releasing it.
    const cond = answer.view.objects.findIndex((o) => o.wakers["releaser-condition"]);
    assert.ok(cond >= 0, "an object woken by releaser-condition: " + JSON.stringify(answer.view.objects.map((o) => [o.object, o.wakers])));
    assert.equal(g.groups[g.group_of[cond]].objects[0], cond, "the Condition names its row");
    // The wakers column: the first three in the text, all in its title.
    const wakers = await page.$eval(`#waits table.tr-objects tbody tr[data-group="${g.group_of[cond]}"] td:nth-child(7)`, (td) => td.title);
    assert.ok(wakers.includes("releaser-condition"), wakers);
    assert.ok(log.some((h) => h.releaser === "releaser-condition"));
    await page.click(`#waits table.tr-objects tbody tr[data-object="${cond}"]`);
    assert.equal((await attrs(page))["selected-object"], String(cond));
    assert.equal(await page.getAttribute(`#waits tr[data-object="${cond}"]`, "aria-selected"), "true");
    await page.screenshot({ path: path.join(out, "waits-selected.png"), fullPage: true });
    await page.click(`#waits table.tr-objects tbody tr[data-object="${cond}"]`);
    assert.equal((await attrs(page))["selected-object"], null);
  });

  test("the colour toggle", async () => {
    await page.selectOption("#waits select", "object");
    assert.equal((await attrs(page))["colour-by"], "object");
  });

  test("no dialogs, page errors or console errors", () => assert.deepEqual(problems, []));
});

describe("the Waits tab on hostile_names.py", () => {
  const THREAD = "<img src=x onerror=alert(1)>";
  let page, answer;
  const problems = [];
  before(async () => {
    const rec = record("tests/scripts/hostile_names.py", "hostile");
    const server = await serve(rec.run);
    servers.push(server);
    answer = await api(server.url, "waits", { width_px: 800 });
    page = await newPage(problems);
    await page.goto(server.url + "?view=waits");
    await drawn(page);
  });

  test("every thread name is text, the hostile one included", async () => {
    const names = new Set(answer.view.threads.map((t) => t.name));
    for (const e of answer.view.edges) { names.add(e.waker); names.add(e.wakee); }
    assert.ok(names.has(THREAD), "the hostile thread in the waits answer: " + [...names].join(", "));
    // The label: the name cut in the middle (its start and end), the whole name in the title.
    const labels = await page.$$eval("#waits .tr-lane-label", (s) => s.map((x) => ({ text: x.querySelector(".tr-name").textContent, title: x.title })));
    const hostile = labels.find((l) => l.title.startsWith(THREAD + " ("));
    assert.ok(hostile, JSON.stringify(labels));
    assert.ok(THREAD.startsWith(hostile.text.split("…")[0]) && THREAD.endsWith(hostile.text.split("…").at(-1)), hostile.text);
    assert.equal(await page.$$eval("#waits img, #waits script", (x) => x.length), 0);
  });

  test("no script ran: no dialogs, page errors or console errors", () => assert.deepEqual(problems, []));
});
