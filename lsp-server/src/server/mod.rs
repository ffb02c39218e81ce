//! The protocol side: the [`LanguageServer`] implementation, commands, custom requests and the
//! task that watches the runs directories.
//!
//! Architecture invariant: no handler panics or fails the connection on client input. Unknown
//! documents, positions past the end, files the run does not know and a missing run all answer
//! "nothing here" (`null` or an empty list); bad command arguments answer one JSON-RPC error with
//! a sentence.
//!
//! Architecture invariant: the state lock is never held across an `.await`; reading and analysing
//! a run runs on the blocking pool, so the protocol keeps answering while a large run loads.

mod commands;
mod features;
mod host_impl;
mod testing;
mod sections;
mod waits_lens;
mod watch;

use crate::config::{HoverImage, Settings};
use crate::figures::{Figures, Profiled};
use crate::handlers::{self, Placed};
use crate::host::{Defaults, DiskDocuments, DocRef, FiguresCache, Host};
use crate::mapping::Mapping;
use crate::protocol::{self, Method, NavigateResult, ProtocolError};
use crate::recording::{self, Output, RecordRequest};
use crate::render;
use crate::runs::{self, LoadedRun, RunEntry};
use crate::text::{line_in, Document};
use base64::Engine as _;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use threadradar_analysis::glyph::{self, RadarSpec, SvgOptions};
use threadradar_analysis::panel::Params;
use threadradar_analysis::ArtifactKind;
use threadradar_profiler::run::ThreadId;
use threadradar_profiler::source::ParsedSource;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::lsp_types::*;
use tower_lsp_server::{Client, LanguageServer, UriExt};

/// The hidden method that panics on purpose (only with `THREADRADAR_TEST_PANIC=1`), and what it says.
pub const TEST_PANIC_METHOD: &str = "threadRadar/testPanic";
pub const TEST_PANIC_MESSAGE: &str = "the test panic THREADRADAR_TEST_PANIC asked for";

/// The text of a panic's payload: what `panic!` was given (a `&str` or a `String`), else a
/// placeholder.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => s.to_string(),
        (_, Some(s)) => s.clone(),
        _ => "a panic without a message".to_string(),
    }
}

/// The commands of `workspace/executeCommand`.
pub const COMMANDS: &[&str] = &[
    "threadradar.openOverview",
    "threadradar.openDetail",
    "threadradar.openTimeline",
    "threadradar.openSections",
    "threadradar.openWaits",
    "threadradar.selectRun",
    "threadradar.deleteRun",
    "threadradar.setThreadFilter",
    "threadradar.clearThreadFilter",
    "threadradar.goTo",
    "threadradar.goToHottest",
    "threadradar.record",
    "threadradar.stopRecording",
    "threadradar.profileTest",
    "threadradar.compareWithPrevious",
];

/// Why `threadRadar/changed` was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Change {
    /// The active run changed (a new newest run, `selectRun`, `deleteRun` of the active run).
    Run,
    /// The global thread filter changed.
    Filter,
    /// The list of run files changed; the active run did not.
    Runs,
    /// The settings changed what hints, lenses and decorations show.
    Settings,
    /// A recording started or ended (`recording` says which).
    Recording,
}

impl Change {
    fn as_str(self) -> &'static str {
        match self {
            Change::Run => "run",
            Change::Filter => "filter",
            Change::Runs => "runs",
            Change::Settings => "settings",
            Change::Recording => "recording",
        }
    }
}

/// What the client said it can do.
#[derive(Clone, Debug, Default)]
struct ClientCaps {
    inlay_hint_refresh: bool,
    code_lens_refresh: bool,
    show_document: bool,
    work_done_progress: bool,
    show_message_request: bool,
    watched_files_dynamic: bool,
    /// The client resolves inlay hint tooltips lazily (`inlayHint/resolve`).
    resolve_tooltip: bool,
    /// VS Code renders SVG data URIs in hovers; Neovim shows hovers as text.
    vscode: bool,
}

struct Doc {
    doc: Arc<Document>,
    /// Mapping of the run's declarations for (run generation, document version).
    mapping: Option<(u64, i32, Arc<Mapping>)>,
    /// The buffer's parse, kept in step with its edits (re-parsed incrementally when a mapping
    /// is next needed); `None` until a mapping first parses it, or after a full-text change.
    parsed: Option<(i32, ParsedSource)>,
}

/// A recording started from the editor (`threadradar.record`).
struct ActiveRecording {
    /// 0 until the recorder has started.
    pid: u32,
    output: PathBuf,
    command: Vec<String>,
    /// The work-done progress token, when the client shows progress.
    token: Option<String>,
    /// Becomes `true` when the recorder has ended and its run (if any) is loaded.
    done: tokio::sync::watch::Receiver<bool>,
}

/// A load in progress, cancellable from the progress UI.
struct Loading {
    token: String,
    cancelled: Arc<AtomicBool>,
}

#[derive(Default)]
struct State {
    settings: Settings,
    caps: ClientCaps,
    folders: Vec<PathBuf>,
    docs: HashMap<String, Doc>,
    /// The last listing of the runs directories.
    runs: Vec<RunEntry>,
    active: Option<Arc<LoadedRun>>,
    /// The user chose a run: new runs do not replace it.
    pinned: bool,
    /// The global thread filter: thread ids of the active run.
    exclude: Vec<u32>,
    /// The global time window (seconds of the active run); cleared with the run.
    window: Option<threadradar_analysis::Window>,
    /// The project's `[tool.threadradar] include`/`exclude` (the overview's default listing).
    project_include: Vec<String>,
    project_exclude: Vec<String>,
    /// Run files that failed to load, with the (size, mtime) they had: retried when it changes.
    failed: HashMap<PathBuf, (u64, u64)>,
    told_no_runs: bool,
    /// The globs the client was asked to watch for runs (`None`: not yet).
    runs_watched: Option<Vec<String>>,
    generation: u64,
    loading: Option<Loading>,
    recording: Option<ActiveRecording>,
    /// The last `threadradar.profileTest` argument, for "▶ Profile again".
    last_test: Option<Value>,
    /// The `runSet` answer for the hover: (active run, level, counted states) → the answer
    /// (`Null` when the active run is in no run set).
    run_set_answers: Vec<(PathBuf, &'static str, String, Value)>,
}

/// The language server.
pub struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
    started: AtomicBool,
    /// `true` once the first look for runs (and the first load) is over.
    scanned: tokio::sync::watch::Sender<bool>,
    /// Serialises scans and loads.
    load_lock: Arc<tokio::sync::Mutex<()>>,
    progress_counter: std::sync::atomic::AtomicU64,
    /// The active run's figures per (filter, states).
    figures: FiguresCache,
    /// Files on disk (not open) mapped for symbols, goTo and requests about closed files.
    disk: DiskDocuments,
    /// This backend, for work sent to the blocking pool.
    me: Weak<Backend>,
}

fn invalid(msg: impl Into<String>) -> Error {
    Error::invalid_params(msg.into())
}

impl Backend {
    pub fn new(client: Client, me: Weak<Backend>) -> Backend {
        Backend {
            me,
            figures: FiguresCache::default(),
            disk: DiskDocuments::default(),
            client,
            state: Arc::new(Mutex::new(State::default())),
            started: AtomicBool::new(false),
            scanned: tokio::sync::watch::channel(false).0,
            load_lock: Arc::new(tokio::sync::Mutex::new(())),
            progress_counter: Default::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn settings(&self) -> Settings {
        self.state().settings.clone()
    }

    fn params(&self) -> Params {
        let s = self.state();
        Params { exclude_threads: s.exclude.clone(), states: s.settings.states, window: s.window }
    }

    fn arc(&self) -> Arc<Backend> {
        self.me.upgrade().expect("the backend outlives its requests")
    }

    /// Runs `f` on the blocking pool: reading, hashing, parsing and analysing never hold up
    /// the protocol thread. `None` when `f` panicked (logged and shown, see [`Self::run_blocking`]).
    async fn blocking<T: Send + 'static>(&self, f: impl FnOnce(&Backend) -> T + Send + 'static) -> Option<T> {
        self.run_blocking("a request", f).await.ok()
    }

    /// Runs `f` on the blocking pool for `what` (a method's name); when it panics, the panic's
    /// message becomes one sentence that is logged, shown to the user and returned.
    async fn run_blocking<T: Send + 'static>(&self, what: &str, f: impl FnOnce(&Backend) -> T + Send + 'static) -> std::result::Result<T, String> {
        let me = self.arc();
        match tokio::task::spawn_blocking(move || f(&me)).await {
            Ok(v) => Ok(v),
            Err(e) => {
                let why = if e.is_panic() { format!("it panicked: {}", panic_text(e.into_panic().as_ref())) } else { "it was cancelled".to_string() };
                let msg = format!("ThreadRadar: {what} failed inside the server ({why}); this is a bug, please report it with this message and the server's log.");
                tracing::error!("{msg}");
                self.show(MessageType::ERROR, msg.clone()).await;
                Err(msg)
            }
        }
    }

    /// A protocol request (`threadRadar/<method>`): the one dispatcher, off the protocol thread.
    pub async fn request(&self, method: &'static str, params: Value) -> Result<Value> {
        self.wait_scanned().await;
        self.answer(method, move |b| handlers::dispatch(b, method, params)).await
    }

    /// The answer of a request whose work is `f`, run off the protocol thread: a panic in it is an
    /// internal error that carries the panic's message.
    async fn answer(&self, method: &'static str, f: impl FnOnce(&Backend) -> std::result::Result<Value, ProtocolError> + Send + 'static) -> Result<Value> {
        match self.run_blocking(method, f).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(e.to_jsonrpc()),
            Err(msg) => Err(Error { code: tower_lsp_server::jsonrpc::ErrorCode::InternalError, message: msg.into(), data: None }),
        }
    }

    /// `threadRadar/testPanic`, registered only when `THREADRADAR_TEST_PANIC=1` (set by the
    /// tests): a handler that panics, to check that its message reaches the client.
    pub async fn test_panic(&self) -> Result<Value> {
        self.answer(TEST_PANIC_METHOD, |_| panic!("{TEST_PANIC_MESSAGE}")).await
    }

    /// The active run and its figures under the current filter and states.
    async fn figures(&self) -> Option<(Arc<LoadedRun>, Arc<Figures>)> {
        self.wait_scanned().await;
        self.blocking(|b| Host::figures(b).ok()).await.flatten()
    }

    /// The profiled artifacts of a document with their current lines.
    async fn placed(&self, uri: &Uri) -> Option<Placed> {
        let path = uri.to_file_path()?.into_owned();
        let doc = DocRef { path, uri: Some(uri.as_str().to_string()) };
        self.wait_scanned().await;
        self.blocking(move |b| handlers::placed(b, &doc)).await.flatten()
    }

    /// Starts watching the runs directories (once).
    fn ensure_started(self: &Arc<Self>) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            me.rescan(true).await;
            me.scanned.send_replace(true);
            loop {
                let ms = me.state().settings.poll_ms;
                tokio::time::sleep(Duration::from_millis(ms)).await;
                me.rescan(false).await;
            }
        });
    }

    /// `f` of the active run and a document's key in it, off the protocol thread, when the
    /// document's current text is the recorded one (same sha256): line-anchored figures (section
    /// and wait lenses) of an edited file could not be vouched for.
    async fn for_recorded_document<T: Send + 'static>(&self, uri: &Uri, f: impl FnOnce(&Arc<LoadedRun>, &str) -> Option<T> + Send + 'static) -> Option<T> {
        self.for_document(uri, move |loaded, key, recorded| if recorded { f(loaded, key) } else { None }).await
    }

    /// Whether a document's wait and section lenses are hidden because its text is no longer the
    /// recorded one (another sha256) while the run has waits or sections in it: the editor then
    /// says so instead of dropping them without a word.
    async fn line_figures_stale(&self, uri: &Uri) -> bool {
        self.for_document(uri, |loaded, key, recorded| {
            if recorded {
                return Some(false);
            }
            let waits = waits_lens::view_of(loaded).intervals.iter().any(|iv| iv.frame.as_ref().is_some_and(|f| f.file == key));
            let sections = sections::view_of(loaded).is_ok_and(|v| v.sections.iter().any(|s| s.file == key));
            Some(waits || sections)
        })
        .await
        .unwrap_or(false)
    }

    /// `f` of the active run, a document's key in it and whether the document's current text is
    /// the recorded one (same sha256), off the protocol thread; `None` when the run has no such
    /// file or no hash of it.
    async fn for_document<T: Send + 'static>(&self, uri: &Uri, f: impl FnOnce(&Arc<LoadedRun>, &str, bool) -> Option<T> + Send + 'static) -> Option<T> {
        let path = uri.to_file_path().map(|p| p.into_owned())?;
        let doc = DocRef { path, uri: Some(uri.as_str().to_string()) };
        self.wait_scanned().await;
        self.blocking(move |b| {
            let loaded = Host::active(b).ok()?;
            let key = loaded.file_key(&doc.path)?.to_string();
            let run = loaded.run();
            let recorded = run.files.iter().find(|f| run.str(f.path) == key)?.sha256.clone()?;
            let (text, _) = Host::document(b, &doc, &loaded, &key)?;
            let same = threadradar_profiler::source::sha256_hex(text.text().as_bytes()) == recorded;
            f(&loaded, &key, same)
        })
        .await
        .flatten()
    }

    /// Waits (a bounded time) for the first scan, so a request right after `initialized` sees
    /// the newest run instead of nothing.
    async fn wait_scanned(&self) {
        let mut rx = self.scanned.subscribe();
        let _ = tokio::time::timeout(Duration::from_secs(30), rx.wait_for(|v| *v)).await;
    }

    async fn show(&self, typ: MessageType, msg: impl Into<String>) {
        self.client.show_message(typ, msg.into()).await;
    }

    /// Each workspace folder's `[tool.threadradar]` / `threadradar.toml`, read through the one
    /// schema (when the client is initialized and whenever one of those files is saved): a bad
    /// key or value is a warning with its file and line (until it is fixed, the defaults apply;
    /// ▶ Profile and recording stop on it).
    async fn check_configuration(&self) {
        let folders = self.state().folders.clone();
        for f in folders {
            if let Err(e) = crate::project::ProjectConfig::load(&f) {
                self.show(MessageType::WARNING, format!("ThreadRadar: {e} (until it is fixed, the defaults apply)")).await;
            }
        }
    }












    // --------------------------------------------------------------------------------------------
    // Commands
    // --------------------------------------------------------------------------------------------














}

/// `threadRadar/openPanel`: asks a client that has panels (`panels: true`) to open one.
enum OpenPanel {}
impl notification::Notification for OpenPanel {
    type Params = Value;
    const METHOD: &'static str = "threadRadar/openPanel";
}

/// `threadRadar/changed`: tells a client that asked for it (`notifyChanges`) to draw again.
enum Changed {}
impl notification::Notification for Changed {
    type Params = Value;
    const METHOD: &'static str = "threadRadar/changed";
}

enum Load {
    Loaded,
    Failed,
    Cancelled,
}




fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("threadradar"))
}

fn runs_dir_display(folder: &Path, overrides: &crate::project::Overrides) -> String {
    crate::project::folder_runs_dir(folder, overrides).display().to_string()
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            // A saved pyproject.toml / threadradar.toml is read again (`did_save`).
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            ..Default::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
        inlay_hint_provider: Some(OneOf::Right(InlayHintServerCapabilities::Options(InlayHintOptions {
            work_done_progress_options: Default::default(),
            resolve_provider: Some(true),
        }))),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        execute_command_provider: Some(ExecuteCommandOptions { commands: COMMANDS.iter().map(|c| c.to_string()).collect(), ..Default::default() }),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities { supported: Some(true), change_notifications: Some(OneOf::Left(true)) }),
            file_operations: None,
        }),
        experimental: Some(json!({ "threadRadar": {
            "protocol": protocol::VERSION,
            "requests": protocol::METHODS.iter().map(|m| protocol::lsp_name(m.0)).collect::<Vec<_>>(),
            "notifications": ["threadRadar/openPanel", "threadRadar/changed"],
            "commands": COMMANDS,
        } })),
        ..Default::default()
    }
}

/// The handlers. `Backend` is shared (`Arc`) with the watcher task.
pub struct Server(pub Arc<Backend>);

impl std::ops::Deref for Server {
    type Target = Backend;
    fn deref(&self) -> &Backend {
        &self.0
    }
}

impl Server {
    pub async fn test_panic(&self, _: Value) -> Result<Value> {
        self.0.test_panic().await
    }
    pub async fn overview(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Overview::NAME, p).await
    }
    pub async fn detail(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Detail::NAME, p).await
    }
    pub async fn glyph(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Glyph::NAME, p).await
    }
    pub async fn threads(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Threads::NAME, p).await
    }
    pub async fn runs(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Runs::NAME, p).await
    }
    pub async fn compare(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Compare::NAME, p).await
    }
    pub async fn document_artifacts(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::DocumentArtifacts::NAME, p).await
    }
    pub async fn artifact_at(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::ArtifactAt::NAME, p).await
    }
    pub async fn filter(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Filter::NAME, p).await
    }
    pub async fn timeline(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Timeline::NAME, p).await
    }
    pub async fn sections(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Sections::NAME, p).await
    }
    pub async fn waits(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Waits::NAME, p).await
    }
    pub async fn trace_compare(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::TraceCompare::NAME, p).await
    }

    pub async fn views(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Views::NAME, p).await
    }
    pub async fn run_set(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::RunSet::NAME, p).await
    }
    pub async fn navigate(&self, p: Value) -> Result<Value> {
        self.0.request(protocol::Navigate::NAME, p).await
    }
    pub async fn split_command(&self, p: Value) -> Result<Value> {
        // Answered without waiting for the runs' scan: a prompt validates while the user types.
        self.answer(protocol::SplitCommand::NAME, move |b| handlers::dispatch(b, protocol::SplitCommand::NAME, p)).await
    }
    pub async fn cancel_progress(&self, p: Value) {
        self.0.progress_cancel(p).await
    }
    /// The answer to a message the framing guard found malformed (see [`crate::framing`]).
    pub async fn invalid_message(&self, p: Value) -> Result<Value> {
        let code = p.get("code").and_then(|c| c.as_i64()).unwrap_or(-32600);
        let message = p.get("message").and_then(|m| m.as_str()).unwrap_or("invalid message").to_string();
        Err(Error { code: tower_lsp_server::jsonrpc::ErrorCode::from(code), message: message.into(), data: None })
    }
}

impl LanguageServer for Server {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let mut ignored = Vec::new();
        {
            let mut s = self.state();
            let caps = &params.capabilities;
            let ws = caps.workspace.as_ref();
            s.caps = ClientCaps {
                inlay_hint_refresh: ws.and_then(|w| w.inlay_hint.as_ref()).and_then(|i| i.refresh_support).unwrap_or(false),
                code_lens_refresh: ws.and_then(|w| w.code_lens.as_ref()).and_then(|i| i.refresh_support).unwrap_or(false),
                watched_files_dynamic: ws.and_then(|w| w.did_change_watched_files.as_ref()).and_then(|d| d.dynamic_registration).unwrap_or(false),
                resolve_tooltip: caps
                    .text_document
                    .as_ref()
                    .and_then(|t| t.inlay_hint.as_ref())
                    .and_then(|i| i.resolve_support.as_ref())
                    .is_some_and(|r| r.properties.iter().any(|p| p == "tooltip")),
                show_document: caps.window.as_ref().and_then(|w| w.show_document.as_ref()).is_some_and(|d| d.support),
                work_done_progress: caps.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false),
                show_message_request: caps.window.as_ref().and_then(|w| w.show_message.as_ref()).is_some(),
                vscode: params.client_info.as_ref().is_some_and(|c| {
                    let n = c.name.to_lowercase();
                    n.contains("visual studio code") || n.contains("vscode") || n.contains("vscodium") || n == "code"
                }),
            };
            let mut folders: Vec<PathBuf> =
                params.workspace_folders.iter().flatten().filter_map(|f| f.uri.to_file_path().map(|p| p.into_owned())).collect();
            #[allow(deprecated)]
            if folders.is_empty() {
                if let Some(p) = params.root_uri.as_ref().and_then(|u| u.to_file_path()) {
                    folders.push(p.into_owned());
                }
            }
            // The project's `[tool.threadradar] states` is the default; the editor's settings
            // override it (issue 19). A bad configuration file is shown as a warning once the
            // client is initialized (`check_configuration`).
            if let Some(Ok(c)) = folders.first().map(|f| crate::project::ProjectConfig::load(f)) {
                if let Some(states) = crate::project::counted_states(&c) {
                    s.settings.states = states;
                }
                // And its include/exclude: which artifacts the overview lists by default.
                s.project_include = c.include;
                s.project_exclude = c.exclude;
            }
            s.folders = folders;
            if let Some(opts) = &params.initialization_options {
                ignored = s.settings.update(opts);
            }
        }
        for i in ignored {
            tracing::warn!("{i}");
        }
        Ok(InitializeResult {
            capabilities: capabilities(),
            server_info: Some(ServerInfo { name: "threadradar".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.0.check_configuration().await;
        self.0.watch_runs_dirs().await;
        self.0.ensure_started();
    }

    async fn shutdown(&self) -> Result<()> {
        self.0.stop_recording_and_wait().await;
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let d = params.text_document;
        self.state().docs.insert(d.uri.as_str().to_string(), Doc { doc: Arc::new(Document::new(d.version, d.text)), mapping: None, parsed: None });
        self.0.ensure_started();
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let mut s = self.state();
        if let Some(d) = s.docs.get_mut(params.text_document.uri.as_str()) {
            let edits = Arc::make_mut(&mut d.doc).apply(params.text_document.version, params.content_changes);
            match (edits, d.parsed.as_mut()) {
                (Some(edits), Some((version, parsed))) => {
                    for e in &edits {
                        parsed.edit(e);
                    }
                    *version = params.text_document.version;
                }
                _ => d.parsed = None,
            }
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        self.state().docs.remove(params.text_document.uri.as_str());
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        // An edited configuration is checked again, so a new mistake is said when it is made.
        let saved = params.text_document.uri.to_file_path();
        if saved.as_ref().and_then(|p| p.file_name()).is_some_and(|n| n == "pyproject.toml" || n == "threadradar.toml") {
            self.0.check_configuration().await;
        }
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let (ignored, new_runs_dir, new_units) = {
            let mut s = self.state();
            let (before, units) = (s.settings.runs_dir.clone(), s.settings.units);
            let ignored = s.settings.update(&params.settings);
            (ignored, s.settings.runs_dir != before, s.settings.units != units)
        };
        if !ignored.is_empty() {
            self.show(MessageType::WARNING, format!("ThreadRadar: {}", ignored.join("; "))).await;
        }
        if new_runs_dir {
            // Another runs directory (`runsDir`): list its runs (and show its newest) now, and
            // have the client watch it.
            self.0.watch_runs_dirs().await;
            self.0.rescan(false).await;
        }
        if new_units {
            // Other units: the active run is analysed again with them (its thread filter goes).
            self.0.reload_active().await;
        }
        self.refresh(Change::Settings).await;
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        {
            let mut s = self.state();
            for f in params.event.removed {
                if let Some(p) = f.uri.to_file_path() {
                    let p = p.into_owned();
                    s.folders.retain(|x| *x != p);
                }
            }
            for f in params.event.added {
                if let Some(p) = f.uri.to_file_path() {
                    s.folders.push(p.into_owned());
                }
            }
        }
        self.0.watch_runs_dirs().await;
        self.0.rescan(false).await;
    }

    async fn did_change_watched_files(&self, _: DidChangeWatchedFilesParams) {
        self.0.rescan(false).await;
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        self.0.inlay_hints(params).await
    }

    async fn inlay_hint_resolve(&self, hint: InlayHint) -> Result<InlayHint> {
        self.0.resolve_inlay_hint(hint).await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        self.0.code_lenses(params).await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        self.0.hover(params).await
    }

    async fn symbol(&self, params: WorkspaceSymbolParams) -> Result<Option<OneOf<Vec<SymbolInformation>, Vec<WorkspaceSymbol>>>> {
        self.0.symbols(params).await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let arg = params.arguments.into_iter().next().unwrap_or(Value::Null);
        match params.command.as_str() {
            "threadradar.openOverview" => self.0.open_overview(arg).await,
            "threadradar.openDetail" => self.0.open_detail(arg).await,
            "threadradar.openTimeline" => self.0.open_timeline(arg).await,
            "threadradar.openSections" => self.0.open_sections(arg).await,
            "threadradar.openWaits" => self.0.open_waits(arg).await,
            "threadradar.selectRun" => self.0.select_run_command(arg).await,
            "threadradar.deleteRun" => self.0.delete_run(arg).await,
            "threadradar.goToHottest" => self.0.go_to_hottest(arg).await,
            "threadradar.record" => self.0.record(arg).await,
            "threadradar.stopRecording" => self.0.stop_recording().await,
            "threadradar.setThreadFilter" => self.0.set_thread_filter(arg).await,
            "threadradar.clearThreadFilter" => self.0.clear_thread_filter().await,
            "threadradar.goTo" => self.0.go_to(arg).await,
            "threadradar.profileTest" => self.0.profile_test(arg).await,
            "threadradar.compareWithPrevious" => self.0.compare_with_previous(arg).await,
            other => Err(invalid(format!("unknown command {other:?}; the commands are {}", COMMANDS.join(", ")))),
        }
    }
}
