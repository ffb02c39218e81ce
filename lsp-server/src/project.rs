//! A project's own settings for profiling its tests: `[tool.threadradar]` in `pyproject.toml` or
//! the top level of `threadradar.toml`, the interpreter that runs its tests, and pytest's
//! collection conventions (`python_files`, `python_classes`, `python_functions`, `testpaths`).
//!
//! Used by `threadradar test`, `threadradar runs` and the language server alike, so the three
//! agree on the interpreter, the runs directory and which functions are tests. The configuration
//! itself is read by `threadradar_profiler::config`, the one schema every command shares.

use std::path::{Path, PathBuf};
use threadradar_analysis::CountedStates;

// The configuration has one schema, in the profiler crate; these are its names here.
pub use threadradar_profiler::config::{folder_runs_dir, parse_test_command, test_command_arg, test_command_words, Overrides, ProjectConfig, KEYS};

/// The project's `states` as the analysis counts them (the schema has already checked the name).
pub fn counted_states(config: &ProjectConfig) -> Option<CountedStates> {
    config.states.as_deref().and_then(|s| s.parse().ok())
}

/// The interpreter chosen for a project and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Python {
    pub path: PathBuf,
    pub source: String,
}

/// Picks the interpreter: `explicit` (a `--python` on the command line), then the configured one,
/// then the one the editor says is selected, then `.venv/bin/python`, `venv/bin/python`,
/// `$VIRTUAL_ENV/bin/python` and `python3` on `PATH`. A configured or selected interpreter that
/// does not exist is an error (never silently another one).
pub fn resolve_python(root: &Path, config: &ProjectConfig, explicit: Option<&Path>, selected: Option<&Path>) -> Result<Python, String> {
    let check = |p: &Path, source: String| -> Result<Python, String> {
        match find_executable(p) {
            Some(path) => Ok(Python { path, source }),
            None => Err(format!(
                "the interpreter {} ({source}) does not exist or is not executable: fix the path, or remove it to use the project's .venv or python3",
                p.display()
            )),
        }
    };
    if let Some(p) = explicit {
        return check(p, "--python".into());
    }
    if let Some(p) = &config.python {
        return check(p, format!("[tool.threadradar] python in {}", config.file_name()));
    }
    if let Some(p) = selected {
        return check(p, "the interpreter selected in the editor".into());
    }
    for rel in [".venv/bin/python", "venv/bin/python"] {
        let p = root.join(rel);
        if is_executable(&p) {
            return Ok(Python { path: p, source: rel.to_string() });
        }
    }
    if let Some(v) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(v).join("bin/python");
        if is_executable(&p) {
            return Ok(Python { path: p, source: "$VIRTUAL_ENV".into() });
        }
    }
    match find_executable(Path::new("python3")) {
        Some(path) => Ok(Python { path: real_interpreter(path), source: "python3 on PATH".into() }),
        None => {
            Err("no Python interpreter found (no .venv, venv, $VIRTUAL_ENV or python3 on PATH): set [tool.threadradar] python = \"/path/to/python\"".into())
        }
    }
}

/// The interpreter a wrapper script runs (a pyenv shim is a shell script that finds and execs the
/// real one): the recorder samples the process it starts, and a wrapper that takes a while to exec
/// on a busy machine looks like a program that never starts Python. Anything else is kept.
fn real_interpreter(p: PathBuf) -> PathBuf {
    use std::io::Read;
    let mut head = [0u8; 2];
    let is_script = std::fs::File::open(&p).and_then(|mut f| f.read_exact(&mut head)).is_ok() && &head == b"#!";
    if !is_script {
        return p;
    }
    std::process::Command::new(&p)
        .args(["-c", "import sys; print(sys.executable)"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| PathBuf::from(s.trim()))
        .filter(|q| q.is_absolute() && is_executable(q))
        .unwrap_or(p)
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A path with a slash as it is; a bare name looked up on `PATH`.
fn find_executable(p: &Path) -> Option<PathBuf> {
    if p.components().count() > 1 || p.is_absolute() {
        return is_executable(p).then(|| p.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(p)).find(|c| is_executable(c))
}

/// Whether `python` can import pytest; the sentence to show when it cannot.
pub fn check_pytest(python: &Path) -> Result<(), String> {
    let out = std::process::Command::new(python)
        .args(["-c", "import pytest"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if out.success() {
        Ok(())
    } else {
        let p = python.display();
        Err(format!("pytest is not installed in {p}: `{p} -m pip install pytest`, or set [tool.threadradar] python"))
    }
}

/// pytest's collection rules, from the first of `pytest.ini`, `pyproject.toml`
/// (`[tool.pytest.ini_options]`), `tox.ini` (`[pytest]`) and `setup.cfg` (`[tool:pytest]`) that
/// has them, searched from a directory upwards (the first one found is pytest's rootdir).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PytestConventions {
    /// Where the configuration was found (pytest's rootdir), if anywhere.
    pub rootdir: Option<PathBuf>,
    pub python_files: Vec<String>,
    pub python_classes: Vec<String>,
    pub python_functions: Vec<String>,
    pub testpaths: Vec<String>,
}

impl Default for PytestConventions {
    fn default() -> Self {
        PytestConventions {
            rootdir: None,
            python_files: vec!["test_*.py".into(), "*_test.py".into()],
            python_classes: vec!["Test".into()],
            python_functions: vec!["test".into()],
            testpaths: Vec::new(),
        }
    }
}

impl PytestConventions {
    /// Looks from `dir` up to (and including) `stop` (or the filesystem root).
    pub fn find(dir: &Path, stop: Option<&Path>) -> PytestConventions {
        let mut d = Some(dir);
        while let Some(cur) = d {
            if let Some(c) = PytestConventions::read_dir(cur) {
                return c;
            }
            if Some(cur) == stop {
                break;
            }
            d = cur.parent();
        }
        PytestConventions::default()
    }

    fn read_dir(dir: &Path) -> Option<PytestConventions> {
        let mut c = PytestConventions { rootdir: Some(dir.to_path_buf()), ..Default::default() };
        let ini = |name: &str, section: &str| -> Option<Vec<(String, String)>> { ini_section(&std::fs::read_to_string(dir.join(name)).ok()?, section) };
        // pytest.ini (and .pytest.ini) is the configuration even without a [pytest] section.
        let pytest_ini = ["pytest.ini", ".pytest.ini"].into_iter().map(|n| dir.join(n)).find(|p| p.is_file());
        let pairs = if let Some(p) = pytest_ini {
            ini_section(&std::fs::read_to_string(p).ok()?, "pytest").unwrap_or_default()
        } else if let Some(p) = std::fs::read_to_string(dir.join("pyproject.toml")).ok().and_then(|t| pyproject_pytest(&t)) {
            p
        } else if let Some(p) = ini("tox.ini", "pytest") {
            p
        } else {
            ini("setup.cfg", "tool:pytest")?
        };
        for (k, v) in pairs {
            let words: Vec<String> = v.split_whitespace().map(String::from).collect();
            match k.as_str() {
                "python_files" => c.python_files = words,
                "python_classes" => c.python_classes = words,
                "python_functions" => c.python_functions = words,
                "testpaths" => c.testpaths = words,
                _ => {}
            }
        }
        Some(c)
    }

    /// Whether pytest collects this file in the project's own run: its name matches
    /// `python_files` and, when `testpaths` is set, it is under one of them (relative to the
    /// rootdir; globs allowed, as pytest allows). A file outside `testpaths` is one a bare
    /// `pytest` never runs (a helper, vendored code), so it gets no lenses.
    pub fn collects(&self, path: &Path) -> bool {
        self.is_test_file(path) && self.in_testpaths(path)
    }

    fn in_testpaths(&self, path: &Path) -> bool {
        let Some(root) = self.rootdir.as_deref().filter(|_| !self.testpaths.is_empty()) else { return true };
        let Ok(rel) = path.strip_prefix(root) else { return true };
        let rel = rel.to_string_lossy();
        self.testpaths.iter().any(|t| {
            let t = t.trim_start_matches("./").trim_end_matches('/');
            t.is_empty() || t == "." || rel == t || rel.starts_with(&format!("{t}/")) || {
                // A glob names directories or files: any leading part of the path may match it.
                let parts: Vec<&str> = rel.split('/').collect();
                (1..=parts.len()).any(|n| glob(t, &parts[..n].join("/")))
            }
        })
    }

    /// Whether pytest would collect this file by its name (`python_files`).
    pub fn is_test_file(&self, path: &Path) -> bool {
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        self.python_files.iter().any(|p| if p.contains('/') { glob(p, &path.to_string_lossy()) || path.ends_with(p) } else { glob(p, &name) })
    }

    pub fn is_test_class(&self, name: &str) -> bool {
        self.python_classes.iter().any(|p| name_matches(p, name))
    }

    pub fn is_test_function(&self, name: &str) -> bool {
        self.python_functions.iter().any(|p| name_matches(p, name))
    }
}

/// pytest's rule for `python_classes` / `python_functions`: a prefix, or a glob when it has one.
fn name_matches(pattern: &str, name: &str) -> bool {
    if pattern.contains(['*', '?', '[']) {
        glob(pattern, name)
    } else {
        name.starts_with(pattern)
    }
}

/// `fnmatch` with `*` and `?` (and `[…]` taken literally).
pub fn glob(pattern: &str, text: &str) -> bool {
    fn go(p: &[char], t: &[char]) -> bool {
        match (p.first(), t.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], t) || (!t.is_empty() && go(p, &t[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &t[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &t[1..]),
            _ => false,
        }
    }
    go(&pattern.chars().collect::<Vec<_>>(), &text.chars().collect::<Vec<_>>())
}

/// The `key = value` pairs of one section of an ini file (continuation lines are indented), or
/// `None` when the section is absent.
fn ini_section(text: &str, section: &str) -> Option<Vec<(String, String)>> {
    let mut inside = false;
    let mut found = false;
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        if t.starts_with('[') && t.ends_with(']') {
            inside = t[1..t.len() - 1].trim() == section;
            found |= inside;
            continue;
        }
        if !inside || t.is_empty() {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if let Some(last) = out.last_mut() {
                last.1.push(' ');
                last.1.push_str(t);
            }
        } else if let Some((k, v)) = t.split_once(['=', ':']) {
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    found.then_some(out)
}

/// `[tool.pytest.ini_options]` of a pyproject.toml, its values as pytest reads them (lists are
/// space-joined).
fn pyproject_pytest(text: &str) -> Option<Vec<(String, String)>> {
    let doc: toml::Table = toml::from_str(text).ok()?;
    let opts = doc.get("tool")?.get("pytest")?.get("ini_options")?.as_table()?;
    Some(
        opts.iter()
            .map(|(k, v)| {
                let v = match v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Array(a) => a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(" "),
                    other => other.to_string(),
                };
                (k.clone(), v)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_takes_every_counted_state_the_analysis_knows() {
        let names: Vec<&str> = CountedStates::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names, threadradar_profiler::config::STATES);
    }

    #[test]
    fn interpreters_in_order_and_missing_ones_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let c = ProjectConfig { python: Some(root.join("nope/python")), file: Some(root.join("pyproject.toml")), ..Default::default() };
        let e = resolve_python(root, &c, None, None).unwrap_err();
        assert!(e.contains("nope/python") && e.contains("[tool.threadradar] python in pyproject.toml"), "{e}");
        let e = resolve_python(root, &ProjectConfig::default(), None, Some(Path::new("/no/such/python"))).unwrap_err();
        assert!(e.contains("selected in the editor"), "{e}");
        let p = resolve_python(root, &ProjectConfig::default(), None, None).unwrap();
        assert!(p.source == "python3 on PATH" || p.source == "$VIRTUAL_ENV", "{p:?}");
        std::fs::create_dir_all(root.join("venv/bin")).unwrap();
        std::os::unix::fs::symlink(&p.path, root.join("venv/bin/python")).unwrap();
        assert_eq!(resolve_python(root, &ProjectConfig::default(), None, None).unwrap().source, "venv/bin/python");
        std::fs::create_dir_all(root.join(".venv/bin")).unwrap();
        std::os::unix::fs::symlink(&p.path, root.join(".venv/bin/python")).unwrap();
        assert_eq!(resolve_python(root, &ProjectConfig::default(), None, None).unwrap().source, ".venv/bin/python");
        let sel = resolve_python(root, &ProjectConfig::default(), None, Some(&p.path)).unwrap();
        assert_eq!(sel.source, "the interpreter selected in the editor");
        // The project's configuration comes before the editor's selection, --python before both.
        let c = ProjectConfig { python: Some(root.join("venv/bin/python")), file: Some(root.join("threadradar.toml")), ..Default::default() };
        assert_eq!(resolve_python(root, &c, None, Some(&p.path)).unwrap().source, "[tool.threadradar] python in threadradar.toml");
        assert_eq!(resolve_python(root, &c, Some(&p.path), Some(&p.path)).unwrap().source, "--python");
    }

    #[test]
    fn pytest_conventions_from_each_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let sub = root.join("tests");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(PytestConventions::find(&sub, Some(root)), PytestConventions::default());
        std::fs::write(
            root.join("setup.cfg"),
            "[metadata]\nname = x\n[tool:pytest]\npython_files =\n    check_*.py\n    *_spec.py\npython_functions = check\n",
        )
        .unwrap();
        let c = PytestConventions::find(&sub, Some(root));
        assert_eq!(c.python_files, vec!["check_*.py", "*_spec.py"]);
        assert!(c.is_test_file(Path::new("/a/check_pool.py")) && !c.is_test_file(Path::new("/a/test_pool.py")));
        assert!(c.is_test_function("check_it") && !c.is_test_function("test_it"));
        std::fs::write(root.join("tox.ini"), "[pytest]\npython_classes = *Suite\n").unwrap();
        let c = PytestConventions::find(&sub, Some(root));
        assert!(c.is_test_class("PoolSuite") && !c.is_test_class("TestPool"));
        std::fs::write(root.join("pyproject.toml"), "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npython_functions = \"should_*\"\n").unwrap();
        let c = PytestConventions::find(&sub, Some(root));
        assert_eq!(c.testpaths, vec!["tests"]);
        assert!(c.is_test_function("should_work") && !c.is_test_function("test_x"));
        // testpaths: a file outside them is not collected by the project's run (no lenses).
        assert!(c.collects(&sub.join("test_pool.py")) && c.collects(&sub.join("unit/test_deep.py")));
        assert!(!c.collects(&root.join("scripts/test_data.py")) && !c.collects(&root.join("test_top.py")));
        std::fs::write(root.join("pyproject.toml"), "[tool.pytest.ini_options]\ntestpaths = [\"pkg*/tests\", \"./it\"]\n").unwrap();
        let c = PytestConventions::find(&sub, Some(root));
        assert!(c.collects(&root.join("pkg_a/tests/test_a.py")) && c.collects(&root.join("it/test_b.py")));
        assert!(!c.collects(&root.join("pkg_a/test_a.py")) && !c.collects(&sub.join("test_c.py")));
        std::fs::write(sub.join("pytest.ini"), "[pytest]\naddopts = -q\n").unwrap();
        let c = PytestConventions::find(&sub, Some(root));
        assert_eq!(c.rootdir.as_deref(), Some(sub.as_path()));
        assert!(c.is_test_function("test_x"));
        assert!(c.collects(&sub.join("test_c.py")), "no testpaths here");
        // pytest.ini is the configuration even without a [pytest] section (pytest's rule).
        std::fs::write(sub.join("pytest.ini"), "# empty\n").unwrap();
        assert_eq!(PytestConventions::find(&sub, Some(root)).rootdir.as_deref(), Some(sub.as_path()));
    }
}
