// Profiling tests (issue 19): the bundled extension in plain Node against the stand-in `vscode`
// module and the real server, in a copy of samples/python/testproject. An untrusted workspace runs
// nothing; the Python extension's active environment (its exported API) reaches the server, at
// start, when trust is granted and when the user selects another one, and the server runs the test
// with that interpreter (or says it has no pytest).

import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { expect } from "expect";
import { describe, test } from "node:test";
import { fakeVscode } from "../support/fakeVscode";
import { until as waitFor, useBundle } from "../support/bundle";
import { REPO, serverBinary } from "../support/server";

const activate = useBundle("testing");
const until = (what: string, f: () => boolean) => waitFor(what, f, 30_000);

function runsIn(dir: string): string[] {
  try {
    return fs.readdirSync(path.join(dir, ".threadradar/runs")).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
}

describe("profiling tests", () => {
  test("untrusted: nothing runs; trusted: the Python extension's interpreter runs the test", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tr-vscode-testing-"));
    fs.cpSync(path.join(REPO, "samples/python/testproject"), dir, { recursive: true });
    const testFile = path.join(dir, "tests/check_pool.py");
    const python = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim();
    const bare = path.join(dir, "bare-venv");
    execFileSync("python3", ["-m", "venv", "--without-pip", bare]);
    let selected = path.join(bare, "bin/python");

    const fake = fakeVscode({ "threadradar.serverPath": serverBinary(), "threadradar.trace.server": "off" }, dir);
    const mod = fake.module as { workspace: Record<string, unknown>; extensions?: unknown };
    let grant: (() => unknown) | undefined;
    mod.workspace.isTrusted = false;
    mod.workspace.onDidGrantWorkspaceTrust = (l: () => unknown) => {
      grant = l;
      return { dispose: () => undefined };
    };
    const asked: unknown[] = [];
    // The Python extension's API as it exports it: the active environment and its change event.
    const listeners: ((e: unknown) => unknown)[] = [];
    const environments = {
      getActiveEnvironmentPath: (r?: unknown) => (asked.push(r), { path: selected }),
      onDidChangeActiveEnvironmentPath: (l: (e: unknown) => unknown) => (listeners.push(l), { dispose: () => listeners.includes(l) && listeners.splice(listeners.indexOf(l), 1) }),
    };
    mod.extensions = {
      getExtension: (id: string) => (id === "ms-python.python" ? { isActive: true, exports: { environments } } : undefined),
    };
    const { ext, subscriptions } = activate(fake);
    try {
      await until("the server's commands", () => fake.commands.has("threadradar.profileTest"));
      expect(asked.length).toBeGreaterThan(0);
      const arg = { uri: `file://${testFile}`, name: "test_parallel_sum_is_right" };

      // Untrusted: refused by the extension, nothing is run.
      const refused = await fake.commands.get("threadradar.profileTest")?.(arg);
      expect(refused).toBeUndefined();
      expect(fake.messages.some((m) => m.level === "warning" && m.text.includes("trust the workspace first"))).toBe(true);
      expect(runsIn(dir)).toEqual([]);

      // Trust granted: the settings go again, with the selected interpreter. It has no pytest.
      mod.workspace.isTrusted = true;
      expect(grant).toBeDefined();
      await grant?.();
      let error = "";
      try {
        await fake.commands.get("threadradar.profileTest")?.(arg);
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
      expect(error).toBe(`pytest is not installed in ${selected}: \`${selected} -m pip install pytest\`, or set [tool.threadradar] python`);
      expect(runsIn(dir)).toEqual([]);

      // The user selects an interpreter with pytest in the Python extension: its change event
      // sends it to the server, and the test runs with it.
      await until("the extension follows the Python extension's changes", () => listeners.length === 1);
      selected = python;
      const before = asked.length;
      for (const l of listeners) l({ id: python, path: python });
      await until("the new interpreter is read", () => asked.length > before);
      await new Promise((r) => setTimeout(r, 200)); // the settings notification goes out before the command
      const answer = (await fake.commands.get("threadradar.profileTest")?.(arg)) as { run: string; outcome: { passed: number; failed: number } };
      expect([answer.outcome.passed, answer.outcome.failed]).toEqual([1, 0]);
      const info = JSON.parse(execFileSync(serverBinary(), ["info", "--json", answer.run], { encoding: "utf8" })) as { meta?: { interpreter?: { path: string; source: string } } };
      expect(info.meta?.interpreter).toEqual({ path: python, source: "the interpreter selected in the editor" });
      // Deactivated: it no longer follows.
      await ext.deactivate();
      for (const d of subscriptions) d.dispose();
      expect(listeners).toEqual([]);
    } finally {
      await ext.deactivate();
      for (const d of subscriptions) d.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
