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

use crate::config::{HoverImage, Settings};
use crate::figures::{FileFigures, Figures, Profiled};
use crate::mapping::Mapping;
use crate::recording::{self, Output, RecordRequest};
use crate::render;
use crate::runs::{self, LoadedRun, RunEntry};
use crate::text::{line_in, Document};
use threadradar_profiler::source::ParsedSource;
use base64::Engine as _;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use threadradar_analysis::glyph::{self, RadarSpec, SvgOptions};
use threadradar_analysis::panel::{self, Params};
use threadradar_analysis::ArtifactKind;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::lsp_types::*;
use tower_lsp_server::{Client, LanguageServer, UriExt};

/// The commands of `workspace/executeCommand`.
pub const COMMANDS: [&str; 10] = [
    "threadradar.openOverview",
    "threadradar.openDetail",
    "threadradar.selectRun",
    "threadradar.deleteRun",
    "threadradar.setThreadFilter",
    "threadradar.clearThreadFilter",
    "threadradar.goTo",
    "threadradar.goToHottest",
    "threadradar.record",
    "threadradar.stopRecording",
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
    figures: Vec<Arc<Figures>>,
    /// Run files that failed to load, with the (size, mtime) they had: retried when it changes.
    failed: HashMap<PathBuf, (u64, u64)>,
    told_no_runs: bool,
    generation: u64,
    loading: Option<Loading>,
    recording: Option<ActiveRecording>,
    /// Files on disk (not open) mapped for symbols and goTo: (generation, mtime, mapping).
    disk: HashMap<PathBuf, (u64, u64, Arc<Document>, Arc<Mapping>)>,
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
}

fn invalid(msg: impl Into<String>) -> Error {
    Error::invalid_params(msg.into())
}

impl Backend {
    pub fn new(client: Client) -> Backend {
        Backend {
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
        Params { exclude_threads: s.exclude.clone(), states: s.settings.states }
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

    /// Waits (a bounded time) for the first scan, so a request right after `initialized` sees
    /// the newest run instead of nothing.
    async fn wait_scanned(&self) {
        let mut rx = self.scanned.subscribe();
        let _ = tokio::time::timeout(Duration::from_secs(30), rx.wait_for(|v| *v)).await;
    }

    /// Lists the runs; loads the newest one when it is new (unless the user chose a run).
    async fn rescan(&self, first: bool) {
        let _guard = self.load_lock.lock().await;
        let folders = self.state().folders.clone();
        let list = tokio::task::spawn_blocking(move || runs::list(&folders)).await.unwrap_or_default();
        let (changed, pinned, active_path, folders) = {
            let mut s = self.state();
            let changed = s.runs != list;
            s.runs = list.clone();
            (changed, s.pinned, s.active.as_ref().map(|a| a.path.clone()), s.folders.clone())
        };
        if !changed && !first {
            return;
        }
        if list.is_empty() {
            if changed && !first {
                self.notify_changed(Change::Runs).await;
            }
            let tell = {
                let mut s = self.state();
                let tell = !s.told_no_runs;
                s.told_no_runs = true;
                tell
            };
            if tell {
                let dirs: Vec<String> = folders.iter().map(|f| runs_dir_display(f)).collect();
                let where_ = if dirs.is_empty() { "this workspace".to_string() } else { dirs.join(", ") };
                self.client
                    .show_message(
                        MessageType::INFO,
                        format!("ThreadRadar: no runs in {where_} yet. Record one with `threadradar record -- python3 your_program.py`; the radars appear as soon as it is written."),
                    )
                    .await;
            }
            return;
        }
        if pinned {
            if changed && !first {
                self.client.log_message(MessageType::INFO, "ThreadRadar: a new run was recorded; `threadradar.selectRun` switches to it").await;
                self.notify_changed(Change::Runs).await;
            }
            return;
        }
        // The newest run that can be read; a run that failed before is retried when it changed.
        for entry in list {
            if Some(&entry.path) == active_path.as_ref() {
                break; // the newest readable run is already shown
            }
            let failed_before = self.state().failed.get(&entry.path) == Some(&(entry.size, entry.modified_unix_ms));
            if failed_before {
                continue;
            }
            match self.load(&entry).await {
                Load::Loaded => return, // `load` told the client
                Load::Cancelled => return,
                Load::Failed => continue,
            }
        }
        if changed && !first {
            self.notify_changed(Change::Runs).await;
        }
    }

    /// Reads and analyses a run off the protocol thread, with cancellable work-done progress.
    /// Call with `load_lock` held.
    async fn load(&self, entry: &RunEntry) -> Load {
        let caps = self.state().caps.clone();
        let params = self.params();
        let cancelled = Arc::new(AtomicBool::new(false));
        let token = format!("threadradar/load/{}", self.progress_counter.fetch_add(1, Ordering::SeqCst));
        let mut progress = None;
        if caps.work_done_progress {
            let t = ProgressToken::String(token.clone());
            if self.client.send_request::<request::WorkDoneProgressCreate>(WorkDoneProgressCreateParams { token: t.clone() }).await.is_ok() {
                self.state().loading = Some(Loading { token: token.clone(), cancelled: cancelled.clone() });
                progress = Some(
                    self.client.progress(t, "ThreadRadar").with_message(format!("loading {}", entry.name)).with_cancel_button().begin().await,
                );
            }
        }
        let generation = {
            let mut s = self.state();
            s.generation += 1;
            s.generation
        };
        let path = entry.path.clone();
        let cancel = cancelled.clone();
        // Exclusions are thread ids of the old run: a new run starts unfiltered.
        let params = Params { exclude_threads: Vec::new(), ..params };
        let result = tokio::task::spawn_blocking(move || -> std::result::Result<Option<(LoadedRun, Figures)>, String> {
            let run = threadradar_profiler::runfile::read(&path).map_err(|e| {
                if runs::may_be_incomplete(&e) {
                    format!("{e} (it may still be being written; it is read again when it changes)")
                } else {
                    e.to_string()
                }
            })?;
            if cancel.load(Ordering::SeqCst) {
                return Ok(None);
            }
            let loaded = LoadedRun::new(generation, path, run);
            let figures = Figures::build(&loaded, &params).map_err(|e| e.to_string())?;
            Ok(Some((loaded, figures)))
        })
        .await
        .unwrap_or_else(|e| Err(format!("analysing the run failed: {e}")));
        let outcome = match result {
            Ok(Some(_)) | Ok(None) if cancelled.load(Ordering::SeqCst) => {
                self.state().pinned = true;
                self.client
                    .show_message(MessageType::INFO, format!("ThreadRadar: loading {} was cancelled; `threadradar.selectRun` loads a run.", entry.name))
                    .await;
                Load::Cancelled
            }
            Ok(Some((loaded, figures))) => {
                {
                    let mut s = self.state();
                    s.active = Some(Arc::new(loaded));
                    s.exclude.clear();
                    s.figures = vec![Arc::new(figures)];
                    s.failed.remove(&entry.path);
                    s.disk.clear();
                }
                self.client.log_message(MessageType::INFO, format!("ThreadRadar: showing {}", entry.path.display())).await;
                self.refresh(Change::Run).await;
                Load::Loaded
            }
            Ok(None) => Load::Cancelled,
            Err(msg) => {
                let first = self.state().failed.insert(entry.path.clone(), (entry.size, entry.modified_unix_ms)).is_none();
                if first {
                    self.client.show_message(MessageType::WARNING, format!("ThreadRadar: {msg}")).await;
                }
                Load::Failed
            }
        };
        if let Some(p) = progress {
            p.finish().await;
        }
        self.state().loading = None;
        outcome
    }

    /// Asks the client to ask again for hints and lenses, when it can, and tells clients that
    /// asked for it (`notifyChanges`) what changed.
    async fn refresh(&self, why: Change) {
        let caps = self.state().caps.clone();
        if caps.inlay_hint_refresh {
            let _ = self.client.inlay_hint_refresh().await;
        }
        if caps.code_lens_refresh {
            let _ = self.client.code_lens_refresh().await;
        }
        self.notify_changed(why).await;
    }

    /// `threadRadar/changed`, when the client asked for it with the setting `notifyChanges`.
    async fn notify_changed(&self, why: Change) {
        let params = {
            let s = self.state();
            if !s.settings.notify_changes {
                return;
            }
            json!({
                "reason": why.as_str(),
                "run": s.active.as_ref().map(|a| a.path.clone()),
                "generation": s.active.as_ref().map_or(0, |a| a.generation),
                "exclude_threads": s.exclude,
                "recording": s.recording.as_ref().map(|r| json!({ "command": r.command, "output": r.output })),
            })
        };
        self.client.send_notification::<Changed>(params).await;
    }

    /// The active run and its figures under the current filter and states, computed on the
    /// blocking pool when not cached.
    async fn figures(&self) -> Option<(Arc<LoadedRun>, Arc<Figures>)> {
        self.wait_scanned().await;
        let params = self.params();
        let (loaded, cached) = {
            let s = self.state();
            let loaded = s.active.clone()?;
            let cached = s.figures.iter().find(|f| f.generation == loaded.generation && f.params == params).cloned();
            (loaded, cached)
        };
        if let Some(f) = cached {
            return Some((loaded, f));
        }
        let l = loaded.clone();
        let p = params.clone();
        let built = tokio::task::spawn_blocking(move || Figures::build(&l, &p)).await.ok()?;
        match built {
            Ok(f) => {
                let f = Arc::new(f);
                let mut s = self.state();
                s.figures.retain(|x| x.generation == loaded.generation);
                if s.figures.len() >= 8 {
                    s.figures.remove(0);
                }
                s.figures.push(f.clone());
                Some((loaded, f))
            }
            Err(e) => {
                tracing::warn!("cannot analyse the run: {e}");
                None
            }
        }
    }

    /// The document's current text (open buffer, else the file on disk) and where the run's
    /// declarations are in it.
    fn mapped(&self, uri: &Uri, path: &Path, loaded: &LoadedRun, file_key: &str) -> Option<(Arc<Document>, Arc<Mapping>)> {
        let run_file = loaded.files.get(file_key)?;
        let open = {
            let s = self.state();
            s.docs.get(uri.as_str()).map(|d| {
                let cached = d.mapping.as_ref().filter(|m| m.0 == loaded.generation && m.1 == d.doc.version).map(|m| m.2.clone());
                let parsed = d.parsed.as_ref().filter(|p| p.0 == d.doc.version).map(|p| p.1.clone());
                (d.doc.clone(), cached, parsed)
            })
        };
        if let Some((doc, cached, parsed)) = open {
            if let Some(m) = cached {
                return Some((doc, m));
            }
            // A first parse of a large file takes tens of milliseconds (later ones are incremental):
            // let the runtime move other tasks.
            let mut reparsed = None;
            let m = Arc::new(tokio::task::block_in_place(|| {
                Mapping::map_with(run_file, doc.text(), || {
                    let mut p = parsed.unwrap_or_else(|| ParsedSource::parse(doc.text()));
                    if p.is_edited() {
                        p.reparse(doc.text());
                    }
                    let index = p.index(doc.text());
                    reparsed = Some(p);
                    index
                })
            }));
            if let Some(d) = self.state().docs.get_mut(uri.as_str()) {
                if d.doc.version == doc.version {
                    d.mapping = Some((loaded.generation, doc.version, m.clone()));
                    if let Some(p) = reparsed {
                        d.parsed = Some((doc.version, p));
                    }
                }
            }
            return Some((doc, m));
        }
        // Not open: the file as it is on disk.
        let mtime = std::fs::metadata(path).ok()?.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as u64;
        if let Some((g, t, d, m)) = self.state().disk.get(path) {
            if *g == loaded.generation && *t == mtime {
                return Some((d.clone(), m.clone()));
            }
        }
        let text = std::fs::read_to_string(path).ok()?;
        let doc = Arc::new(Document::new(0, text));
        let m = Arc::new(Mapping::map(run_file, doc.text()));
        self.state().disk.insert(path.to_path_buf(), (loaded.generation, mtime, doc.clone(), m.clone()));
        Some((doc, m))
    }

    /// The profiled artifacts of a document with their current lines.
    async fn placed(&self, uri: &Uri) -> Option<Placed> {
        let path = uri.to_file_path()?.into_owned();
        let (loaded, figures) = self.figures().await?;
        let key = loaded.file_key(&path)?.to_string();
        let (doc, mapping) = self.mapped(uri, &path, &loaded, &key)?;
        let settings = self.settings();
        let file = figures.files.get(&key).cloned().unwrap_or_default();
        let mut items = Vec::new();
        let mut stale = 0;
        for (i, p) in file.artifacts.iter().enumerate() {
            if p.view.crt * 100.0 < settings.min_crt || (p.view.kind == ArtifactKind::Class && !settings.classes) {
                continue;
            }
            match mapping.line(p.view.kind, &p.view.qualname, p.view.line) {
                Some(Some(line)) if line < doc.line_count() => items.push((i, line)),
                Some(_) => stale += 1,
                None => {}
            }
        }
        Some(Placed { loaded, figures, file, doc, items, stale, settings, uri: uri.clone() })
    }

    async fn show(&self, typ: MessageType, msg: impl Into<String>) {
        self.client.show_message(typ, msg.into()).await;
    }

    /// Panel request parameters: the request as sent, with the global thread filter, the
    /// configured states and glyph theme filled in where the request leaves them out.
    fn panel_params(&self, mut v: Value) -> Value {
        if v.is_null() {
            v = json!({});
        }
        let (exclude, settings) = {
            let s = self.state();
            (s.exclude.clone(), s.settings.clone())
        };
        if let Value::Object(o) = &mut v {
            o.entry("exclude_threads").or_insert(json!(exclude));
            o.entry("states").or_insert(serde_json::to_value(settings.states).unwrap_or(Value::Null));
            o.entry("theme").or_insert(serde_json::to_value(settings.glyph_theme).unwrap_or(Value::Null));
        }
        v
    }

    async fn active(&self) -> Result<Arc<LoadedRun>> {
        self.wait_scanned().await;
        self.state().active.clone().ok_or_else(|| {
            let mut e = Error::invalid_request();
            e.message = "there is no run: record one with `threadradar record -- python3 your_program.py`".into();
            e
        })
    }

    /// Runs a panel function on the blocking pool and turns its answer into JSON.
    async fn panel<Req, Resp>(&self, params: Value, f: fn(&panel::Panels, &Req) -> std::result::Result<Resp, panel::PanelError>) -> Result<Value>
    where
        Req: serde::de::DeserializeOwned + Send + 'static,
        Resp: serde::Serialize + Send + 'static,
    {
        let loaded = self.active().await?;
        let req: Req = serde_json::from_value(self.panel_params(params)).map_err(|e| invalid(format!("bad parameters: {e}")))?;
        let out = tokio::task::spawn_blocking(move || f(&loaded.panels, &req).map(|r| serde_json::to_value(r).unwrap_or(Value::Null)))
            .await
            .map_err(|_| Error::internal_error())?;
        out.map_err(|e| invalid(e.to_string()))
    }

    pub async fn overview_request(&self, params: Value) -> Result<Value> {
        self.panel(params, |p, r: &panel::OverviewRequest| p.overview(r)).await
    }

    pub async fn detail_request(&self, params: Value) -> Result<Value> {
        self.panel(params, |p, r: &panel::DetailRequest| p.detail(r)).await
    }

    pub async fn glyph_request(&self, params: Value) -> Result<Value> {
        self.panel(params, |p, r: &panel::GlyphRequest| p.glyph(r).map(|svg| json!({ "svg": svg }))).await
    }

    pub async fn threads_request(&self, params: Value) -> Result<Value> {
        self.panel(params, |p, r: &panel::ThreadsRequest| p.threads(r)).await
    }

    pub async fn runs_request(&self, _params: Value) -> Result<Value> {
        self.wait_scanned().await;
        let s = self.state();
        let active = s.active.as_ref().map(|a| a.path.clone());
        let runs: Vec<Value> = s
            .runs
            .iter()
            .map(|r| {
                json!({
                    "path": r.path, "name": r.name, "folder": r.folder, "modified_unix_ms": r.modified_unix_ms,
                    "size": r.size, "active": Some(&r.path) == active.as_ref(),
                })
            })
            .collect();
        let summary = s.active.as_ref().map(|a| {
            let run = a.run();
            let m = &run.meta;
            json!({
                "name": a.path.file_name().map(|n| n.to_string_lossy().into_owned()),
                "samples": m.sample_count,
                "threads": run.threads.len(),
                "processes": m.pids.len(),
                "duration_s": m.duration_s,
                "command": m.command.join(" "),
                "start_unix_ms": m.start_unix_ms,
                "python_version": m.python_version,
            })
        });
        Ok(json!({ "active": active, "pinned": s.pinned, "runs": runs, "exclude_threads": s.exclude, "summary": summary }))
    }

    /// `threadRadar/compare`: what changed per artifact between two runs of the workspace (by
    /// default the active run against the run recorded before it); see `analysis::compare`.
    pub async fn compare_request(&self, params: Value) -> Result<Value> {
        self.wait_scanned().await;
        let (list, active, states) = {
            let s = self.state();
            (s.runs.clone(), s.active.clone(), s.settings.states)
        };
        let find = |w: &str| -> Result<PathBuf> {
            list.iter()
                .find(|r| r.path == Path::new(w) || r.name == w)
                .map(|r| r.path.clone())
                .or_else(|| Path::new(w).is_file().then(|| PathBuf::from(w)))
                .ok_or_else(|| invalid(format!("no run {w:?}: `threadRadar/runs` lists the runs")))
        };
        let new_path = match params.get("new").and_then(|n| n.as_str()) {
            Some(n) => find(n)?,
            None => active.as_ref().map(|a| a.path.clone()).ok_or_else(|| invalid("there is no run: record one with `threadradar record -- python3 your_program.py`"))?,
        };
        let base_path = match params.get("base").and_then(|b| b.as_str()) {
            Some(b) => find(b)?,
            None => {
                let at = list.iter().position(|r| r.path == new_path);
                at.and_then(|i| list.get(i + 1))
                    .map(|r| r.path.clone())
                    .ok_or_else(|| invalid("there is no earlier run to compare with: record another run (e.g. after a fix) with `threadradar record`"))?
            }
        };
        let level = match params.get("level").and_then(|l| l.as_str()) {
            None | Some("function") => threadradar_analysis::Level::Function,
            Some("class") => threadradar_analysis::Level::Class,
            Some("file") => threadradar_analysis::Level::File,
            Some(l) => return Err(invalid(format!("unknown level {l:?}: function, class or file"))),
        };
        let strings = |k: &str| -> Vec<String> { params.get(k).and_then(|v| v.as_array()).map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default() };
        let mut filter = threadradar_analysis::ArtifactFilter::new(&strings("include"), &strings("exclude")).map_err(|e| invalid(e.to_string()))?;
        if params.get("hide_stdlib").and_then(|v| v.as_bool()).unwrap_or(false) {
            filter = filter.hide(threadradar_profiler::run::FileKind::Stdlib);
        }
        if params.get("hide_third_party").and_then(|v| v.as_bool()).unwrap_or(false) {
            filter = filter.hide(threadradar_profiler::run::FileKind::ThirdParty);
        }
        let top = params.get("top").and_then(|t| t.as_u64()).map(|t| t as usize);
        // Thread ids differ between runs: the comparison never applies the thread filter.
        let p = Params { exclude_threads: Vec::new(), states };
        let out = tokio::task::spawn_blocking(move || -> std::result::Result<Value, String> {
            // The active run is already loaded (with its analyses cached); another is read.
            let read = |path: &Path| threadradar_profiler::runfile::read(path).map(panel::Panels::new).map_err(|e| e.to_string());
            let (base_owned, new_owned);
            let base: &panel::Panels = match active.as_ref().filter(|a| a.path == base_path) {
                Some(a) => &a.panels,
                None => {
                    base_owned = read(&base_path)?;
                    &base_owned
                }
            };
            let new: &panel::Panels = match active.as_ref().filter(|a| a.path == new_path) {
                Some(a) => &a.panels,
                None => {
                    new_owned = read(&new_path)?;
                    &new_owned
                }
            };
            let (ba, na) = (base.analysis(&p).map_err(|e| e.to_string())?, new.analysis(&p).map_err(|e| e.to_string())?);
            let opts = threadradar_analysis::CompareOptions { level, filter, top };
            let mut c = threadradar_analysis::Comparison::build(base.run(), &ba, new.run(), &na, &opts).map_err(|e| e.to_string())?;
            c.base.path = Some(base_path.display().to_string());
            c.new.path = Some(new_path.display().to_string());
            serde_json::to_value(c).map_err(|e| e.to_string())
        })
        .await
        .map_err(|_| Error::internal_error())?;
        out.map_err(invalid)
    }

    /// `threadRadar/documentArtifacts`: the profiled declarations of one document where they are
    /// now, with what an editor needs to draw them (text glyph cells, the hint's label and, when
    /// asked for, the SVG glyph). Decorations in editors are drawn from this.
    pub async fn document_artifacts_request(&self, params: Value) -> Result<Value> {
        let uri: Uri = params
            .get("uri")
            .and_then(|u| u.as_str())
            .and_then(|u| u.parse().ok())
            .ok_or_else(|| invalid("threadRadar/documentArtifacts needs {\"uri\": document URI}"))?;
        let glyph_opts = match params.get("glyph") {
            None | Some(Value::Null) => None,
            Some(g) => {
                let settings = self.settings();
                let theme = match g.get("theme").and_then(|t| t.as_str()) {
                    Some(t) => glyph::Theme::parse(t).ok_or_else(|| invalid(format!("unknown glyph theme {t:?}: light or dark")))?,
                    None => settings.glyph_theme,
                };
                let size = g.get("size").and_then(|s| s.as_u64()).unwrap_or(32).clamp(8, 512) as u32;
                Some((theme, size))
            }
        };
        let (generation, exclude, run_name) = {
            let s = self.state();
            (s.active.as_ref().map_or(0, |a| a.generation), s.exclude.clone(), s.active.as_ref().and_then(|a| a.path.file_name().map(|n| n.to_string_lossy().into_owned())))
        };
        let empty = json!({ "run": run_name, "generation": generation, "exclude_threads": exclude, "stale": 0, "file": null, "artifacts": [] });
        let Some(p) = self.placed(&uri).await else { return Ok(empty) };
        let mut items = p.items.clone();
        items.sort_by_key(|&(_, line)| line);
        let mut artifacts = Vec::with_capacity(items.len());
        for (i, line) in items {
            let a = &p.file.artifacts[i];
            let v = &a.view;
            let text = p.doc.line(line).unwrap_or("");
            let indent: u32 = text.chars().take_while(|c| c.is_whitespace()).map(|c| c.len_utf16() as u32).sum();
            let cells: Vec<Value> = v
                .glyph
                .iter()
                .map(|c| json!({ "colour": c.colour, "threads": c.threads, "avg": c.avg, "sum": c.sum, "text": c.to_string() }))
                .collect();
            let mut entry = json!({
                "key": a.key,
                "kind": v.kind,
                "name": v.name,
                "qualname": v.qualname,
                "line": line,
                "character": indent,
                "end_character": text.encode_utf16().count(),
                "recorded_line": v.line,
                "crt": v.crt,
                "self_crt": v.self_crt,
                "seconds": v.seconds,
                "samples": v.samples,
                "threads": v.threads,
                "thread_types": v.thread_types,
                "cells": cells,
                "text": render::cells(&v.glyph),
                "label": render::hint_label(v, &p.settings),
            });
            if let Some((theme, size)) = glyph_opts {
                let svg = glyph::svg(&RadarSpec::from(v), &SvgOptions { size, theme, interactive: false, title: Some(v.qualname.clone()) });
                entry["glyph_svg"] = json!(svg);
            }
            artifacts.push(entry);
        }
        let file = p.file.file.as_ref().map(|f| {
            let key = p.uri.to_file_path().and_then(|path| p.loaded.file_key(&path).map(|k| format!("file:{k}")));
            json!({ "key": key, "crt": f.crt, "seconds": f.seconds })
        });
        Ok(json!({
            "run": p.run_name(),
            "generation": p.figures.generation,
            "exclude_threads": p.figures.params.exclude_threads,
            "stale": p.stale,
            "file": file,
            "artifacts": artifacts,
        }))
    }

    /// `window/workDoneProgress/cancel`: the user cancelled loading a run.
    pub async fn progress_cancel(&self, params: Value) {
        let token = match params.get("token") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => return,
        };
        if let Some(l) = self.state().loading.as_ref().filter(|l| l.token == token) {
            l.cancelled.store(true, Ordering::SeqCst);
        }
        let recording = self.state().recording.as_ref().filter(|r| r.token.as_deref() == Some(token.as_str())).map(|r| r.pid);
        if let Some(pid) = recording {
            recording::interrupt(pid);
        }
    }

    // --------------------------------------------------------------------------------------------
    // Commands
    // --------------------------------------------------------------------------------------------

    async fn open_overview(&self, arg: Value) -> Result<Option<Value>> {
        let file = arg.get("file").and_then(|f| f.as_str()).map(String::from);
        let mut req = json!({ "top": 50 });
        if let Some(f) = &file {
            req["only_file"] = json!(f);
        }
        let overview = self.overview_request(req).await?;
        if self.settings().panels {
            self.client.send_notification::<OpenPanel>(json!({ "panel": "overview", "file": file })).await;
        } else {
            let top: Vec<String> = overview["functions"]
                .as_array()
                .map(|a| {
                    a.iter().take(5).map(|f| format!("{} {}", f["qualname"].as_str().unwrap_or("?"), render::pct(f["crt"].as_f64().unwrap_or(0.0)))).collect()
                })
                .unwrap_or_default();
            self.show(MessageType::INFO, format!("ThreadRadar overview — hottest: {}", top.join(", "))).await;
        }
        Ok(Some(overview))
    }

    async fn open_detail(&self, arg: Value) -> Result<Option<Value>> {
        let artifact = arg.get("artifact").cloned().ok_or_else(|| invalid("threadradar.openDetail needs {\"artifact\": key}"))?;
        let detail = self.detail_request(json!({ "artifact": artifact })).await?;
        if self.settings().panels {
            self.client.send_notification::<OpenPanel>(json!({ "panel": "detail", "artifact": artifact })).await;
        } else {
            let a = &detail["artifact"];
            self.show(
                MessageType::INFO,
                format!(
                    "ThreadRadar {}: crt {} ({}), {} threads, {} clusters",
                    a["qualname"].as_str().unwrap_or("?"),
                    render::pct(a["crt"].as_f64().unwrap_or(0.0)),
                    render::secs(a["seconds"].as_f64().unwrap_or(0.0)),
                    a["threads"],
                    a["clusters"].as_array().map_or(0, |c| c.len())
                ),
            )
            .await;
        }
        Ok(Some(detail))
    }

    async fn select_run(&self, arg: Value) -> Result<Option<Value>> {
        self.wait_scanned().await;
        let wanted = match &arg {
            Value::String(s) => Some(s.clone()),
            v => v.get("run").and_then(|r| r.as_str()).map(String::from),
        };
        let list = self.state().runs.clone();
        let wanted = match wanted {
            Some(w) => w,
            None => {
                if !self.state().caps.show_message_request || list.is_empty() {
                    return self.runs_request(Value::Null).await.map(Some);
                }
                let mut actions: Vec<MessageActionItem> =
                    list.iter().take(8).map(|r| MessageActionItem { title: r.name.clone(), properties: Default::default() }).collect();
                actions.insert(0, MessageActionItem { title: "newest".into(), properties: Default::default() });
                match self.client.show_message_request(MessageType::INFO, "ThreadRadar: which run?", Some(actions)).await {
                    Ok(Some(a)) => a.title,
                    _ => return Ok(None),
                }
            }
        };
        let _guard = self.load_lock.lock().await;
        if wanted == "newest" || wanted == "latest" {
            self.state().pinned = false;
            drop(_guard);
            self.state().runs.clear(); // forces the next scan to load the newest
            self.rescan(true).await;
            return self.runs_request(Value::Null).await.map(Some);
        }
        let entry = list
            .iter()
            .find(|r| r.path == Path::new(&wanted) || r.name == wanted)
            .cloned()
            .or_else(|| {
                let p = PathBuf::from(&wanted);
                let meta = std::fs::metadata(&p).ok()?;
                Some(RunEntry {
                    name: p.file_name()?.to_string_lossy().into_owned(),
                    folder: p.parent()?.to_path_buf(),
                    modified_unix_ms: 0,
                    size: meta.len(),
                    path: p,
                })
            })
            .ok_or_else(|| invalid(format!("no run {wanted:?}: `threadRadar/runs` lists the runs")))?;
        self.state().failed.remove(&entry.path);
        match self.load(&entry).await {
            Load::Loaded => {
                self.state().pinned = true;
                drop(_guard);
                self.runs_request(Value::Null).await.map(Some)
            }
            _ => Err(invalid(format!("cannot load {}", entry.path.display()))),
        }
    }

    /// `threadradar.deleteRun`: deletes a listed run file. Deleting the active run shows the
    /// newest remaining one (and follows new runs again).
    async fn delete_run(&self, arg: Value) -> Result<Option<Value>> {
        self.wait_scanned().await;
        let wanted = match &arg {
            Value::String(s) => Some(s.clone()),
            v => v.get("run").and_then(|r| r.as_str()).map(String::from),
        }
        .ok_or_else(|| invalid("threadradar.deleteRun needs {\"run\": path or file name}"))?;
        let guard = self.load_lock.lock().await;
        let (entry, was_active) = {
            let s = self.state();
            let entry = s
                .runs
                .iter()
                .find(|r| r.path == Path::new(&wanted) || r.name == wanted)
                .cloned()
                .ok_or_else(|| invalid(format!("no run {wanted:?} in this workspace's runs directories: `threadRadar/runs` lists them")))?;
            let was_active = s.active.as_ref().is_some_and(|a| a.path == entry.path);
            (entry, was_active)
        };
        match std::fs::remove_file(&entry.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(invalid(format!("cannot delete {}: {e}", entry.path.display()))),
        }
        {
            let mut s = self.state();
            s.failed.remove(&entry.path);
            if was_active {
                s.active = None;
                s.exclude.clear();
                s.figures.clear();
                s.disk.clear();
                s.pinned = false;
            }
        }
        drop(guard);
        if was_active {
            self.state().runs.clear(); // the next scan loads the newest remaining run
            self.rescan(true).await;
            if self.state().active.is_none() {
                self.refresh(Change::Run).await; // nothing left to show: clear the annotations
            }
        } else {
            self.rescan(false).await;
        }
        self.runs_request(Value::Null).await.map(Some)
    }

    /// `threadradar.record`: starts `threadradar record` in a workspace folder and answers at
    /// once; the run is loaded (and shown) when the recorder ends.
    async fn record(self: &Arc<Self>, arg: Value) -> Result<Option<Value>> {
        let (tx, rx) = tokio::sync::watch::channel(false);
        let (req, folders) = {
            let mut s = self.state();
            if let Some(r) = &s.recording {
                return Err(invalid(format!("`{}` is already being recorded: stop it first (threadradar.stopRecording)", r.command.join(" "))));
            }
            let req = RecordRequest::parse(&arg, &s.settings.record_command, s.settings.record_subprocesses, &s.folders).map_err(invalid)?;
            // Reserved under the lock, so two record commands cannot both start.
            s.recording = Some(ActiveRecording { pid: 0, output: PathBuf::new(), command: req.command.clone(), token: None, done: rx });
            (req, s.folders.clone())
        };
        let started = std::env::current_exe()
            .map_err(|e| format!("cannot find the threadradar binary: {e}"))
            .and_then(|exe| recording::start(&exe, &req, &folders));
        let started = match started {
            Ok(st) => st,
            Err(e) => {
                self.state().recording = None;
                return Err(invalid(e));
            }
        };
        let title = format!("ThreadRadar: recording `{}`", req.command.join(" "));
        let mut progress = None;
        let mut token = None;
        if self.state().caps.work_done_progress {
            let t = format!("threadradar/record/{}", self.progress_counter.fetch_add(1, Ordering::SeqCst));
            let pt = ProgressToken::String(t.clone());
            if self.client.send_request::<request::WorkDoneProgressCreate>(WorkDoneProgressCreateParams { token: pt.clone() }).await.is_ok() {
                progress = Some(self.client.progress(pt, title.clone()).with_message("starting").with_cancel_button().begin().await);
                token = Some(t);
            }
        }
        if let Some(r) = self.state().recording.as_mut() {
            r.pid = started.pid;
            r.output = started.output.clone();
            r.token = token;
        }
        self.client.log_message(MessageType::INFO, format!("{title} in {} → {}", req.cwd.display(), started.output.display())).await;
        self.notify_changed(Change::Recording).await;
        let answer = json!({ "recording": true, "output": started.output, "command": req.command, "cwd": req.cwd });
        let me = self.clone();
        tokio::spawn(async move { me.follow_recording(started, progress, tx).await });
        Ok(Some(answer))
    }

    /// Passes the program's output on, reports progress, and loads the run when it is written.
    async fn follow_recording(
        self: Arc<Self>,
        mut st: recording::Started,
        progress: Option<tower_lsp_server::OngoingProgress<tower_lsp_server::Unbounded, tower_lsp_server::Cancellable>>,
        done: tokio::sync::watch::Sender<bool>,
    ) {
        /// Program output lines passed on as log messages, at most.
        const MAX_LINES: usize = 5000;
        let started = std::time::Instant::now();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        let mut recorder: Vec<String> = Vec::new();
        let mut logged = 0usize;
        let mut open = true;
        let mut status = None;
        while open || status.is_none() {
            tokio::select! {
                line = st.lines.recv(), if open => match line {
                    Some(Output::Stdout(l)) | Some(Output::Stderr(l)) => {
                        if let Some(own) = recording::recorder_line(&l) {
                            recorder.push(own.to_string());
                        } else if logged < MAX_LINES {
                            logged += 1;
                            self.client.log_message(MessageType::LOG, l).await;
                        }
                    }
                    None => open = false,
                },
                s = st.child.wait(), if status.is_none() => status = Some(s),
                _ = tick.tick() => {
                    if let Some(p) = &progress {
                        p.report_with_message(format!("{:.0} s — cancel stops it and keeps the run", started.elapsed().as_secs_f64()), None).await;
                    }
                }
            }
        }
        if let Some(p) = progress {
            p.finish().await;
        }
        // The recorder has ended: another recording may start while this run loads.
        self.state().recording = None;
        let _ = done.send(true);
        let written = st.output.is_file();
        let summary = recorder.iter().find(|l| l.starts_with("recorded ")).cloned();
        let code = status.and_then(|s| s.ok()).and_then(|s| s.code());
        if written {
            // The user asked for this run: show it (and follow new runs again). The listing is
            // forgotten so that the scan loads it even if the poll has already seen it.
            {
                let mut s = self.state();
                s.pinned = false;
                s.runs.clear();
            }
            self.rescan(true).await;
            let mut msg = format!("ThreadRadar: {}", summary.unwrap_or_else(|| format!("recorded {}", st.output.display())));
            if let Some(c) = code.filter(|&c| c != 0) {
                msg.push_str(&format!(" The program exited with {c}."));
            }
            self.show(MessageType::INFO, msg).await;
        } else {
            let why = recorder.last().cloned().unwrap_or_else(|| "the recorder ended without writing a run".into());
            self.show(MessageType::ERROR, format!("ThreadRadar: nothing was recorded: {why}")).await;
        }
        self.notify_changed(Change::Recording).await;
    }

    /// `threadradar.stopRecording`: the recorder's Ctrl-C (the run so far is kept).
    async fn stop_recording(&self) -> Result<Option<Value>> {
        let pid = self.state().recording.as_ref().map(|r| r.pid);
        match pid {
            Some(pid) if pid != 0 => Ok(Some(json!({ "stopping": recording::interrupt(pid) }))),
            Some(_) => Ok(Some(json!({ "stopping": false }))),
            None => Err(invalid("nothing is being recorded")),
        }
    }

    /// On shutdown, a recording is stopped and its run written before the server exits.
    async fn stop_recording_and_wait(&self) {
        let rec = self.state().recording.as_ref().map(|r| (r.pid, r.done.clone()));
        if let Some((pid, mut done)) = rec {
            recording::interrupt(pid);
            let _ = tokio::time::timeout(Duration::from_secs(10), done.wait_for(|d| *d)).await;
        }
    }

    /// `threadradar.goToHottest`: the user's function (or class) with the highest crt.
    async fn go_to_hottest(&self, arg: Value) -> Result<Option<Value>> {
        let kind = match arg.get("kind").and_then(|k| k.as_str()).or(arg.as_str()) {
            None | Some("function") => ArtifactKind::Function,
            Some("class") => ArtifactKind::Class,
            Some(k) => return Err(invalid(format!("unknown kind {k:?}: function or class"))),
        };
        let (loaded, figures) = self.figures().await.ok_or_else(|| invalid("there is no run: record one with `threadradar record -- python3 your_program.py`"))?;
        for (file, i) in &figures.ranked {
            let Some(p) = figures.files.get(file).and_then(|f| f.artifacts.get(*i)) else { continue };
            let v = &p.view;
            if v.kind != kind || v.file_kind != threadradar_profiler::run::FileKind::User || v.qualname == "<module>" {
                continue;
            }
            let Some(location) = self.locate(&loaded, file, p) else { continue };
            if self.state().caps.show_document {
                let _ = self
                    .client
                    .show_document(ShowDocumentParams { uri: location.uri.clone(), external: Some(false), take_focus: Some(true), selection: Some(location.range) })
                    .await;
            }
            return Ok(Some(json!({
                "artifact": p.key,
                "uri": location.uri,
                "range": location.range,
                "qualname": v.qualname,
                "crt": v.crt,
            })));
        }
        let what = if kind == ArtifactKind::Class { "class" } else { "function" };
        Err(invalid(format!("no {what} of your own code was profiled in this run (only the standard library or installed packages)")))
    }

    async fn set_thread_filter(&self, arg: Value) -> Result<Option<Value>> {
        let loaded = self.active().await?;
        let run = loaded.run();
        let list = arg.get("exclude").and_then(|e| e.as_array()).ok_or_else(|| invalid("threadradar.setThreadFilter needs {\"exclude\": [thread id or name, …]}"))?;
        let mut ids = Vec::new();
        for v in list {
            match v {
                Value::Number(n) => match n.as_u64().filter(|&i| (i as usize) < run.threads.len()) {
                    Some(i) => ids.push(i as u32),
                    None => return Err(invalid(format!("no thread with id {n} in this run"))),
                },
                Value::String(name) => {
                    let hits: Vec<u32> =
                        (0..run.threads.len() as u32).filter(|&i| run.threads[i as usize].name == *name || run.threads[i as usize].thread_type == *name).collect();
                    if hits.is_empty() {
                        return Err(invalid(format!("no thread or thread type named {name:?} in this run")));
                    }
                    ids.extend(hits);
                }
                _ => return Err(invalid("thread filter entries are thread ids or names")),
            }
        }
        ids.sort_unstable();
        ids.dedup();
        if ids.len() >= run.threads.len() && !run.threads.is_empty() {
            return Err(invalid("the filter would exclude every thread"));
        }
        self.state().exclude = ids.clone();
        self.refresh(Change::Filter).await;
        let names: Vec<Value> = ids.iter().map(|&i| json!({ "id": i, "name": run.threads[i as usize].name })).collect();
        Ok(Some(json!({ "excluded": names })))
    }

    async fn clear_thread_filter(&self) -> Result<Option<Value>> {
        self.state().exclude.clear();
        self.refresh(Change::Filter).await;
        Ok(Some(json!({ "excluded": [] })))
    }

    async fn go_to(&self, arg: Value) -> Result<Option<Value>> {
        let location = if let Some(key) = arg.get("artifact").and_then(|a| a.as_str()) {
            let (loaded, figures) = self.figures().await.ok_or_else(|| invalid("there is no run"))?;
            let (file, p) = figures
                .files
                .iter()
                .find_map(|(f, ff)| ff.artifacts.iter().find(|p| p.key.as_str() == key).map(|p| (f.clone(), p.clone())))
                .ok_or_else(|| invalid(format!("no profiled artifact {key} in this run")))?;
            self.locate(&loaded, &file, &p).ok_or_else(|| invalid(format!("{} is no longer in {file} (stale)", p.view.qualname)))?
        } else if let (Some(file), Some(line)) = (arg.get("file").and_then(|f| f.as_str()), arg.get("line").and_then(|l| l.as_u64())) {
            let uri = Uri::from_file_path(file).ok_or_else(|| invalid(format!("{file} is not a file path")))?;
            let line = (line.max(1) - 1) as u32;
            Location { uri, range: Range::new(Position::new(line, 0), Position::new(line, 0)) }
        } else {
            return Err(invalid("threadradar.goTo needs {\"artifact\": key} or {\"file\": path, \"line\": n}"));
        };
        if self.state().caps.show_document {
            let _ = self
                .client
                .show_document(ShowDocumentParams { uri: location.uri.clone(), external: Some(false), take_focus: Some(true), selection: Some(location.range) })
                .await;
        }
        Ok(Some(serde_json::to_value(location).unwrap_or(Value::Null)))
    }

    /// Where a profiled artifact is now, `None` when stale or its file is gone.
    fn locate(&self, loaded: &LoadedRun, file: &str, p: &Profiled) -> Option<Location> {
        let uri = Uri::from_file_path(file)?;
        let (_, mapping) = self.mapped(&uri, Path::new(file), loaded, file)?;
        let line = mapping.line(p.view.kind, &p.view.qualname, p.view.line)??;
        Some(Location { uri, range: Range::new(Position::new(line, 0), Position::new(line, 0)) })
    }

    fn hover_image(&self, p: &Profiled, settings: &Settings, caps: &ClientCaps) -> Option<String> {
        let mode = match settings.hover_image {
            HoverImage::Auto if caps.vscode => HoverImage::Svg,
            HoverImage::Auto => HoverImage::None,
            m => m,
        };
        let spec = RadarSpec::from(&p.view);
        let svg = || glyph::svg(&spec, &SvgOptions { size: 64, theme: settings.glyph_theme, interactive: false, title: Some(p.view.qualname.clone()) });
        match mode {
            HoverImage::Svg => {
                let b64 = base64::engine::general_purpose::STANDARD.encode(svg());
                Some(format!("![ThreadRadar of {}](data:image/svg+xml;base64,{b64})", p.view.qualname))
            }
            HoverImage::Png => {
                let svg = svg();
                let dir = cache_dir()?.join("glyphs");
                std::fs::create_dir_all(&dir).ok()?;
                let path = dir.join(format!("{}.png", threadradar_profiler::source::sha256_hex(svg.as_bytes())));
                if !path.exists() {
                    let png = glyph::png(&svg, 64).ok()?;
                    std::fs::write(&path, png).ok()?;
                }
                let uri = Uri::from_file_path(&path)?;
                Some(format!("![ThreadRadar of {}]({})", p.view.qualname, uri.as_str()))
            }
            _ => None,
        }
    }
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

/// A document's profiled artifacts with their current lines.
struct Placed {
    loaded: Arc<LoadedRun>,
    figures: Arc<Figures>,
    file: Arc<FileFigures>,
    doc: Arc<Document>,
    /// (index in `file.artifacts`, current 0-based line)
    items: Vec<(usize, u32)>,
    stale: usize,
    settings: Settings,
    uri: Uri,
}

impl Placed {
    fn run_name(&self) -> String {
        self.loaded.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

fn tooltip(view: &threadradar_analysis::view::ArtifactView, figures: &Figures, footer: &str) -> InlayHintTooltip {
    InlayHintTooltip::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: format!("{}\n\n{footer}", render::figures_markdown(view, figures)) })
}

fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("threadradar"))
}

fn runs_dir_display(folder: &Path) -> String {
    threadradar_profiler::runfile::runs_dir(folder).display().to_string()
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
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
        experimental: Some(json!({ "threadRadar": { "requests": ["threadRadar/overview", "threadRadar/detail", "threadRadar/glyph", "threadRadar/threads", "threadRadar/runs", "threadRadar/documentArtifacts", "threadRadar/compare"], "notifications": ["threadRadar/openPanel", "threadRadar/changed"], "commands": COMMANDS } })),
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
    pub async fn overview(&self, p: Value) -> Result<Value> {
        self.0.overview_request(p).await
    }
    pub async fn detail(&self, p: Value) -> Result<Value> {
        self.0.detail_request(p).await
    }
    pub async fn glyph(&self, p: Value) -> Result<Value> {
        self.0.glyph_request(p).await
    }
    pub async fn threads(&self, p: Value) -> Result<Value> {
        self.0.threads_request(p).await
    }
    pub async fn runs(&self, p: Value) -> Result<Value> {
        self.0.runs_request(p).await
    }
    pub async fn compare(&self, p: Value) -> Result<Value> {
        self.0.compare_request(p).await
    }
    pub async fn document_artifacts(&self, p: Value) -> Result<Value> {
        self.0.document_artifacts_request(p).await
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
            if let Some(opts) = &params.initialization_options {
                ignored = s.settings.update(opts);
            }
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
            s.folders = folders;
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
        let dynamic = self.state().caps.watched_files_dynamic;
        if dynamic {
            let options = DidChangeWatchedFilesRegistrationOptions {
                watchers: vec![FileSystemWatcher { glob_pattern: GlobPattern::String("**/.threadradar/runs/*.json".into()), kind: None }],
            };
            let reg = Registration {
                id: "threadradar-runs".into(),
                method: "workspace/didChangeWatchedFiles".into(),
                register_options: serde_json::to_value(options).ok(),
            };
            let me = self.0.clone();
            // Not awaited here: the client answers registrations whenever it likes.
            tokio::spawn(async move {
                let _ = me.client.register_capability(vec![reg]).await;
            });
        }
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

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let ignored = self.state().settings.update(&params.settings);
        if !ignored.is_empty() {
            self.show(MessageType::WARNING, format!("ThreadRadar: {}", ignored.join("; "))).await;
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
        self.0.rescan(false).await;
    }

    async fn did_change_watched_files(&self, _: DidChangeWatchedFilesParams) {
        self.0.rescan(false).await;
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        if !self.settings().inlay_hints {
            return Ok(Some(Vec::new()));
        }
        let Some(p) = self.placed(&params.text_document.uri).await else { return Ok(Some(Vec::new())) };
        let footer = render::footer(&p.run_name(), &p.figures);
        // A client that resolves tooltips lazily gets small hints now and a tooltip per hint it
        // shows one for; the others get the tooltips inline.
        let lazy = self.state().caps.resolve_tooltip;
        let mut hints = Vec::new();
        for &(i, line) in &p.items {
            if !line_in(&params.range, line) {
                continue;
            }
            let a = &p.file.artifacts[i];
            let Some(position) = p.doc.line_end(line) else { continue };
            hints.push(InlayHint {
                position,
                label: InlayHintLabel::String(render::hint_label(&a.view, &p.settings)),
                kind: None,
                text_edits: None,
                tooltip: (!lazy).then(|| tooltip(&a.view, &p.figures, &footer)),
                padding_left: Some(true),
                padding_right: None,
                data: Some(json!({ "artifact": a.key, "generation": p.figures.generation })),
            });
        }
        hints.sort_by_key(|h| (h.position.line, h.position.character));
        Ok(Some(hints))
    }

    async fn inlay_hint_resolve(&self, mut hint: InlayHint) -> Result<InlayHint> {
        if hint.tooltip.is_some() {
            return Ok(hint);
        }
        let key = hint.data.as_ref().and_then(|d| d.get("artifact")).and_then(|k| k.as_str()).map(String::from);
        let Some(key) = key else { return Ok(hint) };
        let Some((loaded, figures)) = self.figures().await else { return Ok(hint) };
        let found = figures.files.values().find_map(|f| f.artifacts.iter().find(|a| a.key.as_str() == key));
        if let Some(a) = found {
            let name = loaded.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            hint.tooltip = Some(tooltip(&a.view, &figures, &render::footer(&name, &figures)));
        }
        Ok(hint)
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let settings = self.settings();
        if !settings.code_lens && !settings.file_lens {
            return Ok(Some(Vec::new()));
        }
        let Some(p) = self.placed(&params.text_document.uri).await else { return Ok(Some(Vec::new())) };
        let mut lenses = Vec::new();
        let top = Range::new(Position::new(0, 0), Position::new(0, 0));
        if settings.file_lens && (p.file.file.is_some() || !p.items.is_empty() || p.stale > 0) {
            let file = p.uri.to_file_path().and_then(|f| p.loaded.file_key(&f).map(String::from));
            lenses.push(CodeLens {
                range: top,
                command: Some(Command {
                    title: render::file_lens_title(&p.file, p.stale),
                    command: "threadradar.openOverview".into(),
                    arguments: Some(vec![json!({ "file": file })]),
                }),
                data: None,
            });
        }
        if settings.code_lens {
            for &(i, line) in &p.items {
                let a = &p.file.artifacts[i];
                let range = Range::new(Position::new(line, 0), Position::new(line, 0));
                lenses.push(CodeLens {
                    range,
                    command: Some(Command {
                        title: render::lens_title(&a.view),
                        command: "threadradar.openDetail".into(),
                        arguments: Some(vec![json!({ "artifact": a.key })]),
                    }),
                    data: None,
                });
            }
        }
        lenses.sort_by_key(|l| l.range.start.line);
        Ok(Some(lenses))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        if !self.settings().hover {
            return Ok(None);
        }
        let pos = params.text_document_position_params.position;
        let Some(p) = self.placed(&params.text_document_position_params.text_document.uri).await else { return Ok(None) };
        if !p.doc.contains(pos) {
            return Ok(None);
        }
        let Some(&(i, line)) = p.items.iter().find(|(_, l)| *l == pos.line) else { return Ok(None) };
        let a = &p.file.artifacts[i];
        let caps = self.state().caps.clone();
        let mut value = String::new();
        if let Some(img) = self.hover_image(a, &p.settings, &caps) {
            value.push_str(&img);
            value.push_str("\n\n");
        }
        value.push_str(&render::figures_markdown(&a.view, &p.figures));
        value.push_str("\n\n");
        value.push_str(&render::footer(&p.run_name(), &p.figures));
        let end = p.doc.line_end(line).unwrap_or(pos);
        Ok(Some(Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }),
            range: Some(Range::new(Position::new(line, 0), end)),
        }))
    }

    async fn symbol(&self, params: WorkspaceSymbolParams) -> Result<Option<OneOf<Vec<SymbolInformation>, Vec<WorkspaceSymbol>>>> {
        let Some((loaded, figures)) = self.figures().await else { return Ok(Some(OneOf::Left(Vec::new()))) };
        let query = params.query.to_lowercase();
        let mut out = Vec::new();
        for (file, i) in &figures.ranked {
            if out.len() >= 200 {
                break;
            }
            let p = &figures.files[file].artifacts[*i];
            if !query.is_empty() && !p.view.qualname.to_lowercase().contains(&query) {
                continue;
            }
            let Some(location) = self.locate(&loaded, file, p) else { continue };
            let kind = match p.view.kind {
                ArtifactKind::Class => SymbolKind::CLASS,
                _ if p.view.qualname.contains('.') => SymbolKind::METHOD,
                _ => SymbolKind::FUNCTION,
            };
            let short = Path::new(file).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            #[allow(deprecated)]
            out.push(SymbolInformation {
                name: p.view.qualname.clone(),
                kind,
                tags: None,
                deprecated: None,
                location,
                container_name: Some(format!("ThreadRadar {:.1} % · {short}", p.view.crt * 100.0)),
            });
        }
        Ok(Some(OneOf::Left(out)))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let arg = params.arguments.into_iter().next().unwrap_or(Value::Null);
        match params.command.as_str() {
            "threadradar.openOverview" => self.0.open_overview(arg).await,
            "threadradar.openDetail" => self.0.open_detail(arg).await,
            "threadradar.selectRun" => self.0.select_run(arg).await,
            "threadradar.deleteRun" => self.0.delete_run(arg).await,
            "threadradar.goToHottest" => self.0.go_to_hottest(arg).await,
            "threadradar.record" => self.0.record(arg).await,
            "threadradar.stopRecording" => self.0.stop_recording().await,
            "threadradar.setThreadFilter" => self.0.set_thread_filter(arg).await,
            "threadradar.clearThreadFilter" => self.0.clear_thread_filter().await,
            "threadradar.goTo" => self.0.go_to(arg).await,
            other => Err(invalid(format!("unknown command {other:?}; the commands are {}", COMMANDS.join(", ")))),
        }
    }
}
