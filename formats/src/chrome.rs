//! The Chrome JSON trace format (Trace Event Format), which both Perfetto (ui.perfetto.dev,
//! `trace_processor`) and `chrome://tracing` open: one track per thread, named by the program.
//! For Perfetto, [`crate::perfetto`]'s protobuf is smaller and faster to write; this format stays
//! for `chrome://tracing` and tools that read only JSON.
//!
//! Each thread's track is a flame chart rebuilt from its samples ([`crate::timeline::slices`]):
//! the outermost slice is the thread's state (`Computing`, `Waiting for the GIL`, `Idle (futex)`),
//! and the sampled stack nests under it. Slices are therefore inferred from sampling (their ends are known to
//! within one interval), which `otherData` says in the file. Wake-up flows (`flow_in`/`flow_out`
//! bindings) belong on the wait slices once runs record wake-up edges.

use crate::timeline::{frame_label, slices, state_slice_name, Level, SliceEvent};
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

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    let mut w = std::io::BufWriter::new(out);
    let enc = |e: serde_json::Error| ExportError::Encode { format: "chrome", detail: e.to_string() };
    let note = format!(
        "Exported by threadradar {}. Slices are inferred from samples taken every {} ms: a slice spans the samples that showed its frame; the outermost slice is the thread state (computing, waiting for the GIL, idle) observed at each sample.",
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
    slices(run, |ev| match ev {
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
    })?;
    w.write_all(b"]}\n")?;
    w.flush()?;
    Ok(())
}
