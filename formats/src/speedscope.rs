//! speedscope's file format (<https://www.speedscope.app/file-format-schema.json>): one `sampled`
//! profile per thread, in nanoseconds since the start of the run, so that threads line up on one
//! time axis (py-spy's export starts every thread at 0). Each sample's weight is the time it
//! stands for, so a profile's weights add up to `endValue - startValue` minus the gaps in which
//! the thread was not seen.

use crate::timeline::{frame_label, frames_outermost_first, per_thread};
use crate::ExportError;
use serde::Serialize;
use std::collections::HashMap;
use std::io::Write;
use threadradar_profiler::run::Run;

pub const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

#[derive(Serialize)]
struct File<'a> {
    #[serde(rename = "$schema")]
    schema: &'a str,
    shared: Shared,
    profiles: Vec<Profile>,
    name: String,
    #[serde(rename = "activeProfileIndex")]
    active_profile_index: usize,
    exporter: String,
}

#[derive(Serialize)]
struct Shared {
    frames: Vec<Frame>,
}

#[derive(Serialize)]
struct Frame {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
}

#[derive(Serialize)]
struct Profile {
    #[serde(rename = "type")]
    kind: &'static str,
    name: String,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: u64,
    #[serde(rename = "endValue")]
    end_value: u64,
    samples: Vec<Vec<u32>>,
    weights: Vec<u64>,
}

/// The profile name of a thread: `name (tid)`; the importer reads the tid back from it.
pub fn profile_name(name: &str, tid: u32) -> String {
    format!("{name} ({tid})")
}

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    let mut frames = Vec::new();
    let mut frame_ids: HashMap<u32, u32> = HashMap::new();
    let mut stack_cache: HashMap<Option<u32>, Vec<u32>> = HashMap::new();
    let mut profiles = Vec::new();
    for (tid, obs) in per_thread(run).into_iter().enumerate() {
        let t = &run.threads[tid];
        let Some(first) = obs.first() else { continue };
        let last = obs.last().unwrap();
        let mut samples = Vec::with_capacity(obs.len());
        let mut weights = Vec::with_capacity(obs.len());
        for o in &obs {
            let stack = stack_cache.entry(o.stack).or_insert_with(|| {
                frames_outermost_first(run, o.stack)
                    .into_iter()
                    .map(|f| {
                        *frame_ids.entry(f).or_insert_with(|| {
                            let fr = &run.frames[f as usize];
                            let func = &run.functions[fr.function as usize];
                            frames.push(Frame {
                                name: frame_label(run, f),
                                file: Some(run.file_path(func.file).to_string()),
                                line: Some(fr.line),
                            });
                            (frames.len() - 1) as u32
                        })
                    })
                    .collect()
            });
            samples.push(stack.clone());
            weights.push(o.duration_ns);
        }
        profiles.push(Profile {
            kind: "sampled",
            name: profile_name(&t.name, t.tid),
            unit: "nanoseconds",
            start_value: first.t_ns,
            end_value: last.t_ns + last.duration_ns,
            samples,
            weights,
        });
    }
    let file = File {
        schema: SCHEMA,
        shared: Shared { frames },
        profiles,
        name: run.meta.command.join(" "),
        active_profile_index: 0,
        exporter: format!("threadradar {}", env!("CARGO_PKG_VERSION")),
    };
    let mut w = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut w, &file).map_err(|e| ExportError::Encode { format: "speedscope", detail: e.to_string() })?;
    w.flush()?;
    Ok(())
}
