//! speedscope files (<https://www.speedscope.app/file-format-schema.json>): `sampled` profiles,
//! one per thread as py-spy and ThreadRadar write them. Profile names give the thread:
//! py-spy's `Thread <tid> "<name>"` and ThreadRadar's `<name> (<tid>)`; any other name is the
//! thread's name. A sample's time is the profile's `startValue` plus the weights before it.

use super::{bounded, quote, Ctx, ImportError, Profile, RawFrame, RawSample};
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    #[serde(rename = "$schema")]
    schema: Option<String>,
    shared: Shared,
    profiles: Vec<SProfile>,
    name: Option<String>,
    exporter: Option<String>,
}

#[derive(Deserialize)]
struct Shared {
    frames: Vec<SFrame>,
}

#[derive(Deserialize)]
struct SFrame {
    name: String,
    file: Option<String>,
    line: Option<u32>,
}

#[derive(Deserialize)]
struct SProfile {
    #[serde(rename = "type")]
    kind: String,
    name: String,
    unit: String,
    #[serde(rename = "startValue")]
    start_value: f64,
    #[serde(default)]
    samples: Vec<Vec<usize>>,
    #[serde(default)]
    weights: Vec<f64>,
}

pub fn parse(bytes: &[u8], ctx: &Ctx) -> Result<Profile, ImportError> {
    let file: File = serde_json::from_slice(bytes).map_err(|e| {
        let at = format!("line {} column {}", e.line(), e.column());
        if e.is_eof() {
            ImportError::Truncated { path: ctx.path.to_path_buf(), format: ctx.format, at }
        } else {
            ImportError::Parse { path: ctx.path.to_path_buf(), format: ctx.format, at, detail: bounded(e.to_string()) }
        }
    })?;
    if !file.schema.as_deref().unwrap_or("").contains("speedscope") {
        return Err(ImportError::Parse {
            path: ctx.path.to_path_buf(),
            format: ctx.format,
            at: "the top-level object".into(),
            detail: "its \"$schema\" is not speedscope's file-format schema".into(),
        });
    }
    let exporter = file.exporter.clone().unwrap_or_default();
    let exporter: String = exporter.chars().take(40).collect();
    let mut p = Profile::new(ctx, if exporter.is_empty() { "speedscope".into() } else { format!("speedscope from {exporter}") });
    if let Some(n) = file.name.filter(|n| !n.is_empty()) {
        p.check_name(&n)?;
        p.command = n.split(' ').map(str::to_string).collect();
    }
    let mut any_time = false;
    // The profile's frame for each of the file's shared frames, made when first used.
    let mut frame_ids: Vec<Option<u32>> = vec![None; file.shared.frames.len()];
    for (pi, prof) in file.profiles.iter().enumerate() {
        if prof.kind != "sampled" {
            return Err(ImportError::Parse {
                path: ctx.path.to_path_buf(),
                format: ctx.format,
                at: format!("profile {pi} ({})", quote(&prof.name)),
                detail: format!("it is an {} profile; only sampled profiles (py-spy's, ThreadRadar's) can be imported", quote(&prof.kind)),
            });
        }
        let scale = match prof.unit.as_str() {
            "nanoseconds" => Some(1.0),
            "microseconds" => Some(1e3),
            "milliseconds" => Some(1e6),
            "seconds" => Some(1e9),
            _ => None,
        };
        any_time |= scale.is_some();
        let (tid, name) = thread_of(&prof.name, pi);
        let thread = p.thread(0, tid, name.as_deref())?;
        let mut t = prof.start_value;
        for (si, s) in prof.samples.iter().enumerate() {
            let w = prof.weights.get(si).copied().unwrap_or(1.0);
            let mut stack = None;
            for &f in s {
                let frame = match frame_ids.get(f).copied().flatten() {
                    Some(id) => id,
                    None => {
                        let fr = file.shared.frames.get(f).ok_or_else(|| ImportError::Parse {
                            path: ctx.path.to_path_buf(),
                            format: ctx.format,
                            at: format!("profile {pi} sample {si}"),
                            detail: format!("frame {f} does not exist (there are {})", file.shared.frames.len()),
                        })?;
                        let id = p.frame(RawFrame { file: fr.file.clone().unwrap_or_default(), name: strip_location(&fr.name), line: fr.line.unwrap_or(0) })?;
                        frame_ids[f] = Some(id);
                        id
                    }
                };
                stack = Some(p.stack_node(stack, frame)?);
            }
            let (t_ns, d_ns) = match scale {
                Some(k) => (Some((t * k).max(0.0) as u64), Some((w * k).max(0.0) as u64)),
                None => (None, None),
            };
            p.push_sample(RawSample { thread, t_ns, duration_ns: d_ns, stack, count: 1, state: None, gil: false })?;
            t += w;
        }
    }
    if !any_time {
        p.missing.push(("sample_times", "sample times (the profiles have no time unit)"));
    }
    if p.threads.iter().all(|t| t.name.is_none()) {
        p.missing.push(("thread_names", "thread names"));
    }
    p.missing.push(("pid", "the process id"));
    if exporter.starts_with("py-spy") {
        p.missing.push(("thread_starts", "when each thread started (py-spy starts every thread at 0)"));
    }
    Ok(p)
}

/// `(tid, name)` from a profile's name.
fn thread_of(name: &str, index: usize) -> (u32, Option<String>) {
    // py-spy: `Thread 460 "napper"` (an empty name when Python has none).
    if let Some(rest) = name.strip_prefix("Thread ") {
        let (id, after) = rest.split_once(' ').unwrap_or((rest, ""));
        let id = id.strip_prefix("0x").map_or_else(|| id.parse().ok(), |h| u64::from_str_radix(h, 16).ok().map(|v| v as u32 as u64));
        if let Some(id) = id {
            let n = after.trim().trim_matches('"');
            return (id as u32, (!n.is_empty()).then(|| n.to_string()));
        }
    }
    // ThreadRadar: `name (tid)`.
    if let Some((n, id)) = name.strip_suffix(')').and_then(|s| s.rsplit_once(" (")) {
        if let Ok(id) = id.parse() {
            return (id, Some(n.to_string()));
        }
    }
    (index as u32 + 1, Some(name.to_string()))
}

/// ThreadRadar's frame names carry `(file:line)`; the file and line are in their own fields.
fn strip_location(name: &str) -> String {
    match name.strip_suffix(')').and_then(|s| s.rsplit_once(" (")) {
        Some((n, loc)) if loc.rsplit_once(':').is_some_and(|(_, l)| l.parse::<u32>().is_ok()) => n.to_string(),
        _ => name.to_string(),
    }
}
