//! Source roots: where the files of a run are on this machine when the program saw them
//! elsewhere — a program in a container or a chroot records `/w/app.py`, the editor has
//! `/home/me/proj/app.py`. `report`, `serve` and the language server apply them to a run right
//! after reading it ([`SourceRoots::apply`]), so every view, mapping and hash check sees the
//! host's paths. Given as `--source-root CONTAINER_PATH=HOST_PATH` (repeatable) or
//! `[tool.threadradar] source-roots`; the longest matching prefix wins, by whole path components.

use crate::run::{Run, StrId};
use std::path::Path;

/// Prefix pairs (as the program saw it → as this machine has it), longest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceRoots {
    pairs: Vec<(String, String)>,
}

/// `/w/` → `/w`; `/` stays.
fn trim(p: &str) -> String {
    let t = p.trim_end_matches('/');
    if t.is_empty() && p.starts_with('/') {
        "/".into()
    } else {
        t.to_string()
    }
}

impl SourceRoots {
    /// From (program path, host path) pairs; a later pair with the same program path replaces an
    /// earlier one.
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> SourceRoots {
        let mut out: Vec<(String, String)> = Vec::new();
        for (from, to) in pairs {
            let (from, to) = (trim(&from), trim(&to));
            out.retain(|(f, _)| *f != from);
            out.push((from, to));
        }
        out.sort_by(|a, b| b.0.len().cmp(&a.0.len()));
        SourceRoots { pairs: out }
    }

    /// One `CONTAINER_PATH=HOST_PATH`; a relative host path is taken from `base`. The sentence
    /// for a bad one says what is wanted.
    pub fn parse_spec(spec: &str, base: &Path) -> Result<(String, String), String> {
        let example = "e.g. /app=/home/me/project";
        let Some((from, to)) = spec.split_once('=') else {
            return Err(format!("source root {spec:?} has no `=`: write CONTAINER_PATH=HOST_PATH, {example}"));
        };
        let (from, to) = (from.trim(), to.trim());
        if !from.starts_with('/') {
            return Err(format!("source root {spec:?}: the path before `=` is where the program saw its files and must be absolute, {example}"));
        }
        if to.is_empty() {
            return Err(format!("source root {spec:?}: the path after `=` (where the files are here) is empty, {example}"));
        }
        let to = if to.starts_with('/') { to.to_string() } else { base.join(to).display().to_string() };
        Ok((from.to_string(), to))
    }

    /// Every spec of `specs`, parsed with [`SourceRoots::parse_spec`].
    pub fn parse(specs: &[String], base: &Path) -> Result<SourceRoots, String> {
        Ok(SourceRoots::new(specs.iter().map(|s| SourceRoots::parse_spec(s, base)).collect::<Result<Vec<_>, _>>()?))
    }

    /// These roots with `over`'s added; for the same program path, `over`'s wins.
    pub fn with(&self, over: &SourceRoots) -> SourceRoots {
        SourceRoots::new(self.pairs.iter().chain(&over.pairs).cloned())
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// `path` under the longest matching root, `None` when none matches. A root matches a path
    /// that is it or lies below it (`/w` matches `/w/app.py`, not `/work/app.py`).
    pub fn map(&self, path: &str) -> Option<String> {
        self.pairs.iter().find_map(|(from, to)| {
            let rest = if from == "/" {
                path.strip_prefix('/').map(|r| if r.is_empty() { "" } else { r })?
            } else {
                let rest = path.strip_prefix(from.as_str())?;
                if !(rest.is_empty() || rest.starts_with('/')) {
                    return None;
                }
                rest.trim_start_matches('/')
            };
            Some(if rest.is_empty() { to.clone() } else { format!("{}/{rest}", to.trim_end_matches('/')) })
        })
    }

    /// Rewrites the paths of `run`'s source files (and its working directory, against which
    /// relative ones are taken) as this machine has them; returns how many files moved.
    pub fn apply(&self, run: &mut Run) -> usize {
        if self.is_empty() {
            return 0;
        }
        if let Some(cwd) = self.map(&run.meta.cwd) {
            run.meta.cwd = cwd;
        }
        let mut moved = 0;
        for i in 0..run.files.len() {
            let Some(mapped) = self.map(run.str(run.files[i].path)) else { continue };
            // A new string: the old one may name something else too (a descriptor's target).
            run.strings.push(mapped);
            run.files[i].path = (run.strings.len() - 1) as StrId;
            moved += 1;
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(pairs: &[(&str, &str)]) -> SourceRoots {
        SourceRoots::new(pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())))
    }

    #[test]
    fn the_longest_root_wins_by_whole_components() {
        let r = roots(&[("/w", "/home/me/proj"), ("/w/lib/", "/opt/lib"), ("/", "/srv/root")]);
        assert_eq!(r.map("/w/app.py").as_deref(), Some("/home/me/proj/app.py"));
        assert_eq!(r.map("/w/lib/x.py").as_deref(), Some("/opt/lib/x.py"));
        assert_eq!(r.map("/w").as_deref(), Some("/home/me/proj"));
        assert_eq!(r.map("/work/app.py").as_deref(), Some("/srv/root/work/app.py"), "/w is no prefix of /work");
        assert_eq!(roots(&[("/w", "/h")]).map("/work/app.py"), None);
        assert_eq!(roots(&[("/w", "/h")]).map("<string>"), None);
        // The same program path twice: the later one.
        assert_eq!(roots(&[("/w", "/a"), ("/w/", "/b")]).map("/w/x.py").as_deref(), Some("/b/x.py"));
        assert_eq!(roots(&[("/w", "/a")]).with(&roots(&[("/w", "/c")])).map("/w/x.py").as_deref(), Some("/c/x.py"));
    }

    #[test]
    fn specs_are_checked_with_a_sentence() {
        let base = Path::new("/home/me");
        assert_eq!(SourceRoots::parse_spec("/w=proj", base), Ok(("/w".into(), "/home/me/proj".into())));
        assert_eq!(SourceRoots::parse_spec(" /w = /h ", base), Ok(("/w".into(), "/h".into())));
        assert!(SourceRoots::parse_spec("/w", base).unwrap_err().contains("has no `=`"));
        assert!(SourceRoots::parse_spec("w=/h", base).unwrap_err().contains("must be absolute"));
        assert!(SourceRoots::parse_spec("/w=", base).unwrap_err().contains("is empty"));
    }

    #[test]
    fn a_run_s_files_and_working_directory_move() {
        let mut run = Run::new(Default::default());
        run.meta.cwd = "/w".into();
        run.strings = vec!["/w/app.py".into(), "/usr/lib/python3.11/threading.py".into()];
        for p in [0, 1] {
            run.files.push(crate::run::SourceFile { path: p, sha256: None, kind: crate::run::FileKind::User });
        }
        assert_eq!(roots(&[("/w", "/home/me/proj")]).apply(&mut run), 1);
        assert_eq!(run.str(run.files[0].path), "/home/me/proj/app.py");
        assert_eq!(run.str(run.files[1].path), "/usr/lib/python3.11/threading.py");
        assert_eq!(run.strings[0], "/w/app.py", "the old string is left to whatever else names it");
        assert_eq!(run.meta.cwd, "/home/me/proj");
        run.validate().unwrap();
    }
}
