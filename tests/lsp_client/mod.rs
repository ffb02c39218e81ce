//! A small LSP client for end-to-end tests and the benchmark: it runs `threadradar lsp` as a child
//! and speaks JSON-RPC with Content-Length framing over its stdin/stdout. Server-to-client
//! requests (refresh, progress, showDocument, …) are answered with `null` and recorded, like an
//! editor would.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const TIMEOUT: Duration = Duration::from_secs(60);

pub struct LspClient {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: i64,
    /// Notifications from the server, in order.
    pub notifications: Vec<Value>,
    /// Requests from the server, in order (already answered).
    pub server_requests: Vec<Value>,
    /// Declare `inlayHint.resolveSupport` for tooltips in `initialize` (as VS Code does).
    pub resolve_tooltips: bool,
    /// Advertise `workspace.didChangeWatchedFiles.dynamicRegistration` (the server then asks to
    /// watch the runs directories).
    pub watch_files: bool,
}

impl LspClient {
    /// Starts `bin lsp` in `cwd`.
    pub fn spawn(bin: &str, cwd: &Path) -> LspClient {
        LspClient::spawn_with_env(bin, cwd, &[])
    }

    /// Starts `bin lsp` in `cwd` with these environment variables added.
    pub fn spawn_with_env(bin: &str, cwd: &Path, env: &[(&str, &str)]) -> LspClient {
        let mut child = Command::new(bin)
            .arg("lsp")
            .envs(env.iter().copied())
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting threadradar lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.trim().parse::<usize>().ok();
                    }
                }
                let Some(len) = len else { return };
                let mut body = vec![0; len];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                match serde_json::from_slice::<Value>(&body) {
                    Ok(v) => {
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
                }
            }
        });
        LspClient { child, stdin, rx, next_id: 1, notifications: Vec::new(), server_requests: Vec::new(), resolve_tooltips: false, watch_files: false }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes raw bytes (for malformed input).
    pub fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stdin.write_all(bytes)?;
        self.stdin.flush()
    }

    /// Writes one framed message body.
    pub fn send_body(&mut self, body: &[u8]) -> std::io::Result<()> {
        let mut msg = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        msg.extend_from_slice(body);
        self.send_raw(&msg)
    }

    pub fn send(&mut self, v: &Value) {
        self.send_body(v.to_string().as_bytes()).expect("writing to the server");
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and waits for its response: `Ok(result)` or `Err(error)`.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let resp = self.wait_for(TIMEOUT, |m| m.get("method").is_none() && m.get("id") == Some(&json!(id))).unwrap_or_else(|| panic!("no answer to {method}"));
        match resp.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(resp.get("result").cloned().unwrap_or(Value::Null)),
        }
    }

    /// Like [`request`](Self::request), panicking on an error response.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.request(method, params).unwrap_or_else(|e| panic!("{method} failed: {e}"))
    }

    /// Handles messages until one satisfies `pred` (returned) or `timeout` passes (`None`).
    /// Server requests are answered and recorded, notifications recorded.
    pub fn wait_for(&mut self, timeout: Duration, mut pred: impl FnMut(&Value) -> bool) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = match self.rx.recv_timeout(left) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
            };
            let is_request = msg.get("method").is_some() && msg.get("id").is_some();
            if is_request {
                self.send(&json!({ "jsonrpc": "2.0", "id": msg["id"], "result": null }));
                self.server_requests.push(msg.clone());
            } else if msg.get("method").is_some() {
                self.notifications.push(msg.clone());
            }
            if pred(&msg) {
                return Some(msg);
            }
        }
    }

    /// Processes whatever arrives during `d`.
    pub fn drain(&mut self, d: Duration) {
        self.wait_for(d, |_| false);
    }

    /// Waits until the server has sent a request with this method (or returns false).
    pub fn wait_server_request(&mut self, method: &str, timeout: Duration) -> bool {
        if self.server_requests.iter().any(|r| r["method"] == method) {
            return true;
        }
        self.wait_for(timeout, |m| m["method"] == method && m.get("id").is_some()).is_some()
    }

    /// `initialize` + `initialized` with a client that supports refresh, progress and
    /// showDocument, for one workspace folder.
    pub fn initialize(&mut self, root: &Path, options: Value) -> Value {
        let uri = file_uri(root);
        let resolve = if self.resolve_tooltips { json!({ "properties": ["tooltip"] }) } else { Value::Null };
        let result = self.call(
            "initialize",
            json!({
                "processId": null,
                "rootUri": uri,
                "workspaceFolders": [{ "uri": uri, "name": "ws" }],
                "initializationOptions": options,
                "clientInfo": { "name": "threadradar-test-client" },
                "capabilities": {
                    "workspace": {
                        "inlayHint": { "refreshSupport": true },
                        "codeLens": { "refreshSupport": true },
                        "symbol": {},
                        "didChangeWatchedFiles": { "dynamicRegistration": self.watch_files },
                    },
                    "window": { "workDoneProgress": true, "showDocument": { "support": true }, "showMessage": {} },
                    "textDocument": { "inlayHint": { "resolveSupport": resolve }, "codeLens": {}, "hover": { "contentFormat": ["markdown", "plaintext"] } },
                },
            }),
        );
        self.notify("initialized", json!({}));
        result
    }

    pub fn open(&mut self, path: &Path, text: &str) {
        self.notify("textDocument/didOpen", json!({ "textDocument": { "uri": file_uri(path), "languageId": "python", "version": 1, "text": text } }));
    }

    pub fn inlay_hints(&mut self, path: &Path) -> Vec<Value> {
        let r = self.call("textDocument/inlayHint", json!({ "textDocument": { "uri": file_uri(path) }, "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 100000, "character": 0 } } }));
        r.as_array().cloned().unwrap_or_default()
    }

    pub fn code_lenses(&mut self, path: &Path) -> Vec<Value> {
        let r = self.call("textDocument/codeLens", json!({ "textDocument": { "uri": file_uri(path) } }));
        r.as_array().cloned().unwrap_or_default()
    }

    pub fn hover(&mut self, path: &Path, line: u32, character: u32) -> Value {
        self.call("textDocument/hover", json!({ "textDocument": { "uri": file_uri(path) }, "position": { "line": line, "character": character } }))
    }

    pub fn execute(&mut self, command: &str, args: Value) -> Result<Value, Value> {
        self.request("workspace/executeCommand", json!({ "command": command, "arguments": [args] }))
    }

    /// Whether the child is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// `shutdown` + `exit`, then waits for the process.
    pub fn shutdown(mut self) -> std::process::ExitStatus {
        let _ = self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                return self.child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `file:///…` for an absolute path (test paths need no escaping beyond spaces).
pub fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display().to_string().replace(' ', "%20"))
}

/// The label text of an inlay hint.
pub fn label(hint: &Value) -> String {
    match &hint["label"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["value"].as_str()).collect(),
        _ => String::new(),
    }
}
