//! The rows the panels list (artifacts, threads, clusters, thread types), and the glyph and
//! threads answers built from them.

use super::*;

pub(super) fn check_threads(run: &Run, params: &Params) -> Result<(), PanelError> {
    match params.exclude_threads.iter().find(|&&t| t as usize >= run.threads.len()) {
        Some(&t) => Err(PanelError::UnknownThread(t)),
        None => Ok(()),
    }
}

pub(super) fn cluster_infos(run: &Run, clusters: &[ClusterView]) -> Vec<ClusterInfo> {
    let n = clusters.len();
    clusters
        .iter()
        .enumerate()
        .map(|(i, c)| ClusterInfo {
            index: i,
            colour: ClusterColour::of(i, n),
            threads: c.threads.clone(),
            avg: c.avg,
            sum: c.sum,
            avg_level: c.avg_level,
            sum_level: c.sum_level,
            thread_types: type_count(run, &c.threads),
            cell: GlyphCell { colour: ClusterColour::of(i, n), threads: c.threads.len(), avg: c.avg_level, sum: c.sum_level },
        })
        .collect()
}

pub(super) fn type_count(run: &Run, threads: &[ThreadId]) -> usize {
    threads.iter().filter_map(|&t| run.threads.get(t as usize)).map(|t| t.thread_type.as_str()).collect::<BTreeSet<_>>().len()
}

pub(super) fn program_clusters(analysis: &Analysis) -> Vec<ClusterView> {
    analysis
        .program_clusters()
        .iter()
        .map(|c| ClusterView {
            threads: c.threads.clone(),
            avg: c.avg,
            sum: c.sum,
            avg_level: RadarLevel::of(c.avg),
            sum_level: RadarLevel::of(c.sum),
        })
        .collect()
}

pub(super) fn glyph_opts(size: u32, theme: Theme, interactive: bool, title: String) -> SvgOptions {
    SvgOptions { size: size.clamp(8, 2048), theme, interactive, title: Some(title) }
}

pub(super) fn program_entry(run: &Run, analysis: &Analysis, opts: &SvgOptions) -> ArtifactEntry {
    let clusters = program_clusters(analysis);
    let m = analysis.metrics();
    let active: Vec<ThreadId> = (0..run.threads.len() as ThreadId).filter(|&t| m.thread(t).frq > 0).collect();
    let spec = RadarSpec::from_clusters(&clusters, active.len(), type_count(run, &active));
    ArtifactEntry {
        key: ArtifactKey::program(),
        kind: "program",
        name: "Program".into(),
        qualname: "Program".into(),
        file: String::new(),
        line: 0,
        file_kind: FileKind::User,
        crt: if m.frq_total() > 0 { 1.0 } else { 0.0 },
        self_crt: 0.0,
        seconds: m.total_ns() as f64 / 1e9,
        samples: m.counted_samples(),
        threads: spec.threads,
        thread_types: spec.thread_types,
        clusters: cluster_infos(run, &clusters),
        glyph_svg: glyph::svg(&spec, opts),
    }
}

pub(super) fn artifact_entry(run: &Run, v: &ArtifactView, key: ArtifactKey, opts: &SvgOptions) -> ArtifactEntry {
    ArtifactEntry {
        key,
        kind: kind_name(v.kind),
        name: v.name.clone(),
        qualname: v.qualname.clone(),
        file: v.file.clone(),
        line: v.line,
        file_kind: v.file_kind,
        crt: v.crt,
        self_crt: v.self_crt,
        seconds: v.seconds,
        samples: v.samples,
        threads: v.threads,
        thread_types: v.thread_types,
        clusters: cluster_infos(run, &v.clusters),
        glyph_svg: glyph::svg(&RadarSpec::from(v), opts),
    }
}

/// For each thread, the program's own function (not `<module>` when another exists) in which it
/// spent the most counted samples: where "navigate to the thread" goes.
pub(super) fn thread_sources(run: &Run, analysis: &Analysis) -> Vec<Option<(String, u32)>> {
    let m = analysis.metrics();
    let arts = analysis.artifacts();
    let mut best: Vec<Option<(bool, u64, ArtifactId)>> = vec![None; run.threads.len()];
    for id in arts.ids(ArtifactKind::Function) {
        let Some(am) = m.artifact(id) else { continue };
        if am.frq == 0 {
            continue;
        }
        let Some(a) = arts.describe(run, id) else { continue };
        if a.file_kind != FileKind::User {
            continue;
        }
        let real = a.line > 0;
        for c in &am.threads {
            let slot = &mut best[c.thread as usize];
            if slot.is_none_or(|(r, f, _)| (real, c.frq) > (r, f)) {
                *slot = Some((real, c.frq, id));
            }
        }
    }
    best.into_iter()
        .map(|b| b.and_then(|(_, _, id)| arts.describe(run, id)).map(|a| (a.file.to_string(), a.line)))
        .collect()
}

pub(super) fn thread_entries(run: &Run, analysis: &Analysis, sources: &[Option<(String, u32)>]) -> Vec<ThreadEntry> {
    let m = analysis.metrics();
    let clusters = analysis.program_clusters();
    let mut cluster_of = vec![None; run.threads.len()];
    for (i, c) in clusters.iter().enumerate() {
        for &t in &c.threads {
            cluster_of[t as usize] = Some(i);
        }
    }
    let filter = &analysis.options().threads;
    run.threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let id = i as ThreadId;
            let tm = m.thread(id);
            let src = sources.get(i).cloned().flatten();
            ThreadEntry {
                id,
                name: t.name.clone(),
                thread_type: t.thread_type.clone(),
                is_main: t.is_main,
                crt: m.crt_of_thread(id),
                samples: tm.samples,
                seconds: tm.ns as f64 / 1e9,
                cluster: cluster_of[i],
                colour: cluster_of[i].map(|c| ClusterColour::of(c, clusters.len())),
                excluded: !filter.includes(id),
                line: src.as_ref().map_or(0, |s| s.1),
                file: src.map(|s| s.0),
            }
        })
        .collect()
}

pub(super) fn type_groups(run: &Run, threads: impl Iterator<Item = ThreadId>) -> Vec<TypeGroup> {
    let mut by: BTreeMap<&str, Vec<ThreadId>> = BTreeMap::new();
    for t in threads {
        by.entry(run.threads[t as usize].thread_type.as_str()).or_default().push(t);
    }
    by.into_iter().map(|(name, threads)| TypeGroup { name: name.to_string(), threads }).collect()
}

pub(super) fn no_counted_note(analysis: &Analysis) -> Option<String> {
    let states = analysis.options().states;
    (analysis.counted_samples() == 0).then(|| {
        let excluded = analysis.options().threads.excluded().count();
        format!(
            "No counted samples: {} ({:?} states). Select more threads or count more states.",
            if excluded > 0 { format!("{excluded} threads are excluded") } else { "the run has none".to_string() },
            states.as_str()
        )
    })
}

pub(super) fn glyph_with(run: &Run, analyse: &Analyse, req: &GlyphRequest) -> Result<String, PanelError> {
    check_threads(run, &req.params)?;
    let analysis = analyse(&req.params)?;
    let target = resolve(run, &analysis, &req.artifact)?;
    let size = req.size.unwrap_or(if req.interactive { glyph::ENLARGED_PX } else { glyph::IN_SITU_PX });
    Ok(match target {
        Target::Program => program_entry(run, &analysis, &glyph_opts(size, req.theme, req.interactive, "Program ThreadRadar".into())).glyph_svg,
        Target::Artifact(id) => {
            let v = artifact_view(run, &analysis, id, 0);
            let title = v.qualname.clone();
            artifact_entry(run, &v, req.artifact.clone(), &glyph_opts(size, req.theme, req.interactive, title)).glyph_svg
        }
    })
}

pub(super) fn threads_with(run: &Run, analyse: &Analyse, req: &ThreadsRequest) -> Result<ThreadsResponse, PanelError> {
    check_threads(run, &req.params)?;
    let analysis = analyse(&req.params)?;
    let unfiltered = analyse(&Params { exclude_threads: Vec::new(), states: req.params.states, window: req.params.window })?;
    let sources = thread_sources(run, &unfiltered);
    Ok(ThreadsResponse {
        threads: thread_entries(run, &analysis, &sources),
        types: type_groups(run, 0..run.threads.len() as ThreadId),
        counted_samples: analysis.counted_samples(),
    })
}
