//! The same recordings on every CPython this machine has: 3.11 and 3.12 (pyenv's; read with the
//! offsets built into `profiler/src/cpython/offsets.rs`), 3.13 and free-threaded 3.13t, 3.14 and
//! 3.15 (Debian sid's, in a chroot; all four read through the interpreter's own
//! `_Py_DebugOffsets`).
//!
//! `tests/pythons.sh` builds 3.13 and 3.13t into `~/.cache/threadradar/pythons` (or
//! `$THREADRADAR_PYTHONS`). An interpreter that is missing is skipped with a printed reason,
//! unless `THREADRADAR_REQUIRE_PYTHONS=1` (set by `tests/run_all.sh`, so CI runs them all).

mod common;

use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use threadradar_profiler::run::{Run, ThreadState};

#[derive(Clone)]
struct Interp {
    label: &'static str,
    path: String,
    free_threaded: bool,
    /// A free-threaded interpreter started with `PYTHON_GIL=1`, which turns the GIL back on.
    gil_forced: bool,
}

impl Interp {
    fn has_gil(&self) -> bool {
        !self.free_threaded || self.gil_forced
    }
}

fn pythons_dir() -> PathBuf {
    match std::env::var_os("THREADRADAR_PYTHONS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/threadradar/pythons"),
    }
}

/// `sys.version_info[:2]` and whether the GIL is off, or `None` when `path` does not run.
fn probe(path: &str) -> Option<(String, bool)> {
    let o = Command::new(path).args(["-c", "import sys; print('%d.%d' % sys.version_info[:2], int(not getattr(sys, '_is_gil_enabled', lambda: True)()))"]).output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    let (v, ft) = text.trim().split_once(' ')?;
    o.status.success().then(|| (v.to_string(), ft == "1"))
}

/// The interpreters to test; a missing one is skipped with a reason (or fails the test when
/// they are required).
fn interpreters() -> Vec<Interp> {
    let dir = pythons_dir();
    let pyenv = std::env::var_os("PYENV_ROOT").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/root/.pyenv"));
    let newest = |minor: u32| -> String {
        let prefix = format!("3.{minor}.");
        let mut found: Vec<PathBuf> = std::fs::read_dir(pyenv.join("versions"))
            .map(|d| d.filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().starts_with(&prefix)).map(|e| e.path()).collect())
            .unwrap_or_default();
        found.sort();
        found.pop().map(|p| p.join(format!("bin/python3.{minor}")).display().to_string()).unwrap_or_else(|| format!("python3.{minor}"))
    };
    let wanted: [(&str, String, bool); 6] = [
        ("3.11", "python3.11".to_string(), false),
        ("3.12", newest(12), false),
        ("3.13", dir.join("3.13/bin/python3.13").display().to_string(), false),
        ("3.13t", dir.join("3.13t/bin/python3.13t").display().to_string(), true),
        // Debian sid's, in a chroot (tests/pythons.sh): the wrapper runs it there.
        ("3.14", dir.join("3.14/bin/python3.14").display().to_string(), false),
        ("3.15", dir.join("3.15/bin/python3.15").display().to_string(), false),
    ];
    let required = std::env::var("THREADRADAR_REQUIRE_PYTHONS").is_ok_and(|v| v == "1");
    let mut out = Vec::new();
    for (label, path, free_threaded) in wanted {
        match probe(&path) {
            Some((v, ft)) if label.starts_with(&v) && ft == free_threaded => out.push(Interp { label, path, free_threaded, gil_forced: false }),
            found => {
                let why = match found {
                    Some((v, ft)) => format!("{path} is {v}{}", if ft { " free-threaded" } else { "" }),
                    None => format!("{path} does not run (install it with `bash tests/pythons.sh`)"),
                };
                assert!(!required, "CPython {label} is required here but {why}");
                skip("python", &format!("CPython {label}: {why}"));
            }
        }
    }
    out
}

fn sample(bug: &str) -> String {
    repo().join("samples/python").join(bug).join("buggy.py").display().to_string()
}

fn record_with(py: &Interp, out: &Path, script_and_args: &[&str]) -> Run {
    let mut args: Vec<&str> = vec!["record", "--no-progress", "-o", out.to_str().unwrap(), "--", &py.path];
    args.extend_from_slice(script_and_args);
    let o = threadradar(out.parent().unwrap(), &args);
    assert!(o.status.success(), "recording {script_and_args:?} with CPython {} failed: {}", py.label, stderr(&o));
    read(out)
}

/// What must look the same on every interpreter.
#[derive(Debug, PartialEq, Eq)]
struct Shape {
    /// (name, type) of every thread.
    threads: BTreeSet<(String, String)>,
    /// Functions of the sample's own file that were sampled.
    functions: BTreeSet<String>,
}

fn shape(run: &Run, file_suffix: &str) -> Shape {
    let threads = run.threads.iter().map(|t| (t.name.clone(), t.thread_type.clone())).collect();
    let mut functions = BTreeSet::new();
    for s in &run.samples {
        for ts in &s.threads {
            let Some(stack) = ts.stack else { continue };
            for f in run.stack_frames(stack) {
                let func = &run.functions[f.function as usize];
                if run.file_path(func.file).ends_with(file_suffix) {
                    functions.insert(run.str(func.qualname).to_string());
                }
            }
        }
    }
    Shape { threads, functions }
}

/// Everything a reader could get wrong about threads, on any interpreter: every thread is a real
/// OS thread with a Python id (no phantom `thread-0`), names come from `threading`, and a
/// free-threaded interpreter never shows anyone waiting for a GIL.
fn check_threads(py: &Interp, run: &Run, what: &str) {
    let version = run.processes[0].python_version.clone().unwrap_or_default();
    assert!(version.starts_with(&py.label[..4]), "{what} on {}: recorded version {version}", py.label);
    assert_eq!(version.ends_with('t'), py.free_threaded, "{what} on {}: version {version} says whether it is free-threaded", py.label);
    for t in &run.threads {
        assert!(t.tid != 0 && t.python_id != 0, "{what} on {}: phantom thread {t:?}", py.label);
        let seen = run.samples.iter().filter(|s| s.threads.iter().any(|ts| run.threads[ts.thread as usize].tid == t.tid)).count();
        assert!(
            !t.name.starts_with("thread-") && !t.name.starts_with("python"),
            "{what} on {}: thread without its Python name: {t:?}, in {seen} samples; all threads: {:?}",
            py.label,
            run.threads.iter().map(|t| (&t.name, t.tid)).collect::<Vec<_>>()
        );
    }
    if !py.has_gil() {
        // 3.13t turns its GIL on while it imports any extension module (and leaves it on if the
        // module does not declare itself free-threading safe); imports happen in the main thread
        // at start-up here, so the program's own threads must never see a GIL.
        let gil: Vec<(u64, &str)> = run
            .samples
            .iter()
            .flat_map(|s| s.threads.iter().map(move |t| (s.t, t)))
            .filter(|(_, t)| !run.threads[t.thread as usize].is_main && (t.state == ThreadState::Gil || t.gil))
            .map(|(at, t)| (at / 1_000_000, run.threads[t.thread as usize].name.as_str()))
            .collect();
        assert!(gil.is_empty(), "{what} on {}: nothing waits for or holds a GIL that does not exist; (ms, thread): {gil:?}", py.label);
    }
}

#[test]
fn paper_samples_record_the_same_threads_types_and_artifacts_on_every_interpreter() {
    let _g = serial();
    let pythons = interpreters();
    let dir = tempfile::tempdir().unwrap();
    // (sample, arguments, functions that every recording must contain)
    let bugs: [(&str, &[&str], &[&str]); 3] = [
        ("bug1_worker_manager", &["--workers", "10", "--timeout", "1.5"], &["Worker.run", "WorkerManager.__init__", "WorkerManager._build_table"]),
        ("bug2_producer_consumer", &["--producers", "1", "--consumers", "10", "--duration", "1.5"], &["Producer.run", "Consumer.run", "Storage.take", "main"]),
        ("bug3_readers_writers", &["--readers", "10", "--writers", "2", "--timeout", "1.5"], &["Reader.run", "Writer.run", "main"]),
    ];
    for (bug, args, must) in bugs {
        let script = sample(bug);
        let suffix = format!("{bug}/buggy.py");
        let mut shapes: Vec<(&str, Shape)> = Vec::new();
        for py in &pythons {
            let out = dir.path().join(format!("{bug}-{}.json", py.label));
            let mut all = vec![script.as_str()];
            all.extend_from_slice(args);
            let run = record_with(py, &out, &all);
            check_threads(py, &run, bug);
            let s = shape(&run, &suffix);
            for f in must {
                assert!(s.functions.contains(*f), "{bug} on {}: {f} was never sampled; saw {:?}", py.label, s.functions);
            }
            eprintln!("{bug} on CPython {}: {} threads, {} samples, {} functions", py.label, run.threads.len(), run.samples.len(), s.functions.len());
            shapes.push((py.label, s));
        }
        if let Some(((first, a), rest)) = shapes.split_first() {
            for (label, b) in rest {
                assert_eq!(a.threads, b.threads, "{bug}: thread names and types differ between CPython {first} and {label}");
                // Short functions may or may not be hit in one recording; what dominates the run
                // (`must`, checked above on each) is there everywhere.
            }
        }
    }
}

/// Two CPU-bound threads, checked against what they report about themselves: the recorded lines
/// are the spin loop's, the kernel CPU time per thread matches `time.thread_time()`, and on a
/// free-threaded build both are observed computing in the same samples (with a GIL, one at a time
/// holds it).
#[test]
fn two_spinning_threads_are_seen_as_they_ran() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = script("spinners.py");
    let text = std::fs::read_to_string(&path).unwrap();
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1;
    let loop_lines: BTreeSet<u32> = [line_of("while time.thread_time() - start"), line_of("for i in range(2000)"), line_of("x = (x + i * i)")].into();
    let mut cases = interpreters();
    // 3.13t again with its GIL turned on: the sampler must follow `_gil_runtime_state.enabled`.
    if let Some(ft) = cases.iter().find(|p| p.free_threaded).cloned() {
        cases.push(Interp { label: "3.13t with PYTHON_GIL=1", gil_forced: true, ..ft });
    }
    for py in cases {
        let out = dir.path().join(format!("spinners-{}.json", py.label.replace(' ', "_")));
        let mut cmd = Command::new(bin());
        cmd.args(["record", "--no-progress", "-o", out.to_str().unwrap(), "--", &py.path, &path, "1.0", "1.0"]).current_dir(dir.path());
        if py.gil_forced {
            cmd.env("PYTHON_GIL", "1");
        } else {
            cmd.env_remove("PYTHON_GIL");
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "spinners on {}: {}", py.label, stderr(&o));
        let truth: Value = serde_json::from_slice(o.stdout.split(|&b| b == b'\n').find(|l| l.starts_with(b"{")).expect("the script's report")).unwrap();
        assert_eq!(truth["gil"].as_bool(), Some(py.has_gil()), "{}: the script saw the GIL as expected", py.label);
        let run = read(&out);
        check_threads(&py, &run, "spinners");

        let mut ids: HashMap<u32, &str> = HashMap::new();
        for (name, t) in truth["threads"].as_object().unwrap() {
            let th = run.threads.iter().position(|th| &th.name == name).unwrap_or_else(|| panic!("{}: {name} not recorded", py.label));
            let th_ = &run.threads[th];
            assert_eq!(th_.tid as u64, t["native_id"].as_u64().unwrap(), "{}: {name}'s native thread id", py.label);
            assert_eq!((th_.thread_type.as_str(), th_.type_source), ("Spinner", threadradar_profiler::run::TypeSource::Object), "{}: {name}", py.label);
            let cpu_s = (th_.cpu_ns_last.unwrap_or(0) - th_.cpu_ns_first.unwrap_or(0)) as f64 / 1e9;
            let truth_s = t["cpu_s"].as_f64().unwrap();
            // The thread sleeps 1 s before it spins, so the first sample sees it before its CPU time
            // begins even when the recorder attaches late; the last comes just before it ends.
            assert!(cpu_s <= truth_s + 0.02 && cpu_s >= truth_s * 0.8 - 0.05, "{}: {name} recorded {cpu_s:.3} s of CPU, it measured {truth_s:.3} s", py.label);
            ids.insert(th as u32, name.as_str());
        }
        // Lines: the innermost frame of a spinner is in the loop.
        let mut lines: BTreeMap<u32, u64> = BTreeMap::new();
        let (mut both, mut with_both) = (0u64, 0u64);
        // Samples where both spinners are on their CPUs or waiting for the GIL, and how many of
        // them mark one spinner, and both, as the GIL's holder.
        let (mut running, mut one_holds, mut two_hold) = (0u64, 0u64, 0u64);
        for s in &run.samples {
            let spinning: Vec<_> = s.threads.iter().filter(|t| ids.contains_key(&t.thread)).collect();
            for t in &spinning {
                if let Some(st) = t.stack {
                    if let Some(f) = run.stack_frames(st).next() {
                        if run.str(run.functions[f.function as usize].qualname) == "Spinner.run" {
                            *lines.entry(f.line).or_default() += 1;
                        }
                    }
                }
            }
            if spinning.len() == 2 && spinning.iter().all(|t| matches!(t.state, ThreadState::Computing | ThreadState::Gil)) {
                running += 1;
                match spinning.iter().filter(|t| t.gil).count() {
                    1 => one_holds += 1,
                    2 => two_hold += 1,
                    _ => {}
                }
            }
            if spinning.len() == 2 {
                with_both += 1;
                if spinning.iter().all(|t| t.state == ThreadState::Computing) {
                    both += 1;
                }
            }
        }
        let in_loop: u64 = lines.iter().filter(|(l, _)| loop_lines.contains(l)).map(|(_, n)| n).sum();
        let total: u64 = lines.values().sum();
        assert!(total > 0 && in_loop * 10 >= total * 9, "{}: Spinner.run sampled at lines {lines:?}, the loop is {loop_lines:?}", py.label);
        let cpu: f64 = ids
            .keys()
            .map(|&i| {
                let t = &run.threads[i as usize];
                (t.cpu_ns_last.unwrap_or(0) - t.cpu_ns_first.unwrap_or(0)) as f64
            })
            .sum::<f64>()
            / 1e9;
        eprintln!(
            "spinners on CPython {}: {both} of {with_both} samples with both threads computing; {one_holds} of {running} with both running mark one as the GIL's holder, {two_hold} both; {cpu:.2} s CPU in {:.2} s",
            py.label, run.meta.duration_s
        );
        if !py.has_gil() {
            assert!(both >= 10 && both * 4 >= with_both, "{}: two CPU-bound threads without a GIL computed together in only {both} of {with_both} samples", py.label);
        } else {
            let gil_waits = run.samples.iter().flat_map(|s| &s.threads).filter(|t| ids.contains_key(&t.thread) && t.state == ThreadState::Gil).count();
            assert!(gil_waits > 0, "{}: with a GIL, one spinner waits for it while the other runs", py.label);
            // One thread holds a GIL at a time, and while both spin one of them nearly always
            // does (it is let go only to be handed over): the holder read at each tick says so.
            assert!(
                two_hold == 0 && running >= 20 && one_holds * 10 >= running * 8,
                "{}: while both spinners ran, {one_holds} of {running} samples marked one of them as the GIL's holder and {two_hold} both",
                py.label
            );
        }
    }
}

/// An interpreter whose layout cannot be read: a program that carries a `_PyRuntime` with the
/// debug-offsets cookie of a free-threaded CPython 3.16 (built here with `cc`: no such
/// interpreter exists yet), so the real attach path finds and refuses it. One sentence that
/// names the version and what is supported, at once rather than after the start-up timeout.
#[test]
fn an_unreadable_free_threaded_version_is_named_in_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("fake.c");
    std::fs::write(
        &src,
        r#"#include <stdint.h>
#include <unistd.h>
struct layout { char cookie[8]; uint64_t version; uint64_t free_threaded; uint64_t rest[69]; };
__attribute__((used, visibility("default")))
struct layout _PyRuntime = { {'x','d','e','b','u','g','p','y'}, 0x031000f0, 1, {0} };
int main(void) { sleep(10); return 0; }
"#,
    )
    .unwrap();
    let exe = dir.path().join("python3.16t");
    match Command::new("cc").args(["-O0", "-rdynamic", "-o"]).arg(&exe).arg(&src).status() {
        Ok(s) if s.success() => {}
        other => {
            assert!(std::env::var("THREADRADAR_REQUIRE_PYTHONS").is_err(), "cc is required here: {other:?}");
            skip("cc", &format!("no C compiler to build the stand-in interpreter ({other:?})"));
            return;
        }
    }
    let began = std::time::Instant::now();
    let o = threadradar(dir.path(), &["record", "--no-progress", "-o", "never.json", "--", exe.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("CPython 3.16.0t") && err.contains("free-threaded 3.13t–3.15t") && err.contains("3.3–3.15"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(began.elapsed() < std::time::Duration::from_secs(4), "refused at once, not after the start-up timeout");
    assert!(!dir.path().join("never.json").exists());
}

/// The sid chroot of tests/pythons.sh, when it is there.
fn sid_root() -> Option<PathBuf> {
    let root = std::env::var_os("THREADRADAR_SID").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/threadradar/sid"));
    let ok = root.join("usr/bin/python3.14").exists();
    if !ok {
        assert!(std::env::var("THREADRADAR_REQUIRE_PYTHONS").is_err(), "the sid chroot is required here but {} has no python3.14 (run `bash tests/pythons.sh 3.14`)", root.display());
        skip("python", &format!("no sid chroot at {} (run `bash tests/pythons.sh 3.14`)", root.display()));
    }
    ok.then_some(root)
}

/// A program in a chroot, as a container runs one: its paths (`/w…/app.py`) name files under its
/// root. Launched, its functions map to their own lines and its file is fingerprinted (read
/// through its root, not at the host's `/w…`, which does not exist); attached to, the run records
/// its working directory as the program sees it, not the recorder's.
#[test]
fn a_chrooted_program_maps_to_its_lines_and_keeps_its_working_directory() {
    let Some(root) = sid_root() else { return };
    let _g = serial();
    let name = format!("w-threadradar-{}", std::process::id());
    let inside = root.join(&name);
    std::fs::create_dir_all(&inside).unwrap();
    struct Cleanup(PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _cleanup = Cleanup(inside.clone());
    let app = "import threading, time\n\n\nclass Spinner(threading.Thread):\n    def run(self):\n        end = time.time() + float(__import__('sys').argv[1])\n        while time.time() < end:\n            sum(range(1000))\n\n\ndef main():\n    t = Spinner(name='spinner')\n    t.start()\n    t.join()\n\n\nmain()\n";
    std::fs::write(inside.join("app.py"), app).unwrap();
    assert!(!Path::new(&format!("/{name}/app.py")).exists(), "the program's path must not exist outside its root");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chroot.json");
    let sh = format!("cd /{name} && exec python3.14 app.py 1.0");
    let o = threadradar(dir.path(), &["record", "--no-progress", "-o", out.to_str().unwrap(), "--", "chroot", root.to_str().unwrap(), "/bin/sh", "-c", &sh]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out);
    let path = format!("/{name}/app.py");
    let file = run.files.iter().position(|f| run.str(f.path) == path).unwrap_or_else(|| panic!("no {path} in {:?}", run.files.iter().map(|f| run.str(f.path)).collect::<Vec<_>>()));
    assert!(run.files[file].sha256.is_some(), "{path} is fingerprinted through the program's root");
    let def_line = |q: &str| run.functions.iter().find(|f| f.file as usize == file && run.str(f.qualname) == q).map(|f| f.line);
    assert_eq!(def_line("Spinner.run"), Some(5), "Spinner.run maps to its def line");
    assert_eq!(def_line("main"), Some(11));
    let p = &run.processes[0];
    assert_eq!(p.root.as_deref(), Some(root.to_str().unwrap()), "the run says where the program's / was");
    assert_eq!(p.reader.as_deref(), Some("threadradar: _Py_DebugOffsets"));
    let info = threadradar(dir.path(), &["info", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains("by threadradar: _Py_DebugOffsets") && text.contains(&format!("its / is {}", root.display())), "{text}");

    // Attached: the working directory is the program's own, in its own view.
    let mut child = Command::new("chroot").arg(&root).args(["/bin/sh", "-c", &format!("cd /{name} && exec python3.14 app.py 3.0")]).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    let out2 = dir.path().join("attached.json");
    let o = threadradar(dir.path(), &["record", "--no-progress", "--pid", &child.id().to_string(), "--duration", "0.5", "-o", out2.to_str().unwrap()]);
    let _ = child.kill();
    let _ = child.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read(&out2);
    assert_eq!(run.meta.cwd, format!("/{name}"), "the attached program's working directory, as it sees it");
    assert!(run.functions.iter().any(|f| run.str(f.qualname) == "Spinner.run" && f.line == 5), "attached, its functions map to their lines too");
}
