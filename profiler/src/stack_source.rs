//! Where a process's Python threads and stacks come from: ThreadRadar's own reader
//! ([`crate::cpython`]) for CPython 3.11, 3.12 (built-in offsets) and 3.13/3.13t (the
//! interpreter's debug offsets); py-spy's compiled-in bindings for every other version, and for
//! 3.11/3.12 with `THREADRADAR_READER=py-spy`. The sampler asks this, never one of the two
//! directly.

use crate::cpython::{Found, Interpreter};
use crate::gil::GilProbe;
use py_spy::stack_trace::StackTrace;
use py_spy::{Config, PythonSpy};

pub enum StackSource {
    /// CPython 3.11+, read through `_Py_DebugOffsets` or the built-in 3.11/3.12 offsets.
    DebugOffsets(Interpreter),
    /// py-spy's bindings (2.7, 3.3–3.10, later versions with the GIL; a 3.11/3.12 build the
    /// built-in layout does not fit).
    PySpy { spy: PythonSpy, gil: Option<GilProbe> },
}

fn spy_config() -> Config {
    Config {
        blocking: py_spy::config::LockingStrategy::NonBlocking,
        collect_thread_names: true,
        include_idle: true,
        ..Config::default()
    }
}

impl StackSource {
    /// Connects to process `pid`. Errors are py-spy's (or worded like them), for
    /// `error::classify_attach_error`.
    pub fn attach(pid: u32) -> anyhow::Result<StackSource> {
        // A program launched by this recorder, looked at before its `exec`: still a copy of this
        // process. Its symbols are ThreadRadar's (a large binary both readers would parse in
        // vain, a sixth of the recorder's CPU on a launched one-second program); in a moment it
        // is Python.
        if crate::procfs::same_executable(pid, std::process::id()) {
            anyhow::bail!("the interpreter is not initialised yet (the program has not started)");
        }
        // Mid-exec, or libpython not loaded yet: the caller tries again shortly. (Looking now
        // finds nothing, and py-spy would then wait for libpython and parse its symbols, which
        // the reader below parses again: a tenth of the recorder's CPU on a launched one-second
        // program.)
        if crate::procfs::exec_pending(pid) {
            anyhow::bail!("the interpreter is not initialised yet (the program is still starting)");
        }
        if let Found::Interpreter(i) = Interpreter::find(pid)? {
            return Ok(StackSource::DebugOffsets(i));
        }
        let spy = PythonSpy::new(pid as py_spy::Pid, &spy_config())?;
        // A shared-library build (pyenv's, Debian's) maps libpython after the executable: a
        // wrapper that execs Python late (its process is not young any more, so `exec_pending`
        // does not wait) may have been looked at before it was there, and py-spy then waited for
        // it. Look again now that it is mapped — only for the versions the own reader reads, so
        // that an older Python's symbols are not parsed a third time.
        //
        // A program started through more than one `exec` (`chroot DIR sh -c 'cd … && exec
        // python3.14 …'`) can be caught between them, or with its binary mapped but not yet
        // readable through its root: CI saw such a 3.14 read by py-spy once. A few more looks,
        // 20 ms apart, before the fallback is taken for the whole run.
        if (spy.version.major, spy.version.minor) >= (3, 11) && !std::env::var("THREADRADAR_READER").is_ok_and(|r| r == "py-spy") {
            for look in 0..8 {
                match Interpreter::find(pid) {
                    Ok(Found::Interpreter(i)) => return Ok(StackSource::DebugOffsets(i)),
                    Ok(Found::NotHere) => tracing::debug!(pid, look, "the own reader found no interpreter; py-spy did"),
                    Err(e) => tracing::debug!(pid, look, "the own reader could not look: {e:#}"),
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        let gil = GilProbe::new(spy.addresses.threadstate_address, spy.version.major, spy.version.minor);
        Ok(StackSource::PySpy { spy, gil })
    }

    /// `3.11.7`, `3.13.5t` (free-threaded).
    pub fn version(&self) -> String {
        match self {
            StackSource::DebugOffsets(i) => i.version(),
            StackSource::PySpy { spy, .. } => spy.version.to_string(),
        }
    }

    /// Which reader this is, as the run records it (`Process::reader`).
    pub fn reader(&self) -> String {
        match self {
            StackSource::DebugOffsets(i) if i.built_in_layout() => {
                "threadradar: built-in layout".into()
            }
            StackSource::DebugOffsets(_) => "threadradar: _Py_DebugOffsets".into(),
            StackSource::PySpy { .. } => format!("py-spy {}", py_spy_version()),
        }
    }

    /// Whether a GIL is in force now (false on a free-threaded build unless something enabled it).
    pub fn gil_enabled(&self) -> bool {
        match self {
            StackSource::DebugOffsets(i) => i.gil_enabled(),
            StackSource::PySpy { .. } => true,
        }
    }

    /// Every thread's stack, innermost frame first. Threads not yet bound to an OS thread are
    /// left out.
    pub fn stack_traces(&mut self) -> anyhow::Result<Vec<StackTrace>> {
        match self {
            StackSource::DebugOffsets(i) => i.stack_traces(false),
            StackSource::PySpy { spy, .. } => {
                let mut traces = spy.get_stack_traces()?;
                traces.retain(|t| t.thread_id != 0);
                Ok(traces)
            }
        }
    }

    /// The native ids of threads the scheduler has not run since their last reading, for the
    /// next [`StackSource::stack_traces`]: the own reader reuses their stacks without reading
    /// their frames; py-spy's reads every thread anyway. The own reader leaves those of `elide`
    /// out of its traces altogether when their stack is unchanged ([`StackSource::elided`]).
    pub fn set_quiet(&mut self, tids: rustc_hash::FxHashSet<u64>, elide: rustc_hash::FxHashSet<u64>) {
        if let StackSource::DebugOffsets(i) = self {
            i.set_quiet(tids, elide);
        }
    }

    /// (Python thread id, native id) of the threads the last [`StackSource::stack_traces`] left
    /// out because they were quiet, in `elide` and unchanged: their last sample stands.
    pub fn elided(&self) -> &[(u64, u64)] {
        match self {
            StackSource::DebugOffsets(i) => &i.elided,
            StackSource::PySpy { .. } => &[],
        }
    }

    /// Like [`StackSource::stack_traces`], with each frame's arguments (`self` as
    /// `<Worker at 0x…>`): dearer, for learning thread types.
    pub fn stack_traces_with_arguments(&mut self) -> anyhow::Result<Vec<StackTrace>> {
        match self {
            StackSource::DebugOffsets(i) => i.stack_traces(true),
            StackSource::PySpy { spy, .. } => {
                spy.config.dump_locals = 1;
                let traces = spy.get_stack_traces();
                spy.config.dump_locals = 0;
                traces
            }
        }
    }

    /// Like [`StackSource::stack_traces_with_arguments`], for the threads of `ids` (Python thread
    /// ids) only where the reader can leave the others out (the own reader); py-spy's bindings
    /// walk every thread.
    pub fn stack_traces_with_arguments_of(&mut self, ids: std::collections::HashSet<u64>) -> anyhow::Result<Vec<StackTrace>> {
        match self {
            StackSource::DebugOffsets(i) => i.stack_traces_of(ids),
            StackSource::PySpy { .. } => self.stack_traces_with_arguments(),
        }
    }

    /// An instance attribute of the object at `obj` and its type's name (`self.rlock` →
    /// `_thread.RLock`), for the waits reader; `None` when it cannot be read, and always with
    /// py-spy's bindings (which read no attributes).
    pub fn attribute(&self, obj: usize, name: &str) -> Option<(usize, String)> {
        match self {
            StackSource::DebugOffsets(i) => i.attribute(obj, name),
            StackSource::PySpy { .. } => None,
        }
    }

    /// The owner (a Python thread id) of the C `_thread.RLock` at `obj`, `None` when it has none
    /// or cannot be read (always with py-spy's bindings).
    pub fn rlock_owner(&self, obj: usize) -> Option<u64> {
        match self {
            StackSource::DebugOffsets(i) => i.rlock_owner(obj),
            StackSource::PySpy { .. } => None,
        }
    }

    /// The `_ident` of the `threading.Thread` at `obj` (its Python thread id), `None` before it
    /// started or when it cannot be read (always with py-spy's bindings).
    pub fn thread_ident(&self, obj: usize) -> Option<u64> {
        match self {
            StackSource::DebugOffsets(i) => i.thread_ident(obj),
            StackSource::PySpy { .. } => None,
        }
    }

    /// The GIL holder's Python thread id read right now (`Some(None)`: nobody), or `None` when
    /// the traces of the next walk tell it (`owns_gil`: the own reader reads the holder's thread
    /// state here and marks its trace from it) or it cannot be told. `known` are the process's
    /// Python thread ids.
    pub fn gil_holder(&mut self, known: &[u64]) -> Option<Option<u64>> {
        match self {
            // The walk that follows marks the holder's trace from this reading (`owns_gil`).
            StackSource::DebugOffsets(i) => {
                let _ = i.read_gil_holder();
                None
            }
            StackSource::PySpy { spy, gil } => gil.as_mut().and_then(|g| g.holder(&spy.process, known).ok()),
        }
    }

    /// Forgets the cached name of one Python thread ident (reused by a new thread, or not yet
    /// registered in `threading`), so it is read afresh at the next sample.
    pub fn forget_thread_name(&mut self, ident: u64) {
        match self {
            StackSource::DebugOffsets(i) => i.forget_thread_name(ident),
            StackSource::PySpy { spy, .. } => {
                spy.python_thread_names.remove(&ident);
            }
        }
    }

    /// Forgets cached "no name yet" answers, so names set since are read.
    pub fn forget_thread_names(&mut self) {
        match self {
            StackSource::DebugOffsets(i) => i.forget_thread_names(),
            StackSource::PySpy { spy, .. } => spy.python_thread_names.clear(),
        }
    }
}

/// The py-spy library's version (its bindings read the versions ThreadRadar's reader does not).
fn py_spy_version() -> &'static str {
    // profiler/Cargo.toml's `py-spy = "0.4.3"`: change both together.
    "0.4.3"
}
