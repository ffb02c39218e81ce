//! `workspace/executeCommand`: panels, runs, the thread filter, navigation and recording.

use super::*;

impl Backend {
    /// `window/workDoneProgress/cancel`: the user cancelled loading a run.
    pub async fn progress_cancel(&self, params: Value) {
        let token = match params.get("token") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => return,
        };
        if let Some(l) = self.state().loading.as_ref().filter(|l| l.token == token) {
            l.cancelled.store(true, Ordering::SeqCst);
        }
        let recording = self.state().recording.as_ref().filter(|r| r.token.as_deref() == Some(token.as_str())).map(|r| r.pid);
        if let Some(pid) = recording {
            recording::interrupt(pid);
        }
    }

    pub(super) async fn open_overview(&self, arg: Value) -> Result<Option<Value>> {
        let file = arg.get("file").and_then(|f| f.as_str()).map(String::from);
        let mut req = json!({ "top": 50 });
        if let Some(f) = &file {
            req["only_file"] = json!(f);
        }
        let overview = self.request(protocol::Overview::NAME, req).await?;
        if self.settings().panels {
            self.client.send_notification::<OpenPanel>(json!({ "panel": "overview", "file": file })).await;
        } else {
            let top: Vec<String> = overview["functions"]
                .as_array()
                .map(|a| {
                    a.iter().take(5).map(|f| format!("{} {}", f["qualname"].as_str().unwrap_or("?"), render::pct(f["crt"].as_f64().unwrap_or(0.0)))).collect()
                })
                .unwrap_or_default();
            self.show(MessageType::INFO, format!("ThreadRadar overview — hottest: {}", top.join(", "))).await;
        }
        Ok(Some(overview))
    }

    pub(super) async fn open_detail(&self, arg: Value) -> Result<Option<Value>> {
        let artifact = arg.get("artifact").cloned().ok_or_else(|| invalid("threadradar.openDetail needs {\"artifact\": key}"))?;
        let detail = self.request(protocol::Detail::NAME, json!({ "artifact": artifact })).await?;
        if self.settings().panels {
            self.client.send_notification::<OpenPanel>(json!({ "panel": "detail", "artifact": artifact })).await;
        } else {
            let a = &detail["artifact"];
            self.show(
                MessageType::INFO,
                format!(
                    "ThreadRadar {}: crt {} ({}), {}, {}",
                    a["qualname"].as_str().unwrap_or("?"),
                    render::pct(a["crt"].as_f64().unwrap_or(0.0)),
                    render::secs(a["seconds"].as_f64().unwrap_or(0.0)),
                    super::waits_lens::plural(a["threads"].as_u64().unwrap_or(0), "thread", "threads"),
                    super::waits_lens::plural(a["clusters"].as_array().map_or(0, |c| c.len()) as u64, "cluster", "clusters")
                ),
            )
            .await;
        }
        Ok(Some(detail))
    }

    /// The timeline focused on an artifact's bars: answers where it ran (its spans per thread)
    /// and asks the client to open the Timeline panel on it (`threadRadar/openPanel`).
    pub(super) async fn open_timeline(&self, arg: Value) -> Result<Option<Value>> {
        let artifact = arg.get("artifact").and_then(|a| a.as_str()).map(String::from).ok_or_else(|| invalid("threadradar.openTimeline needs {\"artifact\": key}"))?;
        self.wait_scanned().await;
        let key = threadradar_analysis::panel::ArtifactKey(artifact.clone());
        let focus = self
            .blocking(move |b| -> std::result::Result<_, ProtocolError> {
                let loaded = Host::active(b)?;
                let index = loaded.timeline()?;
                Ok(threadradar_analysis::timeline::focus::focus(loaded.run(), &index, &key)?)
            })
            .await
            .ok_or_else(Error::internal_error)?
            .map_err(|e| e.to_jsonrpc())?;
        if self.settings().panels {
            self.client
                .send_notification::<OpenPanel>(json!({ "panel": "timeline", "artifact": artifact, "from_s": focus.from_s, "to_s": focus.to_s }))
                .await;
        } else {
            self.show(
                MessageType::INFO,
                format!(
                    "ThreadRadar timeline of {}: {} on {}, {:.2}–{:.2} s",
                    focus.name,
                    super::waits_lens::plural(focus.span_count as u64, "span", "spans"),
                    super::waits_lens::plural(focus.threads.len() as u64, "thread", "threads"),
                    focus.from_s,
                    focus.to_s
                ),
            )
            .await;
        }
        Ok(Some(serde_json::to_value(focus).map_err(|_| Error::internal_error())?))
    }

    pub(super) async fn select_run_command(&self, arg: Value) -> Result<Option<Value>> {
        self.wait_scanned().await;
        let wanted = match &arg {
            Value::String(s) => Some(s.clone()),
            v => v.get("run").and_then(|r| r.as_str()).map(String::from),
        };
        let list = self.state().runs.clone();
        let wanted = match wanted {
            Some(w) => w,
            None => {
                if !self.state().caps.show_message_request || list.is_empty() {
                    return self.request(protocol::Runs::NAME, Value::Null).await.map(Some);
                }
                let mut actions: Vec<MessageActionItem> =
                    list.iter().take(8).map(|r| MessageActionItem { title: r.name.clone(), properties: Default::default() }).collect();
                actions.insert(0, MessageActionItem { title: "newest".into(), properties: Default::default() });
                match self.client.show_message_request(MessageType::INFO, "ThreadRadar: which run?", Some(actions)).await {
                    Ok(Some(a)) => a.title,
                    _ => return Ok(None),
                }
            }
        };
        let _guard = self.load_lock.lock().await;
        if wanted == "newest" || wanted == "latest" {
            self.state().pinned = false;
            drop(_guard);
            self.state().runs.clear(); // forces the next scan to load the newest
            self.rescan(true).await;
            return self.request(protocol::Runs::NAME, Value::Null).await.map(Some);
        }
        let entry = list
            .iter()
            .find(|r| r.path == Path::new(&wanted) || r.name == wanted)
            .cloned()
            .or_else(|| {
                let p = PathBuf::from(&wanted);
                let meta = std::fs::metadata(&p).ok()?;
                Some(RunEntry {
                    name: p.file_name()?.to_string_lossy().into_owned(),
                    folder: p.parent()?.to_path_buf(),
                    modified_unix_ms: 0,
                    size: meta.len(),
                    path: p,
                })
            })
            .ok_or_else(|| invalid(format!("no run {wanted:?}: `threadRadar/runs` lists the runs")))?;
        self.state().failed.remove(&entry.path);
        match self.load(&entry).await {
            Load::Loaded => {
                self.state().pinned = true;
                drop(_guard);
                self.request(protocol::Runs::NAME, Value::Null).await.map(Some)
            }
            _ => Err(invalid(format!("cannot load {}", entry.path.display()))),
        }
    }

    /// `threadradar.deleteRun`: deletes a listed run file. Deleting the active run shows the
    /// newest remaining one (and follows new runs again).
    pub(super) async fn delete_run(&self, arg: Value) -> Result<Option<Value>> {
        self.wait_scanned().await;
        let wanted = match &arg {
            Value::String(s) => Some(s.clone()),
            v => v.get("run").and_then(|r| r.as_str()).map(String::from),
        }
        .ok_or_else(|| invalid("threadradar.deleteRun needs {\"run\": path or file name}"))?;
        let guard = self.load_lock.lock().await;
        let (entry, was_active) = {
            let s = self.state();
            let entry = s
                .runs
                .iter()
                .find(|r| r.path == Path::new(&wanted) || r.name == wanted)
                .cloned()
                .ok_or_else(|| invalid(format!("no run {wanted:?} in this workspace's runs directories: `threadRadar/runs` lists them")))?;
            let was_active = s.active.as_ref().is_some_and(|a| a.path == entry.path);
            (entry, was_active)
        };
        match std::fs::remove_file(&entry.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(invalid(format!("cannot delete {}: {e}", entry.path.display()))),
        }
        {
            let mut s = self.state();
            s.failed.remove(&entry.path);
            if was_active {
                s.active = None;
                s.exclude.clear();
                s.window = None;
                s.pinned = false;
            }
        }
        drop(guard);
        if was_active {
            self.figures.clear();
            self.disk.clear();
            self.state().runs.clear(); // the next scan loads the newest remaining run
            self.rescan(true).await;
            if self.state().active.is_none() {
                self.refresh(Change::Run).await; // nothing left to show: clear the annotations
            }
        } else {
            self.rescan(false).await;
        }
        self.request(protocol::Runs::NAME, Value::Null).await.map(Some)
    }

    /// `threadradar.record`: starts `threadradar record` in a workspace folder and answers at
    /// once; the run is loaded (and shown) when the recorder ends.
    pub(super) async fn record(self: &Arc<Self>, arg: Value) -> Result<Option<Value>> {
        let (tx, rx) = tokio::sync::watch::channel(false);
        let (req, folders, overrides) = {
            let mut s = self.state();
            if let Some(r) = &s.recording {
                return Err(invalid(format!("`{}` is already being recorded: stop it first (threadradar.stopRecording)", r.command.join(" "))));
            }
            let req = RecordRequest::parse_with_repeat(&arg, &s.settings.record_command, s.settings.record_subprocesses, s.settings.repeat, &s.folders).map_err(invalid)?;
            // Reserved under the lock, so two record commands cannot both start.
            s.recording = Some(ActiveRecording { pid: 0, output: PathBuf::new(), command: req.command.clone(), token: None, done: rx });
            (req, s.folders.clone(), s.settings.overrides())
        };
        let started = std::env::current_exe()
            .map_err(|e| format!("cannot find the threadradar binary: {e}"))
            .and_then(|exe| recording::start(&exe, &req, &folders, &overrides));
        let started = match started {
            Ok(st) => st,
            Err(e) => {
                self.state().recording = None;
                return Err(invalid(e));
            }
        };
        let title = match req.repeat {
            1 => format!("ThreadRadar: recording `{}`", req.command.join(" ")),
            n => format!("ThreadRadar: recording `{}` {n} times (a run set)", req.command.join(" ")),
        };
        let mut progress = None;
        let mut token = None;
        if self.state().caps.work_done_progress {
            let t = format!("threadradar/record/{}", self.progress_counter.fetch_add(1, Ordering::SeqCst));
            let pt = ProgressToken::String(t.clone());
            if self.client.send_request::<request::WorkDoneProgressCreate>(WorkDoneProgressCreateParams { token: pt.clone() }).await.is_ok() {
                progress = Some(self.client.progress(pt, title.clone()).with_message("starting").with_cancel_button().begin().await);
                token = Some(t);
            }
        }
        if let Some(r) = self.state().recording.as_mut() {
            r.pid = started.pid;
            r.output = started.output.clone();
            r.token = token;
        }
        self.client.log_message(MessageType::INFO, format!("{title} in {} → {}", req.cwd.display(), started.output.display())).await;
        self.notify_changed(Change::Recording).await;
        let answer = json!({ "recording": true, "output": started.output, "command": req.command, "cwd": req.cwd, "repeat": req.repeat });
        let me = self.clone();
        tokio::spawn(async move { me.follow_recording(started, progress, tx).await });
        Ok(Some(answer))
    }

    /// Passes the program's output on, reports progress, and loads the run when it is written.
    pub(super) async fn follow_recording(
        self: Arc<Self>,
        mut st: recording::Started,
        progress: Option<tower_lsp_server::OngoingProgress<tower_lsp_server::Unbounded, tower_lsp_server::Cancellable>>,
        done: tokio::sync::watch::Sender<bool>,
    ) {
        /// Program output lines passed on as log messages, at most.
        const MAX_LINES: usize = 5000;
        let started = std::time::Instant::now();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        let mut recorder: Vec<String> = Vec::new();
        let mut logged = 0usize;
        let mut open = true;
        let mut status = None;
        let mut phase: Option<String> = None;
        while open || status.is_none() {
            tokio::select! {
                line = st.lines.recv(), if open => match line {
                    Some(Output::Stdout(l)) | Some(Output::Stderr(l)) => {
                        if let Some(own) = recording::recorder_line(&l) {
                            // `run 2 of 5` of a repeated recording: the progress says which.
                            if own.starts_with("run ") && own.contains(" of ") {
                                phase = Some(own.to_string());
                            }
                            recorder.push(own.to_string());
                        } else if logged < MAX_LINES {
                            logged += 1;
                            self.client.log_message(MessageType::LOG, l).await;
                        }
                    }
                    None => open = false,
                },
                s = st.child.wait(), if status.is_none() => status = Some(s),
                _ = tick.tick() => {
                    if let Some(p) = &progress {
                        let msg = match &phase {
                            Some(ph) => format!("{ph} · {:.0} s — cancel stops it and keeps the runs so far as the set", started.elapsed().as_secs_f64()),
                            None => format!("{:.0} s — cancel stops it and keeps the run", started.elapsed().as_secs_f64()),
                        };
                        p.report_with_message(msg, None).await;
                    }
                }
            }
        }
        if let Some(p) = progress {
            p.finish().await;
        }
        // The recorder has ended: another recording may start while this run loads.
        self.state().recording = None;
        let _ = done.send(true);
        let written = st.output.is_file();
        // One run: its "recorded …" line; a run set: the set's "run set of N runs → …" line.
        let summary = recorder.iter().rev().find(|l| l.starts_with("run set of ")).or_else(|| recorder.iter().find(|l| l.starts_with("recorded "))).cloned();
        let code = status.and_then(|s| s.ok()).and_then(|s| s.code());
        if written {
            // The user asked for this run: show it (and follow new runs again). The listing is
            // forgotten so that the scan loads it even if the poll has already seen it.
            {
                let mut s = self.state();
                s.pinned = false;
                s.runs.clear();
            }
            self.rescan(true).await;
            let mut msg = format!("ThreadRadar: {}", summary.unwrap_or_else(|| format!("recorded {}", st.output.display())));
            if let Some(c) = code.filter(|&c| c != 0) {
                msg.push_str(&format!(" The program exited with {c}."));
            }
            self.show(MessageType::INFO, msg).await;
        } else {
            let why = recorder.last().cloned().unwrap_or_else(|| "the recorder ended without writing a run".into());
            self.show(MessageType::ERROR, format!("ThreadRadar: nothing was recorded: {why}")).await;
        }
        self.notify_changed(Change::Recording).await;
    }

    /// `threadradar.stopRecording`: the recorder's Ctrl-C (the run so far is kept).
    pub(super) async fn stop_recording(&self) -> Result<Option<Value>> {
        let pid = self.state().recording.as_ref().map(|r| r.pid);
        match pid {
            Some(pid) if pid != 0 => Ok(Some(json!({ "stopping": recording::interrupt(pid) }))),
            Some(_) => Ok(Some(json!({ "stopping": false }))),
            None => Err(invalid("nothing is being recorded")),
        }
    }

    /// On shutdown, a recording is stopped and its run written before the server exits.
    pub(super) async fn stop_recording_and_wait(&self) {
        let rec = self.state().recording.as_ref().map(|r| (r.pid, r.done.clone()));
        if let Some((pid, mut done)) = rec {
            recording::interrupt(pid);
            let _ = tokio::time::timeout(Duration::from_secs(10), done.wait_for(|d| *d)).await;
        }
    }

    /// `threadradar.goToHottest`: the user's function (or class) with the highest crt.
    pub(super) async fn go_to_hottest(&self, arg: Value) -> Result<Option<Value>> {
        let kind = match arg.get("kind").and_then(|k| k.as_str()).or(arg.as_str()) {
            None | Some("function") => ArtifactKind::Function,
            Some("class") => ArtifactKind::Class,
            Some(k) => return Err(invalid(format!("unknown kind {k:?}: function or class"))),
        };
        let (loaded, figures) = self.figures().await.ok_or_else(|| invalid("there is no run: record one with `threadradar record -- python3 your_program.py`"))?;
        for (file, i) in &figures.ranked {
            let Some(p) = figures.files.get(file).and_then(|f| f.artifacts.get(*i)) else { continue };
            let v = &p.view;
            if v.kind != kind || v.file_kind != threadradar_profiler::run::FileKind::User || v.qualname == "<module>" {
                continue;
            }
            let Some(location) = self.locate(&loaded, file, p) else { continue };
            if self.state().caps.show_document {
                let _ = self
                    .client
                    .show_document(ShowDocumentParams { uri: location.uri.clone(), external: Some(false), take_focus: Some(true), selection: Some(location.range) })
                    .await;
            }
            return Ok(Some(json!({
                "artifact": p.key,
                "uri": location.uri,
                "range": location.range,
                "qualname": v.qualname,
                "crt": v.crt,
            })));
        }
        let what = if kind == ArtifactKind::Class { "class" } else { "function" };
        Err(invalid(format!("no {what} of your own code was profiled in this run (only the standard library or installed packages)")))
    }

    pub(super) async fn set_thread_filter(&self, arg: Value) -> Result<Option<Value>> {
        self.wait_scanned().await;
        let loaded = Host::active(self).map_err(|e| e.to_jsonrpc())?;
        let run = loaded.run();
        let list = arg.get("exclude").and_then(|e| e.as_array()).ok_or_else(|| invalid("threadradar.setThreadFilter needs {\"exclude\": [thread id or name, …]}"))?;
        let mut ids = Vec::new();
        for v in list {
            match v {
                Value::Number(n) => match n.as_u64().filter(|&i| (i as usize) < run.threads.len()) {
                    Some(i) => ids.push(i as u32),
                    None => return Err(invalid(format!("no thread with id {n} in this run"))),
                },
                Value::String(name) => {
                    let hits: Vec<u32> =
                        (0..run.threads.len() as u32).filter(|&i| run.threads[i as usize].name == *name || run.threads[i as usize].thread_type == *name).collect();
                    if hits.is_empty() {
                        return Err(invalid(format!("no thread or thread type named {name:?} in this run")));
                    }
                    ids.extend(hits);
                }
                _ => return Err(invalid("thread filter entries are thread ids or names")),
            }
        }
        ids.sort_unstable();
        ids.dedup();
        if ids.len() >= run.threads.len() && !run.threads.is_empty() {
            return Err(invalid("the filter would exclude every thread"));
        }
        self.state().exclude = ids.clone();
        self.refresh(Change::Filter).await;
        let names: Vec<Value> = ids.iter().map(|&i| json!({ "id": i, "name": run.threads[i as usize].name })).collect();
        Ok(Some(json!({ "excluded": names })))
    }

    pub(super) async fn clear_thread_filter(&self) -> Result<Option<Value>> {
        self.state().exclude.clear();
        self.refresh(Change::Filter).await;
        Ok(Some(json!({ "excluded": [] })))
    }

    pub(super) async fn go_to(&self, arg: Value) -> Result<Option<Value>> {
        let location = if let Some(key) = arg.get("artifact").and_then(|a| a.as_str()) {
            let (loaded, figures) = self.figures().await.ok_or_else(|| invalid("there is no run"))?;
            let (file, p) = figures
                .files
                .iter()
                .find_map(|(f, ff)| ff.artifacts.iter().find(|p| p.key.as_str() == key).map(|p| (f.clone(), p.clone())))
                .ok_or_else(|| invalid(format!("no profiled artifact {key} in this run")))?;
            self.locate(&loaded, &file, &p).ok_or_else(|| invalid(format!("{} is no longer in {file} (stale)", p.view.qualname)))?
        } else if let (Some(file), Some(line)) = (arg.get("file").and_then(|f| f.as_str()), arg.get("line").and_then(|l| l.as_u64())) {
            let uri = Uri::from_file_path(file).ok_or_else(|| invalid(format!("{file} is not a file path")))?;
            let line = (line.max(1) - 1) as u32;
            Location { uri, range: Range::new(Position::new(line, 0), Position::new(line, 0)) }
        } else {
            return Err(invalid("threadradar.goTo needs {\"artifact\": key} or {\"file\": path, \"line\": n}"));
        };
        if self.state().caps.show_document {
            let _ = self
                .client
                .show_document(ShowDocumentParams { uri: location.uri.clone(), external: Some(false), take_focus: Some(true), selection: Some(location.range) })
                .await;
        }
        Ok(Some(serde_json::to_value(location).unwrap_or(Value::Null)))
    }

    /// Where a profiled artifact is now, `None` when stale or its file is gone.
    pub(super) fn locate(&self, loaded: &LoadedRun, file: &str, p: &Profiled) -> Option<Location> {
        let uri = Uri::from_file_path(file)?;
        let (_, mapping) = Host::document(self, &DocRef { path: PathBuf::from(file), uri: Some(uri.as_str().to_string()) }, loaded, file)?;
        let line = mapping.line(p.view.kind, &p.view.qualname, p.view.line)??;
        Some(Location { uri, range: Range::new(Position::new(line, 0), Position::new(line, 0)) })
    }

    pub(super) fn hover_image(&self, p: &Profiled, settings: &Settings, caps: &ClientCaps) -> Option<String> {
        let mode = match settings.hover_image {
            HoverImage::Auto if caps.vscode || settings.markdown_images => HoverImage::Svg,
            HoverImage::Auto => HoverImage::None,
            m => m,
        };
        let spec = RadarSpec::from(&p.view);
        let svg = || glyph::svg(&spec, &SvgOptions { size: 64, theme: settings.glyph_theme, interactive: false, title: Some(p.view.qualname.clone()) });
        match mode {
            HoverImage::Svg => {
                let b64 = base64::engine::general_purpose::STANDARD.encode(svg());
                Some(format!("![ThreadRadar of {}](data:image/svg+xml;base64,{b64})", p.view.qualname))
            }
            HoverImage::Png => {
                let svg = svg();
                let dir = cache_dir()?.join("glyphs");
                std::fs::create_dir_all(&dir).ok()?;
                let path = dir.join(format!("{}.png", threadradar_profiler::source::sha256_hex(svg.as_bytes())));
                if !path.exists() {
                    let png = crate::raster::png(&svg, 64).ok()?;
                    std::fs::write(&path, png).ok()?;
                }
                let uri = Uri::from_file_path(&path)?;
                Some(format!("![ThreadRadar of {}]({})", p.view.qualname, uri.as_str()))
            }
            _ => None,
        }
    }
}
