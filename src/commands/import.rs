//! `threadradar import FILE [--format F] -o RUN`: another profiler's file as a ThreadRadar run
//! (py-spy raw or speedscope, austin, CPython's `profiling.sampling` collapsed or gecko output,
//! folded stacks, Firefox Profiler processed profiles, `perf script`). The parsing lives in `threadradar-formats`; the run is written with
//! the profiler's run writer, so the editor integrations find it like a recorded one.

use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use threadradar_formats::import::{import_file, ImportFormat, ImportOptions};
use threadradar_profiler::runfile;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The profile to import.
    pub file: PathBuf,

    /// Its format [default: recognised from the content]
    #[arg(short, long, value_enum)]
    pub format: Option<ImportFormatArg>,

    /// The run file to write [default: .threadradar/runs/<time>-<file name>.json]
    #[arg(short, long, value_name = "RUN")]
    pub output: Option<PathBuf>,

    /// Where the profiled program's sources are here, when the profile was recorded elsewhere
    /// (repeatable) [default: the current directory]. A recorded path that does not exist here
    /// is looked up by its longest tail under these directories.
    #[arg(long, value_name = "DIR")]
    pub source_root: Vec<PathBuf>,

    /// The sampling interval in milliseconds (e.g. 5 for `-r 200`), for a file that does not
    /// record it: folded stacks (py-spy raw, CPython --collapsed) are counts, laid out one
    /// interval apart. Takes precedence over an interval the file states.
    #[arg(long, value_name = "MS")]
    pub interval_ms: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ImportFormatArg {
    /// Folded stacks: py-spy --format raw, CPython profiling.sampling --collapsed, flamegraph.pl input.
    Collapsed,
    /// austin's text output.
    Austin,
    /// austin's binary MOJO output (austin -b).
    AustinMojo,
    /// speedscope JSON (py-spy --format speedscope).
    Speedscope,
    /// `perf script` of a Python 3.12+ process run with -X perf.
    Perf,
    /// Firefox Profiler processed profile: `export --format firefox`, CPython 3.15 profiling.sampling --gecko.
    Gecko,
}

pub fn run(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let format = args.format.map(|f| match f {
        ImportFormatArg::Collapsed => ImportFormat::Collapsed,
        ImportFormatArg::Austin => ImportFormat::Austin,
        ImportFormatArg::AustinMojo => ImportFormat::AustinMojo,
        ImportFormatArg::Speedscope => ImportFormat::Speedscope,
        ImportFormatArg::Perf => ImportFormat::Perf,
        ImportFormatArg::Gecko => ImportFormat::Gecko,
    });
    let cwd = std::env::current_dir()?;
    let source_roots = if args.source_root.is_empty() { vec![cwd.clone()] } else { args.source_root };
    let run = import_file(&args.file, &ImportOptions { format, source_roots, interval_ms: args.interval_ms, ..Default::default() })?;
    let output = match args.output {
        Some(o) => o,
        None => {
            let stem = args.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "import".into());
            let name: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
            runfile::new_run_path(&runfile::runs_dir(&cwd), &name, std::time::SystemTime::now())
        }
    };
    runfile::write(&run, &output)?;
    let imported = run.meta.imported.as_ref().map(|i| i.note.as_str()).unwrap_or("");
    eprintln!("threadradar: wrote {} ({} threads, {} samples). {imported}", output.display(), run.threads.len(), run.samples.len());
    Ok(ExitCode::SUCCESS)
}
