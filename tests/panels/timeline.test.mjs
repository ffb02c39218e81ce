// The timeline panel (web/timeline.js) in headless Chromium, fed real layouts: a tiny harness
// page whose `fetchLayout` goes to `threadradar timeline RUN --layouts` (the analysis itself),
// on real recordings (the Bug 2 sample, a program with hostile names), on an empty and a
// one-sample run, and on a synthetic run of 1 M thread-samples, where a zoomed-out block's count
// is hovered and frame times while panning are measured, reported and held to ≥ 30 fps
// (THREADRADAR_LOADED=1: only reported, for a machine saturated by other work).
//
//   THREADRADAR_BIN=/path/to/threadradar node --test --test-concurrency=1 timeline.test.mjs
//
// The 1 M run is written by `cargo run --release -p threadradar-analysis --example steady_run`
// (or give one with SYNTH_RUN=…). Figures go to ./output/timeline-frames.json.
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { BIN, launch, out, root, tmpDir, watchedPage } from "./harness.mjs";

const tmp = tmpDir("timeline");

/** `threadradar timeline RUN --layouts`: one request line in, one layout line out, in order. */
function layoutServer(run) {
  const child = spawn(BIN, ["timeline", run, "--layouts"], { stdio: ["pipe", "pipe", "inherit"] });
  const waiting = [];
  const lines = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
  lines.on("line", (l) => waiting.shift()(JSON.parse(l)));
  return {
    request(params) {
      return new Promise((resolve) => { waiting.push(resolve); child.stdin.write(JSON.stringify(params) + "\n"); });
    },
    close() { child.stdin.end(); },
  };
}

async function open(browser, run, problems, width = 1200) {
  const server = layoutServer(run);
  const page = await watchedPage(browser, problems, { width: width + 60, height: 900 });
  await page.exposeFunction("fetchLayoutBridge", (p) => server.request(p));
  await page.setContent(`<!doctype html><html><body><div id="tl" style="width:${width}px"></div></body></html>`);
  await page.addStyleTag({ path: path.join(root, "web/timeline.css") });
  await page.addScriptTag({ path: path.join(root, "web/dom.js") }); // the panels' one DOM builder
  await page.addScriptTag({ path: path.join(root, "web/timeline.js") });
  await page.evaluate(() => {
    window.navs = [];
    window.windows = [];
    window.tl = window.ThreadRadarTimeline.create(document.getElementById("tl"), {
      fetchLayout: (p) => window.fetchLayoutBridge(p),
      onNavigate: (file, line) => window.navs.push([file, line]),
      onTimeWindow: (a, b) => window.windows.push([a, b]),
    });
  });
  // The first layout drawn, or the panel's one-sentence error (then fail now, not at the timeout).
  await page.waitForFunction(() => { const tl = document.getElementById("tl"); return Number(tl.getAttribute("data-rendered") || 0) >= 1 || tl.hasAttribute("data-error"); }, null, { timeout: 120000 });
  const error = await page.getAttribute("#tl", "data-error");
  if (error != null) throw new Error("the panel shows an error instead of a layout: " + error);
  return { page, server };
}

/** Runs `action` and waits for the next layout to be drawn. */
async function rendered(page, action) {
  const n = Number(await page.getAttribute("#tl", "data-rendered"));
  await action();
  await page.waitForFunction((k) => Number(document.getElementById("tl").getAttribute("data-rendered")) > k, n, { timeout: 60000 });
  // Settle: a burst of events may have queued one more request.
  await page.waitForTimeout(50);
}
const viewport = (page) => page.evaluate(() => { const l = window.tl.layout(); return [l.from_s, l.to_s]; });

/** Client coordinates of the middle of a wide bar (at least `minPx`), with its frame. */
async function wideBar(page, minPx = 20, pred = "true") {
  return page.evaluate(([minPx, pred]) => {
    const l = window.tl.layout();
    const r = document.querySelector("#tl canvas").getBoundingClientRect();
    const ok = new Function("f", "b", "return " + pred);
    for (const p of window.tl.lanesInOrder()) {
      const lane = l.lanes.find((x) => x.thread === p.thread);
      for (const b of lane.bars) {
        const f = l.frames[b.frame];
        if (b.x1 - b.x0 >= minPx && b.depth >= 1 && ok(f, b)) {
          // Scroll the bar into the window, then measure.
          const y = p.y + 16 + b.depth * 12 + 6;
          window.scrollTo(0, Math.max(0, r.top + window.scrollY + y - 300));
          const r2 = document.querySelector("#tl canvas").getBoundingClientRect();
          return { x: r2.left + (b.x0 + b.x1) / 2, y: r2.top + y, frame: f, bar: b, lane: lane.name };
        }
      }
    }
    return null;
  }, [minPx, pred]);
}

/** Client coordinates of the middle of an aggregated block (at least `minPx` wide), with the block. */
async function wideBlock(page, minPx = 2) {
  return page.evaluate((minPx) => {
    const l = window.tl.layout();
    const r = document.querySelector("#tl canvas").getBoundingClientRect();
    for (const p of window.tl.lanesInOrder()) {
      const lane = l.lanes.find((x) => x.thread === p.thread);
      for (const b of lane.blocks) {
        if (b.x1 - b.x0 >= minPx && b.count > 1) {
          const y = p.y + 16 + b.depth * 12 + 6;
          window.scrollTo(0, Math.max(0, r.top + window.scrollY + y - 300));
          const r2 = document.querySelector("#tl canvas").getBoundingClientRect();
          return { x: r2.left + (b.x0 + b.x1) / 2, y: r2.top + y, block: b, lane: lane.name, type: lane.type };
        }
      }
    }
    return null;
  }, minPx);
}

let browser;
before(async () => {
  browser = await launch();
});
after(async () => { if (browser) await browser.close(); });

describe("timeline on a Bug 2 recording", () => {
  const problems = [];
  let page, server;
  before(async () => {
    ({ page, server } = await open(browser, path.join(root, "analysis/tests/fixtures/timeline/bug2_producer_consumer.json"), problems));
  });
  after(() => server && server.close());

  test("one lane per thread, labelled as text", async () => {
    const labels = await page.$$eval("#tl .tr-lane-label .tr-name", (els) => els.map((e) => e.textContent));
    assert.equal(labels.length, 12);
    assert.ok(labels.includes("producer-0") && labels.includes("consumer-9"), labels.join(","));
    const note = await page.textContent("#tl .tr-note");
    assert.match(note, /sampled/);
    await page.screenshot({ path: path.join(out, "timeline-bug2.png") });
  });

  test("wheel and keyboard zoom, drag pans, shift-drag zooms to the box", async () => {
    const [f0, t0] = await viewport(page);
    const box = await page.locator("#tl canvas").boundingBox();
    await rendered(page, async () => { await page.mouse.move(box.x + box.width / 2, box.y + 40); await page.mouse.wheel(0, -300); });
    const [f1, t1] = await viewport(page);
    assert.ok(t1 - f1 < (t0 - f0) * 0.9, `wheel zoomed in: ${f1}-${t1}`);
    await page.focus("#tl");
    await rendered(page, () => page.keyboard.press("+"));
    const [f2, t2] = await viewport(page);
    assert.ok(t2 - f2 < (t1 - f1) * 0.95, `'+' zoomed in: ${f2}-${t2}`);
    // Drag right by 200 px: the viewport moves earlier by 200/width of its span.
    await rendered(page, async () => {
      await page.mouse.move(box.x + 600, box.y + 40);
      await page.mouse.down();
      await page.mouse.move(box.x + 800, box.y + 40, { steps: 10 });
      await page.mouse.up();
    });
    const [f3, t3] = await viewport(page);
    const expected = f2 - (t2 - f2) * 200 / box.width;
    assert.ok(Math.abs(f3 - Math.max(expected, 0)) < (t2 - f2) * 0.02, `panned to ${f3}, expected ${expected}`);
    assert.ok(Math.abs((t3 - f3) - (t2 - f2)) < 1e-6 || f3 === 0, "a pan keeps the span");
    // Shift-drag a box over 100 px.
    await rendered(page, async () => {
      await page.keyboard.down("Shift");
      await page.mouse.move(box.x + 300, box.y + 40);
      await page.mouse.down();
      await page.mouse.move(box.x + 400, box.y + 40, { steps: 5 });
      await page.mouse.up();
      await page.keyboard.up("Shift");
    });
    const [f4, t4] = await viewport(page);
    assert.ok(Math.abs((t4 - f4) - (t3 - f3) * 100 / box.width) < (t3 - f3) * 0.02, `box zoom: ${f4}-${t4}`);
    await rendered(page, () => page.keyboard.press("0"));
  });

  test("hover shows the bar's frame as text and a click navigates to its source", async () => {
    const b = await wideBar(page, 20);
    assert.ok(b, "a wide bar");
    await page.mouse.move(b.x, b.y);
    await page.waitForSelector("#tl .tr-tip:not([hidden])");
    const tip = await page.$$eval("#tl .tr-tip div", (els) => els.map((e) => e.textContent));
    assert.equal(tip[0], b.frame.function);
    assert.equal(tip[1], `${b.frame.file}:${b.frame.line}`);
    assert.equal(tip[2].startsWith(`thread ${b.lane} (`), true, tip[2]);
    assert.match(tip[3], /^start .*, duration /);
    assert.match(tip[4], /^state (computing|gil|idle)/);
    await page.mouse.down();
    await page.mouse.up();
    const navs = await page.evaluate(() => window.navs);
    assert.deepEqual(navs.at(-1), [b.frame.file, b.frame.line]);
  });

  test("a brush on the time axis sets the time window, and it can be reset", async () => {
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    const box = await page.evaluate(() => { const r = document.querySelector("#tl canvas").getBoundingClientRect(); return { x: r.left, y: r.top, width: r.width, height: r.height }; });
    const y = box.y + box.height - 10;
    await page.mouse.move(box.x + 200, y);
    await page.mouse.down();
    await page.mouse.move(box.x + 500, y, { steps: 5 });
    await page.mouse.up();
    const [a, b] = (await page.evaluate(() => window.windows)).at(-1);
    const [f, t] = await viewport(page);
    assert.ok(a < b && a >= f && b <= t, `${a}-${b}`);
    assert.ok(Math.abs((b - a) - (t - f) * 300 / box.width) < (t - f) * 0.03);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.click("text=reset time window");
    assert.deepEqual((await page.evaluate(() => window.windows)).at(-1), [null, null]);
  });

  test("θ, folding and lane sort ask for and draw new layouts", async () => {
    await rendered(page, () => page.evaluate(() => window.tl.setTheta(2)));
    assert.equal(await page.evaluate(() => window.tl.layout().theta), 2);
    await rendered(page, () => page.selectOption("#tl select[aria-label='Fold top levels']", "2"));
    assert.equal(await page.evaluate(() => window.tl.layout().fold.top), 2);
    await page.selectOption("#tl select[aria-label='Sort lanes']", "name");
    const names = await page.$$eval("#tl .tr-lane-label .tr-name", (els) => els.map((e) => e.textContent));
    assert.deepEqual(names, [...names].sort((a, b) => a.localeCompare(b)));
    await page.selectOption("#tl select[aria-label='Sort lanes']", "crt");
    const crts = await page.evaluate(() => window.tl.lanesInOrder().map((p) => window.tl.layout().lanes.find((l) => l.thread === p.thread).crt));
    assert.ok(crts.every((c, i) => i === 0 || crts[i - 1] >= c), crts.join(","));
    assert.deepEqual(problems, []);
  });
});

describe("timeline with hostile names", () => {
  const problems = [];
  let page, server;
  before(async () => {
    const run = path.join(tmp, "hostile.json");
    execFileSync(BIN, ["record", "--no-progress", "--duration", "2", "-o", run, "--", "python3", "tests/scripts/hostile_names.py"], { cwd: root, stdio: ["ignore", "ignore", "inherit"], timeout: 120000 });
    ({ page, server } = await open(browser, run, problems));
  });
  after(() => server && server.close());

  test("a thread named <img onerror> is a label's text, and a '\"><script>' frame is tooltip text", async () => {
    const names = await page.$$eval("#tl .tr-lane-label .tr-name", (els) => els.map((e) => e.textContent));
    assert.ok(names.includes("<img src=x onerror=alert(1)>"), names.join(" | "));
    assert.equal(await page.$$eval("#tl img, #tl script", (e) => e.length), 0);
    const b = await wideBar(page, 4, "f.function.includes('<script>')");
    assert.ok(b, "a bar of the hostile function");
    await page.mouse.move(b.x, b.y);
    await page.waitForSelector("#tl .tr-tip:not([hidden])");
    assert.equal(await page.textContent("#tl .tr-tip div"), '"><script>');
    assert.equal(await page.$$eval("#tl .tr-tip *", (els) => els.every((e) => e.tagName === "DIV")), true);
    assert.deepEqual(problems, []);
  });
});

describe("timeline of 1 M thread-samples", () => {
  const problems = [];
  let page, server, run;
  before(async () => {
    run = process.env.SYNTH_RUN;
    if (!run) {
      run = path.join(tmp, "synth-1m.json");
      execFileSync("cargo", ["run", "--release", "--locked", "-q", "-p", "threadradar-analysis", "--example", "steady_run", "--", run, "20000", "50"], { cwd: root, stdio: ["ignore", "inherit", "inherit"], timeout: 1800000 });
    }
    // 600 px: the whole-run view then aggregates the ~20-sample bars (0.6 px). At 1200 px each of
    // the run's 600 k bars is ≥ 1 px and the first layout is 65 MB of JSON (see docs/timeline.md).
    ({ page, server } = await open(browser, run, problems, 600));
  });
  after(() => server && server.close());

  test("zoomed out, a block of sub-pixel bars says on hover how many bars it aggregates", async () => {
    // The whole run at 600 px: bars of ~20 samples are 0.6 px wide, so most rows are blocks.
    const l = await page.evaluate(() => { const l = window.tl.layout(); return { from: l.from_s, to: l.to_s, run: l.run_to_s }; });
    assert.ok(l.from === 0 && Math.abs(l.to - l.run) < 1e-9, `the whole run is shown: ${JSON.stringify(l)}`);
    const b = await wideBlock(page, 2);
    assert.ok(b, "an aggregated block at least 2 px wide");
    await page.mouse.move(b.x, b.y);
    await page.waitForSelector("#tl .tr-tip:not([hidden])");
    const tip = await page.$$eval("#tl .tr-tip div", (els) => els.map((e) => e.textContent));
    assert.equal(tip[0], `${b.block.count} bars narrower than a pixel`, tip.join(" | "));
    assert.equal(tip[1], `thread ${b.lane} (${b.type})`);
    assert.equal(tip.at(-1), "zoom in to see them");
    await page.mouse.move(0, 0);
    await page.evaluate(() => window.scrollTo(0, 0));
  });

  test("opens with 50 lanes, and panning is measured frame by frame", async () => {
    assert.equal(await page.$$eval("#tl .tr-lane-label", (e) => e.length), 50);
    const box = await page.locator("#tl canvas").boundingBox();
    // Zoom to a tenth of the run first, so that there is somewhere to pan to.
    await rendered(page, () => page.evaluate(() => { const l = window.tl.layout(); window.tl.zoomTo(l.run_to_s * 0.45, l.run_to_s * 0.55); }));
    const paint = await page.evaluate(() => window.tl.paintTime());
    // A CDP view of the same pan: the browser's own counters.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable");
    const before = Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((m) => [m.name, m.value]));
    await page.evaluate(() => {
      window.frames_ = [];
      const loop = (t) => { window.frames_.push(t); if (window.frames_.length < 100000) window.rafId = requestAnimationFrame(loop); };
      window.rafId = requestAnimationFrame(loop);
    });
    const drawsBefore = (await page.evaluate(() => window.tl.frameTimes())).length;
    await page.mouse.move(box.x + 500, box.y + 100);
    await page.mouse.down();
    for (let i = 1; i <= 90; i++) {
      await page.mouse.move(box.x + 500 - i * 5, box.y + 100);
      await page.waitForTimeout(16);
    }
    await page.mouse.up();
    const frames = await page.evaluate(() => { cancelAnimationFrame(window.rafId); return window.frames_; });
    const after_ = Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((m) => [m.name, m.value]));
    const draws = (await page.evaluate(() => window.tl.frameTimes())).slice(drawsBefore);
    const gaps = frames.slice(1).map((t, i) => t - frames[i]).sort((a, b) => a - b);
    const q = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))];
    const elapsed = (frames.at(-1) - frames[0]) / 1000;
    const report = {
      lanes: 50, thread_samples: 1000000,
      frames: frames.length, seconds: elapsed, fps: (frames.length - 1) / elapsed,
      frame_interval_ms: { median: q(gaps, 0.5), p95: q(gaps, 0.95), max: gaps.at(-1) },
      draw_ms: { median: q([...draws].sort((a, b) => a - b), 0.5), p95: q([...draws].sort((a, b) => a - b), 0.95), count: draws.length },
      paint_layout_ms: paint,
      cdp: { task_s: after_.TaskDuration - before.TaskDuration, script_s: after_.ScriptDuration - before.ScriptDuration, layout_count: after_.LayoutCount - before.LayoutCount },
      layouts_drawn: Number(await page.getAttribute("#tl", "data-rendered")),
    };
    fs.writeFileSync(path.join(out, "timeline-frames.json"), JSON.stringify(report, null, 2));
    console.log("timeline 1M pan:", JSON.stringify(report));
    assert.ok(frames.length > 10 && draws.length > 10, "frames were drawn while panning");
    // The goal is ≥ 30 fps while panning (docs/benchmarks.md measured 46.7–60). A loose floor: on
    // a machine known to be saturated by other work, set THREADRADAR_LOADED=1 to only report it.
    if (!process.env.THREADRADAR_LOADED) {
      assert.ok(report.fps >= 30, `panning at ${report.fps.toFixed(1)} fps, under the 30 fps goal (set THREADRADAR_LOADED=1 on a saturated machine)`);
    }
    await page.screenshot({ path: path.join(out, "timeline-1m.png") });
    assert.deepEqual(problems, []);
  });
});

// An empty run (no thread, no sample) and a run of one sample, made from the Bug 2 recording's
// tables: the panel draws 0 and 1 lanes, with no page error.
describe("timeline of an empty run and of a one-sample run", () => {
  const fixture = JSON.parse(fs.readFileSync(path.join(root, "analysis/tests/fixtures/timeline/bug2_producer_consumer.json"), "utf8"));
  const quiet = { sample_count: 0, missed_samples: 0, late_samples: 0, failed_samples: 0, skipped_threads: 0 };
  const write = (name, run) => { const p = path.join(tmp, name); fs.writeFileSync(p, JSON.stringify(run)); return p; };

  for (const [what, lanes, make] of [
    ["an empty run", 0, () => ({ ...fixture, meta: { ...fixture.meta, ...quiet, duration_s: 0 }, threads: [], samples: [] })],
    ["a one-sample run", 1, () => {
      // The main thread's first sample with a stack, alone, at the run's start.
      const k = fixture.samples.findIndex((s) => s.threads.some((t) => t[0] === 0 && t[1] != null));
      const ts = fixture.samples[k].threads.find((t) => t[0] === 0);
      return {
        ...fixture,
        meta: { ...fixture.meta, ...quiet, sample_count: 1, duration_s: 0.01 },
        threads: [{ ...fixture.threads[0], first_sample: 0, last_sample: 0 }],
        samples: [{ t: 0, threads: [ts] }],
      };
    }],
  ]) {
    test(`${what} opens with ${lanes} lane(s)`, async () => {
      const problems = [];
      const { page, server } = await open(browser, write(`${lanes}-samples.json`, make()), problems);
      try {
        assert.equal(await page.$$eval("#tl .tr-lane-label", (e) => e.length), lanes);
        const l = await page.evaluate(() => { const l = window.tl.layout(); return { lanes: l.lanes.length, bars: l.lanes.map((x) => x.bars.length) }; });
        assert.equal(l.lanes, lanes);
        if (lanes === 1) assert.ok(l.bars[0] >= 1, "the one sample is drawn as bars");
        // Interacting with it does not throw either: hover, wheel, keys.
        const box = await page.locator("#tl canvas").boundingBox();
        await page.mouse.move(box.x + box.width / 2, box.y + 20);
        await page.mouse.wheel(0, -300);
        await page.focus("#tl");
        await page.keyboard.press("+");
        await page.keyboard.press("0");
        await page.waitForTimeout(300);
        await page.screenshot({ path: path.join(out, `timeline-${lanes}-lanes.png`) });
        assert.deepEqual(problems, []);
      } finally {
        server.close();
        await page.close();
      }
    });
  }
});
