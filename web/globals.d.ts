// What the panels' scripts share through `window` (each file is a classic script, loaded in this
// order by `threadradar serve`, the static export and the VS Code webview), and VS Code's webview
// API. Checked with `tsc -p web` (web/tsconfig.json) together with the generated protocol types.

/** The VS Code webview API, present only inside a webview. */
declare function acquireVsCodeApi(): { postMessage(message: unknown): void; getState(): unknown; setState(state: unknown): void };

/** The protocol's methods with their parameters and results (generated from the Rust types). */
type ProtocolMethods = import("./protocol").MethodTypes;

/** One transport (HTTP to `serve`, the VS Code webview's messages, or a static export's answers). */
interface Transport {
  mode: string;
  request<M extends keyof ProtocolMethods>(method: M, params?: Partial<ProtocolMethods[M]["params"]>): Promise<ProtocolMethods[M]["result"]>;
  [k: string]: any;
}

interface Window {
  /** web/dom.js: the one DOM builder of every panel script. */
  ThreadRadarDom: { el(tag: string, props?: Record<string, any> | null, ...children: (Node | string | null | undefined)[]): any };
  ThreadRadarTransport: Transport & {
    /** The latest request wins: `fetch()`'s answer, or null if superseded (`st.seq`) or failed (shown in `info` and on `root`'s data-error). */
    latest<R>(st: { seq: number }, root: HTMLElement, info: HTMLElement, fetch: () => Promise<R>): Promise<R | null>;
  };
  ThreadRadarTimeline: { create(el: HTMLElement, opts: any): any };
  ThreadRadarSections: { create(el: HTMLElement, opts: any): any; squarify(...args: any[]): any };
  ThreadRadarWaits: { create(el: HTMLElement, opts: any): any };
  ThreadRadarTraceCompare: { create(el: HTMLElement, opts: any): any };
  ThreadRadarPanels: Record<string, any>;
}
