//! The Chrome JSON trace format (Trace Event Format), which both Perfetto (ui.perfetto.dev,
//! `trace_processor`) and `chrome://tracing` open: one track per thread, named by the program.
//! For Perfetto, [`crate::perfetto`]'s protobuf is smaller and faster to write; this format stays
//! for `chrome://tracing` and tools that read only JSON.
//!
//! Each thread's track is a flame chart rebuilt from its samples ([`crate::timeline::slices`]):
//! the outermost slice is the thread's state (`Computing`, `Waiting for the GIL`, `Idle (futex)`),
//! and the sampled stack nests under it. Each slice is one complete event (`ph` `X`, with `dur`),
//! written in the order the slices begin, a parent before its children. Slices are therefore
//! inferred from sampling (their ends are known to within one interval), which `otherData` says
//! in the file.
//!
//! The run's [`Overlay`] follows the slices:
//! - every wait of the waits view as an async slice (`ph` `b`/`e`, category `wait`) named by the
//!   object waited on (`threading.Condition self.cond`, `pipe:[123]`), with the thread, tid,
//!   system call and samples in `args`; one async track per object and thread (`id` = the
//!   thread's index);
//! - every wake-up edge as a flow (flow events v2): a zero-length complete event (`X`, category
//!   `wakeup`) on the waker at the wake-up, `wakes <wakee> (<evidence>)`, with `bind_id` and
//!   `flow_out`, and one on the wakee where the wait ended, `woken by <waker> (<evidence>)`, with
//!   the same `bind_id` and `flow_in`; `args` hold the object, evidence, kind and confidence;
//! - every execution of a critical section as an async slice (category `section`) named by the
//!   section, with its lock, outlier flag, error and wait to enter in `args`.
//!
//! Scheduler states are drawn only by [`crate::perfetto`].

use crate::timeline::{drop_later, frame_label, slices, state_slice_name, with_overlay, Level, Overlay, SliceEvent};
use crate::ExportError;
use serde::Serialize;
use rustc_hash::FxHashMap;
use std::io::Write;
use threadradar_profiler::run::Run;

#[derive(Serialize)]
struct Event<'a> {
    ph: &'static str,
    pid: u32,
    tid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<serde_json::Value>,
}

/// An async slice's begin (`b`, with `args`) or end (`e`). Fields in the alphabetical order
/// in which `serde_json`'s maps wrote them, so the bytes are those of the `json!` objects this
/// replaces (without a map per event).
#[derive(Serialize)]
struct AsyncEvent<'a, A> {
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<A>,
    cat: &'static str,
    id: &'a str,
    name: &'a str,
    ph: &'static str,
    pid: u32,
    tid: u32,
    ts: f64,
}

#[derive(Serialize)]
struct WaitArgs<'a> {
    futile: bool,
    open: bool,
    samples: u32,
    syscall: Option<&'a str>,
    thread: &'a str,
    tid: u32,
}

#[derive(Serialize)]
struct SectionArgs<'a> {
    error_ms: f64,
    lock: &'a str,
    outlier: bool,
    samples: u32,
    thread: &'a str,
    tid: u32,
    wait_to_enter_ms: Option<f64>,
    waiters: u32,
}

/// One end of a wake-up flow: a zero-length complete event.
#[derive(Serialize)]
struct WakeEvent<'a> {
    args: WakeArgs<'a>,
    bind_id: u64,
    cat: &'static str,
    dur: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    flow_in: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    flow_out: Option<bool>,
    name: &'a str,
    ph: &'static str,
    pid: u32,
    tid: u32,
    ts: f64,
}

#[derive(Serialize)]
struct WakeArgs<'a> {
    confidence: f64,
    evidence: &'a str,
    kind: &'a str,
    object: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    wakee_tid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    waker_tid: Option<u32>,
}

/// The overlay's events (see the module's documentation), one per line after the slices.
fn write_overlay(run: &Run, overlay: &Overlay, w: &mut impl Write) -> Result<(), ExportError> {
    let enc = |e: serde_json::Error| ExportError::Encode { format: "chrome", detail: e.to_string() };
    // Each event is serialised into one reused line (serde's many small writes stay in a
    // `Vec`), then copied out in one piece.
    let mut line: Vec<u8> = Vec::with_capacity(512);
    let mut put = |v: &dyn erased::Event| -> Result<(), ExportError> {
        line.clear();
        line.extend_from_slice(b",\n");
        v.write_to(&mut line).map_err(enc)?;
        w.write_all(&line)?;
        Ok(())
    };
    let us = |ns: u64| ns as f64 / 1000.0;
    let mut id = String::new();
    let set_id = |id: &mut String, thread: u32| {
        id.clear();
        let _ = std::fmt::Write::write_fmt(id, format_args!("0x{thread:x}"));
    };
    // A thread's waits share one async id, so they must not overlap: each goes where
    // [`Overlay::wait_slices`] puts it, and none is left out.
    for (wt, &(start, end)) in overlay.waits.iter().zip(&overlay.wait_slices()) {
        let t = &run.threads[wt.thread as usize];
        set_id(&mut id, wt.thread);
        let args = WaitArgs { futile: wt.futile, open: wt.open, samples: wt.samples, syscall: wt.syscall.as_deref(), thread: &t.name, tid: t.tid };
        put(&AsyncEvent { args: Some(args), cat: "wait", id: &id, name: &wt.object, ph: "b", pid: t.pid, tid: t.tid, ts: us(start) })?;
        put(&AsyncEvent::<()> { args: None, cat: "wait", id: &id, name: &wt.object, ph: "e", pid: t.pid, tid: t.tid, ts: us(end) })?;
    }
    let mut name = String::new();
    for wk in &overlay.wakes {
        let (waker, wakee) = (&run.threads[wk.waker as usize], &run.threads[wk.wakee as usize]);
        let args = |wakee_tid, waker_tid| WakeArgs { confidence: wk.confidence, evidence: wk.evidence, kind: wk.kind(), object: &wk.object, wakee_tid, waker_tid };
        name.clear();
        let _ = std::fmt::Write::write_fmt(&mut name, format_args!("wakes {} ({})", wakee.name, wk.evidence));
        let out = WakeEvent {
            args: args(Some(wakee.tid), None),
            bind_id: wk.id,
            cat: "wakeup",
            dur: 0,
            flow_in: None,
            flow_out: Some(true),
            name: &name,
            ph: "X",
            pid: waker.pid,
            tid: waker.tid,
            ts: us(wk.wake_ns),
        };
        put(&out)?;
        name.clear();
        let _ = std::fmt::Write::write_fmt(&mut name, format_args!("woken by {} ({})", waker.name, wk.evidence));
        let into = WakeEvent {
            args: args(None, Some(waker.tid)),
            bind_id: wk.id,
            cat: "wakeup",
            dur: 0,
            flow_in: Some(true),
            flow_out: None,
            name: &name,
            ph: "X",
            pid: wakee.pid,
            tid: wakee.tid,
            ts: us(wk.resume_ns),
        };
        put(&into)?;
    }
    let mut last: std::collections::HashMap<(u32, u32), u64> = std::collections::HashMap::new();
    for s in &overlay.sections {
        let t = &run.threads[s.thread as usize];
        let prev = last.entry((s.thread, s.section)).or_insert(0);
        let start = s.start_ns.max(*prev);
        let end = s.end_ns.max(start + 1);
        *prev = end;
        set_id(&mut id, s.thread);
        let args = SectionArgs {
            error_ms: s.error_ns as f64 / 1e6,
            lock: &s.lock,
            outlier: s.outlier,
            samples: s.samples,
            thread: &t.name,
            tid: t.tid,
            wait_to_enter_ms: s.wait_ns.map(|n| n as f64 / 1e6),
            waiters: s.waiters,
        };
        put(&AsyncEvent { args: Some(args), cat: "section", id: &id, name: &s.label, ph: "b", pid: t.pid, tid: t.tid, ts: us(start) })?;
        put(&AsyncEvent::<()> { args: None, cat: "section", id: &id, name: &s.label, ph: "e", pid: t.pid, tid: t.tid, ts: us(end) })?;
    }
    Ok(())
}

/// The overlay's event types behind one `dyn`, so one closure writes them all.
mod erased {
    pub trait Event {
        fn write_to(&self, w: &mut Vec<u8>) -> serde_json::Result<()>;
    }

    impl<T: serde::Serialize> Event for T {
        fn write_to(&self, w: &mut Vec<u8>) -> serde_json::Result<()> {
            serde_json::to_writer(w, self)
        }
    }
}

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    // Encoded on a thread of its own while this one writes what is encoded.
    crate::pipe::pipelined(out, |w| write_trace(run, w))
}

/// Nanoseconds as microseconds with three decimals (`12.345`) at the start of `out`, without a
/// float, an allocation or the formatting machinery (one per slice event); gives the length.
fn put_micros(out: &mut [u8], ns: u64) -> usize {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut v = ns / 1000;
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let int = &digits[at..];
    out[..int.len()].copy_from_slice(int);
    let frac = ns % 1000;
    out[int.len()..int.len() + 4].copy_from_slice(&[b'.', b'0' + (frac / 100) as u8, b'0' + (frac / 10 % 10) as u8, b'0' + (frac % 10) as u8]);
    int.len() + 4
}

/// The longest time [`put_micros`] writes: 17 digits, a point and 3 decimals.
const MICROS_MAX: usize = 21;

/// Writes one slice, `<head><begin>,"dur":<end - begin><tail>`, straight into the output's buffer
/// (`head` is `,\n{"pid":…,"tid":…,"ph":"X","ts":`).
fn put_slice(w: &mut crate::pipe::Chunks, head: &[u8], begin_ns: u64, end_ns: u64, tail: &[u8]) -> std::io::Result<()> {
    const DUR: &[u8] = b",\"dur\":";
    let n = head.len() + DUR.len() + 2 * MICROS_MAX + tail.len();
    let mut aside = Vec::new();
    // A name longer than a buffer can lend (a program may call a thread anything): built aside.
    let room = if n > 1 << 16 {
        aside.resize(n, 0);
        &mut aside[..]
    } else {
        w.space(n)?
    };
    room[..head.len()].copy_from_slice(head);
    let mut at = head.len();
    at += put_micros(&mut room[at..], begin_ns);
    room[at..at + DUR.len()].copy_from_slice(DUR);
    at += DUR.len();
    at += put_micros(&mut room[at..], end_ns.saturating_sub(begin_ns));
    room[at..at + tail.len()].copy_from_slice(tail);
    at += tail.len();
    if aside.is_empty() {
        w.commit(at);
        Ok(())
    } else {
        w.write_all(&aside[..at])
    }
}

fn write_trace(run: &Run, mut w: &mut crate::pipe::Chunks) -> Result<(), ExportError> {
    let enc = |e: serde_json::Error| ExportError::Encode { format: "chrome", detail: e.to_string() };
    let note = format!(
        "Exported by threadradar {}. Slices are inferred from samples taken every {} ms: a slice spans the samples that showed its frame; the outermost slice is the thread state (computing, waiting for the GIL, idle) observed at each sample. Async slices of category wait and the wakeup flows are the waits and wake-ups of `threadradar waits` (the evidence of each in its args: kernel is exact, the others inferred from samples); async slices of category section are the critical-section executions of `threadradar sections`.",
        env!("CARGO_PKG_VERSION"),
        crate::timeline::period_ms_label(run)
    );
    write!(w, "{{\"displayTimeUnit\":\"ms\",\"otherData\":")?;
    serde_json::to_writer(&mut w, &serde_json::json!({ "source": "threadradar", "note": note, "command": run.meta.command.join(" ") })).map_err(enc)?;
    write!(w, ",\"traceEvents\":[")?;
    let mut first = true;
    let mut emit = |w: &mut &mut crate::pipe::Chunks, e: &Event| -> Result<(), ExportError> {
        if !first {
            w.write_all(b",\n")?;
        }
        first = false;
        serde_json::to_writer(&mut *w, e).map_err(enc)
    };
    // Metadata: process and thread names, threads in the run's order.
    let mut pids: Vec<u32> = run.threads.iter().map(|t| t.pid).collect();
    pids.sort_unstable();
    pids.dedup();
    for pid in pids {
        let cmd = run.processes.iter().find(|p| p.pid == pid).map(|p| p.command.join(" ")).unwrap_or_else(|| run.meta.command.join(" "));
        emit(&mut w, &Event { ph: "M", pid, tid: pid, ts: None, name: Some("process_name"), cat: None, args: Some(serde_json::json!({ "name": cmd })) })?;
    }
    for (i, t) in run.threads.iter().enumerate() {
        emit(&mut w, &Event { ph: "M", pid: t.pid, tid: t.tid, ts: None, name: Some("thread_name"), cat: None, args: Some(serde_json::json!({ "name": t.name })) })?;
        emit(&mut w, &Event { ph: "M", pid: t.pid, tid: t.tid, ts: None, name: Some("thread_sort_index"), cat: None, args: Some(serde_json::json!({ "sort_index": i })) })?;
    }
    // Slices are written by hand: a run of a million samples makes millions of events, and each
    // name is JSON-escaped once (a frame's looked up by index), not per event. An event is put
    // together in the output's buffer itself. Each slice is one complete event (`X`, a begin and
    // a duration) rather than a `B`/`E` pair: a quarter fewer bytes and half the events for a
    // viewer to read. They are written in the order they begin, a parent before its children (a
    // viewer nests complete events of equal start by that order), once a thread's outermost
    // slice (its state) has ended: only the slices under one state slice are held.
    let mut frame_names: Vec<Option<Box<[u8]>>> = vec![None; run.frames.len()];
    let mut state_names: FxHashMap<Level, Box<[u8]>> = FxHashMap::default();
    let mut head = String::new();
    let mut pending: Vec<(Level, u64, u64)> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let (written, overlay) = with_overlay(run, Overlay::of, || slices(run, |ev| match ev {
        SliceEvent::Thread(i) => {
            let t = &run.threads[i as usize];
            head = format!(",\n{{\"pid\":{},\"tid\":{},\"ph\":\"X\",\"ts\":", t.pid, t.tid);
            Ok(())
        }
        SliceEvent::Begin { level, t_ns } => {
            open.push(pending.len());
            pending.push((level, t_ns, t_ns));
            Ok(())
        }
        SliceEvent::End { t_ns } => {
            if let Some(i) = open.pop() {
                pending[i].2 = t_ns;
            }
            if !open.is_empty() {
                return Ok(());
            }
            for &(level, begin, end) in &pending {
                // `,"cat":"…","name":"…"}`, escaped once per name.
                let tail = match level {
                    Level::State(s, b) => &**state_names.entry(level).or_insert_with(|| slice_tail("state", &state_slice_name(run, s, b))),
                    Level::Frame(f) => &**frame_names[f as usize].get_or_insert_with(|| slice_tail("python", &frame_label(run, f))),
                };
                put_slice(w, head.as_bytes(), begin, end, tail)?;
            }
            pending.clear();
            Ok(())
        }
    }));
    written?;
    write_overlay(run, &overlay, &mut w)?;
    w.write_all(b"]}\n")?;
    drop_later(overlay);
    Ok(())
}

/// The end of a slice's begin event after its time: `,"cat":"<cat>","name":<name as JSON>}`.
fn slice_tail(cat: &str, name: &str) -> Box<[u8]> {
    format!(",\"cat\":\"{cat}\",\"name\":{}}}", serde_json::to_string(name).unwrap_or_default()).into_bytes().into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slice is one JSON object whatever its name's length: a name longer than an output buffer
    /// lends (a program may name a function anything) is built aside, a short one in place.
    #[test]
    fn slices_with_short_and_huge_names_are_whole_events() {
        let long = "f".repeat(100_000);
        let head = ",\n{\"pid\":1,\"tid\":2,\"ph\":\"X\",\"ts\":";
        let mut out = Vec::new();
        crate::pipe::pipelined(&mut out, |w| -> std::io::Result<()> {
            w.write_all(b"[{}")?;
            for name in ["short", long.as_str(), "after"] {
                put_slice(w, head.as_bytes(), 1_234_567, 1_240_000, &slice_tail("python", name))?;
            }
            w.write_all(b"]")
        })
        .unwrap();
        let events: Vec<serde_json::Value> = serde_json::from_slice(&out).expect("valid JSON");
        let names: Vec<&str> = events[1..].iter().map(|e| e["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["short", long.as_str(), "after"]);
        for e in &events[1..] {
            assert_eq!((e["ts"].as_f64(), e["dur"].as_f64(), e["ph"].as_str()), (Some(1234.567), Some(5.433), Some("X")));
        }
    }
}
