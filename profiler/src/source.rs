//! Mapping lines of Python source to the functions and classes that contain them, with
//! tree-sitter, and fingerprinting source files so that edits made after recording can be detected.
//!
//! This is the one place that knows Python's definition structure; the language server uses the
//! same [`SourceIndex`] on the editor's current buffer text.

use crate::run::FileKind;
use sha2::{Digest, Sha256};

/// What a definition is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DefKind {
    Function,
    Class,
}

/// A `def` or `class` found in a file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Def {
    pub kind: DefKind,
    /// Qualified name as CPython's `__qualname__` spells it: `C.m`, `f.<locals>.g`.
    pub qualname: String,
    /// 1-based line of the `def`/`class` keyword (after any decorators).
    pub line: u32,
    /// 1-based first line of the definition, its decorators included (= `line` without any).
    pub start_line: u32,
    /// 1-based last line of the definition.
    pub end_line: u32,
    /// Index (in [`SourceIndex::defs`]) of the innermost enclosing definition.
    pub parent: Option<usize>,
}

/// The definitions of one file, in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

/// One edit of a text, in bytes and (row, byte column) points, as tree-sitter needs it to reuse
/// the unchanged parts of the previous parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextEdit {
    pub start_byte: usize,
    pub old_end_byte: usize,
    pub new_end_byte: usize,
    pub start: (usize, usize),
    pub old_end: (usize, usize),
    pub new_end: (usize, usize),
}

/// A parse of a text kept in step with its edits: an editor buffer that changes is re-parsed
/// incrementally (the unchanged subtrees are reused) instead of from scratch.
#[derive(Clone)]
pub struct ParsedSource {
    tree: Option<tree_sitter::Tree>,
    /// Edits were applied to the tree since it was parsed: [`reparse`](Self::reparse) before use.
    edited: bool,
}

impl std::fmt::Debug for ParsedSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParsedSource").field("parsed", &self.tree.is_some()).field("edited", &self.edited).finish()
    }
}

fn python_parser() -> Option<tree_sitter::Parser> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_python::LANGUAGE.into()).ok()?;
    Some(parser)
}

impl ParsedSource {
    pub fn parse(text: &str) -> ParsedSource {
        ParsedSource { tree: python_parser().and_then(|mut p| p.parse(text, None)), edited: false }
    }

    /// Records an edit of the text this was parsed from (call for each edit, in order).
    pub fn edit(&mut self, e: &TextEdit) {
        if let Some(tree) = &mut self.tree {
            let point = |(row, column): (usize, usize)| tree_sitter::Point { row, column };
            tree.edit(&tree_sitter::InputEdit {
                start_byte: e.start_byte,
                old_end_byte: e.old_end_byte,
                new_end_byte: e.new_end_byte,
                start_position: point(e.start),
                old_end_position: point(e.old_end),
                new_end_position: point(e.new_end),
            });
            self.edited = true;
        }
    }

    /// Whether edits are waiting for [`reparse`](Self::reparse).
    pub fn is_edited(&self) -> bool {
        self.edited
    }

    /// Parses `text` (the edited text) again, reusing what the edits left unchanged.
    pub fn reparse(&mut self, text: &str) {
        let old = self.tree.take();
        self.tree = python_parser().and_then(|mut p| p.parse(text, old.as_ref()));
        self.edited = false;
    }

    /// The definitions of `text`, which must be the text parsed (after [`reparse`](Self::reparse)
    /// when edited).
    pub fn index(&self, text: &str) -> SourceIndex {
        let mut index = SourceIndex::default();
        if let Some(tree) = &self.tree {
            collect(tree.root_node(), text.as_bytes(), None, &mut index.defs);
        }
        index
    }
}

impl SourceIndex {
    /// Parses Python source. Syntax errors do not stop it: tree-sitter recovers, and every
    /// definition it can still see is indexed.
    pub fn parse(text: &str) -> SourceIndex {
        ParsedSource::parse(text).index(text)
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
            Some(i) => self.resolved(i),
        }
    }

    /// Like [`resolve`](Self::resolve), for a frame of code the interpreter names `runtime_name`
    /// (`co_qualname` or `co_name`): the innermost definition containing the line whose name is
    /// the code's. A line can belong to more than one frame: a class body runs `def __init__` at
    /// the method's first line, the module runs `class C:` at the class's, and neither frame is
    /// the definition that starts there (a module frame sampled at `class WorkerManager:` was
    /// counted as the class, the class body's frame at `def __init__` as the constructor).
    /// Lambdas and comprehensions (`<lambda>`, `<genexpr>`) belong to the definition around
    /// them; a name no containing definition has (the file changed since) falls back to the line.
    pub fn resolve_named(&self, line: u32, runtime_name: &str) -> Resolved {
        let short = runtime_name.rsplit('.').next().unwrap_or(runtime_name);
        if short == "<module>" {
            return Resolved { qualname: "<module>".into(), line: 0, end_line: 0, class: None };
        }
        if short.starts_with('<') {
            return self.resolve(line);
        }
        let mut containing: Vec<usize> = (0..self.defs.len()).filter(|&i| self.defs[i].line <= line && line <= self.defs[i].end_line).collect();
        containing.sort_by_key(|&i| std::cmp::Reverse(self.defs[i].line));
        match containing.into_iter().find(|&i| self.defs[i].qualname.rsplit('.').next() == Some(short)) {
            Some(i) => self.resolved(i),
            None => self.resolve(line),
        }
    }

    fn resolved(&self, i: usize) -> Resolved {
        let d = &self.defs[i];
        let class = if d.kind == DefKind::Class { Some(i) } else { self.enclosing_class(i) };
        Resolved {
            qualname: d.qualname.clone(),
            line: d.line,
            end_line: d.end_line,
            class: class.map(|c| (self.defs[c].qualname.clone(), self.defs[c].line)),
        }
    }

    /// The innermost function and the innermost class containing 1-based `line` (decorators
    /// count as part of their definition), as indices into [`defs`](Self::defs). For a line in a
    /// method the class is the method's class; for a line in a class body outside any method the
    /// function is `None`.
    pub fn enclosing(&self, line: u32) -> (Option<usize>, Option<usize>) {
        let innermost = |kind: DefKind| {
            self.defs
                .iter()
                .enumerate()
                .filter(|(_, d)| d.kind == kind && d.start_line <= line && line <= d.end_line)
                .max_by_key(|(_, d)| d.start_line)
                .map(|(i, _)| i)
        };
        (innermost(DefKind::Function), innermost(DefKind::Class))
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

/// tree-sitter-python's statements that contain no compound statement (so no definition).
const SIMPLE_STATEMENTS: &[&str] = &[
    "expression_statement",
    "return_statement",
    "pass_statement",
    "import_statement",
    "import_from_statement",
    "future_import_statement",
    "assert_statement",
    "raise_statement",
    "delete_statement",
    "global_statement",
    "nonlocal_statement",
    "print_statement",
    "exec_statement",
    "break_statement",
    "continue_statement",
    "type_alias_statement",
    "comment",
];

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
                // A decorated definition starts at its first decorator.
                let start = child.parent().filter(|p| p.kind() == "decorated_definition").unwrap_or(child);
                out.push(Def {
                    kind,
                    qualname,
                    line: child.start_position().row as u32 + 1,
                    start_line: start.start_position().row as u32 + 1,
                    end_line: child.end_position().row as u32 + 1,
                    parent,
                });
                let me = out.len() - 1;
                collect(child, src, Some(me), out);
            }
            // Simple statements cannot hold a `def` or `class`: most of a file's nodes are
            // inside them, and skipping them keeps indexing a large buffer cheap.
            None if SIMPLE_STATEMENTS.contains(&child.kind()) => {}
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
    // .../lib/python3.11/threading.py, .../lib64/python3.9/..., .../Lib/... on Windows builds;
    // free-threaded builds keep theirs in .../lib/python3.13t/.
    path.split('/').collect::<Vec<_>>().windows(2).any(|w| {
        (w[0] == "lib" || w[0] == "lib64" || w[0] == "Lib")
            && w[1].starts_with("python")
            && w[1][6..].trim_end_matches('t').chars().all(|c| c.is_ascii_digit() || c == '.')
    })
}

/// Where the user's own code is, whatever `sys.path` or the path's shape says: the working
/// directory's tree of each sampled process, the script being run, and the pytest rootdir. The
/// standard library's look (`…/lib/python3.11/…`) does not make a file there the standard library.
#[derive(Clone, Debug, Default)]
pub struct UserRoots {
    /// Directories, each ending in `/`.
    dirs: Vec<String>,
    files: Vec<String>,
}

impl UserRoots {
    /// Adds a directory tree. `/` is not added: it would make every file the user's.
    pub fn add_dir(&mut self, dir: &std::path::Path) {
        let mut d = dir.display().to_string();
        if !d.ends_with('/') {
            d.push('/');
        }
        if d != "/" && !self.dirs.contains(&d) {
            self.dirs.push(d);
        }
    }

    pub fn add_file(&mut self, file: &std::path::Path) {
        let f = file.display().to_string();
        if !self.files.contains(&f) {
            self.files.push(f);
        }
    }

    pub fn contains(&self, path: &str) -> bool {
        self.files.iter().any(|f| f == path) || self.dirs.iter().any(|d| path.starts_with(d.as_str()))
    }
}

/// Where a file comes from, given where the user's code is: [`file_kind`], except that the user's
/// roots and CPython's own test suite (`…/lib/python3.X/test/`, which is what a user runs with
/// `python3 -m test …`, not library code) are the user's code. Installed packages stay third-party
/// even inside a root (a virtual environment in the project).
pub fn file_kind_in(path: &str, roots: &UserRoots) -> FileKind {
    match file_kind(path) {
        FileKind::Stdlib if !path.starts_with('<') && (roots.contains(path) || is_cpython_test_suite(path)) => FileKind::User,
        k => k,
    }
}

fn is_cpython_test_suite(path: &str) -> bool {
    path.split('/').collect::<Vec<_>>().windows(3).any(|w| {
        (w[0] == "lib" || w[0] == "lib64" || w[0] == "Lib")
            && w[1].starts_with("python")
            // `python3.11`, and a free-threaded build's `python3.13t`.
            && w[1][6..].trim_end_matches('t').chars().all(|c| c.is_ascii_digit() || c == '.')
            && w[2] == "test"
    })
}

/// The pytest rootdir of a command line run in `cwd`, when it runs pytest: `--rootdir`, else the
/// nearest ancestor of `cwd` with a `pytest.ini`, `pyproject.toml`, `tox.ini` or `setup.cfg`
/// (pytest's own rule, without its finer points), else `cwd`.
pub fn pytest_rootdir(command: &[String], cwd: &std::path::Path) -> Option<std::path::PathBuf> {
    let runs_pytest = command.iter().any(|a| {
        let base = a.rsplit('/').next().unwrap_or(a);
        base == "pytest" || base == "py.test"
    });
    if !runs_pytest {
        return None;
    }
    for (i, a) in command.iter().enumerate() {
        if let Some(d) = a.strip_prefix("--rootdir=") {
            return Some(cwd.join(d));
        }
        if a == "--rootdir" {
            return command.get(i + 1).map(|d| cwd.join(d));
        }
    }
    let found = cwd.ancestors().find(|d| ["pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"].iter().any(|f| d.join(f).is_file()));
    Some(found.unwrap_or(cwd).to_path_buf())
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
    /// Reads, fingerprints and indexes the file at `path`, through the source cache
    /// ([`source_cache_dir`]).
    pub fn load(path: &str) -> FileInfo {
        FileInfo::load_cached(path, source_cache_dir().as_deref())
    }

    /// Like [`FileInfo::load`], with the fingerprint and index of a file that has not changed
    /// since (same size, modification time and inode) taken from `cache` when it holds them, and
    /// stored there when not. Parsing is most of a short recording's cost: a program that starts
    /// up imports a megabyte of the standard library, and every file a sample passes through is
    /// parsed with tree-sitter. The standard library does not change between runs.
    pub fn load_cached(path: &str, cache: Option<&std::path::Path>) -> FileInfo {
        let kind = file_kind(path);
        if path.starts_with('<') {
            return FileInfo { kind, sha256: None, index: None };
        }
        let stamp = std::fs::metadata(path).ok().map(|m| {
            use std::os::unix::fs::MetadataExt;
            (m.len(), m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128, m.ino())
        });
        let entry = match (cache, stamp) {
            (Some(dir), Some(_)) => Some(dir.join(format!("{}.json", &sha256_hex(path.as_bytes())[..32]))),
            _ => None,
        };
        if let (Some(file), Some((size, mtime_ns, ino))) = (&entry, stamp) {
            if let Ok(text) = std::fs::read(file) {
                if let Ok(c) = serde_json::from_slice::<CachedSource>(&text) {
                    if c.version == CACHE_VERSION && c.path == path && c.size == size && c.mtime_ns == mtime_ns && c.ino == ino {
                        return FileInfo { kind, sha256: Some(c.sha256), index: Some(SourceIndex { defs: c.defs }) };
                    }
                }
            }
        }
        match std::fs::read(path) {
            Ok(bytes) => {
                let sha = sha256_hex(&bytes);
                let text = String::from_utf8_lossy(&bytes);
                let index = SourceIndex::parse(&text);
                if let (Some(file), Some((size, mtime_ns, ino))) = (&entry, stamp) {
                    // Only a file that did not change while it was read is worth keeping.
                    if bytes.len() as u64 == size {
                        let c = CachedSource { version: CACHE_VERSION, path: path.to_string(), size, mtime_ns, ino, sha256: sha.clone(), defs: index.defs.clone() };
                        store(file, &c);
                    }
                }
                FileInfo { kind, sha256: Some(sha), index: Some(index) }
            }
            Err(_) => FileInfo { kind, sha256: None, index: None },
        }
    }
}

/// Bumped when [`SourceIndex`] or how it is computed changes: older entries are parsed again.
const CACHE_VERSION: u32 = 1;

/// One file's entry in the source cache.
#[derive(serde::Serialize, serde::Deserialize)]
struct CachedSource {
    version: u32,
    path: String,
    size: u64,
    mtime_ns: i128,
    ino: u64,
    sha256: String,
    defs: Vec<Def>,
}

/// Writes an entry atomically (a temporary file renamed over it), so concurrent recordings never
/// read half an entry; a cache that cannot be written is skipped silently.
fn store(file: &std::path::Path, c: &CachedSource) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(text) = serde_json::to_vec(c) else { return };
    let tmp = dir.join(format!(".{}.{}.tmp", file.file_name().and_then(|n| n.to_str()).unwrap_or("entry"), std::process::id()));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, file).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Where source fingerprints and indexes are cached between recordings:
/// `$THREADRADAR_SOURCE_CACHE` (`off` turns the cache off), else
/// `$XDG_CACHE_HOME/threadradar/sources`, else `~/.cache/threadradar/sources`.
pub fn source_cache_dir() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    match std::env::var_os("THREADRADAR_SOURCE_CACHE") {
        Some(v) if v == "off" || v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("threadradar").join("sources")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The edit that replaces `old[start..end]` with `new_text`.
    fn edit_of(old: &str, start: usize, end: usize, new_text: &str) -> TextEdit {
        let point = |t: &str, at: usize| {
            let before = &t[..at];
            (before.matches('\n').count(), at - before.rfind('\n').map_or(0, |p| p + 1))
        };
        let mut new = old.to_string();
        new.replace_range(start..end, new_text);
        TextEdit {
            start_byte: start,
            old_end_byte: end,
            new_end_byte: start + new_text.len(),
            start: point(old, start),
            old_end: point(old, end),
            new_end: point(&new, start + new_text.len()),
        }
    }

    #[test]
    fn incremental_reparse_finds_what_a_fresh_parse_finds() {
        let mut text = SRC.to_string();
        let mut parsed = ParsedSource::parse(&text);
        let edits: Vec<(usize, usize, &str)> = vec![
            (0, 0, "# a comment\n\n"),
            (text.find("def get_instance").unwrap() + 13, text.find("def get_instance").unwrap() + 16, "instance_of"),
            (text.len(), text.len(), "\nclass Late:\n    def m(self):\n        pass\n"),
            (0, 13, ""),
        ];
        for (start, end, insert) in edits {
            // Offsets after the first edit shift by its length: recompute them on the current text.
            let (start, end) = if start > text.len() { (text.len(), text.len()) } else { (start, end.min(text.len())) };
            let e = edit_of(&text, start, end, insert);
            text.replace_range(start..end, insert);
            parsed.edit(&e);
            assert!(parsed.is_edited());
            parsed.reparse(&text);
            assert_eq!(parsed.index(&text), SourceIndex::parse(&text), "after replacing {start}..{end} with {insert:?}");
        }
        assert!(SourceIndex::parse(&text).defs.iter().any(|d| d.qualname == "Late.m"));
    }

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

    /// A frame's line alone can name the wrong definition: the class body runs `def __init__` at
    /// the method's first line, the module runs `class WorkerManager:` at the class's. The code's
    /// own name decides (bug 1's constructor was counted in the main thread, which only imported
    /// the class).
    #[test]
    fn the_codes_name_decides_between_definitions_on_one_line() {
        let idx = SourceIndex::parse(SRC);
        let q = |line, name| idx.resolve_named(line, name).qualname;
        assert_eq!(q(6, "WorkerManager"), "WorkerManager");
        assert_eq!(q(6, "WorkerManager.__init__"), "WorkerManager.__init__");
        assert_eq!(q(3, "<module>"), "<module>");
        assert_eq!(q(3, "WorkerManager"), "WorkerManager");
        // py-spy's older readers give `co_name` only.
        assert_eq!(q(8, "__init__"), "WorkerManager.__init__");
        assert_eq!(q(9, "helper"), "WorkerManager.__init__.<locals>.helper");
        assert_eq!(q(19, "Inner"), "WorkerManager.Inner");
        // Comprehensions and lambdas belong to their definition; an unknown name (the file
        // changed since) goes by the line.
        assert_eq!(q(24, "<listcomp>"), "main");
        assert_eq!(q(19, "renamed"), "WorkerManager.Inner.m");
        assert_eq!(idx.resolve_named(6, "WorkerManager").class, Some(("WorkerManager".into(), 3)));
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
        assert_eq!(file_kind("/opt/py/3.13t/lib/python3.13t/threading.py"), FileKind::Stdlib, "free-threaded build");
        assert_eq!(file_kind("<string>"), FileKind::Unknown);
        assert_eq!(file_kind("/home/me/app/main.py"), FileKind::User);
        assert_eq!(file_kind("/home/me/python-tools/lib/pythonic/x.py"), FileKind::User);
        let mut roots = UserRoots::default();
        roots.add_dir(std::path::Path::new("/src/cpython"));
        roots.add_dir(std::path::Path::new("/"));
        assert_eq!(file_kind_in("/src/cpython/lib/python3.13/threading.py", &roots), FileKind::User);
        assert_eq!(file_kind_in("/src/cpython/venv/lib/python3.13/site-packages/x.py", &roots), FileKind::ThirdParty);
        assert_eq!(file_kind_in("/usr/lib/python3.11/test/test_queue.py", &roots), FileKind::User);
        assert_eq!(file_kind_in("/opt/py/3.13t/lib/python3.13t/test/test_queue.py", &roots), FileKind::User, "free-threaded build");
        assert_eq!(file_kind_in("/usr/lib/python3.11/threading.py", &roots), FileKind::Stdlib);
        assert_eq!(file_kind_in("<frozen runpy>", &roots), FileKind::Stdlib);
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(pytest_rootdir(&v(&["python3", "app.py"]), std::path::Path::new("/p")), None);
        assert_eq!(pytest_rootdir(&v(&["python3", "-m", "pytest", "--rootdir=r"]), std::path::Path::new("/p")), Some("/p/r".into()));
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn enclosing_handles_decorators_nesting_async_one_liners_and_tabs() {
        let src = "import functools\n\nclass Outer:\n\t@functools.cache\n\t@staticmethod\n\tdef deco(x):\n\t\treturn x\n\n\tclass Inner:\n\t\tasync def go(self):\n\t\t\tawait x\n\n\tattr = 1\n\ndef one(): return 1\n";
        let idx = SourceIndex::parse(src);
        let at = |line: u32| {
            let (f, c) = idx.enclosing(line);
            (f.map(|i| idx.defs[i].qualname.as_str()), c.map(|i| idx.defs[i].qualname.as_str()))
        };
        assert_eq!(at(1), (None, None));
        assert_eq!(at(3), (None, Some("Outer")));
        // Decorators belong to the function they decorate.
        assert_eq!(at(4), (Some("Outer.deco"), Some("Outer")));
        assert_eq!(at(7), (Some("Outer.deco"), Some("Outer")));
        assert_eq!(at(9), (None, Some("Outer.Inner")));
        assert_eq!(at(11), (Some("Outer.Inner.go"), Some("Outer.Inner")));
        assert_eq!(at(13), (None, Some("Outer")));
        assert_eq!(at(15), (Some("one"), None));
    }

    #[test]
    fn the_source_cache_serves_an_unchanged_file_and_notices_an_edit() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let src = dir.path().join("m.py");
        std::fs::write(&src, "class A:\n    def f(self):\n        pass\n").unwrap();
        let path = src.to_str().unwrap();
        let first = FileInfo::load_cached(path, Some(&cache));
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1, "one entry stored");
        // Served from the cache: make the entry distinguishable, then load again.
        let entry = std::fs::read_dir(&cache).unwrap().next().unwrap().unwrap().path();
        let text = std::fs::read_to_string(&entry).unwrap().replace("A.f", "A.cached");
        std::fs::write(&entry, text).unwrap();
        let second = FileInfo::load_cached(path, Some(&cache));
        assert_eq!(second.sha256, first.sha256);
        assert_eq!(second.index.as_ref().unwrap().defs[1].qualname, "A.cached", "the entry was used");
        // An edit (new size and time) is parsed again, and its fingerprint changes.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&src, "class A:\n    def g(self):\n        return 1\n").unwrap();
        let third = FileInfo::load_cached(path, Some(&cache));
        assert_ne!(third.sha256, first.sha256);
        assert_eq!(third.index.as_ref().unwrap().defs[1].qualname, "A.g");
        // Without a cache nothing is stored and the file is parsed.
        assert_eq!(FileInfo::load_cached(path, None).index, third.index);
    }
}
