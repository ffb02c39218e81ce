//! `threadradar export RUN --format F -o FILE`: a run in a format other tools open (Firefox
//! Profiler, Perfetto, speedscope, pprof, collapsed stacks). The conversions live in the
//! `threadradar-formats` crate; this module resolves the run and the output file.

use anyhow::Context;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use threadradar_formats::ExportFormat;
use threadradar_profiler::runfile;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// A run file, or a directory of runs (the newest is used) [default: .threadradar/runs]
    pub run: Option<PathBuf>,

    /// The format to write.
    #[arg(short, long, value_enum)]
    pub format: FormatArg,

    /// Output file (`-` for standard output) [default: the run's name with the format's ending,
    /// in the current directory]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub units: super::runpath::UnitsArg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Firefox Profiler processed profile (profiler.firefox.com → Load a profile from file).
    Firefox,
    /// Perfetto protobuf trace (ui.perfetto.dev → Open trace file, trace_processor).
    Perfetto,
    /// Chrome JSON trace (chrome://tracing; ui.perfetto.dev reads it too).
    Chrome,
    /// speedscope JSON (speedscope.app, `speedscope FILE`).
    Speedscope,
    /// pprof profile.proto, gzipped (`go tool pprof`, Pyroscope, Parca, Grafana).
    Pprof,
    /// Folded stacks, thread as root frame (flamegraph.pl, inferno-flamegraph).
    Collapsed,
}

impl FormatArg {
    fn format(self) -> ExportFormat {
        match self {
            FormatArg::Firefox => ExportFormat::Firefox,
            FormatArg::Perfetto => ExportFormat::Perfetto,
            FormatArg::Chrome => ExportFormat::Chrome,
            FormatArg::Speedscope => ExportFormat::Speedscope,
            FormatArg::Pprof => ExportFormat::Pprof,
            FormatArg::Collapsed => ExportFormat::Collapsed,
        }
    }
}

pub fn run(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let path = super::runpath::resolve_run_path(args.run.as_deref())?;
    let run = runfile::read(&path)?;
    let run = args.units.apply(run)?;
    let format = args.format.format();
    let output = args.output.unwrap_or_else(|| default_output(&path, format));
    if output.as_os_str() == "-" {
        let stdout = std::io::stdout();
        let mut lock = stdout.lock();
        threadradar_formats::export(&run, format, &mut lock)?;
        lock.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    // Write beside the target and rename, so a viewer never opens half a file. No fsync: an
    // export is made again from its run in a moment, and forcing 1–2 GB (a Chrome trace of a
    // million samples) to the disk cost more than writing it (1.3 s of 3 s).
    let dir = output.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".{}.{}.tmp", output.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(), std::process::id()));
    let result = (|| -> anyhow::Result<()> {
        let mut file = std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", output.display()))?;
        threadradar_formats::export(&run, format, &mut file).with_context(|| format!("cannot write {}", output.display()))?;
        std::fs::rename(&tmp, &output).with_context(|| format!("cannot write {}", output.display()))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result?;
    eprintln!("threadradar: wrote {} ({}); {}", output.display(), format.name(), open_hint(format, &output));
    Ok(ExitCode::SUCCESS)
}

/// `<run name>.<ending>` in the current directory.
fn default_output(run: &Path, format: ExportFormat) -> PathBuf {
    let stem = run.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into());
    PathBuf::from(format!("{stem}.{}", format.extension()))
}

/// Where to open what was written.
fn open_hint(format: ExportFormat, output: &Path) -> String {
    let f = output.display();
    match format {
        ExportFormat::Firefox => "open it at profiler.firefox.com (Load a profile from file)".into(),
        ExportFormat::Perfetto => "open it at ui.perfetto.dev (Open trace file)".into(),
        ExportFormat::Chrome => "open it in chrome://tracing or at ui.perfetto.dev (Open trace file)".into(),
        ExportFormat::Speedscope => format!("open it at speedscope.app or with `speedscope {f}`"),
        ExportFormat::Pprof => format!("read it with `go tool pprof -http=: {f}`, or push it to Pyroscope (see docs/formats.md)"),
        ExportFormat::Collapsed => format!("draw it with `flamegraph.pl {f} > flame.svg` or `inferno-flamegraph`"),
    }
}
