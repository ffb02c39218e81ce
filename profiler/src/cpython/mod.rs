//! Reading CPython ≥ 3.13 — free-threaded builds included — through the layout the interpreter
//! publishes about itself (`_Py_DebugOffsets`, see [`offsets`]), instead of a compiled-in copy of
//! its private structs (what py-spy's bindings are, and why py-spy cannot read 3.13t, whose object
//! header is 32 bytes instead of 16); and CPython 3.11 and 3.12 through the same offsets taken
//! from their headers ([`offsets::DebugOffsets::built_in`]), so that every version gets the same
//! cheap walk (one read per thread state, a thread's previous stack reused while its innermost
//! frame has not moved, code objects cached) rather than py-spy's full walk at every tick.
//!
//! What is read, all with plain non-blocking reads of the target's memory (it is never paused, so
//! a read can see a structure mid-update: every pointer is checked before it is followed, and a
//! thread whose stack cannot be read is left out of that sample):
//!
//! - `_PyRuntime` (an ELF symbol of the executable or `libpython`) → its interpreters → each
//!   interpreter's thread states (`PyThreadState`: Python thread id, native thread id, current
//!   frame);
//! - each thread's `_PyInterpreterFrame` chain: the code object (`co_qualname`, `co_filename`,
//!   `co_firstlineno`, `co_linetable`) and the instruction pointer, which the location table
//!   ([`linetable`]) turns into a line;
//! - the GIL (`_gil_runtime_state`: `locked`, `last_holder`; on a free-threaded build first
//!   `enabled`, which is 0 unless an extension module turned the GIL back on);
//! - thread names from `threading._active` (sys.modules → `threading` → `_active`: Python thread
//!   id → `Thread` object → its `_name`), which needs dicts, ints and strings ([`objects`]).
//!
//! A thread state that is not bound to an OS thread yet (thread id 0: `threading` creates the
//! state in the parent before the new thread starts) is not a thread and is not reported.

pub mod asyncio;
pub mod linetable;
mod objects;
pub mod offsets;
pub mod stack;
pub mod symbols;

use anyhow::{anyhow, bail, Context, Result};
use objects::Memory;
use offsets::{DebugOffsets, LayoutError};
use py_spy::stack_trace::{Frame, LocalVariable, StackTrace};
use stack::RawFrame;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{HashMap, HashSet};

/// At most this many interpreters, threads per interpreter and frames per thread are followed
/// (a torn read must not send the walk around a cycle forever).
pub(crate) const MAX_INTERPRETERS: usize = 64;
const MAX_THREADS: usize = 4096;

/// What is known about one code object.
#[derive(Clone, Debug)]
struct Code {
    qualname: String,
    filename: String,
    first_line: i32,
    linetable: Vec<u8>,
    argcount: usize,
    localsplusnames: usize,
    /// Free-threaded 3.14+: `co_tlbc`, the array of per-thread bytecode copies (0 otherwise).
    tlbc: usize,
}

/// One CPython ≥ 3.11 process, read through its debug offsets (or 3.11/3.12's built-in ones).
pub struct Interpreter {
    pub pid: u32,
    mem: Memory,
    runtime: usize,
    code_type: Option<usize>,
    /// Code objects by address, with the fields the entry was read from, to notice an address
    /// reused by another code object.
    codes: HashMap<usize, ([u8; 32], Code, u64)>,
    /// Which walk of the process this is ([`Interpreter::stack_traces`] counts them): a code object
    /// checked in this walk is not read again in it (the threads of a pool share their code, and
    /// a frame holds its code object, so it cannot be freed and its address reused in between).
    walk: u64,
    /// What the GIL reading of this tick found ([`Interpreter::gil_holder`]): the interpreters and
    /// the holder's thread state, for the stack walk that follows it microseconds later.
    tick: Option<(Vec<usize>, usize)>,
    /// Set by [`Interpreter::read_gil_holder`] when the next walk can read the GIL itself, in the
    /// one call that reads the thread states (see [`Interpreter::gil_regions`]).
    fold_gil: bool,
    /// Thread names by (ident, native thread id): idents are reused under churn, so a name is
    /// only taken for the thread whose `Thread._native_id` is this thread state's.
    names: FxHashMap<(u64, u64), Option<String>>,
    /// `threading._active` once found, with its type's address: the module never rebinds it, so
    /// later name reads skip the search through `sys.modules` while the object is still a dict.
    active: Option<(usize, usize)>,
    /// `co_localsplusnames` tuples, read once each (tuples are immutable; the address is the key).
    local_names: HashMap<usize, Vec<Option<String>>>,
    /// Each thread's last stack, by (thread state address, thread id), with the chain of frames
    /// it was decoded from: see [`stack`] for when it is reused.
    stacks: FxHashMap<(usize, u64), (Vec<RawFrame>, Vec<Frame>)>,
    /// System calls made by the last [`Interpreter::stack_traces`] (benchmarks, tests).
    pub last_reads: usize,
    /// The thread states the last walk went through, in order: the next walk reads them all in
    /// one call ([`Memory::bytes_many`]) and follows the list through that copy.
    prev_tstates: Vec<usize>,
    /// Native ids of threads the scheduler has not run since they were last read
    /// ([`Interpreter::set_quiet`]): their frames cannot have changed, so their last stack is
    /// reused without reading their frames.
    quiet: FxHashSet<u64>,
    /// Native ids among `quiet` whose last sample the sampler can stand in for: when the walk
    /// would reuse such a thread's stack it leaves the thread out of its traces and lists it in
    /// `elided` instead, so that neither its frames nor its name are copied (1 000 idle threads
    /// cost a copy of every one's frames at every tick otherwise).
    elide: FxHashSet<u64>,
    /// (Python thread id, native id) of the threads the last full walk left out (see `elide`).
    pub elided: Vec<(u64, u64)>,
    /// The last full walk's copy of every thread state (kept to reuse its allocation), and each
    /// state's place in it.
    tstate_batch: Vec<u8>,
    batch_at: StateCopy,
    /// The states a walk has met (kept to reuse its allocation: a thousand threads a tick).
    visited: FxHashSet<usize>,
    /// Type names by type object address, with the walk that read them ([`Interpreter::type_name_of`]).
    type_names: FxHashMap<usize, (u64, String)>,
    /// For a walk with arguments: the Python thread ids whose stacks are wanted (the waits
    /// reader's pending objects), every other thread is passed over without reading its frames
    /// ([`Interpreter::stack_traces_of`]); `None` for every thread.
    only: Option<HashSet<u64>>,
    /// The interpreters the last walk went through, for a walk of some threads right after it.
    last_interps: Vec<usize>,
    /// Whether the layout is the one built in for 3.11/3.12 (else the interpreter's own table).
    built_in: bool,
    /// asyncio's offsets once found, and what the last walk read of each thread's tasks
    /// ([`asyncio`]).
    asyncio: asyncio::AsyncioState,
}

/// The outcome of looking for the debug offsets in a process.
pub enum Found {
    /// CPython 3.13 or 3.13t: read it here.
    Interpreter(Interpreter),
    /// No `_PyRuntime` with the cookie (CPython before 3.13), or a later version with the GIL,
    /// which py-spy's bindings read: leave it to them.
    NotHere,
}

/// The error for an interpreter whose layout cannot be read; its text starts like py-spy's own
/// ("Unsupported version"), so `error::classify_attach_error` gives one sentence for both.
fn unsupported(version: &str, why: &str) -> anyhow::Error {
    anyhow!("Unsupported version of Python: CPython {version}{why}")
}

/// A copy of thread states read in one call: the states in the order read, and each one's place in
/// the buffer (`None` where it could not be read). A walk meets the states in the order the last
/// walk did, unless threads began or ended: the next state is looked up at the cursor first, and
/// through an index built on the first miss.
#[derive(Default)]
struct StateCopy {
    states: Vec<usize>,
    at: Vec<Option<usize>>,
    cursor: usize,
    index: Option<FxHashMap<usize, usize>>,
}

impl StateCopy {
    fn find(&mut self, ts: usize) -> Option<usize> {
        let k = match self.states.get(self.cursor) {
            Some(&s) if s == ts => self.cursor,
            _ => *self.index.get_or_insert_with(|| self.states.iter().enumerate().map(|(i, &s)| (s, i)).collect()).get(&ts)?,
        };
        self.cursor = k + 1;
        self.at.get(k).copied().flatten()
    }
}

impl Interpreter {
    /// Looks for `_PyRuntime` and its debug offsets in process `pid` (3.13+), or for a 3.11 or
    /// 3.12 whose layout is built in ([`DebugOffsets::built_in`]). `THREADRADAR_READER=py-spy`
    /// leaves 3.11 and 3.12 to py-spy's bindings (for comparing the two readers).
    pub fn find(pid: u32) -> Result<Found> {
        let process = remoteprocess::Process::new(pid as remoteprocess::Pid).context("opening the process")?;
        // The binaries' symbols: from the cache when these files were parsed before, else parsed.
        let cache = symbols::cache_dir();
        let cached = cache.as_deref().and_then(|d| symbols::cached(d, pid));
        let (mut found, info) = match cached {
            Some(s) => (s, None),
            None => {
                let info = py_spy::python_process_info::PythonProcessInfo::new(&process)?;
                let Some(&runtime) = info.get_symbol("_PyRuntime") else { return Ok(Found::NotHere) };
                let code_type = info.get_symbol("PyCode_Type").map(|&a| a as usize);
                (symbols::Symbols { runtime: runtime as usize, code_type, version: None }, Some(info))
            }
        };
        let (runtime, code_type) = (found.runtime, found.code_type);
        let mem = Memory::new(process);
        let table = mem.bytes(runtime, offsets::READ_SIZE)?;
        let (o, built_in) = match DebugOffsets::parse(&table) {
            Ok(Some(o)) => (o, false),
            Ok(None) => {
                if std::env::var("THREADRADAR_READER").is_ok_and(|r| r == "py-spy") {
                    return Ok(Found::NotHere);
                }
                let v = match (found.version, &info) {
                    (Some(v), _) => v,
                    (None, Some(info)) => {
                        let Ok(v) = py_spy::python_process_info::get_python_version(info, mem.process()) else { return Ok(Found::NotHere) };
                        (v.major, v.minor, v.patch)
                    }
                    // A cached entry without a version: its binary published a layout table then.
                    (None, None) => return Ok(Found::NotHere),
                };
                found.version = Some(v);
                match DebugOffsets::built_in(v.0, v.1, v.2) {
                    Some(o) => (o, true),
                    None => return Ok(Found::NotHere),
                }
            }
            Err(LayoutError::UnknownVersion(h)) if !h.free_threaded => return Ok(Found::NotHere),
            Err(LayoutError::UnknownVersion(h)) => return Err(unsupported(&h.version(), ", a free-threaded build whose layout this ThreadRadar cannot read")),
            Err(LayoutError::Implausible(h, why)) => return Err(unsupported(&h.version(), &format!(": its layout table is not readable ({why})"))),
        };
        let mem = mem.with_layout(o);
        let mut interp = Interpreter {
            pid,
            mem,
            runtime,
            code_type,
            codes: HashMap::new(),
            walk: 0,
            tick: None,
            fold_gil: false,
            names: FxHashMap::default(),
            active: None,
            local_names: HashMap::new(),
            stacks: FxHashMap::default(),
            last_reads: 0,
            prev_tstates: Vec::new(),
            quiet: FxHashSet::default(),
            elide: FxHashSet::default(),
            elided: Vec::new(),
            tstate_batch: Vec::new(),
            batch_at: StateCopy::default(),
            visited: FxHashSet::default(),
            type_names: FxHashMap::default(),
            only: None,
            last_interps: Vec::new(),
            built_in,
            asyncio: Default::default(),
        };
        if built_in && !interp.fits() {
            // A build the built-in layout does not describe (a debug build): py-spy's bindings.
            tracing::info!(pid, version = interp.version(), "the built-in layout does not fit this interpreter; reading it with py-spy");
            return Ok(Found::NotHere);
        }
        // `_PyRuntime` and its table are in the executable's static data from the moment it is
        // mapped; wait (like py-spy does) until the interpreter runs a thread, so that the
        // start-up is not counted as failed samples.
        if interp.stack_traces(false)?.is_empty() {
            bail!("the interpreter is not initialised yet");
        }
        if let (Some(dir), Some(info)) = (&cache, &info) {
            symbols::store(dir, pid, info, &found);
        }
        Ok(Found::Interpreter(interp))
    }

    /// Whether a built-in layout describes this process: `PyCode_Type`'s name reads `code`
    /// through it, and every bound thread state's native id is one of the process's threads.
    fn fits(&self) -> bool {
        let Some(ct) = self.code_type else { return false };
        let o = self.o();
        let name_ok = self.mem.ptr(ct + o.type_name as usize).and_then(|n| self.mem.bytes(n, 5)).is_ok_and(|b| &b[..] == b"code\0");
        if !name_ok {
            return false;
        }
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.pid)) else { return false };
        let tids: HashSet<u64> = tasks.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect();
        let Ok(interps) = self.interpreters() else { return true };
        for interp in interps {
            let mut ts = self.mem.ptr(interp + o.interp_threads_head as usize).unwrap_or(0);
            let mut n = 0;
            while ts != 0 && n < MAX_THREADS {
                n += 1;
                let native = self.mem.u64(ts + o.tstate_native_thread_id as usize).unwrap_or(0);
                let id = self.mem.u64(ts + o.tstate_thread_id as usize).unwrap_or(0);
                if id != 0 && native != 0 && !tids.contains(&native) {
                    return false;
                }
                ts = self.mem.ptr(ts + o.tstate_next as usize).unwrap_or(0);
            }
        }
        true
    }

    fn o(&self) -> &DebugOffsets {
        self.mem.layout()
    }

    /// Whether the layout is the one built in for 3.11 and 3.12.
    pub fn built_in_layout(&self) -> bool {
        self.built_in
    }

    /// `3.13.5` or `3.13.5t`.
    pub fn version(&self) -> String {
        self.o().header.version()
    }

    pub fn major_minor(&self) -> (u64, u64) {
        (self.o().header.major(), self.o().header.minor())
    }

    pub fn free_threaded(&self) -> bool {
        self.o().header.free_threaded
    }

    /// The process's memory, for the kernel-side readers.
    pub fn process(&self) -> &remoteprocess::Process {
        self.mem.process()
    }

    /// An instance attribute of an object of a Python class (`self.rlock` → the lock) with its
    /// type's name, for the waits reader naming an object the program's line reaches through an
    /// attribute; `None` when it cannot be read (no managed dict, a torn read).
    pub fn attribute(&self, obj: usize, name: &str) -> Option<(usize, String)> {
        let value = self.mem.attribute(obj, name).ok()??;
        Some((value, self.mem.type_name(value).ok()?))
    }

    /// The owner of the C `_thread.RLock` at `obj` (`threading.RLock()`): `rlock_owner`, the
    /// owner's `PyThread_get_thread_ident()` (= `PyThreadState.thread_id`), right after the
    /// object's head and the lock pointer in 3.11–3.13 (`Modules/_threadmodule.c`,
    /// `rlockobject`); in 3.14+ the `thread` of a `_PyRecursiveMutex` after its one-byte mutex,
    /// padded to 8: the same offset. `None` when unowned (0) or unreadable.
    pub fn rlock_owner(&self, obj: usize) -> Option<u64> {
        let at = obj + self.mem.layout().object_type as usize + 8 + 8;
        self.mem.u64(at).ok().filter(|&id| id != 0)
    }

    /// A `threading.Thread`'s `_ident` (`None` until it started: the attribute is then `None`,
    /// not an int).
    pub fn thread_ident(&self, obj: usize) -> Option<u64> {
        let value = self.mem.attribute(obj, "_ident").ok()??;
        if self.mem.type_name(value).ok()? != "int" {
            return None;
        }
        self.mem.long(value).ok().filter(|&id| id != 0)
    }

    fn interpreters(&self) -> Result<Vec<usize>> {
        let mut out = Vec::new();
        let mut interp = self.mem.ptr(self.runtime + self.o().runtime_interpreters_head as usize)?;
        // The main interpreter is the list's last (newest first): a head that is the main
        // interpreter the last walk found is a list of one, without reading its `next`.
        if interp != 0 && self.last_interps.last() == Some(&interp) {
            return Ok(vec![interp]);
        }
        while interp != 0 && out.len() < MAX_INTERPRETERS {
            out.push(interp);
            interp = self.mem.ptr(interp + self.o().interp_next as usize)?;
        }
        if out.is_empty() {
            bail!("the interpreter is not initialised yet");
        }
        Ok(out)
    }

    /// Whether the GIL is in force: always on a default build; on a free-threaded build only
    /// while `_gil_runtime_state.enabled` is non-zero.
    pub fn gil_enabled(&self) -> bool {
        if !self.free_threaded() {
            return true;
        }
        let Ok(interps) = self.interpreters() else { return false };
        let o = self.o();
        let at = interps[interps.len() - 1] + (o.interp_gil_runtime_state + o.gil_enabled) as usize;
        self.mem.i32(at).map(|e| e != 0).unwrap_or(false)
    }

    /// The GIL holder's `PyThreadState *` in the main interpreter, 0 for nobody (or no GIL).
    fn holder_tstate(&self, interp: usize) -> Result<usize> {
        if !self.gil_enabled() {
            return Ok(0);
        }
        let o = self.o();
        let base = match o.gil_at {
            offsets::GilAt::Interpreter => interp,
            offsets::GilAt::InterpreterPointer(at) => self.mem.ptr(interp + at as usize)?,
            offsets::GilAt::Runtime => self.runtime,
        };
        // `locked` and `last_holder` are neighbours in `_gil_runtime_state`: one read.
        let (locked, holder) = (o.interp_gil_locked as usize, o.interp_gil_holder as usize);
        let from = locked.min(holder);
        let raw = self.mem.bytes(base + from, locked.max(holder) + 8 - from)?;
        if i32::from_ne_bytes(raw[locked - from..locked - from + 4].try_into().unwrap()) == 0 {
            return Ok(0);
        }
        Ok(usize::from_ne_bytes(raw[holder - from..holder - from + 8].try_into().unwrap()))
    }

    /// The regions the walk reads, in its call for the thread states, to learn who holds the
    /// GIL: the interpreter list's head, `locked` to `last_holder` of the GIL, and the main
    /// interpreter's thread list head, at the addresses the last walk found (checked by the head
    /// it reads: the same single interpreter). `None` where that cannot be done in one call: more
    /// than one interpreter, a free-threaded build (whether the GIL is on is one more read), or
    /// a GIL behind a pointer (3.12).
    fn gil_regions(&self) -> Option<[(usize, usize); 3]> {
        let [interp] = self.last_interps[..] else { return None };
        if self.free_threaded() {
            return None;
        }
        let o = self.o();
        let base = match o.gil_at {
            offsets::GilAt::Interpreter => interp,
            offsets::GilAt::Runtime => self.runtime,
            offsets::GilAt::InterpreterPointer(_) => return None,
        };
        let (locked, holder) = (o.interp_gil_locked as usize, o.interp_gil_holder as usize);
        let from = locked.min(holder);
        Some([
            (self.runtime + o.runtime_interpreters_head as usize, 8),
            (base + from, locked.max(holder) + 8 - from),
            (interp + o.interp_threads_head as usize, 8),
        ])
    }

    /// What the regions of [`Interpreter::gil_regions`] read: the interpreter, the GIL holder's
    /// thread state (0: nobody) and the interpreter's first thread state; `None` when the head
    /// is not the interpreter the last walk found alone (the walk then reads them itself).
    fn gil_from(&self, copies: &[Option<&[u8]>]) -> Option<(usize, usize, usize)> {
        let [Some(head), Some(gil), Some(threads)] = copies[..] else { return None };
        let word = |b: &[u8], at: usize| b.get(at..at + 8).map(|w| usize::from_ne_bytes(w.try_into().unwrap()));
        let interp = word(head, 0)?;
        if self.last_interps[..] != [interp] {
            return None;
        }
        let o = self.o();
        let (locked, holder) = (o.interp_gil_locked as usize, o.interp_gil_holder as usize);
        let from = locked.min(holder);
        let is_locked = i32::from_ne_bytes(gil.get(locked - from..locked - from + 4)?.try_into().unwrap()) != 0;
        let holder = if is_locked { word(gil, holder - from)? } else { 0 };
        Some((interp, holder, word(threads, 0)?))
    }

    /// Reads who holds the GIL now, exactly from the interpreter, for the stack walk that
    /// follows: it marks the holder's trace (`owns_gil`), from the holder's thread state address,
    /// so the holder's thread id is not read here.
    pub fn read_gil_holder(&mut self) -> Result<()> {
        self.tick = None;
        // A program of one interpreter whose thread states the walk reads in one call: the walk
        // reads the interpreter list's head, the GIL and the thread list's head in that call too
        // (three system calls a tick fewer), microseconds after the kernel readings as before.
        self.fold_gil = self.gil_regions().is_some() && self.prev_tstates.len() > 1;
        if self.fold_gil {
            return Ok(());
        }
        let interps = self.interpreters()?;
        // The main interpreter is the last in the list (newest first).
        let ts = self.holder_tstate(interps[interps.len() - 1])?;
        self.tick = Some((interps, ts));
        Ok(())
    }

    /// The native ids of threads that have not run since they were last read, for the next
    /// walk (the sampler knows it from the scheduler's switch events): a thread that did not run
    /// cannot have changed its frames, so its stack from the previous walk is reused without a
    /// read, when its thread state still points at the same innermost frame.
    ///
    /// Of these, the threads in `elide` are left out of the walk's traces when their stack would
    /// be reused and they do not hold the GIL, and listed in [`Interpreter::elided`]: the
    /// sampler repeats their last sample.
    pub fn set_quiet(&mut self, tids: FxHashSet<u64>, elide: FxHashSet<u64>) {
        self.quiet = tids;
        self.elide = elide;
    }

    /// Forgets one thread ident's cached name.
    pub fn forget_thread_name(&mut self, ident: u64) {
        self.names.retain(|&(i, _), _| i != ident);
    }

    /// Forgets cached thread names, so that names set since are read.
    pub fn forget_thread_names(&mut self) {
        self.names.clear();
    }

    /// Every bound thread's stack, innermost frame first, in py-spy's form so that the sampler
    /// treats both readers alike. With `locals`, frames of functions carry their arguments (as
    /// `<Type at 0x…>`), which is how the sampler learns a thread's class.
    pub fn stack_traces(&mut self, locals: bool) -> Result<Vec<StackTrace>> {
        self.only = None;
        self.walk_threads(locals)
    }

    /// Like [`Interpreter::stack_traces`] with arguments, for the threads of `ids` (Python thread
    /// ids) only: the waits reader asks for the objects of a few threads' waits, and the other
    /// threads' frames and arguments are not read. The interpreters are the last walk's (this
    /// walk follows it within the tick), and the asyncio state the last walk read stands.
    pub fn stack_traces_of(&mut self, ids: HashSet<u64>) -> Result<Vec<StackTrace>> {
        self.only = Some(ids);
        let out = self.walk_threads(true);
        self.only = None;
        out
    }

    fn walk_threads(&mut self, locals: bool) -> Result<Vec<StackTrace>> {
        // The one buffer of thread states goes back whatever the walk's outcome: a walk that
        // failed half way (the target exiting, a state freed under it) must not leave the next
        // walk of some threads pointing into a buffer that is gone.
        // A full walk's copy is the only one a later walk of some threads may follow: the last
        // one's places are dropped before this one starts, so a failed walk leaves none.
        if self.only.is_none() {
            self.batch_at = StateCopy::default();
        }
        let mut batch = std::mem::take(&mut self.tstate_batch);
        let out = self.walk_threads_into(locals, &mut batch);
        self.tstate_batch = batch;
        out
    }

    fn walk_threads_into(&mut self, locals: bool, batch: &mut Vec<u8>) -> Result<Vec<StackTrace>> {
        let began = std::time::Instant::now();
        self.walk += 1;
        let filtered = self.only.is_some();
        let fold = std::mem::take(&mut self.fold_gil) && !filtered;
        let o = self.o().clone();
        let mut out = Vec::new();
        let mut visited = std::mem::take(&mut self.visited);
        visited.clear();
        let mut order = Vec::with_capacity(self.prev_tstates.len());
        let mut reused = 0;
        let mut reads = 0;
        // Every thread state the last walk met, in one call: the lists are followed through this
        // copy (their `next` fields as read now), and only a state new since then is read on its
        // own.
        let frame_field = o.tstate_cframe.unwrap_or(o.tstate_current_frame);
        // With asyncio's offsets, the read covers each thread's running task and list of tasks.
        let span = ([o.tstate_next, o.tstate_thread_id, o.tstate_native_thread_id, frame_field, o.tstate_datastack_chunk, o.tstate_base_frame].into_iter().max().unwrap_or(0) as usize + 8).max(self.asyncio_span());
        if !filtered {
            self.asyncio.threads.clear();
            self.elided.clear();
        }
        // Each state's place in `batch` (one buffer for all: a thousand states are a thousand
        // regions but no allocation each).
        let mut copies = StateCopy::default();
        let mut folded: Option<(usize, usize, usize)> = None;
        if filtered && !self.batch_at.states.is_empty() {
            // A walk of some threads follows the tick's full walk within microseconds: its copy
            // of the thread states stands (a thousand states are not read again for a few).
            copies = std::mem::take(&mut self.batch_at);
            copies.cursor = 0;
        } else if self.prev_tstates.len() > 1 {
            let gil = if fold { self.gil_regions() } else { None };
            let skip = gil.map_or(0, |g| g.len());
            let regions: Vec<(usize, usize)> = gil.into_iter().flatten().chain(self.prev_tstates.iter().map(|&a| (a, span))).collect();
            let (mut at, calls) = self.mem.bytes_many_into(&regions, batch);
            reads += calls;
            if skip > 0 {
                let parts: Vec<Option<&[u8]>> = at[..skip].iter().zip(&regions).map(|(o, &(_, len))| o.and_then(|o| batch.get(o..o + len))).collect();
                folded = self.gil_from(&parts);
                at.drain(..skip);
            }
            copies = StateCopy { states: self.prev_tstates.clone(), at, cursor: 0, index: None };
        }
        let (interps, tick_holder) = match (self.tick.take(), folded) {
            (Some((interps, holder)), _) => (interps, Some(holder)),
            (None, Some((interp, holder, _))) => (vec![interp], Some(holder)),
            // A walk of some threads: who holds the GIL is not asked of it.
            (None, None) if filtered && !self.last_interps.is_empty() => (self.last_interps.clone(), Some(0)),
            (None, None) => (self.interpreters()?, None),
        };
        let mut own: Vec<u8>;
        for (k, &interp) in interps.iter().enumerate() {
            let holder = match (k == interps.len() - 1, tick_holder) {
                (false, _) => 0,
                (true, Some(h)) => h,
                (true, None) => self.holder_tstate(interp).unwrap_or(0),
            };
            let mut ts = match folded {
                Some((i, _, head)) if i == interp => head,
                _ => self.mem.ptr(interp + o.interp_threads_head as usize)?,
            };
            let mut seen = 0;
            while ts != 0 && seen < MAX_THREADS && visited.insert(ts) {
                seen += 1;
                order.push(ts);
                // A copy too short for this walk's span (the full walk's span was narrower, the
                // asyncio offsets learned since) is not used: the state is read on its own.
                let head: &[u8] = match copies.find(ts).and_then(|o| batch.get(o..o + span)) {
                    Some(copy) => copy,
                    None => {
                        reads += 1;
                        own = self.mem.bytes(ts, span)?;
                        &own
                    }
                };
                let field = |off: u64| u64::from_ne_bytes(head[off as usize..off as usize + 8].try_into().unwrap());
                let next = field(o.tstate_next) as usize;
                let thread_id = field(o.tstate_thread_id);
                let native = field(o.tstate_native_thread_id);
                if thread_id == 0 || native == 0 {
                    // Created, not yet bound to an OS thread: no thread to report. The new thread
                    // binds its state itself (`bind_tstate`): it stores its ident, then calls
                    // gettid() and stores the native id. A read between the two stores saw an
                    // ident without a tid, which the sampler took for a thread of its own (tid 0,
                    // maybe another thread's cached name, two of them in one sample when two
                    // threads started together): the thread-churn flake on 3.13t. On Linux
                    // every bound thread has a native id, so a state without one is not bound yet.
                    ts = next;
                    continue;
                }
                if self.only.as_ref().is_some_and(|only| !only.contains(&thread_id)) {
                    ts = next;
                    continue;
                }
                // A thread the scheduler has not run since the last walk cannot have moved its
                // frames: on 3.11/3.12 its frame pointer (behind `cframe`) is not read again.
                // The innermost frame of its cached stack, looked up once (a thousand quiet
                // threads a tick).
                let cached_top: Option<usize> = match !locals && self.quiet.contains(&native) {
                    true => self.stacks.get(&(ts, thread_id)).map(|(chain, _)| chain.first().map_or(0, |f| f.addr)),
                    false => None,
                };
                let quiet = cached_top.is_some();
                let frame = match o.tstate_cframe {
                    None => field(o.tstate_current_frame) as usize,
                    Some(_) if quiet => cached_top.unwrap_or(0),
                    // 3.11, 3.12: tstate->cframe->current_frame.
                    Some(_) => match field(frame_field) as usize {
                        0 => 0,
                        cframe => {
                            reads += 1;
                            self.mem.ptr(cframe + o.tstate_current_frame as usize).unwrap_or(0)
                        }
                    },
                };
                if !filtered {
                    self.note_asyncio_thread(native, ts, head);
                }
                let chunk = if o.tstate_datastack_chunk != 0 { field(o.tstate_datastack_chunk) as usize } else { 0 };
                let base = if o.tstate_base_frame != 0 { field(o.tstate_base_frame) as usize } else { 0 };
                let reuse = quiet && frame != 0 && cached_top == Some(frame);
                reused += reuse as usize;
                if reuse && !filtered && ts != holder && self.elide.contains(&native) {
                    self.elided.push((thread_id, native));
                    ts = next;
                    continue;
                }
                let (frames, n) = match reuse {
                    true => (self.stacks[&(ts, thread_id)].1.clone(), 0),
                    false => self.frames((ts, thread_id), (chunk, base), frame, locals),
                };
                reads += n;
                let thread_name = self.thread_name(interp, thread_id, native);
                out.push(StackTrace { pid: self.pid as py_spy::Pid, thread_id, thread_name, os_thread_id: Some(native), active: true, owns_gil: ts == holder, frames, process_info: None });
                ts = next;
            }
        }
        // Threads that ended take their cached stacks with them (a walk that met the states the
        // last one did, and has no more stacks than states, has none to drop).
        if order != self.prev_tstates || self.stacks.len() > order.len() {
            self.stacks.retain(|(ts, _), _| visited.contains(ts));
        }
        self.visited = visited;
        // A full walk's copy is the one later walks of some threads follow; a walk of some
        // threads hands back the copy it borrowed (or the one it read into the buffer).
        self.batch_at = copies;
        self.prev_tstates = order;
        self.last_interps = interps;
        self.last_reads = reads;
        tracing::debug!(
            pid = self.pid,
            threads = out.len(),
            reads,
            reused,
            quiet = self.quiet.len(),
            elided = self.elided.len(),
            batched = self.prev_tstates.len(),
            frames = out.iter().map(|t| t.frames.len()).sum::<usize>(),
            elapsed_us = began.elapsed().as_micros() as u64,
            "stacks read through the debug offsets"
        );
        Ok(out)
    }

    /// The thread's frames, innermost first, and the system calls made. When the whole chain of
    /// frames is what it was at the previous tick, the previous stack is returned without
    /// decoding (not when `locals` are wanted: they change while the frames stay); see [`stack`].
    fn frames(&mut self, thread: (usize, u64), (chunk, base): (usize, usize), frame: usize, locals: bool) -> (Vec<Frame>, usize) {
        let o = self.o().clone();
        let (chain, mut reads) = stack::read_chain(&self.mem, &o, (chunk, base), frame);
        let stayed = match self.stacks.get(&thread) {
            Some((before, frames)) if !locals && *before == chain => return (frames.clone(), reads),
            Some((before, _)) => stack::unchanged_from_bottom(before, &chain),
            None => vec![false; chain.len()],
        };
        let mut frames = Vec::with_capacity(chain.len());
        for (raw, stayed) in chain.iter().zip(stayed) {
            if !raw.python || raw.executable == 0 {
                continue;
            }
            let Some((code, n)) = self.code(raw.executable, !stayed) else {
                continue;
            };
            reads += n;
            let (first, n) = self.bytecode_start(raw, &code);
            reads += n;
            let line = raw.instr.checked_sub(first).and_then(|lasti| linetable::line_at(&code.linetable, code.first_line, lasti / 2)).unwrap_or(code.first_line);
            let locals = if locals { self.arguments_if_unmoved(&code, raw) } else { None };
            frames.push(Frame { name: code.qualname, filename: code.filename, module: None, short_filename: None, line, locals, is_entry: false, is_shim_entry: false });
        }
        if !locals {
            self.stacks.insert(thread, (chain, frames.clone()));
        }
        (frames, reads)
    }

    /// Where the bytecode that `raw.instr` points into starts: the code object's own
    /// (`co_code_adaptive`), or on a free-threaded 3.14+ build the thread's copy
    /// (`co_tlbc->entries[tlbc_index]`, one read), and the system calls made.
    fn bytecode_start(&self, raw: &RawFrame, code: &Code) -> (usize, usize) {
        let o = self.o();
        let own = raw.executable + o.code_adaptive as usize;
        if raw.tlbc_index <= 0 || o.code_tlbc == 0 || code.tlbc == 0 {
            return (own, 0);
        }
        // _PyCodeArray: Py_ssize_t size; char *entries[].
        let at = code.tlbc + 8 + raw.tlbc_index as usize * 8;
        match self.mem.ptr(at) {
            Ok(p) if p != 0 => (p, 1),
            _ => (own, 1),
        }
    }

    /// The code object at `addr` and the system calls made: from the cache without a read
    /// unless `check` (it appears in a frame that did not stand at the previous tick) and it was
    /// not checked in this walk already; a checked entry whose fields changed (the address was
    /// reused by another code object) is read anew.
    fn code(&mut self, addr: usize, check: bool) -> Option<(Code, usize)> {
        let o = self.o().clone();
        if let Some((_, c, walk)) = self.codes.get(&addr) {
            if !check || *walk == self.walk {
                return Some((c.clone(), 0));
            }
        }
        // The object header and the code fields in one read.
        let head_len = (o.code_adaptive as usize).max(o.object_type as usize + 8).max(o.code_tlbc as usize + 8);
        let head = self.mem.bytes(addr, head_len).ok()?;
        let ptr = |off: u64| usize::from_ne_bytes(head[off as usize..off as usize + 8].try_into().unwrap());
        if let Some(ct) = self.code_type {
            if ptr(o.object_type) != ct {
                return None;
            }
        }
        let int = |off: u64| i32::from_ne_bytes(head[off as usize..off as usize + 4].try_into().unwrap());
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&ptr(o.code_filename).to_ne_bytes());
        key[8..16].copy_from_slice(&ptr(o.code_qualname).to_ne_bytes());
        key[16..24].copy_from_slice(&ptr(o.code_linetable).to_ne_bytes());
        key[24..28].copy_from_slice(&int(o.code_firstlineno).to_ne_bytes());
        let walk = self.walk;
        let tlbc = if o.code_tlbc != 0 { ptr(o.code_tlbc) } else { 0 };
        if let Some((k, c, checked)) = self.codes.get_mut(&addr) {
            if *k == key {
                *checked = walk;
                c.tlbc = tlbc;
                return Some((c.clone(), 1));
            }
        }
        let code = Code {
            qualname: self.mem.string(ptr(o.code_qualname)).ok()?,
            filename: self.mem.string(ptr(o.code_filename)).ok()?,
            first_line: int(o.code_firstlineno),
            linetable: self.mem.bytes_object(ptr(o.code_linetable)).ok()?,
            argcount: int(o.code_argcount).clamp(0, 256) as usize,
            localsplusnames: ptr(o.code_localsplusnames),
            tlbc,
        };
        self.codes.insert(addr, (key, code.clone(), walk));
        // The header, and each string's and the table's header and contents.
        Some((code, 7))
    }

    /// The frame's arguments ([`Interpreter::arguments`]) when the frame still runs the same code
    /// after they were read: the target is not paused, and a call that returned in between
    /// leaves its frame's address to the next call (`q.get()` returns, `fut.result()` is called:
    /// `self` read there is the future, not the queue). `None` when it moved.
    fn arguments_if_unmoved(&mut self, code: &Code, raw: &RawFrame) -> Option<Vec<LocalVariable>> {
        let args = self.arguments(code, raw.addr);
        let o = self.o();
        let now = self.mem.ptr(raw.addr + o.frame_executable as usize).ok()?;
        let now = if o.executable_is_stackref { now & !3 } else { now };
        (now == raw.executable).then_some(args)
    }

    /// A frame's local variables, arguments first (flagged), each bound one as `<Type at 0x…>`:
    /// the waits reader looks up `self` of a synchronisation method, and for a thread blocked in
    /// C right in the program's code (`with lock:`) the local the line names. Names come from
    /// `co_localsplusnames`, cached per code object; the values are read in one call. (A cell
    /// variable's value is its cell.)
    fn arguments(&mut self, code: &Code, frame: usize) -> Vec<LocalVariable> {
        const MAX_LOCALS: usize = 256;
        let names = match self.local_names.get(&code.localsplusnames) {
            Some(n) => n.clone(),
            None => {
                let items = self.mem.tuple_items(code.localsplusnames).unwrap_or_default();
                let n: Vec<Option<String>> = items.iter().take(MAX_LOCALS).map(|&name| self.mem.string(name).ok()).collect();
                self.local_names.insert(code.localsplusnames, n.clone());
                n
            }
        };
        if names.is_empty() {
            return Vec::new();
        }
        let o = self.o();
        let Ok(raw) = self.mem.bytes(frame + o.frame_localsplus as usize, names.len() * 8) else { return Vec::new() };
        let stackref = o.executable_is_stackref;
        let type_at = o.object_type as usize;
        let values: Vec<usize> = (0..names.len())
            .map(|i| {
                let value = usize::from_ne_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap());
                // 3.14+: a `_PyStackRef`. Tag 3 is a tagged int (no object); tag 1 a deferred
                // reference to the object at the rest of the bits.
                match stackref {
                    true if value & 3 == 3 => 0,
                    true => value & !3,
                    false => value,
                }
            })
            .collect();
        // Every value's type pointer in one read; the types' names from this walk's cache (a
        // thousand threads' frames hold a handful of types between them).
        let regions: Vec<(usize, usize)> = values.iter().map(|&v| (if v == 0 { 0 } else { v + type_at }, 8)).collect();
        let mut buf = Vec::new();
        let (at, _) = self.mem.bytes_many_into(&regions, &mut buf);
        let mut out = Vec::new();
        for (i, name) in names.into_iter().enumerate() {
            let Some(name) = name else { continue };
            let value = values[i];
            let arg = i < code.argcount;
            if value == 0 && !arg {
                continue;
            }
            let ty = at[i].map(|o| usize::from_ne_bytes(buf[o..o + 8].try_into().unwrap()));
            let repr = ty.and_then(|ty| self.type_name_of(ty)).map(|t| format!("<{t} at 0x{value:x}>"));
            out.push(LocalVariable { name, addr: value, arg, repr });
        }
        out
    }

    /// The name of the type object at `ty`, read once per walk (a type can be freed and its
    /// address reused between walks, not within one as far as it matters here).
    fn type_name_of(&mut self, ty: usize) -> Option<String> {
        if let Some((walk, name)) = self.type_names.get(&ty) {
            if *walk == self.walk {
                return Some(name.clone());
            }
        }
        let name = self.mem.type_object_name(ty).ok()?;
        if self.type_names.len() > 4096 {
            self.type_names.clear();
        }
        self.type_names.insert(ty, (self.walk, name.clone()));
        Some(name)
    }

    /// The thread's name from `threading._active`, cached by Python thread id (also when absent:
    /// [`Interpreter::forget_thread_names`] clears it).
    fn thread_name(&mut self, interp: usize, thread_id: u64, native: u64) -> Option<String> {
        if let Some(n) = self.names.get(&(thread_id, native)) {
            return n.clone();
        }
        let began = std::time::Instant::now();
        let names = self.read_thread_names(interp).unwrap_or_default();
        tracing::debug!(pid = self.pid, names = names.len(), elapsed_us = began.elapsed().as_micros() as u64, "thread names read from threading._active");
        for (key, name) in &names {
            self.names.insert(*key, Some(name.clone()));
        }
        let name = names.get(&(thread_id, native)).cloned();
        self.names.entry((thread_id, native)).or_insert(name).clone()
    }

    /// Every registered thread's name in `threading._active`, by (ident, `_native_id`). The
    /// thread states this walk read were read before the dict: a thread that ended since can have
    /// handed its ident to a new thread already registered here, and the native id tells them
    /// apart (thread churn gave one thread the next one's name otherwise).
    fn read_thread_names(&mut self, interp: usize) -> Result<HashMap<(u64, u64), String>> {
        let type_at = self.mem.layout().object_type as usize;
        let cached = self.active.filter(|&(dict, ty)| self.mem.ptr(dict + type_at).is_ok_and(|t| t == ty)).map(|(dict, _)| dict);
        let active = match cached {
            Some(dict) => dict,
            None => {
                self.active = None;
                let modules = self.mem.ptr(interp + self.o().interp_imports_modules as usize)?;
                let Some(threading) = self.mem.dict_get(modules, "threading")? else { return Ok(HashMap::new()) };
                let globals = self.mem.module_dict(threading)?;
                let Some(active) = self.mem.dict_get(globals, "_active")? else { return Ok(HashMap::new()) };
                self.active = Some((active, self.mem.ptr(active + type_at)?));
                active
            }
        };
        // Every thread's `_name` and its text in a few batched reads (see `attributes_many`).
        let items = self.mem.dict_items(active)?;
        let threads: Vec<usize> = items.iter().map(|&(_, t)| t).collect();
        let keys: Vec<usize> = items.iter().map(|&(k, _)| k).collect();
        let ids = self.mem.longs_many(&keys);
        let names = self.mem.strings_many(&self.mem.attributes_many(&threads, "_name"));
        let native_ids: Vec<usize> = self.mem.attributes_many(&threads, "_native_id").into_iter().map(|a| a.unwrap_or(0)).collect();
        let natives = self.mem.longs_many(&native_ids);
        // The program runs on while this is read: a thread that ended meanwhile leaves
        // `_active`, and its ident object and its Thread object may already be another
        // thread's (idents and addresses are reused under churn), which would give one thread
        // another's name. Only entries still in the dict after the reads are kept: the dict holds
        // their key and value alive, so what was read of them is theirs.
        let still: std::collections::HashSet<(usize, usize)> = self.mem.dict_items(active)?.into_iter().collect();
        Ok(items
            .iter()
            .zip(ids.into_iter().zip(names).zip(natives))
            .filter(|(item, _)| still.contains(item))
            .filter_map(|(_, ((id, name), native))| Some(((id?, native?), name?)))
            .collect())
    }
}
