//! `threadradar serve RUN|DIR [--port P]`: the overview and detail panels in a browser.
//!
//! A small blocking HTTP server (tiny_http) bound to 127.0.0.1 only. `GET /` is the web app
//! (`web/`, compiled into the binary, scripts and styles inlined under a per-response CSP nonce);
//! `POST /api/<method>` answers the panel protocol (`threadradar_lsp::protocol`) through the same
//! dispatcher as the language server's `threadRadar/<method>`; this file only says what a
//! served directory is (its runs, the shown one, the applied thread filter) and prints
//! navigation requests (`navigate FILE:LINE`).

use anyhow::{bail, Context};
use clap::Args;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use threadradar_analysis::panel::Params;
use threadradar_analysis::Window;
use threadradar_lsp::config::Settings;
use threadradar_lsp::figures::Figures;
use threadradar_lsp::handlers;
use threadradar_lsp::host::{Defaults, DiskDocuments, DocRef, FiguresCache, Host};
use threadradar_lsp::mapping::Mapping;
use threadradar_lsp::protocol::{ErrorCode, NavigateResult, ProtocolError};
use threadradar_lsp::runs::{self, LoadedRun, RunEntry};
use threadradar_lsp::text::Document;
use threadradar_profiler::sourceroots::SourceRoots;
use threadradar_profiler::run::ThreadId;
use threadradar_profiler::{runfile, runset};
use tiny_http::{Header, Method, Response, Server};

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// A run file, or a directory of runs (the newest is shown; the page can switch); a run set
    /// (`record --repeat N`) or runs separated by commas (`a1.json,a2.json`) show their first run
    /// [default: .threadradar/runs]
    pub run: Option<PathBuf>,

    /// Another run (file) to compare with as a trace: prints the address of the Trace compare
    /// tab with RUN as A (above) and this run as B (below). A run set or a comma list here or as
    /// RUN also prints the address of the Compare tab on the two sets (each change tested
    /// against the sets' spread).
    #[arg(long, value_name = "RUN_B")]
    pub compare: Option<PathBuf>,

    /// Port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 7878)]
    pub port: u16,

    #[arg(long, value_name = "CONTAINER_PATH=HOST_PATH", help = super::sourceroot::HELP)]
    pub source_root: Vec<String>,

    #[command(flatten)]
    pub units: super::runpath::UnitsArg,
}

const INDEX: &str = include_str!("../../web/index.html");
const STYLE: &str = include_str!("../../web/style.css");
const TIMELINE_STYLE: &str = include_str!("../../web/timeline.css");
const TRANSPORT: &str = include_str!("../../web/transport.js");
const DOM: &str = include_str!("../../web/dom.js");
const TIMELINE: &str = include_str!("../../web/timeline.js");
const WAITS: &str = include_str!("../../web/waits.js");
const WAITS_STYLE: &str = include_str!("../../web/waits.css");
const APP: &str = include_str!("../../web/app.js");
const SECTIONS: &str = include_str!("../../web/sections.js");
const SECTIONS_STYLE: &str = include_str!("../../web/sections.css");
const TRACECOMPARE: &str = include_str!("../../web/tracecompare.js");
const TRACECOMPARE_STYLE: &str = include_str!("../../web/tracecompare.css");

/// The web app as one HTML document: styles and scripts inlined under `nonce`, and `data`
/// (JSON, or `null` when served) embedded for the static export's transport.
pub(crate) fn page(nonce: &str, data_json: &str) -> String {
    let csp = format!(
        "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'"
    );
    // `<` inside the JSON would let a name like `</script>` end the data block.
    let data = data_json.replace('<', "\\u003c");
    let script = format!("{TRANSPORT}\n{DOM}\n{TIMELINE}\n{SECTIONS}\n{WAITS}\n{TRACECOMPARE}\n{APP}");
    let style = format!("{STYLE}\n{TIMELINE_STYLE}\n{SECTIONS_STYLE}\n{WAITS_STYLE}\n{TRACECOMPARE_STYLE}");
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
            "STYLE" => out.push_str(&style),
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

/// The served directory (or run) as a protocol host: the same handlers as the language server.
struct State {
    dir: Option<PathBuf>,
    /// Runs named on the command line besides the shown one (the members of run sets), listed by
    /// `runs` when a single run is served (canonical paths).
    named: Vec<PathBuf>,
    current: Mutex<Current>,
    generation: AtomicU64,
    figures: FiguresCache,
    disk: DiskDocuments,
    port: u16,
    /// Applied to every run this server loads.
    roots: SourceRoots,
    /// `--units`: every run this server loads is shown with them.
    units: super::runpath::UnitsArg,
    /// `--compare RUN_B` (a set's first run): the Trace compare tab's default B.
    compare: Option<PathBuf>,
}

struct Current {
    loaded: Arc<LoadedRun>,
    /// The applied thread filter.
    filter: Vec<ThreadId>,
    /// The applied time window.
    window: Option<Window>,
    /// A run was chosen with `runs {select}`.
    pinned: bool,
}

impl State {
    fn current(&self) -> std::sync::MutexGuard<'_, Current> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn load(&self, path: &Path) -> Result<Arc<LoadedRun>, ProtocolError> {
        let mut run = runfile::read(path).map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, e.to_string()))?;
        self.roots.apply(&mut run);
        let run = self.units.apply(run).map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, e.to_string()))?;
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(Arc::new(LoadedRun::new(generation, path.to_path_buf(), run)))
    }
}

impl Host for State {
    fn active(&self) -> Result<Arc<LoadedRun>, ProtocolError> {
        Ok(self.current().loaded.clone())
    }

    fn defaults(&self) -> Defaults {
        let cur = self.current();
        Defaults { exclude_threads: cur.filter.clone(), window: cur.window, ..Defaults::default() }
    }

    fn settings(&self) -> Settings {
        Settings::default()
    }

    fn runs(&self) -> (Vec<RunEntry>, bool) {
        let cur = self.current();
        let dir = self.dir.clone().unwrap_or_else(|| cur.loaded.path.parent().unwrap_or(Path::new(".")).to_path_buf());
        let mut list = runs::list_dir(&dir);
        if self.dir.is_none() {
            // The served run, and the runs of the sets named with it (their own directories).
            let named = |p: &Path| self.named.iter().any(|n| p.canonicalize().is_ok_and(|c| &c == n));
            list.retain(|r| r.path == cur.loaded.path || named(&r.path));
            let mut dirs: Vec<PathBuf> = self.named.iter().filter_map(|n| n.parent().map(Path::to_path_buf)).collect();
            dirs.dedup();
            for d in dirs.into_iter().filter(|d| dir.canonicalize().ok().as_ref() != Some(d)) {
                list.extend(runs::list_dir(&d).into_iter().filter(|r| named(&r.path) && r.path != cur.loaded.path));
            }
            list.dedup_by(|a, b| a.path == b.path);
        }
        // A workspace's `.threadradar/runs` belongs to the workspace folder, as in the editor.
        if dir.ends_with(".threadradar/runs") {
            let folder = dir.parent().and_then(Path::parent).unwrap_or(&dir).to_path_buf();
            list.iter_mut().for_each(|r| r.folder = folder.clone());
        }
        (list, cur.pinned)
    }

    fn select_run(&self, which: &str) -> Result<(), ProtocolError> {
        let (list, _) = self.runs();
        let newest = which == "newest" || which == "latest";
        let Some(entry) = (if newest { list.first() } else { list.iter().find(|r| r.path.to_string_lossy() == which || r.name == which) }) else {
            return Err(ProtocolError::not_found(format!("no run {which} in the served directory: the `runs` method lists them")));
        };
        let loaded = self.load(&entry.path)?;
        self.figures.clear();
        self.disk.clear();
        *self.current() = Current { loaded, filter: Vec::new(), window: None, pinned: !newest };
        Ok(())
    }

    fn set_filter(&self, exclude: Vec<ThreadId>) -> Result<(), ProtocolError> {
        self.current().filter = exclude;
        Ok(())
    }

    fn set_window(&self, window: Option<Window>) -> Result<(), ProtocolError> {
        self.current().window = window;
        Ok(())
    }

    fn figures(&self) -> Result<(Arc<LoadedRun>, Arc<Figures>), ProtocolError> {
        let (loaded, params) = {
            let cur = self.current();
            (cur.loaded.clone(), Params { exclude_threads: cur.filter.clone(), states: Default::default(), window: cur.window })
        };
        let f = self.figures.get(&loaded, &params)?;
        Ok((loaded, f))
    }

    fn document(&self, doc: &DocRef, loaded: &LoadedRun, file_key: &str) -> Option<(Arc<Document>, Arc<Mapping>)> {
        self.disk.get(&doc.path, loaded, file_key)
    }

    /// The browser cannot open an editor: the request is printed for the user (and tests).
    fn navigate(&self, file: &str, line: u32) -> Result<NavigateResult, ProtocolError> {
        let shown = format!("{file}:{}", line.max(1));
        // Paths come from the profiled program: no terminal control characters.
        let printable: String = shown.chars().map(|c| if c.is_control() { '?' } else { c }).collect();
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "navigate {printable}");
        let _ = out.flush();
        Ok(NavigateResult { ok: true, shown })
    }

    fn compare_with(&self) -> Option<PathBuf> {
        self.compare.clone()
    }
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    // Each side: a run, a directory (its newest run), a run set or a comma list of them; the
    // first run of a set is the one shown.
    let side = |arg: &Path| -> anyhow::Result<(Vec<PathBuf>, bool)> {
        let list = runset::split_list(arg);
        let mut members = Vec::new();
        let mut set = list.len() > 1;
        for p in &list {
            let p = super::runpath::resolve_run_path(Some(p))?;
            set |= runset::is_runset(&p);
            members.extend(runset::members(&p)?);
        }
        // A set's runs by their canonical paths: the page picks them out of `runs` by path.
        if set {
            members = members.into_iter().map(|m| m.canonicalize().unwrap_or(m)).collect();
        }
        Ok((members, set))
    };
    let (a_members, a_set) = match args.run.as_deref().filter(|p| !p.is_dir()) {
        Some(p) => side(p)?,
        None => (vec![super::runpath::resolve_run_path(args.run.as_deref())?], false),
    };
    let dir = args.run.as_deref().filter(|p| p.is_dir()).map(Path::to_path_buf);
    let path = a_members[0].clone();
    let mut run = runfile::read(&path)?;
    // The project's `source-roots` (a bad configuration is said once, and not used).
    let config = std::env::current_dir().ok().and_then(|d| {
        threadradar_profiler::config::ProjectConfig::load(&d).map_err(|e| eprintln!("threadradar: {e} (serving without its source-roots until it is fixed)")).ok()
    });
    let roots = super::sourceroot::roots(&args.source_root, config.as_ref())?;
    roots.apply(&mut run);
    let run = args.units.apply(run)?;
    // The second run (or set) is read once here, so that a wrong path is said before serving.
    let (compare, b_members, b_set) = match args.compare.as_deref() {
        Some(b) => {
            let (members, set) = side(b)?;
            for m in &members {
                runfile::read(m).with_context(|| format!("cannot compare with {}", m.display()))?;
            }
            (Some(members[0].clone()), members, set)
        }
        None => (None, Vec::new(), false),
    };
    for m in a_members.iter().skip(1) {
        runfile::read(m)?;
    }
    let named: Vec<PathBuf> = a_members.iter().chain(&b_members).filter_map(|p| p.canonicalize().ok()).collect();
    let loaded = Arc::new(LoadedRun::new(1, path.clone(), run));
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
        named,
        current: Mutex::new(Current { loaded, filter: Vec::new(), window: None, pinned: false }),
        generation: AtomicU64::new(1),
        figures: FiguresCache::default(),
        disk: DiskDocuments::default(),
        port,
        roots,
        units: args.units,
        compare: compare.clone(),
    });
    let mut out = std::io::stdout().lock();
    writeln!(out, "ThreadRadar panels for {}: http://127.0.0.1:{port}/", path.display())?;
    if let Some(b) = &compare {
        // The paths as given: the server resolves them as it resolved them here.
        let (a_text, b_text) = (path.display().to_string(), b.display().to_string());
        writeln!(out, "Trace compare of A = {a_text} and B = {b_text}: http://127.0.0.1:{port}/?view=tracecompare&a={}&b={}", query(&a_text), query(&b_text))?;
        if a_set || b_set {
            let list = |m: &[PathBuf]| m.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(",");
            let (base, new) = (list(&a_members), list(&b_members));
            writeln!(
                out,
                "Compare of the run sets base = {base} ({} runs) and new = {new} ({} runs): http://127.0.0.1:{port}/?view=compare&base={}&new={}",
                a_members.len(),
                b_members.len(),
                query(&base),
                query(&new)
            )?;
        }
    }
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
                Err(e) => json_reply(e.code.http_status(), &e.http_body()),
            }
        }
        (_, p) if p.starts_with("/api/") => error_reply(405, "API methods are called with POST and a JSON body"),
        _ => error_reply(404, format!("nothing at {path}: the panels are at /")),
    }
}

/// `POST /api/<method>`: the protocol's one dispatcher, exactly as the language server calls it.
fn api(state: &State, method: &str, body: &[u8]) -> Result<serde_json::Value, ProtocolError> {
    let params: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| ProtocolError::invalid(format!("the request body is not JSON: {e}")))?;
    handlers::dispatch(state, method, params)
}

/// A query parameter's value, percent-encoded (RFC 3986 unreserved characters and `/` kept).
fn query(v: &str) -> String {
    v.bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}
