//! Adjusted Rand index and the comparison of two runs' clusterings.

mod common;

use common::*;
use threadradar_analysis::stability::{adjusted_rand_index, compare, mean_ari};
use threadradar_analysis::{Analysis, Level, Options};
use threadradar_profiler::run::{FileKind, Run};

#[test]
fn ari_known_values() {
    assert_eq!(adjusted_rand_index(&[0, 0, 1, 1], &[0, 0, 1, 1]), 1.0);
    // Renaming clusters changes nothing.
    assert_eq!(adjusted_rand_index(&[0, 0, 1, 1], &[1, 1, 0, 0]), 1.0);
    // Hubert & Arabie; the value scikit-learn documents for this pair.
    assert!((adjusted_rand_index(&[0, 0, 1, 1], &[0, 0, 1, 2]) - 4.0 / 7.0).abs() < 1e-12);
    // One cluster against all singletons: no agreement beyond chance.
    assert_eq!(adjusted_rand_index(&[0, 0, 0, 0], &[0, 1, 2, 3]), 0.0);
    // Fewer than two items, or both trivial the same way.
    assert_eq!(adjusted_rand_index(&[3], &[5]), 1.0);
    assert_eq!(adjusted_rand_index(&[0, 0, 0], &[2, 2, 2]), 1.0);
    assert!(adjusted_rand_index(&[0, 1, 0, 1, 0, 1], &[0, 0, 0, 1, 1, 1]) < 0.0);
}

/// Three workers, one much busier, in a run whose threads are listed in `order`.
fn run_with(order: [usize; 3], busy: usize) -> Run {
    let mut fx = Fixture::new();
    fx.func("/p/w.py", FileKind::User, "Worker.run", 3);
    let ids: Vec<u32> = order.iter().map(|i| fx.thread(&format!("worker-{i}"), "Worker")).collect();
    for tick in 0..20 {
        let obs: Vec<_> = order
            .iter()
            .zip(&ids)
            .filter(|(w, _)| **w == busy || tick % 5 == 0)
            .map(|(_, &t)| (t, "Worker.run", C))
            .collect();
        fx.sample(&obs);
    }
    fx.finish()
}

#[test]
fn same_program_same_clusters_whatever_the_thread_order() {
    let a = run_with([0, 1, 2], 2);
    let b = run_with([2, 0, 1], 2);
    let (aa, ab) = (Analysis::new(&a, &Options::default()).unwrap(), Analysis::new(&b, &Options::default()).unwrap());
    let s = compare(&a, &aa, &b, &ab, Level::Function);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].qualname, "Worker.run");
    assert_eq!(s[0].threads, 3);
    assert_eq!(s[0].ari, 1.0);
    assert_eq!(compare(&a, &aa, &b, &ab, Level::Program)[0].ari, 1.0);
    assert_eq!(mean_ari(&s), Some(1.0));
}

#[test]
fn a_different_busy_thread_disagrees() {
    let a = run_with([0, 1, 2], 2);
    let b = run_with([0, 1, 2], 0);
    let (aa, ab) = (Analysis::new(&a, &Options::default()).unwrap(), Analysis::new(&b, &Options::default()).unwrap());
    let s = compare(&a, &aa, &b, &ab, Level::Function);
    assert!(s[0].ari < 1.0, "{s:?}");
}
