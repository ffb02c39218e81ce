//! Collapsed (folded) stacks: one line per distinct stack, `root;caller;callee count`, as
//! `flamegraph.pl` and inferno read them. The root frame of every line is the thread,
//! `name (tid)`, so a flame graph splits by thread first.
//!
//! Every sample counts once, in every state: a flame graph of what each thread was doing,
//! waiting included (filter by the thread-state label in the pprof export to see only computing).

use crate::timeline::{frame_label, frames_outermost_first};
use crate::ExportError;
use rustc_hash::FxHashMap;
use std::io::Write;
use threadradar_profiler::run::{Run, StackId, ThreadId};

/// A frame as folded stacks can carry it: `;` separates frames and a line ends at a newline, so
/// both become look-alikes (`;` → `:`, line breaks → spaces) rather than splitting the stack.
pub fn escape_frame(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            ';' => ':',
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect()
}

/// The thread's root frame: `name (tid)`.
pub fn thread_frame(run: &Run, thread: ThreadId) -> String {
    let t = &run.threads[thread as usize];
    escape_frame(&format!("{} ({})", t.name, t.tid))
}

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    // Count per (thread, stack) in first-seen order, so the output is deterministic.
    let mut counts: FxHashMap<(ThreadId, Option<StackId>), u64> = FxHashMap::default();
    let mut order = Vec::new();
    for s in &run.samples {
        for ts in &s.threads {
            let key = (ts.thread, ts.stack);
            let c = counts.entry(key).or_insert_with(|| {
                order.push(key);
                0
            });
            *c += 1;
        }
    }
    let mut labels: FxHashMap<u32, String> = FxHashMap::default();
    let mut w = std::io::BufWriter::new(out);
    for key in order {
        let mut line = thread_frame(run, key.0);
        for f in frames_outermost_first(run, key.1) {
            let l = labels.entry(f).or_insert_with(|| escape_frame(&frame_label(run, f)));
            line.push(';');
            line.push_str(l);
        }
        writeln!(w, "{line} {}", counts[&key])?;
    }
    w.flush()?;
    Ok(())
}
