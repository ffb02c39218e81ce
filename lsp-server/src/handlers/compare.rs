//! `compare`: two runs of the workspace side by side (`threadradar_analysis::compare`), by default
//! the active run against the run recorded before it. A side may be a run set (a manifest, or a
//! list of runs): the table shows its first run and each change is tested against the sets'
//! spread (`threadradar_analysis::runset::mark_significance`), as `threadradar compare` does.
//! The changes are typed (`threadradar_analysis::changes`): figure, before, after, evidence, and
//! the words rendered from them; ranked by evidence and effect, too thin ones counted in
//! `suppressed`.

use crate::host::Host;
use crate::protocol::{CompareParams, ErrorCode, ProtocolError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use threadradar_analysis::panel::{Panels, Params};
use threadradar_analysis::tracediff::{self, TraceScale};
use threadradar_analysis::{CompareOptions, Comparison, Options};
use threadradar_profiler::{runfile, runset, Run};

pub fn compare(host: &dyn Host, req: CompareParams) -> Result<Comparison, ProtocolError> {
    let sides = SetSides::resolve(host, ("base", req.base.as_deref(), req.base_runs.as_deref()), ("new", req.new.as_deref(), req.new_runs.as_deref()))?;
    let ((base_path, base), (new_path, new)) = two_runs(host, sides.shown(0).or(req.base.clone()).as_deref(), sides.shown(1).or(req.new.clone()).as_deref())?;
    let filter = req.filter.build()?;
    // Thread ids differ between runs: the comparison never applies the thread filter.
    // Whole runs: the global window is a time range of the active run only.
    // Both runs count the same way: `auto` is CPU time only when both have kernel accounting.
    let states = req.states.unwrap_or(host.defaults().states).resolve(&[base.run(), new.run()]);
    let params = Params { exclude_threads: Vec::new(), states, window: None };
    let (ba, na) = (base.analysis(&params)?, new.analysis(&params)?);
    let opts = CompareOptions { level: req.level, filter, top: req.top };
    let mut c = Comparison::build(base.run(), &ba, new.run(), &na, &opts)?;
    // The changes only the runs' timelines and waits show (finishes, waiting time, futile
    // wake-ups), measured as `threadradar compare` does, and all of them ranked by evidence.
    tracediff::extend_changes_scaled(&mut c, TraceScale::of_runs(base.run(), new.run()), base.run(), new.run());
    c.base.path = Some(base_path.display().to_string());
    c.new.path = Some(new_path.display().to_string());
    sides.mark(&mut c, (&base_path, &new_path), params.states, req.level, active_units(host))?;
    Ok(c)
}

/// The units the active run shows (the `units` setting, where the run has tasks): other runs of a
/// comparison are read with them.
pub(super) fn active_units(host: &dyn Host) -> threadradar_analysis::Units {
    host.active().map_or(threadradar_analysis::Units::Threads, |a| threadradar_analysis::units::units_of(a.run()))
}

/// The two sides of a comparison, each one run (`None`) or a run set: its runs, the first shown.
pub(super) struct SetSides([Option<Vec<PathBuf>>; 2]);

impl SetSides {
    /// Each side as (its name in errors, one run, the runs of a set).
    pub(super) fn resolve(host: &dyn Host, a: (&str, Option<&str>, Option<&[String]>), b: (&str, Option<&str>, Option<&[String]>)) -> Result<SetSides, ProtocolError> {
        Ok(SetSides([side_members(host, a.0, a.1, a.2)?.map(|s| s.0), side_members(host, b.0, b.1, b.2)?.map(|s| s.0)]))
    }

    /// The run to show for side `k` when it is a set (its first run), else `None`.
    pub(super) fn shown(&self, k: usize) -> Option<String> {
        self.0[k].as_ref().map(|m| m[0].display().to_string())
    }

    /// When a side is a set: every run of both sides read afresh (a set's runs are not the
    /// active run's cached analyses; states as asked, no thread filter, whole runs), and each
    /// change of `c` tested against their spread (`Comparison::significance`).
    /// Every run is read with `units` (those the compared runs show: tasks where a run has them).
    /// Returns the note that says how (or why not), for answers without `significance`.
    pub(super) fn mark(self, c: &mut Comparison, shown: (&Path, &Path), states: threadradar_analysis::CountedStates, level: threadradar_analysis::Level, units: threadradar_analysis::Units) -> Result<Option<String>, ProtocolError> {
        if self.0.iter().all(Option::is_none) {
            return Ok(None);
        }
        let [a, b] = self.0;
        let read = |set: Option<Vec<PathBuf>>, shown: &Path| -> Result<Vec<Run>, ProtocolError> {
            set.unwrap_or_else(|| vec![shown.to_path_buf()])
                .iter()
                .map(|p| {
                    runfile::read(p)
                        .map_err(|e| e.to_string())
                        .and_then(|r| threadradar_analysis::units::with_units(r, units))
                        .map(|(r, _)| r)
                        .map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, e))
                })
                .collect()
        };
        let (base_runs, new_runs) = (read(a, shown.0)?, read(b, shown.1)?);
        let options = Options { states, ..Options::default() };
        Ok(Some(threadradar_analysis::runset::mark_significance(c, &base_runs, &new_runs, &options, level)?.note))
    }
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
    // The other run with the active run's units (asyncio tasks when the `units` setting shows
    // them and that run has tasks too: a run without is compared by its threads).
    let units = active_units(host);
    let load = |p: &Path| -> Result<Arc<Panels>, ProtocolError> {
        match active.as_ref().filter(|a| a.path == p) {
            Some(a) => Ok(a.panels.clone()),
            None => threadradar_profiler::runfile::read(p)
                .map_err(|e| e.to_string())
                .and_then(|r| threadradar_analysis::units::with_units(r, units))
                .map(|(r, _)| Arc::new(Panels::new(r)))
                .map_err(|e| ProtocolError::new(ErrorCode::Unprocessable, e)),
        }
    };
    let base = load(&base_path)?;
    let new = if new_path == base_path { base.clone() } else { load(&new_path)? };
    Ok(((base_path, base), (new_path, new)))
}
