//! Properties that must hold for any run and any metric values (proptest).

mod common;

use common::Fixture;
use proptest::prelude::*;
use std::collections::BTreeSet;
use threadradar_analysis::cluster::epsilon;
use threadradar_analysis::{Analysis, ArtifactKind, ClusterMethod, CountedStates, Options, ThreadFilter};
use threadradar_profiler::run::{FileKind, Run, ThreadState};

/// A random run: per sample, per thread, maybe an observation with a stack of function indices
/// (outermost first; may repeat, i.e. recurse) and a state.
#[derive(Clone, Debug)]
struct Spec {
    threads: usize,
    functions: usize,
    samples: Vec<Vec<Observation>>,
}

/// A thread at one tick: its stack (function indices, outermost first) and state code, if seen.
type Observation = Option<(Vec<usize>, u8)>;

fn spec() -> impl Strategy<Value = Spec> {
    (1usize..=6, 1usize..=5).prop_flat_map(|(threads, functions)| {
        let obs = proptest::option::weighted(0.8, (proptest::collection::vec(0..functions, 0..5), 0u8..3));
        proptest::collection::vec(proptest::collection::vec(obs, threads), 0..25)
            .prop_map(move |samples| Spec { threads, functions, samples })
    })
}

fn fname(i: usize) -> String {
    match i % 2 {
        0 => format!("K{}.f{i}", i % 3),
        _ => format!("f{i}"),
    }
}

/// Builds the run with thread `t` of the spec stored at id `perm[t]`, optionally leaving one
/// thread's observations out.
fn build(s: &Spec, perm: &[usize], drop: Option<usize>) -> Run {
    let mut fx = Fixture::new();
    for i in 0..s.functions {
        fx.func(&format!("/p/m{}.py", i % 2), FileKind::User, &fname(i), 1 + i as u32);
    }
    let mut inv = vec![0; s.threads];
    for (t, &p) in perm.iter().enumerate() {
        inv[p] = t;
    }
    for &t in &inv {
        fx.thread(&format!("T{t}"), if t % 2 == 0 { "Even" } else { "Odd" });
    }
    for sample in &s.samples {
        let obs: Vec<(u32, String, ThreadState)> = sample
            .iter()
            .enumerate()
            .filter(|(t, _)| Some(*t) != drop)
            .filter_map(|(t, o)| o.as_ref().map(|(stack, st)| (t, stack, st)))
            .map(|(t, stack, st)| {
                let state = [ThreadState::Computing, ThreadState::Gil, ThreadState::Idle][*st as usize];
                (perm[t] as u32, stack.iter().map(|&f| fname(f)).collect::<Vec<_>>().join(" > "), state)
            })
            .collect();
        let obs: Vec<(u32, &str, ThreadState)> = obs.iter().map(|(t, s, st)| (*t, s.as_str(), *st)).collect();
        fx.sample(&obs);
    }
    fx.finish()
}

fn identity(n: usize) -> Vec<usize> {
    (0..n).collect()
}

/// Each artifact's clusters as sets of thread names, with avg and sum.
fn named_clusters(run: &Run, a: &Analysis) -> Vec<Vec<(BTreeSet<String>, f64, f64)>> {
    let mut out = Vec::new();
    for kind in ArtifactKind::ALL {
        for id in a.artifacts().ids(kind) {
            out.push(
                a.clusters(id)
                    .iter()
                    .map(|c| (c.threads.iter().map(|&t| run.threads[t as usize].name.clone()).collect(), c.avg, c.sum))
                    .collect(),
            );
        }
    }
    out.push(
        a.program_clusters()
            .iter()
            .map(|c| (c.threads.iter().map(|&t| run.threads[t as usize].name.clone()).collect(), c.avg, c.sum))
            .collect(),
    );
    out
}

fn states() -> impl Strategy<Value = CountedStates> {
    prop_oneof![Just(CountedStates::Computing), Just(CountedStates::ComputingAndGil), Just(CountedStates::All)]
}

fn methods() -> impl Strategy<Value = ClusterMethod> {
    prop_oneof![Just(ClusterMethod::CopKMeans), Just(ClusterMethod::KMeans)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn shares_sum_to_one_and_clusters_partition_the_threads(s in spec(), states in states(), method in methods()) {
        let run = build(&s, &identity(s.threads), None);
        let a = Analysis::new(&run, &Options { states, method, ..Options::default() }).unwrap();
        let m = a.metrics();
        let frq_sum: u64 = (0..s.threads as u32).map(|t| m.thread(t).frq).sum();
        prop_assert_eq!(frq_sum, a.counted_samples());
        for kind in ArtifactKind::ALL {
            for id in a.artifacts().ids(kind) {
                let am = m.artifact(id).unwrap();
                prop_assert!(am.self_frq <= am.frq && am.frq <= a.counted_samples());
                prop_assert!((0.0..=1.0).contains(&m.crt(id)));
                let clusters = a.clusters(id);
                if am.frq == 0 {
                    prop_assert!(clusters.is_empty());
                    continue;
                }
                // Σth crt(a, th) = 1.
                let total: f64 = am.threads.iter().map(|c| m.crt_thread(id, c.thread)).sum();
                prop_assert!((total - 1.0).abs() < 1e-9, "Σ crt(a, th) = {}", total);
                prop_assert!(!clusters.is_empty() && clusters.len() <= 3);
                let mut members: Vec<u32> = clusters.iter().flat_map(|c| c.threads.clone()).collect();
                members.sort_unstable();
                let executing: Vec<u32> = am.threads.iter().map(|c| c.thread).collect();
                prop_assert_eq!(&members, &executing);
                let sum: f64 = clusters.iter().map(|c| c.sum).sum();
                prop_assert!((sum - 1.0).abs() < 1e-9);
                prop_assert!(clusters.windows(2).all(|w| w[0].avg < w[1].avg));
                if method == ClusterMethod::CopKMeans {
                    // No must-link pair is split.
                    let eps = epsilon(executing.len());
                    let cluster_of = |t: u32| clusters.iter().position(|c| c.threads.contains(&t));
                    for x in &am.threads {
                        for y in &am.threads {
                            if (m.crt_thread(id, x.thread) - m.crt_thread(id, y.thread)).abs() < eps {
                                prop_assert_eq!(cluster_of(x.thread), cluster_of(y.thread));
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn analysis_is_deterministic_and_invariant_under_thread_order(
        s in spec(),
        shuffle in any::<proptest::sample::Index>(),
        method in methods(),
    ) {
        let options = Options { method, ..Options::default() };
        let run = build(&s, &identity(s.threads), None);
        let once = named_clusters(&run, &Analysis::new(&run, &options).unwrap());
        let again = named_clusters(&run, &Analysis::new(&run, &options).unwrap());
        prop_assert_eq!(&once, &again);
        // A rotation of the thread table by a random amount.
        let k = shuffle.index(s.threads);
        let perm: Vec<usize> = (0..s.threads).map(|t| (t + k) % s.threads).collect();
        let permuted = build(&s, &perm, None);
        let other = named_clusters(&permuted, &Analysis::new(&permuted, &options).unwrap());
        prop_assert_eq!(once.len(), other.len());
        for (x, y) in once.iter().zip(&other) {
            prop_assert_eq!(x.len(), y.len());
            for (cx, cy) in x.iter().zip(y) {
                prop_assert_eq!(&cx.0, &cy.0);
                prop_assert!((cx.1 - cy.1).abs() < 1e-12 && (cx.2 - cy.2).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn a_thread_filter_is_the_same_as_never_sampling_the_thread(s in spec(), pick in any::<proptest::sample::Index>()) {
        let t = pick.index(s.threads);
        let run = build(&s, &identity(s.threads), None);
        let filtered = Analysis::new(&run, &Options { threads: ThreadFilter::excluding([t as u32]), ..Options::default() }).unwrap();
        let without = build(&s, &identity(s.threads), Some(t));
        let reference = Analysis::new(&without, &Options::default()).unwrap();
        prop_assert_eq!(filtered.counted_samples(), reference.counted_samples());
        prop_assert_eq!(named_clusters(&run, &filtered), named_clusters(&without, &reference));
        for kind in ArtifactKind::ALL {
            for id in filtered.artifacts().ids(kind) {
                prop_assert_eq!(filtered.metrics().artifact(id), reference.metrics().artifact(id));
            }
        }
    }

    #[test]
    fn clustering_values(values in proptest::collection::vec(0.0f64..=1.0, 0..120), k in any::<proptest::sample::Index>()) {
        for method in [ClusterMethod::CopKMeans, ClusterMethod::KMeans] {
            let c = method.cluster(&values).unwrap();
            prop_assert!(c.n_clusters() <= 3);
            prop_assert_eq!(c.labels().len(), values.len());
            prop_assert_eq!(&c, &method.cluster(&values).unwrap());
            if method == ClusterMethod::CopKMeans {
                let eps = epsilon(values.len());
                for i in 0..values.len() {
                    for j in 0..values.len() {
                        if (values[i] - values[j]).abs() < eps {
                            prop_assert_eq!(c.labels()[i], c.labels()[j]);
                        }
                    }
                }
            }
            // Invariant under the order of the input: rotate and compare labels per value.
            if !values.is_empty() {
                let r = k.index(values.len());
                let rotated: Vec<f64> = values[r..].iter().chain(&values[..r]).copied().collect();
                let cr = method.cluster(&rotated).unwrap();
                for i in 0..values.len() {
                    prop_assert_eq!(c.labels()[(i + r) % values.len()], cr.labels()[i]);
                }
            }
        }
    }
}
