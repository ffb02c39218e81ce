//! What this machine allows before a recording is tried (`threadradar doctor`): each probe asks
//! the kernel the way `record` will (ptrace, `process_vm_readv`, `perf_event_open`, the reader's
//! own attach) and answers with one [`Check`]: what it found and, when something is missing, the
//! next step. The command (src/commands/doctor.rs) only prints them.

use crate::error::{classify_attach_error, RecordError};
use crate::stack_source::StackSource;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Error,
}

/// One line of the doctor's screen.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// Stable, for editors: `ptrace`, `pid`, `interpreter`, `root`, `sched`, `runs`, `config`.
    pub id: &'static str,
    pub status: Status,
    /// What was found, one sentence.
    pub summary: String,
    /// What to do about it, when something is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

impl Check {
    pub fn ok(id: &'static str, summary: impl Into<String>) -> Check {
        Check { id, status: Status::Ok, summary: summary.into(), next: None }
    }
    pub fn warn(id: &'static str, summary: impl Into<String>, next: impl Into<String>) -> Check {
        Check { id, status: Status::Warn, summary: summary.into(), next: Some(next.into()) }
    }
    pub fn error(id: &'static str, summary: impl Into<String>, next: impl Into<String>) -> Check {
        Check { id, status: Status::Error, summary: summary.into(), next: Some(next.into()) }
    }
}

fn read_int(path: &str) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// This process's effective capabilities (`CapEff` of /proc/self/status).
fn capabilities() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("CapEff:").and_then(|v| u64::from_str_radix(v.trim(), 16).ok())))
        .unwrap_or(0)
}

const CAP_SYS_PTRACE: u64 = 1 << 19;

/// `kernel.yama.ptrace_scope`: who may read another process's memory (`record --pid`); a launched
/// program is this process's child, which scopes 0–2 allow.
pub fn ptrace_scope() -> Check {
    let cap = capabilities() & CAP_SYS_PTRACE != 0;
    let how = if cap { "this user has CAP_SYS_PTRACE" } else { "this user has no CAP_SYS_PTRACE" };
    match read_int("/proc/sys/kernel/yama/ptrace_scope") {
        None => Check::ok("ptrace", "kernel.yama.ptrace_scope is not set (no Yama): a process of the same user can be read, and `record --pid` works for your own programs"),
        Some(0) => Check::ok("ptrace", format!("kernel.yama.ptrace_scope = 0: `record --pid` can read any process of the same user ({how})")),
        Some(1) if cap => Check::ok("ptrace", format!("kernel.yama.ptrace_scope = 1, and {how}: `record --pid` can read other processes")),
        Some(1) => Check::warn(
            "ptrace",
            "kernel.yama.ptrace_scope = 1: this user may read only its own descendants, so `record -- python3 …` works but `record --pid` does not",
            "launch the program under `threadradar record -- …`, or run `record --pid` as root, or allow attaching with `sudo sysctl kernel.yama.ptrace_scope=0`",
        ),
        Some(2) if cap => Check::ok("ptrace", format!("kernel.yama.ptrace_scope = 2 (administrators only), and {how}")),
        Some(2) => Check::error(
            "ptrace",
            "kernel.yama.ptrace_scope = 2: only a user with CAP_SYS_PTRACE (root) may read another process, even a launched one",
            "run threadradar as root (sudo), or `sudo sysctl kernel.yama.ptrace_scope=1` to let users read their own programs' children",
        ),
        Some(n) => Check::error(
            "ptrace",
            format!("kernel.yama.ptrace_scope = {n}: no process may read another's memory until the next boot"),
            "reboot with a lower kernel.yama.ptrace_scope (it cannot be lowered from 3 while running)",
        ),
    }
}

/// Whether this user may read process `pid`'s memory: one byte of its first readable mapping,
/// read with `process_vm_readv` (what both readers do).
pub fn pid_access(pid: u32) -> Check {
    if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
        return Check::error("pid", format!("there is no process with pid {pid}"), "check the number, e.g. with `pgrep -a python`");
    }
    let name = crate::procfs::cmdline(pid).join(" ");
    let owner = std::fs::metadata(format!("/proc/{pid}")).map(|m| std::os::unix::fs::MetadataExt::uid(&m)).ok();
    // SAFETY: geteuid takes nothing, touches no memory and cannot fail.
    let me = unsafe { libc::geteuid() };
    let whose = match owner {
        Some(o) => format!("owned by uid {o}; threadradar runs as uid {me}"),
        None => format!("threadradar runs as uid {me}"),
    };
    let denied = |why: String| {
        let sentence = if me == 0 { RecordError::PermissionDeniedAsRoot { pid } } else { RecordError::PermissionDenied { pid } }.to_string();
        let next = sentence.split_once(": ").map(|(_, n)| n.to_string()).unwrap_or(sentence);
        Check::error("pid", format!("cannot read the memory of process {pid} ({name}; {whose}): {why}"), next)
    };
    let maps = match std::fs::read_to_string(format!("/proc/{pid}/maps")) {
        Ok(m) => m,
        Err(e) => return denied(format!("its memory map is not readable ({e})")),
    };
    let Some(addr) = maps.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let range = f.next()?;
        f.next().filter(|p| p.starts_with('r'))?;
        usize::from_str_radix(range.split('-').next()?, 16).ok()
    }) else {
        return Check::error("pid", format!("process {pid} ({name}) has no readable memory (a kernel thread or a zombie)"), "attach to the running Python process instead, e.g. found with `pgrep -a python`");
    };
    let mut byte = 0u8;
    let local = libc::iovec { iov_base: (&mut byte as *mut u8).cast(), iov_len: 1 };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: 1 };
    // SAFETY: `local` points at one byte of ours that lives until the call returns; `remote` is
    // only read by the kernel (in the other process), never dereferenced here.
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    if n == 1 {
        Check::ok("pid", format!("process {pid} ({name}) can be read by this user ({whose})"))
    } else {
        denied(format!("process_vm_readv failed ({})", std::io::Error::last_os_error()))
    }
}

/// The interpreter of process `pid` and the reader that would read it, found by the reader's own
/// attach (as `record --pid` does), or why there is none.
pub fn interpreter(pid: u32) -> Check {
    if !crate::procfs::maps_python(pid) {
        let e = classify_attach_error(pid, &anyhow::anyhow!("no python mapped"));
        return not_readable(e);
    }
    match StackSource::attach(pid) {
        Ok(source) => {
            let version = source.version();
            let build = if version.ends_with('t') {
                if source.gil_enabled() { "free-threaded build, the GIL enabled at run time" } else { "free-threaded build, no GIL" }
            } else {
                "with the GIL"
            };
            Check::ok("interpreter", format!("Python {version} ({build}), read by {}", source.reader()))
        }
        Err(err) => not_readable(classify_attach_error(pid, &err)),
    }
}

fn not_readable(e: RecordError) -> Check {
    let sentence = e.to_string();
    let (what, next) = sentence.split_once(": ").unwrap_or((&sentence, "launch the program under `threadradar record -- …`"));
    Check::error("interpreter", what.to_string(), next.to_string())
}

/// A chroot or a container: the process's `/` is not ours, so its paths are read through its root.
pub fn root(pid: u32) -> Check {
    match crate::procfs::process_root(pid) {
        None => Check::ok("root", format!("process {pid} sees the same / as threadradar (no chroot or container)")),
        Some(r) => match r.host {
            Some(h) => Check::ok("root", format!("process {pid} runs in a chroot or container whose / is {} here: its source files are read there, and the run records that root", h.display())),
            None => Check::warn(
                "root",
                format!("process {pid} runs in a container with its own mount namespace: its source files are reachable only through {} while it runs", r.link.display()),
                "record while the program runs (the run keeps its paths); to see its code in the editor later, open the same sources on this machine",
            ),
        },
    }
}

/// `kernel.perf_event_paranoid` and whether `record --sched` will record the scheduler's events,
/// tried the way it will be.
pub fn sched() -> Check {
    let paranoid = read_int("/proc/sys/kernel/perf_event_paranoid");
    let p = paranoid.map_or("unknown".to_string(), |v| v.to_string());
    match crate::sched::probe() {
        Ok(()) => Check::ok("sched", format!("kernel.perf_event_paranoid = {p}: scheduler events (sched_switch, sched_waking) will be recorded")),
        Err(why) => {
            let (what, next) = why.split_once("; ").unwrap_or((&why, "pass --no-sched"));
            Check::warn("sched", format!("kernel.perf_event_paranoid = {p}: {what}"), format!("{next} (samples and thread states are recorded without them)"))
        }
    }
}
