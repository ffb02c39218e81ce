//! Writes a deterministic synthetic run file (`profiler/src/synth.rs`) for scale tests of the
//! renderers, e.g. the timeline panel's 1 M thread-sample frame-time measurement:
//!
//! `cargo run --release -p threadradar-analysis --example steady_run -- OUT.json [TICKS] [THREADS]`
//!
//! The `steady` variant of the timeline benchmark is written (threads keep their stack for ~20
//! samples), since a run that draws a new random stack at every tick is not a program's timeline.

use threadradar_profiler::synth::{synthetic_run, SynthSpec};

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
    if let Err(e) = threadradar_profiler::runfile::write(&run, std::path::Path::new(out)) {
        eprintln!("steady_run: {e}");
        std::process::exit(2);
    }
}
