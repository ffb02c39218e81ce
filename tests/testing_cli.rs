//! `threadradar test` and `threadradar runs` (issue 19) on a copy of samples/python/testproject:
//! the exit code is pytest's, the stored outcome is pytest's own summary, the run history's
//! labels, pins and pruning, and one sentence for bad input.

mod common;

use std::path::{Path, PathBuf};
use threadradar_profiler::runfile;

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("testproject");
    let src = common::repo().join("samples/python/testproject");
    for rel in ["pyproject.toml", "pool.py", "tests/check_pool.py", "tests/check_misbehaving.py"] {
        let to = root.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(src.join(rel), to).unwrap();
    }
    (dir, root)
}

fn runs(root: &Path) -> Vec<PathBuf> {
    runfile::list_runs(&root.join(".threadradar/runs")).unwrap_or_default()
}

fn out(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn test_records_pytest_with_its_outcome_and_exit_code() {
    let _serial = common::serial();
    let (_dir, root) = project();
    let failing = common::threadradar(&root, &["test", "--no-progress", "tests/check_pool.py"]);
    // pytest's own exit code (1: a test failed) and its own summary line.
    assert_eq!(failing.status.code(), Some(1), "{}", common::stderr(&failing));
    let summary = out(&failing).lines().rev().find(|l| l.contains(" in ") && l.contains("failed")).unwrap_or_default().to_string();
    let (failed, passed) = (summary.contains("1 failed"), summary.contains("5 passed"));
    assert!(failed && passed, "pytest said: {summary}");
    let err = common::stderr(&failing);
    assert!(
        err.contains(
            "threadradar: outcome 5 passed, 1 failed — first failure: test_checked_sum_is_right: AssertionError: checked_sum leaves the last number out"
        ),
        "{err}"
    );
    let run = common::read(&runs(&root)[0]);
    let t = run.meta.test.clone().unwrap();
    assert_eq!(t.id, "tests/check_pool.py");
    let o = t.outcome.unwrap();
    assert_eq!((o.passed, o.failed, o.errors, o.skipped), (5, 1, 0, 0));
    assert_eq!(run.meta.interval_ms, 2.0);
    assert!(run.meta.subprocesses);
    assert!(run.threads.iter().any(|t| t.name.starts_with("pool-worker-")));
    let interp = run.meta.interpreter.clone().unwrap();
    assert!(Path::new(&interp.path).is_file(), "{interp:?}");

    let passing = common::threadradar(&root, &["test", "--no-progress", "tests/check_pool.py::test_parallel_sum_is_right"]);
    assert_eq!(passing.status.code(), Some(0), "{}", common::stderr(&passing));
    // A .venv of the project comes before python3 on PATH.
    let venv = root.join(".venv/bin");
    std::fs::create_dir_all(&venv).unwrap();
    std::os::unix::fs::symlink(&interp.path, venv.join("python")).unwrap();
    let again = common::threadradar(&root, &["test", "--no-progress", "tests/check_pool.py::TestPool"]);
    assert_eq!(again.status.code(), Some(0), "{}", common::stderr(&again));
    let run = common::read(&runs(&root)[0]);
    assert_eq!(run.meta.interpreter.unwrap().source, ".venv/bin/python");

    // The history: list, label, pin, prune (labelled and pinned runs stay), rm.
    let all = runs(&root);
    assert_eq!(all.len(), 3);
    let name = |p: &PathBuf| p.file_name().unwrap().to_str().unwrap().to_string();
    let list = out(&common::threadradar(&root, &["runs"]));
    assert!(list.contains("tests/check_pool.py: 5 passed, 1 failed"), "{list}");
    assert!(list.contains("tests/check_pool.py::test_parallel_sum_is_right: 1 passed"), "{list}");
    let l = common::threadradar(&root, &["runs", "label", &name(&all[2]), "before the fix"]);
    assert!(l.status.success(), "{}", common::stderr(&l));
    assert!(common::threadradar(&root, &["runs", "pin", &name(&all[1])]).status.success());
    let list = out(&common::threadradar(&root, &["runs", "list"]));
    assert!(list.contains("\"before the fix\"") && list.contains("[pinned]"), "{list}");
    let json: serde_json::Value = serde_json::from_str(&out(&common::threadradar(&root, &["runs", "list", "--json"]))).unwrap();
    assert_eq!(json[2]["label"], "before the fix");
    assert_eq!(json[2]["outcome"]["failed"], 1);
    let p = common::threadradar(&root, &["runs", "prune", "--keep", "0"]);
    assert!(p.status.success(), "{}", common::stderr(&p));
    assert_eq!(runs(&root), vec![all[1].clone(), all[2].clone()], "the newest run had neither label nor pin");
    assert!(common::threadradar(&root, &["runs", "unpin", &name(&all[1])]).status.success());
    assert!(common::threadradar(&root, &["runs", "rm", &name(&all[1])]).status.success());
    assert_eq!(runs(&root), vec![all[2].clone()]);
    let e = common::threadradar(&root, &["runs", "label", "nope.json", "x"]);
    assert_eq!(e.status.code(), Some(2));
    assert!(common::stderr(&e).starts_with("threadradar: no run \"nope.json\" in "), "{}", common::stderr(&e));
    let e = common::threadradar(&root, &["runs", "prune"]);
    assert!(common::stderr(&e).contains("`threadradar runs prune --keep N`, or set [tool.threadradar] keep-runs"), "{}", common::stderr(&e));
}

#[test]
fn bad_interpreters_and_configuration_are_one_sentence() {
    let _serial = common::serial();
    let (dir, root) = project();
    let e = common::threadradar(&root, &["test", "--python", "/no/such/python", "tests/check_pool.py"]);
    assert_eq!(e.status.code(), Some(2));
    assert_eq!(
        common::stderr(&e),
        "threadradar: the interpreter /no/such/python (--python) does not exist or is not executable: fix the path, or remove it to use the project's .venv or python3\n"
    );
    let venv = dir.path().join("bare");
    assert!(std::process::Command::new(common::python()).args(["-m", "venv", "--without-pip"]).arg(&venv).status().unwrap().success());
    let py = venv.join("bin/python");
    std::fs::write(root.join("threadradar.toml"), format!("python = {:?}\n", py.display().to_string())).unwrap();
    let e = common::threadradar(&root, &["test", "tests/check_pool.py"]);
    let p = py.display();
    assert_eq!(common::stderr(&e), format!("threadradar: pytest is not installed in {p}: `{p} -m pip install pytest`, or set [tool.threadradar] python\n"));
    std::fs::write(root.join("threadradar.toml"), "python = \"x\"\n\nkeep-runs = \"all\"\n").unwrap();
    let e = common::threadradar(&root, &["runs"]);
    let err = common::stderr(&e);
    assert!(err.starts_with(&format!("threadradar: {} line 3: ", root.join("threadradar.toml").display())), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(runs(&root).is_empty());

    // A test that kills its own process group: pytest's status, a run, no outcome.
    std::fs::remove_file(root.join("threadradar.toml")).unwrap();
    let o = std::process::Command::new(common::bin())
        .args(["test", "--no-progress", "tests/check_misbehaving.py::test_kills_its_process_group"])
        .current_dir(&root)
        .env("TESTPROJECT_MISBEHAVE", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(128 + 9), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("threadradar: outcome unknown: pytest wrote no report (it was killed with SIGKILL)"), "{}", common::stderr(&o));
    let run = common::read(&runs(&root)[0]);
    assert!(run.meta.test.unwrap().outcome.is_none());
}

/// pytest's own exit code for `args` in `root`.
fn pytest_code(root: &Path, args: &[&str]) -> Option<i32> {
    std::process::Command::new(common::python()).args(["-m", "pytest", "-q", "-p", "no:cacheprovider"]).args(args).current_dir(root).output().unwrap().status.code()
}

#[test]
fn the_exit_code_is_pytests_own_and_runs_list_their_date() {
    let _serial = common::serial();
    let (_dir, root) = project();
    // Each case is run by pytest itself first: threadradar test must exit the same way.
    for (args, code) in [
        (vec!["tests/check_pool.py::test_parallel_sum_is_right"], 0), // passed
        (vec!["tests/check_pool.py::test_checked_sum_is_right"], 1), // a test failed
        (vec!["--", "--no-such-option", "tests/check_pool.py"], 4), // pytest's usage error
        (vec!["--", "-k", "no_such_test", "tests/check_pool.py"], 5), // nothing collected
    ] {
        let for_pytest: Vec<&str> = args.iter().copied().filter(|a| *a != "--").collect();
        assert_eq!(pytest_code(&root, &for_pytest), Some(code), "pytest {for_pytest:?}");
        let mut cmd = vec!["test", "--no-progress"];
        cmd.extend(&args);
        let o = common::threadradar(&root, &cmd);
        assert_eq!(o.status.code(), Some(code), "threadradar {cmd:?}: {}", common::stderr(&o));
    }
    let newest = common::read(&runs(&root)[0]);
    let t = newest.meta.test.unwrap();
    assert_eq!(t.id, "tests/check_pool.py", "-k's value is no test id");
    let o = t.outcome.expect("pytest wrote a report with no test in it");
    assert_eq!((o.passed, o.failed, o.errors, o.skipped), (0, 0, 0, 0));
    // The list says when each run started (UTC), from the run's own start time.
    let list = out(&common::threadradar(&root, &["runs"]));
    let start = threadradar_profiler::runfile::utc_stamp(std::time::UNIX_EPOCH + std::time::Duration::from_millis(newest.meta.start_unix_ms));
    let date = format!("{}-{}-{} {}:{} UTC", &start[0..4], &start[4..6], &start[6..8], &start[9..11], &start[11..13]);
    let first = list.lines().next().unwrap_or_default();
    assert!(first.contains(&date) && first.contains("tests/check_pool.py: no tests ran"), "{list}");
    // The usage error's run: pytest wrote no report.
    assert!(list.contains("outcome unknown"), "{list}");
}

/// Ctrl-C during a test: the run keeps what was sampled and has no outcome. (pytest's report
/// after the interrupt holds a nameless `<testcase>` for the test it stopped; that was once
/// stored as "1 passed".)
#[test]
fn an_interrupted_test_run_has_no_outcome() {
    use std::io::BufRead;
    let _serial = common::serial();
    let (_dir, root) = project();
    let mut child = std::process::Command::new(common::bin())
        .args(["test", "--no-progress", "--progress-lines", "tests/check_misbehaving.py::test_hangs"])
        .current_dir(&root)
        .env("TESTPROJECT_MISBEHAVE", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    // Sampling, with the test's two spinner threads started: "progress 2.0 s, 480 samples, 3 threads".
    let threads = |m: &str| m.split(" samples, ").nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse::<u32>().ok());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(200)) {
            Ok(l) => {
                let sampling = l.starts_with("threadradar: progress ") && threads(&l).is_some_and(|t| t >= 3);
                seen.push(l);
                if sampling {
                    break;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(e) => panic!("threadradar test ended: {e}: {seen:?}"),
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the hanging test was not sampled: {seen:?}");
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: kill takes no pointers; `child` is ours and not yet waited for.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    seen.extend(rx.iter());
    let err = seen.join("\n");
    assert!(err.contains("threadradar: outcome unknown: pytest was interrupted before its tests ended"), "{status:?} {err}");
    let run = common::read(&runs(&root)[0]);
    assert!(run.meta.sample_count > 20, "{:?}", run.meta);
    let t = run.meta.test.unwrap();
    assert_eq!(t.id, "tests/check_misbehaving.py::test_hangs");
    assert!(t.outcome.is_none(), "{:?}", t.outcome);
    let list = out(&common::threadradar(&root, &["runs"]));
    assert!(list.contains("tests/check_misbehaving.py::test_hangs: outcome unknown"), "{list}");
}

/// `--test-command`, `--runs-dir`, `--keep-runs` and `--interval-ms` override their keys of
/// `[tool.threadradar]` (the language server passes the editor's settings this way).
#[test]
fn command_line_options_override_the_projects_configuration() {
    let _serial = common::serial();
    let (_dir, root) = project();
    std::fs::write(
        root.join("threadradar.toml"),
        "interval-ms = 2\nkeep-runs = 10\ntest-command = [\"{python}\", \"-m\", \"pytest\", \"-k\", \"small\", \"{tests}\"]\n",
    )
    .unwrap();
    let template = r#"["{python}", "-m", "pytest", "-k", "empty", "{tests}"]"#;
    let args = ["test", "--no-progress", "--runs-dir", "out", "--keep-runs", "1", "--interval-ms", "4", "--test-command", template, "tests/check_pool.py"];
    let first = common::threadradar(&root, &args);
    assert_eq!(first.status.code(), Some(0), "{}", common::stderr(&first));
    assert!(common::stderr(&first).contains("threadradar: outcome 1 passed"), "only TestPool::test_empty: {}", common::stderr(&first));
    let written = runfile::list_runs(&root.join("out")).unwrap();
    assert_eq!(written.len(), 1);
    let run = common::read(&written[0]);
    assert_eq!(run.meta.interval_ms, 4.0);
    assert!(run.meta.command.windows(2).any(|w| w[0] == "-k" && w[1] == "empty"), "{:?}", run.meta.command);
    assert!(runs(&root).is_empty(), "nothing in the default runs directory");
    let second = common::threadradar(&root, &args);
    assert_eq!(second.status.code(), Some(0), "{}", common::stderr(&second));
    assert!(common::stderr(&second).contains("threadradar: pruned 1 old runs (keep-runs = 1;"), "{}", common::stderr(&second));
    assert_eq!(runfile::list_runs(&root.join("out")).unwrap().len(), 1);
    // `pytest` replaces the project's template; without options the file decides.
    let plain = common::threadradar(&root, &["test", "--no-progress", "--test-command", "pytest", "tests/check_pool.py::TestPool"]);
    assert_eq!(plain.status.code(), Some(0), "{}", common::stderr(&plain));
    let run = common::read(&runs(&root)[0]);
    assert!(!run.meta.command.iter().any(|w| w == "-k") && run.meta.interval_ms == 2.0, "{:?} {}", run.meta.command, run.meta.interval_ms);

    // Bad values: one sentence, nothing run.
    for (bad, want) in [
        (vec!["--test-command", "nose"], "threadradar: the test command \"nose\" is not a runner's name: write pytest, unittest or a template as a JSON list of words like"),
        (vec!["--test-command", "[]"], "threadradar: the test command [] is empty or has an empty word:"),
        (vec!["--keep-runs", "0"], "threadradar: --keep-runs must be at least 1"),
        (vec!["--interval-ms", "0"], "threadradar: --interval-ms must be between 0.05 and 10000 milliseconds (got 0)"),
    ] {
        let mut a = vec!["test", "--no-progress"];
        a.extend(bad.iter().copied());
        a.push("tests/check_pool.py");
        let e = common::threadradar(&root, &a);
        assert_eq!(e.status.code(), Some(2), "{bad:?}");
        let err = common::stderr(&e);
        assert!(err.starts_with(want) && err.lines().count() == 1, "{bad:?}: {err}");
    }
    assert_eq!(runs(&root).len(), 1);
}
