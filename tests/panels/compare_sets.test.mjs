// The Compare tab on run sets (issue 17) in headless Chromium against a real
// `threadradar serve BUGGY_SET --compare FIXED_SET` of real recordings of the paper's Bug 1
// (`record --repeat 3`, buggy and fixed). Each program logs how many threads ran the singleton's
// constructor; the page must show:
// - the sets picked in both selects, the n's and the test named (from the server's answer);
// - the constructor's "run by N threads → 1" with N from the first buggy run's own log, marked
//   significant or within noise as the server says, and significant whenever the logs leave no
//   doubt (every buggy run logged the same N > 1, every fixed run 1: no spread, an exact change);
// - the same two runs on both sides, picked by hand (multi-select), a buggy run shown as base and
//   a fixed one as new: every change within noise (the sets do not differ at all);
// - one run per side: nothing claimed, and the line says why.
//
//   THREADRADAR_BIN=/path/to/threadradar node --test --test-concurrency=1 compare_sets.test.mjs
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { BIN, api, launch, out, python, root, serve, tmpDir, watchedPage } from "./harness.mjs";

const tmp = tmpDir("compare-sets-panel");
const ARGS = ["--workers", "6", "--timeout", "1.0"];

// `record --repeat 3 -o NAME.json`: the manifest, its runs, and what each run's program logged.
function recordSet(variant) {
  const manifest = path.join(tmp, variant + ".json");
  const script = path.join(root, "samples/python/bug1_worker_manager", variant + ".py");
  const stdout = execFileSync(BIN, ["record", "--no-progress", "--repeat", "3", "-o", manifest, "--", python, script, ...ARGS], { cwd: root, timeout: 300000, stdio: ["ignore", "pipe", "inherit"] }).toString();
  const logged = [...stdout.matchAll(/constructor ran in (\d+) threads?/g)].map((m) => Number(m[1]));
  assert.equal(logged.length, 3, "each run's summary: " + stdout);
  const runs = JSON.parse(fs.readFileSync(manifest, "utf8")).runs.map((r) => fs.realpathSync(path.resolve(tmp, r)));
  return { manifest, runs, logged };
}

async function rendered(page, action) {
  const seq = Number((await page.getAttribute("#compare", "data-rendered")) || 0);
  await action();
  await page.waitForFunction((n) => Number(document.getElementById("compare").getAttribute("data-rendered") || 0) > n, seq, { timeout: 120000 });
}
const selected = (page, id) => page.$eval(id, (s) => [...s.selectedOptions].map((o) => o.value));
const changes = (page) => page.$$eval("#compare-changes li", (ls) => ls.map((l) => ({ text: l.textContent, cls: l.className, significant: l.getAttribute("data-significant") })));

describe("the Compare tab on run sets of Bug 1, buggy and fixed", () => {
  let browser, server, page, buggy, fixed;
  const problems = [];
  before(async () => {
    buggy = recordSet("buggy");
    fixed = recordSet("fixed");
    server = await serve(buggy.manifest, { args: ["--compare", fixed.manifest], until: /Compare of the run sets .*: (http:\/\/127\.0\.0\.1:\d+\/\?view=compare\S+)/ });
    browser = await launch();
    page = await watchedPage(browser, problems);
    await page.goto(server.match[1]);
    await page.waitForFunction(() => Number(document.getElementById("compare").getAttribute("data-rendered") || 0) > 0, null, { timeout: 120000 });
  });
  after(async () => {
    if (browser) await browser.close();
    if (server) server.child.kill();
  });

  test("the overview shows the active run's set: each function's mean ± sd [min–max] as `report SET` computes it", async () => {
    const base = server.match[1].split("?")[0];
    await page.goto(base);
    await page.waitForSelector("#run-set[data-rendered]:not([hidden]) tr.run-set-row", { timeout: 120000 });
    const heading = await page.textContent("#run-set h3");
    assert.ok(heading.includes("3 runs") && heading.includes("this is run 1"), heading);
    assert.ok((await page.textContent("#run-set .rs-how")).includes("over the 3 runs of the set"));
    // The server's answer for the page's request, and `threadradar report MANIFEST --json` (the
    // same runs, the same default counted states, every artifact): the same means and spreads.
    const hide = await page.isChecked("#hide-stdlib");
    const rs = (await api(base, "runSet", { level: "function", top: 10, hide_stdlib: hide })).set;
    const report = JSON.parse(execFileSync(BIN, ["report", buggy.manifest, "--json", ...(hide ? ["--no-stdlib"] : [])], { cwd: root }).toString());
    assert.ok(rs.artifacts.length > 0);
    const pctText = (x) => (x * 100).toFixed(1) + "%";
    const rows = await page.$$eval("#run-set tr.run-set-row", (trs) => trs.map((tr) => ({ name: tr.getAttribute("data-qualname"), crt: tr.querySelector(".rs-crt").textContent })));
    assert.deepEqual(rows.map((r) => r.name), rs.artifacts.map((a) => a.qualname));
    for (const [i, a] of rs.artifacts.entries()) {
      assert.equal(rows[i].crt, `${pctText(a.crt.mean)} ± ${pctText(a.crt.sd)} [${pctText(a.crt.min)}–${pctText(a.crt.max)}]`);
      const r = report.artifacts.find((x) => x.qualname === a.qualname && x.file === a.file);
      assert.ok(r, "report lists " + a.qualname);
      for (const k of ["mean", "sd", "min", "max"]) assert.ok(Math.abs(r.crt[k] - a.crt[k]) < 1e-9, `${a.qualname} crt.${k}: ${r.crt[k]} vs ${a.crt[k]}`);
    }
    // The constructor ran in as many threads as each buggy run logged: the spread's range is the logs'.
    const ctor = rs.artifacts.find((a) => a.qualname === "WorkerManager.__init__");
    if (ctor) {
      assert.equal(ctor.threads.min, Math.min(...buggy.logged));
      assert.equal(ctor.threads.max, Math.max(...buggy.logged));
    }
    await page.goto(server.match[1]);
    await page.waitForFunction(() => Number(document.getElementById("compare").getAttribute("data-rendered") || 0) > 0, null, { timeout: 120000 });
  });

  test("the sets from the address are picked, and the page says n per side and the test", async () => {
    assert.ok(await page.isVisible("#compare"));
    // (listed newest first)
    assert.deepEqual(await selected(page, "#compare-base"), [...buggy.runs].reverse());
    assert.deepEqual(await selected(page, "#compare-new"), [...fixed.runs].reverse());
    const line = await page.textContent("#compare-significance");
    assert.ok(line.includes("base n = 3, new n = 3") && line.includes("Welch's t-test") && line.includes("Holm"), line);
    await page.screenshot({ path: path.join(out, "compare-sets.png"), fullPage: true });
  });

  test("the constructor's threads as the programs logged them, marked as the server tested them", async () => {
    assert.ok(fixed.logged.every((n) => n === 1), "the fixed program builds one manager: " + fixed.logged);
    const answer = await api(server.url, "compare", { base_runs: buggy.runs, new_runs: fixed.runs, level: "function", hide_stdlib: false });
    assert.equal(answer.significance.n_base, 3);
    const items = await changes(page);
    // The page shows the server's first ten statements, each with the server's verdict.
    assert.deepEqual(items.map((i) => i.significant), answer.changes.slice(0, 10).map((c) => String(c.significant)));
    const init = items.find((i) => i.text.startsWith("WorkerManager.__init__: run by "));
    assert.ok(init, "no 'run by' statement on the constructor: " + items.map((i) => i.text).join(" | "));
    assert.ok(init.text.startsWith(`WorkerManager.__init__: run by ${buggy.logged[0]} threads → 1`), init.text + " (logged " + buggy.logged + ")");
    assert.ok(init.significant === "true" || init.significant === "false", init.significant);
    assert.equal(init.cls.includes("significant") || init.cls.includes("within-noise"), true, init.cls);
    assert.ok(init.text.includes(init.significant === "true" ? "(significant, p = " : "(within noise, p = "), init.text);
    // No spread on either side and a different count: the change is exact, so significant.
    if (buggy.logged.every((n) => n === buggy.logged[0]) && buggy.logged[0] > 1) assert.equal(init.significant, "true", init.text);
    // Significant ones are drawn distinctly from those within noise.
    const weights = await page.$$eval("#compare-changes li", (ls) => ls.map((l) => [l.getAttribute("data-significant"), getComputedStyle(l).fontWeight, getComputedStyle(l).opacity]));
    for (const [sig, weight, opacity] of weights) {
      if (sig === "true") assert.ok(Number(weight) >= 600, weight);
      if (sig === "false") assert.ok(Number(opacity) < 1, opacity);
    }
  });

  test("the trace button keeps the sets: the Trace compare tab's statements carry the same test", async () => {
    await page.click("#compare-table tr.cmp-row[data-qualname='WorkerManager.__init__'] button.cmp-trace");
    await page.waitForFunction(() => { const t = document.querySelector("#tracecompare"); return t && !t.hidden && (t.hasAttribute("data-edges") || t.hasAttribute("data-error")); }, null, { timeout: 120000 });
    assert.equal(await page.$eval("#tracecompare", (t) => t.getAttribute("data-error")), null);
    const answer = await api(server.url, "traceCompare", { a_runs: buggy.runs, b_runs: fixed.runs, width_px: 300 });
    const items = await page.$$eval("#tracecompare .tc-changes li", (ls) => ls.map((l) => ({ text: l.textContent, significant: l.getAttribute("data-significant") })));
    assert.deepEqual(items.map((i) => i.significant), answer.changes.map((c) => String(c.significant)));
    assert.ok(items.some((i) => i.significant === "true" || i.significant === "false"), "tested: " + JSON.stringify(items));
    const how = await page.textContent("#tracecompare");
    assert.ok(how.includes("significance: Welch's t-test on the per-run figures of 3 × 3 runs"), how.slice(0, 600));
    await rendered(page, () => page.click("#open-compare"));
  });

  // The address's runs stay first (the table shows a set's first run): buggy-1 is shown as base
  // and fixed-1 as new, although both sides hold the same two runs.
  test("the same runs on both sides, picked by hand: every change within noise", async () => {
    await rendered(page, () => page.selectOption("#compare-base", [buggy.runs[0], fixed.runs[0]]));
    await rendered(page, () => page.selectOption("#compare-new", [fixed.runs[0], buggy.runs[0]]));
    const line = await page.textContent("#compare-significance");
    assert.ok(line.includes("base n = 2, new n = 2"), line);
    const items = await changes(page);
    assert.ok(items.length > 0, "the shown runs (buggy → fixed) differ");
    assert.ok(items.every((i) => i.significant === "false" && i.cls.includes("within-noise")), JSON.stringify(items, null, 1));
  });

  test("one run per side: nothing claimed either way, and the line says why", async () => {
    await rendered(page, () => page.selectOption("#compare-base", [buggy.runs[1]]));
    await rendered(page, () => page.selectOption("#compare-new", [fixed.runs[1]]));
    assert.match(await page.textContent("#compare-significance"), /^One run per side: no spread/);
    const items = await changes(page);
    assert.ok(items.length > 0 && items.every((i) => i.significant === "null" && !i.text.includes("(significant") && !i.text.includes("within noise")), JSON.stringify(items));
    assert.deepEqual(problems, []);
  });
});
