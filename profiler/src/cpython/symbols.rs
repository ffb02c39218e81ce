//! The three facts the reader needs from the interpreter's binary — where `_PyRuntime` and
//! `PyCode_Type` are, and (for 3.11 and 3.12, which publish no layout table) its version —
//! cached between recordings beside the source cache (`~/.cache/threadradar/symbols`).
//!
//! Finding them means parsing the ELF symbol tables of the executable and of `libpython` (py-spy's
//! `PythonProcessInfo`): about 8 ms of CPU for pyenv's libpython, an eighth of what the recorder
//! spends on a launched one-second program. The answer depends only on the files, so it is kept
//! per (executable, libpython) pair, each identified by device, inode, size and modification time,
//! as offsets from the executable mapping py-spy takes as the file's base. A later process of the
//! same files finds its base in its own maps (load addresses change with ASLR) and adds the
//! offsets. A replaced file has another inode or time stamp, and is parsed again.

use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where the binary's facts are in this process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbols {
    pub runtime: usize,
    pub code_type: Option<usize>,
    /// `(major, minor, patch)`, when it was needed (no layout table in `_PyRuntime`).
    pub version: Option<(u64, u64, u64)>,
}

/// Bumped when an entry's meaning changes.
const CACHE_VERSION: u32 = 1;

/// A file's identity: device, inode, size, modification time (ns).
type Stamp = (u64, u64, u64, i128);

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Entry {
    version: u32,
    exe: (String, Stamp),
    lib: Option<(String, Stamp)>,
    /// Whether the symbols are the library's (else the executable's).
    in_lib: bool,
    runtime: u64,
    code_type: Option<u64>,
    python: Option<(u64, u64, u64)>,
}

/// The process's executable and libpython as py-spy chooses them: each file's path, identity and
/// the start of the mapping py-spy parses it at (the executable's first executable mapping; the
/// library's executable mapping of the lowest file offset).
struct Binaries {
    exe: (String, Stamp, u64),
    lib: Option<(String, Stamp, u64)>,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.len(), m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128))
}

fn binaries(pid: u32) -> Option<Binaries> {
    let exe_path = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let exe_name = exe_path.to_str()?.to_string();
    let maps = proc_maps::get_process_maps(pid as proc_maps::Pid).ok()?;
    let exe_map = maps.iter().find(|m| m.is_exec() && m.filename().and_then(|f| f.to_str()) == Some(exe_name.as_str()))?;
    let exe = (exe_name, stamp(Path::new(&format!("/proc/{pid}/exe")))?, exe_map.start() as u64);
    let lib = maps
        .iter()
        .filter(|m| m.is_exec() && m.filename().and_then(|f| f.to_str()).is_some_and(py_spy::python_process_info::is_python_lib))
        .min_by_key(|m| m.offset)
        .and_then(|m| {
            let name = m.filename()?.to_str()?.to_string();
            let st = stamp(Path::new(&format!("/proc/{pid}/root{name}")))?;
            Some((name, st, m.start() as u64))
        });
    Some(Binaries { exe, lib })
}

fn entry_file(dir: &Path, b: &Binaries) -> PathBuf {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(b.exe.0.as_bytes());
    h.update([0]);
    if let Some((name, ..)) = &b.lib {
        h.update(name.as_bytes());
    }
    let hex: String = h.finalize().iter().take(16).map(|x| format!("{x:02x}")).collect();
    dir.join(format!("{hex}.json"))
}

/// Where entries are kept: `symbols` beside the source cache directory; none when that cache is
/// off (`THREADRADAR_SOURCE_CACHE=off`).
pub fn cache_dir() -> Option<PathBuf> {
    crate::source::source_cache_dir().map(|d| d.with_file_name("symbols"))
}

/// The cached facts for process `pid`'s binaries, if an entry for exactly these files exists.
pub fn cached(dir: &Path, pid: u32) -> Option<Symbols> {
    let b = binaries(pid)?;
    let e: Entry = serde_json::from_slice(&std::fs::read(entry_file(dir, &b)).ok()?).ok()?;
    let same_lib = match (&e.lib, &b.lib) {
        (None, None) => true,
        (Some((n, s)), Some((bn, bs, _))) => n == bn && s == bs,
        _ => false,
    };
    if e.version != CACHE_VERSION || e.exe.0 != b.exe.0 || e.exe.1 != b.exe.1 || !same_lib {
        return None;
    }
    let base = if e.in_lib { b.lib.as_ref()?.2 } else { b.exe.2 };
    Some(Symbols { runtime: (base + e.runtime) as usize, code_type: e.code_type.map(|c| (base + c) as usize), version: e.python })
}

/// Stores what was found through py-spy's parse (`info`) for process `pid`.
pub fn store(dir: &Path, pid: u32, info: &py_spy::python_process_info::PythonProcessInfo, found: &Symbols) {
    let Some(b) = binaries(pid) else { return };
    let in_exe = info.python_binary.as_ref().is_some_and(|pb| pb.symbols.contains_key("_PyRuntime"));
    let (in_lib, base) = match (in_exe, &b.lib) {
        (true, _) => (false, b.exe.2),
        (false, Some(l)) => (true, l.2),
        (false, None) => return,
    };
    // py-spy's own base for that binary must be the one found here, or the offsets mean nothing.
    let parsed_at = if in_lib { info.libpython_binary.as_ref().map(|l| l.addr) } else { info.python_binary.as_ref().map(|p| p.addr) };
    if parsed_at != Some(base) || (found.runtime as u64) < base || found.code_type.is_some_and(|c| (c as u64) < base) {
        return;
    }
    let e = Entry {
        version: CACHE_VERSION,
        exe: (b.exe.0.clone(), b.exe.1),
        lib: b.lib.as_ref().map(|(n, s, _)| (n.clone(), *s)),
        in_lib,
        runtime: found.runtime as u64 - base,
        code_type: found.code_type.map(|c| c as u64 - base),
        python: found.version,
    };
    let file = entry_file(dir, &b);
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(text) = serde_json::to_vec(&e) else { return };
    // Written whole and renamed, so that concurrent recordings never read half an entry.
    let tmp = dir.join(format!(".{}.{}.tmp", file.file_name().and_then(|n| n.to_str()).unwrap_or("entry"), std::process::id()));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &file).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Python interpreter that waits on stdin, once it has started.
    fn python() -> Option<std::process::Child> {
        let mut c = std::process::Command::new("python3")
            .args(["-c", "import sys; print('up', flush=True); sys.stdin.read()"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .ok()?;
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(c.stdout.as_mut()?), &mut line).ok()?;
        Some(c)
    }

    fn parsed(pid: u32) -> (py_spy::python_process_info::PythonProcessInfo, Symbols) {
        let process = remoteprocess::Process::new(pid as remoteprocess::Pid).unwrap();
        let info = py_spy::python_process_info::PythonProcessInfo::new(&process).unwrap();
        let runtime = *info.get_symbol("_PyRuntime").unwrap() as usize;
        let code_type = info.get_symbol("PyCode_Type").map(|&a| a as usize);
        (info, Symbols { runtime, code_type, version: Some((3, 11, 7)) })
    }

    /// An entry stored for one process gives another process of the same binaries the addresses
    /// a parse of that process gives (at its own load addresses), and nothing for other files.
    #[test]
    fn an_entry_serves_the_next_process_of_the_same_binaries_at_its_own_addresses() {
        let (Some(mut a), Some(mut b)) = (python(), python()) else { return };
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(cached(dir.path(), a.id()), None, "nothing stored yet");
        let (info, found) = parsed(a.id());
        store(dir.path(), a.id(), &info, &found);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "one entry");
        assert_eq!(cached(dir.path(), a.id()), Some(found.clone()));
        let (_, fresh) = parsed(b.id());
        assert_eq!(cached(dir.path(), b.id()), Some(fresh.clone()), "the second process's own addresses");
        // With address space randomisation the two differ: the offsets were what was kept.
        if found.runtime != fresh.runtime {
            assert_ne!(cached(dir.path(), a.id()), cached(dir.path(), b.id()));
        }
        // Another executable (this test binary) has no entry.
        assert_eq!(cached(dir.path(), std::process::id()), None);
        // A changed stamp (a reinstalled interpreter) is a miss.
        let file = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().path();
        let mut e: Entry = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        e.exe.1 .3 += 1;
        std::fs::write(&file, serde_json::to_vec(&e).unwrap()).unwrap();
        assert_eq!(cached(dir.path(), a.id()), None);
        for c in [&mut a, &mut b] {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }
}
