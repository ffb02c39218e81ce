// The screenshots in docs/images/ (docs/panels.md shows them): each view of the panels on the
// paper's Bug 1, 2 and 3, as a reader first sees it. Real recordings of samples/python/bugN/
// (Bug 2 with --sched when this machine allows it), a real `threadradar serve`, headless
// Chromium; one 1100 × 720 PNG per view, the first screen only, so the files stay small.
//
//   cd tests/panels && THREADRADAR_BIN=/path/to/threadradar node screenshots.mjs [bug1 bug2 bug3]
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { BIN, launch, record, root, serve, tmpDir, watchedPage } from "./harness.mjs";

const docs = path.join(root, "docs/images");
fs.mkdirSync(docs, { recursive: true });
const tmp = tmpDir("screenshots");
const VIEWPORT = { width: 1100, height: 720 };

function schedAllowed() {
  try {
    const out = execFileSync(BIN, ["doctor", "--json"], { cwd: root }).toString();
    const j = JSON.parse(out);
    const list = Array.isArray(j) ? j : j.checks || [];
    const c = list.find((x) => /sched/i.test(JSON.stringify(x.name || x.id || x.check || "")));
    return !!c && (c.ok === true || c.status === "ok" || c.passed === true);
  } catch { return false; }
}

const BUGS = {
  bug1: { dir: "bug1_worker_manager", args: ["--workers", "8", "--timeout", "1"] },
  bug2: { dir: "bug2_producer_consumer", args: [], sched: true },
  bug3: { dir: "bug3_readers_writers", args: [] },
};

const ready = {
  timeline: "#timeline[data-rendered] .tr-lane-label",
  waits: "#waits[data-drawn-edges]",
  sections: "#sections[data-rendered]",
  tracecompare: "#tracecompare[data-edges]",
};

async function shoot(browser, url, view, file) {
  const problems = [];
  const page = await watchedPage(browser, problems, VIEWPORT);
  await page.goto(url + "?view=" + view);
  await page.waitForSelector(ready[view], { timeout: 180000, state: "attached" });
  await page.waitForTimeout(300); // canvases paint after the answer is in the DOM
  await page.screenshot({ path: file });
  await page.close();
  if (problems.length) throw new Error(file + ": " + problems.join("; "));
  console.log("wrote " + path.relative(root, file) + " (" + fs.statSync(file).size + " bytes)");
}

const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(BUGS);
const sched = schedAllowed();
const browser = await launch();
try {
  for (const name of wanted) {
    const bug = BUGS[name];
    const extra = bug.sched && sched ? ["--sched"] : [];
    const runs = {};
    for (const variant of ["buggy", "fixed"]) {
      runs[variant] = path.join(tmp, `${name}-${variant}.json`);
      record(`samples/python/${bug.dir}/${variant}.py`, runs[variant], { args: bug.args, extra });
    }
    const server = await serve(runs.buggy, { args: ["--compare", runs.fixed], until: /Trace compare of/ });
    try {
      for (const view of ["timeline", "waits", "sections", "tracecompare"]) {
        await shoot(browser, server.url, view, path.join(docs, `${name}-${view}.png`));
      }
    } finally {
      server.child.kill();
    }
  }
} finally {
  await browser.close();
}
