//! Criterion benchmarks of the timeline at the issue's size: a run of 1,000,000 thread-samples
//! (50 threads × 20,000 ticks).
//! - indexing the run (bars and state runs of every thread): target ≤ 1 s;
//! - laying out one viewport (1,600 px, all 50 lanes): target ≤ 20 ms;
//! - the index's memory: target ≤ 3 × the run's in-memory size (printed once, and again after a
//!   layout with standard-library folding, which adds a second set of lanes to the index).
//!
//! Two runs: `synth` as `profiler/src/synth.rs` makes it (every thread draws a random call path at
//! every tick: the worst case, a bar per level per sample), and `steady`, the same run in which a
//! thread keeps its previous stack and state with probability 0.95 (bars of ~20 samples, closer to
//! real programs).
//!
//! Each run also prints, per layout, what it holds (bars, aggregated blocks) and the CPU time one
//! layout takes summed over all threads (from `/proc/self/stat`, over 20 layouts): on the shared
//! machine, where other builds run, the wall time criterion measures depends on the load, the CPU
//! time much less. `layout_whole_run_column_by_column` is the walk without the level-of-detail
//! index (`timeline::lod`), which visits every pixel column of narrow bars.
//!
//! `cargo bench -p threadradar-analysis --bench timeline`; results in docs/benchmarks.md, "Timeline".

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use threadradar_analysis::timeline::layout::{layout, layout_column_by_column};
use threadradar_analysis::timeline::{Fold, LayoutRequest, TimelineIndex};
use threadradar_profiler::run::Run;
use threadradar_profiler::synth::{hold_stacks, synthetic_run, SynthSpec};

pub const ISSUE: SynthSpec = SynthSpec { ticks: 20_000, threads: 50, functions: 5_000, stacks: 20_000, seed: 1 };

/// The run with persistent stacks (see the module docs).
pub fn steady(mut run: Run) -> Run {
    hold_stacks(&mut run, 95, 0x9E37_79B9_7F4A_7C15);
    run
}

/// Heap bytes of a run's tables (the samples dominate).
pub fn run_bytes(run: &Run) -> usize {
    threadradar_analysis::timeline::run_heap_bytes(run)
}

fn timeline(c: &mut Criterion) {
    for (name, run) in [("synth", synthetic_run(ISSUE)), ("steady", steady(synthetic_run(ISSUE)))] {
        let index = TimelineIndex::new(&run).unwrap();
        let bars: usize = index.lanes(&run).iter().map(|l| l.bar_count()).sum();
        eprintln!(
            "timeline/{name}: {} thread-samples, {bars} bars; run {:.1} MiB, index {:.1} MiB ({:.2}×)",
            run.samples.iter().map(|s| s.threads.len()).sum::<usize>(),
            run_bytes(&run) as f64 / 1048576.0,
            index.heap_bytes() as f64 / 1048576.0,
            index.heap_bytes() as f64 / run_bytes(&run) as f64
        );
        let whole = LayoutRequest { width_px: 1600, ..LayoutRequest::default() };
        // Folding standard-library frames builds a second set of lanes on first use, kept in the
        // index while both sets fit the ≤ 3 × budget; else building one drops the other.
        let folded = LayoutRequest { fold: Fold { top: 0, stdlib: true, depth: None }, ..whole.clone() };
        let t0 = std::time::Instant::now();
        drop(black_box(layout(&run, &index, &folded).unwrap()));
        let first = t0.elapsed().as_secs_f64() * 1e3;
        let t0 = std::time::Instant::now();
        drop(black_box(layout(&run, &index, &folded).unwrap()));
        let again = t0.elapsed().as_secs_f64() * 1e3;
        let folded_bars: usize = index.lanes_for(&run, true).iter().map(|l| l.bar_count()).sum();
        eprintln!(
            "timeline/{name} with fold.stdlib used: {folded_bars} folded bars; index {:.1} MiB ({:.2}×); first folded whole-run layout (builds the folded lanes) {first:.0} ms, the next {again:.1} ms (wall)",
            index.heap_bytes() as f64 / 1048576.0,
            index.heap_bytes() as f64 / run_bytes(&run) as f64
        );
        let t0 = std::time::Instant::now();
        drop(black_box(layout(&run, &index, &whole).unwrap()));
        let back = t0.elapsed().as_secs_f64() * 1e3;
        eprintln!(
            "timeline/{name} folding off again: whole-run layout {back:.0} ms (wall); index {:.1} MiB ({:.2}×); lane sets built so far: {}",
            index.heap_bytes() as f64 / 1048576.0,
            index.heap_bytes() as f64 / run_bytes(&run) as f64,
            index.builds()
        );
        let log = LayoutRequest { theta: 1.0, ..whole.clone() };
        let zoom = LayoutRequest { from_s: Some(20.0), to_s: Some(20.6), ..whole.clone() };
        for (what, req) in [("whole run, linear", &whole), ("whole run, θ = 1", &log), ("1 % of the run", &zoom)] {
            let l = layout(&run, &index, req).unwrap();
            let bars: usize = l.lanes.iter().map(|l| l.bars.len()).sum();
            let blocks: usize = l.lanes.iter().map(|l| l.blocks.len()).sum();
            let cpu = |f: &dyn Fn()| {
                let (c0, t0) = (cpu_s(), std::time::Instant::now());
                for _ in 0..20 {
                    f();
                }
                ((cpu_s() - c0) * 1e3 / 20.0, t0.elapsed().as_secs_f64() * 1e3 / 20.0)
            };
            let (c, w) = cpu(&|| drop(black_box(layout(&run, &index, req).unwrap())));
            let (rc, rw) = cpu(&|| drop(black_box(layout_column_by_column(&run, &index, req).unwrap())));
            eprintln!("timeline/{name} layout, {what}: {bars} bars, {blocks} blocks; CPU {c:.1} ms (wall {w:.1} ms) per layout, column by column CPU {rc:.1} ms (wall {rw:.1} ms)");
        }
        let mut g = c.benchmark_group(format!("timeline_1M_thread_samples_50_threads_{name}"));
        g.sample_size(10);
        g.bench_function("index", |b| b.iter(|| TimelineIndex::new(black_box(&run)).unwrap()));
        g.bench_function("layout_whole_run_linear", |b| b.iter(|| layout(&run, &index, black_box(&whole)).unwrap()));
        g.bench_function("layout_whole_run_linear_column_by_column", |b| b.iter(|| layout_column_by_column(&run, &index, black_box(&whole)).unwrap()));
        g.bench_function("layout_whole_run_theta_1", |b| b.iter(|| layout(&run, &index, black_box(&log)).unwrap()));
        g.bench_function("layout_1pct_of_run", |b| b.iter(|| layout(&run, &index, black_box(&zoom)).unwrap()));
        g.finish();
    }
}

/// User + system CPU seconds of this process, all threads (Linux: `/proc/self/stat`, in clock
/// ticks of 10 ms, hence 20 layouts per figure).
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(f64::NAN);
    (ticks(11) + ticks(12)) / 100.0
}

criterion_group!(benches, timeline);
criterion_main!(benches);
