//! Language server benchmark (`cargo bench --bench lsp`): the real `threadradar lsp` over stdio,
//! driven by the test client.
//!
//! 1. Inlay hints for a 5,000-line file with 300 profiled functions: request latency p50/p99,
//!    for the recorded text and after an edit (re-resolution by qualified name).
//! 2. From spawning the server and `initialize` to the first hints with a run of 1,000,000
//!    thread-samples (15,625 ticks × 64 threads, 5,000 functions).
//! 3. Resident memory of the server (VmRSS, VmHWM) after each.

#[path = "../tests/lsp_client/mod.rs"]
mod lsp_client;

use lsp_client::{file_uri, LspClient};
use serde_json::json;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};
use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
use threadradar_profiler::run::{FileKind, Meta, Sample, ThreadSample, ThreadState};
use threadradar_profiler::source::sha256_hex;
use threadradar_profiler::synth::{synthetic_run, SynthSpec};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_threadradar")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn memory(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let get = |k: &str| status.lines().find(|l| l.starts_with(k)).map(|l| l[k.len()..].trim().to_string()).unwrap_or_default();
    format!("VmRSS {} (peak VmHWM {})", get("VmRSS:"), get("VmHWM:"))
}

/// A 5,000-line module: 300 functions of 16 lines, then filler.
fn big_file() -> (String, Vec<u32>) {
    let mut text = String::new();
    let mut lines = Vec::new();
    let mut n = 0u32;
    for i in 0..300 {
        lines.push(n + 1);
        let _ = writeln!(text, "def work_{i}(x):");
        for k in 0..15 {
            let _ = writeln!(text, "    x = (x * {k} + {i}) % 1009");
        }
        n += 16;
    }
    while n < 5000 {
        let _ = writeln!(text, "# filler {n}");
        n += 1;
    }
    (text, lines)
}

fn bench_hints(ws: &Path, lazy_tooltips: bool) -> String {
    let (text, lines) = big_file();
    let path = ws.join("big.py");
    std::fs::write(&path, &text).unwrap();
    let mut b = RunBuilder::new(Meta { interval_ms: 3.0, command: vec!["python3".into(), "big.py".into()], ..Meta::default() });
    let file = b.file(path.to_str().unwrap(), FileKind::User, Some(sha256_hex(text.as_bytes())));
    let functions: Vec<_> = lines
        .iter()
        .enumerate()
        .map(|(i, &l)| b.function(file, &FunctionSpec { qualname: &format!("work_{i}"), line: l, end_line: l + 15, ..Default::default() }))
        .collect();
    let threads: Vec<_> = (0..16).map(|i| b.thread(new_thread(1, 100 + i, i as u64, &format!("worker-{i}"), if i % 2 == 0 { "Worker" } else { "Thread" }))).collect();
    let mut seed = 7u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    let stacks: Vec<_> = (0..2000)
        .map(|_| {
            let a = b.frame(functions[next() % 300], 3);
            let c = b.frame(functions[next() % 300], 5);
            b.stack(&[a, c]).unwrap()
        })
        .collect();
    for t in 0..20_000u64 {
        let ts = threads
            .iter()
            .enumerate()
            .map(|(i, &th)| ThreadSample { thread: th, stack: Some(stacks[(next() + i * 97) % stacks.len()]), state: ThreadState::Computing, ..Default::default() })
            .collect();
        b.push_sample(Sample { t: t * 3_000_000, threads: ts });
    }
    let run = b.finish();
    threadradar_profiler::runfile::write(&run, &ws.join(".threadradar/runs/20000101T000000Z-big.json")).unwrap();

    let mut c = LspClient::spawn(bin(), ws);
    c.resolve_tooltips = lazy_tooltips;
    c.initialize(ws, json!({ "minCrt": 0 }));
    c.open(&path, &text);
    let first = c.inlay_hints(&path);
    assert_eq!(first.len(), 300, "one hint per function");
    let mut times = Vec::new();
    for _ in 0..500 {
        let t = Instant::now();
        let h = c.inlay_hints(&path);
        times.push(t.elapsed());
        assert_eq!(h.len(), 300);
    }
    times.sort();
    // After an edit above everything: the text no longer matches the recorded hash, so the
    // first request re-parses with tree-sitter and re-resolves 300 names; later ones hit the cache.
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": file_uri(&path), "version": 2 },
                "contentChanges": [{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "text": "import os\n" }] }),
    );
    let t = Instant::now();
    let h = c.inlay_hints(&path);
    let after_edit = t.elapsed();
    assert_eq!(h.len(), 300);
    let mut edited = Vec::new();
    for v in 3..103 {
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": file_uri(&path), "version": v },
                    "contentChanges": [{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "text": "#\n" }] }),
        );
        let t = Instant::now();
        let h = c.inlay_hints(&path);
        edited.push(t.elapsed());
        assert_eq!(h.len(), 300);
    }
    edited.sort();
    let mem = memory(c.pid());
    c.shutdown();
    format!(
        "tooltips {}:\n\
         inlay hints, 5,000-line file, 300 profiled functions (500 requests): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms\n\
         first request after an edit (tree-sitter re-resolution): {:.2} ms\n\
         typing (an edit before every request, 100 requests): p50 {:.2} ms, p99 {:.2} ms\n\
         server memory: {mem}\n",
        if lazy_tooltips { "resolved lazily (client has inlayHint.resolveSupport, like VS Code)" } else { "inline (client without resolveSupport)" },
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        ms(*times.last().unwrap()),
        ms(after_edit),
        ms(percentile(&edited, 0.5)),
        ms(percentile(&edited, 0.99)),
    )
}

fn bench_first_hints(ws: &Path) -> String {
    let mut run = synthetic_run(SynthSpec { ticks: 15_625, threads: 64, functions: 5_000, stacks: 20_000, seed: 1 });
    // Put the first file (functions 0..50, one every 20 lines) in the workspace, with its text.
    let path = ws.join("mod0.py");
    let mut text = String::new();
    for i in 0..50 {
        let f = run.functions.iter().find(|f| f.file == 0 && f.line == 1 + i * 20).unwrap();
        let _ = writeln!(text, "def {}(self):", run.str(f.name));
        for _ in 0..19 {
            text.push_str("    pass\n");
        }
    }
    let p = run.files[0].path as usize;
    run.strings[p] = path.display().to_string();
    run.files[0].sha256 = Some(sha256_hex(text.as_bytes()));
    std::fs::write(&path, &text).unwrap();
    let run_path = ws.join(".threadradar/runs/20000101T000000Z-synthetic.json");
    threadradar_profiler::runfile::write(&run, &run_path).unwrap();
    let size = std::fs::metadata(&run_path).unwrap().len();
    let thread_samples: usize = run.samples.iter().map(|s| s.threads.len()).sum();
    drop(run);

    let mut times = Vec::new();
    let mut mem = String::new();
    for _ in 0..3 {
        let t = Instant::now();
        let mut c = LspClient::spawn(bin(), ws);
        c.initialize(ws, json!({ "minCrt": 0 }));
        c.open(&path, &text);
        let hints = c.inlay_hints(&path);
        let took = t.elapsed();
        assert!(!hints.is_empty());
        times.push(took);
        mem = memory(c.pid());
        c.shutdown();
    }
    times.sort();
    format!(
        "initialize → first hints, {thread_samples} thread-samples ({:.0} MB run file), 3 cold starts: {:.0} / {:.0} / {:.0} ms\n\
         server memory with that run loaded: {mem}\n",
        size as f64 / 1e6,
        ms(times[0]),
        ms(times[1]),
        ms(times[2]),
    )
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument filters like libtest would.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let want = |name: &str| args.is_empty() || args.iter().any(|a| name.contains(a.as_str()));
    if want("hints") {
        for lazy in [true, false] {
            let ws = tempfile::tempdir().unwrap();
            print!("{}", bench_hints(&ws.path().canonicalize().unwrap(), lazy));
        }
    }
    if want("first_hints") {
        let ws = tempfile::tempdir().unwrap();
        print!("{}", bench_first_hints(&ws.path().canonicalize().unwrap()));
    }
}
