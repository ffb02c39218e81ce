//! Task lanes (issue #34, part 4): with asyncio tasks as units ([`crate::units`]), each task's
//! lane is shown directly under the lane of the event-loop thread that ran it, and the time the
//! task spent awaiting is shown as a wait span where — and only where — the run recorded it.
//!
//! - **Grouping** ([`grouped`]): a loop thread's task lanes follow its lane, in unit order; a task
//!   lane names its thread ([`parent`]). A task whose thread has no lane of its own (all of the
//!   thread's samples were its tasks') still stands where the thread would, and still names it.
//! - **Running** is what the samples say: a task unit has a sample only at a tick at which its
//!   thread ran it (`task_runs`), so its bars and state underlay cover only those ticks. Task
//!   lanes bridge no missed tick (threads' lanes bridge one): a tick at which a task is absent is a
//!   tick at which its thread ran something else.
//! - **Awaiting** ([`awaiting_spans`]): from a recorded `awaiting` state (`task_states`) until the
//!   task's next recorded state, evidence `task-state` (sampled: the state is read at ticks, so
//!   the span's ends are within a period of the truth; a state shorter than that may be missing).
//!   A task's `ready` time and whatever was not recorded are not drawn.

use crate::units::is_task;
use serde::Serialize;
use threadradar_profiler::run::{Run, ThreadId};
use threadradar_profiler::tasks::{TaskId, TaskStateKind};

/// The evidence of an awaiting span: the task's recorded state.
pub const AWAIT_EVIDENCE: &str = "task-state";

/// The task of a unit of a tasks-as-units run (task `i` is unit `threads + i`, as
/// [`crate::units::tasks_as_units`] makes it), `None` for a thread unit.
pub fn task_of(run: &Run, unit: ThreadId) -> Option<TaskId> {
    if !run.threads.get(unit as usize).is_some_and(is_task) {
        return None;
    }
    let first = run.threads.len().checked_sub(run.tasks.len())?;
    let i = (unit as usize).checked_sub(first)?;
    let task = run.tasks.get(i)?;
    (task.address == run.threads[unit as usize].python_id).then_some(i as TaskId)
}

/// The loop thread's unit that ran a task unit; `None` for a thread unit.
pub fn parent(run: &Run, unit: ThreadId) -> Option<ThreadId> {
    let task = task_of(run, unit)?;
    let th = run.tasks[task as usize].thread;
    ((th as usize) < run.threads.len() && !is_task(&run.threads[th as usize])).then_some(th)
}

/// `ids` reordered so that each task unit directly follows its loop thread's unit (or the place
/// that unit would have, when it is not among `ids`), task units in their order in `ids`.
/// Threads keep their order; a run without task units is returned as it is.
pub fn grouped(run: &Run, ids: &[ThreadId]) -> Vec<ThreadId> {
    let parents: Vec<Option<ThreadId>> = ids.iter().map(|&u| parent(run, u)).collect();
    if parents.iter().all(Option::is_none) {
        return ids.to_vec();
    }
    // A group's place: its thread's rank among the thread units of `ids`; a thread not among
    // them goes where its id would put it, before the thread unit of the same rank.
    let threads: Vec<ThreadId> = ids.iter().zip(&parents).filter(|(_, p)| p.is_none()).map(|(&u, _)| u).collect();
    let place = |th: ThreadId| match threads.iter().position(|&u| u == th) {
        Some(r) => (r, 1u8),
        None => (threads.iter().filter(|&&u| u < th).count(), 0u8),
    };
    let mut keyed: Vec<((usize, u8), ThreadId, bool, usize, ThreadId)> = ids
        .iter()
        .zip(&parents)
        .enumerate()
        .map(|(i, (&u, p))| {
            let th = p.unwrap_or(u);
            (place(th), th, p.is_some(), i, u)
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|k| k.4).collect()
}

/// One span of a task's recorded awaiting, in ticks (`end` exclusive), with the task it awaited
/// when the recorder found one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AwaitingSpan {
    pub start: u32,
    pub end: u32,
    pub awaits: Option<TaskId>,
}

/// The recorded awaiting spans of a task unit (none for a thread unit): from each `awaiting`
/// state to the task's next recorded state of another kind or awaiting something else (or the
/// end of the run's `ticks`, when none was recorded after it).
pub fn awaiting_spans(run: &Run, unit: ThreadId, ticks: u32) -> Vec<AwaitingSpan> {
    match task_of(run, unit) {
        Some(task) => awaiting_by_task(run, ticks).swap_remove(task as usize),
        None => Vec::new(),
    }
}

/// [`awaiting_spans`] of every task, by task id, in one pass over the run's task states (a
/// layout asks for every lane's: one pass, not one per lane).
pub fn awaiting_by_task(run: &Run, ticks: u32) -> Vec<Vec<AwaitingSpan>> {
    let mut out: Vec<Vec<AwaitingSpan>> = vec![Vec::new(); run.tasks.len()];
    let mut open: Vec<Option<AwaitingSpan>> = vec![None; run.tasks.len()];
    for st in &run.task_states {
        let task = st.task;
        let Some(slot) = open.get_mut(task as usize) else { continue };
        let awaits = st.awaits.filter(|&a| (a as usize) < run.tasks.len() && a != task);
        if st.state == TaskStateKind::Awaiting && slot.is_some_and(|o| o.awaits == awaits) {
            continue;
        }
        if let Some(mut o) = slot.take() {
            o.end = st.sample.min(ticks);
            if o.end > o.start {
                out[task as usize].push(o);
            }
        }
        if st.state == TaskStateKind::Awaiting && st.sample < ticks {
            *slot = Some(AwaitingSpan { start: st.sample, end: ticks, awaits });
        }
    }
    for (task, o) in open.into_iter().enumerate() {
        out[task].extend(o);
    }
    out
}

/// An awaiting span for scripts and panels, in seconds from the run's start.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct AwaitRecord {
    pub start_s: f64,
    pub end_s: f64,
    /// The name of the task it awaited, when the recorder found one (otherwise a future that is
    /// not a task: a sleep, a queue, an event…).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub awaits: Option<String>,
    /// Always [`AWAIT_EVIDENCE`]: the recorded task state, read at the sampler's ticks.
    pub evidence: &'static str,
}

impl AwaitRecord {
    fn of(run: &Run, span: &AwaitingSpan, times: &[u64]) -> AwaitRecord {
        AwaitRecord {
            start_s: super::secs(times[span.start as usize]),
            end_s: super::secs(times[span.end as usize]),
            awaits: awaited_name(run, span),
            evidence: AWAIT_EVIDENCE,
        }
    }
}

/// The name of an awaited task.
pub fn awaited_name(run: &Run, span: &AwaitingSpan) -> Option<String> {
    span.awaits.and_then(|a| run.tasks.get(a as usize)).map(|t| t.name.clone())
}

/// An awaiting span as drawn in a viewport (a lane's wait underlay): its pixels, and the span.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct AwaitBox {
    pub x0: f32,
    pub x1: f32,
    #[serde(flatten)]
    #[ts(flatten)]
    pub span: AwaitRecord,
}

/// A task unit's awaiting spans (of [`awaiting_by_task`]) in a viewport: `x(tick)` is a tick's pixel, `width` the
/// viewport's; spans outside it are left out, spans are clipped to it, and a span narrower than a
/// pixel is drawn one pixel wide (it was recorded: it is not left out for being short).
pub(crate) fn await_boxes(run: &Run, spans: &[AwaitingSpan], times: &[u64], width: f64, x: impl Fn(u32) -> f64) -> Vec<AwaitBox> {
    let mut out: Vec<AwaitBox> = Vec::new();
    for sp in spans {
        let (x0, x1) = (x(sp.start), x(sp.end));
        if x1 <= 0.0 || x0 >= width {
            continue;
        }
        let (x0, x1) = (x0.max(0.0), x1.min(width).max(x0.max(0.0) + 1.0).min(width.max(1.0)));
        out.push(AwaitBox { x0: x0 as f32, x1: x1 as f32, span: AwaitRecord::of(run, sp, times) });
    }
    out
}

/// A task's awaiting spans (of [`awaiting_by_task`]) overlapping ticks `k0..k1`, in seconds.
pub(crate) fn await_records(run: &Run, spans: &[AwaitingSpan], times: &[u64], k0: u32, k1: u32) -> Vec<AwaitRecord> {
    spans.iter().filter(|sp| sp.end > k0 && sp.start < k1).map(|sp| AwaitRecord::of(run, sp, times)).collect()
}

#[cfg(test)]
mod tests;
