//! The level-of-detail index (`timeline::lod`) changes how fast a layout is made, never what it
//! holds: [`layout`] must equal [`layout_column_by_column`] (the walk that visits every pixel
//! column) — every bar, block, count, state box and frame — on random runs and on the recordings
//! of the bundled samples, for many viewports, widths, θ, thread sets and fold settings.

use proptest::prelude::*;
use threadradar_analysis::timeline::layout::{layout, layout_column_by_column, Layout};
use threadradar_analysis::timeline::{Fold, LayoutRequest, ThreadSelection, TimelineIndex};
use threadradar_profiler::run::Run;
use threadradar_profiler::synth::{synthetic_run, SynthSpec};

/// SplitMix64, to derive a run's variations from one seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A synthetic run made more like a recording: threads keep their stack and state for a while
/// (`keep_pct`), miss ticks now and then (`miss_pct`: bars split or bridged), and the sampler
/// sometimes falls behind (`late_pct`: a longer interval), so ticks are not evenly spaced.
fn varied_run(spec: SynthSpec, keep_pct: u64, miss_pct: u64, late_pct: u64) -> Run {
    let mut run = synthetic_run(spec);
    let mut rng = Rng(spec.seed ^ 0xABCD);
    let mut t = 0u64;
    for k in 0..run.samples.len() {
        if k > 0 {
            t += if rng.below(100) < late_pct { 3_000_000 * (2 + rng.below(100)) } else { 3_000_000 + rng.below(200_000) };
        }
        run.samples[k].t = t;
        if k > 0 {
            for i in 0..run.samples[k].threads.len().min(run.samples[k - 1].threads.len()) {
                if rng.below(100) < keep_pct {
                    let prev = run.samples[k - 1].threads[i];
                    if prev.thread == run.samples[k].threads[i].thread {
                        let cur = &mut run.samples[k].threads[i];
                        cur.stack = prev.stack;
                        cur.state = prev.state;
                    }
                }
            }
        }
    }
    // Missing observations last: the loop above pairs threads by position.
    for s in &mut run.samples {
        s.threads.retain(|_| rng.below(100) >= miss_pct);
    }
    run.meta.duration_s = t as f64 / 1e9 + 0.003;
    run.validate().unwrap();
    run
}

/// Many viewports of one run: the whole run and random ranges, at widths from 1 to 5,000 px.
fn requests(run: &Run, index: &TimelineIndex, seed: u64, n: usize) -> Vec<LayoutRequest> {
    let mut rng = Rng(seed);
    let dur = index.duration_s();
    let threads = run.threads.len() as u64;
    (0..n)
        .map(|i| {
            let width_px = [1, 3, 17, 100, 333, 800, 1600, 5000][rng.below(8) as usize];
            let theta = [0.0, 0.0, 0.01, 0.3, 1.0, 7.0][rng.below(6) as usize];
            let (from_s, to_s) = if i % 3 == 0 || dur == 0.0 {
                (None, None)
            } else {
                let a = dur * rng.below(1000) as f64 / 1000.0;
                let b = a + (dur - a) * (1 + rng.below(1000)) as f64 / 1000.0;
                (Some(a), Some(b))
            };
            let threads = if rng.below(3) == 0 && threads > 1 {
                ThreadSelection::Ids((0..threads as u32).filter(|_| rng.below(2) == 0).collect())
            } else {
                ThreadSelection::All
            };
            let fold = Fold { top: rng.below(4) as u16 * (rng.below(2) as u16), stdlib: rng.below(4) == 0, depth: None };
            LayoutRequest { from_s, to_s, width_px, threads, theta, fold, ..LayoutRequest::default() }
        })
        .collect()
}

fn blocks(l: &Layout) -> (usize, u64) {
    let n = l.lanes.iter().map(|x| x.blocks.len()).sum();
    let c = l.lanes.iter().flat_map(|x| &x.blocks).map(|b| b.count as u64).sum();
    (n, c)
}

/// Asserts equality lane by lane first, so that a failure names the first lane that differs.
fn assert_same(run: &Run, index: &TimelineIndex, req: &LayoutRequest) -> Layout {
    let fast = layout(run, index, req).unwrap();
    let reference = layout_column_by_column(run, index, req).unwrap();
    for (a, b) in fast.lanes.iter().zip(&reference.lanes) {
        assert_eq!(a.bars, b.bars, "bars of lane #{} differ for {req:?}", a.thread);
        assert_eq!(a.blocks, b.blocks, "blocks of lane #{} differ for {req:?}", a.thread);
        assert_eq!(a, b, "lane #{} differs for {req:?}", a.thread);
    }
    assert_eq!(fast, reference, "{req:?}");
    fast
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_indexed_layout_equals_the_column_by_column_one_on_random_runs(
        seed in 1u64..1_000_000,
        ticks in 1usize..2500,
        threads in 1usize..7,
        keep_pct in prop::sample::select(vec![0u64, 50, 90, 99]),
        miss_pct in prop::sample::select(vec![0u64, 2, 30]),
        late_pct in prop::sample::select(vec![0u64, 1, 10]),
    ) {
        let run = varied_run(SynthSpec { ticks, threads, functions: 120, stacks: 80, seed }, keep_pct, miss_pct, late_pct);
        let index = TimelineIndex::new(&run).unwrap();
        for req in requests(&run, &index, seed, 12) {
            assert_same(&run, &index, &req);
        }
    }
}

/// The property above must be able to fail: on these runs many blocks span many columns, which is
/// where the index takes over from the column walk.
#[test]
fn the_random_runs_exercise_long_aggregated_blocks() {
    let run = varied_run(SynthSpec { ticks: 4000, threads: 4, functions: 120, stacks: 80, seed: 5 }, 0, 2, 1);
    let index = TimelineIndex::new(&run).unwrap();
    let l = assert_same(&run, &index, &LayoutRequest { width_px: 300, ..LayoutRequest::default() });
    let (n, count) = blocks(&l);
    assert!(n > 0 && count as f64 / n as f64 > 2.0 * threadradar_analysis::timeline::lod::CHUNK as f64, "{n} blocks of {count} bars");
}

#[test]
fn the_indexed_layout_equals_the_column_by_column_one_on_the_bundled_recordings() {
    for name in ["bug1_worker_manager", "bug2_producer_consumer", "bug3_readers_writers"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/timeline").join(format!("{name}.json"));
        let run = threadradar_profiler::runfile::read(&path).unwrap();
        let index = TimelineIndex::new(&run).unwrap();
        for req in requests(&run, &index, name.len() as u64, 60) {
            assert_same(&run, &index, &req);
        }
    }
}

/// The benchmark's runs (docs/benchmarks.md, "Timeline"): 1 M thread-samples, the worst case
/// (a new stack at every tick) and the steady one.
#[test]
fn the_indexed_layout_equals_the_column_by_column_one_at_a_million_thread_samples() {
    let spec = SynthSpec { ticks: 20_000, threads: 50, functions: 5_000, stacks: 20_000, seed: 1 };
    for keep_pct in [0, 95] {
        let run = varied_run(spec, keep_pct, 0, 0);
        let index = TimelineIndex::new(&run).unwrap();
        let mut reqs = requests(&run, &index, 99 + keep_pct, 4);
        reqs.push(LayoutRequest { width_px: 1600, ..LayoutRequest::default() });
        reqs.push(LayoutRequest { width_px: 1600, theta: 1.0, fold: Fold { top: 2, stdlib: true, depth: None }, ..LayoutRequest::default() });
        for req in reqs {
            assert_same(&run, &index, &req);
        }
    }
}
