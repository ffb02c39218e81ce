//! The detail view of one artifact under a thread selection: clusters, the thread tree, the
//! histogram, callers and callees.

use super::*;

/// A thread of the detail tree: id, crt under the selection, crt with nothing excluded, samples.
pub(super) type Member = (ThreadId, Option<f64>, f64, u64);

pub(super) fn detail_with(run: &Run, analyse: &Analyse, req: &DetailRequest) -> Result<DetailResponse, PanelError> {
    check_threads(run, &req.params)?;
    let analysis = analyse(&req.params)?;
    let unfiltered = analyse(&Params { exclude_threads: Vec::new(), states: req.params.states, window: req.params.window })?;
    let target = resolve(run, &unfiltered, &req.artifact)?;
    let opts = glyph_opts(req.size.unwrap_or(glyph::ENLARGED_PX), req.theme, true, String::new());
    let m = analysis.metrics();
    let mu = unfiltered.metrics();
    let sources = thread_sources(run, &unfiltered);
    let filter = &analysis.options().threads;

    let (entry, members, callers, callees): (ArtifactEntry, Vec<Member>, _, _) = match target {
        Target::Program => {
            let mut opts = opts.clone();
            opts.title = Some("Program ThreadRadar".into());
            let members = (0..run.threads.len() as ThreadId)
                .filter(|&t| mu.thread(t).frq > 0)
                .map(|t| {
                    let sel = filter.includes(t).then(|| m.crt_of_thread(t));
                    (t, sel, mu.crt_of_thread(t), m.thread(t).samples)
                })
                .collect();
            (program_entry(run, &analysis, &opts), members, Vec::new(), Vec::new())
        }
        Target::Artifact(id) => {
            let v = artifact_view(run, &analysis, id, 10);
            let a = unfiltered.artifacts().describe(run, id);
            let mut opts = opts.clone();
            opts.title = a.as_ref().map(|a| a.qualname.to_string());
            let members = mu
                .artifact(id)
                .map(|am| {
                    am.threads
                        .iter()
                        .map(|c| {
                            let sel = filter.includes(c.thread).then(|| m.crt_thread(id, c.thread));
                            let samples = m
                                .artifact(id)
                                .and_then(|x| x.threads.iter().find(|y| y.thread == c.thread))
                                .map_or(0, |y| y.samples);
                            (c.thread, sel, ratio(c.frq, am.frq), samples)
                        })
                        .collect()
                })
                .unwrap_or_default();
            let edges = |list: &[crate::view::EdgeView]| -> Vec<EdgeEntry> {
                list.iter()
                    .map(|e| EdgeEntry {
                        key: ArtifactKey::function(&e.file, e.line, &e.qualname),
                        qualname: e.qualname.clone(),
                        file: e.file.clone(),
                        line: e.line,
                        crt: e.crt,
                        share: e.share,
                        seconds: e.seconds,
                    })
                    .collect()
            };
            let (callers, callees) = (edges(&v.callers), edges(&v.callees));
            (artifact_entry(run, &v, req.artifact.clone(), &opts), members, callers, callees)
        }
    };

    let n = entry.clusters.len();
    let mut cluster_of: BTreeMap<ThreadId, usize> = BTreeMap::new();
    for c in &entry.clusters {
        for &t in &c.threads {
            cluster_of.insert(t, c.index);
        }
    }
    let threads: Vec<DetailThread> = members
        .iter()
        .map(|&(t, sel, all, samples)| {
            let th = &run.threads[t as usize];
            let cluster = cluster_of.get(&t).copied();
            let src = sources.get(t as usize).cloned().flatten();
            DetailThread {
                id: t,
                name: th.name.clone(),
                thread_type: th.thread_type.clone(),
                crt: sel,
                crt_all: all,
                cluster,
                colour: cluster.map(|c| ClusterColour::of(c, n)),
                excluded: sel.is_none(),
                samples,
                line: src.as_ref().map_or(0, |s| s.1),
                file: src.map(|s| s.0),
            }
        })
        .collect();
    let selected: Vec<&DetailThread> = threads.iter().filter(|t| !t.excluded && t.crt.is_some_and(|c| c > 0.0)).collect();
    let selection = Selection {
        crt_sum: selected.iter().map(|t| t.crt_all).sum(),
        crt: entry.crt,
        threads: selected.len(),
        thread_types: selected.iter().map(|t| t.thread_type.as_str()).collect::<BTreeSet<_>>().len(),
    };
    let points: Vec<HistogramPoint> = selected
        .iter()
        .map(|t| HistogramPoint {
            thread: t.id,
            label: t.name.clone(),
            value: t.crt.unwrap_or(0.0),
            colour: t.colour.unwrap_or(ClusterColour::Low),
        })
        .collect();
    let histogram_bins = req.histogram_columns.map_or_else(Vec::new, |c| histogram::bins(&points, c.clamp(1, 1000)));
    let histogram_svg = histogram::svg(
        &points,
        &histogram::HistogramOptions {
            width: req.histogram_width.unwrap_or(480).clamp(60, 4096),
            height: req.histogram_height.unwrap_or(120).clamp(30, 4096),
            theme: req.theme,
        },
    );
    Ok(DetailResponse {
        artifact: entry,
        selection,
        types: type_groups(run, threads.iter().map(|t| t.id)),
        threads,
        histogram_svg,
        histogram_bins,
        callers,
        callees,
        note: no_counted_note(&analysis).or_else(|| {
            (selected_count(&members) == 0).then(|| "None of the selected threads executed this artifact.".to_string())
        }),
    })
}

pub(super) fn selected_count(members: &[Member]) -> usize {
    members.iter().filter(|m| m.1.is_some_and(|c| c > 0.0)).count()
}
