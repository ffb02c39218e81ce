//! The timeline's analysis core on hand-made runs (exact expectations), on small recordings of
//! the bundled samples (expect-file snapshots), and at scale (a 1 M thread-sample synthetic run).

mod common;

use common::{Fixture, C, G, I};
use expect_test::expect_file;
use std::fmt::Write;
use threadradar_analysis::timeline::layout::{layout, Layout};
use threadradar_analysis::timeline::{self, export, Fold, LayoutRequest, ThreadSelection, TimelineError, TimelineIndex};
use threadradar_analysis::{Analysis, Options, TimeWindow};
use threadradar_profiler::run::{FileKind, Meta, Run, ThreadState};
use threadradar_profiler::synth::{synthetic_run, SynthSpec};

fn fixture() -> Fixture {
    let mut f = Fixture::new();
    f.func("/p/app.py", FileKind::User, "main", 1);
    f.func("/p/app.py", FileKind::User, "work", 10);
    f.func("/p/app.py", FileKind::User, "step", 20);
    f.func("/usr/lib/python3.11/threading.py", FileKind::Stdlib, "Thread.run", 900);
    f.func("/usr/lib/python3.11/threading.py", FileKind::Stdlib, "Condition.wait", 300);
    f
}

/// `(depth, function, start tick, end tick, state)` of every bar of a thread.
fn bars(run: &Run, index: &TimelineIndex, th: u32) -> Vec<(usize, String, u32, u32, &'static str)> {
    let mut out = Vec::new();
    for (d, row) in index.lanes(&run)[th as usize].rows.iter().enumerate() {
        for b in row {
            let f = run.frames[b.frame() as usize].function;
            out.push((d, run.qualname(f).to_string(), b.start(), b.end(), b.state().as_str()));
        }
    }
    out
}

#[test]
fn bars_are_maximal_runs_per_depth_under_the_same_callers() {
    let mut f = fixture();
    let t = f.thread("w", "Worker");
    for _ in 0..3 {
        f.sample(&[(t, "main > work > step", C)]);
    }
    f.sample(&[(t, "main > work", C)]);
    f.sample(&[(t, "main > step", I)]);
    f.sample(&[(t, "main > step", I)]);
    let run = f.finish();
    let index = TimelineIndex::new(&run).unwrap();
    assert_eq!(
        bars(&run, &index, t),
        vec![
            (0, "main".into(), 0, 6, "computing"), // 4 computing, 2 idle: majority computing
            (1, "work".into(), 0, 4, "computing"),
            (1, "step".into(), 4, 6, "idle"),
            (2, "step".into(), 0, 3, "computing"),
        ]
    );
    assert_eq!(index.lanes(&run)[t as usize].boundaries, vec![0, 3, 4, 6]);
}

#[test]
fn one_missed_sample_does_not_split_a_bar_but_two_do() {
    let mut f = fixture();
    let a = f.thread("a", "T");
    let b = f.thread("b", "T");
    // a is missing from tick 2 (one tick); b from ticks 2 and 3 (two ticks).
    f.sample(&[(a, "main > work", C), (b, "main > work", C)]);
    f.sample(&[(a, "main > work", C), (b, "main > work", C)]);
    f.sample(&[]);
    f.sample(&[(a, "main > work", C)]);
    f.sample(&[(a, "main > work", C), (b, "main > work", C)]);
    let run = f.finish();
    let index = TimelineIndex::new(&run).unwrap();
    assert_eq!(bars(&run, &index, a), vec![(0, "main".into(), 0, 5, "computing"), (1, "work".into(), 0, 5, "computing")]);
    assert_eq!(
        bars(&run, &index, b),
        vec![
            (0, "main".into(), 0, 2, "computing"),
            (0, "main".into(), 4, 5, "computing"),
            (1, "work".into(), 0, 2, "computing"),
            (1, "work".into(), 4, 5, "computing")
        ]
    );
    assert_eq!(timeline::TOLERATED_MISSED_TICKS, 1);
}

#[test]
fn blocking_kinds_come_from_the_system_call_and_the_innermost_frames() {
    let mut f = fixture();
    let t = f.thread("c", "Consumer");
    f.sample(&[(t, "Thread.run > Condition.wait", I)]);
    f.sample(&[(t, "Thread.run > work", G)]);
    let mut run = f.finish();
    run.strings.push("futex".into());
    let futex = (run.strings.len() - 1) as u32;
    run.samples[0].threads[0].blocked = Some(futex);
    let index = TimelineIndex::new(&run).unwrap();
    let states: Vec<_> = index.lanes(&run)[0].states.iter().map(|s| (s.start, s.end, s.state.as_str(), s.blocked.map(|k| k.as_str()))).collect();
    assert_eq!(states, vec![(0, 1, "idle", Some("condition")), (1, 2, "gil", None)]);
    let row1 = &index.lanes(&run)[0].rows[1];
    assert_eq!(row1[0].blocked().map(|k| k.as_str()), Some("condition"));
}

fn two_lanes() -> Run {
    // Lane a: short steps then one long wait; lane b: one long computation.
    let mut f = fixture();
    let a = f.thread("a", "T");
    let b = f.thread("b", "T");
    for i in 0..10 {
        let s = if i % 2 == 0 { "main > step" } else { "main > work" };
        f.sample(&[(a, s, C), (b, "main > work", C)]);
    }
    for _ in 0..300 {
        f.sample(&[(a, "main > Condition.wait", I), (b, "main > work", C)]);
    }
    f.finish()
}

#[test]
fn the_axis_is_shared_by_every_lane_and_log_scaling_shrinks_long_spans() {
    let run = two_lanes();
    let index = TimelineIndex::new(&run).unwrap();
    let req = |theta| LayoutRequest { width_px: 1000, theta, ..LayoutRequest::default() };
    let lin = layout(&run, &index, &req(0.0)).unwrap();
    let log = layout(&run, &index, &req(1.0)).unwrap();
    // Linear: ten 3 ms steps of 930 ms take ~3 % of the width.
    let steps_end = |l: &Layout| l.lanes[0].bars.iter().find(|b| l.frames[b.frame as usize].function == "Condition.wait").unwrap().x0;
    assert!((steps_end(&lin) - 1000.0 * 30.0 / 930.0).abs() < 1.0, "{}", steps_end(&lin));
    // θ = 1/ms: each 3 ms step keeps ln(4) = 1.39 units, the 900 ms wait ln(901) = 6.8.
    let expected = 1000.0 * 10.0 * 4f64.ln() / (10.0 * 4f64.ln() + 901f64.ln());
    assert!((steps_end(&log) as f64 - expected).abs() < 1.0, "{} vs {expected}", steps_end(&log));
    // In sync: lane b's bar covers the whole axis in both lanes' coordinates, and the same tick
    // has the same x in both lanes.
    assert_eq!(log.lanes[1].bars[0].x0, 0.0);
    assert_eq!(log.lanes[1].bars[0].x1, 1000.0);
    let a_main = &log.lanes[0].bars.iter().find(|b| b.depth == 0).unwrap();
    assert_eq!((a_main.x0, a_main.x1), (0.0, 1000.0));
    // Axis ticks are monotonic in time and the last one is the run's end.
    assert!(log.axis.windows(2).all(|w| w[0].t_s < w[1].t_s));
    assert!((log.axis.last().unwrap().t_s - log.run_to_s).abs() < 1e-9);
}

#[test]
fn bars_narrower_than_a_pixel_are_aggregated_with_their_count() {
    let run = two_lanes();
    let index = TimelineIndex::new(&run).unwrap();
    // 100 px for 930 ms: a 3 ms step is 0.32 px.
    let l = layout(&run, &index, &LayoutRequest { width_px: 100, ..LayoutRequest::default() }).unwrap();
    let lane = &l.lanes[0];
    let depth1_bars = index.lanes(&run)[0].rows[1].len() as u32;
    let drawn: u32 = lane.bars.iter().filter(|b| b.depth == 1).count() as u32 + lane.blocks.iter().filter(|b| b.depth == 1).map(|b| b.count).sum::<u32>();
    assert_eq!(drawn, depth1_bars, "every bar is drawn or counted in a block exactly once");
    assert!(lane.blocks.iter().all(|b| b.x1 - b.x0 >= 1.0));
    assert!(lane.bars.iter().all(|b| b.x1 - b.x0 >= 1.0));
    assert_eq!(lane.blocks.len(), 1, "adjacent columns merge: {:?}", lane.blocks);
    assert_eq!(lane.blocks[0].count, 10);
}

#[test]
fn folding_collapses_the_top_levels_or_the_standard_library() {
    let mut f = fixture();
    let t = f.thread("w", "Worker");
    for _ in 0..4 {
        f.sample(&[(t, "Thread.run > Condition.wait > main > work > step", C)]);
    }
    let run = f.finish();
    let index = TimelineIndex::new(&run).unwrap();
    let names = |l: &Layout| l.lanes[0].bars.iter().map(|b| (b.depth, l.frames[b.frame as usize].function.clone(), b.folded_levels, b.stdlib_band)).collect::<Vec<_>>();
    let top = layout(&run, &index, &LayoutRequest { fold: Fold { top: 3, stdlib: false, depth: None }, ..LayoutRequest::default() }).unwrap();
    assert_eq!(names(&top), vec![(0, "main".into(), 3, false), (1, "work".into(), 0, false), (2, "step".into(), 0, false)]);
    assert_eq!(top.lanes[0].depth, 3);
    let std = layout(&run, &index, &LayoutRequest { fold: Fold { top: 0, stdlib: true, depth: None }, ..LayoutRequest::default() }).unwrap();
    assert_eq!(names(&std), vec![(0, "Thread.run".into(), 0, true), (1, "main".into(), 0, false), (2, "work".into(), 0, false), (3, "step".into(), 0, false)]);
}

#[test]
fn bad_input_is_one_sentence() {
    let run = two_lanes();
    let index = TimelineIndex::new(&run).unwrap();
    let err = |req: LayoutRequest| layout(&run, &index, &req).unwrap_err();
    let e = err(LayoutRequest { from_s: Some(5.0), to_s: Some(6.0), ..LayoutRequest::default() });
    assert!(matches!(e, TimelineError::RangeOutside { .. }));
    assert_eq!(e.to_string(), "the time range 5.000 s – 6.000 s is outside the run, which lasts 0.930 s: pass --from/--to between 0 and 0.930");
    assert!(matches!(err(LayoutRequest { from_s: Some(0.5), to_s: Some(0.2), ..LayoutRequest::default() }), TimelineError::EmptyRange { .. }));
    let e = err(LayoutRequest { theta: -1.0, ..LayoutRequest::default() });
    assert_eq!(e.to_string(), "θ = -1 is not allowed: pass 0 for a linear axis or a positive value (per millisecond) for a logarithmic one");
    assert!(matches!(err(LayoutRequest { theta: f64::NAN, ..LayoutRequest::default() }), TimelineError::BadTheta(_)));
    let e = err(LayoutRequest { threads: ThreadSelection::Ids(vec![7]), ..LayoutRequest::default() });
    assert_eq!(e.to_string(), "no thread #7 in this run (threads: #0 a, #1 b); pass a thread id or name from `threadradar info`");
    assert!(matches!(err(LayoutRequest { width_px: 0, ..LayoutRequest::default() }), TimelineError::BadWidth(0)));
    assert!(matches!(timeline::select_threads(&run, "(").unwrap_err(), TimelineError::BadPattern { .. }));
    assert!(matches!(timeline::select_threads(&run, "^zz$").unwrap_err(), TimelineError::NoThreadMatches(..)));
    for e in [err(LayoutRequest { theta: -1.0, ..LayoutRequest::default() }), timeline::select_threads(&run, "(").unwrap_err()] {
        assert_eq!(e.to_string().lines().count(), 1);
    }
}

#[test]
fn an_empty_run_and_a_one_sample_run_open() {
    let empty = Run::new(Meta::default());
    let index = TimelineIndex::new(&empty).unwrap();
    let l = layout(&empty, &index, &LayoutRequest::default()).unwrap();
    assert!(l.lanes.is_empty() && l.run_to_s == 0.0);
    assert!(export::bars(&empty, &index, None, None, None).unwrap().threads.is_empty());
    assert!(timeline::thread_overview(&empty, &index, None, None).is_empty());
    assert!(matches!(layout(&empty, &index, &LayoutRequest { from_s: Some(0.0), to_s: Some(1.0), ..LayoutRequest::default() }), Err(TimelineError::RangeOutside { .. })));

    let mut f = fixture();
    let t = f.thread("only", "Thread");
    f.sample(&[(t, "main > work", C)]);
    let one = f.finish();
    let index = TimelineIndex::new(&one).unwrap();
    let l = layout(&one, &index, &LayoutRequest::default()).unwrap();
    assert_eq!(l.lanes.len(), 1);
    assert_eq!(l.lanes[0].bars.len(), 2);
    assert_eq!((l.lanes[0].bars[0].x0, l.lanes[0].bars[0].x1), (0.0, 1200.0), "one sample is one period wide");
    let o = timeline::thread_overview(&one, &index, None, None);
    assert_eq!((o[0].samples, o[0].busy), (1, 1.0));
}

#[test]
fn a_million_thread_samples_index_and_lay_out() {
    let run = synthetic_run(SynthSpec { ticks: 20_000, threads: 50, ..SynthSpec::default() });
    let n: usize = run.samples.iter().map(|s| s.threads.len()).sum();
    assert_eq!(n, 1_000_000);
    let index = TimelineIndex::new(&run).unwrap();
    let l = layout(&run, &index, &LayoutRequest { width_px: 1600, theta: 0.5, ..LayoutRequest::default() }).unwrap();
    assert_eq!(l.lanes.len(), 50);
    for (lane, il) in l.lanes.iter().zip(index.lanes(&run).iter()) {
        let drawn = lane.bars.iter().filter(|b| b.depth == 0).count() as u32 + lane.blocks.iter().filter(|b| b.depth == 0).map(|b| b.count).sum::<u32>();
        assert_eq!(drawn as usize, il.rows[0].len());
        assert!(lane.bars.len() + lane.blocks.len() < 1600 * il.rows.len());
        // Nothing overlaps within a row.
        for d in 0..lane.depth {
            let mut spans: Vec<(f32, f32)> = lane.bars.iter().filter(|b| b.depth == d).map(|b| (b.x0, b.x1)).collect();
            spans.extend(lane.blocks.iter().filter(|b| b.depth == d).map(|b| (b.x0, b.x1)));
            spans.sort_by(|a, b| a.0.total_cmp(&b.0));
            assert!(spans.windows(2).all(|w| w[1].0 >= w[0].1 - 1e-3), "row {d} overlaps");
        }
    }
    // A zoomed viewport: 30 ms of the run.
    let z = layout(&run, &index, &LayoutRequest { from_s: Some(30.0), to_s: Some(30.03), width_px: 1600, ..LayoutRequest::default() }).unwrap();
    assert!(z.lanes.iter().all(|l| l.blocks.is_empty() && !l.bars.is_empty()), "3 ms samples are 160 px wide here");
}

#[test]
fn analyses_restricted_to_a_time_window_count_only_its_samples() {
    let run = common::fig2(); // 3 samples × 4 threads at 0, 3 and 6 ms
    let whole = Analysis::new(&run, &Options::default()).unwrap();
    assert_eq!(whole.counted_samples(), 12);
    let first = Analysis::in_window(&run, &Options::default(), Some(TimeWindow::from_secs(0.0, 0.001))).unwrap();
    assert_eq!(first.counted_samples(), 4);
    assert_eq!(first.window(), Some(TimeWindow { from_ns: 0, to_ns: 1_000_000 }));
    let later = Analysis::in_window(&run, &Options::default(), Some(TimeWindow::from_secs(0.002, 1.0))).unwrap();
    assert_eq!(later.counted_samples(), 8);
    let none = Analysis::in_window(&run, &Options::default(), Some(TimeWindow::from_secs(5.0, 6.0))).unwrap();
    assert_eq!(none.counted_samples(), 0);
    // The window's figures equal those of a run holding only the window's samples.
    let mut cut = run.clone();
    cut.samples.remove(0);
    let reference = Analysis::new(&cut, &Options::default()).unwrap();
    for kind in threadradar_analysis::ArtifactKind::ALL {
        assert_eq!(later.metrics().level(kind), reference.metrics().level(kind));
    }
}

/// A compact text rendering of a layout for snapshots: file names without directories, so the
/// snapshot does not depend on where the fixture was recorded.
fn render(l: &Layout) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:.3}-{:.3} s, {} px, θ {}, fold {:?}", l.from_s, l.to_s, l.width_px, l.theta, l.fold);
    for lane in &l.lanes {
        let _ = writeln!(s, "lane #{} {} ({}) depth {} crt {:.2}", lane.thread, lane.name, lane.thread_type, lane.depth, lane.crt);
        for st in &lane.states {
            let _ = writeln!(s, "  state {:>6.1}-{:<6.1} {}{}{}", st.x0, st.x1, st.state.as_str(), st.blocked.map(|k| format!("/{}", k.as_str())).unwrap_or_default(), if st.sampled { " ~" } else { "" });
        }
        for b in &lane.bars {
            let fr = &l.frames[b.frame as usize];
            let file = fr.file.rsplit('/').next().unwrap_or(&fr.file);
            let _ = writeln!(s, "  bar d{} {:>6.1}-{:<6.1} {} {}:{} {}{}", b.depth, b.x0, b.x1, fr.function, file, fr.line, b.state.as_str(), b.blocked.map(|k| format!("/{}", k.as_str())).unwrap_or_default());
        }
        for b in &lane.blocks {
            let _ = writeln!(s, "  block d{} {:>6.1}-{:<6.1} ×{}", b.depth, b.x0, b.x1, b.count);
        }
    }
    s
}

fn fixture_run(name: &str) -> Run {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/timeline").join(format!("{name}.json"));
    threadradar_profiler::runfile::read(&path).unwrap()
}

#[test]
fn layout_snapshots_of_the_bundled_samples() {
    for name in ["bug1_worker_manager", "bug2_producer_consumer", "bug3_readers_writers"] {
        let run = fixture_run(name);
        let index = TimelineIndex::new(&run).unwrap();
        let mut text = render(&layout(&run, &index, &LayoutRequest { width_px: 160, fold: Fold { top: 0, stdlib: true, depth: None }, ..LayoutRequest::default() }).unwrap());
        text.push_str(&render(&layout(&run, &index, &LayoutRequest { width_px: 160, theta: 2.0, from_s: Some(0.3), to_s: Some(0.5), threads: ThreadSelection::Ids(vec![1, 2]), ..LayoutRequest::default() }).unwrap()));
        expect_file![format!("fixtures/timeline/{name}.layout.txt")].assert_eq(&text);
    }
}

/// Bug 2 (producer/consumer): the ten consumers spend their samples idle in `Condition.wait`
/// while the producer works. In this recording "working" is mostly waiting for the GIL: the
/// producer is computing in 1 of its 42 samples (2 %) and GIL-waiting in 25 (60 %), because the
/// ten consumers contend for the GIL each time they wake. So the producer is asserted to be
/// active (computing or waiting for the GIL) in at least half of its samples, and each consumer
/// to compute in less than a fifth of its own (0 % in this fixture).
#[test]
fn the_bug2_recording_shows_consumers_waiting_on_the_condition_and_the_producer_working() {
    let run = fixture_run("bug2_producer_consumer");
    let index = TimelineIndex::new(&run).unwrap();
    let overview = timeline::thread_overview(&run, &index, None, None);
    let consumers: Vec<_> = overview.iter().filter(|o| o.thread_type == "Consumer").collect();
    let producer = overview.iter().find(|o| o.thread_type == "Producer").unwrap();
    assert_eq!(consumers.len(), 10);
    for c in &consumers {
        assert!(c.busy + c.gil < 0.5, "{} is mostly waiting: {c:?}", c.name);
        assert!(c.busy < 0.2, "{} hardly computes: {c:?}", c.name);
        assert_eq!(c.top_frames[0].function, "Condition.wait", "{c:?}");
        assert_eq!(c.longest_wait.as_ref().unwrap().blocked.map(|k| k.as_str()), Some("condition"));
    }
    assert!(!producer.top_frames.iter().take(1).any(|t| t.function == "Condition.wait"), "{producer:?}");
    let mean_busy = consumers.iter().map(|c| c.busy).sum::<f64>() / consumers.len() as f64;
    assert!(producer.busy > mean_busy, "producer {} vs consumers {mean_busy}", producer.busy);
    // The producer's work: computing or, mostly, waiting for the GIL the consumers contend for.
    assert!(producer.busy + producer.gil >= 0.5, "the producer is active in most of its samples: {producer:?}");
    assert!(producer.gil > producer.busy, "in this recording the producer mostly waits for the GIL: {producer:?}");
    assert_eq!(producer.top_frames[0].function, "work_on_unit", "{producer:?}");
    let _ = ThreadState::Computing;
}

/// Lanes are laid out in parallel; the frame table numbers frames in first-use order, so the
/// layout must not depend on how many threads did the work (or finished first).
#[test]
fn a_parallel_layout_equals_a_sequential_one() {
    let run = synthetic_run(SynthSpec { ticks: 2_000, threads: 12, ..SynthSpec::default() });
    let index = TimelineIndex::new(&run).unwrap();
    let reqs = [
        LayoutRequest { width_px: 800, ..LayoutRequest::default() },
        LayoutRequest { width_px: 800, theta: 1.0, fold: Fold { top: 2, stdlib: true, depth: None }, ..LayoutRequest::default() },
        LayoutRequest { width_px: 300, from_s: Some(0.5), to_s: Some(0.9), threads: ThreadSelection::Ids(vec![7, 2, 11, 0]), ..LayoutRequest::default() },
    ];
    let with = |threads: usize| -> Vec<Layout> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| reqs.iter().map(|r| layout(&run, &index, r).unwrap()).collect())
    };
    let sequential = with(1);
    assert!(sequential.iter().all(|l| l.lanes.iter().any(|lane| !lane.bars.is_empty())), "the requests draw bars");
    assert_eq!(with(4), sequential);
}

/// The index keeps both sets of lanes (unfolded and standard-library folded) only while together
/// they fit in `MEMORY_BUDGET` × the run's size; otherwise building one drops the other, and the
/// layouts are the same as from a fresh index either way.
#[test]
fn folding_stays_within_the_memory_budget_and_switching_back_lays_out_the_same() {
    // Deep stacks that change at the root every tick: 20 one-tick bars per thread-sample, far more
    // memory than the samples themselves.
    let deep = |f: &mut Fixture| {
        let names: Vec<String> = (0..18).map(|i| format!("f{i}")).collect();
        for (i, n) in names.iter().enumerate() {
            let kind = if i % 3 == 1 { FileKind::Stdlib } else { FileKind::User };
            f.func(if kind == FileKind::Stdlib { "/usr/lib/python3.11/lib.py" } else { "/p/app.py" }, kind, n, 100 + i as u32);
        }
        names.join(" > ")
    };
    let mut f = fixture();
    let tail = deep(&mut f);
    let (a, b) = (format!("main > work > {tail}"), format!("work > main > {tail}"));
    let t = f.thread("w", "Worker");
    let u = f.thread("v", "Worker");
    for k in 0..400 {
        let s = if k % 2 == 0 { a.as_str() } else { b.as_str() };
        f.sample(&[(t, s, C), (u, s, I)]);
    }
    let run = f.finish();
    let budget = timeline::MEMORY_BUDGET * timeline::run_heap_bytes(&run);
    let index = TimelineIndex::new(&run).unwrap();
    let unfolded_only = index.heap_bytes();
    assert!(2 * unfolded_only > budget, "the fixture must not fit twice: {unfolded_only} B of lanes, budget {budget} B");
    let plain = LayoutRequest { width_px: 900, ..LayoutRequest::default() };
    let folded = LayoutRequest { fold: Fold { top: 0, stdlib: true, depth: None }, ..plain.clone() };
    let want_plain = layout(&run, &TimelineIndex::new(&run).unwrap(), &plain).unwrap();
    let want_folded = layout(&run, &TimelineIndex::new(&run).unwrap(), &folded).unwrap();
    assert_ne!(want_plain, want_folded, "folding must change this run's bars");

    assert_eq!(layout(&run, &index, &folded).unwrap(), want_folded);
    assert_eq!(index.builds(), 2);
    assert!(index.heap_bytes() <= unfolded_only, "only the folded set is held: {} B > {unfolded_only} B", index.heap_bytes());
    // The overview reads the set held; it does not bring the unfolded lanes back.
    assert_eq!(timeline::thread_overview(&run, &index, None, None).len(), 2);
    assert_eq!(index.builds(), 2);
    assert_eq!(layout(&run, &index, &plain).unwrap(), want_plain);
    assert_eq!(index.builds(), 3);
    assert_eq!(index.heap_bytes(), unfolded_only);

    // A run whose two sets fit keeps both: switching back and forth builds nothing more.
    let mut f = fixture();
    let t = f.thread("w", "Worker");
    for k in 0..400 {
        f.sample(&[(t, if k < 200 { "Thread.run > Condition.wait > main > work" } else { "Thread.run > main > step" }, C)]);
    }
    let run = f.finish();
    let index = TimelineIndex::new(&run).unwrap();
    for req in [&folded, &plain, &folded, &plain] {
        layout(&run, &index, req).unwrap();
    }
    assert_eq!(index.builds(), 2);
    assert!(index.heap_bytes() <= timeline::MEMORY_BUDGET * timeline::run_heap_bytes(&run));
}

/// `fold.depth` (issue 32): a lane deeper than the cap shows that many rows, its bars only there,
/// and counts the rest; a lane in `expand` stays whole; shallower lanes are unchanged.
#[test]
fn the_depth_cap_folds_deep_lanes_and_expand_leaves_one_whole() {
    let run = fixture_run("bug2_producer_consumer");
    let index = TimelineIndex::new(&run).unwrap();
    let full = layout(&run, &index, &LayoutRequest { width_px: 400, ..LayoutRequest::default() }).unwrap();
    let capped = layout(&run, &index, &LayoutRequest { width_px: 400, fold: Fold { top: 0, stdlib: false, depth: Some(8) }, ..LayoutRequest::default() }).unwrap();
    let deep = full.lanes.iter().find(|l| l.depth > 8).expect("MainThread's import-time stacks are deeper than 8");
    for (f, c) in full.lanes.iter().zip(&capped.lanes) {
        assert_eq!(f.thread, c.thread);
        assert_eq!((c.depth, c.full_depth, c.folded_below), (f.depth.min(8), f.depth, f.depth.saturating_sub(8)), "{}", c.name);
        assert!(c.bars.iter().all(|b| b.depth < 8) && c.blocks.iter().all(|b| b.depth < 8), "{}", c.name);
        // The rows kept are the uncapped layout's first rows, bar for bar.
        let kept: Vec<_> = f.bars.iter().filter(|b| b.depth < 8).map(|b| (b.depth, b.x0, b.x1)).collect();
        assert_eq!(kept, c.bars.iter().map(|b| (b.depth, b.x0, b.x1)).collect::<Vec<_>>(), "{}", c.name);
    }
    let expanded = layout(
        &run,
        &index,
        &LayoutRequest { width_px: 400, fold: Fold { top: 0, stdlib: false, depth: Some(8) }, expand: Some(vec![deep.thread]), ..LayoutRequest::default() },
    )
    .unwrap();
    let e = expanded.lanes.iter().find(|l| l.thread == deep.thread).unwrap();
    assert_eq!((e.depth, e.folded_below), (deep.depth, 0));
}
