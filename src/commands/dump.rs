//! `threadradar dump --pid N`: one snapshot of every thread of a running Python program — name,
//! type, state, Python stack (innermost first), what it waits on and who holds it where known —
//! and the deadlocks those waits form. The question a hung program asks.
//!
//! It records the program for a few ticks with the sampler `record --pid` uses (nothing is
//! written) and shows the last tick ([`threadradar_analysis::dump`]): the first tick already
//! reads what each blocked thread waits on, and the later ones let a thread that was just
//! starting or switching show where it settles.

use clap::Args;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use threadradar_analysis::dump::{dump, Dump, DumpThread};
use threadradar_profiler::run::{EndReason, RecordMode, Run, ThreadState};
use threadradar_profiler::sampler::{Sampler, SamplerOptions};

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  threadradar dump --pid 4242\n  threadradar dump --pid 4242 --json")]
pub struct DumpArgs {
    /// The running Python process to look at.
    #[arg(long, value_name = "PID")]
    pub pid: u32,

    /// Print one JSON object: {"pid", "python_version", "at_s", "threads": [...], "deadlocks": [...]}.
    #[arg(long)]
    pub json: bool,
}

/// How long the program is watched, and how often.
const WATCH: Duration = Duration::from_millis(100);
const INTERVAL: Duration = Duration::from_millis(10);

pub fn run(args: DumpArgs) -> anyhow::Result<ExitCode> {
    let run = snapshot(args.pid)?;
    let Some(d) = dump(&run) else {
        anyhow::bail!("no thread of process {} could be read in {} ms; try again, or record it with `threadradar record --pid {}`", args.pid, WATCH.as_millis(), args.pid);
    };
    let version = run.meta.python_version.clone();
    if args.json {
        let out = serde_json::json!({
            "pid": args.pid,
            "python_version": version,
            "at_s": d.at_s,
            "threads": d.threads,
            "deadlocks": d.deadlocks,
        });
        serde_json::to_writer_pretty(std::io::stdout().lock(), &out)?;
        println!();
    } else {
        print!("{}", text(args.pid, version.as_deref(), &run, &d));
    }
    Ok(ExitCode::SUCCESS)
}

/// Samples the program for [`WATCH`] into a run kept in memory.
fn snapshot(pid: u32) -> anyhow::Result<Run> {
    let opts = SamplerOptions { interval: INTERVAL, duration: Some(WATCH), startup_timeout: Duration::from_secs(2), waits: true, sched: false, ..SamplerOptions::default() };
    let command = threadradar_profiler::procfs::cmdline(pid);
    let mut sampler = Sampler::attach(pid, RecordMode::Attach, command, opts)?;
    let stop = AtomicBool::new(false);
    let end = sampler.run_until(&stop, |_| {});
    let run = sampler.finish(end, None);
    if run.samples.is_empty() && end == EndReason::Exited {
        anyhow::bail!("process {pid} ended before it could be read; nothing to show");
    }
    Ok(run)
}

fn state_words(t: &DumpThread) -> String {
    let base = match t.state {
        ThreadState::Computing if t.gil => "running (holds the GIL)".to_string(),
        ThreadState::Computing => "running".to_string(),
        ThreadState::Gil => "waiting for the GIL".to_string(),
        ThreadState::Idle => "idle".to_string(),
    };
    match (&t.blocked, t.state) {
        (Some(call), ThreadState::Idle) => format!("{base} in {call}"),
        _ => base,
    }
}

/// The header line of a thread: `Thread 12345 "a" (Thread) — idle in futex, waiting for …`.
fn header(d: &Dump, t: &DumpThread) -> String {
    let main = if t.is_main { ", main" } else { "" };
    let mut line = format!("Thread {} {:?} ({}{main}) — {}", t.tid, t.name, t.thread_type, state_words(t));
    if let Some(w) = &t.wait {
        if w.kind != "GIL" || t.state != ThreadState::Gil {
            line.push_str(&format!(", waiting for {}", w.describe()));
        }
        match (w.holder, &w.holder_unknown) {
            (Some(h), _) => line.push_str(&format!(" held by {:?} ({})", d.threads[h].name, d.threads[h].tid)),
            (None, Some(why)) => line.push_str(&format!(" — {why}")),
            _ => {}
        }
    }
    line
}

fn text(pid: u32, version: Option<&str>, run: &Run, d: &Dump) -> String {
    let mut out = String::new();
    let program = run.meta.command.join(" ");
    let version = version.map(|v| format!(" (Python {v})")).unwrap_or_default();
    out.push_str(&format!("Process {pid}: {program}{version}, {} threads\n", d.threads.len()));
    for t in &d.threads {
        out.push('\n');
        out.push_str(&header(d, t));
        out.push('\n');
        if t.frames.is_empty() {
            out.push_str("    (no Python frames)\n");
        }
        for f in &t.frames {
            out.push_str(&format!("    {} ({}:{})\n", f.function, f.file, f.line));
        }
    }
    if !d.deadlocks.is_empty() {
        out.push('\n');
    }
    for dl in &d.deadlocks {
        out.push_str(&dl.sentence);
        out.push('\n');
    }
    let unknown = d.threads.iter().filter(|t| t.wait.as_ref().is_some_and(|w| w.holder_unknown.is_some())).count();
    if d.deadlocks.is_empty() && unknown > 0 {
        out.push_str(&format!(
            "\nNo deadlock found among the holders known; {unknown} waiting thread(s) wait on locks whose holder is unknown (a plain Lock keeps no owner; an RLock does).\n"
        ));
    }
    out
}
