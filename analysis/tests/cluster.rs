//! COP-KMeans and the k-means baseline on hand-computed inputs.

use linfa::prelude::*;
use linfa::DatasetBase;
use ndarray::{array, Array1};
use threadradar_analysis::cluster::{chunklets, epsilon, ClusterError, Epsilon, KMeansBaseline};
use threadradar_analysis::{ClusterMethod, Clustering, CopKMeans};

fn groups(values: &[f64], c: &Clustering) -> Vec<Vec<f64>> {
    (0..c.n_clusters()).map(|k| c.members(k).map(|i| values[i]).collect()).collect()
}

#[test]
fn epsilon_is_the_papers_rule() {
    assert_eq!(epsilon(1), 0.5);
    assert_eq!(epsilon(10), 0.05);
    assert_eq!(epsilon(50), 0.01);
    assert_eq!(epsilon(1000), 0.01);
}

#[test]
fn must_link_is_transitive() {
    // 0.000 – 0.009 – 0.018 chain with gaps < 0.01 although 0 and 0.018 differ by more.
    let v = [0.018, 0.5, 0.0, 0.009, 0.51];
    assert_eq!(chunklets(&v, 0.01), vec![vec![2, 3, 0], vec![1], vec![4]]);
    assert_eq!(chunklets(&[], 0.01), Vec::<Vec<usize>>::new());
}

#[test]
fn cop_kmeans_worked_example() {
    // n = 6, ε = max(0.01, 1/12) ≈ 0.083 → chunklets {0}, {0.1}, {0.2}, {0.45, 0.5}, {0.95}.
    // Init at min 0, (lower) median 0.2, max 0.95.
    // It. 1: {0.1} ties between 0 and 0.2 → the lower; means 0.05, 0.383, 0.95.
    // It. 2: {0.2} is nearer 0.05 (0.15) than 0.383 (0.183) → moves; means 0.1, 0.475, 0.95.
    // It. 3: nothing moves.
    let v = [0.95, 0.1, 0.5, 0.0, 0.45, 0.2];
    let model = CopKMeans::params().fit_values(&v).unwrap();
    assert_eq!(model.n_chunklets(), 5);
    assert_eq!(model.iterations(), 3);
    assert_eq!(groups(&v, model.clustering()), vec![vec![0.1, 0.0, 0.2], vec![0.5, 0.45], vec![0.95]]);
    let c = model.centroids();
    assert!((c[0] - 0.1).abs() < 1e-12 && (c[1] - 0.475).abs() < 1e-12 && (c[2] - 0.95).abs() < 1e-12);
}

#[test]
fn noise_stays_in_one_cluster_with_cop_but_not_with_kmeans() {
    // Ten threads whose shares differ only by sampling noise (gaps 0.002 < ε = 0.05): the paper's
    // motivation for constraints. Plain k-means, started at min/median/max, splits them.
    let v: Vec<f64> = (0..10).map(|i| 0.09 + 0.002 * i as f64).collect();
    let cop = ClusterMethod::CopKMeans.cluster(&v).unwrap();
    assert_eq!(cop.n_clusters(), 1);
    let plain = ClusterMethod::KMeans.cluster(&v).unwrap();
    assert!(plain.n_clusters() > 1, "{plain:?}");
}

#[test]
fn fewer_chunklets_than_three_give_fewer_clusters() {
    // Producer ~0.5, ten consumers ~0.05: two chunklets, two clusters, low first.
    let mut v = vec![0.5];
    v.extend((0..10).map(|i| 0.045 + 0.001 * i as f64));
    let c = ClusterMethod::CopKMeans.cluster(&v).unwrap();
    assert_eq!(c.n_clusters(), 2);
    assert_eq!(c.labels()[0], 1);
    assert!(c.labels()[1..].iter().all(|&l| l == 0));
}

#[test]
fn clusters_ascend_and_labels_are_dense() {
    let v = [0.9, 0.1, 0.5, 0.11, 0.52, 0.93, 0.3];
    for method in [ClusterMethod::CopKMeans, ClusterMethod::KMeans] {
        let c = method.cluster(&v).unwrap();
        assert!(c.centroids().windows(2).all(|w| w[0] < w[1]), "{method:?}: {c:?}");
        assert!(c.n_clusters() <= 3);
        for k in 0..c.n_clusters() {
            assert!(c.members(k).count() > 0);
        }
        assert_eq!(c.predict(0.0), 0);
        assert_eq!(c.predict(1.0), c.n_clusters() - 1);
    }
}

#[test]
fn edge_inputs() {
    for method in [ClusterMethod::CopKMeans, ClusterMethod::KMeans] {
        assert_eq!(method.cluster(&[]).unwrap().n_clusters(), 0);
        assert_eq!(method.cluster(&[0.7]).unwrap().labels(), &[0]);
        assert_eq!(method.cluster(&[0.2, 0.2, 0.2, 0.2]).unwrap().n_clusters(), 1);
        assert!(matches!(method.cluster(&[0.1, f64::NAN]), Err(ClusterError::NotFinite)));
    }
    assert!(CopKMeans::params().max_clusters(0).fit_values(&[0.1]).is_err());
    assert!(CopKMeans::params().epsilon(Epsilon::Fixed(-1.0)).fit_values(&[0.1]).is_err());
    assert!(KMeansBaseline { max_clusters: 0 }.fit_values(&[0.1]).is_err());
}

#[test]
fn without_constraints_cop_kmeans_is_plain_lloyd() {
    // ε = 0: every value is its own chunklet; the noise of the test above is now split.
    let v: Vec<f64> = (0..10).map(|i| 0.09 + 0.002 * i as f64).collect();
    let m = CopKMeans::params().epsilon(Epsilon::Fixed(0.0)).fit_values(&v).unwrap();
    assert_eq!(m.n_chunklets(), 10);
    assert_eq!(m.clustering().n_clusters(), 3);
}

#[test]
fn linfa_fit_and_predict() {
    // The linfa-style API: params → fit(&dataset) → predict.
    let records = array![[0.02], [0.03], [0.5], [0.97], [0.51]];
    let dataset = DatasetBase::from(records.clone());
    let model: CopKMeans = CopKMeans::params().fit(&dataset).unwrap();
    let labels: Array1<usize> = model.predict(&records);
    assert_eq!(labels.to_vec(), vec![0, 0, 1, 2, 1]);
    let fresh: Array1<usize> = model.predict(&array![[0.6], [0.0], [0.9]]);
    assert_eq!(fresh.to_vec(), vec![1, 0, 2]);
    // Two columns are not one metric.
    let two = DatasetBase::from(array![[0.1, 0.2], [0.3, 0.4]]);
    let r: Result<CopKMeans, ClusterError> = CopKMeans::params().fit(&two);
    assert!(matches!(r, Err(ClusterError::NotOneDimensional(2))));
}
