//! The sampler's part of recording asyncio tasks (issue #34, `docs/asyncio.md`): at each tick,
//! which task each thread runs (from the thread states the stack walk read) becomes a
//! [`TaskRun`]; the tasks themselves, their states and await chains come from the task lists,
//! read again only when a list's ends moved (at most every [`LIST_EVERY_CHANGED`]) or else every
//! [`LIST_EVERY`]. The reading itself is [`crate::cpython::asyncio`].

use super::{Sampler, StackSource};
use crate::cpython::asyncio::{find_offsets, TaskHead, TaskLists};
use crate::cpython::Interpreter;
use crate::run::{ThreadId, ThreadSample};
use crate::tasks::{Task, TaskId, TaskRun, TaskState, TaskStateKind, TasksInfo};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// The lists are read again this soon when one of their ends moved (a task was created or
/// finished)…
const LIST_EVERY_CHANGED: Duration = Duration::from_millis(50);
/// …and this often anyway (a task's state changes without its list changing).
const LIST_EVERY: Duration = Duration::from_secs(1);
/// How often a 3.14+ process without `_asyncio` yet is looked at again (it is loaded when the
/// program imports asyncio): soon once a file of the `asyncio` package was seen in a stack (the
/// import is under way, or the loop runs), else now and then (a read of its memory map each).
const LOOK_EVERY: Duration = Duration::from_millis(500);
const LOOK_EVERY_ASYNCIO_SEEN: Duration = Duration::from_millis(20);
const LOOK_SOON_FOR: Duration = Duration::from_secs(2);
/// New tasks are described (name, coroutine) and await chains read only while a tick's task
/// reading has taken less than this: a program that starts 10 000 tasks at once is described
/// over many ticks instead of in one long one. A running task is always described at once.
const TICK_BUDGET: Duration = Duration::from_micros(500);
/// The lists are read at most this often relative to what the last reading cost (a reading
/// that took 5 ms waits at least 500 ms), so that following them costs at most about 1 % of the
/// recorder's time however many tasks there are.
const LIST_COST_FACTOR: u32 = 100;
/// At most this many tasks that awaited asyncio's primitives are followed at every tick (one or
/// two small regions each, 1 024 regions per system call).
const MAX_TRACKED: usize = 4096;

/// What is known of one task of a process.
#[derive(Clone, Copy, Debug)]
struct Known {
    id: TaskId,
    coro: usize,
    name: usize,
    fut_waiter: usize,
    /// The future whose end the watch saw (the task is ready to run again while it still
    /// names it): 0 when none.
    woken_from: usize,
    last: Option<(TaskStateKind, Option<TaskId>, Option<u32>)>,
}

/// One process's tasks.
#[derive(Default)]
struct ProcTasks {
    looked: Option<Instant>,
    /// When the sampler first saw asyncio in a stack while this process had no table yet.
    asyncio_seen_at: Option<Instant>,
    checked: HashSet<String>,
    known: HashMap<usize, Known>,
    /// Each thread's running task address at the last tick, and its open run.
    running: HashMap<ThreadId, usize>,
    open: HashMap<ThreadId, TaskRun>,
    /// The tasks in list order at the last reading, when it was, and the lists' ends then.
    order: Vec<usize>,
    listed_at: Option<Instant>,
    ends: Vec<(u64, (usize, usize))>,
    /// What the last reading of the lists (with its handling) cost.
    list_cost: Duration,
    /// Tasks seen in a list but not described yet (over budget).
    pending: Vec<(TaskHead, Option<ThreadId>)>,
    /// Tasks that awaited one of asyncio's primitives (`Event.wait`, `Queue.get`, …), task
    /// address → the future it awaited when last read: their `fut_waiter` is read at every tick,
    /// and the head again when it changed, so that an await of a primitive is seen to begin
    /// within a period even after steps too short for a tick to catch (a task's states are
    /// otherwise read only when a tick sees it start or stop running, or with the lists).
    tracked: HashMap<usize, usize>,
    /// Of those, the ones awaiting a primitive now, task → the future and its first
    /// done-callback (the task's wake-up; 0 if unknown): the future's state and callback are read
    /// at every tick too, so that the await's end is known within a period — also when the task
    /// was woken and awaits again a new future at the old one's address (the callback differs).
    watched: HashMap<usize, (usize, usize)>,
}

/// The sampler's task bookkeeping across processes.
#[derive(Default)]
pub(super) struct TasksRec {
    procs: HashMap<u32, ProcTasks>,
    /// The raw frame of each task's coroutine (its `def`), by task id: resolved to the task's
    /// function when the run is finished.
    frames: Vec<Option<u32>>,
    /// Tasks whose name or end changed since they were written to the run file.
    pub(super) dirty: HashSet<TaskId>,
    /// A file of the `asyncio` package was seen in a stack.
    pub(super) asyncio_seen: bool,
    /// Time spent reading tasks, and how often (for the debug log and benchmarks).
    spent: Duration,
    lists_read: u64,
}

fn interp(spy: &mut StackSource) -> Option<&mut Interpreter> {
    match spy {
        StackSource::DebugOffsets(i) => Some(i),
        StackSource::PySpy { .. } => None,
    }
}

impl Sampler {
    /// Reads process `pid`'s tasks for the sample about to be pushed (index `sample`), whose
    /// threads of this process are `threads`.
    pub(super) fn record_tasks(&mut self, si: usize, pid: u32, sample: u32, threads: &[ThreadSample]) {
        if !self.opts.tasks {
            return;
        }
        let began = Instant::now();
        let mut pt = self.tasks.procs.remove(&pid).unwrap_or_default();
        self.tasks_tick(si, pid, sample, threads, &mut pt);
        self.tasks.procs.insert(pid, pt);
        let spent = began.elapsed();
        self.tasks.spent += spent;
        if spent >= Duration::from_millis(1) {
            tracing::debug!(pid, sample, spent_us = spent.as_micros() as u64, "a long tick of task reading");
        }
    }

    fn tasks_tick(&mut self, si: usize, pid: u32, sample: u32, threads: &[ThreadSample], pt: &mut ProcTasks) {
        if !self.asyncio_ready(si, pid, pt) {
            return;
        }
        // The threads of this sample, by native id.
        let present: HashMap<u64, ThreadId> =
            threads.iter().filter_map(|t| Some((self.builder.run().threads.get(t.thread as usize)?.tid as u64, t.thread))).collect();
        let ip = interp(&mut self.spies[si].spy).unwrap();
        let athreads = ip.asyncio_threads().to_vec();
        let mut running: Vec<(ThreadId, usize)> = Vec::new();
        // Heads read this tick: the tasks that started or stopped running.
        let mut heads: Vec<(TaskHead, Option<ThreadId>)> = Vec::new();
        for t in &athreads {
            let Some(&th) = present.get(&t.native_id) else { continue };
            running.push((th, t.running_task));
            let before = pt.running.get(&th).copied().unwrap_or(0);
            if t.running_task != before {
                for addr in [before, t.running_task] {
                    if let Some(h) = (addr != 0).then(|| ip.read_task(addr)).flatten() {
                        heads.push((h, Some(th)));
                    }
                }
            }
        }
        let running_now: HashSet<usize> = running.iter().map(|r| r.1).filter(|&a| a != 0).collect();
        self.watch_awaits(si, pid, sample, pt, &mut heads);
        // The lists, when due.
        let ends: Vec<(u64, (usize, usize))> = athreads.iter().map(|t| (t.native_id, t.head)).collect();
        let due = match pt.listed_at {
            None => true,
            Some(at) => {
                let since = at.elapsed();
                since >= pt.list_cost * LIST_COST_FACTOR && (since >= LIST_EVERY || (ends != pt.ends && since >= LIST_EVERY_CHANGED))
            }
        };
        let mut lists: Option<TaskLists> = None;
        if due {
            pt.listed_at = Some(Instant::now());
            pt.ends = ends;
            let at = Instant::now();
            lists = interp(&mut self.spies[si].spy).unwrap().read_task_lists(&pt.order);
            tracing::debug!(pid, tasks = pt.order.len(), elapsed_us = at.elapsed().as_micros() as u64, "asyncio task lists read");
            self.tasks.lists_read += 1;
        }
        if let Some(l) = &lists {
            pt.order = l.lists.iter().flat_map(|(_, ts)| ts.iter().map(|t| t.addr)).collect();
            for (native, ts) in &l.lists {
                let th = native.and_then(|n| self.threads.get(&(pid, n)).map(|e| e.id));
                heads.extend(ts.iter().map(|t| (*t, th)));
            }
        }
        // New tasks are described (running ones first), within the budget.
        let began = Instant::now();
        let deadline = began + TICK_BUDGET;
        let mut queue: Vec<(TaskHead, Option<ThreadId>)> = std::mem::take(&mut pt.pending);
        let mut seen_now: HashSet<usize> = HashSet::new();
        let mut awaited_by: HashMap<usize, usize> = HashMap::new();
        for (h, th) in heads.iter().chain(queue.iter()).copied().collect::<Vec<_>>() {
            if !seen_now.insert(h.addr) {
                continue;
            }
            let ip = interp(&mut self.spies[si].spy).unwrap();
            let known = pt.known.get(&h.addr).copied().filter(|k| k.coro == h.coro);
            let id = match known {
                Some(k) => {
                    if k.name != h.name {
                        // Renamed (`set_name`).
                        if let Some(name) = ip.task_name(h.name) {
                            self.builder.run_mut().tasks[k.id as usize].name = name;
                            self.tasks.dirty.insert(k.id);
                        }
                        pt.known.get_mut(&h.addr).unwrap().name = h.name;
                    }
                    k.id
                }
                None => {
                    if !running_now.contains(&h.addr) && Instant::now() >= deadline {
                        pt.pending.push((h, th));
                        continue;
                    }
                    let name = ip.task_name(h.name).unwrap_or_else(|| format!("<task at 0x{:x}>", h.addr));
                    let coro = ip.coro_code(h.coro);
                    let thread = th.or_else(|| present.values().min().copied()).unwrap_or(0);
                    let id = self.new_task(pid, &h, name, coro, thread, sample);
                    // An address freed by a finished task and taken by a new one.
                    if let Some(old) = pt.known.get(&h.addr).copied() {
                        self.end_task(old, sample);
                    }
                    pt.known.insert(h.addr, Known { id, coro: h.coro, name: h.name, fut_waiter: usize::MAX, woken_from: 0, last: None });
                    id
                }
            };
            let t = &mut self.builder.run_mut().tasks[id as usize];
            t.last_sample = sample;
            if let Some(th) = th {
                t.thread = th;
            }
            if h.awaited_by != 0 && !h.awaited_by_is_set {
                awaited_by.insert(h.awaited_by, h.addr);
            } else if h.awaited_by_is_set && Instant::now() < deadline {
                let ip = interp(&mut self.spies[si].spy).unwrap();
                for by in ip.awaited_by(&h) {
                    awaited_by.entry(by).or_insert(h.addr);
                }
            }
        }
        queue.clear();
        // States: of every head read this tick.
        self.head_states(si, pid, sample, pt, &heads, &running_now, &awaited_by, deadline);
        // Tasks that are running now but whose state was not read this tick (still running).
        for &(_, addr) in &running {
            if addr != 0 && !heads.iter().any(|(h, _)| h.addr == addr) && pt.known.contains_key(&addr) {
                let fw = pt.known[&addr].fut_waiter;
                self.set_task_state(pt, addr, sample, (TaskStateKind::Running, None, None), fw);
                let id = pt.known[&addr].id;
                self.builder.run_mut().tasks[id as usize].last_sample = sample;
            }
        }
        if let Some(l) = lists.as_ref().filter(|l| l.complete) {
            self.end_unlisted(pt, l, &running_now, sample);
        }
        self.extend_runs(pt, &running, sample);
        if let Some(l) = &lists {
            pt.list_cost = pt.listed_at.map_or(Duration::ZERO, |at| at.elapsed());
            tracing::debug!(pid, tasks = pt.order.len(), reads = l.reads, complete = l.complete, pending = pt.pending.len(), cost_us = pt.list_cost.as_micros() as u64, "asyncio task lists handled");
        }
    }

    /// Each head read this tick (`heads`) becomes the task's state at this sample: running,
    /// done, awaiting (what, with its chain) or ready; an await of a primitive is watched from
    /// then on ([`Sampler::watch_awaits`]), and one seen already over is recorded with its end.
    #[allow(clippy::too_many_arguments)]
    fn head_states(&mut self, si: usize, pid: u32, sample: u32, pt: &mut ProcTasks, heads: &[(TaskHead, Option<ThreadId>)], running_now: &HashSet<usize>, awaited_by: &HashMap<usize, usize>, deadline: Instant) {
        let current: Vec<TaskHead> = heads.iter().map(|(h, _)| *h).filter(|h| pt.known.get(&h.addr).is_some_and(|k| k.coro == h.coro)).collect();
        for h in &current {
            let k = pt.known[&h.addr];
            let kind = if running_now.contains(&h.addr) {
                TaskStateKind::Running
            } else if h.state != 0 {
                TaskStateKind::Done
            } else if h.fut_waiter != 0
                // Still naming the future whose end was seen: ready to run — unless that address
                // now holds a new future it awaits (a freed future's memory taken again).
                && (h.fut_waiter != k.woken_from || interp(&mut self.spies[si].spy).unwrap().future_now(h.fut_waiter).is_some_and(|f| f.state == 0))
            {
                TaskStateKind::Awaiting
            } else {
                TaskStateKind::Ready
            };
            let task_of = |a: usize| pt.known.get(&a).map(|k| k.id);
            let awaits = match kind {
                TaskStateKind::Awaiting => task_of(h.fut_waiter).or_else(|| awaited_by.get(&h.addr).and_then(|&c| task_of(c))),
                _ => None,
            };
            // Whether this await is one of a primitive's, to be watched at every tick.
            let mut primitive = false;
            let chain = match kind {
                // The same await as at the last reading: its chain stands (one not read then, for
                // want of time, is read now if there is time).
                TaskStateKind::Awaiting if k.fut_waiter == h.fut_waiter && k.last.is_some_and(|l| l.0 == TaskStateKind::Awaiting && l.2.is_some()) => {
                    primitive = pt.watched.get(&h.addr).is_some_and(|w| w.0 == h.fut_waiter);
                    k.last.and_then(|l| l.2)
                }
                // A followed task's chain is read whatever the time: it says whether the await
                // is a primitive's, which is what following it is for.
                TaskStateKind::Awaiting if Instant::now() < deadline || pt.tracked.contains_key(&h.addr) => {
                    let ip = interp(&mut self.spies[si].spy).unwrap();
                    let frames = ip.await_chain(h.coro);
                    primitive = awaits.is_none() && frames.first().is_some_and(|f| crate::tasks::asyncio_primitive(&f.name, &f.filename).is_some());
                    self.intern_stack(pid, &frames)
                }
                _ => None,
            };
            if kind == TaskStateKind::Awaiting {
                pt.known.get_mut(&h.addr).unwrap().woken_from = 0;
            }
            // A task seen running or ready to run (a new one not started yet, too) is followed
            // too: its next await may be a primitive's, begun after a step too short for a tick
            // to catch.
            if matches!(kind, TaskStateKind::Running | TaskStateKind::Ready) && pt.tracked.len() < MAX_TRACKED {
                pt.tracked.entry(h.addr).or_insert(h.fut_waiter);
            }
            // An await of a primitive first seen with its future already done began and ended
            // since the last tick: it is recorded, then its end, at this sample.
            let watching = pt.watched.get(&h.addr).copied().filter(|w| w.0 == h.fut_waiter);
            let fut_now = if primitive && watching.is_none() { interp(&mut self.spies[si].spy).unwrap().future_now(h.fut_waiter) } else { None };
            let ended = fut_now.is_some_and(|f| f.state == 2);
            if primitive && !ended && (pt.tracked.len() < MAX_TRACKED || pt.tracked.contains_key(&h.addr)) {
                let callback0 = watching.map(|w| w.1).or(fut_now.map(|f| f.callback0)).unwrap_or(0);
                pt.watched.insert(h.addr, (h.fut_waiter, callback0));
                pt.tracked.insert(h.addr, h.fut_waiter);
            } else {
                pt.watched.remove(&h.addr);
                if kind == TaskStateKind::Done {
                    pt.tracked.remove(&h.addr);
                } else if let Some(fw) = pt.tracked.get_mut(&h.addr) {
                    *fw = h.fut_waiter;
                }
            }
            self.set_task_state(pt, h.addr, sample, (kind, awaits, chain), h.fut_waiter);
            if ended {
                pt.known.get_mut(&h.addr).unwrap().woken_from = h.fut_waiter;
                self.set_task_state(pt, h.addr, sample, (TaskStateKind::Ready, None, None), h.fut_waiter);
            }
        }
    }

    /// Whether process `si`'s tasks can be read at this tick: its interpreter is 3.14+ and its
    /// `_asyncio` table was found (looked for here, see [`LOOK_EVERY`]); on an older one, the
    /// note that tasks need 3.14+ once the program uses asyncio.
    fn asyncio_ready(&mut self, si: usize, pid: u32, pt: &mut ProcTasks) -> bool {
        let version = self.spies[si].spy.version();
        let Some(ip) = interp(&mut self.spies[si].spy).filter(|i| i.major_minor() >= (3, 14)) else {
            // An older interpreter: say once that tasks need 3.14+, when the program uses asyncio.
            if self.tasks.asyncio_seen && self.builder.run().tasks_info.is_none() {
                self.builder.run_mut().tasks_info = Some(TasksInfo {
                    source: String::new(),
                    note: Some(format!("asyncio tasks are not recorded: reading them from outside needs CPython 3.14+ (this program runs CPython {version})")),
                });
            }
            return false;
        };
        if ip.asyncio_offsets().is_none() {
            // Soon after asyncio appeared in a stack, then (an interpreter without the table)
            // at the slow pace again.
            if self.tasks.asyncio_seen && pt.asyncio_seen_at.is_none() {
                pt.asyncio_seen_at = Some(Instant::now());
            }
            let soon = pt.asyncio_seen_at.is_some_and(|t| t.elapsed() < LOOK_SOON_FOR);
            let every = if soon { LOOK_EVERY_ASYNCIO_SEEN } else { LOOK_EVERY };
            if pt.looked.is_some_and(|t| t.elapsed() < every) {
                return false;
            }
            pt.looked = Some(Instant::now());
            let Some(o) = find_offsets(pid, &mut pt.checked) else { return false };
            let file = o.file.clone();
            if ip.set_asyncio(o) {
                tracing::info!(pid, file, "asyncio tasks are read through _asyncio's debug offsets");
                self.builder.run_mut().tasks_info.get_or_insert(TasksInfo { source: format!("_asyncio debug offsets (CPython {version}, {file})"), note: None });
            }
            // The threads' fields are read from the next walk on.
            return false;
        }
        true
    }

    /// The tracked tasks, read at this tick (one batch): each one's `fut_waiter`, and for one
    /// awaiting a primitive that future's state and first callback. A task whose future is done,
    /// or that awaits another one (at another address, or with another wake-up callback at the
    /// same one) or none, was woken since the last tick: it is recorded ready at this sample
    /// (the analysis looks for who ran then). The head of every task that changed is read again
    /// (`heads`, one batch) for what it does now.
    fn watch_awaits(&mut self, si: usize, pid: u32, sample: u32, pt: &mut ProcTasks, heads: &mut Vec<(TaskHead, Option<ThreadId>)>) {
        if pt.tracked.is_empty() {
            return;
        }
        let ip = interp(&mut self.spies[si].spy).unwrap();
        let tracked: Vec<(usize, usize, Option<(usize, usize)>)> = pt.tracked.iter().map(|(&t, &fw)| (t, fw, pt.watched.get(&t).copied())).collect();
        let asks: Vec<(usize, Option<usize>)> = tracked.iter().map(|&(t, _, w)| (t, w.map(|w| w.0))).collect();
        let (got, calls) = ip.poll_awaits(&asks);
        let (mut changed, mut woken) = (Vec::new(), Vec::new());
        for (&(task, seen, watch), g) in tracked.iter().zip(got) {
            match (g, watch) {
                (None, _) => {
                    pt.tracked.remove(&task);
                    pt.watched.remove(&task);
                }
                (Some((now, Some(fut))), Some((f, cb))) if now == f && fut.state == 0 && (cb == 0 || fut.callback0 == cb) => {}
                // Finished (2), no longer awaited, or a new future at the old one's address (its
                // wake-up callback differs): woken. Cancelled (1) or not a future's state: the
                // head says what it is now.
                (Some((now, fut)), Some((f, cb))) => {
                    let renewed = fut.is_some_and(|x| x.state == 0 && cb != 0 && x.callback0 != cb);
                    if now != f || fut.is_some_and(|x| x.state == 2) || renewed {
                        woken.push((task, f));
                    }
                    pt.watched.remove(&task);
                    changed.push(task);
                }
                (Some((now, _)), None) if now != seen => changed.push(task),
                _ => {}
            }
        }
        for &(task, fut) in &woken {
            if let Some(k) = pt.known.get_mut(&task) {
                k.woken_from = fut;
            }
            self.set_task_state(pt, task, sample, (TaskStateKind::Ready, None, None), fut);
        }
        let ip = interp(&mut self.spies[si].spy).unwrap();
        for (task, h) in changed.iter().zip(ip.read_tasks(&changed)) {
            match h {
                Some(h) => heads.push((h, None)),
                // Not a task any more (finished and freed): no longer followed.
                None => {
                    pt.tracked.remove(task);
                }
            }
        }
        tracing::trace!(pid, sample, tracked = tracked.len(), changed = changed.len(), woken = woken.len(), calls, "asyncio primitive awaits read");
    }

    /// Which task each thread of this sample ran (`running`: thread, task address or 0): the
    /// thread's open run goes on, or is closed (written to the run) and another opened.
    fn extend_runs(&mut self, pt: &mut ProcTasks, running: &[(ThreadId, usize)], sample: u32) {
        for &(th, addr) in running {
            let id = (addr != 0).then(|| pt.known.get(&addr).map(|k| k.id)).flatten();
            match (pt.open.get_mut(&th), id) {
                (Some(r), Some(id)) if r.task == id => r.last = sample,
                (open, id) => {
                    if open.is_some() {
                        let r = pt.open.remove(&th).unwrap();
                        self.builder.run_mut().task_runs.push(r);
                    }
                    if let Some(id) = id {
                        pt.open.insert(th, TaskRun { thread: th, task: id, first: sample, last: sample });
                    }
                }
            }
            pt.running.insert(th, addr);
        }
    }

    fn set_task_state(&mut self, pt: &mut ProcTasks, addr: usize, sample: u32, state: (TaskStateKind, Option<TaskId>, Option<u32>), fut_waiter: usize) {
        let Some(k) = pt.known.get_mut(&addr) else { return };
        k.fut_waiter = fut_waiter;
        if k.last == Some(state) {
            return;
        }
        k.last = Some(state);
        let (kind, awaits, chain) = state;
        self.builder.run_mut().task_states.push(TaskState { sample, task: k.id, state: kind, awaits, chain });
        if kind == TaskStateKind::Done {
            let t = &mut self.builder.run_mut().tasks[k.id as usize];
            if !t.done {
                t.done = true;
                self.tasks.dirty.insert(k.id);
            }
        }
    }

    /// Tasks gone from complete lists, and not running, finished (a finished task leaves its
    /// list).
    fn end_unlisted(&mut self, pt: &mut ProcTasks, l: &TaskLists, running_now: &HashSet<usize>, sample: u32) {
        let listed: HashSet<usize> = l.lists.iter().flat_map(|(_, ts)| ts.iter().map(|t| t.addr)).collect();
        let gone: Vec<usize> = pt.known.keys().copied().filter(|a| !listed.contains(a) && !running_now.contains(a)).collect();
        for addr in gone {
            pt.watched.remove(&addr);
            pt.tracked.remove(&addr);
            let k = pt.known.remove(&addr).unwrap();
            self.end_task(k, sample);
        }
    }

    /// A task that left its list (finished) or whose address a new task took.
    fn end_task(&mut self, k: Known, sample: u32) {
        if k.last.is_none_or(|l| l.0 != TaskStateKind::Done) {
            self.builder.run_mut().task_states.push(TaskState { sample, task: k.id, state: TaskStateKind::Done, awaits: None, chain: None });
        }
        let t = &mut self.builder.run_mut().tasks[k.id as usize];
        if !t.done {
            t.done = true;
            self.tasks.dirty.insert(k.id);
        }
    }

    fn new_task(&mut self, pid: u32, h: &TaskHead, name: String, coro: Option<(String, String, i32)>, thread: ThreadId, sample: u32) -> TaskId {
        let id = self.builder.run().tasks.len() as TaskId;
        // The coroutine's `def` as a raw frame: the run's function for it once frames are resolved.
        let frame = coro.as_ref().map(|(q, f, line)| {
            let file = self.intern_file(pid, f);
            self.intern_raw_frame(file, q, (*line).max(0) as u32)
        });
        self.tasks.frames.push(frame);
        self.builder.run_mut().tasks.push(Task {
            pid,
            address: h.addr as u64,
            name,
            coro: coro.map(|c| c.0).unwrap_or_default(),
            // Provisional (the raw frame's id, which the streamed tables number functions by);
            // resolved by `finish_tasks`.
            function: frame,
            thread,
            first_sample: sample,
            last_sample: sample,
            done: false,
        });
        id
    }

    /// At the end: the open runs are closed, each task's function and each chain's stack are
    /// mapped from raw ids to the run's (`frame_map`, `stack_map`), and the cost is logged.
    pub(super) fn finish_tasks(&mut self, frame_map: &[u32], stack_map: &[u32]) {
        let mut open: Vec<TaskRun> = self.tasks.procs.values_mut().flat_map(|p| p.open.drain().map(|(_, r)| r)).collect();
        let run = self.builder.run_mut();
        run.task_runs.append(&mut open);
        run.task_runs.sort_by_key(|r| (r.first, r.thread));
        for (t, raw) in run.tasks.iter_mut().zip(&self.tasks.frames) {
            t.function = raw.and_then(|f| frame_map.get(f as usize)).and_then(|&f| run.frames.get(f as usize)).map(|f| f.function);
        }
        for s in &mut run.task_states {
            s.chain = s.chain.and_then(|c| stack_map.get(c as usize).copied());
        }
        if !run.tasks.is_empty() {
            tracing::info!(tasks = run.tasks.len(), runs = run.task_runs.len(), states = run.task_states.len(), lists = self.tasks.lists_read, spent_ms = self.tasks.spent.as_millis() as u64, "asyncio tasks recorded");
        }
    }
}
