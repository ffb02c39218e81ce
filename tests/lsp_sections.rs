//! Critical sections in the editor, end to end: a real recording of the ground-truth program in a
//! temporary workspace, the real `threadradar lsp`, a protocol client. The lens and hover figures
//! are checked against `threadradar sections --json` on the same run; an edited buffer gets none.

mod common;
mod lsp_client;

use lsp_client::LspClient;
use serde_json::{json, Value};
use std::time::Duration;

#[test]
fn a_lens_on_each_with_lock_line_and_a_sparkline_hover() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let script = root.join("truth.py");
    std::fs::copy(common::script("sections_truth.py"), &script).unwrap();
    let runs = root.join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let run = runs.join("20000101T000000Z-truth.json");
    let log = root.join("log.jsonl");
    let out = {
        let _serial = common::serial();
        common::record(&run, &["--interval-ms", "2"], &[script.to_str().unwrap(), log.to_str().unwrap(), "3", "60"])
    };
    assert!(out.status.success(), "record failed: {}", common::stderr(&out));
    let cli = common::threadradar(&root, &["sections", run.to_str().unwrap(), "--json"]);
    assert!(cli.status.success(), "{}", common::stderr(&cli));
    let v: Value = serde_json::from_slice(&cli.stdout).unwrap();
    let s = v["sections"].as_array().unwrap().iter().find(|s| s["function"] == "Store.update").unwrap().clone();
    let with_line = s["line"].as_u64().unwrap() as u32 - 1;

    let text = std::fs::read_to_string(&script).unwrap();
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({}));
    c.open(&script, &text);
    let lenses = c.code_lenses(&script);
    let lens = lenses
        .iter()
        .find(|l| l["range"]["start"]["line"] == with_line && l["command"]["title"].as_str().is_some_and(|t| t.starts_with("critical section")))
        .unwrap_or_else(|| panic!("no section lens on line {with_line}: {lenses:#?}"));
    let title = lens["command"]["title"].as_str().unwrap();
    // The same count as the CLI, spelled with grouped thousands.
    let n = s["execution_count"].as_u64().unwrap().to_string();
    let grouped: String = n.chars().rev().collect::<Vec<_>>().chunks(3).map(|c| c.iter().collect::<String>()).collect::<Vec<_>>().join(" ").chars().rev().collect();
    // Executions, not "runs" (a run is a recording), and "1 execution" in the singular.
    let word = if grouped == "1" { "execution" } else { "executions" };
    assert!(title.starts_with(&format!("critical section · {grouped} {word} · median ")), "{title}");
    assert!(title.contains(" · p99 ") && title.contains(" · others waited "), "{title}");
    let outliers = s["outliers"].as_array().unwrap().len();
    if outliers > 0 {
        let word = if outliers == 1 { "outlier" } else { "outliers" };
        assert!(title.ends_with(&format!(" · {outliers} {word}")), "{title}");
    }

    let hover = c.hover(&script, with_line, 8);
    let md = hover["contents"]["value"].as_str().unwrap_or_else(|| panic!("no hover: {hover}"));
    // Program names as code spans: no backslash escapes, which Neovim's float shows as they are.
    assert!(md.contains("**Critical section** on `Store._lock` (`Lock`)"), "{md}");
    assert!(!md.contains('\\'), "no backslash escapes: {md}");
    // The sparkline is the code span on the executions line (the waits part below may show a
    // waiting radar in the same block characters).
    let spark_line = md.lines().find(|l| l.contains("executions in time order")).unwrap_or_else(|| panic!("no sparkline: {md}"));
    let spark: String = spark_line.split('`').nth(1).unwrap_or("").chars().filter(|ch| ('▁'..='█').contains(ch)).collect();
    let listed = s["executions"].as_array().unwrap().len();
    assert_eq!(spark.chars().count(), listed.min(60), "{md}");
    assert!(spark.contains('█'), "the longest execution is a full bar: {md}");
    assert!(md.contains("Sampled"), "the hover says how the figures were obtained: {md}");
    // How the section was found, and the lock objects threads were recorded waiting on here.
    assert!(md.contains("Found `with` on a lock named in the source."), "{md}");
    for o in s["lock_objects"].as_array().unwrap() {
        assert!(md.contains(o["address"].as_str().unwrap()), "the hover names the lock object {o}: {md}");
    }

    // An edited buffer: the recorded lines cannot be vouched for, so no section lens.
    let edited = format!("# a new first line\n{text}");
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": lsp_client::file_uri(&script), "version": 2 }, "contentChanges": [{ "text": edited }] }),
    );
    let lenses = c.code_lenses(&script);
    assert!(
        !lenses.iter().any(|l| l["command"]["title"].as_str().is_some_and(|t| t.starts_with("critical section"))),
        "{lenses:#?}"
    );
    assert!(c.shutdown().success());
}

/// The section lens opens the Sections panel on its section; saved views (issue 18) are saved on
/// one recording and reopened on a second recording of the same program after an edit moved the
/// section's lines — found by file, function and lock, not by line; a view whose section the run
/// lacks says so; a broken `views.json` is one sentence, and the server goes on.
#[test]
fn the_lens_opens_its_section_and_saved_views_reopen_on_another_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let script = root.join("truth.py");
    std::fs::copy(common::script("sections_truth.py"), &script).unwrap();
    let runs = root.join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let (first, second) = (runs.join("20000101T000000Z-truth.json"), runs.join("20000101T000100Z-truth.json"));
    let log = root.join("log.jsonl");
    let record = |run: &std::path::Path| {
        let _serial = common::serial();
        let out = common::record(run, &["--interval-ms", "2"], &[script.to_str().unwrap(), log.to_str().unwrap(), "3", "40"]);
        assert!(out.status.success(), "record failed: {}", common::stderr(&out));
    };
    record(&first);
    let text = std::fs::read_to_string(&script).unwrap();
    let with_line = text.lines().position(|l| l.trim() == "with self._lock:").unwrap() as u32;

    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({ "panels": true }));
    c.open(&script, &text);
    let sections = c.call("threadRadar/sections", json!({}));
    let idx = sections["sections"].as_array().unwrap().iter().position(|s| s["function"] == "Store.update").expect("Store.update's section");
    let want = json!({ "file": script.to_str().unwrap(), "function": "Store.update", "lock": "Store._lock", "line": with_line + 1 });

    // The lens carries its section; running it opens the Sections panel there.
    let lenses = c.code_lenses(&script);
    let lens = lenses
        .iter()
        .find(|l| l["range"]["start"]["line"] == with_line && l["command"]["title"].as_str().is_some_and(|t| t.starts_with("critical section")))
        .unwrap_or_else(|| panic!("no section lens on line {with_line}: {lenses:#?}"));
    assert_eq!(lens["command"]["command"], "threadradar.openSections", "{lens}");
    assert_eq!(lens["command"]["arguments"], json!([{ "section": want }]));
    let opened = c.execute("threadradar.openSections", lens["command"]["arguments"][0].clone()).unwrap();
    assert_eq!(opened["index"], json!(idx), "{opened}");
    let note = match c.notifications.iter().find(|m| m["method"] == "threadRadar/openPanel") {
        Some(n) => n.clone(),
        None => c.wait_for(Duration::from_secs(10), |m| m["method"] == "threadRadar/openPanel").expect("threadRadar/openPanel"),
    };
    assert_eq!(note["params"], json!({ "panel": "sections", "section": want }));
    assert!(c.execute("threadradar.openSections", json!({ "section": 3 })).unwrap_err()["message"].as_str().unwrap().contains("needs"));

    // Saved on the first run: the section, an execution, a note (with markup, kept as text).
    let s = &sections["sections"][idx];
    let k = s["outliers"].as_array().and_then(|o| o.first()).and_then(Value::as_u64).unwrap_or(0);
    let e = &s["executions"][k as usize];
    let listed = c.call("threadRadar/views", json!({}));
    assert_eq!((listed["views"].as_array().unwrap().len(), listed["file"].as_str()), (0, root.join(".threadradar/views.json").to_str()));
    let saved = c.call("threadRadar/views", json!({ "save": { "section": want, "note": "<b>slow</b> hold", "execution": k } }));
    let id = saved["saved"].as_str().unwrap().to_string();
    let v = &saved["views"][0];
    assert_eq!((v["id"].as_str(), v["note"].as_str(), v["same_run"].as_bool(), v["section_index"].as_u64()), (Some(id.as_str()), Some("<b>slow</b> hold"), Some(true), Some(idx as u64)));
    assert_eq!((v["thread"].clone(), v["execution"]["start_s"].clone(), v["run"].as_str()), (e["thread"].clone(), e["start_s"].clone(), Some("20000101T000000Z-truth.json")));
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(root.join(".threadradar/views.json")).unwrap()).unwrap();
    assert_eq!(stored["views"][0]["section"], want);
    // Saving a section the run does not have, or an execution it does not list: one sentence.
    let bad = c.request("threadRadar/views", json!({ "save": { "section": { "file": "/nope.py", "function": "f", "lock": "l", "line": 1 } } })).unwrap_err();
    assert!(bad["message"].as_str().unwrap().contains("`sections` lists them"), "{bad}");
    let bad = c.request("threadRadar/views", json!({ "save": { "section": want, "execution": 100000 } })).unwrap_err();
    assert!(bad["message"].as_str().unwrap().contains("listed executions"), "{bad}");

    // The program is edited (the section moves down three lines) and recorded again.
    std::fs::write(&script, format!("# edited\n# after the first run\n# the section moved\n{text}")).unwrap();
    record(&second);
    let r = c.call("threadRadar/runs", json!({ "select": second.to_str().unwrap() }));
    assert_eq!(r["active"].as_str(), second.to_str());
    let sections2 = c.call("threadRadar/sections", json!({}));
    let idx2 = sections2["sections"].as_array().unwrap().iter().position(|s| s["function"] == "Store.update").unwrap();
    assert_eq!(sections2["sections"][idx2]["line"].as_u64(), Some(with_line as u64 + 4));
    // A view whose section this run lacks (saved for a function that is gone).
    let mut stored = stored;
    let mut gone = stored["views"][0].clone();
    gone["id"] = json!("gone");
    gone["section"]["function"] = json!("Store.gone");
    stored["views"].as_array_mut().unwrap().push(gone);
    std::fs::write(root.join(".threadradar/views.json"), stored.to_string()).unwrap();
    let listed = c.call("threadRadar/views", json!({}));
    let views = listed["views"].as_array().unwrap();
    assert_eq!(views.len(), 2, "{listed}");
    let (gone, ours) = (&views[0], &views[1]);
    assert_eq!((ours["id"].as_str(), ours["same_run"].as_bool(), ours["section_index"].as_u64()), (Some(id.as_str()), Some(false), Some(idx2 as u64)));
    let status = ours["status"].as_str().unwrap();
    assert!(status.contains(&format!("at line {} (line {} in 20000101T000000Z-truth.json", with_line + 4, with_line + 1)), "{status}");
    assert!(status.contains("The saved execution"), "{status}");
    assert_eq!(gone["section_index"], Value::Null);
    assert!(gone["status"].as_str().unwrap().starts_with("Not found in this run"), "{gone}");
    // Deleting.
    let after = c.call("threadRadar/views", json!({ "delete": "gone" }));
    assert_eq!(after["views"].as_array().unwrap().len(), 1);
    assert!(c.request("threadRadar/views", json!({ "delete": "gone" })).unwrap_err()["message"].as_str().unwrap().contains("no saved view"));

    // A broken views.json: one sentence that says what to do; the server goes on.
    std::fs::write(root.join(".threadradar/views.json"), "{\"views\": [ oops").unwrap();
    let err = c.request("threadRadar/views", json!({})).unwrap_err();
    let msg = err["message"].as_str().unwrap();
    assert!(msg.contains("is not a saved-views file") && msg.contains("delete it") && !msg.contains('\n'), "{msg}");
    assert_eq!(err["data"]["code"], "unprocessable");
    assert!(c.call("threadRadar/sections", json!({}))["sections"].is_array());
    assert!(c.shutdown().success());
}

/// A lock the source does not name (factory_locks.py: `self._guard = make_guard()`): the section
/// found from the recorded waits gets its lens, and the hover says how it was found.
#[test]
fn a_section_found_from_recorded_waits_has_its_lens_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let script = root.join("locks.py");
    std::fs::copy(common::script("factory_locks.py"), &script).unwrap();
    let runs = root.join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let run = runs.join("20000101T000000Z-locks.json");
    let out = {
        let _serial = common::serial();
        common::record(&run, &["--interval-ms", "2"], &[script.to_str().unwrap(), root.join("log.jsonl").to_str().unwrap(), "4", "10"])
    };
    assert!(out.status.success(), "record failed: {}", common::stderr(&out));
    let text = std::fs::read_to_string(&script).unwrap();
    let with_line = text.lines().position(|l| l.trim() == "with self._guard:").unwrap() as u32;
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({}));
    c.open(&script, &text);
    let lenses = c.code_lenses(&script);
    assert!(
        lenses.iter().any(|l| l["range"]["start"]["line"] == with_line && l["command"]["title"].as_str().is_some_and(|t| t.starts_with("critical section · "))),
        "no section lens on line {with_line}: {lenses:#?}"
    );
    let hover = c.hover(&script, with_line, 8);
    let md = hover["contents"]["value"].as_str().unwrap_or_else(|| panic!("no hover: {hover}"));
    // The recorder read the lock through `self._guard`: a `_thread.lock`.
    assert!(md.contains("**Critical section** on `Pool._guard` (`Lock`)"), "{md}");
    assert!(md.contains("Found from the recorded waits"), "{md}");
    c.shutdown();
}
