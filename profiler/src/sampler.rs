//! The sampling loop: at a steady rate, reads every thread of every sampled Python process
//! (stack through a [`StackSource`]: ThreadRadar's own reader for 3.11–3.13t, py-spy otherwise;
//! state and CPU accounting through `/proc`) and keeps it in memory; at the
//! end resolves frames to functions and classes from the source and hands out a [`Run`].
//!
//! The loop never stops on a thread or a process that goes away mid-sample: the observation is
//! skipped and counted, and whatever was recorded so far is kept.

use crate::attribution::{derive_entry_point_types, resolve_function};
use crate::builder::{new_thread, FunctionSpec, RunBuilder};
use crate::error::{classify_attach_error, RecordError};
use crate::procfs::{self, SchedStat, ThreadProc};
use crate::run::*;
use crate::source::{file_kind_in, pytest_rootdir, FileInfo, UserRoots};
use crate::stack_source::StackSource;
use crate::state::{classify, RuntimeRanges};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

#[path = "sampler_tasks.rs"]
mod tasks_rec;

/// How to sample.
#[derive(Clone, Debug)]
pub struct SamplerOptions {
    pub interval: Duration,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Also sample Python child processes (and grandchildren) of the root process.
    pub subprocesses: bool,
    /// How long to wait for the root process to become a sampleable Python process.
    pub startup_timeout: Duration,
    /// Read what blocked threads wait on (`Run::waits`).
    pub waits: bool,
    /// Read asyncio tasks (CPython 3.14+: `Run::tasks`, see `sampler_tasks.rs`).
    pub tasks: bool,
    /// Record the scheduler's switches and wake-ups (`Run::switches`, `Run::wakeups`).
    pub sched: bool,
    /// Record every call and return of the interpreter's lock functions through kernel uprobes
    /// (`Run::lock_events`), stopping above this many events per second; `None`: off.
    pub exact_locks: Option<u64>,
}

impl Default for SamplerOptions {
    fn default() -> Self {
        SamplerOptions {
            interval: Duration::from_millis(3),
            duration: None,
            subprocesses: false,
            startup_timeout: Duration::from_secs(5),
            waits: true,
            tasks: true,
            sched: false,
            exact_locks: None,
        }
    }
}

/// Figures for a progress display.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    pub elapsed: Duration,
    pub samples: u64,
    pub threads: usize,
    pub processes: usize,
    /// Samples per second since the first sample.
    pub achieved_rate_hz: f64,
    pub target_rate_hz: f64,
    /// The mean time one tick (reading every thread) took in the last progress period.
    pub tick: Duration,
    /// Whether sampling fell behind in the last progress period (ticks skipped or late).
    pub behind: bool,
}

/// A raw frame as py-spy reports it, before source resolution.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct RawFrame {
    file: u32,
    name: String,
    line: u32,
}

struct ProcSpy {
    pid: u32,
    spy: StackSource,
    runtime: RuntimeRanges,
    alive: bool,
    live: procfs::Liveness,
    names_refreshed: Instant,
}

/// Which thread of a process a trace belongs to: its OS thread id, or Python's ident when the
/// interpreter does not report the tid (high bit set so the two never collide). The kernel's start
/// time and the ident stored in the entry tell one real thread from a later one with the same key.
type ThreadKey = (u32, u64);

fn thread_key(pid: u32, tid: Option<u32>, ident: u64) -> ThreadKey {
    match tid {
        Some(t) => (pid, t as u64),
        None => (pid, ident | 1 << 63),
    }
}

struct ThreadEntry {
    id: ThreadId,
    /// Python's ident of the thread (`threading.get_ident()`).
    python_id: u64,
    /// The name could not be trusted when the entry was made (py-spy caches names by ident, and
    /// the ident was used by an earlier thread): take it from the next fresh lookup.
    name_pending: bool,
    proc: Option<ThreadProc>,
    start_time: Option<u64>,
    last_sched: Option<SchedStat>,
    /// When this thread was last sampled (ns since start), and whether `last_sched` is from then.
    last_seen_ns: Option<u64>,
    last_sched_was_fresh: bool,
    /// Whether the thread held the GIL at its previous sample.
    held_gil: bool,
    /// The kernel's view read just before this tick's stack walk.
    pre: Option<KernelReading>,
    /// The last reading that found the thread asleep, while the scheduler has not run it since:
    /// it stands for this tick's reading (see [`Sampler::quiet_threads`]).
    last_read: Option<KernelReading>,
    /// Attempts left to read the thread's type from its `threading.Thread` object, spent only
    /// at ticks when `Thread._bootstrap_inner` (whose `self` is that object) is on its stack.
    type_attempts: u8,
    /// Ticks left to wait for `_bootstrap_inner` to appear: a new thread can spend many ticks
    /// in its start-up before it (waiting for the GIL, more so with a GIL forced on a
    /// free-threaded build), and a thread started with `_thread.start_new_thread` never has it.
    type_patience: u16,
    /// The thread's only name is the OS name it inherited from the process (its `comm`, such
    /// as `python`): not `threading`'s, and not one it set itself. It is named by its root
    /// Python function once a stack shows one ([`root_function_name`]).
    inherited_comm: bool,
    /// This tick's kernel reading is `last_read`, standing because the scheduler has not run the
    /// thread since (see [`Sampler::quiet_threads`]).
    quiet_now: bool,
    /// The sample made at the last tick when the thread was quiet, while every tick since found
    /// it quiet with the same stack: such a sample is a function of what has not changed (the
    /// standing reading, the unchanged frames, a settled wait), so the reader may leave the
    /// thread out of its walk and this sample is repeated ([`StackSource::elided`]).
    quiet_sample: Option<ThreadSample>,
    /// `quiet_sample`'s wait is settled (its object read or given up on, and the sample
    /// carries the wait as it stands): the wait reader is not asked again while it stands.
    wait_settled: bool,
    /// `Thread._bootstrap_inner` was on the stack at its last full observation.
    bootstrap_seen: bool,
}

/// One thread's state, CPU accounting and system call, read together.
#[derive(Clone, Copy, Debug)]
enum KernelReading {
    /// `at`: when the reading began (the state is read first).
    /// `mono`: the same instant on `CLOCK_MONOTONIC` (the scheduler events' clock).
    Read { stat: procfs::StatReading, sched: Option<SchedStat>, syscall: Option<procfs::Syscall>, at: Instant, mono: u64 },
    /// The thread had exited.
    Vanished,
}

impl KernelReading {
    /// Whether this reading proves the thread was off its CPU when read, so that it stands
    /// until the scheduler switches the thread in again ([`Sampler::quiet_threads`]). Only a
    /// system call read from `/proc/…/syscall` does: the kernel reports one only after waiting
    /// for the thread to be switched out in the state it read. `stat` alone does not: it can
    /// say `S` for a thread that has marked itself asleep but is still on its CPU, and that may
    /// be woken there and run on without ever being switched in again (a new thread taking the
    /// GIL at its start did: its first reading stood for seconds, with no frames).
    fn off_cpu(&self) -> bool {
        matches!(self, KernelReading::Read { stat, syscall: Some(procfs::Syscall::Blocked { .. } | procfs::Syscall::InKernel), .. } if stat.state != b'R')
    }

    fn take(p: &mut ThreadProc) -> KernelReading {
        let at = Instant::now();
        let mono = crate::sched::monotonic_ns();
        match p.state_and_syscall() {
            Ok((stat, syscall)) => KernelReading::Read { stat, sched: p.schedstat(), syscall, at, mono },
            Err(_) => KernelReading::Vanished,
        }
    }
}

/// At most this many threads' types are read in one walk with arguments (the others at later
/// ticks): each costs a read of every argument of every frame (about 80 µs), and a thousand
/// threads started together would stall the sampler for a tenth of a second at once. 48 made
/// every such tick of a thousand-thread start-up miss one or two (issue #30).
const TYPES_PER_WALK: usize = 16;

/// Samples a root process (and, optionally, its Python descendants) until told to stop.
pub struct Sampler {
    opts: SamplerOptions,
    root: u32,
    spies: Vec<ProcSpy>,
    /// Descendant pids that are not (yet) Python, with the number of failed attempts.
    candidates: HashMap<u32, u32>,
    /// The current thread behind each key; a thread that ended is replaced by the next one.
    threads: FxHashMap<ThreadKey, ThreadEntry>,
    /// Every `(pid, ident)` seen: a new thread with one of these idents may carry a stale name.
    seen_idents: HashSet<(u32, u64)>,
    builder: RunBuilder,
    files: FxHashMap<String, u32>,
    file_names: Vec<String>,
    /// Raw frames by (file, line): each name at that place and its id (looked up without
    /// copying the name: this runs for every frame of every thread at every tick).
    raw_frames: FxHashMap<(u32, u32), Vec<(Box<str>, u32)>>,
    raw_frame_list: Vec<RawFrame>,
    raw_stacks: FxHashMap<(Option<u32>, u32), u32>,
    raw_stack_list: Vec<(Option<u32>, u32)>,
    resolver: Option<Resolver>,
    start: Instant,
    last_scan: Instant,
    stats: Stats,
    /// Where the user's code is, for each file's kind.
    user_roots: UserRoots,
    /// Sampled processes whose `/` is not ours (chroots, containers).
    roots: HashMap<u32, procfs::ProcessRoot>,
    /// The run file being written while recording, when asked for.
    stream: Option<Stream>,
    /// This tick's GIL holder as the sampler read it (`Some(None)`: nobody), when it could.
    tick_holder: Option<Option<u64>>,
    /// The `/proc` files of the threads found before the first tick, opened then (see
    /// [`Sampler::open_thread_files`]), and each one's reading taken by the first tick before
    /// its walk; taken by the first tick, the rest closed after it.
    preopened: FxHashMap<(u32, u32), (ThreadProc, Option<KernelReading>)>,
    /// When this tick began (its sample's `t`): threads' read offsets count from it.
    tick_at: Instant,
    /// What blocked threads wait on.
    waits: crate::waits::WaitReader,
    /// The scheduler events being recorded, the sampled pids they are kept for, and t = 0 on
    /// their clock.
    sched: Option<crate::sched::SchedRecorder>,
    sched_pids: std::sync::Arc<std::sync::Mutex<Vec<u32>>>,
    /// New threads' tids, for the scheduler's drain (which empties it).
    sched_tids: std::sync::Arc<std::sync::Mutex<Vec<u32>>>,
    /// The scheduler's lost-event count at the last tick (see [`Sampler::quiet_threads`]).
    sched_lost_seen: u64,
    sched_start: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The lock uprobes being recorded (`--exact-locks`); they share the pids and t = 0 above.
    locks: Option<crate::uprobes::LockRecorder>,
    /// asyncio tasks being recorded (`sampler_tasks.rs`).
    tasks: tasks_rec::TasksRec,
}

/// How much of the run has been appended to the run file so far.
struct Stream {
    path: std::path::PathBuf,
    writer: Option<crate::runfile::BackgroundWriter>,
    last: Instant,
    strings: usize,
    files: usize,
    frames: usize,
    stacks: usize,
    processes: usize,
    samples: usize,
    waits: usize,
    switches: usize,
    wakeups: usize,
    lock_events: usize,
    tasks: usize,
    task_runs: usize,
    task_states: usize,
    /// The threads as last written, to write only the ones that changed.
    threads: Vec<Thread>,
}

/// How often the run file is appended to while recording: at most this much is lost when the
/// recorder is killed.
const STREAM_EVERY: Duration = Duration::from_millis(500);

#[derive(Default)]
struct Stats {
    /// Ticks, their total time, and ticks skipped or late, since the last progress report.
    window_ticks: u64,
    window_busy: Duration,
    window_behind: u64,
    missed: u64,
    late: u64,
    failed: u64,
    skipped_threads: u64,
    quiet_threads: u64,
}

impl Sampler {
    /// Connects to `root`, waiting up to `startup_timeout` for it to become a Python process
    /// (a launched program needs a moment; a shell wrapper like pyenv's needs to `exec`).
    ///
    /// With `subprocesses`, a root that never becomes Python is fine as long as it lives: its
    /// Python descendants are sampled instead.
    pub fn attach(root: u32, mode: RecordMode, command: Vec<String>, opts: SamplerOptions) -> Result<Sampler, RecordError> {
        if !std::path::Path::new(&format!("/proc/{root}")).exists() {
            return Err(RecordError::NoSuchProcess(root));
        }
        let began = Instant::now();
        // With subprocesses the root may be a shell or a test runner's wrapper: do not hold up
        // sampling its children; the child scan keeps trying the root too.
        let wait = if opts.subprocesses { opts.startup_timeout.min(Duration::from_millis(300)) } else { opts.startup_timeout };
        let deadline = began + wait;
        let first = loop {
            match StackSource::attach(root) {
                Ok(mut spy) => {
                    if spy.stack_traces().is_ok() {
                        break Some(spy);
                    }
                }
                Err(e) => {
                    let err = classify_attach_error(root, &e);
                    if matches!(err, RecordError::PermissionDenied { .. } | RecordError::PermissionDeniedAsRoot { .. } | RecordError::Unsupported { .. }) {
                        return Err(err);
                    }
                    if !procfs::is_alive(root) {
                        return Err(RecordError::ExitedBeforeSampling);
                    }
                    if Instant::now() >= deadline {
                        if opts.subprocesses {
                            break None;
                        }
                        return Err(err);
                    }
                }
            }
            if !procfs::is_alive(root) {
                return Err(RecordError::ExitedBeforeSampling);
            }
            // A process that has run for a while without any python binary or libpython mapped
            // (not a wrapper about to exec python) is not going to become Python. A shell is such
            // a wrapper (pyenv's shims are bash scripts that exec python): on a loaded machine it
            // can take seconds to get there, so it is given the whole start-up timeout.
            let wrapper = matches!(process_name(root).as_str(), "bash" | "sh" | "dash" | "zsh" | "env" | "pyenv");
            let settled = began.elapsed() >= Duration::from_millis(1500) && !wrapper;
            if settled && !opts.subprocesses && !procfs::maps_python(root) {
                return Err(RecordError::NotPython {
                    pid: root,
                    name: process_name(root),
                    detail: "no python executable or libpython is loaded in it".into(),
                });
            }
            if Instant::now() >= deadline {
                if opts.subprocesses {
                    break None;
                }
                return Err(RecordError::NotPython { pid: root, name: process_name(root), detail: "no stack could be read".into() });
            }
            std::thread::sleep(Duration::from_millis(10));
        };

        let start_unix_ms = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        let meta = Meta {
            command,
            cwd: std::env::current_dir().map(|p| p.display().to_string()).unwrap_or_default(),
            mode,
            interval_ms: opts.interval.as_secs_f64() * 1000.0,
            start_unix_ms,
            threadradar_version: env!("CARGO_PKG_VERSION").to_string(),
            subprocesses: opts.subprocesses,
            ..Meta::default()
        };
        // Files are read, hashed and parsed off the sampling thread, once each, when first seen.
        let resolver = Resolver::start(|path| FileInfo::load(path));
        let now = Instant::now();
        let mut s = Sampler {
            opts,
            root,
            spies: Vec::new(),
            candidates: HashMap::new(),
            threads: FxHashMap::default(),
            seen_idents: HashSet::new(),
            builder: RunBuilder::new(meta),
            files: FxHashMap::default(),
            file_names: Vec::new(),
            raw_frames: FxHashMap::default(),
            raw_frame_list: Vec::new(),
            raw_stacks: FxHashMap::default(),
            raw_stack_list: Vec::new(),
            resolver: Some(resolver),
            start: now,
            last_scan: now,
            stats: Stats::default(),
            user_roots: UserRoots::default(),
            roots: HashMap::new(),
            stream: None,
            tick_holder: None,
            preopened: FxHashMap::default(),
            tick_at: now,
            waits: Default::default(),
            sched: None,
            sched_pids: Default::default(),
            sched_tids: Default::default(),
            sched_lost_seen: 0,
            sched_start: Default::default(),
            locks: None,
            tasks: Default::default(),
        };
        match first {
            Some(spy) => s.add_spy(root, spy),
            None => {
                s.candidates.insert(root, 0);
            }
        }
        Ok(s)
    }

    fn add_spy(&mut self, pid: u32, spy: StackSource) {
        let version = spy.version();
        if pid == self.root || self.builder.run().meta.python_version.is_none() {
            self.builder.run_mut().meta.python_version = Some(version.clone());
        }
        self.builder.run_mut().meta.pids.push(pid);
        self.sched_pids.lock().unwrap().push(pid);
        let root = procfs::process_root(pid);
        self.builder.run_mut().processes.push(Process {
            pid,
            ppid: procfs::ppid(pid),
            command: procfs::cmdline(pid),
            python_version: Some(version),
            reader: Some(spy.reader()),
            root: root
                .as_ref()
                .map(|r| r.host.as_ref().unwrap_or(&r.link).display().to_string()),
        });
        if let Some(r) = root {
            self.roots.insert(pid, r);
        }
        // Attached: the program's working directory, not the recorder's (as the program sees it).
        if pid == self.root && self.builder.run().meta.mode == RecordMode::Attach {
            if let Ok(cwd) = std::fs::read_link(format!("/proc/{pid}/cwd")) {
                let cwd = self
                    .roots
                    .get(&pid)
                    .and_then(|r| r.inner_path(&cwd))
                    .unwrap_or(cwd);
                self.builder.run_mut().meta.cwd = cwd.display().to_string();
            }
        }
        self.add_user_roots(pid);
        self.spies.push(ProcSpy { pid, spy, runtime: RuntimeRanges::of_process(pid), alive: true, live: procfs::Liveness::new(pid), names_refreshed: Instant::now() });
    }

    /// The working directory's tree, the script and the pytest rootdir of a sampled process.
    fn add_user_roots(&mut self, pid: u32) {
        let Ok(cwd) = std::fs::read_link(format!("/proc/{pid}/cwd")) else { return };
        // In a chroot, the program's own view of it (its frames name `/w/app.py`, not the host's path).
        let cwd = self
            .roots
            .get(&pid)
            .and_then(|r| r.inner_path(&cwd))
            .unwrap_or(cwd);
        self.user_roots.add_dir(&cwd);
        let command = procfs::cmdline(pid);
        // The script: the first `.py` argument before any `-c`/`-m` ends the interpreter's own.
        for a in command.iter().skip(1) {
            if a == "-c" || a == "-m" {
                break;
            }
            if a.ends_with(".py") {
                self.user_roots.add_file(&cwd.join(a));
                break;
            }
        }
        if let Some(root) = pytest_rootdir(&command, &cwd) {
            self.user_roots.add_dir(&root);
        }
    }

    /// Starts recording the scheduler's switches and wake-ups of the sampled processes' threads
    /// (when `SamplerOptions::sched` is set). The error is one sentence saying why it cannot be
    /// done here; sampling goes on without them.
    pub fn start_sched(&mut self) -> Result<(), String> {
        if !self.opts.sched || self.sched.is_some() {
            return Ok(());
        }
        self.sched_start.store(crate::sched::monotonic_ns(), Ordering::Relaxed);
        // The threads seen so far; new ones are added as they are seen.
        self.sched_tids.lock().unwrap().extend(self.threads.keys().filter(|k| k.1 >> 63 == 0).map(|k| k.1 as u32));
        self.sched = Some(crate::sched::SchedRecorder::start(self.sched_pids.clone(), self.sched_tids.clone(), self.sched_start.clone())?);
        Ok(())
    }

    /// Starts recording the lock functions' calls and returns (when `SamplerOptions::exact_locks`
    /// is set). The error is one sentence saying why it cannot be done here; sampling goes on
    /// without them.
    pub fn start_locks(&mut self) -> Result<(), String> {
        let Some(cap) = self.opts.exact_locks else { return Ok(()) };
        if self.locks.is_some() {
            return Ok(());
        }
        self.sched_start.store(crate::sched::monotonic_ns(), Ordering::Relaxed);
        // The first Python process sampled (the root may be a wrapper that started it).
        let pid = self.sched_pids.lock().unwrap().first().copied().unwrap_or(self.root);
        self.locks = Some(crate::uprobes::LockRecorder::start(pid, self.sched_pids.clone(), self.sched_start.clone(), cap)?);
        Ok(())
    }

    /// Moves the lock events paired so far into the run (all of them when `last`); a stop at the
    /// event-rate cap becomes a warning of the run.
    fn take_locks(&mut self, last: bool) {
        let got = match (last, &self.locks) {
            (true, Some(_)) => self.locks.take().map(|r| r.stop()),
            (false, Some(r)) => Some(r.take()),
            _ => None,
        };
        if let Some((events, info)) = got {
            let run = self.builder.run_mut();
            run.lock_events.extend(events);
            if last {
                run.meta.warnings.extend(info.stopped.clone());
            }
            run.locks = Some(info);
        }
    }

    /// Moves the scheduler events drained so far into the run (all of them when `last`).
    fn take_sched(&mut self, last: bool) {
        let now_ns = self.start.elapsed().as_nanos() as u64;
        let got = match (last, &self.sched) {
            (true, Some(_)) => self.sched.take().map(|r| r.stop()),
            (false, Some(r)) => Some(r.take(now_ns)),
            _ => None,
        };
        if let Some((switches, wakeups, info)) = got {
            let run = self.builder.run_mut();
            run.switches.extend(switches);
            run.wakeups.extend(wakeups);
            run.sched = Some(info);
        }
    }

    /// Writes the run to `path` while recording, every half second (the file is created at the
    /// first write that has samples). Frames are written with the interpreter's names, as they
    /// are before the source is read; the caller replaces the file with the finished run.
    pub fn stream_to(&mut self, path: &std::path::Path) {
        self.stream = Some(Stream {
            path: path.to_path_buf(),
            writer: None,
            last: Instant::now(),
            strings: 0,
            files: 0,
            frames: 0,
            stacks: 0,
            processes: 0,
            samples: 0,
            waits: 0,
            switches: 0,
            wakeups: 0,
            lock_events: 0,
            tasks: 0,
            task_runs: 0,
            task_states: 0,
            threads: Vec::new(),
        });
    }

    /// Appends what is new since the last append to the run file.
    fn flush_stream(&mut self) {
        self.take_sched(false);
        self.take_locks(false);
        let Some(mut st) = self.stream.take() else { return };
        st.last = Instant::now();
        if self.builder.run().samples.is_empty() {
            self.stream = Some(st);
            return;
        }
        if st.writer.is_none() {
            match crate::runfile::BackgroundWriter::create(&st.path) {
                Ok(w) => st.writer = Some(w),
                Err(e) => {
                    tracing::warn!("not writing the run while recording: {e}");
                    return;
                }
            }
        }
        // Provisional tables: one function per raw frame, named as the interpreter names it.
        let files: Vec<SourceFile> = self.file_names[st.files..]
            .iter()
            .map(|path| SourceFile { path: self.builder.string(path), sha256: None, kind: file_kind_in(path, &self.user_roots) })
            .collect();
        let mut functions = Vec::new();
        let mut frames = Vec::new();
        for (i, raw) in self.raw_frame_list[st.frames..].iter().enumerate() {
            let (qualname, class, ..) = resolve_function(None, &raw.name, raw.line);
            let short = qualname.rsplit('.').next().unwrap_or(&qualname).to_string();
            functions.push(Function {
                file: raw.file,
                qualname: self.builder.string(&qualname),
                name: self.builder.string(&short),
                class: class.map(|c| self.builder.string(&c)),
                line: 0,
                end_line: 0,
                class_line: 0,
            });
            frames.push(Frame { function: (st.frames + i) as FunctionId, line: raw.line });
        }
        let stacks: Vec<StackNode> = self.raw_stack_list[st.stacks..].iter().map(|&(parent, frame)| StackNode { frame, parent }).collect();
        let elapsed = self.start.elapsed().as_secs_f64();
        let run = self.builder.run_mut();
        run.meta.sample_count = run.samples.len() as u64;
        run.meta.duration_s = elapsed;
        let run = self.builder.run();
        let known = st.threads.len().min(run.threads.len());
        let updates: Vec<(ThreadId, &Thread)> =
            (0..known).filter(|&i| run.threads[i] != st.threads[i]).map(|i| (i as ThreadId, &run.threads[i])).collect();
        // Tasks written before whose name or end changed (a task's last sample alone is not
        // written again: 10 000 tasks seen again would rewrite them all at every append).
        let mut task_updates: Vec<(crate::tasks::TaskId, &crate::tasks::Task)> =
            self.tasks.dirty.iter().filter(|&&i| (i as usize) < st.tasks).map(|&i| (i, &run.tasks[i as usize])).collect();
        task_updates.sort_by_key(|u| u.0);
        let chunk = crate::runfile::ChunkRef {
            meta: Some(&run.meta),
            strings: &run.strings[st.strings..],
            files: &files,
            functions: &functions,
            frames: &frames,
            stacks: &stacks,
            processes: &run.processes[st.processes..],
            threads: &run.threads[known..],
            thread_updates: &updates,
            samples: &run.samples[st.samples..],
            // Wait objects name raw frames, which are the provisional frames written above.
            waits: &run.waits[st.waits..],
            sched: run.sched.as_ref(),
            switches: &run.switches[st.switches..],
            wakeups: &run.wakeups[st.wakeups..],
            locks: run.locks.as_ref(),
            lock_events: &run.lock_events[st.lock_events..],
            tasks_info: run.tasks_info.as_ref(),
            tasks: &run.tasks[st.tasks..],
            task_updates: &task_updates,
            // Closed runs only: a thread's open run is written once it ends.
            task_runs: &run.task_runs[st.task_runs..],
            // Chains name raw stacks, which are the provisional stacks written above.
            task_states: &run.task_states[st.task_states..],
            end: false,
        };
        // Copied (a few milliseconds for half a second of a thousand threads) and written on the
        // writer's thread: the sampling goes on meanwhile.
        if !st.writer.as_ref().is_some_and(|w| w.send(&chunk)) {
            return;
        }
        st.strings = run.strings.len();
        st.files = self.file_names.len();
        st.frames = self.raw_frame_list.len();
        st.stacks = self.raw_stack_list.len();
        st.processes = run.processes.len();
        st.samples = run.samples.len();
        st.waits = run.waits.len();
        st.switches = run.switches.len();
        st.wakeups = run.wakeups.len();
        st.lock_events = run.lock_events.len();
        st.tasks = run.tasks.len();
        st.task_runs = run.task_runs.len();
        st.task_states = run.task_states.len();
        st.threads = run.threads.clone();
        self.tasks.dirty.clear();
        self.stream = Some(st);
    }

    /// Opens the `/proc` files of every thread of the sampled processes before the clock starts,
    /// as py-spy reads a process before sampling it: three opens per thread, 60 ms of the first
    /// tick for a program of a thousand threads (twenty ticks it would miss), are part of
    /// attaching, not of the run.
    fn open_thread_files(&mut self) {
        for spy in &self.spies {
            for tid in procfs::thread_ids(spy.pid).unwrap_or_default() {
                if let Ok(p) = ThreadProc::open(spy.pid, tid) {
                    self.preopened.insert((spy.pid, tid), (p, None));
                }
            }
        }
    }

    /// Samples until `stop` is set, the duration elapses or every process has exited; calls
    /// `progress` about ten times a second. Returns why it ended.
    pub fn run_until(&mut self, stop: &AtomicBool, mut progress: impl FnMut(&Progress)) -> EndReason {
        set_timer_slack();
        let interval = self.opts.interval;
        self.open_thread_files();
        self.start = Instant::now();
        // t = 0 of the scheduler's events: the same instant on their clock (CLOCK_MONOTONIC).
        self.sched_start.store(crate::sched::monotonic_ns(), Ordering::Relaxed);
        self.builder.run_mut().meta.started_at =
            SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).ok().map(|d| d.as_secs_f64());
        let mut tick: u64 = 0;
        let mut last_progress = self.start;
        loop {
            if stop.load(Ordering::Relaxed) {
                return EndReason::Interrupted;
            }
            let deadline = self.start + interval.mul_f64(tick as f64);
            let now = Instant::now();
            if now < deadline {
                std::thread::sleep(deadline - now);
            } else if now - deadline >= interval {
                // Fell behind by whole intervals: skip those ticks instead of bursting.
                let behind = ((now - deadline).as_nanos() / interval.as_nanos().max(1)) as u64;
                self.stats.missed += behind;
                self.stats.window_behind += behind;
                tick += behind;
            }
            if stop.load(Ordering::Relaxed) {
                return EndReason::Interrupted;
            }
            let at = Instant::now();
            if let Some(d) = self.opts.duration {
                if at - self.start >= d {
                    return EndReason::Duration;
                }
            }
            let scheduled = self.start + interval.mul_f64(tick as f64);
            if at.saturating_duration_since(scheduled) > interval / 2 {
                self.stats.late += 1;
                self.stats.window_behind += 1;
            }
            self.sample_once(at);
            self.stats.window_ticks += 1;
            self.stats.window_busy += at.elapsed();
            tick += 1;

            if self.opts.subprocesses && at - self.last_scan >= Duration::from_millis(100) {
                self.last_scan = at;
                self.scan_children();
            }
            if !self.any_alive() {
                return EndReason::Exited;
            }
            let sampled = at.elapsed();
            if self.stream.as_ref().is_some_and(|s| at.saturating_duration_since(s.last) >= STREAM_EVERY) {
                self.flush_stream();
            }
            if at.elapsed() > interval {
                tracing::debug!(sample_us = sampled.as_micros() as u64, total_us = at.elapsed().as_micros() as u64, "a tick longer than the interval");
            }
            if at - last_progress >= Duration::from_millis(100) {
                last_progress = at;
                progress(&self.progress());
                self.stats.window_ticks = 0;
                self.stats.window_busy = Duration::ZERO;
                self.stats.window_behind = 0;
            }
        }
    }

    fn any_alive(&mut self) -> bool {
        for s in &mut self.spies {
            if s.alive && !s.live.alive() {
                s.alive = false;
            }
        }
        self.spies.iter().any(|s| s.alive) || (self.opts.subprocesses && procfs::is_alive(self.root))
    }

    /// Current figures.
    pub fn progress(&self) -> Progress {
        let elapsed = self.start.elapsed();
        let run = self.builder.run();
        let samples = run.samples.len() as u64;
        // From the first sample: a wrapper that starts Python late does not count as falling behind.
        let since_first = match run.samples.first() {
            Some(s) => elapsed.saturating_sub(Duration::from_nanos(s.t)),
            None => Duration::ZERO,
        };
        Progress {
            elapsed,
            samples,
            threads: self.threads.len(),
            processes: self.spies.iter().filter(|s| s.alive).count(),
            achieved_rate_hz: if since_first.as_secs_f64() > 0.0 { samples as f64 / since_first.as_secs_f64() } else { 0.0 },
            target_rate_hz: 1.0 / self.opts.interval.as_secs_f64(),
            tick: self.stats.window_busy / (self.stats.window_ticks.max(1) as u32),
            behind: self.stats.window_behind > self.stats.window_ticks / 20,
        }
    }

    fn scan_children(&mut self) {
        let Ok(root) = remoteprocess::Process::new(self.root as remoteprocess::Pid) else { return };
        let Ok(children) = root.child_processes() else { return };
        for (pid, _ppid) in children {
            let pid = pid as u32;
            if self.spies.iter().any(|s| s.pid == pid) {
                continue;
            }
            self.candidates.entry(pid).or_insert(0);
        }
        let candidates: Vec<u32> = self.candidates.keys().copied().collect();
        for pid in candidates {
            let attempts = self.candidates[&pid];
            // A child that is still not Python after about a second (a shell, a compiler) is
            // left alone.
            // The root stays a candidate while it lives: a wrapper (`sleep 2; python3 app.py`)
            // may exec Python at any time; it is tried once python is mapped into it.
            if pid == self.root {
                if !procfs::is_alive(pid) {
                    self.candidates.remove(&pid);
                    continue;
                }
                if attempts >= 10 && !procfs::maps_python(pid) {
                    continue;
                }
            } else if attempts >= 10 || !procfs::is_alive(pid) {
                self.candidates.remove(&pid);
                continue;
            }
            match StackSource::attach(pid) {
                Ok(spy) => {
                    self.candidates.remove(&pid);
                    self.add_spy(pid, spy);
                }
                Err(_) => {
                    *self.candidates.get_mut(&pid).unwrap() += 1;
                }
            }
        }
    }

    /// The tids of process `pid`'s threads that the scheduler has not run since a reading that
    /// found them asleep: their state, CPU time, system call and frames are what that reading
    /// and the stack walk after it saw, so neither is read again. Known exactly only while
    /// scheduler events are recorded and none was lost since the last tick (a lost switch-in
    /// could hide a thread that ran): otherwise none is quiet and every thread is read.
    fn quiet_threads(&mut self, pid: u32) -> FxHashSet<u32> {
        let Some(rec) = self.sched.as_ref() else { return FxHashSet::default() };
        // Every program, whatever its number of threads. (Until 2026-12-07 only processes of 64
        // threads or more: `record_wait_objects`'s multiprocessing-lock test had failed in 1 of 3
        // runs with it on for all, its lockers taken for asleep for whole cycles. Two bugs that
        // made a reading stand wrongly were found since (see `KernelReading::off_cpu` and the
        // new-thread reading in `observe`); with them fixed that test passed 6 of 6 runs on
        // 3.11, 3.13 and 3.14, also under load.)
        let last_lost = &mut self.sched_lost_seen;
        let threads = &self.threads;
        rec.switch_ins(|last_in, lost| {
            if lost != *last_lost {
                *last_lost = lost;
                return FxHashSet::default();
            }
            threads
                .iter()
                .filter(|((p, k), _)| *p == pid && k >> 63 == 0)
                .filter_map(|((_, k), e)| {
                    let tid = *k as u32;
                    let Some(KernelReading::Read { mono, .. }) = e.last_read else { return None };
                    last_in.get(&tid).is_none_or(|&t| t < mono).then_some(tid)
                })
                .collect()
        })
    }

    fn sample_once(&mut self, at: Instant) {
        let t = (at - self.start).as_nanos() as u64;
        self.tick_at = at;
        let mut threads = Vec::new();
        let mut need_types: Vec<(usize, FxHashSet<u64>)> = Vec::new();
        let mut any_ok = false;
        for si in 0..self.spies.len() {
            if !self.spies[si].alive {
                continue;
            }
            // The kernel's view of every known thread first, then the stacks: py-spy reads the
            // GIL holder at the start of its walk, so state and GIL are observed microseconds
            // apart instead of a whole stack walk apart (which mislabels short bursts).
            let pid = self.spies[si].pid;
            let known: Vec<u64> = self.threads.iter().filter(|(k, _)| k.0 == pid).map(|(_, e)| e.python_id).collect();
            let quiet = self.quiet_threads(pid);
            let spy = &mut self.spies[si];
            let mut elide = FxHashSet::default();
            self.tick_holder = spy.spy.gil_holder(&known);
            // Free-threaded builds run without a GIL unless an extension turned it on.
            spy.runtime.set_gil(spy.spy.gil_enabled());
            for ((p, k), e) in self.threads.iter_mut() {
                if *p != pid {
                    continue;
                }
                e.quiet_now = quiet.contains(&(*k as u32)) && e.proc.is_some();
                if e.quiet_now {
                    // Asleep since its last reading: that reading stands, no file is read.
                    e.pre = e.last_read;
                    if e.quiet_sample.is_some() {
                        elide.insert(*k);
                    }
                    continue;
                }
                e.quiet_sample = None;
                e.pre = e.proc.as_mut().map(KernelReading::take);
                e.last_read = e.pre.filter(KernelReading::off_cpu);
                if matches!(e.pre, Some(KernelReading::Vanished)) {
                    e.proc = None;
                }
            }
            // The first tick: the threads found while attaching are read before the walk too,
            // so that a sleeper's reading can stand at the next tick (one read after the walk
            // cannot vouch for the stack, and all thousand would be read again).
            for ((p, _), (file, reading)) in self.preopened.iter_mut() {
                if *p == pid && reading.is_none() {
                    *reading = Some(KernelReading::take(file));
                }
            }
            self.stats.quiet_threads += quiet.len() as u64;
            spy.spy.set_quiet(quiet.into_iter().map(u64::from).collect(), elide);
            let traces = match self.spies[si].spy.stack_traces() {
                Ok(t) => one_trace_per_thread(t),
                Err(_) => {
                    if !self.spies[si].live.alive() {
                        self.spies[si].alive = false;
                    }
                    continue;
                }
            };
            any_ok = true;
            let mut wants_type = FxHashSet::default();
            let mut unnamed = false;
            let first = threads.len();
            for trace in traces {
                if let Some(ts) = self.observe(si, pid, trace, &mut wants_type, &mut unnamed) {
                    threads.push(ts);
                }
            }
            self.repeat_elided(si, pid, &mut threads, &mut wants_type);
            // The objects of waits that changed: one more walk of this process, with arguments.
            let walked = self.waits.has_pending() && self.waits.walk_due(pid, t);
            if walked {
                // The threads whose types are still to be read come along: their `self` is in
                // the same walk (a walk of its own for them cost 3 ms per 48 threads).
                let mut ids = self.waits.pending_ids(pid);
                ids.extend(wants_type.drain());
                match self.spies[si].spy.stack_traces_with_arguments_of(ids) {
                    Ok(with_args) => {
                        self.types_from(pid, &with_args);
                        self.waits.drop_moved_on(&self.builder, |pid, tid| procfs::ThreadProc::open(pid, tid).ok()?.syscall());
                        let spy = &self.spies[si].spy;
                        let mut attribute = |obj: usize, name: &str| spy.attribute(obj, name);
                        let mut owner = |obj: usize, of: crate::waits::Owner| match of {
                            crate::waits::Owner::RLock => spy.rlock_owner(obj),
                            crate::waits::Owner::Thread => spy.thread_ident(obj),
                        };
                        for (thread, wait) in self.waits.resolve(&with_args, &mut self.builder, t, &mut attribute, &mut owner) {
                            threads[first..].iter_mut().filter(|t| t.thread == thread).for_each(|t| t.wait = Some(wait));
                        }
                    }
                    Err(_) => self.waits.clear_pending(),
                }
            }
            // py-spy caches "no name" for a thread seen before `threading` registered it; drop
            // its cache now and then so the name is read once it exists.
            if unnamed && at - self.spies[si].names_refreshed >= Duration::from_millis(250) {
                self.spies[si].names_refreshed = at;
                self.spies[si].spy.forget_thread_names();
            }
            // Types wait for a tick without that walk: two walks with arguments in one tick
            // would make it late.
            if !wants_type.is_empty() && !walked {
                need_types.push((si, wants_type));
            }
            let sample = self.builder.run().samples.len() as u32;
            self.record_tasks(si, pid, sample, &threads[first..]);
        }
        if !any_ok {
            // Ticks before any Python process was found (a wrapper that has not started Python
            // yet) are not failures.
            if !self.spies.is_empty() {
                self.stats.failed += 1;
            }
            return;
        }
        self.builder.push_sample(Sample { t, threads });
        // Threads that are not Python's (or ended): their files close.
        self.preopened.clear();
        for (si, ids) in need_types {
            self.read_thread_types(si, ids);
        }
    }

    /// The samples of the threads the reader left out of this walk ([`StackSource::elided`]):
    /// each one's last quiet sample again.
    fn repeat_elided(&mut self, si: usize, pid: u32, threads: &mut Vec<ThreadSample>, wants_type: &mut FxHashSet<u64>) {
        let now_ns = self.start.elapsed().as_nanos() as u64;
        for &(ident, native) in self.spies[si].spy.elided() {
            let Some(e) = self.threads.get_mut(&thread_key(pid, Some(native as u32), ident)) else { continue };
            if e.python_id != ident {
                continue;
            }
            if let Some(mut s) = e.quiet_sample {
                // A wait whose object is still to be read: read with the next walk, a few
                // threads at a time; the samples standing meanwhile get it then (`patch_many`).
                if self.opts.waits && s.wait.is_some() && !e.wait_settled {
                    let (now, settled) = self.waits.requeue(s.thread);
                    if now.is_some() && now != s.wait {
                        s.wait = now;
                        e.quiet_sample = Some(s);
                    }
                    // A thousand sleepers a tick: their waits are not looked up again.
                    e.wait_settled = settled;
                }
                // Its type is still read, at the ticks the sampler asks for it (see `observe`).
                if e.type_attempts > 0 {
                    if e.bootstrap_seen {
                        if wants_type.len() < TYPES_PER_WALK {
                            wants_type.insert(ident);
                        }
                    } else if e.type_patience == 0 {
                        e.type_attempts = 0;
                    } else {
                        e.type_patience -= 1;
                    }
                }
                e.pre = None;
                e.last_seen_ns = Some(now_ns);
                e.held_gil = false;
                threads.push(s);
            }
        }
    }

    fn observe(&mut self, si: usize, pid: u32, trace: py_spy::StackTrace, wants_type: &mut FxHashSet<u64>, unnamed: &mut bool) -> Option<ThreadSample> {
        let tid = trace.os_thread_id.map(|t| t as u32);
        let key = thread_key(pid, tid, trace.thread_id);
        let mut entry = self.threads.remove(&key);
        // The kernel's view: read before the stack walk, or now for a thread new in this tick.
        let mut reading = entry.as_mut().and_then(|e| e.pre.take());
        // A different Python thread behind the same tid (the tid was reused; or no tid and the
        // ident was reused, which start times cannot tell): a new thread.
        if entry.as_ref().is_some_and(|e| e.python_id != trace.thread_id) {
            let old = entry.take().unwrap();
            reading = None;
            entry = Some(self.new_thread_entry(si, pid, tid, &trace, None));
            drop(old);
        }
        if let Some(tid) = tid {
            let e = match entry.as_mut() {
                Some(e) => e,
                None => entry.insert(self.new_thread_entry(si, pid, Some(tid), &trace, None)),
            };
            if !matches!(reading, Some(KernelReading::Read { .. })) {
                // No reading yet, or the files opened for this tid belong to a thread that has
                // ended: open them again, which reaches whichever thread has the tid now.
                if matches!(reading, Some(KernelReading::Vanished)) {
                    e.proc = None;
                }
                let mut before_walk = None;
                if e.proc.is_none() {
                    let (file, read) = match self.preopened.remove(&(pid, tid)) {
                        Some((file, read)) => (Some(file), read),
                        None => (ThreadProc::open(pid, tid).ok(), None),
                    };
                    e.proc = file;
                    before_walk = read.filter(|r| matches!(r, KernelReading::Read { .. }));
                }
                match before_walk {
                    // Read before this tick's walk, as every known thread is: it may stand.
                    Some(r) => {
                        reading = Some(r);
                        e.last_read = Some(r).filter(KernelReading::off_cpu);
                    }
                    None => {
                        reading = e.proc.as_mut().map(KernelReading::take).or(Some(KernelReading::Vanished));
                        // Read after the stack walk: the stack may be older than this reading (the
                        // thread ran between the two and fell asleep elsewhere), so it cannot stand
                        // for the next tick; the next tick reads the thread before its walk.
                        e.last_read = None;
                    }
                }
            }
            if let Some(KernelReading::Read { stat, .. }) = reading {
                if e.start_time.is_some_and(|st| st != stat.start_time) {
                    // The tid was reused by a new thread: start a new entry.
                    let proc_ = e.proc.take();
                    *e = self.new_thread_entry(si, pid, Some(tid), &trace, proc_);
                }
                if e.start_time.is_none() {
                    e.start_time = Some(stat.start_time);
                    self.builder.run_mut().threads[e.id as usize].start_time = Some(stat.start_time);
                }
            }
        } else if entry.is_none() {
            entry = Some(self.new_thread_entry(si, pid, None, &trace, None));
        }
        let (stat, sched, syscall, read_us) = match reading {
            Some(KernelReading::Read { stat, sched, syscall, at, .. }) => (Some(stat), sched, syscall, at.saturating_duration_since(self.tick_at).as_micros().min(u32::MAX as u128) as u32),
            Some(KernelReading::Vanished) => {
                // Exited between the kernel read and the stack walk.
                self.stats.skipped_threads += 1;
                self.threads.insert(key, entry.unwrap());
                return None;
            }
            None => (None, None, None, 0),
        };
        let mut e = entry.unwrap();
        let id = e.id;

        let (cpu_ns, runq_ns) = match (e.last_sched, sched) {
            (Some(a), Some(b)) => (b.cpu_ns.saturating_sub(a.cpu_ns), b.runq_ns.saturating_sub(a.runq_ns)),
            _ => (0, 0),
        };
        if let Some(s) = sched {
            let th = &mut self.builder.run_mut().threads[id as usize];
            if th.cpu_ns_first.is_none() {
                th.cpu_ns_first = Some(s.cpu_ns);
                th.runq_ns_first = Some(s.runq_ns);
            }
            th.cpu_ns_last = Some(s.cpu_ns);
            th.runq_ns_last = Some(s.runq_ns);
            e.last_sched = Some(s);
        }
        let os_state = stat.map(|s| s.state);
        // The GIL holder read together with the kernel state; py-spy's reading otherwise.
        let owns_gil = match self.tick_holder {
            Some(holder) => holder == Some(trace.thread_id),
            None => trace.owns_gil,
        };
        let now_ns = self.start.elapsed().as_nanos() as u64;
        let recent_cpu = match (e.last_seen_ns, sched.is_some() && e.last_sched_was_fresh) {
            (Some(prev), true) if now_ns > prev => Some(cpu_ns as f64 / (now_ns - prev) as f64),
            _ => None,
        };
        // The trace that made a pending entry carries the possibly stale cached name.
        let first_observation = e.last_seen_ns.is_none();
        e.last_seen_ns = Some(now_ns);
        e.last_sched_was_fresh = sched.is_some();
        // A thread that held the GIL at its previous sample and is runnable without it now has
        // just handed it over: its recent CPU time is the GIL's, not GIL-free work.
        let recent_cpu = if e.held_gil && !owns_gil { Some(0.0) } else { recent_cpu };
        e.held_gil = owns_gil;
        let (state, blocked) = classify(os_state, owns_gil, syscall, &self.spies[si].runtime, recent_cpu);

        match trace.thread_name.as_deref() {
            Some(_) if e.name_pending && first_observation => {}
            // A pending name's cache entry was dropped when the entry was made, so this name
            // comes from a lookup made after this thread existed.
            Some(name) => {
                e.name_pending = false;
                let th = &mut self.builder.run_mut().threads[id as usize];
                if th.name != name {
                    th.name = name.to_string();
                }
            }
            None => {
                *unnamed = true;
                if e.inherited_comm && !trace.frames.is_empty() {
                    self.name_by_root_function(pid, tid, &mut e, &trace);
                }
            }
        }
        if e.name_pending {
            // Not registered in `threading` yet: ask again at the next tick.
            self.spies[si].spy.forget_thread_name(trace.thread_id);
        }
        e.bootstrap_seen = trace.frames.iter().any(is_bootstrap_inner);
        if e.type_attempts > 0 {
            if e.bootstrap_seen {
                if wants_type.len() < TYPES_PER_WALK {
                    wants_type.insert(trace.thread_id);
                }
            } else if e.type_patience == 0 {
                e.type_attempts = 0;
            } else {
                e.type_patience -= 1;
            }
        }
        let stack = self.intern_stack(pid, &trace.frames);
        // CPU time since the last reading: the thread ran in between (a wait now is a new one).
        let ran = cpu_ns > 0;
        let wait = if self.opts.waits { self.read_wait(pid, id, e.python_id, (state, ran), blocked, syscall, stack, &trace.frames) } else { None };
        let blocked = blocked.map(|b| self.builder.string(b));
        let sample = ThreadSample { thread: id, stack, state, gil: owns_gil, cpu_ns, runq_ns, blocked, wait, read_us };
        // What a later quiet tick with the same stack would make again (see `quiet_sample`).
        let stands = e.quiet_now
            && cpu_ns == 0
            && !owns_gil
            && !e.name_pending
            && trace.thread_name.is_some()
            && (!self.opts.waits || self.waits.settled(id) || self.waits.requeueable(id));
        e.quiet_sample = stands.then_some(sample);
        e.wait_settled = false;
        self.threads.insert(key, e);
        Some(sample)
    }

    /// What a blocked thread waits on (see `waits`); the object, when it needs the frames'
    /// arguments, is read after the process's walk by `sample_once`.
    #[allow(clippy::too_many_arguments)]
    fn read_wait(
        &mut self,
        pid: u32,
        thread: ThreadId,
        python_id: u64,
        (state, ran): (ThreadState, bool),
        blocked: Option<&str>,
        syscall: Option<procfs::Syscall>,
        stack: Option<StackId>,
        frames: &[py_spy::Frame],
    ) -> Option<WaitId> {
        if state == ThreadState::Computing && blocked.is_none() {
            self.waits.forget(thread);
            return None;
        }
        let refs: Vec<crate::waits::FrameRef> =
            frames.iter().map(|f| crate::waits::FrameRef { name: &f.name, file: &f.filename, line: f.line.max(0) as u32 }).collect();
        let list = &self.raw_stack_list;
        let frame_ids = || {
            let mut ids = Vec::new();
            let mut node = stack;
            while let Some(n) = node {
                let (parent, frame) = list[n as usize];
                ids.push(frame);
                node = parent;
            }
            ids
        };
        let now_ns = self.start.elapsed().as_nanos() as u64;
        let o = crate::waits::Observation { pid, thread, python_id, state, blocked, syscall, stack, frames: &refs, frame_ids: &frame_ids, now_ns, ran };
        self.waits.observe(&o, &mut self.builder)
    }

    /// A new entry for the thread behind `trace`. Its name is trusted only when no earlier thread
    /// of the process had the same ident: py-spy caches names by ident, and CPython gives a new
    /// thread the ident of one that ended, so the cached name may be the earlier thread's. Such a
    /// name is dropped from the cache and read afresh at the next tick.
    fn new_thread_entry(&mut self, si: usize, pid: u32, tid: Option<u32>, trace: &py_spy::StackTrace, proc_: Option<ThreadProc>) -> ThreadEntry {
        let reused_ident = !self.seen_idents.insert((pid, trace.thread_id));
        let python_name = if reused_ident { None } else { trace.thread_name.clone() };
        let name_pending = python_name.is_none();
        if name_pending {
            self.spies[si].spy.forget_thread_name(trace.thread_id);
        }
        // The OS name only stands in for a Python name still unknown (read for every thread, it
        // was a third of a first tick's cost with a thousand threads).
        let os_name = tid.filter(|_| python_name.is_none()).and_then(|tid| procfs::thread_comm(pid, tid));
        // A thread that has only the OS name it inherited (the process's `comm`): not the main
        // thread, and its name differs from the main thread's when it set one itself.
        let inherited_comm = python_name.is_none() && tid.is_some_and(|t| t != pid) && os_name.is_some() && os_name == procfs::thread_comm(pid, pid);
        let name = python_name.or(os_name).unwrap_or_else(|| format!("thread-{}", trace.thread_id));
        let tid = tid.unwrap_or(0);
        if tid != 0 && self.sched.is_some() {
            self.sched_tids.lock().unwrap().push(tid);
        }
        let is_main = tid != 0 && tid == pid;
        let mut th = new_thread(pid, tid, trace.thread_id, &name, "");
        th.is_main = is_main;
        if is_main {
            th.thread_type = "_MainThread".into();
            th.type_source = TypeSource::Main;
        }
        let id = self.builder.thread(th);
        ThreadEntry {
            id,
            python_id: trace.thread_id,
            name_pending,
            proc: proc_,
            start_time: None,
            last_sched: None,
            last_seen_ns: None,
            last_sched_was_fresh: false,
            held_gil: false,
            pre: None,
            last_read: None,
            type_attempts: if is_main { 0 } else { 3 },
            type_patience: 300,
            inherited_comm,
            quiet_now: false,
            quiet_sample: None,
            wait_settled: false,
            bootstrap_seen: false,
        }
    }

    /// Names a thread that has no name but the process's inherited `comm` by its root
    /// (outermost) Python function and its tid (`_perform_spawn-4711`): threads started with
    /// `_thread.start_new_thread` (execnet's workers) or from C read alike otherwise. Not while
    /// `threading` is still starting it (its name comes from `threading` then), and not when it
    /// has meanwhile set an OS name of its own, which it keeps.
    fn name_by_root_function(&mut self, pid: u32, tid: Option<u32>, e: &mut ThreadEntry, trace: &py_spy::StackTrace) {
        let Some(name) = root_function_name(&trace.frames, tid.map_or(trace.thread_id, u64::from)) else { return };
        e.inherited_comm = false;
        let th = &mut self.builder.run_mut().threads[e.id as usize];
        match tid.and_then(|tid| procfs::thread_comm(pid, tid)) {
            Some(own) if own != th.name => th.name = own,
            _ => th.name = name,
        }
    }

    /// Reads the class of each new thread's `threading.Thread` object: the `self` local of
    /// `Thread._bootstrap_inner`, which py-spy formats as `<Worker at 0x…>`. Costs one extra
    /// stack read with locals, only when new threads appeared.
    fn read_thread_types(&mut self, si: usize, ids: FxHashSet<u64>) {
        let spy = &mut self.spies[si];
        let traces = spy.spy.stack_traces_with_arguments_of(ids.into_iter().collect());
        let pid = spy.pid;
        if let Ok(traces) = traces {
            self.types_from(pid, &traces);
        }
    }

    /// The types of the threads still without one, from a walk of process `pid` with arguments:
    /// the class of `self` in `Thread._bootstrap_inner`.
    fn types_from(&mut self, pid: u32, traces: &[py_spy::StackTrace]) {
        for trace in traces {
            let key = thread_key(pid, trace.os_thread_id.map(|t| t as u32), trace.thread_id);
            let Some(e) = self.threads.get_mut(&key) else { continue };
            if e.type_attempts == 0 || e.python_id != trace.thread_id {
                continue;
            }
            let Some(inner) = trace.frames.iter().find(|f| is_bootstrap_inner(f)) else { continue };
            e.type_attempts -= 1;
            let found = inner
                .locals
                .as_ref()
                .and_then(|ls| ls.iter().find(|l| l.name == "self"))
                .and_then(|l| l.repr.as_deref())
                .and_then(type_from_repr);
            if let Some(ty) = found {
                e.type_attempts = 0;
                let th = &mut self.builder.run_mut().threads[e.id as usize];
                th.thread_type = ty;
                th.type_source = TypeSource::Object;
            }
        }
    }

    /// The file's id in the run; a new file is sent to the source reader, which reads it where
    /// this process finds it (under the program's root when that is not ours: a chroot or a
    /// container).
    fn intern_file(&mut self, pid: u32, path: &str) -> u32 {
        if let Some(&id) = self.files.get(path) {
            return id;
        }
        let id = self.file_names.len() as u32;
        if path.contains("/asyncio/") {
            self.tasks.asyncio_seen = true;
        }
        self.file_names.push(path.to_string());
        self.files.insert(path.to_string(), id);
        if let Some(resolver) = &mut self.resolver {
            let at = match self.roots.get(&pid) {
                Some(root) => root.host_path(path).display().to_string(),
                None => path.to_string(),
            };
            resolver.send(id, at);
        }
        id
    }

    fn intern_raw_frame(&mut self, file: u32, name: &str, line: u32) -> u32 {
        let at = self.raw_frames.entry((file, line)).or_default();
        if let Some(&(_, id)) = at.iter().find(|(n, _)| &**n == name) {
            return id;
        }
        let id = self.raw_frame_list.len() as u32;
        at.push((name.into(), id));
        self.raw_frame_list.push(RawFrame { file, name: name.to_string(), line });
        id
    }

    fn intern_stack(&mut self, pid: u32, frames: &[py_spy::Frame]) -> Option<u32> {
        let mut parent = None;
        // py-spy lists the innermost frame first; the prefix tree grows from the outermost.
        for f in frames.iter().rev() {
            let file = self.intern_file(pid, &f.filename);
            let frame = self.intern_raw_frame(file, &f.name, f.line.max(0) as u32);
            let key = (parent, frame);
            let next = self.raw_stack_list.len() as u32;
            let node = *self.raw_stacks.entry(key).or_insert_with(|| {
                self.raw_stack_list.push(key);
                next
            });
            parent = Some(node);
        }
        parent
    }

    /// Stops the source reader, maps every frame to its function and class, derives missing
    /// thread types from entry points and returns the finished run.
    pub fn finish(mut self, end_reason: EndReason, exit_status: Option<ExitStatus>) -> Run {
        let elapsed = self.start.elapsed();
        self.take_sched(true);
        self.take_locks(true);
        let (infos, warning) = match self.resolver.take() {
            Some(resolver) => resolver.finish(),
            None => (HashMap::new(), None),
        };
        // Waits on a C lock's or queue's futex whose object was not read get the one read there.
        self.waits.attach_known_objects(&mut self.builder);
        let b = &mut self.builder;
        b.run_mut().meta.warnings.extend(warning);
        // Files and functions.
        let mut file_map = Vec::with_capacity(self.file_names.len());
        for (i, path) in self.file_names.iter().enumerate() {
            let info = infos.get(&(i as u32)).cloned().unwrap_or_default();
            file_map.push(b.file(path, file_kind_in(path, &self.user_roots), info.sha256.clone()));
        }
        let mut frame_map = Vec::with_capacity(self.raw_frame_list.len());
        for raw in &self.raw_frame_list {
            let info = infos.get(&raw.file);
            let spec_owned = resolve_function(info.and_then(|i| i.index.as_ref()), &raw.name, raw.line);
            let func = b.function(
                file_map[raw.file as usize],
                &FunctionSpec {
                    qualname: &spec_owned.0,
                    class: spec_owned.1.as_deref(),
                    line: spec_owned.2,
                    end_line: spec_owned.3,
                    class_line: spec_owned.4,
                },
            );
            frame_map.push(b.frame(func, raw.line));
        }
        let mut stack_map: Vec<u32> = Vec::with_capacity(self.raw_stack_list.len());
        for &(parent, frame) in &self.raw_stack_list {
            let p = parent.map(|p| stack_map[p as usize]);
            stack_map.push(b.stack_node(p, frame_map[frame as usize]));
        }
        let run = b.run_mut();
        for s in &mut run.samples {
            for ts in &mut s.threads {
                ts.stack = ts.stack.map(|st| stack_map[st as usize]);
            }
        }
        // Wait objects were recorded with raw frame ids, like the stacks.
        for w in &mut run.waits {
            if let Some(o) = &mut w.object {
                o.frame = o.frame.map(|f| frame_map[f as usize]);
            }
        }
        derive_entry_point_types(run, "Thread");
        self.finish_tasks(&frame_map, &stack_map);
        let run = self.builder.run_mut();
        let rate = rate_over_lifetimes(run, self.opts.interval);
        let m = &mut run.meta;
        m.achieved_rate_hz = rate;
        m.duration_s = elapsed.as_secs_f64();
        m.end_reason = end_reason;
        m.exit_status = exit_status;
        m.missed_samples = self.stats.missed;
        m.late_samples = self.stats.late;
        m.failed_samples = self.stats.failed;
        m.skipped_threads = self.stats.skipped_threads;
        m.unchanged_thread_reads = self.stats.quiet_threads;

        self.builder.finish()
    }
}

/// The `threadradar-source` thread: reads, hashes and parses each file off the sampling thread and
/// sends each result back as soon as it is made, so a panic on one file loses only the files not
/// read yet, and says so in the run.
struct Resolver {
    paths: mpsc::Sender<(u32, String)>,
    results: mpsc::Receiver<(u32, FileInfo)>,
    handle: std::thread::JoinHandle<()>,
    /// How many files were asked for.
    asked: usize,
}

impl Resolver {
    fn start(load: impl Fn(&str) -> FileInfo + Send + 'static) -> Resolver {
        let (paths, rx) = mpsc::channel::<(u32, String)>();
        let (tx, results) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("threadradar-source".into())
            .spawn(move || {
                for (id, path) in rx {
                    if tx.send((id, load(&path))).is_err() {
                        return;
                    }
                }
            })
            .expect("spawning a thread");
        Resolver { paths, results, handle, asked: 0 }
    }

    /// Asks for file `id` at `path` (ignored once the thread has stopped).
    fn send(&mut self, id: u32, path: String) {
        self.asked += 1;
        let _ = self.paths.send((id, path));
    }

    /// Waits for the files asked for and returns what was learnt of each; when the thread
    /// panicked, also a warning that says which files have no hash or definitions.
    fn finish(self) -> (HashMap<u32, FileInfo>, Option<String>) {
        drop(self.paths);
        let joined = self.handle.join();
        let infos: HashMap<u32, FileInfo> = self.results.try_iter().collect();
        let warning = joined.err().map(|payload| {
            let text = payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_else(|| "no message".into());
            format!(
                "the source reader stopped with a panic ({text}) after reading {} of {} files, so the others have no sha256 and no function or class names; record again, and report this as a bug if it repeats",
                infos.len(),
                self.asked
            )
        });
        (infos, warning)
    }
}

/// Samples per second of each thread's own life, over all threads: thread-samples divided by the
/// sum of the threads' lifetimes (first to last sample, plus one interval). A program that starts
/// Python late (behind a wrapper) or threads that live briefly do not make the rate look low, and a
/// thread's samples times `1 / rate` estimates its lifetime.
fn rate_over_lifetimes(run: &Run, interval: Duration) -> f64 {
    let mut count = vec![0u64; run.threads.len()];
    for s in &run.samples {
        for ts in &s.threads {
            count[ts.thread as usize] += 1;
        }
    }
    let (mut samples, mut life_ns) = (0u64, 0f64);
    for (t, &n) in run.threads.iter().zip(&count) {
        if n == 0 {
            continue;
        }
        let (Some(a), Some(b)) = (run.samples.get(t.first_sample as usize), run.samples.get(t.last_sample as usize)) else { continue };
        samples += n;
        life_ns += (b.t - a.t) as f64 + interval.as_nanos() as f64;
    }
    if life_ns > 0.0 {
        samples as f64 / (life_ns / 1e9)
    } else {
        0.0
    }
}

/// The name of a thread not started by `threading`, from its stack (innermost frame first):
/// its root (outermost) Python function's own name and `id` (`_perform_spawn-4711`), which tells
/// alike threads apart. `None` while `threading` may be starting it (a frame of `threading.py`
/// at the root) or when the root is a module's code.
fn root_function_name(frames: &[py_spy::Frame], id: u64) -> Option<String> {
    let root = frames.last()?;
    if root.filename.ends_with("threading.py") || root.name.starts_with('<') {
        return None;
    }
    let short = root.name.rsplit('.').next().unwrap_or(&root.name);
    Some(format!("{short}-{id}"))
}

/// `threading.Thread._bootstrap_inner`, the frame whose `self` is the thread's object.
fn is_bootstrap_inner(f: &py_spy::Frame) -> bool {
    f.name.ends_with("_bootstrap_inner") && f.filename.ends_with("threading.py")
}

/// `<Worker at 0x7f…>` → `Worker`.
fn type_from_repr(repr: &str) -> Option<String> {
    let inner = repr.strip_prefix('<')?;
    let (name, _) = inner.split_once(" at 0x")?;
    let name = name.rsplit('.').next()?;
    (!name.is_empty()).then(|| name.to_string())
}

/// One trace per OS thread. While CPython starts a thread, the new thread's state is made by the
/// thread that starts it and carries that thread's ids until the new thread runs (3.11: native id
/// and ident of the parent), so the parent appears twice, once without frames. Keeps the trace with
/// Python frames (the first one on a tie); traces without a tid are kept as they are.
fn one_trace_per_thread(mut traces: Vec<py_spy::StackTrace>) -> Vec<py_spy::StackTrace> {
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut keep = vec![true; traces.len()];
    for (i, t) in traces.iter().enumerate() {
        let Some(tid) = t.os_thread_id else { continue };
        match seen.get(&tid) {
            None => {
                seen.insert(tid, i);
            }
            Some(&j) => {
                if traces[j].frames.is_empty() && !t.frames.is_empty() {
                    keep[j] = false;
                    seen.insert(tid, i);
                } else {
                    keep[i] = false;
                }
            }
        }
    }
    let mut i = 0;
    traces.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    traces
}

fn process_name(pid: u32) -> String {
    procfs::cmdline(pid).first().map(|s| s.rsplit('/').next().unwrap_or(s).to_string()).unwrap_or_else(|| "?".into())
}

/// Asks the kernel for precise sleeps (1 µs timer slack instead of 50 µs), so the rate holds.
fn set_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes its value by value and the unused arguments are zero; it
    // reads and writes no memory of ours and only affects this thread's timers.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic while reading one file keeps the files read before it and says so in one warning.
    #[test]
    fn a_panicking_source_reader_keeps_what_it_read_and_warns() {
        let mut r = Resolver::start(|path| {
            if path == "bad.py" {
                panic!("cannot parse bad.py");
            }
            FileInfo { sha256: Some(format!("hash of {path}")), ..FileInfo::default() }
        });
        r.send(0, "a.py".into());
        r.send(1, "b.py".into());
        r.send(2, "bad.py".into());
        r.send(3, "c.py".into());
        let (infos, warning) = r.finish();
        assert_eq!(infos.len(), 2, "{infos:?}");
        assert_eq!(infos[&0].sha256.as_deref(), Some("hash of a.py"));
        assert_eq!(infos[&1].sha256.as_deref(), Some("hash of b.py"));
        let w = warning.expect("a warning");
        assert!(w.contains("cannot parse bad.py") && w.contains("after reading 2 of 4 files"), "{w}");
        // Without a panic: everything, no warning.
        let mut r = Resolver::start(|_| FileInfo::default());
        r.send(0, "a.py".into());
        let (infos, warning) = r.finish();
        assert_eq!((infos.len(), warning), (1, None));
    }

    #[test]
    fn type_names_from_reprs() {
        assert_eq!(type_from_repr("<Worker at 0x7f00aa>").as_deref(), Some("Worker"));
        assert_eq!(type_from_repr("<threading.Thread at 0x1>").as_deref(), Some("Thread"));
        assert_eq!(type_from_repr("12"), None);
    }
}
