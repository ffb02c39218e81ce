//! `threadradar mcp`: a Model Context Protocol server over stdio (the official Rust SDK, `rmcp`),
//! so coding agents can ask for the same figures the editor shows: the hottest functions and
//! classes with their radars, the threads that ran one of them, and what changed between two
//! runs, in words.
//!
//! The tools are thin: they read runs from the server's working directory (`.threadradar/runs`)
//! and hand them to `analysis` (`ReportView`, `Comparison`), exactly as `report` and `compare` do.
//! Runs do not record wait objects or critical sections yet, so there are no tools for them;
//! recording is left to the user's own commands.

use clap::Args;
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, Content, Implementation, ServerCapabilities, ServerInfo};
use rmcp::{tool, tool_handler, tool_router, ErrorData as McpError, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use threadradar_analysis::{Analysis, ArtifactFilter, CompareOptions, Comparison, DeltaStatus, Level, Options, ReportView, ViewOptions};
use threadradar_profiler::run::{FileKind, Run};
use threadradar_profiler::runfile;

#[derive(Args, Debug)]
pub struct McpArgs {}

pub fn run(_args: McpArgs) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let service = Radar::new().serve(rmcp::transport::stdio()).await.map_err(|e| anyhow::anyhow!("cannot start the MCP session: {e}"))?;
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
    /// How many changed artifacts to describe (default 10).
    pub top: Option<usize>,
}

#[derive(Clone)]
pub struct Radar {
    tool_router: ToolRouter<Self>,
}

/// A tool's answer when its input is wrong: one sentence, returned as a tool error so the agent
/// can correct itself, not as a protocol failure.
fn refusal(e: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![Content::text(e.to_string())])
}

fn load(run: Option<&str>) -> anyhow::Result<(PathBuf, Run)> {
    let path = super::info::resolve_run_path(run.map(Path::new))?;
    let r = runfile::read(&path)?;
    Ok((path, r))
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
    pub fn new() -> Self {
        Radar { tool_router: Self::tool_router() }
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

    #[tool(description = "Compare two ThreadRadar runs (before and after a change) in words: program totals, then the functions whose crt changed most, with their thread counts and radars before and after.")]
    async fn compare_runs(&self, Parameters(p): Parameters<CompareParams>) -> Result<CallToolResult, McpError> {
        let resolved = (|| -> anyhow::Result<(PathBuf, PathBuf)> {
            match (&p.before, &p.after) {
                (Some(b), Some(a)) => Ok((super::info::resolve_run_path(Some(Path::new(b)))?, super::info::resolve_run_path(Some(Path::new(a)))?)),
                _ => {
                    let dir = runfile::runs_dir(&std::env::current_dir()?);
                    let runs = runfile::list_runs(&dir).unwrap_or_default();
                    let after = match &p.after {
                        Some(a) => super::info::resolve_run_path(Some(Path::new(a)))?,
                        None => runs.first().cloned().ok_or_else(|| anyhow::anyhow!("no runs in {}: record one with `threadradar record`", dir.display()))?,
                    };
                    let before = match &p.before {
                        Some(b) => super::info::resolve_run_path(Some(Path::new(b)))?,
                        None => runs.iter().find(|r| **r != after).cloned().ok_or_else(|| anyhow::anyhow!("only one run in {}: record the program again after the change", dir.display()))?,
                    };
                    Ok((before, after))
                }
            }
        })();
        let (before, after) = match resolved {
            Ok(x) => x,
            Err(e) => return Ok(refusal(format!("{e:#}"))),
        };
        let (b, a) = match (runfile::read(&before), runfile::read(&after)) {
            (Ok(b), Ok(a)) => (b, a),
            (Err(e), _) | (_, Err(e)) => return Ok(refusal(e)),
        };
        let (ba, aa) = match (Analysis::new(&b, &Options::default()), Analysis::new(&a, &Options::default())) {
            (Ok(x), Ok(y)) => (x, y),
            (Err(e), _) | (_, Err(e)) => return Ok(refusal(e)),
        };
        let opts = CompareOptions { level: Level::Function, filter: ArtifactFilter::all().hide(FileKind::Stdlib).hide(FileKind::ThirdParty), top: Some(p.top.unwrap_or(10)) };
        let c = match Comparison::build(&b, &ba, &a, &aa, &opts) {
            Ok(c) => c,
            Err(e) => return Ok(refusal(e)),
        };
        let mut text = String::new();
        let _ = writeln!(text, "Before: {}", provenance(&b, &before));
        let _ = writeln!(text, "After: {}", provenance(&a, &after));
        let _ = writeln!(
            text,
            "The program ran {} threads ({} clusters) before and {} ({} clusters) after; counted time {:.2} s before, {:.2} s after.",
            c.base.program.threads, c.base.program.clusters, c.new.program.threads, c.new.program.clusters, c.base.seconds, c.new.seconds
        );
        for d in &c.artifacts {
            let radar = |g: &[threadradar_analysis::glyph::GlyphCell]| g.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" ");
            let line = match (d.status, &d.base, &d.new) {
                (DeltaStatus::Added, _, Some(n)) => format!("{} is new: crt {} on {} threads (radar {}).", d.qualname, pct(n.crt), n.threads, radar(&n.glyph)),
                (DeltaStatus::Removed, Some(o), _) => format!("{} no longer runs (it had crt {} on {} threads).", d.qualname, pct(o.crt), o.threads),
                (_, Some(o), Some(n)) => format!(
                    "{}: crt {} → {} ({:+.1} points), {} → {} threads, {} → {} clusters, radar {} → {}.",
                    d.qualname,
                    pct(o.crt),
                    pct(n.crt),
                    100.0 * d.crt_delta,
                    o.threads,
                    n.threads,
                    o.clusters,
                    n.clusters,
                    radar(&o.glyph),
                    radar(&n.glyph)
                ),
                _ => continue,
            };
            let _ = writeln!(text, "- {line}");
        }
        Ok(CallToolResult::success(vec![Content::text(text)]))
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
