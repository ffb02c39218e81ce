//! Profiling one test (or one test file): the rules and the command that the language server's
//! `threadradar.profileTest` and `threadradar mcp`'s `profile_test` tool share, so that an editor
//! and an agent can run exactly the same tests the same way.
//!
//! Only a test that pytest's collection rules find in the file as it is now can be run (no
//! command of the caller's choosing): the project's own interpreter and `[tool.threadradar]`
//! configuration decide how (`threadradar test`), the run goes to the workspace folder's runs.

use crate::project::{self, Overrides, ProjectConfig, PytestConventions};
use crate::pytests;
use std::path::{Path, PathBuf};

/// The project directory of a test file: the nearest directory from the file up to its
/// workspace folder that has a project or pytest configuration file, else the workspace folder
/// (else the file's directory). pytest runs there and `[tool.threadradar]` is read there.
pub fn project_root(file: &Path, folders: &[PathBuf]) -> PathBuf {
    let folder = folders.iter().filter(|f| file.starts_with(f)).max_by_key(|f| f.as_os_str().len()).cloned();
    let mut dir = file.parent();
    while let Some(d) = dir {
        if ["threadradar.toml", "pyproject.toml", "pytest.ini", "tox.ini", "setup.cfg"].iter().any(|n| d.join(n).is_file()) {
            return d.to_path_buf();
        }
        if Some(d) == folder.as_deref() {
            break;
        }
        dir = d.parent();
    }
    folder.or_else(|| file.parent().map(Path::to_path_buf)).unwrap_or_default()
}

/// The workspace folder whose run list a test run of `root` belongs to.
pub fn folder_of(root: &Path, folders: &[PathBuf]) -> PathBuf {
    folders.iter().filter(|f| root.starts_with(f)).max_by_key(|f| f.as_os_str().len()).cloned().unwrap_or_else(|| root.to_path_buf())
}

/// A checked request to profile a test: run `threadradar <args>` in `root`; the run is written
/// to `output`.
#[derive(Clone, Debug)]
pub struct TestJob {
    pub root: PathBuf,
    /// pytest's node id, relative to `root`: `tests/test_x.py::TestX::test_y`, or the file.
    pub node: String,
    pub output: PathBuf,
    /// Arguments for the threadradar binary (`test …`), with `--progress-lines`.
    pub args: Vec<String>,
}

impl TestJob {
    /// Checks that `name` (pytest's `Class::test` or `test`, or `None` for the whole file) is a
    /// test of `file` as `text` (the buffer, else the file) is now, that the project's
    /// configuration and interpreter can run it, and makes the runs directory. Blocking (reads
    /// files, starts the interpreter to check for pytest). Errors are one sentence.
    /// `repeat` > 1 runs the test that many times as one run set: `output` is then the set's
    /// manifest, its runs `<manifest stem>-<i>.json` beside it.
    pub fn plan(file: &Path, name: Option<&str>, text: Option<String>, folders: &[PathBuf], selected_python: Option<&str>, repeat: u32) -> Result<TestJob, String> {
        Self::plan_with(file, name, text, folders, selected_python, repeat, &Overrides::default())
    }

    /// [`TestJob::plan`] with the editor's settings over the project's configuration
    /// (`testCommand`, `intervalMs`, `runsDir`, `keepRuns`): each one that is set is passed to
    /// `threadradar test` (`--test-command`, `--interval-ms`, `--runs-dir`, `--keep-runs`), which
    /// applies it over `[tool.threadradar]`; a relative `runsDir` is relative to the workspace folder.
    pub fn plan_with(
        file: &Path,
        name: Option<&str>,
        text: Option<String>,
        folders: &[PathBuf],
        selected_python: Option<&str>,
        repeat: u32,
        overrides: &Overrides,
    ) -> Result<TestJob, String> {
        if !(1..=100).contains(&repeat) {
            return Err(format!("the repeat count is a whole number from 1 to 100 (got {repeat}); 5 runs are usually enough to see the spread"));
        }
        if !file.is_file() {
            return Err(format!("{} does not exist: name a test file of the project", file.display()));
        }
        let root = project_root(file, folders);
        let conv = PytestConventions::find(file.parent().unwrap_or(&root), Some(&root));
        if !conv.is_test_file(file) {
            return Err(format!("{} is not a test file by pytest's rules (python_files) for {}", file.display(), root.display()));
        }
        if let Some(n) = name {
            let text = text.or_else(|| std::fs::read_to_string(file).ok()).unwrap_or_default();
            if !pytests::discover(&text, &conv).iter().any(|t| t.id == n) {
                return Err(format!("there is no test {n} in {} (renamed or removed?): the lenses show the tests as the file is now", file.display()));
            }
        }
        // The same rules `threadradar test` applies, checked here so that a bad setting is one
        // message instead of a failed recording.
        let folder = folder_of(&root, folders);
        // The editor's runs directory is relative to the workspace folder, where runs are listed.
        let editor_runs_dir = overrides.runs_dir_in(&folder);
        let config = ProjectConfig::load(&root)?.overridden(&Overrides { runs_dir: None, ..overrides.clone() }, &root);
        let python = project::resolve_python(&root, &config, None, selected_python.map(Path::new))?;
        // unittest runs the tests when the project says so, or when pytest is missing and the
        // module's tests are all TestCase methods (`threadradar test` decides the same).
        if !crate::unittests::wanted(config.test_command.as_deref()) {
            if let Err(e) = project::check_pytest(&python.path) {
                let rel = file.strip_prefix(&root).unwrap_or(file).display().to_string();
                if !crate::unittests::runnable(&root, &[rel]) {
                    return Err(e);
                }
            }
        }
        let runs_dir = match editor_runs_dir.clone() {
            Some(d) => d,
            None => ProjectConfig::load(&folder)?.runs_dir(&folder),
        };
        std::fs::create_dir_all(&runs_dir).map_err(|e| format!("cannot create {}: {e}", runs_dir.display()))?;
        let output = threadradar_profiler::runfile::new_run_path(&runs_dir, if repeat > 1 { "pytest.runset" } else { "pytest" }, std::time::SystemTime::now());
        let rel = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        let node = match name {
            Some(n) => format!("{rel}::{n}"),
            None => rel,
        };
        let mut args = vec!["test".to_string(), "--no-progress".into(), "--progress-lines".into(), "-o".into(), output.display().to_string()];
        if let Some(p) = selected_python {
            args.push("--selected-python".into());
            args.push(p.to_string());
        }
        if repeat > 1 {
            args.push("--repeat".into());
            args.push(repeat.to_string());
        }
        // The editor's overrides; what is not overridden `threadradar test` reads from the file.
        if let Some(c) = &overrides.test_command {
            args.push("--test-command".into());
            args.push(project::test_command_arg(c.as_deref()));
        }
        if let Some(ms) = overrides.interval_ms {
            args.push("--interval-ms".into());
            args.push(ms.to_string());
        }
        if editor_runs_dir.is_some() {
            args.push("--runs-dir".into());
            args.push(runs_dir.display().to_string());
        }
        if let Some(k) = overrides.keep_runs {
            args.push("--keep-runs".into());
            args.push(k.to_string());
        }
        args.extend(["--".into(), node.clone(), "-q".into()]);
        Ok(TestJob { root, node, output, args })
    }
}

/// pytest's `-q` progress lines: `..F.s  [ 40%]`.
pub fn is_pytest_progress(l: &str) -> bool {
    let t = l.trim_end();
    t.ends_with("%]") && t.rfind('[').is_some_and(|i| t[i + 1..t.len() - 2].trim().parse::<u32>().is_ok())
}

/// A progress message from the recorder's last `progress` line and pytest's last progress line.
pub fn progress_message(sampled: &str, pytest: &str) -> String {
    if pytest.is_empty() {
        format!("{sampled} — cancel stops the test and keeps the run")
    } else {
        format!("{sampled} — {pytest}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arguments `threadradar test` gets: only the editor's overrides that are set, the runs
    /// directory resolved against the workspace folder.
    #[test]
    fn the_editors_overrides_become_threadradar_test_options() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("tests")).unwrap();
        let file = root.join("tests/test_x.py");
        std::fs::write(&file, "import unittest\n\nclass Case(unittest.TestCase):\n    def test_a(self):\n        pass\n").unwrap();
        // unittest: planning does not ask the interpreter for pytest.
        std::fs::write(root.join("threadradar.toml"), "test-command = \"unittest\"\nruns-dir = \"profiles\"\n").unwrap();
        let folders = vec![root.clone()];
        let plain = TestJob::plan(&file, Some("Case::test_a"), None, &folders, None, 1).unwrap();
        assert_eq!(plain.output.parent().unwrap(), root.join("profiles"), "the project's runs-dir");
        let tail = |a: &[String]| a[5..].to_vec();
        assert_eq!(tail(&plain.args), vec!["--", "tests/test_x.py::Case::test_a", "-q"]);

        let o = Overrides {
            test_command: Some(Some(vec!["unittest".into()])),
            interval_ms: Some(0.5),
            runs_dir: Some("editor/runs".into()),
            keep_runs: Some(4),
        };
        let job = TestJob::plan_with(&file, None, None, &folders, None, 1, &o).unwrap();
        let runs = root.join("editor/runs");
        assert_eq!(job.output.parent().unwrap(), runs);
        assert!(runs.is_dir());
        assert_eq!(
            tail(&job.args),
            vec!["--test-command", "unittest", "--interval-ms", "0.5", "--runs-dir", runs.to_str().unwrap(), "--keep-runs", "4", "--", "tests/test_x.py", "-q"]
        );
        let template = Overrides { test_command: Some(Some(vec!["{python}".into(), "-m".into(), "unittest".into(), "{tests}".into()])), ..Default::default() };
        let job = TestJob::plan_with(&file, None, None, &folders, None, 1, &template).unwrap();
        assert_eq!(tail(&job.args)[..2], ["--test-command".to_string(), r#"["{python}","-m","unittest","{tests}"]"#.to_string()]);
        assert_eq!(job.output.parent().unwrap(), root.join("profiles"));
    }
}
