//! Folded stacks, `frame;frame;… count` per line, as several tools write them:
//!
//! - py-spy `record --format raw`: frames `func (file:line)`, with `--threads` a root frame
//!   `thread (tid)` or `thread (tid): name` (and `process pid:"cmd"` with `--subprocesses`);
//! - CPython 3.15 `python -m profiling.sampling --collapsed`: root `tid:N`, frames
//!   `file:func:line` (file is a base name);
//! - ThreadRadar's own export: root `name (tid)`;
//! - anything else flamegraph.pl reads: frames are taken as function names.

use super::lines::LineSource;
use super::{quote, Ctx, ImportError, Profile, RawFrame, RawSample};

/// Whether a line looks like folded stacks: frames and a trailing count.
pub fn is_line(line: &str) -> bool {
    line.trim_end().rsplit_once(' ').is_some_and(|(stack, n)| !stack.is_empty() && n.parse::<u64>().is_ok())
}

pub fn parse<R: std::io::BufRead>(src: &mut LineSource<'_, R>, ctx: &Ctx) -> Result<Profile, ImportError> {
    let mut p = Profile::new(ctx, "collapsed stacks");
    let mut flavour: Option<&'static str> = None;
    let mut any_thread = false;
    while let Some((i, raw)) = src.next_line()? {
        let line = raw.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((stack, count)) = line.rsplit_once(' ') else {
            return Err(ctx.parse_error(i + 1, "a line has no sample count at its end"));
        };
        let count: u64 = count.parse().map_err(|_| ctx.parse_error(i + 1, format!("{} is not a sample count", quote(count))))?;
        let mut parts = stack.split(';').peekable();
        let mut pid = 0u32;
        if let Some(proc_pid) = parts.peek().and_then(|f| f.strip_prefix("process ")).and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()) {
            pid = proc_pid;
            parts.next();
        }
        let mut thread = None;
        if let Some(root) = parts.peek() {
            if let Some((tid, name, fl)) = thread_root(root) {
                flavour.get_or_insert(fl);
                thread = Some(p.thread(pid, tid, name.as_deref())?);
                any_thread = true;
                parts.next();
            }
        }
        let thread = match thread {
            Some(t) => t,
            None => p.thread(pid, 0, Some("all threads"))?,
        };
        let mut stack = None;
        for f in parts {
            let (frame, fl) = parse_frame(f);
            if let Some(fl) = fl {
                flavour.get_or_insert(fl);
            }
            let frame = p.frame(frame)?;
            stack = Some(p.stack_node(stack, frame)?);
        }
        p.push_sample(RawSample { thread, t_ns: None, duration_ns: None, stack, count, state: None, gil: false })?;
    }
    p.format = match flavour {
        Some(f) => format!("{f} (collapsed stacks)"),
        None => "collapsed stacks".into(),
    };
    p.missing.push(("sample_times", "sample times (samples are laid out one interval apart per thread)"));
    if !any_thread {
        p.missing.push(("threads", "threads (all samples are one thread, `all threads`)"));
    } else if p.threads.iter().all(|t| t.name.is_none()) {
        p.missing.push(("thread_names", "thread names"));
    }
    // `tid:N` is all CPython's collapsed output says of a thread: not its process, nor whether
    // it is the main one (lines are sorted by count, so the first may be a worker's); py-spy's
    // has the process only with --subprocesses.
    if p.threads.iter().all(|t| t.pid == 0) {
        p.missing.push(("pid", "the process id"));
    }
    Ok(p)
}

/// A root frame naming a thread: `(tid, name, which tool)`.
fn thread_root(f: &str) -> Option<(u32, Option<String>, &'static str)> {
    if let Some(rest) = f.strip_prefix("tid:") {
        return Some((rest.trim().parse().ok()?, None, "CPython profiling.sampling"));
    }
    if let Some(rest) = f.strip_prefix("thread (") {
        let (id, after) = rest.split_once(')')?;
        let tid = parse_id(id)?;
        let name = after.strip_prefix(':').map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
        return Some((tid, name, "py-spy raw"));
    }
    // ThreadRadar's `name (tid)`: the parentheses hold only digits (a frame's hold `file:line`).
    let (name, id) = f.strip_suffix(')')?.rsplit_once(" (")?;
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
        return Some((id.parse().ok()?, Some(name.to_string()), "threadradar"));
    }
    None
}

/// A decimal tid, or py-spy's hexadecimal Python thread id (0x7F…), cut to 32 bits.
fn parse_id(s: &str) -> Option<u32> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok().map(|v| v as u32 ^ (v >> 32) as u32),
        None => s.parse().ok(),
    }
}

/// `func (file:line)` (py-spy), `file:func:line` (CPython, austin) or a bare name.
pub(crate) fn parse_frame(f: &str) -> (RawFrame, Option<&'static str>) {
    if let Some((name, loc)) = f.strip_suffix(')').and_then(|s| s.rsplit_once(" (")) {
        if let Some((file, line)) = loc.rsplit_once(':') {
            if let Ok(line) = line.parse() {
                return (RawFrame { file: file.to_string(), name: name.to_string(), line }, Some("py-spy raw"));
            }
        }
    }
    if let Some((rest, line)) = f.rsplit_once(':') {
        if let (Ok(line), Some((file, name))) = (line.parse::<u32>(), rest.rsplit_once(':')) {
            return (RawFrame { file: file.to_string(), name: name.to_string(), line }, None);
        }
    }
    (RawFrame { file: String::new(), name: f.to_string(), line: 0 }, None)
}
