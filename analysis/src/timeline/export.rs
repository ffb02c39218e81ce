//! The per-thread bars for scripts (`threadradar timeline RUN --json`): every bar of every
//! selected thread that overlaps a time range, in seconds from the run's start.

use super::index::{BarState, BlockedKind, TimelineIndex};
use super::layout::check_range;
use super::{secs, TimelineError};
use serde::Serialize;
use threadradar_profiler::run::{Run, ThreadId};

/// `{"threads": [...]}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BarsExport {
    /// How the bars were obtained (see [`super::layout::OBTAINED`]).
    pub obtained: &'static str,
    pub from_s: f64,
    pub to_s: f64,
    pub threads: Vec<ThreadBars>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadBars {
    pub id: ThreadId,
    pub name: String,
    #[serde(rename = "type")]
    pub thread_type: String,
    /// By depth, then by start.
    pub bars: Vec<BarRecord>,
    /// A task unit: the id of the event-loop thread that ran it, whose entry it follows in the
    /// default order (timeline/tasks.rs). Absent for a thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<ThreadId>,
    /// `true` for a task unit (absent for a thread).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub task: bool,
    /// A task unit's recorded awaiting spans overlapping the range (evidence `task-state`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub awaits: Vec<super::tasks::AwaitRecord>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BarRecord {
    pub start_s: f64,
    pub end_s: f64,
    pub depth: u16,
    pub function: String,
    pub file: String,
    pub line: u32,
    pub state: BarState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<BlockedKind>,
}

/// The bars of `threads` (every thread with samples when `None`) overlapping `[from_s, to_s)`
/// (the whole run when both are `None`); bars are not clipped to the range.
pub fn bars(run: &Run, index: &TimelineIndex, threads: Option<&[ThreadId]>, from_s: Option<f64>, to_s: Option<f64>) -> Result<BarsExport, TimelineError> {
    let (from, to) = check_range(from_s, to_s, secs(index.times[0]), index.duration_s())?;
    let (k0, k1) = (index.tick_at((from * 1e9).round() as u64), index.tick_at((to * 1e9).round() as u64));
    let k1 = if to_s.is_none() { index.ticks() as u32 } else { k1 };
    let lanes = index.lanes(run);
    let ids: Vec<ThreadId> = match threads {
        Some(ids) => ids.to_vec(),
        None => super::tasks::grouped(run, &lanes.iter().filter(|l| l.samples > 0).map(|l| l.thread).collect::<Vec<_>>()),
    };
    let mut out = Vec::with_capacity(ids.len());
    let awaiting = super::tasks::awaiting_by_task(run, index.ticks() as u32);
    for id in ids {
        let t = run.threads.get(id as usize).ok_or_else(|| TimelineError::UnknownThread(format!("#{id}"), super::layout::known_threads(run)))?;
        let lane = &lanes[id as usize];
        let mut bars = Vec::new();
        for (depth, row) in lane.rows.iter().enumerate() {
            let a = row.partition_point(|b| b.end() <= k0);
            for b in row[a..].iter().take_while(|b| b.start() < k1) {
                let fr = &run.frames[b.frame() as usize];
                let f = &run.functions[fr.function as usize];
                bars.push(BarRecord {
                    start_s: secs(index.times[b.start() as usize]),
                    end_s: secs(index.times[b.end() as usize]),
                    depth: depth as u16,
                    function: run.str(f.qualname).to_string(),
                    file: run.file_path(f.file).to_string(),
                    line: if fr.line > 0 { fr.line } else { f.line },
                    state: b.state(),
                    blocked: b.blocked(),
                });
            }
        }
        let task = crate::units::is_task(t);
        let parent = super::tasks::parent(run, id);
        let awaits = match super::tasks::task_of(run, id) {
            Some(task) => super::tasks::await_records(run, &awaiting[task as usize], &index.times, k0, k1),
            None => Vec::new(),
        };
        out.push(ThreadBars { id, name: t.name.clone(), thread_type: t.thread_type.clone(), bars, parent, task, awaits });
    }
    Ok(BarsExport { obtained: super::layout::obtained(run), from_s: from, to_s: to, threads: out })
}
