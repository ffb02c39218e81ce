//! Stability of clusterings across repeated runs of one program (paper §2.3: COP-KMeans was chosen
//! to be "more stable over multiple runs of the same test case" than k-means).
//!
//! Two runs never share thread ids, so threads are matched by name (the n-th thread of a name in
//! one run with the n-th of that name in the other) and artifacts by kind, file and qualified name.
//! Agreement is the adjusted Rand index (Hubert & Arabie 1985) of the two partitions of the
//! matched threads: 1 for identical partitions, about 0 for chance agreement.

use crate::analysis::{Analysis, Cluster};
use crate::artifact::{ArtifactKind, Level};
use serde::Serialize;
use std::collections::HashMap;
use threadradar_profiler::run::Run;

/// The adjusted Rand index of two labelings of the same items.
///
/// Returns 1.0 when there are fewer than two items, or when both labelings are trivial in the same
/// way (the index's denominator is 0: e.g. both put everything in one cluster).
pub fn adjusted_rand_index(a: &[usize], b: &[usize]) -> f64 {
    let n = a.len().min(b.len());
    if n < 2 {
        return 1.0;
    }
    let pairs = |x: u64| x * x.saturating_sub(1) / 2;
    let mut table: HashMap<(usize, usize), u64> = HashMap::new();
    let mut rows: HashMap<usize, u64> = HashMap::new();
    let mut cols: HashMap<usize, u64> = HashMap::new();
    for i in 0..n {
        *table.entry((a[i], b[i])).or_default() += 1;
        *rows.entry(a[i]).or_default() += 1;
        *cols.entry(b[i]).or_default() += 1;
    }
    let index: f64 = table.values().map(|&x| pairs(x) as f64).sum();
    let sum_a: f64 = rows.values().map(|&x| pairs(x) as f64).sum();
    let sum_b: f64 = cols.values().map(|&x| pairs(x) as f64).sum();
    let expected = sum_a * sum_b / pairs(n as u64) as f64;
    let max = (sum_a + sum_b) / 2.0;
    if (max - expected).abs() < 1e-12 {
        return 1.0;
    }
    (index - expected) / (max - expected)
}

/// The agreement of one artifact's clusterings in two runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArtifactStability {
    /// `None` for the program.
    pub kind: Option<ArtifactKind>,
    pub qualname: String,
    pub file: String,
    /// Threads that executed the artifact in both runs (matched by name).
    pub threads: usize,
    pub ari: f64,
}

/// Thread names made unique within a run: the second `worker` is `worker#2`.
fn thread_keys(run: &Run) -> Vec<String> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    run.threads
        .iter()
        .map(|t| {
            let n = seen.entry(t.name.as_str()).or_default();
            *n += 1;
            if *n == 1 {
                t.name.clone()
            } else {
                format!("{}#{}", t.name, n)
            }
        })
        .collect()
}

fn labels_by_key<'k>(clusters: &[Cluster], keys: &'k [String]) -> HashMap<&'k str, usize> {
    let mut out = HashMap::new();
    for (c, cluster) in clusters.iter().enumerate() {
        for &t in &cluster.threads {
            if let Some(k) = keys.get(t as usize) {
                out.insert(k.as_str(), c);
            }
        }
    }
    out
}

fn agreement(a: &[Cluster], keys_a: &[String], b: &[Cluster], keys_b: &[String]) -> (usize, f64) {
    let la = labels_by_key(a, keys_a);
    let lb = labels_by_key(b, keys_b);
    let mut common: Vec<(&str, usize, usize)> =
        la.iter().filter_map(|(k, &x)| lb.get(k).map(|&y| (*k, x, y))).collect();
    common.sort_unstable();
    let xs: Vec<usize> = common.iter().map(|c| c.1).collect();
    let ys: Vec<usize> = common.iter().map(|c| c.2).collect();
    (common.len(), adjusted_rand_index(&xs, &ys))
}

/// Compares the clusterings of two analyses of two runs of the same program at one level: one
/// entry per artifact executed in both runs (for [`Level::Program`], one entry for the program).
pub fn compare(run_a: &Run, a: &Analysis, run_b: &Run, b: &Analysis, level: Level) -> Vec<ArtifactStability> {
    let keys_a = thread_keys(run_a);
    let keys_b = thread_keys(run_b);
    let Some(kind) = level.kind() else {
        let (threads, ari) = agreement(a.program_clusters(), &keys_a, b.program_clusters(), &keys_b);
        return vec![ArtifactStability { kind: None, qualname: "<program>".into(), file: String::new(), threads, ari }];
    };
    let mut in_b: HashMap<(&str, &str), _> = HashMap::new();
    for id in b.artifacts().ids(kind) {
        if let Some(d) = b.artifacts().describe(run_b, id) {
            if !b.clusters(id).is_empty() {
                in_b.insert((d.file, d.qualname), id);
            }
        }
    }
    let mut out = Vec::new();
    for id in a.artifacts().ids(kind) {
        let Some(d) = a.artifacts().describe(run_a, id) else { continue };
        let Some(&other) = in_b.get(&(d.file, d.qualname)) else { continue };
        if a.clusters(id).is_empty() {
            continue;
        }
        let (threads, ari) = agreement(a.clusters(id), &keys_a, b.clusters(other), &keys_b);
        out.push(ArtifactStability { kind: Some(kind), qualname: d.qualname.to_string(), file: d.file.to_string(), threads, ari });
    }
    out
}

/// The mean adjusted Rand index over the artifacts that at least two matched threads executed;
/// `None` when there are none.
pub fn mean_ari(entries: &[ArtifactStability]) -> Option<f64> {
    let useful: Vec<f64> = entries.iter().filter(|e| e.threads >= 2).map(|e| e.ari).collect();
    if useful.is_empty() {
        None
    } else {
        Some(useful.iter().sum::<f64>() / useful.len() as f64)
    }
}

