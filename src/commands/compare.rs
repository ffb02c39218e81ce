//! `threadradar compare [BASE] [NEW]`: what changed between two runs of a program (typically before
//! and after a fix), per function, class or file: crt, threads and the radar, base → new.
//!
//! The comparison is `threadradar_analysis::compare`; this file finds the two runs, turns flags
//! into options and formats the [`Comparison`]. Table helpers are shared with `report`.

use super::report::{pad, pct, resolve_run, seconds, short_path, ColorArg, Style};
use anyhow::{bail, Context};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use threadradar_analysis::{CountedStates, FilterSpec};
use threadradar_analysis::compare::{ArtifactDelta, DeltaStatus, SideFigures, SideSummary};
use threadradar_analysis::{Analysis, ArtifactKind, CompareOptions, Comparison, Level, Options, TimeSource};
use threadradar_analysis::timeline::TimelineIndex;
use threadradar_analysis::tracediff::{self, TraceDiff, TraceOptions};
use threadradar_profiler::run::FileKind;
use threadradar_profiler::{runfile, runset, Run};

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The run before the change: a run file, a directory of runs (its newest run), a run set
    /// (`record --repeat N`) or runs separated by commas (one set).
    /// [default: the second newest run in .threadradar/runs]
    pub base: Option<PathBuf>,

    /// The run after the change: a run file, a directory of runs (its newest run), a run set or
    /// runs separated by commas. [default: the newest run in .threadradar/runs]
    pub new: Option<PathBuf>,

    /// Which artifacts to compare.
    #[arg(long, value_enum, default_value_t = Level::Function)]
    pub level: Level,

    /// List at most N artifacts, largest change of computational runtime first [default: 20 for
    /// the table, all for --json].
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,

    #[command(flatten)]
    pub filter: FilterSpec,

    /// Which thread states count as runtime (in both runs).
    #[arg(long, value_enum, default_value_t = CountedStates::Auto)]
    pub states: CountedStates,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Minimal stack similarity τ of two matched timeline stretches (the trace comparison).
    #[arg(long, value_name = "TAU", default_value_t = 0.2)]
    pub tau: f64,

    /// Colour the radar cells and the changes (green: less runtime, red: more).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,

    /// Both runs (and every run of a run set) are read with these units; the trace comparison
    /// matches their lanes (tasks with `tasks`).
    #[command(flatten)]
    pub units: super::runpath::UnitsArg,
}


pub fn run(args: CompareArgs) -> anyhow::Result<ExitCode> {
    // A side is a run, a run set's manifest, or a comma-separated list of them (one set).
    let (base_list, new_list) = (args.base.as_deref().map(runset::split_list), args.new.as_deref().map(runset::split_list));
    let first = |l: &Option<Vec<PathBuf>>| l.as_ref().map(|l| l[0].clone());
    let (base_set, new_set) = resolve_runs(first(&base_list).as_deref(), first(&new_list).as_deref())?;
    // A run set stands for its runs; its first run is the one shown in the table and the trace.
    let members = |given: &Option<Vec<PathBuf>>, resolved: &Path| -> anyhow::Result<Vec<PathBuf>> {
        match given {
            Some(list) if list.len() > 1 => {
                let mut out = Vec::new();
                for p in list {
                    out.extend(runset::members(&resolve_run(Some(p))?)?);
                }
                Ok(out)
            }
            _ => Ok(runset::members(resolved)?),
        }
    };
    let (base_members, new_members) = (members(&base_list, &base_set)?, members(&new_list, &new_set)?);
    let (base_path, new_path) = (base_members[0].clone(), new_members[0].clone());
    let itself = same_file(&base_set, &new_set);
    let base_run = args.units.apply(runfile::read(&base_path)?)?;
    let new_run = if itself { base_run.clone() } else { args.units.apply(runfile::read(&new_path)?)? };
    if itself {
        eprintln!("threadradar: comparing a run with itself ({}): nothing can have changed", base_path.display());
    }
    // Both runs count the same way: `auto` is CPU time only when both have kernel accounting.
    let options = Options { states: args.states.resolve(&[&base_run, &new_run]), ..Options::default() };
    let filter = args.filter.build()?;
    let level = args.level;
    let compare_options = CompareOptions { level, filter, top: args.top.or(if args.json { None } else { Some(20) }) };
    let base_analysis = Analysis::new(&base_run, &options).with_context(|| format!("cannot analyse {}", base_path.display()))?;
    let new_analysis = Analysis::new(&new_run, &options).with_context(|| format!("cannot analyse {}", new_path.display()))?;
    let mut comparison = Comparison::build(&base_run, &base_analysis, &new_run, &new_analysis, &compare_options).map_err(|e| {
        let which = if base_analysis.counted_samples() == 0 { &base_path } else { &new_path };
        anyhow::Error::new(e).context(format!("cannot compare {}", which.display()))
    })?;
    comparison.base.path = Some(base_path.display().to_string());
    comparison.new.path = Some(new_path.display().to_string());
    if !(0.0..=1.0).contains(&args.tau) || args.tau == 0.0 {
        bail!("--tau {} is not a similarity: pass a value in (0, 1], e.g. the default 0.2", args.tau);
    }
    let mut trace = trace_diff(&base_run, &new_run, args.tau)?;
    if !threadradar_analysis::units::units_of(&base_run).is_threads() || !threadradar_analysis::units::units_of(&new_run).is_threads() {
        trace.notes.push(threadradar_analysis::units::UNITS_NOTE.to_string());
    }
    tracediff::extend_changes(&mut comparison, &trace, &base_run, &new_run);
    let sets = base_members.len() > 1 || new_members.len() > 1 || runset::is_runset(&base_set) || runset::is_runset(&new_set);
    if sets {
        let shown = |given: &Option<Vec<PathBuf>>, set: &Path| match given {
            Some(list) if list.len() > 1 => list.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(","),
            _ => set.display().to_string(),
        };
        comparison.base.path = Some(shown(&base_list, &base_set));
        comparison.new.path = Some(shown(&new_list, &new_set));
        let read_all = |paths: &[PathBuf]| -> anyhow::Result<Vec<Run>> { paths.iter().map(|p| args.units.apply_quietly(runfile::read(p)?)).collect() };
        let (base_runs, new_runs) = (read_all(&base_members)?, read_all(&new_members)?);
        let sig = threadradar_analysis::runset::mark_significance(&mut comparison, &base_runs, &new_runs, &options, level)?;
        trace.notes.push(sig.note);
    }

    let mut out = std::io::stdout().lock();
    let printed = (|| -> anyhow::Result<()> {
        if args.json {
            let mut json = serde_json::to_value(&comparison).map_err(std::io::Error::from)?;
            json["trace"] = serde_json::to_value(&trace).map_err(std::io::Error::from)?;
            serde_json::to_writer(&mut out, &json).map_err(std::io::Error::from)?;
            writeln!(out)?;
        } else {
            let style = Style::new(args.color);
            print_changes(&comparison, &trace, &mut out)?;
            print_header(&comparison, &style, &mut out)?;
            print_artifacts(&comparison, (&base_run, &new_run), &style, &mut out)?;
        }
        out.flush()?;
        Ok(())
    })();
    match printed {
        // The reader went away (`threadradar compare | head`): nothing left to say.
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.context("cannot write the comparison")),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}

/// The trace comparison of the two runs (their timelines matched, `threadradar_analysis::tracediff`).
fn trace_diff(base: &Run, new: &Run, tau: f64) -> anyhow::Result<TraceDiff> {
    let index = |run: &Run| TimelineIndex::new(run).map_err(|e| anyhow::anyhow!("cannot index the timeline: {e}"));
    let (ia, ib) = (index(base)?, index(new)?);
    Ok(TraceDiff::build(base, &ia, new, &ib, &TraceOptions { tau, ..TraceOptions::default() }))
}

/// What changed in words, then the trace comparison in one paragraph, before the tables.
fn print_changes(c: &Comparison, t: &TraceDiff, out: &mut dyn Write) -> anyhow::Result<()> {
    if c.changes.is_empty() {
        writeln!(out, "What changed: nothing beyond sampling noise that the figures below can show")?;
    } else {
        writeln!(out, "What changed:")?;
        for ch in &c.changes {
            let mark = match ch.significant {
                Some(true) => "  (significant)",
                Some(false) => "  (within noise)",
                None => "",
            };
            writeln!(out, "  - {}  [{}]{mark}", ch.statement, ch.evidence_text)?;
        }
    }
    if let Some(note) = &c.suppressed_note {
        writeln!(out, "  ({note})")?;
    }
    let only = |x: &[tracediff::ThreadPair], a: bool| -> f64 {
        // + 0.0: an empty float sum is -0.0.
        x.iter().flat_map(|p| if a { &p.only_in_a } else { &p.only_in_b }).map(|s| s.duration_s).sum::<f64>() + 0.0
    };
    writeln!(
        out,
        "Trace    {:.0}% of the stack time matched (τ = {}): {} thread pairs, {} match groups; {:.2} s only in base, {:.2} s only in new; threads unmatched: {} in base, {} in new",
        t.matched_share * 100.0,
        t.tau,
        t.pairs.len(),
        t.groups.len(),
        only(&t.pairs, true),
        only(&t.pairs, false),
        t.unmatched_a.len(),
        t.unmatched_b.len()
    )?;
    for n in &t.notes {
        writeln!(out, "Note     {n}")?;
    }
    writeln!(out)?;
    Ok(())
}

/// BASE and NEW: as given (a directory means its newest run); NEW defaults to the newest run in
/// `.threadradar/runs`, and BASE, when neither is given, to the one before it.
fn resolve_runs(base: Option<&Path>, new: Option<&Path>) -> anyhow::Result<(PathBuf, PathBuf)> {
    let record = "`threadradar record -- python3 your_program.py`";
    match (base, new) {
        (Some(b), Some(n)) => Ok((resolve_run(Some(b))?, resolve_run(Some(n))?)),
        (Some(b), None) => {
            let base = resolve_run(Some(b))?;
            let (dir, runs) = recorded_runs()?;
            match runs.into_iter().next() {
                Some(newest) => Ok((base, newest)),
                None => bail!(
                    "NEW defaults to the newest run in {}, and there is none: pass the run to compare with as a second argument, or record one with {record}",
                    dir.display()
                ),
            }
        }
        (None, _) => {
            let (dir, runs) = recorded_runs()?;
            match runs.as_slice() {
                [newest, previous, ..] => Ok((previous.clone(), newest.clone())),
                [only] => bail!(
                    "{} holds only one run ({}): record another run with {record} after your change, or pass two run files",
                    dir.display(),
                    only.file_name().unwrap_or_default().to_string_lossy()
                ),
                [] => bail!(
                    "{} holds no runs: record two runs with {record}, one before and one after your change, or pass two run files",
                    dir.display()
                ),
            }
        }
    }
}

/// The runs in `.threadradar/runs`, newest first (none when the directory does not exist).
fn recorded_runs() -> anyhow::Result<(PathBuf, Vec<PathBuf>)> {
    let dir = runfile::runs_dir(Path::new("."));
    match runfile::list_runs(&dir) {
        // Runs, not run sets' manifests: `compare` without arguments compares the two newest runs.
        Ok(runs) => Ok((dir, runs.into_iter().filter(|p| !threadradar_profiler::runset::is_runset(p)).collect())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((dir, Vec::new())),
        Err(e) => Err(e).with_context(|| format!("cannot list the runs in {}", dir.display())),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

fn print_header(c: &Comparison, style: &Style, out: &mut dyn Write) -> anyhow::Result<()> {
    let side = |label: &str, s: &SideSummary, out: &mut dyn Write| -> anyhow::Result<()> {
        let (glyph, _) = style.glyph(&s.program.glyph);
        writeln!(
            out,
            "{label}  {}  ({}: {:.1} s, {} threads, {} s counted)   radar {glyph}",
            s.path.as_deref().unwrap_or("(run)"),
            runfile::program_name(&s.command),
            s.duration_s,
            s.thread_count,
            seconds(s.seconds),
        )?;
        Ok(())
    };
    side("Base", &c.base, out)?;
    side("New ", &c.new, out)?;
    let time = match (c.base.time_source, c.new.time_source) {
        (TimeSource::Kernel, TimeSource::Kernel) => "seconds are kernel-accounted CPU time",
        (TimeSource::Samples, TimeSource::Samples) => "seconds are samples × sampling period",
        _ => "seconds are kernel-accounted CPU time in one run and samples × period in the other: compare them with care",
    };
    let counted = if c.base.states == "cpu" {
        "every thread sample weighted by its kernel-accounted CPU time (states cpu)".to_string()
    } else if c.base.states == "computing-cpu" {
        "computing thread samples weighted by their thread's kernel-accounted CPU time (states computing-cpu)".to_string()
    } else {
        format!("thread samples in state {}", c.base.states)
    };
    writeln!(out, "Counted  {counted}; {time}; Δ in percentage points of crt")?;
    Ok(())
}

/// A change of crt in percentage points: `-41.9pp`, and `0.0pp` when it rounds to nothing.
fn delta_pp(d: f64) -> (String, f64) {
    let pp = (d * 1000.0).round() / 10.0;
    if pp == 0.0 {
        ("0.0pp".to_string(), 0.0)
    } else {
        (format!("{pp:+.1}pp"), pp)
    }
}

fn print_artifacts(c: &Comparison, runs: (&Run, &Run), style: &Style, out: &mut dyn Write) -> anyhow::Result<()> {
    let what = match c.level {
        Level::Class => "Classes",
        Level::File => "Files",
        _ => "Functions",
    };
    writeln!(out)?;
    if c.artifacts.is_empty() {
        writeln!(out, "{what}: none matched (check --include / --exclude / --no-stdlib)")?;
        return Ok(());
    }
    writeln!(
        out,
        "{what} by change of computational runtime (crt), {} of {}; {} only in base (removed), {} only in new (added):",
        c.artifacts.len(),
        c.listed,
        c.only_in_base,
        c.only_in_new
    )?;
    let rows: Vec<Row> = c.artifacts.iter().map(|a| Row::of(a, style, runs)).collect();
    // Column widths: the widest cell of each column.
    let mut w = [0usize; COLUMNS];
    for r in &rows {
        for (w, cell) in w.iter_mut().zip(&r.cells) {
            *w = (*w).max(cell.width);
        }
    }
    let [crt_b, crt_n, delta, sec_b, sec_n, thr_b, thr_n, glyph_b, glyph_n] = w;
    let pair = |a: usize, b: usize, min: usize| (a + 3 + b).max(min);
    let tag = c.artifacts.iter().any(|a| a.status != DeltaStatus::Changed);
    let (crt_w, sec_w, thr_w, radar_w) = (pair(crt_b, crt_n, 14), pair(sec_b, sec_n, 7), pair(thr_b, thr_n, 7), pair(glyph_b, glyph_n, 16));
    let delta_w = delta.max(4);
    writeln!(
        out,
        "{:>crt_w$}  {:>delta_w$}  {:>sec_w$}  {:>thr_w$}  {:<radar_w$}  {}artifact",
        "crt base → new",
        "Δcrt",
        "seconds",
        "threads",
        "radar base → new",
        if tag { " ".repeat(8) } else { String::new() }
    )?;
    for (a, r) in c.artifacts.iter().zip(&rows) {
        let [cb, cn, d, sb, sn, tb, tn, gb, gn] = &r.cells;
        let tag = match a.status {
            DeltaStatus::Changed if tag => "        ",
            DeltaStatus::Changed => "",
            DeltaStatus::Added => "added   ",
            DeltaStatus::Removed => "removed ",
        };
        writeln!(
            out,
            "{}  {}  {}  {}  {}  {tag}{}",
            right_of(&format!("{} → {}", right(cb, crt_b), right(cn, crt_n)), crt_b + 3 + crt_n, crt_w),
            right_of(&d.text, d.width, delta_w),
            right_of(&format!("{} → {}", right(sb, sec_b), right(sn, sec_n)), sec_b + 3 + sec_n, sec_w),
            right_of(&format!("{} → {}", right(tb, thr_b), left(tn, thr_n)), thr_b + 3 + thr_n, thr_w),
            pad(&format!("{} → {}", left(gb, glyph_b), left(gn, glyph_n)), glyph_b + 3 + glyph_n, radar_w),
            r.label
        )?;
    }
    Ok(())
}

/// Aligned columns of a row: crt, Δcrt, seconds, threads and radar (base and new for all but Δ).
const COLUMNS: usize = 9;

/// Text that may hold colour codes, and how wide it shows.
struct Cell {
    text: String,
    width: usize,
}

impl Cell {
    fn plain(text: String) -> Cell {
        Cell { width: text.chars().count(), text }
    }
}

fn right_of(text: &str, visible: usize, width: usize) -> String {
    format!("{}{text}", " ".repeat(width.saturating_sub(visible)))
}

fn right(cell: &Cell, width: usize) -> String {
    right_of(&cell.text, cell.width, width)
}

fn left(cell: &Cell, width: usize) -> String {
    pad(&cell.text, cell.width, width)
}

/// The cells of one artifact and its label.
struct Row {
    cells: [Cell; COLUMNS],
    label: String,
}

impl Row {
    fn of(a: &ArtifactDelta, style: &Style, (base_run, new_run): (&Run, &Run)) -> Row {
        let missing = || Cell::plain("—".into());
        let side = |f: Option<&SideFigures>| {
            f.map_or_else(
                || [missing(), missing(), missing(), missing()],
                |f| {
                    let (text, width) = style.glyph(&f.glyph);
                    [Cell::plain(pct(f.crt)), Cell::plain(seconds(f.seconds)), Cell::plain(f.threads.to_string()), Cell { text, width }]
                },
            )
        };
        let [crt_b, sec_b, thr_b, glyph_b] = side(a.base.as_ref());
        let [crt_n, sec_n, thr_n, glyph_n] = side(a.new.as_ref());
        let (delta, pp) = delta_pp(a.crt_delta);
        let delta = Cell { width: delta.chars().count(), text: signed(style, &delta, pp) };
        Row {
            cells: [crt_b, crt_n, delta, sec_b, sec_n, thr_b, thr_n, glyph_b, glyph_n],
            label: label(a, &base_run.meta.cwd, &new_run.meta.cwd),
        }
    }
}

/// `qualname  (file:line)`, or `(file:line → file:line)` when the declaration moved; the new
/// file without its directory when that did not change.
fn label(a: &ArtifactDelta, cwd_base: &str, cwd_new: &str) -> String {
    let at = |file: &str, line: Option<u32>| match line {
        Some(l) if l > 0 && a.kind != ArtifactKind::File => format!("{file}:{l}"),
        _ => file.to_string(),
    };
    let base = a.file_base.as_deref().map(|f| short_path(f, cwd_base));
    let new = a.file_new.as_deref().map(|f| short_path(f, cwd_new));
    let location = match (&base, &new) {
        (Some(b), Some(n)) => {
            let (b_at, n_at) = (at(b, a.line_base), at(n, a.line_new));
            if b_at == n_at {
                b_at
            } else {
                let dir = |p: &str| p.rsplit_once('/').map(|(d, _)| d.to_string());
                let n_short = match dir(n) {
                    Some(d) if dir(b).as_ref() == Some(&d) => n[d.len() + 1..].to_string(),
                    _ => n.clone(),
                };
                format!("{b_at} → {}", at(&n_short, a.line_new))
            }
        }
        (Some(x), None) => at(x, a.line_base),
        (None, Some(x)) => at(x, a.line_new),
        (None, None) => String::new(),
    };
    let kind = match a.file_kind {
        FileKind::Stdlib => " [stdlib]",
        FileKind::ThirdParty => " [3rd-party]",
        _ => "",
    };
    match a.kind {
        ArtifactKind::File => format!("{location}{kind}"),
        _ => format!("{}  ({location}){kind}", a.qualname),
    }
}

/// A change in green when it is a decrease and in red when it is an increase.
fn signed(style: &Style, text: &str, value: f64) -> String {
    if !style.colour || value == 0.0 {
        return text.to_string();
    }
    format!("\x1b[{}m{text}\x1b[0m", if value < 0.0 { "32" } else { "31" })
}
