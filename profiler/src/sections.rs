//! Critical sections of Python source: code that runs while a thread holds a lock.
//!
//! The [`Section`] type is plain data (no feature needed), so that `analysis` can take the
//! discovered set as input. Discovery itself ([`discover`], feature `source`) reads a file's
//! syntax with tree-sitter — the rules are in `docs/sections.md`:
//!
//! - the body of `with X:` when `X` is a lock: a name or attribute assigned from a call to
//!   `Lock`, `RLock`, `Condition`, `Semaphore` or `BoundedSemaphore` anywhere in the file
//!   (`self._lock = threading.Lock()`, `lock = Lock()`), or named like one (`lock`, `_rlock`,
//!   `write_lock`, `mutex`, `cond`, `cv`, `sem`, … — a parameter `lock` is the usual case);
//! - the lines after `X.acquire()` up to the first later `X.release()` in the same function;
//! - the body of a function decorated with one of the project's `synchronized` decorators;
//! - lines listed in the project's configuration (`critical-sections`).
//!
//! A section's `line` is where a thread waits to enter it (the `with`, the `acquire()`, the `def`),
//! its body `body_start..=end_line` is where the thread holds the lock.

use serde::{Deserialize, Serialize};

/// How a section was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum SectionKind {
    /// `with X:` on a lock.
    With,
    /// `X.acquire()` … `X.release()` in one function.
    AcquireRelease,
    /// A function decorated with a configured `synchronized` decorator.
    Decorated,
    /// Listed in the project's `critical_sections`.
    Configured,
    /// `with X:` whose `X` the source does not show to be a lock (made by a factory, passed in,
    /// taken from a dict), found because the run recorded threads waiting there on a `Lock`,
    /// `RLock`, `Condition`, `Semaphore` or `BoundedSemaphore` object.
    FromWaits,
}

impl SectionKind {
    /// How the section was found, in the views' words.
    pub fn how_found(self) -> &'static str {
        match self {
            SectionKind::With => "`with` on a lock named in the source",
            SectionKind::AcquireRelease => "`acquire()` … `release()` in the source",
            SectionKind::Decorated => "a function with a configured synchronized decorator",
            SectionKind::Configured => "listed in [tool.threadradar] critical_sections",
            SectionKind::FromWaits => "from the recorded waits: threads slept entering this `with`, on a lock the source does not name",
        }
    }
}

/// A lock object the run recorded threads waiting on at one line: what turns a `with X:` the
/// source cannot type into a section ([`SectionKind::FromWaits`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedLock {
    /// As Python names the type: `Lock`, `RLock`, `Condition`, `Semaphore`, `BoundedSemaphore`.
    pub lock_type: String,
    /// Its address in the profiled process.
    pub address: u64,
    /// The name the waiting line uses for it (`self._guard`, `locks["a"]`), when the recorder
    /// could read one.
    pub name: Option<String>,
}

/// The type of a recorded lock whose object the recorder could not read, only that a thread slept
/// in `futex` entering it from the program's own line: one of the two locks CPython implements in C.
pub const C_LEVEL_LOCK: &str = "Lock or RLock";

/// `threading`'s name for a recorded lock object's type (`_thread.lock` → `Lock`,
/// `threading.Condition` → `Condition`), or `None` when it is not a lock type.
pub fn lock_type_of_recorded(type_name: &str) -> Option<&'static str> {
    match type_name.rsplit('.').next().unwrap_or(type_name) {
        "lock" | "Lock" => Some("Lock"),
        "RLock" | "_RLock" => Some("RLock"),
        "Condition" => Some("Condition"),
        "Semaphore" => Some("Semaphore"),
        "BoundedSemaphore" => Some("BoundedSemaphore"),
        _ => None,
    }
}

/// One critical section of one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Section {
    /// The file's path, as the run records it.
    pub file: String,
    /// Qualified name of the function the section is in (`<module>` outside any `def`).
    pub function: String,
    /// Line of that function's `def` (0 for `<module>`).
    pub function_line: u32,
    /// 1-based line where a thread waits to enter: the `with`, the `acquire()`, the `def`.
    pub line: u32,
    /// First line of the body (held).
    pub body_start: u32,
    /// Last line of the body (held).
    pub end_line: u32,
    /// The lock as the source names it, qualified by class for attributes of `self`
    /// (`SharedCounter._lock`), or `unnamed (<expression>)` when the source gives no name.
    pub lock: String,
    /// Sections with the same key wait on the same lock (for contention): the lock's name, or for
    /// an unnamed lock the section's own place (`file:line`).
    pub lock_key: String,
    /// The lock's type when an assignment in the file shows it (`Lock`, `RLock`, `Condition`, …).
    pub lock_type: Option<String>,
    pub kind: SectionKind,
}

/// The project's settings for sections, from its configuration (`crate::config`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SectionConfig {
    /// Decorators that make a function a critical section: `mymod.synchronized`. A decorator
    /// matches by its full dotted name or by its last part (`@synchronized` after
    /// `from mymod import synchronized`).
    pub synchronized: Vec<String>,
    /// Extra sections: a file (relative to the project root, or absolute) and a line.
    pub extra: Vec<ConfiguredSection>,
}

/// `{file = "app/cache.py", line = 40, end-line = 52, lock = "cache guard"}`: when `line` is a
/// `with` or a `def`, the section is its body and `end-line` may be left out; otherwise the body
/// is `line + 1 ..= end-line`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfiguredSection {
    /// Absolute path (resolved against the configuration file's directory when read).
    pub file: String,
    pub line: u32,
    pub end_line: Option<u32>,
    pub lock: Option<String>,
}

/// The names of `threading`'s lock types (and `multiprocessing`'s, which share them).
pub const LOCK_TYPES: &[&str] = &["Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore"];

/// Whether a variable or attribute name says it holds a lock: one of its `_`-separated parts
/// (digits at the end ignored) is `lock`, `rlock`, `mutex`, `mtx`, `cond`, `condition`, `cv`,
/// `sem`, `semaphore`, or ends in `lock` (`rwlock`, `dblock` — not `block`, `clock`, `unlock`).
pub fn lock_like_name(name: &str) -> bool {
    name.to_ascii_lowercase().split('_').any(|part| {
        let p = part.trim_end_matches(|c: char| c.is_ascii_digit());
        matches!(p, "lock" | "rlock" | "locked" | "mutex" | "mtx" | "cond" | "condition" | "cv" | "sem" | "semaphore")
            || (p.ends_with("lock") && !matches!(p, "block" | "clock" | "unlock" | "deadlock" | "livelock"))
    })
}

#[cfg(feature = "source")]
pub use discover_impl::{discover, discover_run, discover_with_waits, recorded_locks, SectionsFound};

#[cfg(feature = "source")]
mod discover_impl {
    use super::*;
    use std::collections::HashMap;
    use tree_sitter::Node;

    /// The sections of a run's own code, as its files are on disk now, with the project's
    /// configuration.
    #[derive(Clone, Debug, Default)]
    pub struct SectionsFound {
        pub sections: Vec<Section>,
        /// The configuration file read (`pyproject.toml` or `threadradar.toml`), if any.
        pub config_file: Option<std::path::PathBuf>,
        /// Sentences about files whose sections could not be found (unreadable, changed since the
        /// recording: their lines would not match the samples).
        pub notes: Vec<String>,
    }

    /// Discovers the sections of every user file of `run`. The configuration is the project's at
    /// or above the run's working directory ([`crate::config::ProjectConfig::find`]), or the file
    /// `config` when given. A malformed configuration is an error sentence; a file that cannot be
    /// used is a note.
    pub fn discover_run(run: &crate::run::Run, config: Option<&std::path::Path>) -> Result<SectionsFound, String> {
        use crate::config::ProjectConfig;
        let mut found = SectionsFound::default();
        let project = match config {
            Some(c) => ProjectConfig::load_file(c)?,
            None => ProjectConfig::find(std::path::Path::new(&run.meta.cwd))?,
        };
        found.config_file = project.file.clone();
        let config = SectionConfig { synchronized: project.synchronized, extra: project.critical_sections };
        let locks = recorded_locks(run);
        for f in &run.files {
            if f.kind != crate::run::FileKind::User {
                continue;
            }
            let path = run.str(f.path);
            let Ok(bytes) = std::fs::read(path) else {
                found.notes.push(format!("{path} cannot be read, so its critical sections are not known; record again where the source is"));
                continue;
            };
            if let Some(sha) = &f.sha256 {
                if *sha != crate::source::sha256_hex(&bytes) {
                    found.notes.push(format!("{path} changed since the recording, so its critical sections are not shown; record again"));
                    continue;
                }
            }
            let recorded = locks.get(&f.path).cloned().unwrap_or_default();
            found.sections.extend(discover_with_waits(path, &String::from_utf8_lossy(&bytes), &config, &recorded));
        }
        Ok(found)
    }

    /// Per file (string id of its path) and line: the lock objects the run recorded threads
    /// waiting on there, the most often seen first. Only waits whose object is a lock type and
    /// whose waiting line is known.
    pub fn recorded_locks(run: &crate::run::Run) -> HashMap<crate::run::StrId, HashMap<u32, Vec<RecordedLock>>> {
        let mut seen: HashMap<(crate::run::StrId, u32, u64), (RecordedLock, u64)> = HashMap::new();
        let mut uses = vec![0u64; run.waits.len()];
        for s in &run.samples {
            for t in &s.threads {
                if let Some(w) = t.wait {
                    if let Some(u) = uses.get_mut(w as usize) {
                        *u += 1;
                    }
                }
            }
        }
        for (wi, w) in run.waits.iter().enumerate() {
            let Some(o) = &w.object else { continue };
            // A thread asleep in `futex` with nothing above the program's own line (the
            // recorder's C-level site, object unread: `with self._guard:`, `with locks[k]:`) is
            // entering a lock implemented in C: `threading.Lock` or `RLock`.
            let c_level = o.addr == 0 && run.str(o.type_name) == "unknown" && run.str(w.syscall) == "futex";
            let Some(ty) = lock_type_of_recorded(run.str(o.type_name)).or(c_level.then_some(C_LEVEL_LOCK)) else { continue };
            let Some(frame) = o.frame.and_then(|f| run.frames.get(f as usize)) else { continue };
            let Some(func) = run.functions.get(frame.function as usize) else { continue };
            let Some(file) = run.files.get(func.file as usize) else { continue };
            if frame.line == 0 || (o.addr == 0 && !c_level) {
                continue;
            }
            let e = seen.entry((file.path, frame.line, o.addr)).or_insert_with(|| {
                (RecordedLock { lock_type: ty.to_string(), address: o.addr, name: o.name.map(|n| run.str(n).to_string()) }, 0)
            });
            e.1 += uses[wi].max(1);
        }
        let mut out: HashMap<crate::run::StrId, HashMap<u32, Vec<(RecordedLock, u64)>>> = HashMap::new();
        for ((file, line, _), v) in seen {
            out.entry(file).or_default().entry(line).or_default().push(v);
        }
        out.into_iter()
            .map(|(f, lines)| {
                let lines = lines
                    .into_iter()
                    .map(|(l, mut v)| {
                        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.address.cmp(&b.0.address)));
                        (l, v.into_iter().map(|(r, _)| r).collect())
                    })
                    .collect();
                (f, lines)
            })
            .collect()
    }

    /// Every critical section of one file's `text` (`path` is recorded in each section as given).
    pub fn discover(path: &str, text: &str, config: &SectionConfig) -> Vec<Section> {
        discover_with_waits(path, text, config, &HashMap::new())
    }

    /// [`discover`], and also the `with X:` statements whose `X` the source does not show to be a
    /// lock but where the run recorded threads waiting on a lock object (`recorded`: line → the
    /// objects, from [`recorded_locks`]).
    pub fn discover_with_waits(path: &str, text: &str, config: &SectionConfig, recorded: &HashMap<u32, Vec<RecordedLock>>) -> Vec<Section> {
        let mut parser = tree_sitter::Parser::new();
        if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
            return Vec::new();
        }
        let Some(tree) = parser.parse(text, None) else { return Vec::new() };
        let src = text.as_bytes();
        let index = crate::source::SourceIndex::parse(text);
        let mut d = Discovery { src, path, index: &index, lock_types: HashMap::new(), out: Vec::new(), config, recorded };
        d.collect_assignments(tree.root_node());
        d.walk(tree.root_node());
        for c in config.extra.iter().filter(|c| c.file == path) {
            d.configured(tree.root_node(), c);
        }
        let mut out = d.out;
        out.sort_by_key(|s| (s.line, s.body_start));
        out.dedup_by(|a, b| (a.line, a.body_start, a.end_line, &a.lock) == (b.line, b.body_start, b.end_line, &b.lock));
        out
    }

    struct Discovery<'a> {
        src: &'a [u8],
        path: &'a str,
        index: &'a crate::source::SourceIndex,
        /// Lock names (`lock`, `Class.attr`, `.attr` for any object's attribute) → type.
        lock_types: HashMap<String, String>,
        out: Vec<Section>,
        config: &'a SectionConfig,
        /// Line → lock objects threads were recorded waiting on there.
        recorded: &'a HashMap<u32, Vec<RecordedLock>>,
    }

    fn line(n: Node) -> u32 {
        n.start_position().row as u32 + 1
    }

    fn end_line(n: Node) -> u32 {
        n.end_position().row as u32 + 1
    }

    impl Discovery<'_> {
        fn text(&self, n: Node) -> &str {
            n.utf8_text(self.src).unwrap_or("")
        }

        /// The function containing `line`: (qualname, def line), or `<module>`.
        fn function_at(&self, at: u32) -> (String, u32) {
            match self.index.enclosing(at).0 {
                Some(i) => (self.index.defs[i].qualname.clone(), self.index.defs[i].line),
                None => ("<module>".into(), 0),
            }
        }

        /// The innermost class around `line`, for naming `self.attr`.
        fn class_at(&self, at: u32) -> Option<String> {
            self.index.enclosing(at).1.map(|i| self.index.defs[i].qualname.clone())
        }

        /// The callee's last name when `n` is a call (`threading.Lock()` → `Lock`).
        fn callee_type(&self, n: Node) -> Option<String> {
            if n.kind() != "call" {
                return None;
            }
            let f = n.child_by_field_name("function")?;
            let name = match f.kind() {
                "identifier" => self.text(f),
                "attribute" => self.text(f.child_by_field_name("attribute")?),
                _ => return None,
            };
            LOCK_TYPES.contains(&name).then(|| name.to_string())
        }

        /// The name a lock expression is known by: `lock`, `Class.attr` for `self.attr` /
        /// `cls.attr`, `obj.attr` otherwise; `None` for a subscript, a call, ….
        fn lock_name(&self, n: Node) -> Option<String> {
            match n.kind() {
                "identifier" => Some(self.text(n).to_string()),
                "attribute" => {
                    let obj = n.child_by_field_name("object")?;
                    let attr = self.text(n.child_by_field_name("attribute")?);
                    let obj_text = self.text(obj);
                    if obj_text == "self" || obj_text == "cls" {
                        if let Some(class) = self.class_at(line(n)) {
                            return Some(format!("{class}.{attr}"));
                        }
                    }
                    if matches!(obj.kind(), "identifier" | "attribute") {
                        Some(self.text(n).to_string())
                    } else {
                        None
                    }
                }
                _ => None,
            }
        }

        /// The last identifier of a name (`self._lock` → `_lock`).
        fn last_part(&self, n: Node) -> Option<String> {
            match n.kind() {
                "identifier" => Some(self.text(n).to_string()),
                "attribute" => n.child_by_field_name("attribute").map(|a| self.text(a).to_string()),
                _ => None,
            }
        }

        fn collect_assignments(&mut self, n: Node) {
            if n.kind() == "assignment" {
                if let (Some(left), Some(right)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) {
                    if let Some(ty) = self.callee_type(right) {
                        if let Some(name) = self.lock_name(left) {
                            self.lock_types.insert(name, ty.clone());
                        }
                        // A class attribute `lock = Lock()` in a class body is `Class.lock`;
                        // any object's `.attr` assigned a lock makes `x.attr` a lock too.
                        if left.kind() == "identifier" {
                            if let Some(class) = self.class_at(line(n)).filter(|_| self.index.enclosing(line(n)).0.is_none()) {
                                self.lock_types.insert(format!("{class}.{}", self.text(left)), ty.clone());
                            }
                        }
                        if let Some(attr) = self.last_part(left).filter(|_| left.kind() == "attribute") {
                            self.lock_types.insert(format!(".{attr}"), ty);
                        }
                    }
                }
            }
            let mut c = n.walk();
            for child in n.named_children(&mut c) {
                self.collect_assignments(child);
            }
        }

        /// Whether `n` names a lock, and its type when known.
        fn is_lock(&self, n: Node) -> Option<Option<String>> {
            let name = self.lock_name(n)?;
            if let Some(t) = self.lock_types.get(&name) {
                return Some(Some(t.clone()));
            }
            let last = self.last_part(n)?;
            if n.kind() == "attribute" {
                if let Some(t) = self.lock_types.get(&format!(".{last}")) {
                    return Some(Some(t.clone()));
                }
            }
            lock_like_name(&last).then_some(None)
        }

        fn push(&mut self, wait_line: u32, body_start: u32, end: u32, lock: String, key: Option<String>, lock_type: Option<String>, kind: SectionKind) {
            let (function, function_line) = self.function_at(wait_line);
            let lock_key = key.unwrap_or_else(|| format!("{}:{wait_line}", self.path));
            self.out.push(Section {
                file: self.path.to_string(),
                function,
                function_line,
                line: wait_line,
                body_start,
                end_line: end.max(body_start),
                lock,
                lock_key,
                lock_type,
                kind,
            });
        }

        fn walk(&mut self, n: Node) {
            match n.kind() {
                "with_statement" => self.with_statement(n),
                "function_definition" => {
                    self.decorated(n);
                    self.acquire_release(n);
                }
                _ => {}
            }
            let mut c = n.walk();
            for child in n.named_children(&mut c) {
                self.walk(child);
            }
        }

        fn with_items<'t>(&self, n: Node<'t>) -> Vec<Node<'t>> {
            let mut items = Vec::new();
            let mut c = n.walk();
            for clause in n.named_children(&mut c).filter(|c| c.kind() == "with_clause") {
                let mut c2 = clause.walk();
                for item in clause.named_children(&mut c2).filter(|i| i.kind() == "with_item") {
                    if let Some(mut v) = item.child_by_field_name("value") {
                        // `with lock as l:` → the `lock`.
                        if v.kind() == "as_pattern" {
                            if let Some(first) = v.named_child(0) {
                                v = first;
                            }
                        }
                        items.push(v);
                    }
                }
            }
            items
        }

        fn with_statement(&mut self, n: Node) {
            // `async with` guards asyncio locks, which no thread waits on.
            if n.child(0).is_some_and(|c| c.kind() == "async") {
                return;
            }
            let Some(body) = n.child_by_field_name("body") else { return };
            let items = self.with_items(n);
            let mut untyped = Vec::new();
            for &v in &items {
                if let Some(ty) = self.is_lock(v) {
                    let name = self.lock_name(v).unwrap_or_default();
                    self.push(line(n), line(body), end_line(body), name.clone(), Some(name), ty, SectionKind::With);
                } else {
                    untyped.push(v);
                }
            }
            // The run saw threads wait on a lock object here: the item the recorder named, or
            // the only item left (`with self._guard:` where `_guard` came from a factory).
            let Some(locks) = self.recorded.get(&line(n)).filter(|l| !l.is_empty()) else { return };
            let text_of = |v: Node| self.text(v).split_whitespace().collect::<String>();
            let item = untyped
                .iter()
                .copied()
                .find(|&v| locks.iter().any(|l| l.name.as_deref().map(|x| x.split_whitespace().collect::<String>()) == Some(text_of(v))))
                .or_else(|| (untyped.len() == 1 && items.len() == 1).then(|| untyped[0]));
            let Some(v) = item else { return };
            let lock = &locks[0];
            let (name, key) = match self.lock_name(v) {
                Some(n) => (n.clone(), Some(n)),
                // `locks["a"]`, `get_lock()`: no name to share, so the object itself is the key
                // when its address was read, else the section's own place.
                None => (format!("unnamed ({})", self.text(v)), (lock.address != 0).then(|| format!("{:#x}", lock.address))),
            };
            self.push(line(n), line(body), end_line(body), name, key, Some(lock.lock_type.clone()), SectionKind::FromWaits);
        }

        fn decorated(&mut self, def: Node) {
            let Some(parent) = def.parent().filter(|p| p.kind() == "decorated_definition") else { return };
            let mut c = parent.walk();
            for deco in parent.named_children(&mut c).filter(|d| d.kind() == "decorator") {
                let Some(mut e) = deco.named_child(0) else { continue };
                if e.kind() == "call" {
                    if let Some(f) = e.child_by_field_name("function") {
                        e = f;
                    }
                }
                let text = self.text(e).to_string();
                let last = text.rsplit('.').next().unwrap_or(&text).to_string();
                let hit = self.config.synchronized.iter().any(|s| *s == text || s.rsplit('.').next() == Some(last.as_str()));
                if let (true, Some(body)) = (hit, def.child_by_field_name("body")) {
                    let (qual, _) = self.function_at(line(body));
                    let name = format!("@{text} {qual}");
                    self.push(line(def), line(body), end_line(body), name.clone(), Some(name), None, SectionKind::Decorated);
                    // The body belongs to this function, not to the one around the `def`.
                    let s = self.out.last_mut().unwrap();
                    s.function = qual;
                    s.function_line = line(def);
                }
            }
        }

        /// `X.acquire()` statements of this function (not of nested ones) and the first
        /// `X.release()` after each.
        fn acquire_release(&mut self, def: Node) {
            let mut calls: Vec<(u32, String, &'static str, Option<Node>)> = Vec::new();
            fn visit<'t>(d: &Discovery, n: Node<'t>, calls: &mut Vec<(u32, String, &'static str, Option<Node<'t>>)>) {
                if matches!(n.kind(), "function_definition" | "class_definition" | "lambda") {
                    return;
                }
                if n.kind() == "call" {
                    if let Some(f) = n.child_by_field_name("function").filter(|f| f.kind() == "attribute") {
                        let method = f.child_by_field_name("attribute").map(|a| d.text(a)).unwrap_or("");
                        let which = match method {
                            "acquire" => Some("acquire"),
                            "release" => Some("release"),
                            _ => None,
                        };
                        if let (Some(which), Some(obj)) = (which, f.child_by_field_name("object")) {
                            calls.push((line(n), d.text(obj).to_string(), which, Some(obj)));
                        }
                    }
                }
                let mut c = n.walk();
                for child in n.named_children(&mut c) {
                    visit(d, child, calls);
                }
            }
            if let Some(body) = def.child_by_field_name("body") {
                visit(self, body, &mut calls);
            }
            calls.sort_by_key(|c| c.0);
            let mut found = Vec::new();
            for (i, (at, obj, which, node)) in calls.iter().enumerate() {
                if *which != "acquire" {
                    continue;
                }
                if let Some((rel, ..)) = calls[i + 1..].iter().find(|c| c.2 == "release" && c.1 == *obj && c.0 > *at) {
                    let node = node.unwrap();
                    let named = self.lock_name(node);
                    let recorded = self.recorded.get(at).and_then(|l| l.first()).map(|l| l.lock_type.clone());
                    let ty = named.as_ref().and_then(|n| self.lock_types.get(n).cloned()).or(recorded);
                    let (lock, key) = match named {
                        Some(n) => (n.clone(), Some(n)),
                        None => (format!("unnamed ({obj})"), None),
                    };
                    found.push((*at, *rel, lock, key, ty));
                }
            }
            for (at, rel, lock, key, ty) in found {
                self.push(at, at + 1, rel, lock, key, ty, SectionKind::AcquireRelease);
            }
        }

        fn configured(&mut self, root: Node, c: &ConfiguredSection) {
            // The innermost `with` or `def` starting on the line, if any.
            fn find<'t>(n: Node<'t>, at: u32, best: &mut Option<Node<'t>>) {
                if line(n) > at || end_line(n) < at {
                    return;
                }
                if line(n) == at && matches!(n.kind(), "with_statement" | "function_definition") {
                    *best = Some(n);
                }
                let mut cur = n.walk();
                for child in n.named_children(&mut cur) {
                    find(child, at, best);
                }
            }
            let mut stmt = None;
            find(root, c.line, &mut stmt);
            let (body_start, end) = match (stmt.and_then(|s| s.child_by_field_name("body")), c.end_line) {
                (_, Some(e)) => (c.line + 1, e),
                (Some(b), None) => (line(b), end_line(b)),
                (None, None) => (c.line, c.line),
            };
            let expr = stmt.filter(|s| s.kind() == "with_statement").and_then(|s| self.with_items(s).first().copied());
            let named = expr.and_then(|e| self.lock_name(e));
            let ty = named.as_ref().and_then(|n| self.lock_types.get(n).cloned());
            let (lock, key) = match (&c.lock, named) {
                (Some(l), _) => (l.clone(), Some(l.clone())),
                (None, Some(n)) => (n.clone(), Some(n)),
                (None, None) => (match expr {
                    Some(e) => format!("unnamed ({})", self.text(e)),
                    None => "unnamed".to_string(),
                }, None),
            };
            self.push(c.line, body_start, end, lock, key, ty, SectionKind::Configured);
        }
    }
}

#[cfg(all(test, feature = "source"))]
mod tests {
    use super::*;

    const SRC: &str = r#"import threading
from threading import Lock, Condition

registry_lock = Lock()
guard = threading.RLock()

class SharedCounter:
    shared = threading.Semaphore(2)

    def __init__(self):
        self._lock = threading.Lock()
        self._value = 0
        self.items = []

    def increment(self):
        with self._lock:
            self._value += 1

    def busy(self):
        with self.shared:
            pass

    def not_a_lock(self):
        with open("x") as f:
            f.read()
        with self.block:
            pass

def use(lock, items):
    with lock:
        items.append(1)
        items.append(2)
    with guard as g, registry_lock:
        pass

def manual(locks, i):
    locks[i].acquire()
    try:
        work()
    finally:
        locks[i].release()

@synchronized
def sync_fn():
    return 1

@mymod.synchronized()
def sync_fn2():
    return 2

def dynamic(get):
    with get():
        pass
"#;

    fn sections(config: &SectionConfig) -> Vec<(u32, u32, u32, String, String, Option<String>, SectionKind)> {
        discover("/p/a.py", SRC, config)
            .into_iter()
            .map(|s| (s.line, s.body_start, s.end_line, s.function, s.lock, s.lock_type, s.kind))
            .collect()
    }

    #[test]
    fn finds_with_acquire_and_decorated_sections_by_the_documented_rules() {
        let config = SectionConfig { synchronized: vec!["mymod.synchronized".into()], extra: vec![] };
        let s = |l: u32, b: u32, e: u32, f: &str, lock: &str, t: Option<&str>, k| (l, b, e, f.to_string(), lock.to_string(), t.map(String::from), k);
        use SectionKind::*;
        assert_eq!(
            sections(&config),
            vec![
                s(16, 17, 17, "SharedCounter.increment", "SharedCounter._lock", Some("Lock"), With),
                s(20, 21, 21, "SharedCounter.busy", "SharedCounter.shared", Some("Semaphore"), With),
                s(30, 31, 32, "use", "lock", None, With),
                s(33, 34, 34, "use", "guard", Some("RLock"), With),
                s(33, 34, 34, "use", "registry_lock", Some("Lock"), With),
                s(37, 38, 41, "manual", "unnamed (locks[i])", None, AcquireRelease),
                s(44, 45, 45, "sync_fn", "@synchronized sync_fn", None, Decorated),
                s(48, 49, 49, "sync_fn2", "@mymod.synchronized sync_fn2", None, Decorated),
            ]
        );
        // Without the decorator configured, the decorated functions are not sections.
        assert_eq!(sections(&SectionConfig::default()).len(), 6);
    }

    #[test]
    fn configuration_adds_sections_and_unnamed_locks_get_their_own_key() {
        let config = SectionConfig {
            synchronized: vec![],
            extra: vec![
                ConfiguredSection { file: "/p/a.py".into(), line: 52, end_line: None, lock: None },
                ConfiguredSection { file: "/p/a.py".into(), line: 12, end_line: Some(13), lock: Some("init".into()) },
                ConfiguredSection { file: "/p/other.py".into(), line: 1, end_line: None, lock: None },
            ],
        };
        let found = discover("/p/a.py", SRC, &config);
        let dynamic = found.iter().find(|s| s.line == 52).unwrap();
        assert_eq!((dynamic.body_start, dynamic.end_line, dynamic.lock.as_str()), (53, 53, "unnamed (get())"));
        assert_eq!(dynamic.lock_key, "/p/a.py:52");
        let init = found.iter().find(|s| s.line == 12).unwrap();
        assert_eq!((init.body_start, init.end_line, init.lock.as_str(), init.function.as_str()), (13, 13, "init", "SharedCounter.__init__"));
    }

    #[test]
    fn names_that_say_lock() {
        for yes in ["lock", "_lock", "write_lock", "rwlock", "mutex", "cond", "_cv", "sem2", "not_empty_condition", "LOCK"] {
            assert!(lock_like_name(yes), "{yes}");
        }
        for no in ["block", "clock", "second", "items", "unlock", "f", "semantic"] {
            assert!(!lock_like_name(no), "{no}");
        }
    }
}
