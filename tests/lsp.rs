//! `threadradar lsp` end to end: a real recording of the paper's Bug 1 in a temporary workspace,
//! the real binary as the server, and a protocol client over its stdin/stdout.
//!
//! Figures of a recording vary between runs, so they are checked against `threadradar report
//! --json` on the same run; what is stable (which declarations get hints, the shape of the text)
//! is checked as snapshots.

mod common;
mod lsp_client;

use expect_test::expect;
use lsp_client::{file_uri, label, LspClient};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

const SHORT: Duration = Duration::from_secs(3);

/// A workspace holding a copy of the Bug 1 sample (so its paths are inside the workspace) and
/// one recorded run of it in `.threadradar/runs/`.
struct Workspace {
    _dir: tempfile::TempDir,
    root: PathBuf,
    script: PathBuf,
    run: PathBuf,
}

/// A temporary workspace with a copy of the Bug 1 sample: (its directory, root, buggy.py).
fn bug1_workspace() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let samples = common::repo().join("samples/python");
    std::fs::create_dir_all(root.join("bug1_worker_manager")).unwrap();
    std::fs::copy(samples.join("common.py"), root.join("common.py")).unwrap();
    let script = root.join("bug1_worker_manager/buggy.py");
    std::fs::copy(samples.join("bug1_worker_manager/buggy.py"), &script).unwrap();
    (dir, root, script)
}

fn recorded_workspace() -> Workspace {
    let (dir, root, script) = bug1_workspace();
    let runs = root.join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let run = runs.join("20000101T000000Z-buggy.json");
    let out = {
        let _serial = common::serial();
        common::record(&run, &[], &[script.to_str().unwrap(), "--workers", "6", "--timeout", "1.5"])
    };
    assert!(out.status.success(), "record failed: {}", common::stderr(&out));
    Workspace { _dir: dir, root, script, run }
}

/// `threadradar report --json --level LEVEL RUN EXTRA…`.
fn report(run: &Path, level: &str, extra: &[&str]) -> Value {
    let mut args = vec!["report", "--json", "--level", level, run.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = common::threadradar(run.parent().unwrap(), &args);
    assert!(out.status.success(), "report failed: {}", common::stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The report's functions and classes in `file`, as the server should annotate them (a
/// declaration line, not the class-body pseudo-function).
fn declared<'a>(functions: &'a Value, classes: &'a Value, file: &Path) -> Vec<&'a Value> {
    let class_names: Vec<&str> = classes["artifacts"].as_array().unwrap().iter().filter_map(|c| c["qualname"].as_str()).collect();
    functions["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| !class_names.contains(&a["qualname"].as_str().unwrap()))
        .chain(classes["artifacts"].as_array().unwrap().iter())
        .filter(|a| Path::new(a["file"].as_str().unwrap()) == file && a["line"].as_u64().unwrap() > 0)
        .collect()
}

fn find<'a>(artifacts: &[&'a Value], qualname: &str) -> &'a Value {
    artifacts.iter().find(|a| a["qualname"] == qualname).unwrap_or_else(|| panic!("{qualname} not in the report"))
}

fn pct(f: f64) -> String {
    let p = f * 100.0;
    if p > 0.0 && p < 0.05 {
        "<0.1%".into()
    } else {
        format!("{p:.1}%")
    }
}

fn secs(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.2}s")
    } else if s < 100.0 {
        format!("{s:.1}s")
    } else {
        format!("{s:.0}s")
    }
}

/// The hint label the server should show for a report artifact: crt, seconds, threads/types and
/// the text glyph (average level, sum level, threads per cluster).
fn expected_label(a: &Value) -> String {
    let block = |l: &Value| match l.as_str().unwrap() {
        "low" => '▂',
        "medium" => '▅',
        _ => '█',
    };
    let cells: Vec<String> =
        a["glyph"].as_array().unwrap().iter().map(|c| format!("{}{}×{}", block(&c["avg"]), block(&c["sum"]), c["threads"])).collect();
    let types = a["thread_types"].as_u64().unwrap();
    let mut s = format!(
        "{} {} · {} thr/{} {}",
        pct(a["crt"].as_f64().unwrap()),
        secs(a["seconds"].as_f64().unwrap()),
        a["threads"],
        types,
        if types == 1 { "type" } else { "types" }
    );
    if !cells.is_empty() {
        s.push_str(&format!(" · {}", cells.join(" ")));
    }
    s
}

fn expected_lens(a: &Value) -> String {
    let n = a["threads"].as_u64().unwrap();
    let k = a["clusters"].as_array().unwrap().len();
    format!(
        "ThreadRadar {:.1} % · {n} {} · {k} {}",
        a["crt"].as_f64().unwrap() * 100.0,
        if n == 1 { "thread" } else { "threads" },
        if k == 1 { "cluster" } else { "clusters" }
    )
}

fn hint_line(h: &Value) -> u64 {
    h["position"]["line"].as_u64().unwrap()
}

/// The hint whose tooltip names `qualname`.
fn hint_for<'a>(hints: &'a [Value], qualname: &str) -> Option<&'a Value> {
    let needle = format!("**`{qualname}`** (");
    hints.iter().find(|h| h["tooltip"]["value"].as_str().is_some_and(|t| t.starts_with(&needle)))
}

/// Where the hints are, as `line: source text ← qualname` for the declarations every recording of
/// Bug 1 has (the others depend on timing).
fn placement(hints: &[Value], text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let stable = ["WorkerManager", "WorkerManager.get_instance", "WorkerManager.__init__", "WorkerManager._build_table", "Worker", "Worker.run"];
    let mut out = String::new();
    for q in stable {
        match hint_for(hints, q) {
            Some(h) => out.push_str(&format!("{:>3}: {} ← {q}\n", hint_line(h) + 1, lines[hint_line(h) as usize].trim())),
            None => out.push_str(&format!("  -: (no hint) ← {q}\n")),
        }
    }
    out
}

#[test]
fn hints_lenses_hover_edits_filter_symbols_and_new_runs() {
    let ws = recorded_workspace();
    let functions = report(&ws.run, "function", &[]);
    let classes = report(&ws.run, "class", &[]);
    let files = report(&ws.run, "file", &[]);
    let expected = declared(&functions, &classes, &ws.script);

    let mut c = LspClient::spawn(common::bin(), &ws.root);
    let init = c.initialize(&ws.root, json!({ "minCrt": 0 }));
    assert_eq!(init["capabilities"]["inlayHintProvider"], json!({ "resolveProvider": true }));
    let text = std::fs::read_to_string(&ws.script).unwrap();
    c.open(&ws.script, &text);

    // Inlay hints: one per profiled declaration of the file, at its line, with the report's figures.
    let hints = c.inlay_hints(&ws.script);
    assert_eq!(hints.len(), expected.len(), "hints: {hints:#?}");
    for a in &expected {
        let q = a["qualname"].as_str().unwrap();
        let h = hint_for(&hints, q).unwrap_or_else(|| panic!("no hint for {q}"));
        assert_eq!(hint_line(h) + 1, a["line"].as_u64().unwrap(), "{q}");
        assert_eq!(label(h), expected_label(a), "{q}");
        // At the end of the declaration's line.
        let line_text = text.lines().nth(hint_line(h) as usize).unwrap();
        assert_eq!(h["position"]["character"].as_u64().unwrap() as usize, line_text.encode_utf16().count());
    }
    expect![[r#"
         50: class WorkerManager: ← WorkerManager
         58: def get_instance(cls) -> WorkerManager: ← WorkerManager.get_instance
         72: def __init__(self) -> None: ← WorkerManager.__init__
         87: def _build_table(rows: int) -> list[int]: ← WorkerManager._build_table
        107: class Worker(threading.Thread): ← Worker
        125: def run(self) -> None: ← Worker.run
    "#]]
    .assert_eq(&placement(&hints, &text));
    let run_fn = find(&expected, "Worker.run");
    // Resolving a hint without its tooltip (what a client with resolveSupport gets) adds it.
    let mut bare = hint_for(&hints, "Worker.run").unwrap().clone();
    let full = bare["tooltip"].take();
    bare.as_object_mut().unwrap().remove("tooltip");
    assert_eq!(c.call("inlayHint/resolve", bare)["tooltip"], full);
    let tooltip = hint_for(&hints, "Worker.run").unwrap()["tooltip"]["value"].as_str().unwrap().to_string();
    assert!(tooltip.contains("| cluster | threads | avg crt(a,th) | Σ crt(a,th) |"), "{tooltip}");
    assert!(tooltip.contains("worker-0"), "{tooltip}");

    // Code lenses: the file's share at the top, one per declaration that opens its detail.
    let lenses = c.code_lenses(&ws.script);
    let file_crt = files["artifacts"].as_array().unwrap().iter().find(|f| Path::new(f["file"].as_str().unwrap()) == ws.script).unwrap()["crt"].as_f64().unwrap();
    let top = &lenses[0];
    assert_eq!(top["range"]["start"]["line"], 0);
    let top_title = top["command"]["title"].as_str().unwrap();
    assert!(top_title.starts_with(&format!("ThreadRadar: this file {:.1} % (", file_crt * 100.0)), "{top_title}");
    assert!(top_title.ends_with("· Open overview"));
    assert_eq!(top["command"]["command"], "threadradar.openOverview");
    // Beside each declaration's lens, a "Timeline" lens on the same line (tests/timeline_editor.rs).
    let timeline_lenses = lenses.iter().filter(|l| l["command"]["command"] == "threadradar.openTimeline").count();
    assert_eq!(timeline_lenses, expected.len());
    // The script's lock gives critical-section lenses (tests/lsp_sections.rs) and its waiting line a
    // wait lens (tests/lsp_waits.rs); they are not declarations' lenses.
    let lenses: Vec<Value> = lenses
        .into_iter()
        .filter(|l| {
            let command = l["command"]["command"].as_str().unwrap_or("");
            !["threadradar.openTimeline", "threadradar.openSections", "threadradar.openWaits"].contains(&command)
        })
        .collect();
    assert_eq!(lenses.len(), expected.len() + 1);
    let run_line = run_fn["line"].as_u64().unwrap();
    let lens = lenses.iter().find(|l| l["range"]["start"]["line"].as_u64() == Some(run_line - 1)).unwrap();
    assert_eq!(lens["command"]["title"].as_str().unwrap(), expected_lens(run_fn));
    assert_eq!(lens["command"]["command"], "threadradar.openDetail");
    let key = format!("function:{}:{run_line}:Worker.run", ws.script.display());
    assert_eq!(lens["command"]["arguments"][0]["artifact"], json!(key));

    // Hover: figures, clusters with their threads, callers and callees; text only for this client.
    let hover = c.hover(&ws.script, (run_line - 1) as u32, 8);
    let md = hover["contents"]["value"].as_str().unwrap();
    assert!(md.starts_with(&format!("**`Worker.run`** (method) — crt **{}** ({})", pct(run_fn["crt"].as_f64().unwrap()), secs(run_fn["seconds"].as_f64().unwrap()))), "{md}");
    assert!(md.contains(&format!("{} threads of", run_fn["threads"])), "{md}");
    assert!(md.contains("**Top callees**") && md.contains("`busy_work`"), "{md}");
    assert!(md.contains("**Top callers**"), "{md}");
    assert!(!md.contains("data:image"), "no image for a client that shows hovers as text");
    // The line below a declaration has no declaration hover (a line where threads waited has the
    // wait hover, tests/lsp_waits.rs).
    let below = c.hover(&ws.script, (run_line) as u32, 8);
    let below = below["contents"]["value"].as_str().unwrap_or("");
    assert!(below.is_empty() || below.starts_with("**Waits** on this line"), "the line below a declaration: {below}");
    // With the SVG image asked for, the glyph comes as a data URI.
    c.notify("workspace/didChangeConfiguration", json!({ "settings": { "threadradar": { "hoverImage": "svg", "minCrt": 0 } } }));
    let md = c.hover(&ws.script, (run_line - 1) as u32, 8)["contents"]["value"].as_str().unwrap().to_string();
    assert!(md.starts_with("![ThreadRadar of Worker.run](data:image/svg+xml;base64,"), "{}", &md[..80.min(md.len())]);

    // Edits above a function move its hint; a renamed function is stale, not misplaced.
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": file_uri(&ws.script), "version": 2 },
                "contentChanges": [{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "text": "# one\n# two\n# three\n" }] }),
    );
    let moved = c.inlay_hints(&ws.script);
    assert_eq!(hint_line(hint_for(&moved, "Worker.run").unwrap()), run_line - 1 + 3);
    assert_eq!(moved.len(), hints.len());
    let build_line = find(&expected, "WorkerManager._build_table")["line"].as_u64().unwrap() - 1 + 3;
    let old = "def _build_table";
    let col = text.lines().nth((build_line - 3) as usize).unwrap().find(old).unwrap() as u64;
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": file_uri(&ws.script), "version": 3 },
                "contentChanges": [{ "range": { "start": { "line": build_line, "character": col + 4 }, "end": { "line": build_line, "character": col + 16 } }, "text": "_make_table" }] }),
    );
    let renamed = c.inlay_hints(&ws.script);
    assert!(hint_for(&renamed, "WorkerManager._build_table").is_none());
    assert_eq!(renamed.len(), hints.len() - 1);
    let lenses = c.code_lenses(&ws.script);
    assert!(lenses[0]["command"]["title"].as_str().unwrap().contains("· 1 declaration changed since the run (stale) ·"), "{}", lenses[0]);
    // Back to the recorded text.
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": file_uri(&ws.script), "version": 4 }, "contentChanges": [{ "text": text }] }),
    );
    assert_eq!(c.inlay_hints(&ws.script).len(), hints.len());

    // A thread filter changes every figure at once, as `report --exclude-thread` computes them.
    let before = c.server_requests.len();
    let r = c.execute("threadradar.setThreadFilter", json!({ "exclude": ["worker-0"] })).unwrap();
    assert_eq!(r["excluded"][0]["name"], "worker-0");
    assert!(c.server_requests[before..].iter().any(|r| r["method"] == "workspace/inlayHint/refresh"));
    assert!(c.server_requests[before..].iter().any(|r| r["method"] == "workspace/codeLens/refresh"));
    let filtered_fns = report(&ws.run, "function", &["--exclude-thread", "worker-0"]);
    let filtered_cls = report(&ws.run, "class", &["--exclude-thread", "worker-0"]);
    let filtered = declared(&filtered_fns, &filtered_cls, &ws.script);
    let hints_f = c.inlay_hints(&ws.script);
    let run_f = find(&filtered, "Worker.run");
    assert_eq!(label(hint_for(&hints_f, "Worker.run").unwrap()), expected_label(run_f));
    assert_ne!(expected_label(run_f), expected_label(run_fn), "excluding a worker changes Worker.run");
    let hover = c.hover(&ws.script, (run_line - 1) as u32, 0);
    assert!(hover["contents"]["value"].as_str().unwrap().contains("thread filter: 1 excluded (`worker-0`)"));
    c.execute("threadradar.clearThreadFilter", json!({})).unwrap();
    assert_eq!(label(hint_for(&c.inlay_hints(&ws.script), "Worker.run").unwrap()), expected_label(run_fn));
    // Unknown names are one clear error, and change nothing.
    let err = c.execute("threadradar.setThreadFilter", json!({ "exclude": ["nobody"] })).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("no thread or thread type named \"nobody\""), "{err}");

    // Workspace symbols: profiled artifacts ranked by crt.
    let symbols = c.call("workspace/symbol", json!({ "query": "" }));
    let symbols = symbols.as_array().unwrap();
    let crt_of = |s: &Value| -> f64 {
        let c = s["containerName"].as_str().unwrap();
        c.trim_start_matches("ThreadRadar ").split(' ').next().unwrap().parse().unwrap()
    };
    assert!(symbols.windows(2).all(|w| crt_of(&w[0]) >= crt_of(&w[1])), "ranked by crt: {symbols:#?}");
    let worker_run = symbols.iter().find(|s| s["name"] == "Worker.run").unwrap();
    assert_eq!(worker_run["location"]["uri"], json!(file_uri(&ws.script)));
    assert_eq!(worker_run["location"]["range"]["start"]["line"].as_u64().unwrap(), run_line - 1);
    let only = c.call("workspace/symbol", json!({ "query": "build_tab" }));
    assert_eq!(only.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect::<Vec<_>>(), ["WorkerManager._build_table"]);

    // goTo asks the client to show the declaration.
    let loc = c.execute("threadradar.goTo", json!({ "artifact": key })).unwrap();
    assert_eq!(loc["range"]["start"]["line"].as_u64().unwrap(), run_line - 1);
    assert!(c.wait_server_request("window/showDocument", SHORT));

    // Panel requests answer with the panels' JSON.
    let overview = c.call("threadRadar/overview", json!({}));
    assert!(overview["functions"].as_array().unwrap().iter().any(|f| f["qualname"] == "Worker.run"));
    let detail = c.call("threadRadar/detail", json!({ "artifact": key }));
    assert_eq!(detail["artifact"]["qualname"], "Worker.run");
    assert!(c.call("threadRadar/glyph", json!({ "artifact": key }))["svg"].as_str().unwrap().contains("<svg"));
    assert!(!c.call("threadRadar/threads", json!({}))["threads"].as_array().unwrap().is_empty());
    let runs = c.call("threadRadar/runs", json!({}));
    assert_eq!(runs["active"], json!(ws.run));
    let detail_cmd = c.execute("threadradar.openDetail", json!({ "artifact": key })).unwrap();
    assert_eq!(detail_cmd["artifact"]["qualname"], "Worker.run");
    // A client without panels gets the figures as a message (notifications and responses may
    // arrive in either order).
    let shown = |n: &Value| n["method"] == "window/showMessage" && n["params"]["message"].as_str().unwrap().starts_with("ThreadRadar Worker.run: crt");
    assert!(c.notifications.iter().any(shown) || c.wait_for(SHORT, shown).is_some());

    // A new run appears: the server loads it (with progress) and asks the client to refresh.
    let before = c.server_requests.len();
    let newer = ws.run.with_file_name("20990101T000000Z-buggy.json");
    let tmp = ws.run.with_file_name(".incoming.tmp");
    std::fs::copy(&ws.run, &tmp).unwrap();
    std::fs::rename(&tmp, &newer).unwrap();
    let refreshed = |c: &LspClient, m: &str| c.server_requests[before..].iter().any(|r| r["method"] == m);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !(refreshed(&c, "workspace/inlayHint/refresh") && refreshed(&c, "workspace/codeLens/refresh")) && std::time::Instant::now() < deadline {
        c.drain(Duration::from_millis(200));
    }
    assert!(refreshed(&c, "workspace/inlayHint/refresh") && refreshed(&c, "workspace/codeLens/refresh"), "{:#?}", &c.server_requests[before..]);
    assert!(c.server_requests[before..].iter().any(|r| r["method"] == "window/workDoneProgress/create"));
    assert!(c.notifications.iter().any(|n| n["method"] == "$/progress" && n["params"]["value"]["kind"] == "end"));
    assert_eq!(c.call("threadRadar/runs", json!({}))["active"], json!(newer));
    // selectRun pins an older run.
    let r = c.execute("threadradar.selectRun", json!({ "run": "20000101T000000Z-buggy.json" })).unwrap();
    assert_eq!(r["active"], json!(ws.run));
    assert_eq!(r["pinned"], json!(true));

    assert!(c.shutdown().success());
}

/// `threadRadar/changed` notifications received so far, as their reasons.
fn changes(c: &LspClient) -> Vec<String> {
    c.notifications.iter().filter(|n| n["method"] == "threadRadar/changed").map(|n| n["params"]["reason"].as_str().unwrap().to_string()).collect()
}

/// Waits until a `threadRadar/changed` with this reason has arrived after the first `seen`.
fn wait_change(c: &mut LspClient, seen: usize, reason: &str) -> Value {
    let hit = |n: &Value| n["method"] == "threadRadar/changed" && n["params"]["reason"] == reason;
    if let Some(n) = c.notifications.iter().filter(|n| n["method"] == "threadRadar/changed").skip(seen).find(|n| hit(n)) {
        return n.clone();
    }
    c.wait_for(Duration::from_secs(20), hit).unwrap_or_else(|| panic!("no threadRadar/changed {reason}; got {:?}", changes(c)))
}

#[test]
fn editor_clients_get_document_artifacts_changes_hottest_and_run_deletion() {
    let ws = recorded_workspace();
    let functions = report(&ws.run, "function", &[]);
    let classes = report(&ws.run, "class", &[]);
    let expected = declared(&functions, &classes, &ws.script);
    let text = std::fs::read_to_string(&ws.script).unwrap();

    let mut c = LspClient::spawn(common::bin(), &ws.root);
    let init = c.initialize(&ws.root, json!({ "minCrt": 0, "notifyChanges": true, "pollMs": 100 }));
    assert!(init["capabilities"]["experimental"]["threadRadar"]["requests"].as_array().unwrap().contains(&json!("threadRadar/documentArtifacts")));
    c.open(&ws.script, &text);

    // documentArtifacts: the hints' declarations, with lines, labels and text glyph cells.
    let hints = c.inlay_hints(&ws.script);
    let doc = c.call("threadRadar/documentArtifacts", json!({ "uri": file_uri(&ws.script), "glyph": { "theme": "dark", "size": 36 } }));
    assert_eq!(doc["run"], json!(ws.run.file_name().unwrap().to_str().unwrap()));
    assert_eq!(doc["stale"], 0);
    let arts = doc["artifacts"].as_array().unwrap();
    assert_eq!(arts.len(), expected.len());
    assert!(arts.windows(2).all(|w| w[0]["line"].as_u64() <= w[1]["line"].as_u64()), "sorted by line");
    for a in &expected {
        let q = a["qualname"].as_str().unwrap();
        let d = arts.iter().find(|d| d["qualname"] == q).unwrap_or_else(|| panic!("{q} not in documentArtifacts"));
        let line = a["line"].as_u64().unwrap() - 1;
        assert_eq!(d["line"].as_u64().unwrap(), line, "{q}");
        let line_text = text.lines().nth(line as usize).unwrap();
        assert_eq!(d["character"].as_u64().unwrap() as usize, line_text.len() - line_text.trim_start().len(), "{q}");
        assert_eq!(d["end_character"].as_u64().unwrap() as usize, line_text.encode_utf16().count(), "{q}");
        assert_eq!(d["label"].as_str().unwrap(), expected_label(a), "{q}");
        assert_eq!(d["label"].as_str().unwrap(), label(hint_for(&hints, q).unwrap()), "{q}: the same text as the hint");
        assert_eq!(d["cells"].as_array().unwrap().len(), a["clusters"].as_array().unwrap().len(), "{q}");
        let cells: Vec<&str> = d["cells"].as_array().unwrap().iter().map(|c| c["text"].as_str().unwrap()).collect();
        assert_eq!(d["text"].as_str().unwrap(), cells.join(" "));
        let svg = d["glyph_svg"].as_str().unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("height=\"36\""), "{q}: {}", &svg[..120.min(svg.len())]);
    }
    let colours: Vec<&str> = arts.iter().flat_map(|a| a["cells"].as_array().unwrap().iter().map(|c| c["colour"].as_str().unwrap())).collect();
    assert!(colours.iter().all(|c| ["low", "middle", "high"].contains(c)), "{colours:?}");
    // Without `glyph`, no SVG; a file the run does not know, no artifacts; a bad URI, one error.
    let plain = c.call("threadRadar/documentArtifacts", json!({ "uri": file_uri(&ws.script) }));
    assert!(plain["artifacts"][0].get("glyph_svg").is_none());
    let other = ws.root.join("other.py");
    std::fs::write(&other, "def f():\n    pass\n").unwrap();
    assert_eq!(c.call("threadRadar/documentArtifacts", json!({ "uri": file_uri(&other) }))["artifacts"], json!([]));
    let err = c.request("threadRadar/documentArtifacts", json!({ "uri": 5 })).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("the parameters of documentArtifacts are not valid"), "{err}");
    assert_eq!(err["data"]["code"], "invalid_params", "{err}");

    // The active run's summary, for a status bar.
    // Read as a run (version 2 files are JSON lines), then looked at as JSON.
    let recorded: Value = serde_json::to_value(threadradar_profiler::runfile::read(&ws.run).unwrap()).unwrap();
    let runs = c.call("threadRadar/runs", json!({}));
    assert_eq!(runs["summary"]["samples"], recorded["meta"]["sample_count"]);
    assert_eq!(runs["summary"]["threads"].as_u64().unwrap() as usize, recorded["threads"].as_array().unwrap().len());
    assert!(runs["summary"]["command"].as_str().unwrap().contains("buggy.py"));

    // A thread filter: `threadRadar/changed` "filter", and the figures follow.
    let seen = changes(&c).len();
    c.execute("threadradar.setThreadFilter", json!({ "exclude": ["worker-0"] })).unwrap();
    let n = wait_change(&mut c, seen, "filter");
    assert_eq!(n["params"]["exclude_threads"].as_array().unwrap().len(), 1);
    let filtered = c.call("threadRadar/documentArtifacts", json!({ "uri": file_uri(&ws.script) }));
    assert_eq!(filtered["exclude_threads"], n["params"]["exclude_threads"]);
    let run_before = arts.iter().find(|d| d["qualname"] == "Worker.run").unwrap();
    let run_after = filtered["artifacts"].as_array().unwrap().iter().find(|d| d["qualname"] == "Worker.run").unwrap();
    assert_ne!(run_before["label"], run_after["label"], "excluding a worker changes Worker.run");
    let seen = changes(&c).len();
    c.execute("threadradar.clearThreadFilter", json!({})).unwrap();
    assert_eq!(wait_change(&mut c, seen, "filter")["params"]["exclude_threads"], json!([]));

    // goToHottest: the user function (then class) with the highest crt, shown in the editor.
    // The user's declarations of a kind with the highest crt (several when they tie, e.g. a
    // `run` that only calls one function).
    let hottest = |kind: &str, report: &Value| -> Vec<String> {
        let own: Vec<&Value> = report["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["file_kind"] == "user" && a["qualname"] != "<module>" && a["kind"] == kind && a["line"].as_u64().unwrap() > 0)
            .collect();
        let top = own.iter().map(|a| a["crt"].as_f64().unwrap()).fold(0.0, f64::max);
        own.iter().filter(|a| a["crt"].as_f64().unwrap() == top).map(|a| a["qualname"].as_str().unwrap().to_string()).collect()
    };
    let before = c.server_requests.len();
    let hot = c.execute("threadradar.goToHottest", json!({})).unwrap();
    let want = hottest("function", &functions);
    assert!(want.contains(&hot["qualname"].as_str().unwrap().to_string()), "{hot} not in {want:?}");
    assert!(c.wait_server_request("window/showDocument", SHORT) && c.server_requests.len() > before);
    let hot_class = c.execute("threadradar.goToHottest", json!({ "kind": "class" })).unwrap();
    let want = hottest("class", &classes);
    assert!(want.contains(&hot_class["qualname"].as_str().unwrap().to_string()), "{hot_class} not in {want:?}");
    assert!(c.execute("threadradar.goToHottest", json!({ "kind": "module" })).unwrap_err()["message"].as_str().unwrap().contains("function or class"));

    // A newer run: "run"; an older one: "runs" (the list changed, the active run did not).
    let seen = changes(&c).len();
    let newer = ws.run.with_file_name("20990101T000000Z-buggy.json");
    let tmp = ws.run.with_file_name(".incoming.tmp");
    std::fs::copy(&ws.run, &tmp).unwrap();
    std::fs::rename(&tmp, &newer).unwrap();
    assert_eq!(wait_change(&mut c, seen, "run")["params"]["run"], json!(newer));
    // Compare: the active run against the one before it (here the same recording, so every
    // artifact matches with equal figures, those of `report`).
    let cmp = c.call("threadRadar/compare", json!({}));
    assert_eq!(cmp["base"]["path"], json!(ws.run));
    assert_eq!(cmp["new"]["path"], json!(newer));
    let deltas = cmp["artifacts"].as_array().unwrap();
    assert_eq!(deltas.len(), functions["artifacts"].as_array().unwrap().len());
    assert!(deltas.iter().all(|d| d["status"] == "changed" && d["crt_delta"].as_f64() == Some(0.0)), "{cmp:#}");
    let init_delta = deltas.iter().find(|d| d["qualname"] == "WorkerManager.__init__").unwrap();
    let init_report = find(&expected, "WorkerManager.__init__");
    assert_eq!(init_delta["new"]["crt"], init_report["crt"]);
    assert_eq!(init_delta["base"]["threads"], init_report["threads"]);
    let cls = c.call("threadRadar/compare", json!({ "level": "class", "top": 1, "hide_stdlib": true }));
    assert_eq!(cls["artifacts"].as_array().unwrap().len(), 1);
    assert_eq!(cls["artifacts"][0]["kind"], "class");
    let err = c.request("threadRadar/compare", json!({ "base": "nope.json" })).unwrap_err();
    assert!(err["message"].as_str().unwrap().starts_with("no run \"nope.json\""), "{err}");
    let err = c.request("threadRadar/compare", json!({ "new": ws.run.to_str().unwrap() })).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("no earlier run"), "{err}");
    let seen = changes(&c).len();
    let older = ws.run.with_file_name("19990101T000000Z-buggy.json");
    std::fs::copy(&ws.run, &tmp).unwrap();
    std::fs::rename(&tmp, &older).unwrap();
    assert_eq!(wait_change(&mut c, seen, "runs")["params"]["run"], json!(newer));

    // deleteRun: the active run goes, the newest remaining one is shown.
    let seen = changes(&c).len();
    let r = c.execute("threadradar.deleteRun", json!({ "run": newer.file_name().unwrap().to_str().unwrap() })).unwrap();
    assert!(!newer.exists());
    assert_eq!(r["active"], json!(ws.run));
    assert_eq!(r["runs"].as_array().unwrap().len(), 2);
    assert_eq!(wait_change(&mut c, seen, "run")["params"]["run"], json!(ws.run));
    // A run that is not active: the file goes, the active run stays.
    let r = c.execute("threadradar.deleteRun", json!({ "run": older.to_str().unwrap() })).unwrap();
    assert!(!older.exists());
    assert_eq!(r["active"], json!(ws.run));
    let err = c.execute("threadradar.deleteRun", json!({ "run": "nope.json" })).unwrap_err();
    assert!(err["message"].as_str().unwrap().starts_with("no run \"nope.json\""), "{err}");
    // The last run: nothing is shown any more.
    let seen = changes(&c).len();
    c.execute("threadradar.deleteRun", json!({ "run": ws.run.to_str().unwrap() })).unwrap();
    assert_eq!(wait_change(&mut c, seen, "run")["params"]["run"], Value::Null);
    assert_eq!(c.call("threadRadar/documentArtifacts", json!({ "uri": file_uri(&ws.script) }))["artifacts"], json!([]));
    assert_eq!(c.inlay_hints(&ws.script), Vec::<Value>::new());
    assert!(c.shutdown().success());
}

#[test]
fn a_panicking_handler_answers_with_the_panics_message_and_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut c = LspClient::spawn_with_env(common::bin(), &root, &[("THREADRADAR_TEST_PANIC", "1")]);
    c.initialize(&root, json!({}));
    let err = c.request("threadRadar/testPanic", json!({})).unwrap_err();
    let msg = err["message"].as_str().unwrap();
    assert!(msg.contains("the test panic THREADRADAR_TEST_PANIC asked for"), "{err}");
    assert!(msg.contains("threadRadar/testPanic failed inside the server"), "{err}");
    assert_eq!(err["code"], json!(-32603), "{err}");
    let shown = |n: &Value| n["method"] == "window/showMessage" && n["params"]["message"].as_str().unwrap_or("").contains("THREADRADAR_TEST_PANIC asked for");
    let m = c.notifications.iter().find(|n| shown(n)).cloned().or_else(|| c.wait_for(SHORT, shown));
    assert_eq!(m.expect("the panic shown to the user")["params"]["type"], json!(1));
    // The server keeps answering.
    assert!(c.alive());
    assert!(c.shutdown().success());
}

fn messages_of(c: &LspClient, method: &str) -> Vec<String> {
    c.notifications.iter().filter(|n| n["method"] == method).map(|n| n["params"]["message"].as_str().unwrap_or("").to_string()).collect()
}

#[test]
fn recording_from_the_editor_shows_the_new_run_and_keeps_it_when_stopped() {
    let _serial = common::serial();
    let (_dir, root, script) = bug1_workspace();
    let forever = root.join("forever.py");
    std::fs::copy(common::repo().join("tests/scripts/forever.py"), &forever).unwrap();
    let py = common::python();

    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({ "notifyChanges": true, "pollMs": 100, "recordCommand": [py.as_str(), script.to_str().unwrap(), "--workers", "4", "--timeout", "1"] }));
    assert!(c.execute("threadradar.stopRecording", json!({})).unwrap_err()["message"].as_str().unwrap().contains("nothing is being recorded"));

    // The configured command, recorded into the workspace's runs directory and then shown.
    let seen = changes(&c).len();
    let started = c.execute("threadradar.record", json!({})).unwrap();
    let output = PathBuf::from(started["output"].as_str().unwrap());
    assert_eq!(output.parent().unwrap(), root.join(".threadradar/runs"));
    assert!(output.file_name().unwrap().to_str().unwrap().ends_with("-buggy.json"), "{output:?}");
    let err = c.execute("threadradar.record", json!({})).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("is already being recorded"), "{err}");
    let shown = wait_change(&mut c, seen, "run");
    assert_eq!(shown["params"]["run"], json!(output));
    let done = |n: &Value| n["method"] == "window/showMessage" && n["params"]["message"].as_str().unwrap().starts_with("ThreadRadar: recorded ");
    assert!(c.notifications.iter().any(done) || c.wait_for(Duration::from_secs(10), done).is_some(), "{:?}", messages_of(&c, "window/showMessage"));
    // The program's own output reaches the client's log.
    assert!(messages_of(&c, "window/logMessage").iter().any(|m| m.starts_with("constructor ran in 4 threads") || m.starts_with("constructor ran in")), "{:?}", messages_of(&c, "window/logMessage"));
    assert!(c.server_requests.iter().any(|r| r["method"] == "window/workDoneProgress/create" && r["params"]["token"].as_str().unwrap().starts_with("threadradar/record/")));
    let text = std::fs::read_to_string(&script).unwrap();
    c.open(&script, &text);
    let hints = c.inlay_hints(&script);
    assert!(hint_for(&hints, "WorkerManager.__init__").is_some(), "the recorded run is annotated: {hints:#?}");

    // A program that runs until stopped: the progress's cancel button stops it and keeps the run.
    let before = c.server_requests.len();
    let started = c.execute("threadradar.record", json!({ "command": [py.as_str(), forever.to_str().unwrap()], "subprocesses": false })).unwrap();
    let second = PathBuf::from(started["output"].as_str().unwrap());
    let token = c.server_requests[before..]
        .iter()
        .find(|r| r["method"] == "window/workDoneProgress/create")
        .map(|r| r["params"]["token"].clone())
        .expect("a progress for the recording");
    c.drain(Duration::from_millis(1500));
    let seen = changes(&c).len();
    c.notify("window/workDoneProgress/cancel", json!({ "token": token }));
    assert_eq!(wait_change(&mut c, seen, "run")["params"]["run"], json!(second));
    // The run is written before the program is stopped; "recording" says when it is over.
    let ended = |n: &Value| n["method"] == "threadRadar/changed" && n["params"]["reason"] == "recording" && n["params"]["recording"].is_null();
    let seen_end = |c: &LspClient| c.notifications.iter().filter(|n| n["method"] == "threadRadar/changed").skip(seen).any(ended);
    assert!(seen_end(&c) || c.wait_for(Duration::from_secs(10), ended).is_some(), "{:?}", changes(&c));
    let recorded: Value = serde_json::to_value(threadradar_profiler::runfile::read(&second).unwrap()).unwrap();
    assert_eq!(recorded["meta"]["end_reason"], "interrupted");
    assert!(recorded["meta"]["sample_count"].as_u64().unwrap() > 50, "{}", recorded["meta"]);
    assert_eq!(c.call("threadRadar/runs", json!({}))["active"], json!(second));

    // A command that cannot start: one error message, no run, and recording works again.
    let seen_msgs = messages_of(&c, "window/showMessage").len();
    c.execute("threadradar.record", json!({ "command": ["/no/such/python"] })).unwrap();
    let failed = |n: &Value| n["method"] == "window/showMessage" && n["params"]["message"].as_str().unwrap().starts_with("ThreadRadar: nothing was recorded");
    let m = c.notifications.iter().find(|n| failed(n)).cloned().or_else(|| c.wait_for(Duration::from_secs(10), failed)).expect("an error message");
    assert!(m["params"]["message"].as_str().unwrap().contains("/no/such/python"), "{m}");
    assert!(messages_of(&c, "window/showMessage").len() > seen_msgs);
    assert_eq!(std::fs::read_dir(root.join(".threadradar/runs")).unwrap().count(), 2);

    // A repeat count (issue 17): the configured program twice as one run set; the progress says
    // which run, the message names the set, its last run is shown, the manifest is not a run.
    let started = c.execute("threadradar.record", json!({ "repeat": 2 })).unwrap();
    assert_eq!(started["repeat"], 2);
    let manifest = PathBuf::from(started["output"].as_str().unwrap());
    assert!(manifest.file_name().unwrap().to_str().unwrap().ends_with("-buggy.runset.json"), "{manifest:?}");
    let set_done = |n: &Value| n["method"] == "window/showMessage" && n["params"]["message"].as_str().unwrap().starts_with("ThreadRadar: run set of 2 runs");
    assert!(c.notifications.iter().any(set_done) || c.wait_for(Duration::from_secs(60), set_done).is_some(), "{:?}", messages_of(&c, "window/showMessage"));
    let set = threadradar_profiler::runset::read(&manifest).unwrap().expect("a run set");
    assert_eq!(set.runs.len(), 2);
    for r in &set.runs {
        assert!(threadradar_profiler::runfile::read(r).unwrap().samples.len() > 10, "{}", r.display());
    }
    let progress: Vec<String> = c.notifications.iter().filter(|n| n["method"] == "$/progress").filter_map(|n| n["params"]["value"]["message"].as_str().map(String::from)).collect();
    let active = c.call("threadRadar/runs", json!({}));
    assert!(!active["runs"].as_array().unwrap().iter().any(|r| r["path"] == json!(manifest)), "{active}");
    let shown_run = active["active"].as_str().unwrap().to_string();
    assert!(set.runs.iter().any(|r| r.to_str() == Some(shown_run.as_str())), "{shown_run} is one of the set's runs");
    assert!(progress.iter().any(|m| m.starts_with("run ") && m.contains(" of 2 · ")), "the progress says which run: {progress:?}");

    // Shutting down while recording: the run is written before the server exits.
    let started = c.execute("threadradar.record", json!({ "command": [py.as_str(), forever.to_str().unwrap()], "subprocesses": false })).unwrap();
    let third = PathBuf::from(started["output"].as_str().unwrap());
    c.drain(Duration::from_millis(1000));
    assert!(c.shutdown().success());
    let recorded: Value = serde_json::to_value(threadradar_profiler::runfile::read(&third).unwrap()).unwrap();
    assert_eq!(recorded["meta"]["end_reason"], "interrupted");
}

#[test]
fn a_workspace_without_runs_says_so_once_and_survives_a_corrupt_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("app.py");
    std::fs::write(&file, "def main():\n    pass\n").unwrap();
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({ "pollMs": 100 }));
    c.open(&file, "def main():\n    pass\n");
    assert_eq!(c.inlay_hints(&file), Vec::<Value>::new());
    assert_eq!(c.code_lenses(&file), Vec::<Value>::new());
    assert_eq!(c.hover(&file, 0, 4), Value::Null);
    assert_eq!(c.call("workspace/symbol", json!({ "query": "" })), json!([]));
    c.drain(Duration::from_millis(600));
    let messages = |c: &LspClient| -> Vec<String> {
        c.notifications.iter().filter(|n| n["method"] == "window/showMessage").map(|n| n["params"]["message"].as_str().unwrap().to_string()).collect()
    };
    let m = messages(&c);
    assert_eq!(m.len(), 1, "{m:?}");
    let no_runs = m[0].replace(&root.display().to_string(), "<ws>");
    expect![[r#"ThreadRadar: no runs in <ws>/.threadradar/runs yet. Record one with `threadradar record -- python3 your_program.py`; the radars appear as soon as it is written."#]]
        .assert_eq(&no_runs);
    // A run being written (here: cut off) is reported once and retried only when it changes.
    let runs = root.join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(runs.join("20000101T000000Z-app.json"), "{\"format\":\"threadradar-run\",\"version\":1,\"meta\":{").unwrap();
    c.drain(Duration::from_millis(1500));
    let m = messages(&c);
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(m[1].contains("is truncated") && m[1].contains("read again when it changes"), "{}", m[1]);
    assert_eq!(c.inlay_hints(&file), Vec::<Value>::new());
    let err = c.request("threadRadar/overview", json!({})).unwrap_err();
    assert!(err["message"].as_str().unwrap().starts_with("there is no run"), "{err}");
    assert!(c.shutdown().success());
}

/// Messages a careless or hostile client might send.
fn junk() -> impl Strategy<Value = Vec<u8>> {
    let methods = prop::sample::select(vec![
        "textDocument/inlayHint",
        "textDocument/codeLens",
        "textDocument/hover",
        "workspace/symbol",
        "workspace/executeCommand",
        "threadRadar/overview",
        "threadRadar/detail",
        "threadRadar/glyph",
        "threadRadar/threads",
        "threadRadar/runs",
        "threadRadar/documentArtifacts",
        "threadRadar/compare",
        "textDocument/didChange",
        "textDocument/didOpen",
        "textDocument/didClose",
        "workspace/didChangeConfiguration",
        "no/such/method",
        "$/cancelRequest",
        "window/workDoneProgress/cancel",
    ]);
    let params = prop_oneof![
        Just(json!(null)),
        Just(json!({})),
        Just(json!([1, 2, 3])),
        Just(json!("text")),
        (any::<u32>(), any::<u32>()).prop_map(|(l, ch)| json!({
            "textDocument": { "uri": "file:///nowhere/x.py", "version": 7 },
            "position": { "line": l, "character": ch },
            "range": { "start": { "line": l, "character": ch }, "end": { "line": 0, "character": 0 } },
            "contentChanges": [{ "range": { "start": { "line": l, "character": ch }, "end": { "line": l, "character": 0 } }, "text": "x" }],
        })),
        prop::sample::select(vec!["threadradar.setThreadFilter", "threadradar.goTo", "threadradar.selectRun", "threadradar.openDetail", "threadradar.deleteRun", "threadradar.goToHottest", "threadradar.stopRecording", "nope"])
            .prop_map(|c| json!({ "command": c, "arguments": [{ "exclude": [99999, "x"], "artifact": "function:/x:1:f", "run": "/nope" }] })),
        Just(json!({ "settings": { "threadradar": { "minCrt": "high", "states": 3, "hoverImage": [] } } })),
        Just(json!({ "textDocument": { "uri": "not a uri", "text": 5 } })),
    ];
    let well_formed = (methods, params, prop::option::of(100_000i64..101_000)).prop_map(|(m, p, id)| {
        let mut msg = json!({ "jsonrpc": "2.0", "method": m, "params": p });
        if let Some(id) = id {
            msg["id"] = json!(id);
        }
        msg.to_string().into_bytes()
    });
    prop_oneof![
        4 => well_formed,
        1 => prop::collection::vec(any::<u8>(), 0..64).prop_map(|mut v| { v.retain(|b| *b != b'\r' && *b != b'\n'); v }),
        1 => Just(b"{\"jsonrpc\":\"2.0\",\"id\":100001,\"method\":".to_vec()),
        1 => Just(b"{\"id\": {}, \"method\": 5}".to_vec()),
        1 => Just(b"[]".to_vec()),
        1 => Just(b"{\"jsonrpc\":\"2.0\",\"id\":100003,\"result\":null}".to_vec()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever arrives, before or after `initialize`, the server stays up and still answers.
    #[test]
    fn random_and_malformed_messages_do_not_bring_the_server_down(
        before_init in prop::collection::vec(junk(), 0..6),
        after_init in prop::collection::vec(junk(), 0..25),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut c = LspClient::spawn(common::bin(), &root);
        for body in &before_init {
            let _ = c.send_body(body);
        }
        c.initialize(&root, json!({}));
        let file = root.join("a.py");
        c.open(&file, "def f():\n    pass\n");
        for body in &after_init {
            let _ = c.send_body(body);
        }
        // Still up, still answering a valid request.
        let r = c.request("textDocument/hover", json!({ "textDocument": { "uri": file_uri(&file) }, "position": { "line": 0, "character": 1 } }));
        prop_assert!(r.is_ok(), "{r:?}");
        prop_assert!(c.alive());
        let r = c.request("threadRadar/runs", json!({}));
        prop_assert!(r.is_ok(), "{r:?}");
        prop_assert!(c.shutdown().success());
    }
}

/// A frame that claims more than a message may have is answered at once and its body skipped as
/// it arrives: the server's peak memory stays far below the 300 MiB it was sent, and the next
/// message is answered as usual.
#[test]
fn an_over_large_frame_is_refused_at_once_without_holding_its_body() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({}));
    let claimed: usize = 300 << 20;
    c.send_raw(format!("Content-Length: {claimed}\r\n\r\n").as_bytes()).unwrap();
    let refused = c.wait_for(Duration::from_secs(10), |m| m["error"]["code"] == -32700 && m["error"]["message"].as_str().is_some_and(|s| s.contains("MiB")));
    assert!(refused.is_some(), "no error for the over-large frame before its body was sent");
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..claimed >> 20 {
        c.send_raw(&chunk).unwrap();
    }
    let file = root.join("a.py");
    c.open(&file, "def f():\n    pass\n");
    let r = c.request("textDocument/hover", json!({ "textDocument": { "uri": file_uri(&file) }, "position": { "line": 0, "character": 1 } }));
    assert!(r.is_ok(), "the message after the skipped body: {r:?}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", c.pid())).unwrap();
    let peak_kb: u64 = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok()).unwrap();
    assert!(peak_kb < 120 << 10, "the server's peak resident memory was {peak_kb} kB after a {claimed}-byte frame");
    assert!(c.shutdown().success());
}
