//! `threadradar sections RUN`: every critical section of the program's source (tree-sitter,
//! `docs/sections.md`), every execution of each in the run, its variability and its outliers —
//! as a table, or as JSON (`--json`, times in seconds since the run's start).

use anyhow::bail;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use threadradar_analysis::sections::{self, SectionOptions, SectionsView};
use threadradar_profiler::{runfile, sections::discover_run};

#[derive(Args, Debug)]
pub struct SectionsArgs {
    /// A run file, or a directory of runs (its newest run is used).
    pub run: PathBuf,

    /// Print the sections and their executions as JSON.
    #[arg(long)]
    pub json: bool,

    /// The configuration: a `pyproject.toml` (its `[tool.threadradar]`) or a `threadradar.toml`
    /// (default: the project's, in the nearest directory at or above the run's working directory
    /// that has either).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// An execution longer than this many medians is an outlier.
    #[arg(long, default_value_t = 5.0, value_name = "X")]
    pub outlier_factor: f64,

    /// An execution longer than this quantile of its section is an outlier.
    #[arg(long, default_value_t = 0.99, value_name = "Q")]
    pub outlier_quantile: f64,

    /// The exact sections of a run recorded with `record --exact-locks`: every execution of every
    /// lock, from the interpreter's acquire and release calls (with --json: as JSON).
    #[arg(long)]
    pub exact: bool,

    #[command(flatten)]
    pub units: super::runpath::UnitsArg,
}

pub fn run(args: SectionsArgs) -> anyhow::Result<ExitCode> {
    if !(args.outlier_factor.is_finite() && args.outlier_factor > 0.0) {
        bail!("--outlier-factor must be a positive number (got {}); the default is 5", args.outlier_factor);
    }
    if !(args.outlier_quantile > 0.0 && args.outlier_quantile <= 1.0) {
        bail!("--outlier-quantile must be in (0, 1] (got {}); the default is 0.99", args.outlier_quantile);
    }
    let path = super::runpath::resolve_run_path(Some(&args.run))?;
    let run = runfile::read(&path)?;
    run.validate().map_err(threadradar_analysis::AnalysisError::from)?;
    let run = args.units.apply(run)?;
    if args.exact {
        let Some(view) = threadradar_analysis::locksections::analyse(&run) else {
            bail!("{} was recorded without lock events; record it again with `threadradar record --exact-locks` (root) to list exact sections", path.display());
        };
        let mut out = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer(&mut out, &view)?;
            writeln!(out)?;
        } else {
            super::sections_exact::print(&view, &run.meta.cwd, &mut out)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let found = discover_run(&run, args.config.as_deref()).map_err(anyhow::Error::msg)?;
    for note in &found.notes {
        eprintln!("threadradar: {note}");
    }
    let options = SectionOptions { outlier_factor: args.outlier_factor, outlier_quantile: args.outlier_quantile };
    let view = sections::analyse(&run, &found.sections, &options);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &view)?;
        writeln!(out)?;
    } else {
        print_table(&view, &run.meta.cwd, &mut out)?;
        if run.locks.is_some() {
            writeln!(out, "\nThis run has exact lock events: `threadradar sections --exact {}` lists every execution.", path.display())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Milliseconds with a sensible number of digits (the MCP's sections text uses it too).
pub(crate) fn ms(s: f64) -> String {
    let m = s * 1e3;
    if m >= 100.0 {
        format!("{m:.0} ms")
    } else if m >= 10.0 {
        format!("{m:.1} ms")
    } else {
        format!("{m:.2} ms")
    }
}

fn print_table(view: &SectionsView, cwd: &str, out: &mut impl Write) -> std::io::Result<()> {
    if view.sections.is_empty() {
        writeln!(out, "No critical sections found in the program's own code (rules and configuration: docs/sections.md).")?;
        return Ok(());
    }
    writeln!(out, "{}", view.how)?;
    for s in &view.sections {
        let file = s.file.strip_prefix(cwd).map(|f| f.trim_start_matches('/')).unwrap_or(&s.file);
        let ty = s.lock_type.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
        writeln!(out)?;
        writeln!(out, "{file}:{}-{}  {}  lock {}{ty}", s.line, s.end_line, s.function, s.lock)?;
        if s.kind == threadradar_analysis::sections::SectionKind::FromWaits {
            writeln!(out, "  found {}", s.kind.how_found())?;
        }
        if !s.lock_objects.is_empty() {
            // From the recorded wait targets: how a lock without a name in the source is told apart.
            let objects: Vec<String> = s.lock_objects.iter().map(|o| format!("{} at {}", o.type_name, o.address)).collect();
            writeln!(out, "  threads waited on {}", objects.join(", "))?;
        }
        if s.execution_count == 0 {
            writeln!(out, "  never seen executing in this run: not executed, or every execution was shorter than the sampling interval and fell between samples")?;
            continue;
        }
        writeln!(
            out,
            "  {} executions ({} listed, ≥ {} shorter than ~1 interval)  held {}  median {}  p95 {}  p99 {}  max {}  CV {:.2}",
            s.execution_count,
            s.executions.len(),
            s.short.count_at_least,
            ms(s.total_hold_s),
            ms(s.median_s),
            ms(s.p95_s),
            ms(s.p99_s),
            ms(s.max_s),
            s.cv
        )?;
        writeln!(out, "  others waited {} in total; waiters present in {:.0} % of the held samples", ms(s.others_waited_s), s.waited_share * 100.0)?;
        if !s.outliers.is_empty() {
            writeln!(out, "  {} outliers (> {}):", s.outliers.len(), ms(s.outlier_threshold_s))?;
            for &i in s.outliers.iter().take(20) {
                let e = &s.executions[i];
                let wait = e.wait_s.map(|w| format!(", waited {} to enter", ms(w))).unwrap_or_default();
                writeln!(out, "    #{i} {} at {:.3} s: {} ± {}{wait}, {} others waiting", e.thread, e.start_s, ms(e.duration_s), ms(e.error_s), e.waiters.len())?;
            }
            if s.outliers.len() > 20 {
                writeln!(out, "    … {} more (--json lists all)", s.outliers.len() - 20)?;
            }
        }
    }
    Ok(())
}
