import { expect } from "expect";
import { describe, test } from "node:test";
import { compareHeader, compareItems, escapeMarkdown, radarText, runName, runPicks, changeText, compareParams } from "../../src/compare";
import type { CompareArtifact, CompareFigures, CompareResult, CompareRun, RunsResult } from "../../src/protocol";

const run = (name: string, threads: number, duration: number): CompareRun => ({
  path: `/ws/.threadradar/runs/${name}.json`,
  command: ["python3", `bug1_worker_manager/${name.split("-")[1] ?? "x"}.py`],
  duration_s: duration,
  sample_count: 500,
  thread_count: threads,
  states: "computing",
  time_source: "kernel",
  seconds: duration * 0.9,
  counted_samples: 480,
  program: { threads, thread_types: 2, clusters: 2, glyph: [{ colour: "low", threads: 6, avg: "low", sum: "low", text: "▂▂×6" }, { colour: "high", threads: 5, avg: "low", sum: "high", text: "▂█×5" }] },
});

const figures = (crt: number, seconds: number, threads: number, glyph: CompareFigures["glyph"]): CompareFigures => ({
  crt, self_crt: 0, seconds, samples: 10, threads, thread_types: 1, clusters: glyph.length, glyph,
});

const BUGGY = "/ws/bug1_worker_manager/buggy.py";
const FIXED = "/ws/bug1_worker_manager/fixed.py";

// The example of docs/compare.md (10 workers), shuffled.
const artifacts: CompareArtifact[] = [
  {
    kind: "function", qualname: "WorkerManager.interrupt", file_base: null, file_new: FIXED, line_base: null, line_new: 94, file_kind: "user",
    base: null, new: figures(0.011, 0.01, 1, [{ colour: "low", threads: 1, avg: "high", sum: "high", text: "██×1" }]),
    crt_delta: 0.011, seconds_delta: 0.01, threads_delta: 1, status: "added", crt_delta_text: "+1.1pp", trend: "increase", statements: [],
  },
  {
    kind: "function", qualname: "WorkerManager.__init__", file_base: BUGGY, file_new: FIXED, line_base: 72, line_new: 68, file_kind: "user",
    base: figures(0.2852, 0.99, 10, [{ colour: "low", threads: 10, avg: "low", sum: "high", text: "▂█×10" }]),
    new: figures(0.4091, 0.1, 1, [{ colour: "low", threads: 1, avg: "high", sum: "high", text: "██×1" }]),
    crt_delta: 0.1239, seconds_delta: -0.89, threads_delta: -9, status: "changed", crt_delta_text: "+12.4pp", trend: "increase", statements: [],
  },
  {
    kind: "function", qualname: "Worker.run", file_base: BUGGY, file_new: FIXED, line_base: 125, line_new: 121, file_kind: "user",
    base: figures(0.979, 4.02, 10, [{ colour: "low", threads: 5, avg: "low", sum: "low", text: "▂▂×5" }, { colour: "high", threads: 5, avg: "low", sum: "high", text: "▂█×5" }]),
    new: figures(0.841, 0.2, 10, [{ colour: "low", threads: 9, avg: "low", sum: "medium", text: "▂▅×9" }, { colour: "high", threads: 1, avg: "medium", sum: "medium", text: "▅▅×1" }]),
    crt_delta: -0.138, seconds_delta: -3.82, threads_delta: 0, status: "changed", crt_delta_text: "-13.8pp", trend: "decrease", statements: [],
  },
  {
    kind: "function", qualname: "WorkerManager._build_table", file_base: BUGGY, file_new: FIXED, line_base: 87, line_new: 83, file_kind: "user",
    base: figures(0.2852, 0.99, 10, [{ colour: "low", threads: 10, avg: "low", sum: "high", text: "▂█×10" }]),
    new: figures(0.4091, 0.1, 1, [{ colour: "low", threads: 1, avg: "high", sum: "high", text: "██×1" }]),
    crt_delta: 0.1239, seconds_delta: -0.89, threads_delta: -9, status: "changed", crt_delta_text: "+12.4pp", trend: "increase", statements: [],
  },
  {
    kind: "function", qualname: "old_helper", file_base: BUGGY, file_new: null, line_base: 40, line_new: null, file_kind: "user",
    base: figures(0.02, 0.05, 1, [{ colour: "low", threads: 1, avg: "low", sum: "low", text: "▂▂×1" }]), new: null,
    crt_delta: -0.02, seconds_delta: -0.05, threads_delta: -1, status: "removed", crt_delta_text: "-2.0pp", trend: "decrease", statements: [],
  },
  {
    kind: "function", qualname: "main", file_base: BUGGY, file_new: FIXED, line_base: 194, line_new: 190, file_kind: "user",
    base: figures(0.002, 0.01, 1, [{ colour: "low", threads: 1, avg: "high", sum: "high", text: "██×1" }]),
    new: figures(0.0021, 0.0, 1, [{ colour: "low", threads: 1, avg: "high", sum: "high", text: "██×1" }]),
    crt_delta: 0.0001, seconds_delta: -0.01, threads_delta: 0, status: "changed", crt_delta_text: "0.0pp", trend: "same", statements: [],
  },
  {
    kind: "function", qualname: "<module>", file_base: "<string>", file_new: "<string>", line_base: 0, line_new: 0, file_kind: "user",
    base: figures(0.011, 0.02, 1, []), new: figures(0.045, 0.01, 1, []),
    crt_delta: 0.034, seconds_delta: -0.01, threads_delta: 0, status: "changed", crt_delta_text: "+3.4pp", trend: "increase", statements: [],
  },
];

const RESULT: CompareResult = {
  level: "function",
  base: run("20261121T072748Z-buggy", 11, 5.3),
  new: run("20261121T072750Z-fixed", 11, 0.3),
  artifacts,
  listed: 12,
  only_in_base: 1,
  only_in_new: 1,
  changes: [],
  suppressed: 0,
  suppressed_note: null,
  significance: null,
};

describe("comparison items", () => {
  const items = compareItems(RESULT);
  const item = (q: string) => {
    const i = items.find((x) => x.label === q);
    if (i === undefined) throw new Error(`no ${q}`);
    return i;
  };

  test("sorted by |Δcrt|, then by name: the order of threadradar compare", () => {
    expect(items.map((i) => i.label)).toEqual([
      "Worker.run",
      "WorkerManager.__init__",
      "WorkerManager._build_table",
      "<module>",
      "old_helper",
      "WorkerManager.interrupt",
      "main",
    ]);
  });

  test("description: Δcrt in percentage points and threads before → after; added and removed say so", () => {
    expect(item("WorkerManager.__init__").description).toBe("+12.4pp · 10 → 1 threads");
    expect(item("Worker.run").description).toBe("-13.8pp · 10 → 10 threads");
    expect(item("main").description).toBe("0.0pp · 1 → 1 thread");
    expect(item("WorkerManager.interrupt").description).toBe("added");
    expect(item("old_helper").description).toBe("removed");
  });

  test("icons by the server's trend: red up for more of the runtime, green down for less", () => {
    expect(item("WorkerManager.__init__")).toMatchObject({ icon: "arrow-up", colour: "charts.red" });
    expect(item("Worker.run")).toMatchObject({ icon: "arrow-down", colour: "charts.green" });
    expect(item("main")).toMatchObject({ icon: "dash", colour: undefined });
    expect(item("WorkerManager.interrupt")).toMatchObject({ icon: "diff-added", colour: "charts.red" });
    expect(item("old_helper")).toMatchObject({ icon: "diff-removed", colour: "charts.green" });
  });

  test("a click opens the new file at the declaration, the base file for a removed one, nothing without a file", () => {
    expect(item("WorkerManager.__init__").target).toEqual({ file: FIXED, line: 68 });
    expect(item("WorkerManager.interrupt").target).toEqual({ file: FIXED, line: 94 });
    expect(item("old_helper").target).toEqual({ file: BUGGY, line: 40 });
    expect(item("<module>").target).toBeNull();
  });

  test("the tooltip: crt, seconds, threads and radar before → after, and both files", () => {
    const t = item("WorkerManager.__init__").tooltip;
    expect(t).toContain("**WorkerManager\\.\\_\\_init\\_\\_** (function)");
    expect(t).toContain("- crt: 28.5 % → 40.9 % (+12.4pp)");
    expect(t).toContain("- seconds: 0.99 s → 0.10 s");
    expect(t).toContain("- threads: 10 → 1");
    expect(t).toContain("- radar: ▂█×10 → ██×1");
    expect(t).toContain(`- base: ${escapeMarkdown(`${BUGGY}:72`)}`);
    expect(t).toContain(`- new: ${escapeMarkdown(`${FIXED}:68`)}`);
    const added = item("WorkerManager.interrupt").tooltip;
    expect(added).toContain("**added** (only in the new run)");
    expect(added).toContain("- crt: — → 1.1 % (+1.1pp)");
    expect(added).toContain("- base: —");
  });

  test("names listed more than once get their file's name", () => {
    const twice: CompareArtifact = { ...(artifacts[6] as CompareArtifact), file_base: BUGGY, file_new: FIXED, line_base: 0, line_new: 0 };
    const labels = compareItems({ ...RESULT, artifacts: [...artifacts, twice] }).map((i) => i.label);
    expect(labels).toContain("<module> (<string>)");
    expect(labels).toContain("<module> (fixed.py)");
    expect(labels).toContain("WorkerManager.__init__");
    expect(item("<module>").qualname).toBe("<module>");
  });

  test("ids are unique and stable", () => {
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
    expect(compareItems(RESULT).map((i) => i.id)).toEqual(items.map((i) => i.id));
  });

  test("names from the program cannot inject Markdown, HTML or command links into the tooltip", () => {
    const hostile: CompareArtifact = {
      ...(artifacts[1] as CompareArtifact),
      qualname: "[click](command:workbench.action.quit) <img src=x onerror=alert(1)> *x*\n# h",
      file_new: "/ws/`a`/b.py",
    };
    const [i] = compareItems({ ...RESULT, artifacts: [hostile] });
    expect(i?.label).toBe(hostile.qualname);
    const t = i?.tooltip ?? "";
    expect(t).toContain("\\[click\\]\\(command\\:workbench\\.action\\.quit\\) \\<img src\\=x onerror\\=alert\\(1\\)\\> \\*x\\* \\# h");
    expect(t).not.toMatch(/(^|[^\\])[[<]/);
    expect(t).toContain("- new: \\/ws\\/\\`a\\`\\/b\\.py\\:68");
  });
});

describe("run sets", () => {
  test("several runs on a side become a set; one stays a run", () => {
    expect(compareParams({ base: ["a.json", "b.json"], new: "c.json" }, "function")).toEqual({ level: "function", hide_stdlib: true, top: 200, base_runs: ["a.json", "b.json"], new: "c.json" });
    expect(compareParams({ base: ["a.json"], new: ["c.json", "d.json"] }, "class")).toEqual({ level: "class", hide_stdlib: true, top: 200, base: "a.json", new_runs: ["c.json", "d.json"] });
  });
  test("a change says its evidence, verdict and p; without sets only the statement and its evidence", () => {
    const c: CompareResult["changes"][number] = {
      artifact: "f", kind: "function", file: "/p/a.py", line: 3, file_kind: "user", object: null, cluster: null,
      figure: "threads", status: "changed", before: 4, after: 1,
      evidence: { source: "sampled", unit: "samples", base: 80, new: 30, threads_base: 4, threads_new: 1 },
      effect: 0.75, score: 0.3, statement: "f: run by 4 threads → 1", evidence_text: "sampled: 80 → 30 samples in 4 → 1 threads",
      significant: null, p: null,
    };
    const words = "f: run by 4 threads → 1 [sampled: 80 → 30 samples in 4 → 1 threads]";
    expect(changeText(c)).toBe(words);
    expect(changeText({ ...c, significant: false, p: 0.41 })).toBe(`${words} (within noise, p = 0.410)`);
    expect(changeText({ ...c, significant: true, p: 0 })).toBe(`${words} (significant, p = 0.0e+0)`);
  });
  test("the changes the server left out are counted in the header, in its words", () => {
    const note = "3 changes not listed: they rest on fewer than 10 samples or events";
    expect(compareHeader({ ...RESULT, suppressed: 3, suppressed_note: note }).tooltip).toContain(escapeMarkdown(note));
  });
});

describe("comparison header and helpers", () => {
  test("the header names both runs and counts what is listed", () => {
    const h = compareHeader(RESULT);
    expect(h.label).toBe("20261121T072748Z-buggy → 20261121T072750Z-fixed");
    expect(h.description).toBe("7 of 12 functions · 1 added · 1 removed");
    expect(h.tooltip).toContain("**Base** 20261121T072748Z\\-buggy: python3 bug1\\_worker\\_manager\\/buggy\\.py — 5.3 s, 11 threads");
    expect(h.tooltip).toContain("radar ▂▂×6 ▂█×5");
    expect(compareHeader({ ...RESULT, level: "class", artifacts: artifacts.slice(0, 1), listed: 1 }).description).toBe("1 class · 1 added · 1 removed");
    expect(compareHeader({ ...RESULT, new: RESULT.base }).tooltip).toContain("Both sides are the same run.");
  });

  test("radars and run names", () => {
    expect(radarText([{ colour: "low", threads: 9, avg: "low", sum: "medium", text: "▂▅×9" }, { colour: "high", threads: 1, avg: "medium", sum: "medium", text: "▅▅×1" }])).toBe("▂▅×9 ▅▅×1");
    expect(radarText([])).toBe("—");
    expect(runName("/ws/.threadradar/runs/20250101T000000Z-bug1.json")).toBe("20250101T000000Z-bug1");
    expect(runName("./x")).toBe("x");
  });

  test("run picks: newest first, the active one marked, the base left out of the second pick", () => {
    const runs: RunsResult = {
      active: "/ws/r/2.json",
      pinned: false,
      exclude_threads: [],
      window: null,
      protocol: 2,
      summary: null,
      runs: [
        { path: "/ws/r/1.json", name: "1.json", folder: "/ws", modified_unix_ms: 1, size: 1, active: false },
        { path: "/ws/r/2.json", name: "2.json", folder: "/ws", modified_unix_ms: 2, size: 1, active: true },
        { path: "/ws/r/3.json", name: "3.json", folder: "/ws", modified_unix_ms: 3, size: 1, active: false },
      ],
    };
    expect(runPicks(runs).map((p) => [p.label, p.description])).toEqual([
      ["3", ""],
      ["2", "active"],
      ["1", ""],
    ]);
    expect(runPicks(runs, "/ws/r/2.json").map((p) => p.path)).toEqual(["/ws/r/3.json", "/ws/r/1.json"]);
  });
});
