//! speedscope's file format (<https://www.speedscope.app/file-format-schema.json>): one `sampled`
//! profile per thread, in nanoseconds since the start of the run, so that threads line up on one
//! time axis (py-spy's export starts every thread at 0). Each sample's weight is the time it
//! stands for, so a profile's weights add up to `endValue - startValue` minus the gaps in which
//! the thread was not seen.

use crate::timeline::{frame_label, frames_outermost_first, per_thread};
use crate::ExportError;
use serde::Serialize;
use rustc_hash::FxHashMap;
use std::io::Write;
use threadradar_profiler::run::Run;

pub const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

#[derive(Serialize)]
struct File<'a> {
    #[serde(rename = "$schema")]
    schema: &'a str,
    shared: Shared,
    profiles: Vec<Profile<'a>>,
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
struct Profile<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: String,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: u64,
    #[serde(rename = "endValue")]
    end_value: u64,
    samples: Samples<'a>,
    weights: Vec<u64>,
}

/// Each sample's stack (frame indices, outermost first), written from the distinct stacks it
/// refers to: a list per distinct stack, not per sample.
struct Samples<'a> {
    stacks: &'a [Vec<u32>],
    ids: Vec<u32>,
}

impl Serialize for Samples<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.ids.iter().map(|&i| &self.stacks[i as usize]))
    }
}

/// The profile name of a thread: `name (tid)`; the importer reads the tid back from it.
pub fn profile_name(name: &str, tid: u32) -> String {
    format!("{name} ({tid})")
}

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    let mut frames = Vec::new();
    let mut frame_ids: FxHashMap<u32, u32> = FxHashMap::default();
    // Distinct stacks, and each one's index in `stacks`.
    let mut stacks: Vec<Vec<u32>> = Vec::new();
    let mut stack_ids: FxHashMap<Option<u32>, u32> = FxHashMap::default();
    let mut threads = Vec::new();
    for (tid, obs) in per_thread(run).into_iter().enumerate() {
        let t = &run.threads[tid];
        let Some(first) = obs.first() else { continue };
        let last = obs.last().unwrap();
        let mut samples = Vec::with_capacity(obs.len());
        let mut weights = Vec::with_capacity(obs.len());
        for o in &obs {
            let stack = *stack_ids.entry(o.stack).or_insert_with(|| {
                stacks.push(
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
                        .collect(),
                );
                (stacks.len() - 1) as u32
            });
            samples.push(stack);
            weights.push(o.duration_ns);
        }
        threads.push((profile_name(&t.name, t.tid), first.t_ns, last.t_ns + last.duration_ns, samples, weights));
    }
    let profiles = threads
        .into_iter()
        .map(|(name, start_value, end_value, ids, weights)| Profile {
            kind: "sampled",
            name,
            unit: "nanoseconds",
            start_value,
            end_value,
            samples: Samples { stacks: &stacks, ids },
            weights,
        })
        .collect();
    let file = File {
        schema: SCHEMA,
        shared: Shared { frames },
        profiles,
        name: run.meta.command.join(" "),
        active_profile_index: 0,
        exporter: format!("threadradar {}", env!("CARGO_PKG_VERSION")),
    };
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    serde_json::to_writer(&mut w, &file).map_err(|e| ExportError::Encode { format: "speedscope", detail: e.to_string() })?;
    w.flush()?;
    Ok(())
}
