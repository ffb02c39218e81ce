//! ThreadRadar's own stack reader against py-spy's bindings, on the same live CPython 3.11 and
//! 3.12 processes: for threads that sit still (blocked in known functions), the two readers must
//! report the same threads (Python id, native id, name) and the same frames (function, file,
//! line). The 3.11/3.12 layouts are built into `cpython::offsets` from the headers; a wrong offset
//! shows here as a missing thread, a garbled name or a wrong line.
//!
//! The interpreters are pyenv's (`/root/.pyenv/versions/3.11.*`, `3.12.*`, or `$PYENV_ROOT`); one
//! that is missing is skipped with a printed reason, unless `THREADRADAR_REQUIRE_PYTHONS=1`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use threadradar_profiler::cpython::{Found, Interpreter};

const PROGRAM: &str = r#"
import threading, time, sys

class Waiter(threading.Thread):
    def __init__(self, name, gate):
        super().__init__(name=name, daemon=True)
        self.gate = gate

    def run(self):
        self.outer()

    def outer(self):
        self.inner()

    def inner(self):
        marker = "waiting"
        lock = threading.Lock()
        with lock:
            self.gate.wait()

def sleeper():
    time.sleep(600)

gate = threading.Event()
names = ["plain", "wörker-é", "线程-7", "emoji-\U0001F600", "x" * 200]
threads = [Waiter(n, gate) for n in names]
threads.append(threading.Thread(target=sleeper, name="sleeper", daemon=True))
for t in threads:
    t.start()
time.sleep(0.3)
print("ready", flush=True)
gate.wait()
"#;

fn pyenv_root() -> PathBuf {
    std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root/.pyenv"))
}

/// The newest installed `3.<minor>.*` under pyenv.
fn interpreter(minor: u32) -> Option<PathBuf> {
    let prefix = format!("3.{minor}.");
    let mut found: Vec<PathBuf> = std::fs::read_dir(pyenv_root().join("versions"))
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path().join("bin").join(format!("python3.{minor}")))
        .filter(|p| p.exists())
        .collect();
    found.sort();
    found.pop()
}

struct Target(Child);

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(python: &PathBuf) -> Target {
    let mut child = Command::new(python)
        .args(["-c", PROGRAM])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("starting python");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready", "{} did not start", python.display());
    Target(child)
}

type Frames = Vec<(String, String, i32)>;

fn by_thread(
    traces: &[py_spy::StackTrace],
) -> BTreeMap<u64, (Option<String>, Option<u64>, Frames)> {
    traces
        .iter()
        .filter(|t| t.thread_id != 0)
        .map(|t| {
            (
                t.thread_id,
                (
                    t.thread_name.clone(),
                    t.os_thread_id,
                    t.frames
                        .iter()
                        .map(|f| (f.name.clone(), f.filename.clone(), f.line))
                        .collect(),
                ),
            )
        })
        .collect()
}

fn compare(minor: u32) {
    let required = std::env::var("THREADRADAR_REQUIRE_PYTHONS").is_ok_and(|v| v == "1");
    let Some(python) = interpreter(minor) else {
        assert!(
            !required,
            "CPython 3.{minor} is required here but pyenv has none under {}",
            pyenv_root().display()
        );
        eprintln!(
            "skipping CPython 3.{minor}: not installed under {}",
            pyenv_root().display()
        );
        return;
    };
    let target = start(&python);
    let pid = target.0.id();
    let mut ours = match Interpreter::find(pid).expect("attaching our reader") {
        Found::Interpreter(i) => i,
        Found::NotHere => panic!(
            "CPython 3.{minor} ({}) was left to py-spy: the built-in layout does not fit",
            python.display()
        ),
    };
    assert!(
        ours.version().starts_with(&format!("3.{minor}.")),
        "version {}",
        ours.version()
    );
    let config = py_spy::Config {
        blocking: py_spy::config::LockingStrategy::NonBlocking,
        collect_thread_names: true,
        include_idle: true,
        ..py_spy::Config::default()
    };
    let mut spy = py_spy::PythonSpy::new(pid as py_spy::Pid, &config).expect("attaching py-spy");
    // The threads sit still; two readings a moment apart must agree (a thread between two
    // instructions of its wait could differ once: retry a few times before failing).
    let mut last = None;
    for _ in 0..5 {
        let a = by_thread(&ours.stack_traces(false).unwrap());
        let b = by_thread(&spy.get_stack_traces().unwrap());
        if a == b {
            assert_eq!(a.len(), 7, "main and six threads: {a:#?}");
            let names: Vec<String> = a.values().filter_map(|(n, _, _)| n.clone()).collect();
            for want in [
                "MainThread",
                "plain",
                "wörker-é",
                "线程-7",
                "emoji-\u{1F600}",
                &"x".repeat(200),
                "sleeper",
            ] {
                assert!(
                    names.iter().any(|n| n == want),
                    "thread {want:?} missing from {names:?}"
                );
            }
            let waiter = a
                .values()
                .find(|(n, _, _)| n.as_deref() == Some("plain"))
                .unwrap();
            let funcs: Vec<&str> = waiter.2.iter().map(|f| f.0.as_str()).collect();
            assert!(
                funcs
                    .windows(3)
                    .any(|w| w == ["Waiter.inner", "Waiter.outer", "Waiter.run"]),
                "{funcs:?}"
            );
            // Arguments (how the sampler learns a thread's class) come out as `<Type at 0x…>`.
            let with_args = ours.stack_traces(true).unwrap();
            let run = with_args
                .iter()
                .flat_map(|t| &t.frames)
                .find(|f| f.name == "Waiter.run")
                .expect("Waiter.run with arguments");
            let this = run
                .locals
                .as_ref()
                .and_then(|l| l.iter().find(|v| v.name == "self"))
                .and_then(|v| v.repr.clone());
            assert!(
                this.as_deref()
                    .is_some_and(|r| r.starts_with("<Waiter at 0x")),
                "self of Waiter.run: {this:?}"
            );
            // Locals too (the waits reader names a C-level `with lock:` by its local), as py-spy
            // reads them.
            let inner = with_args.iter().flat_map(|t| &t.frames).find(|f| f.name == "Waiter.inner").expect("Waiter.inner with locals");
            let ours_locals: Vec<(String, bool, Option<String>)> =
                inner.locals.iter().flatten().map(|l| (l.name.clone(), l.arg, l.repr.as_ref().map(|r| r.split(" at ").next().unwrap_or("").to_string()))).collect();
            assert!(ours_locals.iter().any(|(n, arg, r)| n == "lock" && !arg && r.as_deref() == Some("<_thread.lock")), "{ours_locals:?}");
            assert!(ours_locals.iter().any(|(n, arg, r)| n == "marker" && !arg && r.as_deref() == Some("<str")), "{ours_locals:?}");
            spy.config.dump_locals = 1;
            let theirs = spy.get_stack_traces().unwrap();
            spy.config.dump_locals = 0;
            let theirs_inner = theirs.iter().flat_map(|t| &t.frames).find(|f| f.name == "Waiter.inner").expect("py-spy's Waiter.inner");
            let ours_names: Vec<(String, bool)> = ours_locals.iter().map(|(n, a, _)| (n.clone(), *a)).collect();
            let theirs_names: Vec<(String, bool)> = theirs_inner.locals.iter().flatten().map(|l| (l.name.clone(), l.arg)).collect();
            assert_eq!(ours_names, theirs_names, "Waiter.inner's locals (name, is an argument)");
            eprintln!(
                "CPython 3.{minor}: both readers agree on {} threads, {} frames",
                a.len(),
                a.values().map(|t| t.2.len()).sum::<usize>()
            );
            return;
        }
        last = Some((a, b));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (a, b) = last.unwrap();
    panic!("CPython 3.{minor}: our reader and py-spy's disagree\nours:   {a:#?}\npy-spy: {b:#?}");
}

#[test]
fn cpython_3_11_reads_as_py_spy_reads_it() {
    compare(11);
}

#[test]
fn cpython_3_12_reads_as_py_spy_reads_it() {
    compare(12);
}

/// The built-in offsets are the ones the compiler computes from the headers of every 3.11 and
/// 3.12 installed here (`profiler/tests/offsets.c`).
#[test]
fn built_in_offsets_are_the_headers_offsets() {
    use threadradar_profiler::cpython::offsets::{DebugOffsets, GilAt};
    let required = std::env::var("THREADRADAR_REQUIRE_PYTHONS").is_ok_and(|v| v == "1");
    let dir = tempfile::tempdir().unwrap();
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/offsets.c");
    let mut checked = 0;
    let Ok(versions) = std::fs::read_dir(pyenv_root().join("versions")) else {
        assert!(
            !required,
            "no pyenv versions under {}",
            pyenv_root().display()
        );
        return;
    };
    for entry in versions.filter_map(|e| e.ok()) {
        let version = entry.file_name().to_string_lossy().to_string();
        let parts: Vec<u64> = version.split('.').filter_map(|p| p.parse().ok()).collect();
        let [3, minor @ (11 | 12), micro] = parts[..] else {
            continue;
        };
        let include = entry.path().join(format!("include/python3.{minor}"));
        if !include.join("internal/pycore_frame.h").exists() {
            continue;
        }
        let exe = dir.path().join(format!("offsets-{version}"));
        let cc = Command::new("cc")
            .arg(format!("-I{}", include.display()))
            .arg("-o")
            .arg(&exe)
            .arg(&source)
            .output();
        let cc = match cc {
            Ok(o) => o,
            Err(e) => {
                assert!(!required, "cc is required here: {e}");
                eprintln!("skipping the header check: no cc ({e})");
                return;
            }
        };
        assert!(
            cc.status.success(),
            "compiling offsets.c against {version}: {}",
            String::from_utf8_lossy(&cc.stderr)
        );
        let out = Command::new(&exe).output().unwrap();
        let headers: BTreeMap<String, u64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
            .collect();
        let o = DebugOffsets::built_in(3, minor, micro).expect("a built-in layout");
        let h = |k: &str| *headers.get(k).unwrap_or_else(|| panic!("{k} not printed"));
        let (holder, locked) = match o.gil_at {
            GilAt::Runtime => (
                o.interp_gil_holder - h("gil_struct_in_runtime"),
                o.interp_gil_locked - h("gil_struct_in_runtime"),
            ),
            GilAt::InterpreterPointer(at) => {
                assert_eq!(
                    at,
                    h("gil_pointer_in_interp"),
                    "{version}: interp->ceval.gil"
                );
                (o.interp_gil_holder, o.interp_gil_locked)
            }
            GilAt::Interpreter => panic!("{version}: 3.11/3.12 keep the GIL elsewhere"),
        };
        let ours: [(&str, u64); 40] = [
            ("gil_last_holder", holder),
            ("gil_locked", locked),
            ("runtime_interpreters_head", o.runtime_interpreters_head),
            ("interp_next", o.interp_next),
            ("interp_threads_head", o.interp_threads_head),
            ("interp_imports_modules", o.interp_imports_modules),
            ("tstate_next", o.tstate_next),
            ("tstate_cframe", o.tstate_cframe.unwrap()),
            ("tstate_current_frame", o.tstate_current_frame),
            ("tstate_thread_id", o.tstate_thread_id),
            ("tstate_native_thread_id", o.tstate_native_thread_id),
            ("frame_previous", o.frame_previous),
            ("frame_executable", o.frame_executable),
            ("frame_instr_ptr", o.frame_instr_ptr),
            ("frame_localsplus", o.frame_localsplus),
            ("frame_owner", o.frame_owner),
            ("code_filename", o.code_filename),
            ("code_qualname", o.code_qualname),
            ("code_linetable", o.code_linetable),
            ("code_firstlineno", o.code_firstlineno),
            ("code_argcount", o.code_argcount),
            ("code_localsplusnames", o.code_localsplusnames),
            ("code_adaptive", o.code_adaptive),
            ("object_size", o.object_size),
            ("object_type", o.object_type),
            ("type_size", o.type_size),
            ("type_name", o.type_name),
            ("type_flags", o.type_flags),
            ("tuple_items", o.tuple_items),
            ("tuple_size", o.tuple_size),
            ("dict_keys", o.dict_keys),
            ("dict_values", o.dict_values),
            ("long_tag", o.long_tag),
            ("long_digits", o.long_digits),
            ("bytes_size", o.bytes_size),
            ("bytes_data", o.bytes_data),
            ("unicode_size", o.unicode_size),
            ("unicode_state", o.unicode_state),
            ("unicode_length", o.unicode_length),
            ("unicode_ascii_size", o.unicode_ascii_size),
        ];
        for (k, v) in ours {
            assert_eq!(v, h(k), "CPython {version}: {k}");
        }
        assert_eq!(
            o.unicode_compact_size,
            h("unicode_compact_size"),
            "CPython {version}: unicode_compact_size"
        );
        // objects.rs walks from the end of PyTypeObject to ht_cached_keys, and from a keys
        // object's header to its indices, with fixed distances.
        assert_eq!(
            h("heap_type_cached_keys") - h("type_size"),
            464,
            "CPython {version}: PyHeapTypeObject"
        );
        assert_eq!(
            h("dict_keys_indices"),
            32,
            "CPython {version}: PyDictKeysObject"
        );
        eprintln!(
            "CPython {version}: {} built-in offsets match its headers",
            ours.len() + 1
        );
        checked += 1;
    }
    assert!(
        checked > 0 || !required,
        "no CPython 3.11 or 3.12 headers found under {}",
        pyenv_root().display()
    );
}
