//! Fuzzing the run reader and everything that trusts what it returns: a seeded mutation loop over
//! real run files (two recorded runs of the paper's Bug 1, a version 1 file, and synthetic runs
//! written in both layouts — one JSON document, and the streamed chunks with packed scheduler
//! events). Each case must either be refused in one short sentence or give a run that passes
//! `validate`, whose samples are in time order, and that the analysis (radars and report view,
//! waits, timeline index and bars), and every export take without a panic — with overflow checks
//! on, as the release profile has them for ThreadRadar's crates.
//!
//! Bounded in time like `fuzz_import`: `THREADRADAR_FUZZ_SECONDS` (default 10), from
//! `THREADRADAR_FUZZ_SEED`; a failing case is written to `$CARGO_TARGET_TMPDIR/fuzz-failures/`
//! and `THREADRADAR_FUZZ_REPLAY=FILE` reads just that file.
//!
//! ```sh
//! THREADRADAR_FUZZ_SECONDS=600 cargo test --release --locked -p threadradar-formats --test fuzz_run -- --nocapture
//! ```

#[allow(dead_code)] // the loop's importer-specific parts are for fuzz_import
mod fuzzing;

use fuzzing::{Rng, Target};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use threadradar_analysis::timeline::{export::bars, TimelineIndex};
use threadradar_analysis::waits::{waits, WaitsOptions};
use threadradar_analysis::{Analysis, Options, ReportView, ViewOptions};
use threadradar_formats::import::ImportFormat;
use threadradar_formats::{export, ExportFormat};
use threadradar_profiler::run::{SchedInfo, SchedSwitch, SchedWakeup};
use threadradar_profiler::runfile;
use threadradar_profiler::synth::{synthetic_run, SynthSpec};

fn repo_file(rel: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A synthetic run with scheduler events, written by the run writer (the streamed layout).
fn written_run() -> Vec<u8> {
    let mut run = synthetic_run(SynthSpec { ticks: 120, threads: 3, functions: 12, stacks: 30, seed: 9 });
    let tids: Vec<u32> = run.threads.iter().map(|t| t.tid).collect();
    run.sched = Some(SchedInfo { source: "perf_event_open".into(), lost_events: 0, note: None });
    for (i, s) in run.samples.iter().enumerate().take(60) {
        let (a, b) = (tids[i % tids.len()], tids[(i + 1) % tids.len()]);
        run.switches.push(SchedSwitch { t: s.t + 10, prev_tid: a, prev_state: 1, next_tid: b });
        run.wakeups.push(SchedWakeup { t: s.t + 20, waker_tid: b, wakee_tid: a });
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("synth.json");
    runfile::write(&run, &path).unwrap();
    std::fs::read(&path).unwrap()
}

/// The same run as one JSON document (the layout of older runs and of hand-made files).
fn document_run() -> Vec<u8> {
    let run = synthetic_run(SynthSpec { ticks: 60, threads: 4, functions: 8, stacks: 20, seed: 4 });
    serde_json::to_vec(&run).unwrap()
}

fn target() -> Target {
    Target {
        name: "run-file",
        format: ImportFormat::Collapsed, // unused: run files are read by the run reader
        seeds: vec![
            repo_file("tests/fixtures/runs/20260101T000000Z-bug1-buggy.json"),
            repo_file("tests/fixtures/runs/20260101T000001Z-bug1-fixed.json"),
            repo_file("tests/fixtures/run-v1.json"),
            written_run(),
            document_run(),
        ],
    }
}

/// Numbers at the edges of what the run's fields hold.
const EDGES: &[&str] = &["0", "1", "2", "3", "7", "0", "1", "-1", "4294967295", "4294967296", "18446744073709551615", "9223372036854775807", "1e300", "-1e300", "0.5"];

/// A case that stays JSON: each line of a seed (the document, or the streamed layout's header and
/// chunks) parsed, a few of its numbers set to edge values, array elements dropped, repeated or
/// swapped, and written back. These reach past the parser into validation, repair and analysis.
fn json_case(seeds: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let seed = &seeds[rng.below(seeds.len())];
    let mut out = Vec::new();
    for line in seed.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(line) else { continue };
        for _ in 0..1 + rng.below(6) {
            mutate_json(&mut v, rng);
        }
        serde_json::to_writer(&mut out, &v).unwrap();
        out.push(b'\n');
    }
    out
}

fn mutate_json(v: &mut serde_json::Value, rng: &mut Rng) {
    use serde_json::Value;
    match v {
        Value::Array(a) if !a.is_empty() => match rng.below(8) {
            0 => drop(a.remove(rng.below(a.len()))),
            1 => {
                let e = a[rng.below(a.len())].clone();
                a.insert(rng.below(a.len() + 1), e);
            }
            2 => {
                let (i, j) = (rng.below(a.len()), rng.below(a.len()));
                a.swap(i, j);
            }
            _ => {
                let i = rng.below(a.len());
                mutate_json(&mut a[i], rng)
            }
        },
        Value::Object(o) if !o.is_empty() => {
            let key = o.keys().nth(rng.below(o.len())).unwrap().clone();
            if rng.below(12) == 0 {
                o.remove(&key);
            } else {
                mutate_json(o.get_mut(&key).unwrap(), rng);
            }
        }
        Value::Number(_) | Value::Null | Value::Bool(_) => *v = serde_json::from_str(EDGES[rng.below(EDGES.len())]).unwrap(),
        _ => {}
    }
}

/// What one case did wrong: `Ok(true)` when it was refused with a sentence, `Ok(false)` when it
/// gave a run that everything downstream took.
fn check(input: &[u8]) -> Result<bool, String> {
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<bool, String> {
        let run = match runfile::from_slice(input, Path::new("fuzz.json")) {
            Err(e) => {
                let e = e.to_string();
                if e.is_empty() || e.contains('\n') || e.len() > 800 {
                    return Err(format!("the error is not one short sentence: {e:?}"));
                }
                return Ok(true);
            }
            Ok(run) => run,
        };
        run.validate().map_err(|e| format!("a read run has a dangling id: {e}"))?;
        if run.samples.windows(2).any(|w| w[0].t > w[1].t) {
            return Err("a read run's samples are out of time order".into());
        }
        if !(run.meta.interval_ms.is_finite() && run.meta.interval_ms > 0.0) {
            return Err(format!("a read run's interval is {}", run.meta.interval_ms));
        }
        if let Ok(a) = Analysis::new(&run, &Options::default()) {
            let _ = ReportView::build(&run, &a, &ViewOptions::default());
        }
        let _ = waits(&run, &WaitsOptions::default());
        if let Ok(index) = TimelineIndex::new(&run) {
            let _ = bars(&run, &index, None, None, None);
        }
        for format in ExportFormat::ALL {
            let _ = export(&run, format, &mut Vec::new());
        }
        Ok(false)
    }));
    match outcome {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            let at = PANIC_AT.lock().unwrap().take().unwrap_or_default();
            Err(format!("panicked at {at}: {msg}"))
        }
    }
}

/// Where the last caught panic happened (the hook below records it; the message alone does not
/// say which addition overflowed).
static PANIC_AT: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

fn quiet_hook() {
    std::panic::set_hook(Box::new(|info| {
        *PANIC_AT.lock().unwrap() = info.location().map(|l| l.to_string());
    }));
}

fn env_u64(key: &str, default: u64) -> u64 {
    std::env::var(key).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn failures_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_run_reader_and_what_trusts_it_survive_mutated_and_random_files() {
    if let Ok(file) = std::env::var("THREADRADAR_FUZZ_REPLAY") {
        quiet_hook();
        let result = check(&std::fs::read(&file).unwrap());
        let _ = std::panic::take_hook(); // the default hook again, to report
        if let Err(what) = result {
            panic!("{file}: {what}");
        }
        return;
    }
    let target = target();
    for (i, s) in target.seeds.iter().enumerate() {
        assert_eq!(check(s), Ok(false), "seed {i} reads and analyses");
    }
    let seconds = env_u64("THREADRADAR_FUZZ_SECONDS", 10);
    let seed = env_u64("THREADRADAR_FUZZ_SEED", 35);
    let mut rng = Rng::new(seed);
    let (start, budget) = (Instant::now(), Duration::from_secs_f64(seconds as f64));
    let (mut cases, mut refused, mut failures) = (0u64, 0u64, Vec::new());
    // The panic hook would print every caught panic; the failures are reported below instead.
    let hook = std::panic::take_hook();
    quiet_hook();
    while start.elapsed() < budget && failures.len() < 5 {
        let case = if rng.below(2) == 0 { json_case(&target.seeds, &mut rng) } else { target.case(&mut rng) };
        cases += 1;
        match check(&case) {
            Ok(true) => refused += 1,
            Ok(false) => {}
            Err(what) => {
                let file = failures_dir().join(format!("run-file-seed{seed}-case{cases}"));
                std::fs::write(&file, &case).unwrap();
                failures.push(format!("{}: {what}", file.display()));
            }
        }
    }
    std::panic::set_hook(hook);
    eprintln!("run-file: {cases} cases in {:.1} s, {refused} refused with a sentence, {} read and analysed", start.elapsed().as_secs_f64(), cases - refused);
    assert!(failures.is_empty(), "{} failing case(s):\n{}", failures.len(), failures.join("\n"));
    assert!(cases - refused > 0, "no mutated case was read: the mutations never reach the analysis");
}
