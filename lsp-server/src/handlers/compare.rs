//! `compare`: two runs of the workspace side by side (`threadradar_analysis::compare`), by default
//! the active run against the run recorded before it.

use crate::host::Host;
use crate::protocol::{CompareParams, ErrorCode, ProtocolError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use threadradar_analysis::panel::{Panels, Params};
use threadradar_analysis::{CompareOptions, Comparison};

pub fn compare(host: &dyn Host, req: CompareParams) -> Result<Comparison, ProtocolError> {
    let ((base_path, base), (new_path, new)) = two_runs(host, req.base.as_deref(), req.new.as_deref())?;
    let filter = req.filter.build()?;
    // Thread ids differ between runs: the comparison never applies the thread filter.
    // Whole runs: the global window is a time range of the active run only.
    let params = Params { exclude_threads: Vec::new(), states: req.states.unwrap_or(host.defaults().states), window: None };
    let (ba, na) = (base.analysis(&params)?, new.analysis(&params)?);
    let opts = CompareOptions { level: req.level, filter, top: req.top };
    let mut c = Comparison::build(base.run(), &ba, new.run(), &na, &opts)?;
    c.base.path = Some(base_path.display().to_string());
    c.new.path = Some(new_path.display().to_string());
    Ok(c)
}

/// The two runs of a comparison, each with its path: `new` (a run's name or path) or the active
/// run, and `base` or the run recorded before `new`. The active run is loaded already (with its
/// analyses cached); another is read.
pub(super) fn two_runs(host: &dyn Host, base: Option<&str>, new: Option<&str>) -> Result<((PathBuf, Arc<Panels>), (PathBuf, Arc<Panels>)), ProtocolError> {
    let (list, _) = host.runs();
    let active = host.active().ok();
    let find = |w: &str| -> Result<PathBuf, ProtocolError> {
        list.iter()
            .find(|r| r.path == Path::new(w) || r.name == w)
            .map(|r| r.path.clone())
            .or_else(|| Path::new(w).is_file().then(|| PathBuf::from(w)))
            .ok_or_else(|| ProtocolError::not_found(format!("no run {w:?}: the `runs` method lists them")))
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
