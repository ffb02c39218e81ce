// The Comparison view's model from the real server: two real runs of the Bug 1 sample (the buggy
// singleton, then the fixed one, 6 workers each), `threadRadar/compare` as the extension requests
// it, turned into items by compare.ts.

import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "expect";
import { after, before, describe, test } from "node:test";
import { changeText, compareHeader, compareItems, compareParams, significanceText } from "../../src/compare";
import type { CompareItem, CompareRuns } from "../../src/compare";
import type { CompareResult } from "../../src/protocol";
import { Requests } from "../../src/protocol";
import { BUGGY, bug1Workspace, record, startServer } from "../support/server";
import type { ServerSession, Workspace } from "../support/server";

const FIXED = "samples/python/bug1_worker_manager/fixed.py";

let ws: Workspace;
let fixedRun: string;
let server: ServerSession;

before(async () => {
  ws = bug1Workspace();
  // Recorded after the buggy run, so it is the newest (active) run and the buggy one is "previous".
  fixedRun = record(ws.dir, "20250101T000001Z-fixed", FIXED, ["--workers", "6", "--timeout", "1.5"]);
  server = await startServer(ws.dir);
});

after(async () => {
  await server?.stop();
  ws?.cleanup();
});

const compare = async (runs: CompareRuns, level: "function" | "class" = "function") =>
  (await server.sendRequest(Requests.compare, compareParams(runs, level))) as CompareResult;

/** The 1-based line of the first line of `file` matching `re`. */
function defLine(file: string, re: RegExp): number {
  const i = fs.readFileSync(path.join(ws.dir, file), "utf8").split("\n").findIndex((l) => re.test(l));
  if (i < 0) throw new Error(`no ${re.source} in ${file}`);
  return i + 1;
}

function item(items: CompareItem[], qualname: string): CompareItem {
  const found = items.find((i) => i.label === qualname);
  if (found === undefined) throw new Error(`no ${qualname} among ${items.map((i) => i.label).join(", ")}`);
  return found;
}

describe("threadRadar/compare → the Comparison view's items", () => {
  test("with the previous run (the default): the constructor ran in every worker before the fix and in one after", async () => {
    const r = await compare({});
    expect(r.level).toBe("function");
    expect(r.base.path).toBe(ws.run);
    expect(r.new.path).toBe(fixedRun);
    expect(compareHeader(r).label).toBe("20250101T000000Z-bug1 → 20250101T000001Z-fixed");

    const init = r.artifacts.find((a) => a.qualname === "WorkerManager.__init__");
    expect(init?.status).toBe("changed");
    expect(init?.base?.threads).toBeGreaterThan(1);
    expect(init?.new?.threads).toBe(1);

    const items = compareItems(r);
    const i = item(items, "WorkerManager.__init__");
    expect(i.description).toMatch(new RegExp(`^[+-]?\\d+\\.\\dpp · ${init?.base?.threads ?? -1} → 1 threads$`));
    expect(i.target).toEqual({ file: path.join(ws.dir, FIXED), line: defLine(FIXED, /^\s+def __init__\(self\) -> None:/) });
    expect(i.icon).toBe((init?.crt_delta ?? 0) > 0 ? "arrow-up" : "arrow-down");
    expect(i.tooltip).toContain(`- threads: ${init?.base?.threads ?? -1} → 1`);
    expect(i.tooltip).toContain("buggy\\.py\\:");
    expect(i.tooltip).toContain("fixed\\.py\\:");
    // Nothing of the standard library; sorted as the server sorts (by |Δcrt|).
    expect(items.map((x) => x.qualname)).toEqual(r.artifacts.map((a) => a.qualname));
    // Several <module>s (the two scripts, `<string>`, libraries): each with its file's name.
    const modules = items.filter((x) => x.qualname === "<module>").map((x) => x.label);
    // (fixed.py's own module counts only if a sample caught its main thread computing: on a
    // loaded machine it may have waited in join() at every tick.)
    const fixedModule = r.artifacts.some((a) => a.qualname === "<module>" && (a.file_new ?? a.file_base ?? "").endsWith("fixed.py"));
    if (fixedModule) expect(modules).toContain("<module> (fixed.py)");
    expect(modules.length).toBeGreaterThan(1);
    expect(modules.every((m) => /^<module> \(.+\)$/.test(m))).toBe(true);
    expect(r.artifacts.every((a) => a.file_kind !== "stdlib")).toBe(true);
    // Every target is the fixed file's (or common.py's) declaration line.
    for (const x of items.filter((y) => y.target !== null && y.qualname !== "<module>")) {
      const line = fs.readFileSync(x.target?.file ?? "", "utf8").split("\n")[(x.target?.line ?? 0) - 1] ?? "";
      expect([x.label, /^\s*(async\s+)?(def|class)\s/.test(line)]).toEqual([x.label, true]);
    }
  });

  test("the level switch asks again for the runs shown: classes", async () => {
    const shown = await compare({});
    const r = await compare({ base: shown.base.path ?? undefined, new: shown.new.path ?? undefined }, "class");
    expect(r.level).toBe("class");
    expect([r.base.path, r.new.path]).toEqual([ws.run, fixedRun]);
    const wm = item(compareItems(r), "WorkerManager");
    const a = r.artifacts.find((x) => x.qualname === "WorkerManager");
    expect(a?.base?.threads).toBeGreaterThan(a?.new?.threads ?? 99);
    expect(wm.target).toEqual({ file: path.join(ws.dir, FIXED), line: defLine(FIXED, /^class WorkerManager\b/) });
    expect(compareHeader(r).description).toMatch(/^\d+ class(es)? · \d+ added · \d+ removed$/);
  });

  test("Compare Runs… the other way round: the new side is the buggy file", async () => {
    const r = await compare({ base: path.basename(fixedRun), new: ws.run });
    expect([r.base.path, r.new.path]).toEqual([fixedRun, ws.run]);
    const i = item(compareItems(r), "WorkerManager.__init__");
    expect(i.description).toMatch(/ · 1 → \d+ threads$/);
    expect(i.target).toEqual({ file: path.join(ws.dir, BUGGY), line: defLine(BUGGY, /^\s+def __init__\(self\) -> None:/) });
  });

  test("Compare Runs… with several runs per side: run sets, each change tested against their spread", async () => {
    // Sets of the same recording twice: no spread, so a change is exact. The buggy run's
    // constructor ran in several workers and the fixed run's in one (the first test).
    const r = await compare({ base: [ws.run, ws.run], new: [fixedRun, fixedRun] });
    expect(r.significance).toMatchObject({ n_base: 2, n_new: 2 });
    expect(r.significance?.test).toMatch(/Welch/);
    const init = r.changes.find((c) => c.artifact === "WorkerManager.__init__" && c.statement.includes("run by"));
    if (init === undefined) throw new Error(`no 'run by' statement on the constructor: ${JSON.stringify(r.changes)}`);
    expect(init.significant).toBe(true);
    expect(changeText(init)).toMatch(/ \(significant, p = /);
    expect(significanceText(r)).toMatch(/^Run sets: base n = 2, new n = 2; Welch/);
    expect(compareHeader(r).description).toMatch(/ · sets of 2 → 2 runs$/);
    // The same two runs on both sides, in another order: nothing exceeds their spread.
    const same = await compare({ base: [ws.run, fixedRun], new: [fixedRun, ws.run] });
    expect(same.changes.length).toBeGreaterThan(0);
    expect(same.changes.every((c) => c.significant === false)).toBe(true);
    // One run picked per side: one run each, nothing claimed.
    const one = await compare({ base: [ws.run], new: [fixedRun] });
    expect(one.significance).toBeNull();
    expect(one.changes.every((c) => c.significant === null)).toBe(true);
  });

  test("an unknown run is an error sentence", async () => {
    await expect(compare({ base: "20990101T000000Z-none.json" })).rejects.toMatchObject({ code: -32004, message: expect.stringMatching(/^no run "20990101T000000Z-none\.json"/) });
  });
});
