//! Running tests with the standard library's `unittest` instead of pytest: when the project's
//! `test-command` says `unittest`, or when pytest is not installed and the module's tests are all
//! `unittest.TestCase` methods. unittest writes no JUnit XML, so the outcome comes from its own
//! text: the summary (`Ran 5 tests in 0.01s`, `FAILED (failures=1, errors=1, skipped=1)`,
//! `OK (skipped=1)`) and the first `FAIL:` / `ERROR:` block.

use crate::project::PytestConventions;
use crate::pytests;
use std::path::Path;
use threadradar_profiler::run::TestOutcome;

/// `python -m unittest ARGS`, except that the runner's stream is also copied to the report file
/// (argv[1]): `unittest.main(module=None)` is exactly what `-m unittest` runs.
const RUNNER: &str = r#"import sys, unittest
report = open(sys.argv[1], "w")
class Tee:
    def __init__(self, *files): self.files = files
    def write(self, text):
        for f in self.files: f.write(text)
        return len(text)
    def flush(self):
        for f in self.files: f.flush()
class Runner(unittest.TextTestRunner):
    def __init__(self, **kw):
        kw["stream"] = Tee(sys.stderr, report)
        super().__init__(**kw)
sys.argv = ["python -m unittest"] + sys.argv[2:]
unittest.main(module=None, testRunner=Runner)
"#;

/// Whether the configured test command asks for unittest: `["unittest"]` or a template that runs
/// `-m unittest`.
pub fn wanted(template: Option<&[String]>) -> bool {
    match template {
        Some([one]) => one == "unittest",
        Some(t) => t.windows(2).any(|w| w[0] == "-m" && w[1] == "unittest"),
        None => false,
    }
}

/// Whether every test file among `args` (pytest node ids or paths, relative to `root`) has tests
/// and they are all `unittest.TestCase` methods: then unittest can run them without pytest.
pub fn runnable(root: &Path, args: &[String]) -> bool {
    let files: Vec<&str> = args.iter().filter(|a| !a.starts_with('-')).map(|a| a.split("::").next().unwrap_or(a)).collect();
    !files.is_empty()
        && files.iter().all(|f| {
            let path = root.join(f);
            let Ok(text) = std::fs::read_to_string(&path) else { return false };
            let conv = PytestConventions::find(path.parent().unwrap_or(root), Some(root));
            let tests = pytests::discover(&text, &conv);
            !tests.is_empty() && tests.iter().all(|t| t.unittest)
        })
}

/// A pytest node id or path as unittest names it: `tests/check_pool.py::PoolCase::test_small` →
/// `tests.check_pool.PoolCase.test_small`. Options are kept (`-q`, `-v`, `-k PATTERN`).
pub fn target(arg: &str) -> String {
    if arg.starts_with('-') {
        return arg.to_string();
    }
    let mut parts = arg.split("::");
    let file = parts.next().unwrap_or(arg);
    let module = file.strip_suffix(".py").unwrap_or(file).trim_start_matches("./").replace('/', ".");
    std::iter::once(module).chain(parts.map(String::from)).collect::<Vec<_>>().join(".")
}

/// The command that runs `args` with `python -m unittest`, copying unittest's report to `report`.
pub fn command(python: &Path, args: &[String], report: &Path) -> Vec<String> {
    let mut cmd = vec![python.display().to_string(), "-c".into(), RUNNER.into(), report.display().to_string()];
    cmd.extend(args.iter().filter(|a| *a != "--").map(|a| target(a)));
    cmd
}

/// Counts and the first failure from unittest's text report. Expected failures count as skipped
/// and unexpected successes as passed, as pytest's JUnit report counts them.
pub fn outcome(text: &str) -> Result<TestOutcome, String> {
    let ran = text
        .lines()
        .find_map(|l| l.strip_prefix("Ran ")?.split_whitespace().next()?.parse::<u32>().ok())
        .ok_or("unittest's report has no `Ran N tests` line: it was stopped before the end")?;
    let summary = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("OK") || l.starts_with("FAILED") || l.starts_with("NO TESTS RAN"))
        .ok_or("unittest's report has no OK / FAILED line: it was stopped before the end")?;
    let count = |key: &str| -> u32 {
        summary
            .split(['(', ')', ','])
            .filter_map(|p| p.trim().split_once('='))
            .find(|(k, _)| k.trim() == key)
            .and_then(|(_, v)| v.trim().parse().ok())
            .unwrap_or(0)
    };
    let mut o = TestOutcome {
        failed: count("failures"),
        errors: count("errors"),
        skipped: count("skipped") + count("expected failures"),
        ..Default::default()
    };
    o.passed = ran.saturating_sub(o.failed + o.errors + o.skipped);
    o.first_failure = first_failure(text);
    Ok(o)
}

/// `test_name: last line of the traceback` of the first `FAIL:` or `ERROR:` block.
fn first_failure(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.starts_with("FAIL: ") || l.starts_with("ERROR: "))?;
    let head = lines[start].split_once(": ").map_or("", |h| h.1);
    let name = head.split(" (").next().unwrap_or(head).trim();
    // The traceback sits between two dashed lines; its last line is the exception.
    // The exception is the first unindented line after the last `  File …` frame.
    let body: Vec<&str> =
        lines[start + 1..].iter().skip_while(|l| l.starts_with("---")).take_while(|l| !l.starts_with("---") && !l.starts_with("====")).copied().collect();
    let after = body.iter().rposition(|l| l.starts_with("  File ")).map_or(0, |i| i + 1);
    let msg = body[after..].iter().find(|l| !l.trim().is_empty() && !l.starts_with(' ')).map(|l| l.trim()).unwrap_or("");
    let msg: String = msg.chars().take(300).collect();
    Some(if msg.is_empty() { name.to_string() } else { format!("{name}: {msg}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_templates() {
        assert_eq!(target("tests/check_pool.py::PoolCase::test_small"), "tests.check_pool.PoolCase.test_small");
        assert_eq!(target("./tests/check_pool.py"), "tests.check_pool");
        assert_eq!(target("-q"), "-q");
        assert!(wanted(Some(&["unittest".into()])));
        assert!(wanted(Some(&["{python}".into(), "-m".into(), "unittest".into(), "{tests}".into()])));
        assert!(!wanted(Some(&["{python}".into(), "-m".into(), "pytest".into()])));
        assert!(!wanted(None));
    }

    #[test]
    fn a_report_without_its_summary_is_no_outcome() {
        assert!(outcome("..F\n").unwrap_err().contains("Ran N tests"));
    }
}
