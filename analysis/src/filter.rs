//! Artifact filters of the overview (paper §4.2.1): include / exclude patterns and hiding the
//! standard library or third-party code. Unlike the thread filter these only choose what is
//! listed; the metrics stay the same.

use crate::artifact::Artifact;
use crate::error::AnalysisError;
use regex::Regex;
use threadradar_profiler::run::FileKind;

/// Which artifacts a view lists.
#[derive(Clone, Debug, Default)]
pub struct ArtifactFilter {
    include: Vec<Regex>,
    exclude: Vec<Regex>,
    hidden: Vec<FileKind>,
}

impl ArtifactFilter {
    /// Lists everything.
    pub fn all() -> Self {
        ArtifactFilter::default()
    }

    /// Keeps artifacts whose qualified name or file path matches one of `include` (all when
    /// empty) and none of `exclude`.
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self, AnalysisError> {
        let compile = |which, p: &String| {
            Regex::new(p).map_err(|e| AnalysisError::BadPattern { which, pattern: p.clone(), detail: last_line(&e.to_string()) })
        };
        Ok(ArtifactFilter {
            include: include.iter().map(|p| compile("--include", p)).collect::<Result<_, _>>()?,
            exclude: exclude.iter().map(|p| compile("--exclude", p)).collect::<Result<_, _>>()?,
            hidden: Vec::new(),
        })
    }

    /// Also hides artifacts in files of this kind (for "exclude standard library / third-party").
    pub fn hide(mut self, kind: FileKind) -> Self {
        if !self.hidden.contains(&kind) {
            self.hidden.push(kind);
        }
        self
    }

    pub fn keeps(&self, a: &Artifact) -> bool {
        if self.hidden.contains(&a.file_kind) {
            return false;
        }
        let hit = |r: &Regex| r.is_match(a.qualname) || r.is_match(a.file);
        (self.include.is_empty() || self.include.iter().any(hit)) && !self.exclude.iter().any(hit)
    }
}

/// Regex errors are multi-line pictures; the last line says what is wrong.
fn last_line(s: &str) -> String {
    s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(s).trim().trim_start_matches("error: ").to_string()
}
