//! Where the run's declarations are in the code as it is now.
//!
//! When the text's sha256 equals the one recorded, the recorded definition lines hold. Otherwise
//! the text is parsed with the profiler's [`SourceIndex`] (the one place that knows Python's
//! definitions) and each declaration is looked up by kind and qualified name, the nearest to its
//! recorded line winning among equal names. A declaration that is no longer there is *stale*: it
//! is reported as such, never placed on a line it may not be on.

use crate::runs::{Decl, RunFile};
use std::collections::HashMap;
use threadradar_analysis::ArtifactKind;
use threadradar_profiler::source::{sha256_hex, DefKind, SourceIndex};

/// The current 0-based line of each declaration of a file, `None` when stale.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapping {
    lines: HashMap<Decl, Option<u32>>,
    /// The text is the recorded one.
    pub unchanged: bool,
}

impl Mapping {
    pub fn map(file: &RunFile, text: &str) -> Mapping {
        Mapping::map_with(file, text, || SourceIndex::parse(text))
    }

    /// Like [`map`](Self::map), with the definitions of `text` from `index` (e.g. an incremental
    /// parse of an editor buffer), asked for only when the text is not the recorded one.
    pub fn map_with(file: &RunFile, text: &str, index: impl FnOnce() -> SourceIndex) -> Mapping {
        let unchanged = file.sha256.as_deref().is_some_and(|sha| sha == sha256_hex(text.as_bytes()));
        if unchanged {
            let lines = file.decls.iter().map(|d| (d.clone(), Some(d.line - 1))).collect();
            return Mapping { lines, unchanged };
        }
        let index = index();
        let lines = file
            .decls
            .iter()
            .map(|d| {
                let kind = match d.kind {
                    ArtifactKind::Class => DefKind::Class,
                    _ => DefKind::Function,
                };
                let found = index
                    .defs
                    .iter()
                    .filter(|def| def.kind == kind && def.qualname == d.qualname)
                    .min_by_key(|def| def.line.abs_diff(d.line))
                    .map(|def| def.line - 1);
                (d.clone(), found)
            })
            .collect();
        Mapping { lines, unchanged }
    }

    /// The current line of a recorded declaration: `Some(Some(l))` placed, `Some(None)` stale,
    /// `None` when the file has no such declaration in the run.
    pub fn line(&self, kind: ArtifactKind, qualname: &str, recorded_line: u32) -> Option<Option<u32>> {
        self.lines.get(&Decl { kind, qualname: qualname.to_string(), line: recorded_line }).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "class W:\n    def run(self):\n        pass\n\ndef main():\n    W().run()\n";

    fn file(sha: Option<String>) -> RunFile {
        let d = |kind, q: &str, line| Decl { kind, qualname: q.into(), line };
        RunFile {
            path: "/w/a.py".into(),
            sha256: sha,
            decls: vec![d(ArtifactKind::Class, "W", 1), d(ArtifactKind::Function, "W.run", 2), d(ArtifactKind::Function, "main", 5)],
        }
    }

    #[test]
    fn same_text_keeps_lines_edits_move_them_and_missing_is_stale() {
        let f = file(Some(sha256_hex(SRC.as_bytes())));
        let m = Mapping::map(&f, SRC);
        assert!(m.unchanged);
        assert_eq!(m.line(ArtifactKind::Function, "W.run", 2), Some(Some(1)));

        let edited = format!("import os\n\n{SRC}");
        let m = Mapping::map(&f, &edited);
        assert!(!m.unchanged);
        assert_eq!(m.line(ArtifactKind::Class, "W", 1), Some(Some(2)));
        assert_eq!(m.line(ArtifactKind::Function, "main", 5), Some(Some(6)));

        let renamed = SRC.replace("def main", "def start");
        let m = Mapping::map(&f, &renamed);
        assert_eq!(m.line(ArtifactKind::Function, "main", 5), Some(None));
        assert_eq!(m.line(ArtifactKind::Function, "nope", 5), None);
        // No recorded hash: always re-resolved.
        assert_eq!(Mapping::map(&file(None), SRC).line(ArtifactKind::Function, "W.run", 2), Some(Some(1)));
    }
}

