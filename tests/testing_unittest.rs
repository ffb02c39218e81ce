//! `threadradar test` with the standard library's unittest (issue 19): in a venv without pytest
//! (a real `python -m venv`, made in the test's temporary directory) and when the project's
//! `test-command` says `unittest`. The stored outcome is checked against what the test module
//! was written to do and against unittest's own summary of the same run.

mod common;

use std::path::{Path, PathBuf};
use threadradar_profiler::runfile;

/// Two passing tests that compute in named worker threads, one failure, one error, one skip.
const MODULE: &str = r#"import threading
import unittest


def parallel_sum(n, workers=3):
    out = [0] * workers

    def work(i):
        out[i] = sum(x * x for x in range(i, n, workers))

    threads = [threading.Thread(target=work, args=(i,), name=f"uworker-{i}") for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(out)


class WorkCase(unittest.TestCase):
    def test_sum_ok(self):
        self.assertEqual(parallel_sum(300_000), sum(x * x for x in range(300_000)))

    def test_also_ok(self):
        self.assertEqual(parallel_sum(10), 285)

    def test_wrong(self):
        self.assertEqual(parallel_sum(10), 1, "the sum is not one")

    def test_broken(self):
        raise RuntimeError("broken on purpose")

    @unittest.skip("not today")
    def test_skipped(self):
        pass
"#;

/// A project with that module and a `.venv` made from the tests' interpreter without pip (so
/// without pytest).
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("uproject");
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(root.join("tests/__init__.py"), "").unwrap();
    std::fs::write(root.join("tests/test_work.py"), MODULE).unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"uproject\"\nversion = \"0\"\n").unwrap();
    let venv = std::process::Command::new(common::python()).args(["-m", "venv", "--without-pip", ".venv"]).current_dir(&root).output().unwrap();
    assert!(venv.status.success(), "python -m venv: {}", String::from_utf8_lossy(&venv.stderr));
    let has_pytest = std::process::Command::new(root.join(".venv/bin/python")).args(["-c", "import pytest"]).output().unwrap();
    assert!(!has_pytest.status.success(), "the venv must not see pytest");
    (dir, root)
}

fn runs(root: &Path) -> Vec<PathBuf> {
    runfile::list_runs(&root.join(".threadradar/runs")).unwrap_or_default()
}

#[test]
fn without_pytest_a_testcase_module_runs_with_unittest() {
    let _serial = common::serial();
    let (_dir, root) = project();
    // unittest's own account of the same module, run directly.
    let direct = std::process::Command::new(root.join(".venv/bin/python")).args(["-m", "unittest", "tests.test_work"]).current_dir(&root).output().unwrap();
    let direct_err = String::from_utf8_lossy(&direct.stderr).into_owned();
    assert!(direct_err.contains("Ran 5 tests") && direct_err.contains("FAILED (failures=1, errors=1, skipped=1)"), "{direct_err}");

    let o = common::threadradar(&root, &["test", "--no-progress", "tests/test_work.py"]);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), direct.status.code(), "unittest's exit code: {err}");
    assert!(err.contains(".venv/bin/python (.venv/bin/python) and unittest"), "{err}");
    assert!(err.contains("Ran 5 tests"), "unittest's output is shown: {err}");
    let run = common::read(&runs(&root)[0]);
    let t = run.meta.test.clone().unwrap();
    assert_eq!(t.id, "tests/test_work.py");
    let outcome = t.outcome.unwrap_or_else(|| panic!("no outcome: {err}"));
    assert_eq!((outcome.passed, outcome.failed, outcome.errors, outcome.skipped), (2, 1, 1, 1), "{err}");
    let first = outcome.first_failure.unwrap();
    // unittest sorts the methods by name: test_broken comes before test_wrong.
    assert_eq!(first, "test_broken: RuntimeError: broken on purpose");
    assert!(run.threads.iter().any(|t| t.name.starts_with("uworker-")), "{:?}", run.threads.iter().map(|t| &t.name).collect::<Vec<_>>());
    assert!(run.meta.interpreter.unwrap().path.ends_with(".venv/bin/python"));

    // One test by its pytest node id.
    let one = common::threadradar(&root, &["test", "--no-progress", "tests/test_work.py::WorkCase::test_wrong"]);
    assert_eq!(one.status.code(), Some(1), "{}", common::stderr(&one));
    let run = common::read(&runs(&root)[0]);
    let o = run.meta.test.unwrap().outcome.unwrap();
    assert_eq!((o.passed, o.failed, o.errors, o.skipped), (0, 1, 0, 0));
    let first = o.first_failure.unwrap();
    assert!(first.starts_with("test_wrong: AssertionError: ") && first.contains("the sum is not one"), "{first}");

    // A pytest-style module cannot run without pytest: the sentence says what to do.
    std::fs::write(root.join("tests/test_plain.py"), "def test_plain():\n    assert True\n").unwrap();
    let plain = common::threadradar(&root, &["test", "--no-progress", "tests/test_plain.py"]);
    assert_eq!(plain.status.code(), Some(2), "{}", common::stderr(&plain));
    assert!(common::stderr(&plain).contains("pytest is not installed in "), "{}", common::stderr(&plain));
}

#[test]
fn test_command_unittest_uses_unittest_even_with_pytest_installed() {
    let _serial = common::serial();
    let (_dir, root) = project();
    let python = common::python();
    std::fs::write(root.join("threadradar.toml"), format!("python = {python:?}\ntest-command = \"unittest\"\n")).unwrap();
    let o = common::threadradar(&root, &["test", "--no-progress", "tests/test_work.py::WorkCase::test_also_ok"]);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("and unittest"), "{err}");
    let o = common::read(&runs(&root)[0]).meta.test.unwrap().outcome.unwrap();
    assert_eq!((o.passed, o.failed, o.errors, o.skipped), (1, 0, 0, 0));

    std::fs::write(root.join("threadradar.toml"), "test-command = \"nose\"\n").unwrap();
    let bad = common::threadradar(&root, &["test", "--no-progress", "tests/test_work.py"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(common::stderr(&bad).contains("test-command in ") && common::stderr(&bad).contains("\"unittest\""), "{}", common::stderr(&bad));
}

#[test]
fn a_test_command_of_the_wrong_type_is_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("threadradar.toml"), "interval-ms = 2\ntest-command = 3\n").unwrap();
    let o = common::threadradar(dir.path(), &["test", "--no-progress", "x.py"]);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("test-command in ") && err.contains("threadradar.toml line 2 must be \"pytest\", \"unittest\" or a list"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
