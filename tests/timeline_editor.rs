//! The timeline in the editor, over the real language server: the global time window (`filter
//! {window}`) that a brush on the timeline sets, and the "Timeline" code lens.
//!
//! The truth is the program's own log: `tests/scripts/phases.py` computes, sleeps and computes
//! again in its `phaser` thread and prints when each phase started and ended. A window inside the
//! sleep must leave `compute_phase` without figures and give `sleep_phase` some; a window inside
//! the first compute phase the other way round; and the samples counted in a window must be
//! exactly the run's thread-samples in it.

mod common;
mod lsp_client;

use common::*;
use lsp_client::LspClient;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

struct Recorded {
    _dir: tempfile::TempDir,
    root: PathBuf,
    script: PathBuf,
    run: PathBuf,
    /// (phase, start, end) of the phaser thread, seconds from the run's start.
    phases: Vec<(String, f64, f64)>,
}

fn record_phases() -> Recorded {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let script = root.join("phases.py");
    std::fs::copy(script_path(), &script).unwrap();
    let runs = root.join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let run = runs.join("20000101T000000Z-phases.json");
    // The interpreter itself, not a wrapper (a pyenv shim is a shell script that record may catch
    // before it execs Python).
    let py = std::process::Command::new(python()).args(["-c", "import sys; print(sys.executable)"]).output().expect("python3");
    let py = String::from_utf8_lossy(&py.stdout).trim().to_string();
    let rec = {
        let _g = serial();
        threadradar(&root, &["record", "--no-progress", "-o", run.to_str().unwrap(), "--", &py, script.to_str().unwrap()])
    };
    assert!(rec.status.success(), "record failed: {}", stderr(&rec));
    let logged: Value = serde_json::from_str(String::from_utf8_lossy(&rec.stdout).lines().last().unwrap()).expect("the program's event log");
    let start_unix = read(&run).meta.start_unix_ms as f64 / 1000.0;
    let phases = logged
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["thread"] == "phaser")
        .map(|e| (e["phase"].as_str().unwrap().to_string(), e["start"].as_f64().unwrap() - start_unix, e["end"].as_f64().unwrap() - start_unix))
        .collect();
    Recorded { _dir: dir, root, script, run, phases }
}

fn script_path() -> PathBuf {
    PathBuf::from(script("phases.py"))
}

fn names(keys: impl Iterator<Item = Option<String>>) -> Vec<String> {
    let mut names: Vec<String> = keys.flatten().map(|k| k.rsplit(':').next().unwrap().to_string()).collect();
    names.sort();
    names.dedup();
    names
}

/// The qualified names of the declarations with hints (from each hint's artifact key,
/// `function:<file>:<line>:<qualname>`); the lenses must name the same ones.
fn hint_names(c: &mut LspClient, script: &Path) -> Vec<String> {
    let hints = names(c.inlay_hints(script).iter().map(|h| h["data"]["artifact"].as_str().map(String::from)));
    let lenses = names(c.code_lenses(script).iter().filter(|l| l["command"]["command"] == "threadradar.openDetail").map(|l| l["command"]["arguments"][0]["artifact"].as_str().map(String::from)));
    assert_eq!(hints, lenses, "hints and lenses disagree");
    hints
}

/// Thread-samples of the run taken in `[from, to)` s (states `all`: every one counts).
fn samples_in(run: &Path, from: f64, to: f64) -> u64 {
    let run = read(run);
    let (f, t) = ((from * 1e9).round() as u64, (to * 1e9).round() as u64);
    run.samples.iter().filter(|s| s.t >= f && s.t < t).map(|s| s.threads.len() as u64).sum()
}

#[test]
fn a_time_window_changes_hints_lenses_and_panel_figures_as_the_program_logged() {
    let r = record_phases();
    let phase = |name: &str, nth: usize| r.phases.iter().filter(|p| p.0 == name).nth(nth).cloned().unwrap_or_else(|| panic!("no {name} #{nth} in {:?}", r.phases));
    let (_, sleep_from, sleep_to) = phase("sleep_phase", 0);
    let (_, comp_from, comp_to) = phase("compute_phase", 0);

    let mut c = LspClient::spawn(bin(), &r.root);
    c.initialize(&r.root, json!({ "minCrt": 0, "states": "all", "notifyChanges": true }));
    let text = std::fs::read_to_string(&r.script).unwrap();
    c.open(&r.script, &text);

    // The whole run: both phases have figures.
    let whole = hint_names(&mut c, &r.script);
    assert!(whole.contains(&"compute_phase".to_string()) && whole.contains(&"sleep_phase".to_string()), "{whole:?}");
    let whole_counted = c.call("threadRadar/overview", json!({}))["run"]["counted_samples"].as_u64().unwrap();
    let runs = c.call("threadRadar/runs", json!({}));
    assert_eq!(runs["window"], Value::Null);

    // A window well inside the sleep (one sampling tick of margin on each side, for the clocks).
    let margin = 0.05;
    let (wf, wt) = (sleep_from + margin, sleep_to - margin);
    let set = c.call("threadRadar/filter", json!({ "window": { "from_s": wf, "to_s": wt } }));
    assert_eq!(set["window"], json!({ "from_s": wf, "to_s": wt }));
    let in_sleep = hint_names(&mut c, &r.script);
    assert!(in_sleep.contains(&"sleep_phase".to_string()), "the sleep window lost sleep_phase: {in_sleep:?}");
    assert!(!in_sleep.contains(&"compute_phase".to_string()), "compute_phase has figures while the program logged it sleeping: {in_sleep:?}");
    let overview = c.call("threadRadar/overview", json!({}));
    assert_eq!(overview["run"]["window"], json!({ "from_s": wf, "to_s": wt }));
    let counted = overview["run"]["counted_samples"].as_u64().unwrap();
    assert_eq!(counted, samples_in(&r.run, wf, wt), "the window counts exactly the run's thread-samples in it");
    assert!(counted < whole_counted, "{counted} vs {whole_counted}");
    // The editor says so: the status (runs), the change notification and the hover's footer.
    assert_eq!(c.call("threadRadar/runs", json!({}))["window"], json!({ "from_s": wf, "to_s": wt }));
    let with_window = |n: &Value| n["method"] == "threadRadar/changed" && n["params"]["window"].is_object();
    let changed = match c.notifications.iter().find(|n| with_window(n)).cloned() {
        Some(n) => n,
        None => c.wait_for(Duration::from_secs(20), with_window).expect("a change notification with the window"),
    };
    assert_eq!(changed["params"]["window"]["from_s"], json!(wf));
    let lens_line = c
        .code_lenses(&r.script)
        .iter()
        .find(|l| l["command"]["arguments"][0]["artifact"].as_str().is_some_and(|k| k.ends_with(":sleep_phase")))
        .map(|l| l["range"]["start"]["line"].as_u64().unwrap())
        .unwrap();
    let hover = c.call("textDocument/hover", json!({ "textDocument": { "uri": lsp_client::file_uri(&r.script) }, "position": { "line": lens_line, "character": 5 } }));
    let md = hover["contents"]["value"].as_str().unwrap();
    assert!(md.contains(&format!("window {:.2}–{:.2} s", wf, wt)), "{md}");

    // A window inside the first compute phase: the other way round.
    let (wf, wt) = (comp_from + margin, comp_to - margin);
    c.call("threadRadar/filter", json!({ "window": { "from_s": wf, "to_s": wt } }));
    let in_compute = hint_names(&mut c, &r.script);
    assert!(in_compute.contains(&"compute_phase".to_string()), "{in_compute:?}");
    assert!(!in_compute.contains(&"sleep_phase".to_string()), "sleep_phase has figures while the program logged it computing: {in_compute:?}");
    assert_eq!(c.call("threadRadar/overview", json!({}))["run"]["counted_samples"].as_u64().unwrap(), samples_in(&r.run, wf, wt));

    // Bad windows: one sentence, and the window set before stays.
    let duration = read(&r.run).meta.duration_s;
    for bad in [json!({ "from_s": duration + 5.0, "to_s": duration + 6.0 }), json!({ "from_s": 0.5, "to_s": 0.2 }), json!({ "from_s": -1.0, "to_s": 0.2 })] {
        let err = c.request("threadRadar/filter", json!({ "window": bad })).expect_err("a window outside the run is refused");
        let msg = err["message"].as_str().unwrap();
        assert!(msg.starts_with("the time window") && msg.contains("is not inside the run") && !msg.contains('\n'), "{msg}");
    }
    assert_eq!(c.call("threadRadar/filter", json!({}))["window"], json!({ "from_s": wf, "to_s": wt }));

    // `null` clears it: the whole run's figures again.
    let cleared = c.call("threadRadar/filter", json!({ "window": null }));
    assert_eq!(cleared["window"], Value::Null);
    assert_eq!(hint_names(&mut c, &r.script), whole);
    assert_eq!(c.call("threadRadar/overview", json!({}))["run"]["counted_samples"].as_u64().unwrap(), whole_counted);
    c.shutdown();
}

#[test]
fn the_timeline_lens_opens_the_timeline_on_its_function() {
    let r = record_phases();
    let mut c = LspClient::spawn(bin(), &r.root);
    c.initialize(&r.root, json!({ "minCrt": 0, "states": "all", "panels": true }));
    let text = std::fs::read_to_string(&r.script).unwrap();
    c.open(&r.script, &text);
    let lenses = c.code_lenses(&r.script);
    let detail: Vec<&Value> = lenses.iter().filter(|l| l["command"]["command"] == "threadradar.openDetail").collect();
    let timeline: Vec<&Value> = lenses.iter().filter(|l| l["command"]["command"] == "threadradar.openTimeline").collect();
    // One "Timeline" lens beside every declaration's figures lens, on the same line, same artifact.
    assert_eq!(timeline.len(), detail.len(), "{lenses:#?}");
    for (d, t) in detail.iter().zip(&timeline) {
        assert_eq!(d["range"], t["range"]);
        assert_eq!(d["command"]["arguments"], t["command"]["arguments"]);
        assert_eq!(t["command"]["title"], "Timeline");
    }
    let lens = timeline.iter().find(|l| l["command"]["arguments"][0]["artifact"].as_str().unwrap().ends_with(":compute_phase")).unwrap();
    let key = lens["command"]["arguments"][0]["artifact"].clone();
    let answer = c.execute("threadradar.openTimeline", lens["command"]["arguments"][0].clone()).expect("openTimeline");
    // The answer says where the artifact's bars are: the logged compute phases.
    let spans = answer["spans"].as_array().unwrap();
    for (name, from, to) in r.phases.iter().filter(|p| p.0 == "compute_phase") {
        assert!(
            spans.iter().any(|s| s["from_s"].as_f64().unwrap() < from + 0.05 && s["to_s"].as_f64().unwrap() > to - 0.05),
            "no span of {name} covering its logged {from:.3}–{to:.3} s: {spans:?}"
        );
    }
    let is_open = |n: &Value| n["method"] == "threadRadar/openPanel";
    let open = match c.notifications.iter().find(|n| is_open(n)).cloned() {
        Some(n) => n,
        None => c.wait_for(Duration::from_secs(10), is_open).expect("openPanel"),
    };
    assert_eq!(open["params"]["panel"], "timeline");
    assert_eq!(open["params"]["artifact"], key);
    // Unknown artifacts are one sentence.
    let err = c.execute("threadradar.openTimeline", json!({ "artifact": "function:/nope.py:1:nope" })).expect_err("unknown artifact");
    assert!(err["message"].as_str().unwrap().starts_with("no artifact function:/nope.py:1:nope"), "{err}");
    c.shutdown();
}
