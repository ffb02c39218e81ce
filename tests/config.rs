//! A bad `[tool.threadradar]` is never dropped silently: the CLI says it on stderr, the language
//! server as a window/showMessage warning (and as the error of a command that needs it), each one
//! sentence with the file and the line. The real binary, real files, the real LSP client.

mod common;
mod lsp_client;

use lsp_client::LspClient;
use serde_json::{json, Value};
use std::time::Duration;

/// A project directory with this `pyproject.toml` and a copy of the fixture run.
fn project(pyproject: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), pyproject).unwrap();
    std::fs::copy(common::repo().join("tests/fixtures/run-v1.json"), dir.path().join("run.json")).unwrap();
    dir
}

const BAD: &str = "[project]\nname = \"x\"\n[tool.threadradar]\nintervall = 2\n";

#[test]
fn report_says_that_the_configuration_is_bad() {
    let dir = project(BAD);
    let o = common::threadradar(dir.path(), &["report", "run.json"]);
    let err = common::stderr(&o);
    // The report can go on without the project's states and filters, but says so.
    assert!(err.contains("unknown key `intervall`") && err.contains("pyproject.toml line 4"), "stderr: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");
    assert_eq!(o.status.code(), Some(0), "stderr: {err}");
}

#[test]
fn runs_and_test_stop_on_a_bad_configuration_with_its_line() {
    let dir = project("[tool.threadradar]\nstates = \"everything\"\n");
    for args in [&["runs"][..], &["test", "tests/test_x.py"][..]] {
        let o = common::threadradar(dir.path(), args);
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("states in [tool.threadradar]") && err.contains("pyproject.toml line 2") && err.contains("\"everything\""), "{args:?}: {err}");
    }
}

#[test]
fn the_keys_the_docs_show_are_accepted_in_both_spellings() {
    // docs/sections.md's keys, snake_case and kebab-case: `threadradar runs` loads the
    // configuration like every other command and must not stop on them.
    for text in [
        "[tool.threadradar]\nsynchronized = [\"m.sync\"]\ncritical_sections = [{ file = \"a.py\", line = 3, end_line = 4 }]\nkeep_runs = 3\n",
        "[tool.threadradar]\nsynchronized = [\"m.sync\"]\ncritical-sections = [{ file = \"a.py\", line = 3, end-line = 4 }]\nkeep-runs = 3\n",
    ] {
        let dir = project(text);
        let o = common::threadradar(dir.path(), &["runs"]);
        assert_eq!(o.status.code(), Some(0), "{text}: {}", common::stderr(&o));
    }
}

fn warnings(c: &LspClient) -> Vec<String> {
    c.notifications
        .iter()
        .filter(|n| n["method"] == "window/showMessage" && n["params"]["type"] == 2)
        .filter_map(|n| n["params"]["message"].as_str().map(String::from))
        .collect()
}

#[test]
fn the_language_server_warns_about_a_bad_configuration() {
    let dir = project(BAD);
    let mut c = LspClient::spawn(common::bin(), dir.path());
    c.initialize(dir.path(), json!({}));
    let bad = |n: &Value| n["method"] == "window/showMessage" && n["params"]["message"].as_str().is_some_and(|m| m.contains("unknown key `intervall`"));
    let found = c.notifications.iter().any(bad) || c.wait_for(Duration::from_secs(10), bad).is_some();
    assert!(found, "no warning about the configuration: {:?}", warnings(&c));
    let w = warnings(&c);
    let m = w.iter().find(|m| m.contains("intervall")).unwrap();
    assert!(m.contains("pyproject.toml line 4"), "{m}");
    // A saved configuration is read again: a new mistake is a new warning.
    std::fs::write(dir.path().join("pyproject.toml"), "[tool.threadradar]\n\nkeep_runs = 0\n").unwrap();
    c.notify("textDocument/didSave", json!({ "textDocument": { "uri": lsp_client::file_uri(&dir.path().join("pyproject.toml")) } }));
    let again = |n: &Value| n["method"] == "window/showMessage" && n["params"]["message"].as_str().is_some_and(|m| m.contains("keep-runs in [tool.threadradar]") && m.contains("line 3"));
    assert!(c.wait_for(Duration::from_secs(10), again).is_some(), "no warning after the save: {:?}", warnings(&c));
    std::fs::write(dir.path().join("pyproject.toml"), BAD).unwrap();
    // Recording needs the project's interval: the command says why it cannot start.
    let e = c.execute("threadradar.record", json!({ "command": [common::python(), "-c", "pass"], "cwd": dir.path() })).unwrap_err();
    let msg = e["message"].as_str().unwrap_or_default();
    assert!(msg.contains("unknown key `intervall`") && msg.contains("line 4"), "{e}");
    c.shutdown();
}

#[test]
fn a_quoted_record_command_is_one_program_with_its_arguments() {
    // `python3 -c "import time; time.sleep(0.2)"` is three words, as a shell reads it.
    let dir = project("[project]\nname = \"x\"\n");
    let mut c = LspClient::spawn(common::bin(), dir.path());
    c.initialize(dir.path(), json!({}));
    let line = format!("{} -c \"import time; time.sleep(0.2)\"", common::python());
    let r = c.execute("threadradar.record", json!({ "command": line, "cwd": dir.path() })).unwrap();
    assert_eq!(r["command"], json!([common::python(), "-c", "import time; time.sleep(0.2)"]), "{r}");
    let done = |n: &Value| n["method"] == "window/showMessage" && n["params"]["message"].as_str().is_some_and(|m| m.starts_with("ThreadRadar: recorded "));
    assert!(c.notifications.iter().any(done) || c.wait_for(Duration::from_secs(30), done).is_some(), "the recording did not end well");
    // An unbalanced quote is one sentence, and nothing is started.
    let e = c.execute("threadradar.record", json!({ "command": "python3 -c \"import time", "cwd": dir.path() })).unwrap_err();
    let msg = e["message"].as_str().unwrap_or_default();
    assert!(msg.contains("quote"), "{e}");
    c.shutdown();
}
