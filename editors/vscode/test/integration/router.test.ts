// The panels' messages, routed by router.ts to the real `threadradar lsp` on a real run of the
// Bug 1 sample (6 workers + the main thread), and the server commands the extension's views use.

import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "expect";
import { after, before, describe, test } from "node:test";
import type { ChangedParams, HottestResult, OverviewResult, RunsResult, SetThreadFilterResult, ThreadsResult } from "../../src/protocol";
import { Requests, ServerCommands } from "../../src/protocol";
import { routeMessage } from "../../src/router";
import type { RouterHost } from "../../src/router";
import { BUGGY, bug1Workspace, startServer } from "../support/server";
import type { ServerSession, Workspace } from "../support/server";

let ws: Workspace;
let server: ServerSession;
const navigations: [string, number][] = [];
const changes: string[] = [];
let host: RouterHost;

before(async () => {
  ws = bug1Workspace();
  server = await startServer(ws.dir, { pollMs: 100 });
  host = {
    sendRequest: (m, p) => server.sendRequest(m, p),
    executeCommand: (c, a) => server.executeCommand(c, a),
    navigate: (file, line) => {
      navigations.push([file, line]);
    },
    changed: (what) => changes.push(what),
  };
});

after(async () => {
  await server?.stop();
  ws?.cleanup();
});

async function ask(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
  const a = await routeMessage(host, { id: 1, method, params });
  if (a === undefined) throw new Error("no answer");
  if ("error" in a) throw new Error(a.error);
  return a.result;
}

const workers = async (): Promise<ThreadsResult["threads"]> => ((await server.sendRequest(Requests.threads, {})) as ThreadsResult).threads.filter((t) => t.type === "Worker");

describe("panel requests through the router", () => {
  test("overview: the run's functions and classes, with the sample's declarations", async () => {
    const ov = (await ask("overview", { hide_stdlib: true })) as OverviewResult & { program: { threads: number } };
    const names = ov.functions.map((f) => f.qualname);
    expect(names).toContain("Worker.run");
    expect(names).toContain("WorkerManager.__init__");
    expect(ov.classes.map((c) => c.qualname)).toEqual(expect.arrayContaining(["Worker", "WorkerManager"]));
    expect(ov.program.threads).toBe(7);
    const init = ov.functions.find((f) => f.qualname === "WorkerManager.__init__");
    // Every worker ran the constructor in the buggy singleton (the bug the radar shows).
    expect(init?.threads).toBe(6);
    expect(init?.file).toBe(path.join(ws.dir, BUGGY));
    const text = fs.readFileSync(path.join(ws.dir, BUGGY), "utf8").split("\n");
    expect(text[(init?.line ?? 0) - 1]).toMatch(/^\s+def __init__\(self\)/);
    // The router's answer is the server's answer.
    const direct = (await server.sendRequest(Requests.overview, { hide_stdlib: true })) as OverviewResult;
    expect(ov.functions.map((f) => [f.key, f.crt])).toEqual(direct.functions.map((f) => [f.key, f.crt]));
  });

  test("detail and glyph of Worker.run: six threads, an SVG", async () => {
    const ov = (await ask("overview", {})) as OverviewResult;
    const key = ov.functions.find((f) => f.qualname === "Worker.run")?.key;
    expect(key).toMatch(/^function:.*buggy\.py:\d+:Worker\.run$/);
    const d = (await ask("detail", { artifact: key })) as { selection: { threads: number; thread_types: number }; histogram_svg: string };
    expect(d.selection.threads).toBe(6);
    expect(d.selection.thread_types).toBe(1);
    expect(d.histogram_svg.startsWith("<svg")).toBe(true);
    const g = (await ask("glyph", { artifact: key, size: 40, theme: "dark" })) as { svg: string };
    expect(g.svg).toMatch(/^<svg[^>]* height="40"/);
  });

  test("threads: seven, six of type Worker", async () => {
    const t = (await ask("threads", {})) as ThreadsResult;
    expect(t.threads).toHaveLength(7);
    expect(t.threads.filter((x) => x.type === "Worker")).toHaveLength(6);
  });

  test("an unknown artifact is an error sentence under the request's id", async () => {
    const a = await routeMessage(host, { id: 42, method: "detail", params: { artifact: "function:/nope.py:1:nope" } });
    expect(a).toEqual({ id: 42, error: expect.stringMatching(/^No artifact function:\/nope\.py:1:nope in this run\b[^\n]*\.$/) });
  });

  test("navigate calls the host with the file and line and answers nothing", async () => {
    expect(await routeMessage(host, { method: "navigate", params: { file: path.join(ws.dir, BUGGY), line: 72 } })).toBeUndefined();
    expect(navigations.at(-1)).toEqual([path.join(ws.dir, BUGGY), 72]);
  });
});

describe("the thread filter through the router", () => {
  test("apply: the server's filter, every figure, and threadRadar/changed follow", async () => {
    expect(await ask("filter", {})).toEqual({ exclude_threads: [], window: null });
    const hot = (await workers()).sort((a, b) => (b.crt ?? 0) - (a.crt ?? 0))[0];
    expect(hot).toBeDefined();
    const id = hot?.id ?? -1;
    const before = (await ask("overview", {})) as OverviewResult & { program: { threads: number } };
    const generationBefore = server.notifications.filter((n) => n.method === "threadRadar/changed").length;

    expect(await ask("filter", { exclude_threads: [id] })).toEqual({ exclude_threads: [id], window: null });
    expect(changes.at(-1)).toBe("filter");
    expect(((await server.sendRequest(Requests.runs, {})) as RunsResult).exclude_threads).toEqual([id]);
    expect(await ask("filter", {})).toEqual({ exclude_threads: [id], window: null });
    // The server fills in the global filter where the page leaves it out.
    const after = (await ask("overview", {})) as OverviewResult & { program: { threads: number } };
    expect(after.program.threads).toBe(6);
    const run = (o: OverviewResult) => o.functions.find((f) => f.qualname === "Worker.run");
    expect(run(after)?.threads).toBe(5);
    expect(run(after)?.crt).not.toBe(run(before)?.crt);
    const changed = (await server.waitForNotification("threadRadar/changed", (p) => (p as ChangedParams).reason === "filter")) as ChangedParams;
    expect(changed.exclude_threads).toEqual([id]);
    expect(server.notifications.filter((n) => n.method === "threadRadar/changed").length).toBeGreaterThan(generationBefore);

    expect(await ask("filter", { exclude_threads: [] })).toEqual({ exclude_threads: [], window: null });
    expect(((await ask("overview", {})) as { program: { threads: number } }).program.threads).toBe(7);
  });

  test("an unknown thread id is refused by the server, as a sentence", async () => {
    const a = await routeMessage(host, { id: 9, method: "filter", params: { exclude_threads: [999] } });
    expect(a).toEqual({ id: 9, error: "No thread with id 999 in this run (it has 7)." });
    expect(await ask("filter", {})).toEqual({ exclude_threads: [], window: null });
  });

  test("excluding every thread is refused", async () => {
    const a = await routeMessage(host, { id: 10, method: "filter", params: { exclude_threads: [0, 1, 2, 3, 4, 5, 6] } });
    expect(a).toMatchObject({ id: 10, error: expect.any(String) });
    expect(await ask("filter", {})).toEqual({ exclude_threads: [], window: null });
  });

  test("setThreadFilter takes thread names too (the views' quick pick uses ids)", async () => {
    const name = (await workers())[0]?.name ?? "";
    const r = (await server.executeCommand(ServerCommands.setThreadFilter, { exclude: [name] })) as SetThreadFilterResult;
    expect(r.excluded.map((t) => t.name)).toEqual([name]);
    await server.executeCommand(ServerCommands.clearThreadFilter);
  });
});

describe("runs", () => {
  test("runs: the protocol's one shape, with the active run; the summary for the status bar", async () => {
    const listed = (await ask("runs", {})) as RunsResult;
    expect([listed.active, listed.runs.map((x) => [x.path, x.active])]).toEqual([ws.run, [[ws.run, true]]]);
    const r = (await server.sendRequest(Requests.runs, {})) as RunsResult;
    expect(r.summary).toMatchObject({ name: path.basename(ws.run), threads: 7, processes: 1 });
    expect(r.summary?.samples).toBeGreaterThan(100);
    expect(r.summary?.command).toContain("buggy.py");
  });

  test("a new run is followed; select pins a run; deleteRun removes a run and the newest becomes active", async () => {
    // A second, newer run (a copy: the run files are plain JSON).
    const newer = path.join(path.dirname(ws.run), "20250102T000000Z-copy.json");
    fs.copyFileSync(ws.run, newer);
    await server.waitForNotification("threadRadar/changed", (p) => (p as ChangedParams).run === newer);
    expect(((await ask("runs", {})) as RunsResult).active).toBe(newer);

    const selected = (await ask("runs", { select: ws.run })) as RunsResult;
    expect(selected.active).toBe(ws.run);
    expect(selected.runs.filter((r) => r.active)).toHaveLength(1);
    expect(changes.at(-1)).toBe("run");
    expect(((await server.sendRequest(Requests.runs, {})) as RunsResult).pinned).toBe(true);

    const afterDelete = (await server.executeCommand(ServerCommands.deleteRun, { run: newer })) as RunsResult;
    expect(fs.existsSync(newer)).toBe(false);
    expect(afterDelete.runs.map((r) => r.path)).toEqual([ws.run]);
    expect(afterDelete.active).toBe(ws.run);

    await expect(server.executeCommand(ServerCommands.deleteRun, { run: "20990101T000000Z-none.json" })).rejects.toMatchObject({ code: -32602 });
    expect(fs.existsSync(ws.run)).toBe(true);
    await server.executeCommand(ServerCommands.selectRun, "newest");
  });

  test("an unknown run is an error sentence", async () => {
    const a = await routeMessage(host, { id: 5, method: "runs", params: { select: "/nowhere/x.json" } });
    expect(a).toMatchObject({ id: 5, error: expect.stringMatching(/\.$/) });
  });
});

describe("commands the extension adds on top", () => {
  test("goToHottest: the hottest function of the user's code, opened with window/showDocument", async () => {
    const ov = (await server.sendRequest(Requests.overview, { hide_stdlib: true, hide_third_party: true })) as OverviewResult;
    const own = ov.functions.filter((f) => f.name !== "<module>");
    const best = own[0]?.crt ?? -1;
    const shown = server.shownDocuments.length;
    const r = (await server.executeCommand(ServerCommands.goToHottest, { kind: "function" })) as HottestResult;
    expect(r.crt).toBeCloseTo(best, 9);
    // Ties (a method and the function it calls may have the same share) may go either way.
    expect(own.filter((f) => Math.abs(f.crt - best) < 1e-9).map((f) => f.qualname)).toContain(r.qualname);
    expect(r.uri.endsWith("/buggy.py")).toBe(true);
    expect(server.shownDocuments.length).toBe(shown + 1);
    expect(server.shownDocuments.at(-1)).toMatchObject({ uri: r.uri });
    const c = (await server.executeCommand(ServerCommands.goToHottest, { kind: "class" })) as HottestResult;
    expect(["Worker", "WorkerManager"]).toContain(c.qualname);
  });

  test("openDetail sends threadRadar/openPanel (panels: true)", async () => {
    const ov = (await server.sendRequest(Requests.overview, {})) as OverviewResult;
    const key = ov.functions[0]?.key;
    await server.executeCommand(ServerCommands.openDetail, { artifact: key });
    expect(await server.waitForNotification("threadRadar/openPanel", (p) => (p as { artifact?: string }).artifact === key)).toEqual({ panel: "detail", artifact: key });
  });
});
