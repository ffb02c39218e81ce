//! Mapping lines of Python source to the functions and classes that contain them, with
//! tree-sitter, and fingerprinting source files so that edits made after recording can be detected.
//!
//! This is the one place that knows Python's definition structure; the language server uses the
//! same [`SourceIndex`] on the editor's current buffer text.

use crate::run::FileKind;
use sha2::{Digest, Sha256};

/// What a definition is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefKind {
    Function,
    Class,
}

/// A `def` or `class` found in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Def {
    pub kind: DefKind,
    /// Qualified name as CPython's `__qualname__` spells it: `C.m`, `f.<locals>.g`.
    pub qualname: String,
    /// 1-based line of the `def`/`class` keyword (after any decorators).
    pub line: u32,
    /// 1-based last line of the definition.
    pub end_line: u32,
    /// Index (in [`SourceIndex::defs`]) of the innermost enclosing definition.
    pub parent: Option<usize>,
}

/// The definitions of one file, in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceIndex {
    pub defs: Vec<Def>,
}

/// Where a line of code belongs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Qualified name of the innermost function containing the line; the class's name for code in
    /// a class body outside any method; `<module>` for module-level code.
    pub qualname: String,
    /// Definition line (0 for `<module>`).
    pub line: u32,
    pub end_line: u32,
    /// The innermost class lexically enclosing the function, with its line.
    pub class: Option<(String, u32)>,
}

impl SourceIndex {
    /// Parses Python source. Syntax errors do not stop it: tree-sitter recovers, and every
    /// definition it can still see is indexed.
    pub fn parse(text: &str) -> SourceIndex {
        let mut parser = tree_sitter::Parser::new();
        if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
            return SourceIndex::default();
        }
        let Some(tree) = parser.parse(text, None) else {
            return SourceIndex::default();
        };
        let mut index = SourceIndex::default();
        let src = text.as_bytes();
        collect(tree.root_node(), src, None, &mut index.defs);
        index
    }

    /// The function (or class body, or module) that line `line` (1-based) belongs to.
    pub fn resolve(&self, line: u32) -> Resolved {
        // The innermost definition containing the line is the containing one that starts last.
        let innermost = self
            .defs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.line <= line && line <= d.end_line)
            .max_by_key(|(_, d)| d.line)
            .map(|(i, _)| i);
        match innermost {
            None => Resolved { qualname: "<module>".into(), line: 0, end_line: 0, class: None },
            Some(i) => {
                let d = &self.defs[i];
                let class = if d.kind == DefKind::Class { Some(i) } else { self.enclosing_class(i) };
                Resolved {
                    qualname: d.qualname.clone(),
                    line: d.line,
                    end_line: d.end_line,
                    class: class.map(|c| (self.defs[c].qualname.clone(), self.defs[c].line)),
                }
            }
        }
    }

    /// The definition with this qualified name, preferring the one nearest `near_line`.
    pub fn find(&self, qualname: &str, near_line: u32) -> Option<&Def> {
        self.defs.iter().filter(|d| d.qualname == qualname).min_by_key(|d| d.line.abs_diff(near_line))
    }

    fn enclosing_class(&self, mut i: usize) -> Option<usize> {
        while let Some(p) = self.defs[i].parent {
            if self.defs[p].kind == DefKind::Class {
                return Some(p);
            }
            i = p;
        }
        None
    }
}

fn collect(node: tree_sitter::Node, src: &[u8], parent: Option<usize>, out: &mut Vec<Def>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let kind = match child.kind() {
            "function_definition" => Some(DefKind::Function),
            "class_definition" => Some(DefKind::Class),
            _ => None,
        };
        match kind {
            Some(kind) => {
                let name = child
                    .child_by_field_name("name")
                    .and_then(|n| n.utf8_text(src).ok())
                    .unwrap_or("<anonymous>")
                    .to_string();
                let qualname = match parent.map(|p| &out[p]) {
                    None => name,
                    Some(p) if p.kind == DefKind::Class => format!("{}.{}", p.qualname, name),
                    Some(p) => format!("{}.<locals>.{}", p.qualname, name),
                };
                out.push(Def {
                    kind,
                    qualname,
                    line: child.start_position().row as u32 + 1,
                    end_line: child.end_position().row as u32 + 1,
                    parent,
                });
                let me = out.len() - 1;
                collect(child, src, Some(me), out);
            }
            None => collect(child, src, parent, out),
        }
    }
}

/// Lower-case hex sha256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest.iter() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Where a file comes from, judged by its path.
pub fn file_kind(path: &str) -> FileKind {
    if path.starts_with("<frozen ") {
        FileKind::Stdlib
    } else if path.starts_with('<') || path.is_empty() {
        FileKind::Unknown
    } else if path.contains("/site-packages/") || path.contains("/dist-packages/") {
        FileKind::ThirdParty
    } else if is_stdlib_path(path) {
        FileKind::Stdlib
    } else {
        FileKind::User
    }
}

fn is_stdlib_path(path: &str) -> bool {
    // .../lib/python3.11/threading.py, .../lib64/python3.9/..., .../Lib/... on Windows builds.
    path.split('/').collect::<Vec<_>>().windows(2).any(|w| {
        (w[0] == "lib" || w[0] == "lib64" || w[0] == "Lib") && w[1].starts_with("python") && w[1][6..].chars().all(|c| c.is_ascii_digit() || c == '.')
    })
}

/// What was learnt about a source file when it was first seen.
#[derive(Clone, Debug, Default)]
pub struct FileInfo {
    pub kind: FileKind,
    pub sha256: Option<String>,
    /// `None` when the file could not be read (e.g. `<string>`, a deleted file).
    pub index: Option<SourceIndex>,
}

impl FileInfo {
    /// Reads, fingerprints and indexes the file at `path`.
    pub fn load(path: &str) -> FileInfo {
        let kind = file_kind(path);
        if path.starts_with('<') {
            return FileInfo { kind, sha256: None, index: None };
        }
        match std::fs::read(path) {
            Ok(bytes) => {
                let sha = sha256_hex(&bytes);
                let text = String::from_utf8_lossy(&bytes);
                FileInfo { kind, sha256: Some(sha), index: Some(SourceIndex::parse(&text)) }
            }
            Err(_) => FileInfo { kind, sha256: None, index: None },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"import threading

class WorkerManager:
    _instance = None

    def __init__(self):
        self.workers = set()
        def helper():
            return 1
        helper()

    @classmethod
    def get_instance(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    class Inner:
        def m(self):
            pass


def main():
    w = [x for x in range(3)]
    class Local:
        def go(self):
            pass
    return w

main()
"#;

    #[test]
    fn qualnames_follow_python() {
        let idx = SourceIndex::parse(SRC);
        let names: Vec<_> = idx.defs.iter().map(|d| (d.qualname.as_str(), d.line)).collect();
        assert_eq!(
            names,
            [
                ("WorkerManager", 3),
                ("WorkerManager.__init__", 6),
                ("WorkerManager.__init__.<locals>.helper", 8),
                ("WorkerManager.get_instance", 13),
                ("WorkerManager.Inner", 18),
                ("WorkerManager.Inner.m", 19),
                ("main", 23),
                ("main.<locals>.Local", 25),
                ("main.<locals>.Local.go", 26),
            ]
        );
    }

    #[test]
    fn lines_resolve_to_innermost_function_and_class() {
        let idx = SourceIndex::parse(SRC);
        let r = idx.resolve(15);
        assert_eq!((r.qualname.as_str(), r.line), ("WorkerManager.get_instance", 13));
        assert_eq!(r.class, Some(("WorkerManager".into(), 3)));
        let r = idx.resolve(9);
        assert_eq!(r.qualname, "WorkerManager.__init__.<locals>.helper");
        assert_eq!(r.class, Some(("WorkerManager".into(), 3)));
        assert_eq!(idx.resolve(20).class, Some(("WorkerManager.Inner".into(), 18)));
        // A comprehension belongs to its def; module code to <module>; class body to the class.
        assert_eq!(idx.resolve(24).qualname, "main");
        assert_eq!(idx.resolve(30).qualname, "<module>");
        assert_eq!(idx.resolve(4).qualname, "WorkerManager");
        assert_eq!(idx.resolve(27).class, Some(("main.<locals>.Local".into(), 25)));
        assert_eq!(idx.find("main", 0).map(|d| d.line), Some(23));
    }

    #[test]
    fn broken_source_still_indexes_what_it_can() {
        let idx = SourceIndex::parse("def ok():\n    pass\n\ndef broken(:\n    pass\n");
        assert!(idx.defs.iter().any(|d| d.qualname == "ok"));
    }

    #[test]
    fn kinds_by_path() {
        assert_eq!(file_kind("/usr/lib/python3.11/threading.py"), FileKind::Stdlib);
        assert_eq!(file_kind("/root/.pyenv/versions/3.11.7/lib/python3.11/queue.py"), FileKind::Stdlib);
        assert_eq!(file_kind("/usr/lib/python3/dist-packages/x.py"), FileKind::ThirdParty);
        assert_eq!(file_kind("/v/lib/python3.11/site-packages/pytest/main.py"), FileKind::ThirdParty);
        assert_eq!(file_kind("<frozen importlib._bootstrap>"), FileKind::Stdlib);
        assert_eq!(file_kind("<string>"), FileKind::Unknown);
        assert_eq!(file_kind("/home/me/app/main.py"), FileKind::User);
        assert_eq!(file_kind("/home/me/python-tools/lib/pythonic/x.py"), FileKind::User);
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
