import { expect } from "expect";
import { describe, test } from "node:test";
import { durationWords, folderOf, formatCommand, outcomeWords, programLabel, pythonFor, quoteArg, recordChoices, recordCwd, RUNS_WORKSPACE_CODE, runNodeView, selectedInterpreter, shortCommand, testSettings } from "../../src/record";

describe("the custom command line", () => {
  // That the server's splitter reads it back: test/integration/record.test.ts.
  test("formatCommand quotes what needs it", () => {
    expect(quoteArg("app.py")).toBe("app.py");
    expect(quoteArg("--n=3")).toBe("--n=3");
    expect(quoteArg("")).toBe("''");
    expect(quoteArg("my app.py")).toBe("'my app.py'");
    expect(quoteArg("it's")).toBe("'it'\\''s'");
    expect(formatCommand(["python3", "-m", "pytest"])).toBe("python3 -m pytest");
    expect(formatCommand(["python3", "my app.py", ""])).toBe("python3 'my app.py' ''");
  });
});

describe("the program's name in the status bar", () => {
  test("the module of -m, the script, else the program", () => {
    expect(programLabel(["python3", "-m", "pytest", "-x"])).toBe("pytest");
    expect(programLabel(["python3", "samples/python/bug1_worker_manager/buggy.py", "--workers", "6"])).toBe("buggy.py");
    expect(programLabel(["python3", "-u", "/abs/app.py"])).toBe("app.py");
    expect(programLabel(["python3", "-c", "print(1)"])).toBe("python -c");
    expect(programLabel(["/usr/bin/pytest", "-x"])).toBe("pytest");
    expect(programLabel([])).toBe("the program");
  });
});

describe("Record a Run… choices", () => {
  const ws = "/home/u/proj";
  const file = "/home/u/proj/samples/python/bug1_worker_manager/buggy.py";

  test("the test suite, the current file (relative to its folder, run there) and a custom command", () => {
    const c = recordChoices({ recordCommand: ["python3", "-m", "pytest"], activeFile: file, folders: ["/elsewhere", ws] });
    expect(c.map((x) => x.kind)).toEqual(["tests", "file", "custom"]);
    expect(c[0]).toMatchObject({ label: "$(beaker) Test suite (python3 -m pytest)", params: { command: ["python3", "-m", "pytest"], cwd: ws } });
    expect(c[1]).toMatchObject({
      label: "$(file-code) Current file (python3 samples/python/bug1_worker_manager/buggy.py)",
      params: { command: ["python3", "samples/python/bug1_worker_manager/buggy.py"], cwd: ws },
    });
    expect(c[2]).toMatchObject({ label: "$(terminal) Custom command…", params: { cwd: ws } });
    expect(c[2]?.params.command).toBeUndefined();
  });

  test("without a Python editor there is no current-file choice; the test suite runs in the first folder", () => {
    const c = recordChoices({ recordCommand: ["pytest", "-x", "tests dir"], folders: ["/a", "/b"] });
    expect(c.map((x) => x.kind)).toEqual(["tests", "custom"]);
    expect(c[0]?.label).toBe("$(beaker) Test suite (pytest -x 'tests dir')");
    expect(c[0]?.params).toEqual({ command: ["pytest", "-x", "tests dir"], cwd: "/a" });
  });

  test("no folder: the cwd is left to the server (which then asks for a folder); a file outside folders runs in its directory", () => {
    expect(recordChoices({ recordCommand: ["python3", "-m", "pytest"], folders: [] })[0]?.params).toEqual({ command: ["python3", "-m", "pytest"] });
    const c = recordChoices({ recordCommand: ["python3", "-m", "pytest"], activeFile: "/tmp/x/my app.py", folders: [] });
    expect(c[1]).toMatchObject({ label: "$(file-code) Current file (python3 '/tmp/x/my app.py')", params: { command: ["python3", "/tmp/x/my app.py"], cwd: "/tmp/x" } });
  });

  test("the interpreter of recordCommand runs the current file when it is a Python", () => {
    expect(pythonFor([".venv/bin/python", "-m", "pytest"])).toBe(".venv/bin/python");
    expect(pythonFor(["python3.12", "-m", "pytest"])).toBe("python3.12");
    expect(pythonFor(["pytest"])).toBe("python3");
    expect(pythonFor(["/usr/bin/pythonista"])).toBe("python3");
    const c = recordChoices({ recordCommand: [".venv/bin/python", "-m", "pytest"], activeFile: `${ws}/app.py`, folders: [ws] });
    expect(c[1]?.params.command).toEqual([".venv/bin/python", "app.py"]);
  });

  test("the innermost workspace folder holds a file; a folder is not inside itself", () => {
    expect(folderOf("/a/b/c.py", ["/a", "/a/b"])).toBe("/a/b");
    expect(folderOf("/ab/c.py", ["/a"])).toBeUndefined();
    expect(folderOf("/a", ["/a"])).toBeUndefined();
    expect(recordCwd({ recordCommand: [], activeFile: "/z/c.py", folders: ["/a"] })).toBe("/a");
  });
});

describe("profiling tests (issue 19)", () => {
  test("the Python extension's active environment is handed to the server", () => {
    const seen: unknown[] = [];
    const api = { environments: { getActiveEnvironmentPath: (r?: unknown) => (seen.push(r), { path: "/w/.venv/bin/python" }) } };
    expect(selectedInterpreter(api, "file:///w")).toBe("/w/.venv/bin/python");
    expect(seen).toEqual(["file:///w"]);
    // No extension, an older API, a bare `python` default, a throwing API: nothing selected.
    expect(selectedInterpreter(undefined)).toBeUndefined();
    expect(selectedInterpreter({})).toBeUndefined();
    expect(selectedInterpreter({ environments: { getActiveEnvironmentPath: () => ({ path: "python" }) } })).toBeUndefined();
    expect(selectedInterpreter({ environments: { getActiveEnvironmentPath: () => { throw new Error("not ready"); } } })).toBeUndefined();
  });

  test("an untrusted workspace gets no lenses; the interpreter goes as `python`", () => {
    expect(testSettings(true, "/v/bin/python")).toEqual({ python: "/v/bin/python", testLens: true });
    expect(testSettings(false, undefined)).toEqual({ python: null, testLens: false });
    expect(RUNS_WORKSPACE_CODE).toContain("threadradar.profileTest");
  });

  test("outcomes in words", () => {
    expect(outcomeWords({ passed: 5, failed: 1, errors: 0, skipped: 0 })).toBe("5 passed, 1 failed");
    expect(outcomeWords({ passed: 0, failed: 0, errors: 0, skipped: 0 })).toBe("no tests ran");
    expect(outcomeWords(null)).toBe("outcome unknown");
  });
});

describe("the run history in the runs view (issue 19)", () => {
  test("a test run shows its test, outcome, label and pin; compare with previous only when there is one", () => {
    const base = { label: "20261123T150102Z-pytest", description: "active · 2 min ago", active: true };
    expect(runNodeView(base)).toEqual({ label: base.label, description: base.description, contextValue: "threadradar.run.active", icon: { id: "circle-filled", colour: "", words: "active run" } });
    const h = { test: "tests/t.py::test_a", outcome: { passed: 0, failed: 1, errors: 0, skipped: 0 }, label: "before", pinned: true, previous: "/r/old.json" };
    expect(runNodeView({ ...base, active: false, history: h })).toEqual({
      label: "before — test_a",
      description: "1 failed · pinned · active · 2 min ago",
      contextValue: "threadradar.run.pinned.previous",
      icon: { id: "error", colour: "testing.iconFailed", words: "failed" },
    });
    // The outcome's icon, not the active-run mark (issue 32): a failed active run is no ✓.
    expect(runNodeView({ ...base, history: { test: "tests/t.py::TestA::test_b", outcome: { passed: 3, failed: 1, errors: 0, skipped: 0 } } })).toMatchObject({ label: "TestA::test_b", icon: { id: "error" } });
    expect(runNodeView({ ...base, history: { test: "t.py::test_a", outcome: { passed: 1, failed: 0, errors: 1, skipped: 0 } } }).icon.id).toBe("warning");
    expect(runNodeView({ ...base, active: false, history: { test: "t.py::test_a", outcome: { passed: 2, failed: 0, errors: 0, skipped: 1 } } }).icon.id).toBe("pass");
    expect(runNodeView({ ...base, history: { test: "t.py::test_a", outcome: { passed: 0, failed: 0, errors: 0, skipped: 2 } } }).icon.id).toBe("circle-slash");
    expect(runNodeView({ ...base, active: false }).icon.id).toBe("circle-large-outline");
    expect(runNodeView({ ...base, history: { test: "t.py", outcome: null } }).description).toBe("outcome unknown · active · 2 min ago");
  });

  test("every run shows its duration and threads; a run that is no test shows its program", () => {
    const base = { label: "20261123T150102Z-buggy", description: "2026-11-23 15:01 · 3.0 MiB", active: false };
    const test = { test: "tests/t.py::test_a", outcome: { passed: 1, failed: 0, errors: 0, skipped: 0 }, command: "python3 -m pytest tests/t.py::test_a", duration_s: 2.34, threads: 7 };
    expect(runNodeView({ ...base, history: test }).description).toBe("1 passed · 2.3 s · 7 threads · 2026-11-23 15:01 · 3.0 MiB");
    const program = { command: "/usr/bin/python3 /home/me/samples/python/bug1/buggy.py --workers 6", duration_s: 65.4, threads: 1, pinned: true };
    expect(runNodeView({ ...base, history: program })).toEqual({
      label: "20261123T150102Z-buggy",
      description: "python3 buggy.py --workers 6 · pinned · 1 min 5 s · 1 thread · 2026-11-23 15:01 · 3.0 MiB",
      contextValue: "threadradar.run.pinned",
      icon: { id: "circle-large-outline", colour: "", words: "" },
    });
    // Labelled: the label, then the run; a long command is cut.
    const long = { command: `python3 ${"x".repeat(100)}.py`, duration_s: 0.5, threads: 3, label: "baseline" };
    const v = runNodeView({ ...base, history: long });
    expect(v.label).toBe("baseline — 20261123T150102Z-buggy");
    expect(v.description.startsWith(`python3 ${"x".repeat(51)}… · 0.5 s · 3 threads · `)).toBe(true);
    // Label, pin and delete are offered on every run (the context value starts with threadradar.run).
    expect(v.contextValue).toBe("threadradar.run");
    expect(durationWords(undefined)).toBe("");
    expect(durationWords(Number.NaN)).toBe("");
    expect(shortCommand("  a   b ")).toBe("a b");
    expect(shortCommand("python3 -m pytest tests/t.py::test_a out/")).toBe("python3 -m pytest t.py::test_a out/");
  });
});
