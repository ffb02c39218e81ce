//! A project's own settings for profiling its tests: `[tool.threadradar]` in `pyproject.toml` or
//! the top level of `threadradar.toml`, the interpreter that runs its tests, and pytest's
//! collection conventions (`python_files`, `python_classes`, `python_functions`, `testpaths`).
//!
//! Used by `threadradar test`, `threadradar runs` and the language server alike, so the three
//! agree on the interpreter, the runs directory and which functions are tests.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use threadradar_analysis::CountedStates;

/// `[tool.threadradar]` (or `threadradar.toml`), validated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProjectConfig {
    /// The file it was read from, if any.
    pub file: Option<PathBuf>,
    /// The interpreter, absolute (relative paths are resolved against the project root).
    pub python: Option<PathBuf>,
    /// The test command template; `{python}` and `{tests}` are replaced.
    pub test_command: Option<Vec<String>>,
    pub interval_ms: Option<f64>,
    pub states: Option<CountedStates>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// Absolute.
    pub runs_dir: Option<PathBuf>,
    /// Keep this many runs; older ones without a label or a pin are pruned after a test run.
    pub keep_runs: Option<usize>,
}

/// The keys, as a user writes them.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Raw {
    // Spanned: a value that is out of range is reported with its line.
    python: Option<toml::Spanned<String>>,
    test_command: Option<toml::Spanned<CommandSpec>>,
    interval_ms: Option<toml::Spanned<f64>>,
    states: Option<CountedStates>,
    include: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
    runs_dir: Option<String>,
    keep_runs: Option<toml::Spanned<u32>>,
}

/// `test-command`: a runner's name (`"pytest"`, `"unittest"`) or a template.
#[derive(Deserialize)]
#[serde(untagged)]
enum CommandSpec {
    Name(String),
    Template(Vec<String>),
}

/// The keys of `[tool.threadradar]`, for the message about an unknown one.
pub const KEYS: &str = "python, test-command, interval-ms, states, include, exclude, runs-dir, keep-runs";

#[derive(Deserialize)]
struct Pyproject {
    tool: Option<Tool>,
}

#[derive(Deserialize)]
struct Tool {
    threadradar: Option<Raw>,
}

impl ProjectConfig {
    /// Reads `threadradar.toml`, else `[tool.threadradar]` of `pyproject.toml`, in `root`.
    /// A file that does not exist is no configuration; a bad one is one sentence naming the file
    /// and the line.
    pub fn load(root: &Path) -> Result<ProjectConfig, String> {
        let own = root.join("threadradar.toml");
        if let Some(text) = read(&own)? {
            let raw: Raw = toml::from_str(&text).map_err(|e| explain(&own, &text, &e, ""))?;
            return ProjectConfig::from_raw(raw, root, &own, &text, "");
        }
        let py = root.join("pyproject.toml");
        if let Some(text) = read(&py)? {
            let doc: Pyproject = toml::from_str(&text).map_err(|e| explain(&py, &text, &e, "[tool.threadradar] "))?;
            if let Some(raw) = doc.tool.and_then(|t| t.threadradar) {
                return ProjectConfig::from_raw(raw, root, &py, &text, "[tool.threadradar] ");
            }
        }
        Ok(ProjectConfig::default())
    }

    fn from_raw(raw: Raw, root: &Path, file: &Path, text: &str, section: &str) -> Result<ProjectConfig, String> {
        // `[tool.threadradar] /…/pyproject.toml line 7`: where a value is.
        let at = |span: std::ops::Range<usize>| format!("{section}{} line {}", file.display(), line_of(text, span.start));
        let interval_ms = match raw.interval_ms {
            Some(ms) => {
                let span = ms.span();
                let ms = ms.into_inner();
                if !(ms.is_finite() && (0.05..=10_000.0).contains(&ms)) {
                    return Err(format!("interval-ms in {} must be between 0.05 and 10000 milliseconds (it is {ms})", at(span)));
                }
                Some(ms)
            }
            None => None,
        };
        let test_command = match raw.test_command {
            None => None,
            Some(c) => {
                let span = c.span();
                match c.into_inner() {
                    CommandSpec::Name(n) if n == "pytest" => None,
                    CommandSpec::Name(n) if n == "unittest" => Some(vec![n]),
                    CommandSpec::Name(n) => {
                        return Err(format!(
                            "test-command in {} is {n:?}: write \"pytest\", \"unittest\" or a template like [\"{{python}}\", \"-m\", \"pytest\", \"{{tests}}\"]",
                            at(span)
                        ))
                    }
                    CommandSpec::Template(t) if t.is_empty() => {
                        return Err(format!("test-command in {} is empty: write e.g. [\"{{python}}\", \"-m\", \"pytest\", \"{{tests}}\"]", at(span)));
                    }
                    CommandSpec::Template(t) => Some(t),
                }
            }
        };
        let keep_runs = match raw.keep_runs {
            Some(k) if *k.get_ref() == 0 => {
                return Err(format!("keep-runs in {} must be at least 1 (leave it out to keep every run)", at(k.span())));
            }
            Some(k) => Some(k.into_inner() as usize),
            None => None,
        };
        let python = match raw.python {
            Some(p) if p.get_ref().trim().is_empty() => {
                return Err(format!(
                    "python in {} is empty: write the interpreter's path (\".venv/bin/python\") or name (\"python3.12\"), or leave the key out to use the project's .venv or python3",
                    at(p.span())
                ));
            }
            Some(p) => Some(p.into_inner()),
            None => None,
        };
        let abs = |p: String| {
            let p = PathBuf::from(p);
            if p.is_absolute() {
                p
            } else {
                root.join(p)
            }
        };
        Ok(ProjectConfig {
            file: Some(file.to_path_buf()),
            python: python.map(|p| if p.contains('/') { abs(p) } else { PathBuf::from(p) }),
            test_command,
            interval_ms,
            states: raw.states,
            include: raw.include.unwrap_or_default(),
            exclude: raw.exclude.unwrap_or_default(),
            runs_dir: raw.runs_dir.map(abs),
            keep_runs,
        })
    }

    /// Where runs of this project go.
    pub fn runs_dir(&self, root: &Path) -> PathBuf {
        self.runs_dir.clone().unwrap_or_else(|| threadradar_profiler::runfile::runs_dir(root))
    }

    /// The configuration file's name for messages.
    pub fn file_name(&self) -> String {
        self.file.as_ref().and_then(|f| f.file_name()).map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "pyproject.toml".into())
    }

    /// This configuration with `o` over it: each override that is set replaces its key (the
    /// editor's settings, or `threadradar test --test-command/--runs-dir/--keep-runs`). A relative
    /// runs directory of `o` is relative to `root`.
    pub fn overridden(mut self, o: &Overrides, root: &Path) -> ProjectConfig {
        if let Some(c) = &o.test_command {
            self.test_command = c.clone();
        }
        if let Some(ms) = o.interval_ms {
            self.interval_ms = Some(ms);
        }
        if let Some(d) = o.runs_dir_in(root) {
            self.runs_dir = Some(d);
        }
        if let Some(k) = o.keep_runs {
            self.keep_runs = Some(k);
        }
        self
    }
}

/// What the editor's settings (`testCommand`, `intervalMs`, `runsDir`, `keepRuns`) override of a
/// project's `[tool.threadradar]`: each one that is set wins over its key, which wins over the
/// default (docs/testing.md, "Configuration"). `None` leaves the key to the project.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// `test-command`, in [`ProjectConfig::test_command`]'s form: `Some(None)` is pytest (the
    /// default runner), `Some(Some(["unittest"]))` unittest, else a template.
    pub test_command: Option<Option<Vec<String>>>,
    /// `interval-ms` (0.05–10000).
    pub interval_ms: Option<f64>,
    /// `runs-dir` as the user wrote it: absolute, `~/…`, or relative to the project.
    pub runs_dir: Option<String>,
    /// `keep-runs` (at least 1).
    pub keep_runs: Option<usize>,
}

impl Overrides {
    /// The overriding runs directory, absolute (`root`: what a relative one is relative to).
    pub fn runs_dir_in(&self, root: &Path) -> Option<PathBuf> {
        let d = self.runs_dir.as_deref()?.trim();
        if d.is_empty() {
            return None;
        }
        let home = || std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let p = match d.strip_prefix("~") {
            Some("") => home().unwrap_or_else(|| PathBuf::from(d)),
            Some(rest) if rest.starts_with('/') => match home() {
                Some(h) => h.join(rest.trim_start_matches('/')),
                None => PathBuf::from(d),
            },
            _ => PathBuf::from(d),
        };
        Some(if p.is_absolute() { p } else { root.join(p) })
    }
}

/// Where the runs of a workspace folder are (and where the language server lists them): the
/// editor's `runsDir`, else the folder's `[tool.threadradar] runs-dir`, else
/// `.threadradar/runs`. A configuration file that cannot be read counts as none here (running a
/// test reports it).
pub fn folder_runs_dir(folder: &Path, o: &Overrides) -> PathBuf {
    o.runs_dir_in(folder)
        .unwrap_or_else(|| ProjectConfig::load(folder).map(|c| c.runs_dir(folder)).unwrap_or_else(|_| threadradar_profiler::runfile::runs_dir(folder)))
}

/// A test command as `threadradar test --test-command` takes it: `pytest` (the default runner),
/// `unittest`, or a template as a JSON list of words (`["{python}", "-m", "pytest", "{tests}"]`),
/// in [`ProjectConfig::test_command`]'s form. A one-word list `["pytest"]` is pytest too.
pub fn parse_test_command(s: &str) -> Result<Option<Vec<String>>, String> {
    let usage = "write pytest, unittest or a template as a JSON list of words like [\"{python}\", \"-m\", \"pytest\", \"-x\", \"{tests}\"]";
    let s = s.trim();
    match s {
        "pytest" => return Ok(None),
        "unittest" => return Ok(Some(vec!["unittest".into()])),
        _ => {}
    }
    if !s.starts_with('[') {
        return Err(format!("the test command {s:?} is not a runner's name: {usage}"));
    }
    let words: Vec<String> = serde_json::from_str(s).map_err(|e| format!("the test command {s} is not a JSON list of words ({e}): {usage}"))?;
    test_command_words(words).ok_or_else(|| format!("the test command {s} is empty or has an empty word: {usage}"))
}

/// A template's words in [`ProjectConfig::test_command`]'s form; `None` when it is empty or has
/// an empty word.
pub fn test_command_words(words: Vec<String>) -> Option<Option<Vec<String>>> {
    if words.is_empty() || words.iter().any(|w| w.trim().is_empty()) {
        return None;
    }
    if words.len() == 1 && words[0] == "pytest" {
        return Some(None);
    }
    Some(Some(words))
}

/// The `--test-command` argument for a test command in [`ProjectConfig::test_command`]'s form.
pub fn test_command_arg(c: Option<&[String]>) -> String {
    match c {
        None => "pytest".into(),
        Some([one]) if one == "unittest" => "unittest".into(),
        Some(words) => serde_json::to_string(words).unwrap_or_default(),
    }
}

fn read(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// The 1-based line of a byte offset in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The key whose value is at `offset`: the nearest `key = …` line at or above it (a value may be
/// a list over several lines), if it is one of ours.
fn key_at(text: &str, offset: usize) -> Option<&'static str> {
    let start = offset.min(text.len());
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let upto = &text[..end];
    for line in upto.lines().rev() {
        let Some((k, _)) = line.split_once('=') else { continue };
        // `keep-runs`, `"keep-runs"`, `tool.threadradar.keep-runs`: the last part of the key.
        let k = k.trim().rsplit('.').next().unwrap_or("").trim().trim_matches(['"', '\'']);
        if k.is_empty() || k.contains(char::is_whitespace) {
            continue;
        }
        return KEYS.split(", ").find(|&known| known == k);
    }
    None
}

/// What a key's value must be, for the message about a wrong type.
fn expected(key: &str) -> &'static str {
    match key {
        "python" => "the interpreter's path or name, as a string",
        "interval-ms" => "a number of milliseconds between samples (default 3)",
        "states" => "one of \"auto\", \"computing\", \"computing-cpu\", \"computing+gil\", \"all\", \"waiting\", \"cpu\"",
        "include" | "exclude" => "a list of regular expressions, as strings",
        "runs-dir" => "a directory, as a string",
        "keep-runs" => "a whole number of runs, at least 1",
        _ => "a value of another type",
    }
}

/// One sentence for a TOML or schema error: what, the file and the line (and, for a value of the
/// wrong type, the key and what it takes).
fn explain(file: &Path, text: &str, e: &toml::de::Error, section: &str) -> String {
    let line = e.span().map(|s| line_of(text, s.start));
    let at = match line {
        Some(l) => format!("{} line {l}", file.display()),
        None => file.display().to_string(),
    };
    let msg = e.message().trim();
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        let key = rest.split('`').next().unwrap_or(rest);
        return format!("unknown key `{key}` in {section}{at}: the keys are {KEYS}");
    }
    if msg.contains("untagged enum CommandSpec") {
        return format!("test-command in {section}{at} must be \"pytest\", \"unittest\" or a list of words like [\"{{python}}\", \"-m\", \"pytest\", \"{{tests}}\"]");
    }
    let first = msg.lines().next().unwrap_or(msg).trim_end_matches('.');
    let wrong_value = ["invalid type", "invalid value", "unknown variant", "expected"].iter().any(|w| first.contains(w));
    match e.span().filter(|_| wrong_value).and_then(|s| key_at(text, s.start)) {
        Some(key) => format!("{section}{at}: `{key}` must be {} ({first})", expected(key)),
        None => format!("{at}: {first}"),
    }
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
    fn editor_overrides_win_over_the_file_key_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("threadradar.toml"),
            "test-command = [\"{python}\", \"-m\", \"pytest\", \"-x\", \"{tests}\"]\ninterval-ms = 2\nruns-dir = \"profiles\"\nkeep-runs = 5\n",
        )
        .unwrap();
        let file = ProjectConfig::load(root).unwrap();
        // Nothing set: the file decides.
        assert_eq!(file.clone().overridden(&Overrides::default(), root), file);
        assert_eq!(folder_runs_dir(root, &Overrides::default()), root.join("profiles"));
        // Each override replaces its key only.
        let o = Overrides { interval_ms: Some(7.5), ..Default::default() };
        let c = file.clone().overridden(&o, root);
        assert_eq!((c.interval_ms, c.keep_runs, c.runs_dir.clone()), (Some(7.5), Some(5), Some(root.join("profiles"))));
        assert_eq!(c.test_command.as_deref().map(|t| t.len()), Some(5));
        let o = Overrides { test_command: Some(None), runs_dir: Some("elsewhere/runs".into()), keep_runs: Some(2), ..Default::default() };
        let c = file.clone().overridden(&o, root);
        assert_eq!(c.test_command, None, "pytest replaces the file's template");
        assert_eq!(c.runs_dir(root), root.join("elsewhere/runs"));
        assert_eq!(c.keep_runs, Some(2));
        assert_eq!(c.interval_ms, Some(2.0));
        assert_eq!(folder_runs_dir(root, &o), root.join("elsewhere/runs"));
        // Absolute and home-relative directories.
        let o = Overrides { runs_dir: Some("/tmp/tr-runs".into()), ..Default::default() };
        assert_eq!(folder_runs_dir(root, &o), PathBuf::from("/tmp/tr-runs"));
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            let o = Overrides { runs_dir: Some("~/tr".into()), ..Default::default() };
            assert_eq!(o.runs_dir_in(root), Some(PathBuf::from(home).join("tr")));
        }
        assert_eq!(Overrides { runs_dir: Some("  ".into()), ..Default::default() }.runs_dir_in(root), None);
        // No file: the default directory, or the override.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(folder_runs_dir(empty.path(), &Overrides::default()), empty.path().join(".threadradar/runs"));
    }

    #[test]
    fn test_command_arguments_round_trip() {
        assert_eq!(parse_test_command("pytest"), Ok(None));
        assert_eq!(parse_test_command("unittest"), Ok(Some(vec!["unittest".to_string()])));
        assert_eq!(parse_test_command("[\"pytest\"]"), Ok(None));
        let t = vec!["{python}".to_string(), "-m".into(), "pytest".into(), "-k".into(), "a b".into(), "{tests}".into()];
        assert_eq!(parse_test_command(&test_command_arg(Some(&t))), Ok(Some(t.clone())));
        assert_eq!(test_command_arg(None), "pytest");
        assert_eq!(test_command_arg(Some(&["unittest".to_string()])), "unittest");
        for bad in ["nose", "[]", "[\"\"]", "[1]", "[\"{python}\""] {
            let e = parse_test_command(bad).unwrap_err();
            assert!(e.starts_with("the test command ") && e.contains("JSON list of words like"), "{bad}: {e}");
        }
    }

    #[test]
    fn config_reads_validates_and_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(ProjectConfig::load(root).unwrap(), ProjectConfig::default());
        std::fs::write(
            root.join("pyproject.toml"),
            "[project]\nname = \"x\"\n\n[tool.threadradar]\npython = \".venv/bin/python\"\ninterval-ms = 2\nkeep-runs = 5\nstates = \"all\"\n",
        )
        .unwrap();
        let c = ProjectConfig::load(root).unwrap();
        assert_eq!(c.python, Some(root.join(".venv/bin/python")));
        assert_eq!(c.interval_ms, Some(2.0));
        assert_eq!(c.keep_runs, Some(5));
        assert_eq!(c.states, Some(CountedStates::All));
        std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"x\"\n\n[tool.threadradar]\nintervall = 2\n").unwrap();
        let e = ProjectConfig::load(root).unwrap_err();
        assert!(e.starts_with("unknown key `intervall` in [tool.threadradar] ") && e.contains("pyproject.toml line 5"), "{e}");
        std::fs::write(root.join("pyproject.toml"), "[tool.threadradar]\n\nkeep-runs = \"many\"\n").unwrap();
        let e = ProjectConfig::load(root).unwrap_err();
        assert!(e.contains("pyproject.toml line 3: "), "{e}");
        // A wrong type names the key and what it takes.
        assert!(e.starts_with("[tool.threadradar] ") && e.contains("line 3: `keep-runs` must be a whole number of runs, at least 1 ("), "{e}");
        std::fs::write(root.join("pyproject.toml"), "[tool.threadradar]\ninclude = [\n  \"a\",\n  3,\n]\n").unwrap();
        let e = ProjectConfig::load(root).unwrap_err();
        assert!(e.contains("pyproject.toml line 4: `include` must be a list of regular expressions, as strings ("), "{e}");
        // Out of range: the key, the file and the value's line.
        let py = root.join("pyproject.toml");
        for (toml, want) in [
            ("[project]\nname = \"x\"\n\n[tool.threadradar]\nstates = \"all\"\ninterval-ms = 0\n", "interval-ms in [tool.threadradar] {} line 6 must be between 0.05 and 10000 milliseconds (it is 0)"),
            ("[tool.threadradar]\n\nkeep-runs = 0\n", "keep-runs in [tool.threadradar] {} line 3 must be at least 1 (leave it out to keep every run)"),
            ("[tool.threadradar]\ntest-command = \"nose\"\n", "test-command in [tool.threadradar] {} line 2 is \"nose\": write \"pytest\", \"unittest\" or a template"),
            ("[tool.threadradar]\ninterval-ms = 2\ntest-command = [\n]\n", "test-command in [tool.threadradar] {} line 3 is empty: write e.g."),
            // An empty interpreter is its own sentence, not "the interpreter  does not exist".
            ("[tool.threadradar]\npython = \"\"\n", "python in [tool.threadradar] {} line 2 is empty: write the interpreter's path (\".venv/bin/python\") or name"),
        ] {
            std::fs::write(&py, toml).unwrap();
            let e = ProjectConfig::load(root).unwrap_err();
            assert!(e.starts_with(&want.replace("{}", &py.display().to_string())), "{toml:?}: {e}");
        }
        std::fs::write(root.join("threadradar.toml"), "python = 3\n").unwrap();
        let e = ProjectConfig::load(root).unwrap_err();
        assert!(e.contains("threadradar.toml line 1: `python` must be the interpreter's path or name, as a string ("), "{e}");
        std::fs::write(root.join("threadradar.toml"), "\nkeep-runs = 0\n").unwrap();
        let e = ProjectConfig::load(root).unwrap_err();
        assert_eq!(e, format!("keep-runs in {} line 2 must be at least 1 (leave it out to keep every run)", root.join("threadradar.toml").display()));
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
