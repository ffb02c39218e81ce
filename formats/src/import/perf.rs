//! `perf script` output of a Python 3.12+ process run with `-X perf` (or
//! `PYTHONPERFSUPPORT=1`): perf resolves CPython's trampolines through `/tmp/perf-<pid>.map` to
//! symbols `py::<qualname>:<file>`. A sample is a header line
//! `comm [pid/]tid [cpu] time: [period] event:` and its call chain, innermost first, one frame a
//! line; a blank line ends it.
//!
//! Only the `py::` frames are kept (the Python stack); samples without any are kept with an
//! empty stack, since the thread was running native code. The trampolines carry no line numbers:
//! functions are found in the source by qualified name. perf samples threads while they are on
//! the CPU, so idle threads are missing, not idle.

use super::profile::DEEP;
use super::lines::LineSource;
use super::{Ctx, ImportError, Profile, RawFrame, RawSample};

/// `(comm, pid, tid, seconds)` of a sample header line.
fn header(line: &str) -> Option<(String, Option<u32>, u32, f64)> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let fields: Vec<&str> = line.split_whitespace().collect();
    // The time is the first field that ends with ':' and parses as seconds.
    let ti = fields.iter().position(|f| f.strip_suffix(':').is_some_and(|t| t.contains('.') && t.parse::<f64>().is_ok()))?;
    let secs: f64 = fields[ti].trim_end_matches(':').parse().ok()?;
    // Before it: comm (may contain spaces), the [pid/]tid, an optional [cpu].
    let mut before = &fields[..ti];
    if before.last().is_some_and(|f| f.starts_with('[') && f.ends_with(']')) {
        before = &before[..before.len() - 1];
    }
    let (ids, comm) = before.split_last()?;
    let (pid, tid) = match ids.split_once('/') {
        Some((p, t)) => (Some(p.parse().ok()?), t.parse().ok()?),
        None => (None, ids.parse().ok()?),
    };
    Some((comm.join(" "), pid, tid, secs))
}

pub fn is_header(line: &str) -> bool {
    header(line).is_some() && line.trim_end().ends_with(':')
}

/// `py::Worker.run:/srv/app.py+0x5` → (`Worker.run`, `/srv/app.py`).
fn python_frame(line: &str) -> Option<RawFrame> {
    let at = line.find("py::")?;
    let rest = &line[at + 4..];
    // The symbol runs up to ` (dso)`; drop perf's `+0x…` offset.
    let sym = rest.rsplit_once(" (").map_or(rest, |(s, _)| s).trim_end();
    let sym = match sym.rsplit_once("+0x") {
        Some((s, off)) if off.bytes().all(|b| b.is_ascii_hexdigit()) => s,
        _ => sym,
    };
    let (name, file) = sym.split_once(':')?;
    Some(RawFrame { file: file.to_string(), name: name.to_string(), line: 0 })
}

/// `(comm, pid, tid, seconds, Python frames innermost first)`.
type PerfSample = (String, Option<u32>, u32, f64, Vec<RawFrame>);

pub fn parse<R: std::io::BufRead>(src: &mut LineSource<'_, R>, ctx: &Ctx) -> Result<Profile, ImportError> {
    let mut p = Profile::new(ctx, "perf script");
    let mut raw: Vec<PerfSample> = Vec::new();
    let mut in_sample = false;
    // With call chains (`perf record -g`), perf script ends every sample with a blank line: a
    // file that ends in a sample's call chain, or after a header when the samples before had
    // their blank line, was cut in the middle of that sample.
    let mut ended_samples = false;
    let mut header_line = 0;
    let mut stack_lines = 0;
    while let Some((i, line)) = src.next_line()? {
        if line.trim().is_empty() {
            ended_samples |= in_sample;
            in_sample = false;
            continue;
        }
        if line.starts_with('#') && raw.is_empty() {
            continue; // perf script's own header comments
        }
        if !line.starts_with(char::is_whitespace) {
            let (comm, pid, tid, secs) = header(line).ok_or_else(|| ctx.parse_error(i + 1, "expected a sample header `comm tid time: event:`"))?;
            raw.push((comm, pid, tid, secs, Vec::new()));
            in_sample = true;
            header_line = i + 1;
            stack_lines = 0;
        } else if in_sample {
            stack_lines += 1;
            if let Some(f) = python_frame(line) {
                let frames = &mut raw.last_mut().expect("in a sample").4;
                if frames.len() >= ctx.limits.depth {
                    return Err(p.too_large(format!("the sample from line {header_line} is more than {} Python frames deep", ctx.limits.depth), format!("{} frames", ctx.limits.depth), DEEP));
                }
                p.check_name(&f.name)?;
                p.check_name(&f.file)?;
                frames.push(f);
            }
        } else {
            return Err(ctx.parse_error(i + 1, "a stack frame outside any sample"));
        }
    }
    if in_sample && (stack_lines > 0 || ended_samples) {
        return Err(ctx.truncated(format!("line {}, in the sample from line {header_line}, which has no blank line after its call chain", src.count())));
    }
    let t0 = raw.iter().map(|r| r.3).fold(f64::INFINITY, f64::min);
    let ns = |secs: f64| ((secs - t0) * 1e9).round().max(0.0) as u64;
    let known_pid = raw.iter().any(|r| r.1.is_some());
    let leader = raw.iter().map(|r| r.2).min().unwrap_or(0);
    let any_python = raw.iter().any(|r| !r.4.is_empty());
    for (comm, pid, tid, secs, frames) in raw {
        let stack = p.stack(frames.into_iter().rev())?; // perf lists the innermost frame first
        let thread = p.thread(pid.unwrap_or(leader), tid, Some(&comm))?;
        if pid.is_none() {
            // The lowest tid stands in for the process, but it is the main thread only if the
            // main thread ran while perf sampled: which thread is the main one is not known.
            p.threads[thread].main = Some(false);
        }
        p.push_sample(RawSample { thread, t_ns: Some(ns(secs)), duration_ns: None, stack, count: 1, state: None, gil: false })?;
    }
    p.missing.push(("thread_names", "Python thread names (the OS thread name, comm, is shown)"));
    p.missing.push(("lines", "line numbers (functions are found by name)"));
    p.missing.push(("off_cpu", "threads while they were off the CPU (perf samples running threads)"));
    if !known_pid {
        p.missing.push(("pid", "process ids (the lowest thread id is taken as the process)"));
    }
    if !any_python {
        p.missing.push(("python_frames", "any Python frame (run Python 3.12+ with -X perf so perf can name them)"));
    }
    Ok(p)
}
