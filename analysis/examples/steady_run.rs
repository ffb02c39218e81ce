//! Writes a deterministic synthetic run file (`profiler/src/synth.rs`) for scale tests of the
//! renderers, e.g. the timeline panel's 1 M thread-sample frame-time measurement:
//!
//! `cargo run --release -p threadradar-analysis --example steady_run -- OUT.json [TICKS] [THREADS]`
//!
//! The `steady` variant of the timeline benchmark is written (threads keep their stack for ~20
//! samples), since a run that draws a new random stack at every tick is not a program's timeline.

use threadradar_profiler::synth::{hold_stacks, synthetic_run, SynthSpec};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: steady_run OUT.json [TICKS] [THREADS]");
        std::process::exit(2);
    };
    let ticks = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let threads = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(50);
    let mut run = synthetic_run(SynthSpec { ticks, threads, functions: 5_000, stacks: 20_000, seed: 1 });
    // The benchmark's `steady` run: keep the previous stack and state with probability 0.95.
    hold_stacks(&mut run, 95, 0x9E37_79B9_7F4A_7C15);
    if let Err(e) = threadradar_profiler::runfile::write(&run, std::path::Path::new(out)) {
        eprintln!("steady_run: {e}");
        std::process::exit(2);
    }
}
