//! `compare`: two runs of the workspace side by side (`threadradar_analysis::compare`), by default
//! the active run against the run recorded before it. A side may be a run set (a manifest, or a
//! list of runs): the table shows its first run and each change is tested against the sets'
//! spread (`threadradar_analysis::runset::mark_significance`), as `threadradar compare` does.

use crate::host::Host;
use crate::protocol::{CompareParams, ErrorCode, ProtocolError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use threadradar_analysis::panel::{Panels, Params};
use threadradar_analysis::{CompareOptions, Comparison, Options};
use threadradar_profiler::{runfile, runset, Run};

pub fn compare(host: &dyn Host, req: CompareParams) -> Result<Comparison, ProtocolError> {
    let base_set = side_members(host, "base", req.base.as_deref(), req.base_runs.as_deref())?;
    let new_set = side_members(host, "new", req.new.as_deref(), req.new_runs.as_deref())?;
    let shown = |set: &Option<(Vec<PathBuf>, bool)>, one: Option<&str>| set.as_ref().map_or(one.map(str::to_string), |(m, _)| Some(m[0].display().to_string()));
    let ((base_path, base), (new_path, new)) = two_runs(host, shown(&base_set, req.base.as_deref()).as_deref(), shown(&new_set, req.new.as_deref()).as_deref())?;
    let filter = req.filter.build()?;
    // Thread ids differ between runs: the comparison never applies the thread filter.
    // Whole runs: the global window is a time range of the active run only.
    let params = Params { exclude_threads: Vec::new(), states: req.states.unwrap_or(host.defaults().states), window: None };
    let (ba, na) = (base.analysis(&params)?, new.analysis(&params)?);
    let opts = CompareOptions { level: req.level, filter, top: req.top };
    let mut c = Comparison::build(base.run(), &ba, new.run(), &na, &opts)?;
    c.base.path = Some(base_path.display().to_string());
    c.new.path = Some(new_path.display().to_string());
    if base_set.as_ref().is_some_and(|s| s.1) || new_set.as_ref().is_some_and(|s| s.1) {
        // Every run of both sides, the shown ones included, read afresh: a set's runs are not
        // the active run's cached analyses (states as requested, no thread filter, whole runs).
        let read = |set: Option<(Vec<PathBuf>, bool)>, shown: &Path| -> Result<Vec<Run>, ProtocolError> {
            set.map_or_else(|| vec![shown.to_path_buf()], |s| s.0)
                .iter()
                .map(|p| runfile::read(p).map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, e.to_string())))
                .collect()
        };
        let (base_runs, new_runs) = (read(base_set, &base_path)?, read(new_set, &new_path)?);
        let options = Options { states: params.states, ..Options::default() };
        threadradar_analysis::runset::mark_significance(&mut c, &base_runs, &new_runs, &options, req.level)?;
    }
    Ok(c)
}

/// A side given as a set: its runs (names or paths; a run set's manifest stands for its runs),
/// and whether it is a set at all (a list, or a manifest), so that a set of one run is still
/// said to have no spread. `None`: the side is one run, or the default.
fn side_members(host: &dyn Host, side: &str, one: Option<&str>, many: Option<&[String]>) -> Result<Option<(Vec<PathBuf>, bool)>, ProtocolError> {
    let names: Vec<&str> = match (one, many) {
        (Some(_), Some(_)) => return Err(ProtocolError::invalid(format!("pass either {side} or {side}_runs, not both: {side}_runs lists the runs of a set"))),
        (_, Some([])) => return Err(ProtocolError::invalid(format!("{side}_runs is empty: list at least one run (the `runs` method lists them)"))),
        (_, Some(list)) => list.iter().map(String::as_str).collect(),
        (Some(name), None) => vec![name],
        (None, None) => return Ok(None),
    };
    let mut members = Vec::new();
    let mut set = many.is_some();
    for name in names {
        let path = find_run(host, name)?;
        set |= runset::is_runset(&path);
        members.extend(runset::members(&path).map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, e.to_string()))?);
    }
    Ok(set.then_some((members, true)))
}

/// A run by its name (as `runs` lists it) or path; a run set's manifest by its path.
fn find_run(host: &dyn Host, w: &str) -> Result<PathBuf, ProtocolError> {
    let (list, _) = host.runs();
    list.iter()
        .find(|r| r.path == Path::new(w) || r.name == w)
        .map(|r| r.path.clone())
        .or_else(|| Path::new(w).is_file().then(|| PathBuf::from(w)))
        .ok_or_else(|| ProtocolError::not_found(format!("no run {w:?}: the `runs` method lists them")))
}

/// The two runs of a comparison, each with its path: `new` (a run's name or path) or the active
/// run, and `base` or the run recorded before `new`. The active run is loaded already (with its
/// analyses cached); another is read.
pub(super) fn two_runs(host: &dyn Host, base: Option<&str>, new: Option<&str>) -> Result<((PathBuf, Arc<Panels>), (PathBuf, Arc<Panels>)), ProtocolError> {
    let (list, _) = host.runs();
    let active = host.active().ok();
    // A run set's manifest stands for its first run (`compare` tests the whole set).
    let find = |w: &str| -> Result<PathBuf, ProtocolError> {
        let path = find_run(host, w)?;
        let mut members = runset::members(&path).map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, e.to_string()))?;
        Ok(members.swap_remove(0))
    };
    let new_path = match new {
        Some(n) => find(n)?,
        None => active.as_ref().map(|a| a.path.clone()).ok_or_else(ProtocolError::no_run)?,
    };
    let base_path = match base {
        Some(b) => find(b)?,
        // Runs are listed newest first: the next one is the run recorded before.
        None => list.iter().position(|r| r.path == new_path).and_then(|i| list.get(i + 1)).map(|r| r.path.clone()).ok_or_else(|| {
            ProtocolError::new(ErrorCode::Conflict, "there is no earlier run to compare with: record another run (e.g. after a fix) with `threadradar record`")
        })?,
    };
    let load = |p: &Path| -> Result<Arc<Panels>, ProtocolError> {
        match active.as_ref().filter(|a| a.path == p) {
            Some(a) => Ok(a.panels.clone()),
            None => threadradar_profiler::runfile::read(p)
                .map(|r| Arc::new(Panels::new(r)))
                .map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, e.to_string())),
        }
    };
    let base = load(&base_path)?;
    let new = if new_path == base_path { base.clone() } else { load(&new_path)? };
    Ok(((base_path, base), (new_path, new)))
}
