//! Runs in the workspace: every `.threadradar/runs/*.json` under the workspace folders, newest
//! first, and the loaded run with what the editor features need from it that does not depend on
//! the thread filter (the files and their declarations as recorded).

use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use threadradar_analysis::timeline::index::TimelineIndex;
use threadradar_analysis::timeline::TimelineError;
use std::time::SystemTime;
use threadradar_analysis::panel::Panels;
use threadradar_analysis::{ArtifactKind, Artifacts};
use threadradar_profiler::runfile::{self, RunFileError};
use threadradar_profiler::Run;

/// One run file found in a workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunEntry {
    pub path: PathBuf,
    /// The file name, e.g. `20250101T120000Z-buggy.json`.
    pub name: String,
    /// The workspace folder whose runs directory holds it.
    pub folder: PathBuf,
    pub modified_unix_ms: u64,
    pub size: u64,
}

/// The runs of all workspace folders, newest first (by the UTC time their name starts with, then
/// by modification time: [`runfile::run_order`]).
pub fn list(folders: &[PathBuf]) -> Vec<RunEntry> {
    list_with(folders, &crate::project::Overrides::default())
}

/// [`list`] with the editor's settings: its `runsDir` (relative to each folder), else
/// `[tool.threadradar] runs-dir` when the project sets one (issue 19), else `.threadradar/runs`.
/// A directory that several folders share is listed once.
pub fn list_with(folders: &[PathBuf], overrides: &crate::project::Overrides) -> Vec<RunEntry> {
    let mut all = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for folder in folders {
        let dir = crate::project::folder_runs_dir(folder, overrides);
        if !seen.insert(dir.clone()) {
            continue;
        }
        all.extend(list_dir(&dir).into_iter().map(|r| RunEntry { folder: folder.clone(), ..r }));
    }
    sort_newest_first(&mut all);
    all
}

/// The runs of one runs directory (e.g. the one `threadradar serve` shows), newest first.
pub fn list_dir(dir: &Path) -> Vec<RunEntry> {
    let mut all = Vec::new();
    let Ok(paths) = runfile::list_runs(dir) else { return all };
    // A run set's manifest (`record --repeat N`) lists runs, it is not one: its runs are listed
    // themselves, and loading it as a run would fail.
    for path in paths.into_iter().filter(|p| !threadradar_profiler::runset::is_runset(p)) {
        let meta = std::fs::metadata(&path).ok();
        let modified = meta.as_ref().and_then(|m| m.modified().ok()).unwrap_or(SystemTime::UNIX_EPOCH);
        all.push(RunEntry {
            name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            modified_unix_ms: modified.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
            size: meta.map_or(0, |m| m.len()),
            folder: dir.to_path_buf(),
            path,
        });
    }
    sort_newest_first(&mut all);
    all
}

fn sort_newest_first(all: &mut [RunEntry]) {
    all.sort_by_cached_key(|r| std::cmp::Reverse(runfile::run_order(&r.name, SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(r.modified_unix_ms))));
}

/// Whether a run file that failed to load may still be in the middle of being written (so it is
/// worth trying again when it changes) rather than broken for good.
pub fn may_be_incomplete(e: &RunFileError) -> bool {
    matches!(e, RunFileError::Empty(_) | RunFileError::Truncated { .. } | RunFileError::Io { .. } | RunFileError::NotFound(_))
}

/// A declaration of the run in one file: what the mapping looks for in the current text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decl {
    pub kind: ArtifactKind,
    pub qualname: String,
    /// The recorded 1-based line of the `def` / `class` keyword.
    pub line: u32,
}

/// One source file of the run, with its declarations as recorded.
#[derive(Clone, Debug)]
pub struct RunFile {
    /// The path as the run stores it.
    pub path: String,
    pub sha256: Option<String>,
    pub decls: Vec<Decl>,
}

/// A loaded, validated run.
pub struct LoadedRun {
    /// Increases with every run loaded in this server: caches keyed by it never mix runs.
    pub generation: u64,
    pub path: PathBuf,
    pub panels: Arc<Panels>,
    /// By the path the run stores.
    pub files: HashMap<String, RunFile>,
    /// Canonical path on disk → the run's path, for files whose run path is spelled differently.
    aliases: HashMap<PathBuf, String>,
    /// The timeline's index, built on first use.
    timeline: OnceLock<Result<Arc<TimelineIndex>, TimelineError>>,
}

impl LoadedRun {
    pub fn new(generation: u64, path: PathBuf, run: Run) -> LoadedRun {
        let run = Arc::new(run);
        let artifacts = Artifacts::new(&run);
        let mut files: HashMap<String, RunFile> = HashMap::new();
        for (i, f) in run.files.iter().enumerate() {
            let p = absolute(&run, run.str(f.path));
            files.insert(p.clone(), RunFile { path: p, sha256: f.sha256.clone(), decls: Vec::new() });
            let _ = i;
        }
        for kind in [ArtifactKind::Function, ArtifactKind::Class] {
            for id in artifacts.ids(kind) {
                let Some(a) = artifacts.describe(&run, id) else { continue };
                if a.line == 0 {
                    continue;
                }
                if let Some(f) = files.get_mut(&absolute(&run, a.file)) {
                    let d = Decl { kind, qualname: a.qualname.to_string(), line: a.line };
                    if !f.decls.contains(&d) {
                        f.decls.push(d);
                    }
                }
            }
        }
        let mut aliases = HashMap::new();
        for p in files.keys() {
            if p.starts_with('<') {
                continue;
            }
            if let Ok(c) = std::fs::canonicalize(p) {
                if c.as_os_str() != p.as_str() {
                    aliases.insert(c, p.clone());
                }
            }
        }
        LoadedRun { generation, path, panels: Arc::new(Panels::new(run)), files, aliases, timeline: OnceLock::new() }
    }

    pub fn run(&self) -> &Run {
        self.panels.run()
    }

    /// The run's timeline index (built once, by the first request that needs it).
    pub fn timeline(&self) -> Result<Arc<TimelineIndex>, TimelineError> {
        self.timeline.get_or_init(|| TimelineIndex::new(self.run()).map(Arc::new)).clone()
    }

    /// The run's name for a file on disk, if the run has it.
    pub fn file_key(&self, path: &Path) -> Option<&str> {
        let s = path.to_str()?;
        if let Some((k, _)) = self.files.get_key_value(s) {
            return Some(k.as_str());
        }
        if let Some(k) = self.aliases.get(path) {
            return Some(k.as_str());
        }
        let c = std::fs::canonicalize(path).ok()?;
        self.aliases.get(&c).map(|s| s.as_str()).or_else(|| self.files.get_key_value(c.to_str()?).map(|(k, _)| k.as_str()))
    }
}

/// A run's file path made absolute against the recording's working directory (CPython reports
/// absolute paths for scripts since 3.9; older ones may not).
pub fn absolute(run: &Run, path: &str) -> String {
    if path.starts_with('/') || path.starts_with('<') || run.meta.cwd.is_empty() {
        path.to_string()
    } else {
        Path::new(&run.meta.cwd).join(path).display().to_string()
    }
}
