//! Criterion benchmarks of the timeline at the issue's size: a run of 1,000,000 thread-samples
//! (50 threads × 20,000 ticks).
//! - indexing the run (bars and state runs of every thread): target ≤ 1 s;
//! - laying out one viewport (1,600 px, all 50 lanes): target ≤ 20 ms;
//! - the index's memory: target ≤ 3 × the run's in-memory size (printed once).
//!
//! Two runs: `synth` as `profiler/src/synth.rs` makes it (every thread draws a random call path at
//! every tick: the worst case, a bar per level per sample), and `steady`, the same run in which a
//! thread keeps its previous stack and state with probability 0.95 (bars of ~20 samples, closer to
//! real programs).
//!
//! `cargo bench -p threadradar-analysis --bench timeline`; results in docs/benchmarks.md, "Timeline".

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use threadradar_analysis::timeline::layout::layout;
use threadradar_analysis::timeline::{LayoutRequest, TimelineIndex};
use threadradar_profiler::run::Run;
use threadradar_profiler::synth::{synthetic_run, SynthSpec};

pub const ISSUE: SynthSpec = SynthSpec { ticks: 20_000, threads: 50, functions: 5_000, stacks: 20_000, seed: 1 };

/// The run with persistent stacks (see the module docs).
pub fn steady(mut run: Run) -> Run {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for k in 1..run.samples.len() {
        for i in 0..run.samples[k].threads.len() {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            if seed.wrapping_mul(0x2545_F491_4F6C_DD1D) % 100 < 95 {
                let prev = run.samples[k - 1].threads[i];
                let cur = &mut run.samples[k].threads[i];
                cur.stack = prev.stack;
                cur.state = prev.state;
            }
        }
    }
    run
}

/// Heap bytes of a run's tables (the samples dominate).
pub fn run_bytes(run: &Run) -> usize {
    use std::mem::size_of;
    run.samples.iter().map(|s| size_of::<threadradar_profiler::run::Sample>() + s.threads.capacity() * size_of::<threadradar_profiler::run::ThreadSample>()).sum::<usize>()
        + run.stacks.capacity() * size_of::<threadradar_profiler::run::StackNode>()
        + run.frames.capacity() * size_of::<threadradar_profiler::run::Frame>()
        + run.functions.capacity() * size_of::<threadradar_profiler::run::Function>()
        + run.strings.iter().map(|s| s.capacity() + size_of::<String>()).sum::<usize>()
        + run.threads.capacity() * size_of::<threadradar_profiler::run::Thread>()
}

fn timeline(c: &mut Criterion) {
    for (name, run) in [("synth", synthetic_run(ISSUE)), ("steady", steady(synthetic_run(ISSUE)))] {
        let index = TimelineIndex::new(&run).unwrap();
        let bars: usize = index.lanes.iter().map(|l| l.bar_count()).sum();
        eprintln!(
            "timeline/{name}: {} thread-samples, {bars} bars; run {:.1} MiB, index {:.1} MiB ({:.2}×)",
            run.samples.iter().map(|s| s.threads.len()).sum::<usize>(),
            run_bytes(&run) as f64 / 1048576.0,
            index.heap_bytes() as f64 / 1048576.0,
            index.heap_bytes() as f64 / run_bytes(&run) as f64
        );
        let mut g = c.benchmark_group(format!("timeline_1M_thread_samples_50_threads_{name}"));
        g.sample_size(10);
        g.bench_function("index", |b| b.iter(|| TimelineIndex::new(black_box(&run)).unwrap()));
        let whole = LayoutRequest { width_px: 1600, ..LayoutRequest::default() };
        g.bench_function("layout_whole_run_linear", |b| b.iter(|| layout(&run, &index, black_box(&whole)).unwrap()));
        let log = LayoutRequest { theta: 1.0, ..whole.clone() };
        g.bench_function("layout_whole_run_theta_1", |b| b.iter(|| layout(&run, &index, black_box(&log)).unwrap()));
        let zoom = LayoutRequest { from_s: Some(20.0), to_s: Some(20.6), ..whole.clone() };
        g.bench_function("layout_1pct_of_run", |b| b.iter(|| layout(&run, &index, black_box(&zoom)).unwrap()));
        g.finish();
    }
}

criterion_group!(benches, timeline);
criterion_main!(benches);
