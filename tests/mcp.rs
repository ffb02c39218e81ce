//! `threadradar mcp` with a real MCP client session over stdio (the official Rust SDK's client,
//! `rmcp`, spawning the binary): initialize, list the tools, call each, and check the figures
//! against `threadradar report --json` and against the panels' own answers (`threadradar serve`'s
//! `POST /api/<method>`) on the same real recordings, and against what the recorded programs
//! logged about themselves.

mod common;

use common::*;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::ServiceExt;
use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

fn report(dir: &Path, run: &Path) -> serde_json::Value {
    let o = threadradar(dir, &["report", run.to_str().unwrap(), "--json", "--no-stdlib"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn an_mcp_client_lists_and_calls_every_tool() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let (before, after) = (runs.join("20261123T100000Z-threads.json"), runs.join("20261123T100100Z-threads.json"));
    {
        let _g = serial();
        for out in [&before, &after] {
            let o = record(out, &[], &[&script("threads.py"), "1"]);
            assert!(out.exists(), "{}", stderr(&o));
        }
    }
    let client = ()
        .serve(TokioChildProcess::new(tokio::process::Command::new(bin()).configure(|c| {
            c.arg("mcp").current_dir(dir.path());
        }))
        .unwrap())
        .await
        .expect("initialize");
    let info = client.peer_info().expect("server info");
    assert_eq!(info.server_info.name, "threadradar");
    let tools = client.list_tools(Default::default()).await.unwrap();
    let mut names: Vec<String> = tools.tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(names, ["artifact_threads", "compare_runs", "critical_sections", "hottest_artifacts", "profile_test", "record", "run_history", "waits"]);
    let call = |name: &'static str, args: serde_json::Value| {
        let client = &client;
        async move {
            client
                .call_tool(CallToolRequestParams { meta: None, name: name.into(), arguments: args.as_object().cloned(), task: None })
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        }
    };

    // Hottest: the newest run, its figures as `report` computes them.
    let r = call("hottest_artifacts", serde_json::json!({ "top": 5 })).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let t = text(&r);
    let rep = report(dir.path(), &after);
    let top = &rep["artifacts"][0];
    let expected = format!("- {} ({}:{}): crt {:.1}%", top["qualname"].as_str().unwrap(), top["file"].as_str().unwrap(), top["line"], 100.0 * top["crt"].as_f64().unwrap());
    assert!(t.contains(&expected), "{expected:?} in:\n{t}");
    assert!(t.contains(after.to_str().unwrap()) && t.contains("sampled every 3 ms"), "says which run and how: {t}");

    // Threads of Cruncher.run: both crunchers with their sample counts.
    let r = call("artifact_threads", serde_json::json!({ "artifact": "Cruncher.run" })).await;
    let t = text(&r);
    let cr = rep["artifacts"].as_array().unwrap().iter().find(|a| a["qualname"] == "Cruncher.run").expect("Cruncher.run in the report");
    for share in cr["per_thread"].as_array().unwrap() {
        let th = rep["threads"].as_array().unwrap().iter().find(|th| th["id"] == share["thread"]).unwrap();
        let line = format!("- {} (type {}, tid {}): crt(a,th) {:.1}%, {} samples", th["name"].as_str().unwrap(), th["type"].as_str().or(th["thread_type"].as_str()).unwrap(), th["tid"], 100.0 * share["crt"].as_f64().unwrap(), share["samples"]);
        assert!(t.contains(&line), "{line:?} in:\n{t}");
    }
    assert!(t.contains("heavy") && t.contains("light"), "{t}");

    // Compare: the two runs, in words.
    let r = call("compare_runs", serde_json::json!({})).await;
    let t = text(&r);
    assert!(t.contains(before.to_str().unwrap()) && t.contains(after.to_str().unwrap()), "{t}");
    assert!(t.contains("Cruncher.run: crt "), "{t}");
    // … with the compare panel's figures: its statements in words and every artifact's crt.
    let panels = Served::start(&runs);
    let c = panels.post("compare", serde_json::json!({ "level": "function", "top": 10, "hide_stdlib": true, "hide_third_party": true }));
    assert_eq!(c["new"]["path"].as_str(), after.to_str(), "{c}");
    for ch in c["changes"].as_array().unwrap() {
        assert!(t.contains(&format!("- {}", ch["statement"].as_str().unwrap())), "{ch} in:\n{t}");
    }
    for d in c["artifacts"].as_array().unwrap().iter().filter(|d| d["status"] == "changed") {
        let line = format!("- {}: crt {:.1}% → {:.1}% ({})", d["qualname"].as_str().unwrap(), 100.0 * d["base"]["crt"].as_f64().unwrap(), 100.0 * d["new"]["crt"].as_f64().unwrap(), d["crt_delta_text"].as_str().unwrap());
        assert!(t.contains(&line), "{line:?} in:\n{t}");
    }
    // Run sets: each side two runs; every change carries the panel's verdict against the spread.
    let (a, b) = (before.to_str().unwrap(), after.to_str().unwrap());
    let r = call("compare_runs", serde_json::json!({ "before_runs": [a, b], "after_runs": [b, a] })).await;
    let t = text(&r);
    let c = panels.post("compare", serde_json::json!({ "base_runs": [a, b], "new_runs": [b, a], "level": "function", "top": 10, "hide_stdlib": true, "hide_third_party": true }));
    let sig = &c["significance"];
    assert!(t.contains(&format!("Run sets: {} runs before, {} after", sig["n_base"], sig["n_new"])), "{sig} in:\n{t}");
    for ch in c["changes"].as_array().unwrap() {
        let mark = match ch["significant"].as_bool() {
            Some(true) => " (significant)",
            Some(false) => " (within noise)",
            None => "",
        };
        assert!(t.contains(&format!("- {}{mark}", ch["statement"].as_str().unwrap())), "{ch} in:\n{t}");
    }
    // The same two runs on both sides: nothing exceeds their own spread.
    assert!(!t.lines().any(|l| l.starts_with("- ") && l.ends_with(" (significant)")), "{t}");
    let r = call("compare_runs", serde_json::json!({ "before": a, "before_runs": [a, b] })).await;
    assert!(r.is_error == Some(true) && text(&r).contains("not both"), "{}", text(&r));

    // The run history: the run list's entries, newest first.
    let r = call("run_history", serde_json::json!({})).await;
    let t = text(&r);
    let listed = panels.post("runs", serde_json::json!({}));
    let lines: Vec<&str> = t.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(lines.len(), 2, "{t}");
    for (line, run) in lines.iter().zip(listed["runs"].as_array().unwrap()) {
        let h = &run["history"];
        let expected = format!("- {}: {}, {:.2} s, {} threads", run["path"].as_str().unwrap(), h["command"].as_str().unwrap(), h["duration_s"].as_f64().unwrap(), h["threads"]);
        assert!(line.starts_with(&expected), "{expected:?} vs {line:?}");
    }
    assert!(lines[0].contains(after.to_str().unwrap()), "newest first: {t}");

    // Bad input: a tool error with one sentence, and the session goes on.
    let r = call("artifact_threads", serde_json::json!({ "artifact": "NoSuch.thing" })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("no function or class named \"NoSuch.thing\""), "{}", text(&r));
    let r = call("hottest_artifacts", serde_json::json!({ "run": "missing.json" })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("no run file"), "{}", text(&r));
    let r = call("hottest_artifacts", serde_json::json!({ "level": "galaxy" })).await;
    assert_eq!(r.is_error, Some(true));
    client.cancel().await.unwrap();
}

/// `threadradar serve DIR`: the panels' own answers to compare the tools' figures with.
struct Served {
    child: Child,
    url: String,
    /// Kept open: serve exits when writing to a closed stdout.
    _stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Served {
    fn start(dir: &Path) -> Served {
        let mut child = Command::new(bin()).args(["serve", dir.to_str().unwrap(), "--port", "0"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let mut line = String::new();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut line).unwrap();
        let url = line.split_whitespace().find(|w| w.starts_with("http://127.0.0.1:")).unwrap_or_else(|| panic!("no URL in {line:?}")).to_string();
        Served { child, url, _stdout: stdout }
    }

    fn post(&self, method: &str, body: serde_json::Value) -> serde_json::Value {
        ureq::post(&format!("{}api/{method}", self.url)).set("Content-Type", "application/json").send_string(&body.to_string()).unwrap_or_else(|e| panic!("{method}: {e}")).into_json().unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Milliseconds as the tools print them.
fn ms(s: f64) -> String {
    let m = s * 1e3;
    if m >= 100.0 {
        format!("{m:.0} ms")
    } else if m >= 10.0 {
        format!("{m:.1} ms")
    } else {
        format!("{m:.2} ms")
    }
}

/// `waits` and `critical_sections` on real recordings of programs that log their own hand-offs
/// and critical sections: the panels' figures, and the logged truth behind them.
#[tokio::test(flavor = "current_thread")]
async fn waits_and_sections_answer_with_the_panels_figures() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let (handoffs, sections) = (runs.join("20261123T110000Z-handoffs.json"), runs.join("20261123T110100Z-sections.json"));
    let log = dir.path().join("sections.jsonl");
    let handoff_log: serde_json::Value = {
        let _g = serial();
        let o = record(&handoffs, &["--interval-ms", "2", "--no-sched"], &[&script("handoffs.py"), "8"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o2 = record(&sections, &["--interval-ms", "2"], &[&script("sections_truth.py"), log.to_str().unwrap(), "4", "100"]);
        assert!(o2.status.success(), "{}", stderr(&o2));
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).lines().last().unwrap()).expect("the program's hand-off log")
    };
    let client = ()
        .serve(TokioChildProcess::new(tokio::process::Command::new(bin()).configure(|c| {
            c.arg("mcp").current_dir(dir.path());
        }))
        .unwrap())
        .await
        .expect("initialize");
    let call = |name: &'static str, args: serde_json::Value| {
        let client = &client;
        async move {
            client
                .call_tool(CallToolRequestParams { meta: None, name: name.into(), arguments: args.as_object().cloned(), task: None })
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        }
    };
    let panels = Served::start(&runs);

    // Waits of the hand-off run: every object of the waits panel with its figures.
    let r = call("waits", serde_json::json!({ "run": handoffs.to_str().unwrap() })).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let t = text(&r);
    assert!(t.contains(handoffs.to_str().unwrap()) && t.contains("inferred from the samples"), "which run, and how: {t}");
    panels.post("runs", serde_json::json!({ "select": handoffs.to_str().unwrap() }));
    let w = panels.post("waits", serde_json::json!({}));
    let objects = w["view"]["objects"].as_array().unwrap();
    assert!(!objects.is_empty(), "{w}");
    for o in objects {
        let figures = format!(": {} waits, {:.3} s waited, p50 {}, p95 {}, {} futile wake-ups", o["waits"], o["wait_s"].as_f64().unwrap(), ms(o["p50_s"].as_f64().unwrap()), ms(o["p95_s"].as_f64().unwrap()), o["futile_wakeups"]);
        let head = format!("- {} (type {}", o["object"].as_str().unwrap(), o["type"].as_str().unwrap());
        assert!(t.lines().any(|l| l.starts_with(&head) && l.contains(&figures)), "{head} …{figures} in:\n{t}");
    }
    assert!(t.contains(&format!("{} wake edges", w["view"]["edges"].as_array().unwrap().len())), "{t}");
    // Against the program's log: the queue's waiter waited on it at least 6 of its 8 hand-offs,
    // and the condition's logged releaser is among its wakers (as tests/waits.rs requires of the view).
    let logged = handoff_log.as_array().unwrap();
    assert_eq!(logged.len(), 40);
    // (A sample whose object could not be read may make a second queue object: summed, as there.)
    let queue_waits: u64 = t
        .lines()
        .filter(|l| l.starts_with("- ") && l.contains("(type queue.Queue") && l.contains("waiter-queue "))
        .map(|l| l.split("waiter-queue ").nth(1).unwrap().split(|c: char| !c.is_ascii_digit()).next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert!(queue_waits >= 6, "waiter-queue waited {queue_waits} times on the queue:\n{t}");
    assert!(t.lines().any(|l| l.contains("(type threading.Condition") && l.contains("wakers (edges): ") && l.split("wakers (edges): ").nth(1).unwrap().contains("releaser-condition")), "{t}");
    // Filtered by object, as the panel's search box does.
    let r = call("waits", serde_json::json!({ "run": handoffs.to_str().unwrap(), "object": "no such object" })).await;
    assert!(text(&r).contains("No thread waited on an object matching \"no such object\""), "{}", text(&r));

    // Critical sections of the sections run: the panel's figures, and its outliers are executions
    // the program logged as slow.
    let r = call("critical_sections", serde_json::json!({})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let t = text(&r);
    assert!(t.contains(sections.to_str().unwrap()), "the newest run: {t}");
    panels.post("runs", serde_json::json!({ "select": sections.to_str().unwrap() }));
    let s = panels.post("sections", serde_json::json!({}));
    assert!(t.contains(s["how"].as_str().unwrap()), "how the figures were obtained: {t}");
    let update = s["sections"].as_array().unwrap().iter().find(|x| x["function"] == "Store.update").unwrap_or_else(|| panic!("{s}"));
    let figures = format!(
        "  {} executions ({} listed, at least {} shorter than about one interval), held {} in total, median {}, p95 {}",
        update["execution_count"],
        update["executions"].as_array().unwrap().len(),
        update["short"]["count_at_least"],
        ms(update["total_hold_s"].as_f64().unwrap()),
        ms(update["median_s"].as_f64().unwrap()),
        ms(update["p95_s"].as_f64().unwrap())
    );
    assert!(t.contains(&figures), "{figures:?} in:\n{t}");
    let n_outliers = update["outliers"].as_array().unwrap().len();
    assert!(n_outliers > 0, "{update}");
    assert!(t.contains(&format!("  {n_outliers} outliers (longer than")), "{t}");
    let started_at = read(&sections).meta.started_at.expect("started_at");
    let logged: Vec<(String, f64, f64, bool)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|e| (e["thread"].as_str().unwrap().to_string(), e["start"].as_f64().unwrap() - started_at, e["duration"].as_f64().unwrap(), e["slow"] == true))
        .collect();
    assert_eq!(logged.iter().filter(|l| l.3).count(), 8, "every 50th of 400 executions is slow");
    let listed: Vec<&str> = t.lines().filter(|l| l.starts_with("  - execution #")).collect();
    assert_eq!(listed.len(), n_outliers.min(10), "{t}");
    let mut slow_found = 0;
    for l in listed {
        // `  - execution #i by THREAD at S s: D ms ± E ms…`
        let thread = l.split(" by ").nth(1).unwrap().split(" at ").next().unwrap();
        let start: f64 = l.split(" at ").nth(1).unwrap().split(" s:").next().unwrap().parse().unwrap();
        let dur: f64 = l.split(" s: ").nth(1).unwrap().split(" ms").next().unwrap().parse::<f64>().unwrap() / 1e3;
        // The logged executions it covers (the tool's start is printed to the millisecond). An
        // outlier that is one logged execution is a slow one; where the sampler saw no sample
        // between executions of a thread they are one by the stated rule (docs/sections.md).
        let covered: Vec<_> = logged.iter().filter(|(th, s0, d, _)| th == thread && *s0 < start + dur + 1e-3 && s0 + d > start - 1e-3).collect();
        assert!(!covered.is_empty(), "{l}: no logged execution of {thread} there");
        if covered.len() == 1 {
            assert!(covered[0].2 >= 2e-3, "{l} is the fast execution {:?}", covered[0]);
        }
        slow_found += covered.iter().any(|c| c.3) as usize;
    }
    assert!(slow_found >= 1, "no listed outlier is a logged slow execution:\n{t}");
    let r = call("critical_sections", serde_json::json!({ "outlier_factor": -1 })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("outlier_factor must be a positive number"), "{}", text(&r));
    client.cancel().await.unwrap();
}
