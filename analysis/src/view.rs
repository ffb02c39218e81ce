//! The view model: what `threadradar report --json` prints and what the editor panels and the
//! language server show. Plain serialisable data derived from an [`Analysis`]; every share is a
//! fraction in [0, 1] and every time is in seconds.

use crate::analysis::{Analysis, Cluster};
use crate::artifact::{ArtifactId, ArtifactKind, Level};
use crate::error::AnalysisError;
use crate::filter::ArtifactFilter;
use crate::glyph::{text_glyph, GlyphCell, RadarLevel};
use crate::metrics::{ratio, Edge, TimeSource};
use crate::units::Units;
use serde::Serialize;
use std::collections::BTreeSet;
use threadradar_profiler::run::{FileKind, Run, ThreadId};

/// What a view lists.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    /// The artifact level listed in `artifacts`; [`Level::Program`] lists none.
    pub level: Level,
    /// At most this many artifacts, highest `crt` first; `None` for all.
    pub top: Option<usize>,
    pub filter: ArtifactFilter,
    /// Callers and callees listed per function, most frequent first.
    pub max_edges: usize,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions { level: Level::Function, top: None, filter: ArtifactFilter::all(), max_edges: 10 }
    }
}

/// The whole report of one run.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct ReportView {
    pub run: RunSummary,
    /// The thread samples counted: FRQ (Eq. 4) when samples are counted; under `cpu` (where FRQ
    /// is CPU microseconds) the samples that carried CPU time.
    pub counted_samples: u64,
    /// The included threads, by id.
    pub threads: Vec<ThreadView>,
    pub program: ProgramView,
    /// Artifacts of the chosen level that were executed in a counted state and pass the filter,
    /// by `crt` descending, at most `top`.
    pub artifacts: Vec<ArtifactView>,
    /// How many artifacts passed the filter before `top` cut the list.
    pub listed: usize,
}

/// What the run was and how it was analysed.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct RunSummary {
    /// The run file, when the caller knows it.
    pub path: Option<String>,
    pub command: Vec<String>,
    pub cwd: String,
    pub python_version: Option<String>,
    pub start_unix_ms: u64,
    pub duration_s: f64,
    /// The requested sampling interval, as recorded.
    pub interval_ms: f64,
    pub achieved_rate_hz: f64,
    /// The sampling period every figure of the run uses ([`crate::period`]), seconds.
    pub period_s: f64,
    pub sample_count: u64,
    /// All threads the run saw, included or not.
    pub thread_count: usize,
    pub level: Level,
    /// Which thread states counted: `computing`, `computing-cpu`, `computing+gil`, `all`, `waiting` or `cpu` (`auto` resolved).
    pub states: &'static str,
    /// `cop` (COP-KMeans) or `plain` (k-means).
    pub clustering: &'static str,
    /// Where seconds come from: `kernel` CPU accounting or `samples` × period.
    pub time_source: TimeSource,
    /// Threads left out by the thread filter.
    pub excluded_threads: Vec<ThreadId>,
    /// Seconds attributed to all counted samples.
    pub seconds: f64,
    /// What the units (`threads`) are: absent for threads; `tasks` when asyncio tasks are units
    /// (`--units tasks`, [`crate::units`]): each task is one, and samples outside any task stay
    /// with their thread.
    #[serde(skip_serializing_if = "Units::is_threads")]
    pub units: Units,
}

/// One thread, program level.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct ThreadView {
    pub id: ThreadId,
    pub name: String,
    #[serde(rename = "type")]
    pub thread_type: String,
    pub pid: u32,
    pub tid: u32,
    pub is_main: bool,
    /// The unit is an asyncio task (`--units tasks`): `name` is the task's, `type` its coroutine,
    /// `tid` its event loop's thread.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub task: bool,
    /// The counted samples behind `frq(th)` (Eq. 3); see `counted_samples`.
    pub samples: u64,
    /// Samples of the thread in any state.
    pub observed_samples: u64,
    /// `crt(th)` (Eq. 7).
    pub crt: f64,
    /// Seconds attributed to the counted samples.
    pub seconds: f64,
    /// The kernel's total CPU time of the thread between its first and last sample, when known.
    pub cpu_seconds: Option<f64>,
    /// Index of its program cluster, `None` when it has no counted samples.
    pub cluster: Option<usize>,
}

/// The program ThreadRadar.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct ProgramView {
    pub clusters: Vec<ClusterView>,
    /// Threads with counted samples (lower pedestal).
    pub threads: usize,
    /// Their distinct thread types (upper pedestal).
    pub thread_types: usize,
    pub glyph: Vec<GlyphCell>,
}

/// One cluster of threads.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct ClusterView {
    pub threads: Vec<ThreadId>,
    pub avg: f64,
    pub sum: f64,
    pub avg_level: RadarLevel,
    pub sum_level: RadarLevel,
}

/// One artifact with its metrics and clusters.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct ArtifactView {
    pub kind: ArtifactKind,
    pub name: String,
    pub qualname: String,
    pub file: String,
    /// Declaration line; 0 for files and unknown lines.
    pub line: u32,
    pub file_kind: FileKind,
    /// `crt(a)` (Eq. 5), inclusive.
    pub crt: f64,
    pub seconds: f64,
    /// The counted samples behind `frq(a)` (Eq. 2); see `counted_samples`.
    pub samples: u64,
    /// Share of FRQ in which the artifact was the innermost frame.
    pub self_crt: f64,
    pub self_seconds: f64,
    /// Number of threads that executed it (lower pedestal).
    pub threads: usize,
    /// Number of their thread types (upper pedestal).
    pub thread_types: usize,
    pub clusters: Vec<ClusterView>,
    pub glyph: Vec<GlyphCell>,
    /// `crt(a, th)` (Eq. 6) of each thread that executed it, ascending thread id.
    pub per_thread: Vec<ThreadShare>,
    /// Functions only: direct callers and callees; empty for classes and files.
    pub callers: Vec<EdgeView>,
    pub callees: Vec<EdgeView>,
}

/// A thread's share of one artifact.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct ThreadShare {
    pub thread: ThreadId,
    /// `crt(a, th)`.
    pub crt: f64,
    /// The counted samples behind `frq(a, th)`; see `counted_samples`.
    pub samples: u64,
    pub seconds: f64,
}

/// A caller or callee.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct EdgeView {
    pub qualname: String,
    pub file: String,
    pub line: u32,
    /// Counted samples with this call on the stack, over FRQ: comparable with the function's
    /// own `crt`.
    pub crt: f64,
    /// The same samples over the function's `frq(a)`: how much of the function's runtime is
    /// spent called from this caller, or in this callee.
    pub share: f64,
    pub seconds: f64,
}

fn cluster_views(clusters: &[Cluster]) -> Vec<ClusterView> {
    clusters
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

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

impl ReportView {
    /// Builds the view of `run` as analysed by `analysis`. Fails when nothing was counted, since
    /// every share would then be 0 of 0.
    pub fn build(run: &Run, analysis: &Analysis, opts: &ViewOptions) -> Result<ReportView, AnalysisError> {
        let m = analysis.metrics();
        let options = analysis.options();
        if m.frq_total() == 0 {
            let excluded: Vec<ThreadId> = options.threads.excluded().collect();
            return Err(AnalysisError::NoCountedSamples {
                states: options.states.as_str(),
                excluded: if excluded.is_empty() { String::new() } else { format!(" after excluding {} threads", excluded.len()) },
            });
        }
        let program_clusters = analysis.program_clusters();
        let mut cluster_of = vec![None; run.threads.len()];
        for (i, c) in program_clusters.iter().enumerate() {
            for &t in &c.threads {
                cluster_of[t as usize] = Some(i);
            }
        }
        let threads: Vec<ThreadView> = run
            .threads
            .iter()
            .enumerate()
            .filter(|(i, _)| options.threads.includes(*i as ThreadId))
            .map(|(i, t)| {
                let tm = m.thread(i as ThreadId);
                ThreadView {
                    id: i as ThreadId,
                    name: t.name.clone(),
                    thread_type: t.thread_type.clone(),
                    pid: t.pid,
                    tid: t.tid,
                    is_main: t.is_main,
                    task: crate::units::is_task(t),
                    samples: tm.samples,
                    observed_samples: tm.observed,
                    crt: m.crt_of_thread(i as ThreadId),
                    seconds: secs(tm.ns),
                    cpu_seconds: match (t.cpu_ns_first, t.cpu_ns_last) {
                        (Some(a), Some(b)) => Some(secs(b.saturating_sub(a))),
                        _ => None,
                    },
                    cluster: cluster_of[i],
                }
            })
            .collect();
        let active: BTreeSet<&str> = threads.iter().filter(|t| t.samples > 0).map(|t| t.thread_type.as_str()).collect();
        let program = ProgramView {
            clusters: cluster_views(program_clusters),
            threads: threads.iter().filter(|t| t.samples > 0).count(),
            thread_types: active.len(),
            glyph: text_glyph(program_clusters),
        };

        let mut artifacts = Vec::new();
        let mut listed = 0;
        if let Some(kind) = opts.level.kind() {
            let arts = analysis.artifacts();
            let mut ids: Vec<ArtifactId> = arts
                .ids(kind)
                .filter(|&id| m.artifact(id).is_some_and(|a| a.frq > 0))
                .filter(|&id| arts.describe(run, id).is_some_and(|a| opts.filter.keeps(&a)))
                .collect();
            let frq = |id: ArtifactId| m.artifact(id).map_or((0, 0), |a| (a.frq, a.self_frq));
            ids.sort_by(|&a, &b| frq(b).cmp(&frq(a)).then(a.cmp(&b)));
            listed = ids.len();
            ids.truncate(opts.top.unwrap_or(usize::MAX));
            for id in ids {
                artifacts.push(artifact_view(run, analysis, id, opts.max_edges));
            }
        }

        let meta = &run.meta;
        Ok(ReportView {
            run: RunSummary {
                path: None,
                command: meta.command.clone(),
                cwd: meta.cwd.clone(),
                python_version: meta.python_version.clone(),
                start_unix_ms: meta.start_unix_ms,
                duration_s: meta.duration_s,
                interval_ms: meta.interval_ms,
                achieved_rate_hz: meta.achieved_rate_hz,
                period_s: crate::period::sampling_period_s(run),
                sample_count: run.samples.len() as u64,
                thread_count: run.threads.len(),
                level: opts.level,
                states: options.states.as_str(),
                clustering: options.method.as_str(),
                time_source: m.time_source(),
                excluded_threads: options.threads.excluded().collect(),
                seconds: secs(m.total_ns()),
                units: crate::units::units_of(run),
            },
            counted_samples: m.counted_samples(),
            threads,
            program,
            artifacts,
            listed,
        })
    }
}

/// The view of one artifact. `id` must be an artifact of `analysis`.
pub fn artifact_view(run: &Run, analysis: &Analysis, id: ArtifactId, max_edges: usize) -> ArtifactView {
    let m = analysis.metrics();
    let total = m.frq_total();
    let empty = Default::default();
    let am = m.artifact(id).unwrap_or(&empty);
    let arts = analysis.artifacts();
    let d = arts.describe(run, id);
    let edges = |list: &[Edge]| -> Vec<EdgeView> {
        list.iter()
            .take(max_edges)
            .filter_map(|e| {
                let other = arts.describe(run, ArtifactId::function(e.function))?;
                Some(EdgeView {
                    qualname: other.qualname.to_string(),
                    file: other.file.to_string(),
                    line: other.line,
                    crt: ratio(e.frq, total),
                    share: ratio(e.frq, am.frq),
                    seconds: secs(e.ns),
                })
            })
            .collect()
    };
    let (callers, callees) = match id.kind {
        ArtifactKind::Function => (edges(m.callers(id.index)), edges(m.callees(id.index))),
        _ => (Vec::new(), Vec::new()),
    };
    let clusters = analysis.clusters(id);
    ArtifactView {
        kind: id.kind,
        name: d.as_ref().map_or(String::new(), |d| d.name.to_string()),
        qualname: d.as_ref().map_or(String::new(), |d| d.qualname.to_string()),
        file: d.as_ref().map_or(String::new(), |d| d.file.to_string()),
        line: d.as_ref().map_or(0, |d| d.line),
        file_kind: d.as_ref().map_or(FileKind::Unknown, |d| d.file_kind),
        crt: ratio(am.frq, total),
        seconds: secs(am.ns),
        samples: am.samples,
        self_crt: ratio(am.self_frq, total),
        self_seconds: secs(am.self_ns),
        threads: am.threads.len(),
        thread_types: analysis.thread_type_count(run, id),
        clusters: cluster_views(clusters),
        glyph: text_glyph(clusters),
        per_thread: am
            .threads
            .iter()
            .map(|c| ThreadShare { thread: c.thread, crt: ratio(c.frq, am.frq), samples: c.samples, seconds: secs(c.ns) })
            .collect(),
        callers,
        callees,
    }
}
