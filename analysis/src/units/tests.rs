use super::*;
use crate::{Analysis, Options, ReportView, ThreadFilter, ViewOptions};
use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
use threadradar_profiler::run::{FileKind, Meta, Sample, ThreadSample, ThreadState};
use threadradar_profiler::tasks::{Task, TaskRun};

/// What each tick of the event-loop thread (thread 0) ran: the loop's own code (`None`) or a
/// task (`Some(i)`), which runs `Crawler.fetch` (and `parse` in the middle one). Thread 1, a
/// `to_thread` pool worker, runs `blocking_io` at every tick.
const LOOP: [Option<u32>; 12] = [None, None, Some(0), Some(0), None, Some(1), Some(1), None, Some(2), Some(2), None, None];

/// Two threads: the main thread's event loop runs three tasks of the coroutine `Crawler.fetch` in
/// turn with the loop's code (`BaseEventLoop._run_once`) between them; a pool thread runs
/// `blocking_io` throughout. Both threads have kernel CPU accounting.
fn mixed_run() -> Run {
    let mut b = RunBuilder::new(Meta { interval_ms: 3.0, cwd: "/p".into(), ..Meta::default() });
    let file = b.file("/p/app.py", FileKind::User, None);
    let f = |b: &mut RunBuilder, qualname, class, line| b.function(file, &FunctionSpec { qualname, class, line, end_line: line + 3, class_line: 0 });
    let main = f(&mut b, "main", None, 1);
    let run_once = f(&mut b, "BaseEventLoop._run_once", Some("BaseEventLoop"), 5);
    let fetch = f(&mut b, "Crawler.fetch", Some("Crawler"), 10);
    let parse = f(&mut b, "parse", None, 15);
    let worker = f(&mut b, "_worker", None, 20);
    let blocking = f(&mut b, "blocking_io", None, 25);
    let fr = |b: &mut RunBuilder, func: u32| b.frame(func, func + 1);
    let (main, run_once, fetch, parse, worker, blocking) =
        (fr(&mut b, main), fr(&mut b, run_once), fr(&mut b, fetch), fr(&mut b, parse), fr(&mut b, worker), fr(&mut b, blocking));
    let loop_stack = b.stack(&[main, run_once]);
    let task_stack = b.stack(&[main, run_once, fetch]);
    let parse_stack = b.stack(&[main, run_once, fetch, parse]);
    let pool_stack = b.stack(&[worker, blocking]);
    for (tid, name, ty) in [(100, "MainThread", "_MainThread"), (101, "asyncio_0", "Thread")] {
        let mut t = new_thread(100, tid, tid as u64, name, ty);
        (t.cpu_ns_first, t.cpu_ns_last, t.runq_ns_first, t.runq_ns_last) = (Some(0), Some(36_000_000), Some(0), Some(1_000));
        b.thread(t);
    }
    for (i, on_loop) in LOOP.iter().enumerate() {
        let stack = match on_loop {
            None => loop_stack,
            Some(1) => parse_stack,
            Some(_) => task_stack,
        };
        let ts = |thread, stack| ThreadSample { thread, stack, state: ThreadState::Computing, cpu_ns: 3_000_000, ..Default::default() };
        b.push_sample(Sample { t: i as u64 * 3_000_000, threads: vec![ts(0, stack), ts(1, pool_stack)] });
    }
    let mut run = b.finish();
    for i in 0..3u32 {
        let first = LOOP.iter().position(|&x| x == Some(i)).unwrap() as u32;
        run.tasks.push(Task { pid: 100, address: 0x7f00 + i as u64 * 0x100, name: format!("fetch-{}", i + 1), coro: "Crawler.fetch".into(), thread: 0, first_sample: 0, last_sample: 11, ..Default::default() });
        run.task_runs.push(TaskRun { thread: 0, task: i, first, last: first + 1 });
    }
    run.validate().unwrap();
    run
}

fn view(run: &Run) -> ReportView {
    let analysis = Analysis::new(run, &Options::default()).unwrap();
    ReportView::build(run, &analysis, &ViewOptions::default()).unwrap()
}

fn units_of_function<'a>(v: &'a ReportView, qualname: &str) -> Vec<ThreadId> {
    let a = v.artifacts.iter().find(|a| a.qualname == qualname).unwrap_or_else(|| panic!("{qualname} is not in the report"));
    assert_eq!(a.threads, a.per_thread.len());
    a.per_thread.iter().map(|s| s.thread).collect()
}

#[test]
fn every_task_is_a_unit_and_the_loop_and_the_pool_stay_threads() {
    let run = mixed_run();
    let before = view(&run);
    assert_eq!(units_of_function(&before, "Crawler.fetch"), vec![0], "as threads, one thread runs the coroutine");
    assert_eq!(count_words(&run, units_of_function(&before, "Crawler.fetch")), "1 thread");

    let tasks = tasks_as_units(&run).unwrap();
    tasks.validate().unwrap();
    assert_eq!(units_of(&run), Units::Threads);
    assert_eq!(units_of(&tasks), Units::Tasks);
    assert_eq!(tasks.threads.len(), 5);
    for (i, u) in tasks.threads[2..].iter().enumerate() {
        assert_eq!((u.name.as_str(), u.thread_type.as_str(), u.tid, u.pid, u.is_main), (format!("fetch-{}", i + 1).as_str(), "Crawler.fetch", 100, 100, false));
        assert_eq!(u.python_id, 0x7f00 + i as u64 * 0x100);
        assert!(is_task(u));
        let first = LOOP.iter().position(|&x| x == Some(i as u32)).unwrap() as u32;
        assert_eq!((u.first_sample, u.last_sample), (first, first + 1), "a task's span is that of its runs");
    }
    let v = view(&tasks);
    // The coroutine is run by the three tasks, and by nothing else.
    assert_eq!(units_of_function(&v, "Crawler.fetch"), vec![2, 3, 4]);
    assert_eq!(count_words(&tasks, units_of_function(&v, "Crawler.fetch")), "3 tasks");
    // `parse` only by the task that called it.
    assert_eq!(units_of_function(&v, "parse"), vec![3]);
    // The pool's function stays with its thread; the loop's own code with the loop's thread.
    assert_eq!(units_of_function(&v, "blocking_io"), vec![1]);
    assert_eq!(count_words(&tasks, units_of_function(&v, "blocking_io")), "1 thread");
    assert_eq!(units_of_function(&v, "BaseEventLoop._run_once"), vec![0, 2, 3, 4]);
    assert_eq!(count_words(&tasks, units_of_function(&v, "main")), "3 tasks + 1 thread");
    // Every sample is counted once: the loop thread keeps its 6 samples outside tasks, each task 2.
    let samples: Vec<u64> = v.threads.iter().map(|t| t.samples).collect();
    assert_eq!(samples, vec![6, 12, 2, 2, 2]);
    assert_eq!(v.counted_samples, before.counted_samples);
    // Same coroutine, same figures: the three tasks are one type and one cluster's worth.
    let fetch = v.artifacts.iter().find(|a| a.qualname == "Crawler.fetch").unwrap();
    assert_eq!(fetch.thread_types, 1);
    assert_eq!(v.program.thread_types, 3, "_MainThread, Thread and Crawler.fetch");
}

#[test]
fn kernel_accounting_and_tids_stay_with_the_threads() {
    let run = mixed_run();
    let tasks = tasks_as_units(&run).unwrap();
    // The loop thread's schedstat totals held its tasks' CPU: they cannot be split, so no unit has them.
    assert_eq!(tasks.threads[0].cpu_ns_first, None);
    assert_eq!(tasks.threads[1].cpu_ns_first, Some(0), "the pool thread ran no task: its accounting stands");
    assert!(tasks.threads[2..].iter().all(|t| t.cpu_ns_first.is_none() && t.runq_ns_last.is_none()));
    assert!(crate::has_cpu_accounting(&run));
    assert!(!crate::has_cpu_accounting(&tasks), "seconds are samples × period for task units");
    // A kernel tid names the loop thread, never a task that shares it.
    let of = crate::waits::thread_of_tid(&tasks);
    assert_eq!(of(100, 9_000_000), Some(0));
    assert_eq!(of(101, 9_000_000), Some(1));
}

#[test]
fn tasks_filter_by_name_and_coroutine() {
    let tasks = tasks_as_units(&mixed_run()).unwrap();
    let by_name = ThreadFilter::by_names(&tasks, &["fetch-2".to_string()], &[]).unwrap();
    let by_coro = ThreadFilter::by_names(&tasks, &[], &["Crawler.fetch".to_string()]).unwrap();
    let units = |f: ThreadFilter| {
        let a = Analysis::new(&tasks, &Options { threads: f, ..Options::default() }).unwrap();
        let v = ReportView::build(&tasks, &a, &ViewOptions::default()).unwrap();
        v.artifacts.iter().find(|a| a.qualname == "main").map(|a| a.per_thread.iter().map(|s| s.thread).collect::<Vec<_>>()).unwrap()
    };
    assert_eq!(units(by_name), vec![0, 2, 4]);
    assert_eq!(units(by_coro), vec![0]);
}

#[test]
fn no_tasks_or_damaged_tasks_are_one_sentence() {
    let mut run = mixed_run();
    let (same, note) = with_units(run.clone(), Units::Threads).unwrap();
    assert_eq!((same.threads.len(), note), (2, None));
    let (as_tasks, note) = with_units(run.clone(), Units::Tasks).unwrap();
    assert_eq!((as_tasks.threads.len(), note), (5, None));

    let mut overlapping = run.clone();
    overlapping.task_runs[1].first = 3;
    let e = tasks_as_units(&overlapping).unwrap_err();
    assert!(e.contains("thread 0 runs two tasks at sample 3") && e.ends_with("(`--units threads`)"), "{e}");
    let mut dangling = run.clone();
    dangling.task_runs[0].task = 7;
    assert!(tasks_as_units(&dangling).unwrap_err().contains("task run 0 names thread 0 and task 7"));

    run.tasks.clear();
    run.task_runs.clear();
    assert_eq!(tasks_as_units(&run).unwrap_err(), NO_TASKS);
    let (threads, note) = with_units(run, Units::Tasks).unwrap();
    assert_eq!((threads.threads.len(), note), (2, Some(NO_TASKS)));
}

#[test]
fn words_and_names() {
    assert_eq!(split_words(0, 1), "1 thread");
    assert_eq!(split_words(1, 0), "1 task");
    assert_eq!(split_words(2, 1), "2 tasks + 1 thread");
    assert_eq!("tasks".parse::<Units>(), Ok(Units::Tasks));
    assert!("fibres".parse::<Units>().unwrap_err().contains("`threads` or `tasks`"));
}

/// One thread whose stack at each tick runs coroutine `a`, `b` or the loop's code (`-`), and task
/// runs (task, first, last) of task 0 (coroutine `a`) and task 1 (coroutine `b`).
fn switching(stacks: &str, runs: &[(u32, u32, u32)]) -> Run {
    let mut b = RunBuilder::new(Meta { interval_ms: 3.0, ..Meta::default() });
    let file = b.file("/p/s.py", FileKind::User, None);
    let fs: Vec<u32> = ["run_once", "a", "b"].iter().enumerate().map(|(i, q)| b.function(file, &FunctionSpec { qualname: q, line: 1 + 5 * i as u32, end_line: 4 + 5 * i as u32, ..Default::default() })).collect();
    let frames: Vec<u32> = fs.iter().map(|&f| b.frame(f, f * 5 + 2)).collect();
    b.thread(new_thread(1, 1, 1, "MainThread", "_MainThread"));
    for (i, c) in stacks.chars().enumerate() {
        let stack = match c {
            'a' => b.stack(&[frames[0], frames[1]]),
            'b' => b.stack(&[frames[0], frames[2]]),
            _ => b.stack(&[frames[0]]),
        };
        b.push_sample(Sample { t: i as u64 * 3_000_000, threads: vec![ThreadSample { thread: 0, stack, state: ThreadState::Computing, ..Default::default() }] });
    }
    let mut run = b.finish();
    for (i, coro) in ["a", "b"].iter().enumerate() {
        run.tasks.push(Task { name: format!("{coro}-task"), coro: coro.to_string(), function: Some(fs[i + 1]), ..Default::default() });
    }
    run.task_runs = runs.iter().map(|&(task, first, last)| TaskRun { thread: 0, task, first, last }).collect();
    run
}

/// Who each sample went to: the task's name, or `-` for the thread.
fn owners(run: &Run) -> String {
    let t = tasks_as_units(run).unwrap();
    t.samples.iter().map(|s| match s.threads[0].thread {
        0 => '-',
        u => t.threads[u as usize].name.chars().next().unwrap(),
    }).collect()
}

#[test]
fn a_sample_at_a_switch_goes_to_the_task_whose_coroutine_it_runs() {
    // The switch from a to b was read one tick late: sample 2 runs b inside a's run.
    assert_eq!(owners(&switching("aabb-", &[(0, 0, 2), (1, 3, 3)])), "aabb-");
    // ...or one tick early: sample 2 runs a inside b's run.
    assert_eq!(owners(&switching("aaab-", &[(0, 0, 1), (1, 2, 3)])), "aaab-");
    // Just outside a run, its coroutine on the stack: the run's task; the loop's code stays.
    assert_eq!(owners(&switching("aa--b", &[(0, 0, 0), (1, 4, 4)])), "aa--b");
    // The loop's own code inside a run (no coroutine on the stack to say otherwise) is the task's.
    assert_eq!(owners(&switching("a-a-", &[(0, 0, 2)])), "aaa-");
    // A coroutine two samples away is not a neighbour: the sample stays where the table puts it.
    assert_eq!(owners(&switching("aab-", &[(0, 0, 1)])), "aa--");
    // Another task's coroutine inside a run, that task nowhere near: a task the table missed, so
    // the thread keeps the sample (not the run's task, which did not run that code).
    assert_eq!(owners(&switching("aaba-bb", &[(0, 0, 3), (1, 5, 6)])), "aa-a-bb");
}
