//! Profiling tests from the editor (issue 19), end to end: the real `threadradar lsp`, a real
//! pytest project (a copy of samples/python/testproject) and the protocol client of
//! tests/lsp_client. Outcomes are checked against pytest's own summary of the same tests, thread
//! names against the ones the code under test gives its threads.

mod common;
mod lsp_client;

use lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A copy of samples/python/testproject in a temporary directory.
fn project() -> (tempfile::TempDir, PathBuf) {
    // The misbehaving tests of the sample only misbehave when asked (every test here asks).
    std::env::set_var("TESTPROJECT_MISBEHAVE", "1");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("testproject");
    copy_dir(&common::repo().join("samples/python/testproject"), &root);
    (dir, root)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == "__pycache__" || name == ".threadradar" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(&name));
        } else {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

/// pytest's own counts for the same tests: its summary line (`1 failed, 5 passed in 0.6s`).
fn pytest_counts(root: &Path, args: &[&str]) -> Value {
    let out = std::process::Command::new(common::python())
        .args(["-m", "pytest", "-p", "no:cacheprovider", "-q"])
        .args(args)
        .current_dir(root)
        .env("TESTPROJECT_MISBEHAVE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout.lines().rev().find(|l| l.contains(" in ") && (l.contains("passed") || l.contains("failed"))).unwrap_or_else(|| panic!("{stdout}"));
    let count = |word: &str| {
        summary
            .trim_matches('=')
            .split(',')
            .map(str::trim)
            .find_map(|p| {
                let p = p.split(" in ").next().unwrap();
                let (n, w) = p.split_once(' ')?;
                (w == word || (word == "errors" && w == "error")).then(|| n.parse::<u64>().ok()).flatten()
            })
            .unwrap_or(0)
    };
    json!({ "passed": count("passed"), "failed": count("failed"), "errors": count("errors"), "skipped": count("skipped") })
}

fn line_of(text: &str, needle: &str) -> u64 {
    text.lines().position(|l| l.trim_start().starts_with(needle)).unwrap_or_else(|| panic!("{needle} not in the file")) as u64
}

fn lens_summary(lenses: &[Value]) -> Vec<(u64, String, Value)> {
    lenses
        .iter()
        .filter(|l| l["command"]["command"] == "threadradar.profileTest")
        .map(|l| {
            (l["range"]["start"]["line"].as_u64().unwrap(), l["command"]["title"].as_str().unwrap().to_string(), l["command"]["arguments"][0]["name"].clone())
        })
        .collect()
}

fn counts(outcome: &Value) -> Value {
    json!({ "passed": outcome["passed"], "failed": outcome["failed"], "errors": outcome["errors"], "skipped": outcome["skipped"] })
}

fn messages_of(c: &LspClient, method: &str) -> Vec<String> {
    c.notifications.iter().filter(|n| n["method"] == method).map(|n| n["params"]["message"].as_str().unwrap_or("").to_string()).collect()
}

fn thread_names(run: &Path) -> Vec<String> {
    common::read(run).threads.iter().map(|t| t.name.clone()).collect()
}

#[test]
fn lenses_on_tests_profile_with_progress_and_the_outcome_pytest_reports() {
    let _serial = common::serial();
    let (_dir, root) = project();
    let tests = root.join("tests/check_pool.py");
    let text = std::fs::read_to_string(&tests).unwrap();
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({ "notifyChanges": true, "pollMs": 200 }));
    c.open(&tests, &text);

    // A lens on each test, read with the project's python_files = check_*.py.
    let lenses = lens_summary(&c.code_lenses(&tests));
    let expected = vec![
        (0, "▶ Profile file".to_string(), Value::Null),
        (line_of(&text, "def test_parallel_sum_is_right"), "▶ Profile".into(), json!("test_parallel_sum_is_right")),
        (line_of(&text, "def test_checked_sum_is_right"), "▶ Profile".into(), json!("test_checked_sum_is_right")),
        (line_of(&text, "def test_any_number_of_workers"), "▶ Profile".into(), json!("test_any_number_of_workers")),
        (line_of(&text, "class TestPool"), "▶ Profile class".into(), json!("TestPool")),
        (line_of(&text, "def test_empty"), "▶ Profile".into(), json!("TestPool::test_empty")),
        (line_of(&text, "class PoolCase"), "▶ Profile class".into(), json!("PoolCase")),
        (line_of(&text, "def test_small"), "▶ Profile".into(), json!("PoolCase::test_small")),
    ];
    assert_eq!(lenses, expected);
    // The code under test is no test module: no lenses there.
    let pool = root.join("pool.py");
    assert!(lens_summary(&c.code_lenses(&pool)).is_empty());

    // The whole file: progress while it runs, then the run with pytest's outcome.
    let before = c.server_requests.len();
    let answer = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": null })).unwrap();
    let run = PathBuf::from(answer["run"].as_str().unwrap());
    assert_eq!(run.parent().unwrap(), root.join(".threadradar/runs"));
    let truth = pytest_counts(&root, &["tests/check_pool.py"]);
    assert_eq!(counts(&answer["outcome"]), truth, "{answer}");
    assert!(
        answer["outcome"]["first_failure"].as_str().unwrap().starts_with("test_checked_sum_is_right: AssertionError: checked_sum leaves the last number out"),
        "{answer}"
    );
    let token = c.server_requests[before..]
        .iter()
        .find(|r| r["method"] == "window/workDoneProgress/create")
        .map(|r| r["params"]["token"].clone())
        .expect("a progress for the test run");
    assert!(token.as_str().unwrap().starts_with("threadradar/test/"));
    let reports: Vec<String> = c
        .notifications
        .iter()
        .filter(|n| n["method"] == "$/progress" && n["params"]["token"] == token && n["params"]["value"]["kind"] == "report")
        .map(|n| n["params"]["value"]["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(reports.iter().any(|m| m.contains(" samples, ") && m.contains(" threads")), "{reports:?}");
    assert!(reports.iter().any(|m| m.contains("%]")), "pytest's progress line: {reports:?}");
    c.drain(Duration::from_millis(300));
    let shown = messages_of(&c, "window/showMessage");
    assert!(shown.iter().any(|m| m.starts_with("ThreadRadar: tests/check_pool.py: ") && m.contains("1 failed")), "{shown:?}");

    // The run: the test, its outcome, the interpreter and why, the worker threads.
    let meta = serde_json::to_value(&common::read(&run).meta).unwrap();
    assert_eq!(meta["test"]["id"], "tests/check_pool.py");
    assert_eq!(counts(&meta["test"]["outcome"]), truth);
    assert!(meta["interpreter"]["source"] == "python3 on PATH" || meta["interpreter"]["source"] == "$VIRTUAL_ENV", "{}", meta["interpreter"]);
    assert_eq!(meta["interval_ms"], 2.0, "[tool.threadradar] interval-ms");
    let names = thread_names(&run);
    assert!(names.iter().any(|n| n.starts_with("pool-worker-")), "{names:?}");

    // It is the active run; hints and lenses were refreshed and the code under test is annotated.
    let runs = c.call("threadRadar/runs", json!({}));
    assert_eq!(runs["active"], json!(run));
    assert_eq!(runs["runs"][0]["history"]["test"], "tests/check_pool.py");
    assert_eq!(counts(&runs["runs"][0]["history"]["outcome"]), truth);
    assert!(runs["runs"][0]["history"]["threads"].as_u64().unwrap() >= 5);
    assert!(c.server_requests[before..].iter().any(|r| r["method"] == "workspace/inlayHint/refresh"));
    assert!(c.server_requests[before..].iter().any(|r| r["method"] == "workspace/codeLens/refresh"));
    c.open(&pool, &std::fs::read_to_string(&pool).unwrap());
    let hints = c.inlay_hints(&pool);
    let hinted: Vec<u64> = hints.iter().map(|h| h["position"]["line"].as_u64().unwrap()).collect();
    let pool_text = std::fs::read_to_string(&pool).unwrap();
    assert!(hinted.contains(&line_of(&pool_text, "def square_all")), "{hints:#?}");

    // "▶ Profile again" reruns the last test; one test by name, twice: compare with previous.
    let again = lens_summary(&c.code_lenses(&tests)).into_iter().find(|l| l.1 == "▶ Profile again").expect("a Profile again lens");
    assert_eq!(again.2, Value::Null);
    let first = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": "TestPool::test_empty" })).unwrap();
    assert_eq!(counts(&first["outcome"]), json!({ "passed": 1, "failed": 0, "errors": 0, "skipped": 0 }));
    let second = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": "TestPool::test_empty" })).unwrap();
    let runs = c.call("threadRadar/runs", json!({}));
    assert_eq!(runs["runs"][0]["path"], second["run"]);
    assert_eq!(runs["runs"][0]["history"]["test"], "tests/check_pool.py::TestPool::test_empty");
    assert_eq!(runs["runs"][0]["history"]["previous"], first["run"]);
    assert!(runs["runs"][1]["history"].get("previous").is_none(), "only the newest run of a test offers it");
    let cmp = c.execute("threadradar.compareWithPrevious", json!({})).unwrap();
    assert!(cmp.is_object(), "{cmp}");
    let err = c.execute("threadradar.compareWithPrevious", json!({ "run": run })).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("no earlier run of the same test"), "{err}");

    // Label and pin through the protocol: kept in .threadradar/runs.json.
    let r = c.call("threadRadar/runs", json!({ "label": { "run": first["run"], "label": "before <the> fix" }, "pin": { "run": run, "pinned": true } }));
    let item = |p: &Value| r["runs"].as_array().unwrap().iter().find(|i| i["path"] == *p).unwrap().clone();
    assert_eq!(item(&first["run"])["history"]["label"], "before <the> fix");
    assert_eq!(item(&json!(run))["history"]["pinned"], true);
    let index: Value = serde_json::from_slice(&std::fs::read(root.join(".threadradar/runs.json")).unwrap()).unwrap();
    assert_eq!(index["runs"][run.file_name().unwrap().to_str().unwrap()]["pinned"], true);
    assert!(c.shutdown().success());
}

#[test]
fn cancelling_a_hanging_test_keeps_a_readable_partial_run() {
    let _serial = common::serial();
    let (_dir, root) = project();
    let tests = root.join("tests/check_misbehaving.py");
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({ "notifyChanges": true, "pollMs": 200 }));
    let before = c.server_requests.len();
    let id = 9001;
    c.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand",
        "params": { "command": "threadradar.profileTest", "arguments": [{ "uri": file_uri(&tests), "name": "test_hangs" }] } }));
    // Sampling, with the test's two spinner threads started (pytest's start-up takes a while on a
    // busy machine): "progress 2.0 s, 480 samples, 3 threads".
    let threads = |m: &str| m.split(" samples, ").nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse::<u32>().ok());
    let sampling = |n: &Value| n["method"] == "$/progress" && n["params"]["value"]["message"].as_str().and_then(threads).is_some_and(|t| t >= 3);
    c.wait_for(Duration::from_secs(60), sampling).expect("the test's threads are being sampled");
    c.drain(Duration::from_millis(800));
    let token = c.server_requests[before..].iter().find(|r| r["method"] == "window/workDoneProgress/create").map(|r| r["params"]["token"].clone()).unwrap();
    c.notify("window/workDoneProgress/cancel", json!({ "token": token }));
    let answer = c.wait_for(Duration::from_secs(30), |m| m.get("method").is_none() && m["id"] == id).expect("profileTest answers after the cancel");
    let result = &answer["result"];
    let run = PathBuf::from(result["run"].as_str().unwrap_or_else(|| panic!("{answer}")));
    let recorded = common::read(&run);
    assert!(recorded.meta.sample_count > 20, "{:?}", recorded.meta);
    let names = thread_names(&run);
    assert!(names.iter().any(|n| n == "spinner-0") && names.iter().any(|n| n == "spinner-1"), "{names:?}");
    assert_eq!(recorded.meta.test.as_ref().unwrap().id, "tests/check_misbehaving.py::test_hangs");
    // A cancelled test has no outcome (pytest's report after the interrupt has a nameless
    // testcase for the test it stopped, which once made this "1 passed").
    assert!(result["outcome"].is_null(), "{answer}");
    assert!(recorded.meta.test.as_ref().unwrap().outcome.is_none(), "{:?}", recorded.meta.test);
    let runs = c.call("threadRadar/runs", json!({}));
    assert_eq!(runs["active"], json!(run));
    let item = runs["runs"].as_array().unwrap().iter().find(|r| r["path"] == json!(run)).unwrap_or_else(|| panic!("{runs}"));
    assert!(item["history"]["outcome"].is_null(), "{item}");
    c.drain(Duration::from_millis(300));
    let shown = messages_of(&c, "window/showMessage");
    assert!(shown.iter().any(|m| m.contains("test_hangs: outcome unknown: pytest was interrupted before its tests ended")), "{shown:?}");
    assert!(c.shutdown().success());
}

#[test]
fn bad_input_is_one_sentence() {
    let _serial = common::serial();
    let (dir, root) = project();
    let tests = root.join("tests/check_pool.py");
    let misbehaving = root.join("tests/check_misbehaving.py");
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({ "pollMs": 200 }));
    let msg = |r: Result<Value, Value>| r.expect_err("an error")["message"].as_str().unwrap().to_string();

    // A test that no longer exists (renamed in the buffer).
    let e = msg(c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": "test_gone" })));
    assert!(e.starts_with("there is no test test_gone in ") && e.contains("check_pool.py"), "{e}");
    let e = msg(c.execute("threadradar.profileTest", json!({ "uri": file_uri(&root.join("tests/nope.py")), "name": null })));
    assert!(e.contains("nope.py does not exist"), "{e}");
    let e = msg(c.execute("threadradar.profileTest", json!({ "name": "x" })));
    assert!(e.starts_with("threadradar.profileTest needs [{\"uri\""), "{e}");

    // The editor's interpreter does not exist.
    c.notify("workspace/didChangeConfiguration", json!({ "settings": { "threadradar": { "python": "/no/such/python" } } }));
    let e = msg(c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": null })));
    assert!(e.starts_with("the interpreter /no/such/python (the interpreter selected in the editor) does not exist"), "{e}");

    // An interpreter without pytest: a venv of its own.
    let venv = dir.path().join("bare");
    let made = std::process::Command::new(common::python()).args(["-m", "venv", "--without-pip"]).arg(&venv).status().unwrap();
    assert!(made.success());
    let py = venv.join("bin/python");
    c.notify("workspace/didChangeConfiguration", json!({ "settings": { "threadradar": { "python": py } } }));
    let e = msg(c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": null })));
    let p = py.display();
    assert_eq!(e, format!("pytest is not installed in {p}: `{p} -m pip install pytest`, or set [tool.threadradar] python"));
    c.notify("workspace/didChangeConfiguration", json!({ "settings": { "threadradar": { "python": null } } }));

    // A bad key in the project's configuration: file and line.
    let pyproject = root.join("pyproject.toml");
    let good = std::fs::read_to_string(&pyproject).unwrap();
    std::fs::write(&pyproject, good.replace("interval-ms = 2", "intervall = 2")).unwrap();
    let e = msg(c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": null })));
    let line = good.lines().position(|l| l.starts_with("interval-ms")).unwrap() + 1;
    assert!(e.starts_with(&format!("unknown key `intervall` in [tool.threadradar] {} line {line}: the keys are ", pyproject.display())), "{e}");
    std::fs::write(&pyproject, &good).unwrap();

    // A test that kills its own process group: the run is kept, the outcome is unknown.
    let answer = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&misbehaving), "name": "test_kills_its_process_group" })).unwrap();
    assert!(answer["outcome"].is_null(), "{answer}");
    let run = PathBuf::from(answer["run"].as_str().unwrap());
    let recorded = common::read(&run);
    assert!(recorded.meta.sample_count > 0);
    assert_eq!(recorded.meta.exit_status.and_then(|s| s.signal), Some(9));
    c.drain(Duration::from_millis(300));
    let shown = messages_of(&c, "window/showMessage");
    assert!(
        shown.iter().any(|m| m.contains("test_kills_its_process_group: outcome unknown: pytest wrote no report (it was killed with SIGKILL)")),
        "{shown:?}"
    );
    // The server is still there.
    assert!(c.alive());
    assert!(c.shutdown().success());
}

#[test]
fn an_xdist_run_includes_the_workers_threads() {
    let _serial = common::serial();
    let has_xdist = std::process::Command::new(common::python()).args(["-c", "import xdist"]).status().is_ok_and(|s| s.success());
    if !has_xdist {
        common::skip("pytest-xdist", "pytest-xdist is not installed (tests/run_all.sh installs it)");
        return;
    }
    let (_dir, root) = project();
    // The test command template: pytest-xdist with two workers.
    let pyproject = root.join("pyproject.toml");
    let text = std::fs::read_to_string(&pyproject).unwrap();
    std::fs::write(
        &pyproject,
        text.replace("interval-ms = 2", "interval-ms = 2\ntest-command = [\"{python}\", \"-m\", \"pytest\", \"-n\", \"2\", \"{tests}\"]"),
    )
    .unwrap();
    let tests = root.join("tests/check_xdist.py");
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({ "pollMs": 200 }));
    let answer = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": null })).unwrap();
    assert_eq!(counts(&answer["outcome"]), pytest_counts(&root, &["-n", "2", "tests/check_xdist.py"]));
    let run = common::read(Path::new(answer["run"].as_str().unwrap()));
    assert!(run.meta.pids.len() >= 3, "pytest and its two workers: {:?}", run.meta.pids);
    let workers: std::collections::HashSet<u32> = run.threads.iter().filter(|t| t.name.starts_with("pool-worker-")).map(|t| t.pid).collect();
    assert!(workers.len() >= 2, "worker threads in both xdist workers: {:?}", run.threads.iter().map(|t| (&t.name, t.pid)).collect::<Vec<_>>());
    assert!(c.shutdown().success());
}

/// The hint labels of `file` for the newest run of `root`, from a fresh server started with
/// `settings`: what a user sees on opening the project.
fn hint_labels(root: &Path, file: &Path, settings: Value) -> Vec<String> {
    let mut c = LspClient::spawn(common::bin(), root);
    c.initialize(root, settings);
    c.open(file, &std::fs::read_to_string(file).unwrap());
    let labels = c.inlay_hints(file).iter().map(lsp_client::label).collect();
    c.shutdown();
    labels
}

#[test]
fn the_projects_counted_states_are_the_default_and_the_editor_settings_override_them() {
    let _serial = common::serial();
    let (_dir, root) = project();
    let tests = root.join("tests/check_pool.py");
    let pool = root.join("pool.py");
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({}));
    c.open(&tests, &std::fs::read_to_string(&tests).unwrap());
    c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": "test_parallel_sum_is_right" })).unwrap();
    c.shutdown();

    // The same run, counted two ways by the editor's setting.
    let computing = hint_labels(&root, &pool, json!({ "states": "computing" }));
    let all = hint_labels(&root, &pool, json!({ "states": "all" }));
    assert!(!computing.is_empty() && computing != all, "the main thread waits in join: counting it must change the figures\n{computing:?}\n{all:?}");
    // Without configuration: `auto`, which on a recorded run (it has the kernel's CPU
    // accounting) is computing samples weighted by CPU time.
    let weighted = hint_labels(&root, &pool, json!({ "states": "computing-cpu" }));
    assert!(!weighted.is_empty(), "the cpu-weighted hints");
    assert_eq!(hint_labels(&root, &pool, json!({})), weighted, "without configuration `auto` counts");
    assert_eq!(hint_labels(&root, &pool, json!({ "states": "auto" })), weighted, "`auto` is `computing-cpu` for a recorded run");

    // `[tool.threadradar] states = "all"` makes every state count by default...
    let pyproject = root.join("pyproject.toml");
    let text = std::fs::read_to_string(&pyproject).unwrap();
    std::fs::write(&pyproject, text.replace("interval-ms = 2", "interval-ms = 2\nstates = \"all\"")).unwrap();
    assert_eq!(hint_labels(&root, &pool, json!({})), all, "the project's states");
    // ...and the editor's setting still wins.
    assert_eq!(hint_labels(&root, &pool, json!({ "states": "computing" })), computing, "the editor's states");

    // `include`/`exclude` are which artifacts the overview lists when the request names none.
    let listed = |root: &Path, params: Value| -> Vec<String> {
        let mut c = LspClient::spawn(common::bin(), root);
        c.initialize(root, json!({}));
        let o = c.call("threadRadar/overview", params);
        c.shutdown();
        o["functions"].as_array().unwrap_or_else(|| panic!("{o}")).iter().map(|f| f["file"].as_str().unwrap().to_string()).collect()
    };
    let before = listed(&root, json!({}));
    assert!(before.iter().any(|f| f.ends_with("pool.py")) && before.iter().any(|f| !f.ends_with("pool.py")), "{before:?}");
    let text = std::fs::read_to_string(&pyproject).unwrap();
    std::fs::write(&pyproject, text.replace("interval-ms = 2", "interval-ms = 2\ninclude = [\"/pool\\\\.py$\"]")).unwrap();
    let configured = listed(&root, json!({}));
    assert!(!configured.is_empty() && configured.iter().all(|f| f.ends_with("pool.py")), "{configured:?}");
    // A request's own pattern replaces the project's.
    let own = listed(&root, json!({ "include": ["check_pool"] }));
    assert!(!own.is_empty() && own.iter().all(|f| f.ends_with("check_pool.py")), "{own:?}");
}

#[test]
fn without_pytest_profile_test_runs_a_testcase_with_unittest() {
    let _serial = common::serial();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("uproject");
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(root.join("tests/__init__.py"), "").unwrap();
    let tests = root.join("tests/test_case.py");
    let text = "import unittest\n\n\nclass Case(unittest.TestCase):\n    def test_ok(self):\n        self.assertEqual(sum(range(10_000_000)), 49999995000000)\n\n    def test_no(self):\n        self.assertTrue(False, \"no means no\")\n";
    // test_ok computes for ~0.3 s: run alone, a test of a few milliseconds can end before a
    // loaded machine lets the recorder attach ("nothing was recorded").
    std::fs::write(&tests, text).unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"u\"\nversion = \"0\"\n").unwrap();
    // A venv without pip, so without pytest: the project's .venv is the interpreter.
    let venv = std::process::Command::new(common::python()).args(["-m", "venv", "--without-pip", ".venv"]).current_dir(&root).output().unwrap();
    assert!(venv.status.success(), "{}", String::from_utf8_lossy(&venv.stderr));
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({}));
    c.open(&tests, text);
    let answer = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": null })).unwrap();
    assert_eq!(counts(&answer["outcome"]), json!({ "passed": 1, "failed": 1, "errors": 0, "skipped": 0 }), "{answer}");
    assert!(answer["outcome"]["first_failure"].as_str().unwrap().starts_with("test_no: AssertionError: False is not true : no means no"), "{answer}");
    let one = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": "Case::test_ok" })).unwrap();
    assert_eq!(counts(&one["outcome"]), json!({ "passed": 1, "failed": 0, "errors": 0, "skipped": 0 }), "{one}");
    let meta = serde_json::to_value(&common::read(Path::new(one["run"].as_str().unwrap())).meta).unwrap();
    assert_eq!(meta["interpreter"]["source"], ".venv/bin/python");
    c.shutdown();
}

/// The run files of the project, oldest first.
fn run_files(root: &Path) -> Vec<PathBuf> {
    let mut all = threadradar_profiler::runfile::list_runs(&root.join(".threadradar/runs")).unwrap_or_default();
    all.reverse();
    all
}

#[test]
fn parametrized_and_async_tests_profile_again_testpaths_and_keep_runs() {
    let _serial = common::serial();
    let (_dir, root) = project();
    // keep-runs = 2: after each test run, older runs without a label or pin are deleted.
    let pyproject = root.join("pyproject.toml");
    let text = std::fs::read_to_string(&pyproject).unwrap();
    std::fs::write(&pyproject, text.replace("interval-ms = 2", "interval-ms = 2\nkeep-runs = 2")).unwrap();
    let tests = root.join("tests/check_pool.py");
    let text = std::fs::read_to_string(&tests).unwrap();
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({ "notifyChanges": true, "pollMs": 200 }));
    c.open(&tests, &text);

    // testpaths = ["tests"]: the same module outside them is no test module (no lenses).
    let outside = root.join("scripts/check_pool.py");
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    std::fs::write(&outside, &text).unwrap();
    c.open(&outside, &text);
    assert!(lens_summary(&c.code_lenses(&outside)).is_empty(), "a file outside testpaths");

    // A parametrized test by its function's name: every parameter runs, as pytest counts them.
    let before = c.notifications.len();
    let param = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": "test_any_number_of_workers" })).unwrap();
    let truth = pytest_counts(&root, &["tests/check_pool.py::test_any_number_of_workers"]);
    assert_eq!(truth["passed"], 2, "pytest runs both parameters: {truth}");
    assert_eq!(counts(&param["outcome"]), truth, "{param}");
    assert_eq!(param["test"], "tests/check_pool.py::test_any_number_of_workers");
    // Open panels and editors are told that the active run changed.
    assert!(
        c.notifications[before..].iter().any(|n| n["method"] == "threadRadar/changed" && n["params"]["reason"] == "run"),
        "threadRadar/changed {{reason: run}} after the test run"
    );

    // "▶ Profile again" carries the last test; running its command profiles that test again.
    let again = c.code_lenses(&tests).into_iter().find(|l| l["command"]["title"] == "▶ Profile again").expect("a Profile again lens");
    assert_eq!(again["range"]["start"]["line"], 0);
    assert_eq!(again["command"]["arguments"][0], json!({ "uri": file_uri(&tests), "name": "test_any_number_of_workers" }));
    let rerun = c.execute(again["command"]["command"].as_str().unwrap(), again["command"]["arguments"][0].clone()).unwrap();
    assert_eq!(rerun["test"], param["test"]);
    assert_eq!(counts(&rerun["outcome"]), truth);
    let runs = c.call("threadRadar/runs", json!({}));
    assert_eq!(runs["runs"][0]["history"]["previous"], param["run"], "compare with the previous run of this test");

    // Label the first run and pin the second: pruning (keep-runs = 2) keeps both, however old.
    let r = c.call("threadRadar/runs", json!({ "label": { "run": param["run"], "label": "baseline" }, "pin": { "run": rerun["run"], "pinned": true } }));
    assert!(r["runs"].as_array().is_some_and(|a| a.len() == 2), "{r}");
    let mut unmarked = Vec::new();
    for name in ["TestPool::test_empty", "PoolCase::test_small", "TestPool"] {
        let a = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": name })).unwrap();
        assert_eq!(counts(&a["outcome"]), json!({ "passed": 1, "failed": 0, "errors": 0, "skipped": 0 }), "{name}: {a}");
        unmarked.push(PathBuf::from(a["run"].as_str().unwrap()));
    }
    let expected = vec![PathBuf::from(param["run"].as_str().unwrap()), PathBuf::from(rerun["run"].as_str().unwrap()), unmarked[1].clone(), unmarked[2].clone()];
    assert_eq!(run_files(&root), expected, "the labelled, the pinned and the 2 newest other runs are kept");
    let listed: Vec<Value> = c.call("threadRadar/runs", json!({}))["runs"].as_array().unwrap().iter().map(|r| r["path"].clone()).collect();
    assert_eq!(listed.len(), 4, "the run list follows the pruning: {listed:?}");

    // An async test (pytest-asyncio): it gets a lens, runs, and its threads are in the run.
    let has_asyncio = std::process::Command::new(common::python()).args(["-c", "import pytest_asyncio"]).status().is_ok_and(|s| s.success());
    if !has_asyncio {
        common::skip("pytest-asyncio", "the async part: pytest-asyncio is not installed (tests/run_all.sh installs it)");
    } else {
        let atests = root.join("tests/check_async.py");
        let atext = std::fs::read_to_string(&atests).unwrap();
        c.open(&atests, &atext);
        let lenses = lens_summary(&c.code_lenses(&atests));
        assert!(lenses.contains(&(line_of(&atext, "async def test_sums_in_threads"), "▶ Profile".into(), json!("test_sums_in_threads"))), "{lenses:?}");
        let a = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&atests), "name": "test_sums_in_threads" })).unwrap();
        assert_eq!(counts(&a["outcome"]), pytest_counts(&root, &["tests/check_async.py::test_sums_in_threads"]), "{a}");
        assert_eq!(a["outcome"]["passed"], 1, "{a}");
        let names = thread_names(Path::new(a["run"].as_str().unwrap()));
        assert!(names.iter().any(|n| n.starts_with("asyncio_")), "asyncio.to_thread's workers: {names:?}");
    }
    assert!(c.shutdown().success());
}

#[test]
fn a_configured_runs_directory_holds_the_runs_their_labels_and_the_cli_reads_it() {
    let _serial = common::serial();
    let (_dir, root) = project();
    let pyproject = root.join("pyproject.toml");
    let text = std::fs::read_to_string(&pyproject).unwrap();
    std::fs::write(&pyproject, text.replace("interval-ms = 2", "interval-ms = 2\nruns-dir = \"profiles\"")).unwrap();
    let tests = root.join("tests/check_pool.py");
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({ "pollMs": 200 }));
    let a = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": "TestPool::test_empty" })).unwrap();
    let run = PathBuf::from(a["run"].as_str().unwrap());
    assert_eq!(run.parent().unwrap(), root.join("profiles"), "{a}");
    assert!(!root.join(".threadradar/runs").exists(), "nothing in the default runs directory");
    let runs = c.call("threadRadar/runs", json!({ "label": { "run": run, "label": "in profiles" } }));
    assert_eq!(runs["active"], json!(run), "the new run is the active one: {runs}");
    // A runs directory not named `runs` keeps its index inside it.
    let index: Value = serde_json::from_slice(&std::fs::read(root.join("profiles/.runs.json")).unwrap()).unwrap();
    assert_eq!(index["runs"][run.file_name().unwrap().to_str().unwrap()]["label"], "in profiles");
    // `testLens: false` (what VS Code sends for an untrusted workspace): no "▶ Profile" lens at all.
    c.open(&tests, &std::fs::read_to_string(&tests).unwrap());
    assert!(!lens_summary(&c.code_lenses(&tests)).is_empty());
    c.notify("workspace/didChangeConfiguration", json!({ "settings": { "threadradar": { "testLens": false } } }));
    c.drain(Duration::from_millis(300));
    assert_eq!(lens_summary(&c.code_lenses(&tests)), vec![], "testLens: false");
    assert!(c.shutdown().success());
    // The command line reads the same directory and index.
    let list = common::threadradar(&root, &["runs"]);
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains("tests/check_pool.py::TestPool::test_empty: 1 passed") && list.contains("\"in profiles\""), "{list}");
}

/// A repeat count makes a run set (issue 17): the test runs N times under the recorder, each run
/// a real recording with pytest's outcome, the manifest lists them, the runs list shows the runs
/// (not the manifest) and the last becomes the active one; `report` reads the set's spread.
#[test]
fn profiling_a_test_with_a_repeat_count_records_a_run_set() {
    let _serial = common::serial();
    let (_dir, root) = project();
    let tests = root.join("tests/check_pool.py");
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({}));
    c.open(&tests, &std::fs::read_to_string(&tests).unwrap());
    let answer = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": "test_parallel_sum_is_right", "repeat": 3 })).unwrap();
    let manifest = PathBuf::from(answer["runset"].as_str().unwrap_or_else(|| panic!("no run set: {answer}")));
    let runs: Vec<PathBuf> = answer["runs"].as_array().unwrap().iter().map(|r| PathBuf::from(r.as_str().unwrap())).collect();
    assert_eq!(runs.len(), 3, "{answer}");
    let set = threadradar_profiler::runset::read(&manifest).unwrap().expect("a run set manifest");
    assert_eq!(set.runs, runs);
    for r in &runs {
        let run = common::read(r);
        let t = run.meta.test.as_ref().expect("each run knows its test");
        assert_eq!(t.id, "tests/check_pool.py::test_parallel_sum_is_right");
        assert_eq!(t.outcome.as_ref().map(|o| (o.passed, o.failed)), Some((1, 0)), "{}", r.display());
        assert!(!run.samples.is_empty());
    }
    for o in answer["outcomes"].as_array().unwrap() {
        assert_eq!(counts(o), json!({ "passed": 1, "failed": 0, "errors": 0, "skipped": 0 }));
    }
    assert_eq!(answer["run"], json!(runs[2]));
    // The runs list: the three runs, the last one active; the manifest is not a run.
    let listed = c.call("threadRadar/runs", json!({}));
    let paths: Vec<&str> = listed["runs"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert!(!paths.contains(&manifest.to_str().unwrap()), "{paths:?}");
    for r in &runs {
        assert!(paths.contains(&r.to_str().unwrap()), "{paths:?}");
    }
    assert_eq!(listed["active"], json!(runs[2]));
    // The hover on a profiled function adds its mean and spread over the set, as `runSet` says.
    let pool = root.join("pool.py");
    let pool_text = std::fs::read_to_string(&pool).unwrap();
    c.open(&pool, &pool_text);
    let set = c.call("threadRadar/runSet", json!({ "level": "function" }))["set"].clone();
    assert_eq!(set["runs"].as_array().unwrap().len(), 3, "{set}");
    assert_eq!(set["active_index"], 2);
    let mut checked = 0;
    for a in set["artifacts"].as_array().unwrap().iter().filter(|a| a["file"] == pool.to_str().unwrap() && a["line"].as_u64().unwrap_or(0) > 0) {
        let line = a["line"].as_u64().unwrap() as u32 - 1;
        let hover = c.hover(&pool, line, 6);
        let Some(md) = hover["contents"]["value"].as_str() else { continue };
        let crt = &a["crt"];
        let want = format!("crt {:.1} % ± {:.1} % [{:.1} %–{:.1} %]", 100.0 * crt["mean"].as_f64().unwrap(), 100.0 * crt["sd"].as_f64().unwrap(), 100.0 * crt["min"].as_f64().unwrap(), 100.0 * crt["max"].as_f64().unwrap());
        assert!(md.contains("**Run set**") && md.contains("(3 runs, executed in ") && md.contains(&want), "{} at line {line}: {want} in {md}", a["qualname"]);
        checked += 1;
    }
    assert!(checked > 0, "no function of pool.py in the set: {set}");
    // The inlay hints add the spread of each crt over the set.
    let hints = c.inlay_hints(&pool);
    let mut spread_hints = 0;
    for a in set["artifacts"].as_array().unwrap().iter().filter(|a| a["file"] == pool.to_str().unwrap() && a["line"].as_u64().unwrap_or(0) > 0) {
        let line = a["line"].as_u64().unwrap() - 1;
        if let Some(h) = hints.iter().find(|h| h["position"]["line"].as_u64() == Some(line)) {
            let label = h["label"].as_str().unwrap_or("");
            assert!(label.ends_with(&format!(" · set ±{:.1}pp", 100.0 * a["crt"]["sd"].as_f64().unwrap())), "{label} vs {a}");
            spread_hints += 1;
        }
    }
    assert!(spread_hints > 0, "{hints:#?}");
    let shown = messages_of(&c, "window/showMessage");
    assert!(shown.iter().any(|m| m.contains("A run set of 3 runs")), "{shown:?}");
    // `report RUNSET` reads it: three runs' spread.
    let rep = common::threadradar(&root, &["report", manifest.to_str().unwrap(), "--json"]);
    assert!(rep.status.success(), "{}", common::stderr(&rep));
    let v: Value = serde_json::from_slice(&rep.stdout).unwrap();
    assert_eq!(v["runset"]["runs"].as_array().unwrap().len(), 3);
    assert_eq!(v["program"]["duration_s"]["n"], 3);
    // A bad count is one sentence.
    let e = c.execute("threadradar.profileTest", json!({ "uri": file_uri(&tests), "name": null, "repeat": 0 })).unwrap_err();
    assert!(e["message"].as_str().unwrap().contains("repeat count is a whole number from 1 to 100"), "{e}");
    assert!(c.shutdown().success());
}
