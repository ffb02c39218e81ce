//! Units of concurrency (issue #34): threads (the default) or asyncio tasks.
//!
//! Every view counts the entries of `run.threads`. [`tasks_as_units`] turns a run with asyncio
//! tasks (recorded on CPython 3.14+, [`threadradar_profiler::tasks`]) into a run in which every
//! task is such an entry — a *unit* — so that every figure, glyph, cluster, hint and panel counts
//! tasks without knowing it: Eq. 1–7 with tasks for threads, clusters over tasks, filters by task
//! name and coroutine. The transform is pure and exact about the samples: a sample of an
//! event-loop thread inside one of its [`TaskRun`](threadradar_profiler::tasks::TaskRun)s is the
//! task's; every other sample (the loop's own code between tasks, `to_thread` pool workers, plain
//! threads) stays with its thread, so a mixed program shows both kinds of unit. One correction:
//! the recorder reads a thread's running task and its stack a moment apart, so at a switch a
//! sample may show the next (or previous) task's coroutine inside the other task's run; a sample
//! whose stack runs the coroutine of a run within one sample of it, and not its own run's, is that
//! run's task (and a sample just outside a run whose stack runs that run's coroutine, its task's).
//! A sample inside a run whose stack runs another task's coroutine, with no such run near, is of
//! a task the table did not see (it ran between two ticks): it stays with the thread. On CPython
//! 3.14 this moves one or two samples in a thousand; without it a coroutine run by 3 tasks would
//! show a fourth at their edges.
//!
//! What cannot be split per task is not pretended: the kernel's per-thread accounting (schedstat
//! CPU and run-queue totals) is dropped from the event-loop threads and not given to tasks, so
//! seconds are samples × period ([`crate::TimeSource::Samples`]); the scheduler's switches and
//! wake-ups and the lock events name kernel tids and stay with the thread units
//! ([`crate::waits::thread_of_tid`] never answers a task). A task unit is marked by
//! [`TypeSource::Task`]; [`units_of`] tells which units a run shows and [`UNITS_NOTE`] says how
//! they were formed.

use serde::Serialize;
use threadradar_profiler::run::{Run, StackId, Thread, ThreadId, TypeSource};

/// What the views count as units of concurrency.
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Units {
    /// Threads, as recorded.
    #[default]
    Threads,
    /// asyncio tasks (and the threads' samples outside any task).
    Tasks,
}

impl Units {
    pub fn is_threads(&self) -> bool {
        *self == Units::Threads
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Units::Threads => "threads",
            Units::Tasks => "tasks",
        }
    }
}

impl std::fmt::Display for Units {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Units {
    type Err = String;
    fn from_str(s: &str) -> Result<Units, String> {
        match s {
            "threads" => Ok(Units::Threads),
            "tasks" => Ok(Units::Tasks),
            _ => Err(format!("unknown units {s:?}: use `threads` or `tasks`")),
        }
    }
}

/// The one sentence every client says when tasks are asked for and the run has none.
pub const NO_TASKS: &str = "this run has no asyncio tasks (they are recorded on CPython 3.14+ for programs that run an asyncio event loop); showing threads";

/// How task units are formed, for views that say so.
pub const UNITS_NOTE: &str = "units: asyncio tasks (sampled): a sample of an event-loop thread belongs to the task it was running; samples outside any task stay with their thread; kernel CPU accounting and scheduler events cannot be split per task and stay with the threads";

/// Whether a unit of a run is an asyncio task (made by [`tasks_as_units`]).
pub fn is_task(t: &Thread) -> bool {
    t.type_source == TypeSource::Task
}

/// Which units a run's `threads` are: [`Units::Tasks`] when [`tasks_as_units`] made it.
pub fn units_of(run: &Run) -> Units {
    if run.threads.iter().any(is_task) {
        Units::Tasks
    } else {
        Units::Threads
    }
}

/// `3 tasks`, `1 thread`, `2 tasks + 1 thread`: how many units of each kind, in words. `units`
/// are ids of `run.threads`.
pub fn count_words(run: &Run, units: impl IntoIterator<Item = ThreadId>) -> String {
    let (mut tasks, mut threads) = (0, 0);
    for u in units {
        match run.threads.get(u as usize) {
            Some(t) if is_task(t) => tasks += 1,
            _ => threads += 1,
        }
    }
    split_words(tasks, threads)
}

/// [`count_words`] from the counts: `tasks` task units and `threads` thread units.
pub fn split_words(tasks: usize, threads: usize) -> String {
    let word = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    match (tasks, threads) {
        (0, n) => word(n, "thread", "threads"),
        (n, 0) => word(n, "task", "tasks"),
        (a, b) => format!("{} + {}", word(a, "task", "tasks"), word(b, "thread", "threads")),
    }
}

/// The run with `units`: `run` itself for threads; for tasks, [`tasks_as_units`], or `run` with
/// [`NO_TASKS`] when it has none (the caller shows that sentence).
pub fn with_units(run: Run, units: Units) -> Result<(Run, Option<&'static str>), String> {
    match units {
        Units::Threads => Ok((run, None)),
        Units::Tasks if run.tasks.is_empty() => Ok((run, Some(NO_TASKS))),
        Units::Tasks => Ok((tasks_as_units(&run)?, None)),
    }
}

/// The run with every asyncio task as a unit in `threads` (see the module's documentation): task
/// `i` is unit `run.threads.len() + i`, named by the task's name, typed by its coroutine, with its
/// pid, its event loop's tid and its address as `python_id`. Thread ids stay as they were. Fails
/// with one sentence when the run has no tasks or its task tables name what it does not hold.
pub fn tasks_as_units(run: &Run) -> Result<Run, String> {
    if run.tasks.is_empty() {
        return Err(NO_TASKS.to_string());
    }
    let threads = run.threads.len();
    let damaged = |what: String| format!("the run's asyncio tasks are damaged ({what}); record it again, or show threads (`--units threads`)");
    for (i, t) in run.tasks.iter().enumerate() {
        if t.thread as usize >= threads {
            return Err(damaged(format!("task {i} names thread {} of {threads}", t.thread)));
        }
    }
    // Each thread's runs, sorted by their first sample, without overlaps.
    let mut runs_of: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); threads];
    for (i, r) in run.task_runs.iter().enumerate() {
        if r.thread as usize >= threads || r.task as usize >= run.tasks.len() || r.first > r.last {
            return Err(damaged(format!("task run {i} names thread {} and task {} over samples {}..={}", r.thread, r.task, r.first, r.last)));
        }
        runs_of[r.thread as usize].push((r.first, r.last, r.task));
    }
    for (th, v) in runs_of.iter_mut().enumerate() {
        v.sort_unstable();
        if let Some(w) = v.windows(2).find(|w| w[1].0 <= w[0].1) {
            return Err(damaged(format!("thread {th} runs two tasks at sample {}", w[1].0)));
        }
    }
    let coros: std::collections::HashSet<u32> = run.tasks.iter().filter_map(|t| t.function).collect();
    // Whether a stack runs a task's coroutine (`None` when the run does not know its function).
    let runs_coro = |stack: Option<StackId>, task: u32| -> Option<bool> {
        let f = run.tasks[task as usize].function?;
        Some(stack.is_some_and(|st| run.stack_frames(st).any(|fr| fr.function == f)))
    };
    let task_at = |thread: ThreadId, sample: u32, stack: Option<StackId>| -> Option<u32> {
        let v = runs_of.get(thread as usize)?;
        // The runs within one sample of this one, the one holding it first.
        let k = v.partition_point(|r| r.0 <= sample.saturating_add(1));
        let near: Vec<&(u32, u32, u32)> = v[k.saturating_sub(3)..k].iter().rev().filter(|r| sample.saturating_add(1) >= r.0 && sample <= r.1.saturating_add(1)).collect();
        let holding = near.iter().find(|r| r.0 <= sample && sample <= r.1).map(|r| r.2);
        // The running task and the stack are read a moment apart: at a switch between tasks, a
        // sample whose stack runs the neighbouring run's coroutine and not its own task's (or
        // just outside any run, its neighbour's) is that neighbour's.
        if holding.is_some_and(|t| runs_coro(stack, t) != Some(false)) {
            return holding;
        }
        if let Some(t) = near.iter().map(|r| r.2).find(|&t| Some(t) != holding && runs_coro(stack, t) == Some(true)) {
            return Some(t);
        }
        // A stack that runs another task's coroutine, none of them near: a task the table did
        // not see run (it ran between two ticks). Which one cannot be told: the thread keeps it.
        let foreign = stack.is_some_and(|st| run.stack_frames(st).any(|fr| coros.contains(&fr.function)));
        if foreign {
            None
        } else {
            holding
        }
    };

    let mut out = run.clone();
    let mut seen: Vec<Option<(u32, u32)>> = vec![None; run.tasks.len()];
    for (si, s) in out.samples.iter_mut().enumerate() {
        for ts in &mut s.threads {
            if let Some(task) = task_at(ts.thread, si as u32, ts.stack) {
                ts.thread = (threads + task as usize) as ThreadId;
                let e = seen[task as usize].get_or_insert((si as u32, si as u32));
                e.1 = si as u32;
            }
        }
    }
    // The event loops' kernel totals hold their tasks' time: not the thread units' any more.
    for (th, v) in runs_of.iter().enumerate() {
        if !v.is_empty() {
            let t = &mut out.threads[th];
            (t.cpu_ns_first, t.cpu_ns_last, t.runq_ns_first, t.runq_ns_last) = (None, None, None, None);
        }
    }
    for (i, task) in run.tasks.iter().enumerate() {
        let thread = &run.threads[task.thread as usize];
        let (first, last) = seen[i].unwrap_or((task.first_sample, task.last_sample));
        out.threads.push(Thread {
            pid: task.pid,
            tid: thread.tid,
            python_id: task.address,
            name: task.name.clone(),
            thread_type: task.coro.clone(),
            type_source: TypeSource::Task,
            is_main: false,
            start_time: None,
            first_sample: first,
            last_sample: last,
            cpu_ns_first: None,
            cpu_ns_last: None,
            runq_ns_first: None,
            runq_ns_last: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
