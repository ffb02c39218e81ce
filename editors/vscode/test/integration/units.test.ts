// asyncio tasks as units in the editor (issue #34): a real recording of tests/scripts/asyncio_truth.py
// on CPython 3.14 (six tasks of `Fetcher.fetch`, three of `parse`, on one event loop thread), served
// by the real server with the settings the extension sends. With `threadradar.units` = `tasks` the
// glyph data (`threadRadar/documentArtifacts`, which the extension draws) and the inlay hints count
// the six fetch tasks; with the default (`threads`) the same coroutine ran in one thread.
//
// Needs CPython 3.14 from tests/pythons.sh ($THREADRADAR_PYTHONS, default ~/.cache/threadradar/pythons);
// with THREADRADAR_REQUIRE_PYTHONS=1 (tests/run_all.sh) its absence fails the test.

import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { expect } from "expect";
import { after, before, describe, test } from "node:test";
import type { DocumentArtifactsResult } from "../../src/protocol";
import { Requests } from "../../src/protocol";
import { REPO, serverBinary, startServer } from "../support/server";
import type { ServerSession } from "../support/server";

const PYTHONS = process.env.THREADRADAR_PYTHONS ?? path.join(os.homedir(), ".cache/threadradar/pythons");
const PYTHON = path.join(PYTHONS, "3.14/bin/python3.14");
const runs = (() => {
  try {
    execFileSync(PYTHON, ["-c", "import asyncio"], { stdio: "ignore", timeout: 60_000 });
    return true;
  } catch {
    return false;
  }
})();
if (!runs && process.env.THREADRADAR_REQUIRE_PYTHONS === "1") {
  throw new Error(`CPython 3.14 is required here but ${PYTHON} does not run (bash tests/pythons.sh 3.14)`);
}

describe("asyncio tasks as units", { skip: runs ? false : `CPython 3.14: ${PYTHON} does not run (bash tests/pythons.sh 3.14)` }, () => {
  let dir: string;
  let file: string;
  const servers: ServerSession[] = [];

  before(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "threadradar-vscode-tasks-")));
    file = path.join(dir, "asyncio_truth.py");
    fs.copyFileSync(path.join(REPO, "tests/scripts/asyncio_truth.py"), file);
    const run = path.join(dir, ".threadradar", "runs", "20250101T000000Z-tasks.json");
    execFileSync(serverBinary(), ["record", "--no-progress", "-o", run, "--", PYTHON, "asyncio_truth.py", path.join(dir, "truth.json"), "0.5"], {
      cwd: dir,
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 120_000,
    });
  });

  after(async () => {
    for (const s of servers) await s.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The artifacts of the file and the inlay hints' labels, as the extension asks for them. */
  async function shown(units: "tasks" | "threads") {
    const server = await startServer(dir, { units });
    servers.push(server);
    const uri = await server.open(file);
    const artifacts = (await server.sendRequest(Requests.documentArtifacts, { uri, glyph: { theme: "light", size: 38 } })) as DocumentArtifactsResult;
    const lines = fs.readFileSync(file, "utf8").split("\n").length;
    const hints = (await server.sendRequest("textDocument/inlayHint", { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: lines, character: 0 } } })) as { position: { line: number }; label: string | { value: string }[] }[];
    const fetch = artifacts.artifacts.find((a) => a.qualname === "Fetcher.fetch");
    if (fetch === undefined) throw new Error("Fetcher.fetch is not among the file's artifacts: " + artifacts.artifacts.map((a) => a.qualname).join(", "));
    const hint = (hints ?? []).find((h) => h.position.line === fetch.line);
    const label = hint === undefined ? "" : typeof hint.label === "string" ? hint.label : hint.label.map((p) => p.value).join("");
    return { fetch, label };
  }

  test("with threadradar.units = tasks, Fetcher.fetch's glyph and hint count its six tasks", async () => {
    const { fetch, label } = await shown("tasks");
    expect({ units: fetch.threads, types: fetch.thread_types }).toEqual({ units: 6, types: 1 });
    expect(label).toMatch(/\b6 tasks\b/);
    expect(fetch.label).toBe(label);
  });

  test("with the default (threads), the same coroutine ran in one thread", async () => {
    const { fetch, label } = await shown("threads");
    expect(fetch.threads).toBe(1);
    expect(label).not.toMatch(/tasks/);
  });
});
