//! Waits in the editor, end to end: a real recording of a program that hands off between threads
//! (tests/scripts/handoffs.py) in a temporary workspace, the real `threadradar lsp`, a protocol
//! client. The lens figures on the busiest wait line are checked against `threadradar waits
//! --json` on the same run; the hover names the object and the wakers; an edited buffer gets none.

mod common;
mod lsp_client;

use lsp_client::LspClient;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The hover's Markdown escaping of program-given names.
fn md(s: &str) -> String {
    s.chars().flat_map(|c| if "\\`*_[]<>#|!&".contains(c) { vec!['\\', c] } else { vec![c] }).collect()
}

#[test]
fn a_lens_on_each_wait_line_with_waits_wakers_and_futile_wakeups() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let script = root.join("handoffs.py");
    std::fs::copy(common::script("handoffs.py"), &script).unwrap();
    let runs = root.join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let run = runs.join("20000101T000000Z-handoffs.json");
    let out = {
        let _serial = common::serial();
        common::record(&run, &[], &[script.to_str().unwrap(), "8"])
    };
    assert!(out.status.success(), "record failed: {}", common::stderr(&out));
    let cli = common::threadradar(&root, &["waits", run.to_str().unwrap(), "--json"]);
    assert!(cli.status.success(), "{}", common::stderr(&cli));
    let v: Value = serde_json::from_slice(&cli.stdout).unwrap();

    // The CLI's intervals per waiting line of handoffs.py, and the busiest line.
    let intervals = v["intervals"].as_array().unwrap();
    let mut per_line: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (k, iv) in intervals.iter().enumerate() {
        if iv["frame"]["file"].as_str().is_some_and(|f| f.ends_with("handoffs.py")) {
            per_line.entry(iv["frame"]["line"].as_u64().unwrap()).or_default().push(k);
        }
    }
    let (&line, ks) = per_line.iter().max_by_key(|(l, ks)| (ks.len(), std::cmp::Reverse(**l))).expect("waits in handoffs.py");
    let at_line: BTreeSet<usize> = ks.iter().copied().collect();
    let edges: Vec<&Value> = v["edges"].as_array().unwrap().iter().filter(|e| at_line.contains(&(e["interval"].as_u64().unwrap() as usize))).collect();
    // Lock hand-offs (kernel: a condition's lock passed on) are neither wakers nor futile.
    let edges: Vec<&Value> = edges.into_iter().filter(|e| e["kind"] == "wake").collect();
    let futile = ks.iter().filter(|&&k| intervals[k]["futile"] == true).count()
        + edges.iter().filter(|e| e["futile"] == true && intervals[e["interval"].as_u64().unwrap() as usize]["futile"] != true).count();
    let wakers: BTreeSet<&str> = edges.iter().filter(|e| e["futile"] != true).map(|e| e["waker"].as_str().unwrap()).collect();
    let objects: BTreeSet<&str> = ks.iter().map(|&k| v["objects"][intervals[k]["object"].as_u64().unwrap() as usize]["object"].as_str().unwrap()).collect();

    let text = std::fs::read_to_string(&script).unwrap();
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({}));
    c.open(&script, &text);
    let lenses = c.code_lenses(&script);
    let wait_lenses: Vec<&Value> = lenses.iter().filter(|l| l["command"]["title"].as_str().is_some_and(|t| t.starts_with("waited "))).collect();
    assert_eq!(wait_lenses.len(), per_line.len(), "one lens per waiting line: {lenses:#?}");
    let lens = wait_lenses
        .iter()
        .find(|l| l["range"]["start"]["line"] == line - 1)
        .unwrap_or_else(|| panic!("no wait lens on line {line}: {lenses:#?}"));
    let title = lens["command"]["title"].as_str().unwrap();
    assert!(title.contains(&format!(" · {} waits · ", ks.len())), "the CLI saw {} waits on line {line}: {title}", ks.len());
    assert!(title.ends_with(&format!(" · {futile} futile")), "the CLI saw {futile} futile wake-ups: {title}");
    if wakers.is_empty() {
        assert!(title.contains("wakers unknown"), "{title}");
    } else {
        assert!(title.contains(" · woken by "), "{title}");
        for w in &wakers {
            let group = w.trim_end_matches(|c: char| c.is_ascii_digit()).trim_end_matches(['-', '_', ' ', '#']);
            assert!(title.contains(group), "waker {w} missing: {title}");
        }
    }

    let hover = c.hover(&script, line as u32 - 1, 4);
    let md_text = hover["contents"]["value"].as_str().unwrap_or_else(|| panic!("no hover: {hover}"));
    assert!(md_text.contains(&format!("{} waits by", ks.len())), "{md_text}");
    for o in &objects {
        assert!(md_text.contains(&format!("`{o}`")), "object {o} missing: {md_text}");
    }
    for w in &wakers {
        assert!(md_text.contains(&format!("woken by {} ", md(w))), "waker {w} missing: {md_text}");
    }
    assert!(md_text.contains("p50 ") && md_text.contains("p95 "), "{md_text}");
    // The waiting radar of each object waited on here: the CLI's glyph, whose sectors hold
    // exactly the threads the CLI's intervals show waiting on that object, run-wide.
    for &k in ks {
        let oi = intervals[k]["object"].as_u64().unwrap();
        let o = &v["objects"][oi as usize];
        let cells = o["radar"].as_array().unwrap();
        let in_radar: u64 = cells.iter().map(|c| c["threads"].as_u64().unwrap()).sum();
        let waiting: BTreeSet<u64> = intervals.iter().filter(|iv| iv["object"] == oi).map(|iv| iv["thread"].as_u64().unwrap()).collect();
        assert_eq!(in_radar, waiting.len() as u64, "radar of {}: {cells:?}", o["object"]);
        let glyph = cells.iter().map(|c| c["text"].as_str().unwrap()).collect::<Vec<_>>().join(" ");
        assert!(md_text.contains(&format!("waiting radar {glyph} — {} thread(s)", waiting.len())), "radar {glyph} missing: {md_text}");
    }
    assert!(md_text.contains("inferred") || md_text.contains("kernel"), "the hover says how the wakers were found: {md_text}");

    // An edited buffer: the recorded lines cannot be vouched for, so no wait lens.
    let edited = format!("# a new first line\n{text}");
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": lsp_client::file_uri(&script), "version": 2 }, "contentChanges": [{ "text": edited }] }),
    );
    let lenses = c.code_lenses(&script);
    assert!(!lenses.iter().any(|l| l["command"]["title"].as_str().is_some_and(|t| t.starts_with("waited "))), "{lenses:#?}");
    assert!(c.shutdown().success());
}
