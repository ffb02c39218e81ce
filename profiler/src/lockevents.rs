//! Lock events in the run (`record --exact-locks`): every call and return of the interpreter's
//! lock functions by the target's threads, as kernel uprobes saw them (`uprobes.rs`). Part of the
//! run model; `run.rs` re-exports these types.

use serde::{Deserialize, Serialize};

/// How the lock events were recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockInfo {
    /// `uprobes` (perf_event_open on the uprobe PMU, per-CPU ring buffers).
    pub source: String,
    /// The probed functions, one per entry: `name@path+0xoffset` (the file offset probed).
    pub probes: Vec<String>,
    /// `CLOCK_MONOTONIC` at the run's t = 0, in nanoseconds: an event's time on the program's own
    /// monotonic clock (Python's `time.monotonic_ns()`) is `t + monotonic_at_start_ns`.
    pub monotonic_at_start_ns: u64,
    /// Events of the target's threads kept.
    pub events: u64,
    /// Events the kernel dropped because the recorder did not drain its buffers in time.
    pub lost_events: u64,
    /// Why the probes were stopped before the end of the run (the event-rate cap), if they were:
    /// events after `stopped_at_ns` are missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at_ns: Option<u64>,
}

/// What a lock event says happened.
pub mod kind {
    /// An acquire function was called (the wait to enter begins, or a try).
    pub const CALL: u8 = b'c';
    /// The acquire function returned with the lock held.
    pub const ACQUIRED: u8 = b'a';
    /// The acquire function returned without it (a try that failed, a timeout, an interruption).
    pub const FAILED: u8 = b'f';
    /// A release function was called: the lock is free from here.
    pub const RELEASED: u8 = b'r';
}

/// One call or return of a lock function by a thread of the target.
///
/// Stored as `[t_ns, tid, kind, lock]`: `t_ns` in the run's clock (like [`crate::run::Sample::t`]);
/// `kind` one of [`kind`] as a byte (`c` = 99 call, `a` = 97 acquired, `f` = 102 failed, `r` = 114
/// released); `lock` the lock's address in the target (the function's first argument; for a return,
/// the argument of the call it returns from).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "(u64, u32, u8, u64)", into = "(u64, u32, u8, u64)")]
pub struct LockEvent {
    pub t: u64,
    pub tid: u32,
    pub kind: u8,
    pub lock: u64,
}

impl From<(u64, u32, u8, u64)> for LockEvent {
    fn from((t, tid, kind, lock): (u64, u32, u8, u64)) -> Self {
        LockEvent { t, tid, kind, lock }
    }
}

impl From<LockEvent> for (u64, u32, u8, u64) {
    fn from(e: LockEvent) -> Self {
        (e.t, e.tid, e.kind, e.lock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_events_are_compact_arrays() {
        let e = LockEvent { t: 1_500, tid: 10, kind: kind::ACQUIRED, lock: 0x7f00 };
        assert_eq!(serde_json::to_string(&e).unwrap(), "[1500,10,97,32512]");
        assert_eq!(serde_json::from_str::<LockEvent>("[1500,10,97,32512]").unwrap(), e);
        assert!(serde_json::from_str::<LockEvent>("[1500,10,97]").is_err());
    }
}
