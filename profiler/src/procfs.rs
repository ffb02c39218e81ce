//! Per-thread kernel facts from `/proc/<pid>/task/<tid>/`: scheduler state, kernel CPU accounting
//! (`schedstat`) and the system call a blocked thread sits in.
//!
//! The files are opened once per thread and re-read from offset 0 with `pread` at every sample:
//! procfs regenerates their content on each read, and keeping the descriptors saves two system
//! calls per file per sample on the sampler's hot path.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// Open `/proc` files of one thread.
#[derive(Debug)]
pub struct ThreadProc {
    stat: File,
    schedstat: Option<File>,
    syscall: Option<File>,
    /// The thread's start time, from the first `stat` read (it never changes for one thread).
    start_time: Option<u64>,
    buf: Vec<u8>,
}

/// One reading of a thread's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatReading {
    /// The scheduler state letter: `R` running or runnable, `S` sleeping, `D` uninterruptible
    /// (disk I/O), `Z` zombie, `T`/`t` stopped, ...
    pub state: u8,
    /// Start time in clock ticks after boot: with the tid, identifies a thread across tid reuse.
    pub start_time: u64,
}

/// Cumulative kernel accounting of a thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedStat {
    /// Nanoseconds spent on a CPU.
    pub cpu_ns: u64,
    /// Nanoseconds spent runnable, waiting in a run queue.
    pub runq_ns: u64,
}

/// What `/proc/<tid>/syscall` says about a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syscall {
    /// The thread is running in user space.
    Running,
    /// Blocked in the kernel, not in a system call.
    InKernel,
    /// Blocked in system call `nr` with first argument `arg0`.
    Blocked { nr: i64, arg0: u64 },
}

impl ThreadProc {
    /// Opens the files of thread `tid` of process `pid`. Only `stat` is required; the others are
    /// optional (no `schedstat` without CONFIG_SCHED_INFO, no `syscall` without ptrace access).
    pub fn open(pid: u32, tid: u32) -> std::io::Result<ThreadProc> {
        let base = format!("/proc/{pid}/task/{tid}");
        Ok(ThreadProc {
            stat: File::open(format!("{base}/stat"))?,
            schedstat: File::open(format!("{base}/schedstat")).ok(),
            syscall: File::open(format!("{base}/syscall")).ok(),
            start_time: None,
            buf: vec![0; 512],
        })
    }

    fn read_into(file: &File, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = file.read_at(buf, 0)?;
        if n == 0 {
            // A thread that has exited reads as empty (or errors with ESRCH).
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
        Ok(n)
    }

    /// Reads the scheduler state; an error means the thread is gone.
    pub fn stat(&mut self) -> std::io::Result<StatReading> {
        let n = Self::read_into(&self.stat, &mut self.buf)?;
        let s = parse_stat(&self.buf[..n]).ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "unparsable stat"))?;
        self.start_time = Some(s.start_time);
        Ok(s)
    }

    /// Reads the state and the system call together, `stat` only when the system call leaves
    /// the state open; an error means the thread is gone.
    ///
    /// `stat` is the dearest of the three files (the kernel formats 52 fields), and the
    /// system call says what it would in nearly every case: `running` is exactly the
    /// scheduler's `R` (the kernel prints it for a task whose state is TASK_RUNNING), and
    /// a thread blocked in one of [`sleeps_interruptibly`]'s calls is `S`, or `T` when
    /// stopped — which `state::classify` treats alike. Anything else (another call, a
    /// thread in the kernel outside a call, a zombie) reads `stat` as before.
    pub fn state_and_syscall(&mut self) -> std::io::Result<(StatReading, Option<Syscall>)> {
        if let (Some(start_time), Some(f)) = (self.start_time, self.syscall.as_ref()) {
            if let Some(sc) = Self::read_into(f, &mut self.buf).ok().and_then(|n| parse_syscall(&self.buf[..n])) {
                let state = match sc {
                    Syscall::Running => Some(b'R'),
                    Syscall::Blocked { nr, .. } if sleeps_interruptibly(nr) => Some(b'S'),
                    _ => None,
                };
                if let Some(state) = state {
                    return Ok((StatReading { state, start_time }, Some(sc)));
                }
                return Ok((self.stat()?, Some(sc)));
            }
        }
        let stat = self.stat()?;
        Ok((stat, self.syscall()))
    }

    /// Reads the kernel's CPU accounting, if available.
    pub fn schedstat(&mut self) -> Option<SchedStat> {
        let f = self.schedstat.as_ref()?;
        let n = Self::read_into(f, &mut self.buf).ok()?;
        parse_schedstat(&self.buf[..n])
    }

    /// Reads the system call the thread is in, if permitted.
    pub fn syscall(&mut self) -> Option<Syscall> {
        let f = self.syscall.as_ref()?;
        let n = Self::read_into(f, &mut self.buf).ok()?;
        parse_syscall(&self.buf[..n])
    }
}

/// Parses `/proc/<tid>/stat`. The command name (field 2) is in parentheses and may itself contain
/// spaces and parentheses, so fields are counted from the last `)`.
pub fn parse_stat(buf: &[u8]) -> Option<StatReading> {
    let close = buf.iter().rposition(|&b| b == b')')?;
    let mut fields = buf[close + 1..].split(|&b| b == b' ').filter(|f| !f.is_empty());
    let state = *fields.next()?.first()?;
    // After the state (field 3) come fields 4..; starttime is field 22, i.e. the 19th after state.
    let start = fields.nth(18)?;
    let start_time = std::str::from_utf8(start).ok()?.trim().parse().ok()?;
    Some(StatReading { state, start_time })
}

pub fn parse_schedstat(buf: &[u8]) -> Option<SchedStat> {
    let s = std::str::from_utf8(buf).ok()?;
    let mut it = s.split_ascii_whitespace();
    Some(SchedStat { cpu_ns: it.next()?.parse().ok()?, runq_ns: it.next()?.parse().ok()? })
}

pub fn parse_syscall(buf: &[u8]) -> Option<Syscall> {
    let s = std::str::from_utf8(buf).ok()?.trim();
    if s == "running" {
        return Some(Syscall::Running);
    }
    let mut it = s.split_ascii_whitespace();
    let nr: i64 = it.next()?.parse().ok()?;
    if nr < 0 {
        return Some(Syscall::InKernel);
    }
    let arg0 = u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
    Some(Syscall::Blocked { nr, arg0 })
}

/// Whether a thread blocked in system call `nr` sleeps interruptibly (state `S`): waits on a
/// futex, a timer, a child, or for readiness and data on descriptors. `read`/`write` are not
/// among them: on a disk file they sleep uninterruptibly (`D`).
pub fn sleeps_interruptibly(nr: i64) -> bool {
    matches!(
        syscall_name(nr),
        "futex"
            | "nanosleep"
            | "clock_nanosleep"
            | "pause"
            | "wait4"
            | "waitid"
            | "poll"
            | "ppoll"
            | "select"
            | "pselect6"
            | "epoll_wait"
            | "epoll_pwait"
            | "epoll_pwait2"
            | "accept"
            | "accept4"
            | "recvfrom"
            | "recvmsg"
    )
}

/// The thread's OS name (`comm`).
pub fn thread_comm(pid: u32, tid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).ok().map(|s| s.trim_end().to_string())
}

/// The ids of a process's threads.
pub fn thread_ids(pid: u32) -> std::io::Result<Vec<u32>> {
    let mut ids = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        if let Some(id) = e?.file_name().to_str().and_then(|s| s.parse().ok()) {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// A process's command line, split into arguments.
pub fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| b.split(|&c| c == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect())
        .unwrap_or_default()
}

/// The directory a process sees as `/`, when it is not this process's own `/`: a program in a
/// chroot or a container. Its paths (`/w/app.py`, the interpreter's `/usr/lib/python3.14/…`)
/// name files under that directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessRoot {
    /// `/proc/<pid>/root`: reaches the files while the process lives, whatever its mount namespace.
    pub link: std::path::PathBuf,
    /// Where that directory is in this process's view (`/srv/sid` for `chroot /srv/sid …`), when
    /// it is visible here (not for a container in its own mount namespace): it outlives the process.
    pub host: Option<std::path::PathBuf>,
}

impl ProcessRoot {
    /// Where the process's `path` is for this process: under [`ProcessRoot::host`] when that holds
    /// it, else through [`ProcessRoot::link`]. A relative path is returned as it is.
    pub fn host_path(&self, path: &str) -> std::path::PathBuf {
        let Some(rel) = path.strip_prefix('/') else {
            return path.into();
        };
        if let Some(h) = &self.host {
            let p = h.join(rel);
            if p.exists() {
                return p;
            }
        }
        self.link.join(rel)
    }

    /// The process's view of a path of this process's (`/srv/sid/w` → `/w`), when it is inside
    /// the root.
    pub fn inner_path(&self, host_path: &std::path::Path) -> Option<std::path::PathBuf> {
        let rel = host_path.strip_prefix(self.host.as_ref()?).ok()?;
        Some(std::path::Path::new("/").join(rel))
    }
}

/// The root of process `pid` when it differs from this process's `/` (compared by device and
/// inode); `None` for a process that shares it, or that cannot be looked at.
pub fn process_root(pid: u32) -> Option<ProcessRoot> {
    use std::os::unix::fs::MetadataExt;
    let link = std::path::PathBuf::from(format!("/proc/{pid}/root"));
    let theirs = std::fs::metadata(&link).ok()?;
    let ours = std::fs::metadata("/").ok()?;
    if (theirs.dev(), theirs.ino()) == (ours.dev(), ours.ino()) {
        return None;
    }
    // The link's text is the directory as this process would name it; it is that directory only
    // when the same inode is found there (a container's root in another mount namespace is not).
    let host = std::fs::read_link(&link).ok().filter(|h| {
        h.as_os_str() != "/"
            && std::fs::metadata(h)
                .is_ok_and(|m| (m.dev(), m.ino()) == (theirs.dev(), theirs.ino()))
    });
    Some(ProcessRoot { link, host })
}

/// The parent of a process.
pub fn ppid(pid: u32) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = s.rfind(')')?;
    s[close + 1..].split_ascii_whitespace().nth(1)?.parse().ok()
}

/// Whether a process exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    match std::fs::read(format!("/proc/{pid}/stat")) {
        Ok(b) => parse_stat(&b).map(|s| s.state != b'Z' && s.state != b'X').unwrap_or(false),
        Err(_) => false,
    }
}

/// Whether a process still runs, asked at every tick: a pidfd (Linux 5.3+) polls readable once the
/// process has exited (a zombie included), one system call; without one, [`is_alive`], which has
/// the kernel format the whole process's `/proc/<pid>/stat` (it sums every thread's times: a
/// tenth of the recorder's CPU on a five-thread program when asked at every tick).
pub struct Liveness {
    pid: u32,
    fd: Option<std::os::fd::OwnedFd>,
}

impl Liveness {
    pub fn new(pid: u32) -> Liveness {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open takes a pid and flags by value (no pointers) and returns a new
        // descriptor or -1; a bad pid is an error, not UB.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        // SAFETY: a non-negative return is a new descriptor, open and owned by nobody else, so
        // the OwnedFd may be its only owner and close it on drop.
        let fd = (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) });
        Liveness { pid, fd }
    }

    pub fn alive(&self) -> bool {
        use std::os::fd::AsRawFd;
        let Some(fd) = &self.fd else { return is_alive(self.pid) };
        let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: `p` is one initialised pollfd on the stack, writable for the call (nfds 1), and
        // its fd is `self.fd`'s, open while `self` is borrowed; timeout 0, no wait.
        match unsafe { libc::poll(&mut p, 1, 0) } {
            0 => true,
            n if n > 0 => false,
            _ => is_alive(self.pid),
        }
    }
}

/// Whether a python executable or libpython is mapped into the process.
pub fn maps_python(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps")).map(|m| maps_file(&m, "python") || maps_file(&m, "libpython")).unwrap_or(true)
}

/// Whether a `/proc/<pid>/maps` text maps a file whose name starts with `prefix`.
fn maps_file(maps: &str, prefix: &str) -> bool {
    maps.lines().any(|l| l.rsplit('/').next().is_some_and(|name| name.starts_with(prefix)))
}

/// Whether two processes run the same executable file (a forked child before its `exec`).
pub fn same_executable(a: u32, b: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let id = |pid: u32| std::fs::metadata(format!("/proc/{pid}/exe")).ok().map(|m| (m.dev(), m.ino()));
    matches!((id(a), id(b)), (Some(x), Some(y)) if x == y)
}

/// Whether the process is not ready to be looked for an interpreter in, but will be in a moment:
/// mid-`exec` (its maps cannot be read, or do not have its executable yet), or running a python
/// executable built against a shared libpython that the dynamic loader has not mapped yet
/// (pyenv's and Debian's builds: a small launcher naming `libpython`; a statically linked python
/// holds the interpreter itself). Looking now would find nothing, and each look parses the
/// binaries' symbols.
pub fn exec_pending(pid: u32) -> bool {
    if !young(pid) {
        // A process that has run for seconds (attached with --pid) is whatever it is now.
        return false;
    }
    let exe = format!("/proc/{pid}/exe");
    let (Ok(meta), Ok(path)) = (std::fs::metadata(&exe), std::fs::read_link(&exe)) else { return false };
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else { return true };
    let path = path.to_string_lossy();
    if !maps.lines().any(|l| l.ends_with(path.as_ref())) {
        return true;
    }
    let python = path.rsplit('/').next().is_some_and(|n| n.starts_with("python"));
    let launcher = python && meta.len() < 1 << 20 && std::fs::read(&exe).is_ok_and(|b| b.windows(9).any(|w| w == b"libpython"));
    launcher && !maps_file(&maps, "libpython")
}

/// Whether the process started less than two seconds ago.
fn young(pid: u32) -> bool {
    let Some(start) = std::fs::read(format!("/proc/{pid}/stat")).ok().and_then(|b| parse_stat(&b)).map(|s| s.start_time) else { return false };
    // SAFETY: sysconf takes a constant and touches no memory of ours.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let uptime: Option<f64> = std::fs::read_to_string("/proc/uptime").ok().and_then(|u| u.split_whitespace().next()?.parse().ok());
    uptime.is_some_and(|up| up - start as f64 / hz < 2.0)
}

/// The name of an x86-64 / aarch64 system call number, for the ones a Python thread blocks in.
pub fn syscall_name(nr: i64) -> &'static str {
    #[cfg(target_arch = "x86_64")]
    let name = match nr {
        0 => "read",
        1 => "write",
        7 => "poll",
        17 => "pread64",
        23 => "select",
        34 => "pause",
        35 => "nanosleep",
        43 => "accept",
        44 => "sendto",
        45 => "recvfrom",
        46 => "sendmsg",
        47 => "recvmsg",
        42 => "connect",
        61 => "wait4",
        202 => "futex",
        230 => "clock_nanosleep",
        232 => "epoll_wait",
        247 => "waitid",
        270 => "pselect6",
        271 => "ppoll",
        281 => "epoll_pwait",
        288 => "accept4",
        441 => "epoll_pwait2",
        _ => "syscall",
    };
    #[cfg(target_arch = "aarch64")]
    let name = match nr {
        63 => "read",
        64 => "write",
        72 => "pselect6",
        73 => "ppoll",
        22 => "epoll_pwait",
        98 => "futex",
        101 => "nanosleep",
        115 => "clock_nanosleep",
        202 => "accept",
        242 => "accept4",
        203 => "connect",
        206 => "sendto",
        207 => "recvfrom",
        211 => "sendmsg",
        212 => "recvmsg",
        260 => "wait4",
        95 => "waitid",
        _ => "syscall",
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let name = {
        let _ = nr;
        "syscall"
    };
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launched pyenv-style python is pending until libpython is mapped (tests/record.rs
    /// launches them); a running process with its executable mapped is not, and neither is a
    /// child that has not exec'd, by this check (`same_executable` tells that one).
    #[test]
    fn a_running_process_is_not_pending() {
        assert!(!exec_pending(std::process::id()));
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!exec_pending(child.id()));
        assert!(!same_executable(child.id(), std::process::id()));
        assert!(same_executable(std::process::id(), std::process::id()));
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn stat_with_odd_command_names() {
        let line = b"4242 (we (ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 3 0 98765 1000 10 18446744073709551615";
        assert_eq!(parse_stat(line), Some(StatReading { state: b'S', start_time: 98765 }));
        assert_eq!(parse_stat(b"garbage"), None);
    }

    #[test]
    fn schedstat_and_syscall() {
        assert_eq!(parse_schedstat(b"123 45 6\n"), Some(SchedStat { cpu_ns: 123, runq_ns: 45 }));
        assert_eq!(parse_syscall(b"running\n"), Some(Syscall::Running));
        assert_eq!(parse_syscall(b"-1 0x7ffd 0x7f00\n"), Some(Syscall::InKernel));
        assert_eq!(
            parse_syscall(b"202 0x7f12345678 0x189 0x0 0x0 0x0 0xffffffff 0x7ffc 0x7f\n"),
            Some(Syscall::Blocked { nr: 202, arg0: 0x7f12345678 })
        );
    }

    #[test]
    fn reads_own_thread() {
        let pid = std::process::id();
        // SAFETY: gettid takes nothing and cannot fail.
        let tid = unsafe { libc::gettid() } as u32;
        let mut p = ThreadProc::open(pid, tid).unwrap();
        let s = p.stat().unwrap();
        assert_eq!(s.state, b'R');
        // Burn a little CPU and check accounting moves.
        if let Some(a) = p.schedstat() {
            // The kernel updates a running thread's total at scheduler ticks: burn 50 ms.
            let until = std::time::Instant::now() + std::time::Duration::from_millis(50);
            let mut x = 0u64;
            while std::time::Instant::now() < until {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            let b = p.schedstat().unwrap();
            assert!(b.cpu_ns > a.cpu_ns);
        }
        assert!(thread_ids(pid).unwrap().contains(&tid));
        assert!(is_alive(pid));
    }

    /// The state read through the system call agrees with `stat` for a sleeping, a spinning and
    /// an ended thread, and `stat` is not what decides it.
    #[test]
    fn state_from_the_system_call_agrees_with_stat() {
        let pid = std::process::id();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let s2 = stop.clone();
        let spinner = std::thread::spawn(move || {
            // SAFETY: gettid takes nothing and cannot fail.
            tx.send(unsafe { libc::gettid() } as u32).unwrap();
            while !s2.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        let (tx2, rx2) = std::sync::mpsc::channel::<()>();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let sleeper = std::thread::spawn(move || {
            // SAFETY: gettid takes nothing and cannot fail.
            tid_tx.send(unsafe { libc::gettid() } as u32).unwrap();
            let _ = rx2.recv();
        });
        let (spin_tid, sleep_tid) = (rx.recv().unwrap(), tid_rx.recv().unwrap());
        std::thread::sleep(std::time::Duration::from_millis(100));
        let mut sleeping = ThreadProc::open(pid, sleep_tid).unwrap();
        let first = sleeping.stat().unwrap();
        let (s, sc) = sleeping.state_and_syscall().unwrap();
        if let Some(Syscall::Blocked { nr, .. }) = sc {
            assert_eq!(syscall_name(nr), "futex");
            assert_eq!(s, StatReading { state: b'S', start_time: first.start_time });
        } else {
            // No ptrace access to the syscall file: `stat` decides.
            assert_eq!(s.state, b'S');
        }
        let mut spinning = ThreadProc::open(pid, spin_tid).unwrap();
        spinning.stat().unwrap();
        let (s, sc) = spinning.state_and_syscall().unwrap();
        // On two cores the spinner may be runnable without a CPU: still `R`, still "running".
        assert_eq!(s.state, b'R');
        assert!(matches!(sc, Some(Syscall::Running) | None), "{sc:?}");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        tx2.send(()).unwrap();
        spinner.join().unwrap();
        sleeper.join().unwrap();
        // `join` returns when the thread's tid is cleared, a moment before the kernel drops its
        // `/proc` entry: an ended thread reads as gone soon after.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while sleeping.state_and_syscall().is_ok() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(sleeping.state_and_syscall().is_err(), "an ended thread reads as gone");
    }

    #[test]
    fn liveness_sees_an_exit_before_the_process_is_reaped() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let live = Liveness::new(child.id());
        assert!(live.alive() && is_alive(child.id()));
        // SAFETY: kill takes no pointers; the pid is our child, not yet waited for, so it cannot
        // have been reused by another process.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while live.alive() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // Not waited for yet: a zombie, which is not alive for either test.
        assert!(!live.alive(), "a killed child still looks alive");
        assert!(!is_alive(child.id()));
        child.wait().unwrap();
    }
}
