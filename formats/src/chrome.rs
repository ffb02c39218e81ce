//! The Chrome JSON trace format (Trace Event Format), which both Perfetto (ui.perfetto.dev,
//! `trace_processor`) and `chrome://tracing` open: one track per thread, named by the program.
//! For Perfetto, [`crate::perfetto`]'s protobuf is smaller and faster to write; this format stays
//! for `chrome://tracing` and tools that read only JSON.
//!
//! Each thread's track is a flame chart rebuilt from its samples ([`crate::timeline::slices`]):
//! the outermost slice is the thread's state (`Computing`, `Waiting for the GIL`, `Idle (futex)`),
//! and the sampled stack nests under it. Slices are therefore inferred from sampling (their ends are known to
//! within one interval), which `otherData` says in the file.
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

use crate::timeline::{frame_label, slices, state_slice_name, with_overlay, Level, Overlay, SliceEvent};
use crate::ExportError;
use serde::Serialize;
use std::collections::HashMap;
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

/// Nanoseconds written as microseconds with three decimals, without a float or an allocation.
struct Micros(u64);

impl std::fmt::Display for Micros {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

/// The overlay's events (see the module's documentation), one per line after the slices.
fn write_overlay(run: &Run, overlay: &Overlay, w: &mut impl Write) -> Result<(), ExportError> {
    let enc = |e: serde_json::Error| ExportError::Encode { format: "chrome", detail: e.to_string() };
    let put = |w: &mut dyn Write, v: serde_json::Value| -> Result<(), ExportError> {
        w.write_all(b",\n")?;
        serde_json::to_writer(&mut *w, &v).map_err(enc)
    };
    let us = |ns: u64| ns as f64 / 1000.0;
    let mut last_end = vec![0u64; run.threads.len()];
    for wt in &overlay.waits {
        let t = &run.threads[wt.thread as usize];
        let start = wt.start_ns.max(last_end[wt.thread as usize]);
        if wt.end_ns <= start {
            continue;
        }
        last_end[wt.thread as usize] = wt.end_ns;
        let id = format!("0x{:x}", wt.thread);
        let args = serde_json::json!({ "thread": t.name, "tid": t.tid, "syscall": wt.syscall, "samples": wt.samples, "open": wt.open, "futile": wt.futile });
        put(w, serde_json::json!({ "ph": "b", "pid": t.pid, "tid": t.tid, "ts": us(start), "cat": "wait", "name": wt.object, "id": id, "args": args }))?;
        put(w, serde_json::json!({ "ph": "e", "pid": t.pid, "tid": t.tid, "ts": us(wt.end_ns), "cat": "wait", "name": wt.object, "id": id }))?;
    }
    for wk in &overlay.wakes {
        let (waker, wakee) = (&run.threads[wk.waker as usize], &run.threads[wk.wakee as usize]);
        let args = |key: &str, tid: u32| serde_json::json!({ "object": wk.object, "evidence": wk.evidence, "kind": wk.kind(), "confidence": wk.confidence, key: tid });
        put(
            w,
            serde_json::json!({ "ph": "X", "pid": waker.pid, "tid": waker.tid, "ts": us(wk.wake_ns), "dur": 0, "cat": "wakeup",
                "name": format!("wakes {} ({})", wakee.name, wk.evidence), "bind_id": wk.id, "flow_out": true, "args": args("wakee_tid", wakee.tid) }),
        )?;
        put(
            w,
            serde_json::json!({ "ph": "X", "pid": wakee.pid, "tid": wakee.tid, "ts": us(wk.resume_ns), "dur": 0, "cat": "wakeup",
                "name": format!("woken by {} ({})", waker.name, wk.evidence), "bind_id": wk.id, "flow_in": true, "args": args("waker_tid", waker.tid) }),
        )?;
    }
    let mut last: std::collections::HashMap<(u32, u32), u64> = std::collections::HashMap::new();
    for s in &overlay.sections {
        let t = &run.threads[s.thread as usize];
        let prev = last.entry((s.thread, s.section)).or_insert(0);
        let start = s.start_ns.max(*prev);
        let end = s.end_ns.max(start + 1);
        *prev = end;
        let id = format!("0x{:x}", s.thread);
        let args = serde_json::json!({ "thread": t.name, "tid": t.tid, "lock": s.lock, "outlier": s.outlier, "error_ms": s.error_ns as f64 / 1e6,
            "wait_to_enter_ms": s.wait_ns.map(|n| n as f64 / 1e6), "samples": s.samples, "waiters": s.waiters });
        put(w, serde_json::json!({ "ph": "b", "pid": t.pid, "tid": t.tid, "ts": us(start), "cat": "section", "name": s.label, "id": id, "args": args }))?;
        put(w, serde_json::json!({ "ph": "e", "pid": t.pid, "tid": t.tid, "ts": us(end), "cat": "section", "name": s.label, "id": id }))?;
    }
    Ok(())
}

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    let mut w = std::io::BufWriter::new(out);
    let enc = |e: serde_json::Error| ExportError::Encode { format: "chrome", detail: e.to_string() };
    let note = format!(
        "Exported by threadradar {}. Slices are inferred from samples taken every {} ms: a slice spans the samples that showed its frame; the outermost slice is the thread state (computing, waiting for the GIL, idle) observed at each sample. Async slices of category wait and the wakeup flows are the waits and wake-ups of `threadradar waits` (the evidence of each in its args: kernel is exact, the others inferred from samples); async slices of category section are the critical-section executions of `threadradar sections`.",
        env!("CARGO_PKG_VERSION"),
        run.meta.interval_ms
    );
    write!(w, "{{\"displayTimeUnit\":\"ms\",\"otherData\":")?;
    serde_json::to_writer(&mut w, &serde_json::json!({ "source": "threadradar", "note": note, "command": run.meta.command.join(" ") })).map_err(enc)?;
    write!(w, ",\"traceEvents\":[")?;
    let mut first = true;
    let mut emit = |w: &mut std::io::BufWriter<&mut dyn Write>, e: &Event| -> Result<(), ExportError> {
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
    // name is JSON-escaped once, not per event.
    let mut names: HashMap<Level, (String, &'static str)> = HashMap::new();
    let mut head = String::new();
    let (written, overlay) = with_overlay(run, Overlay::of, || slices(run, |ev| match ev {
        SliceEvent::Thread(i) => {
            let t = &run.threads[i as usize];
            head = format!(",\n{{\"pid\":{},\"tid\":{},", t.pid, t.tid);
            Ok(())
        }
        SliceEvent::Begin { level, t_ns } => {
            let (name, cat) = names.entry(level).or_insert_with(|| match level {
                Level::State(s, b) => (serde_json::to_string(&state_slice_name(run, s, b)).unwrap_or_default(), "state"),
                Level::Frame(f) => (serde_json::to_string(&frame_label(run, f)).unwrap_or_default(), "python"),
            });
            w.write_all(head.as_bytes())?;
            write!(w, "\"ph\":\"B\",\"ts\":{},\"cat\":\"{cat}\",\"name\":{name}}}", Micros(t_ns))
        }
        SliceEvent::End { t_ns } => {
            w.write_all(head.as_bytes())?;
            write!(w, "\"ph\":\"E\",\"ts\":{}}}", Micros(t_ns))
        }
    }));
    written?;
    write_overlay(run, &overlay, &mut w)?;
    w.write_all(b"]}\n")?;
    w.flush()?;
    Ok(())
}
