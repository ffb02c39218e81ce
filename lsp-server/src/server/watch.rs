//! Finding the runs, loading the newest (or the chosen) one, and telling the client.

use super::*;

/// The registration id of the runs watcher.
const RUNS_WATCHER: &str = "threadradar-runs";

/// What the client watches for runs: `.threadradar/runs` anywhere in the workspace, and each
/// folder's runs directory where settings or the project put it elsewhere (`runsDir`,
/// `runs-dir`), as an absolute glob.
pub(super) fn runs_globs(folders: &[PathBuf], overrides: &crate::project::Overrides) -> Vec<String> {
    let mut globs = vec!["**/.threadradar/runs/*.json".to_string()];
    for f in folders {
        let dir = crate::project::folder_runs_dir(f, overrides);
        if !dir.ends_with(".threadradar/runs") {
            let g = format!("{}/*.json", dir.display());
            if !globs.contains(&g) {
                globs.push(g);
            }
        }
    }
    globs
}

impl Backend {
    /// Asks a client that registers file watchers dynamically to watch the runs directories
    /// ([`runs_globs`]), replacing what it watched before (once registered, the id is
    /// unregistered first). Not awaited: the client answers whenever it likes.
    pub(super) async fn watch_runs_dirs(self: &Arc<Self>) {
        let (dynamic, globs, registered) = {
            let mut s = self.state();
            let globs = runs_globs(&s.folders, &s.settings.overrides());
            let registered = std::mem::replace(&mut s.runs_watched, Some(globs.clone()));
            (s.caps.watched_files_dynamic, globs, registered)
        };
        if !dynamic || registered.as_ref() == Some(&globs) {
            return;
        }
        let options = DidChangeWatchedFilesRegistrationOptions {
            watchers: globs.into_iter().map(|g| FileSystemWatcher { glob_pattern: GlobPattern::String(g), kind: None }).collect(),
        };
        let reg = Registration { id: RUNS_WATCHER.into(), method: "workspace/didChangeWatchedFiles".into(), register_options: serde_json::to_value(options).ok() };
        let me = self.clone();
        tokio::spawn(async move {
            if registered.is_some() {
                let _ = me.client.unregister_capability(vec![Unregistration { id: RUNS_WATCHER.into(), method: "workspace/didChangeWatchedFiles".into() }]).await;
            }
            let _ = me.client.register_capability(vec![reg]).await;
        });
    }

    /// Lists the runs; loads the newest one when it is new (unless the user chose a run).
    pub(super) async fn rescan(&self, first: bool) {
        let _guard = self.load_lock.lock().await;
        let (folders, overrides) = {
            let s = self.state();
            (s.folders.clone(), s.settings.overrides())
        };
        // A panic while listing is logged and shown (`run_blocking`); the list is then empty.
        let list = self.run_blocking("listing the runs", move |_| runs::list_with(&folders, &overrides)).await.unwrap_or_default();
        let (changed, pinned, active_path, folders, overrides) = {
            let mut s = self.state();
            let changed = s.runs != list;
            s.runs = list.clone();
            (changed, s.pinned, s.active.as_ref().map(|a| a.path.clone()), s.folders.clone(), s.settings.overrides())
        };
        if !changed && !first {
            return;
        }
        if list.is_empty() {
            if changed && !first {
                self.notify_changed(Change::Runs).await;
            }
            let tell = {
                let mut s = self.state();
                let tell = !s.told_no_runs;
                s.told_no_runs = true;
                tell
            };
            if tell {
                let dirs: Vec<String> = folders.iter().map(|f| runs_dir_display(f, &overrides)).collect();
                let where_ = if dirs.is_empty() { "this workspace".to_string() } else { dirs.join(", ") };
                self.client
                    .show_message(
                        MessageType::INFO,
                        format!("ThreadRadar: no runs in {where_} yet. Record one with `threadradar record -- python3 your_program.py`; the radars appear as soon as it is written."),
                    )
                    .await;
            }
            return;
        }
        if pinned {
            if changed && !first {
                self.client.log_message(MessageType::INFO, "ThreadRadar: a new run was recorded; `threadradar.selectRun` switches to it").await;
                self.notify_changed(Change::Runs).await;
            }
            return;
        }
        // The newest run that can be read; a run that failed before is retried when it changed.
        for entry in list {
            if Some(&entry.path) == active_path.as_ref() {
                break; // the newest readable run is already shown
            }
            let failed_before = self.state().failed.get(&entry.path) == Some(&(entry.size, entry.modified_unix_ms));
            if failed_before {
                continue;
            }
            match self.load(&entry).await {
                Load::Loaded => return, // `load` told the client
                Load::Cancelled => return,
                Load::Failed => continue,
            }
        }
        if changed && !first {
            self.notify_changed(Change::Runs).await;
        }
    }

    /// Reads and analyses a run off the protocol thread, with cancellable work-done progress.
    /// Call with `load_lock` held.
    pub(super) async fn load(&self, entry: &RunEntry) -> Load {
        let caps = self.state().caps.clone();
        let params = self.params();
        let cancelled = Arc::new(AtomicBool::new(false));
        let token = format!("threadradar/load/{}", self.progress_counter.fetch_add(1, Ordering::SeqCst));
        let mut progress = None;
        if caps.work_done_progress {
            let t = ProgressToken::String(token.clone());
            if self.client.send_request::<request::WorkDoneProgressCreate>(WorkDoneProgressCreateParams { token: t.clone() }).await.is_ok() {
                self.state().loading = Some(Loading { token: token.clone(), cancelled: cancelled.clone() });
                progress = Some(
                    self.client.progress(t, "ThreadRadar").with_message(format!("loading {}", entry.name)).with_cancel_button().begin().await,
                );
            }
        }
        let generation = {
            let mut s = self.state();
            s.generation += 1;
            s.generation
        };
        let path = entry.path.clone();
        let folder = entry.folder.clone();
        let cancel = cancelled.clone();
        // Exclusions are thread ids of the old run: a new run starts unfiltered.
        let params = Params { exclude_threads: Vec::new(), window: None, ..params };
        let units = self.state().settings.units;
        type Loaded = (LoadedRun, Figures, Option<&'static str>);
        let result = tokio::task::spawn_blocking(move || -> std::result::Result<Option<Loaded>, String> {
            let mut run = threadradar_profiler::runfile::read(&path).map_err(|e| {
                if runs::may_be_incomplete(&e) {
                    format!("{e} (it may still be being written; it is read again when it changes)")
                } else {
                    e.to_string()
                }
            })?;
            if cancel.load(Ordering::SeqCst) {
                return Ok(None);
            }
            // The run's paths as this machine has them: its folder's `[tool.threadradar]
            // source-roots` (a bad configuration is shown by `check_configuration`).
            if let Ok(c) = crate::project::ProjectConfig::load(&folder) {
                c.source_roots.apply(&mut run);
            }
            // The `units` setting: asyncio tasks as units, when the run has them (issue #34).
            let (run, note) = threadradar_analysis::units::with_units(run, units)?;
            let loaded = LoadedRun::new(generation, path, run);
            let figures = Figures::build(&loaded, &params).map_err(|e| e.to_string())?;
            Ok(Some((loaded, figures, note)))
        })
        .await
        .unwrap_or_else(|e| Err(format!("analysing the run failed: {e}")));
        let outcome = match result {
            Ok(Some(_)) | Ok(None) if cancelled.load(Ordering::SeqCst) => {
                self.state().pinned = true;
                self.client
                    .show_message(MessageType::INFO, format!("ThreadRadar: loading {} was cancelled; `threadradar.selectRun` loads a run.", entry.name))
                    .await;
                Load::Cancelled
            }
            Ok(Some((loaded, figures, note))) => {
                {
                    let mut s = self.state();
                    s.active = Some(Arc::new(loaded));
                    s.exclude.clear();
                    s.window = None;
                    s.failed.remove(&entry.path);
                }
                self.figures.clear();
                self.figures.insert(Arc::new(figures));
                self.disk.clear();
                self.client.log_message(MessageType::INFO, format!("ThreadRadar: showing {}", entry.path.display())).await;
                if let Some(note) = note {
                    self.show(MessageType::INFO, format!("ThreadRadar: {note}")).await;
                }
                self.refresh(Change::Run).await;
                Load::Loaded
            }
            Ok(None) => Load::Cancelled,
            Err(msg) => {
                let first = self.state().failed.insert(entry.path.clone(), (entry.size, entry.modified_unix_ms)).is_none();
                if first {
                    self.client.show_message(MessageType::WARNING, format!("ThreadRadar: {msg}")).await;
                }
                Load::Failed
            }
        };
        if let Some(p) = progress {
            p.finish().await;
        }
        self.state().loading = None;
        outcome
    }

    /// Loads the active run again (the `units` setting changed: its units are other ones).
    pub(super) async fn reload_active(&self) {
        let _guard = self.load_lock.lock().await;
        let entry = {
            let s = self.state();
            let active = s.active.as_ref().map(|a| a.path.clone());
            active.and_then(|p| s.runs.iter().find(|r| r.path == p).cloned())
        };
        if let Some(entry) = entry {
            self.load(&entry).await;
        }
    }

    /// Asks the client to ask again for hints and lenses, when it can, and tells clients that
    /// asked for it (`notifyChanges`) what changed.
    pub(super) async fn refresh(&self, why: Change) {
        let caps = self.state().caps.clone();
        if caps.inlay_hint_refresh {
            let _ = self.client.inlay_hint_refresh().await;
        }
        if caps.code_lens_refresh {
            let _ = self.client.code_lens_refresh().await;
        }
        self.notify_changed(why).await;
    }

    /// `threadRadar/changed`, when the client asked for it with the setting `notifyChanges`.
    pub(super) async fn notify_changed(&self, why: Change) {
        let params = {
            let s = self.state();
            if !s.settings.notify_changes {
                return;
            }
            json!({
                "reason": why.as_str(),
                "run": s.active.as_ref().map(|a| a.path.clone()),
                "generation": s.active.as_ref().map_or(0, |a| a.generation),
                "exclude_threads": s.exclude,
                "window": s.window,
                // Which units the figures count, and how many asyncio tasks the active run has
                // (the `units` setting can show them: issue #34).
                "units": s.active.as_ref().map_or(threadradar_analysis::Units::Threads, |a| threadradar_analysis::units::units_of(a.run())),
                "tasks": s.active.as_ref().map_or(0, |a| a.run().tasks.len()),
                "recording": s.recording.as_ref().map(|r| json!({ "command": r.command, "output": r.output })),
            })
        };
        self.client.send_notification::<Changed>(params).await;
    }
}
