// The bundled extension in plain Node (VS Code cannot run in these tests): esbuild bundles
// src/extension.ts once per test file, `require("vscode")` inside the bundle answers with the
// stand-in module of the test that activates it, and each activation loads a fresh copy.

import Module, { createRequire } from "node:module";
import * as path from "node:path";
import * as esbuild from "esbuild";
import { after, before } from "node:test";
import type { FakeVscode } from "./fakeVscode";
import { EXTENSION_DIR } from "./server";

export interface Extension {
  activate(context: unknown): void;
  deactivate(): Promise<void> | undefined;
}

export interface Activated {
  ext: Extension;
  subscriptions: { dispose(): unknown }[];
}

const loader = Module as unknown as { _load: (request: string, parent: unknown, isMain: boolean) => unknown };

/**
 * Bundles the extension into test-output/`name`/ before the file's tests and routes `vscode` to the
 * fake given to `activate`; returns that `activate`.
 */
export function useBundle(name: string): (fake: FakeVscode, extensionPath?: string) => Activated {
  const bundle = path.join(EXTENSION_DIR, `test-output/${name}/extension.js`);
  const originalLoad = loader._load;
  let current: FakeVscode | undefined;
  before(async () => {
    await esbuild.build({ entryPoints: [path.join(EXTENSION_DIR, "src/extension.ts")], bundle: true, outfile: bundle, external: ["vscode"], format: "cjs", platform: "node", logLevel: "error" });
    loader._load = function (request: string, parent: unknown, isMain: boolean) {
      if (request === "vscode") {
        if (current === undefined) throw new Error("no fake vscode");
        return current.module as unknown;
      }
      return originalLoad.call(this, request, parent, isMain);
    };
  });
  after(() => {
    loader._load = originalLoad;
  });
  return (fake, extensionPath = EXTENSION_DIR) => {
    current = fake;
    const req = createRequire(__filename);
    Reflect.deleteProperty(req.cache, bundle);
    const ext = req(bundle) as Extension;
    const subscriptions: { dispose(): unknown }[] = [];
    ext.activate({ subscriptions, extensionUri: { scheme: "file", path: extensionPath, fsPath: extensionPath, toString: () => `file://${extensionPath}` }, extensionPath });
    return { ext, subscriptions };
  };
}

/** Polls `f` every 50 ms until it holds; fails naming `what` after `ms`. */
export async function until(what: string, f: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
