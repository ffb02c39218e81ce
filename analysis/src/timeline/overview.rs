//! The textual per-thread overview beside the lanes (Trümper et al.'s textual view): per thread
//! the share of its samples computing and waiting, its longest wait and its top frames.

use super::index::{BarState, BlockedKind, TimelineIndex};
use super::secs;
use serde::Serialize;
use std::collections::HashMap;
use threadradar_profiler::run::{Run, ThreadId, ThreadState};

/// One thread's row.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct ThreadOverview {
    pub thread: ThreadId,
    pub name: String,
    #[serde(rename = "type")]
    pub thread_type: String,
    /// Samples of the thread in the window.
    pub samples: u64,
    /// Share of those samples computing.
    pub busy: f64,
    /// Share waiting for the GIL.
    pub gil: f64,
    /// Share idle (blocked or sleeping).
    pub idle: f64,
    /// The longest run of samples waiting (GIL or idle) in one state and kind, if any.
    pub longest_wait: Option<Wait>,
    /// The functions most often innermost in the thread's samples (any state), most first, at
    /// most three.
    pub top_frames: Vec<TopFrame>,
}

#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct Wait {
    pub start_s: f64,
    pub duration_s: f64,
    pub state: BarState,
    pub blocked: Option<BlockedKind>,
}

#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct TopFrame {
    pub function: String,
    pub file: String,
    pub line: u32,
    /// Share of the thread's samples in the window.
    pub share: f64,
}

/// The overview of the given threads (all with samples when `None`) over `[from_s, to_s)` (the
/// whole run when `None`). Sampled, like everything in the timeline.
pub fn thread_overview(run: &Run, index: &TimelineIndex, threads: Option<&[ThreadId]>, window: Option<(f64, f64)>) -> Vec<ThreadOverview> {
    let (k0, k1) = match window {
        Some((f, t)) => (index.tick_at((f * 1e9) as u64), index.tick_at((t * 1e9) as u64)),
        None => (0, index.ticks() as u32),
    };
    let n = run.threads.len();
    let mut counts = vec![[0u64; 3]; n];
    let mut inner: Vec<HashMap<u32, u64>> = vec![HashMap::new(); n];
    for s in &run.samples[k0 as usize..k1 as usize] {
        for ts in &s.threads {
            let th = ts.thread as usize;
            counts[th][match ts.state {
                ThreadState::Computing => 0,
                ThreadState::Gil => 1,
                ThreadState::Idle => 2,
            }] += 1;
            if let Some(st) = ts.stack {
                *inner[th].entry(run.stacks[st as usize].frame).or_default() += 1;
            }
        }
    }
    let lanes = index.any_lanes(run);
    let ids: Vec<ThreadId> = match threads {
        Some(ids) => ids.iter().copied().filter(|&i| (i as usize) < n).collect(),
        // In lane order: a task unit's row after its loop thread's (timeline/tasks.rs).
        None => super::tasks::grouped(run, &(0..n as ThreadId).filter(|&i| lanes[i as usize].samples > 0).collect::<Vec<_>>()),
    };
    ids.into_iter()
        .map(|th| {
            let c = counts[th as usize];
            let total: u64 = c.iter().sum();
            let share = |x: u64| if total == 0 { 0.0 } else { x as f64 / total as f64 };
            let longest_wait = lanes[th as usize]
                .states
                .iter()
                .filter(|r| r.state != BarState::Computing && r.end > k0 && r.start < k1)
                .map(|r| (r, index.times[r.end.min(k1) as usize] - index.times[r.start.max(k0) as usize]))
                .max_by_key(|&(r, d)| (d, std::cmp::Reverse(r.start)))
                .map(|(r, d)| Wait { start_s: secs(index.times[r.start.max(k0) as usize]), duration_s: secs(d), state: r.state, blocked: r.blocked });
            // Innermost frames, merged per function.
            let mut by_fn: HashMap<u32, (u64, u32)> = HashMap::new();
            for (&frame, &k) in &inner[th as usize] {
                let fr = &run.frames[frame as usize];
                let e = by_fn.entry(fr.function).or_insert((0, fr.line));
                e.0 += k;
            }
            let mut top: Vec<(u32, u64, u32)> = by_fn.into_iter().map(|(f, (k, line))| (f, k, line)).collect();
            top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let t = &run.threads[th as usize];
            ThreadOverview {
                thread: th,
                name: t.name.clone(),
                thread_type: t.thread_type.clone(),
                samples: total,
                busy: share(c[0]),
                gil: share(c[1]),
                idle: share(c[2]),
                longest_wait,
                top_frames: top
                    .into_iter()
                    .take(3)
                    .map(|(f, k, _line)| {
                        let func = &run.functions[f as usize];
                        TopFrame { function: run.qualname(f).to_string(), file: run.file_path(func.file).to_string(), line: func.line, share: share(k) }
                    })
                    .collect(),
            }
        })
        .collect()
}
