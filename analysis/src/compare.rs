//! Comparing two runs of a program, typically before and after a fix: per artifact, how its
//! computational runtime `crt(a)` (Eq. 5), its seconds, the threads that executed it, their types
//! and their clusters changed.
//!
//! Two runs share no ids, so artifacts are matched by name, never by line (a fix moves lines):
//!
//! 1. by kind, file and qualified name. When one file defines a qualified name several times
//!    (a property's getter and setter) and both runs have the same number of them, they are
//!    paired in declaration order; different numbers match none of them;
//! 2. what is left, by kind and qualified name alone, when that name is unique among the
//!    unmatched artifacts of both runs in files of the same kind (the program's own code, the
//!    standard library, third-party code): `WorkerManager.__init__` of `buggy.py` matches the one
//!    of `fixed.py`, but two `main`s of different files do not match one `main` elsewhere, and
//!    the program's code never matches a library's.
//!
//! An artifact executed (in a counted state) in only one run is `removed` or `added`; its figures
//! on the other side are absent and count as 0 in the deltas. Each side's figures are exactly those
//! of [`artifact_view`], i.e. of `report --json` on that run with the same options.

use crate::analysis::Analysis;
use crate::artifact::{Artifact, ArtifactId, ArtifactKind, Level};
use crate::error::AnalysisError;
use crate::filter::ArtifactFilter;
use crate::glyph::GlyphCell;
use crate::metrics::TimeSource;
use crate::view::{artifact_view, ReportView, ViewOptions};
use serde::Serialize;
use std::collections::HashMap;
use threadradar_profiler::run::{FileKind, Run};

/// What a comparison lists.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// The artifact level compared; [`Level::Program`] lists no artifacts (the sides' `program`
    /// figures are always there).
    pub level: Level,
    /// Lists an artifact when either side passes.
    pub filter: ArtifactFilter,
    /// At most this many artifacts, largest `|crt_delta|` first; `None` for all.
    pub top: Option<usize>,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions { level: Level::Function, filter: ArtifactFilter::all(), top: None }
    }
}

/// Two runs side by side.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct Comparison {
    pub level: Level,
    /// The earlier run (before the change).
    pub base: SideSummary,
    /// The later run (after the change).
    pub new: SideSummary,
    /// Matched, added and removed artifacts that pass the filter, by `|crt_delta|` descending
    /// (then qualified name), at most `top`.
    pub artifacts: Vec<ArtifactDelta>,
    /// How many artifacts passed the filter before `top` cut the list.
    pub listed: usize,
    /// Of those, how many were executed only in the base run (`removed`)…
    pub only_in_base: usize,
    /// …and only in the new run (`added`).
    pub only_in_new: usize,
    /// What changed, as data with its words: the listed artifacts' changes (and, from `compare`
    /// and the trace comparison, the trace's and the waits'), ranked by [`crate::changes::rank`].
    pub changes: Vec<Change>,
    /// Changes left out because they rest on too few samples or events ([`crate::changes::supported`]).
    pub suppressed: usize,
    /// Why, in one sentence with the next step; `None` when nothing was left out.
    pub suppressed_note: Option<String>,
    /// How the changes were tested against the runs' own spread, when a side is a run set
    /// (`crate::runset::mark_significance`); `None` for one run against one run.
    pub significance: Option<crate::runset::Significance>,
}

/// One run of a comparison.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct SideSummary {
    /// The run file, when the caller knows it.
    pub path: Option<String>,
    pub command: Vec<String>,
    pub duration_s: f64,
    pub sample_count: u64,
    /// All threads the run saw, included or not.
    pub thread_count: usize,
    /// Which thread states counted: `computing`, `computing-cpu`, `computing+gil`, `all`, `waiting` or `cpu`.
    pub states: &'static str,
    /// Where seconds come from: `kernel` CPU accounting or `samples` × period.
    pub time_source: TimeSource,
    /// Seconds attributed to all counted samples.
    pub seconds: f64,
    /// The thread samples counted (see `ReportView::counted_samples`).
    pub counted_samples: u64,
    pub program: ProgramFigures,
}

/// The program ThreadRadar of one run.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct ProgramFigures {
    /// Threads with counted samples (lower pedestal).
    pub threads: usize,
    /// Their distinct thread types (upper pedestal).
    pub thread_types: usize,
    /// Number of program clusters.
    pub clusters: usize,
    pub glyph: Vec<GlyphCell>,
}

/// One artifact's figures in one run: the same values as [`crate::view::ArtifactView`].
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct SideFigures {
    /// `crt(a)` (Eq. 5), inclusive.
    pub crt: f64,
    pub self_crt: f64,
    pub seconds: f64,
    /// `frq(a)` (Eq. 2).
    pub samples: u64,
    /// Threads that executed it (lower pedestal).
    pub threads: usize,
    /// Their thread types (upper pedestal).
    pub thread_types: usize,
    /// Number of thread clusters.
    pub clusters: usize,
    pub glyph: Vec<GlyphCell>,
}

/// Whether an artifact was executed in both runs or in one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum DeltaStatus {
    /// In both runs (its figures may still be equal).
    Changed,
    /// Only in the new run.
    Added,
    /// Only in the base run.
    Removed,
}

/// One artifact of a comparison. Deltas are new − base, with an absent side counting as 0.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct ArtifactDelta {
    pub kind: ArtifactKind,
    pub qualname: String,
    pub file_base: Option<String>,
    pub file_new: Option<String>,
    /// Declaration lines; 0 for files and unknown lines.
    pub line_base: Option<u32>,
    pub line_new: Option<u32>,
    /// The new run's, else the base run's.
    pub file_kind: FileKind,
    pub base: Option<SideFigures>,
    pub new: Option<SideFigures>,
    /// Change of `crt(a)`, a difference of fractions (0.1 = 10 percentage points).
    pub crt_delta: f64,
    pub seconds_delta: f64,
    pub threads_delta: i64,
    pub status: DeltaStatus,
    /// `crt_delta` as clients print it: `+12.3pp`, `-0.4pp`, `0.0pp`.
    pub crt_delta_text: String,
    /// Whether crt rose, fell or stayed within a twentieth of a percentage point.
    pub trend: Trend,
    /// What changed, in words (the words of this artifact's [`Change`]s, each backed by the figures
    /// above); empty when nothing did.
    pub statements: Vec<String>,
}

/// The direction of a change of `crt(a)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Trend {
    Increase,
    Decrease,
    Same,
}

pub use crate::changes::Change;

/// Below this |Δcrt| (a twentieth of a percentage point) a change is no change.
const SAME_CRT: f64 = 0.0005;

/// `+12.3pp`.
pub fn pp_text(delta: f64) -> String {
    let tenths = (delta * 1000.0).round();
    if tenths == 0.0 {
        return "0.0pp".into();
    }
    format!("{}{:.1}pp", if tenths > 0.0 { "+" } else { "-" }, tenths.abs() / 10.0)
}

/// The changes of one artifact's figures between the runs, as data (their words: [`crate::changes::render`]).
/// Added and removed artifacts are one change of crt from or to nothing; a matched artifact's
/// threads, crt (by at least half a percentage point) and number of clusters, when they moved.
fn artifact_changes(a: &ArtifactDelta) -> Vec<Change> {
    use crate::changes::{ChangeEvidence as Evidence, EvidenceSource as Source, EvidenceUnit as Unit, Figure};
    let (b, n) = (a.base.as_ref(), a.new.as_ref());
    let evidence = Evidence {
        source: Source::Sampled,
        unit: Unit::Samples,
        base: b.map_or(0, |f| f.samples),
        new: n.map_or(0, |f| f.samples),
        threads_base: b.map_or(0, |f| f.threads),
        threads_new: n.map_or(0, |f| f.threads),
    };
    let change = |figure: Figure, before: f64, after: f64| {
        Change::new(&a.qualname, a.kind, a.file_kind, figure, a.status, before, after, evidence.clone())
            .at(a.file_new.clone().or_else(|| a.file_base.clone()), a.line_new.or(a.line_base))
    };
    match (a.status, b, n) {
        (DeltaStatus::Added, _, Some(n)) => vec![change(Figure::Crt, 0.0, n.crt)],
        (DeltaStatus::Removed, Some(b), _) => vec![change(Figure::Crt, b.crt, 0.0)],
        (_, Some(b), Some(n)) => {
            let mut out = Vec::new();
            if b.threads != n.threads {
                out.push(change(Figure::Threads, b.threads as f64, n.threads as f64));
            }
            if (n.crt - b.crt).abs() >= SAME_CRT * 10.0 {
                out.push(change(Figure::Crt, b.crt, n.crt));
            }
            if b.clusters != n.clusters {
                out.push(change(Figure::Clusters, b.clusters as f64, n.clusters as f64));
            }
            out
        }
        _ => Vec::new(),
    }
}

impl Comparison {
    /// Compares `new_run` (as analysed by `new_analysis`) with `base_run`. Fails when nothing was
    /// counted in either run, as [`ReportView::build`] does.
    pub fn build(
        base_run: &Run,
        base_analysis: &Analysis,
        new_run: &Run,
        new_analysis: &Analysis,
        opts: &CompareOptions,
    ) -> Result<Comparison, AnalysisError> {
        let base = side_summary(base_run, base_analysis)?;
        let new = side_summary(new_run, new_analysis)?;
        let Some(kind) = opts.level.kind() else {
            return Ok(Comparison { level: opts.level, base, new, artifacts: Vec::new(), listed: 0, only_in_base: 0, only_in_new: 0, changes: Vec::new(), suppressed: 0, suppressed_note: None, significance: None });
        };
        let in_base = executed(base_run, base_analysis, kind);
        let in_new = executed(new_run, new_analysis, kind);
        let mut artifacts: Vec<ArtifactDelta> = match_artifacts(&in_base, &in_new)
            .into_iter()
            .filter(|&(b, n)| b.is_some_and(|i| opts.filter.keeps(&in_base[i])) || n.is_some_and(|i| opts.filter.keeps(&in_new[i])))
            .map(|(b, n)| {
                let b = b.map(|i| (&in_base[i], figures(base_run, base_analysis, in_base[i].id)));
                let n = n.map(|i| (&in_new[i], figures(new_run, new_analysis, in_new[i].id)));
                delta(b, n)
            })
            .collect();
        artifacts.sort_by(|a, b| {
            b.crt_delta
                .abs()
                .total_cmp(&a.crt_delta.abs())
                .then_with(|| a.qualname.cmp(&b.qualname))
                .then_with(|| a.file_base.cmp(&b.file_base))
                .then_with(|| a.file_new.cmp(&b.file_new))
                .then_with(|| a.line_base.cmp(&b.line_base))
                .then_with(|| a.line_new.cmp(&b.line_new))
        });
        let listed = artifacts.len();
        let only_in_base = artifacts.iter().filter(|a| a.status == DeltaStatus::Removed).count();
        let only_in_new = artifacts.iter().filter(|a| a.status == DeltaStatus::Added).count();
        // What changed is worked out over every listed artifact: `top` cuts the table, not the
        // changes (a change of a function low in the crt order may lead them).
        let changes = artifacts.iter_mut().flat_map(|a| {
            let changes = artifact_changes(a);
            a.statements = changes.iter().map(|c| c.statement.clone()).collect();
            changes
        });
        let changes = changes.collect();
        artifacts.truncate(opts.top.unwrap_or(usize::MAX));
        let mut c = Comparison { level: opts.level, base, new, artifacts, listed, only_in_base, only_in_new, changes, suppressed: 0, suppressed_note: None, significance: None };
        crate::changes::rank(&mut c);
        Ok(c)
    }
}

/// The run and program figures of one side, from the program-level report view so that they are
/// the report's.
fn side_summary(run: &Run, analysis: &Analysis) -> Result<SideSummary, AnalysisError> {
    let view = ReportView::build(run, analysis, &ViewOptions { level: Level::Program, ..ViewOptions::default() })?;
    let r = view.run;
    Ok(SideSummary {
        path: r.path,
        command: r.command,
        duration_s: r.duration_s,
        sample_count: r.sample_count,
        thread_count: r.thread_count,
        states: r.states,
        time_source: r.time_source,
        seconds: r.seconds,
        counted_samples: view.counted_samples,
        program: ProgramFigures {
            threads: view.program.threads,
            thread_types: view.program.thread_types,
            clusters: view.program.clusters.len(),
            glyph: view.program.glyph,
        },
    })
}

/// The artifacts of a kind executed in a counted state, in table order.
fn executed<'r>(run: &'r Run, analysis: &Analysis, kind: ArtifactKind) -> Vec<Artifact<'r>> {
    let m = analysis.metrics();
    analysis
        .artifacts()
        .ids(kind)
        .filter(|&id| m.artifact(id).is_some_and(|a| a.frq > 0))
        .filter_map(|id| analysis.artifacts().describe(run, id))
        .collect()
}

fn figures(run: &Run, analysis: &Analysis, id: ArtifactId) -> SideFigures {
    let v = artifact_view(run, analysis, id, 0);
    SideFigures {
        crt: v.crt,
        self_crt: v.self_crt,
        seconds: v.seconds,
        samples: v.samples,
        threads: v.threads,
        thread_types: v.thread_types,
        clusters: v.clusters.len(),
        glyph: v.glyph,
    }
}

/// Pairs the artifacts of two runs (indices into `base` and `new`; `None` for a missing side) by
/// the rules in the module documentation. Every artifact appears in exactly one pair.
fn match_artifacts(base: &[Artifact], new: &[Artifact]) -> Vec<(Option<usize>, Option<usize>)> {
    let mut pairs = Vec::new();
    let mut matched_base = vec![false; base.len()];
    let mut matched_new = vec![false; new.len()];

    // 1. Same kind, file and qualified name. A key with several artifacts (a name defined twice in
    //    one file) pairs them in declaration order, when both runs have as many.
    let new_by_key = by_key(new);
    for (key, mut bs) in by_key(base) {
        let Some(ns) = new_by_key.get(&key) else { continue };
        if bs.len() != ns.len() {
            continue;
        }
        let mut ns = ns.clone();
        bs.sort_by_key(|&i| (base[i].line, i));
        ns.sort_by_key(|&i| (new[i].line, i));
        for (b, n) in bs.into_iter().zip(ns) {
            matched_base[b] = true;
            matched_new[n] = true;
            pairs.push((Some(b), Some(n)));
        }
    }

    // 2. What is left, by kind and qualified name when it is unique among the unmatched of both
    //    runs in files of the same kind (so that modules the standard library loaded in only one
    //    run do not make the program's own `<module>` ambiguous).
    let new_by_name = by_name(new, &matched_new);
    for (key, bs) in by_name(base, &matched_base) {
        if let ([b], Some([n])) = (bs.as_slice(), new_by_name.get(&key).map(Vec::as_slice)) {
            matched_base[*b] = true;
            matched_new[*n] = true;
            pairs.push((Some(*b), Some(*n)));
        }
    }

    pairs.extend((0..base.len()).filter(|&i| !matched_base[i]).map(|i| (Some(i), None)));
    pairs.extend((0..new.len()).filter(|&i| !matched_new[i]).map(|i| (None, Some(i))));
    pairs
}

/// The artifacts of one run by kind, file and qualified name.
fn by_key<'r>(arts: &[Artifact<'r>]) -> HashMap<(ArtifactKind, &'r str, &'r str), Vec<usize>> {
    let mut m: HashMap<_, Vec<usize>> = HashMap::new();
    for (i, a) in arts.iter().enumerate() {
        m.entry((a.id.kind, a.file, a.qualname)).or_default().push(i);
    }
    m
}

/// The unmatched artifacts of one run by kind, file kind and qualified name.
fn by_name<'r>(arts: &[Artifact<'r>], matched: &[bool]) -> HashMap<(ArtifactKind, FileKind, &'r str), Vec<usize>> {
    let mut m: HashMap<_, Vec<usize>> = HashMap::new();
    for (i, a) in arts.iter().enumerate().filter(|(i, _)| !matched[*i]) {
        m.entry((a.id.kind, a.file_kind, a.qualname)).or_default().push(i);
    }
    m
}

fn delta(base: Option<(&Artifact, SideFigures)>, new: Option<(&Artifact, SideFigures)>) -> ArtifactDelta {
    let status = match (&base, &new) {
        (Some(_), Some(_)) => DeltaStatus::Changed,
        (None, _) => DeltaStatus::Added,
        (_, None) => DeltaStatus::Removed,
    };
    let any = new.as_ref().or(base.as_ref()).map(|(a, _)| *a).expect("a pair has at least one side");
    // (crt, seconds, threads) of a side, 0 when absent.
    let figs = |s: &Option<(&Artifact, SideFigures)>| s.as_ref().map_or((0.0, 0.0, 0), |(_, f)| (f.crt, f.seconds, f.threads as i64));
    let ((crt_b, sec_b, thr_b), (crt_n, sec_n, thr_n)) = (figs(&base), figs(&new));
    let crt_delta = crt_n - crt_b;
    let trend = if crt_delta > SAME_CRT {
        Trend::Increase
    } else if crt_delta < -SAME_CRT {
        Trend::Decrease
    } else {
        Trend::Same
    };
    ArtifactDelta {
        crt_delta_text: pp_text(crt_delta),
        trend,
        statements: Vec::new(),
        kind: any.id.kind,
        qualname: any.qualname.to_string(),
        file_base: base.as_ref().map(|(a, _)| a.file.to_string()),
        file_new: new.as_ref().map(|(a, _)| a.file.to_string()),
        line_base: base.as_ref().map(|(a, _)| a.line),
        line_new: new.as_ref().map(|(a, _)| a.line),
        file_kind: any.file_kind,
        crt_delta: crt_n - crt_b,
        seconds_delta: sec_n - sec_b,
        threads_delta: thr_n - thr_b,
        status,
        base: base.map(|(_, f)| f),
        new: new.map(|(_, f)| f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Options;
    use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
    use threadradar_profiler::run::{Meta, Sample, ThreadSample, ThreadState};

    /// A run in which function `f` (of `funcs`: file, qualified name, `def` line; the class is the
    /// name's prefix) is computing in thread `t` for `n` samples, for each `(f, t, n)` of `work`,
    /// one observation per sample: crt(f) is its samples over all samples.
    fn run(funcs: &[(&str, &str, u32)], work: &[(usize, u32, u64)]) -> Run {
        let mut b = RunBuilder::new(Meta { interval_ms: 3.0, cwd: "/p".into(), ..Meta::default() });
        let ids: Vec<_> = funcs
            .iter()
            .map(|&(file, qualname, line)| {
                let kind = if file.starts_with("/usr/lib") { FileKind::Stdlib } else { FileKind::User };
                let f = b.file(file, kind, None);
                let class = qualname.rsplit_once('.').map(|(c, _)| c);
                b.function(f, &FunctionSpec { qualname, class, line, end_line: line + 5, class_line: class.map_or(0, |_| 1) })
            })
            .collect();
        let threads = work.iter().map(|w| w.1 + 1).max().unwrap_or(0);
        for t in 0..threads {
            b.thread(new_thread(10, 11 + t, t as u64, &format!("T{t}"), "Worker"));
        }
        let mut tick = 0;
        for &(f, thread, n) in work {
            let frame = b.frame(ids[f], ids[f] + 1);
            let stack = b.stack(&[frame]);
            for _ in 0..n {
                b.push_sample(Sample {
                    t: tick * 3_000_000,
                    threads: vec![ThreadSample { thread, stack, state: ThreadState::Computing, ..Default::default() }],
                });
                tick += 1;
            }
        }
        b.finish()
    }

    fn compare(base: &Run, new: &Run, opts: &CompareOptions) -> Comparison {
        let a = Analysis::new(base, &Options::default()).unwrap();
        let b = Analysis::new(new, &Options::default()).unwrap();
        Comparison::build(base, &a, new, &b, opts).unwrap()
    }

    fn find<'c>(c: &'c Comparison, qualname: &str) -> Vec<&'c ArtifactDelta> {
        c.artifacts.iter().filter(|a| a.qualname == qualname).collect()
    }

    /// Bug 1 in miniature: the constructor runs in three threads in `buggy.py`, in one in
    /// `fixed.py`; `common.py` is the same file in both.
    fn bug1() -> (Run, Run) {
        let buggy = run(
            &[("/p/buggy.py", "WorkerManager.__init__", 60), ("/p/buggy.py", "Worker.run", 100), ("/p/common.py", "busy_work", 5)],
            &[(0, 0, 10), (0, 1, 10), (0, 2, 10), (1, 0, 30), (2, 1, 40)],
        );
        let fixed = run(
            &[("/p/fixed.py", "WorkerManager.__init__", 62), ("/p/fixed.py", "Worker.run", 104), ("/p/common.py", "busy_work", 5)],
            &[(0, 1, 10), (1, 0, 20), (1, 2, 20), (2, 1, 50)],
        );
        (buggy, fixed)
    }

    #[test]
    fn same_file_matches_exactly_and_a_unique_name_across_files() {
        let (buggy, fixed) = bug1();
        let c = compare(&buggy, &fixed, &CompareOptions::default());
        assert_eq!((c.listed, c.only_in_base, c.only_in_new), (3, 0, 0));
        let init = find(&c, "WorkerManager.__init__");
        assert_eq!(init.len(), 1);
        let init = init[0];
        assert_eq!(init.status, DeltaStatus::Changed);
        assert_eq!((init.file_base.as_deref(), init.file_new.as_deref()), (Some("/p/buggy.py"), Some("/p/fixed.py")));
        assert_eq!((init.line_base, init.line_new), (Some(60), Some(62)));
        let (b, n) = (init.base.as_ref().unwrap(), init.new.as_ref().unwrap());
        assert_eq!((b.threads, n.threads, init.threads_delta), (3, 1, -2));
        assert_eq!((b.samples, n.samples), (30, 10));
        assert_eq!((b.crt, n.crt), (0.3, 0.1));
        assert_eq!(init.crt_delta, n.crt - b.crt);
        assert_eq!(b.clusters, 1, "three equal shares are one chunklet");
        let busy = find(&c, "busy_work")[0];
        assert_eq!((busy.file_base.as_deref(), busy.file_new.as_deref()), (Some("/p/common.py"), Some("/p/common.py")));
        assert_eq!(busy.crt_delta, 0.5 - 0.4);
        let run_ = find(&c, "Worker.run")[0];
        assert_eq!((run_.base.as_ref().unwrap().threads, run_.new.as_ref().unwrap().threads, run_.threads_delta), (1, 2, 1));
        assert_eq!(c.base.counted_samples, 100);
        assert_eq!(c.new.program.threads, 3);
    }

    #[test]
    fn each_side_has_the_report_figures() {
        let (buggy, fixed) = bug1();
        let c = compare(&buggy, &fixed, &CompareOptions::default());
        for (run, new) in [(&buggy, false), (&fixed, true)] {
            let a = Analysis::new(run, &Options::default()).unwrap();
            let report = ReportView::build(run, &a, &ViewOptions::default()).unwrap();
            let side = if new { &c.new } else { &c.base };
            assert_eq!(side.counted_samples, report.counted_samples);
            assert_eq!(side.seconds, report.run.seconds);
            assert_eq!(side.program.glyph, report.program.glyph);
            for v in &report.artifacts {
                let d = find(&c, &v.qualname)[0];
                let f = if new { d.new.as_ref() } else { d.base.as_ref() }.unwrap();
                assert_eq!((f.crt, f.self_crt, f.seconds, f.samples), (v.crt, v.self_crt, v.seconds, v.samples));
                assert_eq!((f.threads, f.thread_types, f.clusters, &f.glyph), (v.threads, v.thread_types, v.clusters.len(), &v.glyph));
            }
        }
    }

    #[test]
    fn an_ambiguous_name_matches_nothing() {
        // Two `main`s in the base, one elsewhere in the new run: which one became it is a guess.
        let base = run(&[("/p/a.py", "main", 1), ("/p/b.py", "main", 1)], &[(0, 0, 10), (1, 0, 10)]);
        let new = run(&[("/p/c.py", "main", 1)], &[(0, 0, 10)]);
        let c = compare(&base, &new, &CompareOptions::default());
        let mains = find(&c, "main");
        assert_eq!(mains.len(), 3);
        assert_eq!((c.only_in_base, c.only_in_new), (2, 1));
        assert!(mains.iter().all(|d| d.base.is_none() != d.new.is_none()));
        // …but the same file still matches exactly, and leaves the other unique.
        let new = run(&[("/p/a.py", "main", 7), ("/p/c.py", "main", 1)], &[(0, 0, 10), (1, 0, 10)]);
        let c = compare(&base, &new, &CompareOptions::default());
        assert_eq!((c.only_in_base, c.only_in_new), (0, 0));
        let pairs: Vec<_> = c.artifacts.iter().map(|d| (d.file_base.as_deref().unwrap(), d.file_new.as_deref().unwrap())).collect();
        assert!(pairs.contains(&("/p/a.py", "/p/a.py")) && pairs.contains(&("/p/b.py", "/p/c.py")), "{pairs:?}");
    }

    #[test]
    fn the_fallback_stays_within_a_file_kind() {
        // The standard library's modules loaded in one run only do not make the program's own
        // `<module>` ambiguous, and a library function never stands in for the program's.
        let base = run(
            &[("/p/buggy.py", "<module>", 0), ("/usr/lib/python3/re/__init__.py", "<module>", 0), ("/p/buggy.py", "compile", 3)],
            &[(0, 0, 10), (1, 0, 10), (2, 0, 10)],
        );
        let new = run(&[("/p/fixed.py", "<module>", 0), ("/usr/lib/python3/re/__init__.py", "compile", 225)], &[(0, 0, 10), (1, 0, 10)]);
        let c = compare(&base, &new, &CompareOptions::default());
        let module: Vec<_> = find(&c, "<module>").into_iter().filter(|d| d.status == DeltaStatus::Changed).collect();
        assert_eq!(module.len(), 1);
        assert_eq!((module[0].file_base.as_deref(), module[0].file_new.as_deref()), (Some("/p/buggy.py"), Some("/p/fixed.py")));
        assert!(find(&c, "compile").iter().all(|d| d.status != DeltaStatus::Changed));
        assert_eq!((c.only_in_base, c.only_in_new), (2, 1));
    }

    #[test]
    fn a_name_defined_twice_in_a_file_pairs_in_declaration_order() {
        // A property's getter and setter share a qualified name; lines moved in the new run.
        let base = run(&[("/p/a.py", "C.x", 10), ("/p/a.py", "C.x", 14)], &[(0, 0, 10), (1, 0, 30)]);
        let new = run(&[("/p/a.py", "C.x", 24), ("/p/a.py", "C.x", 20)], &[(0, 0, 30), (1, 0, 10)]);
        let c = compare(&base, &new, &CompareOptions::default());
        let lines: Vec<_> = c.artifacts.iter().map(|d| (d.line_base, d.line_new)).collect();
        assert_eq!(lines, vec![(Some(10), Some(20)), (Some(14), Some(24))]);
        assert!(c.artifacts.iter().all(|d| d.crt_delta == 0.0));
        // Different counts: no pairing guess.
        let new = run(&[("/p/a.py", "C.x", 20)], &[(0, 0, 10)]);
        let c = compare(&base, &new, &CompareOptions::default());
        assert_eq!((c.only_in_base, c.only_in_new), (2, 1));
    }

    #[test]
    fn added_and_removed_count_the_missing_side_as_zero() {
        let base = run(&[("/p/a.py", "old", 1), ("/p/a.py", "kept", 9)], &[(0, 0, 25), (1, 1, 75)]);
        let new = run(&[("/p/a.py", "fresh", 3), ("/p/a.py", "kept", 9)], &[(0, 2, 50), (1, 1, 50)]);
        let c = compare(&base, &new, &CompareOptions::default());
        let old = find(&c, "old")[0];
        assert_eq!(old.status, DeltaStatus::Removed);
        assert!(old.new.is_none() && old.file_new.is_none() && old.line_new.is_none());
        assert_eq!((old.crt_delta, old.threads_delta), (-0.25, -1));
        assert_eq!(old.seconds_delta, -old.base.as_ref().unwrap().seconds);
        let fresh = find(&c, "fresh")[0];
        assert_eq!(fresh.status, DeltaStatus::Added);
        assert!(fresh.base.is_none() && fresh.file_base.is_none());
        assert_eq!((fresh.crt_delta, fresh.threads_delta), (0.5, 1));
        assert_eq!(find(&c, "kept")[0].crt_delta, 0.5 - 0.75);
        assert_eq!((c.listed, c.only_in_base, c.only_in_new), (3, 1, 1));
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["artifacts"][0]["status"], "added");
        assert_eq!(json["artifacts"][0]["base"], serde_json::Value::Null);
    }

    #[test]
    fn sorted_by_absolute_crt_delta_then_name() {
        // Deltas: b −0.3, c +0.2, e +0.1 (added), a and d 0 (a before d).
        let funcs = [("/p/m.py", "d", 1), ("/p/m.py", "a", 2), ("/p/m.py", "b", 3), ("/p/m.py", "c", 4), ("/p/m.py", "e", 5)];
        let base = run(&funcs, &[(0, 0, 20), (1, 0, 20), (2, 0, 50), (3, 0, 10)]);
        let new = run(&funcs, &[(0, 0, 20), (1, 0, 20), (2, 0, 20), (3, 0, 30), (4, 0, 10)]);
        let c = compare(&base, &new, &CompareOptions::default());
        let order: Vec<&str> = c.artifacts.iter().map(|d| d.qualname.as_str()).collect();
        assert_eq!(order, ["b", "c", "e", "a", "d"]);
        let top = compare(&base, &new, &CompareOptions { top: Some(2), ..CompareOptions::default() });
        assert_eq!(top.artifacts.iter().map(|d| d.qualname.as_str()).collect::<Vec<_>>(), ["b", "c"]);
        assert_eq!((top.listed, top.only_in_new), (5, 1), "counted before the cut");
    }

    #[test]
    fn the_filter_keeps_an_artifact_when_either_side_passes() {
        let (buggy, fixed) = bug1();
        let filter =
            |include: &str| CompareOptions { filter: ArtifactFilter::new(&[include.into()], &[]).unwrap(), ..CompareOptions::default() };
        // Only the base's file matches `buggy`, yet the matched pairs stay.
        let c = compare(&buggy, &fixed, &filter("buggy"));
        let mut names: Vec<&str> = c.artifacts.iter().map(|d| d.qualname.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["Worker.run", "WorkerManager.__init__"]);
        let c = compare(&buggy, &fixed, &filter("fixed"));
        assert_eq!(c.listed, 2);
        // Hiding a file kind hides it on both sides.
        let base = run(&[("/usr/lib/python3/json/encoder.py", "encode", 1), ("/p/a.py", "f", 1)], &[(0, 0, 10), (1, 0, 10)]);
        let opts = CompareOptions { filter: ArtifactFilter::all().hide(FileKind::Stdlib), ..CompareOptions::default() };
        let c = compare(&base, &base, &opts);
        assert_eq!(c.artifacts.iter().map(|d| d.qualname.as_str()).collect::<Vec<_>>(), ["f"]);
    }

    #[test]
    fn classes_and_files() {
        let (buggy, fixed) = bug1();
        let c = compare(&buggy, &fixed, &CompareOptions { level: Level::Class, ..CompareOptions::default() });
        let wm = find(&c, "WorkerManager")[0];
        assert_eq!((wm.kind, wm.status), (ArtifactKind::Class, DeltaStatus::Changed));
        assert_eq!(wm.threads_delta, -2);
        // A file's qualified name is its path: renamed files do not match.
        let c = compare(&buggy, &fixed, &CompareOptions { level: Level::File, ..CompareOptions::default() });
        assert_eq!((c.listed, c.only_in_base, c.only_in_new), (3, 1, 1));
        let c = compare(&buggy, &fixed, &CompareOptions { level: Level::Program, ..CompareOptions::default() });
        assert!(c.artifacts.is_empty());
        assert_eq!(c.base.program.threads, 3);
    }

    #[test]
    fn a_run_compared_with_itself_changes_nothing() {
        let (buggy, _) = bug1();
        let c = compare(&buggy, &buggy, &CompareOptions::default());
        assert!(c
            .artifacts
            .iter()
            .all(|d| d.status == DeltaStatus::Changed && d.crt_delta == 0.0 && d.threads_delta == 0 && d.base == d.new));
    }

    #[test]
    fn nothing_counted_is_an_error() {
        let (buggy, _) = bug1();
        let idle = Run::new(Meta::default());
        let a = Analysis::new(&buggy, &Options::default()).unwrap();
        let b = Analysis::new(&idle, &Options::default()).unwrap();
        let err = Comparison::build(&buggy, &a, &idle, &b, &CompareOptions::default()).unwrap_err();
        assert!(matches!(err, AnalysisError::NoCountedSamples { .. }), "{err}");
    }
}
