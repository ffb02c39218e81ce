// Finding the `threadradar` binary before starting it, so that a missing server is one clear
// message instead of a failed start. The platform-specific .vsix carries the binary in `server/`
// (as rust-analyzer ships its server); the `threadradar.serverPath` setting still points to another
// one. Pure except for the `isExecutable` check the caller passes.

import * as path from "node:path";

export const INSTALL_HINT =
  "build and install it with `cargo install --path .` in the ThreadRadar repository (or put the built `target/release/threadradar` on PATH), or set `threadradar.serverPath` to the binary";

export type ServerLookup = { found: true; path: string } | { found: false; message: string };

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
      if (isExecutable(p + ext)) return { found: true, path: p + ext };
    }
    return { found: false, message: `The ThreadRadar language server was not found at ${p}: ${INSTALL_HINT}.` };
  }
  const dirs = (env.PATH ?? "").split(platform === "win32" ? ";" : ":").filter((d) => d !== "");
  for (const dir of dirs) {
    for (const ext of exts) {
      const p = path.join(dir, name + ext);
      if (isExecutable(p)) return { found: true, path: p };
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
 * path), else the binary the extension carries, else `threadradar` on PATH.
 */
export function resolveServer(setting: string, bundled: string | undefined, env: LookupEnv, isExecutable: (p: string) => boolean, platform: string = process.platform): ServerLookup {
  if (setting.trim() === "" && bundled !== undefined && isExecutable(bundled)) return { found: true, path: bundled };
  return findServer(setting, env, isExecutable, platform);
}
