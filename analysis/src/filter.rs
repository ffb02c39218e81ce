//! Artifact filters of the overview (paper §4.2.1): include / exclude patterns and hiding the
//! standard library or third-party code. Unlike the thread filter these only choose what is
//! listed; the metrics stay the same.

use crate::artifact::Artifact;
use crate::error::AnalysisError;
use regex::Regex;
use serde::{Deserialize, Serialize};
use ts_rs::TS;
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

/// The artifact filter as every surface spells it: `--include`, `--exclude`, `--no-stdlib` and
/// `--no-third-party` on the command line; `include`, `exclude`, `hide_stdlib` and
/// `hide_third_party` in the panels' and the language server's parameters.
///
/// The one default everywhere: everything is listed, the standard library and third-party code
/// included (the paper's overview offers "exclude" checkboxes, unchecked at first). A thread's
/// `threading` bootstrap is then visible, which is honest: that code ran.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default)]
pub struct FilterSpec {
    /// Only list artifacts whose qualified name or file path matches REGEX (repeatable: any).
    #[cfg_attr(feature = "clap", arg(long, value_name = "REGEX"))]
    pub include: Vec<String>,
    /// Do not list artifacts whose qualified name or file path matches REGEX (repeatable).
    #[cfg_attr(feature = "clap", arg(long, value_name = "REGEX"))]
    pub exclude: Vec<String>,
    /// Do not list standard-library code.
    #[cfg_attr(feature = "clap", arg(long = "no-stdlib"))]
    pub hide_stdlib: bool,
    /// Do not list third-party code (site-packages).
    #[cfg_attr(feature = "clap", arg(long = "no-third-party"))]
    pub hide_third_party: bool,
}

impl FilterSpec {
    /// The filter this spec describes; a bad pattern is one sentence.
    pub fn build(&self) -> Result<ArtifactFilter, AnalysisError> {
        let mut f = ArtifactFilter::new(&self.include, &self.exclude)?;
        if self.hide_stdlib {
            f = f.hide(FileKind::Stdlib);
        }
        if self.hide_third_party {
            f = f.hide(FileKind::ThirdParty);
        }
        Ok(f)
    }
}

/// Regex errors are multi-line pictures; the last line says what is wrong.
fn last_line(s: &str) -> String {
    s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(s).trim().trim_start_matches("error: ").to_string()
}
