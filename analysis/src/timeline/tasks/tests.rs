use super::*;
use crate::timeline::{export, layout, LayoutRequest, ThreadSelection, TimelineIndex};
use crate::units::tasks_as_units;
use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
use threadradar_profiler::run::{FileKind, Meta, Sample, ThreadSample, ThreadState};
use threadradar_profiler::tasks::{Task, TaskRun, TaskState};

/// What each of 12 ticks of the two loop threads ran: the loop's own code (`None`) or a task.
/// Loop A (thread 0) runs task 0 at ticks 2–3 and again at 5 (one tick apart), task 2 at 8–9;
/// loop B (thread 1) runs task 1 at 1–3. Thread 2 is a plain worker.
const LOOP_A: [Option<u32>; 12] = [None, None, Some(0), Some(0), None, Some(0), None, None, Some(2), Some(2), None, None];
const LOOP_B: [Option<u32>; 12] = [None, Some(1), Some(1), Some(1), None, None, None, None, None, None, None, None];
const PERIOD_NS: u64 = 3_000_000;

fn runs_of(ticks: &[Option<u32>; 12], thread: u32) -> Vec<TaskRun> {
    let mut out: Vec<TaskRun> = Vec::new();
    for (k, t) in ticks.iter().enumerate() {
        let Some(task) = *t else { continue };
        match out.last_mut() {
            Some(r) if r.task == task && r.last + 1 == k as u32 => r.last = k as u32,
            _ => out.push(TaskRun { thread, task, first: k as u32, last: k as u32 }),
        }
    }
    out
}

/// Two event loops and a worker, with a task table: task 0 awaits task 1 at tick 4 (runs again at
/// 5), then awaits a future that is not a task from tick 6 to the end; task 2 is ready at 7, runs
/// at 8 and is done at 10. Task 2's name is markup, as a program may name a task.
fn loops_run() -> Run {
    let mut b = RunBuilder::new(Meta { interval_ms: 3.0, cwd: "/p".into(), ..Meta::default() });
    let file = b.file("/p/app.py", FileKind::User, None);
    let f = |b: &mut RunBuilder, qualname, line| b.function(file, &FunctionSpec { qualname, class: None, line, end_line: line + 3, class_line: 0 });
    let (run_once, fetch, work) = (f(&mut b, "_run_once", 1), f(&mut b, "fetch", 10), f(&mut b, "work", 20));
    let (run_once, fetch, work) = (b.frame(run_once, 2), b.frame(fetch, 11), b.frame(work, 21));
    let loop_stack = b.stack(&[run_once]);
    let task_stack = b.stack(&[run_once, fetch]);
    let work_stack = b.stack(&[work]);
    for (tid, name) in [(100, "MainThread"), (101, "loop-b"), (102, "worker")] {
        b.thread(new_thread(100, tid, tid as u64, name, "Thread"));
    }
    for k in 0..12 {
        let ts = |thread, stack| ThreadSample { thread, stack, state: ThreadState::Computing, cpu_ns: PERIOD_NS, ..Default::default() };
        let on = |x: Option<u32>| if x.is_some() { task_stack } else { loop_stack };
        b.push_sample(Sample { t: k as u64 * PERIOD_NS, threads: vec![ts(0, on(LOOP_A[k])), ts(1, on(LOOP_B[k])), ts(2, work_stack)] });
    }
    let mut run = b.finish();
    let fetch_fn = run.frames[fetch as usize].function;
    for (i, (thread, name)) in [(0u32, "fetch-1"), (1, "fetch-2"), (0, "<b>x</b>")].into_iter().enumerate() {
        run.tasks.push(Task { pid: 100, address: 0x7f00 + i as u64 * 0x100, name: name.into(), coro: "fetch".into(), function: Some(fetch_fn), thread, first_sample: 0, last_sample: 11, ..Default::default() });
    }
    run.task_runs = runs_of(&LOOP_A, 0);
    run.task_runs.extend(runs_of(&LOOP_B, 1));
    let st = |sample, task, state, awaits| TaskState { sample, task, state, awaits, chain: None };
    run.task_states = vec![
        st(1, 1, TaskStateKind::Running, None),
        st(2, 0, TaskStateKind::Running, None),
        st(4, 0, TaskStateKind::Awaiting, Some(1)),
        st(4, 1, TaskStateKind::Done, None),
        st(5, 0, TaskStateKind::Running, None),
        st(6, 0, TaskStateKind::Awaiting, None),
        st(7, 2, TaskStateKind::Ready, None),
        st(8, 2, TaskStateKind::Running, None),
        st(10, 2, TaskStateKind::Done, None),
    ];
    run.validate().unwrap();
    run
}

fn whole(run: &Run) -> layout::Layout {
    let index = TimelineIndex::new(run).unwrap();
    layout::layout(run, &index, &LayoutRequest { width_px: 1200, threads: ThreadSelection::All, ..LayoutRequest::default() }).unwrap()
}

#[test]
fn each_task_lane_follows_its_loop_thread_and_names_it() {
    let run = tasks_as_units(&loops_run()).unwrap();
    // Units: threads 0–2, tasks 0–2 as units 3–5.
    let lay = whole(&run);
    let order: Vec<(ThreadId, Option<ThreadId>)> = lay.lanes.iter().map(|l| (l.thread, l.parent)).collect();
    assert_eq!(order, vec![(0, None), (3, Some(0)), (5, Some(0)), (1, None), (4, Some(1)), (2, None)]);
    assert_eq!(lay.lanes[2].name, "<b>x</b>", "the name is data; the renderers escape it");
    // The same order and marks for scripts.
    let index = TimelineIndex::new(&run).unwrap();
    let bars = export::bars(&run, &index, None, None, None).unwrap();
    let marks: Vec<(ThreadId, Option<ThreadId>, bool)> = bars.threads.iter().map(|t| (t.id, t.parent, t.task)).collect();
    assert_eq!(marks, vec![(0, None, false), (3, Some(0), true), (5, Some(0), true), (1, None, false), (4, Some(1), true), (2, None, false)]);
}

#[test]
fn a_run_of_threads_keeps_its_order_and_no_lane_has_a_parent() {
    let run = loops_run();
    let lay = whole(&run);
    assert_eq!(lay.lanes.iter().map(|l| l.thread).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert!(lay.lanes.iter().all(|l| l.parent.is_none() && l.awaits.is_empty()));
    assert_eq!(grouped(&run, &[2, 0, 1]), vec![2, 0, 1]);
}

#[test]
fn a_task_whose_thread_has_no_lane_stands_where_the_thread_would() {
    let run = tasks_as_units(&loops_run()).unwrap();
    // Without thread 0's own lane: its tasks still come before thread 1's group.
    assert_eq!(grouped(&run, &[1, 2, 3, 4, 5]), vec![3, 5, 1, 4, 2]);
    // A chosen order of threads is kept, each with its tasks after it.
    assert_eq!(grouped(&run, &[2, 1, 0, 4, 3]), vec![2, 1, 4, 0, 3]);
}

#[test]
fn a_task_lane_is_not_drawn_running_between_its_runs() {
    let run = tasks_as_units(&loops_run()).unwrap();
    let index = TimelineIndex::new(&run).unwrap();
    let bars = export::bars(&run, &index, Some(&[3]), None, None).unwrap();
    // Task 0 ran at ticks 2–3 and 5: a thread's lane would bridge the one missed tick 4; a task's
    // is not there at 4 (its thread ran the loop's code).
    let outer: Vec<(f64, f64)> = bars.threads[0].bars.iter().filter(|b| b.depth == 0).map(|b| (b.start_s, b.end_s)).collect();
    assert_eq!(outer, vec![(0.006, 0.012), (0.015, 0.018)]);
    let lay = whole(&run);
    let lane = lay.lanes.iter().find(|l| l.thread == 3).unwrap();
    let px = |t: f64| (t / lay.to_s * 1200.0) as f32;
    assert!(lane.states.iter().all(|s| s.x1 <= px(0.012) + 0.5 || s.x0 >= px(0.015) - 0.5), "no running state over tick 4: {:?}", lane.states);
}

#[test]
fn awaiting_is_drawn_only_where_the_task_state_recorded_it() {
    let run = tasks_as_units(&loops_run()).unwrap();
    assert_eq!(
        awaiting_spans(&run, 3, 12),
        vec![AwaitingSpan { start: 4, end: 5, awaits: Some(1) }, AwaitingSpan { start: 6, end: 12, awaits: None }]
    );
    // Task 2 was ready, running, done: no awaiting recorded, none drawn; threads have none.
    for unit in [0, 1, 2, 4, 5] {
        assert_eq!(awaiting_spans(&run, unit, 12), vec![], "unit {unit}");
    }
    let lay = whole(&run);
    let lane = lay.lanes.iter().find(|l| l.thread == 3).unwrap();
    let spans: Vec<(f64, f64, Option<&str>, &str)> = lane.awaits.iter().map(|a| (a.span.start_s, a.span.end_s, a.span.awaits.as_deref(), a.span.evidence)).collect();
    assert_eq!(spans, vec![(0.012, 0.015, Some("fetch-2"), "task-state"), (0.018, 0.036, None, "task-state")]);
    assert!(lane.awaits[0].x1 > lane.awaits[0].x0 && lane.awaits[1].x1 <= 1200.0);
    // A viewport that starts after the first await shows only the second, clipped to it.
    let index = TimelineIndex::new(&run).unwrap();
    let part = layout::layout(&run, &index, &LayoutRequest { from_s: Some(0.021), to_s: Some(0.030), width_px: 300, ..LayoutRequest::default() }).unwrap();
    let lane = part.lanes.iter().find(|l| l.thread == 3).unwrap();
    assert_eq!(lane.awaits.len(), 1);
    assert_eq!((lane.awaits[0].x0, lane.awaits[0].x1), (0.0, 300.0));
    // For scripts, the spans overlapping the range.
    let bars = export::bars(&run, &index, Some(&[3]), Some(0.0), Some(0.0135)).unwrap();
    assert_eq!(bars.threads[0].awaits.iter().map(|a| a.awaits.as_deref()).collect::<Vec<_>>(), vec![Some("fetch-2")]);
}
