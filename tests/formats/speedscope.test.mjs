// speedscope's own app (shipped in its npm package) opens `threadradar export --format speedscope`
// in headless Chromium: the file is served beside the app on 127.0.0.1 and loaded through the
// app's `#profileURL=` importer; every thread's profile is listed under its name and tid, and a
// thread named like markup stays text.
// Needs THREADRADAR_BIN (a release build), python3 and Debian's chromium (/usr/bin/chromium).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const bin = process.env.THREADRADAR_BIN || path.join(repo, "target/release/threadradar");
const app = path.dirname(createRequire(import.meta.url).resolve("speedscope/dist/release/index.html"));

function serve(files) {
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url.split("?")[0].split("#")[0]);
    const file = files[url] ?? path.join(app, url === "/" ? "index.html" : url);
    if (!file.startsWith(app) && !Object.values(files).includes(file)) { res.writeHead(403); return res.end(); }
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404); return res.end(); }
      const type = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".json": "application/json", ".wasm": "application/wasm" }[path.extname(file)] || "application/octet-stream";
      res.writeHead(200, { "content-type": type });
      res.end(data);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

test("speedscope's app loads the export with one profile per thread", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tr-speedscope-"));
  const run = path.join(dir, "hostile.json");
  execFileSync(bin, ["record", "--no-progress", "-o", run, "--", process.env.PYTHON || "python3", path.join(repo, "tests/scripts/hostile_names.py")], { stdio: "ignore" });
  const out = path.join(dir, "hostile.speedscope.json");
  execFileSync(bin, ["export", run, "--format", "speedscope", "-o", out], { stdio: "ignore" });
  const exported = JSON.parse(fs.readFileSync(out, "utf8"));
  const names = exported.profiles.map((p) => p.name);
  assert.ok(names.some((n) => n.startsWith("<img src=x onerror=alert(1)> (")), names.join(", "));

  const server = await serve({ "/profile.json": out });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await browser.newPage();
    const dialogs = [];
    page.on("dialog", (d) => { dialogs.push(d.message()); d.dismiss(); });
    const { port } = server.address();
    await page.goto(`http://127.0.0.1:${port}/index.html#profileURL=${encodeURIComponent(`http://127.0.0.1:${port}/profile.json`)}`);
    // The toolbar names the active profile: `<name> (<tid>) (1/N)`.
    await page.waitForFunction((n) => document.body.innerText.includes(`(1/${n})`), names.length, { timeout: 20000 });
    const text = await page.evaluate(() => document.body.innerText);
    assert.ok(text.includes(names[0]), `the first thread's profile is shown: ${text.slice(0, 300)}`);
    assert.ok(!/error|failed/i.test(text.split("\n").slice(0, 5).join(" ")), text.slice(0, 300));
    // Walk to every profile with speedscope's "next profile" key and read its name.
    const seen = new Set();
    for (let i = 0; i < names.length; i++) {
      const t = await page.evaluate(() => document.body.innerText);
      for (const n of names) if (t.includes(n)) seen.add(n);
      await page.keyboard.press("n");
    }
    assert.deepEqual([...seen].sort(), [...names].sort());
    assert.deepEqual(dialogs, [], "no markup in a thread name ran");
    await page.screenshot({ path: path.join(dir, "speedscope.png") });
    console.log(`screenshot: ${path.join(dir, "speedscope.png")}`);
  } finally {
    await browser.close();
    server.close();
  }
});
