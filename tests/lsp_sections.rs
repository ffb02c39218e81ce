//! Critical sections in the editor, end to end: a real recording of the ground-truth program in a
//! temporary workspace, the real `threadradar lsp`, a protocol client. The lens and hover figures
//! are checked against `threadradar sections --json` on the same run; an edited buffer gets none.

mod common;
mod lsp_client;

use lsp_client::LspClient;
use serde_json::{json, Value};

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
    assert!(title.starts_with(&format!("critical section · {grouped} runs · median ")), "{title}");
    assert!(title.contains(" · p99 ") && title.contains(" · others waited "), "{title}");
    let outliers = s["outliers"].as_array().unwrap().len();
    if outliers > 0 {
        assert!(title.ends_with(&format!(" · {outliers} outliers")), "{title}");
    }

    let hover = c.hover(&script, with_line, 8);
    let md = hover["contents"]["value"].as_str().unwrap_or_else(|| panic!("no hover: {hover}"));
    assert!(md.contains("**Critical section** on `Store._lock` (Lock)"), "{md}");
    let spark: String = md.chars().filter(|ch| ('▁'..='█').contains(ch)).collect();
    let listed = s["executions"].as_array().unwrap().len();
    assert_eq!(spark.chars().count(), listed.min(60), "{md}");
    assert!(spark.contains('█'), "the longest execution is a full bar: {md}");
    assert!(md.contains("Sampled"), "the hover says how the figures were obtained: {md}");

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
