//! `threadradar report [RUN]`: the thread-aware metrics and clusters of a run, as a table or JSON.
//!
//! Everything is computed by `threadradar_analysis`; this file finds the run, turns flags into
//! analysis options and formats the [`ReportView`].

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use threadradar_analysis::glyph::{ClusterColour, GlyphCell};
use threadradar_analysis::{FilterSpec, Units};
use threadradar_analysis::view::{ArtifactView, ThreadView};
use threadradar_analysis::{
    Analysis, ArtifactFilter, ClusterMethod, CountedStates, Level, Options, ReportView, ThreadFilter, TimeSource, ViewOptions,
};
use threadradar_profiler::run::FileKind;
use threadradar_analysis::runset::{ArtifactSpread, ProgramSpread};
use threadradar_profiler::runset::{self, RunSet};
use threadradar_profiler::{runfile, Run};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A run file, or a directory of runs (its newest run is used).
    /// [default: .threadradar/runs in the current directory]
    pub run: Option<PathBuf>,

    /// Which artifacts to list.
    #[arg(long, value_enum, default_value_t = Level::Function)]
    pub level: Level,

    /// List at most N artifacts, highest computational runtime first [default: 20 for the table,
    /// all for --json].
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,

    #[command(flatten)]
    pub filter: FilterSpec,

    /// Leave a thread out of every metric and cluster, by name (repeatable).
    #[arg(long, value_name = "NAME")]
    pub exclude_thread: Vec<String>,

    /// Leave every thread of a type out of every metric and cluster (repeatable).
    #[arg(long, value_name = "TYPE")]
    pub exclude_type: Vec<String>,

    /// Which thread states count as runtime [default: [tool.threadradar] states of the project
    /// in the current directory, else auto = computing-cpu when the run has kernel CPU
    /// accounting, else computing].
    #[arg(long, value_enum)]
    pub states: Option<CountedStates>,

    /// Clustering: COP-KMeans with the paper's must-link constraints, or plain k-means.
    #[arg(long, value_enum, default_value_t = KMeansArg::Cop)]
    pub kmeans: KMeansArg,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Colour the radar cells.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,

    #[arg(long, value_name = "CONTAINER_PATH=HOST_PATH", help = super::sourceroot::HELP)]
    pub source_root: Vec<String>,

    #[command(flatten)]
    pub units: super::runpath::UnitsArg,
}




#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KMeansArg {
    Cop,
    Plain,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}



pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let path = resolve_run(args.run.as_deref())?;
    if let Some(set) = runset::read(&path)? {
        return report_runset(&args, &path, set);
    }
    let mut run = runfile::read(&path)?;
    let roots = super::sourceroot::roots(&args.source_root, project_config())?;
    roots.apply(&mut run);
    let sources = super::sourceroot::check(&run);
    let run = args.units.apply(run)?;
    let options = Options {
        states: counted_states(&args),
        threads: ThreadFilter::by_names(&run, &args.exclude_thread, &args.exclude_type)?,
        method: match args.kmeans {
            KMeansArg::Cop => ClusterMethod::CopKMeans,
            KMeansArg::Plain => ClusterMethod::KMeans,
        },
    };
    let filter = artifact_filter(&args).build()?;
    let view_options = ViewOptions {
        level: args.level,
        top: args.top.or(if args.json { None } else { Some(20) }),
        filter,
        ..ViewOptions::default()
    };
    let analysis = Analysis::new(&run, &options)?;
    let mut view = ReportView::build(&run, &analysis, &view_options)?;
    view.run.path = Some(path.display().to_string());
    let mut out = std::io::stdout().lock();
    let printed = (|| -> anyhow::Result<()> {
        if args.json {
            // The view, and which of the program's files are here as recorded.
            let mut v = serde_json::to_value(&view)?;
            if let Some(o) = v.as_object_mut() {
                o.insert("sources".into(), serde_json::to_value(&sources)?);
            }
            serde_json::to_writer(&mut out, &v).map_err(std::io::Error::from)?;
            writeln!(out)?;
        } else {
            let style = Style::new(args.color);
            print_header(&view, &style, &mut out)?;
            if let Some(line) = super::sourceroot::sentence(&sources, &roots) {
                writeln!(out, "{line}")?;
            }
            match view_options.level {
                Level::Program => print_threads(&view, &style, &mut out)?,
                level => print_artifacts(&view, level, &run, &style, &mut out)?,
            }
        }
        out.flush()?;
        Ok(())
    })();
    written(printed)
}

/// Prints the program radar and the top functions and classes of the program's own code in `run`:
/// what `demo` shows after recording. It is `report --no-stdlib --no-third-party --top 10`, not a
/// default of its own (the default everywhere lists everything), and it says so with the command.
pub fn print_overview(run: &Run, path: &Path, out: &mut dyn Write) -> anyhow::Result<()> {
    let style = Style::new(ColorArg::Auto);
    let analysis = Analysis::new(run, &Options::default())?;
    let own_code = || ArtifactFilter::all().hide(FileKind::Stdlib).hide(FileKind::ThirdParty);
    let view = |level| ReportView::build(run, &analysis, &ViewOptions { level, top: Some(10), filter: own_code(), ..Default::default() });
    let functions = match view(Level::Function) {
        Ok(v) => v,
        Err(e) => {
            writeln!(out, "{e}")?;
            return Ok(());
        }
    };
    print_header(&functions, &style, out)?;
    writeln!(
        out,
        "         (own code only: `threadradar report {} --no-stdlib --no-third-party --top 10 [--level class]`; without these flags `report` lists everything, as the panels and editors do)",
        path.display()
    )?;
    print_artifacts(&functions, Level::Function, run, &style, out)?;
    let classes = view(Level::Class)?;
    if !classes.artifacts.is_empty() {
        print_artifacts(&classes, Level::Class, run, &style, out)?;
    }
    Ok(())
}

/// The run to report on: a file as given, the newest run of a directory, or the newest run in
/// `.threadradar/runs`.
pub(crate) fn resolve_run(arg: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match arg {
        Some(p) if !p.is_dir() => return Ok(p.to_path_buf()),
        Some(p) => p.to_path_buf(),
        None => runfile::runs_dir(Path::new(".")),
    };
    let runs = match runfile::list_runs(&dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "there is no {} here: record a run with `threadradar record -- python3 your_program.py`, or pass a run file",
            dir.display()
        ),
        Err(e) => return Err(e).with_context(|| format!("cannot list the runs in {}", dir.display())),
    };
    match runs.into_iter().next() {
        Some(p) => Ok(p),
        None => bail!("{} holds no run files: record one with `threadradar record -- python3 your_program.py`", dir.display()),
    }
}

/// Terminal styling: ANSI colours for the three cluster colours, or nothing.
pub(crate) struct Style {
    pub(crate) colour: bool,
}

impl Style {
    pub(crate) fn new(choice: ColorArg) -> Style {
        let colour = match choice {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        };
        Style { colour }
    }

    /// One radar cell: the average-level block in the cluster's colour, the sum-level block in the
    /// same colour dimmed (the glyph's weak sector), then the thread count.
    fn cell(&self, c: &GlyphCell) -> String {
        if !self.colour {
            return c.to_string();
        }
        let code = Style::code(c.colour);
        format!("\x1b[1;{code}m{}\x1b[0m\x1b[2;{code}m{}\x1b[0m\x1b[{code}m×{}\x1b[0m", c.avg.block(), c.sum.block(), c.threads)
    }

    fn code(c: ClusterColour) -> &'static str {
        match c {
            ClusterColour::Low => "34",
            ClusterColour::Middle => "33",
            ClusterColour::High => "31",
        }
    }

    fn paint(&self, c: ClusterColour, text: &str) -> String {
        if self.colour {
            format!("\x1b[{}m{text}\x1b[0m", Style::code(c))
        } else {
            text.to_string()
        }
    }

    pub(crate) fn glyph(&self, cells: &[GlyphCell]) -> (String, usize) {
        let plain: usize = cells.iter().map(|c| c.to_string().chars().count()).sum::<usize>() + cells.len().saturating_sub(1);
        (cells.iter().map(|c| self.cell(c)).collect::<Vec<_>>().join(" "), plain)
    }
}

pub(crate) fn pad(s: &str, visible: usize, width: usize) -> String {
    format!("{s}{}", " ".repeat(width.saturating_sub(visible)))
}

pub(crate) fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

pub(crate) fn seconds(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A path as the user knows it: relative to the recording's directory, else the last two parts.
pub(crate) fn short_path(path: &str, cwd: &str) -> String {
    if !cwd.is_empty() {
        if let Some(rest) = path.strip_prefix(cwd).and_then(|r| r.strip_prefix('/')) {
            return rest.to_string();
        }
    }
    let parts: Vec<&str> = path.rsplitn(3, '/').collect();
    if parts.len() == 3 {
        format!("…/{}/{}", parts[1], parts[0])
    } else {
        path.to_string()
    }
}

fn print_header(view: &ReportView, style: &Style, out: &mut dyn Write) -> anyhow::Result<()> {
    let r = &view.run;
    let command = if r.command.is_empty() { "(unknown command)".to_string() } else { r.command.join(" ") };
    if let Some(p) = &r.path {
        writeln!(out, "Run      {p}")?;
    }
    let python = r.python_version.as_deref().map(|v| format!("Python {v}, ")).unwrap_or_default();
    let units = if r.units == Units::Tasks { "units: tasks and threads" } else { "threads" };
    writeln!(
        out,
        "Program  {command}  ({python}{:.1} s, {} samples every {} ms, {} {units})",
        r.duration_s, r.sample_count, r.interval_ms, r.thread_count
    )?;
    let time = match r.time_source {
        TimeSource::Kernel => "seconds are kernel-accounted CPU time",
        TimeSource::Samples => "seconds are samples × sampling period (no kernel accounting)",
    };
    let excluded = if r.excluded_threads.is_empty() { String::new() } else { format!(", {} threads excluded", r.excluded_threads.len()) };
    let counted = if r.states == "cpu" {
        format!("{:.3} s of kernel-accounted CPU time in {} thread samples (states cpu: FRQ in µs)", r.seconds, view.counted_samples)
    } else if r.states == "computing-cpu" {
        format!(
            "{:.3} s of kernel-accounted CPU time on {} computing thread samples (states computing-cpu: FRQ in µs)",
            r.seconds, view.counted_samples
        )
    } else {
        format!("{} thread samples in state {} (FRQ)", view.counted_samples, r.states)
    };
    writeln!(
        out,
        "Counted  {counted}{excluded}; {}; clustering {}",
        time,
        if r.clustering == "cop" { "COP-KMeans" } else { "plain k-means" }
    )?;
    let (glyph, _) = style.glyph(&view.program.glyph);
    if r.units == Units::Tasks {
        // Task units: say how they were formed, and count tasks and threads apart.
        writeln!(out, "Units    {}", threadradar_analysis::units::UNITS_NOTE.trim_start_matches("units: "))?;
        let active = view.threads.iter().filter(|t| t.samples > 0);
        let tasks = active.clone().filter(|t| t.task).count();
        let words = threadradar_analysis::units::split_words(tasks, active.count() - tasks);
        writeln!(out, "Radar    {glyph}   {words}, {} types (coroutines and thread classes)", view.program.thread_types)?;
        writeln!(out, "         (per cluster, low → high: average level, sum level ▂ <33% ▅ <66% █ ≥66%, ×units)")?;
        return Ok(());
    }
    writeln!(out, "Radar    {glyph}   {} threads, {} thread types", view.program.threads, view.program.thread_types)?;
    writeln!(out, "         (per cluster, low → high: average level, sum level ▂ <33% ▅ <66% █ ≥66%, ×threads)")?;
    Ok(())
}

fn print_threads(view: &ReportView, style: &Style, out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(out)?;
    let mut threads: Vec<&ThreadView> = view.threads.iter().collect();
    threads.sort_by(|a, b| b.crt.total_cmp(&a.crt).then(a.id.cmp(&b.id)));
    let name_w = threads.iter().map(|t| t.name.chars().count()).max().unwrap_or(4).clamp(6, 32);
    let type_w = threads.iter().map(|t| t.thread_type.chars().count()).max().unwrap_or(4).clamp(4, 24);
    let unit = if view.run.units == Units::Tasks { "unit" } else { "thread" };
    writeln!(out, "{:>7}  {:>8}  {:>8}  {:<7}  {:<name_w$}  {:<type_w$}  tid", "crt", "seconds", "samples", "cluster", unit, "type")?;
    let colours = ClusterColour::for_clusters(view.program.clusters.len());
    for t in threads {
        let label = match t.cluster.and_then(|i| colours.get(i)) {
            Some(ClusterColour::Low) => "low",
            Some(ClusterColour::Middle) => "middle",
            Some(ClusterColour::High) => "high",
            None => "-",
        };
        let cluster = match t.cluster.and_then(|i| colours.get(i)) {
            Some(&c) => pad(&style.paint(c, label), label.len(), 7),
            None => pad(label, label.len(), 7),
        };
        writeln!(
            out,
            "{:>7}  {:>8}  {:>8}  {cluster}  {:<name_w$}  {:<type_w$}  {}",
            pct(t.crt),
            seconds(t.seconds),
            t.samples,
            truncate(&t.name, name_w),
            truncate(&t.thread_type, type_w),
            t.tid
        )?;
    }
    Ok(())
}

fn truncate(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(w.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn print_artifacts(view: &ReportView, level: Level, run: &Run, style: &Style, out: &mut dyn Write) -> anyhow::Result<()> {
    let what = match level {
        Level::Function => "Functions",
        Level::Class => "Classes",
        Level::File => "Files",
        Level::Program => "Threads",
    };
    writeln!(out)?;
    if view.artifacts.is_empty() {
        writeln!(out, "{what}: none matched (check --include / --exclude / --no-stdlib)")?;
        return Ok(());
    }
    writeln!(out, "{what} by computational runtime (crt), {} of {}:", view.artifacts.len(), view.listed)?;
    let glyphs: Vec<(String, usize)> = view.artifacts.iter().map(|a| style.glyph(&a.glyph)).collect();
    let glyph_w = glyphs.iter().map(|g| g.1).max().unwrap_or(5).max(5);
    writeln!(
        out,
        "{:>7} {:>7} {:>8} {:>4} {:>5}  {:<glyph_w$}  artifact",
        "crt", "self", "seconds", if view.run.units == Units::Tasks { "unit" } else { "thr" }, "types", "radar"
    )?;
    for (a, (glyph, visible)) in view.artifacts.iter().zip(glyphs) {
        writeln!(
            out,
            "{:>7} {:>7} {:>8} {:>4} {:>5}  {}  {}",
            pct(a.crt),
            pct(a.self_crt),
            seconds(a.seconds),
            a.threads,
            a.thread_types,
            pad(&glyph, visible, glyph_w),
            artifact_label(a, &run.meta.cwd)
        )?;
    }
    Ok(())
}

fn artifact_label(a: &ArtifactView, cwd: &str) -> String {
    let file = short_path(&a.file, cwd);
    let kind = match a.file_kind {
        FileKind::Stdlib => " [stdlib]",
        FileKind::ThirdParty => " [3rd-party]",
        _ => "",
    };
    match a.kind {
        threadradar_analysis::ArtifactKind::File => format!("{file}{kind}"),
        _ if a.line > 0 => format!("{}  {file}:{}{kind}", a.qualname, a.line),
        _ => format!("{}  {file}{kind}", a.qualname),
    }
}

// ---- Run sets (`record --repeat N`): the manifest, and `report RUNSET` ----

#[derive(serde::Serialize)]
struct RunSetReport {
    runset: RunSetSummary,
    level: Level,
    program: ProgramSpread,
    artifacts: Vec<ArtifactSpread>,
    stability: threadradar_analysis::runset::Stability,
    notes: Vec<String>,
}

#[derive(serde::Serialize)]
struct RunSetSummary {
    path: String,
    label: String,
    runs: Vec<String>,
}

/// `report RUNSET`: the mean and spread of each figure over the runs, and the stability of the
/// clusterings (COP-KMeans and plain k-means).
fn report_runset(args: &ReportArgs, path: &Path, set: RunSet) -> anyhow::Result<ExitCode> {
    let mut runs: Vec<Run> = set.runs.iter().map(|p| args.units.apply(runfile::read(p)?)).collect::<anyhow::Result<_>>()?;
    let roots = super::sourceroot::roots(&args.source_root, project_config())?;
    runs.iter_mut().for_each(|r| {
        roots.apply(r);
    });
    let level = args.level;
    let options = |run: &Run, method| -> anyhow::Result<Options> {
        Ok(Options { states: counted_states(args), threads: ThreadFilter::by_names(run, &args.exclude_thread, &args.exclude_type)?, method })
    };
    let mut cop = Vec::new();
    let mut plain = Vec::new();
    for (run, p) in runs.iter().zip(&set.runs) {
        cop.push(Analysis::new(run, &options(run, ClusterMethod::CopKMeans)?).with_context(|| format!("cannot analyse {}", p.display()))?);
        plain.push(Analysis::new(run, &options(run, ClusterMethod::KMeans)?).with_context(|| format!("cannot analyse {}", p.display()))?);
    }
    let chosen = if args.kmeans == KMeansArg::Cop { &cop } else { &plain };
    let filter = artifact_filter(args).build()?;
    let mut views = Vec::new();
    for ((run, a), p) in runs.iter().zip(chosen).zip(&set.runs) {
        let v = ReportView::build(run, a, &ViewOptions { level, top: None, filter: filter.clone(), ..ViewOptions::default() })
            .with_context(|| format!("cannot report on {}", p.display()))?;
        views.push(v);
    }
    let n = runs.len();
    let mut notes = Vec::new();
    if n == 1 {
        notes.push("the run set holds one run: the spread (sd) and the stability are unavailable; record more with `--repeat N`".to_string());
    }
    let commands: std::collections::BTreeSet<_> = runs.iter().map(|r| runfile::program_name(&r.meta.command)).collect();
    if commands.len() > 1 {
        notes.push(format!("the runs are of different programs ({}): the spread mixes them", commands.into_iter().collect::<Vec<_>>().join(", ")));
    }
    let (program, mut artifacts) = threadradar_analysis::runset::spreads(&views);
    let listed = artifacts.len();
    artifacts.truncate(args.top.or(if args.json { None } else { Some(20) }).unwrap_or(usize::MAX));
    let triples: Vec<(&Run, &Analysis, &Analysis)> = runs.iter().zip(&cop).zip(&plain).map(|((r, c), p)| (r, c, p)).collect();
    let stability = threadradar_analysis::runset::stability(&triples, level);
    let report = RunSetReport {
        runset: RunSetSummary { path: path.display().to_string(), label: set.label, runs: set.runs.iter().map(|p| p.display().to_string()).collect() },
        level,
        program,
        artifacts,
        stability,
        notes,
    };
    let mut out = std::io::stdout().lock();
    let printed = (|| -> anyhow::Result<()> {
        if args.json {
            serde_json::to_writer(&mut out, &report).map_err(std::io::Error::from)?;
            writeln!(out)?;
        } else {
            print_runset(&report, listed, &mut out)?;
        }
        out.flush()?;
        Ok(())
    })();
    written(printed)
}

/// `mean ± sd [min–max]`, or `mean (1 run)`.
use threadradar_analysis::runset::spread_text;

fn print_runset(r: &RunSetReport, listed: usize, out: &mut dyn Write) -> anyhow::Result<()> {
    let n = r.runset.runs.len();
    writeln!(out, "Run set  {}  ({}: {n} runs)", r.runset.path, r.runset.label)?;
    let secs = |x: f64| format!("{x:.2}");
    let count = |x: f64| format!("{x:.1}");
    writeln!(out, "Duration {} s; counted {} s", spread_text(&r.program.duration_s, &secs), spread_text(&r.program.seconds, &secs))?;
    writeln!(out, "Program  threads {}; clusters {}", spread_text(&r.program.threads, &count), spread_text(&r.program.clusters, &count))?;
    let ari = |x: Option<f64>| x.map_or("unavailable".to_string(), |x| format!("{x:.3}"));
    writeln!(
        out,
        "Stability (mean adjusted Rand index of each {}'s thread clusters over {} pairs of runs): COP-KMeans {}, k-means {}",
        format!("{:?}", r.stability.level).to_lowercase(),
        r.stability.pairs,
        ari(r.stability.cop_kmeans_ari),
        ari(r.stability.kmeans_ari)
    )?;
    for note in &r.notes {
        writeln!(out, "Note     {note}")?;
    }
    writeln!(out)?;
    writeln!(out, "Artifacts by mean crt, {} of {listed}; each figure mean ± sd [min–max] over the runs (0 where a run did not execute it):", r.artifacts.len())?;
    for a in &r.artifacts {
        writeln!(
            out,
            "  {}  crt {}  seconds {}  threads {}  (in {}/{n} runs)",
            a.qualname,
            spread_text(&a.crt, &|x| format!("{:.1}%", x * 100.0)),
            spread_text(&a.seconds, &secs),
            spread_text(&a.threads, &count),
            a.executed_in
        )?;
    }
    Ok(())
}

/// The configuration of the directory the report is run in, read once. A bad file does not stop
/// the report (it is read for defaults only) but is said once on stderr, with its file and line.
fn project_config() -> Option<&'static threadradar_lsp::project::ProjectConfig> {
    static CONFIG: std::sync::OnceLock<Option<threadradar_lsp::project::ProjectConfig>> = std::sync::OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let root = std::env::current_dir().ok()?;
            match threadradar_lsp::project::ProjectConfig::load(&root) {
                Ok(c) => Some(c),
                Err(e) => {
                    eprintln!("threadradar: {e} (this report uses the defaults until it is fixed)");
                    None
                }
            }
        })
        .as_ref()
}

/// `--include`/`--exclude`, else the project's `[tool.threadradar] include`/`exclude` (the
/// directory the report is run in); `--no-stdlib`/`--no-third-party` as given.
fn artifact_filter(args: &ReportArgs) -> FilterSpec {
    let mut spec = args.filter.clone();
    if spec.include.is_empty() && spec.exclude.is_empty() {
        if let Some(c) = project_config() {
            spec.include = c.include.clone();
            spec.exclude = c.exclude.clone();
        }
    }
    spec
}

/// `--states`, else the project's `[tool.threadradar] states` (the directory the report is run
/// in), else auto.
fn counted_states(args: &ReportArgs) -> CountedStates {
    args.states.or_else(|| project_config().and_then(threadradar_lsp::project::counted_states)).unwrap_or_default()
}

/// How writing a report ended: a reader that went away (`threadradar report | head`) leaves
/// nothing to say; another failure is said.
fn written(printed: anyhow::Result<()>) -> anyhow::Result<ExitCode> {
    match printed {
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.context("cannot write the report")),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}
