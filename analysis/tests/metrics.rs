//! Hand-computed fixtures for Eq. 1–7, self time, callers/callees, seconds, states and the
//! thread filter. Every expected number is derived in the comments from the fixture's table.

mod common;

use common::*;
use threadradar_analysis::{ReportView, ViewOptions};
use threadradar_analysis::metrics::TimeSource;
use threadradar_analysis::{Analysis, ArtifactId, CountedStates, Options, ThreadFilter};
use threadradar_profiler::run::{FileKind, Run, ThreadState};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

macro_rules! assert_close {
    ($a:expr, $b:expr) => {
        assert!(close($a, $b), "{} = {} but expected {}", stringify!($a), $a, $b)
    };
}

const M1: ArtifactId = ArtifactId { kind: threadradar_analysis::ArtifactKind::Function, index: 0 };
const M2: ArtifactId = ArtifactId { kind: threadradar_analysis::ArtifactKind::Function, index: 1 };
const N: ArtifactId = ArtifactId { kind: threadradar_analysis::ArtifactKind::Function, index: 2 };
const CLASS_A: ArtifactId = ArtifactId { kind: threadradar_analysis::ArtifactKind::Class, index: 0 };
const CLASS_B: ArtifactId = ArtifactId { kind: threadradar_analysis::ArtifactKind::Class, index: 1 };
const FILE_A: ArtifactId = ArtifactId { kind: threadradar_analysis::ArtifactKind::File, index: 0 };
const FILE_B: ArtifactId = ArtifactId { kind: threadradar_analysis::ArtifactKind::File, index: 1 };

fn analyse(run: &Run, options: Options) -> Analysis {
    Analysis::new(run, &options).unwrap()
}

fn frq_row(a: &Analysis, id: ArtifactId) -> Vec<(u32, u64)> {
    a.metrics().artifact(id).unwrap().threads.iter().map(|c| (c.thread, c.frq)).collect()
}

#[test]
fn fig2_frq_total_is_samples_times_threads() {
    // Eq. 4: FRQ = Σσ |σ| = 3 samples × 4 threads.
    let a = analyse(&fig2(), Options::default());
    assert_eq!(a.counted_samples(), 12);
}

#[test]
fn fig2_frq_per_artifact_and_thread_counts_recursion_once() {
    let a = analyse(&fig2(), Options::default());
    // Eq. 1: A.m1 is on T1's stack in σ1–σ3 (3), T2's in σ1, σ2 (2), T4's in σ3 only once although
    // it recurses there (1).
    assert_eq!(frq_row(&a, M1), vec![(0, 3), (1, 2), (3, 1)]);
    assert_eq!(frq_row(&a, M2), vec![(0, 1), (3, 2)]);
    assert_eq!(frq_row(&a, N), vec![(1, 2), (2, 3)]);
    // Eq. 2: frq(a) = Σth frq(a, th).
    let m = a.metrics();
    assert_eq!(m.artifact(M1).unwrap().frq, 6);
    assert_eq!(m.artifact(M2).unwrap().frq, 3);
    assert_eq!(m.artifact(N).unwrap().frq, 5);
    // Eq. 3: every thread was sampled computing 3 times.
    for th in 0..4 {
        assert_eq!(m.thread(th).frq, 3);
    }
}

#[test]
fn fig2_crt_equations_5_to_7() {
    let a = analyse(&fig2(), Options::default());
    let m = a.metrics();
    // Eq. 5: crt(a) = frq(a) / FRQ.
    assert_close!(m.crt(M1), 6.0 / 12.0);
    assert_close!(m.crt(M2), 3.0 / 12.0);
    assert_close!(m.crt(N), 5.0 / 12.0);
    // Eq. 6: crt(a, th) = frq(a, th) / frq(a).
    assert_close!(m.crt_thread(M1, 0), 3.0 / 6.0);
    assert_close!(m.crt_thread(M1, 1), 2.0 / 6.0);
    assert_close!(m.crt_thread(M1, 2), 0.0);
    assert_close!(m.crt_thread(M1, 3), 1.0 / 6.0);
    // Eq. 7: crt(th) = frq(th) / FRQ.
    for th in 0..4 {
        assert_close!(m.crt_of_thread(th), 3.0 / 12.0);
    }
}

#[test]
fn fig2_class_and_file_levels() {
    let a = analyse(&fig2(), Options::default());
    // Class A: a sample counts when any of A's methods is on the stack: T1 σ1–σ3, T2 σ1–σ2,
    // T4 σ1–σ3 → 8. Class B: T2 σ1, σ3 and T3 σ1–σ3 → 5.
    assert_eq!(frq_row(&a, CLASS_A), vec![(0, 3), (1, 2), (3, 3)]);
    assert_eq!(frq_row(&a, CLASS_B), vec![(1, 2), (2, 3)]);
    assert_close!(a.metrics().crt(CLASS_A), 8.0 / 12.0);
    // Files: a.py holds A only, b.py holds B only.
    assert_eq!(frq_row(&a, FILE_A), frq_row(&a, CLASS_A));
    assert_eq!(frq_row(&a, FILE_B), frq_row(&a, CLASS_B));
    let arts = a.artifacts();
    let run = fig2();
    assert_eq!(arts.describe(&run, CLASS_A).unwrap().qualname, "A");
    assert_eq!(arts.describe(&run, FILE_B).unwrap().name, "b.py");
    assert_eq!(arts.describe(&run, M2).unwrap().line, 20);
}

#[test]
fn fig2_self_time_is_the_innermost_frame() {
    let a = analyse(&fig2(), Options::default());
    let m = a.metrics();
    // Innermost frames: σ1 A.m1, B.n, B.n, A.m2; σ2 A.m2, A.m1, B.n, A.m2; σ3 A.m1, B.n, B.n, A.m1.
    assert_eq!(m.artifact(M1).unwrap().self_frq, 4);
    assert_eq!(m.artifact(M2).unwrap().self_frq, 3);
    assert_eq!(m.artifact(N).unwrap().self_frq, 5);
    assert_eq!(m.artifact(CLASS_A).unwrap().self_frq, 7);
    assert_eq!(m.artifact(CLASS_B).unwrap().self_frq, 5);
    assert_close!(m.self_crt(N), 5.0 / 12.0);
}

#[test]
fn fig2_callers_and_callees() {
    let a = analyse(&fig2(), Options::default());
    let m = a.metrics();
    let edges = |e: &[threadradar_analysis::metrics::Edge]| e.iter().map(|e| (e.function, e.frq)).collect::<Vec<_>>();
    // A.m1 calls A.m2 in T1 σ2 and B.n in T2 σ1; its self-call in T4 σ3 is not listed.
    assert_eq!(edges(m.callees(0)), vec![(1, 1), (2, 1)]);
    assert_eq!(edges(m.callers(0)), vec![]);
    assert_eq!(edges(m.callers(1)), vec![(0, 1)]);
    assert_eq!(edges(m.callers(2)), vec![(0, 1)]);
    assert_eq!(edges(m.callees(2)), vec![]);
}

#[test]
fn fig2_seconds_fall_back_to_samples_times_interval() {
    let a = analyse(&fig2(), Options::default());
    let m = a.metrics();
    assert_eq!(m.time_source(), TimeSource::Samples);
    // 6 samples × 3 ms.
    assert_eq!(m.artifact(M1).unwrap().ns, 18_000_000);
    assert_eq!(m.thread(2).ns, 9_000_000);
}

#[test]
fn fig2_clusters() {
    let a = analyse(&fig2(), Options::default());
    // Program: all crt(th) = 0.25, one cluster.
    let p = a.program_clusters();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].threads, vec![0, 1, 2, 3]);
    assert_close!(p[0].sum, 1.0);
    assert_close!(p[0].avg, 0.25);
    // B.n: T2 0.4, T3 0.6, n = 2 → ε = 0.25 > 0.2, must-link, one cluster.
    let b = a.clusters(N);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].threads, vec![1, 2]);
    // A.m2: T1 1/3, T4 2/3, gap 1/3 ≥ ε = 0.25: two clusters, low first.
    let m2 = a.clusters(M2);
    assert_eq!(m2.iter().map(|c| c.threads.clone()).collect::<Vec<_>>(), vec![vec![0], vec![3]]);
    assert_close!(m2[0].avg, 1.0 / 3.0);
    assert_close!(m2[1].sum, 2.0 / 3.0);
    // Thread types: A.m1 by T1, T2 (Worker) and T4 (Reader).
    assert_eq!(a.thread_type_count(&fig2(), M1), 2);
    assert_eq!(a.thread_type_count(&fig2(), M2), 2);
}

#[test]
fn fig2_thread_filter_recomputes_everything() {
    let run = fig2();
    let a = analyse(&run, Options { threads: ThreadFilter::excluding([0]), ..Options::default() });
    let m = a.metrics();
    // Without T1: FRQ = 3 samples × 3 threads.
    assert_eq!(a.counted_samples(), 9);
    assert_eq!(frq_row(&a, M1), vec![(1, 2), (3, 1)]);
    assert_close!(m.crt(M1), 3.0 / 9.0);
    assert_close!(m.crt_thread(M1, 1), 2.0 / 3.0);
    assert_close!(m.crt_of_thread(2), 1.0 / 3.0);
    assert_close!(m.crt_of_thread(0), 0.0);
    // The A.m1 → A.m2 call was only T1's.
    assert_eq!(m.callees(0).iter().map(|e| e.function).collect::<Vec<_>>(), vec![2]);
    assert_eq!(a.program_clusters().iter().flat_map(|c| c.threads.clone()).collect::<Vec<_>>(), vec![1, 2, 3]);
    // Filtering by name gives the same as by id.
    let by_name = ThreadFilter::by_names(&run, &["T1".to_string()], &[]).unwrap();
    assert_eq!(by_name, ThreadFilter::excluding([0]));
    let by_type = ThreadFilter::by_names(&run, &[], &["Reader".to_string()]).unwrap();
    assert_eq!(by_type, ThreadFilter::excluding([2, 3]));
    assert!(ThreadFilter::by_names(&run, &["T9".to_string()], &[]).is_err());
}

/// Two threads, kernel-accounted, in all three states, one sample without Python frames.
///
/// ```text
///        T1 (cpu ms)              T2 (cpu ms)
/// σ1     main > work   C 1        main          C 3
/// σ2     main          C 2        (no frames)   C 5
/// σ3     main > work   I 4        main > work   G 7
/// ```
fn states_run(kernel: bool) -> Run {
    let mut fx = Fixture::new();
    fx.func("/p/prog.py", FileKind::User, "main", 1);
    fx.func("/p/prog.py", FileKind::User, "work", 9);
    let t1 = fx.thread("T1", "Thread");
    let t2 = fx.thread("T2", "Thread");
    if kernel {
        fx.kernel_accounting();
    }
    let ms = 1_000_000;
    fx.sample_ns(&[(t1, "main > work", C, ms), (t2, "main", C, 3 * ms)]);
    fx.sample_ns(&[(t1, "main", C, 2 * ms), (t2, "", C, 5 * ms)]);
    fx.sample_ns(&[(t1, "main > work", I, 4 * ms), (t2, "main > work", G, 7 * ms)]);
    fx.finish()
}

#[test]
fn counted_states_select_samples() {
    let run = states_run(true);
    let work = ArtifactId::function(1);
    let main = ArtifactId::function(0);
    let with = |states| analyse(&run, Options { states, ..Options::default() });
    // Computing only: T1 σ1, σ2 and T2 σ1, σ2 (the frameless sample counts in FRQ but in no artifact).
    let a = with(CountedStates::Computing);
    assert_eq!(a.counted_samples(), 4);
    assert_eq!(a.metrics().artifact(main).unwrap().frq, 3);
    assert_eq!(a.metrics().artifact(work).unwrap().frq, 1);
    assert_eq!(a.metrics().thread(1).observed, 3);
    // + GIL: T2 σ3.
    let a = with(CountedStates::ComputingAndGil);
    assert_eq!(a.counted_samples(), 5);
    assert_eq!(a.metrics().artifact(work).unwrap().frq, 2);
    // All: T1 σ3 too.
    let a = with(CountedStates::All);
    assert_eq!(a.counted_samples(), 6);
    assert_eq!(a.metrics().artifact(work).unwrap().frq, 3);
    // Waiting (the waiting radar): T1 σ3 (idle) and T2 σ3 (GIL), nothing computing; work was
    // waited in by both threads, half each.
    let a = with(CountedStates::Waiting);
    assert_eq!(a.counted_samples(), 2);
    assert_eq!(a.metrics().artifact(work).unwrap().frq, 2);
    assert_eq!(a.metrics().artifact(work).unwrap().threads.len(), 2);
    assert!((a.metrics().crt_thread(work, 0) - 0.5).abs() < 1e-9);
}

#[test]
fn cpu_time_weighs_every_observation_by_its_kernel_cpu() {
    let run = states_run(true);
    let (main, work) = (ArtifactId::function(0), ArtifactId::function(1));
    let a = analyse(&run, Options { states: CountedStates::CpuTime, ..Options::default() });
    let m = a.metrics();
    // Weights in µs, whatever the state: T1 1000, 2000, 4000; T2 3000, 5000, 7000. FRQ = 22,000,
    // behind it 6 samples that carried CPU time.
    assert_eq!(m.frq_total(), 22_000);
    assert_eq!(a.counted_samples(), 6);
    // Eq. 1–2 with weights: main in T1 σ1–σ3 (7,000) and T2 σ1, σ3 (10,000); work in T1 σ1, σ3
    // (5,000) and T2 σ3 (7,000).
    assert_eq!(m.artifact(main).unwrap().frq, 17_000);
    assert_eq!(m.artifact(work).unwrap().frq, 12_000);
    // ... and the samples behind them: main in 5, work in 3 (T1 σ1, σ3; T2 σ3).
    assert_eq!(m.artifact(main).unwrap().samples, 5);
    assert_eq!(m.artifact(work).unwrap().samples, 3);
    assert_eq!(m.artifact(work).unwrap().threads.iter().map(|c| (c.thread, c.samples)).collect::<Vec<_>>(), vec![(0, 2), (1, 1)]);
    assert_eq!((m.thread(0).samples, m.thread(1).samples), (3, 3));
    // Eq. 5–7.
    assert!((m.crt(work) - 12.0 / 22.0).abs() < 1e-12);
    assert!((m.crt_thread(work, 0) - 5.0 / 12.0).abs() < 1e-12);
    assert!((m.crt_thread(work, 1) - 7.0 / 12.0).abs() < 1e-12);
    assert!((m.crt_of_thread(1) - 15.0 / 22.0).abs() < 1e-12);
    // A run without kernel accounting (no CPU time per sample) has nothing to weigh: the
    // one-sentence error says how to get something counted.
    let mut fx = Fixture::new();
    fx.func("/p/prog.py", FileKind::User, "main", 1);
    let t = fx.thread("T", "Thread");
    fx.sample(&[(t, "main", ThreadState::Computing)]);
    let bare = fx.finish();
    let err = Analysis::new(&bare, &Options { states: CountedStates::CpuTime, ..Options::default() })
        .and_then(|a| ReportView::build(&bare, &a, &ViewOptions::default()).map(|_| ()));
    assert!(err.unwrap_err().to_string().contains("--states cpu"));
    // `auto`: computing samples weighted by CPU time for the run with accounting, computing
    // samples without.
    assert_eq!(CountedStates::Auto.resolve(&[&run]), CountedStates::ComputingCpu);
    assert_eq!(CountedStates::Auto.resolve(&[&bare]), CountedStates::Computing);
    assert_eq!(CountedStates::Auto.resolve(&[&run, &bare]), CountedStates::Computing, "two runs count the same way");
    assert_eq!(CountedStates::Computing.resolve(&[&run]), CountedStates::Computing, "a choice is kept");
    let auto = Options { states: CountedStates::Auto, ..Options::default() };
    let a = analyse(&run, auto.clone());
    assert_eq!(a.options().states, CountedStates::ComputingCpu, "the analysis names what it counted");
    assert_eq!(a.metrics().frq_total(), 22_000);
    assert_eq!(analyse(&states_run(false), auto).options().states, CountedStates::Computing);
    // The default is `auto` (docs/metrics.md, "Counted states").
    assert_eq!(Options::default().states, CountedStates::Auto);
    assert_eq!(analyse(&run, Options::default()).options().states, CountedStates::ComputingCpu);
}

#[test]
fn computing_cpu_weighs_the_computing_samples_by_their_threads_cpu() {
    let run = states_run(true);
    let (main, work) = (ArtifactId::function(0), ArtifactId::function(1));
    let a = analyse(&run, Options { states: CountedStates::ComputingCpu, ..Options::default() });
    let m = a.metrics();
    // Computing samples only, in µs of their thread's CPU: T1 σ1 1000 (main > work), σ2 2000
    // (main); T2 σ1 3000 (main), σ2 5000 (no frames). The blocked samples' CPU goes to the
    // thread's previous computing sample: T1 σ3 (idle, 4000) to σ2's main, T2 σ3 (GIL, 7000) to
    // σ2's frameless sample. FRQ is every thread's whole CPU time, 22,000, behind it the 4
    // computing samples.
    assert_eq!(m.frq_total(), 22_000);
    assert_eq!(a.counted_samples(), 4);
    assert_eq!((m.thread(0).frq, m.thread(1).frq), (7_000, 15_000));
    assert_eq!(m.artifact(main).unwrap().frq, 1_000 + 6_000 + 3_000);
    // work was computing only in T1 σ1; T1 σ3 and T2 σ3 were blocked in it, and a blocked
    // thread's frames never count (under `cpu` they would: 12,000 in both threads).
    assert_eq!(m.artifact(work).unwrap().frq, 1_000);
    assert_eq!(m.artifact(work).unwrap().threads.iter().map(|c| (c.thread, c.frq, c.samples)).collect::<Vec<_>>(), vec![(0, 1_000, 1)]);
    assert!((m.crt_of_thread(1) - 15.0 / 22.0).abs() < 1e-12);
    // CPU seen before a thread's first computing sample waits for it.
    let mut fx = Fixture::new();
    fx.func("/p/prog.py", FileKind::User, "main", 1);
    fx.func("/p/prog.py", FileKind::User, "work", 9);
    let t = fx.thread("T", "Thread");
    fx.kernel_accounting();
    let ms = 1_000_000;
    fx.sample_ns(&[(t, "main", I, 2 * ms)]);
    fx.sample_ns(&[(t, "main > work", C, ms)]);
    let run = fx.finish();
    let a = analyse(&run, Options { states: CountedStates::ComputingCpu, ..Options::default() });
    assert_eq!(a.metrics().artifact(work).unwrap().frq, 3_000);
    // A computing sample that got no CPU still says what the thread ran.
    let mut fx = Fixture::new();
    fx.func("/p/prog.py", FileKind::User, "main", 1);
    fx.func("/p/prog.py", FileKind::User, "work", 9);
    let t = fx.thread("T", "Thread");
    fx.kernel_accounting();
    fx.sample_ns(&[(t, "main", C, ms)]);
    fx.sample_ns(&[(t, "main > work", C, 0)]);
    let run = fx.finish();
    let a = analyse(&run, Options { states: CountedStates::ComputingCpu, ..Options::default() });
    let w = a.metrics().artifact(work).unwrap();
    assert_eq!((w.frq, w.threads.len()), (0, 1));
}

#[test]
fn seconds_come_from_kernel_accounting_when_present() {
    let ms = 1_000_000;
    let a = analyse(&states_run(true), Options { states: CountedStates::Computing, ..Options::default() });
    let m = a.metrics();
    assert_eq!(m.time_source(), TimeSource::Kernel);
    // Kernel CPU time counts in every state: main is on the stack in T1 σ1–σ3 (1 + 2 + 4 ms) and
    // T2 σ1, σ3 (3 + 7 ms); work in T1 σ1, σ3 and T2 σ3 (1 + 4 + 7 ms).
    assert_eq!(m.artifact(ArtifactId::function(0)).unwrap().ns, 17 * ms);
    assert_eq!(m.artifact(ArtifactId::function(1)).unwrap().ns, 12 * ms);
    assert_eq!(m.artifact(ArtifactId::function(1)).unwrap().self_ns, 12 * ms);
    assert_eq!(m.thread(0).ns, 7 * ms);
    assert_eq!(m.thread(1).ns, 15 * ms);
    assert_eq!(m.total_ns(), 22 * ms);
    // Per thread, only threads that executed work in a counted state are listed (T1, σ1).
    let row = &m.artifact(ArtifactId::function(1)).unwrap().threads;
    assert_eq!(row.iter().map(|c| (c.thread, c.frq, c.ns)).collect::<Vec<_>>(), vec![(0, 1, 5 * ms)]);
    // The counted states do not change kernel seconds.
    let all = analyse(&states_run(true), Options { states: CountedStates::All, ..Options::default() });
    assert_eq!(all.metrics().artifact(ArtifactId::function(1)).unwrap().ns, 12 * ms);
    // Without accounting: counted samples × 3 ms (main: T1 σ1, σ2 and T2 σ1).
    let a = analyse(&states_run(false), Options::default());
    assert_eq!(a.metrics().time_source(), TimeSource::Samples);
    assert_eq!(a.metrics().artifact(ArtifactId::function(0)).unwrap().ns, 9 * ms);
    assert_eq!(a.metrics().total_ns(), 12 * ms);
}

#[test]
fn degenerate_runs_do_not_panic() {
    // Empty run.
    let empty = Fixture::new().finish();
    let a = analyse(&empty, Options::default());
    assert_eq!(a.counted_samples(), 0);
    assert!(a.program_clusters().is_empty());
    assert_close!(a.metrics().crt(M1), 0.0);
    // Only idle samples: nothing counts, every share is 0, nothing divides by zero.
    let mut fx = Fixture::new();
    fx.func("/p/x.py", FileKind::User, "f", 1);
    let t = fx.thread("T", "Thread");
    let _never = fx.thread("never-sampled", "Thread");
    fx.sample(&[(t, "f", I)]);
    let run = fx.finish();
    let a = analyse(&run, Options::default());
    assert_eq!(a.counted_samples(), 0);
    assert_close!(a.metrics().crt(ArtifactId::function(0)), 0.0);
    assert_close!(a.metrics().crt_thread(ArtifactId::function(0), 0), 0.0);
    assert!(a.clusters(ArtifactId::function(0)).is_empty());
    // One thread, one artifact: one cluster holding everything.
    let a = analyse(&run, Options { states: CountedStates::All, ..Options::default() });
    assert_eq!(a.clusters(ArtifactId::function(0)).len(), 1);
    assert_close!(a.clusters(ArtifactId::function(0))[0].sum, 1.0);
    // Ids out of range.
    assert!(a.metrics().artifact(ArtifactId::function(99)).is_none());
    assert!(a.clusters(ArtifactId::class(7)).is_empty());
    assert_eq!(a.metrics().thread(42).frq, 0);
    // An inconsistent run is an error, not a panic.
    let mut bad = run.clone();
    bad.samples[0].threads[0].thread = 9;
    assert!(Analysis::new(&bad, &Options::default()).is_err());
}
