//! The editor's settings over the project's `[tool.threadradar]` (issue 19), end to end: the real
//! `threadradar lsp`, a copy of samples/python/testproject and the protocol client of
//! tests/lsp_client. `testCommand`, `intervalMs`, `runsDir`, `keepRuns`, `include` and `exclude`
//! each win over their key of the project's file, which wins over the default; `null` or the
//! empty value hands a key back to the file. What ran is read back from the runs themselves
//! (their recorded command, interval and directory) and from pytest's own counts.

mod common;
mod lsp_client;

use lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A copy of samples/python/testproject in a temporary directory, its `[tool.threadradar]`
/// extended with `extra` lines.
fn project(extra: &str) -> (tempfile::TempDir, PathBuf) {
    std::env::set_var("TESTPROJECT_MISBEHAVE", "1");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("testproject");
    let src = common::repo().join("samples/python/testproject");
    for rel in ["pyproject.toml", "pool.py", "tests/check_pool.py"] {
        let to = root.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(src.join(rel), to).unwrap();
    }
    let pyproject = root.join("pyproject.toml");
    let text = std::fs::read_to_string(&pyproject).unwrap();
    assert!(text.contains("interval-ms = 2"), "{text}");
    std::fs::write(&pyproject, text.replace("interval-ms = 2", &format!("interval-ms = 2\n{extra}"))).unwrap();
    (dir, root)
}

/// pytest's own counts for the same arguments (its summary line).
fn pytest_counts(root: &Path, args: &[&str]) -> Value {
    let out = std::process::Command::new(common::python()).args(["-m", "pytest", "-p", "no:cacheprovider", "-q"]).args(args).current_dir(root).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout.lines().rev().find(|l| l.contains(" in ") && (l.contains("passed") || l.contains("failed"))).unwrap_or_else(|| panic!("{stdout}"));
    let count = |word: &str| {
        summary
            .trim_matches('=')
            .split(',')
            .map(str::trim)
            .find_map(|p| {
                let (n, w) = p.split(" in ").next().unwrap().split_once(' ')?;
                (w == word || (word == "errors" && w == "error")).then(|| n.parse::<u64>().ok()).flatten()
            })
            .unwrap_or(0)
    };
    json!({ "passed": count("passed"), "failed": count("failed"), "errors": count("errors"), "skipped": count("skipped") })
}

fn counts(outcome: &Value) -> Value {
    json!({ "passed": outcome["passed"], "failed": outcome["failed"], "errors": outcome["errors"], "skipped": outcome["skipped"] })
}

/// The run files of a directory, oldest first.
fn run_files(dir: &Path) -> Vec<PathBuf> {
    let mut all = threadradar_profiler::runfile::list_runs(dir).unwrap_or_default();
    all.reverse();
    all
}

/// Whether `words` holds `a` followed by `b`.
fn has_pair(words: &[String], a: &str, b: &str) -> bool {
    words.windows(2).any(|w| w[0] == a && w[1] == b)
}

fn settings(c: &mut LspClient, s: Value) {
    c.notify("workspace/didChangeConfiguration", json!({ "settings": { "threadradar": s } }));
    c.drain(Duration::from_millis(300));
}

fn profile(c: &mut LspClient, tests: &Path, name: Value) -> (PathBuf, Value) {
    let a = c.execute("threadradar.profileTest", json!({ "uri": file_uri(tests), "name": name })).unwrap_or_else(|e| panic!("profileTest: {e}"));
    (PathBuf::from(a["run"].as_str().unwrap_or_else(|| panic!("{a}"))), a)
}

/// The overview's listed functions as (file name, qualified name).
fn listed(c: &mut LspClient, params: Value) -> Vec<(String, String)> {
    let o = c.call("threadRadar/overview", params);
    o["functions"]
        .as_array()
        .unwrap_or_else(|| panic!("{o}"))
        .iter()
        .map(|f| {
            let file = f["file"].as_str().unwrap();
            (file.rsplit('/').next().unwrap().to_string(), f["qualname"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn editor_settings_override_the_projects_test_command_interval_runs_dir_keep_runs_and_filters() {
    let _serial = common::serial();
    // The project sets every key the editor can override.
    let (_dir, root) = project(
        "runs-dir = \"profiles\"\nkeep-runs = 10\ntest-command = [\"{python}\", \"-m\", \"pytest\", \"-k\", \"small\", \"{tests}\"]\ninclude = [\"pool\\\\.py$\"]\nexclude = [\"square_all\"]",
    );
    let tests = root.join("tests/check_pool.py");
    let editor_runs = root.join("editor-runs");
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(
        &root,
        json!({
            "pollMs": 200,
            "testCommand": ["{python}", "-m", "pytest", "-k", "parallel_sum", "{tests}"],
            "intervalMs": 5,
            "runsDir": "editor-runs",
            "keepRuns": 2,
        }),
    );
    c.open(&tests, &std::fs::read_to_string(&tests).unwrap());

    // The whole file, with the editor's template: its `-k parallel_sum` is what pytest ran.
    let (first, a) = profile(&mut c, &tests, Value::Null);
    assert_eq!(first.parent().unwrap(), editor_runs, "runsDir (relative to the workspace folder): {a}");
    assert_eq!(counts(&a["outcome"]), pytest_counts(&root, &["-k", "parallel_sum", "tests/check_pool.py"]), "{a}");
    assert_eq!(a["outcome"]["passed"], 1, "only test_parallel_sum_is_right: {a}");
    let run = common::read(&first);
    assert_eq!(run.meta.interval_ms, 5.0, "intervalMs, not the project's 2 or the default 3");
    assert!(has_pair(&run.meta.command, "-k", "parallel_sum") && !run.meta.command.iter().any(|w| w == "small"), "testCommand: {:?}", run.meta.command);
    assert!(!root.join("profiles").exists() && !root.join(".threadradar/runs").exists(), "nothing in the project's or the default runs directory");
    let runs = c.call("threadRadar/runs", json!({}));
    assert_eq!(runs["active"], json!(first), "the server lists runsDir and shows the new run: {runs}");

    // `include` / `exclude`: the project's patterns (`include` both modules, `exclude`
    // square_all) decide the overview's listing; the editor's replace them, each on its own.
    let all = listed(&mut c, json!({ "include": ["."] }));
    let expect = |keep: &dyn Fn(&str, &str) -> bool| -> Vec<(String, String)> { all.iter().filter(|(f, q)| keep(f, q)).cloned().collect() };
    let modules = |f: &str| f == "pool.py" || f == "check_pool.py";
    assert!(all.iter().any(|(f, q)| f == "pool.py" && q == "square_all"), "{all:?}");
    // The test module, by whichever of its functions the samples caught: its `<module>` runs for
    // a moment at import and its test mostly waits in `parallel_sum`, so a 5 ms interval may
    // miss either (CI listed only the one, then only the other).
    assert!(all.iter().any(|(f, _)| f == "check_pool.py"), "{all:?}");
    let project_listing = listed(&mut c, json!({}));
    assert_eq!(project_listing, expect(&|f, q| modules(f) && q != "square_all"), "the project's include and exclude");
    settings(&mut c, json!({ "include": ["/pool\\.py$"] }));
    let only_pool = listed(&mut c, json!({}));
    assert_eq!(only_pool, expect(&|f, q| f == "pool.py" && q != "square_all"), "the editor's include, the project's exclude");
    assert!(!only_pool.is_empty(), "{all:?}");
    settings(&mut c, json!({ "include": null, "exclude": ["<module>"] }));
    let no_modules = listed(&mut c, json!({}));
    assert_eq!(no_modules, expect(&|f, q| modules(f) && q != "<module>"), "the project's include, the editor's exclude");
    assert!(no_modules.iter().any(|(_, q)| q == "square_all"), "the project's exclude is replaced: {no_modules:?}");
    settings(&mut c, json!({ "include": [], "exclude": [] }));
    assert_eq!(listed(&mut c, json!({})), project_listing, "empty lists hand the patterns back to the project");
    // A request's own patterns still win over both.
    assert_eq!(listed(&mut c, json!({ "include": ["square_all"] })), expect(&|_, q| q == "square_all"));

    // keepRuns = 2: after the third run the oldest is pruned (the project says 10).
    let (second, _) = profile(&mut c, &tests, json!("test_parallel_sum_is_right"));
    assert_eq!(run_files(&editor_runs), vec![first.clone(), second.clone()]);
    let (third, a) = profile(&mut c, &tests, json!("test_parallel_sum_is_right"));
    assert_eq!(counts(&a["outcome"]), json!({ "passed": 1, "failed": 0, "errors": 0, "skipped": 0 }), "{a}");
    assert_eq!(run_files(&editor_runs), vec![second.clone(), third.clone()], "keepRuns pruned the oldest run");
    let listed_runs: Vec<Value> = c.call("threadRadar/runs", json!({}))["runs"].as_array().unwrap().iter().map(|r| r["path"].clone()).collect();
    assert_eq!(listed_runs, vec![json!(third), json!(second)]);

    // The empty values VS Code sends by default hand every key back to the project's file.
    settings(&mut c, json!({ "testCommand": [], "intervalMs": 0, "runsDir": "", "keepRuns": 0 }));
    let runs = c.call("threadRadar/runs", json!({}));
    assert!(runs["runs"].as_array().unwrap().is_empty(), "the project's runs directory is listed now (empty): {runs}");
    let (own, a) = profile(&mut c, &tests, Value::Null);
    assert_eq!(own.parent().unwrap(), root.join("profiles"), "the project's runs-dir: {a}");
    assert_eq!(counts(&a["outcome"]), pytest_counts(&root, &["-k", "small", "tests/check_pool.py"]), "the project's test-command: {a}");
    assert_eq!(a["outcome"]["passed"], 1, "only PoolCase::test_small: {a}");
    let run = common::read(&own);
    assert_eq!(run.meta.interval_ms, 2.0, "the project's interval-ms");
    assert!(has_pair(&run.meta.command, "-k", "small"), "{:?}", run.meta.command);
    assert_eq!(c.call("threadRadar/runs", json!({}))["active"], json!(own));
    assert_eq!(run_files(&editor_runs).len(), 2, "the editor's directory is left alone");

    // `testCommand: "pytest"` replaces the project's template with plain pytest; a bad value is
    // one warning and keeps the previous one.
    settings(&mut c, json!({ "testCommand": "pytest", "intervalMs": 4 }));
    let before = c.notifications.len();
    settings(&mut c, json!({ "intervalMs": "fast", "testCommand": "nose", "keepRuns": -3, "runsDir": 7 }));
    let warnings: Vec<String> = c.notifications[before..]
        .iter()
        .filter(|n| n["method"] == "window/showMessage")
        .map(|n| n["params"]["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        warnings.iter().any(|w| ["intervalMs", "testCommand", "keepRuns", "runsDir"].iter().all(|k| w.contains(&format!("ignored the setting {k} = ")))),
        "{warnings:?}"
    );
    let (plain, a) = profile(&mut c, &tests, json!("TestPool::test_empty"));
    assert_eq!(counts(&a["outcome"]), json!({ "passed": 1, "failed": 0, "errors": 0, "skipped": 0 }), "{a}");
    let run = common::read(&plain);
    assert_eq!(run.meta.interval_ms, 4.0, "the last good intervalMs");
    assert!(!run.meta.command.iter().any(|w| w == "-k"), "pytest without the project's -k: {:?}", run.meta.command);
    assert!(run.meta.command.windows(2).any(|w| w[0] == "-m" && w[1] == "pytest"), "{:?}", run.meta.command);
    assert_eq!(plain.parent().unwrap(), root.join("profiles"));
    assert!(c.shutdown().success());
}

#[test]
fn recording_from_the_editor_uses_the_runs_dir_and_interval_the_server_lists() {
    let _serial = common::serial();
    let (_dir, root) = project("runs-dir = \"profiles\"");
    std::fs::write(root.join("spin.py"), "import time\n\nend = time.time() + 0.8\nwhile time.time() < end:\n    sum(range(2000))\n").unwrap();
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({ "pollMs": 200, "runsDir": "editor-recordings", "intervalMs": 4 }));
    let record = |c: &mut LspClient| -> PathBuf {
        let answer = c.execute("threadradar.record", json!({ "command": [common::python(), "spin.py"] })).unwrap();
        let output = PathBuf::from(answer["output"].as_str().unwrap_or_else(|| panic!("{answer}")));
        let shown = c
            .wait_for(Duration::from_secs(60), |m| m["method"] == "window/showMessage" && m["params"]["message"].as_str().is_some_and(|s| s.starts_with("ThreadRadar: recorded ") || s.contains("nothing was recorded")))
            .expect("the recording ends");
        assert!(output.is_file(), "{shown}");
        output
    };
    let run = record(&mut c);
    assert_eq!(run.parent().unwrap(), root.join("editor-recordings"), "runsDir");
    assert_eq!(common::read(&run).meta.interval_ms, 4.0, "intervalMs");
    assert_eq!(c.call("threadRadar/runs", json!({}))["active"], json!(run), "the server lists where it records");

    // Without the settings: the project's runs-dir (where the server lists runs) and interval-ms.
    settings(&mut c, json!({ "runsDir": null, "intervalMs": null }));
    let run = record(&mut c);
    assert_eq!(run.parent().unwrap(), root.join("profiles"), "[tool.threadradar] runs-dir");
    assert_eq!(common::read(&run).meta.interval_ms, 2.0, "[tool.threadradar] interval-ms");
    assert_eq!(c.call("threadRadar/runs", json!({}))["active"], json!(run));
    assert!(!root.join(".threadradar/runs").exists(), "nothing in the default directory");
    assert!(c.shutdown().success());
}

/// The runs directory the client is asked to watch follows `runsDir` and the project's `runs-dir`:
/// a client that registers file watchers dynamically gets `<folder>/<runsDir>/*.json` beside
/// `**/.threadradar/runs/*.json`, and a new registration (after unregistering the old one) when
/// the setting changes; its notification of a new run there lists and shows it at once (the
/// poll is set to a minute, so nothing else finds it).
#[test]
fn the_client_watches_the_runs_dir_the_settings_and_the_project_name() {
    let _serial = common::serial();
    let (_dir, root) = project("runs-dir = \"profiles\"");
    let mut c = LspClient::spawn(common::bin(), &root);
    c.watch_files = true;
    c.initialize(&root, json!({ "pollMs": 60000, "runsDir": "editor-runs" }));
    let globs = |m: &Value| -> Vec<String> {
        m["params"]["registrations"][0]["registerOptions"]["watchers"].as_array().unwrap().iter().map(|w| w["globPattern"].as_str().unwrap().to_string()).collect()
    };
    let reg = c.wait_for(Duration::from_secs(10), |m| m["method"] == "client/registerCapability").expect("a watcher registration");
    let root_s = root.display().to_string();
    assert_eq!(globs(&reg), ["**/.threadradar/runs/*.json".to_string(), format!("{root_s}/editor-runs/*.json")], "{reg}");

    // A run written there, and the client's word for it: listed and shown.
    let run = root.join("editor-runs").join("spin.json");
    std::fs::create_dir_all(run.parent().unwrap()).unwrap();
    std::fs::write(root.join("spin.py"), "import time\n\nend = time.time() + 0.5\nwhile time.time() < end:\n    sum(range(2000))\n").unwrap();
    let o = common::record(&run, &[], &[root.join("spin.py").to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    c.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": file_uri(&run), "type": 1 }] }));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while c.call("threadRadar/runs", json!({}))["active"] != json!(run) {
        assert!(std::time::Instant::now() < deadline, "the watched run is not shown: {}", c.call("threadRadar/runs", json!({})));
        c.drain(Duration::from_millis(100));
    }

    // Without the setting: the project's runs-dir, the old registration dropped first.
    let before = c.server_requests.len();
    settings(&mut c, json!({ "runsDir": null }));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !c.server_requests[before..].iter().any(|r| r["method"] == "client/registerCapability") {
        assert!(std::time::Instant::now() < deadline, "no new registration");
        c.drain(Duration::from_millis(100));
    }
    let asked: Vec<&Value> = c.server_requests[before..].iter().filter(|r| r["method"].as_str().unwrap().ends_with("egisterCapability")).collect();
    let methods: Vec<&str> = asked.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["client/unregisterCapability", "client/registerCapability"], "the old watcher dropped, then the new one");
    let reg = asked[1].clone();
    assert_eq!(globs(&reg), ["**/.threadradar/runs/*.json".to_string(), format!("{root_s}/profiles/*.json")], "{reg}");
    assert!(c.shutdown().success());
}

/// `annotations` and `markdownImages` (issue 32), over the real server and a recorded run of the
/// paper's Bug 1: `hints` sends the hints and no figure lens (declaration, Timeline, file, wait,
/// section), `glyph` neither, `all` both; a bad value is one warning and keeps the last good one.
/// `markdownImages` gives a client that does not call itself VS Code (this one, like code-server)
/// the glyph image in hovers. The wait lens opens the Waits view (`threadradar.openWaits`), and an
/// edit that hides the wait and section lenses leaves a lens that says why.
#[test]
fn annotations_choose_hints_and_lenses_and_markdown_images_bring_the_hover_image() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let samples = common::repo().join("samples/python");
    std::fs::copy(samples.join("common.py"), root.join("common.py")).unwrap();
    let script = root.join("buggy.py");
    std::fs::copy(samples.join("bug1_worker_manager/buggy.py"), &script).unwrap();
    let run = root.join(".threadradar/runs/20000101T000000Z-buggy.json");
    std::fs::create_dir_all(run.parent().unwrap()).unwrap();
    {
        let _serial = common::serial();
        let o = common::record(&run, &[], &[script.to_str().unwrap(), "--workers", "6", "--timeout", "1.5"]);
        assert!(o.status.success(), "{}", common::stderr(&o));
    }
    let figure_lens = |l: &Value| {
        let c = l["command"]["command"].as_str().unwrap_or("");
        c.starts_with("threadradar.open") || l["command"]["title"].as_str().is_some_and(|t| t.contains("stale since edit"))
    };
    let mut c = LspClient::spawn(common::bin(), &root);
    c.initialize(&root, json!({ "minCrt": 0, "annotations": "hints", "markdownImages": true, "panels": true }));
    let text = std::fs::read_to_string(&script).unwrap();
    c.open(&script, &text);

    // hints: one hint per declaration, no figure lens.
    let hints = c.inlay_hints(&script);
    assert!(hints.len() >= 3, "{hints:#?}");
    let lenses = c.code_lenses(&script);
    assert!(!lenses.iter().any(figure_lens), "annotations = hints sends no figure lens: {lenses:#?}");
    // The image flag: this client's name is not VS Code's, and the hover has the glyph.
    let line = hints[hints.len() - 1]["position"]["line"].as_u64().unwrap() as u32;
    let md = c.hover(&script, line, 4)["contents"]["value"].as_str().unwrap_or("").to_string();
    assert!(md.starts_with("![ThreadRadar of ") && md.contains("(data:image/svg+xml;base64,"), "{}", &md[..120.min(md.len())]);

    // glyph: neither hints nor figure lenses; the hover stays.
    settings(&mut c, json!({ "annotations": "glyph" }));
    assert_eq!(c.inlay_hints(&script), Vec::<Value>::new());
    assert!(!c.code_lenses(&script).iter().any(figure_lens));
    assert!(c.hover(&script, line, 4)["contents"]["value"].as_str().is_some_and(|v| v.contains("crt")));

    // all: the hints again, each declaration's lens and Timeline lens, the file's lens, the
    // section lenses of the sample's lock and the wait lenses, which open the Waits view.
    settings(&mut c, json!({ "annotations": "all" }));
    assert_eq!(c.inlay_hints(&script).len(), hints.len());
    let lenses = c.code_lenses(&script);
    let count = |cmd: &str| lenses.iter().filter(|l| l["command"]["command"] == cmd).count();
    assert_eq!((count("threadradar.openDetail"), count("threadradar.openTimeline"), count("threadradar.openOverview")), (hints.len(), hints.len(), 1), "{lenses:#?}");
    assert!(count("threadradar.openSections") >= 1, "the sample's `with self._lock:`: {lenses:#?}");
    let waits: Vec<&Value> = lenses.iter().filter(|l| l["command"]["title"].as_str().is_some_and(|t| t.contains(": waited "))).collect();
    assert!(!waits.is_empty(), "the sample's threads wait on its lock: {lenses:#?}");
    for w in &waits {
        assert_eq!(w["command"]["command"], "threadradar.openWaits", "the wait lens opens the Waits view: {w}");
        assert!(w["command"]["arguments"][0]["object"].is_string(), "the wait lens names its object: {w}");
        assert_eq!(w["command"]["arguments"][0]["line"].as_u64().unwrap(), w["range"]["start"]["line"].as_u64().unwrap() + 1, "{w}");
    }
    if let Some(w) = waits.first() {
        let before = c.notifications.len();
        c.execute("threadradar.openWaits", w["command"]["arguments"][0].clone()).unwrap();
        // The notification is sent before the answer, but the server's notifications and answers
        // travel separate queues: it may arrive just after.
        let seen = c.notifications[before..].iter().find(|m| m["method"] == "threadRadar/openPanel").cloned();
        let open = seen
            .or_else(|| c.wait_for(Duration::from_secs(10), |m| m["method"] == "threadRadar/openPanel"))
            .unwrap_or_else(|| panic!("no threadRadar/openPanel: {:?}", &c.notifications[before..]));
        assert_eq!(open["params"]["panel"], "waits", "{open}");
        assert_eq!(open["params"]["object"], w["command"]["arguments"][0]["object"], "{open}");
    }
    assert!(!lenses.iter().any(|l| l["command"]["title"].as_str().is_some_and(|t| t.contains("stale since edit"))), "the recorded text: no stale word");

    // An edit: the wait and section lenses go (their lines cannot be vouched for), and a lens on
    // the first line says why; the declarations' lenses follow their declarations.
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": file_uri(&script), "version": 2 },
                "contentChanges": [{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "text": "# an edit\n" }] }),
    );
    let edited = c.code_lenses(&script);
    let stale: Vec<&Value> = edited.iter().filter(|l| l["command"]["title"].as_str().is_some_and(|t| t.contains("stale since edit"))).collect();
    assert_eq!(stale.len(), 1, "{edited:#?}");
    assert_eq!((stale[0]["range"]["start"]["line"].as_u64(), stale[0]["command"]["command"].as_str()), (Some(0), Some("")), "a label on the first line, no command");
    assert!(!edited.iter().any(|l| ["threadradar.openSections", "threadradar.openWaits"].contains(&l["command"]["command"].as_str().unwrap_or(""))), "{edited:#?}");
    assert_eq!(edited.iter().filter(|l| l["command"]["command"] == "threadradar.openDetail").count(), hints.len());

    // A bad value: one warning, the last good value stays; the flag off: no image.
    let before = c.notifications.len();
    settings(&mut c, json!({ "annotations": "everything", "markdownImages": false }));
    let warned = c.notifications[before..].iter().any(|n| n["method"] == "window/showMessage" && n["params"]["message"].as_str().is_some_and(|m| m.contains("ignored the setting annotations = ")));
    assert!(warned, "{:?}", &c.notifications[before..]);
    assert_eq!(c.inlay_hints(&script).len(), hints.len(), "still all");
    let md = c.hover(&script, line + 1, 4)["contents"]["value"].as_str().unwrap_or("").to_string();
    assert!(md.contains("crt") && !md.contains("data:image"), "markdownImages off: text only: {}", &md[..120.min(md.len())]);
    assert!(c.shutdown().success());
}
