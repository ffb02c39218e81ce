//! Perfetto's native trace format: a protobuf `Trace` of `TracePacket`s with `TrackEvent`s
//! (perfetto/protos/perfetto/trace/trace_packet.proto, track_event/*.proto), which
//! ui.perfetto.dev and `trace_processor` open.
//!
//! One process track per process and one thread track per thread (`ThreadDescriptor` with the
//! program's thread name and tid); each thread's track is the flame chart rebuilt from its samples
//! by [`crate::timeline::slices`]: the outermost slice is the observed state (`Computing`,
//! `Waiting for the GIL`, `Idle (futex)`, category `state`), the sampled stack nests beneath it
//! (category `python`). Slice and category names are interned (`InternedData`, incremental state
//! on one packet sequence), so a slice costs a timestamp, a track and a name id: about 12 bytes,
//! against ~70 in the Chrome JSON trace ([`crate::chrome`]). A track named
//! `How this trace was obtained` holds one instant event whose name says that slices are inferred
//! from samples.
//!
//! Beneath each thread's track, child tracks (a `TrackDescriptor` whose `parent_uuid` is the
//! thread's track) draw the run's [`Overlay`]:
//! - `Waits and wake-ups`: one slice per wait of the waits view, named by the object waited on
//!   (`threading.Condition self.cond`, `pipe:[123]`, category `wait`), and one instant per
//!   wake-up edge end (category `wakeup`): `wakes <wakee> (<evidence>)` on the waker at the
//!   wake-up, carrying the edge's id in `flow_ids`, and `woken by <waker> (<evidence>)` on the
//!   wakee where the wait ended, carrying it in `terminating_flow_ids`, so the UI draws an arrow
//!   from the one to the other. Both have debug annotations (object, evidence, kind, confidence,
//!   the other thread's tid).
//! - `Scheduler`: the thread's kernel states (`Running`, `Runnable (R)`, `Sleeping (S)`,
//!   `Uninterruptible (D)`, category `sched`), exact to the scheduler's clock, when the run
//!   recorded the scheduler's events (`record --sched`).
//! - `Critical section: <function> (<file>:<line>)`, one per section the thread executed: a slice
//!   per execution (category `section`), named with its lock and ` — outlier` for the outliers.
//!
//! - `Lock events (exact, uprobe): lock 0x… (<place>)`, one per lock the thread took, for runs
//!   recorded with `record --exact-locks`: a slice `waits for <lock>` from the acquire call to its
//!   return (when it waited) and `holds <lock>` from there to the release (category `lock`), with
//!   the wait, the hold and the thread whose release let it in as annotations. Exact: the
//!   kernel's uprobes on the interpreter's lock functions, no sampling error.
//!
//! The overlay is computed (by the analysis crate) on another thread while the samples' slices
//! are written, and its tracks follow them in the file.
//!
//! The message types are declared with prost's derive ([`proto`]), field numbers as upstream:
//! descriptors, interned names and the readers (tests, [`read`]) use them. The slice events — all
//! but a handful of the packets — are encoded field by field with prost's encoding functions into
//! one reused buffer, the same bytes the derived types encode, without building a message per
//! event.

use crate::timeline::{drop_later, frame_label, slices, state_slice_name, with_overlay, Level, Overlay, SliceEvent};
use crate::ExportError;
use prost::encoding::{encode_key, encoded_len_varint, WireType};
use prost::Message;
use rustc_hash::FxHashMap;
use std::io::Write;
use threadradar_profiler::run::Run;

/// The subset of Perfetto's trace protos that ThreadRadar writes and reads back.
pub mod proto {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Trace {
        #[prost(message, repeated, tag = "1")]
        pub packet: Vec<TracePacket>,
    }

    /// In upstream's proto `track_event`, `track_descriptor` (and others) are one `oneof data`;
    /// on the wire a oneof is a set of optional fields, so optional fields read and write it.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TracePacket {
        #[prost(uint64, optional, tag = "8")]
        pub timestamp: Option<u64>,
        #[prost(uint32, optional, tag = "10")]
        pub trusted_packet_sequence_id: Option<u32>,
        #[prost(message, optional, tag = "11")]
        pub track_event: Option<TrackEvent>,
        #[prost(message, optional, tag = "12")]
        pub interned_data: Option<InternedData>,
        #[prost(uint32, optional, tag = "13")]
        pub sequence_flags: Option<u32>,
        #[prost(message, optional, tag = "60")]
        pub track_descriptor: Option<TrackDescriptor>,
    }

    /// `TracePacket.sequence_flags`.
    pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
    pub const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TrackDescriptor {
        #[prost(uint64, optional, tag = "1")]
        pub uuid: Option<u64>,
        #[prost(string, optional, tag = "2")]
        pub name: Option<String>,
        #[prost(message, optional, tag = "3")]
        pub process: Option<ProcessDescriptor>,
        #[prost(message, optional, tag = "4")]
        pub thread: Option<ThreadDescriptor>,
        #[prost(uint64, optional, tag = "5")]
        pub parent_uuid: Option<u64>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ProcessDescriptor {
        #[prost(int32, optional, tag = "1")]
        pub pid: Option<i32>,
        #[prost(string, repeated, tag = "2")]
        pub cmdline: Vec<String>,
        #[prost(string, optional, tag = "6")]
        pub process_name: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ThreadDescriptor {
        #[prost(int32, optional, tag = "1")]
        pub pid: Option<i32>,
        #[prost(int64, optional, tag = "2")]
        pub tid: Option<i64>,
        #[prost(string, optional, tag = "5")]
        pub thread_name: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TrackEvent {
        #[prost(uint64, repeated, packed = "false", tag = "3")]
        pub category_iids: Vec<u64>,
        /// Key/value arguments shown with the event (`args` in trace_processor).
        #[prost(message, repeated, tag = "4")]
        pub debug_annotations: Vec<DebugAnnotation>,
        /// `TrackEvent.Type`: see [`TYPE_SLICE_BEGIN`] and the others.
        #[prost(int32, optional, tag = "9")]
        pub r#type: Option<i32>,
        #[prost(uint64, optional, tag = "10")]
        pub name_iid: Option<u64>,
        #[prost(uint64, optional, tag = "11")]
        pub track_uuid: Option<u64>,
        #[prost(string, optional, tag = "23")]
        pub name: Option<String>,
        /// Flows that start (or continue) at this event; ids are global to the trace. The
        /// upstream proto is proto2, so repeated scalars are not packed.
        #[prost(fixed64, repeated, packed = "false", tag = "47")]
        pub flow_ids: Vec<u64>,
        /// Flows that end at this event.
        #[prost(fixed64, repeated, packed = "false", tag = "48")]
        pub terminating_flow_ids: Vec<u64>,
    }

    /// A named argument of an event (debug_annotation.proto); the value fields are a `oneof`
    /// upstream, optional fields on the wire.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct DebugAnnotation {
        #[prost(bool, optional, tag = "2")]
        pub bool_value: Option<bool>,
        #[prost(int64, optional, tag = "4")]
        pub int_value: Option<i64>,
        #[prost(double, optional, tag = "5")]
        pub double_value: Option<f64>,
        #[prost(string, optional, tag = "6")]
        pub string_value: Option<String>,
        #[prost(string, optional, tag = "10")]
        pub name: Option<String>,
    }

    impl DebugAnnotation {
        pub fn string(name: &str, v: impl Into<String>) -> Self {
            DebugAnnotation { name: Some(name.into()), string_value: Some(v.into()), ..Default::default() }
        }
        pub fn int(name: &str, v: i64) -> Self {
            DebugAnnotation { name: Some(name.into()), int_value: Some(v), ..Default::default() }
        }
        pub fn double(name: &str, v: f64) -> Self {
            DebugAnnotation { name: Some(name.into()), double_value: Some(v), ..Default::default() }
        }
        pub fn bool(name: &str, v: bool) -> Self {
            DebugAnnotation { name: Some(name.into()), bool_value: Some(v), ..Default::default() }
        }
    }

    pub const TYPE_SLICE_BEGIN: i32 = 1;
    pub const TYPE_SLICE_END: i32 = 2;
    pub const TYPE_INSTANT: i32 = 3;

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct InternedData {
        #[prost(message, repeated, tag = "1")]
        pub event_categories: Vec<EventCategory>,
        #[prost(message, repeated, tag = "2")]
        pub event_names: Vec<EventName>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct EventCategory {
        #[prost(uint64, optional, tag = "1")]
        pub iid: Option<u64>,
        #[prost(string, optional, tag = "2")]
        pub name: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct EventName {
        #[prost(uint64, optional, tag = "1")]
        pub iid: Option<u64>,
        #[prost(string, optional, tag = "2")]
        pub name: Option<String>,
    }
}

use proto::*;

/// The one packet sequence the file is written on (any non-zero id).
const SEQUENCE: u32 = 1;
/// Interned category ids.
const CATEGORY_STATE: u64 = 1;
const CATEGORY_PYTHON: u64 = 2;
const CATEGORY_WAIT: u64 = 3;
const CATEGORY_WAKEUP: u64 = 4;
const CATEGORY_SCHED: u64 = 5;
const CATEGORY_SECTION: u64 = 6;
const CATEGORY_LOCK: u64 = 7;
/// Track uuids: the note's track, then threads (`THREAD_BASE + thread id`), then processes; small
/// numbers, because every slice event carries its track's uuid as a varint.
const NOTE_TRACK: u64 = 1;
const THREAD_BASE: u64 = 2;

/// Writes `packet` as one `Trace.packet` (field 1) entry.
fn write_packet(w: &mut (impl Write + ?Sized), packet: &TracePacket) -> std::io::Result<()> {
    write_packet_with(w, packet, &mut Vec::new())
}

/// [`write_packet`], encoding into `buf` (reused from packet to packet).
fn write_packet_with(w: &mut (impl Write + ?Sized), packet: &TracePacket, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    buf.reserve(packet.encoded_len() + 11);
    encode_key(1, WireType::LengthDelimited, buf);
    packet.encode_length_delimited(buf).expect("a Vec grows");
    w.write_all(buf)
}

/// A slice packet's bytes, at most 1 + 1 + (1 + 10) + (1 + 5) + (1 + 1) + 4 × (1 + 10) + (1 + 1):
/// keys, lengths and varints, with room to spare.
type SliceBuf = [u8; 96];

/// Appends `v` as a protobuf varint at `buf[*at..]` (what prost's `encode_varint` writes, into a
/// fixed array: the slice events are ~28 M per 1 M samples, and growing a `Vec` a byte at a time
/// was the largest cost of the export).
#[inline(always)]
fn put_varint(buf: &mut SliceBuf, at: &mut usize, mut v: u64) {
    while v >= 0x80 {
        buf[*at] = (v as u8) | 0x80;
        v >>= 7;
        *at += 1;
    }
    buf[*at] = v as u8;
    *at += 1;
}

/// A field key (field number and wire type) as one byte: every field written here is < 16.
const fn key(field: u8, wire: WireType) -> u8 {
    (field << 3) | wire as u8
}

/// Encodes a slice begin / end packet into `buf` and returns its length: the bytes of
/// `Trace { packet: [TracePacket { timestamp, trusted_packet_sequence_id, sequence_flags,
/// track_event: TrackEvent { category_iids, type, name_iid, track_uuid } }] }`.
fn encode_slice(buf: &mut SliceBuf, t_ns: u64, track: u64, kind: i32, name_iid: u64, category_iid: u64) -> usize {
    let mut event_len = 1 + encoded_len_varint(kind as u64) + 1 + encoded_len_varint(track);
    if name_iid != 0 {
        event_len += 1 + encoded_len_varint(name_iid) + 1 + encoded_len_varint(category_iid);
    }
    let packet_len = 1 + encoded_len_varint(t_ns) + 1 + encoded_len_varint(SEQUENCE as u64) + 1 + encoded_len_varint(event_len as u64) + event_len + 2;
    let mut at = 0;
    buf[at] = key(1, WireType::LengthDelimited);
    at += 1;
    put_varint(buf, &mut at, packet_len as u64);
    buf[at] = key(8, WireType::Varint);
    at += 1;
    put_varint(buf, &mut at, t_ns);
    buf[at] = key(10, WireType::Varint);
    at += 1;
    put_varint(buf, &mut at, SEQUENCE as u64);
    buf[at] = key(11, WireType::LengthDelimited);
    at += 1;
    put_varint(buf, &mut at, event_len as u64);
    if name_iid != 0 {
        buf[at] = key(3, WireType::Varint);
        at += 1;
        put_varint(buf, &mut at, category_iid);
    }
    buf[at] = key(9, WireType::Varint);
    at += 1;
    put_varint(buf, &mut at, kind as u64);
    if name_iid != 0 {
        buf[at] = key(10, WireType::Varint);
        at += 1;
        put_varint(buf, &mut at, name_iid);
    }
    buf[at] = key(11, WireType::Varint);
    at += 1;
    put_varint(buf, &mut at, track);
    buf[at] = key(13, WireType::Varint);
    at += 1;
    put_varint(buf, &mut at, SEQ_NEEDS_INCREMENTAL_STATE as u64);
    at
}

/// Encodes a slice packet ([`encode_slice`]) straight into the output's buffer.
#[inline]
fn put_slice(w: &mut crate::pipe::Chunks, t_ns: u64, track: u64, kind: i32, name_iid: u64, category_iid: u64) -> std::io::Result<()> {
    let room = w.space(std::mem::size_of::<SliceBuf>())?;
    let buf: &mut SliceBuf = (&mut room[..std::mem::size_of::<SliceBuf>()]).try_into().expect("as long as a SliceBuf");
    let n = encode_slice(buf, t_ns, track, kind, name_iid, category_iid);
    w.commit(n);
    Ok(())
}

fn sequenced(p: TracePacket) -> TracePacket {
    TracePacket { trusted_packet_sequence_id: Some(SEQUENCE), ..p }
}

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    // Encoded on a thread of its own while this one writes what is encoded.
    crate::pipe::pipelined(out, |w| write_trace(run, w))
}

fn write_trace(run: &Run, mut w: &mut crate::pipe::Chunks) -> Result<(), ExportError> {
    let note = format!(
        "Exported by threadradar {}: slices are inferred from samples taken every {} ms (a slice spans the samples that showed its frame, its ends known to within one sampling period); the outermost slice is the thread state observed at each sample (computing, waiting for the GIL, idle). The child tracks hold the waits and wake-ups of `threadradar waits` (wake-ups with kernel evidence are exact, the others inferred from samples), the kernel's scheduler states (exact, when recorded with --sched), the critical-section executions of `threadradar sections` (estimated from samples) and, with --exact-locks, every lock's waits to enter and holds from the interpreter's lock functions (exact, kernel uprobes)",
        env!("CARGO_PKG_VERSION"),
        crate::timeline::period_ms_label(run)
    );
    // The sequence starts with cleared incremental state and the two categories.
    write_packet(
        &mut w,
        &sequenced(TracePacket {
            sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
            interned_data: Some(InternedData {
                event_categories: vec![
                    EventCategory { iid: Some(CATEGORY_STATE), name: Some("state".into()) },
                    EventCategory { iid: Some(CATEGORY_PYTHON), name: Some("python".into()) },
                    EventCategory { iid: Some(CATEGORY_WAIT), name: Some("wait".into()) },
                    EventCategory { iid: Some(CATEGORY_WAKEUP), name: Some("wakeup".into()) },
                    EventCategory { iid: Some(CATEGORY_SCHED), name: Some("sched".into()) },
                    EventCategory { iid: Some(CATEGORY_SECTION), name: Some("section".into()) },
                    EventCategory { iid: Some(CATEGORY_LOCK), name: Some("lock".into()) },
                ],
                event_names: Vec::new(),
            }),
            ..Default::default()
        }),
    )?;
    // How the trace was obtained, as a track of its own with one instant event at the start.
    write_packet(&mut w, &sequenced(TracePacket { track_descriptor: Some(TrackDescriptor { uuid: Some(NOTE_TRACK), name: Some("How this trace was obtained".into()), ..Default::default() }), ..Default::default() }))?;
    write_packet(
        &mut w,
        &sequenced(TracePacket {
            timestamp: Some(run.samples.iter().map(|s| s.t).min().unwrap_or(0)),
            track_event: Some(TrackEvent { r#type: Some(TYPE_INSTANT), track_uuid: Some(NOTE_TRACK), name: Some(note), ..Default::default() }),
            ..Default::default()
        }),
    )?;
    // Process and thread tracks, threads in the run's order.
    let mut pids: Vec<u32> = run.threads.iter().map(|t| t.pid).collect();
    pids.sort_unstable();
    pids.dedup();
    let process_base = THREAD_BASE + run.threads.len() as u64;
    let process_track = |pid: u32| process_base + pids.binary_search(&pid).unwrap_or(0) as u64;
    for &pid in &pids {
        let command = run.processes.iter().find(|p| p.pid == pid).map(|p| p.command.clone()).unwrap_or_else(|| run.meta.command.clone());
        let name = command.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(" ");
        write_packet(
            &mut w,
            &sequenced(TracePacket {
                track_descriptor: Some(TrackDescriptor {
                    uuid: Some(process_track(pid)),
                    process: Some(ProcessDescriptor { pid: Some(pid as i32), cmdline: command, process_name: Some(name) }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        )?;
    }
    for (i, t) in run.threads.iter().enumerate() {
        write_packet(
            &mut w,
            &sequenced(TracePacket {
                track_descriptor: Some(TrackDescriptor {
                    uuid: Some(THREAD_BASE + i as u64),
                    parent_uuid: Some(process_track(t.pid)),
                    thread: Some(ThreadDescriptor { pid: Some(t.pid as i32), tid: Some(t.tid as i64), thread_name: Some(t.name.clone()) }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        )?;
    }
    // Slices. A name is interned in a packet of its own just before its first use; frames' ids
    // are looked up by index (a hash per slice would cost as much as encoding it). The overlay is
    // computed meanwhile on another thread.
    let mut frame_iids: Vec<u64> = vec![0; run.frames.len()];
    let mut state_iids: FxHashMap<Level, u64> = FxHashMap::default();
    let mut next_iid = 1u64;
    let mut track = 0u64;
    let (written, overlay) = with_overlay(run, Overlay::of, || slices(run, |ev| match ev {
        SliceEvent::Thread(i) => {
            track = THREAD_BASE + i as u64;
            Ok(())
        }
        SliceEvent::Begin { level, t_ns } => {
            let slot = match level {
                Level::Frame(f) => &mut frame_iids[f as usize],
                Level::State(..) => state_iids.entry(level).or_insert(0),
            };
            if *slot == 0 {
                *slot = next_iid;
                next_iid += 1;
                let name = match level {
                    Level::State(s, b) => state_slice_name(run, s, b),
                    Level::Frame(f) => frame_label(run, f),
                };
                write_packet(
                    &mut w,
                    &sequenced(TracePacket {
                        sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
                        interned_data: Some(InternedData { event_categories: Vec::new(), event_names: vec![EventName { iid: Some(*slot), name: Some(name) }] }),
                        ..Default::default()
                    }),
                )?;
            }
            let iid = *slot;
            let category = if matches!(level, Level::State(..)) { CATEGORY_STATE } else { CATEGORY_PYTHON };
            put_slice(w, t_ns, track, TYPE_SLICE_BEGIN, iid, category)
        }
        SliceEvent::End { t_ns } => put_slice(w, t_ns, track, TYPE_SLICE_END, 0, 0),
    }));
    written?;
    let first_child = process_base + pids.len() as u64;
    write_overlay(run, &overlay, w, first_child, next_iid)?;
    // What the overlay could not use (no kernel events, no wait targets, sources not found), on
    // the note's track.
    if !overlay.notes.is_empty() {
        write_packet(
            &mut w,
            &sequenced(TracePacket {
                timestamp: Some(run.samples.iter().map(|s| s.t).min().unwrap_or(0)),
                track_event: Some(TrackEvent { r#type: Some(TYPE_INSTANT), track_uuid: Some(NOTE_TRACK), name: Some(format!("Waits and sections: {}", overlay.notes.join("; "))), ..Default::default() }),
                ..Default::default()
            }),
        )?;
    }
    drop_later(overlay);
    Ok(())
}

/// One event of a child track: a slice begin or end, or an event built from the overlay's
/// `index`-th wake-up or section.
#[derive(Clone, Copy)]
enum Ev {
    Begin { category: u64, iid: u64 },
    End,
    WakeOut(u32),
    WakeIn(u32),
    Section(u32),
    /// The overlay's `index`-th lock execution: its wait to enter, or its hold.
    LockWait(u32),
    LockHold(u32),
}

/// Events of a child track are written by time: ends before instants before begins at one
/// instant (a wait ends, the wakee is resumed, the next wait begins).
#[derive(Clone, Copy)]
struct ChildEvent {
    t_ns: u64,
    order: u8,
    ev: Ev,
}

impl ChildEvent {
    fn begin(t_ns: u64, category: u64, iid: u64) -> Self {
        ChildEvent { t_ns, order: 2, ev: Ev::Begin { category, iid } }
    }
    fn end(t_ns: u64) -> Self {
        ChildEvent { t_ns, order: 0, ev: Ev::End }
    }
}

/// Interns event names in packets of their own, each before its first use.
struct Names<'a> {
    iids: FxHashMap<std::borrow::Cow<'a, str>, u64>,
    next: u64,
}

impl<'a> Names<'a> {
    fn get(&mut self, w: &mut (impl Write + ?Sized), name: std::borrow::Cow<'a, str>) -> std::io::Result<u64> {
        if let Some(&iid) = self.iids.get(&name) {
            return Ok(iid);
        }
        let iid = self.next;
        self.next += 1;
        write_packet(
            w,
            &sequenced(TracePacket {
                sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
                interned_data: Some(InternedData { event_categories: Vec::new(), event_names: vec![EventName { iid: Some(iid), name: Some(name.to_string()) }] }),
                ..Default::default()
            }),
        )?;
        self.iids.insert(name, iid);
        Ok(iid)
    }
}

/// The overlay's child tracks: waits and wake-ups, scheduler states, critical sections, for
/// each thread that has any. Track uuids from `next_uuid` on; names interned from `next_iid` on.
fn write_overlay(run: &Run, overlay: &Overlay, w: &mut crate::pipe::Chunks, mut next_uuid: u64, next_iid: u64) -> std::io::Result<()> {
    use std::borrow::Cow;
    let mut names = Names { iids: FxHashMap::default(), next: next_iid };
    let n = run.threads.len();
    // Per thread: its waits and wake-up ends, then per section its executions.
    let mut waits: Vec<Vec<ChildEvent>> = vec![Vec::new(); n];
    // A thread's waits may overlap by microseconds; slices on one track cannot: each wait's
    // slice is where [`Overlay::wait_slices`] puts it (every wait keeps one).
    for (wt, &(start, end)) in overlay.waits.iter().zip(&overlay.wait_slices()) {
        let th = wt.thread as usize;
        let iid = names.get(w, Cow::Borrowed(&*wt.object))?;
        waits[th].push(ChildEvent::begin(start, CATEGORY_WAIT, iid));
        waits[th].push(ChildEvent::end(end));
    }
    // Wake-up names by (thread named, evidence, direction).
    let mut wake_iids: FxHashMap<(u32, &'static str, bool), u64> = FxHashMap::default();
    for (i, wk) in overlay.wakes.iter().enumerate() {
        for (out, on, other) in [(true, wk.waker, wk.wakee), (false, wk.wakee, wk.waker)] {
            let key = (other, wk.evidence, out);
            if !wake_iids.contains_key(&key) {
                let other = &run.threads[other as usize].name;
                let name = if out { format!("wakes {other} ({})", wk.evidence) } else { format!("woken by {other} ({})", wk.evidence) };
                wake_iids.insert(key, names.get(w, Cow::Owned(name))?);
            }
            let (t_ns, ev) = if out { (wk.wake_ns, Ev::WakeOut(i as u32)) } else { (wk.resume_ns, Ev::WakeIn(i as u32)) };
            waits[on as usize].push(ChildEvent { t_ns, order: 1, ev });
        }
    }
    let mut sections: Vec<std::collections::BTreeMap<u32, Vec<ChildEvent>>> = vec![Default::default(); n];
    let mut section_iids: Vec<u64> = Vec::with_capacity(overlay.sections.len());
    for (i, s) in overlay.sections.iter().enumerate() {
        let events = sections[s.thread as usize].entry(s.section).or_default();
        let start = events.last().map_or(s.start_ns, |e| s.start_ns.max(e.t_ns));
        let name = if s.outlier { Cow::Owned(format!("{} — outlier", s.lock)) } else { Cow::Borrowed(s.lock.as_str()) };
        section_iids.push(names.get(w, name)?);
        events.push(ChildEvent { t_ns: start, order: 2, ev: Ev::Section(i as u32) });
        events.push(ChildEvent::end(s.end_ns.max(start + 1)));
    }
    // Per thread, per lock: its exact waits to enter and holds (`record --exact-locks`), one after
    // the other on the lock's track (a thread's executions of one lock never overlap).
    let mut locks: Vec<std::collections::BTreeMap<&str, Vec<ChildEvent>>> = vec![Default::default(); n];
    let mut lock_iids: FxHashMap<&str, (u64, u64)> = FxHashMap::default();
    for (i, l) in overlay.locks.iter().enumerate() {
        if !lock_iids.contains_key(&*l.lock) {
            let wait = names.get(w, Cow::Owned(format!("waits for {}", l.lock)))?;
            let hold = names.get(w, Cow::Owned(format!("holds {}", l.lock)))?;
            lock_iids.insert(&l.lock, (wait, hold));
        }
        let events = locks[l.thread as usize].entry(&l.lock).or_default();
        let from = events.last().map_or(0, |e| e.t_ns);
        let called = l.called_ns.max(from);
        let acquired = l.acquired_ns.max(called);
        if acquired > called {
            events.push(ChildEvent { t_ns: called, order: 2, ev: Ev::LockWait(i as u32) });
            events.push(ChildEvent::end(acquired));
        }
        events.push(ChildEvent { t_ns: acquired, order: 2, ev: Ev::LockHold(i as u32) });
        events.push(ChildEvent::end(l.released_ns.max(acquired + 1)));
    }
    // The wake-up instants (two per edge) are written from one packet, its strings and vectors
    // refilled in place: the same message as one built per event, without its allocations.
    let mut wake_packet = TracePacket {
        timestamp: Some(0),
        sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
        track_event: Some(TrackEvent {
            category_iids: vec![CATEGORY_WAKEUP],
            r#type: Some(TYPE_INSTANT),
            name_iid: Some(0),
            debug_annotations: vec![
                DebugAnnotation::string("object", ""),
                DebugAnnotation::string("evidence", ""),
                DebugAnnotation::string("kind", ""),
                DebugAnnotation::double("confidence", 0.0),
                DebugAnnotation::int("", 0),
            ],
            track_uuid: Some(0),
            ..Default::default()
        }),
        ..sequenced(TracePacket::default())
    };
    let set = |slot: &mut Option<String>, v: &str| {
        let s = slot.get_or_insert_with(String::new);
        s.clear();
        s.push_str(v);
    };
    let mut packet_buf: Vec<u8> = Vec::new();
    for th in 0..n {
        let parent = THREAD_BASE + th as u64;
        let mut tracks: Vec<(String, Vec<ChildEvent>)> = Vec::new();
        if !waits[th].is_empty() {
            tracks.push(("Waits and wake-ups".into(), std::mem::take(&mut waits[th])));
        }
        if let Some(spans) = overlay.sched.get(th).filter(|s| !s.is_empty()) {
            let mut events = Vec::with_capacity(spans.len() * 2);
            for sp in spans {
                let iid = names.get(w, Cow::Owned(sp.state.label()))?;
                events.push(ChildEvent::begin(sp.start_ns, CATEGORY_SCHED, iid));
                events.push(ChildEvent::end(sp.end_ns));
            }
            tracks.push(("Scheduler".into(), events));
        }
        for (section, events) in std::mem::take(&mut sections[th]) {
            let label = overlay.sections.iter().find(|s| s.section == section).map_or("", |s| s.label.as_str());
            tracks.push((format!("Critical section: {label}"), events));
        }
        for (lock, events) in std::mem::take(&mut locks[th]) {
            tracks.push((format!("Lock events (exact, uprobe): {lock}"), events));
        }
        for (name, mut events) in tracks {
            let uuid = next_uuid;
            next_uuid += 1;
            write_packet(w, &sequenced(TracePacket { track_descriptor: Some(TrackDescriptor { uuid: Some(uuid), name: Some(name), parent_uuid: Some(parent), ..Default::default() }), ..Default::default() }))?;
            events.sort_by_key(|e| (e.t_ns, e.order));
            for e in events {
                let event = match e.ev {
                    Ev::Begin { category, iid } => {
                        put_slice(w, e.t_ns, uuid, TYPE_SLICE_BEGIN, iid, category)?;
                        continue;
                    }
                    Ev::End => {
                        put_slice(w, e.t_ns, uuid, TYPE_SLICE_END, 0, 0)?;
                        continue;
                    }
                    Ev::WakeOut(i) | Ev::WakeIn(i) => {
                        let wk = &overlay.wakes[i as usize];
                        let out = matches!(e.ev, Ev::WakeOut(_));
                        let (other, key) = if out { (wk.wakee, "wakee_tid") } else { (wk.waker, "waker_tid") };
                        wake_packet.timestamp = Some(e.t_ns);
                        let ev = wake_packet.track_event.as_mut().expect("made above");
                        ev.name_iid = Some(wake_iids[&(other, wk.evidence, out)]);
                        ev.track_uuid = Some(uuid);
                        let a = &mut ev.debug_annotations;
                        set(&mut a[0].string_value, &wk.object);
                        set(&mut a[1].string_value, wk.evidence);
                        set(&mut a[2].string_value, wk.kind());
                        a[3].double_value = Some(wk.confidence);
                        set(&mut a[4].name, key);
                        a[4].int_value = Some(run.threads[other as usize].tid as i64);
                        ev.flow_ids.clear();
                        ev.terminating_flow_ids.clear();
                        if out { &mut ev.flow_ids } else { &mut ev.terminating_flow_ids }.push(wk.id);
                        write_packet_with(w, &wake_packet, &mut packet_buf)?;
                        continue;
                    }
                    Ev::Section(i) => {
                        let s = &overlay.sections[i as usize];
                        let mut args = vec![
                            DebugAnnotation::string("section", s.label.as_str()),
                            DebugAnnotation::string("lock", s.lock.as_str()),
                            DebugAnnotation::bool("outlier", s.outlier),
                            DebugAnnotation::double("error_ms", s.error_ns as f64 / 1e6),
                            DebugAnnotation::int("samples", s.samples as i64),
                            DebugAnnotation::int("waiters", s.waiters as i64),
                        ];
                        if let Some(wt) = s.wait_ns {
                            args.push(DebugAnnotation::double("wait_to_enter_ms", wt as f64 / 1e6));
                        }
                        TrackEvent { category_iids: vec![CATEGORY_SECTION], r#type: Some(TYPE_SLICE_BEGIN), name_iid: Some(section_iids[i as usize]), debug_annotations: args, ..Default::default() }
                    }
                    Ev::LockWait(i) | Ev::LockHold(i) => {
                        let l = &overlay.locks[i as usize];
                        let hold = matches!(e.ev, Ev::LockHold(_));
                        let iids = lock_iids[&*l.lock];
                        let mut args = vec![
                            DebugAnnotation::string("lock", &*l.lock),
                            DebugAnnotation::string("evidence", "lock-event (exact, uprobe)"),
                            DebugAnnotation::double("wait_to_enter_ms", (l.acquired_ns - l.called_ns.min(l.acquired_ns)) as f64 / 1e6),
                            DebugAnnotation::double("held_ms", l.released_ns.saturating_sub(l.acquired_ns) as f64 / 1e6),
                        ];
                        if let Some(by) = &l.waited_for {
                            args.push(DebugAnnotation::string("waited_for", by.as_str()));
                        }
                        TrackEvent { category_iids: vec![CATEGORY_LOCK], r#type: Some(TYPE_SLICE_BEGIN), name_iid: Some(if hold { iids.1 } else { iids.0 }), debug_annotations: args, ..Default::default() }
                    }
                };
                let event = TrackEvent { track_uuid: Some(uuid), ..event };
                write_packet(w, &sequenced(TracePacket { timestamp: Some(e.t_ns), sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE), track_event: Some(event), ..Default::default() }))?;
            }
        }
    }
    Ok(())
}

/// The size in bytes of `trace` encoded (e.g. of some of a file's packets).
pub fn encoded_len(trace: &Trace) -> usize {
    trace.encoded_len()
}

/// Reads a trace written by [`write`] (or any trace of these messages) back.
pub fn read(bytes: &[u8]) -> Result<Trace, prost::DecodeError> {
    Trace::decode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_encoded_slices_are_the_bytes_prost_encodes() {
        for (kind, name, cat, t, track) in [(TYPE_SLICE_BEGIN, 300u64, CATEGORY_PYTHON, 1_234_567_890_123, THREAD_BASE + 7), (TYPE_SLICE_END, 0, 0, 0, 2), (TYPE_SLICE_BEGIN, u64::MAX, CATEGORY_STATE, u64::MAX, u64::MAX)] {
            let mut buf: SliceBuf = [0; 96];
            let n = encode_slice(&mut buf, t, track, kind, name, cat);
            let buf = &buf[..n];
            let want = Trace {
                packet: vec![TracePacket {
                    timestamp: Some(t),
                    trusted_packet_sequence_id: Some(SEQUENCE),
                    sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
                    track_event: Some(TrackEvent {
                        category_iids: if name != 0 { vec![cat] } else { vec![] },
                        r#type: Some(kind),
                        name_iid: (name != 0).then_some(name),
                        track_uuid: Some(track),
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
            };
            assert_eq!(Trace::decode(buf).unwrap(), want);
            assert_eq!(buf.len(), want.encoded_len());
        }
    }
}
