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
//! Awaits of asyncio's primitives (`Event`, `Queue`, `Lock`, `Condition`, `Semaphore`) name no
//! task in the recorded state; the innermost coroutine of the await chain names the primitive
//! (`threadradar_profiler::tasks::ASYNCIO_PRIMITIVE_WAITS`), and the recorder reads such awaits
//! at every tick, so their ends are within a period of the truth. Who set the primitive is
//! inferred: the task its loop thread ran at the sample before the end, else at the end's
//! sample (evidence `running-thread`: the only other unit running when the wait ended).

use super::{location, Builder, Evidence, Key, ObjInfo, Scope, WaitInterval, WakeEdge, WakeKind};
use threadradar_profiler::run::{Run, ThreadId};
use threadradar_profiler::tasks::{TaskId, TaskStateKind};

/// One await of a task on another, in samples: from `from` until `to` (the sample at which the
/// awaiting task was seen doing something else; `None`: still awaiting at the run's end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TaskAwait {
    pub waiter: TaskId,
    /// The task awaited, or the primitive's type (`asyncio.Event`) for an await of a primitive.
    pub awaited: Awaited,
    pub from: u32,
    pub to: Option<u32>,
    /// What the awaiting task did next (`None` while open).
    pub next: Option<TaskStateKind>,
    /// Its await chain when the await began (a stack of the run, innermost first).
    pub chain: Option<threadradar_profiler::run::StackId>,
}

/// What a task awaited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Awaited {
    Task(TaskId),
    /// One of asyncio's primitives, by type.
    Primitive(&'static str),
}

/// The primitive an await chain ends in (its leaf, the innermost coroutine), if any.
fn primitive_of(run: &Run, chain: Option<threadradar_profiler::run::StackId>) -> Option<&'static str> {
    let node = run.stacks.get(chain? as usize)?;
    let frame = run.frames.get(node.frame as usize)?;
    let func = run.functions.get(frame.function as usize)?;
    threadradar_profiler::tasks::asyncio_primitive(run.str(func.qualname), run.file_path(func.file))
}

/// Every await of a task on another task or on one of asyncio's primitives, in the order they
/// began.
pub(super) fn task_awaits(run: &Run) -> Vec<TaskAwait> {
    let mut open: Vec<Option<TaskAwait>> = vec![None; run.tasks.len()];
    let mut out = Vec::new();
    for st in &run.task_states {
        let Some(slot) = open.get_mut(st.task as usize) else { continue };
        let awaited = match (st.state, st.awaits) {
            (TaskStateKind::Awaiting, Some(t)) => ((t as usize) < run.tasks.len() && t != st.task).then_some(Awaited::Task(t)),
            (TaskStateKind::Awaiting, None) => primitive_of(run, st.chain).map(Awaited::Primitive),
            _ => None,
        };
        let same = st.state == TaskStateKind::Awaiting && slot.is_some_and(|a| Some(a.awaited) == awaited && (matches!(a.awaited, Awaited::Task(_)) || a.chain == st.chain));
        if same {
            continue;
        }
        if let Some(mut a) = slot.take() {
            (a.to, a.next) = (Some(st.sample), Some(st.state));
            out.push(a);
        }
        if let Some(awaited) = awaited {
            *slot = Some(TaskAwait { waiter: st.task, awaited, from: st.sample, to: None, next: None, chain: st.chain });
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
    // Which task each thread ran at each sample: its runs, in order (a binary search).
    let mut runs_of: Vec<Vec<(u32, u32, TaskId)>> = vec![Vec::new(); run.threads.len()];
    for r in &run.task_runs {
        if let Some(v) = runs_of.get_mut(r.thread as usize) {
            v.push((r.first, r.last, r.task));
        }
    }
    for v in &mut runs_of {
        v.sort_unstable();
    }
    let ran_at = |thread: ThreadId, sample: u32| -> Option<TaskId> {
        let v = runs_of.get(thread as usize)?;
        let i = v.partition_point(|r| r.0 <= sample).checked_sub(1)?;
        (v[i].1 >= sample).then_some(v[i].2)
    };
    for a in task_awaits(run) {
        let (object, waker) = match a.awaited {
            Awaited::Task(id) => (task_object(b, labels, id), Some((id, Evidence::TaskState, 1.0))),
            Awaited::Primitive(ty) => {
                // The setter: the task the loop ran at the sample before the end, else at it.
                let thread = run.tasks[a.waiter as usize].thread;
                let waker = a.to.and_then(|k| {
                    let other = |s: u32| ran_at(thread, s).filter(|&x| x != a.waiter);
                    let (before, at) = (k.checked_sub(1).and_then(other), other(k));
                    match (before, at) {
                        (Some(x), Some(y)) if y != x => Some((x, Evidence::RunningThread, 0.5)),
                        (Some(x), _) => Some((x, Evidence::RunningThread, 0.7)),
                        (None, Some(y)) => Some((y, Evidence::RunningThread, 0.5)),
                        (None, None) => None,
                    }
                });
                (primitive_object(b, labels, a.waiter, ty, a.chain), waker)
            }
        };
        // An await that began and ended between two ticks (seen at one sample) began after the
        // sample before.
        let start_s = if a.to == Some(a.from) { t(a.from.saturating_sub(1)) } else { t(a.from) };
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
        // Ended by the awaited task's end (or its result), or by the primitive's setter: the
        // awaiting task was seen ready or running after it. An await left for another await, or
        // cancelled, ends without a wake.
        if let (Some(TaskStateKind::Ready | TaskStateKind::Running), Some((by, evidence, confidence))) = (a.next, waker) {
            let (waker, wakee) = (unit(by), unit(a.waiter));
            edges.push(WakeEdge {
                time_s: end_s,
                waker_thread: waker,
                wakee_thread: wakee,
                waker: run.threads[waker as usize].name.clone(),
                wakee: run.threads[wakee as usize].name.clone(),
                object: labels[object as usize].clone(),
                object_index: object,
                interval: k,
                evidence,
                confidence,
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

/// The waits view's object for a task awaited (made once).
fn task_object(b: &mut Builder, labels: &mut Vec<String>, id: TaskId) -> u32 {
    let awaited = &b.run.tasks[id as usize];
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
    object
}

/// The waits view's object for a primitive of type `ty` awaited at the program's line that
/// called its coroutine (the chain's frame above the primitive's): the recorder does not read
/// which object it is, so one primitive awaited at two lines is two objects.
fn primitive_object(b: &mut Builder, labels: &mut Vec<String>, waiter: TaskId, ty: &'static str, chain: Option<threadradar_profiler::run::StackId>) -> u32 {
    let run = b.run;
    let pid = run.tasks[waiter as usize].pid;
    // The program's own frame that awaited it: up the chain past asyncio's (`async with lock`
    // awaits `_ContextManagerMixin.__aenter__`, `wait_for` wraps `Condition.wait`).
    let mut node = chain.and_then(|c| run.stacks.get(c as usize)).and_then(|n| n.parent);
    let mut caller = None;
    while let Some(n) = node.and_then(|p| run.stacks.get(p as usize)) {
        let l = location(run, n.frame);
        let asyncio = l.file.contains("/asyncio/");
        caller = Some(l);
        if !asyncio {
            break;
        }
        node = n.parent;
    }
    let at = caller.as_ref().map_or_else(String::new, |l| format!(" awaited in {} ({}:{})", l.function, l.file.rsplit('/').next().unwrap_or(&l.file), l.line));
    let key = Key::Site(format!("{pid}|{ty}|{at}"), Scope::None);
    let before = b.objects.len();
    let object = b.object(key.clone(), || ObjInfo { key, type_name: ty.to_string(), name: None, addr: None, scope: Scope::None, frame: None, user: true });
    if b.objects.len() > before {
        labels.push(format!("{ty}{at}"));
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use threadradar_profiler::run::Meta;
    use threadradar_profiler::run::FileKind;
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
        let got: Vec<(u32, u32, u32, Option<u32>, Option<TaskStateKind>)> = task_awaits(&run).iter().map(|a| (a.waiter, match a.awaited { Awaited::Task(t) => t, Awaited::Primitive(_) => u32::MAX }, a.from, a.to, a.next)).collect();
        assert_eq!(got, [(2, 1, 1, Some(4), Some(Awaiting)), (0, 1, 2, Some(6), Some(Ready)), (2, 0, 4, Some(8), Some(Done)), (0, 2, 9, None, None)]);
    }

    /// An await whose chain ends in a primitive's coroutine (in a file of the `asyncio` package)
    /// is an await of that primitive; the same chain read again is the same await; the same
    /// qualified name outside asyncio is not a primitive.
    #[test]
    fn a_chain_ending_in_a_primitives_coroutine_is_an_await_of_it() {
        let mut b = threadradar_profiler::builder::RunBuilder::new(Meta::default());
        let (app, locks, mine) = (b.file("/p/app.py", FileKind::User, None), b.file("/usr/lib/python3.14/asyncio/locks.py", FileKind::Stdlib, None), b.file("/p/event.py", FileKind::User, None));
        let spec = |qualname| threadradar_profiler::builder::FunctionSpec { qualname, class: None, line: 1, end_line: 9, class_line: 0 };
        let (waiter, wait, own) = (b.function(app, &spec("waiter")), b.function(locks, &spec("Event.wait")), b.function(mine, &spec("Event.wait")));
        let (fw, fe, fo) = (b.frame(waiter, 3), b.frame(wait, 5), b.frame(own, 5));
        let (event, not_asyncio) = (b.stack(&[fw, fe]), b.stack(&[fw, fo]));
        let mut run = b.finish();
        run.tasks = (0..2).map(|i| Task { name: format!("t{i}"), ..Task::default() }).collect();
        let st = |sample, task, state, chain| TaskState { sample, task, state, awaits: None, chain };
        use TaskStateKind::*;
        run.task_states = vec![st(1, 0, Awaiting, event), st(3, 0, Awaiting, event), st(4, 0, Ready, None), st(5, 1, Awaiting, not_asyncio), st(6, 0, Awaiting, event), st(7, 0, Running, None)];
        let got: Vec<(u32, Awaited, u32, Option<u32>, Option<TaskStateKind>)> = task_awaits(&run).iter().map(|a| (a.waiter, a.awaited, a.from, a.to, a.next)).collect();
        let ev = Awaited::Primitive("asyncio.Event");
        assert_eq!(got, [(0, ev, 1, Some(4), Some(Ready)), (0, ev, 6, Some(7), Some(Running))]);
    }
}
