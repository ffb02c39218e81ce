import { expect } from "expect";
import { describe, test } from "node:test";
import type { RunsResult } from "../../src/protocol";
import { navigationTarget, routeMessage, toServeRuns } from "../../src/router";
import type { RouterHost } from "../../src/router";

const RUNS: RunsResult = {
  active: "/ws/.threadradar/runs/b.json",
  pinned: false,
  runs: [
    { path: "/ws/.threadradar/runs/a.json", name: "a.json", folder: "/ws", modified_unix_ms: 1, size: 10, active: false },
    { path: "/ws/.threadradar/runs/b.json", name: "b.json", folder: "/ws", modified_unix_ms: 2, size: 20, active: true },
  ],
  exclude_threads: [3],
};

/** A host that records calls and answers like the server. */
function fakeHost(overrides: Partial<RouterHost> = {}) {
  const calls: unknown[][] = [];
  const changed: string[] = [];
  const host: RouterHost = {
    sendRequest: (method, params) => {
      calls.push(["request", method, params]);
      if (method === "threadRadar/runs") return Promise.resolve(RUNS);
      if (method === "threadRadar/detail") return Promise.reject(Object.assign(new Error("no artifact nope in this run"), { code: -32602 }));
      return Promise.resolve({ answered: method });
    },
    executeCommand: (command, arg) => {
      calls.push(["command", command, arg]);
      if (command === "threadradar.setThreadFilter") {
        const ids = (arg as { exclude: number[] }).exclude;
        return Promise.resolve({ excluded: [...ids].reverse().map((id) => ({ id, name: `t${id}` })) });
      }
      if (command === "threadradar.clearThreadFilter") return Promise.resolve({ excluded: [] });
      if (command === "threadradar.selectRun") return Promise.resolve({ ...RUNS, active: "/ws/.threadradar/runs/a.json", pinned: true });
      return Promise.reject(new Error("unknown command"));
    },
    navigate: (file, line) => {
      calls.push(["navigate", file, line]);
    },
    changed: (what) => changed.push(what),
    ...overrides,
  };
  return { host, calls, changed };
}

describe("panel requests", () => {
  for (const method of ["overview", "detail", "glyph", "threads"]) test(`${method} goes to threadRadar/${method} with the page's params`, async () => {
    const { host, calls } = fakeHost({ sendRequest: (m, p) => Promise.resolve({ m, p }) });
    const params = { exclude_threads: [1], theme: "dark", artifact: "program" };
    const a = await routeMessage(host, { id: 7, method, params });
    expect(a).toEqual({ id: 7, result: { m: `threadRadar/${method}`, p: params } });
    expect(calls).toEqual([]);
  });

  test("compare goes to threadRadar/compare with the page's params unchanged", async () => {
    const { host, calls } = fakeHost({ sendRequest: (m, p) => Promise.resolve({ m, p }) });
    const params = { base: "/ws/.threadradar/runs/a.json", new: "b.json", level: "class", hide_stdlib: true };
    expect(await routeMessage(host, { id: 9, method: "compare", params })).toEqual({ id: 9, result: { m: "threadRadar/compare", p: params } });
    expect(calls).toEqual([]);
  });

  test("runs lists every run's path and name for the comparison's selects", async () => {
    const { host } = fakeHost();
    expect(await routeMessage(host, { id: 10, method: "runs", params: {} })).toEqual({
      id: 10,
      result: {
        runs: [
          { path: "/ws/.threadradar/runs/a.json", name: "a.json", current: false },
          { path: "/ws/.threadradar/runs/b.json", name: "b.json", current: true },
        ],
        current: "/ws/.threadradar/runs/b.json",
      },
    });
  });

  test("missing or malformed params become {}", async () => {
    const { host, calls } = fakeHost();
    await routeMessage(host, { id: 1, method: "overview" });
    await routeMessage(host, { id: 2, method: "overview", params: [1, 2] });
    expect(calls).toEqual([
      ["request", "threadRadar/overview", {}],
      ["request", "threadRadar/overview", {}],
    ]);
  });

  test("a server error is answered as one sentence under the request's id", async () => {
    const { host } = fakeHost();
    expect(await routeMessage(host, { id: 3, method: "detail", params: { artifact: "nope" } })).toEqual({ id: 3, error: "No artifact nope in this run." });
  });

  test("an unknown method is an error, not an exception", async () => {
    const { host, calls } = fakeHost();
    expect(await routeMessage(host, { id: 4, method: "shutdown", params: {} })).toEqual({ id: 4, error: 'The panels have no method "shutdown".' });
    expect(calls).toEqual([]);
  });
});

describe("filter", () => {
  test("{} reads the global filter from threadRadar/runs", async () => {
    const { host, calls, changed } = fakeHost();
    expect(await routeMessage(host, { id: 1, method: "filter", params: {} })).toEqual({ id: 1, result: { exclude_threads: [3] } });
    expect(calls).toEqual([["request", "threadRadar/runs", {}]]);
    expect(changed).toEqual([]);
  });

  test("thread ids set the filter with threadradar.setThreadFilter; the answer is sorted ids", async () => {
    const { host, calls, changed } = fakeHost();
    expect(await routeMessage(host, { id: 2, method: "filter", params: { exclude_threads: [2, 5] } })).toEqual({ id: 2, result: { exclude_threads: [2, 5] } });
    expect(calls).toEqual([["command", "threadradar.setThreadFilter", { exclude: [2, 5] }]]);
    expect(changed).toEqual(["filter"]);
  });

  test("an empty list clears the filter", async () => {
    const { host, calls } = fakeHost();
    expect(await routeMessage(host, { id: 3, method: "filter", params: { exclude_threads: [] } })).toEqual({ id: 3, result: { exclude_threads: [] } });
    expect(calls).toEqual([["command", "threadradar.clearThreadFilter", undefined]]);
  });

  for (const bad of [["1"], [1.5], [-1], "1", { a: 1 }]) test(`exclude_threads ${JSON.stringify(bad)} is refused without calling the server`, async () => {
    const { host, calls } = fakeHost();
    expect(await routeMessage(host, { id: 4, method: "filter", params: { exclude_threads: bad } })).toEqual({ id: 4, error: "Exclude_threads must be a list of thread ids." });
    expect(calls).toEqual([]);
  });
});

describe("runs", () => {
  test("{} answers in the shape threadradar serve gives the page", async () => {
    const { host } = fakeHost();
    expect(await routeMessage(host, { id: 1, method: "runs", params: {} })).toEqual({
      id: 1,
      result: {
        runs: [
          { path: "/ws/.threadradar/runs/a.json", name: "a.json", current: false },
          { path: "/ws/.threadradar/runs/b.json", name: "b.json", current: true },
        ],
        current: "/ws/.threadradar/runs/b.json",
      },
    });
  });

  test("{select} selects the run with threadradar.selectRun and answers the new state", async () => {
    const { host, calls, changed } = fakeHost();
    const a = await routeMessage(host, { id: 2, method: "runs", params: { select: "/ws/.threadradar/runs/a.json" } });
    expect(calls).toEqual([["command", "threadradar.selectRun", { run: "/ws/.threadradar/runs/a.json" }]]);
    expect(a).toMatchObject({ id: 2, result: { current: "/ws/.threadradar/runs/a.json" } });
    expect(changed).toEqual(["run"]);
  });

  test("no run: current is null", () => {
    expect(toServeRuns({ active: null, pinned: false, runs: [], exclude_threads: [] })).toEqual({ runs: [], current: null });
  });
});

describe("navigate and other messages", () => {
  test("navigate (no id) opens the file at the line and answers nothing", async () => {
    const { host, calls } = fakeHost();
    expect(await routeMessage(host, { method: "navigate", params: { file: "/ws/app.py", line: 12 } })).toBeUndefined();
    expect(calls).toEqual([["navigate", "/ws/app.py", 12]]);
  });

  test("line 0 or a missing line opens line 1; fractions are floored", () => {
    expect(navigationTarget({ file: "/a.py", line: 0 })).toEqual({ file: "/a.py", line: 1 });
    expect(navigationTarget({ file: "/a.py" })).toEqual({ file: "/a.py", line: 1 });
    expect(navigationTarget({ file: "/a.py", line: 7.9 })).toEqual({ file: "/a.py", line: 7 });
    expect(navigationTarget({ file: "", line: 3 })).toBeUndefined();
    expect(navigationTarget({ file: 3, line: 3 })).toBeUndefined();
  });

  test("a failing navigation never rejects", async () => {
    const { host } = fakeHost({ navigate: () => Promise.reject(new Error("boom")) });
    await expect(routeMessage(host, { method: "navigate", params: { file: "/x.py", line: 1 } })).resolves.toBeUndefined();
  });

  for (const msg of [null, 3, "overview", [], {}, { id: 1 }, { id: "1", method: "overview" }, { method: "overview" }]) test(`${JSON.stringify(msg)} is ignored`, async () => {
    const { host, calls } = fakeHost();
    expect(await routeMessage(host, msg)).toBeUndefined();
    expect(calls).toEqual([]);
  });
});
