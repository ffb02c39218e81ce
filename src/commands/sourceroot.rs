//! `--source-root CONTAINER_PATH=HOST_PATH` of `report` and `serve`: the command line's roots over
//! the project's `[tool.threadradar] source-roots` (mapping: `threadradar_profiler::sourceroots`),
//! and whether the run's own source files are here as recorded.

use serde::Serialize;
use std::path::Path;
use threadradar_profiler::config::ProjectConfig;
use threadradar_profiler::run::{FileKind, Run};
use threadradar_profiler::source::sha256_hex;
use threadradar_profiler::sourceroots::SourceRoots;

/// The help of `--source-root`, shared by the commands that take it.
pub const HELP: &str = "Where the run's files are here when the program saw them elsewhere (a container, a chroot): CONTAINER_PATH=HOST_PATH, repeatable, the longest prefix wins [also: [tool.threadradar] source-roots]";

/// The project's roots (`config`) with `cli`'s over them; a relative host path on the command
/// line is taken from the current directory.
pub fn roots(cli: &[String], config: Option<&ProjectConfig>) -> anyhow::Result<SourceRoots> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let given = SourceRoots::parse(cli, &cwd).map_err(|e| anyhow::anyhow!("--source-root: {e}"))?;
    Ok(config.map(|c| c.source_roots.clone()).unwrap_or_default().with(&given))
}

/// One of the program's own source files, as found here.
#[derive(Clone, Debug, Serialize)]
pub struct SourceStatus {
    /// Where it is looked for here (after the source roots).
    pub path: String,
    /// `unchanged` (its sha256 is the recorded one), `changed`, `missing`, or `unknown` (the run
    /// has no hash of it).
    pub status: &'static str,
}

/// The run's own files (not the standard library's or installed packages'), checked on disk.
pub fn check(run: &Run) -> Vec<SourceStatus> {
    let mut out = Vec::new();
    for f in run.files.iter().filter(|f| f.kind == FileKind::User) {
        let p = run.str(f.path);
        if p.starts_with('<') {
            continue;
        }
        let path = if p.starts_with('/') || run.meta.cwd.is_empty() { p.to_string() } else { Path::new(&run.meta.cwd).join(p).display().to_string() };
        let status = match (std::fs::read(&path), &f.sha256) {
            (Err(_), _) => "missing",
            (Ok(_), None) => "unknown",
            (Ok(bytes), Some(sha)) if sha256_hex(&bytes) == *sha => "unchanged",
            (Ok(_), Some(_)) => "changed",
        };
        out.push(SourceStatus { path, status });
    }
    out
}

/// One line on the sources for the text report, with the next step when files are missing.
pub fn sentence(sources: &[SourceStatus], roots: &SourceRoots) -> Option<String> {
    let n = |s: &str| sources.iter().filter(|f| f.status == s).count();
    if sources.is_empty() {
        return None;
    }
    let mut line = format!("Sources  {} of the program's {} files as recorded", n("unchanged"), sources.len());
    if n("changed") > 0 {
        line.push_str(&format!(", {} changed since", n("changed")));
    }
    let missing: Vec<&str> = sources.iter().filter(|f| f.status == "missing").map(|f| f.path.as_str()).collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(3).copied().collect();
        let more = if missing.len() > 3 { format!(" and {} more", missing.len() - 3) } else { String::new() };
        line.push_str(&format!(", {} missing here ({}{more})", missing.len(), shown.join(", ")));
        if roots.is_empty() {
            line.push_str("; if the program ran in a container or a chroot, map its paths with --source-root CONTAINER_PATH=HOST_PATH or [tool.threadradar] source-roots");
        }
    }
    Some(line)
}
