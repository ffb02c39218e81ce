//! Export benchmark (`cargo bench --bench formats`): a synthetic run of 1,000,000 thread-samples
//! (125,000 ticks × 8 threads, 500 functions, 2,000 call paths; `profiler/src/synth.rs`) written in
//! every format to memory, and a py-spy-sized collapsed file imported. Median of 3; the goal
//! (issue 21) is ≤ 2 s per export. Results go in docs/benchmarks.md.

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
    println!("{:<12} {:>10} {:>12} {:>14}", "format", "median s", "output MB", "M samples/s");
    let mut collapsed = Vec::new();
    for format in ExportFormat::ALL {
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
            }
        }
        let m = median(times);
        println!("{:<12} {:>10.3} {:>12.1} {:>14.2}", format.name(), m.as_secs_f64(), size as f64 / 1e6, thread_samples as f64 / 1e6 / m.as_secs_f64());
    }
    // Import of the collapsed export (1 M samples expanded from folded counts).
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let r = threadradar_formats::import::import_bytes(&collapsed, std::path::Path::new("bench.folded"), &Default::default()).unwrap();
        times.push(t.elapsed());
        assert_eq!(r.samples.iter().map(|s| s.threads.len()).sum::<usize>(), thread_samples);
    }
    println!("{:<12} {:>10.3}", "import collapsed", median(times).as_secs_f64());
}
