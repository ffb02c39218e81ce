//! The language server as a [`Host`] of the protocol's handlers. Called on the blocking pool:
//! the async parts (loading a run with progress, telling the client) are driven from here with
//! the runtime's handle.

use super::*;

impl Host for Backend {
    fn active(&self) -> std::result::Result<Arc<LoadedRun>, ProtocolError> {
        self.state().active.clone().ok_or_else(ProtocolError::no_run)
    }

    fn defaults(&self) -> Defaults {
        let s = self.state();
        Defaults {
            exclude_threads: s.exclude.clone(),
            states: s.settings.states,
            theme: s.settings.glyph_theme,
            window: s.window,
            // The editor's `include` / `exclude` over the project's (issue 19).
            include: s.settings.include.clone().unwrap_or_else(|| s.project_include.clone()),
            exclude: s.settings.exclude.clone().unwrap_or_else(|| s.project_exclude.clone()),
        }
    }

    fn settings(&self) -> Settings {
        self.state().settings.clone()
    }

    fn runs(&self) -> (Vec<RunEntry>, bool) {
        let s = self.state();
        (s.runs.clone(), s.pinned)
    }

    fn select_run(&self, which: &str) -> std::result::Result<(), ProtocolError> {
        tokio::runtime::Handle::current()
            .block_on(self.select_run_command(Value::String(which.to_string())))
            .map(|_| ())
            .map_err(|e| ProtocolError::not_found(e.message.into_owned()))
    }

    fn set_filter(&self, exclude: Vec<ThreadId>) -> std::result::Result<(), ProtocolError> {
        let changed = {
            let mut s = self.state();
            let changed = s.exclude != exclude;
            s.exclude = exclude;
            changed
        };
        if changed {
            tokio::runtime::Handle::current().block_on(self.refresh(Change::Filter));
        }
        Ok(())
    }

    fn set_window(&self, window: Option<threadradar_analysis::Window>) -> std::result::Result<(), ProtocolError> {
        let changed = {
            let mut s = self.state();
            let changed = s.window != window;
            s.window = window;
            changed
        };
        if changed {
            tokio::runtime::Handle::current().block_on(self.refresh(Change::Filter));
        }
        Ok(())
    }

    fn figures(&self) -> std::result::Result<(Arc<LoadedRun>, Arc<Figures>), ProtocolError> {
        let loaded = Host::active(self)?;
        let figures = self.figures.get(&loaded, &self.params())?;
        Ok((loaded, figures))
    }

    fn document(&self, doc: &DocRef, loaded: &LoadedRun, file_key: &str) -> Option<(Arc<Document>, Arc<Mapping>)> {
        let run_file = loaded.files.get(file_key)?;
        let open = doc.uri.as_ref().and_then(|uri| {
            let s = self.state();
            s.docs.get(uri.as_str()).map(|d| {
                let cached = d.mapping.as_ref().filter(|m| m.0 == loaded.generation && m.1 == d.doc.version).map(|m| m.2.clone());
                let parsed = d.parsed.as_ref().filter(|p| p.0 == d.doc.version).map(|p| p.1.clone());
                (uri.clone(), d.doc.clone(), cached, parsed)
            })
        });
        let Some((uri, text, cached, parsed)) = open else {
            // Not open in the editor: the file as it is on disk.
            return self.disk.get(&doc.path, loaded, file_key);
        };
        if let Some(m) = cached {
            return Some((text, m));
        }
        let mut reparsed = None;
        let m = Arc::new(Mapping::map_with(run_file, text.text(), || {
            let mut p = parsed.unwrap_or_else(|| ParsedSource::parse(text.text()));
            if p.is_edited() {
                p.reparse(text.text());
            }
            let index = p.index(text.text());
            reparsed = Some(p);
            index
        }));
        if let Some(d) = self.state().docs.get_mut(uri.as_str()) {
            if d.doc.version == text.version {
                d.mapping = Some((loaded.generation, text.version, m.clone()));
                if let Some(p) = reparsed {
                    d.parsed = Some((text.version, p));
                }
            }
        }
        Some((text, m))
    }

    fn navigate(&self, file: &str, line: u32) -> std::result::Result<NavigateResult, ProtocolError> {
        let uri = Uri::from_file_path(file).ok_or_else(|| ProtocolError::invalid(format!("{file} is not a file path")))?;
        let shown = format!("{file}:{}", line.max(1));
        if !self.state().caps.show_document {
            return Ok(NavigateResult { ok: false, shown });
        }
        let l = line.max(1) - 1;
        let params = ShowDocumentParams { uri, external: Some(false), take_focus: Some(true), selection: Some(Range::new(Position::new(l, 0), Position::new(l, 0))) };
        let ok = tokio::runtime::Handle::current().block_on(self.client.show_document(params)).unwrap_or(false);
        Ok(NavigateResult { ok, shown })
    }
}
