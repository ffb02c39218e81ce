//! `runs` and `filter`: the workspace's runs, the active one, the global thread filter.

use crate::history;
use crate::host::Host;
use crate::protocol::{RunHistory, RunOutcome};
use crate::runs::RunEntry;
use std::collections::HashMap;
use std::path::Path;
use crate::protocol::{FilterParams, FilterResult, ProtocolError, RunItem, RunSummary, RunsParams, RunsResult, VERSION};

pub fn runs(host: &dyn Host, req: RunsParams) -> Result<RunsResult, ProtocolError> {
    if let Some(which) = req.select.as_deref() {
        host.select_run(which)?;
    }
    let (list, pinned) = host.runs();
    let find = |wanted: &str| {
        list.iter()
            .find(|r| r.path.as_os_str() == wanted || r.name == wanted)
            .ok_or_else(|| ProtocolError::not_found(format!("no run {wanted:?}: `runs` lists the runs")))
    };
    if let Some(l) = &req.label {
        let r = find(&l.run)?;
        history::set_label(runs_dir(&r.path), &r.path, l.label.as_deref()).map_err(ProtocolError::invalid)?;
    }
    if let Some(p) = &req.pin {
        let r = find(&p.run)?;
        history::set_pinned(runs_dir(&r.path), &r.path, p.pinned).map_err(ProtocolError::invalid)?;
    }
    let histories = histories(&list);
    let active = host.active().ok();
    let active_path = active.as_ref().map(|a| a.path.clone());
    let runs = list
        .iter()
        .zip(histories)
        .map(|(r, history)| RunItem {
            path: r.path.display().to_string(),
            name: r.name.clone(),
            folder: r.folder.display().to_string(),
            modified_unix_ms: r.modified_unix_ms,
            size: r.size,
            active: Some(&r.path) == active_path.as_ref(),
            history,
        })
        .collect();
    let summary = active.as_ref().map(|a| {
        let run = a.run();
        let m = &run.meta;
        RunSummary {
            name: a.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            samples: m.sample_count,
            threads: run.threads.len(),
            processes: m.pids.len(),
            duration_s: m.duration_s,
            command: m.command.join(" "),
            start_unix_ms: m.start_unix_ms,
            python_version: m.python_version.clone(),
            units: Some(threadradar_analysis::units::units_of(run)).filter(|u| !u.is_threads()),
            tasks: Some(run.tasks.len()).filter(|&n| n > 0),
        }
    });
    Ok(RunsResult {
        protocol: VERSION,
        active: active_path.map(|p| p.display().to_string()),
        pinned,
        runs,
        exclude_threads: host.defaults().exclude_threads,
        window: host.defaults().window,
        summary,
    })
}

pub fn filter(host: &dyn Host, req: FilterParams) -> Result<FilterResult, ProtocolError> {
    if let Some(mut ids) = req.exclude_threads {
        let active = host.active()?;
        let n = active.run().threads.len();
        if let Some(bad) = ids.iter().find(|&&t| t as usize >= n) {
            return Err(ProtocolError::not_found(format!("no thread with id {bad} in this run (it has {n})")));
        }
        ids.sort_unstable();
        ids.dedup();
        if n > 0 && ids.len() >= n {
            return Err(ProtocolError::invalid("the filter would exclude every thread: keep at least one"));
        }
        host.set_filter(ids)?;
    }
    if let Some(window) = req.window {
        if let Some(w) = window {
            w.check(host.active()?.run())?;
        }
        host.set_window(window)?;
    }
    let d = host.defaults();
    Ok(FilterResult { exclude_threads: d.exclude_threads, window: d.window })
}

fn runs_dir(run: &Path) -> &Path {
    run.parent().unwrap_or(Path::new("."))
}

/// Each run's history entry (newest first, as listed); the newest run of each test gets the one
/// before it as `previous`.
fn histories(list: &[RunEntry]) -> Vec<Option<RunHistory>> {
    let mut indexes: HashMap<&Path, history::Index> = HashMap::new();
    let mut newest_of: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<Option<RunHistory>> = Vec::with_capacity(list.len());
    for (i, r) in list.iter().enumerate() {
        let Some(f) = history::facts(&r.path) else {
            out.push(None);
            continue;
        };
        let index = indexes.entry(runs_dir(&r.path)).or_insert_with(|| history::Index::load(runs_dir(&r.path)).unwrap_or_default());
        let e = index.get(&r.name);
        let test = f.test.as_ref().map(|t| t.id.clone());
        if let Some(t) = &test {
            match newest_of.get(t) {
                None => {
                    newest_of.insert(t.clone(), i);
                }
                Some(&n) => {
                    if let Some(Some(h)) = out.get_mut(n) {
                        if h.previous.is_none() {
                            h.previous = Some(r.path.display().to_string());
                        }
                    }
                }
            }
        }
        out.push(Some(RunHistory {
            outcome: f.test.as_ref().and_then(|t| t.outcome.as_ref()).map(RunOutcome::from),
            test,
            command: f.command.join(" "),
            duration_s: f.duration_s,
            threads: f.threads,
            start_unix_ms: f.start_unix_ms,
            label: e.label,
            pinned: e.pinned,
            partial: f.partial,
            previous: None,
        }));
    }
    out
}
