//! What a transport gives the protocol's handlers: the workspace's runs, the active run, the
//! global thread filter, documents. The language server ([`crate::server`]) and
//! `threadradar serve` each implement [`Host`]; the handlers ([`crate::handlers`]) are written
//! once against it.
//!
//! Host methods are synchronous and may block (reading a run, parsing a file): the language
//! server calls the dispatcher on tokio's blocking pool, never on the protocol thread.

use crate::config::Settings;
use crate::figures::Figures;
use crate::mapping::Mapping;
use crate::protocol::{NavigateResult, ProtocolError};
use crate::runs::{LoadedRun, RunEntry};
use crate::text::Document;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use threadradar_analysis::glyph::Theme;
use threadradar_analysis::panel::Params;
use threadradar_analysis::{CountedStates, Window};
use threadradar_profiler::run::ThreadId;

/// What a request leaves out is taken from here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Defaults {
    /// The global thread filter.
    pub exclude_threads: Vec<ThreadId>,
    pub states: CountedStates,
    pub theme: Theme,
    /// The global time window (seconds of the active run); `None`: the whole run.
    pub window: Option<Window>,
    /// The project's `[tool.threadradar] include`/`exclude`: which artifacts the overview lists
    /// when a request names no pattern of its own.
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl Defaults {
    pub fn params(&self) -> Params {
        Params { exclude_threads: self.exclude_threads.clone(), states: self.states, window: self.window }
    }
}

/// A document named by a request: its path, and the editor's URI when it came as one (so the
/// host can use the open buffer instead of the file on disk).
#[derive(Clone, Debug)]
pub struct DocRef {
    pub path: PathBuf,
    pub uri: Option<String>,
}

pub trait Host: Send + Sync {
    /// The active run.
    fn active(&self) -> Result<Arc<LoadedRun>, ProtocolError>;
    /// The global thread filter, the counted states and the glyph theme.
    fn defaults(&self) -> Defaults;
    /// What hints and documents show (labels, minimum crt, classes).
    fn settings(&self) -> Settings;
    /// The runs, newest first, and whether the user chose the active one.
    fn runs(&self) -> (Vec<RunEntry>, bool);
    /// Makes a run (path or file name; `newest` follows new runs again) the active one.
    fn select_run(&self, which: &str) -> Result<(), ProtocolError>;
    /// Sets the global thread filter (validated against the active run by the caller).
    fn set_filter(&self, exclude: Vec<ThreadId>) -> Result<(), ProtocolError>;
    /// Sets the global time window (validated against the active run by the caller); `None`
    /// clears it.
    fn set_window(&self, window: Option<Window>) -> Result<(), ProtocolError>;
    /// The active run's figures under the defaults.
    fn figures(&self) -> Result<(Arc<LoadedRun>, Arc<Figures>), ProtocolError>;
    /// The current text of a document (an open buffer, else the file on disk) and where the
    /// run's declarations of `file_key` are in it.
    fn document(&self, doc: &DocRef, loaded: &LoadedRun, file_key: &str) -> Option<(Arc<Document>, Arc<Mapping>)>;
    /// Shows a file at a 1-based line.
    fn navigate(&self, file: &str, line: u32) -> Result<NavigateResult, ProtocolError>;
    /// The run a `threadradar serve RUN --compare RUN_B` was given as B: the Trace compare tab
    /// compares the active run (A) with it when a request names neither side. `None` elsewhere.
    fn compare_with(&self) -> Option<PathBuf> {
        None
    }
}

/// Figures per (run generation, parameters), shared by every request of a host.
#[derive(Default)]
pub struct FiguresCache {
    entries: Mutex<Vec<Arc<Figures>>>,
}

impl FiguresCache {
    pub fn get(&self, loaded: &LoadedRun, params: &Params) -> Result<Arc<Figures>, ProtocolError> {
        let cached = self.lock().iter().find(|f| f.generation == loaded.generation && f.params == *params).cloned();
        if let Some(f) = cached {
            return Ok(f);
        }
        let f = Arc::new(Figures::build(loaded, params)?);
        let mut e = self.lock();
        e.retain(|x| x.generation == loaded.generation);
        if e.len() >= 8 {
            e.remove(0);
        }
        e.push(f.clone());
        Ok(f)
    }

    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Keeps figures computed elsewhere (e.g. while a run was loaded).
    pub fn insert(&self, f: Arc<Figures>) {
        self.lock().push(f);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Figures>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Files on disk (not open in an editor), read and mapped once per (run, modification time).
#[derive(Default)]
pub struct DiskDocuments {
    entries: Mutex<HashMap<PathBuf, (u64, u64, Arc<Document>, Arc<Mapping>)>>,
}

impl DiskDocuments {
    pub fn get(&self, path: &Path, loaded: &LoadedRun, file_key: &str) -> Option<(Arc<Document>, Arc<Mapping>)> {
        let run_file = loaded.files.get(file_key)?;
        let mtime = std::fs::metadata(path).ok()?.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as u64;
        if let Some((g, t, d, m)) = self.lock().get(path) {
            if *g == loaded.generation && *t == mtime {
                return Some((d.clone(), m.clone()));
            }
        }
        let text = std::fs::read_to_string(path).ok()?;
        let doc = Arc::new(Document::new(0, text));
        let m = Arc::new(Mapping::map(run_file, doc.text()));
        self.lock().insert(path.to_path_buf(), (loaded.generation, mtime, doc.clone(), m.clone()));
        Some((doc, m))
    }

    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, (u64, u64, Arc<Document>, Arc<Mapping>)>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}
