//! Waits between asyncio tasks (issue #34, part 3) for a run whose tasks are units (`--units
//! tasks`, [`crate::units`]): a task that awaited another task. The recorder reads each task's
//! state at every tick and, for an awaiting task, the task it awaits — directly, or through the
//! future it awaits (`fut_waiter`, `awaited_by`) — and keeps one entry per change
//! (`Run::task_states`). So who awaited whom is recorded, not inferred: each such await is a wait
//! interval of the awaiting task on the awaited one (an object of type `asyncio.Task`), and its
//! end, when the awaiting task was next seen ready or running, an edge from the awaited task with
//! evidence `task-state`. Its times are the samples': the state is read once per tick, so an
//! await's ends are within a period of the truth.
//!
//! Awaits of asyncio's primitives (`Event`, `Queue`, `Lock`, …) name no task in the recorded
//! state: who set them is not made into edges here (docs/asyncio.md says so).

use super::{location, Builder, Evidence, Key, ObjInfo, Scope, WaitInterval, WakeEdge, WakeKind};
use threadradar_profiler::run::{Run, ThreadId};
use threadradar_profiler::tasks::{TaskId, TaskStateKind};

/// One await of a task on another, in samples: from `from` until `to` (the sample at which the
/// awaiting task was seen doing something else; `None`: still awaiting at the run's end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TaskAwait {
    pub waiter: TaskId,
    pub awaited: TaskId,
    pub from: u32,
    pub to: Option<u32>,
    /// What the awaiting task did next (`None` while open).
    pub next: Option<TaskStateKind>,
    /// Its await chain when the await began (a stack of the run, innermost first).
    pub chain: Option<threadradar_profiler::run::StackId>,
}

/// Every await of a task on another task, in the order they began.
pub(super) fn task_awaits(run: &Run) -> Vec<TaskAwait> {
    let mut open: Vec<Option<TaskAwait>> = vec![None; run.tasks.len()];
    let mut out = Vec::new();
    for st in &run.task_states {
        let Some(slot) = open.get_mut(st.task as usize) else { continue };
        let same = st.state == TaskStateKind::Awaiting && slot.is_some_and(|a| Some(a.awaited) == st.awaits);
        if same {
            continue;
        }
        if let Some(mut a) = slot.take() {
            (a.to, a.next) = (Some(st.sample), Some(st.state));
            out.push(a);
        }
        if let (TaskStateKind::Awaiting, Some(awaited)) = (st.state, st.awaits) {
            if (awaited as usize) < run.tasks.len() && awaited != st.task {
                *slot = Some(TaskAwait { waiter: st.task, awaited, from: st.sample, to: None, next: None, chain: st.chain });
            }
        }
    }
    out.extend(open.into_iter().flatten());
    out.sort_by_key(|a| (a.from, a.waiter));
    out
}

/// Adds the task awaits of a tasks-as-units run to the waits view's objects, intervals and edges
/// (the unit of task `i` is `first_task_unit + i`). Returns how many edges it added.
pub(super) fn add(b: &mut Builder, labels: &mut Vec<String>, intervals: &mut Vec<WaitInterval>, edges: &mut Vec<WakeEdge>) -> usize {
    let run = b.run;
    if run.tasks.is_empty() || crate::units::units_of(run).is_threads() {
        return 0;
    }
    let first_task_unit = run.threads.len() - run.tasks.len();
    let unit = |t: TaskId| (first_task_unit + t as usize) as ThreadId;
    let t = |sample: u32| run.samples.get(sample as usize).map_or(0.0, |s| s.t as f64 / 1e9);
    let period = crate::period::sampling_period_s(run);
    let mut added = 0;
    for a in task_awaits(run) {
        let awaited = &run.tasks[a.awaited as usize];
        let key = Key::Addr(awaited.pid, awaited.address, Some(format!("asyncio.Task#{}", awaited.first_sample)));
        let before = b.objects.len();
        let object = b.object(key.clone(), || ObjInfo {
            key,
            type_name: "asyncio.Task".to_string(),
            name: Some(awaited.name.clone()),
            addr: Some(awaited.address),
            scope: Scope::None,
            frame: None,
            user: true,
        });
        if b.objects.len() > before {
            labels.push(format!("asyncio.Task {} ({})", awaited.name, awaited.coro));
        }
        let start_s = t(a.from);
        let end_s = a.to.map_or_else(|| t(run.samples.len().saturating_sub(1) as u32) + period, t);
        let frame = a.chain.and_then(|st| run.stacks.get(st as usize)).map(|node| location(run, node.frame));
        let k = intervals.len() as u32;
        intervals.push(WaitInterval {
            thread: unit(a.waiter),
            object,
            start_s,
            end_s,
            kernel_start: false,
            kernel_end: false,
            samples: a.to.unwrap_or(run.samples.len() as u32).saturating_sub(a.from),
            syscall: None,
            frame,
            open: a.to.is_none(),
            futile: false,
        });
        // Ended by the awaited task's end (or its result): the awaiting task was seen ready or
        // running after it. An await left for another await, or cancelled, ends without a wake.
        if matches!(a.next, Some(TaskStateKind::Ready | TaskStateKind::Running)) {
            let (waker, wakee) = (unit(a.awaited), unit(a.waiter));
            edges.push(WakeEdge {
                time_s: end_s,
                waker_thread: waker,
                wakee_thread: wakee,
                waker: run.threads[waker as usize].name.clone(),
                wakee: run.threads[wakee as usize].name.clone(),
                object: labels[object as usize].clone(),
                object_index: object,
                interval: k,
                evidence: Evidence::TaskState,
                confidence: 1.0,
                futile: false,
                kind: WakeKind::Wake,
                waker_frame: None,
                exact: None,
            });
            added += 1;
        }
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;
    use threadradar_profiler::run::Meta;
    use threadradar_profiler::tasks::{Task, TaskState};

    /// Repeated states of one await are one await; an await left for another await, or ended by
    /// the task's end, says so (only one seen ready or running again makes an edge); an await
    /// still on at the end is open.
    #[test]
    fn task_states_make_one_await_per_awaited_task() {
        let mut run = threadradar_profiler::builder::RunBuilder::new(Meta::default()).finish();
        run.tasks = (0..4).map(|i| Task { name: format!("t{i}"), ..Task::default() }).collect();
        let st = |sample, task, state, awaits| TaskState { sample, task, state, awaits, chain: None };
        use TaskStateKind::*;
        run.task_states = vec![
            st(1, 2, Awaiting, Some(1)),
            st(2, 0, Awaiting, Some(1)),
            st(3, 0, Awaiting, Some(1)),
            st(4, 2, Awaiting, Some(0)),
            st(5, 1, Done, None),
            st(6, 0, Ready, None),
            st(7, 3, Awaiting, Some(3)), // itself: no await
            st(8, 2, Done, None),
            st(9, 0, Awaiting, Some(2)),
        ];
        let got: Vec<(u32, u32, u32, Option<u32>, Option<TaskStateKind>)> = task_awaits(&run).iter().map(|a| (a.waiter, a.awaited, a.from, a.to, a.next)).collect();
        assert_eq!(got, [(2, 1, 1, Some(4), Some(Awaiting)), (0, 1, 2, Some(6), Some(Ready)), (2, 0, 4, Some(8), Some(Done)), (0, 2, 9, None, None)]);
    }
}
