//! The panel protocol end to end: every method over both transports (a real `threadradar serve`
//! over HTTP and a real `threadradar lsp` over stdio) on the same checked-in runs of the Bug 1
//! sample, which must give the same JSON; each answer as a snapshot (`tests/fixtures/protocol/`);
//! the generated TypeScript and the docs' method table current; and a slow document never holding
//! up another request.
//!
//! Snapshots and generated files are refreshed with `UPDATE_EXPECT=1 cargo test --test protocol`.

mod common;
mod lsp_client;

use expect_test::expect_file;
use lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use threadradar_lsp::protocol;

/// A workspace with the fixture runs (paths rewritten to it) and the sample sources they name.
struct Workspace {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Workspace {
    fn new() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let samples = common::repo().join("samples/python");
        for f in ["common.py", "bug1_worker_manager/buggy.py", "bug1_worker_manager/fixed.py"] {
            let to = root.join("samples/python").join(f);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(samples.join(f), to).unwrap();
        }
        let runs = root.join(".threadradar/runs");
        std::fs::create_dir_all(&runs).unwrap();
        for e in std::fs::read_dir(common::repo().join("tests/fixtures/runs")).unwrap() {
            let e = e.unwrap();
            let text = std::fs::read_to_string(e.path()).unwrap().replace("@ROOT@", root.to_str().unwrap());
            std::fs::write(runs.join(e.file_name()), text).unwrap();
        }
        // A run set of the two runs (`runSet`; its manifest is not listed as a run).
        let set = runs.join("20260101T000002Z-bug1.runset.json");
        threadradar_profiler::runset::write(&set, "bug1", &["python3".into(), "buggy.py".into()], &[runs.join(BUGGY), runs.join(FIXED)]).unwrap();
        Workspace { _dir: dir, root }
    }

    fn source(&self, name: &str) -> PathBuf {
        self.root.join("samples/python/bug1_worker_manager").join(name)
    }

    /// A protocol answer with this workspace's path spelled `@ROOT@` and the run files' times
    /// and sizes (which depend on when and where the fixtures were copied) zeroed, pretty-printed.
    fn normalise(&self, v: &Value) -> String {
        fn zero(v: &mut Value) {
            match v {
                Value::Object(o) => {
                    for (k, x) in o.iter_mut() {
                        if k == "modified_unix_ms" || k == "size" {
                            *x = json!(0);
                        } else {
                            zero(x);
                        }
                    }
                }
                Value::Array(a) => a.iter_mut().for_each(zero),
                _ => {}
            }
        }
        let mut v = v.clone();
        zero(&mut v);
        serde_json::to_string_pretty(&v).unwrap().replace(self.root.to_str().unwrap(), "@ROOT@") + "\n"
    }
}

struct Serve {
    child: Child,
    url: String,
    /// Kept open: the server prints navigation requests.
    _stdout: BufReader<std::process::ChildStdout>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(dir: &Path) -> Serve {
    let mut child = Command::new(common::bin()).args(["serve", dir.to_str().unwrap(), "--port", "0"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdout.read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://127.0.0.1:")).unwrap_or_else(|| panic!("no URL in {line:?}")).to_string();
    Serve { child, url, _stdout: stdout }
}

/// `POST /api/<method>`: the body as JSON, `Ok` for 200 and `Err((status, body))` otherwise.
fn post(s: &Serve, method: &str, params: &Value) -> Result<Value, (u16, Value)> {
    match ureq::post(&format!("{}api/{method}", s.url)).set("Content-Type", "application/json").send_string(&params.to_string()) {
        Ok(r) => Ok(r.into_json().unwrap()),
        Err(ureq::Error::Status(code, r)) => Err((code, r.into_json().unwrap())),
        Err(e) => panic!("{e}"),
    }
}

/// The checked-in runs of Bug 1 (`tests/fixtures/runs/`): 4 workers each, buggy and fixed.
const BUGGY: &str = "20260101T000000Z-bug1-buggy.json";
const FIXED: &str = "20260101T000001Z-bug1-fixed.json";

/// The requests of the identity test: every method but `navigate` (whose effect differs by
/// design: the editor opens a file, `serve` prints it), with typical and edge parameters.
fn requests(ws: &Workspace) -> Vec<(&'static str, &'static str, Value)> {
    let fixed = ws.source("fixed.py");
    let file = fixed.to_str().unwrap();
    // WorkerManager.__init__: 1-based `def` line, as the run records it.
    let init = std::fs::read_to_string(&fixed).unwrap().lines().position(|l| l.contains("def __init__")).unwrap() + 1;
    vec![
        ("overview", "overview", json!({})),
        ("overview", "overview-filtered", json!({ "hide_stdlib": true, "include": ["Worker"], "top": 3, "theme": "dark" })),
        ("threads", "threads", json!({})),
        ("detail", "detail-program", json!({ "artifact": "program" })),
        ("detail", "detail-init", json!({ "artifact": format!("function:{file}:{init}:WorkerManager.__init__"), "histogram_columns": 24 })),
        ("glyph", "glyph", json!({ "artifact": "program", "size": 64 })),
        ("runs", "runs", json!({})),
        ("filter", "filter", json!({})),
        ("compare", "compare", json!({})),
        ("compare", "compare-class", json!({ "level": "class", "hide_stdlib": true })),
        // Run sets (issue 17): each side a set of the checked-in runs.
        ("compare", "compare-sets", json!({ "base_runs": [BUGGY, BUGGY], "new_runs": [FIXED, FIXED], "hide_stdlib": true })),
        ("compare", "compare-sets-same-runs", json!({ "base_runs": [BUGGY, FIXED], "new_runs": [FIXED, BUGGY], "hide_stdlib": true })),
        ("documentArtifacts", "document-artifacts", json!({ "file": file, "glyph": { "size": 32 } })),
        ("artifactAt", "artifact-at-init", json!({ "file": file, "line": init + 1, "character": 8 })),
        ("artifactAt", "artifact-at-module", json!({ "file": file, "line": 0, "character": 0 })),
        ("timeline", "timeline", json!({ "width_px": 300, "fold": { "stdlib": true } })),
        ("sections", "sections", json!({ "outlier_factor": 4 })),
        ("waits", "waits", json!({ "width_px": 300 })),
        ("traceCompare", "trace-compare", json!({ "width_px": 300 })),
        ("traceCompare", "trace-compare-sets", json!({ "a_runs": [BUGGY, BUGGY], "b_runs": [FIXED, FIXED], "width_px": 300 })),
        ("views", "views", json!({})),
        ("runSet", "run-set", json!({ "runset": "20260101T000002Z-bug1.runset.json", "top": 5, "hide_stdlib": true })),
        ("splitCommand", "split-command", json!({ "line": "python3 \"my app.py\" -k 'a b' # comment" })),
        ("splitCommand", "split-command-unclosed", json!({ "line": "python3 'app.py" })),
        ("splitCommand", "join-command", json!({ "words": ["python3", "my app.py", "it's", ""] })),
    ]
}

fn lsp(ws: &Workspace) -> LspClient {
    let mut c = LspClient::spawn(common::bin(), &ws.root);
    c.initialize(&ws.root, json!({}));
    c
}

#[test]
fn serve_and_lsp_answer_the_same_json_for_every_method() {
    let ws = Workspace::new();
    let s = serve(&ws.root.join(".threadradar/runs"));
    let mut c = lsp(&ws);
    let mut covered: Vec<&str> = Vec::new();
    for (method, snapshot, params) in requests(&ws) {
        let over_http = post(&s, method, &params).unwrap_or_else(|e| panic!("{method} over HTTP: {e:?}"));
        let over_lsp = c.call(&protocol::lsp_name(method), params.clone());
        assert_eq!(over_http.to_string(), over_lsp.to_string(), "{method} {params} differs between serve and lsp");
        expect_file![format!("fixtures/protocol/{snapshot}.json")].assert_eq(&ws.normalise(&over_lsp));
        covered.push(method);
    }
    // Errors too: the same sentence and kind, as an HTTP status and as a JSON-RPC code.
    for (method, params, code) in [
        ("detail", json!({ "artifact": "function:nope.py:1:nope" }), protocol::ErrorCode::NotFound),
        ("overview", json!({ "include": ["("] }), protocol::ErrorCode::InvalidParams),
        ("compare", json!({ "level": "module" }), protocol::ErrorCode::InvalidParams),
        ("compare", json!({ "base": BUGGY, "base_runs": [BUGGY] }), protocol::ErrorCode::InvalidParams),
        ("compare", json!({ "new_runs": [] }), protocol::ErrorCode::InvalidParams),
        ("compare", json!({ "new_runs": [FIXED, "nope.json"] }), protocol::ErrorCode::NotFound),
        ("filter", json!({ "exclude_threads": [999] }), protocol::ErrorCode::NotFound),
        ("artifactAt", json!({ "line": 1 }), protocol::ErrorCode::InvalidParams),
        ("timeline", json!({ "theta": -1 }), protocol::ErrorCode::InvalidParams),
        ("timeline", json!({ "from_s": 500, "to_s": 600 }), protocol::ErrorCode::InvalidParams),
        ("sections", json!({ "outlier_quantile": 2 }), protocol::ErrorCode::InvalidParams),
        ("waits", json!({ "from_s": 2, "to_s": 1 }), protocol::ErrorCode::InvalidParams),
        ("traceCompare", json!({ "width_px": 0 }), protocol::ErrorCode::InvalidParams),
        ("views", json!({ "delete": "no-such-view" }), protocol::ErrorCode::NotFound),
        ("splitCommand", json!({}), protocol::ErrorCode::InvalidParams),
        ("noSuchMethod", json!({}), protocol::ErrorCode::UnknownMethod),
    ] {
        let (status, body) = post(&s, method, &params).unwrap_err();
        let err = c.request(&protocol::lsp_name(method), params.clone()).unwrap_err();
        assert_eq!(status, code.http_status(), "{method}: {body}");
        assert_eq!(body["code"], code.as_str(), "{method}: {body}");
        if code != protocol::ErrorCode::UnknownMethod {
            // (an unknown LSP method is refused by the LSP framework itself)
            assert_eq!(err["code"], code.jsonrpc_code(), "{method}: {err}");
            assert_eq!(err["data"]["code"], code.as_str(), "{method}: {err}");
            assert_eq!(err["message"], body["error"], "{method}");
        }
    }
    // Every method but navigate went through both transports.
    for (name, ..) in protocol::METHODS {
        assert!(*name == "navigate" || covered.contains(name), "{name} is not exercised over both transports");
    }
    // Navigate: serve prints the request; the editor is asked to show the document.
    assert_eq!(post(&s, "navigate", &json!({ "file": "/x/a.py", "line": 3 })).unwrap()["shown"], "/x/a.py:3");
    let shown = c.call("threadRadar/navigate", json!({ "file": ws.source("fixed.py"), "line": 68 }));
    assert_eq!(shown["shown"], format!("{}:68", ws.source("fixed.py").display()));
    assert!(c.server_requests.iter().any(|r| r["method"] == "window/showDocument"), "the editor was asked to show the file");
}

/// Run sets against what is true of their runs: the constructor ran in 4 threads in the buggy run
/// and in 1 in the fixed one (each run's own `report`), so with no spread on either side the
/// change is exact and significant; the same two runs on both sides (in another order) differ by
/// nothing but order, so no change can exceed their spread.
#[test]
fn compare_tests_run_sets_against_their_own_runs() {
    let ws = Workspace::new();
    let mut c = lsp(&ws);
    let threads = |run: &str| -> u64 {
        let rep = c_report(&ws, run);
        rep["artifacts"].as_array().unwrap().iter().find(|a| a["qualname"] == "WorkerManager.__init__").unwrap()["threads"].as_u64().unwrap()
    };
    let (tb, tf) = (threads(BUGGY), threads(FIXED));
    assert!(tb > 1 && tf == 1, "buggy {tb}, fixed {tf}");
    let v = c.call("threadRadar/compare", json!({ "base_runs": [BUGGY, BUGGY], "new_runs": [FIXED, FIXED], "hide_stdlib": true }));
    let sig = &v["significance"];
    assert_eq!((sig["n_base"].as_u64(), sig["n_new"].as_u64()), (Some(2), Some(2)), "{sig}");
    assert!(sig["test"].as_str().unwrap().contains("Welch"), "{sig}");
    let init = v["changes"].as_array().unwrap().iter().find(|ch| ch["artifact"] == "WorkerManager.__init__" && ch["statement"].as_str().unwrap().contains("run by")).unwrap_or_else(|| panic!("{}", v["changes"]));
    assert_eq!(init["statement"], format!("WorkerManager.__init__: run by {tb} threads → {tf}"));
    assert_eq!(init["significant"], true, "{init}");
    assert!(v["changes"].as_array().unwrap().iter().all(|ch| ch["significant"].is_boolean()), "{}", v["changes"]);

    let v = c.call("threadRadar/compare", json!({ "base_runs": [BUGGY, FIXED], "new_runs": [FIXED, BUGGY], "hide_stdlib": true }));
    let changes = v["changes"].as_array().unwrap();
    assert!(!changes.is_empty(), "the shown runs (buggy → fixed) differ");
    assert!(changes.iter().all(|ch| ch["significant"] == false), "{changes:#?}");
    // The trace compare's changes are tested the same way, and a note says how.
    let t = c.call("threadRadar/traceCompare", json!({ "a_runs": [BUGGY, BUGGY], "b_runs": [FIXED, FIXED], "width_px": 300 }));
    let init = t["changes"].as_array().unwrap().iter().find(|ch| ch["statement"] == format!("WorkerManager.__init__: run by {tb} threads → {tf}")).unwrap_or_else(|| panic!("{}", t["changes"]));
    assert_eq!(init["significant"], true, "{init}");
    assert!(t["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with("significance: Welch's t-test")), "{}", t["notes"]);
    // A set on one side only: nothing is claimed, and the note says why.
    let v = c.call("threadRadar/compare", json!({ "base": BUGGY, "new_runs": [FIXED, FIXED] }));
    assert!(v["changes"].as_array().unwrap().iter().all(|ch| ch["significant"].is_null()));
    assert_eq!(v["significance"]["n_base"], 1);
    assert!(v["significance"]["note"].as_str().unwrap().contains("one run has no spread"), "{}", v["significance"]);
}

/// `threadradar report RUN --json --no-stdlib` in the workspace's runs directory.
fn c_report(ws: &Workspace, run: &str) -> Value {
    let o = Command::new(common::bin()).args(["report", run, "--json", "--no-stdlib"]).current_dir(ws.root.join(".threadradar/runs")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn filter_and_run_selection_change_what_both_transports_answer() {
    let ws = Workspace::new();
    let s = serve(&ws.root.join(".threadradar/runs"));
    let mut c = lsp(&ws);
    let threads = c.call("threadRadar/threads", json!({}));
    let first = threads["threads"][0]["id"].as_u64().unwrap();
    let before = c.call("threadRadar/overview", json!({}))["run"]["counted_samples"].as_u64().unwrap();
    for (set, answer) in [
        (post(&s, "filter", &json!({ "exclude_threads": [first] })).unwrap(), post(&s, "overview", &json!({})).unwrap()),
        (c.call("threadRadar/filter", json!({ "exclude_threads": [first] })), c.call("threadRadar/overview", json!({}))),
    ] {
        assert_eq!(set["exclude_threads"], json!([first]));
        assert_eq!(answer["run"]["excluded_threads"], json!([first]));
        assert!(answer["run"]["counted_samples"].as_u64().unwrap() < before, "excluding a thread counts fewer samples");
    }
    // Selecting the older run: the same run becomes active over both.
    let older = "20260101T000000Z-bug1-buggy.json";
    let http = post(&s, "runs", &json!({ "select": older })).unwrap();
    let lsp = c.call("threadRadar/runs", json!({ "select": older }));
    for r in [&http, &lsp] {
        assert!(r["active"].as_str().unwrap().ends_with(older), "{r}");
        assert_eq!(r["exclude_threads"], json!([]), "a new run starts unfiltered");
        assert_eq!(r["protocol"], protocol::VERSION);
    }
    let err = post(&s, "runs", &json!({ "select": "nope.json" })).unwrap_err();
    assert_eq!(err.0, 404);
}

#[test]
fn artifact_at_finds_the_innermost_profiled_function_and_class() {
    let ws = Workspace::new();
    let mut c = lsp(&ws);
    let fixed = ws.source("fixed.py");
    let text = std::fs::read_to_string(&fixed).unwrap();
    c.open(&fixed, &text);
    let at = |c: &mut LspClient, line: usize| {
        let r = c.call("threadRadar/artifactAt", json!({ "uri": file_uri(&fixed), "line": line, "character": 4 }));
        (r["function"]["qualname"].as_str().map(String::from), r["class"]["qualname"].as_str().map(String::from))
    };
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle} not in fixed.py"));
    let init = line_of("def __init__");
    assert_eq!(at(&mut c, init), (Some("WorkerManager.__init__".into()), Some("WorkerManager".into())));
    assert_eq!(at(&mut c, init + 2), (Some("WorkerManager.__init__".into()), Some("WorkerManager".into())));
    // Edit above it: the server finds it on its new line, from the buffer, not the disk.
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": file_uri(&fixed), "version": 2 }, "contentChanges": [{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "text": "# one\n# two\n" }] }),
    );
    assert_eq!(at(&mut c, init + 2), (Some("WorkerManager.__init__".into()), Some("WorkerManager".into())));
    assert_eq!(at(&mut c, 0).0, None, "a comment at the top is in no function");
    // Past the end of the document: nothing, no error.
    let r = c.call("threadRadar/artifactAt", json!({ "uri": file_uri(&fixed), "line": 100000, "character": 0 }));
    assert_eq!(r, json!({ "function": null, "class": null }));
}

#[test]
fn a_slow_document_does_not_hold_up_other_requests() {
    // A 20 MB source file that the run names (recorded sha256 unknown, so the server must parse
    // it to map the run's declarations) and a small one.
    let ws = Workspace::new();
    let big = ws.root.join("big.py");
    let mut text = String::with_capacity(21 << 20);
    let mut i = 0;
    while text.len() < 20 << 20 {
        text.push_str(&format!("def f{i}(a, b):\n    x = a + b * {i}\n    return [x for _ in range(3)]\n\n"));
        i += 1;
    }
    std::fs::write(&big, &text).unwrap();
    let runs = ws.root.join(".threadradar/runs");
    let newest = runs.join("20260101T000001Z-bug1-fixed.json");
    let mut run: Value = serde_json::from_str(&std::fs::read_to_string(&newest).unwrap()).unwrap();
    // Point one recorded function at big.py, with no sha256: mapping it means parsing 20 MB.
    let strings = run["strings"].as_array_mut().unwrap();
    strings.push(json!(big.to_str().unwrap()));
    let path_id = strings.len() - 1;
    run["files"].as_array_mut().unwrap().push(json!({ "path": path_id, "sha256": null, "kind": "user" }));
    let file_id = run["files"].as_array().unwrap().len() - 1;
    run["functions"][0]["file"] = json!(file_id);
    run["functions"][0]["line"] = json!(1);
    std::fs::write(runs.join("20260101T000002Z-big.json"), run.to_string()).unwrap();

    let mut c = lsp(&ws);
    let small = ws.source("fixed.py");
    c.open(&small, &std::fs::read_to_string(&small).unwrap());
    c.call("threadRadar/runs", json!({})); // the newest run is loaded
    let started = Instant::now();
    let (slow, quick) = (9001, 9002);
    c.send(&json!({ "jsonrpc": "2.0", "id": slow, "method": "threadRadar/documentArtifacts", "params": { "file": big } }));
    c.send(&json!({ "jsonrpc": "2.0", "id": quick, "method": "textDocument/inlayHint", "params": {
        "textDocument": { "uri": file_uri(&small) }, "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 100000, "character": 0 } } } }));
    // The order the two answers arrive in, sent slow first: the small file's hints must not wait
    // for the 20 MB document.
    let is_answer = |m: &Value| m.get("method").is_none() && (m["id"] == slow || m["id"] == quick);
    let first = c.wait_for(Duration::from_secs(120), is_answer).expect("an answer");
    let hints_took = started.elapsed();
    assert_eq!(first["id"], quick, "the 20 MB document was answered before the small file's hints ({hints_took:?})");
    assert!(!first["result"].as_array().is_none_or(|h| h.is_empty()), "hints for the small file: {first}");
    let answer = c.wait_for(Duration::from_secs(120), is_answer).expect("the big document is answered too");
    let slow_took = started.elapsed();
    assert!(answer.get("result").is_some(), "{answer}");
    eprintln!("inlay hints: {hints_took:?}; 20 MB documentArtifacts: {slow_took:?}");
}

#[test]
fn generated_typescript_and_docs_are_current() {
    let ts = protocol::typescript();
    expect_file!["../web/protocol.d.ts"].assert_eq(&ts);
    // docs/panels.md lists every method between its markers.
    let doc_path = common::repo().join("docs/panels.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let (start, end) = ("<!-- methods:start -->\n", "<!-- methods:end -->");
    let (a, b) = (doc.find(start).expect("methods:start marker in docs/panels.md") + start.len(), doc.find(end).expect("methods:end marker"));
    let table = protocol::methods_markdown();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&doc_path, format!("{}{table}{}", &doc[..a], &doc[b..])).unwrap();
    } else {
        assert_eq!(&doc[a..b], table, "docs/panels.md's method table is stale: UPDATE_EXPECT=1 cargo test --test protocol");
    }
}

/// The figures the clients used to compute are the server's, typed (issue 31): the trace
/// compare's time-shift class of every match group (and every edge's is its groups'), the waits'
/// edge counts per evidence (all and per object) and wait ends, and each section's histogram.
#[test]
fn clients_get_shift_classes_edge_counts_and_histograms_from_the_server() {
    let ws = Workspace::new();
    let mut c = lsp(&ws);
    let t = c.call("threadRadar/traceCompare", json!({ "width_px": 300 }));
    let same = t["same_shift_s"].as_f64().unwrap();
    let groups = t["groups"].as_array().unwrap();
    assert!(!groups.is_empty());
    for g in groups {
        let s = g["shift_s"].as_f64().unwrap();
        let want = if s < -same { "earlier" } else if s > same { "later" } else { "same" };
        assert_eq!(g["shift"], want, "{g}");
        let resized = (g["a_duration_s"].as_f64().unwrap() - g["b_duration_s"].as_f64().unwrap()).abs() > same;
        assert_eq!(g["resized"], resized, "{g}");
    }
    for e in t["edges"].as_array().unwrap() {
        assert!(e["groups"].as_array().unwrap().iter().all(|i| groups[i.as_u64().unwrap() as usize]["shift"] == e["shift"]), "{e}");
    }

    let w = c.call("threadRadar/waits", json!({}));
    let (view, counts) = (&w["view"], &w["counts"]);
    let edges = view["edges"].as_array().unwrap();
    let count = |object: Option<usize>| -> Value {
        let mine: Vec<&Value> = edges.iter().filter(|e| object.is_none_or(|o| e["object_index"] == o)).collect();
        let kernel = mine.iter().filter(|e| e["evidence"] == "kernel").count();
        let mut by: Vec<Value> = Vec::new();
        for rule in ["gil-holder", "same-object", "running-thread"] {
            let n = mine.iter().filter(|e| e["evidence"] == rule).count();
            if n > 0 {
                by.push(json!({ "evidence": rule, "count": n }));
            }
        }
        let recorded = mine.iter().filter(|e| e["evidence"] == "task-state").count();
        json!({ "all": mine.len(), "kernel": kernel, "recorded": recorded, "inferred": mine.len() - kernel - recorded, "inferred_by": by })
    };
    assert!(!edges.is_empty());
    assert_eq!(counts["edges"], count(None));
    let objects = view["objects"].as_array().unwrap().len();
    assert_eq!(counts["objects"], Value::Array((0..objects).map(|o| count(Some(o))).collect()));
    let intervals = view["intervals"].as_array().unwrap();
    assert_eq!(counts["ends"], 2 * intervals.len());
    let kernel_ends: usize = intervals.iter().map(|i| (i["kernel_start"] == true) as usize + (i["kernel_end"] == true) as usize).sum();
    assert_eq!(counts["kernel_ends"], kernel_ends);

    let s = c.call("threadRadar/sections", json!({}));
    let sections = s["sections"].as_array().unwrap();
    assert!(sections.iter().any(|x| !x["executions"].as_array().unwrap().is_empty()));
    for x in sections {
        let listed: Vec<f64> = x["executions"].as_array().unwrap().iter().map(|e| e["duration_s"].as_f64().unwrap()).filter(|d| *d > 0.0).collect();
        let h = &x["histogram"];
        let bins = h["bins"].as_array().unwrap();
        assert_eq!(h["count"], listed.len());
        assert_eq!(bins.iter().map(|b| b["count"].as_u64().unwrap()).sum::<u64>(), listed.len() as u64, "{h}");
        for d in listed {
            assert!(d >= h["from_s"].as_f64().unwrap() * (1.0 - 1e-12) && d <= h["to_s"].as_f64().unwrap() * (1.0 + 1e-12), "{d} outside {h}");
        }
    }
}

/// A change of crt of exactly 0.0005 (1 of 1 000 samples → 3 of 2 000): within a twentieth of a
/// percentage point, so the server's trend is `same`, where rounding Δ × 1000 (0.5 → 1) — what
/// VS Code's Comparison view did — says `increase`. The answer is the fixture
/// `compare-half-tenth-pp.json`, which the extension's unit tests render.
#[test]
fn a_change_of_a_twentieth_of_a_point_is_the_same_on_every_transport() {
    use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
    use threadradar_profiler::run::{FileKind, Meta, Sample, ThreadSample, ThreadState};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let runs = root.join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let write = |name: &str, ticks: u64, in_f: u64| {
        let meta = Meta { interval_ms: 1.0, achieved_rate_hz: 1000.0, duration_s: ticks as f64 / 1000.0, command: vec!["python3".into(), "app.py".into()], cwd: "/p".into(), ..Meta::default() };
        let mut b = RunBuilder::new(meta);
        let file = b.file("/p/app.py", FileKind::User, None);
        let main = b.function(file, &FunctionSpec { qualname: "main", line: 1, end_line: 9, ..Default::default() });
        let f = b.function(file, &FunctionSpec { qualname: "f", line: 10, end_line: 19, ..Default::default() });
        let th = b.thread(new_thread(1, 1, 1, "MainThread", "_MainThread"));
        let (fm, ff) = (b.frame(main, 2), b.frame(f, 11));
        let (only_main, with_f) = (b.stack(&[fm]), b.stack(&[fm, ff]));
        for k in 0..ticks {
            let stack = if k < in_f { with_f } else { only_main };
            b.push_sample(Sample { t: k * 1_000_000, threads: vec![ThreadSample { thread: th, stack, state: ThreadState::Computing, ..Default::default() }] });
        }
        let mut run = b.finish();
        run.meta.sample_count = ticks;
        threadradar_profiler::runfile::write(&run, &runs.join(name)).unwrap();
    };
    write("20260101T000000Z-app.json", 1000, 1);
    write("20260101T000001Z-app.json", 2000, 3);
    let params = json!({ "base": "20260101T000000Z-app.json", "new": "20260101T000001Z-app.json" });
    let s = serve(&runs);
    let over_http = post(&s, "compare", &params).unwrap();
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({}));
    let over_lsp = c.call("threadRadar/compare", params);
    assert_eq!(over_http, over_lsp);
    let f = over_lsp["artifacts"].as_array().unwrap().iter().find(|a| a["qualname"] == "f").unwrap_or_else(|| panic!("{over_lsp}"));
    let delta = f["crt_delta"].as_f64().unwrap();
    assert_eq!((delta * 1000.0).round(), 1.0, "Δ × 1000 rounds up: {delta}");
    assert_eq!(f["trend"], "same", "{f}");
    let text = serde_json::to_string_pretty(&over_lsp).unwrap().replace(root.to_str().unwrap(), "@ROOT@") + "\n";
    expect_file!["fixtures/protocol/compare-half-tenth-pp.json"].assert_eq(&text);
}

/// Every protocol method with a loaded run, fuzzed: each request of the snapshot test with its
/// parameters mutated (numbers at their edges, ids past the tables, keys dropped or added from
/// the protocol's vocabulary, strings replaced by paths and artifact keys that do not exist). Every
/// request gets an answer — a result, or an error with a message that is not a panic's — and the
/// server stays up and still serves the run. Bounded like the other fuzz targets:
/// `THREADRADAR_FUZZ_SECONDS` (default 10), `THREADRADAR_FUZZ_SEED`.
#[test]
fn every_method_answers_mutated_parameters_with_a_loaded_run() {
    let ws = Workspace::new();
    let mut c = lsp(&ws);
    let seeds = requests(&ws);
    let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let (seconds, mut rng) = (env("THREADRADAR_FUZZ_SECONDS", 10), Rng(env("THREADRADAR_FUZZ_SEED", 17) | 1));
    let started = Instant::now();
    let (mut sent, mut errors) = (0u32, 0u32);
    while started.elapsed() < Duration::from_secs(seconds) {
        let (method, _, params) = &seeds[rng.below(seeds.len())];
        let mut p = params.clone();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut p, &mut rng);
        }
        sent += 1;
        match c.request(&protocol::lsp_name(method), p.clone()) {
            Ok(_) => {}
            Err(e) => {
                errors += 1;
                assert!(e["message"].as_str().is_some_and(|m| !m.is_empty() && !m.contains("panicked")), "{method} {p}: {e}");
            }
        }
        assert!(c.alive(), "the server died on {method} {p}");
    }
    eprintln!("protocol fuzz: {sent} requests in {:.1} s, {errors} answered with an error", started.elapsed().as_secs_f64());
    assert!(sent > 20 && errors < sent, "{sent} requests, {errors} errors");
    // Still serving the run: (the fuzzed `filter` and `views` calls may have changed what it shows,
    // so not the snapshots).
    let runs = c.call("threadRadar/runs", json!({}));
    assert!(runs.to_string().contains(FIXED), "{runs}");
    c.call("threadRadar/overview", json!({}));
    assert!(c.shutdown().success());
}

/// xorshift64*, deterministic for a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The keys the protocol's parameters use, to add where they were not.
const KEYS: &[&str] = &[
    "artifact", "run", "runs", "base", "new", "base_runs", "new_runs", "a_runs", "b_runs", "file", "line", "character", "level", "top", "include",
    "exclude", "exclude_threads", "hide_stdlib", "theme", "size", "width_px", "from_s", "to_s", "theta", "threads", "fold", "object", "section",
    "outlier_factor", "outlier_quantile", "histogram_columns", "glyph", "runset", "delete", "thread", "states", "window", "focus", "tick",
];

fn edge(rng: &mut Rng) -> Value {
    match rng.below(14) {
        0 => json!(0),
        1 => json!(-1),
        2 => json!(u32::MAX),
        3 => json!(u64::MAX),
        4 => json!(i64::MIN),
        5 => json!(1e300),
        6 => json!(0.5),
        7 => json!(null),
        8 => json!(true),
        9 => json!([]),
        10 => json!({}),
        11 => json!(["program", 99999, "function:/nowhere.py:1:f"]),
        12 => json!(["../../../../etc/passwd", "class:x:0:Y", "", "program"][rng.below(4)]),
        _ => json!((rng.next() % 100_000) as i64 - 10),
    }
}

fn mutate(v: &mut Value, rng: &mut Rng) {
    match v {
        Value::Object(o) => match rng.below(5) {
            0 if !o.is_empty() => {
                let k = o.keys().nth(rng.below(o.len())).unwrap().clone();
                o.remove(&k);
            }
            1 | 2 => {
                o.insert(KEYS[rng.below(KEYS.len())].to_string(), edge(rng));
            }
            _ if !o.is_empty() => {
                let k = o.keys().nth(rng.below(o.len())).unwrap().clone();
                mutate(o.get_mut(&k).unwrap(), rng);
            }
            _ => {
                o.insert(KEYS[rng.below(KEYS.len())].to_string(), edge(rng));
            }
        },
        Value::Array(a) if !a.is_empty() && rng.below(2) == 0 => {
            let i = rng.below(a.len());
            mutate(&mut a[i], rng);
        }
        _ => *v = edge(rng),
    }
}
