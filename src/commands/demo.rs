//! `threadradar demo`: profile a bundled sample (the paper's Bug 1 by default) and show what
//! ThreadRadar sees, so a new user sees the whole pipeline with one command.

use super::record::{record, summarize, RecordArgs};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Which of the paper's bugs: 1 data race (WorkerManager singleton), 2 producer/consumer,
    /// 3 readers/writers.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=3))]
    pub bug: u8,

    /// Profile the fixed version instead of the buggy one.
    #[arg(long)]
    pub fixed: bool,

    /// Python interpreter to run the sample with.
    #[arg(long, default_value = "python3")]
    pub python: String,
}

pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let dir = match args.bug {
        1 => "bug1_worker_manager",
        2 => "bug2_producer_consumer",
        _ => "bug3_readers_writers",
    };
    let file = if args.fixed { "fixed.py" } else { "buggy.py" };
    let script = samples_dir()?.join(dir).join(file);
    eprintln!("threadradar demo: profiling {}", script.display());
    let rec = record(&RecordArgs::launching(vec![args.python.clone(), script.display().to_string()]))?;
    summarize(&rec.run, &rec.path);
    let mut out = std::io::stdout().lock();
    use std::io::Write;
    writeln!(out)?;
    super::info::print_info(&rec.run, &mut out)?;
    writeln!(out)?;
    super::report::print_overview(&rec.run, &rec.path, &mut out)?;
    writeln!(out)?;
    writeln!(out, "Run file: {}", rec.path.display())?;
    writeln!(out, "Next: `threadradar report {}` for every function and class, or open this folder in an editor with the ThreadRadar extension.", rec.path.display())?;
    Ok(ExitCode::SUCCESS)
}

/// The paper's samples, inside the binary: a `pip install`ed `threadradar` has no checkout.
const BUNDLED: [(&str, &str); 7] = [
    ("common.py", include_str!("../../samples/python/common.py")),
    ("bug1_worker_manager/buggy.py", include_str!("../../samples/python/bug1_worker_manager/buggy.py")),
    ("bug1_worker_manager/fixed.py", include_str!("../../samples/python/bug1_worker_manager/fixed.py")),
    ("bug2_producer_consumer/buggy.py", include_str!("../../samples/python/bug2_producer_consumer/buggy.py")),
    ("bug2_producer_consumer/fixed.py", include_str!("../../samples/python/bug2_producer_consumer/fixed.py")),
    ("bug3_readers_writers/buggy.py", include_str!("../../samples/python/bug3_readers_writers/buggy.py")),
    ("bug3_readers_writers/fixed.py", include_str!("../../samples/python/bug3_readers_writers/fixed.py")),
];

/// `samples/python` of this checkout (beside the current directory, else where it was built),
/// else the bundled copy written to `threadradar-demo/` in the current directory, so that the
/// run's source files are there for an editor opened on this folder.
fn samples_dir() -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir()?;
    let candidates = [cwd.join("samples/python"), PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/python")];
    if let Some(found) = candidates.iter().find(|p| p.join("bug1_worker_manager").is_dir()) {
        return Ok(found.clone());
    }
    let dir = cwd.join("threadradar-demo");
    for (rel, text) in BUNDLED {
        let path = dir.join(rel);
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(path.parent().unwrap_or(&dir))?;
            std::fs::write(&path, text)
        };
        write().map_err(|e| anyhow::anyhow!("cannot write the bundled sample {}: {e}; run `threadradar demo` from a directory you can write to", path.display()))?;
    }
    Ok(dir)
}
