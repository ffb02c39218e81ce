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

/// `--units threads|tasks`: what every figure of a command counts as a unit of concurrency.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct UnitsArg {
    /// What every figure, radar, cluster and filter counts as a unit of concurrency: `threads`,
    /// or `tasks`, the program's asyncio tasks (recorded on CPython 3.14+; samples outside any
    /// task stay with their thread, so a mixed program shows both). See docs/asyncio.md.
    #[arg(long, value_enum, default_value_t = threadradar_analysis::Units::Threads)]
    pub units: threadradar_analysis::Units,
}

impl UnitsArg {
    /// The run with these units. A run without tasks asked for tasks is shown with threads, and
    /// stderr says so in the sentence every client uses; damaged task tables are an error.
    pub fn apply(self, run: threadradar_profiler::Run) -> anyhow::Result<threadradar_profiler::Run> {
        let (run, note) = threadradar_analysis::units::with_units(run, self.units).map_err(anyhow::Error::msg)?;
        if let Some(note) = note {
            say!("threadradar: {note}");
        }
        Ok(run)
    }

    /// [`UnitsArg::apply`] without the sentence (a run set's runs, after its first run said it).
    pub fn apply_quietly(self, run: threadradar_profiler::Run) -> anyhow::Result<threadradar_profiler::Run> {
        Ok(threadradar_analysis::units::with_units(run, self.units).map_err(anyhow::Error::msg)?.0)
    }
}
