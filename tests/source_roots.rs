//! `--source-root` and `[tool.threadradar] source-roots`: a run recorded from a script at one
//! path, the script then moved elsewhere (as a program in a container sees `/w/app.py` and the
//! editor `/home/me/proj/app.py`). Without a root the report says the file is missing and how to
//! map it; with one, the report and the language server find the file there, its hash the
//! recorded one, and place each function at its line.

mod common;
mod lsp_client;

use common::*;
use lsp_client::{label, LspClient};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const APP: &str = r#"import threading
import time


def spin(n):
    end = time.perf_counter() + 0.4
    x = 0
    while time.perf_counter() < end:
        x += n
    return x


def main():
    workers = [threading.Thread(target=spin, args=(i,), name=f"spinner-{i}") for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


main()
"#;

/// A workspace whose run was recorded from `orig/app.py`, which then moved to `moved/app.py`.
struct Moved {
    _dir: tempfile::TempDir,
    root: PathBuf,
    run: PathBuf,
    orig: PathBuf,
    moved: PathBuf,
}

fn moved_workspace() -> Moved {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (orig, moved) = (root.join("orig/app.py"), root.join("moved/app.py"));
    std::fs::create_dir_all(orig.parent().unwrap()).unwrap();
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::write(&orig, APP).unwrap();
    let runs = root.join(".threadradar/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let run = runs.join("20000101T000000Z-app.json");
    // The interpreter itself, not a wrapper (a pyenv shim can take longer to exec than the
    // recorder waits for Python on a loaded machine).
    let py = std::process::Command::new(python()).args(["-c", "import sys; print(sys.executable)"]).output().unwrap();
    let py = String::from_utf8(py.stdout).unwrap().trim().to_string();
    let out = {
        let _g = serial();
        threadradar(&root, &["record", "--no-progress", "-o", run.to_str().unwrap(), "--", &py, orig.to_str().unwrap()])
    };
    assert!(out.status.success(), "record failed: {}", stderr(&out));
    std::fs::rename(&orig, &moved).unwrap();
    Moved { _dir: dir, root, run, orig, moved }
}

fn line_of(text: &str) -> u64 {
    APP.lines().position(|l| l.starts_with(text)).unwrap() as u64 + 1
}

fn report(ws: &Moved, extra: &[&str]) -> (String, Value) {
    let run = ws.run.to_str().unwrap();
    let mut text_args = vec!["report", "--color", "never", run];
    text_args.extend_from_slice(extra);
    let t = threadradar(&ws.root, &text_args);
    assert!(t.status.success(), "report failed: {}", stderr(&t));
    let mut json_args = vec!["report", "--json", run];
    json_args.extend_from_slice(extra);
    let j = threadradar(&ws.root, &json_args);
    assert!(j.status.success(), "report --json failed: {}", stderr(&j));
    (String::from_utf8(t.stdout).unwrap(), serde_json::from_slice(&j.stdout).unwrap())
}

/// The report's artifact `qualname` of app.py (`main` is in `site` too): (file, line).
fn placed(v: &Value, qualname: &str) -> (String, u64) {
    let of_app = |a: &&Value| a["qualname"] == qualname && a["file"].as_str().is_some_and(|f| f.ends_with("/app.py"));
    let a = v["artifacts"].as_array().unwrap().iter().find(of_app).unwrap_or_else(|| panic!("no {qualname} of app.py in the report"));
    (a["file"].as_str().unwrap().to_string(), a["line"].as_u64().unwrap())
}

#[test]
fn report_maps_the_recorded_paths_with_a_source_root() {
    let ws = moved_workspace();
    let orig = ws.orig.display().to_string();
    let moved = ws.moved.display().to_string();

    let (text, v) = report(&ws, &[]);
    assert!(text.contains(&format!("Sources  0 of the program's 1 files as recorded, 1 missing here ({orig}); if the program ran in a container or a chroot, map its paths with --source-root")), "{text}");
    assert_eq!(v["sources"], json!([{ "path": orig, "status": "missing" }]));
    assert_eq!(placed(&v, "spin").0, orig);

    // The directory the program saw = where it is now; the longest prefix wins over `/`.
    let root_spec = format!("{}={}", ws.orig.parent().unwrap().display(), ws.moved.parent().unwrap().display());
    let (text, v) = report(&ws, &["--source-root", &root_spec, "--source-root", "/=/nowhere"]);
    assert!(text.contains("Sources  1 of the program's 1 files as recorded\n"), "{text}");
    assert_eq!(v["sources"], json!([{ "path": moved, "status": "unchanged" }]));
    assert_eq!(placed(&v, "spin"), (moved.clone(), line_of("def spin")));

    // The same from the project's configuration (a relative host path is the project's).
    std::fs::write(ws.root.join("pyproject.toml"), format!("[tool.threadradar]\nsource-roots = [\"{}=moved\"]\n", ws.orig.parent().unwrap().display())).unwrap();
    let (_, v) = report(&ws, &[]);
    assert_eq!(v["sources"], json!([{ "path": moved, "status": "unchanged" }]));

    // A changed file is said to be changed, not placed as if it were the recorded one.
    std::fs::write(&ws.moved, format!("# moved\n{APP}")).unwrap();
    let (text, _) = report(&ws, &[]);
    assert!(text.contains("Sources  0 of the program's 1 files as recorded, 1 changed since\n"), "{text}");

    let bad = threadradar(&ws.root, &["report", ws.run.to_str().unwrap(), "--source-root", "orig"]);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(stderr(&bad).trim(), "threadradar: --source-root: source root \"orig\" has no `=`: write CONTAINER_PATH=HOST_PATH, e.g. /app=/home/me/project");
}

fn hints_of(root: &Path, file: &Path) -> Vec<(u64, String)> {
    let mut c = LspClient::spawn(bin(), root);
    c.initialize(root, json!({ "minCrt": 0 }));
    c.open(file, &std::fs::read_to_string(file).unwrap());
    let mut out: Vec<(u64, String)> = c.inlay_hints(file).iter().map(|h| (h["position"]["line"].as_u64().unwrap() + 1, label(h))).collect();
    out.sort();
    c.shutdown();
    out
}

#[test]
fn the_language_server_maps_the_recorded_paths_with_the_project_s_source_roots() {
    let ws = moved_workspace();
    // Without a root the run knows no file at the new place: nothing to show there.
    assert_eq!(hints_of(&ws.root, &ws.moved), vec![]);

    std::fs::write(ws.root.join("pyproject.toml"), format!("[tool.threadradar]\nsource-roots = {{ \"{}\" = \"moved\" }}\n", ws.orig.parent().unwrap().display())).unwrap();
    let hints = hints_of(&ws.root, &ws.moved);
    // `spin` computes all along; `main` only while it starts the threads (a sample may see it).
    assert_eq!(hints.first().map(|(l, _)| *l), Some(line_of("def spin")), "{hints:?}");
    assert!(hints[0].1.contains('%'), "a hint with the figures: {hints:?}");
    assert!(hints.iter().all(|(l, _)| [line_of("def spin"), line_of("def main")].contains(l)), "hints only at the definitions: {hints:?}");
}

/// `threadradar serve RUN --port 0 EXTRA…`, its address, and the server (killed when dropped),
/// with its output kept open (it prints more lines).
struct Served(std::process::Child, String, #[allow(dead_code)] std::io::BufReader<std::process::ChildStdout>);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(ws: &Moved, extra: &[&str]) -> Served {
    use std::io::BufRead;
    let mut child = std::process::Command::new(bin())
        .args(["serve", ws.run.to_str().unwrap(), "--port", "0"])
        .args(extra)
        .current_dir(&ws.root)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    out.read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://127.0.0.1:")).unwrap_or_else(|| panic!("no address in {line:?}")).to_string();
    Served(child, url, out)
}

/// The panels' `documentArtifacts` of the moved file: (qualname, 1-based line) of each.
fn document_artifacts(s: &Served, file: &Path) -> Vec<(String, u64)> {
    let r: Value = ureq::post(&format!("{}api/documentArtifacts", s.1)).set("Content-Type", "application/json").send_string(&json!({ "file": file }).to_string()).unwrap().into_json().unwrap();
    r["artifacts"].as_array().unwrap().iter().map(|a| (a["qualname"].as_str().unwrap().to_string(), a["line"].as_u64().unwrap() + 1)).collect()
}

#[test]
fn serve_maps_the_recorded_paths_with_a_source_root() {
    let ws = moved_workspace();
    assert_eq!(document_artifacts(&serve(&ws, &[]), &ws.moved), vec![], "the run knows no file at the new place");
    let spec = format!("{}={}", ws.orig.parent().unwrap().display(), ws.moved.parent().unwrap().display());
    let s = serve(&ws, &["--source-root", &spec]);
    let placed = document_artifacts(&s, &ws.moved);
    assert!(placed.contains(&("spin".to_string(), line_of("def spin"))), "{placed:?}");
}
