//! Export benchmark (`cargo bench --bench formats`): a synthetic run of 1,000,000 thread-samples
//! (125,000 ticks × 8 threads, 500 functions, 2,000 call paths; `profiler/src/synth.rs`) written in
//! every format to memory and to a file (what `threadradar export -o` does: the exporter's own
//! buffered writes into the page cache, no fsync), and the collapsed and Firefox exports imported.
//! Median of 3; the goal (issue 21) is ≤ 2 s per export. Results go in docs/benchmarks.md.

use std::time::{Duration, Instant};
use threadradar_formats::{export, ExportFormat};
use threadradar_profiler::synth::{synthetic_run, SynthSpec};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let spec = SynthSpec { ticks: 125_000, threads: 8, functions: 500, stacks: 2_000, seed: 21 };
    let run = synthetic_run(spec);
    let thread_samples: usize = run.samples.iter().map(|s| s.threads.len()).sum();
    println!("run: {} ticks × {} threads = {thread_samples} thread-samples, {} functions, {} stack nodes", run.samples.len(), run.threads.len(), run.functions.len(), run.stacks.len());
    println!("{:<12} {:>10} {:>12} {:>14} {:>12}", "format", "median s", "output MB", "M samples/s", "to file s");
    let dir = std::env::temp_dir().join(format!("threadradar-bench-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut collapsed = Vec::new();
    let mut firefox = Vec::new();
    // `THREADRADAR_BENCH_FORMATS=perfetto,firefox` measures only those (e.g. under `perf record`).
    let only: Option<Vec<String>> = std::env::var("THREADRADAR_BENCH_FORMATS").ok().map(|v| v.split(',').map(str::to_string).collect());
    for format in ExportFormat::ALL {
        if only.as_ref().is_some_and(|o| !o.iter().any(|n| n == format.name()) && format != ExportFormat::Collapsed && format != ExportFormat::Firefox) {
            continue;
        }
        let mut times = Vec::new();
        let mut size = 0;
        for _ in 0..3 {
            let mut out = Vec::with_capacity(64 << 20);
            let t = Instant::now();
            export(&run, format, &mut out).unwrap();
            times.push(t.elapsed());
            size = out.len();
            if format == ExportFormat::Collapsed {
                collapsed = out;
            } else if format == ExportFormat::Firefox {
                firefox = out;
            }
        }
        // To a file: no growing buffer to copy, as `export -o FILE` writes.
        let mut file_times = Vec::new();
        for _ in 0..3 {
            let path = dir.join(format!("out.{}", format.name()));
            let t = Instant::now();
            let mut f = std::fs::File::create(&path).unwrap();
            export(&run, format, &mut f).unwrap();
            drop(f);
            file_times.push(t.elapsed());
            std::fs::remove_file(&path).unwrap();
        }
        let m = median(times);
        println!(
            "{:<12} {:>10.3} {:>12.1} {:>14.2} {:>12.3}",
            format.name(),
            m.as_secs_f64(),
            size as f64 / 1e6,
            thread_samples as f64 / 1e6 / m.as_secs_f64(),
            median(file_times).as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Import of the collapsed export (1 M samples expanded from folded counts).
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let r = threadradar_formats::import::import_bytes(&collapsed, std::path::Path::new("bench.folded"), &Default::default()).unwrap();
        times.push(t.elapsed());
        assert_eq!(r.samples.iter().map(|s| s.threads.len()).sum::<usize>(), thread_samples);
    }
    println!("{:<12} {:>10.3}", "import collapsed", median(times).as_secs_f64());
    // Import of the Firefox export (times and stacks kept).
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let r = threadradar_formats::import::import_bytes(&firefox, std::path::Path::new("bench.firefox.json"), &Default::default()).unwrap();
        times.push(t.elapsed());
        assert_eq!(r.samples.iter().map(|s| s.threads.len()).sum::<usize>(), thread_samples);
    }
    println!("{:<12} {:>10.3}", "import firefox", median(times).as_secs_f64());
}
