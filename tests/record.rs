//! `threadradar record` against real Python processes: what it samples, how it ends, and how it
//! fails.

mod common;

use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use threadradar_profiler::run::{EndReason, FileKind, RecordMode, ThreadState, TypeSource};

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn samples_every_thread_with_names_types_states_and_accounting() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let o = record(&out, &[], &[&script("threads.py"), "2.5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("threads.py done"), "program output passes through");
    let run = read(&out);

    let mut names: Vec<&str> = run.threads.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["MainThread", "heavy", "light", "locked", "sleepy"]);
    let by = |n: &str| run.threads.iter().find(|t| t.name == n).unwrap();
    assert_eq!((by("heavy").thread_type.as_str(), by("heavy").type_source), ("Cruncher", TypeSource::Object));
    assert_eq!(by("sleepy").thread_type, "Thread");
    assert_eq!((by("MainThread").thread_type.as_str(), by("MainThread").is_main), ("_MainThread", true));
    for t in &run.threads {
        assert_eq!(t.pid, run.meta.pids[0]);
        assert!(t.tid > 0 && t.python_id > 0);
        assert!(t.cpu_ns_last >= t.cpu_ns_first, "kernel accounting never goes back");
    }

    // 8x the work → clearly more computing samples; the sleeper and the lock waiter are idle.
    let computing = count_by_name(&run, ThreadState::Computing);
    let idle = count_by_name(&run, ThreadState::Idle);
    let heavy = computing.get("heavy").copied().unwrap_or(0);
    let light = computing.get("light").copied().unwrap_or(0);
    if run.meta.python_version.as_deref().is_some_and(|v| v.ends_with('t')) {
        // Free-threaded (3.13t): no GIL to compete for, so light computes whenever it is not
        // sleeping (about half the time at 3.13t's speed) while heavy computes all the time.
        assert!(2 * heavy > 3 * light.max(1), "heavy {heavy} vs light {light}");
    } else {
        assert!(heavy > 3 * light.max(1), "heavy {heavy} vs light {light}");
    }
    // Of the samples in which each was seen: CPython 3.13t can take seconds to finish after the
    // threads are gone (a daemon thread spinning at shutdown; also without ThreadRadar).
    let seen = |n: &str| run.samples.iter().filter(|s| s.threads.iter().any(|t| run.threads[t.thread as usize].name == n)).count() as u64;
    let (total_sleepy, total_locked) = (seen("sleepy"), seen("locked"));
    assert!(idle.get("sleepy").copied().unwrap_or(0) > total_sleepy * 8 / 10, "{idle:?} of {total_sleepy}");
    assert!(idle.get("locked").copied().unwrap_or(0) > total_locked * 8 / 10, "{idle:?} of {total_locked}");
    // Their blocking calls are named.
    let blocked: std::collections::HashSet<&str> = run
        .samples
        .iter()
        .flat_map(|s| s.threads.iter())
        .filter(|t| run.threads[t.thread as usize].name == "sleepy" && t.state == ThreadState::Idle)
        .filter_map(|t| t.blocked.map(|b| run.str(b)))
        .collect();
    assert!(blocked.contains("clock_nanosleep") || blocked.contains("nanosleep"), "{blocked:?}");
    // The CPU time the kernel accounted to the heavy thread is most of its wall time share.
    let heavy_cpu: u64 = run.samples.iter().flat_map(|s| s.threads.iter()).filter(|t| run.threads[t.thread as usize].name == "heavy").map(|t| t.cpu_ns).sum();
    assert!(heavy_cpu > 500_000_000, "heavy thread CPU {heavy_cpu} ns");

    // Frames resolved to functions and classes from the source, with the file's fingerprint.
    let f = run.functions.iter().find(|f| run.str(f.qualname) == "Cruncher.run").expect("Cruncher.run");
    assert_eq!(f.class.map(|c| run.str(c)), Some("Cruncher"));
    let src = std::fs::read_to_string(script("threads.py")).unwrap();
    let def_line = src.lines().position(|l| l.trim_start().starts_with("def run(self)")).unwrap() as u32 + 1;
    assert_eq!(f.line, def_line);
    let file = &run.files[f.file as usize];
    assert_eq!(file.kind, FileKind::User);
    assert_eq!(file.sha256.as_deref(), Some(threadradar_profiler::source::sha256_hex(src.as_bytes()).as_str()));
    assert!(run.files.iter().any(|f| f.kind == FileKind::Stdlib && run.str(f.path).ends_with("threading.py")));
    assert!(run.functions.iter().any(|f| run.str(f.qualname) == "crunch" && f.class.is_none()));

    // Metadata.
    let m = &run.meta;
    assert_eq!((m.mode, m.end_reason), (RecordMode::Launch, EndReason::Exited));
    assert_eq!(m.exit_status.and_then(|s| s.code), Some(0));
    assert!(m.python_version.as_deref().unwrap_or("").starts_with('3'));
    assert_eq!(m.sample_count as usize, run.samples.len());
}

#[test]
fn sample_count_follows_duration_over_interval() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let o = record(&out, &["--interval-ms", "5"], &[&script("threads.py"), "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out);
    let expected = run.meta.duration_s * 1000.0 / 5.0;
    let got = run.samples.len() as f64;
    assert!((got - expected).abs() <= 0.1 * expected, "{got} samples, expected about {expected}");
    assert!(run.meta.duration_s > 1.8 && run.meta.duration_s < 4.0, "{}", run.meta.duration_s);
    // Timestamps increase and are spaced by about the interval.
    let ts: Vec<u64> = run.samples.iter().map(|s| s.t).collect();
    assert!(ts.windows(2).all(|w| w[1] > w[0]));
    let mean_gap = (ts[ts.len() - 1] - ts[0]) as f64 / (ts.len() - 1) as f64;
    assert!((mean_gap - 5e6).abs() < 0.5e6, "mean gap {mean_gap} ns");
}

#[test]
fn exit_code_passes_through_and_early_exit_keeps_the_run() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let o = record(&out, &[], &[&script("threads.py"), "0.4", "3"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let run = read(&out);
    assert!(!run.samples.is_empty());
    assert_eq!(run.meta.exit_status.and_then(|s| s.code), Some(3));
}

#[test]
fn duration_ends_a_launched_program() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let t0 = Instant::now();
    let o = record(&out, &["--duration", "1"], &[&script("forever.py")]);
    assert!(t0.elapsed() < Duration::from_secs(8));
    let run = read(&out);
    assert_eq!(run.meta.end_reason, EndReason::Duration);
    assert!(run.meta.duration_s < 1.5);
    // Asked to stop with SIGINT first: Python ends on KeyboardInterrupt by SIGINT, 128 + 2.
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(run.meta.stopped_with.as_deref(), Some("SIGINT"));
    assert_eq!(run.meta.exit_status.and_then(|s| s.signal), Some(2));
    assert!(stderr(&o).contains("the program was ended by SIGINT"), "{}", stderr(&o));
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

fn logged(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(str::to_string).collect()
}

fn logged_child(log: &std::path::Path) -> i32 {
    logged(log).iter().find_map(|l| l.strip_prefix("child ").map(|p| p.parse().unwrap())).expect("the program logged its child")
}

#[test]
fn duration_ends_the_whole_process_group_step_by_step() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let log = dir.path().join("signals.log");
    // Ignores SIGINT and SIGTERM for 60 s, and has a child of its own.
    let t0 = Instant::now();
    let o = record(&out, &["--duration", "1"], &[&script("stubborn.py"), log.to_str().unwrap(), "60", "ignore-term"]);
    let took = t0.elapsed();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(128 + 9), "{e}");
    let signals = logged(&log);
    assert_eq!(signals.iter().filter(|l| *l == "SIGINT").count(), 1, "{signals:?}");
    assert_eq!(signals.iter().filter(|l| *l == "SIGTERM").count(), 1, "{signals:?}");
    // SIGINT, 2 s, SIGTERM, 2 s, SIGKILL.
    assert!(took >= Duration::from_secs(5) && took < Duration::from_secs(12), "{took:?}");
    let child = logged_child(&log);
    std::thread::sleep(Duration::from_millis(200));
    assert!(!alive(child), "the program's own child {child} was left running");
    let run = read(&out);
    assert_eq!(run.meta.end_reason, EndReason::Duration);
    assert_eq!(run.meta.stopped_with.as_deref(), Some("SIGKILL"));
    assert_eq!(run.meta.exit_status.and_then(|s| s.signal), Some(9));
    assert!(e.contains("the program was ended by SIGKILL (threadradar sent SIGKILL to its process group)"), "{e}");
}

/// `threadradar ARGS…` with a pseudo-terminal as its controlling terminal, as in a shell.
struct OnPty {
    child: std::process::Child,
    master: std::fs::File,
    output: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl OnPty {
    fn spawn(cwd: &std::path::Path, args: &[&str]) -> OnPty {
        use std::os::fd::FromRawFd;
        use std::os::unix::process::CommandExt;
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty with valid out-pointers; no name, termios or size.
        let r = unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
        assert_eq!(r, 0, "openpty");
        let mut cmd = Command::new(bin());
        cmd.args(args).current_dir(cwd);
        // A new descriptor for each Stdio, which owns (and closes) it: dup's -1 would be no
        // descriptor at all, so it is checked before from_raw_fd.
        let dup = |fd: i32| {
            // SAFETY: dup takes a descriptor by value; `slave` is open until closed below.
            let d = unsafe { libc::dup(fd) };
            assert!(d >= 0, "dup: {}", std::io::Error::last_os_error());
            // SAFETY: `d` is a new, open descriptor nothing else owns.
            unsafe { Stdio::from_raw_fd(d) }
        };
        cmd.stdin(dup(slave)).stdout(dup(slave)).stderr(dup(slave));
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed: setsid and ioctl are, and it allocates nothing
        // (last_os_error only reads errno).
        unsafe {
            // A new session whose controlling terminal is the pty: the terminal's Ctrl-C goes to
            // the foreground process group, threadradar's.
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        // SAFETY: closing our copy of the slave, which we own.
        unsafe { libc::close(slave) };
        // SAFETY: the master fd is ours; the File owns it from here.
        let master = unsafe { std::fs::File::from_raw_fd(master) };
        let output = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (mut reader, sink) = (master.try_clone().unwrap(), output.clone());
        std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        OnPty { child, master, output }
    }

    fn ctrl_c(&mut self) {
        use std::io::Write;
        self.master.write_all(&[3]).unwrap();
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    fn wait_for_text(&self, needle: &str, limit: Duration) {
        let until = Instant::now() + limit;
        while !self.text().contains(needle) {
            assert!(Instant::now() < until, "no {needle:?} in {}", self.text());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn one_ctrl_c_in_a_terminal_waits_for_the_program_and_a_second_kills_it() {
    let _g = serial();
    let dir = tmp();
    let py = python();
    let log = dir.path().join("signals.log");
    let args = |out: &'static str, linger: &'static str| -> Vec<String> {
        ["record", "-o", out, "--", &py, &script("stubborn.py"), log.to_str().unwrap(), linger].iter().map(|s| s.to_string()).collect()
    };

    // One Ctrl-C: the program gets exactly one SIGINT, takes 3 s to finish, and is not killed.
    let a = args("one.json", "3");
    let mut t = OnPty::spawn(dir.path(), &a.iter().map(String::as_str).collect::<Vec<_>>());
    t.wait_for_text("ready", Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    t.ctrl_c();
    let status = t.child.wait().unwrap();
    let took = t0.elapsed();
    let child = logged_child(&log);
    // SAFETY: killing the program's leftover child, which this test started.
    unsafe { libc::kill(child, libc::SIGKILL) };
    assert_eq!(status.code(), Some(5), "{}", t.text());
    assert!(took >= Duration::from_millis(2900), "ended after {took:?}: {}", t.text());
    assert_eq!(logged(&log).iter().filter(|l| *l == "SIGINT").count(), 1, "{:?}", logged(&log));
    let run = read(&dir.path().join("one.json"));
    assert_eq!(run.meta.end_reason, EndReason::Interrupted);
    assert_eq!(run.meta.exit_status.and_then(|s| s.code), Some(5));
    assert!(t.text().contains("press Ctrl-C again to kill it"), "{}", t.text());

    // Two Ctrl-Cs: the program (and its child) are killed at once.
    std::fs::remove_file(&log).unwrap();
    let a = args("two.json", "60");
    let mut t = OnPty::spawn(dir.path(), &a.iter().map(String::as_str).collect::<Vec<_>>());
    t.wait_for_text("ready", Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(500));
    t.ctrl_c();
    t.wait_for_text("press Ctrl-C again", Duration::from_secs(10));
    let t0 = Instant::now();
    t.ctrl_c();
    let status = t.child.wait().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert_eq!(status.code(), Some(128 + 9), "{}", t.text());
    let child = logged_child(&log);
    std::thread::sleep(Duration::from_millis(200));
    assert!(!alive(child), "the program's child {child} survived the kill");
    assert_eq!(read(&dir.path().join("two.json")).meta.stopped_with.as_deref(), Some("SIGKILL"));
}

#[test]
fn messages_say_what_happened() {
    let dir = tmp();
    // A shell that never starts Python.
    let o = threadradar(dir.path(), &["record", "--no-progress", "--subprocesses", "--", "bash", "-c", "sleep 1"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("no Python process appeared") && !e.contains("nothing was sampled"), "{e}");

    // The cause of a failed start, once.
    let o = threadradar(dir.path(), &["record", "--", "/no/such/program"]);
    let e = stderr(&o);
    assert_eq!(e.matches("No such file or directory").count(), 1, "{e}");

    // As root, advice about ptrace_scope does not apply.
    // SAFETY: geteuid takes nothing and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        let o = threadradar(dir.path(), &["record", "--pid", "1", "-o", "x.json"]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(!e.contains("ptrace_scope") && !e.contains("run threadradar as root"), "{e}");
    }

    // A reader that goes away: exit quietly, like other Unix tools.
    let out = dir.path().join("run.json");
    let o = record(&out, &[], &[&script("threads.py"), "0.3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut info = Command::new(bin()).args(["info", out.to_str().unwrap()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(info.stdout.take());
    let o = info.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

#[test]
fn attaches_by_pid_and_leaves_the_target_running() {
    let _g = serial();
    let dir = tmp();
    let mut target = Command::new(python()).arg(script("forever.py")).stdout(Stdio::piped()).spawn().unwrap();
    // Wait for "ready" so the interpreter is up.
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(target.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let out = dir.path().join("run.json");
    let pid = target.id().to_string();
    let o = threadradar(dir.path(), &["record", "--no-progress", "--pid", &pid, "--duration", "1", "-o", out.to_str().unwrap()]);
    let still_running = target.try_wait().unwrap().is_none();
    let _ = target.kill();
    let _ = target.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(still_running, "attaching must not stop the target");
    let run = read(&out);
    assert_eq!(run.meta.mode, RecordMode::Attach);
    assert_eq!(run.meta.pids, vec![target.id()]);
    assert!(run.threads.iter().any(|t| t.name == "busy"));
    assert!(count_by_name(&run, ThreadState::Computing).get("busy").copied().unwrap_or(0) > 100);
}

/// `threadradar record` of `forever.py`, left running.
fn record_forever_in_background(out: &std::path::Path) -> std::process::Child {
    Command::new(bin())
        .args(["record", "--no-progress", "-o", out.to_str().unwrap(), "--", &python(), &script("forever.py")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn sigint_stops_recording_and_keeps_a_complete_run() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let child = record_forever_in_background(&out);
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill takes no pointers; `child` is ours and not yet waited for.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    let run = read(&out);
    assert_eq!(run.meta.end_reason, EndReason::Interrupted);
    assert!(run.samples.len() > 100, "{} samples", run.samples.len());
    // The program got the interrupt forwarded and ended with KeyboardInterrupt (exit 1) or SIGINT.
    // CPython 3.13.5t does not: with a thread spinning in Python, SIGINT never raises
    // KeyboardInterrupt in the main thread (also without ThreadRadar), so `record` kills it.
    let free_threaded = run.meta.python_version.as_deref().is_some_and(|v| v.ends_with('t'));
    let expected: &[i32] = if free_threaded { &[1, 130, 137] } else { &[1, 130] };
    assert!(o.status.code().is_some_and(|c| expected.contains(&c)), "{:?} {}", o.status, stderr(&o));
}

/// An editor runs the recorder with `--progress-lines` and reads its stderr. When the editor goes
/// away (its end of the pipe closes), the recorder stops as on Ctrl-C: the run is written and the
/// program does not go on running on its own (it did: a hanging test kept spinning after
/// code-server was stopped).
#[test]
fn a_reader_that_goes_away_stops_the_recording_and_its_program() {
    use std::io::BufRead;
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let mut child = Command::new(bin())
        .args(["record", "--no-progress", "--progress-lines", "-o", out.to_str().unwrap(), "--", &python(), &script("forever.py")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.by_ref().map_while(Result::ok).find(|l| l.starts_with("threadradar: progress")).expect("a progress line");
    assert!(first.contains(" samples, "), "{first}");
    drop(lines);
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "the recorder went on after its reader left");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.code().is_some(), "ended by itself, not by a panic's abort or a signal: {status:?}");
    let run = read(&out);
    assert_eq!(run.meta.end_reason, EndReason::Interrupted);
    for pid in &run.meta.pids {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
        assert!(!alive, "the program {pid} outlived its recording");
    }
}

#[test]
fn target_killed_mid_run_keeps_what_was_recorded() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let child = record_forever_in_background(&out);
    std::thread::sleep(Duration::from_millis(1200));
    // Kill the Python program (the child of threadradar) with SIGKILL.
    let kids = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id())).unwrap();
    let py: i32 = kids.split_whitespace().next().expect("a child process").parse().unwrap();
    // SAFETY: kill takes no pointers; `py` is the recorder's child, alive until this signal.
    unsafe {
        libc::kill(py, libc::SIGKILL);
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(128 + 9), "{}", stderr(&o));
    let run = read(&out);
    assert_eq!(run.meta.end_reason, EndReason::Exited);
    assert_eq!(run.meta.exit_status.and_then(|s| s.signal), Some(9));
    assert!(run.samples.len() > 100);
}

#[test]
fn follows_python_subprocesses() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let o = record(&out, &["--subprocesses"], &[&script("parent.py"), "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out);
    assert_eq!(run.meta.pids.len(), 2, "{:?}", run.meta.pids);
    assert_eq!(run.processes[1].ppid, Some(run.meta.pids[0]));
    let heavy = run.threads.iter().find(|t| t.name == "heavy").expect("the child's threads are sampled");
    assert_eq!(heavy.pid, run.meta.pids[1]);

    // A root that is not Python (a shell running a test command) does not hold up sampling.
    let out = dir.path().join("shell.json");
    let cmd = format!("{} {} 1.5", python(), script("threads.py"));
    let o = threadradar(dir.path(), &["record", "--no-progress", "--subprocesses", "-o", out.to_str().unwrap(), "--", "bash", "-c", &cmd]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out);
    // Only the last ticks, while the child exits, may fail; not the wait for Python to start.
    assert!(run.meta.failed_samples < 10, "{} failed", run.meta.failed_samples);
    let heavy = run.threads.iter().position(|t| t.name == "heavy").expect("the shell's Python child is sampled") as u32;
    let seen = run.samples.iter().filter(|s| s.threads.iter().any(|t| t.thread == heavy)).count() as f64;
    // The thread lives ~1.5 s: nearly all of that is sampled.
    assert!(seen * run.meta.interval_ms / 1000.0 > 1.2, "heavy sampled for only {seen} ticks");
}

#[test]
fn bad_targets_get_one_clear_sentence() {
    let dir = tmp();
    let o = threadradar(dir.path(), &["record", "--pid", "999999999"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("no process with pid 999999999") && !e.contains("panicked"), "{e}");

    let mut sleep = Command::new("sleep").arg("30").spawn().unwrap();
    let o = threadradar(dir.path(), &["record", "--pid", &sleep.id().to_string(), "-o", "x.json"]);
    let _ = sleep.kill();
    let _ = sleep.wait();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("is not a Python program"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");

    let t0 = Instant::now();
    let o = threadradar(dir.path(), &["record", "--no-progress", "--", "sleep", "20"]);
    assert!(stderr(&o).contains("is not a Python program"), "{}", stderr(&o));
    assert!(t0.elapsed() < Duration::from_secs(6), "the verdict comes quickly and the program is stopped");

    let o = threadradar(dir.path(), &["record", "--", "/no/such/program"]);
    assert!(stderr(&o).contains("could not start `/no/such/program`"), "{}", stderr(&o));

    // A program that exits at once leaves nothing to sample, and no run file.
    let o = threadradar(dir.path(), &["record", "--no-progress", "--", "true"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("exited before it could be sampled"), "{e}");
    assert!(!dir.path().join(".threadradar/runs").exists() || std::fs::read_dir(dir.path().join(".threadradar/runs")).unwrap().next().is_none());
    // A Python program that only lives ~100 ms is still recorded.
    let o = threadradar(dir.path(), &["record", "--no-progress", "-o", "short.json", "--", &python(), "-c", "import time; time.sleep(0.1)"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!read(&dir.path().join("short.json")).samples.is_empty());

    let o = threadradar(dir.path(), &["record", "--interval-ms", "0", "--", "x"]);
    assert!(stderr(&o).contains("--interval-ms must be"), "{}", stderr(&o));
}

#[test]
fn permission_denied_says_how_to_allow_attaching() {
    // Only meaningful as root: run threadradar as `nobody` against a root-owned Python process.
    // SAFETY: geteuid takes nothing and cannot fail.
    if unsafe { libc::geteuid() } != 0 || Command::new("setpriv").arg("--version").output().is_err() {
        skip("root", "needs root and setpriv");
        return;
    }
    let mut target = Command::new(python()).arg(script("forever.py")).stdout(Stdio::null()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin(), "record", "--pid", &target.id().to_string(), "-o", "/tmp/never.json"])
        .output()
        .unwrap();
    let _ = target.kill();
    let _ = target.wait();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("not allowed to read the memory") && e.contains("ptrace_scope"), "{e}");
}

#[test]
fn default_output_goes_to_the_project_runs_directory() {
    let _g = serial();
    let dir = tmp();
    let py = python();
    let o = threadradar(dir.path(), &["record", "--no-progress", "--", &py, &script("threads.py"), "0.5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = threadradar_profiler::runfile::list_runs(&dir.path().join(".threadradar/runs")).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(std::fs::read_dir(dir.path().join(".threadradar/runs")).unwrap().count(), 1, "the file written while recording is gone");
    let name = runs[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with("-threads.json") && name.starts_with("20"), "{name}");
    assert!(stderr(&o).contains(&name), "the summary names the file");
    // `info` on the directory reads the newest run.
    let o = threadradar(dir.path(), &["info"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("heavy"));
    // `info --json`: the same facts for scripts, checked against the run itself.
    let o = threadradar(dir.path(), &["info", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let run = read(&runs[0]);
    assert_eq!(v["version"], 2);
    assert_eq!(v["meta"]["sample_count"], run.meta.sample_count);
    let heavy = v["threads"].as_array().unwrap().iter().find(|t| t["name"] == "heavy").unwrap();
    assert_eq!(heavy["samples"]["computing"], count_by_name(&run, ThreadState::Computing)["heavy"]);
}

#[test]
fn corrupt_and_truncated_run_files_are_reported_not_panicked() {
    let dir = tmp();
    let _g = serial();
    let out = dir.path().join("good.json");
    let o = record(&out, &[], &[&script("threads.py"), "0.5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated.json", bytes[..bytes.len() * 2 / 3].to_vec(), "is truncated"),
        ("corrupt.json", String::from_utf8_lossy(&bytes).replacen("\"samples\":[", "\"samples\":[[1],", 1).into_bytes(), "is corrupt"),
        ("newer.json", String::from_utf8_lossy(&bytes).replacen("\"version\":2", "\"version\":7", 1).into_bytes(), "upgrade threadradar"),
        ("empty.json", Vec::new(), "is empty"),
        ("text.json", b"hello".to_vec(), "not a ThreadRadar run file"),
    ];
    for (name, content, expect) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        let o = threadradar(dir.path(), &["info", p.to_str().unwrap()]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {e}");
        assert!(e.contains(expect), "{name}: {e}");
        assert!(!e.contains("panicked"), "{name}: {e}");
    }
    let o = threadradar(dir.path(), &["info", "missing.json"]);
    assert!(stderr(&o).contains("no run file at missing.json"), "{}", stderr(&o));
}

/// The facts `churn.py` logged about one of its threads.
struct Truth {
    name: String,
    ty: String,
    tid: u32,
    start: f64,
    end: f64,
}

fn churn_truth(log: &std::path::Path) -> Vec<Truth> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(log).unwrap()).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| Truth {
            name: t["name"].as_str().unwrap().to_string(),
            ty: t["type"].as_str().unwrap().to_string(),
            tid: t["tid"].as_u64().unwrap() as u32,
            start: t["start"].as_f64().unwrap(),
            end: t["end"].as_f64().unwrap(),
        })
        .collect()
}

#[test]
fn thread_churn_keeps_one_entry_per_real_thread_with_its_own_name_and_type() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let log = dir.path().join("truth.json");
    let o = record(&out, &["--interval-ms", "1"], &[&script("churn.py"), log.to_str().unwrap(), "600", "6"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out);
    let truth = churn_truth(&log);
    assert_eq!(truth.len(), 600);
    let by_name: std::collections::HashMap<&str, &Truth> = truth.iter().map(|t| (t.name.as_str(), t)).collect();
    let started_at = run.meta.started_at.expect("the run says when it started");

    // One thread once per sample: no thread entry and no OS thread twice in one sample.
    for (i, s) in run.samples.iter().enumerate() {
        let mut ids: Vec<u32> = s.threads.iter().map(|t| t.thread).collect();
        let mut tids: Vec<u32> = s.threads.iter().map(|t| run.threads[t.thread as usize].tid).collect();
        ids.sort();
        tids.sort();
        let n = ids.len();
        ids.dedup();
        tids.dedup();
        assert_eq!(ids.len(), n, "sample {i} lists a thread twice");
        assert_eq!(tids.len(), n, "sample {i} lists an OS thread twice");
    }

    // Every recorded worker is one real thread: its name, native id, type and sample times
    // agree with what that thread logged about itself.
    let mut named = 0;
    let mut workers = 0;
    let mut seen_names = std::collections::HashSet::new();
    for (id, th) in run.threads.iter().enumerate() {
        if th.is_main {
            continue;
        }
        workers += 1;
        let Some(t) = by_name.get(th.name.as_str()) else { continue };
        named += 1;
        assert!(seen_names.insert(th.name.clone()), "{} has two entries", th.name);
        assert_eq!(th.tid, t.tid, "{} recorded with tid {}, but it ran as {}", th.name, th.tid, t.tid);
        if th.type_source != TypeSource::Unknown {
            assert_eq!(th.thread_type, t.ty, "{} has the type of another thread", th.name);
        }
        for (i, s) in run.samples.iter().enumerate() {
            if s.threads.iter().any(|ts| ts.thread == id as u32) {
                let at = started_at + s.t as f64 / 1e9;
                // `start`/`end` were taken before `start()` and after `join()`: the thread lived
                // within them. A sample's time is when its tick began; the walk that saw the
                // thread ended before the next tick began.
                let next = run.samples.get(i + 1).map_or(f64::INFINITY, |n| started_at + n.t as f64 / 1e9);
                assert!(next > t.start && at < t.end, "{} sampled at {at:.4}, but it ran {:.4}..{:.4}", th.name, t.start, t.end);
            }
        }
    }
    assert!(workers > 300, "only {workers} of 600 threads were recorded");
    assert!(named as f64 >= 0.9 * workers as f64, "only {named} of {workers} recorded threads have their own name");
}

#[test]
fn the_users_code_is_user_code_whatever_its_path_looks_like() {
    let _g = serial();
    let dir = tmp();
    let kind_of = |run: &threadradar_profiler::Run, suffix: &str| {
        run.files.iter().find(|f| run.str(f.path).ends_with(suffix)).map(|f| f.kind).unwrap_or_else(|| {
            panic!("no file *{suffix} in {:?}", run.files.iter().map(|f| run.str(f.path)).collect::<Vec<_>>())
        })
    };
    // CPython's own test suite, run as a user runs it: the tests are the user's code.
    let out = dir.path().join("suite.json");
    let o = threadradar(dir.path(), &["record", "--no-progress", "--interval-ms", "1", "-o", out.to_str().unwrap(), "--", &python(), "-m", "test.test_threading_local"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out);
    assert_eq!(kind_of(&run, "/test/test_threading_local.py"), FileKind::User);
    assert_eq!(kind_of(&run, "/threading.py"), FileKind::Stdlib);

    // A project laid out like an interpreter (`lib/python3.11/…`), run from its directory.
    let lib = dir.path().join("proj/lib/python3.11");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::copy(script("threads.py"), lib.join("app.py")).unwrap();
    let out = dir.path().join("proj.json");
    let o = Command::new(bin())
        .args(["record", "--no-progress", "-o", out.to_str().unwrap(), "--", &python(), "lib/python3.11/app.py", "0.5"])
        .current_dir(dir.path().join("proj"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out);
    assert_eq!(kind_of(&run, "/proj/lib/python3.11/app.py"), FileKind::User);
    assert_eq!(kind_of(&run, "/threading.py"), FileKind::Stdlib);
}

#[test]
fn a_recorder_killed_with_sigkill_leaves_a_readable_run() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let rec = record_forever_in_background(&out);
    std::thread::sleep(Duration::from_millis(3000));
    let kids = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", rec.id())).unwrap();
    let py: i32 = kids.split_whitespace().next().expect("a child process").parse().unwrap();
    let killed_at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    // SAFETY: kill takes no pointers; `rec` is ours and not yet waited for.
    unsafe {
        libc::kill(rec.id() as i32, libc::SIGKILL);
    }
    // The program runs in its own process group and outlives the recorder: end it (before
    // waiting, as it holds the recorder's stderr open).
    // SAFETY: kill takes no pointers; `py` (> 0, parsed from /proc) leads its own group.
    unsafe {
        libc::kill(-py, libc::SIGKILL);
    }
    let _ = rec.wait_with_output();
    // Only finished runs go by the run's name; the one being recorded is hidden beside it.
    assert!(!out.exists());
    let live = threadradar_profiler::runfile::live_path(&out);
    assert_eq!(live, dir.path().join(".run.json.recording"));
    let run = read(&live);
    assert!(run.meta.partial, "the reader says the run was cut off");
    let last = run.meta.started_at.unwrap() + run.samples.last().unwrap().t as f64 / 1e9;
    // Appended every half second: at most about a second is lost.
    assert!(killed_at - last < 1.0, "the run ends {:.2} s before the kill", killed_at - last);
    assert!(run.threads.iter().any(|t| t.name == "busy"));
    assert!(count_by_name(&run, ThreadState::Computing).get("busy").copied().unwrap_or(0) > 50);
    let o = threadradar(dir.path(), &["info", live.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("partial"), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn the_rate_is_counted_over_each_threads_own_lifetime() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    // Python starts 1.5 s into the recording, behind a shell wrapper.
    let cmd = format!("sleep 1.5; {} {} 1.5", python(), script("threads.py"));
    let o = threadradar(dir.path(), &["record", "--no-progress", "--subprocesses", "-o", out.to_str().unwrap(), "--", "bash", "-c", &cmd]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out);
    let from_recording_start = run.samples.len() as f64 / run.meta.duration_s;
    // The threads lived about half of the recording: their rate is about twice the naive one.
    assert!(
        run.meta.achieved_rate_hz > 1.5 * from_recording_start,
        "{:.0} Hz over the threads' lives against {from_recording_start:.0} Hz over the recording",
        run.meta.achieved_rate_hz
    );
    // And it is what the samples say: each thread's samples over its own first-to-last span.
    let heavy = run.threads.iter().position(|t| t.name == "heavy").unwrap() as u32;
    let th = &run.threads[heavy as usize];
    let n = run.samples.iter().filter(|s| s.threads.iter().any(|t| t.thread == heavy)).count() as f64;
    let life = (run.samples[th.last_sample as usize].t - run.samples[th.first_sample as usize].t) as f64 / 1e9 + run.meta.interval_ms / 1e3;
    assert!((n / life - run.meta.achieved_rate_hz).abs() < 0.1 * run.meta.achieved_rate_hz, "heavy: {:.0} Hz", n / life);
}

/// The main thread joins `t1` on one line and `t2` on the next (tests/scripts/joins.py logs when
/// each join began and ended): every sample of the second join is at the second join's line.
/// The second `join` frame lies at the address of the first, with the same code and instruction
/// pointer; a reader that reused a stack by its innermost frames kept the first line (and the
/// waits view then said the first join waited twice as long, woken by both threads).
#[test]
fn a_frame_reused_at_the_same_address_is_read_at_its_own_line() {
    let _g = serial();
    let dir = tmp();
    let out = dir.path().join("run.json");
    let log_path = dir.path().join("truth.json");
    let o = record(
        &out,
        &[],
        &[&script("joins.py"), log_path.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out);
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&log_path).unwrap()).unwrap();
    let line = |k: &str| log[k].as_u64().unwrap() as u32;
    let span = |k: &str| (log[k][0].as_f64().unwrap(), log[k][1].as_f64().unwrap());
    let (first_line, second_line) = (line("first_join_line"), line("second_join_line"));
    let started_at = run.meta.started_at.expect("the run says when it started");
    let period = run.meta.interval_ms / 1000.0;
    let main = run
        .threads
        .iter()
        .position(|t| t.is_main)
        .expect("the main thread") as u32;
    // The line of `<module>` in the main thread's stack at each sample.
    let module_line = |s: &threadradar_profiler::run::Sample| -> Option<u32> {
        let ts = s.threads.iter().find(|t| t.thread == main)?;
        run.stack_frames(ts.stack?)
            .find(|f| run.str(run.functions[f.function as usize].qualname) == "<module>")
            .map(|f| f.line)
    };
    let within =
        |(a, b): (f64, f64), t: f64| t > a - started_at + period && t < b - started_at - period;
    let lines_in = |k: &str| -> std::collections::BTreeMap<u32, usize> {
        let mut m = std::collections::BTreeMap::new();
        for s in run
            .samples
            .iter()
            .filter(|s| within(span(k), s.t as f64 / 1e9))
        {
            if let Some(l) = module_line(s) {
                *m.entry(l).or_insert(0) += 1;
            }
        }
        m
    };
    let first = lines_in("first_join");
    let second = lines_in("second_join");
    assert!(
        first.get(&first_line).copied().unwrap_or(0) > 50,
        "the first join is sampled at its line {first_line}: {first:?}"
    );
    assert!(
        second.get(&second_line).copied().unwrap_or(0) > 50,
        "the second join is sampled at its line {second_line}: {second:?}"
    );
    assert_eq!(
        second.get(&first_line),
        None,
        "no sample of the second join is at the first join's line {first_line}: {second:?}"
    );
}
