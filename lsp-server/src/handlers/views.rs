//! `views`: the Sections panel's saved views, stored beside the active run's runs directory and
//! resolved against the active run's sections by file, function and lock (`crate::views`).

use crate::host::Host;
use crate::protocol::{ErrorCode, ProtocolError, SaveView, SectionsParams, ViewItem, ViewsParams, ViewsResult};
use crate::views::{self, SavedExecution, SavedView, ViewsFile};
use std::path::Path;
use threadradar_analysis::sections::SectionFigures;

/// Longest note kept (characters).
const MAX_NOTE: usize = 4000;

pub fn views(host: &dyn Host, req: ViewsParams) -> Result<ViewsResult, ProtocolError> {
    let loaded = host.active()?;
    let runs_dir = loaded.path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let run_name = loaded.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let unprocessable = |e: String| ProtocolError::new(ErrorCode::Unprocessable, e);
    let mut file = ViewsFile::load(&runs_dir).map_err(unprocessable)?;
    // The active run's sections: needed to save, and to say where each view's section is now.
    let sections: Result<Vec<SectionFigures>, ProtocolError> = super::sections::sections(host, SectionsParams::default()).map(|r| r.view.sections);
    let mut saved = None;
    if let Some(id) = &req.delete {
        let before = file.views.len();
        file.views.retain(|v| &v.id != id);
        if file.views.len() == before {
            return Err(ProtocolError::not_found(format!("no saved view {id:?}: `views` lists them")));
        }
        file.save(&runs_dir).map_err(unprocessable)?;
    }
    if let Some(s) = req.save {
        let view = new_view(&file, s, sections.as_deref().map_err(Clone::clone)?, &loaded, &run_name)?;
        saved = Some(view.id.clone());
        file.views.push(view);
        file.save(&runs_dir).map_err(unprocessable)?;
    }
    let run = loaded.run();
    let mut items: Vec<ViewItem> = file
        .views
        .into_iter()
        .map(|v| {
            let same_run = v.run == run_name;
            let (section_index, mut status) = match &sections {
                Err(e) => (None, format!("The sections of this run could not be found: {}", e.message)),
                Ok(secs) => match views::find(secs, &v.section) {
                    None => (
                        None,
                        format!(
                            "Not found in this run: it has no section on {} in {} of {} (the code changed, or this is another program).",
                            v.section.lock, v.section.function, v.section.file
                        ),
                    ),
                    Some(i) if same_run => (Some(i as u32), "Saved on this run.".to_string()),
                    Some(i) if secs[i].line == v.section.line => (Some(i as u32), format!("Found in this run (saved on {}).", v.run)),
                    Some(i) => (
                        Some(i as u32),
                        format!(
                            "Found in this run at line {} (line {} in {}, where it was saved).",
                            secs[i].line, v.section.line, v.run
                        ),
                    ),
                },
            };
            if let (Some(e), false) = (&v.execution, same_run) {
                status.push_str(&format!(" The saved execution (#{} at {:.3} s) is one of {}.", e.index + 1, e.start_s, v.run));
            }
            if let Some(t) = &v.thread {
                if !run.threads.iter().any(|th| &th.name == t) {
                    status.push_str(&format!(" This run has no thread {t}."));
                }
            }
            ViewItem {
                view: v,
                same_run,
                section_index,
                status,
            }
        })
        .collect();
    items.reverse();
    Ok(ViewsResult {
        file: views::views_path(&runs_dir).display().to_string(),
        run: run_name,
        views: items,
        saved,
    })
}

fn new_view(file: &ViewsFile, s: SaveView, sections: &[SectionFigures], loaded: &crate::runs::LoadedRun, run_name: &str) -> Result<SavedView, ProtocolError> {
    let r = &s.section;
    let section = sections
        .iter()
        .find(|x| x.file == r.file && x.function == r.function && x.lock == r.lock && x.line == r.line)
        .ok_or_else(|| {
            ProtocolError::not_found(format!(
                "the active run has no section on {} in {} at {}:{}: `sections` lists them",
                r.lock, r.function, r.file, r.line
            ))
        })?;
    let note = s.note.trim().to_string();
    if note.chars().count() > MAX_NOTE {
        return Err(ProtocolError::invalid(format!(
            "the note has {} characters; keep it under {MAX_NOTE}",
            note.chars().count()
        )));
    }
    let mut thread = s.thread.filter(|t| !t.is_empty());
    let execution = match s.execution {
        None => None,
        Some(i) => {
            let e = section.executions.get(i as usize).ok_or_else(|| {
                ProtocolError::not_found(format!(
                    "the section has {} listed executions, so there is no execution {i} (indices start at 0)",
                    section.executions.len()
                ))
            })?;
            match &thread {
                Some(t) if t != &e.thread => {
                    return Err(ProtocolError::invalid(format!(
                        "execution {i} is {}'s, not {t}'s: leave `thread` out or name that thread",
                        e.thread
                    )))
                }
                _ => thread = Some(e.thread.clone()),
            }
            Some(SavedExecution {
                index: i,
                start_s: e.start_s,
                duration_s: e.duration_s,
            })
        }
    };
    if let Some(t) = &thread {
        if !loaded.run().threads.iter().any(|th| &th.name == t) {
            return Err(ProtocolError::not_found(format!("the active run has no thread {t:?}")));
        }
    }
    let created_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    Ok(SavedView {
        id: file.new_id(created_unix_ms),
        note,
        created_unix_ms,
        run: run_name.to_string(),
        section: views::SectionRef::of(section),
        thread,
        execution,
    })
}
