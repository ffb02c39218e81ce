//! `runs` and `filter`: the workspace's runs, the active one, the global thread filter.

use crate::host::Host;
use crate::protocol::{FilterParams, FilterResult, ProtocolError, RunItem, RunSummary, RunsParams, RunsResult, VERSION};

pub fn runs(host: &dyn Host, req: RunsParams) -> Result<RunsResult, ProtocolError> {
    if let Some(which) = req.select.as_deref() {
        host.select_run(which)?;
    }
    let (list, pinned) = host.runs();
    let active = host.active().ok();
    let active_path = active.as_ref().map(|a| a.path.clone());
    let runs = list
        .iter()
        .map(|r| RunItem {
            path: r.path.display().to_string(),
            name: r.name.clone(),
            folder: r.folder.display().to_string(),
            modified_unix_ms: r.modified_unix_ms,
            size: r.size,
            active: Some(&r.path) == active_path.as_ref(),
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
