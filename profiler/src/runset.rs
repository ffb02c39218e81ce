//! Run sets: N runs of one program (`threadradar record --repeat N`) named by a small JSON
//! manifest (`docs/run-format.md`, "Run sets"), or given as a list of runs. One reader for the
//! command line, `serve` and the language server, so that a set means the same everywhere.

use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The value of the `format` field of a run set's manifest.
pub const FORMAT: &str = "threadradar-runset";

/// A run set's manifest: a label and the run files (relative to the manifest's directory when
/// they are in it).
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    pub label: String,
    pub command: Vec<String>,
    pub runs: Vec<String>,
}

/// A run set as read: its label and the paths of its runs (at least one).
#[derive(Debug, Clone, PartialEq)]
pub struct RunSet {
    pub label: String,
    pub runs: Vec<PathBuf>,
}

/// Why a run set could not be read or written; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum RunSetError {
    #[error("cannot read the run set {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a valid run set ({detail}): record it again with `threadradar record --repeat N -- …`")]
    Invalid { path: PathBuf, detail: String },
    #[error("{path} is a run set of version {found}, which this threadradar cannot read: update threadradar")]
    Version { path: PathBuf, found: u32 },
    #[error("the run set {0} lists no runs: record it again with `threadradar record --repeat N -- …`")]
    Empty(PathBuf),
    #[error("the run set {set} lists {run}, which does not exist: record the set again, or edit its \"runs\"")]
    Missing { set: PathBuf, run: PathBuf },
    #[error("cannot write the run set {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

/// Whether `path` is a run set's manifest: `"format": "threadradar-runset"` in its first 512 bytes.
pub fn is_runset(path: &Path) -> bool {
    let Ok(mut f) = std::fs::File::open(path) else { return false };
    let mut head = [0u8; 512];
    let n = f.read(&mut head).unwrap_or(0);
    String::from_utf8_lossy(&head[..n]).contains(FORMAT)
}

/// The run set at `path`, or `None` when the file is not a run set (a run file, say).
pub fn read(path: &Path) -> Result<Option<RunSet>, RunSetError> {
    if !is_runset(path) {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).map_err(|source| RunSetError::Io { path: path.into(), source })?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| RunSetError::Invalid { path: path.into(), detail: e.to_string() })?;
    if m.format != FORMAT || m.version != 1 {
        return Err(RunSetError::Version { path: path.into(), found: m.version });
    }
    if m.runs.is_empty() {
        return Err(RunSetError::Empty(path.into()));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut runs = Vec::with_capacity(m.runs.len());
    for r in &m.runs {
        let p = dir.join(r);
        if !p.exists() {
            return Err(RunSetError::Missing { set: path.into(), run: p });
        }
        runs.push(p);
    }
    Ok(Some(RunSet { label: m.label, runs }))
}

/// The runs `path` stands for: a run set's runs, or the run itself.
pub fn members(path: &Path) -> Result<Vec<PathBuf>, RunSetError> {
    Ok(read(path)?.map_or_else(|| vec![path.to_path_buf()], |s| s.runs))
}

/// A side of a comparison as written on a command line: a run, a run set's manifest, or several
/// of them separated by commas (`a.json,b.json`), which form one set. A path that exists is never
/// split, so a file name with a comma still works.
pub fn split_list(arg: &Path) -> Vec<PathBuf> {
    let text = arg.to_string_lossy();
    if arg.exists() || !text.contains(',') {
        return vec![arg.to_path_buf()];
    }
    text.split(',').filter(|s| !s.is_empty()).map(PathBuf::from).collect()
}

/// Writes the manifest of a run set at `path` (atomically: a temporary file, then a rename).
pub fn write(path: &Path, label: &str, command: &[String], runs: &[PathBuf]) -> Result<(), RunSetError> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let runs = runs
        .iter()
        .map(|r| match r.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")) {
            p if p == dir => r.file_name().unwrap_or_default().to_string_lossy().into_owned(),
            _ => r.display().to_string(),
        })
        .collect();
    let m = Manifest { format: FORMAT.into(), version: 1, label: label.into(), command: command.to_vec(), runs };
    let tmp = path.with_extension("json.tmp");
    let bytes = serde_json::to_vec_pretty(&m).map_err(|e| RunSetError::Write { path: path.into(), source: e.into() })?;
    std::fs::write(&tmp, bytes).map_err(|source| RunSetError::Write { path: tmp.clone(), source })?;
    std::fs::rename(&tmp, path).map_err(|source| RunSetError::Write { path: path.into(), source })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_is_read_back_with_its_runs_beside_it() {
        let dir = std::env::temp_dir().join(format!("threadradar-runset-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let runs: Vec<PathBuf> = (1..=2).map(|i| dir.join(format!("r-{i}.json"))).collect();
        for r in &runs {
            std::fs::write(r, "{}").unwrap();
        }
        let m = dir.join("r.json");
        write(&m, "r", &["python3".into()], &runs).unwrap();
        assert_eq!(read(&m).unwrap(), Some(RunSet { label: "r".into(), runs: runs.clone() }));
        assert_eq!(members(&runs[0]).unwrap(), vec![runs[0].clone()]);
        std::fs::remove_file(&runs[1]).unwrap();
        assert!(read(&m).unwrap_err().to_string().contains("does not exist"));
        std::fs::write(&m, format!(r#"{{"format":"{FORMAT}","version":1,"label":"x","command":[],"runs":[]}}"#)).unwrap();
        assert!(matches!(read(&m), Err(RunSetError::Empty(_))));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_comma_list_is_split_unless_the_path_exists() {
        assert_eq!(split_list(Path::new("/nonexistent/a.json,/nonexistent/b.json")).len(), 2);
        assert_eq!(split_list(Path::new("/nonexistent/a.json")).len(), 1);
    }
}
