//! What a blocked thread waits on, for "who waits for whom" (issue #16).
//!
//! For each thread-sample blocked in a system call (idle, waiting for the GIL, or in blocking
//! I/O) the sampler asks [`WaitReader::observe`], which builds a [`WaitTarget`] from:
//!
//! - the system call and its first argument (`/proc/<pid>/task/<tid>/syscall`, already read for
//!   the thread's state): the futex address for `futex`; for calls on a descriptor (`read`,
//!   `recvfrom`, `accept`, …) the descriptor and what it is open on
//!   (`readlink /proc/<pid>/fd/<n>`: `pipe:[456]`, `socket:[123]`, a path; left out when the
//!   descriptor was closed meanwhile, never guessed);
//! - the Python object waited on, when the top Python frames are in `threading`, `queue`,
//!   `concurrent.futures` or `multiprocessing.synchronize` (`Condition.wait`, `Event.wait`,
//!   `Semaphore.acquire`, `Queue.get/put`, `Thread.join`, `Future.result`, a `multiprocessing`
//!   lock's `SemLock.__enter__`, …): the `self` of the outermost of those frames (the call the
//!   program made), read with the frame's arguments; or, when the thread sleeps in a `futex` right
//!   in the program's code (a C-level `with lock:` / `lock.acquire()` / `work_queue.get()`), the
//!   object that line names: a local variable, or attributes from one (`with self.rlock:`: `self`,
//!   then its attribute `rlock`, read in the target's memory where the reader can). The object's
//!   name is the expression the calling line uses for it (`q.get()` → `q`, `with self.not_empty:`
//!   → `self.not_empty`), read from the caller's source file.
//! - samples waiting for the GIL get one target whose object is the GIL (type `GIL`).
//!
//! Reading arguments costs a second stack walk of the process, so it is done only when a thread's
//! wait changed: each thread's last (system call, argument, stack) and its answer are cached, and a
//! thread that keeps waiting the same way costs a comparison per sample.

use crate::builder::RunBuilder;
use crate::procfs::{syscall_name, Syscall};
use crate::run::{FrameId, StackId, ThreadId, ThreadState, WaitId, WaitObject, WaitTarget};
use rustc_hash::FxHashMap;
use std::collections::HashMap;

/// Classes of the synchronisation modules whose methods block on behalf of an object.
const SYNC_CLASSES: &[&str] = &[
    "Condition",
    "Event",
    "Semaphore",
    "BoundedSemaphore",
    "Barrier",
    "_RLock",
    "Queue",
    "LifoQueue",
    "PriorityQueue",
    "_PySimpleQueue",
    "Future",
];

/// Classes of `multiprocessing.synchronize` whose methods block on behalf of an object: a
/// `with lock:` on a `multiprocessing.Lock` runs `SemLock.__enter__` in Python before it sleeps
/// in C on the semaphore (a futex in shared memory).
const MP_CLASSES: &[&str] = &["SemLock", "Semaphore", "BoundedSemaphore", "Lock", "RLock", "Condition", "Event", "Barrier"];

/// The classes a synchronisation module defines, by the name their type reports (`tp_name`: the
/// bare class name for a class written in Python): an object of one of them that runs a method
/// inherited from another (`BoundedSemaphore` in `Semaphore.acquire`, a `multiprocessing.Lock` in
/// `SemLock.__enter__`) is typed `module.Class` too; any other class is the program's own subclass
/// and keeps its name.
fn module_classes(module: &str) -> &'static [&'static str] {
    match module {
        "threading" => &["Condition", "Event", "Semaphore", "BoundedSemaphore", "Barrier", "_RLock", "Thread", "Timer", "_MainThread", "_DummyThread"],
        "queue" => &["Queue", "LifoQueue", "PriorityQueue", "_PySimpleQueue"],
        "concurrent.futures" => &["Future"],
        "multiprocessing.synchronize" => MP_CLASSES,
        _ => &[],
    }
}

/// Calls on a file descriptor given as the first argument.
const FD_CALLS: &[&str] = &["read", "write", "pread64", "accept", "accept4", "connect", "recvfrom", "recvmsg", "sendto", "sendmsg", "epoll_wait", "epoll_pwait", "epoll_pwait2"];

/// The module a synchronisation frame's file belongs to, if it is one.
fn sync_module(file: &str) -> Option<&'static str> {
    if file.ends_with("/threading.py") || file == "threading.py" {
        Some("threading")
    } else if file.ends_with("/queue.py") || file == "queue.py" {
        Some("queue")
    } else if file.ends_with("concurrent/futures/_base.py") {
        Some("concurrent.futures")
    } else if file.ends_with("multiprocessing/synchronize.py") {
        Some("multiprocessing.synchronize")
    } else if file.contains("/asyncio/") {
        Some("asyncio")
    } else {
        None
    }
}

/// One frame as the reader needs it.
#[derive(Clone, Debug)]
pub struct FrameRef<'a> {
    pub name: &'a str,
    pub file: &'a str,
    pub line: u32,
}

/// Whether a frame blocks on behalf of a synchronisation object: `(module, class, method)`.
fn sync_frame<'a>(f: &FrameRef<'a>) -> Option<(&'static str, &'a str, &'a str)> {
    let module = sync_module(f.file)?;
    let (class, method) = f.name.rsplit_once('.')?;
    let class = class.rsplit('.').next().unwrap_or(class);
    let ok = if module == "multiprocessing.synchronize" {
        MP_CLASSES.contains(&class)
    } else {
        SYNC_CLASSES.contains(&class) || (class == "Thread" && (method == "join" || method == "_wait_for_tstate_lock"))
    };
    ok.then_some((module, class, method))
}

/// Where the object of a wait is found in the stack.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Site {
    /// Frame `api` (innermost first) is the outermost synchronisation method on top of the stack:
    /// its `self` is the object, `module.class` its type; its caller's line names it.
    Api { api: usize, module: String, class: String, method: String },
    /// The innermost frame is the program's own code sleeping in a C-level lock or queue; the
    /// line names the object; `local` when that name is a plain variable that can be looked up
    /// (a dotted name, `self.rlock`, is followed from its first part through attributes).
    /// `generic` when the line's call (`get`, `put`) is also a method of objects that never
    /// block (a dict, `os.environ`): the line names the object waited on only if the object read
    /// from it is a C-level waitable ([`C_WAITABLES`]); until then, and when it cannot be read,
    /// the wait has no object.
    CLevel { name: String, local: bool, generic: bool },
}

/// The C types a thread sleeps in a futex of its own in, right from the program's code, and the
/// public name each is typed by (the type's `tp_name` is `_queue.SimpleQueue`; the program
/// knows it as `queue.SimpleQueue`).
const C_WAITABLES: &[(&str, &str)] = &[("_thread.lock", "_thread.lock"), ("_thread.RLock", "_thread.RLock"), ("_queue.SimpleQueue", "queue.SimpleQueue")];

/// The type a C-level object read at a wait site is shown with: a [`C_WAITABLES`] type by its
/// public name, anything else as it reports itself.
fn c_level_type(rt: &str) -> &str {
    C_WAITABLES.iter().find(|(c, _)| *c == rt).map_or(rt, |(_, public)| public)
}

impl Site {
    /// Whether the futex slept on is the object's own, so that another futex at the same site is
    /// another object: a lock (C-level, a `multiprocessing` semaphore, a thread's lock in
    /// `Thread.join`). A condition (and an event, a semaphore, a queue or a future, built on
    /// one) sleeps on a fresh waiter lock at every wait: there, the futex says nothing.
    fn futex_names_object(&self) -> bool {
        match self {
            Site::CLevel { .. } => true,
            Site::Api { module, class, .. } => module == "multiprocessing.synchronize" || (module == "threading" && matches!(class.as_str(), "Thread" | "_RLock")),
        }
    }
}

/// Finds the site of a futex or GIL-free wait from the frames (innermost first).
fn find_site(frames: &[FrameRef], line_of: &mut impl FnMut(&str, u32) -> Option<String>) -> Option<Site> {
    let mut api = None;
    for (i, f) in frames.iter().enumerate() {
        match sync_frame(f) {
            Some((m, c, meth)) => api = Some((i, m, c, meth)),
            None => break,
        }
    }
    if let Some((i, m, c, meth)) = api {
        return Some(Site::Api { api: i, module: m.into(), class: c.into(), method: meth.into() });
    }
    // The innermost frame's own line, when it is code that blocks in C (`with lock:`).
    let f = frames.first()?;
    if sync_module(f.file).is_some() {
        return None;
    }
    let text = line_of(f.file, f.line)?;
    let (name, generic) = match name_in_line(&text, &["acquire", "wait", "join", "result", "__enter__"]) {
        Some(name) => (name, false),
        None => (name_in_line(&text, &["get", "put"])?, true),
    };
    let local = name.chars().all(|c| c.is_alphanumeric() || c == '_');
    Some(Site::CLevel { name, local, generic })
}

/// The expression a source line uses for the object it waits on: the item of a `with` statement,
/// or the receiver of a call to one of `methods` (`q.get()` → `q`, `self.cond.wait()` →
/// `self.cond`). `None` when the line shows neither.
pub fn name_in_line(line: &str, methods: &[&str]) -> Option<String> {
    let code = line.split('#').next().unwrap_or("").trim();
    let with_item = code.strip_prefix("async with ").or_else(|| code.strip_prefix("with "));
    if let Some(rest) = with_item {
        let item = rest.split([':', ',']).next().unwrap_or("").split(" as ").next().unwrap_or("").trim();
        // `with locks[key]:` too: a lock kept in a dict or list (the `:` of a slice cannot be
        // told from the statement's, so slices are not taken).
        let subscript = item.strip_suffix(']').and_then(|i| i.split_once('[')).is_some_and(|(obj, index)| is_dotted(obj) && !index.is_empty() && !index.contains(['[', ']']));
        return (is_dotted(item) || subscript).then(|| item.to_string());
    }
    for m in methods {
        let pat = format!(".{m}(");
        if let Some(pos) = code.find(&pat) {
            let before = &code[..pos];
            let start = before
                .char_indices()
                .rev()
                .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '.'))
                .map_or(0, |(i, c)| i + c.len_utf8());
            let recv = &before[start..];
            if is_dotted(recv) {
                return Some(recv.to_string());
            }
        }
    }
    None
}

fn is_dotted(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|p| p.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// `<Condition at 0x7f…>` → `Condition`; `<_thread.lock at 0x…>` → `_thread.lock`.
fn type_from_repr(repr: &str) -> Option<&str> {
    let inner = repr.strip_prefix('<')?;
    let (name, _) = inner.split_once(" at 0x")?;
    let name = name.strip_suffix(" object").unwrap_or(name);
    (!name.is_empty()).then_some(name)
}

/// The wait of one thread as last observed.
struct Cached {
    key: (i64, u64, Option<StackId>),
    wait: Option<WaitId>,
    /// Tries left to read the object (a stack that changed between the two walks retries).
    tries: u8,
    /// The object last read for this thread, the raw stack it was read at and when (ns of the
    /// run): reused while the thread waits at the same stack (`Condition.wait` makes a new futex
    /// for every wait, so the call's argument alone changes all the time), read again after
    /// [`REREAD_NS`].
    object: Option<(Option<StackId>, WaitObject, u64)>,
    /// The index of the first sample of this wait (the thread has waited with this key since).
    since: u32,
}

/// An object reused for a thread at an unchanged stack is read again after this long.
const REREAD_NS: u64 = 200_000_000;
/// The most threads whose wait objects one walk with arguments reads (about 80 µs each: 48 made
/// a walk longer than a 3 ms tick). Threads whose samples stand meanwhile are queued again
/// ([`WaitReader::requeue`]) until theirs is read.
const OBJECTS_PER_WALK: usize = 16;
/// At most one walk with arguments per process this often.
const WALK_EVERY_NS: u64 = 10_000_000;

/// A wait whose object is to be read from the frames' arguments.
#[derive(Clone)]
pub struct Pending {
    pub pid: u32,
    pub thread: ThreadId,
    pub python_id: u64,
    base: WaitTarget,
    site: Site,
    /// The frames (name, line) as observed, innermost first, to check the second walk.
    frames: Vec<(String, u32)>,
    /// The raw frame id of each frame, innermost first.
    frame_ids: Vec<FrameId>,
    caller: Option<(String, u32)>,
}

/// Reads an instance attribute of the object at an address in the target: its value's address
/// and type name (`(self, "rlock")` → the lock, `_thread.RLock`), `None` when it cannot.
pub type AttributeReader<'a> = dyn FnMut(usize, &str) -> Option<(usize, String)> + 'a;

/// Which thread holds an object in the target, as a Python thread id: `(address, Owner)`;
/// `None` when nobody or unreadable.
pub type OwnerReader<'a> = dyn FnMut(usize, Owner) -> Option<u64> + 'a;

/// The objects whose holder can be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A C `_thread.RLock`: its owner.
    RLock,
    /// A `threading.Thread` being joined: the thread itself (its `_ident`), which holds the
    /// lock a join waits on until it ends.
    Thread,
}

/// Reads and caches wait targets for the sampler.
#[derive(Default)]
pub struct WaitReader {
    threads: FxHashMap<ThreadId, Cached>,
    lines: HashMap<String, Option<Vec<String>>>,
    pending: Vec<Pending>,
    /// The read last queued for each thread, queued again by [`WaitReader::requeue`] while the
    /// thread sleeps on and its sample stands unread.
    queued: FxHashMap<ThreadId, Pending>,
    /// When each process was last walked with arguments (ns of the run).
    last_walk: HashMap<u32, u64>,
    /// The objects C-level wait sites were read to sleep on, by (process, futex): the name the
    /// site gave, the object and when it was read (ns of the run). A C lock or queue sleeps on
    /// its own futex, so another wait on that futex is a wait on the same object — one whose
    /// object could not be read (the thread woke before the walk) or whose stack was read just
    /// after the kernel state and is already elsewhere. See [`WaitReader::known_object`].
    futex_objects: HashMap<(u32, u64), (String, WaitObject, u64)>,
    /// Every reading of such an object, by (process, futex): when (ns of the run) and the object,
    /// in time order, for [`WaitReader::attach_known_objects`].
    readings: HashMap<(u32, u64), Vec<(u64, WaitObject)>>,
    /// Thread-samples that needed a fresh reading, and how many of those needed the arguments.
    pub misses: u64,
    pub locals_reads: u64,
}

/// What the sampler knows about one thread-sample.
pub struct Observation<'a> {
    pub pid: u32,
    pub thread: ThreadId,
    pub python_id: u64,
    pub state: ThreadState,
    /// The blocked call's name as the state rules gave it (`futex`, `read`, `GIL`, …).
    pub blocked: Option<&'a str>,
    pub syscall: Option<Syscall>,
    /// The sample's (raw) stack, and the raw frame id of each frame, innermost first.
    pub stack: Option<StackId>,
    pub frames: &'a [FrameRef<'a>],
    pub frame_ids: &'a dyn Fn() -> Vec<FrameId>,
    /// The sample's time (ns of the run).
    pub now_ns: u64,
    /// The kernel accounted CPU time to the thread since its last sample: it ran in between, so
    /// a wait seen now at the same stack and futex as before is another wait — the thread was
    /// woken and waits again (on 3.13+, `for t in threads: t.join()` parks each join on the
    /// joining thread's own futex at one line) — and its object is read again.
    pub ran: bool,
}

impl WaitReader {
    fn line(&mut self, file: &str, line: u32) -> Option<String> {
        let lines = self
            .lines
            .entry(file.to_string())
            .or_insert_with(|| std::fs::read_to_string(file).ok().map(|t| t.lines().map(str::to_string).collect()));
        lines.as_ref()?.get((line as usize).checked_sub(1)?).cloned()
    }

    /// The wait target of a thread-sample, `None` when it is not blocked in a call. When the
    /// object must be read from the frames' arguments, the target without it is returned and the
    /// thread is queued: call [`WaitReader::resolve`] with a stack walk that has arguments.
    pub fn observe(&mut self, o: &Observation, b: &mut RunBuilder) -> Option<WaitId> {
        let (nr, arg0) = match o.syscall {
            Some(Syscall::Blocked { nr, arg0 }) => (nr, arg0),
            _ if o.state == ThreadState::Gil => (-1, 0),
            _ => {
                self.threads.remove(&o.thread);
                return None;
            }
        };
        let waiting = matches!(o.state, ThreadState::Idle | ThreadState::Gil) || o.blocked.is_some_and(|c| FD_CALLS.contains(&c));
        if !waiting {
            self.threads.remove(&o.thread);
            return None;
        }
        let key = (if o.state == ThreadState::Gil { -1 } else { nr }, arg0, o.stack);
        if o.ran {
            // Woken and waiting again: nothing of the last wait's reading stands for this one.
            self.threads.remove(&o.thread);
        } else if let Some(c) = self.threads.get(&key_thread(o)) {
            if c.key == key && c.tries == 0 {
                return c.wait;
            }
        }
        self.misses += 1;
        // The sample being observed is the next one the builder gets.
        let sample = b.run().samples.len() as u32;
        let since = self.threads.get(&o.thread).filter(|c| c.key == key).map_or(sample, |c| c.since);
        let call = if nr >= 0 { syscall_name(nr) } else { "GIL" };
        let mut t = WaitTarget::default();
        if o.state == ThreadState::Gil {
            t.syscall = b.string("GIL");
            t.futex = (call == "futex").then_some(arg0);
            t.object = Some(WaitObject { addr: 0, type_name: b.string("GIL"), name: None, frame: None, owner: None });
            let id = b.wait(t);
            self.threads.insert(o.thread, Cached { key, wait: Some(id), tries: 0, object: None, since });
            return Some(id);
        }
        t.syscall = b.string(call);
        if call == "futex" {
            t.futex = Some(arg0);
        } else if FD_CALLS.contains(&call) {
            let fd = arg0 as i32;
            t.fd = Some(fd);
            t.fd_target = std::fs::read_link(format!("/proc/{}/fd/{fd}", o.pid)).ok().map(|p| b.string(&p.to_string_lossy()));
        }
        let site = if call == "futex" {
            let mut line_of = |f: &str, l: u32| self.line(f, l);
            find_site(o.frames, &mut line_of)
        } else {
            None
        };
        let base = b.wait(t.clone());
        let Some(site) = site else {
            // No site on the stack (read just after the thread woke, its code is elsewhere): the
            // futex may still be a C object's seen at its site a moment ago.
            let known = if call == "futex" { self.known_object(o.pid, arg0, None, o.now_ns) } else { None };
            let (wait, object) = match known {
                Some((obj, _, read_at)) => {
                    let mut with = t.clone();
                    with.object = Some(obj.clone());
                    (b.wait(with), Some((o.stack, obj, read_at)))
                }
                None => (base, None),
            };
            self.threads.insert(o.thread, Cached { key, wait: Some(wait), tries: 0, object, since });
            return Some(wait);
        };
        let frame_ids = (o.frame_ids)();
        let caller_index = match &site {
            Site::Api { api, .. } => api + 1,
            Site::CLevel { .. } => 0,
        };
        let caller = o.frames.get(caller_index).map(|f| (f.file.to_string(), f.line));
        let mut base = base;
        if let Site::CLevel { name, local: false, generic: false } = &site {
            // An attribute (`self.lock`): the name is known. Until the object is read through
            // it (`self`, then its attribute `lock`, in the target's memory) its type is
            // `unknown` and its address 0; a subscript (`locks[k]`) is not followed.
            let name_id = b.string(name);
            t.object = Some(WaitObject { addr: 0, type_name: b.string("unknown"), name: Some(name_id), frame: frame_ids.first().copied(), owner: None });
            let id = b.wait(t.clone());
            if !is_dotted(name) {
                self.threads.insert(o.thread, Cached { key, wait: Some(id), tries: 0, object: None, since });
                return Some(id);
            }
            base = id;
        }
        if let Some((obj, same_site, read_at)) = self.known_object(o.pid, arg0, Some(&site), o.now_ns) {
            let mut with = t.clone();
            with.object = Some(obj.clone());
            let id = b.wait(with);
            // Read again now and then at the site that named it, so that a lock freed and
            // another made at its address is not taken for it for long.
            let due = same_site && o.now_ns.saturating_sub(read_at) >= REREAD_NS;
            self.threads.insert(o.thread, Cached { key, wait: Some(id), tries: if due { 3 } else { 0 }, object: Some((o.stack, obj, read_at)), since });
            if due {
                self.queue(Pending { pid: o.pid, thread: o.thread, python_id: o.python_id, base: t, site, frames: o.frames.iter().map(|f| (f.name.to_string(), f.line)).collect(), frame_ids, caller });
            }
            return Some(id);
        }
        let prev = self.threads.remove(&o.thread);
        // The same thread at the same stack: the object read there before, re-read now and then
        // — unless the futex, which names the object at this site, changed: `for t in threads:
        // t.join()` waits at one line on another thread's lock each time.
        let same_object = |c: &Cached| c.key == key || !site.futex_names_object();
        if let Some((_, obj, read_at)) = prev.as_ref().filter(|c| same_object(c)).and_then(|c| c.object.clone()).filter(|(st, ..)| *st == o.stack) {
            let mut with = t.clone();
            with.object = Some(obj.clone());
            let id = b.wait(with);
            // The samples of this wait taken before (the walk for its object was not due)
            // carry it without the object: they get it too, or the wait would split in two.
            if let Some(old) = prev.as_ref().and_then(|c| c.wait).filter(|&w| w != id && w == base) {
                patch_since(b, o.thread, since, old, id);
            }
            let due = o.now_ns.saturating_sub(read_at) >= REREAD_NS;
            self.threads.insert(o.thread, Cached { key, wait: Some(id), tries: if due { 3 } else { 0 }, object: Some((o.stack, obj, read_at)), since });
            if due {
                self.queue(Pending { pid: o.pid, thread: o.thread, python_id: o.python_id, base: t, site, frames: o.frames.iter().map(|f| (f.name.to_string(), f.line)).collect(), frame_ids, caller });
            }
            return Some(id);
        }
        let tries = prev.as_ref().filter(|c| c.key == key).map_or(3, |c| c.tries);
        self.threads.insert(o.thread, Cached { key, wait: Some(base), tries, object: prev.and_then(|c| c.object), since });
        if tries > 0 {
            self.queue(Pending {
                pid: o.pid,
                thread: o.thread,
                python_id: o.python_id,
                base: t,
                site,
                frames: o.frames.iter().map(|f| (f.name.to_string(), f.line)).collect(),
                frame_ids,
                caller,
            });
        }
        Some(base)
    }

    /// The object of a C-level wait site known to sleep on futex `futex` of process `pid`, for a
    /// wait on that futex at `site`: `(object, whether site is the one that named it, when it
    /// was read)`. Taken at the site that named it (the same name on its line), and for a wait
    /// that shows no site of its own — no site on the stack, or a line whose `get`/`put` may not
    /// wait at all (`os.environ.get(…)` read just after the thread left `work_queue.get()`) —
    /// only while the reading is recent ([`REREAD_NS`]): a futex address alone is not trusted
    /// for longer (a freed lock's address is reused). A condition's, an event's or a future's
    /// wait (a fresh waiter lock each time) never takes one.
    fn known_object(&self, pid: u32, futex: u64, site: Option<&Site>, now_ns: u64) -> Option<(WaitObject, bool, u64)> {
        let (name, obj, read_at) = self.futex_objects.get(&(pid, futex))?;
        let fresh = now_ns.saturating_sub(*read_at) < REREAD_NS;
        let same_site = matches!(site, Some(Site::CLevel { name: n, .. }) if n == name);
        let ok = match site {
            _ if same_site => true,
            None | Some(Site::CLevel { generic: true, .. }) => fresh,
            _ => false,
        };
        ok.then(|| (obj.clone(), same_site, *read_at))
    }

    /// At the end of a recording: a wait on a futex that has no object gets the C lock or queue
    /// read on that futex in the same process within [`REREAD_NS`] of the sample, before or
    /// after it — the waits before the first reading, and those whose object could not be read
    /// while no recent reading was known. Samples are in time order, readings too.
    pub fn attach_known_objects(&self, b: &mut RunBuilder) {
        if self.readings.is_empty() {
            return;
        }
        let run = b.run();
        let mut changes: Vec<(usize, usize, WaitObject)> = Vec::new();
        for (si, s) in run.samples.iter().enumerate() {
            for (ti, ts) in s.threads.iter().enumerate() {
                let Some(target) = ts.wait.and_then(|w| run.waits.get(w as usize)) else { continue };
                let (Some(futex), None) = (target.futex, &target.object) else { continue };
                let Some(pid) = run.threads.get(ts.thread as usize).map(|t| t.pid) else { continue };
                let Some(list) = self.readings.get(&(pid, futex)) else { continue };
                let at = ts.seen_at(s.t);
                let i = list.partition_point(|(t, _)| *t < at);
                let near = [i.checked_sub(1), Some(i)].into_iter().flatten().filter_map(|i| list.get(i)).min_by_key(|(t, _)| t.abs_diff(at));
                if let Some((_, obj)) = near.filter(|(t, _)| t.abs_diff(at) < REREAD_NS) {
                    changes.push((si, ti, obj.clone()));
                }
            }
        }
        for (si, ti, obj) in changes {
            let run = b.run();
            let Some(w) = run.samples[si].threads[ti].wait else { continue };
            let mut with = run.waits[w as usize].clone();
            with.object = Some(obj);
            let id = b.wait(with);
            b.run_mut().samples[si].threads[ti].wait = Some(id);
        }
    }

    fn queue(&mut self, p: Pending) {
        self.queued.insert(p.thread, p.clone());
        self.pending.push(p);
    }

    /// Whether `thread`'s object read, as last queued, can be queued again without observing
    /// the thread ([`WaitReader::requeue`]): it is still to be read.
    pub fn requeueable(&self, thread: ThreadId) -> bool {
        !self.settled(thread) && self.queued.contains_key(&thread)
    }

    /// Queues `thread`'s object read again as it was last queued, for a thread whose sample
    /// stands unread because it has slept at the same stack since (a thousand threads that begin
    /// to wait together are then read a few per walk, instead of every one read every tick until
    /// its object is); returns its wait now, which the read patches with its object, and
    /// whether that wait is settled (nothing more will be read for it while the thread sleeps
    /// on).
    pub fn requeue(&mut self, thread: ThreadId) -> (Option<WaitId>, bool) {
        // Called for every standing thread at every tick: one lookup for a settled thread once
        // no read is queued (a thousand sleepers a tick).
        let cached = self.threads.get(&thread);
        let wait = cached.and_then(|c| c.wait);
        let settled = cached.is_none_or(|c| c.tries == 0);
        if settled {
            if !self.queued.is_empty() {
                self.queued.remove(&thread);
            }
        } else if self.pending.len() < OBJECTS_PER_WALK {
            // No more than the next walk reads (the rest would be dropped unread): the same
            // threads come first until theirs are read or their tries run out.
            if let Some(p) = self.queued.get(&thread) {
                self.pending.push(p.clone());
            }
        }
        (wait, settled)
    }

    /// Whether some thread waits for its object to be read.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The Python thread ids of process `pid` whose waits' objects are queued: the walk with
    /// arguments reads only their stacks.
    ///
    /// At most [`OBJECTS_PER_WALK`] threads: the others' reads are dropped without costing them a
    /// try, and asked for again at their next sample (each thread costs a read of every
    /// argument of every frame; a thousand threads that began waiting together would stall the
    /// sampler for a tenth of a second at once).
    pub fn pending_ids(&mut self, pid: u32) -> std::collections::HashSet<u64> {
        let mut ids = std::collections::HashSet::new();
        self.pending.retain(|p| {
            if p.pid != pid || ids.contains(&p.python_id) {
                return true;
            }
            ids.len() < OBJECTS_PER_WALK && ids.insert(p.python_id)
        });
        ids
    }

    /// Whether process `pid` may be walked with arguments now (at most every [`WALK_EVERY_NS`]);
    /// when not, the queued reads are dropped and asked for again at the thread's next sample.
    pub fn walk_due(&mut self, pid: u32, now_ns: u64) -> bool {
        let last = self.last_walk.entry(pid).or_insert(0);
        if *last == 0 || now_ns.saturating_sub(*last) >= WALK_EVERY_NS {
            *last = now_ns.max(1);
            true
        } else {
            self.pending.clear();
            false
        }
    }

    /// Drops the queued reads of threads no longer in the futex wait they were observed in,
    /// asked after the walk with arguments: `syscall_now(pid, tid)` reads the thread's system
    /// call now. A sample's kernel reading comes before its stack walk, and the walk with
    /// arguments later still: a thread that has moved on to another wait at the same line (`for
    /// t in workers: t.join()`) would give the sample the next wait's object. The sample keeps
    /// the wait without it; the thread's next sample asks again.
    pub fn drop_moved_on(&mut self, b: &RunBuilder, mut syscall_now: impl FnMut(u32, u32) -> Option<Syscall>) {
        let run = b.run();
        self.pending.retain(|p| {
            let (Some(futex), Some(tid)) = (p.base.futex, run.threads.get(p.thread as usize).map(|t| t.tid).filter(|&t| t != 0)) else {
                return true;
            };
            matches!(syscall_now(p.pid, tid), Some(Syscall::Blocked { nr, arg0 }) if arg0 == futex && syscall_name(nr) == "futex")
        });
    }

    /// Reads the objects of the queued waits from `traces` (a walk of the process with
    /// arguments) and returns the new wait of each thread whose object was found.
    /// `attribute(obj, name)` reads an instance attribute in the target (its address and type
    /// name), for a C-level lock the line reaches through attributes (`with self.rlock:`).
    pub fn resolve(
        &mut self,
        traces: &[py_spy::StackTrace],
        b: &mut RunBuilder,
        now_ns: u64,
        attribute: &mut AttributeReader,
        owner_of: &mut OwnerReader,
    ) -> Vec<(ThreadId, WaitId)> {
        self.locals_reads += 1;
        let mut out = Vec::new();
        let mut patches = Vec::new();
        for p in std::mem::take(&mut self.pending) {
            // A failed read counts against the thread's tries; found, it stops them.
            if let Some(c) = self.threads.get_mut(&p.thread) {
                c.tries = c.tries.saturating_sub(1);
            }
            let Some(trace) = traces.iter().find(|t| t.thread_id == p.python_id) else { continue };
            // The same stack as observed, or the answer may be another wait's.
            let same = trace.frames.len() == p.frames.len() && trace.frames.iter().zip(&p.frames).all(|(f, (n, l))| f.name == *n && f.line.max(0) as u32 == *l);
            if !same {
                continue;
            }
            // The variable holding the object, and the attributes leading from it to the object
            // (`self.rlock`: `self`, then `rlock`).
            let (frame_index, var, path) = match &p.site {
                Site::Api { api, .. } => (*api, None, None),
                Site::CLevel { name, .. } => {
                    let mut parts = name.split('.');
                    (0, parts.next(), Some(parts))
                }
            };
            let Some(locals) = trace.frames[frame_index].locals.as_ref() else { continue };
            let local = match var {
                Some(v) => locals.iter().find(|l| l.name == v),
                None => locals.iter().find(|l| l.name == "self").or_else(|| locals.iter().find(|l| l.arg)),
            };
            let Some(local) = local.filter(|l| l.addr != 0) else { continue };
            let mut addr = local.addr;
            let mut obj_type = local.repr.as_deref().and_then(type_from_repr).map(str::to_string);
            let mut followed = true;
            for attr in path.into_iter().flatten() {
                match attribute(addr, attr) {
                    Some((a, ty)) if a != 0 => (addr, obj_type) = (a, Some(ty)),
                    _ => {
                        followed = false;
                        break;
                    }
                }
            }
            if !followed {
                continue;
            }
            let type_name = match (&p.site, obj_type.as_deref()) {
                (Site::Api { module, class, .. }, Some(rt)) if rt == class => format!("{module}.{class}"),
                (Site::Api { module, .. }, Some(rt)) if module_classes(module).contains(&rt) => format!("{module}.{rt}"),
                (Site::Api { .. }, Some(rt)) => rt.to_string(),
                (Site::Api { module, class, .. }, None) => format!("{module}.{class}"),
                (Site::CLevel { .. }, Some(rt)) => c_level_type(rt).to_string(),
                (Site::CLevel { .. }, None) => "unknown".to_string(),
            };
            let waitable = obj_type.as_deref().is_some_and(|rt| C_WAITABLES.iter().any(|(c, _)| *c == rt));
            if matches!(p.site, Site::CLevel { generic: true, .. }) && !waitable {
                // `os.environ.get(…)`, `d.get(k)`: the line's object is no lock or queue, so
                // it is not what the thread sleeps on; the wait keeps no object (read no more).
                if let Some(c) = self.threads.get_mut(&p.thread) {
                    c.tries = 0;
                }
                continue;
            }
            let (name, frame) = match &p.site {
                Site::Api { api, method, .. } => {
                    let name = p.caller.as_ref().and_then(|(f, l)| self.line(f, *l)).and_then(|text| name_in_line(&text, &[method.as_str(), "__enter__"]));
                    (name, p.frame_ids.get(api + 1).copied())
                }
                Site::CLevel { name, .. } => (Some(name.clone()), p.frame_ids.first().copied()),
            };
            let mut t = p.base;
            // Who holds it, where the object says: a C `RLock` keeps its owner's thread id, a
            // joined thread is its own holder (a plain `Lock` has no owner to read).
            let joined = matches!(&p.site, Site::Api { module, class, .. } if module == "threading" && class == "Thread");
            let owner = if type_name == "_thread.RLock" {
                owner_of(addr, Owner::RLock)
            } else if joined {
                owner_of(addr, Owner::Thread)
            } else {
                None
            };
            let obj = WaitObject { addr: addr as u64, type_name: b.string(&type_name), name: name.as_ref().map(|n| b.string(n)), frame, owner };
            // A C lock or queue sleeps on its own futex: other waits on it are on this object.
            if let (Site::CLevel { name: site_name, .. }, Some(futex), true) = (&p.site, t.futex, waitable) {
                self.futex_objects.insert((p.pid, futex), (site_name.clone(), obj.clone(), now_ns));
                self.readings.entry((p.pid, futex)).or_default().push((now_ns, obj.clone()));
            }
            t.object = Some(obj.clone());
            let id = b.wait(t);
            let mut patch = None;
            if let Some(c) = self.threads.get_mut(&p.thread) {
                // The samples of this wait before its object was read (the walk comes at most
                // every 10 ms) carry the wait without it: the same call, argument and stack, so
                // the same object. They get it too, instead of a wait of their own.
                if let Some(old) = c.wait.filter(|&w| w != id && b.run().waits.get(w as usize).is_some_and(|t| without_object(b.run(), t))) {
                    patch = Some((c.since, old));
                }
                c.wait = Some(id);
                c.tries = 0;
                c.object = Some((c.key.2, obj, now_ns));
            }
            if let Some((since, old)) = patch {
                patches.push((p.thread, since, old, id));
            }
            out.push((p.thread, id));
        }
        patch_many(b, &patches);
        out
    }

    /// Whether observing `thread` again with what it was last observed with would return the same
    /// wait without reading anything: no object of its wait is still to be read.
    pub fn settled(&self, thread: ThreadId) -> bool {
        self.threads.get(&thread).is_none_or(|c| c.tries == 0)
    }

    /// Forgets a thread's last wait (it runs now).
    pub fn forget(&mut self, thread: ThreadId) {
        self.threads.remove(&thread);
        self.queued.remove(&thread);
    }

    /// Drops queued reads (the process could not be walked again).
    pub fn clear_pending(&mut self) {
        self.pending.clear();
    }
}

/// A wait target whose object is not known yet: none, or only the name a line gives it (not
/// the GIL, whose address is 0 too).
fn without_object(run: &crate::run::Run, t: &WaitTarget) -> bool {
    t.object.as_ref().is_none_or(|o| o.addr == 0 && run.str(o.type_name) != "GIL")
}

/// Gives `thread`'s samples from `since` on that carry wait `old` the wait `new`.
fn patch_since(b: &mut RunBuilder, thread: ThreadId, since: u32, old: WaitId, new: WaitId) {
    patch_many(b, &[(thread, since, old, new)]);
}

/// [`patch_since`] for several threads in one pass over the samples: a walk resolves up to 48
/// threads' objects at once, and a pass each over the samples since their waits began (a
/// thousand threads each) cost milliseconds a tick while a program's many threads were read.
fn patch_many(b: &mut RunBuilder, patches: &[(ThreadId, u32, WaitId, WaitId)]) {
    let Some(from) = patches.iter().map(|p| p.1).min() else { return };
    let by_thread: rustc_hash::FxHashMap<ThreadId, (u32, WaitId, WaitId)> = patches.iter().map(|&(t, since, old, new)| (t, (since, old, new))).collect();
    if by_thread.len() < patches.len() {
        // A thread twice: its patches apply in order, one pass each.
        for p in patches {
            patch_many(b, std::slice::from_ref(p));
        }
        return;
    }
    for (i, s) in b.run_mut().samples.iter_mut().enumerate().skip(from as usize) {
        for ts in s.threads.iter_mut() {
            let Some(wait) = ts.wait else { continue };
            if let Some(&(since, old, new)) = by_thread.get(&ts.thread) {
                if i >= since as usize && wait == old {
                    ts.wait = Some(new);
                }
            }
        }
    }
}

fn key_thread(o: &Observation) -> ThreadId {
    o.thread
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_lines() {
        let m = &["get", "wait", "acquire", "__enter__"];
        assert_eq!(name_in_line("        with self.not_empty:", m).as_deref(), Some("self.not_empty"));
        assert_eq!(name_in_line("    with buffer.cond as c:  # wait", m).as_deref(), Some("buffer.cond"));
        assert_eq!(name_in_line("item = q.get()", m).as_deref(), Some("q"));
        assert_eq!(name_in_line("  ok = self.cond.wait(timeout=1)", m).as_deref(), Some("self.cond"));
        assert_eq!(name_in_line("lock.acquire()", m).as_deref(), Some("lock"));
        assert_eq!(name_in_line("x = compute(3)", m), None);
        assert_eq!(name_in_line("with open(p) as f:", m), None);
        assert_eq!(name_in_line("    with GUARDS[name]:", m).as_deref(), Some("GUARDS[name]"));
        assert_eq!(name_in_line("    with self.locks[i] as l:", m).as_deref(), Some("self.locks[i]"));
        assert_eq!(name_in_line("    with f(x)[0]:", m), None);
        assert_eq!(name_in_line("work_item = work_queue.get(block=True)", m).as_deref(), Some("work_queue"));
    }

    #[test]
    fn sites_of_waits() {
        let f = |name, file, line| FrameRef { name, file, line };
        let mut no_source = |_: &str, _: u32| None;
        // q.get() → Condition.wait inside Queue.get: the queue is the object.
        let frames = [f("Condition.wait", "/usr/lib/python3.11/threading.py", 320), f("Queue.get", "/usr/lib/python3.11/queue.py", 171), f("consume", "/app/main.py", 12)];
        assert_eq!(
            find_site(&frames, &mut no_source),
            Some(Site::Api { api: 1, module: "queue".into(), class: "Queue".into(), method: "get".into() })
        );
        // Thread.join through _wait_for_tstate_lock.
        let frames = [f("Thread._wait_for_tstate_lock", "/x/threading.py", 1116), f("Thread.join", "/x/threading.py", 1096), f("main", "/app/m.py", 3)];
        assert!(matches!(find_site(&frames, &mut no_source), Some(Site::Api { api: 1, ref class, .. }) if class == "Thread"));
        // Thread.run is not a wait.
        let frames = [f("Thread.run", "/x/threading.py", 10), f("main", "/app/m.py", 3)];
        assert_eq!(find_site(&frames, &mut no_source), None);
        // A C-level lock in the program's code.
        let mut src = |_: &str, l: u32| Some(if l == 7 { "    with lock:".to_string() } else { "    with self.lock:".to_string() });
        assert_eq!(find_site(&[f("work", "/app/m.py", 7)], &mut src), Some(Site::CLevel { name: "lock".into(), local: true, generic: false }));
        assert_eq!(find_site(&[f("work", "/app/m.py", 8)], &mut src), Some(Site::CLevel { name: "self.lock".into(), local: false, generic: false }));
        assert_eq!(type_from_repr("<_thread.lock at 0x7f00>"), Some("_thread.lock"));
        assert_eq!(type_from_repr("<Condition at 0x7f00>"), Some("Condition"));
        // `with lock:` on a multiprocessing.Lock: its Python `SemLock.__enter__` is the call.
        let frames = [f("SemLock.__enter__", "/usr/lib/python3.11/multiprocessing/synchronize.py", 95), f("locker", "/app/m.py", 30)];
        assert_eq!(
            find_site(&frames, &mut no_source),
            Some(Site::Api { api: 0, module: "multiprocessing.synchronize".into(), class: "SemLock".into(), method: "__enter__".into() })
        );
        // Its classes are not threading's: a `Lock` class elsewhere blocks on nothing.
        assert_eq!(find_site(&[f("Lock.acquire", "/x/threading.py", 10), f("main", "/app/m.py", 3)], &mut no_source), None);
    }

    /// One pass patches several threads, each only from its own `since` and only where it
    /// carries its own `old` wait; a thread listed twice gets its patches in order.
    #[test]
    fn patches_of_several_threads_apply_in_one_pass_and_a_thread_twice_in_order() {
        let mut b = RunBuilder::new(Default::default());
        let [a, c, d] = [2, 3, 4].map(|tid| b.thread(crate::builder::new_thread(1, tid, tid as u64, "t", "Thread")));
        // a waits on 0 throughout; c on 1 and then on 2 from sample 3; d on 0 too.
        for i in 0..6u32 {
            let ts = |thread, wait| crate::run::ThreadSample { thread, state: ThreadState::Idle, wait: Some(wait), ..Default::default() };
            b.push_sample(crate::run::Sample { t: i as u64, threads: vec![ts(a, 0), ts(c, if i < 3 { 1 } else { 2 }), ts(d, 0)] });
        }
        let waits_of = |b: &RunBuilder, th| b.run().samples.iter().map(|s| s.threads.iter().find(|t| t.thread == th).unwrap().wait.unwrap()).collect::<Vec<_>>();
        patch_many(&mut b, &[(a, 2, 0, 5), (c, 0, 1, 6)]);
        assert_eq!(waits_of(&b, a), [0, 0, 5, 5, 5, 5], "from its own since on");
        assert_eq!(waits_of(&b, c), [6, 6, 6, 2, 2, 2], "only where it carried its old wait");
        assert_eq!(waits_of(&b, d), [0; 6], "another thread's samples of the same wait are its own");
        // Twice: the second patch sees the first's result (one map of both would lose it).
        patch_many(&mut b, &[(a, 0, 0, 7), (a, 0, 7, 8), (d, 4, 0, 9)]);
        assert_eq!(waits_of(&b, a), [8, 8, 5, 5, 5, 5]);
        assert_eq!(waits_of(&b, d), [0, 0, 0, 0, 9, 9]);
        patch_many(&mut b, &[]);
        assert_eq!(waits_of(&b, a), [8, 8, 5, 5, 5, 5], "no patch changes nothing");
    }

    /// One frame of a walk with arguments, as the stack source gives it.
    /// The stack of Python thread 7 of process 1 (the thread `blocked_sample` observes).
    fn python7_trace(frames: Vec<py_spy::stack_trace::Frame>) -> py_spy::StackTrace {
        py_spy::StackTrace { pid: 1, thread_id: 7, thread_name: None, os_thread_id: None, active: false, owns_gil: false, frames, process_info: None }
    }

    fn trace_frame(name: &str, file: &str, line: u32, locals: Vec<(&str, usize, &str)>) -> py_spy::stack_trace::Frame {
        py_spy::stack_trace::Frame {
            name: name.into(),
            filename: file.into(),
            module: None,
            short_filename: None,
            line: line as i32,
            locals: Some(locals.into_iter().map(|(n, addr, ty)| py_spy::stack_trace::LocalVariable { name: n.into(), addr, arg: n == "self", repr: Some(format!("<{ty} at {addr:#x}>")) }).collect()),
            is_entry: false,
            is_shim_entry: false,
        }
    }

    /// Observes one blocked sample of thread `th` (a futex at `futex`) and pushes it.
    fn blocked_sample(r: &mut WaitReader, b: &mut RunBuilder, th: ThreadId, frames: &[FrameRef], futex: u64, t: u64) -> Option<WaitId> {
        let nr = (0..1000).find(|&n| syscall_name(n) == "futex").unwrap();
        let no_ids = || Vec::new();
        let o = Observation {
            pid: 1,
            thread: th,
            python_id: 7,
            state: ThreadState::Idle,
            blocked: Some("futex"),
            syscall: Some(Syscall::Blocked { nr, arg0: futex }),
            stack: Some(3),
            frames,
            frame_ids: &no_ids,
            now_ns: t,
            ran: false,
        };
        let w = r.observe(&o, b);
        b.push_sample(crate::run::Sample { t, threads: vec![crate::run::ThreadSample { thread: th, state: ThreadState::Idle, wait: w, ..Default::default() }] });
        w
    }

    /// `with self.rlock:` (a C-level lock reached through an attribute) is read through `self`
    /// and its attribute; the samples of the wait before the read get the object too.
    #[test]
    fn attribute_locks_are_read_and_earlier_samples_get_them() {
        let dir = std::env::temp_dir().join(format!("threadradar-waits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("m.py");
        std::fs::write(&file, "class H:\n    def wait(self):\n        with self.rlock:\n            pass\n").unwrap();
        let file = file.to_str().unwrap();
        let mut b = RunBuilder::new(Default::default());
        let th = b.thread(crate::builder::new_thread(1, 2, 7, "waiter", "Thread"));
        let mut r = WaitReader::default();
        let frames = [FrameRef { name: "H.wait", file, line: 3 }];
        // Two samples before the walk: the name is known, the object not yet.
        let first = blocked_sample(&mut r, &mut b, th, &frames, 0xf00, 1).unwrap();
        r.clear_pending(); // no walk at this tick (one every 10 ms): asked again at the next
        assert_eq!(blocked_sample(&mut r, &mut b, th, &frames, 0xf00, 2), Some(first));
        let o = b.run().waits[first as usize].object.clone().unwrap();
        assert_eq!((o.addr, b.run().str(o.type_name), o.name.map(|n| b.run().str(n))), (0, "unknown", Some("self.rlock")));
        assert!(r.has_pending());
        let trace = python7_trace(vec![trace_frame("H.wait", file, 3, vec![("self", 0x1000, "H")])]);
        let mut attribute = |obj: usize, name: &str| (obj == 0x1000 && name == "rlock").then(|| (0x2000, "_thread.RLock".to_string()));
        let got = r.resolve(&[trace], &mut b, 3, &mut attribute, &mut |_, _| None);
        let [(t, w)] = got[..] else { panic!("{got:?}") };
        assert_eq!(t, th);
        let o = b.run().waits[w as usize].object.clone().unwrap();
        assert_eq!((o.addr, b.run().str(o.type_name), o.name.map(|n| b.run().str(n))), (0x2000, "_thread.RLock", Some("self.rlock")));
        assert!(b.run().samples.iter().all(|s| s.threads[0].wait == Some(w)), "the wait's earlier samples carry the object");
        // An attribute that cannot be read leaves the name alone.
        let mut r = WaitReader::default();
        let th2 = b.thread(crate::builder::new_thread(1, 3, 8, "other", "Thread"));
        let w2 = blocked_sample(&mut r, &mut b, th2, &frames, 0xf08, 4);
        let trace = python7_trace(vec![trace_frame("H.wait", file, 3, vec![("self", 0x1000, "H")])]);
        let mut none = |_: usize, _: &str| None;
        assert!(r.resolve(&[trace], &mut b, 5, &mut none, &mut |_, _| None).is_empty());
        assert_eq!(b.run().samples.last().unwrap().threads[0].wait, w2);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// `work_queue.get()` on a C `SimpleQueue` names and types the queue (`queue.SimpleQueue`);
    /// other waits on its futex get it too — one whose stack was read after the thread had left
    /// the site (no site, or a line like `os.environ.get(…)` that waits on nothing) — while a
    /// `get` on anything but a C queue or lock names no object, before or after it is read.
    #[test]
    fn a_c_queue_is_one_object_and_a_get_that_does_not_wait_names_nothing() {
        let dir = std::env::temp_dir().join(format!("threadradar-waits-queue-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("m.py");
        std::fs::write(&file, "def _worker(work_queue, d):\n    item = work_queue.get(block=True)\n    v = os.environ.get('HOME')\n    s += 1\n    x = d.get(1)\n").unwrap();
        let file = file.to_str().unwrap();
        let mut b = RunBuilder::new(Default::default());
        let threads: Vec<ThreadId> = (0..5).map(|i| b.thread(crate::builder::new_thread(1, 2 + i, 7, "t", "Thread"))).collect();
        let mut r = WaitReader::default();
        let at = |line| [FrameRef { name: "_worker", file, line }];
        let locals = vec![("work_queue", 0x5000, "_queue.SimpleQueue object"), ("d", 0x6000, "dict object")];
        let obj = |b: &RunBuilder, w: Option<WaitId>| {
            b.run().waits[w.unwrap() as usize].object.as_ref().map(|o| (o.addr, b.run().str(o.type_name).to_string(), o.name.map(|n| b.run().str(n).to_string())))
        };
        // Before any reading: no object yet.
        let w = blocked_sample(&mut r, &mut b, threads[4], &at(4), 0xabc, 0);
        assert_eq!(obj(&b, w), None);
        blocked_sample(&mut r, &mut b, threads[0], &at(2), 0xabc, 1);
        let trace = python7_trace(vec![trace_frame("_worker", file, 2, locals.clone())]);
        let got = r.resolve(&[trace], &mut b, 2, &mut |_, _| None, &mut |_, _| None);
        let queue = Some((0x5000, "queue.SimpleQueue".to_string(), Some("work_queue".to_string())));
        assert_eq!(obj(&b, Some(got[0].1)), queue);
        // The same futex without a site of its own, and at a line that waits on nothing.
        let w = blocked_sample(&mut r, &mut b, threads[1], &at(4), 0xabc, 3);
        assert_eq!(obj(&b, w), queue);
        let w = blocked_sample(&mut r, &mut b, threads[2], &at(3), 0xabc, 4);
        assert_eq!(obj(&b, w), queue);
        assert!(!r.has_pending(), "known: nothing to read");
        // A futex nobody named: `os.environ` is no object of the wait, nor is a dict.
        for (th, line) in [(threads[3], 3), (threads[4], 5)] {
            let w = blocked_sample(&mut r, &mut b, th, &at(line), 0xdef + line as u64, 5);
            assert_eq!(obj(&b, w), None, "line {line} before the read");
            let trace = python7_trace(vec![trace_frame("_worker", file, line, locals.clone())]);
            assert!(r.resolve(&[trace], &mut b, 6, &mut |_, _| None, &mut |_, _| None).is_empty(), "line {line}");
            assert_eq!(obj(&b, b.run().samples.last().unwrap().threads[0].wait), None, "line {line} after the read");
        }
        // Long after the reading, a futex address alone no longer names it.
        let w = blocked_sample(&mut r, &mut b, threads[3], &at(4), 0xabc, 2 + REREAD_NS);
        assert_eq!(obj(&b, w), None);
        // After the recording, the wait before the first reading gets it; the one long after not.
        r.attach_known_objects(&mut b);
        assert_eq!(obj(&b, b.run().samples[0].threads[0].wait), queue);
        assert_eq!(obj(&b, b.run().samples.last().unwrap().threads[0].wait), None);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A `multiprocessing.Lock` in `SemLock.__enter__` is typed by its own class of that module;
    /// a `BoundedSemaphore` in the `Semaphore.acquire` it inherits is `threading.BoundedSemaphore`;
    /// the program's own subclass keeps its name.
    #[test]
    fn objects_of_a_module_running_an_inherited_method_are_typed_by_their_class() {
        let dir = std::env::temp_dir().join(format!("threadradar-waits-types-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("m.py");
        std::fs::write(&file, "def f(lock, sem):\n    with lock:\n        sem.acquire()\n").unwrap();
        let file = file.to_str().unwrap();
        for (i, (name, module_file, line, ty, want)) in [
            ("SemLock.__enter__", "/usr/lib/python3.11/multiprocessing/synchronize.py", 2, "Lock", "multiprocessing.synchronize.Lock"),
            ("Semaphore.acquire", "/usr/lib/python3.11/threading.py", 3, "BoundedSemaphore", "threading.BoundedSemaphore"),
            ("Semaphore.acquire", "/usr/lib/python3.11/threading.py", 3, "Semaphore", "threading.Semaphore"),
            ("Semaphore.acquire", "/usr/lib/python3.11/threading.py", 3, "Throttle", "Throttle"),
        ]
        .into_iter()
        .enumerate()
        {
            let mut b = RunBuilder::new(Default::default());
            let th = b.thread(crate::builder::new_thread(1, 2, 7, "t", "Thread"));
            let mut r = WaitReader::default();
            let frames = [FrameRef { name, file: module_file, line: 95 }, FrameRef { name: "f", file, line }];
            blocked_sample(&mut r, &mut b, th, &frames, 0x10 + i as u64, 1);
            let trace = python7_trace(vec![trace_frame(name, module_file, 95, vec![("self", 0x1000, ty)]), trace_frame("f", file, line, vec![])]);
            let got = r.resolve(&[trace], &mut b, 2, &mut |_, _| None, &mut |_, _| None);
            let o = b.run().waits[got[0].1 as usize].object.clone().unwrap();
            let expect_name = if line == 2 { "lock" } else { "sem" };
            assert_eq!((b.run().str(o.type_name), o.name.map(|n| b.run().str(n))), (want, Some(expect_name)), "{name} on a {ty}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
