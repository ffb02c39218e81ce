//! The run: what one `threadradar record` saw, as it is stored in a run file.
//!
//! One data model, defined once and shared by the profiler (which writes it), `analysis` (which
//! reads it) and the language server. Names are interned: samples reference stack ids, stacks are a
//! prefix tree of frame ids, frames reference functions, functions reference files and strings.
//! `docs/run-format.md` describes the JSON shape; keep the two in step.
//!
//! Architecture invariant: every id stored in a [`Run`] that has passed [`Run::validate`] is in
//! range, and every stack node's parent has a smaller id than the node. Code that reads a validated
//! run may index the tables without bounds checks failing.

use serde::de::{self, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

pub use crate::lockevents::{LockEvent, LockInfo};

/// The value of the `format` field of every run file.
pub const FORMAT: &str = "threadradar-run";
/// The run-file version this build writes and the newest it reads. Version 2 is a stream of
/// JSON lines (a header, then chunks that add to the tables), written while recording so that a
/// recorder that is killed leaves a readable run; version 1 (one JSON document) is still read.
pub const VERSION: u32 = 2;

/// Index into [`Run::strings`].
pub type StrId = u32;
/// Index into [`Run::files`].
pub type FileId = u32;
/// Index into [`Run::functions`].
pub type FunctionId = u32;
/// Index into [`Run::frames`].
pub type FrameId = u32;
/// Index into [`Run::stacks`]; a stack id names the innermost frame's node of the prefix tree.
pub type StackId = u32;
/// Index into [`Run::threads`].
pub type ThreadId = u32;
/// Index into [`Run::waits`].
pub type WaitId = u32;

/// A whole recorded run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Always [`FORMAT`].
    pub format: String,
    /// The format version, [`VERSION`] for files this build writes.
    pub version: u32,
    pub meta: Meta,
    /// Interned strings: file paths, function names, qualified names, class names, blocking calls.
    pub strings: Vec<String>,
    pub files: Vec<SourceFile>,
    pub functions: Vec<Function>,
    pub frames: Vec<Frame>,
    pub stacks: Vec<StackNode>,
    pub processes: Vec<Process>,
    pub threads: Vec<Thread>,
    pub samples: Vec<Sample>,
    /// What idle and GIL-waiting threads waited on: one entry per distinct target, referenced by
    /// [`ThreadSample::wait`]. Empty in runs written before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<WaitTarget>,
    /// How the scheduler's events were recorded (`record --sched`); `None` when they were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched: Option<SchedInfo>,
    /// Context switches that involve a thread of the sampled processes, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub switches: Vec<SchedSwitch>,
    /// Wake-ups of a thread of the sampled processes, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wakeups: Vec<SchedWakeup>,
    /// How the lock uprobes were recorded (`record --exact-locks`); `None` when they were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locks: Option<LockInfo>,
    /// Calls and returns of the interpreter's lock functions by the sampled processes' threads,
    /// in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lock_events: Vec<LockEvent>,
    /// How asyncio tasks were recorded (CPython 3.14+); `None` when they were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks_info: Option<crate::tasks::TasksInfo>,
    /// The asyncio tasks seen ([`crate::tasks`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<crate::tasks::Task>,
    /// Which task each event-loop thread ran, as runs of samples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_runs: Vec<crate::tasks::TaskRun>,
    /// The tasks' states as they changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_states: Vec<crate::tasks::TaskState>,
}

/// What a thread was waiting on at a sample: the system call, its futex address or file
/// descriptor, and the Python object behind it when the waiting frame could be read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WaitTarget {
    /// The system call the thread was in (string id): `futex`, `read`, `poll`, `GIL`, …
    pub syscall: StrId,
    /// The futex address (the call's first argument) for `futex`; for the GIL, the address of
    /// the GIL's mutex when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub futex: Option<u64>,
    /// The file descriptor for calls on one (`read`, `recvfrom`, `poll` of a single fd, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd: Option<i32>,
    /// What the descriptor was open on (string id): `pipe:[456]`, `socket:[123]`, a path. `None`
    /// when it could not be read (closed meanwhile): never guessed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd_target: Option<StrId>,
    /// The Python object waited on, read from the waiting frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<WaitObject>,
}

/// A Python object a thread waited on (a lock, condition, queue, event, thread, future, the GIL).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WaitObject {
    /// The object's address in the target process (0 for the GIL when its address is unknown).
    pub addr: u64,
    /// Its type (string id): `threading.Condition`, `_thread.lock`, `queue.Queue`, `GIL`, …
    pub type_name: StrId,
    /// The name the program's code uses for it (string id), from the first caller in the user's
    /// code: `self.not_empty`, `buffer.cond`, `q`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<StrId>,
    /// The caller frame whose source line gave the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<FrameId>,
    /// The Python thread id (`Thread::python_id`) that held the object when it was read: a C
    /// `_thread.RLock`'s owner; for a `Thread.join`, the joined thread (its `_ident`: it holds
    /// the lock a join waits on until it ends). A plain `Lock` (and every other type) records none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<u64>,
}

/// How the scheduler's events were recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedInfo {
    /// `perf_event_open` (per-CPU ring buffers on the sched tracepoints) or `tracefs`.
    pub source: String,
    /// Events the kernel dropped because the recorder did not drain its buffers in time.
    pub lost_events: u64,
    /// Anything a reader should know (e.g. `sched_wakeup` stood in for `sched_waking`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A context switch on some CPU: `prev_tid` left it (in state `prev_state`), `next_tid` got it.
///
/// Stored as `[t_ns, prev_tid, prev_state, next_tid]`; `t_ns` is in the run's clock (nanoseconds
/// since the run's start, like [`Sample::t`]); `prev_state` is the kernel's state letter as a byte
/// (`R` = 82 preempted, `S` = 83 sleeping, `D` = 68 uninterruptible, …). Tid 0 is the idle task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "(u64, u32, u8, u32)", into = "(u64, u32, u8, u32)")]
pub struct SchedSwitch {
    pub t: u64,
    pub prev_tid: u32,
    pub prev_state: u8,
    pub next_tid: u32,
}

impl From<(u64, u32, u8, u32)> for SchedSwitch {
    fn from((t, prev_tid, prev_state, next_tid): (u64, u32, u8, u32)) -> Self {
        SchedSwitch { t, prev_tid, prev_state, next_tid }
    }
}

impl From<SchedSwitch> for (u64, u32, u8, u32) {
    fn from(s: SchedSwitch) -> Self {
        (s.t, s.prev_tid, s.prev_state, s.next_tid)
    }
}

/// `waker_tid` made `wakee_tid` runnable (`sched_waking`, else `sched_wakeup`).
///
/// Stored as `[t_ns, waker_tid, wakee_tid]` in the run's clock; `waker_tid` is the task that was
/// on the CPU that issued the wake-up, 0 when it came from an interrupt or the idle task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "(u64, u32, u32)", into = "(u64, u32, u32)")]
pub struct SchedWakeup {
    pub t: u64,
    pub waker_tid: u32,
    pub wakee_tid: u32,
}

impl From<(u64, u32, u32)> for SchedWakeup {
    fn from((t, waker_tid, wakee_tid): (u64, u32, u32)) -> Self {
        SchedWakeup { t, waker_tid, wakee_tid }
    }
}

impl From<SchedWakeup> for (u64, u32, u32) {
    fn from(w: SchedWakeup) -> Self {
        (w.t, w.waker_tid, w.wakee_tid)
    }
}

/// What was run, how, and how the sampling went.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The command line that was launched, or the attached process's command line.
    pub command: Vec<String>,
    /// Working directory of the recording (where relative paths in `command` resolve).
    pub cwd: String,
    /// Whether the program was launched by `record` or attached to with `--pid`.
    pub mode: RecordMode,
    /// Every process sampled, root first.
    pub pids: Vec<u32>,
    /// CPython version of the root process, e.g. `3.11.7`.
    pub python_version: Option<String>,
    /// The requested sampling interval in milliseconds.
    pub interval_ms: f64,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub start_unix_ms: u64,
    /// Wall-clock time of `t = 0` (the first sample's schedule), in Unix seconds with sub-second
    /// precision: adding a sample's `t` gives the time of that sample, comparable with a
    /// program's own `time.time()`. `None` in runs written before it was recorded.
    #[serde(default)]
    pub started_at: Option<f64>,
    /// Seconds from the first to the last sample attempt.
    pub duration_s: f64,
    /// Why recording ended.
    pub end_reason: EndReason,
    /// How the launched program ended, when it was launched and has ended.
    pub exit_status: Option<ExitStatus>,
    /// The last signal threadradar sent the launched program's process group to end it
    /// (`"SIGINT"`, `"SIGTERM"`, `"SIGKILL"`), when recording stopped before the program did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_with: Option<String>,
    /// Number of entries in `samples`.
    pub sample_count: u64,
    /// Ticks that were skipped because the sampler fell more than one interval behind.
    pub missed_samples: u64,
    /// Samples taken more than half an interval after their scheduled time.
    pub late_samples: u64,
    /// Ticks at which reading the target failed (for example a torn read while it exited).
    pub failed_samples: u64,
    /// Thread observations dropped because the thread vanished while it was being read.
    pub skipped_threads: u64,
    /// Thread observations taken without reading the thread: the scheduler's switch events said
    /// it had not run since a reading that found it asleep, so that reading and its stack stood
    /// (kernel-exact: a thread that does not run changes neither its state nor its frames).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unchanged_thread_reads: u64,
    /// Samples per second actually achieved.
    pub achieved_rate_hz: f64,
    /// Version of threadradar that wrote the file.
    pub threadradar_version: String,
    /// Whether child processes were followed.
    pub subprocesses: bool,
    /// Set by the reader when the file ends without its final chunk: the recorder was killed (or
    /// crashed) and the run holds what it had flushed, at most about a second less than it saw.
    /// Functions are then the interpreter's names (frames were not yet mapped to the source).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// For a run made by `threadradar import` from another profiler's file: where it came from
    /// and what that format could not say. Absent in recorded runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<Imported>,
    /// The Python interpreter `threadradar test` (or the editor's profileTest) ran, and why that
    /// one. Absent in runs of `record`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpreter: Option<Interpreter>,
    /// The test (or test file) that was profiled and its outcome from pytest's JUnit XML. Absent
    /// in runs of `record`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<TestRun>,
    /// What went wrong while recording without stopping it, one sentence each with a next step
    /// (e.g. the source reader failed, so some files have no hash). Absent when nothing did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Which interpreter ran a test, and the rule that chose it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interpreter {
    pub path: String,
    /// E.g. `[tool.threadradar] python in pyproject.toml`, `.venv/bin/python`, `python3 on PATH`.
    pub source: String,
}

/// A profiled test run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestRun {
    /// pytest's node id or arguments, e.g. `tests/test_pool.py::TestPool::test_map`.
    pub id: String,
    /// `None` when pytest wrote no report (it was killed, or the run was cancelled before).
    pub outcome: Option<TestOutcome>,
}

/// Counts from pytest's JUnit XML report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestOutcome {
    pub passed: u32,
    pub failed: u32,
    pub errors: u32,
    pub skipped: u32,
    /// `test_name: message` of the first failure or error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<String>,
}

/// The origin of an imported run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    /// The format read, e.g. `py-spy raw (collapsed stacks)`, `speedscope`, `perf script`.
    pub format: String,
    /// The file it was read from, as given.
    pub file: String,
    /// What the format does not record and how the run stands in for it, as a sentence
    /// (e.g. that no thread states are known, so every sample counts as computing).
    pub note: String,
    /// What the format does not record, as keys (docs/formats.md lists them): `thread_states`,
    /// `sample_times`, `interval` (then `interval_ms` is assumed), `main_thread`, `pid`,
    /// `thread_names`, … Empty in runs imported before the keys were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
}

/// How the profiled program came to be sampled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordMode {
    #[default]
    Launch,
    Attach,
}

/// Why a recording ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The target (every sampled process) exited.
    #[default]
    Exited,
    /// `--duration` elapsed.
    Duration,
    /// The user pressed Ctrl-C (SIGINT) or threadradar received SIGTERM.
    Interrupted,
}

/// Exit status of a launched program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitStatus {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

/// Where a source file comes from, for the overview's "exclude standard library / third-party".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// The program's own code.
    #[default]
    User,
    /// CPython's standard library (including frozen modules).
    Stdlib,
    /// Installed packages (`site-packages`, `dist-packages`).
    ThirdParty,
    /// Code without a file, e.g. `<string>`.
    Unknown,
}

/// A source file seen in some frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceFile {
    /// Absolute path as the interpreter reported it (string id).
    pub path: StrId,
    /// Lower-case hex sha256 of the file's content when it was first seen during recording;
    /// `None` when the file could not be read.
    pub sha256: Option<String>,
    pub kind: FileKind,
}

/// A function, method, lambda-free source unit: the artifact level below class.
///
/// Identity is `(file, qualname, line)`. Code that is not inside any `def` maps to the function
/// `<module>` with `line` 0. Lambdas and comprehensions map to their enclosing `def`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Function {
    pub file: FileId,
    /// Qualified name as Python spells it: `Worker.run`, `outer.<locals>.inner`, `<module>`.
    pub qualname: StrId,
    /// Short name: `run`.
    pub name: StrId,
    /// Qualified name of the innermost class that lexically encloses the function, if any.
    pub class: Option<StrId>,
    /// 1-based line of the `def` keyword; 0 for `<module>` or when the source was not available.
    pub line: u32,
    /// 1-based last line of the function's body; 0 when unknown.
    pub end_line: u32,
    /// 1-based line of the enclosing class's `class` keyword; 0 when there is no class or no source.
    pub class_line: u32,
}

/// A frame: a function at a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Frame {
    pub function: FunctionId,
    /// 1-based line being executed; 0 when unknown.
    pub line: u32,
}

/// One node of the stack prefix tree. A stack is the path from a node up to its root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StackNode {
    pub frame: FrameId,
    /// The caller's node; `None` for the outermost frame. Always smaller than this node's id.
    pub parent: Option<StackId>,
}

/// A sampled process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Process {
    pub pid: u32,
    pub ppid: Option<u32>,
    pub command: Vec<String>,
    pub python_version: Option<String>,
    /// Which reader read its threads and stacks: `threadradar: _Py_DebugOffsets` (CPython 3.13+,
    /// the layout the interpreter publishes), `threadradar: built-in layout` (3.11, 3.12) or
    /// `py-spy <version>` (every other version). `None` in older runs and imports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader: Option<String>,
    /// The directory the process saw as `/` when it was not the recorder's (a chroot or a
    /// container), as the recorder named it (`/proc/<pid>/root` for a container's own mount
    /// namespace). Its frames' paths are under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
}

/// A thread seen during the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    pub pid: u32,
    /// OS thread id (Linux tid).
    pub tid: u32,
    /// Python's thread identifier (`threading.get_ident()`).
    pub python_id: u64,
    /// Python thread name (`threading.Thread.name`), or the OS name when Python has none.
    pub name: String,
    /// The thread type: the class of the `threading.Thread` object (`Thread`, `Worker`,
    /// `_MainThread`), else derived from the entry point; see `docs/run-format.md`.
    #[serde(rename = "type")]
    pub thread_type: String,
    /// How `thread_type` was found.
    pub type_source: TypeSource,
    /// Whether this is the process's main thread.
    pub is_main: bool,
    /// The kernel's start time of the thread (`/proc/<pid>/task/<tid>/stat` field 22, clock ticks
    /// since boot): with `pid` and `tid` it identifies one real thread even when the kernel reuses
    /// the tid and CPython the ident. `None` when it could not be read (or in older runs).
    #[serde(default)]
    pub start_time: Option<u64>,
    /// Index of the first and last sample that contains this thread.
    pub first_sample: u32,
    pub last_sample: u32,
    /// Kernel accounting (`/proc/<pid>/task/<tid>/schedstat`) at the first and at the last sample:
    /// cumulative nanoseconds on CPU and waiting in the run queue. `None` if unreadable.
    pub cpu_ns_first: Option<u64>,
    pub cpu_ns_last: Option<u64>,
    pub runq_ns_first: Option<u64>,
    pub runq_ns_last: Option<u64>,
}

/// How a thread's type was determined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TypeSource {
    /// Read from the `threading.Thread` object in the target's memory.
    Object,
    /// Derived from the thread's entry point (first frame above `threading`'s bootstrap).
    EntryPoint,
    /// A thread not started by `threading` (no `Thread._bootstrap_inner` on its stack: started
    /// with `_thread.start_new_thread`, or from C): the qualified name of its root (outermost)
    /// Python function, the one it was started to run.
    RootFunction,
    /// The main thread.
    Main,
    /// Not a thread: an asyncio task shown as a unit of concurrency (`--units tasks`, made by
    /// `threadradar_analysis::units::tasks_as_units` from [`Run::tasks`]); its type is its root
    /// coroutine's qualified name, its `tid` its event loop's thread. Never written by `record`.
    Task,
    /// Nothing to go on.
    #[default]
    Unknown,
}

/// One tick of the sampler: every live thread of every sampled process at one moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Nanoseconds since the start of the run (monotonic clock).
    pub t: u64,
    /// One entry per thread observed at this tick.
    pub threads: Vec<ThreadSample>,
}

/// What a thread was doing, as the metrics need it (spec §1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreadState {
    /// On CPU or ready to run, including waiting in a blocking I/O call (the paper's Java
    /// `Runnable`). These samples count for the metrics by default.
    #[default]
    Computing,
    /// Waiting to take the GIL.
    Gil,
    /// Sleeping, or blocked on a lock, condition, queue, event, join or child process.
    Idle,
}

impl ThreadState {
    fn code(self) -> u8 {
        match self {
            ThreadState::Computing => 0,
            ThreadState::Gil => 1,
            ThreadState::Idle => 2,
        }
    }
    fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => ThreadState::Computing,
            1 => ThreadState::Gil,
            2 => ThreadState::Idle,
            _ => return None,
        })
    }
}

/// One thread at one tick.
///
/// Stored compactly as a JSON array `[thread, stack, flags, cpu_ns, runq_ns]` with an optional
/// sixth element `blocked` (a string id, `null` when absent but a seventh follows) and an optional
/// seventh `wait` (a [`WaitId`]), and an optional eighth `read_us` (written when not 0; the sixth and
/// seventh are then `null` when absent): `flags` is the state code (0 computing, 1 waiting for
/// the GIL, 2 idle) plus 4 when the thread held the GIL; `stack` is `null` when the thread had no
/// Python frames. `cpu_ns` / `runq_ns` are the kernel-accounted nanoseconds on CPU and in the run
/// queue since this thread's previous sample (0 at its first sample or when unreadable).
/// `read_us` is when the thread's kernel state was read, in microseconds after the sample's `t`:
/// the sampler reads threads one after another, so under load a thread's state may be
/// milliseconds younger than the tick (0 in runs recorded before it was kept).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadSample {
    pub thread: ThreadId,
    pub stack: Option<StackId>,
    pub state: ThreadState,
    /// The thread held the GIL.
    pub gil: bool,
    pub cpu_ns: u64,
    pub runq_ns: u64,
    /// What the thread was blocked in, when known (string id): a system call such as `futex`,
    /// `clock_nanosleep`, `read`, `poll`, `wait4`.
    pub blocked: Option<StrId>,
    /// What the thread waited on (idle and GIL-waiting samples only), when it was read.
    pub wait: Option<WaitId>,
    /// Microseconds from the sample's `t` to the reading of this thread's kernel state.
    pub read_us: u32,
}

impl ThreadSample {
    /// When this thread was observed, in nanoseconds since the run's start, for a sample at
    /// `sample_t`: the tick's time plus this thread's read offset.
    pub fn seen_at(&self, sample_t: u64) -> u64 {
        sample_t + self.read_us as u64 * 1_000
    }
}

const GIL_FLAG: u8 = 4;

impl Serialize for ThreadSample {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = if self.read_us != 0 {
            8
        } else if self.wait.is_some() {
            7
        } else if self.blocked.is_some() {
            6
        } else {
            5
        };
        let mut seq = serializer.serialize_seq(Some(len))?;
        seq.serialize_element(&self.thread)?;
        seq.serialize_element(&self.stack)?;
        seq.serialize_element(&(self.state.code() | if self.gil { GIL_FLAG } else { 0 }))?;
        seq.serialize_element(&self.cpu_ns)?;
        seq.serialize_element(&self.runq_ns)?;
        if len > 5 {
            seq.serialize_element(&self.blocked)?;
        }
        if len > 6 {
            seq.serialize_element(&self.wait)?;
        }
        if len > 7 {
            seq.serialize_element(&self.read_us)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for ThreadSample {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ThreadSample;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a thread sample [thread, stack, flags, cpu_ns, runq_ns, blocked?, wait?, read_us?]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ThreadSample, A::Error> {
                let missing = |i| de::Error::invalid_length(i, &self);
                let thread: u32 = seq.next_element()?.ok_or_else(|| missing(0))?;
                let stack: Option<u32> = seq.next_element()?.ok_or_else(|| missing(1))?;
                let flags: u8 = seq.next_element()?.ok_or_else(|| missing(2))?;
                let cpu_ns: u64 = seq.next_element()?.ok_or_else(|| missing(3))?;
                let runq_ns: u64 = seq.next_element()?.ok_or_else(|| missing(4))?;
                let blocked: Option<u32> = seq.next_element::<Option<u32>>()?.flatten();
                let wait: Option<u32> = seq.next_element::<Option<u32>>()?.flatten();
                let read_us: u32 = seq.next_element::<u32>()?.unwrap_or(0);
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(9, &self));
                }
                let state = ThreadState::from_code(flags & !GIL_FLAG).ok_or_else(|| {
                    de::Error::invalid_value(de::Unexpected::Unsigned(flags as u64), &"flags 0-2, +4 for GIL")
                })?;
                Ok(ThreadSample {
                    thread,
                    stack,
                    state,
                    gil: flags & GIL_FLAG != 0,
                    cpu_ns,
                    runq_ns,
                    blocked,
                    wait,
                    read_us,
                })
            }
        }
        deserializer.deserialize_seq(V)
    }
}

/// A reference in a run that points outside its table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} {index} refers to {target} {id}, but there are only {len}")]
pub struct DanglingId {
    pub what: &'static str,
    pub index: usize,
    pub target: &'static str,
    pub id: u64,
    pub len: usize,
}

impl Run {
    /// An empty run with the current format and version.
    pub fn new(meta: Meta) -> Run {
        Run {
            format: FORMAT.to_string(),
            version: VERSION,
            meta,
            strings: Vec::new(),
            files: Vec::new(),
            functions: Vec::new(),
            frames: Vec::new(),
            stacks: Vec::new(),
            processes: Vec::new(),
            threads: Vec::new(),
            samples: Vec::new(),
            waits: Vec::new(),
            sched: None,
            switches: Vec::new(),
            wakeups: Vec::new(),
            locks: None,
            lock_events: Vec::new(),
            tasks_info: None,
            tasks: Vec::new(),
            task_runs: Vec::new(),
            task_states: Vec::new(),
        }
    }

    /// The interned string `id`.
    pub fn str(&self, id: StrId) -> &str {
        &self.strings[id as usize]
    }

    /// A function's qualified name.
    pub fn qualname(&self, f: FunctionId) -> &str {
        self.str(self.functions[f as usize].qualname)
    }

    /// A file's path.
    pub fn file_path(&self, f: FileId) -> &str {
        self.str(self.files[f as usize].path)
    }

    /// The frames of a stack, innermost first.
    pub fn stack_frames(&self, stack: StackId) -> StackIter<'_> {
        StackIter { run: self, next: Some(stack) }
    }

    /// Checks that every id is in range and that stack parents precede their children.
    pub fn validate(&self) -> Result<(), DanglingId> {
        fn check(what: &'static str, index: usize, target: &'static str, id: u64, len: usize) -> Result<(), DanglingId> {
            if (id as usize) < len {
                Ok(())
            } else {
                Err(DanglingId { what, index, target, id, len })
            }
        }
        let ns = self.strings.len();
        for (i, f) in self.files.iter().enumerate() {
            check("file", i, "string", f.path as u64, ns)?;
        }
        for (i, f) in self.functions.iter().enumerate() {
            check("function", i, "file", f.file as u64, self.files.len())?;
            check("function", i, "string", f.qualname as u64, ns)?;
            check("function", i, "string", f.name as u64, ns)?;
            if let Some(c) = f.class {
                check("function", i, "string", c as u64, ns)?;
            }
        }
        for (i, f) in self.frames.iter().enumerate() {
            check("frame", i, "function", f.function as u64, self.functions.len())?;
        }
        for (i, s) in self.stacks.iter().enumerate() {
            check("stack", i, "frame", s.frame as u64, self.frames.len())?;
            if let Some(p) = s.parent {
                // Parents precede children, which also rules out cycles.
                check("stack", i, "parent stack", p as u64, i)?;
            }
        }
        for (i, w) in self.waits.iter().enumerate() {
            check("wait", i, "string", w.syscall as u64, ns)?;
            if let Some(f) = w.fd_target {
                check("wait", i, "string", f as u64, ns)?;
            }
            if let Some(o) = &w.object {
                check("wait", i, "string", o.type_name as u64, ns)?;
                if let Some(n) = o.name {
                    check("wait", i, "string", n as u64, ns)?;
                }
                if let Some(f) = o.frame {
                    check("wait", i, "frame", f as u64, self.frames.len())?;
                }
            }
        }
        for (si, s) in self.samples.iter().enumerate() {
            for t in &s.threads {
                check("sample", si, "thread", t.thread as u64, self.threads.len())?;
                if let Some(st) = t.stack {
                    check("sample", si, "stack", st as u64, self.stacks.len())?;
                }
                if let Some(b) = t.blocked {
                    check("sample", si, "string", b as u64, ns)?;
                }
                if let Some(w) = t.wait {
                    check("sample", si, "wait", w as u64, self.waits.len())?;
                }
            }
        }
        Ok(())
    }
}

/// Iterates a stack's frames from the innermost (the running code) to the outermost.
pub struct StackIter<'a> {
    run: &'a Run,
    next: Option<StackId>,
}

impl<'a> Iterator for StackIter<'a> {
    type Item = &'a Frame;
    fn next(&mut self) -> Option<&'a Frame> {
        let node = &self.run.stacks[self.next? as usize];
        self.next = node.parent;
        Some(&self.run.frames[node.frame as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_sample_round_trips_compactly() {
        let t = ThreadSample {
            thread: 3,
            stack: Some(17),
            state: ThreadState::Computing,
            gil: true,
            cpu_ns: 2_900_000,
            runq_ns: 12,
            blocked: None,
            wait: None,
            read_us: 0,
        };
        let s = serde_json::to_string(&t).unwrap();
        assert_eq!(s, "[3,17,4,2900000,12]");
        assert_eq!(serde_json::from_str::<ThreadSample>(&s).unwrap(), t);
        let idle = ThreadSample { stack: None, state: ThreadState::Idle, gil: false, blocked: Some(5), ..t };
        let s = serde_json::to_string(&idle).unwrap();
        assert_eq!(s, "[3,null,2,2900000,12,5]");
        assert_eq!(serde_json::from_str::<ThreadSample>(&s).unwrap(), idle);
        let waiting = ThreadSample { wait: Some(2), ..idle };
        let s = serde_json::to_string(&waiting).unwrap();
        assert_eq!(s, "[3,null,2,2900000,12,5,2]");
        assert_eq!(serde_json::from_str::<ThreadSample>(&s).unwrap(), waiting);
        let no_call = ThreadSample { blocked: None, ..waiting };
        let s = serde_json::to_string(&no_call).unwrap();
        assert_eq!(s, "[3,null,2,2900000,12,null,2]");
        assert_eq!(serde_json::from_str::<ThreadSample>(&s).unwrap(), no_call);
        // The read offset follows, with the optional fields before it as null.
        let late = ThreadSample { read_us: 1_250, ..t };
        let s = serde_json::to_string(&late).unwrap();
        assert_eq!(s, "[3,17,4,2900000,12,null,null,1250]");
        assert_eq!(serde_json::from_str::<ThreadSample>(&s).unwrap(), late);
        assert_eq!(late.seen_at(1_000_000), 2_250_000);
        assert!(serde_json::from_str::<ThreadSample>("[3,17,4,2900000,12,null,null,1250,9]").is_err());
    }

    #[test]
    fn sched_events_are_compact_arrays() {
        let s = SchedSwitch { t: 1_500, prev_tid: 10, prev_state: b'S', next_tid: 0 };
        assert_eq!(serde_json::to_string(&s).unwrap(), "[1500,10,83,0]");
        assert_eq!(serde_json::from_str::<SchedSwitch>("[1500,10,83,0]").unwrap(), s);
        let w = SchedWakeup { t: 7, waker_tid: 11, wakee_tid: 10 };
        assert_eq!(serde_json::to_string(&w).unwrap(), "[7,11,10]");
        assert_eq!(serde_json::from_str::<SchedWakeup>("[7,11,10]").unwrap(), w);
        assert!(serde_json::from_str::<SchedWakeup>("[7,11]").is_err());
    }

    #[test]
    fn bad_thread_samples_are_rejected() {
        assert!(serde_json::from_str::<ThreadSample>("[3,17,3,0,0]").is_err());
        assert!(serde_json::from_str::<ThreadSample>("[3,17]").is_err());
        // Eight elements are a thread sample with a read offset; nine are too many.
        assert!(serde_json::from_str::<ThreadSample>("[3,17,0,0,0,1,2,3,4]").is_err());
    }

    #[test]
    fn validate_catches_dangling_and_cyclic_ids() {
        let mut run = Run::new(Meta::default());
        run.strings.push("a.py".into());
        run.files.push(SourceFile { path: 0, sha256: None, kind: FileKind::User });
        run.functions.push(Function { file: 0, qualname: 0, name: 0, class: None, line: 1, end_line: 2, class_line: 0 });
        run.frames.push(Frame { function: 0, line: 1 });
        run.stacks.push(StackNode { frame: 0, parent: None });
        assert!(run.validate().is_ok());
        run.stacks.push(StackNode { frame: 0, parent: Some(1) });
        let e = run.validate().unwrap_err();
        assert_eq!(e.what, "stack");
        run.stacks.pop();
        run.frames.push(Frame { function: 9, line: 1 });
        assert!(run.validate().is_err());
        run.frames.pop();
        run.waits.push(WaitTarget { syscall: 0, object: Some(WaitObject { addr: 1, type_name: 0, name: None, frame: Some(0), owner: None }), ..Default::default() });
        assert!(run.validate().is_ok());
        run.waits[0].object.as_mut().unwrap().frame = Some(1);
        assert_eq!(run.validate().unwrap_err().what, "wait");
        run.waits[0].object.as_mut().unwrap().frame = Some(0);
        run.samples.push(Sample { t: 0, threads: vec![ThreadSample { wait: Some(1), ..Default::default() }] });
        run.threads.push(crate::builder::new_thread(1, 1, 1, "t", "Thread"));
        assert_eq!(run.validate().unwrap_err().target, "wait");
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
