//! Clustering threads by one metric value (paper §2.3, §7.2; spec §3).
//!
//! The paper first used plain k-means and found threads split into different clusters "due to the
//! inaccuracy of statistical profiling rather than other effects". It therefore uses COP-KMeans
//! (Wagstaff et al. 2001) with must-link constraints between threads whose values differ by less
//! than ε = max(0.01, 1/(2n)), at most three clusters, initial centroids at the threads with the
//! minimal, median and maximal value, and the absolute difference as distance. Both are here, in
//! linfa's `Fit` style: [`CopKMeans::params`] gives hyper-parameters whose `fit(&dataset)` returns a
//! fitted [`CopKMeans`] that can `predict`; [`KMeansBaseline`] runs `linfa-clustering`'s `KMeans`
//! with the same deterministic initialisation. [`ClusterMethod`] picks one for the analysis.
//!
//! Both work on one feature (the metric value). Every result is a [`Clustering`] whose clusters are
//! non-empty and ordered low → high by centroid, so the glyph's colours are stable.

use linfa::prelude::*;
use linfa::{DatasetBase, ParamGuard};
use ndarray::{Array1, Array2, ArrayBase, Data, Ix2};
use serde::Serialize;

/// The paper's maximum number of clusters ("k = 3").
pub const MAX_CLUSTERS: usize = 3;

/// Why a clustering could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("a metric value to cluster is not a finite number")]
    NotFinite,
    #[error("threads are clustered by one metric value, but the data has {0} columns")]
    NotOneDimensional(usize),
    #[error("invalid clustering parameters: {0}")]
    Params(&'static str),
    #[error("k-means failed: {0}")]
    KMeans(String),
    #[error(transparent)]
    Linfa(#[from] linfa::Error),
}

/// The must-link threshold ε = max(0.01, 1/(2n)) for `n` threads (paper §2.3): values this close
/// are within the sampling noise of each other.
pub fn epsilon(n: usize) -> f64 {
    if n == 0 {
        return 0.01;
    }
    (1.0 / (2.0 * n as f64)).max(0.01)
}

/// The chunklets of the must-link graph: the transitive closure of "differ by less than `eps`".
/// In one dimension these are the runs of the sorted values in which every gap is below `eps`.
/// Returns indices into `values`, each chunklet ascending by value, chunklets ascending.
pub fn chunklets(values: &[f64], eps: f64) -> Vec<Vec<usize>> {
    let order = sorted_order(values);
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut prev = f64::NEG_INFINITY;
    for i in order {
        let v = values[i];
        match out.last_mut() {
            Some(c) if v - prev < eps => c.push(i),
            _ => out.push(vec![i]),
        }
        prev = v;
    }
    out
}

/// Indices of `values` by ascending value, ties by index (so equal values keep input order).
fn sorted_order(values: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]).then(a.cmp(&b)));
    order
}

/// The result of clustering `n` values: a label per value and one centroid per cluster.
///
/// Architecture invariant: every cluster has at least one member, and centroids ascend, so label 0
/// is the low cluster and the last label the high one.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Clustering {
    labels: Vec<usize>,
    centroids: Vec<f64>,
}

impl Clustering {
    /// Builds a clustering from arbitrary labels: drops empty clusters, computes each centroid as
    /// the mean of its members, and relabels so centroids ascend.
    pub fn from_labels(values: &[f64], labels: &[usize]) -> Clustering {
        let k = labels.iter().copied().max().map_or(0, |m| m + 1);
        let mut sum = vec![0.0; k];
        let mut count = vec![0usize; k];
        // Sum in value order so the result does not depend on the order of the input.
        for i in sorted_order(values) {
            sum[labels[i]] += values[i];
            count[labels[i]] += 1;
        }
        let mut live: Vec<(f64, usize)> =
            (0..k).filter(|&c| count[c] > 0).map(|c| (sum[c] / count[c] as f64, c)).collect();
        live.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut relabel = vec![usize::MAX; k];
        for (new, &(_, old)) in live.iter().enumerate() {
            relabel[old] = new;
        }
        Clustering { labels: labels.iter().map(|&l| relabel[l]).collect(), centroids: live.into_iter().map(|(c, _)| c).collect() }
    }

    /// The cluster of each input value.
    pub fn labels(&self) -> &[usize] {
        &self.labels
    }

    /// Each cluster's centroid (the mean of its values), ascending.
    pub fn centroids(&self) -> &[f64] {
        &self.centroids
    }

    pub fn n_clusters(&self) -> usize {
        self.centroids.len()
    }

    /// The indices of the values in cluster `c`.
    pub fn members(&self, c: usize) -> impl Iterator<Item = usize> + '_ {
        self.labels.iter().enumerate().filter(move |(_, &l)| l == c).map(|(i, _)| i)
    }

    /// The cluster whose centroid is nearest to `value` (ties to the lower cluster).
    pub fn predict(&self, value: f64) -> usize {
        nearest(&self.centroids, |c| (value - c).abs())
    }
}

/// `k` positions spread evenly over `0..n` sorted values, ends included: for k = 3 the minimum,
/// the lower median and the maximum.
fn spread(n: usize, k: usize) -> Vec<usize> {
    if k <= 1 || n <= 1 {
        return vec![0; k];
    }
    (0..k).map(|j| j * (n - 1) / (k - 1)).collect()
}

/// Index of the centroid with the smallest cost; the first one on ties.
fn nearest(centroids: &[f64], cost: impl Fn(f64) -> f64) -> usize {
    let mut best = 0;
    let mut best_cost = f64::INFINITY;
    for (i, &c) in centroids.iter().enumerate() {
        let d = cost(c);
        if d < best_cost {
            best = i;
            best_cost = d;
        }
    }
    best
}

/// How ε is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Epsilon {
    /// max(0.01, 1/(2n)), the paper's rule.
    Paper,
    /// A fixed threshold; `Fixed(0.0)` removes every constraint (§7.2's "no constraint at all").
    Fixed(f64),
}

/// COP-KMeans hyper-parameters, unchecked (linfa's `ParamGuard` pattern).
#[derive(Clone, Debug, PartialEq)]
pub struct CopKMeansParams(CopKMeansValidParams);

/// COP-KMeans hyper-parameters that passed the check; `fit` lives here.
#[derive(Clone, Debug, PartialEq)]
pub struct CopKMeansValidParams {
    max_clusters: usize,
    epsilon: Epsilon,
    max_iterations: usize,
}

/// A fitted COP-KMeans model: the clustering of the training values and the centroids.
#[derive(Clone, Debug, PartialEq)]
pub struct CopKMeans {
    clustering: Clustering,
    epsilon: f64,
    chunklets: usize,
    iterations: usize,
}

impl CopKMeans {
    /// The paper's parameters: k ≤ 3, ε = max(0.01, 1/(2n)).
    pub fn params() -> CopKMeansParams {
        CopKMeansParams(CopKMeansValidParams { max_clusters: MAX_CLUSTERS, epsilon: Epsilon::Paper, max_iterations: 100 })
    }

    /// The clustering of the values the model was fitted on.
    pub fn clustering(&self) -> &Clustering {
        &self.clustering
    }

    pub fn into_clustering(self) -> Clustering {
        self.clustering
    }

    pub fn centroids(&self) -> &[f64] {
        self.clustering.centroids()
    }

    /// The ε that was used.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// How many chunklets (must-link components) the values formed.
    pub fn n_chunklets(&self) -> usize {
        self.chunklets
    }

    /// Lloyd iterations until the assignment stopped changing (0 when no iteration was needed).
    pub fn iterations(&self) -> usize {
        self.iterations
    }
}

impl CopKMeansParams {
    /// At most `k` clusters (1 ≤ k; the paper uses 3).
    pub fn max_clusters(mut self, k: usize) -> Self {
        self.0.max_clusters = k;
        self
    }

    pub fn epsilon(mut self, epsilon: Epsilon) -> Self {
        self.0.epsilon = epsilon;
        self
    }

    /// A bound on Lloyd iterations. Assigning whole chunklets by summed absolute distance and
    /// moving centroids to means need not decrease one objective, so the loop is bounded.
    pub fn max_iterations(mut self, n: usize) -> Self {
        self.0.max_iterations = n;
        self
    }
}

impl ParamGuard for CopKMeansParams {
    type Checked = CopKMeansValidParams;
    type Error = ClusterError;

    fn check_ref(&self) -> Result<&CopKMeansValidParams, ClusterError> {
        let p = &self.0;
        if p.max_clusters == 0 {
            return Err(ClusterError::Params("at least one cluster is needed"));
        }
        if p.max_iterations == 0 {
            return Err(ClusterError::Params("at least one iteration is needed"));
        }
        if let Epsilon::Fixed(e) = p.epsilon {
            if !(e.is_finite() && e >= 0.0) {
                return Err(ClusterError::Params("epsilon must be a finite number ≥ 0"));
            }
        }
        Ok(p)
    }

    fn check(self) -> Result<CopKMeansValidParams, ClusterError> {
        self.check_ref()?;
        Ok(self.0)
    }
}

impl CopKMeansParams {
    /// Checks the parameters and fits on plain values (the analysis's fast path; `fit` on a
    /// linfa dataset does the same).
    pub fn fit_values(&self, values: &[f64]) -> Result<CopKMeans, ClusterError> {
        self.check_ref()?.fit_values(values)
    }
}

impl CopKMeansValidParams {
    /// COP-KMeans on one-dimensional values.
    ///
    /// 1. Chunklets: must-link is transitive, so values chained by gaps < ε form one unit.
    /// 2. With no more chunklets than clusters, each chunklet is a cluster: merging chunklets only
    ///    adds cost and splitting one is forbidden, so that is the optimum.
    /// 3. Otherwise Lloyd's iteration over chunklets: start from the values of the threads with the
    ///    minimal, median (the lower one for an even count) and maximal value; assign each whole
    ///    chunklet to the centroid with the least summed absolute difference (the lower centroid
    ///    on ties, so no randomness and no dependence on input order); move each centroid to the
    ///    mean of its values (an empty cluster keeps its centroid); stop when nothing moves.
    pub fn fit_values(&self, values: &[f64]) -> Result<CopKMeans, ClusterError> {
        if values.iter().any(|v| !v.is_finite()) {
            return Err(ClusterError::NotFinite);
        }
        let eps = match self.epsilon {
            Epsilon::Paper => epsilon(values.len()),
            Epsilon::Fixed(e) => e,
        };
        let chunks = chunklets(values, eps);
        let mut labels = vec![0usize; values.len()];
        if chunks.len() <= self.max_clusters {
            for (c, chunk) in chunks.iter().enumerate() {
                for &i in chunk {
                    labels[i] = c;
                }
            }
            return Ok(CopKMeans {
                clustering: Clustering::from_labels(values, &labels),
                epsilon: eps,
                chunklets: chunks.len(),
                iterations: 0,
            });
        }
        let order: Vec<usize> = chunks.iter().flatten().copied().collect();
        let n = order.len();
        let k = self.max_clusters;
        // Spread over the sorted values: for k = 3 the paper's min, (lower) median and max.
        let mut centroids: Vec<f64> = spread(n, k).into_iter().map(|p| values[order[p]]).collect();
        let mut assign = vec![usize::MAX; chunks.len()];
        let mut iterations = 0;
        while iterations < self.max_iterations {
            iterations += 1;
            let mut changed = false;
            for (ci, chunk) in chunks.iter().enumerate() {
                let c = nearest(&centroids, |c| chunk.iter().map(|&i| (values[i] - c).abs()).sum());
                if assign[ci] != c {
                    assign[ci] = c;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
            let mut sum = vec![0.0; k];
            let mut count = vec![0usize; k];
            for (ci, chunk) in chunks.iter().enumerate() {
                for &i in chunk {
                    sum[assign[ci]] += values[i];
                    count[assign[ci]] += 1;
                }
            }
            for j in 0..k {
                if count[j] > 0 {
                    centroids[j] = sum[j] / count[j] as f64;
                }
            }
        }
        for (ci, chunk) in chunks.iter().enumerate() {
            for &i in chunk {
                labels[i] = assign[ci];
            }
        }
        Ok(CopKMeans { clustering: Clustering::from_labels(values, &labels), epsilon: eps, chunklets: chunks.len(), iterations })
    }
}

fn column(records: &ArrayBase<impl Data<Elem = f64>, Ix2>) -> Result<Vec<f64>, ClusterError> {
    if records.ncols() != 1 && records.nrows() > 0 {
        return Err(ClusterError::NotOneDimensional(records.ncols()));
    }
    Ok(records.iter().copied().collect())
}

impl<D: Data<Elem = f64>, T> Fit<ArrayBase<D, Ix2>, T, ClusterError> for CopKMeansValidParams {
    type Object = CopKMeans;

    fn fit(&self, dataset: &DatasetBase<ArrayBase<D, Ix2>, T>) -> Result<CopKMeans, ClusterError> {
        self.fit_values(&column(dataset.records())?)
    }
}

impl<D: Data<Elem = f64>> PredictInplace<ArrayBase<D, Ix2>, Array1<usize>> for CopKMeans {
    /// The nearest centroid of each row's value. Must-link does not apply to new points: each is
    /// its own chunklet.
    fn predict_inplace(&self, x: &ArrayBase<D, Ix2>, y: &mut Array1<usize>) {
        for (row, out) in x.rows().into_iter().zip(y.iter_mut()) {
            *out = self.clustering.predict(row.iter().copied().next().unwrap_or(0.0));
        }
    }

    fn default_target(&self, x: &ArrayBase<D, Ix2>) -> Array1<usize> {
        Array1::zeros(x.nrows())
    }
}

/// Plain k-means, the paper's baseline, run by `linfa-clustering`'s `KMeans`.
///
/// Made deterministic the same way as COP-KMeans: k = min(3, n) precomputed initial centroids at
/// the minimal, median and maximal value and a single run (`n_runs(1)`), so its random number
/// generator is never used. Note that linfa's update step is the "m_k-means" variant: the old
/// centroid counts as one extra member when the new one is computed, which damps centroid moves and
/// keeps empty clusters in place. Labels come from `predict` on the final centroids.
#[derive(Clone, Debug, PartialEq)]
pub struct KMeansBaseline {
    pub max_clusters: usize,
}

impl Default for KMeansBaseline {
    fn default() -> Self {
        KMeansBaseline { max_clusters: MAX_CLUSTERS }
    }
}

impl KMeansBaseline {
    pub fn fit_values(&self, values: &[f64]) -> Result<Clustering, ClusterError> {
        use linfa_clustering::{KMeans, KMeansInit};
        if values.iter().any(|v| !v.is_finite()) {
            return Err(ClusterError::NotFinite);
        }
        if self.max_clusters == 0 {
            return Err(ClusterError::Params("at least one cluster is needed"));
        }
        let n = values.len();
        if n == 0 {
            return Ok(Clustering::default());
        }
        let order = sorted_order(values);
        let k = self.max_clusters.min(n);
        let init = Array2::from_shape_vec((k, 1), spread(n, k).iter().map(|&p| values[order[p]]).collect())
            .map_err(|e| ClusterError::KMeans(e.to_string()))?;
        // linfa sees the values in ascending order, so floating-point sums (and with them the
        // tie-breaks between equidistant centroids) do not depend on the order of the threads.
        let sorted: Vec<f64> = order.iter().map(|&i| values[i]).collect();
        let records = Array2::from_shape_vec((n, 1), sorted).map_err(|e| ClusterError::KMeans(e.to_string()))?;
        let dataset = DatasetBase::from(records.clone());
        let model = KMeans::params(k)
            .n_runs(1)
            .init_method(KMeansInit::Precomputed(init))
            .tolerance(1e-6)
            .max_n_iterations(300)
            .fit(&dataset)
            .map_err(|e| ClusterError::KMeans(e.to_string()))?;
        let sorted_labels: Array1<usize> = model.predict(&records);
        let mut labels = vec![0usize; n];
        for (rank, &i) in order.iter().enumerate() {
            labels[i] = sorted_labels[rank];
        }
        Ok(Clustering::from_labels(values, &labels))
    }
}

/// Which algorithm clusters the threads of each artifact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClusterMethod {
    /// COP-KMeans with the paper's ε (the default).
    #[default]
    CopKMeans,
    /// Plain k-means (linfa), the baseline for comparing stability across runs.
    KMeans,
}

impl ClusterMethod {
    /// Clusters `values` (one per thread) into at most three ordered clusters.
    pub fn cluster(self, values: &[f64]) -> Result<Clustering, ClusterError> {
        match self {
            ClusterMethod::CopKMeans => Ok(CopKMeans::params().fit_values(values)?.into_clustering()),
            ClusterMethod::KMeans => KMeansBaseline::default().fit_values(values),
        }
    }

    /// `cop` or `plain`, as `report --kmeans` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterMethod::CopKMeans => "cop",
            ClusterMethod::KMeans => "plain",
        }
    }
}
