//! Saved views of the Sections panel (CSI's annotations, issue 18): a selection — a critical
//! section, optionally one of its executions or a thread — with the user's note, kept in a small
//! file beside the runs (`.threadradar/views.json` for the default `.threadradar/runs/`) so that it
//! can be reopened on another run of the same program.
//!
//! A view names its section by **file, function and lock** (and the entry line as recorded, to
//! choose between several sections of one lock in one function), never by its index or by its
//! line alone: the next run of an edited program has the section on another line. [`find`] says
//! which section of a run a view means, or that the run has none.
//!
//! The file is JSON, `{"views": [{"id", "note", "created_unix_ms", "run", "section": {"file",
//! "function", "lock", "line"}, "thread"?, "execution"?: {"index", "start_s", "duration_s"}}]}`.
//! A missing file holds no views; an unreadable one is an error sentence, never a partial list.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use threadradar_analysis::sections::SectionFigures;
use ts_rs::TS;

/// Which section a view means: file, function and lock identify it across runs; `line` (the entry
/// line when it was saved) only chooses among several sections of the same lock in one function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct SectionRef {
    pub file: String,
    pub function: String,
    pub lock: String,
    pub line: u32,
}

impl SectionRef {
    pub fn of(s: &SectionFigures) -> SectionRef {
        SectionRef {
            file: s.file.clone(),
            function: s.function.clone(),
            lock: s.lock.clone(),
            line: s.line,
        }
    }
}

/// One execution of the saved section, as it was in the run the view was saved on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct SavedExecution {
    /// Index into the section's executions in that run (time order).
    pub index: u32,
    /// Seconds since that run's start.
    pub start_s: f64,
    pub duration_s: f64,
}

/// A saved view as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct SavedView {
    pub id: String,
    pub note: String,
    pub created_unix_ms: u64,
    /// The file name of the run it was saved on.
    pub run: String,
    pub section: SectionRef,
    /// A thread (by name: thread ids differ between runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub thread: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub execution: Option<SavedExecution>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewsFile {
    #[serde(default)]
    pub views: Vec<SavedView>,
}

/// The views file of a runs directory: `views.json` beside a directory named `runs` (so
/// `.threadradar/views.json`), else `.views.json` inside it (run listings skip dot files).
pub fn views_path(runs_dir: &Path) -> PathBuf {
    match (runs_dir.file_name(), runs_dir.parent()) {
        (Some(n), Some(parent)) if n == "runs" => parent.join("views.json"),
        _ => runs_dir.join(".views.json"),
    }
}

impl ViewsFile {
    /// The saved views of a runs directory; a missing file is empty, an unreadable one an error.
    pub fn load(runs_dir: &Path) -> Result<ViewsFile, String> {
        let p = views_path(runs_dir);
        match std::fs::read(&p) {
            Ok(b) => serde_json::from_slice(&b).map_err(|e| {
                format!(
                    "{} is not a saved-views file ({e}): fix it or delete it (it only holds the Sections panel's saved views)",
                    p.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ViewsFile::default()),
            Err(e) => Err(format!("cannot read {}: {e}", p.display())),
        }
    }

    /// Writes it atomically (temporary file + rename).
    pub fn save(&self, runs_dir: &Path) -> Result<(), String> {
        let p = views_path(runs_dir);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        }
        let tmp = p.with_extension("json.tmp");
        let body = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(&tmp, body)
            .and_then(|_| std::fs::rename(&tmp, &p))
            .map_err(|e| format!("cannot write {}: {e}", p.display()))
    }

    /// A new id: the creation time in hex, made unique within the file.
    pub fn new_id(&self, created_unix_ms: u64) -> String {
        let base = format!("{created_unix_ms:x}");
        let mut id = base.clone();
        let mut n = 1;
        while self.views.iter().any(|v| v.id == id) {
            n += 1;
            id = format!("{base}-{n}");
        }
        id
    }
}

/// The section of `sections` (one run's) that `r` means: the same file, function and lock; among
/// several, the one entered on the same line, else the nearest. `None`: this run has no such
/// section (the code changed, or it is another program).
pub fn find(sections: &[SectionFigures], r: &SectionRef) -> Option<usize> {
    sections
        .iter()
        .enumerate()
        .filter(|(_, s)| s.file == r.file && s.function == r.function && s.lock == r.lock)
        .min_by_key(|(i, s)| (s.line.abs_diff(r.line), *i))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(function: &str, lock: &str, line: u32) -> SectionFigures {
        SectionFigures {
            file: "/p/a.py".into(),
            function: function.into(),
            line,
            body_start: line + 1,
            end_line: line + 3,
            lock: lock.into(),
            lock_type: None,
            kind: threadradar_analysis::sections::SectionKind::With,
            found: threadradar_analysis::sections::SectionKind::With.how_found().into(),
            executions: vec![],
            outliers: vec![],
            short: Default::default(),
            histogram: Default::default(),
            execution_count: 0,
            total_hold_s: 0.0,
            median_s: 0.0,
            p95_s: 0.0,
            p99_s: 0.0,
            max_s: 0.0,
            mean_s: 0.0,
            cv: 0.0,
            waited_share: 0.0,
            others_waited_s: 0.0,
            outlier_threshold_s: 0.0,
            nested_in: vec![],
            lock_objects: vec![],
        }
    }

    #[test]
    fn a_view_finds_its_section_by_name_not_by_line() {
        let secs = [section("f", "L", 10), section("g", "L", 20), section("g", "L", 40), section("g", "M", 22)];
        let r = |function: &str, lock: &str, line| SectionRef {
            file: "/p/a.py".into(),
            function: function.into(),
            lock: lock.into(),
            line,
        };
        // Moved by 3 lines: still found.
        assert_eq!(find(&secs, &r("f", "L", 7)), Some(0));
        // Two sections of lock L in g: the nearer one to the saved line.
        assert_eq!(find(&secs, &r("g", "L", 23)), Some(1));
        assert_eq!(find(&secs, &r("g", "L", 38)), Some(2));
        // Same line, other lock: not that section.
        assert_eq!(find(&secs, &r("g", "M", 40)), Some(3));
        assert_eq!(find(&secs, &r("h", "L", 10)), None);
        assert_eq!(
            find(
                &secs,
                &SectionRef {
                    file: "/q/a.py".into(),
                    ..r("f", "L", 10)
                }
            ),
            None
        );
    }

    #[test]
    fn storage_round_trips_and_a_bad_file_is_one_sentence() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join(".threadradar/runs");
        assert_eq!(views_path(&runs), dir.path().join(".threadradar/views.json"));
        assert_eq!(views_path(dir.path()), dir.path().join(".views.json"));
        assert_eq!(ViewsFile::load(&runs).unwrap(), ViewsFile::default());
        let mut f = ViewsFile::default();
        let id = f.new_id(1000);
        f.views.push(SavedView {
            id: id.clone(),
            note: "slow when the cache is cold".into(),
            created_unix_ms: 1000,
            run: "r.json".into(),
            section: SectionRef {
                file: "/p/a.py".into(),
                function: "f".into(),
                lock: "L".into(),
                line: 3,
            },
            thread: Some("worker-1".into()),
            execution: Some(SavedExecution {
                index: 4,
                start_s: 1.5,
                duration_s: 0.04,
            }),
        });
        assert_ne!(f.new_id(1000), id);
        f.save(&runs).unwrap();
        assert_eq!(ViewsFile::load(&runs).unwrap(), f);
        std::fs::write(views_path(&runs), "{\"views\": [1]}").unwrap();
        let e = ViewsFile::load(&runs).unwrap_err();
        assert!(e.contains("is not a saved-views file") && e.contains("delete it") && !e.contains('\n'), "{e}");
    }
}
