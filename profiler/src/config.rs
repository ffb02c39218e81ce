//! The one schema of a project's ThreadRadar configuration: `[tool.threadradar]` in
//! `pyproject.toml`, or the same keys at the top level of `threadradar.toml` (which wins).
//!
//! Every command (`test`, `runs`, `report`, `sections`, `export`), the language server and,
//! through it, the editors read the configuration here, so they accept the same keys and say the
//! same sentence about a bad one. Keys are kebab-case (`interval-ms`, `critical-sections`); the
//! snake_case spelling of every key (`interval_ms`, `critical_sections`, `end_line`) is accepted
//! as an alias. A bad key or value is one sentence naming the file and the line.

use serde::Deserialize;
use std::path::{Path, PathBuf};

pub use crate::sections::ConfiguredSection;

/// The counted-state names `states` takes (the analysis crate's `CountedStates`; a test in the
/// language server checks that the two lists agree).
pub const STATES: [&str; 7] = ["auto", "computing", "computing-cpu", "computing+gil", "all", "waiting", "cpu"];

/// The keys of `[tool.threadradar]`, for the message about an unknown one.
pub const KEYS: &str = "python, test-command, interval-ms, states, include, exclude, runs-dir, keep-runs, synchronized, critical-sections, source-roots";

/// The keys of one `critical-sections` entry.
pub const SECTION_KEYS: &str = "file, line, end-line, lock";

/// `[tool.threadradar]` (or `threadradar.toml`), validated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProjectConfig {
    /// The file it was read from, if any.
    pub file: Option<PathBuf>,
    /// The interpreter, absolute (relative paths are resolved against the project root).
    pub python: Option<PathBuf>,
    /// The test command template; `{python}` and `{tests}` are replaced. `None`: pytest;
    /// `["unittest"]`: unittest.
    pub test_command: Option<Vec<String>>,
    pub interval_ms: Option<f64>,
    /// One of [`STATES`].
    pub states: Option<String>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// Absolute.
    pub runs_dir: Option<PathBuf>,
    /// Keep this many runs; older ones without a label or a pin are pruned after a test run.
    pub keep_runs: Option<usize>,
    /// Decorators that make a function a critical section (`mymod.synchronized`, without `@`).
    pub synchronized: Vec<String>,
    /// Extra critical sections.
    pub critical_sections: Vec<ConfiguredSection>,
    /// Where the program's paths are here (`source-roots`), host paths absolute.
    pub source_roots: crate::sourceroots::SourceRoots,
}

/// The keys, as a user writes them (kebab-case, snake_case as an alias).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Raw {
    // Spanned: a value that is out of range is reported with its line.
    python: Option<toml::Spanned<String>>,
    #[serde(alias = "test_command")]
    test_command: Option<toml::Spanned<CommandSpec>>,
    #[serde(alias = "interval_ms")]
    interval_ms: Option<toml::Spanned<f64>>,
    states: Option<toml::Spanned<String>>,
    include: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
    #[serde(alias = "runs_dir")]
    runs_dir: Option<String>,
    #[serde(alias = "keep_runs")]
    keep_runs: Option<toml::Spanned<u32>>,
    synchronized: Option<Vec<toml::Spanned<String>>>,
    #[serde(alias = "critical_sections")]
    critical_sections: Option<Vec<toml::Spanned<RawSection>>>,
    #[serde(alias = "source_roots")]
    source_roots: Option<toml::Spanned<RawRoots>>,
}

/// `source-roots`: a table `{"/w" = "/home/me/proj"}` or a list `["/w=/home/me/proj"]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawRoots {
    Table(std::collections::BTreeMap<String, String>),
    List(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSection {
    file: String,
    line: i64,
    #[serde(alias = "end_line")]
    end_line: Option<i64>,
    lock: Option<String>,
}

/// `test-command`: a runner's name (`"pytest"`, `"unittest"`) or a template.
#[derive(Deserialize)]
#[serde(untagged)]
enum CommandSpec {
    Name(String),
    Template(Vec<String>),
}

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
        for name in ["threadradar.toml", "pyproject.toml"] {
            let path = root.join(name);
            if let Some(text) = read(&path)? {
                match ProjectConfig::parse(&text, &path, root)? {
                    // A pyproject.toml without `[tool.threadradar]` is no configuration.
                    Some(c) => return Ok(c),
                    None => continue,
                }
            }
        }
        Ok(ProjectConfig::default())
    }

    /// The configuration of the nearest directory at or above `dir` that has a
    /// `threadradar.toml` or a `pyproject.toml` (the project a run made in `dir` belongs to).
    pub fn find(dir: &Path) -> Result<ProjectConfig, String> {
        match dir.ancestors().find(|d| d.join("threadradar.toml").is_file() || d.join("pyproject.toml").is_file()) {
            Some(root) => ProjectConfig::load(root),
            None => Ok(ProjectConfig::default()),
        }
    }

    /// Reads one named file: a `pyproject.toml` (its `[tool.threadradar]`) or a
    /// `threadradar.toml` (any other name: its top level). Relative paths in it are taken from
    /// its directory.
    pub fn load_file(path: &Path) -> Result<ProjectConfig, String> {
        let text = read(path)?.ok_or_else(|| format!("the configuration file {} does not exist: check the path", path.display()))?;
        let root = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        Ok(ProjectConfig::parse(&text, path, root)?.unwrap_or_else(|| ProjectConfig { file: Some(path.to_path_buf()), ..Default::default() }))
    }

    /// Parses `text` as the file `path` says (`pyproject.toml`: its `[tool.threadradar]`, `None`
    /// when it has none; else the top level). Relative paths are resolved against `root`.
    pub fn parse(text: &str, path: &Path, root: &Path) -> Result<Option<ProjectConfig>, String> {
        if path.file_name().is_some_and(|n| n == "pyproject.toml") {
            let section = "[tool.threadradar] ";
            let doc: Pyproject = toml::from_str(text).map_err(|e| explain(path, text, &e, section))?;
            match doc.tool.and_then(|t| t.threadradar) {
                Some(raw) => ProjectConfig::from_raw(raw, root, path, text, section).map(Some),
                None => Ok(None),
            }
        } else {
            let raw: Raw = toml::from_str(text).map_err(|e| explain(path, text, &e, ""))?;
            ProjectConfig::from_raw(raw, root, path, text, "").map(Some)
        }
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
            Some(c) => test_command(c.span(), c.into_inner(), &at)?,
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
        let states = match raw.states {
            Some(s) if !STATES.contains(&s.get_ref().as_str()) => {
                return Err(format!("states in {} is {:?}: write one of {}", at(s.span()), s.get_ref(), STATES.join(", ")));
            }
            Some(s) => Some(s.into_inner()),
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
        let mut critical_sections = Vec::new();
        for s in raw.critical_sections.unwrap_or_default() {
            let span = s.span();
            let s = s.into_inner();
            let line = u32::try_from(s.line).ok().filter(|&l| l >= 1);
            let end_line = s.end_line.map(|e| u32::try_from(e).ok().filter(|&e| Some(e) >= line));
            let (Some(line), false) = (line, end_line == Some(None)) else {
                return Err(format!(
                    "a critical section in {} has line {} and end-line {}: line is at least 1 and end-line (optional) at least line, e.g. {{file = \"app/x.py\", line = 12, end-line = 20}}",
                    at(span),
                    s.line,
                    s.end_line.map_or("unset".to_string(), |e| e.to_string())
                ));
            };
            let end_line = end_line.flatten();
            critical_sections.push(ConfiguredSection { file: abs(s.file).display().to_string(), line, end_line, lock: s.lock });
        }
        let source_roots = match raw.source_roots {
            None => Default::default(),
            Some(r) => {
                let span = r.span();
                let specs = match r.into_inner() {
                    RawRoots::Table(t) => t.into_iter().map(|(k, v)| format!("{k}={v}")).collect(),
                    RawRoots::List(l) => l,
                };
                crate::sourceroots::SourceRoots::parse(&specs, root).map_err(|e| format!("source-roots in {}: {e}", at(span)))?
            }
        };
        Ok(ProjectConfig {
            source_roots,
            file: Some(file.to_path_buf()),
            python: python.map(|p| if p.contains('/') { abs(p) } else { PathBuf::from(p) }),
            test_command,
            interval_ms,
            states,
            include: raw.include.unwrap_or_default(),
            exclude: raw.exclude.unwrap_or_default(),
            runs_dir: raw.runs_dir.map(abs),
            keep_runs,
            synchronized: raw.synchronized.unwrap_or_default().into_iter().map(|s| s.into_inner().trim_start_matches('@').to_string()).collect(),
            critical_sections,
        })
    }

    /// Where runs of this project go.
    pub fn runs_dir(&self, root: &Path) -> PathBuf {
        self.runs_dir.clone().unwrap_or_else(|| crate::runfile::runs_dir(root))
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

/// `test-command`'s value in [`ProjectConfig::test_command`]'s form.
fn test_command(span: std::ops::Range<usize>, c: CommandSpec, at: &dyn Fn(std::ops::Range<usize>) -> String) -> Result<Option<Vec<String>>, String> {
    match c {
        CommandSpec::Name(n) if n == "pytest" => Ok(None),
        CommandSpec::Name(n) if n == "unittest" => Ok(Some(vec![n])),
        CommandSpec::Name(n) => Err(format!(
            "test-command in {} is {n:?}: write \"pytest\", \"unittest\" or a template like [\"{{python}}\", \"-m\", \"pytest\", \"{{tests}}\"]",
            at(span)
        )),
        CommandSpec::Template(t) if t.is_empty() => Err(format!("test-command in {} is empty: write e.g. [\"{{python}}\", \"-m\", \"pytest\", \"{{tests}}\"]", at(span))),
        CommandSpec::Template(t) => Ok(Some(t)),
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
/// `.threadradar/runs`. A configuration file that cannot be read counts as none here: the
/// language server shows its sentence as a warning when it starts (and `threadradar test`, the
/// ▶ Profile lens and recording stop on it), so listing runs goes on meanwhile.
pub fn folder_runs_dir(folder: &Path, o: &Overrides) -> PathBuf {
    o.runs_dir_in(folder).unwrap_or_else(|| ProjectConfig::load(folder).map(|c| c.runs_dir(folder)).unwrap_or_else(|_| crate::runfile::runs_dir(folder)))
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

/// `critical_sections` → `critical-sections`: the canonical spelling of a key.
fn canonical(key: &str) -> String {
    key.replace('_', "-")
}

/// The key whose value is at `offset`: the nearest `key = …` line at or above it (a value may be
/// a list over several lines), if it is one of ours (in either spelling), canonical.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let start = offset.min(text.len());
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let upto = &text[..end];
    for line in upto.lines().rev() {
        let Some((k, _)) = line.split_once('=') else { continue };
        // `keep-runs`, `"keep-runs"`, `tool.threadradar.keep-runs`: the last part of the key.
        let k = k.trim().rsplit('.').next().unwrap_or("").trim().trim_matches(['"', '\'', '{', ' ']);
        if k.is_empty() || k.contains(char::is_whitespace) {
            continue;
        }
        let k = canonical(k);
        return KEYS.split(", ").chain(SECTION_KEYS.split(", ")).find(|&known| known == k).map(String::from);
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
        "synchronized" => "a list of decorator names, as strings, e.g. [\"mymod.synchronized\"]",
        "critical-sections" | "file" | "line" | "end-line" | "lock" => {
            "a list of tables like {file = \"app/x.py\", line = 12, end-line = 20, lock = \"cache\"} (file: a string, line and end-line: line numbers, lock: a string)"
        }
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
        if msg.contains("`lock`") {
            return format!("unknown key `{key}` in a critical section in {section}{at}: its keys are {SECTION_KEYS}");
        }
        return format!("unknown key `{key}` in {section}{at}: the keys are {KEYS} (snake_case spellings are accepted too)");
    }
    if let Some(rest) = msg.strip_prefix("missing field `") {
        let key = rest.split('`').next().unwrap_or(rest);
        return format!("a critical section in {section}{at} has no `{key}`: write e.g. {{file = \"app/x.py\", line = 12}}");
    }
    if msg.contains("untagged enum CommandSpec") {
        return format!("test-command in {section}{at} must be \"pytest\", \"unittest\" or a list of words like [\"{{python}}\", \"-m\", \"pytest\", \"{{tests}}\"]");
    }
    if msg.contains("untagged enum RawRoots") {
        return format!("source-roots in {section}{at} must be a table like {{\"/app\" = \"/home/me/project\"}} or a list like [\"/app=/home/me/project\"] (where the program saw its files = where they are here)");
    }
    let first = msg.lines().next().unwrap_or(msg).trim_end_matches('.');
    let wrong_value = ["invalid type", "invalid value", "unknown variant", "expected"].iter().any(|w| first.contains(w));
    match e.span().filter(|_| wrong_value).and_then(|s| key_at(text, s.start)) {
        Some(key) => format!("{section}{at}: `{key}` must be {} ({first})", expected(&key)),
        None => format!("{at}: {first}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ProjectConfig, String> {
        ProjectConfig::parse(text, Path::new("/p/pyproject.toml"), Path::new("/p")).map(Option::unwrap)
    }

    #[test]
    fn source_roots_are_a_table_or_a_list_of_specs() {
        let t = parse("[tool.threadradar]\nsource-roots = { \"/w\" = \"src\", \"/w/lib\" = \"/opt/lib\" }\n").unwrap();
        assert_eq!(t.source_roots.map("/w/app.py").as_deref(), Some("/p/src/app.py"), "a relative host path is the project's");
        assert_eq!(t.source_roots.map("/w/lib/x.py").as_deref(), Some("/opt/lib/x.py"));
        let l = parse("[tool.threadradar]\nsource_roots = [\"/w=/h\"]\n").unwrap();
        assert_eq!(l.source_roots.map("/w/a.py").as_deref(), Some("/h/a.py"));
        let e = parse("[tool.threadradar]\n\nsource-roots = [\"w=/h\"]\n").unwrap_err();
        assert!(e.starts_with("source-roots in [tool.threadradar] /p/pyproject.toml line 3: source root \"w=/h\""), "{e}");
        let e = parse("[tool.threadradar]\nsource-roots = 3\n").unwrap_err();
        assert!(e.starts_with("source-roots in [tool.threadradar] /p/pyproject.toml line 2 must be a table"), "{e}");
    }
}
