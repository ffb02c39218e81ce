//! `threadradar waits RUN`: who waited for whom — the waited-on objects with their waiters, wakers
//! and futile wake-ups, and the wake edges, as a table or (`--json`) for scripts. See docs/waits.md.

use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use threadradar_analysis::waits::{self, WaitsOptions, WaitsView};
use threadradar_profiler::runfile;

#[derive(Args, Debug)]
pub struct WaitsArgs {
    /// A run file, or a directory of runs (its newest run is used).
    pub run: PathBuf,

    /// Only objects whose name, type or label contains this (case-insensitive).
    #[arg(long, value_name = "SUBSTR")]
    pub object: Option<String>,

    /// Start of the time range, seconds from the run's start.
    #[arg(long, value_name = "S")]
    pub from: Option<f64>,

    /// End of the time range, seconds from the run's start.
    #[arg(long, value_name = "S")]
    pub to: Option<f64>,

    /// Ignore the run's kernel scheduler events: infer every edge from the samples.
    #[arg(long)]
    pub no_kernel: bool,

    /// Print objects, edges and intervals as JSON (times in seconds from the run's start).
    #[arg(long)]
    pub json: bool,

    /// How many edges the table lists (the busiest waker → wakee pairs).
    #[arg(long, default_value_t = 15, value_name = "N")]
    pub top: usize,

    #[command(flatten)]
    pub units: super::runpath::UnitsArg,
}

pub fn run(args: WaitsArgs) -> anyhow::Result<ExitCode> {
    let path = super::runpath::resolve_run_path(Some(&args.run))?;
    let run = runfile::read(&path)?;
    run.validate().map_err(threadradar_analysis::AnalysisError::from)?;
    let run = args.units.apply(run)?;
    let opts = WaitsOptions { object: args.object.clone(), from_s: args.from, to_s: args.to, no_kernel: args.no_kernel };
    let view = waits::waits(&run, &opts);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &view)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_table(&mut out, &view, &args)?;
    if let Some(exact) = threadradar_analysis::locksections::analyse(&run) {
        print_handoffs(&mut out, &threadradar_analysis::waits_locks::handoff_table(&run, &exact), &run.meta.cwd, args.top)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Every exact lock hand-off of a run recorded with `--exact-locks` (evidence `lock-event`),
/// those whose wait no sample saw included (the edges above have only the sampled waits').
fn print_handoffs(out: &mut impl Write, h: &[threadradar_analysis::locksections::Handoff], cwd: &str, top: usize) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(out, "{} exact lock hand-offs (evidence lock-event: a release, then the waiter's acquire returned); the top {}:", h.iter().map(|x| x.count).sum::<usize>(), top.min(h.len()))?;
    writeln!(out, "{:>6}  {:<20}    {:<20} {:<16} {:>9}  place", "count", "releaser", "waiter", "lock", "waited")?;
    for x in h.iter().take(top) {
        let place = x.place.as_deref().map(|p| p.strip_prefix(cwd).map(|f| f.trim_start_matches('/')).unwrap_or(p)).unwrap_or("");
        writeln!(out, "{:>6}  {:<20} -> {:<20} {:<16} {:>7.1} ms  {place}", x.count, clip(&x.from, 20), clip(&x.to, 20), x.lock, x.waited_s * 1e3)?;
    }
    Ok(())
}

fn print_table(out: &mut impl Write, view: &WaitsView, args: &WaitsArgs) -> std::io::Result<()> {
    for note in &view.evidence.notes {
        writeln!(out, "note: {note}")?;
    }
    if view.objects.is_empty() {
        match &args.object {
            Some(o) => writeln!(out, "no thread waited on an object matching {o:?}: run without --object to list them all")?,
            None => writeln!(out, "no thread waited on anything in this run (sleeps are not waits)")?,
        }
        return Ok(());
    }
    writeln!(out, "{:<40} {:>6} {:>9} {:>8} {:>8} {:>7}  wakers", "object", "waits", "wait s", "p50 ms", "p95 ms", "futile")?;
    for o in &view.objects {
        let total: u64 = o.wakers.values().sum();
        let mut wakers: Vec<(&String, &u64)> = o.wakers.iter().collect();
        wakers.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let w: Vec<String> = wakers.iter().take(4).map(|(n, c)| format!("{} {:.0}%", clip(n, 20), **c as f64 * 100.0 / total as f64)).collect();
        writeln!(
            out,
            "{:<40} {:>6} {:>9.3} {:>8.1} {:>8.1} {:>7}  {}",
            clip(&o.object, 40),
            o.waits,
            o.wait_s,
            o.p50_s * 1e3,
            o.p95_s * 1e3,
            o.futile_wakeups,
            if w.is_empty() { "-".to_string() } else { w.join(", ") }
        )?;
    }
    // The busiest waker → wakee pairs per object and evidence.
    let mut pairs: std::collections::BTreeMap<(String, String, String, &'static str), (u64, f64)> = Default::default();
    for e in &view.edges {
        let p = pairs.entry((e.object.clone(), e.waker.clone(), e.wakee.clone(), e.evidence.as_str())).or_default();
        p.0 += 1;
        p.1 += e.confidence;
    }
    let mut pairs: Vec<_> = pairs.into_iter().collect();
    pairs.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
    writeln!(out)?;
    writeln!(out, "{} edges; the top {}:", view.edges.len(), args.top.min(pairs.len()))?;
    writeln!(out, "{:>6}  {:<20}    {:<20} {:<32} {:<15} {:>5}", "edges", "waker", "wakee", "object", "evidence", "conf")?;
    for ((object, waker, wakee, ev), (n, conf)) in pairs.into_iter().take(args.top) {
        writeln!(out, "{:>6}  {:<20} -> {:<20} {:<32} {:<15} {:>5.2}", n, clip(&waker, 20), clip(&wakee, 20), clip(&object, 32), ev, conf / n as f64)?;
    }
    Ok(())
}

fn clip(s: &str, n: usize) -> String {
    let s: String = s.chars().filter(|c| !c.is_control()).collect();
    if s.chars().count() <= n {
        s
    } else {
        s.chars().take(n - 1).chain(['…']).collect()
    }
}
