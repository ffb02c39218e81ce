//! Criterion benchmark of the trace comparison at the issue's size: two runs of 100,000
//! thread-samples each (8 threads × 12,500 ticks), matched in ≤ 2 s, including the timeline
//! indexing of both runs (what `threadradar compare` does).
//!
//! Two pairs: `synth` (every thread draws a random call path at every tick: a segment per sample,
//! the worst case, which the alignment searches in its band) against another seed of the same
//! shape, and `steady` (a thread keeps its stack with probability 0.95, as in the timeline bench)
//! against the same program with other noise.
//!
//! `cargo bench -p threadradar-analysis --bench tracediff`; results in docs/benchmarks.md,
//! "Trace comparison".

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use threadradar_analysis::timeline::TimelineIndex;
use threadradar_analysis::tracediff::{TraceDiff, TraceOptions};
use threadradar_profiler::run::Run;
use threadradar_profiler::synth::{hold_stacks, synthetic_run, SynthSpec};

const ISSUE: SynthSpec = SynthSpec { ticks: 12_500, threads: 8, functions: 500, stacks: 2_000, seed: 1 };

/// The run with persistent stacks: a thread keeps its previous stack with probability 0.95.
fn steady(mut run: Run, seed: u64) -> Run {
    hold_stacks(&mut run, 95, seed);
    run
}

fn tracediff(c: &mut Criterion) {
    let pairs = [
        ("synth", synthetic_run(ISSUE), synthetic_run(SynthSpec { seed: 2, ..ISSUE })),
        ("steady", steady(synthetic_run(ISSUE), 0x9E37_79B9_7F4A_7C15), steady(synthetic_run(ISSUE), 0x1234_5678_9ABC_DEF1)),
    ];
    let mut group = c.benchmark_group("tracediff");
    group.sample_size(10);
    for (name, a, b) in &pairs {
        let samples = |r: &Run| r.samples.iter().map(|s| s.threads.len()).sum::<usize>();
        let (ia, ib) = (TimelineIndex::new(a).unwrap(), TimelineIndex::new(b).unwrap());
        let d = TraceDiff::build(a, &ia, b, &ib, &TraceOptions::default());
        eprintln!(
            "tracediff/{name}: {} + {} thread-samples, {} pairs, {} groups, matched {:.1}%, banded pairs {}",
            samples(a),
            samples(b),
            d.pairs.len(),
            d.groups.len(),
            d.matched_share * 100.0,
            d.pairs.iter().filter(|p| p.banded).count()
        );
        group.bench_function(format!("{name}/index+match"), |bench| {
            bench.iter(|| {
                let (ia, ib) = (TimelineIndex::new(a).unwrap(), TimelineIndex::new(b).unwrap());
                black_box(TraceDiff::build(a, &ia, b, &ib, &TraceOptions::default()))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, tracediff);
criterion_main!(benches);
