//! `runSet`: every figure's mean and spread over a run set's runs (the active run's set by
//! default), from each run's own report view (`threadradar_analysis::runset::spreads`, the same
//! aggregation as `threadradar report RUNSET`).

use crate::host::Host;
use crate::protocol::{ErrorCode, ProtocolError, RunSetAnswer, RunSetParams, RunSetResult};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use threadradar_analysis::panel::{Panels, Params};
use threadradar_analysis::{ReportView, ViewOptions};
use threadradar_profiler::{runfile, runset};

pub fn run_set(host: &dyn Host, req: RunSetParams) -> Result<RunSetAnswer, ProtocolError> {
    let active = host.active()?;
    let dir = active.path.parent().map(Path::to_path_buf).unwrap_or_default();
    let manifest = match &req.runset {
        Some(w) => [PathBuf::from(w), dir.join(w)].into_iter().find(|p| p.is_file()).ok_or_else(|| ProtocolError::not_found(format!("no run set {w:?}: name its manifest (`record --repeat N` writes `…runset.json`)")))?,
        None => match containing_set(&dir, &active.path) {
            Some(m) => m,
            None => {
                return Ok(RunSetAnswer {
                    set: None,
                    note: Some("the active run is not part of a run set: record one with `threadradar record --repeat 5 -- …` or the editor's repeat count".into()),
                })
            }
        },
    };
    set_of(host, &active, &manifest, req).map(|set| RunSetAnswer { set: Some(set), note: None })
}

fn set_of(host: &dyn Host, active: &crate::runs::LoadedRun, manifest: &Path, req: RunSetParams) -> Result<RunSetResult, ProtocolError> {
    let set = runset::read(&manifest)
        .map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, e.to_string()))?
        .ok_or_else(|| ProtocolError::invalid(format!("{} is not a run set's manifest", manifest.display())))?;
    let states = req.states.unwrap_or(host.defaults().states);
    // Whole runs, every thread: thread ids and the time window belong to the active run.
    let params = Params { exclude_threads: Vec::new(), states, window: None };
    let filter = req.filter.build()?;
    let mut views = Vec::new();
    for p in &set.runs {
        let panels = if same_file(p, &active.path) {
            active.panels.clone()
        } else {
            Arc::new(Panels::new(runfile::read(p).map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, format!("{e} (a run of the set {})", manifest.display())))?))
        };
        let analysis = panels.analysis(&params)?;
        views.push(ReportView::build(panels.run(), &analysis, &ViewOptions { level: req.level, top: None, filter: filter.clone(), ..ViewOptions::default() })?);
    }
    let (program, mut artifacts) = threadradar_analysis::runset::spreads(&views);
    let listed = artifacts.len();
    if let Some(top) = req.top {
        artifacts.truncate(top);
    }
    let n = set.runs.len();
    let mut notes = Vec::new();
    if n == 1 {
        notes.push("the run set holds one run: no spread can be measured; record more with a repeat count".to_string());
    }
    let programs: std::collections::BTreeSet<String> = views.iter().map(|v| v.run.command.join(" ")).collect();
    if programs.len() > 1 {
        notes.push(format!("the runs are of different programs ({}): the spread mixes them", programs.into_iter().collect::<Vec<_>>().join("; ")));
    }
    Ok(RunSetResult {
        path: manifest.display().to_string(),
        label: set.label,
        active_index: set.runs.iter().position(|p| same_file(p, &active.path)),
        runs: set.runs.iter().map(|p| p.display().to_string()).collect(),
        level: req.level,
        states,
        program,
        artifacts,
        listed,
        how: format!(
            "Mean ± standard deviation [min–max] over the {n} runs of the set, each run's figures sampled and counted as in its own report ({}); an artifact a run did not execute counts 0 there.",
            states.as_str()
        ),
        notes,
    })
}

/// The run set in `dir` whose manifest lists `run` (the newest such manifest).
pub fn containing_set(dir: &Path, run: &Path) -> Option<PathBuf> {
    runfile::list_runs(dir).ok()?.into_iter().filter(|p| runset::is_runset(p)).find(|p| runset::members(p).is_ok_and(|m| m.iter().any(|r| same_file(r, run))))
}

/// The same file, however the two paths spell it (a symlinked or relative directory).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}
