//! Waits in the editor, end to end: a real recording of a program that hands off between threads
//! (tests/scripts/handoffs.py) in a temporary workspace, the real `threadradar lsp`, a protocol
//! client. The lens figures (one lens per object waited on at a line, GIL waits left out) are
//! checked against `threadradar waits --json` on the same run; the lens opens the waits view on
//! its object with the same figures; the hover names the object and the wakers; an edited buffer
//! gets none.

mod common;
mod lsp_client;

use lsp_client::LspClient;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

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

    // The CLI's intervals per (waiting line of handoffs.py, object), GIL waits left out: a
    // thread back from a wait that then waits for the GIL on the same line is no wait on the
    // line's object, and the GIL holder no waker of it.
    let intervals = v["intervals"].as_array().unwrap();
    let objects = v["objects"].as_array().unwrap();
    let is_gil = |k: usize| objects[intervals[k]["object"].as_u64().unwrap() as usize]["type"] == "GIL";
    let mut per_pair: BTreeMap<(u64, String), Vec<usize>> = BTreeMap::new();
    let mut gil_at: BTreeSet<u64> = BTreeSet::new();
    for (k, iv) in intervals.iter().enumerate() {
        if iv["frame"]["file"].as_str().is_some_and(|f| f.ends_with("handoffs.py")) {
            let line = iv["frame"]["line"].as_u64().unwrap();
            if is_gil(k) {
                gil_at.insert(line);
                continue;
            }
            let label = objects[iv["object"].as_u64().unwrap() as usize]["object"].as_str().unwrap().to_string();
            per_pair.entry((line, label)).or_default().push(k);
        }
    }
    eprintln!("GIL waits at lines {gil_at:?} of handoffs.py (left out of the lenses)");
    let ((line, object), ks) = per_pair.iter().max_by_key(|((l, _), ks)| (ks.len(), std::cmp::Reverse(*l))).expect("waits in handoffs.py");
    let (line, object) = (*line, object.clone());
    let at_pair: BTreeSet<usize> = ks.iter().copied().collect();
    let edges: Vec<&Value> = v["edges"].as_array().unwrap().iter().filter(|e| at_pair.contains(&(e["interval"].as_u64().unwrap() as usize))).collect();
    // Lock hand-offs (kernel: a condition's lock passed on) are neither wakers nor futile.
    let edges: Vec<&Value> = edges.into_iter().filter(|e| e["kind"] == "wake").collect();
    let futile = ks.iter().filter(|&&k| intervals[k]["futile"] == true).count()
        + edges.iter().filter(|e| e["futile"] == true && intervals[e["interval"].as_u64().unwrap() as usize]["futile"] != true).count();
    let wakers: BTreeSet<&str> = edges.iter().filter(|e| e["futile"] != true).map(|e| e["waker"].as_str().unwrap()).collect();

    let text = std::fs::read_to_string(&script).unwrap();
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({}));
    c.open(&script, &text);
    let lenses = c.code_lenses(&script);
    let wait_lenses: Vec<&Value> = lenses.iter().filter(|l| l["command"]["command"] == "threadradar.openWaits").collect();
    assert_eq!(wait_lenses.len(), per_pair.len(), "one lens per object waited on at a line, none for the GIL: {lenses:#?}");
    for l in &wait_lenses {
        let t = l["command"]["title"].as_str().unwrap();
        let label = l["command"]["arguments"][0]["object"].as_str().unwrap();
        assert!(t.starts_with(&format!("{label}: waited ")), "the lens names its object: {t}");
        assert!(!t.starts_with("GIL"), "no lens for the GIL: {t}");
        let l_line = l["range"]["start"]["line"].as_u64().unwrap() + 1;
        let n = per_pair.get(&(l_line, label.to_string())).map_or(0, Vec::len);
        let word = if n == 1 { "wait" } else { "waits" };
        assert!(t.contains(&format!(" · {n} {word} · ")), "the CLI saw {n} non-GIL waits on {label} at line {l_line}: {t}");
    }
    let lens = wait_lenses
        .iter()
        .find(|l| l["range"]["start"]["line"] == line - 1 && l["command"]["arguments"][0]["object"] == object.as_str())
        .unwrap_or_else(|| panic!("no wait lens for {object} on line {line}: {lenses:#?}"));
    let title = lens["command"]["title"].as_str().unwrap();
    assert!(title.ends_with(&format!(" · {futile} futile")), "the CLI saw {futile} futile wake-ups: {title}");
    if wakers.is_empty() {
        assert!(title.contains("wakers unknown"), "{title}");
    } else {
        assert!(title.contains(" · woken by "), "{title}");
        let shown: BTreeSet<String> = title.split(" · woken by ").nth(1).unwrap().split(" · ").next().unwrap().split(" / ").map(|w| w.rsplitn(3, ' ').nth(2).unwrap().to_string()).collect();
        let groups: BTreeSet<String> = wakers.iter().map(|w| w.trim_end_matches(|c: char| c.is_ascii_digit()).trim_end_matches(['-', '_', ' ', '#']).to_string()).collect();
        assert_eq!(shown, groups, "the wakers are the object's, as the CLI's edges on its waits here: {title}");
    }

    // The lens opens the waits view on its object; its row there is the same computation: an
    // object waited on at this line only has the lens's waits.
    assert_eq!(lens["command"]["arguments"][0]["line"], line, "{lens}");
    let opened = c.execute("threadradar.openWaits", lens["command"]["arguments"][0].clone()).unwrap();
    assert_eq!(opened["object"], object.as_str(), "{opened}");
    let row = &opened["row"];
    assert_eq!(row["object"], object.as_str(), "{opened}");
    let lines_of: BTreeSet<u64> = intervals.iter().filter(|iv| v["objects"][iv["object"].as_u64().unwrap() as usize]["object"] == object.as_str()).filter_map(|iv| iv["frame"]["line"].as_u64()).collect();
    if lines_of.len() == 1 {
        assert_eq!(row["waits"].as_u64().unwrap() as usize, ks.len(), "lens and waits view agree on {object}: {title} vs {row}");
    }
    // Without an object the whole view opens (the editors' "open the waits" commands); an object
    // that is not a name is one clear error.
    assert_eq!(c.execute("threadradar.openWaits", json!({ "line": 3 })).unwrap(), json!({ "object": null, "row": null }));
    assert!(c.execute("threadradar.openWaits", json!({ "object": 3 })).unwrap_err()["message"].as_str().unwrap().contains("needs"));

    let hover = c.hover(&script, line as u32 - 1, 4);
    let md_text = hover["contents"]["value"].as_str().unwrap_or_else(|| panic!("no hover: {hover}"));
    assert!(md_text.contains(&format!("`{object}`")), "object {object} missing: {md_text}");
    assert!(md_text.contains(&format!("{} here", if ks.len() == 1 { "1 wait".to_string() } else { format!("{} waits", ks.len()) })), "{md_text}");
    for w in &wakers {
        assert!(md_text.contains(&format!("woken by `{w}` ")), "waker {w} missing: {md_text}");
    }
    assert!(!md_text.contains('\\'), "no backslash escapes (Neovim's float shows them): {md_text}");
    assert!(md_text.contains("p50 ") && md_text.contains("p95 "), "{md_text}");
    // The waiting radar of the object: the CLI's glyph, whose sectors hold exactly the threads
    // the CLI's intervals show waiting on that object, run-wide.
    let oi = intervals[ks[0]]["object"].as_u64().unwrap();
    let o = &v["objects"][oi as usize];
    let cells = o["radar"].as_array().unwrap();
    let in_radar: u64 = cells.iter().map(|c| c["threads"].as_u64().unwrap()).sum();
    let waiting: BTreeSet<u64> = intervals.iter().filter(|iv| iv["object"] == oi).map(|iv| iv["thread"].as_u64().unwrap()).collect();
    assert_eq!(in_radar, waiting.len() as u64, "radar of {}: {cells:?}", o["object"]);
    let glyph = cells.iter().map(|c| c["text"].as_str().unwrap()).collect::<Vec<_>>().join(" ");
    let threads = if waiting.len() == 1 { "1 thread".to_string() } else { format!("{} threads", waiting.len()) };
    assert!(md_text.contains(&format!("waiting radar {glyph} — {threads}")), "radar {glyph} missing: {md_text}");
    assert!(md_text.contains("inferred") || md_text.contains("kernel"), "the hover says how the wakers were found: {md_text}");

    // An edited buffer: the recorded lines cannot be vouched for, so no wait lens.
    let edited = format!("# a new first line\n{text}");
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": lsp_client::file_uri(&script), "version": 2 }, "contentChanges": [{ "text": edited }] }),
    );
    let lenses = c.code_lenses(&script);
    assert!(!lenses.iter().any(|l| l["command"]["command"] == "threadradar.openWaits"), "{lenses:#?}");
    assert!(c.shutdown().success());
}

/// The case (32): threads that sleep and compute. Back from `time.sleep(0.01)` a thread
/// waits for the GIL on the sleep's line; that is no object's wait, so the line gets no wait
/// lens (it read "waited 441 ms … woken by worker 94 %" from the GIL's hand-offs), and no lens
/// anywhere counts a GIL wait or names the GIL.
#[test]
fn waits_for_the_gil_make_no_wait_lens() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let script = root.join("sleepers.py");
    std::fs::write(
        &script,
        "import threading\nimport time\n\n\ndef spin(seconds):\n    end = time.perf_counter() + seconds\n    while time.perf_counter() < end:\n        pass\n\n\n\
def work():\n    for _ in range(40):\n        time.sleep(0.01)\n        spin(0.004)\n\n\n\
threads = [threading.Thread(target=work, name=f'worker-{i}') for i in range(4)]\nfor t in threads:\n    t.start()\nfor t in threads:\n    t.join()\n",
    )
    .unwrap();
    let sleep_line = std::fs::read_to_string(&script).unwrap().lines().position(|l| l.trim() == "time.sleep(0.01)").unwrap() as u64 + 1;
    let runs = root.join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let run = runs.join("20000101T000000Z-sleepers.json");
    let out = {
        let _serial = common::serial();
        common::record(&run, &[], &[script.to_str().unwrap()])
    };
    assert!(out.status.success(), "record failed: {}", common::stderr(&out));
    let cli = common::threadradar(&root, &["waits", run.to_str().unwrap(), "--json"]);
    assert!(cli.status.success(), "{}", common::stderr(&cli));
    let v: Value = serde_json::from_slice(&cli.stdout).unwrap();
    let objects = v["objects"].as_array().unwrap();
    // Four threads computing between sleeps on one GIL: the run has GIL waits at the sleep.
    let gil_at_sleep = v["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|iv| iv["frame"]["line"] == sleep_line && objects[iv["object"].as_u64().unwrap() as usize]["type"] == "GIL")
        .count();
    assert!(gil_at_sleep > 0, "the recording has no GIL wait at line {sleep_line}: {}", v["intervals"]);

    let text = std::fs::read_to_string(&script).unwrap();
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({}));
    c.open(&script, &text);
    let lenses = c.code_lenses(&script);
    let waits: Vec<&Value> = lenses.iter().filter(|l| l["command"]["command"] == "threadradar.openWaits").collect();
    assert!(!waits.iter().any(|l| l["range"]["start"]["line"] == sleep_line - 1), "a wait lens above time.sleep: {waits:#?}");
    assert!(!waits.iter().any(|l| l["command"]["title"].as_str().unwrap().starts_with("GIL")), "{waits:#?}");
    c.shutdown();
}
