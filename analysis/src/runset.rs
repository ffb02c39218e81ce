//! Figures over repeated runs of one program (a run set, `threadradar record --repeat N`): the
//! mean and spread of each figure, the stability of the clusterings, and whether a change between
//! two sets exceeds their own spread.
//!
//! The test is **Welch's t-test** (unequal variances) on the per-run values of a change's figure
//! (`Change::figure`, the typed [`crate::changes::Figure`], never its words), two-sided, with
//! Holm's step-down correction over the changes tested ([`holm`], family-wise α = 0.05), so that a
//! comparison with many changes does not find one significant by chance. A figure that is the same in every run of both sets is significant when the two sets' values differ (no spread at
//! all: the difference is exact), and not when they are equal.

use crate::analysis::{Analysis, Options};
use crate::artifact::Level;
use crate::changes::{Change, Figure};
use crate::compare::Comparison;
use crate::error::AnalysisError;
use crate::stability;
use crate::tracediff::{self, FunctionTimes};
use crate::view::{ReportView, ViewOptions};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::collections::HashMap;
use threadradar_profiler::run::{FileKind, Run};

/// The family-wise significance level of a comparison of run sets.
pub const ALPHA: f64 = 0.05;

/// The mean and spread of one figure over the runs of a set.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct Spread {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); `None` for one run: no spread can be measured.
    pub sd: Option<f64>,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// The spread of `xs`; `None` when `xs` is empty.
    pub fn of(xs: &[f64]) -> Option<Spread> {
        if xs.is_empty() {
            return None;
        }
        let n = xs.len();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = (n >= 2).then(|| (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt());
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Spread { n, mean, sd, min, max })
    }
}

/// One artifact's figures over the runs of a set (an artifact a run did not execute counts 0).
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct ArtifactSpread {
    pub kind: crate::artifact::ArtifactKind,
    pub qualname: String,
    pub file: String,
    /// The declaration's line, as the first run that executed it records it.
    pub line: u32,
    pub file_kind: FileKind,
    /// Runs that executed it in a counted state (the others count 0).
    pub executed_in: usize,
    pub crt: Spread,
    pub seconds: Spread,
    pub threads: Spread,
    pub clusters: Spread,
}

/// The program's figures over the runs of a set.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct ProgramSpread {
    pub duration_s: Spread,
    pub seconds: Spread,
    pub threads: Spread,
    pub clusters: Spread,
}

fn spread_or_zero(xs: &[f64]) -> Spread {
    Spread::of(xs).unwrap_or(Spread { n: 0, mean: 0.0, sd: None, min: 0.0, max: 0.0 })
}

/// The mean and spread of every artifact's figures over the runs' views (one view per run, the
/// same level and filter), highest mean crt first, and of the program's. Artifacts are matched by
/// kind, file and qualified name.
pub fn spreads(views: &[ReportView]) -> (ProgramSpread, Vec<ArtifactSpread>) {
    let mut keys: Vec<(crate::artifact::ArtifactKind, String, String, FileKind, u32)> = Vec::new();
    for v in views {
        for a in &v.artifacts {
            if !keys.iter().any(|k| k.0 == a.kind && k.1 == a.file && k.2 == a.qualname) {
                keys.push((a.kind, a.file.clone(), a.qualname.clone(), a.file_kind, a.line));
            }
        }
    }
    let mut artifacts: Vec<ArtifactSpread> = keys
        .into_iter()
        .map(|(kind, file, qualname, file_kind, line)| {
            let per: Vec<Option<&crate::view::ArtifactView>> =
                views.iter().map(|v| v.artifacts.iter().find(|a| a.kind == kind && a.file == file && a.qualname == qualname)).collect();
            let fig = |f: &dyn Fn(&crate::view::ArtifactView) -> f64| spread_or_zero(&per.iter().map(|a| a.map_or(0.0, f)).collect::<Vec<_>>());
            ArtifactSpread {
                executed_in: per.iter().filter(|a| a.is_some()).count(),
                crt: fig(&|a| a.crt),
                seconds: fig(&|a| a.seconds),
                threads: fig(&|a| a.threads as f64),
                clusters: fig(&|a| a.clusters.len() as f64),
                kind,
                qualname,
                file,
                line,
                file_kind,
            }
        })
        .collect();
    artifacts.sort_by(|a, b| b.crt.mean.total_cmp(&a.crt.mean).then_with(|| a.qualname.cmp(&b.qualname)));
    let program = ProgramSpread {
        duration_s: spread_or_zero(&views.iter().map(|v| v.run.duration_s).collect::<Vec<_>>()),
        seconds: spread_or_zero(&views.iter().map(|v| v.run.seconds).collect::<Vec<_>>()),
        threads: spread_or_zero(&views.iter().map(|v| v.program.threads as f64).collect::<Vec<_>>()),
        clusters: spread_or_zero(&views.iter().map(|v| v.program.clusters.len() as f64).collect::<Vec<_>>()),
    };
    (program, artifacts)
}

/// `42.0 % ± 3.1 [38.0–46.0]` (`f` formats one value), or `42.0 % (1 run)` without a spread.
pub fn spread_text(s: &Spread, f: &dyn Fn(f64) -> String) -> String {
    match s.sd {
        Some(sd) => format!("{} ± {} [{}–{}]", f(s.mean), f(sd), f(s.min), f(s.max)),
        None => format!("{} ({} run)", f(s.mean), s.n),
    }
}

/// The two-sided p-value of Welch's t-test of `a` against `b`; `None` when a side has fewer than
/// two values (no spread to compare with).
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let exact = |x: &[f64]| -> Vec<(f64, f64)> { x.iter().map(|&v| (v, 0.0)).collect() };
    welch_p_counted(&exact(a), &exact(b))
}

/// [`welch_p`] on figures with counting noise (`(value, sd)` per run): each side's variance is at
/// least the mean of its runs' counting variances — runs that agree by the luck of a few samples
/// do not make a difference exact.
pub fn welch_p_counted(a: &[(f64, f64)], b: &[(f64, f64)]) -> Option<f64> {
    let side = |x: &[(f64, f64)]| -> Option<(f64, f64, usize)> {
        let values: Vec<f64> = x.iter().map(|v| v.0).collect();
        let s = Spread::of(&values)?;
        let noise = x.iter().map(|v| v.1 * v.1).sum::<f64>() / x.len() as f64;
        Some((s.mean, s.sd?.powi(2).max(noise) / s.n as f64, s.n))
    };
    let ((ma, va, na), (mb, vb, nb)) = (side(a)?, side(b)?);
    let diff = mb - ma;
    if va + vb == 0.0 {
        return Some(if diff.abs() <= 1e-12 * ma.abs().max(mb.abs()).max(1.0) { 1.0 } else { 0.0 });
    }
    let t = diff / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va.powi(2) / (na - 1) as f64 + vb.powi(2) / (nb - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some((2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0))
}

/// Holm's step-down procedure: which of the p-values are significant at family-wise level `alpha`.
/// The i-th smallest p (from 0) is significant when it and every smaller one are below
/// `alpha / (m − i)`.
pub fn holm(ps: &[f64], alpha: f64) -> Vec<bool> {
    let mut order: Vec<usize> = (0..ps.len()).collect();
    order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
    let mut out = vec![false; ps.len()];
    for (i, &k) in order.iter().enumerate() {
        if ps[k] < alpha / (ps.len() - i) as f64 {
            out[k] = true;
        } else {
            break;
        }
    }
    out
}

/// The name of the test [`mark_significance`] applies, as every client shows it.
pub const TEST: &str = "Welch's t-test on the per-run figures, two-sided, Holm-corrected (family-wise α = 0.05)";

/// How a comparison of run sets tested its changes: `Comparison::significance`.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct Significance {
    /// The test, in words ([`TEST`]).
    pub test: String,
    /// Runs on each side (the table and the trace show each side's first run).
    pub n_base: usize,
    pub n_new: usize,
    /// Family-wise significance level.
    pub alpha: f64,
    /// Changes whose figure could be tested (the correction is over these).
    pub tested: usize,
    /// What the reader needs to know: how it was tested, or why nothing could be.
    pub note: String,
}

/// One run's figures that changes are tested on: its report view (per artifact), its functions'
/// times ([`tracediff::function_times`]) and, when a change is about a waited-on object, its
/// waits view.
struct RunFigures {
    view: ReportView,
    times: HashMap<String, FunctionTimes>,
    waits: Option<crate::waits::WaitsView>,
}

/// The per-run value of a change's figure ([`Figure`], never its words), and the standard
/// deviation of its counting noise: a figure made of samples is a count `k` of them (a share of
/// `N` counted samples, or `k` sampling periods), and counts scatter by about `√k` from run to
/// run — at least one sample's worth, so that a function seen in one sample of each base run and
/// in none of the new ones is not an exact difference; a count of events (futile wake-ups) by
/// `√max(k, 1)` events. Counts of threads and clusters carry no such noise (0). `None` when the
/// run cannot give the figure (no waits on the object, no wait data).
fn figure(ch: &Change, run: &RunFigures) -> Option<(f64, f64)> {
    let (view, times) = (&run.view, &run.times);
    let period = view.run.period_s;
    // `k` periods of time: √max(k, 1) periods.
    let timed = |s: f64| (s, if period > 0.0 { (s / period).max(1.0).sqrt() * period } else { 0.0 });
    let time = |f: &dyn Fn(&FunctionTimes) -> f64| times.get(&ch.artifact).map_or(0.0, f);
    let a = view
        .artifacts
        .iter()
        .find(|a| a.qualname == ch.artifact && a.kind == ch.kind && a.file_kind == ch.file_kind)
        .or_else(|| view.artifacts.iter().find(|a| a.qualname == ch.artifact && a.kind == ch.kind));
    let object = || -> Option<Option<&crate::waits::ObjectSummary>> {
        let w = run.waits.as_ref().filter(|w| !w.intervals.is_empty())?;
        let key = ch.object.as_deref()?;
        Some(w.objects.iter().find(|o| tracediff::object_key(o) == key))
    };
    match ch.figure {
        Figure::Finish if ch.artifact == "program" && ch.file.is_none() => Some((view.run.duration_s, period)),
        Figure::Finish => Some((time(&|t| t.finish_s), period)),
        Figure::WaitTime => Some(timed(time(&|t| t.idle_s))),
        Figure::StackTime => Some(timed(time(&|t| t.stack_s))),
        Figure::MeanWait => times.get(&ch.artifact).filter(|t| t.waits > 0).map(|t| {
            let (_, sd) = timed(t.idle_s);
            (t.idle_s / t.waits as f64, sd / t.waits as f64)
        }),
        Figure::Threads => Some((a.map_or(0.0, |a| a.threads as f64), 0.0)),
        Figure::Clusters => Some((a.map_or(0.0, |a| a.clusters.len() as f64), 0.0)),
        Figure::Cluster => {
            let cell = a.and_then(|a| a.glyph.iter().find(|c| Some(c.colour) == ch.cluster));
            Some((cell.map_or(0.0, |c| c.threads as f64), 0.0))
        }
        Figure::Crt => {
            // crt = k / N counted samples: √max(k, 1) / N.
            let crt = a.map_or(0.0, |a| a.crt);
            let n = view.counted_samples as f64;
            Some((crt, if n > 0.0 { (crt * n).max(1.0).sqrt() / n } else { 0.0 }))
        }
        Figure::FutileWakeups => {
            let k = object()?.map_or(0, |o| o.futile_wakeups) as f64;
            Some((k, k.max(1.0).sqrt()))
        }
        Figure::ObjectMeanWait => object()?.filter(|o| o.waits > 0).map(|o| {
            let (_, sd) = timed(o.wait_s);
            (o.wait_s / o.waits as f64, sd / o.waits as f64)
        }),
    }
}

/// Marks each change of `c` significant or within noise: [`welch_p`] on the per-run values of its
/// figure (`Change::figure`) over all runs of both sets, with [`holm`] over the changes tested
/// (family-wise [`ALPHA`]). A side with one run has no spread: the changes stay unmarked
/// (`significant: None`) and the returned note says so. Sets `c.significance` and returns it.
pub fn mark_significance(c: &mut Comparison, base: &[Run], new: &[Run], options: &Options, level: Level) -> Result<Significance, AnalysisError> {
    let mut sig = Significance { test: TEST.to_string(), n_base: base.len(), n_new: new.len(), alpha: ALPHA, tested: 0, note: String::new() };
    if base.len() < 2 || new.len() < 2 {
        sig.note = format!(
            "significance unavailable: a side with one run has no spread (base {} run(s), new {}); record run sets with `threadradar record --repeat N`",
            base.len(),
            new.len()
        );
        c.significance = Some(sig.clone());
        return Ok(sig);
    }
    // Every run of both sets counts the same way (`auto` is CPU time only if all have it).
    let all: Vec<&Run> = base.iter().chain(new).collect();
    let options = &Options { states: options.states.resolve(&all), ..options.clone() };
    // The waits views only when a change is about a waited-on object (they cost the most).
    let objects = c.changes.iter().any(|ch| ch.object.is_some());
    let per_run = |runs: &[Run]| -> Result<Vec<RunFigures>, AnalysisError> {
        runs.iter()
            .map(|r| {
                let a = Analysis::new(r, options)?;
                let view = ReportView::build(r, &a, &ViewOptions { level, top: None, ..ViewOptions::default() })?;
                let waits = objects.then(|| crate::waits::waits(r, &crate::waits::WaitsOptions::default()));
                Ok(RunFigures { view, times: tracediff::function_times(r), waits })
            })
            .collect()
    };
    let (b, n) = (per_run(base)?, per_run(new)?);
    // p-values of the changes whose figure could be tested, then Holm's correction over them.
    let mut tested: Vec<(usize, f64)> = Vec::new();
    for (i, ch) in c.changes.iter().enumerate() {
        let xs: Option<Vec<(f64, f64)>> = b.iter().map(|r| figure(ch, r)).collect();
        let ys: Option<Vec<(f64, f64)>> = n.iter().map(|r| figure(ch, r)).collect();
        if let Some(p) = xs.zip(ys).and_then(|(xs, ys)| welch_p_counted(&xs, &ys)) {
            tested.push((i, p));
        }
    }
    let ps: Vec<f64> = tested.iter().map(|t| t.1).collect();
    for (&(i, p), significant) in tested.iter().zip(holm(&ps, ALPHA)) {
        c.changes[i].significant = Some(significant);
        c.changes[i].p = Some(p);
    }
    sig.tested = ps.len();
    sig.note = format!(
        "significance: Welch's t-test on the per-run figures of {} × {} runs, two-sided, Holm-corrected over {} changes (family-wise α = 0.05); the table and the trace show each set's first run",
        base.len(),
        new.len(),
        ps.len()
    );
    c.significance = Some(sig.clone());
    Ok(sig)
}

/// The clustering stability of a run set: the adjusted Rand index of every artifact's clusters
/// between every two runs, averaged over artifacts (those that two matched threads executed) and
/// then over the pairs of runs, for COP-KMeans and for plain k-means.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct Stability {
    /// `None` with fewer than two runs, or when no artifact was executed by two matched threads.
    pub cop_kmeans_ari: Option<f64>,
    pub kmeans_ari: Option<f64>,
    /// Pairs of runs compared.
    pub pairs: usize,
    pub level: Level,
}

/// [`Stability`] of `runs`, each with its COP-KMeans and its plain k-means analysis.
pub fn stability(runs: &[(&Run, &Analysis, &Analysis)], level: Level) -> Stability {
    let (mut cop, mut plain, mut pairs) = (Vec::new(), Vec::new(), 0);
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            pairs += 1;
            let (ri, ci, ki) = runs[i];
            let (rj, cj, kj) = runs[j];
            if let Some(x) = stability::mean_ari(&stability::compare(ri, ci, rj, cj, level)) {
                cop.push(x);
            }
            if let Some(x) = stability::mean_ari(&stability::compare(ri, ki, rj, kj, level)) {
                plain.push(x);
            }
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    Stability { cop_kmeans_ari: mean(&cop), kmeans_ari: mean(&plain), pairs, level }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::compare::CompareOptions;
    use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
    use threadradar_profiler::run::{Meta, Sample, ThreadSample, ThreadState};

    /// A run of `cluster_finishes` (a name that holds the words "cluster" and "finishes") computing
    /// in each of `threads` threads for `per_thread` samples, one thread after the other, then
    /// `main` for `tail` samples: the function ends at the same time whatever `threads` is.
    fn run(threads: u32, per_thread: u64, tail: u64) -> Run {
        let mut b = RunBuilder::new(Meta { interval_ms: 3.0, cwd: "/p".into(), ..Meta::default() });
        let file = b.file("/p/prog.py", FileKind::User, None);
        let f = b.function(file, &FunctionSpec { qualname: "cluster_finishes", class: None, line: 3, end_line: 9, class_line: 0 });
        let main = b.function(file, &FunctionSpec { qualname: "main", class: None, line: 12, end_line: 20, class_line: 0 });
        for t in 0..threads.max(1) {
            b.thread(new_thread(10, 11 + t, t as u64, &format!("T{t}"), "Worker"));
        }
        let (fs, ms) = (b.frame(f, f + 1), b.frame(main, main + 1));
        let (fs, ms) = (b.stack(&[fs]), b.stack(&[ms]));
        let mut tick = 0;
        let mut push = |b: &mut RunBuilder, thread: u32, stack| {
            b.push_sample(Sample { t: tick * 3_000_000, threads: vec![ThreadSample { thread, stack, state: ThreadState::Computing, ..Default::default() }] });
            tick += 1;
        };
        for t in 0..threads {
            for _ in 0..per_thread {
                push(&mut b, t, fs);
            }
        }
        for _ in 0..tail {
            push(&mut b, 0, ms);
        }
        b.finish()
    }

    /// The figure a change is tested on is its type: `cluster_finishes: run by 3 threads → 1` is a
    /// change of threads (3 in every base run, 1 in every new one: exact, significant), not of
    /// when the function finishes (the same in every run) nor of its clusters, which its name's
    /// words would once have picked.
    #[test]
    fn the_tested_figure_is_the_changes_type_not_its_words() {
        let base: Vec<Run> = (0..3).map(|_| run(3, 20, 40)).collect();
        let new: Vec<Run> = (0..3).map(|_| run(1, 60, 40)).collect();
        let options = Options::default();
        let (a, b) = (Analysis::new(&base[0], &options).unwrap(), Analysis::new(&new[0], &options).unwrap());
        let mut c = Comparison::build(&base[0], &a, &new[0], &b, &CompareOptions::default()).unwrap();
        let threads = c.changes.iter().position(|ch| ch.artifact == "cluster_finishes" && ch.figure == Figure::Threads).expect("a change of threads");
        assert_eq!(c.changes[threads].statement, "cluster_finishes: run by 3 threads → 1");
        assert!(c.changes.iter().all(|ch| ch.figure != Figure::Crt || ch.artifact != "cluster_finishes"), "the same share in both: {:?}", c.changes);
        let sig = mark_significance(&mut c, &base, &new, &options, Level::Function).unwrap();
        assert!(sig.tested >= 1, "{sig:?}");
        let ch = &c.changes[threads];
        assert_eq!((ch.p, ch.significant), (Some(0.0), Some(true)), "threads 3 → 1 in every run: {ch:?}");
        // Its finish, which the words "finishes" would have tested, is the same in every run.
        let (tb, tn) = (tracediff::function_times(&base[0]), tracediff::function_times(&new[0]));
        assert_eq!(tb["cluster_finishes"].finish_s, tn["cluster_finishes"].finish_s);
    }

    #[test]
    fn spread_of_values() {
        let s = Spread::of(&[1.0, 2.0, 3.0, 6.0]).unwrap();
        assert_eq!((s.n, s.mean, s.min, s.max), (4, 3.0, 1.0, 6.0));
        assert!((s.sd.unwrap() - (14.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(Spread::of(&[2.0]).unwrap().sd, None);
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn holm_steps_down() {
        // m = 4: thresholds 0.0125, 0.0167, 0.025, 0.05.
        assert_eq!(holm(&[0.01, 0.04, 0.015, 0.5], 0.05), [true, false, true, false]);
        assert_eq!(holm(&[0.02, 0.001], 0.05), [true, true]);
        assert_eq!(holm(&[0.2, 0.001, 0.03], 0.05), [false, true, false]);
        assert!(holm(&[], 0.05).is_empty());
    }

    #[test]
    fn welch_against_a_known_value() {
        // t = 2.2255, df = 24.52 (Welch–Satterthwaite); p = 0.035485 by numerical integration of
        // the t density (midpoint rule, 200 000 steps), computed outside this code.
        let a = [19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0];
        let b = [28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7, 23.2, 17.5, 20.6, 18.0, 23.9, 21.6, 24.3, 20.4, 23.9, 13.3];
        let p = welch_p(&a, &b).unwrap();
        assert!((p - 0.035485).abs() < 1e-6, "{p}");
        assert_eq!(welch_p(&a, &b), welch_p(&b, &a));
        assert_eq!(welch_p(&[1.0], &b), None);
        assert_eq!(welch_p(&[10.0, 10.0], &[1.0, 1.0, 1.0]), Some(0.0));
        assert_eq!(welch_p(&[1.0, 1.0], &[1.0, 1.0]), Some(1.0));
        // Counting noise: one sample (of 55) in each base run, none in the new ones, is within
        // it; a difference of half the samples is not.
        let one = 1.0 / 55.0;
        let p = welch_p_counted(&[(one, one); 3], &[(0.0, one); 3]).unwrap();
        assert!(p > 0.1, "{p}");
        assert_eq!(welch_p(&[one; 3], &[0.0; 3]), Some(0.0));
        let (k, n): (f64, f64) = (500.0, 1000.0);
        let p = welch_p_counted(&[(k / n, k.sqrt() / n); 3], &[(0.0, 1.0 / n); 3]).unwrap();
        assert!(p < 1e-3, "{p}");
    }
}
