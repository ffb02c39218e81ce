//! Criterion benchmarks of the analysis kernels at the issue's sizes:
//! - full analysis (metrics at every level + clusters of every artifact and of the program) of a
//!   synthetic run with 1,000,000 thread-samples (15,625 ticks × 64 threads) and 5,000 functions:
//!   target ≤ 1 s;
//! - clustering 10,000 threads for one artifact: target ≤ 10 ms.
//!
//! `cargo bench -p threadradar-analysis --bench analysis`; results in docs/benchmarks.md, "Analysis".

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::hint::black_box;
use threadradar_analysis::{Analysis, ClusterMethod, Level, Options, ReportView, ViewOptions};
use threadradar_profiler::synth::{synthetic_run, SynthSpec};

/// The issue's benchmark run.
pub const ISSUE: SynthSpec = SynthSpec { ticks: 15_625, threads: 64, functions: 5_000, stacks: 20_000, seed: 1 };

fn full_analysis(c: &mut Criterion) {
    let run = synthetic_run(ISSUE);
    let mut g = c.benchmark_group("analysis_1M_thread_samples_64_threads_5000_functions");
    g.sample_size(10);
    g.bench_function("cop_kmeans", |b| b.iter(|| Analysis::new(black_box(&run), &Options::default()).unwrap()));
    g.bench_function("plain_kmeans", |b| {
        b.iter(|| Analysis::new(black_box(&run), &Options { method: ClusterMethod::KMeans, ..Options::default() }).unwrap())
    });
    let analysis = Analysis::new(&run, &Options::default()).unwrap();
    g.bench_function("report_view_all_functions", |b| {
        b.iter(|| ReportView::build(&run, &analysis, &ViewOptions { level: Level::Function, ..ViewOptions::default() }).unwrap())
    });
    g.finish();
}

/// xorshift64*, so the inputs are the same on every machine.
fn random_units(n: usize, mut seed: u64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            (seed.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

/// Values as crt(a, th) gives them: positive, heavy-tailed, summing to 1.
fn shares(n: usize) -> Vec<f64> {
    let raw: Vec<f64> = random_units(n, 42).iter().map(|u| 1.0 / (0.01 + u).powi(2)).collect();
    let sum: f64 = raw.iter().sum();
    raw.iter().map(|x| x / sum).collect()
}

fn clustering(c: &mut Criterion) {
    let mut g = c.benchmark_group("cluster_10000_threads");
    // "uniform" spreads values over [0, 1]: ~100 chunklets, COP-KMeans's hardest case.
    for (name, values) in [("shares", shares(10_000)), ("uniform", random_units(10_000, 7))] {
        g.bench_function(format!("cop_kmeans_{name}"), |b| {
            b.iter_batched(|| values.clone(), |v| ClusterMethod::CopKMeans.cluster(&v).unwrap(), BatchSize::SmallInput)
        });
        g.bench_function(format!("plain_kmeans_{name}"), |b| {
            b.iter_batched(|| values.clone(), |v| ClusterMethod::KMeans.cluster(&v).unwrap(), BatchSize::SmallInput)
        });
    }
    g.finish();
}

criterion_group!(benches, full_analysis, clustering);
criterion_main!(benches);
