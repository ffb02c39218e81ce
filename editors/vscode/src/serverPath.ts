// Finding the `threadradar` binary before starting it, so that a missing server is one clear
// message instead of a failed start. The platform-specific .vsix carries the binary in `server/`
// (as rust-analyzer ships its server); the `threadradar.serverPath` setting still points to another
// one. The universal .vsix carries none: then `pip install threadradar` put it beside the project's
// Python interpreter (issue #33), which is looked at before PATH. Pure except for the
// `isExecutable` check and the file reads the caller passes.

import * as path from "node:path";

export const INSTALL_HINT =
  "install it into the project's Python environment with `pip install threadradar` (from a checkout: `pip install .`), or with `cargo install --path .` in the ThreadRadar repository, or set `threadradar.serverPath` to the binary";

/** `source` says which place it came from, for the output channel's log line. */
export type ServerLookup = { found: true; path: string; source: string } | { found: false; message: string };

/** A Python interpreter whose environment may hold a pip-installed `threadradar`. */
export interface Interpreter {
  /** Its executable (`/p/.venv/bin/python`); `threadradar` is looked for beside it. */
  python: string;
  /** Where it came from (`[tool.threadradar] python in pyproject.toml`, `the selected interpreter`). */
  source: string;
}

export interface LookupEnv {
  PATH?: string;
  HOME?: string;
  /** Extensions of executables on Windows (`PATHEXT`). */
  PATHEXT?: string;
}

/**
 * Resolves the `threadradar.serverPath` setting: a bare name is looked up on PATH, anything with a
 * directory part (or `~/…`) is checked as a path.
 */
export function findServer(setting: string, env: LookupEnv, isExecutable: (p: string) => boolean, platform: string = process.platform): ServerLookup {
  const name = setting.trim() === "" ? "threadradar" : setting.trim();
  const sep = platform === "win32" ? /[\\/]/ : /\//;
  const exts = platform === "win32" ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").filter((e) => e !== "")] : [""];
  if (sep.test(name)) {
    let p = name;
    if ((p === "~" || p.startsWith("~/")) && env.HOME) p = path.join(env.HOME, p.slice(1));
    for (const ext of exts) {
      if (isExecutable(p + ext)) return { found: true, path: p + ext, source: "the threadradar.serverPath setting" };
    }
    return { found: false, message: `The ThreadRadar language server was not found at ${p}: ${INSTALL_HINT}.` };
  }
  const dirs = (env.PATH ?? "").split(platform === "win32" ? ";" : ":").filter((d) => d !== "");
  for (const dir of dirs) {
    for (const ext of exts) {
      const p = path.join(dir, name + ext);
      if (isExecutable(p)) return { found: true, path: p, source: "PATH" };
    }
  }
  return { found: false, message: `The ThreadRadar language server \`${name}\` is not on PATH: ${INSTALL_HINT}.` };
}

/** Where a platform-specific .vsix carries the server, inside the extension's folder. */
export function bundledServerPath(extensionPath: string, platform: string = process.platform): string {
  return path.join(extensionPath, "server", platform === "win32" ? "threadradar.exe" : "threadradar");
}

/**
 * The server to start: the `threadradar.serverPath` setting when it is set (a name on PATH or a
 * path), else the binary the extension carries, else `threadradar` beside each of `interpreters`
 * in order (a pip install into that environment: `bin/`, `Scripts\` on Windows), else
 * `threadradar` on PATH.
 */
export function resolveServer(
  setting: string,
  bundled: string | undefined,
  env: LookupEnv,
  isExecutable: (p: string) => boolean,
  platform: string = process.platform,
  interpreters: readonly Interpreter[] = [],
): ServerLookup {
  if (setting.trim() === "" && bundled !== undefined && isExecutable(bundled)) return { found: true, path: bundled, source: "the binary this extension carries" };
  if (setting.trim() === "") {
    const p = platform === "win32" ? path.win32 : path.posix;
    for (const i of interpreters) {
      const candidate = p.join(p.dirname(i.python), platform === "win32" ? "threadradar.exe" : "threadradar");
      if (isExecutable(candidate)) return { found: true, path: candidate, source: `the environment of ${i.source} (${i.python})` };
    }
  }
  return findServer(setting, env, isExecutable, platform);
}

/**
 * `python` of `[tool.threadradar]` in a pyproject.toml (or the top level of a threadradar.toml),
 * as the language server reads it, for finding the server before it runs: a plain
 * `python = "…"` line (basic or literal string); `undefined` without one. A relative path is
 * taken from `root`. Pure.
 */
export function configuredPython(text: string, isPyproject: boolean, root: string): string | undefined {
  let inTable = !isPyproject;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const header = /^\[([^\]]*)\]/.exec(line);
    if (header) {
      inTable = isPyproject && (header[1] ?? "").trim() === "tool.threadradar";
      continue;
    }
    if (!inTable) continue;
    const m = /^python\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)')/.exec(line);
    if (m) {
      const value = m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? "");
      if (value.trim() === "") return undefined;
      // A name (`python3.12`) is found on PATH by the server; only a path says where a venv is.
      if (!value.includes("/")) return undefined;
      return path.isAbsolute(value) ? value : path.join(root, value);
    }
  }
  return undefined;
}

/**
 * The interpreters whose environments may hold the server, in the order the language server picks
 * a project's interpreter (lsp-server's `resolve_python`): `[tool.threadradar] python` of the
 * folder's threadradar.toml or pyproject.toml, the interpreter selected in the Python extension,
 * the folder's `.venv` and `venv`, then `$VIRTUAL_ENV`. `readFile` returns a file's text or
 * `undefined`. Pure.
 */
export function projectInterpreters(
  folder: string | undefined,
  selected: string | undefined,
  env: { VIRTUAL_ENV?: string },
  readFile: (p: string) => string | undefined,
): Interpreter[] {
  const out: Interpreter[] = [];
  if (folder !== undefined) {
    for (const name of ["threadradar.toml", "pyproject.toml"]) {
      const text = readFile(path.join(folder, name));
      const python = text === undefined ? undefined : configuredPython(text, name === "pyproject.toml", folder);
      if (python !== undefined) {
        out.push({ python, source: `[tool.threadradar] python in ${name}` });
        break;
      }
    }
  }
  if (selected !== undefined && selected !== "") out.push({ python: selected, source: "the interpreter selected in the Python extension" });
  if (folder !== undefined) {
    for (const rel of [".venv/bin/python", "venv/bin/python"]) out.push({ python: path.join(folder, rel), source: rel });
  }
  if (env.VIRTUAL_ENV) out.push({ python: path.join(env.VIRTUAL_ENV, "bin", "python"), source: "$VIRTUAL_ENV" });
  return out;
}
