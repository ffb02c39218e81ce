//! The editor features: inlay hints, code lenses, hovers and workspace symbols, drawn from the
//! same placed declarations as `threadRadar/documentArtifacts`.

use super::*;

impl Backend {
    pub(super) async fn inlay_hints(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        // `annotations: glyph` (or `inlayHints: false`): the glyph alone.
        if !self.settings().sends_hints() {
            return Ok(Some(Vec::new()));
        }
        let Some(p) = self.placed(&params.text_document.uri).await else { return Ok(Some(Vec::new())) };
        let footer = render::footer(&p.run_name(), &p.figures);
        // A client that resolves tooltips lazily gets small hints now and a tooltip per hint it
        // shows one for; the others get the tooltips inline.
        let lazy = self.state().caps.resolve_tooltip;
        // In a run set, each hint adds the spread of its crt over the set's runs.
        let sets = [self.run_set_answer("function").await, self.run_set_answer("class").await];
        let mut hints = Vec::new();
        for &(i, line) in &p.items {
            if !line_in(&params.range, line) {
                continue;
            }
            let a = &p.file.artifacts[i];
            let Some(position) = p.doc.line_end(line) else { continue };
            hints.push(InlayHint {
                position,
                label: InlayHintLabel::String({
                    let set = &sets[usize::from(a.view.kind == ArtifactKind::Class)];
                    render::hint_label(&a.view, &p.figures, &p.settings) + &Self::run_set_hint(set, &a.view).unwrap_or_default()
                }),
                kind: None,
                text_edits: None,
                tooltip: (!lazy).then(|| tooltip(&a.view, &p.figures, &footer)),
                padding_left: Some(true),
                padding_right: None,
                data: Some(json!({ "artifact": a.key, "generation": p.figures.generation })),
            });
        }
        hints.sort_by_key(|h| (h.position.line, h.position.character));
        Ok(Some(hints))
    }

    pub(super) async fn resolve_inlay_hint(&self, mut hint: InlayHint) -> Result<InlayHint> {
        if hint.tooltip.is_some() {
            return Ok(hint);
        }
        let key = hint.data.as_ref().and_then(|d| d.get("artifact")).and_then(|k| k.as_str()).map(String::from);
        let Some(key) = key else { return Ok(hint) };
        let Some((loaded, figures)) = self.figures().await else { return Ok(hint) };
        let found = figures.files.values().find_map(|f| f.artifacts.iter().find(|a| a.key.as_str() == key));
        if let Some(a) = found {
            let name = loaded.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            hint.tooltip = Some(tooltip(&a.view, &figures, &render::footer(&name, &figures)));
        }
        Ok(hint)
    }

    pub(super) async fn code_lenses(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let settings = self.settings();
        // "▶ Profile" on tests (issue 19), whether or not there is a run.
        let mut lenses = self.test_lenses(&params.text_document.uri);
        // `annotations: glyph` or `hints`: no figure lenses (one annotation line per declaration).
        if !settings.sends_lenses() || (!settings.code_lens && !settings.file_lens) {
            return Ok(Some(lenses));
        }
        let Some(p) = self.placed(&params.text_document.uri).await else { return Ok(Some(lenses)) };
        let top = Range::new(Position::new(0, 0), Position::new(0, 0));
        if settings.file_lens && (p.file.file.is_some() || !p.items.is_empty() || p.stale > 0) {
            let file = params.text_document.uri.to_file_path().and_then(|f| p.loaded.file_key(&f).map(String::from));
            lenses.push(CodeLens {
                range: top,
                command: Some(Command {
                    title: render::file_lens_title(&p.file, p.stale),
                    command: "threadradar.openOverview".into(),
                    arguments: Some(vec![json!({ "file": file })]),
                }),
                data: None,
            });
        }
        if settings.code_lens {
            for &(i, line) in &p.items {
                let a = &p.file.artifacts[i];
                let range = Range::new(Position::new(line, 0), Position::new(line, 0));
                lenses.push(CodeLens {
                    range,
                    command: Some(Command {
                        title: render::lens_title(&a.view, &p.figures),
                        command: "threadradar.openDetail".into(),
                        arguments: Some(vec![json!({ "artifact": a.key })]),
                    }),
                    data: None,
                });
                if settings.timeline_lens {
                    lenses.push(CodeLens {
                        range,
                        command: Some(Command { title: "Timeline".into(), command: "threadradar.openTimeline".into(), arguments: Some(vec![json!({ "artifact": a.key })]) }),
                        data: None,
                    });
                }
            }
        }
        if settings.code_lens {
            let uri = &params.text_document.uri;
            lenses.extend(self.section_lenses(uri).await);
            lenses.extend(self.wait_lenses(uri).await);
            // An edit hides the line-anchored lenses (their lines cannot be vouched for): say so
            // on the first line rather than dropping them silently. No command: a label.
            if self.line_figures_stale(uri).await {
                lenses.push(CodeLens {
                    range: top,
                    command: Some(Command { title: STALE_LINES_LENS.into(), command: String::new(), arguments: None }),
                    data: None,
                });
            }
        }
        // Stable: on one line, the figures' lens stays first.
        lenses.sort_by_key(|l| l.range.start.line);
        Ok(Some(lenses))
    }

    pub(super) async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        if !self.settings().hover {
            return Ok(None);
        }
        let pos = params.text_document_position_params.position;
        let Some(p) = self.placed(&params.text_document_position_params.text_document.uri).await else { return Ok(None) };
        if !p.doc.contains(pos) {
            return Ok(None);
        }
        let uri = &params.text_document_position_params.text_document.uri;
        let section = match (self.section_hover(uri, pos.line).await, self.wait_hover(uri, pos.line).await) {
            (Some(s), Some(w)) => Some(format!("{s}\n\n---\n\n{w}")),
            (s, w) => s.or(w),
        };
        let Some(&(i, line)) = p.items.iter().find(|(_, l)| *l == pos.line) else {
            return Ok(section.map(|value| Hover {
                contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }),
                range: Some(Range::new(Position::new(pos.line, 0), p.doc.line_end(pos.line).unwrap_or(pos))),
            }));
        };
        let a = &p.file.artifacts[i];
        let caps = self.state().caps.clone();
        let mut value = String::new();
        if let Some(img) = self.hover_image(a, &p.settings, &caps) {
            value.push_str(&img);
            value.push_str("\n\n");
        }
        value.push_str(&render::figures_markdown(&a.view, &p.figures));
        if let Some(set) = self.run_set_hover(&a.view).await {
            value.push_str("\n\n");
            value.push_str(&set);
        }
        value.push_str("\n\n");
        value.push_str(&render::footer(&p.run_name(), &p.figures));
        if let Some(s) = section {
            value.push_str("\n\n---\n\n");
            value.push_str(&s);
        }
        let end = p.doc.line_end(line).unwrap_or(pos);
        Ok(Some(Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }),
            range: Some(Range::new(Position::new(line, 0), end)),
        }))
    }

    /// The `runSet` answer for the active run at `level` (`Null` when it is in no run set), asked
    /// once per run, level and counted states.
    async fn run_set_answer(&self, level: &'static str) -> Value {
        let Some((active, states)) = ({
            let s = self.state();
            s.active.as_ref().map(|a| (a.path.clone(), s.settings.states.as_str().to_string()))
        }) else {
            return Value::Null;
        };
        let cached = self.state().run_set_answers.iter().find(|c| c.0 == active && c.1 == level && c.2 == states).map(|c| c.3.clone());
        if let Some(v) = cached {
            return v;
        }
        let v = self.request(protocol::RunSet::NAME, json!({ "level": level })).await.map(|a| a["set"].clone()).unwrap_or(Value::Null);
        let mut s = self.state();
        s.run_set_answers.retain(|c| c.0 == active && c.2 == states && c.1 != level);
        s.run_set_answers.push((active, level, states, v.clone()));
        v
    }

    /// ` · set ±3.1pp`: the standard deviation of the artifact's crt over the active run's run
    /// set, for the inlay hint; nothing outside a set.
    fn run_set_hint(set: &Value, a: &threadradar_analysis::view::ArtifactView) -> Option<String> {
        let found = set["artifacts"].as_array()?.iter().find(|x| x["qualname"] == a.qualname.as_str() && x["file"] == a.file.as_str())?;
        let sd = found["crt"]["sd"].as_f64()?;
        Some(format!(" · set ±{:.1}pp", sd * 100.0))
    }

    /// When the active run belongs to a run set (`record --repeat N`): the artifact's mean and
    /// spread over the set's runs, from the `runSet` method (answered once per run, level and
    /// counted states).
    async fn run_set_hover(&self, a: &threadradar_analysis::view::ArtifactView) -> Option<String> {
        let level = match a.kind {
            ArtifactKind::Class => "class",
            ArtifactKind::Function => "function",
            _ => return None,
        };
        let set = self.run_set_answer(level).await;
        let found = set["artifacts"].as_array()?.iter().find(|x| x["qualname"] == a.qualname.as_str() && x["file"] == a.file.as_str())?;
        let n = set["runs"].as_array().map_or(0, Vec::len);
        let spread = |s: &Value, f: &dyn Fn(f64) -> String| -> String {
            let v = |k: &str| s[k].as_f64().unwrap_or(0.0);
            match s["sd"].as_f64() {
                Some(sd) => format!("{} ± {} [{}–{}]", f(v("mean")), f(sd), f(v("min")), f(v("max"))),
                None => format!("{} (1 run)", f(v("mean"))),
            }
        };
        let pct = |x: f64| format!("{:.1} %", x * 100.0);
        let num = |x: f64| format!("{x:.1}");
        let secs = |x: f64| format!("{x:.2} s");
        Some(format!(
            "**Run set** {} ({}, executed in {}): crt {} · threads {} · {} · clusters {}",
            crate::render::code(set["label"].as_str().unwrap_or("?")),
            if n == 1 { "1 run".to_string() } else { format!("{n} runs") },
            found["executed_in"],
            spread(&found["crt"], &pct),
            spread(&found["threads"], &num),
            spread(&found["seconds"], &secs),
            spread(&found["clusters"], &num),
        ))
    }

    pub(super) async fn symbols(&self, params: WorkspaceSymbolParams) -> Result<Option<OneOf<Vec<SymbolInformation>, Vec<WorkspaceSymbol>>>> {
        let Some((loaded, figures)) = self.figures().await else { return Ok(Some(OneOf::Left(Vec::new()))) };
        let query = params.query.to_lowercase();
        let mut out = Vec::new();
        for (file, i) in &figures.ranked {
            if out.len() >= 200 {
                break;
            }
            let p = &figures.files[file].artifacts[*i];
            if !query.is_empty() && !p.view.qualname.to_lowercase().contains(&query) {
                continue;
            }
            let Some(location) = self.locate(&loaded, file, p) else { continue };
            let kind = match p.view.kind {
                ArtifactKind::Class => SymbolKind::CLASS,
                _ if p.view.qualname.contains('.') => SymbolKind::METHOD,
                _ => SymbolKind::FUNCTION,
            };
            let short = Path::new(file).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            #[allow(deprecated)]
            out.push(SymbolInformation {
                name: p.view.qualname.clone(),
                kind,
                tags: None,
                deprecated: None,
                location,
                container_name: Some(format!("ThreadRadar {:.1} % · {short}", p.view.crt * 100.0)),
            });
        }
        Ok(Some(OneOf::Left(out)))
    }
}

/// The lens that stands for the wait and section lenses an edit hid.
pub const STALE_LINES_LENS: &str = "waits and critical sections hidden: stale since edit (the file is not the recorded text; undo the edit or record again)";

fn tooltip(view: &threadradar_analysis::view::ArtifactView, figures: &Figures, footer: &str) -> InlayHintTooltip {
    InlayHintTooltip::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: format!("{}\n\n{footer}", render::figures_markdown(view, figures)) })
}
