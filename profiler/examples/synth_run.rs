//! Writes a synthetic run file, for benchmarks:
//! `cargo run --release -p threadradar-profiler --example synth_run -- OUT.json TICKS THREADS FUNCTIONS [STACKS SEED]`
//! (`… run1m.json 125000 8 500 2000 21` is `bench/formats.rs`'s run, the one docs/benchmarks.md times exports on)
use threadradar_profiler::synth::{synthetic_run, SynthSpec};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: usize| a.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let out = a.get(1).cloned().unwrap_or_else(|| "synthetic.json".into());
    let spec = SynthSpec { ticks: arg(2, 125_000), threads: arg(3, 8), functions: arg(4, 5_000), stacks: arg(5, 20_000), seed: arg(6, 1) as u64 };
    let run = synthetic_run(spec);
    threadradar_profiler::runfile::write(&run, std::path::Path::new(&out)).expect("writing the run");
    eprintln!("wrote {out}: {} ticks × {} threads, {} functions", spec.ticks, spec.threads, run.functions.len());
}
