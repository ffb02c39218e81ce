//! The run history of a runs directory: labels and pins in a small index beside the runs
//! (`.threadradar/runs.json` for the default `.threadradar/runs/`), pruning old runs, and the
//! facts a run list shows (test, outcome, duration, threads, date), read once per file version.
//!
//! The index is JSON: `{"runs": {"<file name>": {"label": "before the fix", "pinned": true}}}`.
//! Runs without an entry have no label and are not pinned; entries of deleted runs are dropped
//! when the index is next written.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use threadradar_profiler::run::TestRun;
use threadradar_profiler::runfile;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pinned: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    #[serde(default)]
    pub runs: BTreeMap<String, Entry>,
}

/// The index file of a runs directory: `runs.json` beside a directory named `runs`, else
/// `.runs.json` inside it (run listings skip dot files).
pub fn index_path(runs_dir: &Path) -> PathBuf {
    match (runs_dir.file_name(), runs_dir.parent()) {
        (Some(n), Some(parent)) if n == "runs" => parent.join("runs.json"),
        _ => runs_dir.join(".runs.json"),
    }
}

impl Index {
    /// The index of a runs directory; a missing one is empty, an unreadable one an error.
    pub fn load(runs_dir: &Path) -> Result<Index, String> {
        let p = index_path(runs_dir);
        match std::fs::read(&p) {
            Ok(b) => {
                serde_json::from_slice(&b).map_err(|e| format!("{} is not a run index ({e}): fix or delete it (it only holds labels and pins)", p.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Index::default()),
            Err(e) => Err(format!("cannot read {}: {e}", p.display())),
        }
    }

    /// Writes it atomically, without entries of runs that no longer exist.
    pub fn save(&mut self, runs_dir: &Path) -> Result<(), String> {
        self.runs.retain(|name, e| runs_dir.join(name).exists() && (e.label.is_some() || e.pinned));
        let p = index_path(runs_dir);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        }
        let tmp = p.with_extension("json.tmp");
        let body = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(&tmp, body).and_then(|_| std::fs::rename(&tmp, &p)).map_err(|e| format!("cannot write {}: {e}", p.display()))
    }

    pub fn get(&self, name: &str) -> Entry {
        self.runs.get(name).cloned().unwrap_or_default()
    }
}

/// The run file a user names: a path, a file name in the runs directory, or `latest`/`newest`.
pub fn find_run(runs_dir: &Path, wanted: &str) -> Result<PathBuf, String> {
    let all = runfile::list_runs(runs_dir).unwrap_or_default();
    if wanted == "latest" || wanted == "newest" {
        return all.into_iter().next().ok_or_else(|| format!("there are no runs in {}", runs_dir.display()));
    }
    let p = Path::new(wanted);
    if let Some(hit) = all.iter().find(|r| r.as_path() == p || r.file_name().is_some_and(|n| n == wanted)) {
        return Ok(hit.clone());
    }
    if p.is_file() && p.parent().map(|d| d.canonicalize().ok() == runs_dir.canonicalize().ok()).unwrap_or(false) {
        return Ok(p.to_path_buf());
    }
    Err(format!("no run {wanted:?} in {}: `threadradar runs list` lists them", runs_dir.display()))
}

fn name_of(run: &Path) -> String {
    run.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Sets (or with `None` removes) a run's label.
pub fn set_label(runs_dir: &Path, run: &Path, label: Option<&str>) -> Result<(), String> {
    let mut idx = Index::load(runs_dir)?;
    let e = idx.runs.entry(name_of(run)).or_default();
    e.label = label.map(str::trim).filter(|l| !l.is_empty()).map(String::from);
    idx.save(runs_dir)
}

/// Pins or unpins a run: a pinned run is never pruned.
pub fn set_pinned(runs_dir: &Path, run: &Path, pinned: bool) -> Result<(), String> {
    let mut idx = Index::load(runs_dir)?;
    idx.runs.entry(name_of(run)).or_default().pinned = pinned;
    idx.save(runs_dir)
}

/// Deletes a run file (and its index entry).
pub fn remove(runs_dir: &Path, run: &Path) -> Result<(), String> {
    match std::fs::remove_file(run) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot delete {}: {e}", run.display())),
    }
    let mut idx = Index::load(runs_dir).unwrap_or_default();
    idx.runs.remove(&name_of(run));
    idx.save(runs_dir)
}

/// Deletes the oldest runs beyond the newest `keep` that have neither a label nor a pin;
/// returns the deleted paths, oldest last.
pub fn prune(runs_dir: &Path, keep: usize) -> Result<Vec<PathBuf>, String> {
    let idx = Index::load(runs_dir)?;
    let all = runfile::list_runs(runs_dir).map_err(|e| format!("cannot list {}: {e}", runs_dir.display()))?;
    let mut removed = Vec::new();
    for run in all
        .into_iter()
        .filter(|r| {
            let e = idx.get(&name_of(r));
            e.label.is_none() && !e.pinned
        })
        .skip(keep)
    {
        std::fs::remove_file(&run).map_err(|e| format!("cannot delete {}: {e}", run.display()))?;
        removed.push(run);
    }
    Ok(removed)
}

/// What a run list shows of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Facts {
    pub command: Vec<String>,
    pub start_unix_ms: u64,
    pub duration_s: f64,
    pub threads: usize,
    pub samples: u64,
    pub test: Option<TestRun>,
    pub partial: bool,
}

/// A run's facts, read once per (path, size, modification time) in this process; `None` when the
/// file cannot be read as a run.
pub fn facts(path: &Path) -> Option<Arc<Facts>> {
    type Cache = Mutex<HashMap<PathBuf, ((u64, u128), Option<Arc<Facts>>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let meta = std::fs::metadata(path).ok()?;
    let version = (meta.len(), meta.modified().ok().and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos()));
    let cache = CACHE.get_or_init(Default::default);
    if let Some((v, f)) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
        if *v == version {
            return f.clone();
        }
    }
    let f = runfile::read(path).ok().map(|run| {
        Arc::new(Facts {
            command: run.meta.command.clone(),
            start_unix_ms: run.meta.start_unix_ms,
            duration_s: run.meta.duration_s,
            threads: run.threads.len(),
            samples: run.meta.sample_count,
            test: run.meta.test.clone(),
            partial: run.meta.partial,
        })
    });
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(path.to_path_buf(), (version, f.clone()));
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_pins_and_pruning_keep_what_the_user_marked() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join(".threadradar/runs");
        std::fs::create_dir_all(&runs).unwrap();
        let names: Vec<String> = (0..5).map(|i| format!("2026010{i}T000000Z-t.json")).collect();
        for n in &names {
            std::fs::write(runs.join(n), "{}").unwrap();
        }
        assert_eq!(index_path(&runs), dir.path().join(".threadradar/runs.json"));
        set_label(&runs, &runs.join(&names[0]), Some("before the fix")).unwrap();
        set_pinned(&runs, &runs.join(&names[1]), true).unwrap();
        let removed = prune(&runs, 2).unwrap();
        // Newest first: 4 and 3 are kept by count, 1 and 0 by pin and label; 2 goes.
        assert_eq!(removed, vec![runs.join(&names[2])]);
        let idx = Index::load(&runs).unwrap();
        assert_eq!(idx.get(&names[0]).label.as_deref(), Some("before the fix"));
        assert!(idx.get(&names[1]).pinned);
        assert_eq!(find_run(&runs, "latest").unwrap(), runs.join(&names[4]));
        assert!(find_run(&runs, "nope.json").unwrap_err().contains("threadradar runs list"));
        remove(&runs, &runs.join(&names[0])).unwrap();
        assert!(Index::load(&runs).unwrap().runs.get(&names[0]).is_none());
        std::fs::write(index_path(&runs), "not json").unwrap();
        assert!(Index::load(&runs).unwrap_err().contains("is not a run index"));
    }
}
