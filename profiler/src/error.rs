//! What can go wrong when profiling, each as one sentence that says what to do next.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("there is no process with pid {0}: check the number, e.g. with `pgrep -a python`")]
    NoSuchProcess(u32),
    #[error("process {pid} ({name}) is not a Python program ({detail}): attach to the python process itself, or launch it with `threadradar record -- python3 your_program.py`")]
    NotPython { pid: u32, name: String, detail: String },
    #[error("not allowed to read the memory of process {pid}: run threadradar as root or as the process's owner, launch the program under `threadradar record -- …` instead, or allow attaching with `sudo sysctl kernel.yama.ptrace_scope=0`")]
    PermissionDenied { pid: u32 },
    /// As root, `ptrace_scope` and ownership do not stop attaching: the kernel protects the
    /// process itself (a container's init, another container, no CAP_SYS_PTRACE).
    #[error("not allowed to read the memory of process {pid}, even as root: the kernel protects it (as it does a container's pid 1, processes of other containers, or all processes in a container without CAP_SYS_PTRACE); check that it is the Python process you meant, or launch the program under `threadradar record -- …` instead")]
    PermissionDeniedAsRoot { pid: u32 },
    #[error("the Python interpreter in process {pid} is not supported ({detail}): ThreadRadar reads CPython 2.7 and 3.3–3.15 with the GIL and free-threaded 3.13t–3.15t, so record the program under one of those")]
    Unsupported { pid: u32, detail: String },
    #[error("the program exited before it could be sampled: check that it runs and is a Python program (a program that finishes within a few milliseconds leaves nothing to sample)")]
    ExitedBeforeSampling,
    // `cause`, not `source`: the cause is part of this sentence and must not be printed again as
    // the error's source.
    #[error("could not start `{command}`: {cause}; check the command and that it is on PATH")]
    Launch { command: String, cause: std::io::Error },
    /// `ended` says how the program ended when it is known (" (the program ended with exit code 1)").
    #[error("nothing was sampled: the program ended or was interrupted before the first sample{ended}")]
    NoSamples { ended: String },
    #[error("no Python process appeared: `{command}` ran for {seconds:.1} s without starting Python; check that the command runs a Python program")]
    NoPythonProcess { command: String, seconds: f64 },
    #[error(transparent)]
    RunFile(#[from] crate::runfile::RunFileError),
    #[error("cannot create the run directory {path}: {source}")]
    RunDir { path: PathBuf, source: std::io::Error },
}

/// Turns py-spy's error chain for a failed attach into one of ours.
pub fn classify_attach_error(pid: u32, err: &anyhow::Error) -> RecordError {
    let chain: Vec<String> = err.chain().map(|e| e.to_string()).collect();
    let text = chain.join(": ");
    let denied = err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::PermissionDenied)
            || e.downcast_ref::<remoteprocess::Error>().is_some_and(|r| {
                matches!(r, remoteprocess::Error::IOError(io) if io.kind() == std::io::ErrorKind::PermissionDenied)
            })
    }) || text.contains("Operation not permitted")
        || text.contains("Permission denied");
    if denied {
        // SAFETY: geteuid takes nothing, touches no memory and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            return RecordError::PermissionDeniedAsRoot { pid };
        }
        return RecordError::PermissionDenied { pid };
    }
    if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
        return RecordError::NoSuchProcess(pid);
    }
    if text.contains("Unsupported version") {
        let last = chain.last().cloned().unwrap_or_default();
        let detail = last.strip_prefix("Unsupported version of Python: ").unwrap_or(&last).to_string();
        return RecordError::Unsupported { pid, detail };
    }
    // The command line is empty for a moment while a process executes a new program (its
    // arguments are set up after the kernel has named it), so the kernel's name stands in.
    let name = crate::procfs::cmdline(pid)
        .first()
        .map(|s| s.rsplit('/').next().unwrap_or(s).to_string())
        .or_else(|| std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|c| c.trim_end().to_string()).filter(|c| !c.is_empty()))
        .unwrap_or_else(|| "?".into());
    RecordError::NotPython { pid, name, detail: "no CPython interpreter found in its memory".into() }
}
