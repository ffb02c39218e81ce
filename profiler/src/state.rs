//! Deciding what a thread was doing at a sample: computing, waiting for the GIL, or idle.
//!
//! The rule (documented in `docs/run-format.md`), from the kernel's view of the thread:
//!
//! - scheduler state `R` (on CPU or runnable) → computing, unless the thread does not hold the GIL
//!   and is still inside the GIL's futex (woken, but not yet running Python) → waiting for the GIL;
//! - `D` (uninterruptible, typically disk I/O) → computing, like the paper's Java `Runnable`;
//! - sleeping in `futex` on an address inside the interpreter's own static data (where CPython
//!   keeps the GIL's mutex and condition variable) → waiting for the GIL;
//! - sleeping in `futex` elsewhere (a `threading.Lock`, `Condition`, `Queue`, `Event`, a join) →
//!   idle; `clock_nanosleep`/`nanosleep` (`time.sleep`), `wait4`/`waitid` (a child process) → idle;
//! - sleeping in a read, write, poll, select, epoll, accept, connect, recv or send → computing:
//!   blocking I/O counts, as in the paper (imbalance in I/O stays visible); the call is kept;
//! - anything else while sleeping → idle, with the system call's name when it could be read.
//!
//! - runnable, without the GIL, and on a CPU for less than 30 % of the time since its previous
//!   sample → waiting for the GIL (the hand-off); GIL-free C work keeps a CPU busy and computes.
//!
//! A thread that holds the GIL and is not known to be blocked counts as computing.
//!
//! Without a GIL (a free-threaded build, 3.13t, while nothing has turned the GIL back on) no
//! thread waits for it: the GIL rules above do not apply, a runnable thread computes whatever its
//! recent CPU time, and a `futex` in the interpreter's static data (there is no GIL mutex to sleep
//! on; other runtime locks live there) is idle like any other lock.

use crate::procfs::{syscall_name, Syscall};
use crate::run::ThreadState;

/// Below this share of CPU time since its previous sample, a runnable thread without the GIL is
/// taken to be in the GIL hand-off rather than doing GIL-free work.
pub const GIL_FREE_WORK_MIN_CPU: f64 = 0.3;

/// Address ranges of the interpreter's static data (the `.data`/`.bss` of the python executable
/// or `libpython`), where the GIL lives, and whether the process has a GIL at all.
#[derive(Clone, Debug)]
pub struct RuntimeRanges {
    ranges: Vec<(u64, u64)>,
    gil: bool,
}

impl Default for RuntimeRanges {
    fn default() -> Self {
        RuntimeRanges { ranges: Vec::new(), gil: true }
    }
}

impl RuntimeRanges {
    /// Reads the target's memory map. Writable mappings of a file whose name contains `python`
    /// (the executable or `libpython3.x.so`) count, together with the anonymous mapping right
    /// after the last of them (the part of `.bss` beyond the file).
    pub fn of_process(pid: u32) -> RuntimeRanges {
        let Ok(maps) = proc_maps::get_process_maps(pid as proc_maps::Pid) else {
            return RuntimeRanges::default();
        };
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        let mut last_end: Option<u64> = None;
        for m in &maps {
            let start = m.start() as u64;
            let end = start + m.size() as u64;
            let is_python = m
                .filename()
                .and_then(|f| f.file_name())
                .map(|n| n.to_string_lossy().contains("python"))
                .unwrap_or(false);
            if is_python && m.is_write() {
                ranges.push((start, end));
                last_end = Some(end);
            } else if m.filename().is_none() && last_end == Some(start) && m.is_write() {
                ranges.push((start, end));
                last_end = None;
            } else if !is_python {
                last_end = None;
            }
        }
        RuntimeRanges { ranges, gil: true }
    }

    pub fn contains(&self, addr: u64) -> bool {
        self.ranges.iter().any(|&(s, e)| addr >= s && addr < e)
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether a GIL is in force (false for a free-threaded interpreter running without one).
    pub fn has_gil(&self) -> bool {
        self.gil
    }

    pub fn set_gil(&mut self, gil: bool) {
        self.gil = gil;
    }

    #[cfg(test)]
    pub fn from_ranges(r: Vec<(u64, u64)>) -> Self {
        RuntimeRanges { ranges: r, gil: true }
    }
}

/// Classifies one observation of a thread. `syscall` is only needed when `os_state` is not `R`.
/// Returns the state and, for a thread inside a blocking call, that call's name.
///
/// `recent_cpu` is the fraction of the time since the thread's previous sample that it spent on a
/// CPU (kernel accounting), when known.
pub fn classify(
    os_state: Option<u8>,
    owns_gil: bool,
    syscall: Option<Syscall>,
    runtime: &RuntimeRanges,
    recent_cpu: Option<f64>,
) -> (ThreadState, Option<&'static str>) {
    if !runtime.has_gil() {
        return classify_without_gil(os_state, syscall);
    }
    match os_state {
        // Runnable but not holding the GIL and still inside the GIL's futex: woken to take the GIL
        // and waiting for a CPU or for the holder to let go. Not computing yet.
        Some(b'R') if !owns_gil && is_gil_futex(syscall, runtime) => (ThreadState::Gil, Some("GIL")),
        // Runnable without the GIL and hardly any CPU since the last sample: the GIL hand-off
        // (between the futex and taking the GIL). Real GIL-free work (C extensions, I/O
        // libraries) keeps the CPU busy for most of the interval and stays computing.
        Some(b'R') if !owns_gil && recent_cpu.is_some_and(|f| f < GIL_FREE_WORK_MIN_CPU) => (ThreadState::Gil, Some("GIL")),
        Some(b'R') => (ThreadState::Computing, None),
        Some(b'D') => (ThreadState::Computing, syscall.and_then(blocked_name).or(Some("disk I/O"))),
        None => {
            // No OS view of the thread (older Pythons without a native thread id): the GIL is all
            // we know.
            if owns_gil {
                (ThreadState::Computing, None)
            } else {
                (ThreadState::Idle, None)
            }
        }
        Some(_) => match syscall {
            Some(Syscall::Running) => (ThreadState::Computing, None),
            Some(Syscall::InKernel) => (ThreadState::Computing, Some("kernel")),
            Some(Syscall::Blocked { nr, arg0 }) => {
                let name = syscall_name(nr);
                match name {
                    "futex" if runtime.contains(arg0) => (ThreadState::Gil, Some("GIL")),
                    "futex" | "nanosleep" | "clock_nanosleep" | "pause" | "wait4" | "waitid" => (ThreadState::Idle, Some(name)),
                    "read" | "write" | "pread64" | "poll" | "ppoll" | "select" | "pselect6" | "epoll_wait" | "epoll_pwait"
                    | "epoll_pwait2" | "accept" | "accept4" | "connect" | "recvfrom" | "recvmsg" | "sendto" | "sendmsg" => {
                        (ThreadState::Computing, Some(name))
                    }
                    _ => (ThreadState::Idle, Some(name)),
                }
            }
            None if owns_gil => (ThreadState::Computing, None),
            None => (ThreadState::Idle, None),
        },
    }
}

/// The rules for an interpreter without a GIL: nothing waits for it.
fn classify_without_gil(os_state: Option<u8>, syscall: Option<Syscall>) -> (ThreadState, Option<&'static str>) {
    match os_state {
        Some(b'R') => (ThreadState::Computing, None),
        Some(b'D') => (ThreadState::Computing, syscall.and_then(blocked_name).or(Some("disk I/O"))),
        // Without a view of the thread nothing says it computes.
        None => (ThreadState::Idle, None),
        Some(_) => match syscall {
            Some(Syscall::Running) => (ThreadState::Computing, None),
            Some(Syscall::InKernel) => (ThreadState::Computing, Some("kernel")),
            Some(Syscall::Blocked { nr, .. }) => {
                let name = syscall_name(nr);
                match name {
                    "read" | "write" | "pread64" | "poll" | "ppoll" | "select" | "pselect6" | "epoll_wait" | "epoll_pwait"
                    | "epoll_pwait2" | "accept" | "accept4" | "connect" | "recvfrom" | "recvmsg" | "sendto" | "sendmsg" => {
                        (ThreadState::Computing, Some(name))
                    }
                    _ => (ThreadState::Idle, Some(name)),
                }
            }
            None => (ThreadState::Idle, None),
        },
    }
}

fn is_gil_futex(s: Option<Syscall>, runtime: &RuntimeRanges) -> bool {
    matches!(s, Some(Syscall::Blocked { nr, arg0 }) if syscall_name(nr) == "futex" && runtime.contains(arg0))
}

fn blocked_name(s: Syscall) -> Option<&'static str> {
    match s {
        Syscall::Blocked { nr, .. } => Some(syscall_name(nr)),
        _ => None,
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        let rt = RuntimeRanges::from_ranges(vec![(0x1000, 0x2000)]);
        let futex = |a| Some(Syscall::Blocked { nr: 202, arg0: a });
        assert_eq!(classify(Some(b'R'), false, None, &rt, None).0, ThreadState::Computing);
        assert_eq!(classify(Some(b'R'), false, futex(0x1800), &rt, None).0, ThreadState::Gil);
        assert_eq!(classify(Some(b'R'), true, futex(0x1800), &rt, None).0, ThreadState::Computing);
        assert_eq!(classify(Some(b'R'), false, futex(0x9000), &rt, None).0, ThreadState::Computing);
        assert_eq!(classify(Some(b'S'), false, futex(0x1800), &rt, None), (ThreadState::Gil, Some("GIL")));
        assert_eq!(classify(Some(b'S'), false, futex(0x9000), &rt, None), (ThreadState::Idle, Some("futex")));
        assert_eq!(classify(Some(b'S'), false, Some(Syscall::Blocked { nr: 230, arg0: 0 }), &rt, None).0, ThreadState::Idle);
        assert_eq!(classify(Some(b'S'), false, Some(Syscall::Blocked { nr: 0, arg0: 3 }), &rt, None), (ThreadState::Computing, Some("read")));
        assert_eq!(classify(Some(b'D'), false, None, &rt, None), (ThreadState::Computing, Some("disk I/O")));
        assert_eq!(classify(Some(b'S'), true, None, &rt, None).0, ThreadState::Computing);
        assert_eq!(classify(None, false, None, &rt, None).0, ThreadState::Idle);
        assert_eq!(classify(Some(b'R'), false, None, &rt, Some(0.05)).0, ThreadState::Gil);
        assert_eq!(classify(Some(b'R'), false, None, &rt, Some(0.9)).0, ThreadState::Computing);
        assert_eq!(classify(Some(b'R'), true, None, &rt, Some(0.0)).0, ThreadState::Computing);
    }

    #[test]
    fn without_a_gil_nothing_waits_for_it() {
        let mut rt = RuntimeRanges::from_ranges(vec![(0x1000, 0x2000)]);
        rt.set_gil(false);
        let futex = |a| Some(Syscall::Blocked { nr: 202, arg0: a });
        assert_eq!(classify(Some(b'R'), false, futex(0x1800), &rt, None), (ThreadState::Computing, None));
        assert_eq!(classify(Some(b'R'), false, None, &rt, Some(0.05)).0, ThreadState::Computing, "little CPU is no hand-off");
        assert_eq!(classify(Some(b'S'), false, futex(0x1800), &rt, None), (ThreadState::Idle, Some("futex")));
        assert_eq!(classify(Some(b'S'), false, Some(Syscall::Blocked { nr: 0, arg0: 3 }), &rt, None), (ThreadState::Computing, Some("read")));
        assert_eq!(classify(Some(b'S'), false, Some(Syscall::Blocked { nr: 230, arg0: 0 }), &rt, None), (ThreadState::Idle, Some("clock_nanosleep")));
    }
}
