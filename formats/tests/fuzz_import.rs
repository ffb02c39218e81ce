//! Fuzzing every importer on stable Rust (no libFuzzer here): a seeded mutation loop over real
//! files (tests/fixtures/formats, recorded by py-spy, austin, perf and CPython 3.15's sampler,
//! and ThreadRadar's own exports) and random input. Each case must end in a run or in one short
//! sentence, never a panic; a run must stay within the limits it was given; and what the import
//! allocates at its peak must stay within a factor of the input's size plus what the limits let
//! the run hold (measured by a counting allocator, per thread).
//!
//! Bounded in time: `THREADRADAR_FUZZ_SECONDS` (default 10) is shared by the eight targets, so a
//! plain `cargo test` stays quick. Longer, and from another seed:
//!
//! ```sh
//! THREADRADAR_FUZZ_SECONDS=600 THREADRADAR_FUZZ_SEED=7 \
//!   cargo test --release --locked -p threadradar-formats --test fuzz_import -- --nocapture
//! ```
//!
//! A failing case is written to `$CARGO_TARGET_TMPDIR/fuzz-failures/` (its name says the target,
//! the seed and the case number) and the test fails naming it; `THREADRADAR_FUZZ_REPLAY=FILE`
//! with `THREADRADAR_FUZZ_TARGET=<target>` imports just that file. `THREADRADAR_FUZZ_TARGET`
//! alone fuzzes only that target; `THREADRADAR_FUZZ_TRACE=1` writes each case to
//! `fuzz-failures/<target>-current` before it runs (for a case that aborts the process).

mod fuzzing;

use fuzzing::{measure, Rng, Target};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use threadradar_formats::import::{import_bytes, ImportFormat, ImportOptions, Limits};
use threadradar_formats::{export, ExportFormat};
use threadradar_profiler::synth::{synthetic_run, SynthSpec};

/// Limits smaller than the defaults, so a case that claims the most still runs in milliseconds.
fn limits() -> Limits {
    Limits { samples: 200_000, depth: 2_000, threads: 2_000, frames: 50_000, stacks: 200_000, name_bytes: 4_096, span_ns: 3_600 * 1_000_000_000, json_bytes: 1 << 24, file_bytes: 1 << 24 }
}

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/formats").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn exported(format: ExportFormat) -> Vec<u8> {
    let run = synthetic_run(SynthSpec { ticks: 150, threads: 3, functions: 20, stacks: 40, seed: 3 });
    let mut out = Vec::new();
    export(&run, format, &mut out).unwrap();
    out
}

fn targets() -> Vec<Target> {
    let t = |name: &'static str, format: ImportFormat, seeds: Vec<Vec<u8>>| Target { name, format, seeds };
    vec![
        t("py-spy", ImportFormat::Collapsed, vec![fixture("pyspy.raw")]),
        t("austin-text", ImportFormat::Austin, vec![fixture("austin.txt"), fixture("austin-full-mojo.txt")]),
        t("austin-mojo", ImportFormat::AustinMojo, vec![fixture("austin.mojo"), fixture("austin-full.mojo")]),
        t("cpython-collapsed", ImportFormat::Collapsed, vec![fixture("cpython315-cpu.collapsed"), exported(ExportFormat::Collapsed)]),
        t("cpython-gecko", ImportFormat::Gecko, vec![fixture("cpython315.gecko.json")]),
        t("speedscope", ImportFormat::Speedscope, vec![fixture("pyspy.speedscope.json"), exported(ExportFormat::Speedscope)]),
        t("firefox", ImportFormat::Gecko, vec![exported(ExportFormat::Firefox)]),
        t("perf", ImportFormat::Perf, vec![fixture("perf-python312.txt")]),
    ]
}

fn env_u64(key: &str, default: u64) -> u64 {
    std::env::var(key).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// What one case did wrong, or whether it was refused (with a sentence) and the bytes it
/// allocated at its peak.
fn check(target: &Target, input: &[u8], auto: bool) -> Result<(bool, usize), String> {
    let limits = limits();
    let opts = ImportOptions { format: if auto { None } else { Some(target.format) }, limits, ..Default::default() };
    let (result, peak) = measure(|| std::panic::catch_unwind(|| import_bytes(input, Path::new("fuzz.profile"), &opts)));
    let result = match result {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            return Err(format!("panicked: {msg}"));
        }
    };
    // The run holds at most `samples` thread-samples of ~100 bytes each in memory, twice while it
    // is built; everything else is proportional to the input.
    let bound = 64 * input.len() + 400 * limits.samples as usize + (16 << 20);
    if peak > bound {
        return Err(format!("allocated {peak} bytes at its peak for {} input bytes (bound {bound})", input.len()));
    }
    match result {
        Err(e) => {
            let e = e.to_string();
            if e.is_empty() || e.contains('\n') || e.len() > 600 {
                return Err(format!("the error is not one short sentence: {e:?}"));
            }
            Ok((true, peak))
        }
        Ok(run) => {
            let n: usize = run.samples.iter().map(|s| s.threads.len()).sum();
            if n as u64 > limits.samples || run.threads.len() > limits.threads || run.stacks.len() > limits.stacks {
                return Err(format!("the run exceeds the limits: {n} thread-samples, {} threads, {} stacks", run.threads.len(), run.stacks.len()));
            }
            if run.samples.windows(2).any(|w| w[0].t >= w[1].t) {
                return Err("the run's ticks are not in strictly increasing time".into());
            }
            Ok((false, peak))
        }
    }
}

fn failures_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn every_importer_survives_mutated_and_random_input() {
    let targets = targets();
    if let (Ok(file), Ok(name)) = (std::env::var("THREADRADAR_FUZZ_REPLAY"), std::env::var("THREADRADAR_FUZZ_TARGET")) {
        let target = targets.iter().find(|t| t.name == name).expect("THREADRADAR_FUZZ_TARGET names a target");
        let input = std::fs::read(&file).unwrap();
        for auto in [false, true] {
            if let Err(what) = check(target, &input, auto) {
                panic!("{file} (format {}): {what}", if auto { "recognised" } else { "given" });
            }
        }
        return;
    }
    let seconds = env_u64("THREADRADAR_FUZZ_SECONDS", 10);
    let seed = env_u64("THREADRADAR_FUZZ_SEED", 31);
    let per_target = Duration::from_secs_f64(seconds as f64 / targets.len() as f64);
    let only = std::env::var("THREADRADAR_FUZZ_TARGET").ok();
    // An abort (an allocation failing) ends the process before a failure can be written: with
    // THREADRADAR_FUZZ_TRACE set, each case is written before it runs.
    let trace = std::env::var_os("THREADRADAR_FUZZ_TRACE").is_some();
    let mut failures = Vec::new();
    for (ti, target) in targets.iter().enumerate() {
        if only.as_deref().is_some_and(|o| o != target.name) {
            continue;
        }
        // The seeds themselves import.
        for (si, s) in target.seeds.iter().enumerate() {
            if let Err(what) = check(target, s, false) {
                failures.push(format!("{} seed {si}: {what}", target.name));
            }
        }
        let mut rng = Rng::new(seed.wrapping_mul(1_000_003).wrapping_add(ti as u64));
        let start = Instant::now();
        let (mut cases, mut errors, mut most) = (0u64, 0u64, 0usize);
        while start.elapsed() < per_target {
            let input = target.case(&mut rng);
            let auto = rng.below(8) == 0;
            cases += 1;
            if trace {
                std::fs::write(failures_dir().join(format!("{}-current", target.name)), &input).unwrap();
            }
            match check(target, &input, auto) {
                Ok((refused, peak)) => {
                    errors += refused as u64;
                    most = most.max(peak);
                }
                Err(what) => {
                let file = failures_dir().join(format!("{}-seed{seed}-case{cases}", target.name));
                std::fs::write(&file, &input).unwrap();
                failures.push(format!("{} case {cases} ({}): {what}", target.name, file.display()));
                if failures.len() > 20 {
                    break;
                }
                }
            }
        }
        eprintln!(
            "fuzz {:<18} {cases:>7} cases in {:.1} s ({errors} refused with a sentence), at most {:.1} MB allocated",
            target.name,
            start.elapsed().as_secs_f64(),
            most as f64 / 1e6
        );
    }
    assert!(failures.is_empty(), "{} failing cases:\n{}", failures.len(), failures.join("\n"));
}
