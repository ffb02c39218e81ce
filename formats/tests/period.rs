//! One sampling period everywhere: a run whose recorded interval (1 ms), recorded achieved rate
//! (400 Hz: 2.5 ms) and tick distances (skipped ticks: a mean of 1.6 ms) all disagree shows the
//! same period in every view of the analysis and in every export that states one.

use threadradar_analysis::period::sampling_period_ns;
use threadradar_analysis::sections::{analyse, SectionOptions};
use threadradar_analysis::timeline::TimelineIndex;
use threadradar_analysis::waits::{waits, WaitsOptions};
use threadradar_analysis::{Analysis, Options, ReportView, ViewOptions};
use threadradar_formats::{export, ExportFormat};
use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
use threadradar_profiler::run::{FileKind, Meta, Run, Sample, ThreadSample, ThreadState};

/// Ticks every 1 ms, then every 2 ms (the sampler fell behind and skipped every other tick): six
/// ticks over 8 ms. One thread computes, then waits.
fn run() -> Run {
    let mut b = RunBuilder::new(Meta { interval_ms: 1.0, achieved_rate_hz: 400.0, cwd: "/p".into(), ..Meta::default() });
    let file = b.file("/p/a.py", FileKind::User, None);
    let f = b.function(file, &FunctionSpec { qualname: "work", line: 1, end_line: 9, ..Default::default() });
    let th = b.thread(new_thread(1, 2, 1, "worker", "Thread"));
    let frame = b.frame(f, 2);
    let stack = b.stack(&[frame]);
    for (i, t_ms) in [0u64, 1, 2, 4, 6, 8].into_iter().enumerate() {
        let state = if i < 3 { ThreadState::Computing } else { ThreadState::Idle };
        let ts = ThreadSample { thread: th, stack, state, ..Default::default() };
        b.push_sample(Sample { t: t_ms * 1_000_000, threads: vec![ts] });
    }
    let mut run = b.finish();
    run.meta.duration_s = 0.008;
    run
}

const PERIOD_NS: u64 = 1_600_000;

#[test]
fn every_view_states_the_same_period() {
    let run = run();
    assert_eq!(sampling_period_ns(&run), PERIOD_NS);
    let s = PERIOD_NS as f64 / 1e9;

    let analysis = Analysis::new(&run, &Options::default()).unwrap();
    assert_eq!(analysis.metrics().period_ns(), PERIOD_NS as f64, "metrics");
    let report = ReportView::build(&run, &analysis, &ViewOptions::default()).unwrap();
    assert_eq!(report.run.period_s, s, "report");
    assert_eq!(TimelineIndex::new(&run).unwrap().period_ns, PERIOD_NS, "timeline");
    assert_eq!(waits(&run, &WaitsOptions::default()).period_s, s, "waits");
    assert_eq!(analyse(&run, &[], &SectionOptions::default()).interval_s, s, "sections");
}

#[test]
fn every_export_states_the_same_period() {
    let run = run();
    let order = threadradar_formats::timeline::time_order(&run);
    let durations = threadradar_formats::timeline::sample_durations_ns(&run, &order);
    assert_eq!(durations.last(), Some(&PERIOD_NS), "the last sample stands for one period");

    assert_eq!(threadradar_formats::pprof::build(&run).period, PERIOD_NS as i64, "pprof");

    let mut bytes = Vec::new();
    export(&run, ExportFormat::Firefox, &mut bytes).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["meta"]["interval"].as_f64(), Some(1.6), "firefox");

    for format in [ExportFormat::Chrome, ExportFormat::Perfetto] {
        let mut bytes = Vec::new();
        export(&run, format, &mut bytes).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("taken every 1.6 ms"), "{}: the note states the period", format.name());
    }
}
