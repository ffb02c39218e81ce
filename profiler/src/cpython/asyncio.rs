//! asyncio tasks read from outside (CPython 3.14+), the way `python3.14 -m asyncio ps` does:
//! through the offsets `_asyncio` publishes about itself, `_Py_AsyncioModuleDebugOffsets` in the
//! ELF section `.AsyncioDebug` of the module (`lib-dynload/_asyncio….so`) or of the executable or
//! `libpython` that has it built in (Debian's 3.15). The table holds, for a native `Task`
//! (`TaskObj`), where its name, coroutine, `awaited_by` and list node are; for a thread state
//! (`_PyThreadStateImpl`), its running loop, its running task and the head of its list of tasks;
//! for the interpreter, the head of the list of tasks whose thread has exited.
//!
//! Two fields the table does not give are taken from `TaskObj`'s fixed order around the ones it
//! does (Modules/_asynciomodule.c, 3.14 and 3.15 alike): `task_fut_waiter` is the pointer right
//! before `task_coro`, and `task_state` (the future's `fut_state`: 0 pending, 1 cancelled,
//! 2 finished) the `int` right before `task_is_task`; a future's first done-callback
//! (`fut_callback0`) is the second pointer after the object's header, ten pointers before
//! `fut_state` (`FutureObj_HEAD`: loop, callback0, context0, callbacks, exception, exception_tb,
//! result, source_tb, cancel_msg, cancelled_exc, awaited_by, state). [`AsyncioOffsets::parse`]
//! checks that the published offsets have that shape.
//!
//! What is read, and when (see `docs/asyncio.md`):
//! - at every tick, with the thread states the stack walk reads anyway (the read is made longer
//!   to cover them): each thread's running loop, running task and the two ends of its list;
//! - a task's head (one read of `sizeof(TaskObj)` bytes) when it is first met or stops running;
//! - the lists, when [`Interpreter::read_task_lists`] is asked to: every task known from the last
//!   reading in one batched read ([`super::objects::Memory::bytes_many`]), followed through that
//!   copy, so that 10 000 unchanged tasks cost about ten system calls;
//! - a task's name (`str`, or the `int` of asyncio's `Task-<n>` default), its coroutine's code
//!   and await chain only when the task is new or its awaited future changed.

use super::{Interpreter, MAX_INTERPRETERS};
use py_spy::stack_trace::Frame;
use std::collections::{HashMap, HashSet};

/// At most this many tasks are followed in one list (a torn read must not loop forever).
const MAX_TASKS: usize = 1 << 20;
/// At most this many coroutines deep is an await chain followed.
const MAX_CHAIN: usize = 64;

/// `_Py_AsyncioModuleDebugOffsets`: 13 `uint64_t`.
const TABLE_WORDS: usize = 13;

/// `_PyFrameState`'s "suspended in an `await`" (`FRAME_SUSPENDED_YIELD_FROM`): -1 in 3.14; 2 in
/// 3.15, which renumbered the states from 0.
fn suspended_yield_from(minor: u64) -> i8 {
    if minor >= 15 {
        2
    } else {
        -1
    }
}

/// The offsets `_asyncio` publishes, and the two derived from them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncioOffsets {
    pub task_size: u64,
    pub task_name: u64,
    pub task_awaited_by: u64,
    pub task_is_task: u64,
    pub task_awaited_by_is_set: u64,
    pub task_coro: u64,
    pub task_node: u64,
    pub interp_tasks_head: u64,
    pub tstate_size: u64,
    pub tstate_running_loop: u64,
    pub tstate_running_task: u64,
    pub tstate_tasks_head: u64,
    /// The file the table was read from, as the process names it.
    pub file: String,
}

impl AsyncioOffsets {
    /// The table from the section's bytes; `None` when it does not have the shape of 3.14's and
    /// 3.15's `TaskObj` (an unknown layout is not guessed at).
    pub fn parse(bytes: &[u8], file: &str) -> Option<AsyncioOffsets> {
        if bytes.len() < TABLE_WORDS * 8 {
            return None;
        }
        let w = |i: usize| u64::from_ne_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
        let o = AsyncioOffsets {
            task_size: w(0),
            task_name: w(1),
            task_awaited_by: w(2),
            task_is_task: w(3),
            task_awaited_by_is_set: w(4),
            task_coro: w(5),
            task_node: w(6),
            interp_tasks_head: w(8),
            tstate_size: w(9),
            tstate_running_loop: w(10),
            tstate_running_task: w(11),
            tstate_tasks_head: w(12),
            file: file.to_string(),
        };
        let task_ok = o.task_size <= 4096
            && [o.task_name, o.task_awaited_by, o.task_coro].iter().all(|&f| f + 8 <= o.task_size)
            && o.task_node + 16 <= o.task_size
            && o.task_awaited_by_is_set == o.task_is_task + 1
            // fut_waiter right before coro, fut_state right before is_task.
            && o.task_coro >= o.task_is_task + 12
            && o.task_is_task >= 4 + 10 * 8 + 24;
        let tstate_ok = o.tstate_size <= 1 << 16 && [o.tstate_running_loop, o.tstate_running_task].iter().all(|&f| f + 8 <= o.tstate_size) && o.tstate_tasks_head + 16 <= o.tstate_size;
        let interp_ok = w(7) <= 1 << 24 && o.interp_tasks_head + 16 <= w(7);
        (task_ok && tstate_ok && interp_ok).then_some(o)
    }

    fn fut_waiter(&self) -> usize {
        self.task_coro as usize - 8
    }

    fn fut_state(&self) -> usize {
        self.task_is_task as usize - 4
    }

    /// `fut_callback0`: ten pointers before `fut_state`.
    fn fut_callback0(&self) -> usize {
        self.fut_state() - 10 * 8
    }
}

/// Looks for the `.AsyncioDebug` section in the files mapped into process `pid` whose name starts
/// with `_asyncio`, `python` or `libpython`, each once (`checked` holds the files already looked
/// into): the next call only reads the memory map, until `_asyncio` is loaded. Files are opened through `/proc/<pid>/root`, so a program in a
/// chroot or a container is read where it runs.
pub fn find_offsets(pid: u32, checked: &mut HashSet<String>) -> Option<AsyncioOffsets> {
    let maps = proc_maps::get_process_maps(pid as proc_maps::Pid).ok()?;
    let mut paths: Vec<String> = Vec::new();
    for m in &maps {
        let Some(path) = m.filename().and_then(|p| p.to_str()) else { continue };
        let name = path.rsplit('/').next().unwrap_or(path);
        let candidate = name.starts_with("_asyncio") || name.starts_with("python") || name.starts_with("libpython");
        if candidate && !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    }
    for path in paths {
        // Each file is looked into once (again only when it could not be read).
        if !checked.insert(path.clone()) {
            continue;
        }
        let Ok(bytes) = std::fs::read(format!("/proc/{pid}/root{path}")) else {
            checked.remove(&path);
            continue;
        };
        let Some(section) = section(&bytes, ".AsyncioDebug") else { continue };
        match AsyncioOffsets::parse(section, &path) {
            Some(o) => return Some(o),
            None => tracing::info!(pid, path, "an .AsyncioDebug section with an unknown layout; asyncio tasks are not read"),
        }
    }
    None
}

/// The contents of the ELF section `name` (the table is initialised data: the file holds it).
fn section<'a>(bytes: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let elf = goblin::elf::Elf::parse(bytes).ok()?;
    let sh = elf.section_headers.iter().find(|sh| elf.shdr_strtab.get_at(sh.sh_name) == Some(name))?;
    let (at, len) = (sh.sh_offset as usize, sh.sh_size as usize);
    bytes.get(at..at.checked_add(len)?)
}

/// What one thread state said about asyncio at the last walk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AsyncThread {
    pub native_id: u64,
    pub tstate: usize,
    pub running_loop: usize,
    pub running_task: usize,
    /// The list head's `next` (oldest task) and `prev` (newest): a list whose ends did not move
    /// is likely unchanged.
    pub head: (usize, usize),
}

/// The bytes read of a future: from `fut_callback0` to the end of `fut_state`.
const FUTURE_SPAN: usize = 10 * 8 + 4;

/// A future as read at one tick. Its address alone does not tell one future from the next: a
/// freed future's memory is soon taken by a new one (on a task taking turns at an
/// `asyncio.Condition`, 24 notifications found their waiters' futures at 19 addresses). The first
/// done-callback does: a task awaiting a future registers a new wake-up callback on it
/// (`task_wakeup`, a new object), made while the old one is still held by the call that runs
/// the task — so two successive awaits of a task never have the same one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FutureNow {
    /// `fut_state`: 0 pending, 1 cancelled, 2 finished.
    pub state: i32,
    /// `fut_callback0`, 0 when none.
    pub callback0: usize,
}

impl FutureNow {
    fn from_bytes(b: &[u8]) -> FutureNow {
        FutureNow { callback0: usize::from_ne_bytes(b[..8].try_into().unwrap()), state: i32::from_ne_bytes(b[FUTURE_SPAN - 4..FUTURE_SPAN].try_into().unwrap()) }
    }
}

/// One task's fields as read in one go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskHead {
    pub addr: usize,
    pub coro: usize,
    pub name: usize,
    pub fut_waiter: usize,
    /// `fut_state`: 0 pending, 1 cancelled, 2 finished.
    pub state: i32,
    pub awaited_by: usize,
    pub awaited_by_is_set: bool,
    next_node: usize,
}

/// The lists as read: per thread (its native id; `None` for the interpreter's list of tasks of
/// exited threads), the tasks in list order; and whether every list was followed to its end.
pub struct TaskLists {
    pub lists: Vec<(Option<u64>, Vec<TaskHead>)>,
    pub complete: bool,
    pub reads: usize,
}

/// What the reader keeps between ticks.
#[derive(Default)]
pub(super) struct AsyncioState {
    pub(super) offsets: Option<AsyncioOffsets>,
    pub(super) threads: Vec<AsyncThread>,
    /// Type names by type address (`str`, `int`, `coroutine`).
    types: HashMap<usize, String>,
}

impl Interpreter {
    /// Reads asyncio tasks from now on with `offsets` (found by [`find_offsets`]); the stack walk
    /// then also reads each thread's running task. Needs 3.14's generator offsets.
    pub fn set_asyncio(&mut self, offsets: AsyncioOffsets) -> bool {
        if self.o().gen_iframe == 0 || self.o().frame_size == 0 {
            return false;
        }
        self.asyncio.offsets = Some(offsets);
        true
    }

    pub fn asyncio_offsets(&self) -> Option<&AsyncioOffsets> {
        self.asyncio.offsets.as_ref()
    }

    /// The threads' asyncio fields as the last stack walk read them (empty before asyncio was
    /// found).
    pub fn asyncio_threads(&self) -> &[AsyncThread] {
        &self.asyncio.threads
    }

    /// How far into a thread state the walk must read for the asyncio fields (0 without them).
    pub(super) fn asyncio_span(&self) -> usize {
        self.asyncio.offsets.as_ref().map_or(0, |a| (a.tstate_running_task.max(a.tstate_running_loop) as usize + 8).max(a.tstate_tasks_head as usize + 16))
    }

    /// Keeps a thread state's asyncio fields from the walk's copy of it (`head` holds at least
    /// [`Interpreter::asyncio_span`] bytes).
    pub(super) fn note_asyncio_thread(&mut self, native_id: u64, tstate: usize, head: &[u8]) {
        let Some(a) = &self.asyncio.offsets else { return };
        let field = |off: u64| head.get(off as usize..off as usize + 8).map_or(0, |b| usize::from_ne_bytes(b.try_into().unwrap()));
        let t = AsyncThread {
            native_id,
            tstate,
            running_loop: field(a.tstate_running_loop),
            running_task: field(a.tstate_running_task),
            head: (field(a.tstate_tasks_head), field(a.tstate_tasks_head + 8)),
        };
        self.asyncio.threads.push(t);
    }

    fn parse_task(a: &AsyncioOffsets, addr: usize, b: &[u8]) -> Option<TaskHead> {
        let ptr = |off: usize| usize::from_ne_bytes(b[off..off + 8].try_into().unwrap());
        if b.len() < a.task_size as usize || b[a.task_is_task as usize] != 1 {
            return None;
        }
        let state = i32::from_ne_bytes(b[a.fut_state()..a.fut_state() + 4].try_into().unwrap());
        Some(TaskHead {
            addr,
            coro: ptr(a.task_coro as usize),
            name: ptr(a.task_name as usize),
            fut_waiter: ptr(a.fut_waiter()),
            state,
            awaited_by: ptr(a.task_awaited_by as usize),
            awaited_by_is_set: b[a.task_awaited_by_is_set as usize] != 0,
            next_node: ptr(a.task_node as usize),
        })
    }

    /// The task object at `addr` (one read), `None` when it is not one (any more).
    pub fn read_task(&self, addr: usize) -> Option<TaskHead> {
        let a = self.asyncio.offsets.as_ref()?;
        let b = self.mem.bytes(addr, a.task_size as usize).ok()?;
        Self::parse_task(a, addr, &b)
    }

    /// A future's `fut_state` (0 pending, 1 cancelled, 2 finished) and its first done-callback
    /// (`fut_callback0`, 0 when none), one read: see [`FutureNow`].
    pub fn future_now(&self, fut: usize) -> Option<FutureNow> {
        let a = self.asyncio.offsets.as_ref()?;
        let b = self.mem.bytes(fut + a.fut_callback0(), FUTURE_SPAN).ok()?;
        Some(FutureNow::from_bytes(&b))
    }

    /// For each task asked about (its address, and the future it awaited when last read, for
    /// one awaiting a primitive): the task's `fut_waiter` now and, where asked, that future's
    /// state and first callback ([`FutureNow`]) — one or two small regions each, all in one
    /// batch (`process_vm_readv` takes up to 1 024 regions). `None` where unreadable. A future's
    /// fields are only meaningful while the task still awaits it (it holds a reference then, so
    /// the future is alive). Returns the answers and the system calls made.
    pub fn poll_awaits(&self, asks: &[(usize, Option<usize>)]) -> (Vec<Option<(usize, Option<FutureNow>)>>, usize) {
        let Some(a) = self.asyncio.offsets.as_ref() else { return (vec![None; asks.len()], 0) };
        let mut regions: Vec<(usize, usize)> = Vec::with_capacity(asks.len() * 2);
        for &(task, fut) in asks {
            regions.push((task + a.fut_waiter(), 8));
            if let Some(f) = fut {
                regions.push((f + a.fut_callback0(), FUTURE_SPAN));
            }
        }
        let (got, calls) = self.mem.bytes_many(&regions);
        let mut got = got.into_iter();
        let mut out = Vec::with_capacity(asks.len());
        for &(_, fut) in asks {
            let w = got.next().flatten().map(|b| usize::from_ne_bytes(b[..8].try_into().unwrap()));
            let st = fut.map(|_| got.next().flatten().map(|b| FutureNow::from_bytes(&b)));
            out.push(match (w, st) {
                (Some(w), None) => Some((w, None)),
                (Some(w), Some(Some(s))) => Some((w, Some(s))),
                _ => None,
            });
        }
        (out, calls)
    }

    /// The task objects at `addrs`, read in one batch; `None` where one is not a task (any more).
    pub fn read_tasks(&self, addrs: &[usize]) -> Vec<Option<TaskHead>> {
        let Some(a) = self.asyncio.offsets.as_ref() else { return vec![None; addrs.len()] };
        let regions: Vec<(usize, usize)> = addrs.iter().map(|&t| (t, a.task_size as usize)).collect();
        let (got, _) = self.mem.bytes_many(&regions);
        addrs.iter().zip(got).map(|(&addr, b)| b.and_then(|b| Self::parse_task(a, addr, &b))).collect()
    }

    /// Every task in the threads' lists and the interpreter's, `prev` being the tasks the last
    /// reading found (read in one batch; a task not among them is read on its own).
    pub fn read_task_lists(&mut self, prev: &[usize]) -> Option<TaskLists> {
        let a = self.asyncio.offsets.clone()?;
        let size = a.task_size as usize;
        let (mut copies, mut reads) = self.read_tasks_near(prev, size);
        let mut heads: Vec<(Option<u64>, usize, usize)> =
            self.asyncio.threads.iter().map(|t| (Some(t.native_id), t.tstate + a.tstate_tasks_head as usize, t.head.0)).collect();
        // The interpreters' lists of tasks whose thread exited (usually empty: one read each).
        if let Ok(interps) = self.interpreters() {
            for interp in interps.into_iter().take(MAX_INTERPRETERS) {
                let head = interp + a.interp_tasks_head as usize;
                reads += 1;
                if let Ok(next) = self.mem.ptr(head) {
                    heads.push((None, head, next));
                }
            }
        }
        let mut out = TaskLists { lists: Vec::new(), complete: true, reads: 0 };
        let mut seen = HashSet::new();
        for (thread, head, first) in heads {
            let mut tasks = Vec::new();
            let mut node = first;
            while node != head {
                if node == 0 || tasks.len() >= MAX_TASKS || !seen.insert(node) || node < a.task_node as usize {
                    out.complete = false;
                    break;
                }
                let addr = node - a.task_node as usize;
                let bytes = match copies.remove(&addr) {
                    Some(b) => b,
                    None => {
                        reads += 1;
                        match self.mem.bytes(addr, size) {
                            Ok(b) => b,
                            Err(_) => {
                                out.complete = false;
                                break;
                            }
                        }
                    }
                };
                let Some(t) = Self::parse_task(&a, addr, &bytes) else {
                    out.complete = false;
                    break;
                };
                node = t.next_node;
                tasks.push(t);
            }
            out.lists.push((thread, tasks));
        }
        out.reads = reads;
        Some(out)
    }

    /// The first `size` bytes of each task at `addrs`, read in few calls: the allocator puts
    /// tasks side by side (small objects share pools), so the addresses sorted are merged into
    /// runs of memory up to [`GAP`] apart, each read as one region (a region read costs about as
    /// much per call as per byte: 10 000 scattered 168-byte regions took 8–25 ms, the same
    /// tasks read as a few runs of memory a fraction of that). A run that cannot be read whole
    /// (a page unmapped in between) is read task by task.
    fn read_tasks_near(&self, addrs: &[usize], size: usize) -> (HashMap<usize, Vec<u8>>, usize) {
        const GAP: usize = 4096;
        const MAX_RUN: usize = 1 << 20;
        let mut sorted: Vec<usize> = addrs.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut runs: Vec<(usize, usize, Vec<usize>)> = Vec::new();
        for a in sorted {
            match runs.last_mut() {
                Some((start, end, members)) if a <= *end + GAP && a + size - *start <= MAX_RUN => {
                    *end = (*end).max(a + size);
                    members.push(a);
                }
                _ => runs.push((a, a + size, vec![a])),
            }
        }
        let regions: Vec<(usize, usize)> = runs.iter().map(|(s, e, _)| (*s, e - s)).collect();
        let (got, mut reads) = if regions.is_empty() { (Vec::new(), 0) } else { self.mem.bytes_many(&regions) };
        let mut out = HashMap::with_capacity(addrs.len());
        let mut retry: Vec<(usize, usize)> = Vec::new();
        for ((start, _, members), bytes) in runs.into_iter().zip(got) {
            match bytes {
                Some(b) => {
                    for a in members {
                        out.insert(a, b[a - start..a - start + size].to_vec());
                    }
                }
                None => retry.extend(members.into_iter().map(|a| (a, size))),
            }
        }
        if !retry.is_empty() {
            let (got, calls) = self.mem.bytes_many(&retry);
            reads += calls;
            out.extend(retry.iter().zip(got).filter_map(|(&(a, _), b)| Some((a, b?))));
        }
        (out, reads)
    }

    /// The name of the object's type, cached by type.
    fn type_of(&mut self, obj: usize) -> Option<(usize, String)> {
        let ty = self.mem.ptr(obj + self.o().object_type as usize).ok()?;
        if let Some(n) = self.asyncio.types.get(&ty) {
            return Some((ty, n.clone()));
        }
        let name = self.mem.type_name(obj).ok()?;
        self.asyncio.types.insert(ty, name.clone());
        Some((ty, name))
    }

    /// A task's name: its `str`, or asyncio's default `Task-<n>` from the `int` it keeps until
    /// the name is asked for.
    pub fn task_name(&mut self, name: usize) -> Option<String> {
        if name == 0 {
            return None;
        }
        match self.type_of(name)?.1.as_str() {
            "str" => self.mem.string(name).ok(),
            "int" => self.mem.long(name).ok().map(|n| format!("Task-{n}")),
            _ => None,
        }
    }

    /// The code of a coroutine's frame: (qualname, filename, first line).
    pub fn coro_code(&mut self, coro: usize) -> Option<(String, String, i32)> {
        let o = self.o().clone();
        let exe = self.mem.ptr(coro + (o.gen_iframe + o.frame_executable) as usize).ok()? & !3;
        let (code, _) = self.code(exe, true)?;
        Some((code.qualname, code.filename, code.first_line))
    }

    /// A suspended coroutine's await chain as frames, innermost first: the coroutine's own frame,
    /// then the coroutine it awaits (the last item on its frame's stack while it is suspended in
    /// an `await`), and so on down to the one that awaits a future. Each level costs a read of
    /// the coroutine and one of its stack's top.
    pub fn await_chain(&mut self, coro: usize) -> Vec<Frame> {
        let o = self.o().clone();
        let Some((coro_type, _)) = self.type_of(coro) else { return Vec::new() };
        let len = (o.gen_iframe + o.frame_size) as usize;
        let awaiting = suspended_yield_from(o.header.minor());
        let mut out = Vec::new();
        let mut at = coro;
        let mut seen = HashSet::new();
        while at != 0 && out.len() < MAX_CHAIN && seen.insert(at) {
            let Ok(b) = self.mem.bytes(at, len) else { break };
            let ptr = |off: u64| usize::from_ne_bytes(b[off as usize..off as usize + 8].try_into().unwrap());
            let state = b[o.gen_frame_state as usize] as i8;
            let frame = o.gen_iframe;
            let exe = ptr(frame + o.frame_executable) & !3;
            let instr = ptr(frame + o.frame_instr_ptr);
            let Some((code, _)) = self.code(exe, true) else { break };
            let lasti = instr.checked_sub(exe + o.code_adaptive as usize);
            let line = lasti.and_then(|l| super::linetable::line_at(&code.linetable, code.first_line, l / 2)).unwrap_or(code.first_line);
            out.push(Frame { name: code.qualname, filename: code.filename, module: None, short_filename: None, line, locals: None, is_entry: false, is_shim_entry: false });
            if state != awaiting || o.frame_stackpointer == 0 {
                break;
            }
            // The awaited object is the top of the frame's stack (3.14), or the item under it
            // (3.15 keeps the value sent in on top): the one of the two that is a coroutine of
            // the same type is followed (a future ends the chain).
            let sp = ptr(frame + o.frame_stackpointer);
            let Some(top) = sp.checked_sub(16).and_then(|p| self.mem.bytes(p, 16).ok()) else { break };
            let under = if o.header.minor() >= 15 { usize::from_ne_bytes(top[..8].try_into().unwrap()) & !3 } else { 0 };
            let items = [usize::from_ne_bytes(top[8..16].try_into().unwrap()) & !3, under];
            let Some(next) = items.into_iter().find(|&i| i != 0 && self.mem.ptr(i + o.object_type as usize).ok() == Some(coro_type)) else { break };
            at = next;
        }
        out.reverse();
        out
    }

    /// The tasks in `awaited_by` of a task: the one task, or a set's members (`set_object`'s
    /// table of (key, hash) entries).
    pub fn awaited_by(&mut self, t: &TaskHead) -> Vec<usize> {
        if t.awaited_by == 0 {
            return Vec::new();
        }
        if !t.awaited_by_is_set {
            return vec![t.awaited_by];
        }
        // PySetObject: fill, used, mask, table (after the object header), as 3.14's table gives.
        let head = self.o().object_size as usize;
        let Ok(b) = self.mem.bytes(t.awaited_by + head, 32) else { return Vec::new() };
        let w = |i: usize| usize::from_ne_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
        let (mask, table) = (w(2), w(3));
        if mask > 1 << 16 || table == 0 {
            return Vec::new();
        }
        let Ok(entries) = self.mem.bytes(table, (mask + 1) * 16) else { return Vec::new() };
        entries.chunks_exact(16).map(|e| usize::from_ne_bytes(e[..8].try_into().unwrap())).filter(|&k| k != 0).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `.AsyncioDebug` section of Debian's 3.14.10 `_asyncio` (objdump -s -j .AsyncioDebug).
    const DEBIAN_3_14: [u64; 13] = [0xa8, 0x88, 0x60, 0x6c, 0x6d, 0x80, 0x98, 0x37248, 0x2a80, 0x3a8, 0x360, 0x368, 0x370];

    fn bytes(words: &[u64]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_ne_bytes()).collect()
    }

    #[test]
    fn the_3_14_table_parses_and_gives_the_derived_fields() {
        let o = AsyncioOffsets::parse(&bytes(&DEBIAN_3_14), "_asyncio.so").unwrap();
        assert_eq!((o.task_coro, o.task_name, o.task_node, o.tstate_running_task), (128, 136, 152, 0x368));
        // TaskObj: ... fut_state (int) @104, is_task @108 ...; fut_waiter @120, coro @128.
        assert_eq!((o.fut_state(), o.fut_waiter()), (104, 120));
        // FutureObj_HEAD: ob_refcnt, ob_type, fut_loop, fut_callback0 @24.
        assert_eq!(o.fut_callback0(), 24);
    }

    #[test]
    fn a_table_of_another_shape_is_refused() {
        let mut w = DEBIAN_3_14;
        w[4] = 0x70; // awaited_by_is_set no longer right after is_task
        assert!(AsyncioOffsets::parse(&bytes(&w), "x").is_none());
        let mut w = DEBIAN_3_14;
        w[12] = 0x3a0; // the thread's list head outside the thread state
        assert!(AsyncioOffsets::parse(&bytes(&w), "x").is_none());
        assert!(AsyncioOffsets::parse(&bytes(&DEBIAN_3_14[..12]), "x").is_none());
    }
}
