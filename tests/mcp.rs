//! `threadradar mcp` with a real MCP client session over stdio (the official Rust SDK's client,
//! `rmcp`, spawning the binary): initialize, list the tools, call each, and check the figures
//! against `threadradar report --json` on the same real recordings.

mod common;

use common::*;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::ServiceExt;
use std::path::Path;

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
    assert_eq!(names, ["artifact_threads", "compare_runs", "hottest_artifacts"]);
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
