//! austin's text output: `# key: value` metadata, then one line per sample,
//! `P<pid>;T<interpreter>:<tid>;file:function:line;… <µs>` (older austin: `T<tid>`), where the
//! value is the sample's wall (or CPU, in `--cpu` mode) time in microseconds, or
//! `time,idle,memory` with `--full` (mode `full`), whose idle flag makes the sample idle (else
//! computing: austin does not see the GIL). Lines are written as samples are taken, so a thread's samples
//! follow one another in time; austin does not record thread names or absolute times.

use super::collapsed::parse_frame;
use super::lines::LineSource;
use super::{quote, Ctx, ImportError, Profile, RawSample};
use threadradar_profiler::run::ThreadState;

pub fn is_sample_line(line: &str) -> bool {
    let mut parts = line.splitn(3, ';');
    let (Some(p), Some(t)) = (parts.next(), parts.next()) else { return false };
    p.len() > 1 && p.starts_with('P') && p[1..].bytes().all(|b| b.is_ascii_digit()) && t.starts_with('T')
}

pub fn parse<R: std::io::BufRead>(src: &mut LineSource<'_, R>, ctx: &Ctx) -> Result<Profile, ImportError> {
    let mut p = Profile::new(ctx, "austin");
    let mut mode = String::from("wall");
    while let Some((i, raw)) = src.next_line()? {
        let line = raw.trim_end();
        if line.is_empty() {
            continue;
        }
        if let Some(meta) = line.strip_prefix('#') {
            if let Some((k, v)) = meta.split_once(':') {
                match k.trim() {
                    "austin" => p.format = format!("austin {}", quote_free(v.trim())),
                    "interval" => p.interval_ns = v.trim().parse::<u64>().ok().map(|us| us.saturating_mul(1000)),
                    "mode" => mode = v.trim().to_string(),
                    _ => {}
                }
            }
            continue;
        }
        let (stack, value) = line.rsplit_once(' ').ok_or_else(|| ctx.parse_error(i + 1, "a sample line has no time at its end"))?;
        let mut metrics = value.split(',');
        let us: u64 = metrics
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| ctx.parse_error(i + 1, format!("{} is not a sample time in microseconds", quote(value))))?;
        // Full mode (`austin -f`): `time,idle,memory`, the idle flag 1 when the thread was idle.
        let state = match (mode.as_str(), metrics.next()) {
            ("full", Some("1")) => Some(ThreadState::Idle),
            ("full", Some("0")) => Some(ThreadState::Computing),
            ("full", Some(other)) => return Err(ctx.parse_error(i + 1, format!("{} is not austin's idle flag (0 or 1)", quote(other)))),
            _ => None,
        };
        let mut parts = stack.split(';');
        let pid = parts
            .next()
            .and_then(|s| s.strip_prefix('P'))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| ctx.parse_error(i + 1, "a sample line does not start with P<pid>"))?;
        let t = parts.next().and_then(|s| s.strip_prefix('T')).ok_or_else(|| ctx.parse_error(i + 1, "a sample line has no T<thread> after its pid"))?;
        let tid_text = t.rsplit(':').next().unwrap_or(t);
        let tid: u32 = match tid_text.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).map(|v| v as u32).map_err(|_| ctx.parse_error(i + 1, format!("{} is not a thread id", quote(t))))?,
            None => tid_text.parse().map_err(|_| ctx.parse_error(i + 1, format!("{} is not a thread id", quote(t))))?,
        };
        let thread = p.thread(pid, tid, None)?;
        let stack = p.stack(parts.filter(|f| !f.is_empty()).map(|f| parse_frame(f).0))?;
        p.push_sample(RawSample { thread, t_ns: None, duration_ns: Some(us.saturating_mul(1000)), stack, count: 1, state, gil: false })?;
    }
    p.missing.extend(missing(&mode));
    Ok(p)
}

/// What austin (text and MOJO) does not record, in `mode`.
pub(crate) fn missing(mode: &str) -> Vec<super::profile::Missing> {
    let mut m = vec![
        ("thread_names", "thread names"),
        ("sample_times", "absolute sample times (each thread's samples follow one another, each as long as austin measured)"),
    ];
    match mode {
        "wall" => {}
        "full" => m.push(("gil_waits", "GIL waits (austin tells idle threads from running ones; running samples count as computing)")),
        _ => m.push(("idle_time", "idle time (austin ran in CPU mode)")),
    }
    m
}

/// A metadata value kept in the run's format name: at most 40 characters.
fn quote_free(v: &str) -> String {
    v.chars().take(40).collect()
}
