import { expect } from "expect";
import { describe, test } from "node:test";
import type { RunsResult } from "../../src/protocol";
import { navigationTarget, routeMessage } from "../../src/router";
import type { RouterHost } from "../../src/router";

const RUNS: RunsResult = {
  active: "/ws/.threadradar/runs/b.json",
  pinned: false,
  runs: [
    { path: "/ws/.threadradar/runs/a.json", name: "a.json", folder: "/ws", modified_unix_ms: 1, size: 10, active: false },
    { path: "/ws/.threadradar/runs/b.json", name: "b.json", folder: "/ws", modified_unix_ms: 2, size: 20, active: true },
  ],
  exclude_threads: [3],
  window: null,
  protocol: 2,
  summary: null,
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

describe("filter and runs: the protocol's methods, unchanged", () => {
  for (const [method, params] of [["filter", {}], ["filter", { exclude_threads: [2, 5] }], ["runs", {}], ["runs", { select: "/ws/.threadradar/runs/a.json" }]] as const) {
    test(`${method} ${JSON.stringify(params)} goes to threadRadar/${method} as the page sent it`, async () => {
      const { host, calls } = fakeHost({ sendRequest: (m, p) => { calls.push(["request", m, p]); return Promise.resolve({ m, p }); } });
      expect(await routeMessage(host, { id: 1, method, params })).toEqual({ id: 1, result: { m: `threadRadar/${method}`, p: params } });
      expect(calls).toEqual([["request", `threadRadar/${method}`, params]]);
    });
  }

  test("setting the filter or selecting a run tells the views outside the page; reading does not", async () => {
    const { host, changed } = fakeHost();
    await routeMessage(host, { id: 1, method: "filter", params: {} });
    await routeMessage(host, { id: 2, method: "runs", params: {} });
    expect(changed).toEqual([]);
    await routeMessage(host, { id: 3, method: "filter", params: { exclude_threads: [1] } });
    await routeMessage(host, { id: 4, method: "runs", params: { select: "a.json" } });
    expect(changed).toEqual(["filter", "run"]);
  });

  test("a refusal of the server is one sentence under the request's id", async () => {
    const { host } = fakeHost({ sendRequest: () => Promise.reject(Object.assign(new Error("the filter would exclude every thread: keep at least one"), { code: -32602 })) });
    expect(await routeMessage(host, { id: 5, method: "filter", params: { exclude_threads: [0, 1] } })).toEqual({ id: 5, error: "The filter would exclude every thread: keep at least one." });
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
