//! The Chrome JSON trace format (Trace Event Format), which both Perfetto (ui.perfetto.dev,
//! `trace_processor`) and `chrome://tracing` open: one track per thread, named by the program.
//!
//! Each thread's track is a flame chart rebuilt from its samples: the outermost slice is the
//! thread's state (`Computing`, `Waiting for the GIL`, `Idle (futex)`), and the sampled stack
//! nests under it, a slice starting at the first sample that shows a frame and ending where a
//! sample no longer does. Slices are therefore inferred from sampling (their ends are known to
//! within one interval), which `otherData` says in the file. Wake-up flows (`flow_in`/`flow_out`
//! bindings) belong on the wait slices once runs record wake-up edges.

use crate::timeline::{frame_label, per_thread, state_label};
use crate::ExportError;
use serde::Serialize;
use std::collections::HashMap;
use std::io::Write;
use threadradar_profiler::run::{Run, ThreadState};

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

/// One level of a thread's open slices: the state slice (frame `None`) or a frame.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    State(ThreadState, Option<u32>),
    Frame(u32),
}

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    let mut w = std::io::BufWriter::new(out);
    let enc = |e: serde_json::Error| ExportError::Encode { format: "perfetto", detail: e.to_string() };
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
    let mut labels: HashMap<u32, String> = HashMap::new();
    let mut state_names: HashMap<(ThreadState, Option<u32>), String> = HashMap::new();
    let ts = |ns: u64| Micros(ns);
    for (tid, obs) in per_thread(run).into_iter().enumerate() {
        let t = &run.threads[tid];
        let head = format!(",\n{{\"pid\":{},\"tid\":{},", t.pid, t.tid);
        let mut open: Vec<Level> = Vec::new();
        let mut want: Vec<Level> = Vec::new();
        let mut prev: Option<(u32, u64)> = None; // (tick position, end ns)
        let close = |w: &mut std::io::BufWriter<&mut dyn Write>, at: u64| -> std::io::Result<()> {
            w.write_all(head.as_bytes())?;
            write!(w, "\"ph\":\"E\",\"ts\":{}}}", ts(at))
        };
        for o in &obs {
            if let Some((ps, pend)) = prev {
                if o.sample > ps + 1 {
                    // The thread was not seen at some tick: close everything where it was last seen.
                    while open.pop().is_some() {
                        close(&mut w, pend)?;
                    }
                }
            }
            let blocked = if o.state == ThreadState::Idle { o.blocked } else { None };
            want.clear();
            want.push(Level::State(o.state, blocked));
            let mut next = o.stack;
            while let Some(st) = next {
                let node = &run.stacks[st as usize];
                want.push(Level::Frame(node.frame));
                next = node.parent;
            }
            want[1..].reverse();
            let common = open.iter().zip(&want).take_while(|(a, b)| a == b).count();
            while open.len() > common {
                open.pop();
                close(&mut w, o.t_ns)?;
            }
            for level in &want[common..] {
                let (name, cat) = match level {
                    Level::State(s, b) => {
                        let name = state_names.entry((*s, *b)).or_insert_with(|| {
                            let n = match b {
                                Some(b) => format!("{} ({})", state_label(*s), run.str(*b)),
                                None => state_label(*s).to_string(),
                            };
                            serde_json::to_string(&n).unwrap_or_default()
                        });
                        (name.as_str(), "state")
                    }
                    Level::Frame(f) => {
                        let name = labels.entry(*f).or_insert_with(|| serde_json::to_string(&frame_label(run, *f)).unwrap_or_default());
                        (name.as_str(), "python")
                    }
                };
                w.write_all(head.as_bytes())?;
                write!(w, "\"ph\":\"B\",\"ts\":{},\"cat\":\"{cat}\",\"name\":{name}}}", ts(o.t_ns))?;
            }
            std::mem::swap(&mut open, &mut want);
            prev = Some((o.sample, (o.t_ns + o.duration_ns).max(prev.map_or(0, |p| p.1))));
        }
        if let Some((_, end)) = prev {
            while open.pop().is_some() {
                close(&mut w, end)?;
            }
        }
    }
    w.write_all(b"]}\n")?;
    w.flush()?;
    Ok(())
}
