//! `threadradar info RUN`: what a run holds and how well it was sampled.

use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use threadradar_profiler::run::{Run, ThreadState};
use threadradar_profiler::runfile;

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// A run file, or a directory of runs (the newest is used) [default: .threadradar/runs]
    pub run: Option<PathBuf>,

    /// Print the run's meta, processes and threads (with their samples per state) as one JSON
    /// object instead of the table, for scripts and `jq`.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: InfoArgs) -> anyhow::Result<ExitCode> {
    let path = super::runpath::resolve_run_path(args.run.as_deref())?;
    let run = runfile::read(&path)?;
    if args.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &info_json(&run, &path)).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_info(&run, &mut std::io::stdout().lock())?;
    Ok(ExitCode::SUCCESS)
}

/// What `info --json` prints: the file's version, meta and processes, and each thread with its
/// samples per state, and `blocking_io`: how many of its computing samples it slept in an I/O
/// call (part of `computing`, as in the metrics).
fn info_json(run: &Run, path: &std::path::Path) -> serde_json::Value {
    let counts = state_counts(run);
    let threads: Vec<serde_json::Value> = run
        .threads
        .iter()
        .zip(&counts)
        .map(|(t, [c, g, i, io])| {
            let mut v = serde_json::to_value(t).unwrap_or_default();
            v["samples"] = serde_json::json!({ "computing": c, "gil": g, "idle": i, "blocking_io": io });
            v
        })
        .collect();
    serde_json::json!({
        "path": path,
        "version": run.version,
        "meta": run.meta,
        "processes": run.processes,
        "tables": { "strings": run.strings.len(), "files": run.files.len(), "functions": run.functions.len(), "frames": run.frames.len(), "stacks": run.stacks.len() },
        "threads": threads,
        "tasks": { "count": run.tasks.len(), "runs": run.task_runs.len(), "states": run.task_states.len(), "info": run.tasks_info },
    })
}

/// Samples per thread in each state: computing, GIL, idle; and the computing samples in which
/// the thread slept in blocking I/O.
fn state_counts(run: &Run) -> Vec<[u64; 4]> {
    let mut counts = vec![[0u64; 4]; run.threads.len()];
    for s in &run.samples {
        for t in &s.threads {
            let i = match t.state {
                ThreadState::Computing => 0,
                ThreadState::Gil => 1,
                ThreadState::Idle => 2,
            };
            counts[t.thread as usize][i] += 1;
            if sleeps_in_io(run, t) {
                counts[t.thread as usize][3] += 1;
            }
        }
    }
    counts
}

/// A computing sample in which the kernel said the thread slept in a call (`read`, `recvfrom`,
/// `poll`, … asleep, or disk I/O uninterruptibly): blocking I/O, which the metrics count as
/// computing (the paper's `Runnable`, spec §1) but which used no CPU. A thread running in the
/// kernel (`kernel`) or in user space (none) computes.
fn sleeps_in_io(run: &Run, t: &threadradar_profiler::run::ThreadSample) -> bool {
    t.state == ThreadState::Computing && t.blocked.is_some_and(|b| run.str(b) != "kernel")
}

/// Prints the run's metadata and a table of its threads.
pub fn print_info(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    let m = &run.meta;
    writeln!(out, "command      {}", m.command.join(" "))?;
    writeln!(out, "python       {}", m.python_version.as_deref().unwrap_or("?"))?;
    let pids: Vec<String> = m.pids.iter().map(|p| p.to_string()).collect();
    writeln!(out, "processes    {} (pid {})", m.pids.len(), pids.join(", "))?;
    // How each process was read, and where its files are when its `/` was not ours.
    if m.unchanged_thread_reads > 0 {
        writeln!(out, "unchanged    {} thread observations not read: the scheduler's switch events showed the thread had not run since it was last read asleep", m.unchanged_thread_reads)?;
    }
    for p in run.processes.iter().filter(|p| p.reader.is_some() || p.root.is_some()) {
        let root = p.root.as_deref().map(|r| format!("; its / is {r}")).unwrap_or_default();
        writeln!(out, "read         pid {} by {}{}", p.pid, p.reader.as_deref().unwrap_or("an unnamed reader"), root)?;
    }
    if m.imported.is_none() {
        let states = match &run.sched {
            Some(s) => format!("sampled at each tick from /proc (state, system call, CPU time); context switches and wake-ups kernel-exact ({})", s.source),
            None => "sampled at each tick from /proc (state, system call, CPU time); no scheduler events".to_string(),
        };
        writeln!(out, "states       {states}")?;
    }
    // An imported file that does not record its interval: the run's is assumed.
    let assumed = m.imported.as_ref().is_some_and(|i| i.unknown.iter().any(|k| k == "interval"));
    writeln!(
        out,
        "samples      {} in {:.2} s at {:.1} ms{}: {:.0} Hz achieved ({:.1}% of target), {} missed, {} late, {} failed, {} thread reads skipped",
        m.sample_count,
        m.duration_s,
        m.interval_ms,
        if assumed { " (assumed: the file does not record its interval; import it again with --interval-ms)" } else { "" },
        m.achieved_rate_hz,
        100.0 * m.achieved_rate_hz * m.interval_ms / 1000.0,
        m.missed_samples,
        m.late_samples,
        m.failed_samples,
        m.skipped_threads
    )?;
    let status = match m.exit_status {
        Some(s) => match (s.code, s.signal) {
            (Some(c), _) => format!(", exit code {c}"),
            (_, Some(sig)) => format!(", killed by signal {sig}"),
            _ => String::new(),
        },
        None => String::new(),
    };
    match &m.imported {
        // An imported run: where it came from and what that format does not record.
        Some(imp) => writeln!(out, "imported     from {} ({}): {}", imp.file, imp.format, imp.note)?,
        None => writeln!(out, "ended        {:?}{}", m.end_reason, status)?,
    }
    if m.partial {
        writeln!(out, "partial      the recorder stopped before finishing the file (killed?): this is the run up to its last write, with the interpreter's function names")?;
    }
    for w in &m.warnings {
        writeln!(out, "warning      {w}")?;
    }
    let mut types: Vec<&str> = run.threads.iter().map(|t| t.thread_type.as_str()).collect();
    types.sort();
    types.dedup();
    writeln!(out, "threads      {} of {} types ({})", run.threads.len(), types.len(), types.join(", "))?;
    if let Some(line) = tasks_line(run) {
        writeln!(out, "tasks        {line}")?;
    }
    writeln!(out)?;
    // Per-thread counts by state.
    let counts = state_counts(run);
    writeln!(out, "{:<22} {:<16} {:>7} {:>7} {:>10} {:>12} {:>7} {:>7} {:>9}", "thread", "type", "pid", "tid", "computing", "blocking I/O", "gil", "idle", "cpu s")?;
    for (i, t) in run.threads.iter().enumerate() {
        let cpu = match (t.cpu_ns_first, t.cpu_ns_last) {
            (Some(a), Some(b)) => format!("{:.3}", (b.saturating_sub(a)) as f64 / 1e9),
            _ => "-".into(),
        };
        let [c, g, idle, io] = counts[i];
        writeln!(
            out,
            "{:<22} {:<16} {:>7} {:>7} {:>10} {:>12} {:>7} {:>7} {:>9}",
            clip(&t.name, 22),
            clip(&t.thread_type, 16),
            t.pid,
            t.tid,
            c,
            io,
            g,
            idle,
            cpu
        )?;
    }
    if counts.iter().any(|c| c[3] > 0) {
        writeln!(out)?;
        writeln!(out, "blocking I/O: the computing samples in which the kernel said the thread slept in an I/O call (read, recv, poll, disk…); the metrics count them as computing (docs/run-format.md, \"Thread states\"), cpu s says how little CPU they used")?;
    }
    Ok(())
}

/// The asyncio tasks line: how many, of how many coroutines, and where they were read from (or
/// why they were not); `None` for a run that says nothing about tasks.
fn tasks_line(run: &Run) -> Option<String> {
    let info = run.tasks_info.as_ref()?;
    if let Some(note) = &info.note {
        return Some(if run.tasks.is_empty() { note.clone() } else { format!("{} asyncio tasks; {note}", run.tasks.len()) });
    }
    let mut coros: Vec<&str> = run.tasks.iter().map(|t| t.coro.as_str()).collect();
    coros.sort();
    coros.dedup();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    // The coroutines by name (the tasks' types), the first few.
    const NAMED: usize = 5;
    let more = if coros.len() > NAMED { format!(" … +{}", coros.len() - NAMED) } else { String::new() };
    let named = format!("{}{more}", coros.iter().take(NAMED).copied().collect::<Vec<_>>().join(", "));
    let units = if run.tasks.is_empty() { "" } else { "; `--units tasks` counts them as the units" };
    Some(format!(
        "{} of {} ({named}), {} runs on threads, {} state changes; read from {}{units}",
        plural(run.tasks.len(), "asyncio task", "asyncio tasks"),
        plural(coros.len(), "coroutine", "coroutines"),
        run.task_runs.len(),
        run.task_states.len(),
        info.source
    ))
}

/// Cuts a name to `n` characters for a table column, marking the cut.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(n.saturating_sub(1)).collect();
        c.push('…');
        c
    }
}
