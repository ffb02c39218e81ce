import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "expect";
import { describe, test } from "node:test";
import { EXTENSION_SETTINGS, SERVER_SETTINGS, extensionSettings, needsRestart, recordCommand, serverSettings } from "../../src/settings";

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "../../package.json"), "utf8")) as {
  contributes: { configuration: { properties: Record<string, { type: string; default: unknown; enum?: string[]; minimum?: number; maximum?: number; items?: { type: string } }> } };
};
const props = manifest.contributes.configuration.properties;
const reader = (values: Record<string, unknown>) => ({ get: (k: string) => values[k] });

describe("server settings", () => {
  test("defaults: the server's documented defaults, with panels and change notifications always on", () => {
    expect(serverSettings(reader({}), 1)).toEqual({
      // Glyph and hints: one annotation line per declaration (issue 32).
      annotations: "hints",
      inlayHints: true,
      hintSeconds: true,
      hintThreads: true,
      hintClusters: true,
      codeLens: true,
      timelineLens: true,
      fileLens: true,
      hover: true,
      classes: true,
      states: "auto",
      units: "threads",
      minCrt: 0.1,
      glyphTheme: "light",
      hoverImage: "auto",
      pollMs: 1000,
      recordCommand: ["python3", "-m", "pytest"],
      recordSubprocesses: true,
      repeat: 1,
      // Empty: the project's [tool.threadradar] keys decide (the server's rule for empty values).
      testCommand: [],
      intervalMs: 0,
      runsDir: "",
      keepRuns: 0,
      include: [],
      exclude: [],
      panels: true,
      notifyChanges: true,
      markdownImages: true,
    });
  });

  test("the overrides of [tool.threadradar] pass through; wrong types fall back to the project's (empty)", () => {
    const template = ["{python}", "-m", "pytest", "-n", "4", "{tests}"];
    const s = serverSettings(reader({ testCommand: template, intervalMs: 2.5, runsDir: "profiles/mine", keepRuns: 20, include: ["pool\\.py$"], exclude: ["^tests/"] }), 1);
    expect(s).toMatchObject({ testCommand: template, intervalMs: 2.5, runsDir: "profiles/mine", keepRuns: 20, include: ["pool\\.py$"], exclude: ["^tests/"] });
    expect(s.testCommand).not.toBe(template);
    const bad = serverSettings(reader({ testCommand: "pytest -x", intervalMs: -1, runsDir: 3, keepRuns: "all", include: [""], exclude: [1] }), 1);
    expect(bad).toMatchObject({ testCommand: [], intervalMs: 0, runsDir: "", keepRuns: 0, include: [], exclude: [] });
  });

  test("units: tasks passes through to the server; anything else is threads", () => {
    expect(serverSettings(reader({ units: "tasks" }), 1).units).toBe("tasks");
    expect(serverSettings(reader({ units: "fibres" }), 1).units).toBe("threads");
  });

  test("the overrides' descriptions say which [tool.threadradar] key they override", () => {
    const keys: Record<string, string> = { testCommand: "test-command", intervalMs: "interval-ms", runsDir: "runs-dir", keepRuns: "keep-runs", include: "include", exclude: "exclude" };
    for (const [setting, key] of Object.entries(keys)) {
      const spec = SERVER_SETTINGS.find((x) => x.key === setting);
      expect([setting, spec?.description.includes(`overrides \`[tool.threadradar] ${key}\``)]).toEqual([setting, true]);
      const contributed = (props[`threadradar.${setting}`] as { markdownDescription?: string } | undefined)?.markdownDescription ?? "";
      expect([setting, contributed.includes(`overriding \`[tool.threadradar] ${key}\``)]).toEqual([setting, true]);
    }
  });

  test("user values pass through", () => {
    const s = serverSettings(reader({ inlayHints: false, states: "all", minCrt: 2.5, hoverImage: "none", pollMs: 250, codeLens: false }), 1);
    expect(s).toMatchObject({ inlayHints: false, states: "all", minCrt: 2.5, hoverImage: "none", pollMs: 250, codeLens: false });
  });

  test("recordCommand: a non-empty list of non-empty strings, copied; anything else is the default", () => {
    const mine = ["python3", "-m", "pytest", "-x", "tests dir"];
    const s = serverSettings(reader({ recordCommand: mine, recordSubprocesses: false }), 1);
    expect(s).toMatchObject({ recordCommand: mine, recordSubprocesses: false });
    expect(s.recordCommand).not.toBe(mine);
    for (const bad of [[], ["python3", ""], ["python3", 3], "python3 -m pytest", null]) {
      expect(serverSettings(reader({ recordCommand: bad }), 1).recordCommand).toEqual(["python3", "-m", "pytest"]);
    }
    expect(recordCommand(reader({ recordCommand: ["pytest"] }))).toEqual(["pytest"]);
    expect(recordCommand(reader({}))).toEqual(["python3", "-m", "pytest"]);
  });

  test("glyphTheme auto follows the editor theme; an explicit choice wins", () => {
    expect(serverSettings(reader({ glyphTheme: "auto" }), 2).glyphTheme).toBe("dark");
    expect(serverSettings(reader({ glyphTheme: "auto" }), 3).glyphTheme).toBe("dark");
    expect(serverSettings(reader({ glyphTheme: "auto" }), 4).glyphTheme).toBe("light");
    expect(serverSettings(reader({ glyphTheme: "light" }), 2).glyphTheme).toBe("light");
    expect(serverSettings(reader({ glyphTheme: "dark" }), 1).glyphTheme).toBe("dark");
  });

  test("wrong types and out-of-range values fall back to the defaults", () => {
    const s = serverSettings(reader({ inlayHints: "no", states: "fast", minCrt: -1, pollMs: 5, glyphTheme: "blue", hover: 0, panels: false, notifyChanges: false }), 1);
    expect(s).toMatchObject({ inlayHints: true, states: "auto", minCrt: 0.1, pollMs: 1000, glyphTheme: "light", hover: true, panels: true, notifyChanges: true });
  });

  test("extension-only settings are not sent to the server", () => {
    const s = serverSettings(reader({ serverPath: "/x", glyphs: false, "trace.server": "verbose" }), 1);
    expect(Object.keys(s)).not.toContain("serverPath");
    expect(Object.keys(s)).not.toContain("glyphs");
  });
});

describe("extension settings", () => {
  test("defaults and values", () => {
    expect(extensionSettings(reader({}))).toEqual({ serverPath: "", glyphs: true, glyphTheme: "auto" });
    expect(extensionSettings(reader({ serverPath: "  /opt/threadradar  ", glyphs: false, glyphTheme: "dark" }))).toEqual({ serverPath: "/opt/threadradar", glyphs: false, glyphTheme: "dark" });
    expect(extensionSettings(reader({ serverPath: "", glyphs: "yes" }))).toEqual({ serverPath: "", glyphs: true, glyphTheme: "auto" });
  });

  test("only a new server path restarts the server", () => {
    expect(needsRestart((s) => s === "threadradar.serverPath")).toBe(true);
    expect(needsRestart((s) => s === "threadradar.minCrt")).toBe(false);
  });
});

describe("package.json mirrors the settings", () => {
  test("every server setting is contributed with the same type, default and bounds", () => {
    for (const spec of SERVER_SETTINGS) {
      const p = props[`threadradar.${spec.key}`];
      const contributed = { key: spec.key, type: p?.type, default: p?.default, enum: p?.enum, minimum: p?.minimum, maximum: p?.maximum };
      expect(contributed).toEqual({
        key: spec.key,
        type: spec.type,
        default: spec.default,
        enum: spec.type === "string" && spec.enum !== undefined ? [...spec.enum] : undefined,
        minimum: spec.type === "number" ? spec.minimum : undefined,
        maximum: spec.type === "number" ? spec.maximum : undefined,
      });
      if (spec.type === "array") expect([spec.key, p?.items]).toEqual([spec.key, { type: "string" }]);
    }
  });

  test("nothing else is contributed but the extension's own settings", () => {
    const own = Object.keys(EXTENSION_SETTINGS).map((k) => `threadradar.${k}`);
    const expected = [...SERVER_SETTINGS.map((s) => `threadradar.${s.key}`), ...own, "threadradar.trace.server"].sort();
    expect(Object.keys(props).sort()).toEqual(expected);
    expect(props["threadradar.serverPath"]?.default).toBe(EXTENSION_SETTINGS.serverPath.default);
    expect(props["threadradar.glyphs"]?.default).toBe(EXTENSION_SETTINGS.glyphs.default);
  });
});

describe("workspace trust (issue 19)", () => {
  test("an untrusted workspace gets limited support, with a description of what is left out", () => {
    const m = JSON.parse(fs.readFileSync(path.join(__dirname, "../../package.json"), "utf8")) as {
      capabilities?: { untrustedWorkspaces?: { supported?: unknown; description?: unknown } };
    };
    const untrusted = m.capabilities?.untrustedWorkspaces;
    expect(untrusted?.supported).toBe("limited");
    // VS Code requires a description with "limited"; it says what an untrusted workspace lacks.
    expect(typeof untrusted?.description).toBe("string");
    expect(String(untrusted?.description)).toMatch(/Profile/);
  });
});
