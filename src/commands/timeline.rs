//! `threadradar timeline RUN`: every thread's icicle on one time axis — a static chart
//! (`-o chart.svg|png`), the bars as JSON (`--json`), viewport layouts for a renderer
//! (`--layouts`, one request per stdin line), or by default the per-thread overview as text.

use anyhow::bail;
use clap::Args;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use threadradar_analysis::timeline::{self, export, layout, svg, Fold, LayoutRequest, ThreadSelection, TimelineError, TimelineIndex};
use threadradar_profiler::runfile;

#[derive(Args, Debug)]
pub struct TimelineArgs {
    /// A run file, or a directory of runs (its newest run is used).
    pub run: PathBuf,

    /// Write the chart to this file; `.svg` or `.png`.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Print every bar of the selected threads as JSON (times in seconds from the run's start).
    #[arg(long, conflicts_with_all = ["output", "layouts"])]
    pub json: bool,

    /// Answer viewport layout requests: one JSON request per line on stdin, one JSON layout (or
    /// `{"error": …}`) per line on stdout, until stdin ends. See docs/timeline.md.
    #[arg(long, conflicts_with = "output")]
    pub layouts: bool,

    /// Only threads whose name, type or `#id` matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub threads: Option<String>,

    /// Start of the time range, seconds from the run's start.
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub from: Option<f64>,

    /// End of the time range, seconds from the run's start.
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub to: Option<f64>,

    /// θ of the logarithmic time scaling ln(1+θΔt)/θ, per millisecond; 0 is linear.
    #[arg(long, default_value_t = 0.0, value_name = "X", allow_negative_numbers = true)]
    pub theta: f64,

    /// Width of the time axis in px (the chart adds the lane labels).
    #[arg(long, default_value_t = 1200, value_name = "PX")]
    pub width: u32,

    /// Fold the outermost N stack levels into one band.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub fold_top: u16,

    /// Fold runs of standard-library frames into one band each.
    #[arg(long)]
    pub fold_stdlib: bool,

    #[command(flatten)]
    pub units: super::runpath::UnitsArg,
}

pub fn run(args: TimelineArgs) -> anyhow::Result<ExitCode> {
    let png = match args.output.as_ref().map(|o| o.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase)) {
        None => false,
        Some(Some(e)) if e == "svg" => false,
        Some(Some(e)) if e == "png" => true,
        Some(_) => bail!("{} must end in .svg or .png", args.output.as_ref().unwrap().display()),
    };
    let path = super::runpath::resolve_run_path(Some(&args.run))?;
    let run = runfile::read(&path)?;
    run.validate().map_err(threadradar_analysis::AnalysisError::from)?;
    let run = args.units.apply(run)?;
    let index = TimelineIndex::new(&run)?;
    let threads = args.threads.as_deref().map(|p| timeline::select_threads(&run, p)).transpose()?;

    if args.layouts {
        return serve_layouts(&run, &index);
    }
    // --json does not lay out a viewport, but a bad --theta or --width is still a mistake to say.
    if !(args.theta.is_finite() && args.theta >= 0.0) {
        return Err(TimelineError::BadTheta(args.theta).into());
    }
    if args.width == 0 || args.width > layout::MAX_WIDTH_PX {
        return Err(TimelineError::BadWidth(args.width).into());
    }
    if args.json {
        let bars = export::bars(&run, &index, threads.as_deref(), args.from, args.to)?;
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &bars)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let req = LayoutRequest {
        from_s: args.from,
        to_s: args.to,
        width_px: args.width,
        threads: threads.clone().map_or(ThreadSelection::All, ThreadSelection::Ids),
        theta: args.theta,
        fold: Fold { top: args.fold_top, stdlib: args.fold_stdlib, depth: None },
        ..LayoutRequest::default()
    };
    let lay = layout::layout(&run, &index, &req)?;
    let Some(output) = &args.output else {
        print_overview(&run, &index, threads.as_deref(), &lay);
        return Ok(ExitCode::SUCCESS);
    };
    let chart = svg::svg(&lay);
    let bytes = if png {
        let h = svg::height(&lay).ceil() as u32;
        if h > 8192 {
            bail!("the chart would be {h} px high, too high for a PNG: select fewer threads with --threads, fold levels with --fold-top, or write .svg");
        }
        threadradar_lsp::raster::png(&chart, h)?
    } else {
        chart.into_bytes()
    };
    super::outfile::write_atomic(output, &bytes)?;
    println!("wrote {} ({} threads, {:.3}–{:.3} s)", output.display(), lay.lanes.len(), lay.from_s, lay.to_s);
    Ok(ExitCode::SUCCESS)
}

/// The per-thread overview as a table.
fn print_overview(run: &threadradar_profiler::Run, index: &TimelineIndex, threads: Option<&[u32]>, lay: &layout::Layout) {
    let rows = timeline::thread_overview(run, index, threads, Some((lay.from_s, lay.to_s)));
    println!("{:.3}–{:.3} s, sampled every {:.1} ms (shares of each thread's samples)", lay.from_s, lay.to_s, lay.period_s * 1e3);
    println!("{:<24} {:<16} {:>7} {:>6} {:>6} {:>6}  {:<22} top frames", "thread", "type", "samples", "busy", "gil", "idle", "longest wait");
    for r in rows {
        let wait = r.longest_wait.map_or("-".to_string(), |w| {
            format!("{:.3} s {}{} @{:.2}", w.duration_s, w.state.as_str(), w.blocked.map(|k| format!("/{}", k.as_str())).unwrap_or_default(), w.start_s)
        });
        let top: Vec<String> = r.top_frames.iter().map(|t| format!("{} {:.0}%", t.function, t.share * 100.0)).collect();
        println!(
            "{:<24} {:<16} {:>7} {:>5.0}% {:>5.0}% {:>5.0}%  {:<22} {}",
            // A task's row (`--units tasks`) follows its loop thread's, marked as its.
            if run.threads.get(r.thread as usize).is_some_and(threadradar_analysis::units::is_task) { clip(&format!("↳ {}", r.name), 24) } else { clip(&r.name, 24) },
            clip(&r.thread_type, 16),
            r.samples,
            r.busy * 100.0,
            r.gil * 100.0,
            r.idle * 100.0,
            wait,
            top.join(", ")
        );
    }
}

fn clip(s: &str, n: usize) -> String {
    let s: String = s.chars().filter(|c| !c.is_control()).collect();
    if s.chars().count() <= n {
        s
    } else {
        s.chars().take(n - 1).chain(['…']).collect()
    }
}

/// `--layouts`: one request per line in, one answer per line out.
fn serve_layouts(run: &threadradar_profiler::Run, index: &TimelineIndex) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    for line in stdin.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<LayoutRequest>(&line) {
            Ok(req) => match layout::layout(run, index, &req) {
                Ok(l) => serde_json::to_string(&l)?,
                Err(e) => serde_json::json!({ "error": e.to_string() }).to_string(),
            },
            Err(e) => serde_json::json!({ "error": format!("the request is not a layout request ({e}): see docs/timeline.md") }).to_string(),
        };
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}
