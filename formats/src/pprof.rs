//! pprof's `profile.proto` (github.com/google/pprof, `proto/profile.proto`), gzip-compressed: the
//! format Go's `pprof`, Pyroscope, Parca and Grafana read.
//!
//! One pprof sample per (thread, stack, state) with three values: `samples/count`,
//! `wall/nanoseconds` (the time the samples stand for) and `cpu/nanoseconds` (kernel-accounted CPU
//! time since each thread's previous sample). Labels carry the thread knowledge: `thread_name`,
//! `thread_type`, `state` (computing, gil, idle), `cluster` (the thread's program-level cluster:
//! low, middle, high, for threads that computed), and the numeric label `tid`.

use crate::timeline::{per_thread, program_clusters, state_name};
use crate::ExportError;
use flate2::write::GzEncoder;
use prost::Message;
use rustc_hash::FxHashMap;
use std::io::Write;
use threadradar_profiler::run::{Run, StackId, ThreadState};

// The messages of profile.proto that ThreadRadar writes and reads, field numbers as upstream.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Profile {
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub period: i64,
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueType {
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    /// Innermost first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(int64, tag = "2")]
    pub str: i64,
    #[prost(int64, tag = "3")]
    pub num: i64,
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Mapping {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    #[prost(int64, tag = "5")]
    pub filename: i64,
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Location {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    #[prost(uint64, tag = "3")]
    pub address: u64,
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Line {
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    #[prost(int64, tag = "2")]
    pub line: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Function {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "2")]
    pub name: i64,
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    #[prost(int64, tag = "4")]
    pub filename: i64,
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}

/// The pseudo-frame of samples in which a thread had no Python frames.
pub const NO_PYTHON_FRAMES: &str = "[no Python frames]";

/// Interned strings; index 0 is the empty string, as the format requires.
struct Strings {
    table: Vec<String>,
    ids: FxHashMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        Strings { table: vec![String::new()], ids: FxHashMap::from_iter([(String::new(), 0)]) }
    }
    fn id(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(s.to_string());
        self.ids.insert(s.to_string(), i);
        i
    }
}

/// The profile as a message (before compression), for tests and for callers that embed it.
pub fn build(run: &Run) -> Profile {
    let mut s = Strings::new();
    let sample_type = vec![
        ValueType { r#type: s.id("samples"), unit: s.id("count") },
        ValueType { r#type: s.id("wall"), unit: s.id("nanoseconds") },
        ValueType { r#type: s.id("cpu"), unit: s.id("nanoseconds") },
    ];
    // Functions and locations: one pprof function per run function, one location per frame.
    let function: Vec<Function> = run
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| Function {
            id: i as u64 + 1,
            name: s.id(run.str(f.qualname)),
            system_name: s.id(run.str(f.qualname)),
            filename: s.id(run.file_path(f.file)),
            start_line: f.line as i64,
        })
        .collect();
    let location: Vec<Location> = run
        .frames
        .iter()
        .enumerate()
        .map(|(i, fr)| Location {
            id: i as u64 + 1,
            line: vec![Line { function_id: fr.function as u64 + 1, line: fr.line as i64 }],
            ..Default::default()
        })
        .collect();
    // pprof drops samples without locations; a thread observed without Python frames (starting,
    // ending, or in native code) gets this one, so every sample is counted.
    let no_frames_id = function.len() as u64 + 1;
    let mut function = function;
    let mut location = location;
    function.push(Function { id: no_frames_id, name: s.id(NO_PYTHON_FRAMES), system_name: s.id(NO_PYTHON_FRAMES), ..Default::default() });
    location.push(Location { id: location.len() as u64 + 1, line: vec![Line { function_id: no_frames_id, line: 0 }], ..Default::default() });
    let no_frames_location = location.len() as u64;
    let clusters = program_clusters(run);
    let keys = [s.id("thread_name"), s.id("thread_type"), s.id("state"), s.id("cluster"), s.id("tid")];
    let states = [ThreadState::Computing, ThreadState::Gil, ThreadState::Idle].map(|st| s.id(state_name(st)));
    let thread_labels: Vec<Vec<Label>> = run
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut l = vec![
                Label { key: keys[0], str: s.id(&t.name), ..Default::default() },
                Label { key: keys[1], str: s.id(&t.thread_type), ..Default::default() },
            ];
            if let Some(c) = clusters[i] {
                l.push(Label { key: keys[3], str: s.id(c), ..Default::default() });
            }
            l.push(Label { key: keys[4], num: t.tid as i64, ..Default::default() });
            l
        })
        .collect();
    let mut index: FxHashMap<(u32, Option<StackId>, u8), usize> = FxHashMap::default();
    let mut sample: Vec<Sample> = Vec::new();
    for (tid, obs) in per_thread(run).into_iter().enumerate() {
        for o in obs {
            let code = match o.state {
                ThreadState::Computing => 0u8,
                ThreadState::Gil => 1,
                ThreadState::Idle => 2,
            };
            let i = *index.entry((tid as u32, o.stack, code)).or_insert_with(|| {
                let mut location_id = Vec::new();
                if o.stack.is_none() {
                    location_id.push(no_frames_location);
                }
                let mut next = o.stack;
                while let Some(st) = next {
                    let node = &run.stacks[st as usize];
                    location_id.push(node.frame as u64 + 1);
                    next = node.parent;
                }
                let mut label = thread_labels[tid].clone();
                label.push(Label { key: keys[2], str: states[code as usize], ..Default::default() });
                sample.push(Sample { location_id, value: vec![0, 0, 0], label });
                sample.len() - 1
            });
            let v = &mut sample[i].value;
            v[0] += 1;
            v[1] += o.duration_ns as i64;
            v[2] += o.cpu_ns as i64;
        }
    }
    let comment = vec![s.id(&format!(
        "threadradar {}: {} sampled every {} ms; wall = the time from each tick to the next (one sampling period after the last), cpu = kernel-accounted CPU time; labels thread_name, thread_type, state, cluster, tid",
        env!("CARGO_PKG_VERSION"),
        run.meta.command.join(" "),
        crate::timeline::period_ms_label(run)
    ))];
    Profile {
        sample_type,
        sample,
        mapping: Vec::new(),
        location,
        function,
        drop_frames: 0,
        keep_frames: 0,
        time_nanos: (run.meta.start_unix_ms as i64).saturating_mul(1_000_000),
        duration_nanos: (run.meta.duration_s * 1e9) as i64,
        period_type: Some(ValueType { r#type: s.id("wall"), unit: s.id("nanoseconds") }),
        period: crate::timeline::interval_ns(run) as i64,
        comment,
        default_sample_type: s.id("wall"),
        string_table: s.table,
    }
}

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    let bytes = build(run).encode_to_vec();
    let mut gz = GzEncoder::new(out, flate2::Compression::fast());
    gz.write_all(&bytes)?;
    gz.finish()?;
    Ok(())
}
