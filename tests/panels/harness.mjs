// What every panel test shares: the threadradar binary, real recordings, a real `threadradar
// serve`, the HTTP API, and a headless Chromium whose pages fail the test on any dialog, page
// error or console error.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, "../..");
/** Screenshots and traces a test leaves for a human to look at. */
export const out = path.join(here, "output");
fs.mkdirSync(out, { recursive: true });

/** `$THREADRADAR_BIN`, else the release (then debug) build of this checkout. */
function binary() {
  const target = process.env.CARGO_TARGET_DIR;
  const candidates = [
    process.env.THREADRADAR_BIN,
    target && path.join(target, "release/threadradar"),
    path.join(root, "target/release/threadradar"),
    target && path.join(target, "debug/threadradar"),
    path.join(root, "target/debug/threadradar"),
  ].filter(Boolean);
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) throw new Error("no threadradar binary: build it (cargo build --release) or set THREADRADAR_BIN");
  return found;
}
export const BIN = binary();

/** The interpreter itself, not a wrapper script (a pyenv shim is a shell script, which record cannot sample). */
export const python = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { cwd: root }).toString().trim();

/** A fresh temporary directory named after the test. */
export const tmpDir = (name) => fs.mkdtempSync(path.join(os.tmpdir(), `threadradar-${name}-`));

/**
 * Records `script` (relative to the repository, or absolute) into `run` with `extra` recorder flags
 * and the program's `args`; returns the program's stdout.
 */
export function record(script, run, { args = [], extra = [] } = {}) {
  const argv = ["record", "--no-progress", ...extra, "-o", run, "--", python, path.resolve(root, script), ...args];
  return execFileSync(BIN, argv, { cwd: root, timeout: 120000, stdio: ["ignore", "pipe", "inherit"] }).toString();
}

/**
 * Starts `threadradar serve TARGET ARGS…` on a free port; resolves with its URL, the child and its
 * output lines once it has printed its address and, when `until` is given, a line matching it
 * (`match`).
 */
export function serve(target, { args = [], until } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, ["serve", target, ...args, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    const lines = [];
    let buf = "";
    let stderr = "";
    let url;
    let match;
    child.stderr.on("data", (d) => { stderr += d; lines.push(...String(d).split("\n").filter(Boolean)); });
    child.stdout.on("data", (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(line);
        url ??= line.match(/http:\/\/127\.0\.0\.1:\d+\//)?.[0];
        match ??= until ? line.match(until) ?? undefined : undefined;
        if (url && (!until || match)) resolve({ url, lines, child, match });
      }
    });
    child.on("exit", (code) => reject(new Error("serve exited with " + code + ": " + stderr)));
  });
}

/** `POST /api/<method>` with a JSON body; the JSON answer. */
export const api = async (url, method, body) =>
  (await fetch(url + "api/" + method, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) })).json();

/** Debian's Chromium, headless. */
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** A page that records any dialog, page error or console error in `problems` (tests assert it stays empty). */
export async function watchedPage(browser, problems, viewport = { width: 1400, height: 1000 }) {
  const page = await browser.newPage({ viewport });
  page.on("dialog", async (d) => { problems.push("dialog: " + d.message()); await d.dismiss(); });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") problems.push("console error: " + m.text()); });
  return page;
}
