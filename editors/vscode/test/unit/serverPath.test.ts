import { expect } from "expect";
import { describe, test } from "node:test";
import { bundledServerPath, configuredPython, findServer, projectInterpreters, resolveServer } from "../../src/serverPath";
import { doctorMarkdown, parseDoctor } from "../../src/doctor";

const exists = (...paths: string[]) => (p: string) => paths.includes(p);

describe("finding the server", () => {
  test("a bare name is looked up on PATH, first match wins", () => {
    expect(findServer("threadradar", { PATH: "/a:/b:/c" }, exists("/b/threadradar", "/c/threadradar"), "linux")).toEqual({ found: true, path: "/b/threadradar", source: "PATH" });
  });

  test("an empty setting means threadradar", () => {
    expect(findServer("  ", { PATH: "/bin" }, exists("/bin/threadradar"), "linux")).toMatchObject({ found: true, path: "/bin/threadradar" });
  });

  test("a path is checked as it is, ~ is the home directory", () => {
    expect(findServer("/opt/tr/threadradar", { PATH: "/bin" }, exists("/opt/tr/threadradar"), "linux")).toMatchObject({ found: true, path: "/opt/tr/threadradar" });
    expect(findServer("~/bin/threadradar", { HOME: "/home/u" }, exists("/home/u/bin/threadradar"), "linux")).toMatchObject({ found: true, path: "/home/u/bin/threadradar" });
  });

  test("missing: one sentence with the install command and the setting", () => {
    const r = findServer("threadradar", { PATH: "/a:/b" }, exists(), "linux");
    expect(r.found).toBe(false);
    if (r.found) return;
    expect(r.message).toMatch(/^The ThreadRadar language server `threadradar` is not on PATH: /);
    expect(r.message).toContain("cargo install --path .");
    expect(r.message).toContain("pip install threadradar");
    expect(r.message).toContain("threadradar.serverPath");
    expect(r.message.endsWith(".")).toBe(true);
    expect(r.message.split(". ").length).toBe(1);
    const p = findServer("/nope/threadradar", {}, exists(), "linux");
    expect(p.found ? "" : p.message).toMatch(/^The ThreadRadar language server was not found at \/nope\/threadradar: /);
  });

  test("Windows: PATHEXT extensions", () => {
    expect(findServer("threadradar", { PATH: "C:\\tools", PATHEXT: ".COM;.EXE" }, (p) => p.endsWith("threadradar.EXE"), "win32").found).toBe(true);
  });

  test("the binary the extension carries wins when the setting is empty; a set path wins over it", () => {
    const bundled = bundledServerPath("/ext/threadradar-0.1.0-linux-x64", "linux");
    expect(bundled).toBe("/ext/threadradar-0.1.0-linux-x64/server/threadradar");
    expect(bundledServerPath("C:\\ext", "win32").endsWith("threadradar.exe")).toBe(true);
    const both = exists(bundled, "/bin/threadradar", "/opt/threadradar");
    expect(resolveServer("", bundled, { PATH: "/bin" }, both, "linux")).toEqual({ found: true, path: bundled, source: "the binary this extension carries" });
    expect(resolveServer("/opt/threadradar", bundled, { PATH: "/bin" }, both, "linux")).toMatchObject({ found: true, path: "/opt/threadradar" });
    expect(resolveServer("threadradar", bundled, { PATH: "/bin" }, both, "linux")).toMatchObject({ found: true, path: "/bin/threadradar" });
    // A universal .vsix (no server/ folder) falls back to PATH.
    expect(resolveServer("", bundled, { PATH: "/bin" }, exists("/bin/threadradar"), "linux")).toMatchObject({ found: true, path: "/bin/threadradar" });
    expect(resolveServer("", undefined, { PATH: "/bin" }, exists(), "linux").found).toBe(false);
  });

  test("a universal .vsix: threadradar beside the project's interpreters (pip install), in order, before PATH", () => {
    const interpreters = [
      { python: "/p/env-a/bin/python", source: "[tool.threadradar] python in pyproject.toml" },
      { python: "/p/.venv/bin/python", source: ".venv/bin/python" },
    ];
    const all = exists("/p/env-a/bin/threadradar", "/p/.venv/bin/threadradar", "/usr/bin/threadradar");
    expect(resolveServer("", undefined, { PATH: "/usr/bin" }, all, "linux", interpreters)).toEqual({
      found: true,
      path: "/p/env-a/bin/threadradar",
      source: "the environment of [tool.threadradar] python in pyproject.toml (/p/env-a/bin/python)",
    });
    // The first environment without it is passed over; PATH comes last.
    expect(resolveServer("", undefined, { PATH: "/usr/bin" }, exists("/p/.venv/bin/threadradar", "/usr/bin/threadradar"), "linux", interpreters)).toMatchObject({ path: "/p/.venv/bin/threadradar" });
    expect(resolveServer("", undefined, { PATH: "/usr/bin" }, exists("/usr/bin/threadradar"), "linux", interpreters)).toEqual({ found: true, path: "/usr/bin/threadradar", source: "PATH" });
    // The bundled binary and a set serverPath come before any environment.
    const bundled = bundledServerPath("/ext", "linux");
    expect(resolveServer("", bundled, { PATH: "/usr/bin" }, exists(bundled, "/p/env-a/bin/threadradar"), "linux", interpreters)).toMatchObject({ path: bundled });
    expect(resolveServer("threadradar", undefined, { PATH: "/usr/bin" }, all, "linux", interpreters)).toMatchObject({ path: "/usr/bin/threadradar" });
    expect(resolveServer("", undefined, { PATH: "C:\\t" }, (p) => p === "C:\\py\\Scripts\\threadradar.exe", "win32", [{ python: "C:\\py\\Scripts\\python.exe", source: "s" }])).toMatchObject({ found: true });
  });

  test("the project's interpreters: [tool.threadradar] python, the selected one, .venv, venv, $VIRTUAL_ENV", () => {
    const files: Record<string, string> = { "/w/pyproject.toml": '[project]\nname = "x"\npython = "no/this/is/project"\n\n[tool.threadradar]\ninterval-ms = 2\npython = "envs/tr/bin/python"\n' };
    const read = (p: string) => files[p];
    expect(projectInterpreters("/w", "/sel/bin/python", { VIRTUAL_ENV: "/ve" }, read).map((i) => [i.python, i.source])).toEqual([
      ["/w/envs/tr/bin/python", "[tool.threadradar] python in pyproject.toml"],
      ["/sel/bin/python", "the interpreter selected in the Python extension"],
      ["/w/.venv/bin/python", ".venv/bin/python"],
      ["/w/venv/bin/python", "venv/bin/python"],
      ["/ve/bin/python", "$VIRTUAL_ENV"],
    ]);
    // threadradar.toml wins over pyproject.toml; nothing configured, nothing selected: the venvs.
    files["/w/threadradar.toml"] = "python = '/abs/bin/python3'\n";
    expect(projectInterpreters("/w", undefined, {}, read)[0]).toEqual({ python: "/abs/bin/python3", source: "[tool.threadradar] python in threadradar.toml" });
    expect(projectInterpreters(undefined, undefined, {}, read)).toEqual([]);
  });

  test("[tool.threadradar] python: only in that table, a name is left to PATH", () => {
    expect(configuredPython('[tool.other]\npython = "/x/bin/python"\n', true, "/w")).toBeUndefined();
    expect(configuredPython('[tool.threadradar]\npython = "python3.12"\n', true, "/w")).toBeUndefined();
    expect(configuredPython('[tool.threadradar]\n  python   =  ".venv/bin/python"  # comment\n[tool.x]\n', true, "/w")).toBe("/w/.venv/bin/python");
    expect(configuredPython('python = "/opt/py/bin/python"\n', false, "/w")).toBe("/opt/py/bin/python");
    expect(configuredPython('python = "/opt/py/bin/python"\n', true, "/w")).toBeUndefined();
  });
});

describe("the doctor's report", () => {
  const json = JSON.stringify({
    version: "0.1.0",
    pid: 42,
    ok: false,
    checks: [
      { id: "ptrace", status: "ok", summary: "kernel.yama.ptrace_scope = 0: fine" },
      { id: "pid", status: "error", summary: "cannot read the memory of process 42", next: "run threadradar as root" },
      { id: "sched", status: "warn", summary: "no scheduler events", next: "sudo sysctl kernel.perf_event_paranoid=-1" },
    ],
  });

  test("parsed and shown with each problem's next step", () => {
    const r = parseDoctor(json);
    if (typeof r === "string") throw new Error(r);
    expect(r.checks.map((c) => c.status)).toEqual(["ok", "error", "warn"]);
    const md = doctorMarkdown(r, "/v/bin/threadradar", "PATH");
    expect(md).toContain("`/v/bin/threadradar` (0.1.0), found in PATH.");
    expect(md).toContain("- ❌ **pid**: cannot read the memory of process 42\n  - *Next:* run threadradar as root");
    expect(md).toContain("- ⚠️ **sched**: no scheduler events");
    expect(md).toContain("1 problem(s) will stop a recording");
  });

  test("an older binary without doctor: one sentence", () => {
    expect(parseDoctor("error: unrecognized subcommand 'doctor'")).toMatch(/^`threadradar doctor --json` did not print JSON: update/);
    expect(parseDoctor('{"a": 1}')).toMatch(/update the threadradar binary$/);
  });
});
