//! `threadradar mcp`: a Model Context Protocol server over stdio (the official Rust SDK, `rmcp`),
//! so coding agents can ask for the same figures the editor shows: the hottest functions and
//! classes with their radars, the threads that ran one of them, and what changed between two
//! runs, in words.
//!
//! The tools are thin: they read runs from the server's working directory (`.threadradar/runs`).
//! `hottest_artifacts` and `artifact_threads` hand them to `analysis` (`ReportView`) as `report`
//! does; `waits`, `critical_sections`, `compare_runs` and `run_history` ask the panel protocol's
//! own handlers through [`host::McpHost`] (the dispatcher the language server and `serve` use), so
//! their figures are the panels' ([`views`] writes them as text). `record` and `profile_test`
//! ([`jobs`]) run this binary's `record` / `test` with progress and cancellation: `record` only a
//! command the user configured (`--record-command`), `profile_test` only a test pytest's rules
//! find, by the rules the editor's `threadradar.profileTest` uses (`threadradar_lsp::test_job`).

mod host;
mod jobs;
mod views;

use clap::Args;
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, Content, Implementation, ServerCapabilities, ServerInfo};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use threadradar_analysis::{Analysis, ArtifactFilter, Level, Options, ReportView, ViewOptions};
use threadradar_profiler::run::{FileKind, Run};
use threadradar_profiler::runfile;

#[derive(Args, Debug)]
pub struct McpArgs {
    /// A command the `record` tool may run, as one command line quoted as in a shell (e.g.
    /// `python3 -c "import app; app.main()"`); repeat for more. Without one, agents cannot record.
    #[arg(long, value_name = "COMMAND")]
    pub record_command: Vec<String>,
}

pub fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let cwd = std::env::current_dir()?;
    let commands = args.record_command.iter().map(|c| threadradar_lsp::cmdline::split(c)).collect::<Result<Vec<_>, _>>().map_err(|e| anyhow::anyhow!("--record-command: {e}"))?;
    let commands: Vec<Vec<String>> = commands.into_iter().filter(|c| !c.is_empty()).collect();
    rt.block_on(async {
        let service = Radar::new(&cwd).with_record_commands(commands).serve(rmcp::transport::stdio()).await.map_err(|e| anyhow::anyhow!("cannot start the MCP session: {e}"))?;
        service.waiting().await.map_err(|e| anyhow::anyhow!("the MCP session failed: {e}"))?;
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct HottestParams {
    /// A run file or a directory of runs; default: the newest run in .threadradar/runs.
    pub run: Option<String>,
    /// `function` (default) or `class`.
    pub level: Option<String>,
    /// How many to list (default 10).
    pub top: Option<usize>,
    /// Include the standard library and third-party packages (default false: only the program's own code).
    pub include_libraries: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ThreadsParams {
    /// A run file or a directory of runs; default: the newest run in .threadradar/runs.
    pub run: Option<String>,
    /// Qualified name of a function or class, e.g. `Worker.run` or `Worker`.
    pub artifact: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CompareParams {
    /// The run before the change; default: the run before the newest one.
    pub before: Option<String>,
    /// The run after the change; default: the newest run.
    pub after: Option<String>,
    /// Several runs of the program before the change (e.g. the runs `record --repeat 5` made), instead
    /// of `before`: every change is then tested against the runs' own spread.
    pub before_runs: Option<Vec<String>>,
    /// Several runs after the change, instead of `after`.
    pub after_runs: Option<Vec<String>>,
    /// How many changed artifacts to describe (default 10).
    pub top: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitsParams {
    /// A run file or a directory of runs; default: the newest run in .threadradar/runs.
    pub run: Option<String>,
    /// Only objects whose label, type or name contains this (case-insensitive), e.g. `Queue` or `not_empty`.
    pub object: Option<String>,
    /// Start of the time range, seconds from the run's start (default: the whole run).
    pub from_s: Option<f64>,
    /// End of the time range, seconds from the run's start.
    pub to_s: Option<f64>,
    /// Ignore the run's kernel scheduler events: infer every wake-up from the samples (default false).
    pub no_kernel: Option<bool>,
    /// How many waker → wakee pairs to list (default 15).
    pub top: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SectionsParams {
    /// A run file or a directory of runs; default: the newest run in .threadradar/runs.
    pub run: Option<String>,
    /// An execution longer than this many medians is an outlier (default 5).
    pub outlier_factor: Option<f64>,
    /// An execution longer than this quantile of its section is an outlier (default 0.99).
    pub outlier_quantile: Option<f64>,
    /// How many outliers to list per section, longest first (default 10).
    pub top: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RecordParams {
    /// The command to record, exactly as configured with `threadradar mcp --record-command`
    /// (default: the only configured one).
    pub command: Option<String>,
    /// Stop recording (and end the program) after this many seconds; at most 600.
    pub duration_s: f64,
    /// Follow child processes too (default false).
    pub subprocesses: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ProfileTestParams {
    /// The test file, relative to the server's working directory or absolute.
    pub file: String,
    /// The test as pytest names it within the file: `test_name` or `TestClass::test_name`; omit to run the whole file.
    pub test: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct HistoryParams {
    /// How many runs to list, newest first (default 20).
    pub top: Option<usize>,
}

#[derive(Clone)]
pub struct Radar {
    tool_router: ToolRouter<Self>,
    host: Arc<host::McpHost>,
    /// The working directory: the project whose runs and tests the tools use.
    cwd: PathBuf,
    /// Commands the user allowed `record` to run (`--record-command`).
    record_commands: Arc<Vec<Vec<String>>>,
    /// One recording at a time, as in the editor.
    busy: Arc<std::sync::Mutex<Option<String>>>,
}

/// Marks the server busy with `what` until dropped.
struct Busy(Arc<std::sync::Mutex<Option<String>>>);

impl Busy {
    fn take(slot: &Arc<std::sync::Mutex<Option<String>>>, what: &str) -> Result<Busy, String> {
        let mut s = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(other) = s.as_ref() {
            return Err(format!("{other} is being recorded: wait for it to end (or cancel that request) first"));
        }
        *s = Some(what.to_string());
        Ok(Busy(slot.clone()))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// A protocol error as a tool's refusal: its sentence.
fn protocol_refusal(e: threadradar_lsp::protocol::ProtocolError) -> CallToolResult {
    refusal(e.message)
}

/// A tool's answer when its input is wrong: one sentence, returned as a tool error so the agent
/// can correct itself, not as a protocol failure.
fn refusal(e: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![Content::text(e.to_string())])
}

fn load(run: Option<&str>) -> anyhow::Result<(PathBuf, Run)> {
    let path = super::runpath::resolve_run_path(run.map(Path::new))?;
    let r = runfile::read(&path)?;
    Ok((path, r))
}

/// Commands as a list for a sentence: `a b`, `c d`.
fn quoted(commands: &[Vec<String>]) -> String {
    commands.iter().map(|c| format!("`{}`", c.join(" "))).collect::<Vec<_>>().join(", ")
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// How a run's figures were obtained, said once per answer.
fn provenance(run: &Run, path: &Path) -> String {
    let how = match &run.meta.imported {
        Some(i) => format!("imported from {} ({}); {}", i.file, i.format, i.note),
        None => format!("sampled every {} ms by threadradar record", run.meta.interval_ms),
    };
    format!("Run {} ({}): {} samples over {:.2} s, {} threads; {how}", path.display(), run.meta.command.join(" "), run.meta.sample_count, run.meta.duration_s, run.threads.len())
}

#[tool_router]
impl Radar {
    pub fn new(cwd: &Path) -> Self {
        Radar {
            tool_router: Self::tool_router(),
            host: Arc::new(host::McpHost::new(cwd)),
            cwd: cwd.to_path_buf(),
            record_commands: Arc::new(Vec::new()),
            busy: Arc::default(),
        }
    }

    pub fn with_record_commands(mut self, commands: Vec<Vec<String>>) -> Self {
        self.record_commands = Arc::new(commands);
        self
    }

    /// Makes `run` the host's active run and asks `method` of it; the answer starts with the
    /// run and how its figures were obtained.
    fn ask(&self, run: Option<&str>, method: &str, params: serde_json::Value) -> Result<(String, serde_json::Value), CallToolResult> {
        let loaded = self.host.activate(run).map_err(protocol_refusal)?;
        let answer = self.host.call(method, params).map_err(protocol_refusal)?;
        Ok((provenance(loaded.run(), &loaded.path), answer))
    }

    #[tool(description = "The hottest functions or classes of a ThreadRadar run, highest crt (share of the program's counted thread-samples) first, each with its ThreadRadar (thread clusters: average and summed level, thread count), thread count, thread types and source location.")]
    async fn hottest_artifacts(&self, Parameters(p): Parameters<HottestParams>) -> Result<CallToolResult, McpError> {
        let (path, run) = match load(p.run.as_deref()) {
            Ok(x) => x,
            Err(e) => return Ok(refusal(format!("{e:#}"))),
        };
        let level = match p.level.as_deref().unwrap_or("function") {
            "function" => Level::Function,
            "class" => Level::Class,
            other => return Ok(refusal(format!("level {other:?} is not known: use \"function\" or \"class\""))),
        };
        let mut filter = ArtifactFilter::all();
        if !p.include_libraries.unwrap_or(false) {
            filter = filter.hide(FileKind::Stdlib).hide(FileKind::ThirdParty);
        }
        let analysis = match Analysis::new(&run, &Options::default()) {
            Ok(a) => a,
            Err(e) => return Ok(refusal(e)),
        };
        let view = match ReportView::build(&run, &analysis, &ViewOptions { level, top: Some(p.top.unwrap_or(10)), filter, max_edges: 0 }) {
            Ok(v) => v,
            Err(e) => return Ok(refusal(format!("{e}"))),
        };
        let mut text = provenance(&run, &path);
        let _ = writeln!(text, "\nRadar cells read `▂▅×9`: a cluster's average level, its summed level (three levels: < 33 %, < 66 %, ≥ 66 %), and its threads.");
        for a in &view.artifacts {
            let radar: Vec<String> = a.glyph.iter().map(|c| c.to_string()).collect();
            let _ = writeln!(
                text,
                "- {} ({}:{}): crt {} ({:.2} s), self {}, {} threads of {} types, radar {}",
                a.qualname,
                a.file,
                a.line,
                pct(a.crt),
                a.seconds,
                pct(a.self_crt),
                a.threads,
                a.thread_types,
                radar.join(" ")
            );
        }
        if view.artifacts.is_empty() {
            let _ = writeln!(text, "No {} of the program's own code was sampled; ask again with include_libraries.", if level == Level::Class { "class" } else { "function" });
        }
        Ok(CallToolResult::success(vec![Content::text(text)]))
    }

    #[tool(description = "The threads that ran one function or class of a ThreadRadar run: each thread's name, type, its crt(a, th) (its share of the artifact's samples) and its cluster (low, middle, high).")]
    async fn artifact_threads(&self, Parameters(p): Parameters<ThreadsParams>) -> Result<CallToolResult, McpError> {
        let (path, run) = match load(p.run.as_deref()) {
            Ok(x) => x,
            Err(e) => return Ok(refusal(format!("{e:#}"))),
        };
        let analysis = match Analysis::new(&run, &Options::default()) {
            Ok(a) => a,
            Err(e) => return Ok(refusal(e)),
        };
        let mut found = None;
        for level in [Level::Function, Level::Class] {
            let view = match ReportView::build(&run, &analysis, &ViewOptions { level, top: None, filter: ArtifactFilter::all(), max_edges: 0 }) {
                Ok(v) => v,
                Err(e) => return Ok(refusal(format!("{e}"))),
            };
            if let Some(a) = view.artifacts.iter().find(|a| a.qualname == p.artifact) {
                found = Some((a.clone(), view.threads.clone()));
                break;
            }
        }
        let Some((a, threads)) = found else {
            return Ok(refusal(format!("no function or class named {:?} was sampled in {}: ask hottest_artifacts for the names", p.artifact, path.display())));
        };
        let mut text = provenance(&run, &path);
        let _ = writeln!(text, "\n{} ({}:{}): crt {}, {} threads of {} types.", a.qualname, a.file, a.line, pct(a.crt), a.threads, a.thread_types);
        let names = ["low", "middle", "high"];
        for share in &a.per_thread {
            let t = threads.iter().find(|t| t.id == share.thread);
            let cluster = a.clusters.iter().position(|c| c.threads.contains(&share.thread)).map(|i| {
                let n = a.clusters.len();
                if n == 3 { names[i] } else if n == 2 { ["low", "high"][i] } else { "single" }
            });
            let _ = writeln!(
                text,
                "- {} (type {}, tid {}): crt(a,th) {}, {} samples, {:.3} s, cluster {}",
                t.map_or("?", |t| t.name.as_str()),
                t.map_or("?", |t| t.thread_type.as_str()),
                t.map_or(0, |t| t.tid),
                pct(share.crt),
                share.samples,
                share.seconds,
                cluster.unwrap_or("-")
            );
        }
        Ok(CallToolResult::success(vec![Content::text(text)]))
    }

    #[tool(description = "Compare two ThreadRadar runs (before and after a change) as the compare panel does — or two run sets (before_runs/after_runs: repeated runs of each version), where every change is marked significant or within the runs' own noise: what changed in words, program totals, then the functions whose crt changed most, with their thread counts, clusters and radars before and after.")]
    async fn compare_runs(&self, Parameters(p): Parameters<CompareParams>) -> Result<CallToolResult, McpError> {
        // The protocol compares the active run (`new`) with `base`, by default the run before it.
        let resolve = |r: &str| super::runpath::resolve_run_path(Some(Path::new(r))).map(|p| p.display().to_string());
        let before = match p.before.as_deref().map(resolve).transpose() {
            Ok(b) => b,
            Err(e) => return Ok(refusal(format!("{e:#}"))),
        };
        let sets = |runs: &Option<Vec<String>>| -> Result<Option<Vec<String>>, String> {
            runs.as_ref().map(|rs| rs.iter().map(|r| resolve(r).map_err(|e| format!("{e:#}"))).collect()).transpose()
        };
        let (before_runs, after_runs) = match (sets(&p.before_runs), sets(&p.after_runs)) {
            (Ok(b), Ok(a)) => (b, a),
            (Err(e), _) | (_, Err(e)) => return Ok(refusal(e)),
        };
        if before_runs.is_some() && before.is_some() || after_runs.is_some() && p.after.is_some() {
            return Ok(refusal("give a side either one run (before/after) or a run set (before_runs/after_runs), not both"));
        }
        let new = match &after_runs {
            Some(_) => None,
            None => match self.host.activate(p.after.as_deref()) {
                Ok(l) => Some(l.path.display().to_string()),
                Err(e) => return Ok(protocol_refusal(e)),
            },
        };
        let params = serde_json::json!({
            "base": before,
            "new": new,
            "base_runs": before_runs,
            "new_runs": after_runs,
            "level": "function",
            "top": p.top.unwrap_or(10),
            "hide_stdlib": true,
            "hide_third_party": true,
        });
        match self.host.call("compare", params) {
            Ok(c) => Ok(CallToolResult::success(vec![Content::text(views::compare(&c))])),
            Err(e) => Ok(protocol_refusal(e)),
        }
    }

    #[tool(description = "Who waited for whom in a ThreadRadar run, as the waits panel shows it: every object threads waited on (locks, conditions, queues, events, pipes, the GIL) with its waits, total and p50/p95 wait, futile wake-ups, waiters and wakers, then the busiest waker → wakee pairs with the evidence of each edge (kernel-exact or inferred).")]
    async fn waits(&self, Parameters(p): Parameters<WaitsParams>) -> Result<CallToolResult, McpError> {
        let params = serde_json::json!({ "object": p.object, "from_s": p.from_s, "to_s": p.to_s, "no_kernel": p.no_kernel.unwrap_or(false) });
        match self.ask(p.run.as_deref(), "waits", params) {
            Ok((head, r)) => Ok(CallToolResult::success(vec![Content::text(format!("{head}\n{}", views::waits(&r, p.top.unwrap_or(15), p.object.as_deref())))])),
            Err(refused) => Ok(refused),
        }
    }

    #[tool(description = "The critical sections of a ThreadRadar run's program (with-blocks and acquire/release pairs found in its source), as the sections panel shows them: executions, hold time, median/p95/p99/max, variability, how long others waited to enter, and the outlier executions with their thread and time.")]
    async fn critical_sections(&self, Parameters(p): Parameters<SectionsParams>) -> Result<CallToolResult, McpError> {
        let params = serde_json::json!({ "outlier_factor": p.outlier_factor, "outlier_quantile": p.outlier_quantile });
        match self.ask(p.run.as_deref(), "sections", params) {
            Ok((head, r)) => Ok(CallToolResult::success(vec![Content::text(format!("{head}\n{}", views::sections(&r, p.top.unwrap_or(10))))])),
            Err(refused) => Ok(refused),
        }
    }

    #[tool(description = "Record a command of the project with threadradar (only a command the user configured with `threadradar mcp --record-command`), for at most duration_s seconds; then the program is stopped. Reports progress and can be cancelled (the run sampled so far is kept). Answers with the run's path, how recording ended and the program's exit.")]
    async fn record(&self, Parameters(p): Parameters<RecordParams>, ctx: RequestContext<RoleServer>) -> Result<CallToolResult, McpError> {
        let allowed = self.record_commands.as_slice();
        let command = match (&p.command, allowed) {
            (_, []) => return Ok(refusal("no command may be recorded: the user allows commands with `threadradar mcp --record-command \"python3 app.py\"` in the MCP server's configuration")),
            (None, [only]) => only.clone(),
            (None, _) => return Ok(refusal(format!("name the command to record: one of {}", quoted(allowed)))),
            (Some(c), _) => {
                let wanted = match threadradar_lsp::cmdline::split(c) {
                    Ok(w) => w,
                    Err(e) => return Ok(refusal(e)),
                };
                match allowed.iter().find(|a| **a == wanted) {
                    Some(a) => a.clone(),
                    None => return Ok(refusal(format!("{c:?} is not a configured command: the user allows {}", quoted(allowed)))),
                }
            }
        };
        if !(p.duration_s.is_finite() && p.duration_s > 0.0 && p.duration_s <= 600.0) {
            return Ok(refusal(format!("duration_s is {}: give the recording's limit in seconds, more than 0 and at most 600", p.duration_s)));
        }
        let what = format!("`{}`", command.join(" "));
        let _busy = match Busy::take(&self.busy, &what) {
            Ok(b) => b,
            Err(e) => return Ok(refusal(e)),
        };
        let req = threadradar_lsp::recording::RecordRequest { command, cwd: self.cwd.clone(), subprocesses: p.subprocesses.unwrap_or(false), duration: Some(p.duration_s), repeat: 1 };
        let dir = req.runs_dir(std::slice::from_ref(&self.cwd));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return Ok(refusal(format!("cannot create {}: {e}", dir.display())));
        }
        let output = runfile::new_run_path(&dir, &runfile::program_name(&req.command), std::time::SystemTime::now());
        let mut args = req.recorder_args(&output);
        args.insert(1, "--progress-lines".into());
        let finished = match jobs::follow(&ctx, &args, &self.cwd, output, &format!("recording {what}")).await {
            Ok(f) => f,
            Err(e) => return Ok(refusal(e)),
        };
        Ok(match jobs::describe(&finished, &what) {
            Ok(t) => CallToolResult::success(vec![Content::text(t)]),
            Err(e) => refusal(e),
        })
    }

    #[tool(description = "Profile one test (or a whole test file) of the project as the editor's ▶ Profile lens does: only a test pytest's rules find in the file, run with the project's interpreter and [tool.threadradar] configuration under threadradar test. Reports progress and can be cancelled (the run sampled so far is kept). Answers with the run's path and the test outcome (passed/failed, first failure).")]
    async fn profile_test(&self, Parameters(p): Parameters<ProfileTestParams>, ctx: RequestContext<RoleServer>) -> Result<CallToolResult, McpError> {
        let file = self.cwd.join(&p.file);
        let file = std::fs::canonicalize(&file).unwrap_or(file);
        let folders = vec![std::fs::canonicalize(&self.cwd).unwrap_or_else(|_| self.cwd.clone())];
        if !file.starts_with(&folders[0]) {
            return Ok(refusal(format!("{} is outside the project ({}): only its own tests can be profiled", file.display(), folders[0].display())));
        }
        let name = p.test.clone().filter(|t| !t.is_empty());
        let job = match tokio::task::spawn_blocking(move || threadradar_lsp::test_job::TestJob::plan(&file, name.as_deref(), None, &folders, None, 1)).await {
            Ok(Ok(job)) => job,
            Ok(Err(e)) => return Ok(refusal(e)),
            Err(e) => return Ok(refusal(format!("checking the test failed: {e}"))),
        };
        let what = format!("test {}", job.node);
        let _busy = match Busy::take(&self.busy, &what) {
            Ok(b) => b,
            Err(e) => return Ok(refusal(e)),
        };
        let finished = match jobs::follow(&ctx, &job.args, &job.root, job.output.clone(), &format!("profiling {}", job.node)).await {
            Ok(f) => f,
            Err(e) => return Ok(refusal(e)),
        };
        Ok(match jobs::describe(&finished, &what) {
            Ok(t) => CallToolResult::success(vec![Content::text(t)]),
            Err(e) => refusal(e),
        })
    }

    #[tool(description = "The runs of the working directory, newest first, as the run list shows them: the recorded command or profiled test, its outcome (passed/failed, first failure), duration, threads, label, pin, and for a test the run before it to compare with.")]
    async fn run_history(&self, Parameters(p): Parameters<HistoryParams>) -> Result<CallToolResult, McpError> {
        // `runs` answers without an active run; with one, it is the newest.
        let _ = self.host.activate(None);
        match self.host.call("runs", serde_json::json!({})) {
            Ok(r) => Ok(CallToolResult::success(vec![Content::text(views::runs(&r, p.top.unwrap_or(20)))])),
            Err(e) => Ok(protocol_refusal(e)),
        }
    }
}

#[tool_handler]
impl ServerHandler for Radar {
    fn get_info(&self) -> ServerInfo {
        ServerInfo {
            instructions: Some(
                "ThreadRadar: which threads ran the code of a Python program and how the work was spread across them, from runs recorded with `threadradar record` (or imported) in .threadradar/runs of the working directory. Figures are sampled: crt is a share of counted thread-samples (computing state)."
                    .into(),
            ),
            capabilities: ServerCapabilities::builder().enable_tools().build(),
            server_info: Implementation { name: "threadradar".into(), version: env!("CARGO_PKG_VERSION").into(), ..Default::default() },
            ..Default::default()
        }
    }
}
