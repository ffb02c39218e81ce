//! One analysis of one run: metrics at every level and the thread clusters of every artifact and
//! of the program, for one choice of counted states, thread filter and clustering method.

use crate::artifact::{ArtifactId, ArtifactKind, Artifacts};
use crate::cluster::{ClusterMethod, Clustering};
use crate::error::AnalysisError;
use crate::metrics::{ratio, Metrics};
use crate::threads::{CountedStates, ThreadFilter};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeSet;
use threadradar_profiler::run::{Run, ThreadId};

/// What to count and how to cluster.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    pub states: CountedStates,
    pub threads: ThreadFilter,
    pub method: ClusterMethod,
}

/// A time range of the run, `[from_ns, to_ns)` from its start: an analysis in a window counts
/// only the samples taken in it ("which threads ran this function between 1.2 s and 1.5 s"). Every
/// figure — metrics, clusters, glyphs, hints — is then that of the window, exactly as if the
/// program had only been sampled then; FRQ (Eq. 4) counts the window's samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub struct TimeWindow {
    pub from_ns: u64,
    pub to_ns: u64,
}

impl TimeWindow {
    /// A window from seconds after the run's start (negative values are 0).
    pub fn from_secs(from_s: f64, to_s: f64) -> TimeWindow {
        let ns = |s: f64| (s.max(0.0) * 1e9).round() as u64;
        TimeWindow { from_ns: ns(from_s), to_ns: ns(to_s) }
    }

    /// The samples taken in the window (samples are in time order).
    pub fn samples<'r>(&self, run: &'r Run) -> &'r [threadradar_profiler::run::Sample] {
        let a = run.samples.partition_point(|s| s.t < self.from_ns);
        let b = run.samples.partition_point(|s| s.t < self.to_ns).max(a);
        &run.samples[a..b]
    }
}

/// A time window as the protocol and the panels name it: seconds from the run's start. The
/// global "window" of the language server and `serve` (like the global thread filter): every
/// figure, hint, lens and panel is then computed over the samples in `[from_s, to_s)`.
#[derive(Clone, Copy, Debug, Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub from_s: f64,
    pub to_s: f64,
}

// Windows are cache keys (with the thread filter): equal when their bits are.
impl PartialEq for Window {
    fn eq(&self, other: &Window) -> bool {
        self.from_s.to_bits() == other.from_s.to_bits() && self.to_s.to_bits() == other.to_s.to_bits()
    }
}
impl Eq for Window {}
impl std::hash::Hash for Window {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.from_s.to_bits().hash(h);
        self.to_s.to_bits().hash(h);
    }
}

impl Window {
    /// The window as sample times, after checking it lies in the run: it must start at or after
    /// 0, before the run's end, and end after it starts (an end up to 1 ms past the run's end is
    /// its end, for rounded figures a user copied).
    pub fn check(&self, run: &Run) -> Result<TimeWindow, AnalysisError> {
        let end = run_end_s(run);
        let (f, t) = (self.from_s, self.to_s);
        if !f.is_finite() || !t.is_finite() || f < 0.0 || f >= end || t > end + 1e-3 || t <= f {
            return Err(AnalysisError::BadWindow { from: f, to: t, duration: end });
        }
        Ok(TimeWindow::from_secs(f, t.min(end)))
    }

    /// `1.20–1.50 s`: how the window is shown in a status line.
    pub fn label(&self) -> String {
        format!("{:.2}–{:.2} s", self.from_s, self.to_s)
    }
}

/// The end of the run in seconds: its recorded duration, or the end of its last sample's
/// period when that is later.
pub fn run_end_s(run: &Run) -> f64 {
    let last = run.samples.last().map_or(0.0, |s| s.t as f64 / 1e9 + crate::period::sampling_period_s(run));
    run.meta.duration_s.max(last)
}

/// A cluster of threads for one artifact (or the program): the unit of one glyph sector.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cluster {
    /// Member threads, ascending id.
    pub threads: Vec<ThreadId>,
    /// Average metric value of the members: the strong sector's radius.
    pub avg: f64,
    /// Summed metric value of the members: the weak sector's radius.
    pub sum: f64,
}

/// Metrics and clusters of one run under one set of [`Options`].
///
/// Architecture invariant: an `Analysis` is only made from a run that passed [`Run::validate`],
/// so every id it hands out indexes the run's tables.
#[derive(Clone, Debug)]
pub struct Analysis {
    options: Options,
    window: Option<TimeWindow>,
    artifacts: Artifacts,
    metrics: Metrics,
    clusters: [Vec<Vec<Cluster>>; 3],
    program: Vec<Cluster>,
}

impl Analysis {
    /// Computes everything. Fails only on an inconsistent run; a run without counted samples gives
    /// an analysis whose every figure is zero (see [`Analysis::counted_samples`]).
    pub fn new(run: &Run, options: &Options) -> Result<Analysis, AnalysisError> {
        Analysis::in_window(run, options, None)
    }

    /// Computes everything over the samples of a time window of the run (the whole run for
    /// `None`): every figure of the analysis, and so every view built from it, is the window's.
    pub fn in_window(run: &Run, options: &Options, window: Option<TimeWindow>) -> Result<Analysis, AnalysisError> {
        run.validate()?;
        // `auto` becomes what it means for this run here, once: every figure and view of the
        // analysis then names the states it really counted.
        let options = &Options { states: options.states.resolve(&[run]), ..options.clone() };
        let artifacts = Artifacts::new(run);
        let metrics = Metrics::compute(run, &artifacts, options.states, &options.threads, window);
        // Artifacts are clustered in parallel. Besides using both cores, this matters for the
        // linfa baseline: its k-means splits every step with rayon, which from outside a rayon
        // worker costs a thread hand-off per step (it took ~2 s here instead of ~0.2 s).
        let mut clusters: [Vec<Vec<Cluster>>; 3] = Default::default();
        for kind in ArtifactKind::ALL {
            clusters[kind as usize] = metrics
                .level(kind)
                .par_iter()
                .map(|m| {
                    let ids: Vec<ThreadId> = m.threads.iter().map(|c| c.thread).collect();
                    // crt(a, th), Eq. 6.
                    let values: Vec<f64> = m.threads.iter().map(|c| ratio(c.frq, m.frq)).collect();
                    clusters_of(options.method, &ids, &values)
                })
                .collect::<Result<_, _>>()?;
        }
        let mut values = Vec::new();
        let mut ids = Vec::new();
        for th in 0..run.threads.len() as ThreadId {
            if metrics.thread(th).frq > 0 {
                ids.push(th);
                values.push(metrics.crt_of_thread(th)); // crt(th), Eq. 7
            }
        }
        let program = clusters_of(options.method, &ids, &values)?;
        Ok(Analysis { options: options.clone(), window, artifacts, metrics, clusters, program })
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The time window the analysis covers; `None` for the whole run.
    pub fn window(&self) -> Option<TimeWindow> {
        self.window
    }

    pub fn artifacts(&self) -> &Artifacts {
        &self.artifacts
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The thread samples counted under the options (FRQ, Eq. 4, when samples are counted; the
    /// samples that carried CPU time under `cpu`): 0 means nothing counted.
    pub fn counted_samples(&self) -> u64 {
        self.metrics.counted_samples()
    }

    /// The thread clusters of an artifact by `crt(a, th)`, low → high; empty for an unknown id or
    /// an artifact no counted thread executed.
    pub fn clusters(&self, id: ArtifactId) -> &[Cluster] {
        self.clusters[id.kind as usize].get(id.index as usize).map_or(&[], |v| v.as_slice())
    }

    /// The program's thread clusters by `crt(th)`, low → high, over the included threads that
    /// have counted samples.
    pub fn program_clusters(&self) -> &[Cluster] {
        &self.program
    }

    /// Number of distinct thread types among the threads that executed an artifact (the glyph's
    /// upper pedestal).
    pub fn thread_type_count(&self, run: &Run, id: ArtifactId) -> usize {
        let Some(m) = self.metrics.artifact(id) else { return 0 };
        let types: BTreeSet<&str> =
            m.threads.iter().filter_map(|c| run.threads.get(c.thread as usize)).map(|t| t.thread_type.as_str()).collect();
        types.len()
    }
}

/// Clusters `values` (one per thread in `ids`) and turns labels into [`Cluster`]s.
pub(crate) fn clusters_of(method: ClusterMethod, ids: &[ThreadId], values: &[f64]) -> Result<Vec<Cluster>, AnalysisError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let clustering: Clustering = method.cluster(values)?;
    let mut out: Vec<Cluster> =
        (0..clustering.n_clusters()).map(|_| Cluster { threads: Vec::new(), avg: 0.0, sum: 0.0 }).collect();
    for (i, &l) in clustering.labels().iter().enumerate() {
        out[l].threads.push(ids[i]);
        out[l].sum += values[i];
    }
    for c in &mut out {
        c.threads.sort_unstable();
        c.avg = if c.threads.is_empty() { 0.0 } else { c.sum / c.threads.len() as f64 };
    }
    Ok(out)
}
