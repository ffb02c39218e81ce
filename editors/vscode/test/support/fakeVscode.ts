// A stand-in for the `vscode` module, enough to load the bundled extension in plain Node and
// activate it: commands, views, the status bar, messages and configuration are recorded; anything
// else is an inert value that can be called, constructed, iterated (empty) and disposed. VS Code
// itself cannot be downloaded here; this checks what can be checked without it (the bundle loads,
// activation registers every contributed command and view, a missing server is one message, and
// vscode-languageclient starts the real server with the extension's settings).

import * as path from "node:path";

/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-return */

function inert(): any {
  const target = function () {
    /* inert */
  };
  const p: any = new Proxy(target, {
    get(_t, key) {
      if (key === "then") return undefined;
      if (key === Symbol.iterator) {
        return function* () {
          /* nothing */
        };
      }
      if (key === Symbol.toPrimitive) return () => "";
      if (key === "dispose") return () => undefined;
      return p;
    },
    set: () => true,
    apply: () => p,
    construct: () => p,
  });
  return p;
}

/** `obj`, with every other property inert. */
function withFallback<T extends object>(obj: T, fallback: (key: string | symbol) => unknown = inert): T {
  return new Proxy(obj, { get: (t, k) => (Reflect.has(t, k) ? Reflect.get(t, k) : fallback(k)) });
}

type Listener<T> = (e: T) => unknown;

class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (l: Listener<T>): { dispose(): void } => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

class Disposable {
  constructor(private readonly f?: () => void) {}
  static from(...ds: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => ds.forEach((d) => d.dispose()));
  }
  dispose(): void {
    this.f?.();
  }
}

class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  get fsPath(): string {
    return this.path;
  }
  static file(p: string): Uri {
    return new Uri("file", p);
  }
  static parse(s: string): Uri {
    const i = s.indexOf(":");
    return s.startsWith("file://") ? new Uri("file", decodeURIComponent(s.slice(7))) : new Uri(s.slice(0, i), s.slice(i + 1));
  }
  static joinPath(u: Uri, ...parts: string[]): Uri {
    return new Uri(u.scheme, path.join(u.path, ...parts));
  }
  with(): this {
    return this;
  }
  toString(): string {
    return this.scheme === "file" ? `file://${this.path}` : `${this.scheme}:${this.path}`;
  }
  toJSON(): unknown {
    return { scheme: this.scheme, path: this.path };
  }
}

/** A text editor showing `file`, recording the decorations set on it. */
export interface FakeEditor {
  document: { uri: Uri; languageId: string; lineCount: number; lineAt(i: number): { text: string }; getText(): string };
  viewColumn: number;
  selection: { active: { line: number; character: number } };
  /** The ranges last set per decoration type (`Range` arguments: line, character, line, character). */
  decorations: Map<unknown, unknown[][]>;
  setDecorations(type: unknown, ranges: { args: unknown[] }[]): void;
}

export function fakeEditor(file: string, text: string): FakeEditor {
  const lines = text.split("\n");
  const decorations = new Map<unknown, unknown[][]>();
  return {
    document: { uri: Uri.file(file), languageId: "python", lineCount: lines.length, lineAt: (i) => ({ text: lines[i] ?? "" }), getText: () => text },
    viewColumn: 1,
    selection: { active: { line: 0, character: 0 } },
    decorations,
    setDecorations: (type, ranges) => decorations.set(type, ranges.map((r) => r.args)),
  };
}

export interface FakeVscode {
  module: any;
  commands: Map<string, (...args: unknown[]) => unknown>;
  treeViews: string[];
  messages: { level: string; text: string; items: unknown[] }[];
  status: { text: string; tooltip: unknown; command: unknown; shown: boolean }[];
  log: string[];
  webviewPanels: string[];
  /** The panels created: their title and the HTML last set. */
  panels: { viewType: string; title: string; html: string }[];
  /** Options of every decoration type created, and whether it was disposed. */
  decorationTypes: { options: unknown; disposed: boolean }[];
  /** The answers of quick picks and input boxes (undefined: dismissed), set by the test. */
  ui: {
    quickPick?: (items: readonly { label: string }[], options: unknown) => unknown;
    inputBox?: (options: { validateInput?: (v: string) => unknown; value?: string }) => string | undefined;
  };
  /** Fires `workspace.onDidSaveTextDocument` for this file, as a save in the editor does. */
  save(file: string): void;
  /** Every quick pick shown: its items and options. */
  quickPicks: { items: { label: string; detail?: string }[]; options: unknown }[];
  /** `window.withProgress` calls: the options, the messages reported, whether the task ended; `cancel()` presses Cancel. */
  progress: { options: { location: number; title?: string; cancellable?: boolean }; reports: unknown[]; done: boolean; cancel(): void }[];
  /** The tree data providers, by view id. */
  treeProviders: Map<string, { getChildren(e?: unknown): unknown; getTreeItem(e: unknown): unknown }>;
  /** Context keys set with `setContext`. */
  contexts: Map<string, unknown>;
}

export function fakeVscode(config: Record<string, unknown>, workspaceFolder: string, editors: FakeEditor[] = []): FakeVscode {
  const decorationTypes: FakeVscode["decorationTypes"] = [];
  const panels: FakeVscode["panels"] = [];
  const commands = new Map<string, (...args: unknown[]) => unknown>();
  const treeViews: string[] = [];
  const messages: FakeVscode["messages"] = [];
  const status: FakeVscode["status"] = [];
  const log: string[] = [];
  const webviewPanels: string[] = [];
  const ui: FakeVscode["ui"] = {};
  const quickPicks: FakeVscode["quickPicks"] = [];
  const progress: FakeVscode["progress"] = [];
  const treeProviders: FakeVscode["treeProviders"] = new Map();
  const contexts = new Map<string, unknown>();
  const event = () => new EventEmitter<unknown>().event;
  const saved = new EventEmitter<unknown>();
  const message = (level: string) => (text: string, ...items: unknown[]) => {
    messages.push({ level, text, items });
    return Promise.resolve(undefined);
  };
  const channel = withFallback(
    {
      name: "ThreadRadar",
      logLevel: 2,
      onDidChangeLogLevel: event(),
      dispose: () => undefined,
    },
    (k) => (...a: unknown[]) => log.push(`${String(k)}: ${a.map(String).join(" ")}`),
  );
  const folder = { uri: Uri.file(workspaceFolder), name: path.basename(workspaceFolder), index: 0 };
  const api: Record<string, unknown> = {
    version: "1.85.0",
    EventEmitter,
    Disposable,
    Uri,
    ThemeIcon: class {
      readonly id: string;
      readonly color: unknown;
      constructor(id: string, color?: unknown) {
        this.id = id;
        this.color = color;
      }
    },
    ThemeColor: class {
      constructor(readonly id: string) {}
    },
    MarkdownString: class {
      isTrusted = false;
      supportHtml = false;
      constructor(readonly value: string) {}
    },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    TreeItem: class {
      constructor(
        readonly label: string,
        readonly collapsibleState: number,
      ) {}
    },
    TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
    TreeItemCheckboxState: { Unchecked: 0, Checked: 1 },
    StatusBarAlignment: { Left: 1, Right: 2 },
    ViewColumn: { Active: -1, Beside: -2, One: 1, Two: 2 },
    ColorThemeKind: { Light: 1, Dark: 2, HighContrast: 3, HighContrastLight: 4 },
    DecorationRangeBehavior: { OpenOpen: 0, ClosedClosed: 1, OpenClosed: 2, ClosedOpen: 3 },
    Position: class {
      constructor(
        readonly line: number,
        readonly character: number,
      ) {}
    },
    Range: class {
      readonly args: unknown[];
      constructor(...a: unknown[]) {
        this.args = a;
      }
    },
    window: withFallback(
      {
        createOutputChannel: () => channel,
        createStatusBarItem: () => {
          const item = { text: "", tooltip: undefined as unknown, command: undefined as unknown, shown: false, name: "", show: () => (item.shown = true), hide: () => (item.shown = false), dispose: () => undefined };
          status.push(item);
          return item;
        },
        createTreeView: (id: string, options: { treeDataProvider: { getChildren(e?: unknown): unknown; getTreeItem(e: unknown): unknown } }) => {
          treeViews.push(id);
          treeProviders.set(id, options.treeDataProvider);
          return { onDidChangeCheckboxState: event(), onDidChangeVisibility: event(), dispose: () => undefined, message: undefined };
        },
        createWebviewPanel: (viewType: string, title: string) => {
          webviewPanels.push(viewType);
          const record = { viewType, title, html: "" };
          panels.push(record);
          return {
            get title() {
              return record.title;
            },
            set title(t: string) {
              record.title = t;
            },
            iconPath: undefined,
            webview: {
              cspSource: "'self' https://*.vscode-cdn.net",
              get html() {
                return record.html;
              },
              set html(h: string) {
                record.html = h;
              },
              onDidReceiveMessage: event(),
              postMessage: () => Promise.resolve(true),
            },
            reveal: () => undefined,
            onDidDispose: event(),
            dispose: () => undefined,
          };
        },
        createTextEditorDecorationType: (options: unknown) => {
          const t = { options, disposed: false };
          decorationTypes.push(t);
          return { key: `d${decorationTypes.length}`, dispose: () => (t.disposed = true), record: t };
        },
        showQuickPick: (items: { label: string }[] | Promise<{ label: string }[]>, options: unknown) =>
          Promise.resolve(items).then((list) => {
            quickPicks.push({ items: list, options });
            return ui.quickPick?.(list, options);
          }),
        showInputBox: (options: { validateInput?: (v: string) => unknown; value?: string }) => Promise.resolve(ui.inputBox?.(options)),
        withProgress: (options: FakeVscode["progress"][number]["options"], task: (p: unknown, token: unknown) => Promise<unknown>) => {
          const cancelled = new EventEmitter<void>();
          let isCancelled = false;
          const record: FakeVscode["progress"][number] = {
            options,
            reports: [],
            done: false,
            cancel: () => {
              isCancelled = true;
              cancelled.fire();
            },
          };
          progress.push(record);
          const token = {
            get isCancellationRequested() {
              return isCancelled;
            },
            onCancellationRequested: cancelled.event,
          };
          return task({ report: (v: unknown) => record.reports.push(v) }, token).finally(() => (record.done = true));
        },
        showErrorMessage: message("error"),
        showWarningMessage: message("warning"),
        showInformationMessage: message("info"),
        setStatusBarMessage: () => ({ dispose: () => undefined }),
        activeColorTheme: { kind: 2 },
        visibleTextEditors: editors,
        activeTextEditor: editors[0],
        onDidChangeVisibleTextEditors: event(),
        onDidChangeActiveColorTheme: event(),
        onDidChangeActiveTextEditor: event(),
        onDidChangeTextEditorSelection: event(),
      },
    ),
    workspace: withFallback(
      {
        getConfiguration: (section?: string) => ({
          get: (k: string, d?: unknown) => {
            const key = section ? `${section}.${k}` : k;
            return key in config ? config[key] : d;
          },
          has: () => false,
          inspect: () => undefined,
          update: () => Promise.resolve(),
        }),
        workspaceFolders: [folder],
        getWorkspaceFolder: () => folder,
        textDocuments: [],
        onDidChangeConfiguration: event(),
        onDidChangeTextDocument: event(),
        onDidOpenTextDocument: event(),
        onDidCloseTextDocument: event(),
        onDidSaveTextDocument: saved.event,
        onWillSaveTextDocument: event(),
        onDidChangeWorkspaceFolders: event(),
        createFileSystemWatcher: () => ({ onDidCreate: event(), onDidChange: event(), onDidDelete: event(), dispose: () => undefined }),
      },
    ),
    commands: {
      registerCommand: (id: string, f: (...args: unknown[]) => unknown) => {
        if (commands.has(id)) throw new Error(`command '${id}' already exists`);
        commands.set(id, f);
        return new Disposable(() => commands.delete(id));
      },
      executeCommand: (id: string, ...args: unknown[]) => {
        if (id === "setContext") {
          contexts.set(String(args[0]), args[1]);
          return Promise.resolve(undefined);
        }
        return Promise.resolve(commands.get(id)?.(...args));
      },
      getCommands: () => Promise.resolve([...commands.keys()]),
    },
    env: withFallback({ appName: "Visual Studio Code", language: "en", machineId: "test", sessionId: "test", uriScheme: "vscode" }),
  };
  const module = withFallback(api);
  const save = (file: string): void => saved.fire({ uri: Uri.file(file), languageId: path.extname(file).slice(1) });
  return { module, commands, treeViews, messages, status, log, webviewPanels, panels, decorationTypes, ui, save, quickPicks, progress, treeProviders, contexts };
}
