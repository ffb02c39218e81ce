import { expect } from "expect";
import { describe, test } from "node:test";
import type { OverviewEntry, RunsResult, ThreadsResult } from "../../src/protocol";
import { hotItems, percent, runItems, runLabel, shortName, statusView, threadItems, toggledFilter } from "../../src/views";

const RUNS: RunsResult = {
  active: "/ws/.threadradar/runs/20250102T000000Z-app.json",
  pinned: false,
  runs: [
    { path: "/ws/.threadradar/runs/20250101T000000Z-app.json", name: "20250101T000000Z-app.json", folder: "/ws", modified_unix_ms: 1735689600000, size: 2048, active: false },
    { path: "/ws/.threadradar/runs/20250102T000000Z-app.json", name: "20250102T000000Z-app.json", folder: "/ws", modified_unix_ms: 1735776000000, size: 3 * 1024 * 1024, active: true },
  ],
  exclude_threads: [],
  window: null,
  protocol: 2,
  summary: { name: "20250102T000000Z-app.json", samples: 1234, threads: 7, processes: 1, duration_s: 1.54, command: "python3 app.py", start_unix_ms: 0, python_version: "3.11.7" },
};

describe("status bar", () => {
  test("run name, samples and threads", () => {
    const v = statusView(RUNS, "running");
    expect(v.text).toBe("$(pulse) ThreadRadar: 20250102T000000Z-app · 1,234 samples · 7 threads");
    expect(v.tooltip).toContain("python3 app.py");
    expect(v.tooltip).toContain("1.5 s");
    expect(v.tooltip).toContain("Following the newest run.");
  });

  test("no run, a filter, a pinned run", () => {
    expect(statusView({ ...RUNS, active: null, summary: null }, "running").text).toBe("$(pulse) ThreadRadar: no run");
    const f = statusView({ ...RUNS, exclude_threads: [1, 2], pinned: true }, "running").tooltip;
    expect(f).toContain("Thread filter: 2 threads excluded");
    expect(f).toContain("Pinned");
  });

  test("while recording: the program, a click stops it; afterwards the run again, a click switches runs", () => {
    const rec = { command: ["python3", "samples/python/bug1_worker_manager/buggy.py"], output: "/ws/.threadradar/runs/x-buggy.json" };
    const v = statusView(RUNS, "running", rec);
    expect(v.text).toBe("$(record) ThreadRadar: recording buggy.py…");
    expect(v.command).toBe("threadradar.stopRecordingCmd");
    expect(v.tooltip).toContain("python3 samples/python/bug1_worker_manager/buggy.py");
    expect(v.tooltip).toContain("/ws/.threadradar/runs/x-buggy.json");
    expect(statusView(RUNS, "running", { command: ["python3", "-m", "pytest"], output: "" }).text).toBe("$(record) ThreadRadar: recording pytest…");
    expect(statusView(RUNS, "running", null)).toMatchObject({ text: "$(pulse) ThreadRadar: 20250102T000000Z-app · 1,234 samples · 7 threads", command: "threadradar.pickRun" });
    // A stopped server records nothing.
    expect(statusView(RUNS, "stopped", rec).text).toBe("$(pulse) ThreadRadar: stopped");
  });

  test("server states", () => {
    expect(statusView(undefined, "missing").text).toBe("$(pulse) ThreadRadar: no server");
    expect(statusView(RUNS, "stopped").text).toBe("$(pulse) ThreadRadar: stopped");
    expect(statusView(undefined, "starting").text).toBe("$(pulse) ThreadRadar");
  });
});

describe("tree items", () => {
  test("runs: newest first, the active one marked", () => {
    const items = runItems(RUNS);
    expect(items.map((i) => [i.label, i.active])).toEqual([
      ["20250102T000000Z-app", true],
      ["20250101T000000Z-app", false],
    ]);
    expect(items[0]?.description).toBe("active · 2025-01-02 00:00 · 3.0 MiB");
    expect(items[1]?.description).toBe("2025-01-01 00:00 · 2 KiB");
  });

  test("hot: by crt, top N, percent as description", () => {
    const e = (qualname: string, crt: number): OverviewEntry => ({
      key: `function:/a.py:1:${qualname}`, kind: "function", name: qualname, qualname, file: "/a.py", line: 1, file_kind: "user",
      crt, self_crt: 0, seconds: 1, samples: 1, threads: 2, thread_types: 1, clusters: [], glyph_svg: "",
    });
    const items = hotItems([e("a", 0.1), e("b", 0.372), e("c", 0.2)], 2);
    expect(items.map((i) => [i.label, i.description])).toEqual([
      ["b", "37.2 %"],
      ["c", "20.0 %"],
    ]);
    expect(items[0]?.tooltip).toContain("/a.py:1");
    // A module's row names its file (issue 32): two modules never read the same.
    const mods = hotItems([{ ...e("<module>", 0.3), file: "/src/app/buggy.py" }, { ...e("<module>", 0.2), file: "" }], 5);
    expect(mods.map((i) => i.label)).toEqual(["<module> of buggy.py", "<module> of an unrecorded file"]);
  });

  test("threads: included first by crt; excluded unchecked", () => {
    const r: ThreadsResult = {
      counted_samples: 10,
      types: [],
      threads: [
        { id: 0, name: "MainThread", type: "_MainThread", crt: 0.05, samples: 1, seconds: 0.1, excluded: false, is_main: true, file: "/a.py", line: 0, cluster: 0, colour: "low" },
        { id: 1, name: "worker-1", type: "Worker", crt: 0.5, samples: 5, seconds: 1, excluded: false, is_main: false, file: "/a.py", line: 12, cluster: 1, colour: "high" },
        { id: 2, name: "<img src=x>", type: "Worker", crt: 0, samples: 4, seconds: 1, excluded: true, is_main: false, file: null, line: 0, cluster: null, colour: null },
      ],
    };
    const items = threadItems(r);
    expect(items.map((i) => [i.label, i.description, i.included])).toEqual([
      ["worker-1", "Worker · 50.0 %", true],
      ["MainThread", "_MainThread · 5.0 %", true],
      ["<img src=x>", "Worker · excluded", false],
    ]);
  });

  test("toggling the filter", () => {
    expect(toggledFilter([3, 1], 2, false)).toEqual([1, 2, 3]);
    expect(toggledFilter([1, 2, 3], 2, true)).toEqual([1, 3]);
    expect(toggledFilter([], 5, true)).toEqual([]);
  });
});

describe("names", () => {
  test("short names of artifact keys", () => {
    expect(shortName("function:/ws/a.py:125:Worker.run")).toBe("Worker.run");
    expect(shortName("class:/ws/a.py:50:WorkerManager")).toBe("WorkerManager");
    expect(shortName("file:/ws/pkg/a.py")).toBe("a.py");
    expect(shortName("program")).toBe("Program");
    expect(shortName('function:<"><script>.py>:2:"><script>')).toBe('"><script>');
  });

  test("percent and run labels", () => {
    expect(percent(0.372)).toBe("37.2 %");
    expect(percent(null)).toBe("–");
    expect(runLabel("x.json")).toBe("x");
    expect(runLabel("x")).toBe("x");
  });
});
