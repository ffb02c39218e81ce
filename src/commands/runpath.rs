//! Which run a command reads: the run argument that about a dozen commands share (`info`,
//! `report`, `export`, `serve`, `radar`, `timeline`, `html`, `waits`, `sections`, `mcp`).

use std::path::PathBuf;
use threadradar_profiler::runfile;

/// A run file given as a file, a directory of runs, or nothing (the project's runs directory).
pub fn resolve_run_path(arg: Option<&std::path::Path>) -> anyhow::Result<PathBuf> {
    let dir = match arg {
        Some(p) if p.is_dir() => p.to_path_buf(),
        Some(p) => return Ok(p.to_path_buf()),
        None => runfile::runs_dir(&std::env::current_dir()?),
    };
    // The newest run, not a run set's manifest (`record --repeat` writes it last).
    let runs = runfile::list_runs(&dir).map(|r| r.into_iter().filter(|p| !threadradar_profiler::runset::is_runset(p)).collect::<Vec<_>>());
    match runs {
        Ok(runs) if !runs.is_empty() => Ok(runs[0].clone()),
        _ => anyhow::bail!(
            "no run files in {}: record one with `threadradar record -- python3 your_program.py`",
            dir.display()
        ),
    }
}
