import { expect } from "expect";
import { describe, test } from "node:test";
import { bundledServerPath, findServer, resolveServer } from "../../src/serverPath";

const exists = (...paths: string[]) => (p: string) => paths.includes(p);

describe("finding the server", () => {
  test("a bare name is looked up on PATH, first match wins", () => {
    expect(findServer("threadradar", { PATH: "/a:/b:/c" }, exists("/b/threadradar", "/c/threadradar"), "linux")).toEqual({ found: true, path: "/b/threadradar" });
  });

  test("an empty setting means threadradar", () => {
    expect(findServer("  ", { PATH: "/bin" }, exists("/bin/threadradar"), "linux")).toEqual({ found: true, path: "/bin/threadradar" });
  });

  test("a path is checked as it is, ~ is the home directory", () => {
    expect(findServer("/opt/tr/threadradar", { PATH: "/bin" }, exists("/opt/tr/threadradar"), "linux")).toEqual({ found: true, path: "/opt/tr/threadradar" });
    expect(findServer("~/bin/threadradar", { HOME: "/home/u" }, exists("/home/u/bin/threadradar"), "linux")).toEqual({ found: true, path: "/home/u/bin/threadradar" });
  });

  test("missing: one sentence with the install command and the setting", () => {
    const r = findServer("threadradar", { PATH: "/a:/b" }, exists(), "linux");
    expect(r.found).toBe(false);
    if (r.found) return;
    expect(r.message).toMatch(/^The ThreadRadar language server `threadradar` is not on PATH: /);
    expect(r.message).toContain("cargo install --path .");
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
    expect(resolveServer("", bundled, { PATH: "/bin" }, both, "linux")).toEqual({ found: true, path: bundled });
    expect(resolveServer("/opt/threadradar", bundled, { PATH: "/bin" }, both, "linux")).toEqual({ found: true, path: "/opt/threadradar" });
    expect(resolveServer("threadradar", bundled, { PATH: "/bin" }, both, "linux")).toEqual({ found: true, path: "/bin/threadradar" });
    // A universal .vsix (no server/ folder) falls back to PATH.
    expect(resolveServer("", bundled, { PATH: "/bin" }, exists("/bin/threadradar"), "linux")).toEqual({ found: true, path: "/bin/threadradar" });
    expect(resolveServer("", undefined, { PATH: "/bin" }, exists(), "linux").found).toBe(false);
  });
});
