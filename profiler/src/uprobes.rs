//! Every lock acquisition, exact (`record --exact-locks`): kernel uprobes on the interpreter's
//! lock functions, read through `perf_event_open` like the scheduler's events (`sched.rs`).
//!
//! The functions (docs/sections.md, "Exact lock events", says per version why they catch
//! `threading.Lock`, `RLock`, `Condition`, `Semaphore`, `Event` and `queue.Queue`):
//! acquires `PyThread_acquire_lock_timed`, `PyThread_acquire_lock_timed_with_retries` and
//! `_PyMutex_LockTimed` get a uprobe (the call, with the lock's address in the first argument
//! register) and a uretprobe (the return, whose value says whether the lock was taken); releases
//! `PyThread_release_lock` and `_PyMutex_TryUnlock` get a uprobe. Each is looked up by name in
//! the symbol tables (`.symtab`, else `.dynsym`) of the file that defines it — libpython when the
//! interpreter is built shared, else the executable — read through `/proc/<pid>/root`; the probe
//! goes at its file offset (`vaddr − segment vaddr + segment file offset`).
//!
//! A file without `.symtab` (a stripped distribution build: Debian's 3.11, 3.14, 3.15) has the
//! lock functions inlined into the lock methods by link-time optimisation, so there the C
//! functions of `_thread.lock`'s and `_thread.RLock`'s methods are probed instead, found from the
//! types' specs in the file's data (`lockmethods.rs`): the lock is then the object (`self`, the
//! first argument), an acquire's return is `Py_True` when it took it, and an `RLock`'s level is
//! counted here ([`Pairs`]) so that only its outermost release frees it.
//!
//! Opened per CPU for every task (pid −1), not per target thread: a uprobe is a breakpoint in the
//! file's pages, so a CPU-wide event fires for whichever process runs that code, and the events of
//! the target's processes are kept by their process id (`PERF_SAMPLE_TID`). A per-task event
//! (pid = the target) would watch one thread only, and `inherit` reaches only threads created
//! after it was opened (and forbids the shared ring buffer), so the threads already running would
//! need an event each, found by polling `/proc`. Other processes running the same interpreter
//! binary pay the probes' cost while recording (their events are dropped).
//!
//! Each record carries `PERF_SAMPLE_IDENTIFIER | TID | TIME | REGS_USER` (rax, rdi) on
//! `CLOCK_MONOTONIC`. A return carries no argument, so it is paired with its thread's call of the
//! same function (the events are sorted by time first: a thread that moved to another CPU may have
//! its call and return in different buffers). x86_64 only (the argument and return registers).
//!
//! Permission: the kernel's uprobe PMU needs `CAP_PERFMON` or `CAP_SYS_ADMIN` (root);
//! `perf_event_paranoid` does not open it to others.

use crate::perfring::{self, online_cpus, Ring};
use crate::run::{LockEvent, LockInfo};
use crate::lockevents::kind;
use perf_event_open_sys as sys;
use std::collections::HashMap;
use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The lock functions probed, by name, and whether each acquires (call + return) or releases.
pub const FUNCTIONS: &[(&str, Role)] = &[
    ("PyThread_acquire_lock_timed", Role::Acquire),
    ("PyThread_acquire_lock_timed_with_retries", Role::Acquire),
    ("_PyMutex_LockTimed", Role::Acquire),
    ("PyThread_release_lock", Role::Release),
    ("_PyMutex_TryUnlock", Role::Release),
];

/// What a probed function does to the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Takes it (call + return): `lock.acquire`, `_PyMutex_LockTimed`.
    Acquire,
    /// Frees it.
    Release,
    /// `RLock.acquire`/`__enter__` (method probes): takes it, or counts one more level when its
    /// thread holds it already.
    RecursiveAcquire,
    /// `RLock.release`/`__exit__` (method probes): frees it when the last level goes.
    RecursiveRelease,
    /// `RLock._release_save` (`Condition.wait`): frees it whatever the level, which is kept.
    ReleaseAll,
    /// `RLock._acquire_restore`: takes it back at the kept level (returns `None`).
    Restore,
}

impl Role {
    /// The function takes the lock: its return is probed too.
    pub fn acquires(self) -> bool {
        matches!(self, Role::Acquire | Role::RecursiveAcquire | Role::Restore)
    }
}

/// How an acquire function's return value says it took the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// `PyLockStatus`: `PY_LOCK_ACQUIRED` = 1 (FAILURE 0, INTR 2).
    Status,
    /// A method returning `Py_True` (at this address in the target), `Py_False` or NULL.
    IsTrue(u64),
    /// A method returning `None` (any object), or NULL on an error.
    NotNull,
}

impl Taken {
    fn taken(self, ax: u64) -> bool {
        match self {
            Taken::Status => ax as u32 == 1,
            Taken::IsTrue(t) => ax == t,
            Taken::NotNull => ax != 0,
        }
    }
}

/// How often the drain thread empties the buffers when they do not fill up first.
const DRAIN_EVERY: Duration = Duration::from_millis(10);
/// Events newer than this wait before they are paired and handed over: another CPU's buffer may
/// still hold older events of the same thread.
const HOLD_BACK_NS: u64 = 30_000_000;
/// The default cap on kept events per second (over one-second windows) before the probes are
/// stopped: at the 2–12 µs per event docs/benchmarks.md measured (a trap per probe hit, two for an
/// acquire's return and for an instruction the kernel cannot emulate), 20 000 events a second cost
/// the program at most about 13 % (24 % on 3.14/3.15, whose probed functions begin with `endbr64`).
pub const DEFAULT_CAP_PER_S: u64 = 20_000;

/// x86_64 `perf_regs` indexes of the registers read: rax (return value) and rdi (first argument).
const REG_AX: u64 = 0;
const REG_DI: u64 = 5;

/// One function to probe: where it is and what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub name: String,
    pub role: Role,
    pub taken: Taken,
    /// The file as the kernel can open it (through `/proc/<pid>/root`).
    pub path: String,
    /// The path as the program names it.
    pub shown: String,
    pub offset: u64,
}

/// Why exact lock events cannot be recorded by this user, as one sentence, or `None`.
pub fn not_permitted() -> Option<String> {
    const CAP_SYS_ADMIN: u64 = 1 << 21;
    const CAP_PERFMON: u64 = 1 << 38;
    let caps = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("CapEff:").map(|v| u64::from_str_radix(v.trim(), 16).unwrap_or(0))))
        .unwrap_or(0);
    if caps & (CAP_SYS_ADMIN | CAP_PERFMON) != 0 {
        return None;
    }
    Some("exact lock events are not recorded: the kernel lets only root (CAP_PERFMON or CAP_SYS_ADMIN) put uprobes on the interpreter's lock functions; run as root, or record without --exact-locks (sections then come from samples)".into())
}

/// The file offset of virtual address `vaddr` in an ELF file: in the `PT_LOAD` segment that
/// holds it, `vaddr − p_vaddr + p_offset`.
pub fn file_offset(elf: &goblin::elf::Elf, vaddr: u64) -> Option<u64> {
    elf.program_headers
        .iter()
        .filter(|ph| ph.p_type == goblin::elf::program_header::PT_LOAD)
        .find(|ph| vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
        .map(|ph| vaddr - ph.p_vaddr + ph.p_offset)
}

/// The lock functions an ELF file defines, with their file offsets, and whether they were found
/// in `.symtab` (the full symbol table, which a stripped file lacks).
pub fn probes_in(bytes: &[u8]) -> Result<(Vec<(&'static str, Role, u64)>, bool), String> {
    let elf = goblin::elf::Elf::parse(bytes).map_err(|e| format!("not an ELF file the recorder can read ({e})"))?;
    let mut found: HashMap<&str, u64> = HashMap::new();
    let mut in_symtab = false;
    let tables = [(&elf.syms, &elf.strtab, true), (&elf.dynsyms, &elf.dynstrtab, false)];
    for (syms, strs, full) in tables {
        for sym in syms.iter() {
            if sym.st_value == 0 || sym.st_shndx == 0 || !sym.is_function() {
                continue;
            }
            let Some(name) = strs.get_at(sym.st_name) else { continue };
            if let Some(&(n, role)) = FUNCTIONS.iter().find(|(n, _)| *n == name) {
                found.entry(n).or_insert(sym.st_value);
                in_symtab |= full && role == Role::Acquire;
            }
        }
    }
    let mut out = Vec::new();
    for &(name, role) in FUNCTIONS {
        if let Some(&vaddr) = found.get(name) {
            let off = file_offset(&elf, vaddr).ok_or_else(|| format!("{name} at {vaddr:#x} lies in no loaded segment"))?;
            out.push((name, role, off));
        }
    }
    Ok((out, in_symtab))
}

/// How the probes are chosen: by the rule (`None`), or as `THREADRADAR_LOCK_PROBES` says
/// (`symbols` or `methods`; for tests that check one kind on an interpreter the rule gives the
/// other).
fn forced() -> Option<String> {
    std::env::var("THREADRADAR_LOCK_PROBES").ok().filter(|v| v == "symbols" || v == "methods")
}

/// The load bias of file `shown` in process `pid`: where its first mapping starts minus the
/// (page-aligned) address of the segment mapped there.
fn load_bias(maps: &[proc_maps::MapRange], shown: &str, bytes: &[u8]) -> Option<u64> {
    let elf = goblin::elf::Elf::parse(bytes).ok()?;
    let page = |v: u64| v & !0xfff;
    maps.iter().filter(|m| m.filename().and_then(|f| f.to_str()) == Some(shown)).find_map(|m| {
        let ph = elf.program_headers.iter().find(|ph| ph.p_type == goblin::elf::program_header::PT_LOAD && page(ph.p_offset) == m.offset as u64)?;
        Some((m.start() as u64).wrapping_sub(page(ph.p_vaddr)))
    })
}

/// A file mapped read-only: an unstripped interpreter is 30–40 MB, of which the symbol tables and
/// the lock types' data are a few pages. Reading it whole took 0.1 s on an idle machine and over
/// 1 s on a loaded one, all of it before the first probe was in place.
fn map_file(path: &str) -> std::io::Result<memmap2::Mmap> {
    let file = std::fs::File::open(path)?;
    // SAFETY: the mapping is private and read-only; an executable or shared library that a
    // running process has mapped is not rewritten in place (writers replace the file, and the
    // kernel refuses writes to a running executable with ETXTBSY), so its bytes do not change
    // under us while the mapping lives (it is dropped at the end of `probes_for`).
    unsafe { memmap2::Mmap::map(&file) }
}

/// The probes of process `pid`'s interpreter, from its libpython when one is mapped and defines
/// them, else from its executable. By name (the lock functions) when the file has its full symbol
/// table; else (a stripped distribution build, whose lock methods have the lock functions inlined:
/// `lockmethods.rs`) on the C functions of the lock types' methods. One sentence when there are none.
pub fn probes_for(pid: u32) -> Result<Vec<Probe>, String> {
    let maps = proc_maps::get_process_maps(pid as proc_maps::Pid).map_err(|e| format!("cannot read /proc/{pid}/maps ({e})"))?;
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).map_err(|e| format!("cannot read /proc/{pid}/exe ({e})"))?;
    let mut files: Vec<String> = maps
        .iter()
        .filter_map(|m| m.filename().and_then(|f| f.to_str()).map(str::to_string))
        .filter(|f| Path::new(f).file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libpython")))
        .collect();
    files.dedup();
    files.extend(exe.to_str().map(str::to_string));
    let force = forced();
    let mut why = Vec::new();
    for shown in files {
        let path = format!("/proc/{pid}/root{shown}");
        let Ok(map) = map_file(&path) else { continue };
        let bytes: &[u8] = &map;
        let (symbols, in_symtab) = probes_in(bytes).map_err(|e| format!("{shown}: {e}"))?;
        let by_name = |symbols: Vec<(&'static str, Role, u64)>| {
            symbols.into_iter().map(|(name, role, offset)| Probe { name: name.to_string(), role, taken: Taken::Status, path: path.clone(), shown: shown.clone(), offset }).collect::<Vec<_>>()
        };
        let has_acquire = symbols.iter().any(|p| p.1 == Role::Acquire);
        if has_acquire && (force.as_deref() == Some("symbols") || (force.is_none() && in_symtab)) {
            return Ok(by_name(symbols));
        }
        match crate::lockmethods::methods_in(bytes) {
            Ok(found) => {
                let bias = if found.relocatable {
                    load_bias(&maps, &shown, bytes).ok_or_else(|| format!("cannot tell where {shown} is loaded in process {pid} (/proc/{pid}/maps)"))?
                } else {
                    0
                };
                let taken = |role: Role| if role == Role::Restore { Taken::NotNull } else { Taken::IsTrue(found.py_true.wrapping_add(bias)) };
                return Ok(found.methods.into_iter().map(|m| Probe { name: m.name, role: m.role, taken: taken(m.role), path: path.clone(), shown: shown.clone(), offset: m.offset }).collect());
            }
            // The functions by name from `.dynsym` (exported): what a stripped build offers when
            // its lock types were not found.
            Err(_) if has_acquire && force.is_none() => return Ok(by_name(symbols)),
            Err(e) => why.push(format!("{shown}: {e}")),
        }
    }
    Err(format!(
        "process {pid}'s interpreter defines none of the lock functions ({}) in its symbol tables, and its lock methods were not found{}",
        FUNCTIONS.iter().map(|f| f.0).collect::<Vec<_>>().join(", "),
        if why.is_empty() { String::new() } else { format!(" ({})", why.join("; ")) }
    ))
}

/// Opens a uprobe (or uretprobe) at `path` + `offset` on `cpu`, for every task.
fn open_probe(uprobe_type: u32, path: &CString, offset: u64, ret: bool, cpu: i32) -> Result<i32, std::io::Error> {
    let mut attr = sys::bindings::perf_event_attr::default();
    attr.type_ = uprobe_type;
    // `config` bit 0 is `retprobe` (/sys/bus/event_source/devices/uprobe/format/retprobe).
    attr.config = ret as u64;
    attr.uprobe_path = path.as_ptr() as u64;
    attr.probe_offset = offset;
    attr.sample_period = 1;
    attr.sample_type = (sys::bindings::PERF_SAMPLE_IDENTIFIER | sys::bindings::PERF_SAMPLE_TID | sys::bindings::PERF_SAMPLE_TIME | sys::bindings::PERF_SAMPLE_REGS_USER) as u64;
    attr.sample_regs_user = 1 << REG_AX | 1 << REG_DI;
    perfring::ring_event(&mut attr);
    perfring::open(&mut attr, -1, cpu)
}

fn event_id(fd: i32) -> Option<u64> {
    let mut id = 0u64;
    // SAFETY: PERF_EVENT_IOC_ID writes one u64 through the pointer, which points at `id`, alive
    // and writable for the call; `fd` is an open perf event of ours.
    (unsafe { sys::ioctls::ID(fd, &mut id) } >= 0).then_some(id)
}

/// What a probe's event is: which function, and a call or a return.
#[derive(Clone, Copy, Debug)]
struct Meaning {
    func: u16,
    role: Role,
    taken: Taken,
    ret: bool,
}

/// A decoded record of a target thread, before pairing.
#[derive(Clone, Copy, Debug)]
struct Raw {
    t: u64,
    tid: u32,
    m: Meaning,
    ax: u64,
    di: u64,
}

#[derive(Default)]
struct Shared {
    events: Vec<LockEvent>,
    stopped: Option<(String, u64)>,
    kept: u64,
}

/// Records the lock functions' calls and returns in a thread of its own until [`LockRecorder::stop`].
pub struct LockRecorder {
    stop: Arc<AtomicBool>,
    lost: Arc<AtomicU64>,
    shared: Arc<Mutex<Shared>>,
    thread: Option<std::thread::JoinHandle<()>>,
    probes: Vec<String>,
    start_mono_ns: Arc<AtomicU64>,
}

impl LockRecorder {
    /// Puts the probes of `pid`'s interpreter on every online CPU and starts draining them.
    /// `pids` are the processes whose events count (the sampler adds to it); `start_mono_ns` is
    /// `CLOCK_MONOTONIC` at the run's t = 0; `cap_per_s` the events per second beyond which the
    /// probes are stopped. Fails with one sentence when the kernel does not let us.
    pub fn start(pid: u32, pids: Arc<Mutex<Vec<u32>>>, start_mono_ns: Arc<AtomicU64>, cap_per_s: u64) -> Result<LockRecorder, String> {
        if let Some(why) = not_permitted() {
            return Err(why);
        }
        let off = |why: &str| format!("exact lock events are not recorded: {why}; sections come from samples");
        let ty: u32 = std::fs::read_to_string("/sys/bus/event_source/devices/uprobe/type")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| off("the kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe/type; CONFIG_UPROBE_EVENTS)"))?;
        let probes = probes_for(pid).map_err(|e| off(&e))?;
        let mut meaning: HashMap<u64, Meaning> = HashMap::new();
        let mut rings = Vec::new();
        for cpu in online_cpus() {
            let mut fds = Vec::new();
            for (i, p) in probes.iter().enumerate() {
                let path = CString::new(p.path.clone()).map_err(|_| off("a path with a NUL byte"))?;
                for ret in [false, true] {
                    if ret && !p.role.acquires() {
                        continue;
                    }
                    let fd = match open_probe(ty, &path, p.offset, ret, cpu) {
                        Ok(fd) => fd,
                        // A process that has exited (a zombie too) has no root to resolve the path through.
                        Err(_) if std::fs::read_link(format!("/proc/{pid}/root")).is_err() => {
                            perfring::close_all(&fds);
                            return Err(off(&format!("process {pid} ended before the probes were in place")));
                        }
                        Err(e) => {
                            perfring::close_all(&fds);
                            return Err(off(&format!("perf_event_open of a {} on {}+{:#x} (CPU {cpu}) failed ({e})", if ret { "uretprobe" } else { "uprobe" }, p.name, p.offset)));
                        }
                    };
                    fds.push(fd);
                    let id = event_id(fd).ok_or_else(|| off("PERF_EVENT_IOC_ID failed"))?;
                    meaning.insert(id, Meaning { func: i as u16, role: p.role, taken: p.taken, ret });
                }
            }
            rings.push(Ring::new(fds).map_err(|e| off(&format!("cannot map the ring buffer of CPU {cpu} ({e})")))?);
        }
        for r in &rings {
            r.enable(true);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let lost = Arc::new(AtomicU64::new(0));
        let shared = Arc::new(Mutex::new(Shared::default()));
        let (s, l, sh, st) = (stop.clone(), lost.clone(), shared.clone(), start_mono_ns.clone());
        let thread = std::thread::Builder::new()
            .name("threadradar-locks".into())
            .spawn(move || {
                let mut d = Drain { rings, meaning, pids, start_mono_ns: st, lost: l, out: sh, pending: Vec::new(), pairs: Pairs::default(), cap_per_s, window: (0, 0), capped: false };
                d.run(&s)
            })
            .map_err(|e| off(&format!("cannot start the drain thread ({e})")))?;
        let probes = probes.iter().map(|p| format!("{}@{}+{:#x}", p.name, p.shown, p.offset)).collect();
        Ok(LockRecorder { stop, lost, shared, thread: Some(thread), probes, start_mono_ns })
    }

    fn info(&self, sh: &Shared) -> LockInfo {
        LockInfo {
            source: "uprobes".into(),
            probes: self.probes.clone(),
            monotonic_at_start_ns: self.start_mono_ns.load(Ordering::Relaxed),
            events: sh.kept,
            lost_events: self.lost.load(Ordering::Relaxed),
            stopped: sh.stopped.as_ref().map(|s| s.0.clone()),
            stopped_at_ns: sh.stopped.as_ref().map(|s| s.1),
        }
    }

    /// The events paired so far, in time order, and how they were recorded.
    pub fn take(&self) -> (Vec<LockEvent>, LockInfo) {
        let mut sh = self.shared.lock().unwrap();
        let events = std::mem::take(&mut sh.events);
        (events, self.info(&sh))
    }

    /// Stops recording, drains and pairs what is left and returns it.
    pub fn stop(mut self) -> (Vec<LockEvent>, LockInfo) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.take()
    }
}

impl Drop for LockRecorder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Pairs returns with calls: per thread and function, the lock addresses of the calls not
/// returned from yet. For an `RLock` probed by its methods, also who holds it at what level, so
/// that only the outermost release frees it (as `PyThread_release_lock` is called only then).
#[derive(Default)]
struct Pairs {
    open: HashMap<(u32, u16), Vec<u64>>,
    /// `RLock` (method probes): its owner and level.
    owner: HashMap<u64, (u32, u32)>,
    /// The level `_release_save` took away, per (thread, lock), for `_acquire_restore`.
    saved: HashMap<(u32, u64), u32>,
}

impl Pairs {
    /// The lock event a record means, once its call is known.
    fn event(&mut self, r: &Raw) -> Option<LockEvent> {
        let (t, tid) = (r.t, r.tid);
        let released = |lock| Some(LockEvent { t, tid, kind: kind::RELEASED, lock });
        match (r.m.role, r.m.ret) {
            (Role::Release, _) => released(r.di),
            (Role::RecursiveRelease, _) => match self.owner.get(&r.di).copied() {
                // Not the owner's: it raises and frees nothing.
                Some((owner, _)) if owner != tid => None,
                Some((owner, level)) if level > 1 => {
                    self.owner.insert(r.di, (owner, level - 1));
                    None
                }
                _ => {
                    self.owner.remove(&r.di);
                    released(r.di)
                }
            },
            (Role::ReleaseAll, _) => match self.owner.get(&r.di).copied() {
                Some((owner, _)) if owner != tid => None,
                held => {
                    self.owner.remove(&r.di);
                    self.saved.insert((tid, r.di), held.map_or(1, |h| h.1));
                    released(r.di)
                }
            },
            (_, false) => {
                self.open.entry((tid, r.m.func)).or_default().push(r.di);
                Some(LockEvent { t, tid, kind: kind::CALL, lock: r.di })
            }
            (role, true) => {
                // A return without its call (the call came before the recording) is dropped.
                let lock = self.open.get_mut(&(tid, r.m.func))?.pop()?;
                let taken = r.m.taken.taken(r.ax);
                if taken {
                    match role {
                        Role::RecursiveAcquire => {
                            let level = self.owner.get(&lock).filter(|o| o.0 == tid).map_or(0, |o| o.1);
                            self.owner.insert(lock, (tid, level + 1));
                        }
                        Role::Restore => {
                            let level = self.saved.remove(&(tid, lock)).unwrap_or(1);
                            self.owner.insert(lock, (tid, level));
                        }
                        _ => {}
                    }
                }
                Some(LockEvent { t, tid, kind: if taken { kind::ACQUIRED } else { kind::FAILED }, lock })
            }
        }
    }
}

struct Drain {
    rings: Vec<Ring>,
    meaning: HashMap<u64, Meaning>,
    pids: Arc<Mutex<Vec<u32>>>,
    start_mono_ns: Arc<AtomicU64>,
    lost: Arc<AtomicU64>,
    out: Arc<Mutex<Shared>>,
    /// Records read but not paired yet (held back until older than [`HOLD_BACK_NS`]).
    pending: Vec<Raw>,
    pairs: Pairs,
    cap_per_s: u64,
    /// The current one-second window of the cap: its start (ns) and the events kept in it.
    window: (u64, u64),
    /// The cap was passed: the events are disabled and are closed by the next round.
    capped: bool,
}

impl Drain {
    fn run(&mut self, stop: &AtomicBool) {
        let mut pfds: Vec<libc::pollfd> = self.rings.iter().map(|r| libc::pollfd { fd: r.fds[0], events: libc::POLLIN, revents: 0 }).collect();
        loop {
            let stopping = stop.load(Ordering::Relaxed);
            if self.capped && !self.rings.is_empty() {
                // A disabled uprobe still traps (its breakpoint stays in the program until the
                // event is closed): read what is left, then close the events.
                let pids = self.pids.lock().unwrap().clone();
                let rings = std::mem::take(&mut self.rings);
                for ring in &rings {
                    ring.for_each(|typ, rec| self.record(typ, rec, &pids));
                }
                drop(rings);
                pfds.clear();
            }
            let pids = self.pids.lock().unwrap().clone();
            let rings = std::mem::take(&mut self.rings);
            for ring in &rings {
                ring.for_each(|typ, rec| self.record(typ, rec, &pids));
            }
            self.rings = rings;
            let now = crate::sched::monotonic_ns().saturating_sub(self.start_mono_ns.load(Ordering::Relaxed));
            self.pair(if stopping { None } else { Some(now.saturating_sub(HOLD_BACK_NS)) });
            if stopping {
                return;
            }
            if pfds.is_empty() {
                std::thread::sleep(DRAIN_EVERY);
                continue;
            }
            // SAFETY: `pfds` is a live Vec of `pfds.len()` initialised pollfds, borrowed mutably
            // for the call (the kernel writes `revents`); their fds belong to `self.rings`, open
            // while `self` lives (cleared before the rings are closed). Wakes early when a buffer
            // passes its watermark.
            unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, DRAIN_EVERY.as_millis() as i32) };
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Pairs the held-back records up to `cut` (all without one) in time order and hands the
    /// events over; stops the probes when the events of the last second pass the cap.
    fn pair(&mut self, cut: Option<u64>) {
        self.pending.sort_by_key(|r| r.t);
        let n = cut.map_or(self.pending.len(), |cut| self.pending.partition_point(|r| r.t <= cut));
        let mut events = Vec::with_capacity(n);
        for r in self.pending.drain(..n) {
            events.extend(self.pairs.event(&r));
        }
        let Some(last) = events.last().map(|e| e.t) else { return };
        if last.saturating_sub(self.window.0) >= 1_000_000_000 {
            self.window = (last, 0);
        }
        self.window.1 += events.len() as u64;
        let mut out = self.out.lock().unwrap();
        out.kept += events.len() as u64;
        out.events.append(&mut events);
        if self.window.1 > self.cap_per_s && out.stopped.is_none() {
            for r in &self.rings {
                r.enable(false);
            }
            self.capped = true;
            let why = format!(
                "exact lock events stopped at {:.1} s: more than {} events in one second (the cap, --exact-locks-cap) would slow the program down too much; sections after that come from samples",
                last as f64 / 1e9,
                self.cap_per_s
            );
            out.stopped = Some((why, last));
        }
    }

    fn record(&mut self, typ: u32, rec: &[u8], pids: &[u32]) {
        let Some(f) = perfring::sample(typ, rec, &self.lost) else { return };
        let (u32_at, u64_at) = (|o| f.u32_at(o), |o| f.u64_at(o));
        // header(8) | id u64 | pid u32, tid u32 | time u64 | abi u64 | rax u64 | rdi u64
        let (Some(id), Some(pid), Some(tid), Some(time), Some(abi)) = (u64_at(8), u32_at(16), u32_at(20), u64_at(24), u64_at(32)) else { return };
        if !pids.contains(&pid) || abi == 0 {
            return;
        }
        let (Some(&m), Some(ax), Some(di)) = (self.meaning.get(&id), u64_at(40), u64_at(48)) else { return };
        let Some(t) = time.checked_sub(self.start_mono_ns.load(Ordering::Relaxed)) else { return };
        self.pending.push(Raw { t, tid, m, ax, di });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_pair_with_their_own_threads_calls() {
        let mut p = Pairs::default();
        let call = Meaning { func: 0, role: Role::Acquire, taken: Taken::Status, ret: false };
        let ret = Meaning { ret: true, ..call };
        let rel = Meaning { func: 3, role: Role::Release, taken: Taken::Status, ret: false };
        let ev = |p: &mut Pairs, t, tid, m, ax, di| p.event(&Raw { t, tid, m, ax, di });
        assert_eq!(ev(&mut p, 1, 7, ret, 1, 0), None, "a return whose call came before the recording");
        assert_eq!(ev(&mut p, 2, 7, call, 0, 0xa0).unwrap().kind, kind::CALL);
        assert_eq!(ev(&mut p, 3, 8, call, 0, 0xa0).unwrap().kind, kind::CALL);
        let a = ev(&mut p, 4, 7, ret, 1, 0xdead).unwrap();
        assert_eq!((a.kind, a.lock), (kind::ACQUIRED, 0xa0), "the lock of the call, not rdi at the return");
        assert_eq!(ev(&mut p, 5, 8, ret, 0, 0).unwrap().kind, kind::FAILED);
        let r = ev(&mut p, 6, 7, rel, 0, 0xa0).unwrap();
        assert_eq!((r.kind, r.lock), (kind::RELEASED, 0xa0));
    }

    /// Method probes of an `RLock`: entered twice, only the outer release frees it; a
    /// `Condition.wait` (`_release_save`, `_acquire_restore`) frees and takes it back at its level;
    /// a release by a thread that does not hold it frees nothing.
    #[test]
    fn an_rlock_is_freed_by_its_outermost_release() {
        const TRUE: u64 = 0x9000;
        let mut p = Pairs::default();
        let m = |func, role| Meaning { func, role, taken: if role == Role::Restore { Taken::NotNull } else { Taken::IsTrue(TRUE) }, ret: false };
        let (acq, rel, save, restore) = (m(0, Role::RecursiveAcquire), m(1, Role::RecursiveRelease), m(2, Role::ReleaseAll), m(3, Role::Restore));
        let ret = |m: Meaning| Meaning { ret: true, ..m };
        let mut t = 0;
        let mut ev = |p: &mut Pairs, tid, m, ax| {
            t += 1;
            p.event(&Raw { t, tid, m, ax, di: 0xb0 }).map(|e| e.kind)
        };
        let kinds: Vec<Option<u8>> = vec![
            ev(&mut p, 7, acq, 0),
            ev(&mut p, 7, ret(acq), TRUE),
            ev(&mut p, 7, acq, 0),
            ev(&mut p, 7, ret(acq), TRUE),
            ev(&mut p, 8, rel, 0),
            ev(&mut p, 7, save, 0),
            ev(&mut p, 8, acq, 0),
            ev(&mut p, 8, ret(acq), 0x8000),
            ev(&mut p, 7, restore, 0),
            ev(&mut p, 7, ret(restore), 0x1234),
            ev(&mut p, 7, rel, 0),
            ev(&mut p, 7, rel, 0),
        ];
        use kind::*;
        assert_eq!(
            kinds,
            vec![Some(CALL), Some(ACQUIRED), Some(CALL), Some(ACQUIRED), None, Some(RELEASED), Some(CALL), Some(FAILED), Some(CALL), Some(ACQUIRED), None, Some(RELEASED)]
        );
    }
}
