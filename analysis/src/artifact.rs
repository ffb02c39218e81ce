//! Source-code artifacts: the units the metrics are computed for (paper §2.1, spec §1).
//!
//! A run's `functions` table already holds the function level with its identity
//! (file + qualified name + `def` line). Classes are derived from [`Function::class`]
//! (file + class qualified name), files are the run's `files` table, and the program is the whole
//! run. Nothing here looks at samples: this is the static side of the artifact model.

use serde::{Deserialize, Serialize};
use ts_rs::TS;
use std::collections::HashMap;
use threadradar_profiler::run::{FileId, FileKind, Function, FunctionId, Run, StrId};

/// The four levels of abstraction the paper computes metrics at. Defined once for `report
/// --level`, `compare --level` and the `level` parameter of the panels and the language server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum Level {
    #[default]
    Function,
    Class,
    File,
    Program,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::Function, Level::Class, Level::File, Level::Program];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Function => "function",
            Level::Class => "class",
            Level::File => "file",
            Level::Program => "program",
        }
    }

    /// The artifact kind at this level; `None` for the program, which is not a list of artifacts.
    pub fn kind(self) -> Option<ArtifactKind> {
        match self {
            Level::Function => Some(ArtifactKind::Function),
            Level::Class => Some(ArtifactKind::Class),
            Level::File => Some(ArtifactKind::File),
            Level::Program => None,
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Level {
    type Err = crate::error::AnalysisError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Level::ALL.into_iter().find(|l| l.as_str() == s).ok_or_else(|| crate::error::AnalysisError::BadValue {
            what: "level",
            value: s.to_string(),
            expected: "function, class, file or program",
        })
    }
}

/// What kind of source-code artifact an [`ArtifactId`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactKind {
    Function,
    Class,
    File,
}

impl ArtifactKind {
    /// All kinds, in level order.
    pub const ALL: [ArtifactKind; 3] = [ArtifactKind::Function, ArtifactKind::Class, ArtifactKind::File];

    pub(crate) fn slot(self) -> usize {
        self as usize
    }
}

/// Names one artifact of one [`Artifacts`] table: for functions `index` is the run's
/// [`FunctionId`], for files its [`FileId`], for classes an index into [`Artifacts::classes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArtifactId {
    pub kind: ArtifactKind,
    pub index: u32,
}

impl ArtifactId {
    pub fn function(f: FunctionId) -> Self {
        ArtifactId { kind: ArtifactKind::Function, index: f }
    }
    pub fn class(c: u32) -> Self {
        ArtifactId { kind: ArtifactKind::Class, index: c }
    }
    pub fn file(f: FileId) -> Self {
        ArtifactId { kind: ArtifactKind::File, index: f }
    }
}

/// A class: identified by its file and its qualified name (`Outer.Inner`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    pub file: FileId,
    pub qualname: StrId,
    /// Line of the `class` keyword, 0 when unknown.
    pub line: u32,
}

/// A resolved description of one artifact, for display and matching across runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact<'r> {
    pub id: ArtifactId,
    /// Short name: `run`, `Worker`, `worker.py`.
    pub name: &'r str,
    /// Qualified name: `Worker.run`, `Worker`; the path for a file.
    pub qualname: &'r str,
    /// Path of the file the artifact is in (the file itself for a file artifact).
    pub file: &'r str,
    /// Line of the declaration (`def`, `class`); 0 for files and unknown lines.
    pub line: u32,
    /// Whether the file is the program's own code, the standard library or third-party.
    pub file_kind: FileKind,
}

/// The static artifact tables of one run, with the mappings from a function to its class and file
/// that the metrics need for every stack frame.
#[derive(Clone, Debug)]
pub struct Artifacts {
    classes: Vec<Class>,
    /// For each function: its class index, or `u32::MAX` when it is not in a class.
    class_of: Vec<u32>,
    n_functions: usize,
    n_files: usize,
}

pub(crate) const NONE: u32 = u32::MAX;

impl Artifacts {
    /// Derives the class table from the run's functions. The run must be valid
    /// ([`Run::validate`]); [`crate::Analysis::new`] checks that.
    pub fn new(run: &Run) -> Artifacts {
        let mut by_key: HashMap<(FileId, StrId), u32> = HashMap::new();
        let mut classes: Vec<Class> = Vec::new();
        let class_of = run
            .functions
            .iter()
            .map(|f: &Function| match f.class {
                None => NONE,
                Some(c) => {
                    let idx = *by_key.entry((f.file, c)).or_insert_with(|| {
                        classes.push(Class { file: f.file, qualname: c, line: 0 });
                        (classes.len() - 1) as u32
                    });
                    let class = &mut classes[idx as usize];
                    if class.line == 0 {
                        class.line = f.class_line;
                    }
                    idx
                }
            })
            .collect();
        Artifacts { classes, class_of, n_functions: run.functions.len(), n_files: run.files.len() }
    }

    /// Number of artifacts of a kind.
    pub fn count(&self, kind: ArtifactKind) -> usize {
        match kind {
            ArtifactKind::Function => self.n_functions,
            ArtifactKind::Class => self.classes.len(),
            ArtifactKind::File => self.n_files,
        }
    }

    /// Every artifact of a kind, in table order.
    pub fn ids(&self, kind: ArtifactKind) -> impl Iterator<Item = ArtifactId> {
        (0..self.count(kind) as u32).map(move |index| ArtifactId { kind, index })
    }

    pub fn classes(&self) -> &[Class] {
        &self.classes
    }

    /// The class a function is defined in, if any.
    pub fn class_of(&self, f: FunctionId) -> Option<u32> {
        self.class_of.get(f as usize).copied().filter(|&c| c != NONE)
    }

    pub(crate) fn class_of_raw(&self) -> &[u32] {
        &self.class_of
    }

    /// Resolves an id to names and a location. Returns `None` for an id out of range.
    pub fn describe<'r>(&self, run: &'r Run, id: ArtifactId) -> Option<Artifact<'r>> {
        let i = id.index as usize;
        let file_of = |f: FileId| run.files.get(f as usize);
        match id.kind {
            ArtifactKind::Function => {
                let f = run.functions.get(i)?;
                let file = file_of(f.file)?;
                Some(Artifact {
                    id,
                    name: run.strings.get(f.name as usize)?,
                    qualname: run.strings.get(f.qualname as usize)?,
                    file: run.strings.get(file.path as usize)?,
                    line: f.line,
                    file_kind: file.kind,
                })
            }
            ArtifactKind::Class => {
                let c = self.classes.get(i)?;
                let file = file_of(c.file)?;
                let qualname: &str = run.strings.get(c.qualname as usize)?;
                Some(Artifact {
                    id,
                    name: qualname.rsplit('.').next().unwrap_or(qualname),
                    qualname,
                    file: run.strings.get(file.path as usize)?,
                    line: c.line,
                    file_kind: file.kind,
                })
            }
            ArtifactKind::File => {
                let file = file_of(id.index)?;
                let path: &str = run.strings.get(file.path as usize)?;
                Some(Artifact {
                    id,
                    name: path.rsplit('/').next().unwrap_or(path),
                    qualname: path,
                    file: path,
                    line: 0,
                    file_kind: file.kind,
                })
            }
        }
    }
}
