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
//! from samples. Wake-up flows (`flow_ids` / `terminating_flow_ids`) belong on the wait slices
//! once runs record wake-up edges.
//!
//! The message types are declared with prost's derive ([`proto`]), field numbers as upstream:
//! descriptors, interned names and the readers (tests, [`read`]) use them. The slice events — all
//! but a handful of the packets — are encoded field by field with prost's encoding functions into
//! one reused buffer, the same bytes the derived types encode, without building a message per
//! event.

use crate::timeline::{frame_label, slices, state_slice_name, Level, SliceEvent};
use crate::ExportError;
use prost::encoding::{encode_key, encoded_len_varint, WireType};
use prost::Message;
use std::collections::HashMap;
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
        /// `TrackEvent.Type`: see [`TYPE_SLICE_BEGIN`] and the others.
        #[prost(int32, optional, tag = "9")]
        pub r#type: Option<i32>,
        #[prost(uint64, optional, tag = "10")]
        pub name_iid: Option<u64>,
        #[prost(uint64, optional, tag = "11")]
        pub track_uuid: Option<u64>,
        #[prost(string, optional, tag = "23")]
        pub name: Option<String>,
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
/// Track uuids: the note's track, then threads (`THREAD_BASE + thread id`), then processes; small
/// numbers, because every slice event carries its track's uuid as a varint.
const NOTE_TRACK: u64 = 1;
const THREAD_BASE: u64 = 2;

/// Writes `packet` as one `Trace.packet` (field 1) entry.
fn write_packet(w: &mut impl Write, packet: &TracePacket) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(packet.encoded_len() + 11);
    encode_key(1, WireType::LengthDelimited, &mut buf);
    packet.encode_length_delimited(&mut buf).expect("a Vec grows");
    w.write_all(&buf)
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

fn sequenced(p: TracePacket) -> TracePacket {
    TracePacket { trusted_packet_sequence_id: Some(SEQUENCE), ..p }
}

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    let note = format!(
        "Exported by threadradar {}: slices are inferred from samples taken every {} ms (a slice spans the samples that showed its frame, its ends known to within one interval); the outermost slice is the thread state observed at each sample (computing, waiting for the GIL, idle)",
        env!("CARGO_PKG_VERSION"),
        run.meta.interval_ms
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
    // are looked up by index (a hash per slice would cost as much as encoding it).
    let mut frame_iids: Vec<u64> = vec![0; run.frames.len()];
    let mut state_iids: HashMap<Level, u64> = HashMap::new();
    let mut next_iid = 1u64;
    let mut buf: SliceBuf = [0; 96];
    let mut track = 0u64;
    slices(run, |ev| match ev {
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
            let n = encode_slice(&mut buf, t_ns, track, TYPE_SLICE_BEGIN, iid, category);
            w.write_all(&buf[..n])
        }
        SliceEvent::End { t_ns } => {
            let n = encode_slice(&mut buf, t_ns, track, TYPE_SLICE_END, 0, 0);
            w.write_all(&buf[..n])
        }
    })?;
    w.flush()?;
    Ok(())
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
                        name: None,
                    }),
                    ..Default::default()
                }],
            };
            assert_eq!(Trace::decode(buf).unwrap(), want);
            assert_eq!(buf.len(), want.encoded_len());
        }
    }
}
