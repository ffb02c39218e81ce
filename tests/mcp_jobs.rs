//! `threadradar mcp`'s `record` and `profile_test` tools with a real MCP client session over
//! stdio (the official Rust SDK's client spawning the binary): real pytest runs of a real test
//! file and a real program, the outcome against what pytest reports, progress notifications with
//! the request's token, cancellation that keeps the run, and the safety rules (only configured
//! commands, only tests pytest's rules find).

mod common;

use common::*;
use rmcp::model::{CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ProgressNotificationParam};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use threadradar_profiler::run::EndReason;
use threadradar_profiler::runfile;

/// A client that keeps every progress notification.
#[derive(Clone, Default)]
struct Client {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Client {
    fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.progress.lock().unwrap().push(params);
        std::future::ready(())
    }
}

fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

async fn start(dir: &Path, extra: &[String]) -> (RunningService<RoleClient, Client>, Client) {
    let handler = Client::default();
    let extra = extra.to_vec();
    let client = handler
        .clone()
        .serve(TokioChildProcess::new(tokio::process::Command::new(bin()).configure(|c| {
            c.arg("mcp").args(&extra).current_dir(dir);
        }))
        .unwrap())
        .await
        .expect("initialize");
    (client, handler)
}

async fn call(client: &RunningService<RoleClient, Client>, name: &'static str, args: serde_json::Value) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams { meta: None, name: name.into(), arguments: args.as_object().cloned(), task: None })
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The run path an answer names (`into <path>:`).
fn run_path(answer: &str) -> std::path::PathBuf {
    let at = answer.find(" into ").expect("the answer names the run") + 6;
    let rest = &answer[at..];
    rest[..rest.find(".json:").expect("a .json run") + 5].into()
}

const TESTS: &str = r#"import threading, time

def spin(seconds):
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        n += 1
    return n

def test_threads_work():
    threads = [threading.Thread(target=spin, args=(0.4,), name=f"spinner-{i}") for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

def test_fails():
    assert 1 + 1 == 3, "arithmetic is broken"

def test_hangs():
    time.sleep(120)
"#;

const FOREVER: &str = r#"import threading, time
def spin():
    while True:
        sum(range(1000))
threading.Thread(target=spin, name="spinner", daemon=True).start()
while True:
    time.sleep(0.05)
"#;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(dir.path().join("tests/test_work.py"), TESTS).unwrap();
    std::fs::write(dir.path().join("forever.py"), FOREVER).unwrap();
    dir
}

#[tokio::test(flavor = "current_thread")]
async fn profile_test_runs_a_found_test_reports_progress_and_the_outcome() {
    let _g = serial();
    let dir = project();
    let (client, handler) = start(dir.path(), &[]).await;
    let tools = client.list_tools(Default::default()).await.unwrap();
    assert!(tools.tools.iter().any(|t| t.name == "profile_test") && tools.tools.iter().any(|t| t.name == "record"));

    // A passing test: its run, pytest's outcome and the threads it started.
    let r = call(&client, "profile_test", serde_json::json!({ "file": "tests/test_work.py", "test": "test_threads_work" })).await;
    let t = text(&r);
    assert_ne!(r.is_error, Some(true), "{t}");
    assert!(t.contains("Outcome of tests/test_work.py::test_threads_work: 1 passed."), "{t}");
    let path = run_path(&t);
    assert!(path.starts_with(dir.path().join(".threadradar/runs").canonicalize().unwrap()) || path.starts_with(dir.path().join(".threadradar/runs")), "{}", path.display());
    let run = runfile::read(&path).unwrap();
    let test = run.meta.test.as_ref().expect("a test run");
    assert_eq!(test.id, "tests/test_work.py::test_threads_work");
    assert_eq!(test.outcome.as_ref().unwrap().passed, 1);
    assert!(run.threads.iter().any(|th| th.name == "spinner-0") && run.threads.iter().any(|th| th.name == "spinner-1"), "the test's own threads were sampled");
    // Progress notifications came while it ran, naming the test.
    let progress = handler.progress.lock().unwrap().clone();
    assert!(!progress.is_empty(), "progress notifications");
    assert!(progress.iter().any(|p| p.message.as_deref().is_some_and(|m| m.contains("profiling tests/test_work.py::test_threads_work") && m.contains("samples"))), "{progress:?}");
    assert!(progress.windows(2).all(|w| w[0].progress < w[1].progress), "progress increases");

    // A failing test: the outcome and pytest's first failure.
    let r = call(&client, "profile_test", serde_json::json!({ "file": "tests/test_work.py", "test": "test_fails" })).await;
    let t = text(&r);
    assert!(t.contains("1 failed") && t.contains("arithmetic is broken"), "{t}");

    // Only tests pytest's rules find: a test that is not in the file, a file that is no test file.
    let r = call(&client, "profile_test", serde_json::json!({ "file": "tests/test_work.py", "test": "test_gone" })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).starts_with("there is no test test_gone in "), "{}", text(&r));
    let r = call(&client, "profile_test", serde_json::json!({ "file": "forever.py" })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("forever.py is not a test file"), "{}", text(&r));
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("test_elsewhere.py"), "def test_x():\n    pass\n").unwrap();
    let r = call(&client, "profile_test", serde_json::json!({ "file": outside.path().join("test_elsewhere.py") })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("is outside the project"), "{}", text(&r));
    let r = call(&client, "profile_test", serde_json::json!({ "file": "tests/nope.py" })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("nope.py does not exist"), "{}", text(&r));

    // Cancelled: the test is stopped, and the run sampled so far is kept.
    let started = Instant::now();
    let seen = handler.progress.lock().unwrap().len();
    let handle = client
        .peer()
        .send_request_with_option(
            ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams {
                meta: None,
                name: "profile_test".into(),
                arguments: serde_json::json!({ "file": "tests/test_work.py", "test": "test_hangs" }).as_object().cloned(),
                task: None,
            })),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let token = handle.progress_token.clone();
    // Wait until the recorder reports samples, then cancel.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let sampling = handler.progress.lock().unwrap()[seen..].iter().any(|p| p.progress_token == token && p.message.as_deref().is_some_and(|m| m.contains("samples")));
        if sampling {
            break;
        }
        assert!(Instant::now() < deadline, "no progress from the hanging test");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    handle.cancel(Some("the agent changed its mind".into())).await.unwrap();
    // The server ends the test and the run is written with its end: it is the newest run.
    let runs = dir.path().join(".threadradar/runs");
    // Generous: under a loaded CI machine pytest's interrupt handling and the run's write took
    // over 30 s once; the test is that it ends, not how fast.
    let deadline = Instant::now() + Duration::from_secs(90);
    let hung = loop {
        // The library's order, not the names': a run started in the same second as the one
        // before is named `…-pytest-2.json`, which sorts before `…-pytest.json` as text.
        let newest = runfile::list_runs(&runs).unwrap().into_iter().next();
        let read = newest.as_ref().map(|p| runfile::read(p));
        if let Some(Ok(run)) = &read {
            if run.meta.test.as_ref().is_some_and(|t| t.id.ends_with("test_hangs")) && !run.meta.partial && run.meta.end_reason != EndReason::Exited {
                break run.clone();
            }
        }
        let seen = match &read {
            Some(Ok(r)) => format!("{:?}: test {:?}, partial {}, end {:?}", newest, r.meta.test.as_ref().map(|t| &t.id), r.meta.partial, r.meta.end_reason),
            Some(Err(e)) => format!("{newest:?}: {e}"),
            None => "no run yet".into(),
        };
        assert!(Instant::now() < deadline, "the cancelled test's run was not finished; newest run: {seen}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(hung.meta.end_reason, EndReason::Interrupted);
    // Cancelled before its test ended: no outcome (not pytest's "1 passed" for the stopped test).
    assert!(hung.meta.test.as_ref().is_some_and(|t| t.outcome.is_none()), "{:?}", hung.meta.test);
    assert!(hung.meta.duration_s < 60.0 && started.elapsed() < Duration::from_secs(115), "stopped before the test's 120 s sleep");
    // The server is free again: another test can be profiled.
    let r = call(&client, "profile_test", serde_json::json!({ "file": "tests/test_work.py", "test": "test_fails" })).await;
    assert!(text(&r).contains("1 failed"), "{}", text(&r));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn record_runs_only_a_configured_command_for_at_most_its_duration() {
    let _g = serial();
    let dir = project();
    let command = format!("{} forever.py", python());

    // Without a configured command, nothing can be recorded.
    let (client, _) = start(dir.path(), &[]).await;
    let r = call(&client, "record", serde_json::json!({ "command": command, "duration_s": 1.0 })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).starts_with("no command may be recorded: the user allows commands with `threadradar mcp --record-command"), "{}", text(&r));
    client.cancel().await.unwrap();

    let (client, handler) = start(dir.path(), &["--record-command".into(), command.clone()]).await;
    // Another command, or a limit out of range: refused, nothing started.
    let r = call(&client, "record", serde_json::json!({ "command": "rm -rf /", "duration_s": 1.0 })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("\"rm -rf /\" is not a configured command"), "{}", text(&r));
    let r = call(&client, "record", serde_json::json!({ "duration_s": 0 })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).starts_with("duration_s is 0"), "{}", text(&r));
    assert!(!dir.path().join(".threadradar/runs").exists() || std::fs::read_dir(dir.path().join(".threadradar/runs")).unwrap().next().is_none());

    // The configured command (the default when it is the only one), stopped at its limit.
    let started = Instant::now();
    let r = call(&client, "record", serde_json::json!({ "duration_s": 1.5 })).await;
    let elapsed = started.elapsed();
    let t = text(&r);
    assert_ne!(r.is_error, Some(true), "{t}");
    assert!(t.contains("stopped at the duration limit"), "{t}");
    let run = runfile::read(&run_path(&t)).unwrap();
    assert_eq!(run.meta.end_reason, EndReason::Duration);
    assert!((1.0..=3.0).contains(&run.meta.duration_s), "recorded {} s for a 1.5 s limit", run.meta.duration_s);
    assert!(elapsed < Duration::from_secs(30), "the program was ended after the limit ({elapsed:?})");
    assert!(run.threads.iter().any(|th| th.name == "spinner"), "the program's thread was sampled");
    assert_eq!(run.meta.command, command.split(' ').map(str::to_string).collect::<Vec<_>>());
    let progress = handler.progress.lock().unwrap().clone();
    assert!(progress.iter().any(|p| p.message.as_deref().is_some_and(|m| m.contains("recording `") && m.contains("samples"))), "{progress:?}");
    // The run is the newest one: the other tools answer about it.
    let r = call(&client, "hottest_artifacts", serde_json::json!({})).await;
    assert!(text(&r).contains("spin (") && text(&r).contains(run_path(&t).to_str().unwrap()), "{}", text(&r));
    client.cancel().await.unwrap();
}
