//! The MCP server as a protocol host (`threadradar_lsp::host::Host`), so that its tools answer
//! through the same dispatcher and handlers as the language server and `threadradar serve`
//! (`threadradar_lsp::handlers::dispatch`): one way to compute a view, whoever asks.
//!
//! The host's runs are those of the working directory's `.threadradar/runs`; a tool that names a
//! run (or none: the newest) makes it the active one first. There is no editor and no user-set
//! thread filter: every figure is over all threads of the whole run.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use threadradar_analysis::panel::Params;
use threadradar_analysis::Window;
use threadradar_lsp::config::Settings;
use threadradar_lsp::figures::Figures;
use threadradar_lsp::handlers;
use threadradar_lsp::host::{Defaults, DiskDocuments, DocRef, FiguresCache, Host};
use threadradar_lsp::mapping::Mapping;
use threadradar_lsp::protocol::{ErrorCode, NavigateResult, ProtocolError};
use threadradar_lsp::runs::{self, LoadedRun, RunEntry};
use threadradar_lsp::text::Document;
use threadradar_profiler::run::ThreadId;
use threadradar_profiler::runfile;

pub struct McpHost {
    /// `.threadradar/runs` of the working directory.
    dir: PathBuf,
    state: Mutex<State>,
    generation: AtomicU64,
    figures: FiguresCache,
    disk: DiskDocuments,
}

#[derive(Default)]
struct State {
    /// The active run and the modification time it was read at (a rewritten run is read again).
    loaded: Option<(Arc<LoadedRun>, Option<std::time::SystemTime>)>,
    filter: Vec<ThreadId>,
    window: Option<Window>,
}

fn mtime(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl McpHost {
    pub fn new(cwd: &Path) -> McpHost {
        McpHost { dir: runfile::runs_dir(cwd), state: Mutex::default(), generation: AtomicU64::new(0), figures: FiguresCache::default(), disk: DiskDocuments::default() }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes `run` (a run file, a directory of runs whose newest is meant, or `None`: the newest
    /// run of the working directory) the active run, reading it unless it is active and unchanged.
    pub fn activate(&self, run: Option<&str>) -> Result<Arc<LoadedRun>, ProtocolError> {
        let path = super::super::runpath::resolve_run_path(run.map(Path::new)).map_err(|e| ProtocolError::new(ErrorCode::NoRun, format!("{e:#}")))?;
        // Absolute, so that the protocol finds it among the directory's runs (`compare`'s default).
        let path = if path.is_relative() { std::env::current_dir().map(|d| d.join(&path)).unwrap_or(path) } else { path };
        let modified = mtime(&path);
        if let Some((loaded, at)) = &self.state().loaded {
            if loaded.path == path && *at == modified {
                return Ok(loaded.clone());
            }
        }
        let r = runfile::read(&path).map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, e.to_string()))?;
        let loaded = Arc::new(LoadedRun::new(self.generation.fetch_add(1, Ordering::SeqCst) + 1, path, r));
        self.figures.clear();
        self.disk.clear();
        *self.state() = State { loaded: Some((loaded.clone(), modified)), filter: Vec::new(), window: None };
        Ok(loaded)
    }

    /// One protocol request, answered by the handlers the panels use.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, ProtocolError> {
        handlers::dispatch(self, method, params)
    }
}

impl Host for McpHost {
    fn active(&self) -> Result<Arc<LoadedRun>, ProtocolError> {
        self.state().loaded.as_ref().map(|(l, _)| l.clone()).ok_or_else(ProtocolError::no_run)
    }

    fn defaults(&self) -> Defaults {
        let s = self.state();
        Defaults { exclude_threads: s.filter.clone(), window: s.window, ..Defaults::default() }
    }

    fn settings(&self) -> Settings {
        Settings::default()
    }

    fn runs(&self) -> (Vec<RunEntry>, bool) {
        let mut list = runs::list_dir(&self.dir);
        // The runs belong to the working directory, as a workspace folder's do in the editor.
        let folder = self.dir.parent().and_then(Path::parent).unwrap_or(&self.dir).to_path_buf();
        list.iter_mut().for_each(|r| r.folder = folder.clone());
        (list, false)
    }

    fn select_run(&self, which: &str) -> Result<(), ProtocolError> {
        let (list, _) = self.runs();
        let found = if which == "newest" || which == "latest" { list.first() } else { list.iter().find(|r| r.path.to_string_lossy() == which || r.name == which) };
        let Some(entry) = found else {
            return Err(ProtocolError::not_found(format!("no run {which} in {}: the run_history tool lists them", self.dir.display())));
        };
        self.activate(Some(&entry.path.to_string_lossy())).map(|_| ())
    }

    fn set_filter(&self, exclude: Vec<ThreadId>) -> Result<(), ProtocolError> {
        self.state().filter = exclude;
        Ok(())
    }

    fn set_window(&self, window: Option<Window>) -> Result<(), ProtocolError> {
        self.state().window = window;
        Ok(())
    }

    fn figures(&self) -> Result<(Arc<LoadedRun>, Arc<Figures>), ProtocolError> {
        let loaded = self.active()?;
        let params = {
            let s = self.state();
            Params { exclude_threads: s.filter.clone(), states: Default::default(), window: s.window }
        };
        let f = self.figures.get(&loaded, &params)?;
        Ok((loaded, f))
    }

    fn document(&self, doc: &DocRef, loaded: &LoadedRun, file_key: &str) -> Option<(Arc<Document>, Arc<Mapping>)> {
        self.disk.get(&doc.path, loaded, file_key)
    }

    fn navigate(&self, file: &str, line: u32) -> Result<NavigateResult, ProtocolError> {
        Err(ProtocolError::new(ErrorCode::Conflict, format!("an MCP client has no editor to show {file}:{line} in: open the file yourself")))
    }
}
