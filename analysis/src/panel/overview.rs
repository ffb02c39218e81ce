//! The overview: the program radar and every listed function and class with its glyph.

use super::*;

pub(super) fn overview_with(run: &Run, analyse: &Analyse, req: &OverviewRequest) -> Result<OverviewResponse, PanelError> {
    check_threads(run, &req.params)?;
    let analysis = analyse(&req.params)?;
    let unfiltered = analyse(&Params { exclude_threads: Vec::new(), states: req.params.states, window: req.params.window })?;
    let filter = req.filter.build()?;
    let size = req.glyph_size.unwrap_or(glyph::IN_SITU_PX);
    let m = analysis.metrics();
    let arts = analysis.artifacts();
    let mut lists: [(Vec<ArtifactEntry>, usize); 2] = Default::default();
    for (slot, kind) in [ArtifactKind::Function, ArtifactKind::Class].into_iter().enumerate() {
        let mut ids: Vec<ArtifactId> = arts
            .ids(kind)
            .filter(|&id| m.artifact(id).is_some_and(|a| a.frq > 0))
            .filter(|&id| {
                arts.describe(run, id)
                    .is_some_and(|a| filter.keeps(&a) && req.only_file.as_ref().is_none_or(|f| a.file == f.as_str()))
            })
            .collect();
        let frq = |id: ArtifactId| m.artifact(id).map_or((0, 0), |a| (a.frq, a.self_frq));
        ids.sort_by(|&a, &b| frq(b).cmp(&frq(a)).then(a.cmp(&b)));
        let listed = ids.len();
        ids.truncate(req.top.unwrap_or(usize::MAX));
        let entries = ids
            .into_iter()
            .filter_map(|id| {
                let a = arts.describe(run, id)?;
                let key = ArtifactKey::of(&a);
                let title = format!("{} ({:.1}%)", a.qualname, m.crt(id) * 100.0);
                let v = artifact_view(run, &analysis, id, 0);
                Some(artifact_entry(run, &v, key, &glyph_opts(size, req.theme, false, title)))
            })
            .collect();
        lists[slot] = (entries, listed);
    }
    // The program's own files first.
    let mut files: Vec<(bool, String)> = arts
        .ids(ArtifactKind::File)
        .filter(|&id| unfiltered.metrics().artifact(id).is_some_and(|a| a.frq > 0))
        .filter_map(|id| arts.describe(run, id).map(|a| (a.file_kind != FileKind::User, a.file.to_string())))
        .collect();
    files.sort();
    let files: Vec<String> = files.into_iter().map(|f| f.1).collect();
    let sources = thread_sources(run, &unfiltered);
    let [(functions, listed_functions), (classes, listed_classes)] = lists;
    Ok(OverviewResponse {
        run: RunInfo {
            command: shown_command(&run.meta),
            duration_s: run.meta.duration_s,
            sample_count: run.samples.len() as u64,
            thread_count: run.threads.len(),
            counted_samples: analysis.counted_samples(),
            states: analysis.options().states,
            excluded_threads: analysis.options().threads.excluded().collect(),
            window: req.params.window,
            units: Some(crate::units::units_of(run)).filter(|u| !u.is_threads()),
        },
        program: program_entry(run, &analysis, &glyph_opts(size * 2, req.theme, false, "Program ThreadRadar".into())),
        functions,
        classes,
        listed_functions,
        listed_classes,
        threads: thread_entries(run, &analysis, &sources),
        files,
        palette: PaletteView { light: glyph::LIGHT, dark: glyph::DARK },
        note: no_counted_note(&analysis),
    })
}

/// The command a view's header shows: as recorded, except that a profiled test's run (the
/// editors' ▶ Profile, `threadradar test`) leaves out what the runner added for itself (pytest's
/// `-p no:cacheprovider` and `--junitxml=<temporary file>`): the user's command and test id.
pub fn shown_command(meta: &threadradar_profiler::run::Meta) -> Vec<String> {
    if meta.test.is_none() {
        return meta.command.clone();
    }
    let mut out = Vec::with_capacity(meta.command.len());
    let mut words = meta.command.iter().peekable();
    while let Some(w) = words.next() {
        if w == "-p" && words.peek().is_some_and(|n| *n == "no:cacheprovider") {
            words.next();
            continue;
        }
        if w.starts_with("--junitxml=") || w.starts_with("--junit-xml=") {
            continue;
        }
        out.push(w.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_runs_header_shows_the_users_command_without_the_runners_flags() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let mut meta = threadradar_profiler::run::Meta { command: words("/usr/bin/python3 -m pytest tests/t.py::test_a -p no:cacheprovider --junitxml=/tmp/tr-junit-1/r.xml"), ..Default::default() };
        assert_eq!(shown_command(&meta), meta.command, "not a test run: as recorded");
        meta.test = Some(threadradar_profiler::run::TestRun { id: "tests/t.py::test_a".into(), outcome: None });
        assert_eq!(shown_command(&meta), words("/usr/bin/python3 -m pytest tests/t.py::test_a"));
        meta.command = words("python3 -m pytest -p xdist -n 2 tests/t.py");
        assert_eq!(shown_command(&meta), meta.command, "the user's own -p stays");
    }
}
