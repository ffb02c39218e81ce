//! `threadradar serve RUN|DIR [--port P]`: the overview and detail panels in a browser.
//!
//! A small blocking HTTP server (tiny_http) bound to 127.0.0.1 only. `GET /` is the web app
//! (`web/`, compiled into the binary, scripts and styles inlined under a per-response CSP nonce);
//! `POST /api/<method>` answers the panels' JSON API, which is `threadradar_analysis::panel`
//! plus what only a server knows: the applied thread filter (`filter`), the runs of the
//! directory (`runs`), the comparison of two of its runs (`compare`, `threadradar_analysis::compare`)
//! and navigation requests (`navigate`, printed as `navigate FILE:LINE`).

use anyhow::{bail, Context};
use clap::Args;
use serde::Deserialize;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use threadradar_analysis::panel::{self, DetailRequest, GlyphRequest, OverviewRequest, Panels, Params, ThreadsRequest};
use threadradar_analysis::{ArtifactFilter, CompareOptions, Comparison, Level};
use threadradar_profiler::run::{FileKind, ThreadId};
use threadradar_profiler::runfile;
use tiny_http::{Header, Method, Response, Server};

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// A run file, or a directory of runs (the newest is shown; the page can switch)
    /// [default: .threadradar/runs]
    pub run: Option<PathBuf>,

    /// Port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 7878)]
    pub port: u16,
}

const INDEX: &str = include_str!("../../web/index.html");
const STYLE: &str = include_str!("../../web/style.css");
const TRANSPORT: &str = include_str!("../../web/transport.js");
const APP: &str = include_str!("../../web/app.js");

/// The web app as one HTML document: styles and scripts inlined under `nonce`, and `data`
/// (JSON, or `null` when served) embedded for the static export's transport.
pub(crate) fn page(nonce: &str, data_json: &str) -> String {
    let csp = format!(
        "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'"
    );
    // `<` inside the JSON would let a name like `</script>` end the data block.
    let data = data_json.replace('<', "\\u003c");
    let script = format!("{TRANSPORT}\n{APP}");
    // One pass, so nothing substituted is ever substituted again.
    let mut out = String::with_capacity(INDEX.len() + STYLE.len() + script.len() + data.len());
    let mut rest = INDEX;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        match &after[..end] {
            "CSP" => out.push_str(&csp),
            "NONCE" => out.push_str(nonce),
            "STYLE" => out.push_str(STYLE),
            "SCRIPT" => out.push_str(&script),
            "DATA" => out.push_str(&data),
            other => {
                out.push_str("{{");
                out.push_str(other);
                out.push_str("}}");
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// 128 random bits, hex.
pub(crate) fn nonce() -> String {
    let mut buf = [0u8; 16];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut buf)).is_err() {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        buf.copy_from_slice(&(t ^ (std::process::id() as u128) << 64).to_le_bytes());
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

struct Current {
    path: PathBuf,
    panels: Arc<Panels>,
    /// The applied thread filter.
    filter: Vec<ThreadId>,
}

struct State {
    dir: Option<PathBuf>,
    current: Mutex<Current>,
    port: u16,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let dir = args.run.as_deref().filter(|p| p.is_dir()).map(Path::to_path_buf);
    let path = super::info::resolve_run_path(args.run.as_deref())?;
    let run = runfile::read(&path)?;
    let listener = match TcpListener::bind(("127.0.0.1", args.port)) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => bail!(
            "port {} on 127.0.0.1 is already in use: pass another with --port, or --port 0 for a free one",
            args.port
        ),
        Err(e) => return Err(e).with_context(|| format!("cannot listen on 127.0.0.1:{}", args.port)),
    };
    let port = listener.local_addr()?.port();
    let server = Server::from_listener(listener, None).map_err(|e| anyhow::anyhow!("cannot serve on 127.0.0.1:{port}: {e}"))?;
    let state = Arc::new(State {
        dir,
        current: Mutex::new(Current { path: path.clone(), panels: Arc::new(Panels::new(run)), filter: Vec::new() }),
        port,
    });
    let mut out = std::io::stdout().lock();
    writeln!(out, "ThreadRadar panels for {}: http://127.0.0.1:{port}/", path.display())?;
    writeln!(out, "Press Ctrl-C to stop.")?;
    out.flush()?;
    drop(out);
    let server = Arc::new(server);
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let server = server.clone();
            let state = state.clone();
            std::thread::spawn(move || loop {
                match server.recv() {
                    Ok(req) => handle(&state, req),
                    Err(e) => {
                        tracing::warn!("serve: {e}");
                        break;
                    }
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    Ok(ExitCode::SUCCESS)
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header")
}

type Reply = Response<std::io::Cursor<Vec<u8>>>;

fn json_reply(status: u16, body: &serde_json::Value) -> Reply {
    Response::from_string(body.to_string())
        .with_status_code(status)
        .with_header(header("Content-Type", "application/json; charset=utf-8"))
        .with_header(header("Cache-Control", "no-store"))
        .with_header(header("X-Content-Type-Options", "nosniff"))
}

fn error_reply(status: u16, sentence: impl std::fmt::Display) -> Reply {
    json_reply(status, &serde_json::json!({ "error": sentence.to_string() }))
}

fn handle(state: &State, mut req: tiny_http::Request) {
    let reply = respond(state, &mut req);
    let _ = req.respond(reply);
}

fn respond(state: &State, req: &mut tiny_http::Request) -> Reply {
    // Only this machine's browser, by this server's name (no DNS rebinding).
    let host = req.headers().iter().find(|h| h.field.equiv("Host")).map(|h| h.value.as_str().to_string()).unwrap_or_default();
    let port = state.port;
    if host != format!("127.0.0.1:{port}") && host != format!("localhost:{port}") {
        return error_reply(403, format!("this server only answers requests to 127.0.0.1:{port}"));
    }
    let url = req.url().to_string();
    let path = url.split('?').next().unwrap_or("/").to_string();
    match (req.method(), path.as_str()) {
        (Method::Get, "/") | (Method::Get, "/index.html") => {
            let nonce = nonce();
            let html = page(&nonce, "null");
            let csp = format!(
                "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
            );
            Response::from_string(html)
                .with_header(header("Content-Type", "text/html; charset=utf-8"))
                .with_header(header("Content-Security-Policy", &csp))
                .with_header(header("Cache-Control", "no-store"))
                .with_header(header("X-Content-Type-Options", "nosniff"))
                .with_header(header("Referrer-Policy", "no-referrer"))
        }
        (Method::Get, "/favicon.ico") => Response::from_data(Vec::new()).with_status_code(204),
        (Method::Post, p) if p.starts_with("/api/") => {
            let json = req.headers().iter().any(|h| h.field.equiv("Content-Type") && h.value.as_str().starts_with("application/json"));
            if !json {
                return error_reply(415, "the API takes JSON: send Content-Type: application/json");
            }
            let mut body = Vec::new();
            if req.as_reader().take(1 << 20).read_to_end(&mut body).is_err() {
                return error_reply(400, "the request body could not be read");
            }
            let body = if body.iter().all(|b| b.is_ascii_whitespace()) { b"{}".to_vec() } else { body };
            match api(state, &p[5..], &body) {
                Ok(v) => json_reply(200, &v),
                Err(ApiError(status, msg)) => error_reply(status, msg),
            }
        }
        (_, p) if p.starts_with("/api/") => error_reply(405, "API methods are called with POST and a JSON body"),
        _ => error_reply(404, format!("nothing at {path}: the panels are at /")),
    }
}

struct ApiError(u16, String);

impl From<panel::PanelError> for ApiError {
    fn from(e: panel::PanelError) -> Self {
        let status = match e {
            panel::PanelError::UnknownArtifact { .. } | panel::PanelError::UnknownThread(_) => 404,
            panel::PanelError::Analysis(_) => 422,
        };
        ApiError(status, e.to_string())
    }
}

fn parse<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError(400, format!("the request is not valid for this method: {e}")))
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(v).map_err(|e| ApiError(500, e.to_string()))
}

#[derive(Deserialize)]
struct FilterRequest {
    exclude_threads: Option<Vec<ThreadId>>,
}

#[derive(Deserialize)]
struct RunsRequest {
    select: Option<String>,
}

/// `compare`: the parameters of the language server's `threadRadar/compare`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct CompareRequest {
    base: Option<String>,
    new: Option<String>,
    level: Option<String>,
    top: Option<usize>,
    include: Vec<String>,
    exclude: Vec<String>,
    hide_stdlib: bool,
    hide_third_party: bool,
}

#[derive(Deserialize)]
struct NavigateRequest {
    file: String,
    #[serde(default)]
    line: u32,
}

fn api(state: &State, method: &str, body: &[u8]) -> Result<serde_json::Value, ApiError> {
    let panels = state.current.lock().unwrap_or_else(|e| e.into_inner()).panels.clone();
    match method {
        "overview" => to_json(&panels.overview(&parse::<OverviewRequest>(body)?)?),
        "detail" => to_json(&panels.detail(&parse::<DetailRequest>(body)?)?),
        "threads" => to_json(&panels.threads(&parse::<ThreadsRequest>(body)?)?),
        "glyph" => Ok(serde_json::json!({ "svg": panels.glyph(&parse::<GlyphRequest>(body)?)? })),
        "filter" => {
            let req: FilterRequest = parse(body)?;
            let mut cur = state.current.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(mut ids) = req.exclude_threads {
                let n = cur.panels.run().threads.len();
                if let Some(bad) = ids.iter().find(|&&t| t as usize >= n) {
                    return Err(ApiError(404, format!("no thread with id {bad} in this run")));
                }
                ids.sort_unstable();
                ids.dedup();
                cur.filter = ids;
            }
            Ok(serde_json::json!({ "exclude_threads": cur.filter }))
        }
        "runs" => {
            let req: RunsRequest = parse(body)?;
            let runs = match &state.dir {
                Some(d) => runfile::list_runs(d).map_err(|e| ApiError(500, format!("cannot list {}: {e}", d.display())))?,
                None => vec![state.current.lock().unwrap_or_else(|e| e.into_inner()).path.clone()],
            };
            if let Some(sel) = req.select {
                let Some(p) = runs.iter().find(|p| p.to_string_lossy() == sel) else {
                    return Err(ApiError(404, format!("no run {sel} in the served directory")));
                };
                let run = runfile::read(p).map_err(|e| ApiError(422, e.to_string()))?;
                let mut cur = state.current.lock().unwrap_or_else(|e| e.into_inner());
                *cur = Current { path: p.clone(), panels: Arc::new(Panels::new(run)), filter: Vec::new() };
            }
            let current = state.current.lock().unwrap_or_else(|e| e.into_inner()).path.clone();
            let list: Vec<serde_json::Value> = runs
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "path": p.to_string_lossy(),
                        "name": p.file_name().map_or_else(|| p.to_string_lossy().into_owned(), |n| n.to_string_lossy().into_owned()),
                        "current": *p == current,
                    })
                })
                .collect();
            Ok(serde_json::json!({ "runs": list, "current": current.to_string_lossy() }))
        }
        "compare" => compare(state, parse(body)?),
        "navigate" => {
            let req: NavigateRequest = parse(body)?;
            let shown = format!("{}:{}", req.file, req.line.max(1));
            // Paths come from the profiled program: no terminal control characters.
            let printable: String = shown.chars().map(|c| if c.is_control() { '?' } else { c }).collect();
            // The browser cannot open an editor: the request is printed for the user (and tests).
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "navigate {printable}");
            let _ = out.flush();
            Ok(serde_json::json!({ "ok": true, "shown": shown }))
        }
        other => Err(ApiError(404, format!("no API method {other:?}: overview, detail, glyph, threads, filter, runs, compare, navigate"))),
    }
}

/// `compare`: two runs of the served directory side by side (by default the shown run against the
/// run recorded before it). The thread filter does not apply: thread ids differ between runs.
fn compare(state: &State, req: CompareRequest) -> Result<serde_json::Value, ApiError> {
    let Some(dir) = &state.dir else {
        return Err(ApiError(409, "serve a directory of runs to compare them: threadradar serve .threadradar/runs".into()));
    };
    let runs = runfile::list_runs(dir).map_err(|e| ApiError(500, format!("cannot list {}: {e}", dir.display())))?;
    let find = |w: &str| -> Result<PathBuf, ApiError> {
        runs.iter()
            .find(|p| p.to_string_lossy() == w || p.file_name().is_some_and(|n| n.to_string_lossy() == w))
            .cloned()
            .ok_or_else(|| ApiError(404, format!("no run {w:?} in the served directory: `runs` lists them")))
    };
    let current = state.current.lock().unwrap_or_else(|e| e.into_inner()).path.clone();
    let new_path = match req.new.as_deref() {
        Some(n) => find(n)?,
        None => current.clone(),
    };
    let base_path = match req.base.as_deref() {
        Some(b) => find(b)?,
        // Runs are listed newest first: the next one is the run recorded before.
        None => runs.iter().position(|p| *p == new_path).and_then(|i| runs.get(i + 1)).cloned().ok_or_else(|| {
            ApiError(409, "there is no earlier run to compare with: record another run (e.g. after a fix) with `threadradar record`".into())
        })?,
    };
    let level = match req.level.as_deref() {
        None | Some("function") => Level::Function,
        Some("class") => Level::Class,
        Some("file") => Level::File,
        Some(l) => return Err(ApiError(400, format!("unknown level {l:?}: function, class or file"))),
    };
    let mut filter = ArtifactFilter::new(&req.include, &req.exclude).map_err(|e| ApiError(422, e.to_string()))?;
    if req.hide_stdlib {
        filter = filter.hide(FileKind::Stdlib);
    }
    if req.hide_third_party {
        filter = filter.hide(FileKind::ThirdParty);
    }
    // The shown run is loaded already (with its analyses cached); another is read.
    let shown = {
        let cur = state.current.lock().unwrap_or_else(|e| e.into_inner());
        (cur.path.clone(), cur.panels.clone())
    };
    let load = |p: &Path| -> Result<Arc<Panels>, ApiError> {
        if *p == shown.0 {
            return Ok(shown.1.clone());
        }
        runfile::read(p).map(|r| Arc::new(Panels::new(r))).map_err(|e| ApiError(422, e.to_string()))
    };
    let base = load(&base_path)?;
    let new = if new_path == base_path { base.clone() } else { load(&new_path)? };
    // Counted states as the panels count by default (computing).
    let params = Params::default();
    let (ba, na) = (base.analysis(&params)?, new.analysis(&params)?);
    let opts = CompareOptions { level, filter, top: req.top };
    let mut c = Comparison::build(base.run(), &ba, new.run(), &na, &opts).map_err(|e| ApiError(422, e.to_string()))?;
    c.base.path = Some(base_path.to_string_lossy().into_owned());
    c.new.path = Some(new_path.to_string_lossy().into_owned());
    to_json(&c)
}
