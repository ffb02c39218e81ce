//! asyncio tasks as units of concurrency (issue #34): what a run holds about the tasks of a
//! program's event loops, read from outside on CPython 3.14+ (`_asyncio`'s debug offsets, the
//! section `python3.14 -m asyncio ps` reads). A task is to asyncio what a thread is to
//! `threading`: it has a name, a type (its coroutine), runs code and waits; the analysis can
//! count tasks instead of threads (`--units tasks`). See `docs/asyncio.md`.

use serde::{Deserialize, Serialize};

use crate::run::{FunctionId, StackId, ThreadId};

/// Index into [`crate::run::Run::tasks`].
pub type TaskId = u32;

/// One asyncio task of the program.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    pub pid: u32,
    /// The task object's address in the process; with `first_sample` it names one task (an
    /// address is reused once a task is freed).
    pub address: u64,
    /// `Task.get_name()` (asyncio's default is `Task-<n>`).
    pub name: String,
    /// The qualified name of the task's coroutine (`Crawler.fetch`): the task's type, as a
    /// thread's class is a thread's.
    pub coro: String,
    /// The coroutine's function, when its code appears in a frame of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionId>,
    /// The thread whose event loop runs it.
    pub thread: ThreadId,
    /// The first and last sample at which the task was seen (running or not).
    pub first_sample: u32,
    pub last_sample: u32,
    /// The task was done when it was last seen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub done: bool,
}

/// Thread `thread` ran task `task` in every sample from `first` to `last` (inclusive) that holds
/// the thread: those samples' stacks are the task's. Runs of one thread do not overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRun {
    pub thread: ThreadId,
    pub task: TaskId,
    pub first: u32,
    pub last: u32,
}

/// What a task was doing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStateKind {
    /// Its thread was running its coroutine.
    Running,
    /// Scheduled to run (on the loop's ready queue), not running.
    #[default]
    Ready,
    /// Suspended in an `await` of a future or another task.
    Awaiting,
    /// Finished (returned, raised or cancelled).
    Done,
}

/// A task's state from sample `sample` on; one entry per change, in sample order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskState {
    pub sample: u32,
    pub task: TaskId,
    pub state: TaskStateKind,
    /// The task it awaits (directly, or through the future it awaits), when it awaits one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaits: Option<TaskId>,
    /// Its await chain, the suspended coroutines from the task's own down to the innermost
    /// `await`, as a stack of the run (its leaf the innermost), when it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<StackId>,
}

/// The coroutines of asyncio's primitives in which a task waits on a future of theirs, by
/// qualified name, with the primitive's type: the innermost coroutine of an await chain names
/// what the task awaits (`Queue.join` and `Barrier.wait` end in `Event.wait` and
/// `Condition.wait`; `BoundedSemaphore` inherits `Semaphore.acquire`). The recorder watches such
/// awaits for their end at every tick; the waits view names them.
pub const ASYNCIO_PRIMITIVE_WAITS: &[(&str, &str)] = &[
    ("Event.wait", "asyncio.Event"),
    ("Lock.acquire", "asyncio.Lock"),
    ("Condition.wait", "asyncio.Condition"),
    ("Semaphore.acquire", "asyncio.Semaphore"),
    ("Queue.get", "asyncio.Queue"),
    ("Queue.put", "asyncio.Queue"),
];

/// The primitive a coroutine of asyncio's (`qualname` in a file of the `asyncio` package) waits
/// in, if it is one of [`ASYNCIO_PRIMITIVE_WAITS`].
pub fn asyncio_primitive(qualname: &str, file: &str) -> Option<&'static str> {
    let in_asyncio = file.contains("/asyncio/") || file.starts_with("asyncio/");
    ASYNCIO_PRIMITIVE_WAITS.iter().find(|(q, _)| in_asyncio && *q == qualname).map(|(_, t)| *t)
}

/// How the tasks were recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TasksInfo {
    /// Where they were read from, e.g. `"_asyncio debug offsets (CPython 3.14)"`.
    pub source: String,
    /// Why some could not be read, when so (one sentence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
