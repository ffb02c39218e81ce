//! The scheduler's own record of who ran and who woke whom: the `sched:sched_switch` and
//! `sched:sched_waking` tracepoints (`sched_wakeup` where the kernel has no `sched_waking`),
//! read through `perf_event_open` with one ring buffer per CPU.
//!
//! Each event is opened once per online CPU, for every task (the switch to a target thread and the
//! wake-up of one happen in another task's context, so per-thread events would miss them), with
//! `PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW` on `CLOCK_MONOTONIC`, the clock of the
//! run's `Instant`s. The wake-up event writes into the switch event's buffer of the same CPU
//! (`PERF_EVENT_IOC_SET_OUTPUT`), so one buffer per CPU holds both in time order. A drain thread
//! empties the buffers every few milliseconds, decodes the raw tracepoint records with the field
//! offsets of the event's `format` file in tracefs, and keeps only the events of the target
//! processes' threads: switches where the thread leaving or getting the CPU is one, wake-ups whose
//! wakee is one. Whose thread a tid is comes from the events themselves (each carries the process
//! id of the task on the CPU, and every thread's last switch-out runs in its own context), so the
//! wake-up of a thread that exited before the drain reached it is kept; `/proc` answers for the
//! rest. Records the kernel had to drop (buffer full) are counted, never guessed.
//!
//! Permission: CPU-wide tracepoint events with raw data need `CAP_PERFMON` (or `CAP_SYS_ADMIN`,
//! i.e. root) or `kernel.perf_event_paranoid` ≤ -1; tracefs must be readable to learn the event
//! ids (it is mounted at `/sys/kernel/tracing` when it is not).

use crate::perfring::{self, online_cpus, Ring};
use crate::run::{SchedInfo, SchedSwitch, SchedWakeup};
use perf_event_open_sys as sys;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the drain thread empties the buffers when they do not fill up first.
const DRAIN_EVERY: Duration = Duration::from_millis(10);
/// Events newer than this are held back by [`SchedRecorder::take`]: a CPU's buffer may still
/// receive events older than another CPU's newest, so the tables stay in time order.
/// It covers [`UNDECIDED_FOR_NS`] too.
const HOLD_BACK_NS: u64 = 80_000_000;
/// How long an event of an exited thread nobody has claimed yet waits for that thread's own
/// events (which say whose it was) before it is dropped.
const UNDECIDED_FOR_NS: u64 = 40_000_000;

/// `common_flags` bits of a tracepoint record that mean interrupt context (hard IRQ, soft IRQ,
/// NMI): the task on the CPU did not issue the wake-up.
const IRQ_FLAGS: u8 = 0x08 | 0x10 | 0x40;

/// Where the events' fields are in a raw record (from the event's `format` file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SwitchFormat {
    id: u16,
    prev_pid: usize,
    prev_state: (usize, usize),
    next_pid: usize,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct WakeFormat {
    id: u16,
    pid: usize,
}

/// Offset and size of each field of a tracepoint `format` file.
fn parse_format(text: &str) -> HashMap<String, (usize, usize)> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("field:") else { continue };
        let mut parts = rest.split(';').map(str::trim);
        let decl = parts.next().unwrap_or("");
        let name = decl.rsplit(' ').next().unwrap_or("").split('[').next().unwrap_or("");
        let mut offset = None;
        let mut size = None;
        for p in parts {
            if let Some(v) = p.strip_prefix("offset:") {
                offset = v.parse().ok();
            } else if let Some(v) = p.strip_prefix("size:") {
                size = v.parse().ok();
            }
        }
        if let (Some(o), Some(s)) = (offset, size) {
            out.insert(name.to_string(), (o, s));
        }
    }
    out
}

fn event_id(text: &str) -> Option<u16> {
    text.lines().find_map(|l| l.strip_prefix("ID:")).and_then(|v| v.trim().parse().ok())
}

/// The tracefs directory, mounting it at `/sys/kernel/tracing` when no tracefs is visible.
fn tracefs() -> Result<PathBuf, String> {
    for dir in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        match fs::metadata(Path::new(dir).join("events/sched")) {
            Ok(m) if m.is_dir() => return Ok(PathBuf::from(dir)),
            // Mounted, but root's (mode 700 by default): perf_event_paranoid -1 lets a user open
            // the tracepoints, not read their ids there.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Err(format!("{dir} (the tracepoints' ids) is not readable by this user; run as root, or let this user read it"));
            }
            _ => {}
        }
    }
    let dir = Path::new("/sys/kernel/tracing");
    if dir.is_dir() {
        let c = |s: &str| std::ffi::CString::new(s).unwrap();
        let (src, target, fstype) = (c("nodev"), c("/sys/kernel/tracing"), c("tracefs"));
        // SAFETY: mount(2) only reads its arguments: `src`, `target` and `fstype` are
        // NUL-terminated CStrings that live until the call returns, and tracefs takes no data,
        // so a null `data` is allowed. Nothing in this process points into the mount point.
        let r = unsafe { libc::mount(src.as_ptr(), target.as_ptr(), fstype.as_ptr(), 0, std::ptr::null()) };
        if r == 0 && dir.join("events/sched").is_dir() {
            return Ok(dir.to_path_buf());
        }
    }
    Err("tracefs (the kernel's tracepoint ids) is not mounted and could not be mounted at /sys/kernel/tracing".into())
}

fn read_event(root: &Path, name: &str) -> Option<(u16, HashMap<String, (usize, usize)>)> {
    let text = fs::read_to_string(root.join("events/sched").join(name).join("format")).ok()?;
    Some((event_id(&text)?, parse_format(&text)))
}

/// Why scheduler events cannot be recorded here, as one sentence, or `None` when they can be
/// tried: needs `CAP_PERFMON`/`CAP_SYS_ADMIN` or `perf_event_paranoid` ≤ -1.
pub fn not_permitted() -> Option<String> {
    let paranoid: i32 = fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(2);
    let caps = fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("CapEff:").map(|v| u64::from_str_radix(v.trim(), 16).unwrap_or(0))))
        .unwrap_or(0);
    const CAP_SYS_ADMIN: u64 = 1 << 21;
    const CAP_PERFMON: u64 = 1 << 38;
    if caps & (CAP_SYS_ADMIN | CAP_PERFMON) != 0 || paranoid <= -1 {
        None
    } else {
        Some(format!(
            "scheduler events are not recorded: they need root (CAP_PERFMON) or kernel.perf_event_paranoid <= -1 (it is {paranoid}); run as root, or `sudo sysctl kernel.perf_event_paranoid=-1`, or pass --no-sched to silence this"
        ))
    }
}

/// Whether `record` would record scheduler events here, found the way it would: the permission
/// check, tracefs, the `sched_switch` tracepoint, and opening it on the first online CPU (closed
/// at once). `Err` is the sentence `record` would print (`threadradar doctor` shows it).
pub fn probe() -> Result<(), String> {
    if let Some(why) = not_permitted() {
        return Err(why);
    }
    let off = |why: &str| format!("scheduler events are not recorded: {why}; pass --no-sched to silence this");
    let root = tracefs().map_err(|why| off(&why))?;
    let (id, _) = read_event(&root, "sched_switch").ok_or_else(|| off("the kernel has no sched:sched_switch tracepoint"))?;
    let cpu = online_cpus().first().copied().unwrap_or(0);
    let fd = open_event(id, cpu).map_err(|e| off(&format!("perf_event_open on CPU {cpu} failed ({e})")))?;
    // SAFETY: `fd` was opened just above, is owned here alone and closed once.
    unsafe { libc::close(fd) };
    Ok(())
}

fn open_event(id: u16, cpu: i32) -> Result<i32, std::io::Error> {
    let mut attr = sys::bindings::perf_event_attr::default();
    attr.type_ = sys::bindings::PERF_TYPE_TRACEPOINT;
    attr.config = id as u64;
    attr.sample_period = 1;
    attr.sample_type = (sys::bindings::PERF_SAMPLE_TID | sys::bindings::PERF_SAMPLE_TIME | sys::bindings::PERF_SAMPLE_RAW) as u64;
    perfring::ring_event(&mut attr);
    // pid -1 + cpu = every task on that CPU.
    perfring::open(&mut attr, -1, cpu)
}

fn open_ring(cpu: i32, ids: &[u16]) -> Result<Ring, std::io::Error> {
    let mut fds = Vec::new();
    for &id in ids {
        match open_event(id, cpu) {
            Ok(fd) => fds.push(fd),
            Err(e) => {
                perfring::close_all(&fds);
                return Err(e);
            }
        }
    }
    Ring::new(fds)
}

/// The events of the target threads, collected by the drain thread.
#[derive(Default)]
struct Collected {
    switches: Vec<SchedSwitch>,
    wakeups: Vec<SchedWakeup>,
}

/// A decoded event not yet known to concern a target thread.
#[derive(Clone, Copy, Debug)]
enum Event {
    Switch(SchedSwitch),
    Wake(SchedWakeup),
}

impl Event {
    fn t(&self) -> u64 {
        match self {
            Event::Switch(s) => s.t,
            Event::Wake(w) => w.t,
        }
    }
}

/// Records scheduler events in a thread of its own until [`SchedRecorder::stop`].
pub struct SchedRecorder {
    stop: Arc<AtomicBool>,
    lost: Arc<AtomicU64>,
    collected: Arc<Mutex<Collected>>,
    /// The buffers, read by the drain thread and by [`SchedRecorder::switch_ins`].
    rings: Arc<Mutex<Rings>>,
    thread: Option<std::thread::JoinHandle<()>>,
    info: SchedInfo,
}

/// What is known of a tid: a thread of a target process, a thread of another, or neither for
/// sure (it has exited and no event of its own has said whose it was).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Whose {
    Target,
    Other,
    Unknown,
}

/// Decides whether a tid is a thread of one of the target processes. Three sources: the tids
/// the sampler saw; every event
/// recorded in a thread's own context carries its process id (`PERF_SAMPLE_TID`), so a target
/// thread that ran at all is learnt from its own events, even when it exited before the drain
/// reached them (every thread's last switch-out happens in its context); and, for a tid not
/// learnt so, `/proc/<pid>/task/<tid>`. Answers are cached (a tid's answer stays right until the
/// tid is reused, which takes the kernel's whole pid space).
struct Targets {
    pids: Arc<Mutex<Vec<u32>>>,
    /// Tids the sampler has seen in the target processes since the last round (it reads every
    /// thread at every tick): a thread that exits right after its last switch is still known.
    seen: Arc<Mutex<Vec<u32>>>,
    /// The sampled pids as of the current drain round.
    current: Vec<u32>,
    known: HashMap<u32, bool>,
}

impl Targets {
    /// Takes the sampled pids for this drain round; a new process makes earlier "no" answers
    /// doubtful, so they are forgotten.
    fn refresh(&mut self) {
        let pids = self.pids.lock().unwrap();
        if *pids != self.current {
            self.current = pids.clone();
            self.known.retain(|_, v| *v);
        }
        drop(pids);
        for tid in std::mem::take(&mut *self.seen.lock().unwrap()) {
            self.known.insert(tid, true);
        }
    }

    /// An event ran in thread `tid` of process `pid`: the kernel's word on whose thread it is.
    fn learn(&mut self, pid: u32, tid: u32) {
        if tid != 0 && self.current.contains(&pid) {
            self.known.insert(tid, true);
        }
    }

    fn whose(&mut self, tid: u32) -> Whose {
        if tid == 0 {
            return Whose::Other;
        }
        if let Some(&k) = self.known.get(&tid) {
            return if k { Whose::Target } else { Whose::Other };
        }
        let yes = self.current.iter().any(|p| *p == tid || Path::new(&format!("/proc/{p}/task/{tid}")).exists());
        // A tid that is no thread of a target and has no /proc entry at all has exited: whose it
        // was is not known yet (its own last events may still be in another CPU's buffer).
        if !yes && !Path::new(&format!("/proc/{tid}")).exists() {
            return Whose::Unknown;
        }
        if self.known.len() > 200_000 {
            self.known.clear();
        }
        self.known.insert(tid, yes);
        if yes {
            Whose::Target
        } else {
            Whose::Other
        }
    }
}

impl SchedRecorder {
    /// Opens the events on every online CPU and starts draining them. `pids` are the processes
    /// whose threads count (the sampler adds to it); `tids` receives the threads the sampler
    /// sees in them (the drain empties it); `start_mono_ns` is `CLOCK_MONOTONIC` at the
    /// run's `t = 0` (events before it are dropped; the sampler sets it when sampling starts).
    /// Fails with one sentence when the kernel does not let us.
    pub fn start(pids: Arc<Mutex<Vec<u32>>>, tids: Arc<Mutex<Vec<u32>>>, start_mono_ns: Arc<AtomicU64>) -> Result<SchedRecorder, String> {
        if let Some(why) = not_permitted() {
            return Err(why);
        }
        // Every refusal is one line that says kernel events are off, why, and what to do.
        let off = |why: &str| format!("scheduler events are not recorded: {why}; pass --no-sched to silence this");
        let root = tracefs().map_err(|why| off(&why))?;
        let (switch_id, sf) = read_event(&root, "sched_switch").ok_or_else(|| off("the kernel has no sched:sched_switch tracepoint"))?;
        let (wake_id, wf, note) = match read_event(&root, "sched_waking") {
            Some((id, f)) => (id, f, None),
            None => {
                let (id, f) = read_event(&root, "sched_wakeup").ok_or_else(|| off("the kernel has neither sched:sched_waking nor sched:sched_wakeup"))?;
                (id, f, Some("the kernel has no sched_waking: wake-ups are sched_wakeup events (recorded when the wakee is enqueued)".to_string()))
            }
        };
        let field = |f: &HashMap<String, (usize, usize)>, n: &str| f.get(n).copied().ok_or_else(|| off(&format!("the tracepoint format has no field {n}")));
        let sfmt = SwitchFormat { id: switch_id, prev_pid: field(&sf, "prev_pid")?.0, prev_state: field(&sf, "prev_state")?, next_pid: field(&sf, "next_pid")?.0 };
        let wfmt = WakeFormat { id: wake_id, pid: field(&wf, "pid")?.0 };
        let mut rings = Vec::new();
        for cpu in online_cpus() {
            match open_ring(cpu, &[switch_id, wake_id]) {
                Ok(r) => rings.push(r),
                Err(e) => return Err(off(&format!("perf_event_open on CPU {cpu} failed ({e})"))),
            }
        }
        for r in &rings {
            r.enable(true);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let lost = Arc::new(AtomicU64::new(0));
        let collected = Arc::new(Mutex::new(Collected::default()));
        let pfds: Vec<libc::pollfd> = rings.iter().map(|r| libc::pollfd { fd: r.fds[0], events: libc::POLLIN, revents: 0 }).collect();
        let shared = Arc::new(Mutex::new(Rings {
            rings,
            sfmt,
            wfmt,
            start_mono_ns: start_mono_ns.clone(),
            lost: lost.clone(),
            events: Vec::new(),
            learned: HashSet::new(),
            last_in: rustc_hash::FxHashMap::default(),
        }));
        let (s, c, r) = (stop.clone(), collected.clone(), shared.clone());
        let thread = std::thread::Builder::new()
            .name("threadradar-sched".into())
            .spawn(move || {
                let mut d = Drain { rings: r, start_mono_ns, targets: Targets { pids, seen: tids, current: Vec::new(), known: HashMap::new() }, undecided: Vec::new(), out: c };
                d.run(&s, pfds)
            })
            .map_err(|e| off(&format!("cannot start the drain thread ({e})")))?;
        Ok(SchedRecorder { stop, lost, collected, rings: shared, thread: Some(thread), info: SchedInfo { source: "perf_event_open".into(), lost_events: 0, note } })
    }

    /// The events collected so far that are older than the hold-back, in time order, and the
    /// lost-event count. `now_ns` is the run's current time.
    pub fn take(&self, now_ns: u64) -> (Vec<SchedSwitch>, Vec<SchedWakeup>, SchedInfo) {
        let mut c = self.collected.lock().unwrap();
        let cut = now_ns.saturating_sub(HOLD_BACK_NS);
        let (sw, wk) = take_older(&mut c, Some(cut));
        (sw, wk, self.info())
    }

    fn info(&self) -> SchedInfo {
        SchedInfo { lost_events: self.lost.load(Ordering::Relaxed), ..self.info.clone() }
    }

    /// Reads the buffers up to now (memory only: no system call) and calls `f` with when each
    /// thread last got a CPU (`CLOCK_MONOTONIC` ns of its latest switch-in, by tid) and the
    /// count of events lost so far. A thread whose latest switch-in is older than a reading of
    /// it that found it asleep has not run since that reading (while no event was lost since):
    /// the sampler then reuses that reading instead of reading the thread again.
    pub fn switch_ins<R>(&self, f: impl FnOnce(&rustc_hash::FxHashMap<u32, u64>, u64) -> R) -> R {
        let mut rings = self.rings.lock().unwrap();
        rings.read_all();
        let lost = self.lost.load(Ordering::Relaxed);
        f(&rings.last_in, lost)
    }

    /// Stops recording, drains what is left and returns it, in time order.
    pub fn stop(mut self) -> (Vec<SchedSwitch>, Vec<SchedWakeup>, SchedInfo) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let mut c = self.collected.lock().unwrap();
        let (sw, wk) = take_older(&mut c, None);
        drop(c);
        (sw, wk, self.info())
    }
}

impl Drop for SchedRecorder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Takes the collected events up to `cut` (all without one), sorted by time.
fn take_older(c: &mut Collected, cut: Option<u64>) -> (Vec<SchedSwitch>, Vec<SchedWakeup>) {
    c.switches.sort_by_key(|s| s.t);
    c.wakeups.sort_by_key(|w| w.t);
    let ns = cut.map_or(c.switches.len(), |cut| c.switches.partition_point(|s| s.t <= cut));
    let nw = cut.map_or(c.wakeups.len(), |cut| c.wakeups.partition_point(|w| w.t <= cut));
    (c.switches.drain(..ns).collect(), c.wakeups.drain(..nw).collect())
}

/// The per-CPU buffers and what reading them has yielded so far. Read by the drain thread every
/// few milliseconds and by the sampler at each tick ([`SchedRecorder::switch_ins`]), so that the
/// sampler knows who ran up to the moment it samples.
struct Rings {
    rings: Vec<Ring>,
    sfmt: SwitchFormat,
    wfmt: WakeFormat,
    start_mono_ns: Arc<AtomicU64>,
    lost: Arc<AtomicU64>,
    /// Decoded events the drain thread has not taken yet.
    events: Vec<Event>,
    /// (pid, tid) of the task on the CPU of each event: whose thread a tid is (see [`Targets`]).
    learned: HashSet<(u32, u32)>,
    /// `CLOCK_MONOTONIC` ns of each tid's latest switch-in, for any task on the machine.
    last_in: rustc_hash::FxHashMap<u32, u64>,
}

impl Rings {
    fn read_all(&mut self) {
        let rings = std::mem::take(&mut self.rings);
        for r in &rings {
            r.for_each(|typ, rec| self.record(typ, rec));
        }
        self.rings = rings;
        if self.last_in.len() > 200_000 {
            // Keep the last second: a thread read at every tick has a reading newer than that.
            let newest = self.last_in.values().copied().max().unwrap_or(0);
            self.last_in.retain(|_, t| newest.saturating_sub(*t) < 1_000_000_000);
        }
    }

    fn record(&mut self, typ: u32, rec: &[u8]) {
        let Some(f) = perfring::sample(typ, rec, &self.lost) else { return };
        let (u32_at, u64_at) = (|o| f.u32_at(o), |o| f.u64_at(o));
        // header(8) | pid u32, tid u32 | time u64 | raw size u32 | raw data
        let (Some(cur_pid), Some(cur_tid), Some(time), Some(raw_len)) = (u32_at(8), u32_at(12), u64_at(16), u32_at(24)) else { return };
        // Every event, kept or not, says whose thread the task on the CPU is.
        if cur_tid != 0 {
            self.learned.insert((cur_pid, cur_tid));
        }
        let raw = match rec.get(28..28 + raw_len as usize) {
            Some(r) => r,
            None => return,
        };
        let r32 = |o: usize| raw.get(o..o + 4).map(|b| i32::from_ne_bytes(b.try_into().unwrap()) as u32);
        let Some(common_type) = raw.get(0..2).map(|b| u16::from_ne_bytes(b.try_into().unwrap())) else { return };
        if common_type == self.sfmt.id {
            let (Some(prev), Some(next)) = (r32(self.sfmt.prev_pid), r32(self.sfmt.next_pid)) else { return };
            if next != 0 {
                let t = self.last_in.entry(next).or_insert(0);
                *t = (*t).max(time);
            }
            let Some(t) = time.checked_sub(self.start_mono_ns.load(Ordering::Relaxed)) else { return };
            let (so, ss) = self.sfmt.prev_state;
            let state = raw.get(so..so + ss).map(|b| b.iter().rev().fold(0u64, |a, &x| a << 8 | x as u64)).unwrap_or(0);
            self.events.push(Event::Switch(SchedSwitch { t, prev_tid: prev, prev_state: state_letter(state), next_tid: next }));
        } else if common_type == self.wfmt.id {
            let Some(t) = time.checked_sub(self.start_mono_ns.load(Ordering::Relaxed)) else { return };
            let Some(wakee) = r32(self.wfmt.pid) else { return };
            let flags = raw.get(2).copied().unwrap_or(0);
            let waker = if flags & IRQ_FLAGS != 0 { 0 } else { cur_tid };
            self.events.push(Event::Wake(SchedWakeup { t, waker_tid: waker, wakee_tid: wakee }));
        }
    }
}

struct Drain {
    rings: Arc<Mutex<Rings>>,
    start_mono_ns: Arc<AtomicU64>,
    targets: Targets,
    /// Events of exited threads not claimed yet (see [`Whose::Unknown`]), decided next round.
    undecided: Vec<Event>,
    out: Arc<Mutex<Collected>>,
}

impl Drain {
    fn run(&mut self, stop: &AtomicBool, mut pfds: Vec<libc::pollfd>) {
        loop {
            let stopping = stop.load(Ordering::Relaxed);
            let mut events = std::mem::take(&mut self.undecided);
            // The buffers are read under the lock (memory only); deciding whose each event is
            // (which may look in /proc) happens after, without it.
            let learned = {
                let mut rings = self.rings.lock().unwrap();
                rings.read_all();
                events.append(&mut rings.events);
                std::mem::take(&mut rings.learned)
            };
            self.targets.refresh();
            for (pid, tid) in learned {
                self.targets.learn(pid, tid);
            }
            // Decided after every buffer is read: the events that say whose an exited thread was
            // may be in another CPU's buffer than the events about it.
            let mut batch = self.decide(events, stopping);
            if !batch.switches.is_empty() || !batch.wakeups.is_empty() {
                let mut out = self.out.lock().unwrap();
                out.switches.append(&mut batch.switches);
                out.wakeups.append(&mut batch.wakeups);
            }
            if stopping {
                return;
            }
            // SAFETY: `pfds` is a live Vec of `pfds.len()` initialised pollfds, borrowed mutably
            // for the call (the kernel writes `revents`); their fds belong to the rings, which
            // `self.rings` keeps open while `self` lives. Wakes early when a buffer passes its
            // watermark.
            unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, DRAIN_EVERY.as_millis() as i32) };
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Keeps the events of target threads, drops the others, and holds back (until
    /// [`UNDECIDED_FOR_NS`] has passed, or the recording ends) those about an exited thread
    /// nobody has claimed yet.
    fn decide(&mut self, events: Vec<Event>, last: bool) -> Collected {
        let mut batch = Collected::default();
        let now = monotonic_ns().saturating_sub(self.start_mono_ns.load(Ordering::Relaxed));
        for e in events {
            let whose = match e {
                Event::Switch(s) => match (self.targets.whose(s.prev_tid), self.targets.whose(s.next_tid)) {
                    (Whose::Target, _) | (_, Whose::Target) => Whose::Target,
                    (Whose::Other, Whose::Other) => Whose::Other,
                    _ => Whose::Unknown,
                },
                Event::Wake(w) => self.targets.whose(w.wakee_tid),
            };
            match (whose, e) {
                (Whose::Target, Event::Switch(s)) => batch.switches.push(s),
                (Whose::Target, Event::Wake(w)) => batch.wakeups.push(w),
                (Whose::Unknown, _) if !last && now.saturating_sub(e.t()) < UNDECIDED_FOR_NS => self.undecided.push(e),
                _ => {}
            }
        }
        batch
    }
}

/// The letter `ps` shows for a `prev_state` value: the lowest of the report bits (S, D, T, t, X,
/// Z, P, I), `R` when none is set (the task was preempted).
fn state_letter(state: u64) -> u8 {
    const LETTERS: &[u8] = b"SDTtXZPI";
    match (0..LETTERS.len()).find(|&b| state & (1 << b) != 0) {
        Some(b) => LETTERS[b],
        None => b'R',
    }
}

/// `CLOCK_MONOTONIC` now, in nanoseconds: the clock of [`std::time::Instant`] and of the events.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_files_and_states() {
        let text = "name: sched_switch\nID: 372\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n";
        assert_eq!(event_id(text), Some(372));
        let f = parse_format(text);
        assert_eq!(f["prev_pid"], (24, 4));
        assert_eq!(f["prev_comm"], (8, 16));
        assert_eq!(f["prev_state"], (32, 8));
        assert_eq!(state_letter(0), b'R');
        assert_eq!(state_letter(0x100), b'R', "preempted");
        assert_eq!(state_letter(1), b'S');
        assert_eq!(state_letter(2), b'D');
        assert_eq!(state_letter(0x80), b'I');
    }

    #[test]
    fn held_back_events_stay_until_older() {
        let mut c = Collected::default();
        for t in [5, 1, 9] {
            c.switches.push(SchedSwitch { t, ..Default::default() });
        }
        let (sw, _) = take_older(&mut c, Some(5));
        assert_eq!(sw.iter().map(|s| s.t).collect::<Vec<_>>(), [1, 5]);
        let (sw, _) = take_older(&mut c, None);
        assert_eq!(sw.iter().map(|s| s.t).collect::<Vec<_>>(), [9]);
    }
}
