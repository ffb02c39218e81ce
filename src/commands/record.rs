//! `threadradar record`: launch or attach to a Python program, sample it, write the run file.

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};
use threadradar_profiler::error::RecordError;
use threadradar_profiler::run::{EndReason, ExitStatus, RecordMode, Run};
use threadradar_profiler::runfile;
use threadradar_profiler::sampler::{Sampler, SamplerOptions};

#[derive(Args, Debug, Clone)]
#[command(after_help = "Examples:\n  threadradar record -- python3 app.py --workers 8\n  threadradar record --subprocesses -- python3 -m pytest tests/\n  threadradar record --pid 4242 --duration 10")]
pub struct RecordArgs {
    /// Where to write the run [default: .threadradar/runs/<time>-<program>.json]
    #[arg(short, long, value_name = "RUN")]
    pub output: Option<PathBuf>,

    /// Milliseconds between samples.
    #[arg(long, value_name = "MS", default_value_t = 3.0)]
    pub interval_ms: f64,

    /// Stop after this many seconds (a launched program is then terminated).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,

    /// Also sample Python subprocesses (and their children).
    #[arg(long)]
    pub subprocesses: bool,

    /// Attach to a running Python process instead of launching one.
    #[arg(long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<u32>,

    /// Do not draw the progress line.
    #[arg(long)]
    pub no_progress: bool,

    /// Record the scheduler's context switches and wake-ups of the program's threads
    /// (perf_event_open on sched:sched_switch / sched_waking). On by default where permitted
    /// (root or kernel.perf_event_paranoid <= -1); otherwise off, with one line saying why.
    #[arg(long, overrides_with = "no_sched")]
    pub sched: bool,

    /// Do not record scheduler events.
    #[arg(long, overrides_with = "sched")]
    pub no_sched: bool,

    /// Do not read what blocked threads wait on (system call targets, lock/queue objects).
    #[arg(long)]
    pub no_waits: bool,

    /// Do not read asyncio tasks (CPython 3.14+; see docs/asyncio.md).
    #[arg(long)]
    pub no_tasks: bool,

    /// Record every acquire and release of the interpreter's locks exactly, through kernel
    /// uprobes on its lock functions (root only; see docs/sections.md). Off by default: each
    /// probe hit costs the program a few microseconds (docs/benchmarks.md).
    #[arg(long)]
    pub exact_locks: bool,

    /// With --exact-locks: stop the probes (and go on sampling) when more than this many lock
    /// events arrive in one second; the run's warnings say when.
    #[arg(long, value_name = "EVENTS", default_value_t = threadradar_profiler::uprobes::DEFAULT_CAP_PER_S, requires = "exact_locks")]
    pub exact_locks_cap: u64,
    /// Record the program N times, one after the other, as one run set: the runs go to RUN-1.json …
    /// RUN-N.json and RUN is the set's manifest (see docs/run-format.md, "Run sets").
    #[arg(long, value_name = "N", conflicts_with = "pid")]
    pub repeat: Option<u32>,
    /// Print a `threadradar: progress …` line on stderr every second (for editors).
    #[arg(long, hide = true)]
    pub progress_lines: bool,

    /// The program to launch and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND", required_unless_present = "pid")]
    pub command: Vec<String>,
}

impl RecordArgs {
    /// The defaults of `threadradar record -- COMMAND`, for commands that record on the user's
    /// behalf (`demo`, `test`) and change a few fields.
    pub fn launching(command: Vec<String>) -> RecordArgs {
        RecordArgs {
            output: None,
            interval_ms: 3.0,
            duration: None,
            subprocesses: false,
            pid: None,
            no_progress: false,
            sched: false,
            no_sched: false,
            no_waits: false,
            no_tasks: false,
            exact_locks: false,
            exact_locks_cap: threadradar_profiler::uprobes::DEFAULT_CAP_PER_S,
            repeat: None,
            progress_lines: false,
            command,
        }
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

/// Whether the user asked to stop (Ctrl-C, or the editor's stop): a repeated recording records
/// no further run.
pub fn stopped() -> bool {
    STOP.load(Ordering::SeqCst)
}
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);
static CHILD: AtomicU32 = AtomicU32::new(0);

/// What a recording produced, for callers such as `demo`.
pub struct Recorded {
    pub path: PathBuf,
    pub run: Run,
    pub exit: ExitCode,
}

pub fn run(args: RecordArgs) -> anyhow::Result<ExitCode> {
    if let Some(n) = args.repeat {
        return repeat(&args, n);
    }
    let rec = record(&args)?;
    summarize(&rec.run, &rec.path);
    say!("  see it: threadradar report {}", shell_quote(&rec.path));
    Ok(rec.exit)
}

/// `record --repeat N`: N recordings, then the run set's manifest listing them. Stops early after
/// Ctrl-C, and the manifest then lists the runs recorded so far.
fn repeat(args: &RecordArgs, n: u32) -> anyhow::Result<ExitCode> {
    if !(1..=1000).contains(&n) {
        anyhow::bail!("--repeat must be between 1 and 1000 (got {n}); 5 runs are usually enough to see the spread");
    }
    let program = runfile::program_name(&args.command);
    let manifest = match &args.output {
        Some(p) => p.clone(),
        None => default_output(&format!("{program}.runset"))?,
    };
    let stem = manifest.to_string_lossy().trim_end_matches(".json").trim_end_matches(".runset").to_string();
    let mut runs = Vec::new();
    let mut exit = ExitCode::SUCCESS;
    for i in 1..=n {
        say!("threadradar: run {i} of {n}");
        let one = RecordArgs { output: Some(PathBuf::from(format!("{stem}-{i}.json"))), repeat: None, command: args.command.clone(), ..*args };
        let rec = record(&one)?;
        summarize(&rec.run, &rec.path);
        runs.push(rec.path);
        exit = rec.exit;
        if STOP.load(Ordering::SeqCst) {
            say!("threadradar: interrupted: the run set holds the {} run(s) recorded so far", runs.len());
            break;
        }
    }
    threadradar_profiler::runset::write(&manifest, &program, &args.command, &runs)?;
    say!("threadradar: run set of {} runs → {}", runs.len(), manifest.display());
    say!("  see its spread: threadradar report {}", shell_quote(&manifest));
    Ok(exit)
}

/// Records according to `args`; writes the run file and returns it.
pub fn record(args: &RecordArgs) -> anyhow::Result<Recorded> {
    if !(args.interval_ms.is_finite() && args.interval_ms >= 0.05 && args.interval_ms <= 10_000.0) {
        anyhow::bail!("--interval-ms must be between 0.05 and 10000 (got {}); the default is 3", args.interval_ms);
    }
    if let Some(d) = args.duration {
        if !(d.is_finite() && d > 0.0) {
            anyhow::bail!("--duration must be a positive number of seconds (got {d})");
        }
    }
    install_signal_handler();
    let opts = SamplerOptions {
        interval: Duration::from_secs_f64(args.interval_ms / 1000.0),
        duration: args.duration.map(Duration::from_secs_f64),
        subprocesses: args.subprocesses,
        waits: !args.no_waits,
        tasks: !args.no_tasks,
        sched: !args.no_sched,
        exact_locks: args.exact_locks.then_some(args.exact_locks_cap),
        ..SamplerOptions::default()
    };

    let (mut child, pid, mode, command) = match args.pid {
        Some(pid) => (None, pid, RecordMode::Attach, threadradar_profiler::procfs::cmdline(pid)),
        None => {
            // Its own process group, so that ending it (after --duration, or a second Ctrl-C)
            // reaches every process it started, and so that a terminal's Ctrl-C reaches only
            // threadradar, which passes it on exactly once.
            use std::os::unix::process::CommandExt;
            let child = std::process::Command::new(&args.command[0])
                .args(&args.command[1..])
                .process_group(0)
                .spawn()
                .map_err(|e| RecordError::Launch { command: args.command.join(" "), cause: e })?;
            CHILD.store(child.id(), Ordering::SeqCst);
            let pid = child.id();
            (Some(child), pid, RecordMode::Launch, args.command.clone())
        }
    };
    let program = runfile::program_name(&command);

    let command_line = command.join(" ");
    let mut sampler = match Sampler::attach(pid, mode, command, opts) {
        Ok(s) => s,
        Err(e) => {
            if let Some(c) = child.as_mut() {
                if !matches!(e, RecordError::ExitedBeforeSampling) {
                    kill_group(c.id(), libc::SIGKILL);
                }
                let _ = c.wait();
            }
            return Err(e.into());
        }
    };

    let path = match &args.output {
        Some(p) => p.clone(),
        None => default_output(&program)?,
    };
    // Written while recording, so that a recorder that is killed leaves a readable run.
    let live = runfile::live_path(&path);
    sampler.stream_to(&live);
    if let Err(why) = sampler.start_sched() {
        // Asked for explicitly: say so; by default only when it could matter (one line).
        say!("threadradar: {why}");
    }
    if let Err(why) = sampler.start_locks() {
        say!("threadradar: {why}");
    }
    let pb = progress_bar(args.no_progress);
    // For editors: a first line soon (a test can be over in a second), then one a second, and the
    // totals at the end, so even the shortest run reports its samples and threads.
    let mut next_line = Duration::from_millis(250);
    let mut last_line = String::new();
    let end = sampler.run_until(&STOP, |p| {
        if args.progress_lines {
            last_line = format!("threadradar: progress {:.1} s, {} samples, {} threads", p.elapsed.as_secs_f64(), p.samples, p.threads);
            if p.elapsed >= next_line {
                next_line = p.elapsed + Duration::from_secs(1);
                // Nobody reads the lines any more (the editor that started the test is gone):
                // stop as on Ctrl-C, so the run is written and the program does not outlive it.
                if !say_line(&last_line) {
                    STOP.store(true, Ordering::SeqCst);
                }
            }
        }
        pb.set_message(format!(
            "{:>6.1}s  {} samples  {} threads  {:.0} Hz ({:.0}% of {:.0}){}",
            p.elapsed.as_secs_f64(),
            p.samples,
            p.threads,
            p.achieved_rate_hz,
            100.0 * p.achieved_rate_hz / p.target_rate_hz,
            p.target_rate_hz,
            behind_reason(p)
        ));
        pb.tick();
    });
    pb.finish_and_clear();
    if !last_line.is_empty() {
        say_line(&last_line);
    }

    // A program that ended on its own has its status ready; take it before writing.
    let mut status = None;
    if end == EndReason::Exited {
        if let Some(c) = child.as_mut() {
            status = c.wait().ok().map(to_exit_status);
        }
    }
    let mut run = sampler.finish(end, status);
    if run.samples.is_empty() {
        // Nothing was appended to the run file (it is created at the first write with samples).
        let stopped = stop_child(child.as_mut(), end);
        if run.meta.pids.is_empty() {
            return Err(RecordError::NoPythonProcess { command: command_line, seconds: run.meta.duration_s }.into());
        }
        // How it ended says why (a crash, an exception at start-up): "… (the program ended with exit code 1)".
        let ended = status.map(|s| (s, None)).or(stopped).map(|(st, sent)| format!(" ({})", how_it_ended(st, sent))).unwrap_or_default();
        return Err(RecordError::NoSamples { ended }.into());
    }
    if let Some(l) = &run.locks {
        // What the probes cost and what they missed, said once.
        say!(
            "threadradar: exact locks: {} lock events recorded, {} lost{}",
            l.events,
            l.lost_events,
            l.stopped.as_ref().map(|w| format!("; {w}")).unwrap_or_default()
        );
        if l.events == 0 {
            say!("threadradar: no thread of the program called the probed lock functions; an interpreter stripped of its symbol table and built with link-time optimisation (Debian's 3.14 and 3.15) calls private copies of them that cannot be found by name: see docs/sections.md, \"Exact lock events\"");
        }
    }
    if let Some(note) = run.tasks_info.as_ref().and_then(|t| t.note.as_deref()) {
        say!("threadradar: {note}");
    }
    // Write before dealing with the program, so nothing recorded is lost whatever it does next.
    runfile::write(&run, &path).with_context(|| format!("the run as recorded so far is in {}", live.display()))?;
    let _ = std::fs::remove_file(&live);

    let exit = match child.as_mut() {
        Some(c) => {
            let st = match status {
                Some(s) => Some(s),
                None => {
                    let stopped = stop_child(Some(c), end);
                    if let Some((st, signal)) = stopped {
                        say_line(&format!("threadradar: {}", how_it_ended(st, signal)));
                        // The run was written before the program was stopped; add how it ended.
                        run.meta.exit_status = Some(st);
                        run.meta.stopped_with = signal.map(|s| signal_name(s).to_string());
                        runfile::write(&run, &path).with_context(|| "the recording is lost".to_string())?;
                    }
                    stopped.map(|(st, _)| st)
                }
            };
            exit_code(st)
        }
        None => ExitCode::SUCCESS,
    };
    Ok(Recorded { path, run, exit })
}

/// One line on stderr; false when it could not be written (a closed pipe). Unlike `eprintln!`,
/// never panics: a recording must be written, and its program stopped, whoever stopped reading.
fn say_line(line: &str) -> bool {
    use std::io::Write;
    writeln!(std::io::stderr().lock(), "{line}").is_ok()
}

fn install_signal_handler() {
    // The first Ctrl-C (or SIGTERM) stops sampling; the run is written and the Ctrl-C is passed on
    // to a launched program, which may take its time to finish. A second one kills the program
    // and everything it started.
    let _ = ctrlc::set_handler(|| {
        STOP.store(true, Ordering::SeqCst);
        if INTERRUPTS.fetch_add(1, Ordering::SeqCst) >= 1 {
            let pid = CHILD.load(Ordering::SeqCst);
            if pid != 0 {
                kill_group(pid, libc::SIGKILL);
            }
        }
    });
}

/// Why sampling falls behind, for the progress line: ticks that take longer than the interval
/// (many threads, deep stacks), or ticks that are quick but start late (the machine is busy).
fn behind_reason(p: &threadradar_profiler::sampler::Progress) -> String {
    if !p.behind {
        return String::new();
    }
    let interval = 1.0 / p.target_rate_hz;
    let tick = p.tick.as_secs_f64();
    if tick > 0.8 * interval {
        format!("  behind: reading {} threads takes {:.2} ms a tick, the interval is {:.2} ms", p.threads, tick * 1e3, interval * 1e3)
    } else {
        format!("  behind: ticks take {:.2} ms but start late (the CPU is busy with other work)", tick * 1e3)
    }
}

/// Sends `signal` to the launched program's process group (the program and what it started).
fn kill_group(pgid: u32, signal: i32) {
    // SAFETY: kill(2) takes no pointers. `pgid` is the pid of a child we started with
    // `process_group(0)` (so a group id, never 0: `-0` would signal our own group), and the child
    // is not reaped before this, so the group id cannot have been reused.
    unsafe {
        libc::kill(-(pgid as i32), signal);
    }
}

/// Whether any process of the group is still alive (zombies not yet reaped count).
fn group_alive(pgid: u32) -> bool {
    // SAFETY: kill(2) takes no pointers, and signal 0 sends nothing: it only checks that a
    // process of the group exists. `pgid` is as in `kill_group`.
    unsafe { libc::kill(-(pgid as i32), 0) == 0 }
}

/// How long a launched program gets after SIGINT, and again after SIGTERM, when `--duration` ends
/// the recording.
const GRACE: Duration = Duration::from_secs(2);

/// Ends a launched program after recording stopped early; returns its status and the last signal
/// threadradar sent it.
///
/// - Ctrl-C (or SIGTERM to threadradar): SIGINT to the program's process group, once, then wait
///   for as long as it takes; a second Ctrl-C kills the group (see `install_signal_handler`).
/// - `--duration`: SIGINT, then SIGTERM after a grace period, then SIGKILL after another, each to
///   the whole group, until every process of the group has ended.
fn stop_child(child: Option<&mut Child>, end: EndReason) -> Option<(ExitStatus, Option<i32>)> {
    let c = child?;
    let pgid = c.id();
    let wait_for = |c: &mut Child, st: &mut Option<std::process::ExitStatus>, d: Option<Duration>| -> bool {
        let until = d.map(|d| Instant::now() + d);
        loop {
            if st.is_none() {
                if let Ok(Some(s)) = c.try_wait() {
                    *st = Some(s);
                }
            }
            // Done when the program has ended and no process of its group is left.
            if st.is_some() && !group_alive(pgid) {
                return true;
            }
            if until.is_some_and(|u| Instant::now() >= u) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let mut status = None;
    let last = match end {
        EndReason::Exited => return c.wait().ok().map(|s| (to_exit_status(s), None)),
        EndReason::Interrupted => {
            kill_group(pgid, libc::SIGINT);
            say!("threadradar: passed the interrupt on; waiting for the program to end (press Ctrl-C again to kill it)");
            // A second Ctrl-C kills the group from the signal handler; this wait then ends.
            while status.is_none() {
                if let Ok(s) = c.wait() {
                    status = Some(s);
                }
            }
            let killed = INTERRUPTS.load(Ordering::SeqCst) >= 2;
            Some(if killed { libc::SIGKILL } else { libc::SIGINT })
        }
        EndReason::Duration => {
            let mut last = None;
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
                kill_group(pgid, signal);
                last = Some(signal);
                let grace = if signal == libc::SIGKILL { None } else { Some(GRACE) };
                if wait_for(c, &mut status, grace) {
                    break;
                }
            }
            last
        }
    };
    let st = match status {
        Some(s) => s,
        None => c.wait().ok()?,
    };
    Some((to_exit_status(st), last))
}

/// `SIGINT` for 2.
fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGKILL => "SIGKILL",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// One sentence on how a program that threadradar stopped ended.
fn how_it_ended(st: ExitStatus, sent: Option<i32>) -> String {
    let sent = sent.map(|s| format!(" (threadradar sent {} to its process group)", signal_name(s))).unwrap_or_default();
    match (st.code, st.signal) {
        (Some(c), _) => format!("the program ended with exit code {c}{sent}"),
        (_, Some(sig)) => format!("the program was ended by {}{sent}", signal_name(sig)),
        _ => format!("the program ended{sent}"),
    }
}

fn to_exit_status(s: std::process::ExitStatus) -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    ExitStatus { code: s.code(), signal: s.signal() }
}

fn exit_code(s: Option<ExitStatus>) -> ExitCode {
    match s {
        Some(ExitStatus { code: Some(c), .. }) => ExitCode::from(c.clamp(0, 255) as u8),
        Some(ExitStatus { signal: Some(sig), .. }) => ExitCode::from((128 + sig).clamp(0, 255) as u8),
        _ => ExitCode::SUCCESS,
    }
}

fn progress_bar(disabled: bool) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    if disabled {
        pb.set_draw_target(ProgressDrawTarget::hidden());
    } else {
        // indicatif draws nothing when stderr is not a terminal.
        pb.set_draw_target(ProgressDrawTarget::stderr_with_hz(10));
    }
    pb.set_style(ProgressStyle::with_template("{spinner:.cyan} threadradar recording {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()));
    pb
}

fn default_output(program: &str) -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let dir = runfile::runs_dir(&cwd);
    std::fs::create_dir_all(&dir).map_err(|e| RecordError::RunDir { path: dir.clone(), source: e })?;
    Ok(runfile::new_run_path(&dir, program, std::time::SystemTime::now()))
}

/// One line on stderr saying what was recorded and where it went.
pub fn summarize(run: &Run, path: &Path) {
    let m = &run.meta;
    let target = 1000.0 / m.interval_ms;
    let how = match m.end_reason {
        EndReason::Exited => "the program exited",
        EndReason::Duration => "the duration elapsed",
        EndReason::Interrupted => "interrupted",
    };
    say!(
        "threadradar: recorded {} samples of {} threads in {:.1} s ({:.0} Hz, {:.1}% of the {:.0} Hz asked; {} missed, {} late; {}) → {}",
        m.sample_count,
        run.threads.len(),
        m.duration_s,
        m.achieved_rate_hz,
        100.0 * m.achieved_rate_hz / target,
        target,
        m.missed_samples,
        m.late_samples,
        how,
        path.display()
    );
}

fn shell_quote(p: &Path) -> String {
    let s = p.display().to_string();
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c)) {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
