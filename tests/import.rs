//! `threadradar import`: fixtures produced here by the real tools (py-spy 0.4.3, austin 3.7.0,
//! perf 6.1 on CPython 3.12 with `-X perf`, CPython 3.15's `profiling.sampling`; see
//! tests/fixtures/formats/make_fixtures.sh) become
//! runs with the threads and per-thread sample counts the files hold (counted here from the
//! files' own text, independently of the importer), mapped to the fixture program's source, and
//! bad input gets one sentence.

mod common;

use common::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use threadradar_profiler::run::{Run, ThreadState, TypeSource};

fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures/formats").join(name)
}

/// Imports `file` with the fixture folder as the source root; returns the run.
fn import(dir: &Path, file: &Path, extra: &[&str]) -> Run {
    let out = dir.join(format!("{}.run.json", file.file_name().unwrap().to_string_lossy()));
    let src = fixture("");
    let mut args = vec!["import", file.to_str().unwrap(), "-o", out.to_str().unwrap(), "--source-root", src.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = threadradar(dir, &args);
    assert!(o.status.success(), "import {}: {}", file.display(), stderr(&o));
    read(&out)
}

fn counts_by_tid(run: &Run) -> HashMap<u32, u64> {
    let mut m = HashMap::new();
    for s in &run.samples {
        for t in &s.threads {
            *m.entry(run.threads[t.thread as usize].tid).or_insert(0) += 1;
        }
    }
    m
}

fn thread(run: &Run, tid: u32) -> &threadradar_profiler::run::Thread {
    run.threads.iter().find(|t| t.tid == tid).unwrap()
}

/// The fixture program's functions are mapped to its source: `Cruncher.run` is a method of
/// class `Cruncher` at its `def` line, with the file's sha256.
fn assert_mapped_to_source(run: &Run) {
    let program = std::fs::canonicalize(fixture("fixture_program.py")).unwrap();
    let f = run
        .functions
        .iter()
        .find(|f| run.str(f.qualname) == "Cruncher.run")
        .unwrap_or_else(|| panic!("no Cruncher.run in {:?}", run.functions.iter().map(|f| run.str(f.qualname)).collect::<Vec<_>>()));
    assert_eq!(run.file_path(f.file), program.to_str().unwrap());
    assert_eq!(f.class.map(|c| run.str(c)), Some("Cruncher"));
    assert_eq!(f.line, 13, "the def line of Cruncher.run in fixture_program.py");
    let sha = threadradar_profiler::source::sha256_hex(&std::fs::read(&program).unwrap());
    assert_eq!(run.files[f.file as usize].sha256.as_deref(), Some(sha.as_str()));
}

#[test]
fn py_spy_raw_keeps_threads_names_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("pyspy.raw");
    let run = import(dir.path(), &file, &[]);
    // Truth from the file: `thread (tid): name;…;frames count`.
    let mut want: HashMap<u32, u64> = HashMap::new();
    let mut names: HashMap<u32, String> = HashMap::new();
    for line in std::fs::read_to_string(&file).unwrap().lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        let root = stack.split(';').next().unwrap();
        // py-spy leaves the name out when it could not read it at that sample.
        let (id, name) = root.trim_start_matches("thread (").split_once(')').unwrap();
        *want.entry(id.parse().unwrap()).or_insert(0) += n.parse::<u64>().unwrap();
        if let Some(name) = name.strip_prefix(": ") {
            names.insert(id.parse().unwrap(), name.to_string());
        }
    }
    assert_eq!(counts_by_tid(&run), want);
    for (tid, name) in &names {
        assert_eq!(&thread(&run, *tid).name, name);
    }
    let cruncher = run.threads.iter().find(|t| t.name == "cruncher").unwrap();
    assert_eq!((cruncher.thread_type.as_str(), cruncher.type_source), ("Cruncher", TypeSource::EntryPoint));
    assert_eq!(run.threads.iter().find(|t| t.name == "napper").unwrap().thread_type, "Thread");
    assert_eq!(run.threads.iter().find(|t| t.name == "MainThread").unwrap().thread_type, "_MainThread");
    assert_mapped_to_source(&run);
    let note = &run.meta.imported.as_ref().unwrap().note;
    assert!(note.contains("thread states") && note.contains("sample times"), "{note}");
    // `info` says where it came from.
    let o = threadradar(dir.path(), &["info", dir.path().join("pyspy.raw.run.json").to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("imported     from"), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn py_spy_speedscope_keeps_times_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("pyspy.speedscope.json");
    let run = import(dir.path(), &file, &[]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let mut want = HashMap::new();
    for p in v["profiles"].as_array().unwrap() {
        let tid: u32 = p["name"].as_str().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        want.insert(tid, p["samples"].as_array().unwrap().len() as u64);
    }
    assert_eq!(counts_by_tid(&run), want);
    assert!(run.threads.iter().any(|t| t.name == "cruncher"), "named threads keep their names");
    assert_mapped_to_source(&run);
    // Times come from the weights (py-spy: 0.01 s each): the last tick is near the profile's end.
    let end = v["profiles"].as_array().unwrap().iter().map(|p| p["endValue"].as_f64().unwrap()).fold(0.0, f64::max);
    let last = run.samples.last().unwrap().t as f64 / 1e9;
    assert!((last - end).abs() < 0.05, "last sample at {last} s, profile ends at {end} s");
}

#[test]
fn austin_text_keeps_threads_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("austin.txt");
    let run = import(dir.path(), &file, &[]);
    let mut want: HashMap<u32, u64> = HashMap::new();
    for line in std::fs::read_to_string(&file).unwrap().lines().filter(|l| l.starts_with('P')) {
        let t = line.split(';').nth(1).unwrap();
        let tid: u32 = t.rsplit(':').next().unwrap().split(' ').next().unwrap().parse().unwrap();
        *want.entry(tid).or_insert(0) += 1;
    }
    assert_eq!(counts_by_tid(&run), want);
    assert_eq!(want.len(), 3);
    assert!(run.threads.iter().any(|t| t.thread_type == "Cruncher"), "types from entry points");
    assert_mapped_to_source(&run);
    assert!(run.meta.imported.as_ref().unwrap().format.starts_with("austin 3.7"));
}

#[test]
fn perf_script_of_python_312_keeps_python_frames() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("perf-python312.txt");
    let run = import(dir.path(), &file, &[]);
    let text = std::fs::read_to_string(&file).unwrap();
    let mut want: HashMap<u32, u64> = HashMap::new();
    for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with(char::is_whitespace)) {
        *want.entry(line.split_whitespace().nth(1).unwrap().parse().unwrap()).or_insert(0) += 1;
    }
    assert_eq!(counts_by_tid(&run), want);
    // `py::spin:/…/fixture_program.py` frames become the fixture's `spin`, found by name.
    let spin = run.functions.iter().find(|f| run.str(f.qualname) == "spin").expect("spin was sampled");
    assert_eq!(spin.line, 4, "found in the source by its qualified name");
    assert!(run.meta.imported.as_ref().unwrap().note.contains("line numbers"));
    // perf's default output has no pids: the lowest tid stands in for the process, but no
    // thread is made the main one for it (a main thread that never ran would not be sampled).
    assert!(run.threads.iter().all(|t| !t.is_main), "{:?}", run.threads.iter().map(|t| (t.tid, &t.thread_type)).collect::<Vec<_>>());
    assert!(run.meta.imported.as_ref().unwrap().unknown.iter().any(|k| k == "main_thread"));
}

#[test]
fn cpython_and_flamegraph_collapsed_stacks() {
    // CPython 3.15's `profiling.sampling --collapsed` writes `tid:N;file:func:line;… count`
    // (written here by hand: no 3.15 interpreter is installed), and plain flamegraph input has
    // neither threads nor files.
    let dir = tempfile::tempdir().unwrap();
    let cpy = dir.path().join("cpython.collapsed");
    std::fs::write(&cpy, "tid:101;fixture_program.py:<module>:21;fixture_program.py:spin:9 5\ntid:102;threading.py:Thread._bootstrap:1002;threading.py:Thread._bootstrap_inner:1045;fixture_program.py:Cruncher.run:14;fixture_program.py:spin:9 7\n").unwrap();
    let run = import(dir.path(), &cpy, &[]);
    assert_eq!(counts_by_tid(&run), HashMap::from([(101, 5), (102, 7)]));
    assert_eq!(thread(&run, 102).thread_type, "Cruncher");
    assert!(run.meta.imported.as_ref().unwrap().format.contains("CPython"));
    assert_mapped_to_source(&run);
    let plain = dir.path().join("plain.folded");
    std::fs::write(&plain, "main;work;inner 3\nmain;idle 2\n").unwrap();
    let run = import(dir.path(), &plain, &[]);
    assert_eq!(run.threads.len(), 1);
    assert_eq!(run.threads[0].name, "all threads");
    assert_eq!(run.samples.len(), 5);
    assert!(run.meta.imported.as_ref().unwrap().note.contains("threads"));
}

#[test]
fn cpython_gecko_output_keeps_tids_and_counts() {
    // CPython 3.15's `profiling.sampling --gecko` writes the Firefox Profiler's processed format
    // (version 57): strings in `shared.stringArray`, per-thread tables, times in ms, threads named
    // `Thread-<tid>`, file names without their directory (written here by hand in the shape of its
    // writer, Lib/profiling/sampling/gecko_collector.py: no 3.15 interpreter is installed).
    let dir = tempfile::tempdir().unwrap();
    let gecko = dir.path().join("cpython.gecko.json");
    let gecko_thread = |tid: u32, stacks: &str, samples: &str, times: &str| {
        format!(
            r#"{{"name":"Thread-{tid}","isMainThread":{},"pid":"4242","tid":{tid},"processType":"default","processName":"Python Process",
            "samples":{{"stack":[{samples}],"time":[{times}],"eventDelay":[],"weight":null,"weightType":"samples","length":0}},
            "stackTable":{stacks},
            "frameTable":{{"address":[-1,-1,-1,-1],"category":[1,1,1,1],"subcategory":[0,0,0,0],"func":[0,1,2,3],"innerWindowID":[null,null,null,null],"implementation":[null,null,null,null],"optimizations":[null,null,null,null],"line":[21,9,14,1045],"column":[null,null,null,null],"inlineDepth":[0,0,0,0],"nativeSymbol":[null,null,null,null],"length":4}},
            "funcTable":{{"name":[1,2,3,5],"isJS":[true,true,true,true],"relevantForJS":[true,true,true,true],"resource":[0,0,0,1],"fileName":[4,4,4,6],"lineNumber":[21,9,14,1045],"columnNumber":[null,null,null,null],"length":4}},
            "resourceTable":{{"lib":[null,null],"name":[4,6],"host":[null,null],"type":[1,1],"length":2}},
            "nativeSymbols":{{"libIndex":[],"address":[],"name":[],"functionSize":[],"length":0}},
            "markers":{{"data":[],"name":[],"startTime":[],"endTime":[],"phase":[],"category":[],"length":0}}}}"#,
            tid == 101
        )
    };
    // Thread 101: <module> → spin, 3 samples; thread 102: _bootstrap_inner → Cruncher.run → spin, 4 samples.
    let main = gecko_thread(101, r#"{"frame":[0,1],"category":[1,1],"subcategory":[0,0],"prefix":[null,0],"length":2}"#, "1,1,1", "0.0,1.0,2.0");
    let worker = gecko_thread(102, r#"{"frame":[3,2,1],"category":[1,1,1],"subcategory":[0,0,0],"prefix":[null,0,1],"length":3}"#, "2,2,2,2", "0.5,1.5,2.5,3.5");
    let file = format!(
        r#"{{"meta":{{"interval":1.0,"startTime":123456.7,"categories":[{{"name":"Other","color":"grey","subcategories":["Other"]}},{{"name":"Python","color":"yellow","subcategories":["Other"]}}],"version":32,"preprocessedProfileVersion":57,"product":"Python","symbolicated":true,"markerSchema":[],"importedFrom":"Tachyon Sampling Profiler"}},
        "libs":[],"threads":[{main},{worker}],"pages":[],
        "shared":{{"stringArray":["(root)","<module>","spin","Cruncher.run","fixture_program.py","Thread._bootstrap_inner","threading.py"],"sources":{{"length":0,"uuid":[],"filename":[]}}}}}}"#
    );
    std::fs::write(&gecko, file).unwrap();
    let run = import(dir.path(), &gecko, &[]);
    assert_eq!(counts_by_tid(&run), HashMap::from([(101, 3), (102, 4)]));
    assert_eq!(thread(&run, 102).name, "thread 102", "CPython's Thread-<tid> is no thread name");
    assert_eq!(thread(&run, 102).thread_type, "Cruncher");
    let imported = run.meta.imported.as_ref().unwrap();
    assert!(imported.format.contains("CPython") && imported.note.contains("thread names"), "{imported:?}");
    // Times are kept: thread 102's samples lie 1 ms apart, half a millisecond after thread 101's.
    let times: Vec<u64> = run.samples.iter().filter(|s| s.threads.iter().any(|t| run.threads[t.thread as usize].tid == 102)).map(|s| s.t).collect();
    assert_eq!(times, [500_000, 1_500_000, 2_500_000, 3_500_000]);
    assert_mapped_to_source(&run);
}

#[test]
fn imported_runs_get_radars_in_report() {
    // An imported run is a run: `report` computes its metrics and clusters.
    let dir = tempfile::tempdir().unwrap();
    import(dir.path(), &fixture("austin.txt"), &[]);
    let o = threadradar(dir.path(), &["report", dir.path().join("austin.txt.run.json").to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.to_string().contains("Cruncher.run"));
}

#[test]
fn bad_input_gets_one_sentence_naming_the_format_and_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let run_import = |name: &str, content: &[u8], extra: &[&str]| -> String {
        let f = dir.path().join(name);
        std::fs::write(&f, content).unwrap();
        let mut args = vec!["import", f.to_str().unwrap(), "-o", "out.json"];
        args.extend_from_slice(extra);
        let o = threadradar(dir.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{name} must fail");
        let e = stderr(&o);
        assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
        assert!(!dir.path().join("out.json").exists());
        e
    };
    // Truncated speedscope: format and position.
    let ss = std::fs::read(fixture("pyspy.speedscope.json")).unwrap();
    let e = run_import("cut.speedscope.json", &ss[..ss.len() / 2], &[]);
    assert!(e.contains("truncated") && e.contains("speedscope") && e.contains("line 1 column"), "{e}");
    // A foreign file.
    let e = run_import("photo.png", b"\x89PNG\r\n\x1a\n\x00\x00binary", &[]);
    assert!(e.contains("cannot tell which profiler") && e.contains("--format"), "{e}");
    // A foreign file forced into a format: where parsing stopped.
    let e = run_import("notes.txt", b"thread (1): a;f (a.py:1) 3\nthis is not a stack\n", &["--format", "collapsed"]);
    assert!(e.contains("collapsed stacks") && e.contains("line 2"), "{e}");
    let e = run_import("bad.austin", b"# austin: 3.7.0\nP1;T0:1;a.py:f:1 12\nP1;oops 5\n", &[]);
    assert!(e.contains("is not an austin file") && e.contains("line 3"), "{e}");
    let e = run_import("bad.perf", b"python3 12 100.5: 1 cpu-clock:\n\tffff py::f:/a.py+0x1 (/tmp/perf-1.map)\n\nnot a header\n", &[]);
    assert!(e.contains("perf script") && e.contains("line 4"), "{e}");
    // Line-oriented files cut while written or copied: the last line has no line break (every
    // profiler ends its lines with one), or perf's last sample has no blank line after its call
    // chain. The sentence names the line.
    let cut_mid_line = |bytes: &[u8]| -> (Vec<u8>, usize) {
        // Cut in the middle of the last line that is neither blank nor a comment, unless it is
        // the file's last line (then the one before it that qualifies).
        let text = std::str::from_utf8(bytes).unwrap();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let i = (0..lines.len() - 1).rev().find(|&i| lines[i].trim().len() > 10 && !lines[i].starts_with('#')).unwrap();
        let start: usize = lines[..i].iter().map(|l| l.len()).sum();
        (bytes[..start + lines[i].trim_end().len() / 2].to_vec(), i + 1)
    };
    let (cut, line) = cut_mid_line(&std::fs::read(fixture("pyspy.raw")).unwrap());
    let e = run_import("cut.raw", &cut, &[]);
    assert!(e.contains("is truncated") && e.contains("collapsed stacks") && e.contains(&format!("line {line}, which has no line break")), "{e}");
    let (cut, line) = cut_mid_line(&std::fs::read(fixture("austin.txt")).unwrap());
    let e = run_import("cut.austin", &cut, &[]);
    assert!(e.contains("is truncated") && e.contains("austin") && e.contains(&format!("line {line},")), "{e}");
    let e = run_import("cut.folded", b"thread (1): a;f (a.py:1) 3\nthread (1): \xc3", &[]);
    assert!(e.contains("is truncated") && e.contains("line 2, which ends in the middle of a character"), "{e}");
    let perf = std::fs::read(fixture("perf-python312.txt")).unwrap();
    let (cut, line) = cut_mid_line(&perf);
    let e = run_import("cut.perf", &cut, &[]);
    assert!(e.contains("is truncated") && e.contains("perf script") && e.contains(&format!("line {line},")), "{e}");
    // Whole lines, but the last sample's call chain has no blank line after it (34 samples in
    // the file; the last one is incomplete, and not silently dropped or kept).
    let text = std::str::from_utf8(&perf).unwrap();
    let body = text.trim_end_matches('\n');
    let cut = &body[..body.rfind('\n').unwrap() + 1];
    let header = cut.lines().enumerate().filter(|(_, l)| !l.is_empty() && !l.starts_with(char::is_whitespace) && !l.starts_with('#')).last().unwrap().0 + 1;
    let e = run_import("cut2.perf", cut.as_bytes(), &[]);
    assert!(e.contains("is truncated") && e.contains(&format!("in the sample from line {header}, which has no blank line")), "{e}");
    // Empty files and files without samples.
    let e = run_import("empty.txt", b"", &[]);
    assert!(e.contains("is empty"), "{e}");
    let e = run_import("nothing.speedscope.json", br#"{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[]},"profiles":[]}"#, &[]);
    assert!(e.contains("no samples"), "{e}");
    // Firefox Profiler files: truncated, raw (unprocessed) Gecko, a stack that does not exist.
    let e = run_import("cut.firefox.json", br#"{"meta":{"preprocessedProfileVersion":55,"interval":1},"threads":[{"name":"a","samples":{"stack":[0"#, &[]);
    assert!(e.contains("truncated") && e.contains("Firefox Profiler") && e.contains("line 1 column"), "{e}");
    let e = run_import("raw.gecko.json", br#"{"meta":{"version":24,"interval":1,"stackTable":1,"frameTable":1},"threads":[{"name":"a","samples":{"schema":{"stack":0,"time":1},"data":[[0,1.0]]}}]}"#, &["--format", "gecko"]);
    assert!(e.contains("raw format") && e.contains("processed"), "{e}");
    let e = run_import("dangling.firefox.json", br#"{"meta":{"preprocessedProfileVersion":55,"interval":1},"threads":[{"name":"a","tid":7,"samples":{"stack":[3],"time":[0.0]},"stackTable":{"frame":[0],"prefix":[null]},"frameTable":{"func":[0]},"funcTable":{"name":[0]},"stringArray":["f"]}]}"#, &[]);
    assert!(e.contains("Firefox Profiler") && e.contains("thread 0 (\"a\") sample 0") && e.contains("stack 3 does not exist"), "{e}");
    let e = run_import("short.firefox.json", br#"{"meta":{"preprocessedProfileVersion":55,"interval":1},"threads":[{"name":"a","tid":7,"samples":{"stack":[0,0],"time":[0.0]},"stackTable":{"frame":[0],"prefix":[null]},"frameTable":{"func":[0]},"funcTable":{"name":[0]},"stringArray":["f"]}]}"#, &[]);
    assert!(e.contains("sample 1") && e.contains("the time column has 1 entries for 2 samples"), "{e}");
    // A ThreadRadar run is not a profile to import.
    let e = run_import("run.json", br#"{"format":"threadradar-run","version":1}"#, &[]);
    assert!(e.contains("cannot tell"), "{e}");
}

/// Per tid: every sample's time and stack as (function, line), outermost first.
fn samples_by_tid(run: &Run) -> HashMap<u32, Vec<(u64, Vec<(String, u32)>)>> {
    let mut m: HashMap<u32, Vec<(u64, Vec<(String, u32)>)>> = HashMap::new();
    for s in &run.samples {
        for t in &s.threads {
            let mut frames = Vec::new();
            let mut next = t.stack;
            while let Some(id) = next {
                let node = &run.stacks[id as usize];
                let fr = &run.frames[node.frame as usize];
                frames.push((run.str(run.functions[fr.function as usize].qualname).to_string(), fr.line));
                next = node.parent;
            }
            frames.reverse();
            m.entry(run.threads[t.thread as usize].tid).or_default().push((s.t, frames));
        }
    }
    m
}

/// Sample lines per tid in austin's text, counted from the text itself.
fn austin_text_counts(file: &Path) -> HashMap<u32, u64> {
    let mut want: HashMap<u32, u64> = HashMap::new();
    for line in std::fs::read_to_string(file).unwrap().lines().filter(|l| l.starts_with('P')) {
        let t = line.split(';').nth(1).unwrap();
        let tid: u32 = t.rsplit(':').next().unwrap().split(' ').next().unwrap().parse().unwrap();
        *want.entry(tid).or_insert(0) += 1;
    }
    want
}

#[test]
fn austin_full_mode_keeps_idle_samples() {
    // `austin -f` flags each sample idle or not (MOJO event 8, the text's `time,idle,memory`); the
    // reference text of the same MOJO file is austin-python's reader keeping the flag
    // (tests/fixtures/formats/mojo2austin_full.py). Idle samples become idle, the others
    // computing (austin does not see the GIL).
    let dir = tempfile::tempdir().unwrap();
    let (mojo, text) = (fixture("austin-full.mojo"), fixture("austin-full-mojo.txt"));
    let run = assert_mojo_reads_as_austin_reads_it(dir.path(), &mojo, &text);
    let mut idle_want: HashMap<u32, u64> = HashMap::new();
    for line in std::fs::read_to_string(&text).unwrap().lines().filter(|l| l.starts_with('P')) {
        let tid: u32 = line.split(';').nth(1).unwrap().rsplit(':').next().unwrap().split(' ').next().unwrap().parse().unwrap();
        let flag = line.rsplit(' ').next().unwrap().split(',').nth(1).unwrap();
        *idle_want.entry(tid).or_insert(0) += (flag == "1") as u64;
    }
    let states = |r: &Run, state: ThreadState| -> HashMap<u32, u64> {
        let mut m: HashMap<u32, u64> = r.threads.iter().map(|t| (t.tid, 0)).collect();
        for s in &r.samples {
            for t in &s.threads {
                if t.state == state {
                    *m.get_mut(&r.threads[t.thread as usize].tid).unwrap() += 1;
                }
            }
        }
        m
    };
    assert_eq!(states(&run, ThreadState::Idle), idle_want, "idle samples per thread, MOJO");
    assert!(idle_want.values().sum::<u64>() > 0 && states(&run, ThreadState::Computing).values().sum::<u64>() > 0);
    assert_eq!(states(&run, ThreadState::Gil).values().sum::<u64>(), 0);
    let from_text = import(dir.path(), &text, &[]);
    assert_eq!(states(&from_text, ThreadState::Idle), idle_want, "idle samples per thread, text");
    for r in [&run, &from_text] {
        let note = &r.meta.imported.as_ref().unwrap().note;
        assert!(note.contains("GIL waits") && !note.contains("every sample counts as computing"), "{note}");
    }
}

/// A MOJO file and austin's own reading of it as text (austin-python's `mojo2austin`) make the
/// same run: same threads, and every sample with the same stack, frame by frame, and duration.
fn assert_mojo_reads_as_austin_reads_it(dir: &Path, mojo: &Path, text: &Path) -> Run {
    let run = import(dir, mojo, &[]);
    let reference = import(dir, text, &[]);
    assert_eq!(counts_by_tid(&run), austin_text_counts(text), "samples per thread as in austin's own reading");
    assert_eq!(samples_by_tid(&run), samples_by_tid(&reference), "the same stacks and durations, sample for sample");
    let format = &run.meta.imported.as_ref().unwrap().format;
    assert!(format.starts_with("austin 3.7") && format.ends_with("(MOJO)"), "{format}");
    run
}

#[test]
fn austin_mojo_is_read_as_austin_itself_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = assert_mojo_reads_as_austin_reads_it(dir.path(), &fixture("austin.mojo"), &fixture("austin-mojo.txt"));
    assert_eq!(run.threads.len(), 3);
    assert!(run.threads.iter().any(|t| t.thread_type == "Cruncher"), "types from entry points");
    assert_mapped_to_source(&run);
    // Named by --format too; a MOJO file cut short, or of a version this build does not read,
    // is one sentence.
    let forced = import(dir.path(), &fixture("austin.mojo"), &["--format", "austin-mojo"]);
    assert_eq!(counts_by_tid(&forced), counts_by_tid(&run));
    let bytes = std::fs::read(fixture("austin.mojo")).unwrap();
    let cut = dir.path().join("cut.mojo");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let o = threadradar(dir.path(), &["import", cut.to_str().unwrap(), "-o", dir.path().join("cut.json").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("is truncated: the austin MOJO file ends in the middle (byte "), "{}", stderr(&o));
    let v9 = dir.path().join("v9.mojo");
    let mut future = b"MOJ\x09".to_vec();
    future.extend_from_slice(&bytes[4..]);
    std::fs::write(&v9, future).unwrap();
    let o = threadradar(dir.path(), &["import", v9.to_str().unwrap(), "-o", dir.path().join("v9.json").to_str().unwrap()]);
    assert!(stderr(&o).contains("is not an austin MOJO file: parsing stopped at byte 3: it is MOJO version 9"), "{}", stderr(&o));
}

/// austin itself, installed by tests/run_all.sh (`THREADRADAR_AUSTIN_BIN`: a venv's bin/ with
/// austin-dist 3.7.0 and austin-python), records the fixture program here in MOJO.
#[test]
fn austin_records_mojo_here_that_imports_as_austin_reads_it() {
    let Ok(bin) = std::env::var("THREADRADAR_AUSTIN_BIN") else {
        skip("austin", "THREADRADAR_AUSTIN_BIN is not set (tests/run_all.sh installs austin and sets it)");
        return;
    };
    let bin = Path::new(&bin);
    let dir = tempfile::tempdir().unwrap();
    let (mojo, text) = (dir.path().join("live.mojo"), dir.path().join("live.txt"));
    let program = fixture("fixture_program.py");
    // austin (3.7) starts the command and then looks for the interpreter in its memory maps;
    // about one launch in 20 here it gives up with "not a Python process", whatever `-t` says.
    // That is austin's race, not the importer's: try the launch up to 3 times. Give it the
    // interpreter itself, not a pyenv shim that execs it later.
    let o = std::process::Command::new(python()).args(["-c", "import sys; print(sys.executable)"]).output().unwrap();
    let interpreter = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert!(o.status.success() && !interpreter.is_empty(), "{} -c 'print(sys.executable)' failed", python());
    let launch = || std::process::Command::new(bin.join("austin")).args(["-b", "-i", "5ms", "-o"]).arg(&mojo).arg(&interpreter).arg(&program).output().unwrap();
    let mut o = launch();
    for _ in 0..2 {
        if o.status.success() || !String::from_utf8_lossy(&o.stderr).contains("not a Python") {
            break;
        }
        o = launch();
    }
    assert!(o.status.success() && mojo.is_file(), "austin: {}", String::from_utf8_lossy(&o.stderr));
    let o = std::process::Command::new(bin.join("mojo2austin")).arg(&mojo).arg(&text).output().unwrap();
    assert!(o.status.success(), "mojo2austin: {}", String::from_utf8_lossy(&o.stderr));
    let run = assert_mojo_reads_as_austin_reads_it(dir.path(), &mojo, &text);
    assert!(run.threads.len() >= 3, "the main thread, cruncher and napper: {:?}", run.threads.iter().map(|t| t.tid).collect::<Vec<_>>());
    assert!(run.functions.iter().any(|f| run.str(f.qualname) == "Cruncher.run"));
}

/// `threadradar ARGS` with its address space limited to 2 GiB, so that an import allocating
/// without bound fails at once (an allocation failure aborts the process) instead of taking the
/// machine's memory.
fn threadradar_in_2gib(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2097152 && exec \"$0\" \"$@\"")
        .arg(bin())
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn a_count_that_claims_more_samples_than_an_import_holds_is_one_sentence() {
    // One line of folded stacks claiming 10^11 samples: refused with the figure, the limit and
    // what to do, before anything is allocated for it.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huge.folded");
    std::fs::write(&file, "main;work 100000000000\n").unwrap();
    let o = threadradar_in_2gib(dir.path(), &["import", file.to_str().unwrap(), "-o", "out.json"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    assert!(e.contains("100000000000") && e.contains("limit") && e.contains("shorter"), "{e}");
    assert!(!dir.path().join("out.json").exists());
    // A count within the limit becomes that many samples.
    std::fs::write(&file, "main;work 2000\n").unwrap();
    let run = import(dir.path(), &file, &[]);
    assert_eq!(run.samples.len(), 2000);
}

fn types_by_tid(run: &Run) -> HashMap<u32, String> {
    run.threads.iter().map(|t| (t.tid, t.thread_type.clone())).collect()
}

#[test]
fn cpython_collapsed_in_cpu_mode_invents_no_main_thread_and_takes_the_interval() {
    // Recorded here by CPython 3.15's sampler (make_fixtures.sh): `--mode cpu -r 200` (5 ms), so
    // the first line is a worker's (lines are sorted by count) and nothing says which thread is
    // the main one, nor at what interval the counts were taken.
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("cpython315-cpu.collapsed");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut want: HashMap<u32, u64> = HashMap::new();
    for line in text.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        let tid = stack.split(';').next().unwrap().strip_prefix("tid:").unwrap().parse().unwrap();
        *want.entry(tid).or_insert(0) += n.parse::<u64>().unwrap();
    }
    let first_tid: u32 = text.lines().next().unwrap().split(';').next().unwrap()[4..].parse().unwrap();
    let run = import(dir.path(), &file, &[]);
    assert_eq!(counts_by_tid(&run), want);
    assert!(run.threads.iter().all(|t| !t.is_main && t.thread_type != "_MainThread"), "no thread is made the main one: {:?}", types_by_tid(&run));
    assert_eq!(types_by_tid(&run)[&first_tid], "Cruncher", "the first line's thread is a worker");
    let imported = run.meta.imported.as_ref().unwrap();
    for key in ["main_thread", "interval", "thread_states"] {
        assert!(imported.unknown.iter().any(|k| k == key), "{key} unknown: {imported:?}");
    }
    assert!(imported.note.contains("main thread") && imported.note.contains("--interval-ms"), "{}", imported.note);
    // `info` says the interval is assumed where it shows it.
    let out = dir.path().join("cpython315-cpu.collapsed.run.json");
    let o = threadradar(dir.path(), &["info", out.to_str().unwrap()]);
    let info = String::from_utf8_lossy(&o.stdout);
    let samples_line = info.lines().find(|l| l.starts_with("samples")).unwrap();
    assert!(samples_line.contains("10.0 ms") && samples_line.contains("assumed"), "{info}");
    // Given the interval, the run lasts as long as the longest thread's samples at it.
    let run = import(dir.path(), &file, &["--interval-ms", "5"]);
    assert_eq!(run.meta.interval_ms, 5.0);
    let longest = *want.values().max().unwrap() as f64 * 0.005;
    assert!((run.meta.duration_s - longest).abs() < 1e-9, "{} s, want {longest} s", run.meta.duration_s);
    let imported = run.meta.imported.as_ref().unwrap();
    assert!(!imported.unknown.iter().any(|k| k == "interval"), "{imported:?}");
    let o = threadradar(dir.path(), &["info", out.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("assumed"), "{}", String::from_utf8_lossy(&o.stdout));
    // A bad interval is one sentence.
    let o = threadradar(dir.path(), &["import", file.to_str().unwrap(), "-o", "x.json", "--interval-ms", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--interval-ms"), "{}", stderr(&o));
}

/// Per tid, the number of samples in each state.
fn states_by_tid(run: &Run) -> HashMap<u32, [u64; 3]> {
    let mut m: HashMap<u32, [u64; 3]> = HashMap::new();
    for s in &run.samples {
        for t in &s.threads {
            let i = match t.state {
                ThreadState::Computing => 0,
                ThreadState::Gil => 1,
                ThreadState::Idle => 2,
            };
            m.entry(run.threads[t.thread as usize].tid).or_default()[i] += 1;
        }
    }
    m
}

#[test]
fn cpython_gecko_markers_give_thread_states_and_the_target_pid() {
    // A CPython 3.15 gecko file as its collector writes it (Lib/profiling/sampling/
    // gecko_collector.py): a state's interval marker runs from the sample where it began to the
    // sample where the next began (the last ones end at the last sample), and `pid` is the
    // sampler's own. Thread 4243 (the main thread, so the program's pid) has the GIL and the CPU
    // at 0 and 1 ms, then waits for the GIL off the CPU at 2 and 3, is idle at 4 and waits again
    // at 5 (the end). Thread 4250 computes throughout.
    let dir = tempfile::tempdir().unwrap();
    let gecko_thread = |tid: u32, main: bool, markers: &str, n: usize| {
        let stacks = vec!["0"; n].join(",");
        let times = (0..n).map(|i| format!("{i}.0")).collect::<Vec<_>>().join(",");
        format!(
            r#"{{"name":"Thread-{tid}","isMainThread":{main},"processStartupTime":0,"processShutdownTime":null,"registerTime":0,"unregisterTime":null,"pausedRanges":[],"pid":"4242","tid":{tid},"processType":"default","processName":"Python Process",
            "samples":{{"stack":[{stacks}],"time":[{times}],"eventDelay":[],"weight":null,"weightType":"samples","length":{n}}},
            "stackTable":{{"frame":[0],"category":[1],"subcategory":[0],"prefix":[null],"length":1}},
            "frameTable":{{"address":[-1],"category":[1],"subcategory":[0],"func":[0],"innerWindowID":[null],"implementation":[null],"optimizations":[null],"line":[9],"column":[null],"inlineDepth":[0],"nativeSymbol":[null],"length":1}},
            "funcTable":{{"name":[1],"isJS":[true],"relevantForJS":[true],"resource":[0],"fileName":[2],"lineNumber":[9],"columnNumber":[null],"length":1}},
            "resourceTable":{{"lib":[null],"name":[2],"host":[null],"type":[1],"length":1}},
            "nativeSymbols":{{"libIndex":[],"address":[],"name":[],"functionSize":[],"length":0}},
            "markers":{markers}}}"#
        )
    };
    // Marker names: 3 Has GIL, 4 No GIL, 5 On CPU, 6 Off CPU, 7 Waiting for GIL, 8 Python Code, 9 No Exception.
    let m = |rows: &[(u32, f64, f64, &str)], tid: u32| {
        let col = |f: &dyn Fn(&(u32, f64, f64, &str)) -> String| rows.iter().map(f).collect::<Vec<_>>().join(",");
        format!(
            r#"{{"data":[{}],"name":[{}],"startTime":[{}],"endTime":[{}],"phase":[{}],"category":[{}],"length":{}}}"#,
            col(&|r| format!(r#"{{"type":"{}","duration":{},"tid":{tid}}}"#, r.3, r.2 - r.1)),
            col(&|r| r.0.to_string()),
            col(&|r| format!("{:?}", r.1)),
            col(&|r| format!("{:?}", r.2)),
            col(&|_| "1".into()),
            col(&|r| if r.0 <= 4 || r.0 == 7 { "4".into() } else { "5".into() }),
            rows.len()
        )
    };
    let main_markers = m(
        &[(3, 0.0, 2.0, "HasGIL"), (5, 0.0, 2.0, "OnCPU"), (8, 0.0, 2.0, "PythonCode"), (7, 2.0, 4.0, "WaitingforGIL"), (4, 2.0, 5.0, "NoGIL"), (6, 2.0, 5.0, "OffCPU"), (7, 5.0, 5.0, "WaitingforGIL"), (9, 0.0, 5.0, "NoException")],
        4243,
    );
    let worker_markers = m(&[(3, 0.0, 5.0, "HasGIL"), (5, 0.0, 5.0, "OnCPU"), (8, 0.0, 5.0, "PythonCode")], 4250);
    let file = format!(
        r#"{{"meta":{{"interval":1.0,"startTime":98765.4,"categories":[{{"name":"Other","color":"grey","subcategories":["Other"]}},{{"name":"Python","color":"yellow","subcategories":["Other"]}},{{"name":"Native","color":"blue","subcategories":["Other"]}},{{"name":"GC","color":"orange","subcategories":["Other"]}},{{"name":"GIL","color":"green","subcategories":["Other"]}},{{"name":"CPU","color":"purple","subcategories":["Other"]}}],"version":32,"preprocessedProfileVersion":57,"product":"Python","symbolicated":true,"markerSchema":[],"importedFrom":"Tachyon Sampling Profiler"}},
        "libs":[],"threads":[{},{}],"pages":[],
        "shared":{{"stringArray":["(root)","spin","fixture_program.py","Has GIL","No GIL","On CPU","Off CPU","Waiting for GIL","Python Code","No Exception"],"sources":{{"length":0,"uuid":[],"filename":[]}}}}}}"#,
        gecko_thread(4243, true, &main_markers, 6),
        gecko_thread(4250, false, &worker_markers, 6)
    );
    let path = dir.path().join("states.gecko.json");
    std::fs::write(&path, file).unwrap();
    let run = import(dir.path(), &path, &[]);
    let states: Vec<ThreadState> = run.samples.iter().flat_map(|s| s.threads.iter().filter(|t| run.threads[t.thread as usize].tid == 4243).map(|t| t.state)).collect();
    use ThreadState::*;
    assert_eq!(states, [Computing, Computing, Gil, Gil, Idle, Gil]);
    assert_eq!(states_by_tid(&run)[&4250], [6, 0, 0]);
    let gil: Vec<bool> = run.samples.iter().flat_map(|s| s.threads.iter().filter(|t| run.threads[t.thread as usize].tid == 4243).map(|t| t.gil)).collect();
    assert_eq!(gil, [true, true, false, false, false, false], "the GIL holder as the markers say");
    // The program's pid is its main thread's tid, not the sampler's pid in the file.
    assert_eq!(run.meta.pids, [4243]);
    assert!(run.threads.iter().all(|t| t.pid == 4243));
    assert!(thread(&run, 4243).is_main && !thread(&run, 4250).is_main);
    assert_eq!(thread(&run, 4243).thread_type, "_MainThread");
    let note = &run.meta.imported.as_ref().unwrap().note;
    assert!(!note.contains("every sample counts as computing"), "{note}");
}

#[test]
fn cpython_gecko_recorded_here_gets_the_states_its_markers_give() {
    // Recorded here by CPython 3.15's sampler (make_fixtures.sh; `--gecko -r 200`): per thread,
    // the state of each sample is counted here from the markers by a direct scan (the interval
    // marker of each kind that holds the sample's time), independently of the importer.
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("cpython315.gecko.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let strings: Vec<&str> = v["shared"]["stringArray"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    let end = v["threads"].as_array().unwrap().iter().flat_map(|t| t["samples"]["time"].as_array().unwrap()).map(|t| t.as_f64().unwrap()).fold(0.0, f64::max);
    let mut want: HashMap<u32, [u64; 3]> = HashMap::new();
    let mut main_tid = 0;
    for t in v["threads"].as_array().unwrap() {
        let tid = t["tid"].as_u64().unwrap() as u32;
        if t["isMainThread"] == true {
            main_tid = tid;
        }
        let mk = &t["markers"];
        let marks: Vec<(&str, f64, f64)> = (0..mk["length"].as_u64().unwrap() as usize)
            .map(|i| (strings[mk["name"][i].as_u64().unwrap() as usize], mk["startTime"][i].as_f64().unwrap(), mk["endTime"][i].as_f64().unwrap()))
            .collect();
        // A marker holds t from its start up to (not including) its end, where the next state
        // begins; at the profile's end the open ones were closed, so they hold it too unless
        // another of the same kind begins there.
        let holds = |names: &[&str], name: &str, t: f64| {
            marks.iter().any(|&(n, s, e)| n == name && s <= t && (t < e || (t == e && (s == e || (e == end && !marks.iter().any(|&(n2, s2, _)| names.contains(&n2) && n2 != n && s2 == e))))))
        };
        for time in t["samples"]["time"].as_array().unwrap() {
            let time = time.as_f64().unwrap();
            let gil = holds(&["Has GIL", "No GIL"], "Has GIL", time);
            let cpu = holds(&["On CPU", "Off CPU"], "On CPU", time);
            let waiting = holds(&["Waiting for GIL"], "Waiting for GIL", time) && !gil;
            let i = if waiting { 1 } else if gil || cpu { 0 } else { 2 };
            want.entry(tid).or_default()[i] += 1;
        }
    }
    let run = import(dir.path(), &file, &[]);
    assert_eq!(states_by_tid(&run), want);
    // The program as it ran: the napper mostly idle, the two crunchers waiting for the GIL in turn.
    let napper = run.threads.iter().find(|t| t.thread_type == "Napper").unwrap().tid;
    assert!(want[&napper][2] * 10 > (want[&napper].iter().sum::<u64>()) * 8, "{:?}", want[&napper]);
    for c in run.threads.iter().filter(|t| t.thread_type == "Cruncher") {
        assert!(want[&c.tid][0] > 0 && want[&c.tid][1] > 0, "{:?}", want[&c.tid]);
    }
    assert_eq!(run.meta.pids, [main_tid], "the program's pid is its main thread's tid");
    assert!(v["threads"][0]["pid"].as_str().unwrap().parse::<u32>().unwrap() != main_tid, "the file's pid is the sampler's");
    assert_eq!(thread(&run, main_tid).thread_type, "_MainThread");
}

/// The line-oriented formats are read line by line: a 300 MB folded-stacks file (a thousand
/// samples among 300 000 comment lines of a kilobyte) imports with the peak resident memory (the
/// kernel's own count, `wait4`'s `ru_maxrss`) of the same thousand samples without the comments,
/// give or take 32 MB, where reading the file whole took more than the file.
#[test]
fn a_large_line_oriented_file_is_read_line_by_line() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, comments: bool| {
        let file = dir.path().join(name);
        let mut w = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
        let comment = format!("# {}\n", "x".repeat(1021));
        for i in 0..300_000 {
            if comments {
                w.write_all(comment.as_bytes()).unwrap();
            }
            if i % 300 == 0 {
                writeln!(w, "main (app.py:1);work (app.py:{}) 1", 2 + i % 7).unwrap();
            }
        }
        drop(w);
        file
    };
    let (big, small) = (write("big.collapsed", true), write("small.collapsed", false));
    let (big_peak, small_peak) = (import_peak_rss(dir.path(), &big), import_peak_rss(dir.path(), &small));
    let size = std::fs::metadata(&big).unwrap().len();
    eprintln!("imported {} MB with a peak resident memory of {} MB; without the comments, {} MB", size >> 20, big_peak >> 20, small_peak >> 20);
    assert!(big_peak < small_peak + (32 << 20), "the import's peak resident memory was {} MB for a {} MB file, {} MB for its samples alone", big_peak >> 20, size >> 20, small_peak >> 20);
}

/// A Firefox Profiler file as CPython 3.15 writes it, of one thread with `samples` samples and
/// `markers` markers of a kind the importer does not read (CPython's `Native Code`, with their
/// `data` objects), written to `file`.
fn write_gecko(file: &Path, samples: usize, markers: usize) {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(file).unwrap());
    let list = |w: &mut std::io::BufWriter<std::fs::File>, n: usize, item: &dyn Fn(usize) -> String| {
        for i in 0..n {
            write!(w, "{}{}", if i > 0 { "," } else { "" }, item(i)).unwrap();
        }
    };
    write!(w, r#"{{"meta":{{"interval":1.0,"startTime":1000.0,"product":"Python","importedFrom":"Tachyon Sampling Profiler","preprocessedProfileVersion":57,"categories":[{{"name":"Python"}}]}},"threads":[{{"name":"Thread-7","isMainThread":true,"pid":"99","tid":7,"samples":{{"stack":["#).unwrap();
    list(&mut w, samples, &|i| (i % 2).to_string());
    w.write_all(br#"],"time":["#).unwrap();
    list(&mut w, samples, &|i| format!("{}.0", i));
    w.write_all(br#"],"weight":null,"weightType":"samples"},"stackTable":{"frame":[0,1],"prefix":[null,0]},"frameTable":{"func":[0,1],"line":[1,2]},"funcTable":{"name":[0,1],"fileName":[2,2]},"markers":{"data":["#).unwrap();
    list(&mut w, markers, &|i| format!(r#"{{"type":"NativeCode","duration":5.024999999999999,"tid":{}}}"#, 7 + i % 3));
    w.write_all(br#"],"name":["#).unwrap();
    list(&mut w, markers, &|_| "3".into());
    w.write_all(br#"],"startTime":["#).unwrap();
    list(&mut w, markers, &|i| format!("{}.991", i % 1000));
    w.write_all(br#"],"endTime":["#).unwrap();
    list(&mut w, markers, &|i| format!("{}.016", i % 1000 + 1));
    w.write_all(br#"],"phase":["#).unwrap();
    list(&mut w, markers, &|_| "1".into());
    w.write_all(br#"]}}],"shared":{"stringArray":["main","work","app.py","Native Code"]}}"#).unwrap();
}

/// The JSON formats are read as they go (issue 31): a Firefox Profiler file of a thousand samples
/// and a million markers the importer skips (CPython's `Native Code`, 80 MB) imports with the
/// peak resident memory of the thousand samples alone plus less than half the file's size (the
/// three marker columns it reads, 20 bytes a marker: a marker's name is known only at the
/// string table, which comes last). Parsed into a tree, the markers took several times the file.
#[test]
fn a_large_gecko_file_is_not_held_as_a_tree() {
    let dir = tempfile::tempdir().unwrap();
    let (big, small) = (dir.path().join("big.gecko.json"), dir.path().join("small.gecko.json"));
    write_gecko(&big, 1000, 1_000_000);
    write_gecko(&small, 1000, 0);
    let (big_peak, small_peak) = (import_peak_rss_of(dir.path(), &big, 1000), import_peak_rss_of(dir.path(), &small, 1000));
    let size = std::fs::metadata(&big).unwrap().len();
    eprintln!("imported {} MB of gecko with a peak resident memory of {} MB; without the markers, {} MB", size >> 20, big_peak >> 20, small_peak >> 20);
    assert!(big_peak < small_peak + size / 2, "the import's peak resident memory was {} MB for a {} MB file, {} MB for its samples alone", big_peak >> 20, size >> 20, small_peak >> 20);
}

/// A speedscope file of 5 000 samples of a recursion 10 000 frames deep (100 MB; each sample's
/// frame list is 20 kB of text) imports with the peak resident memory of the same samples one
/// frame deep, give or take 32 MB: a sample's frames are walked into the stack tree as they are
/// read, never held (held as lists, they took 400 MB).
#[test]
fn a_large_speedscope_file_is_read_sample_by_sample() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, depth: usize| {
        let file = dir.path().join(name);
        let mut w = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
        w.write_all(br#"{"$schema":"https://www.speedscope.app/file-format-schema.json","profiles":[{"type":"sampled","name":"Thread 7 \"main\"","unit":"seconds","startValue":0,"endValue":50,"samples":["#).unwrap();
        let stack = format!("[{}]", vec!["0"; depth].join(","));
        for i in 0..5000 {
            write!(w, "{}{stack}", if i > 0 { "," } else { "" }).unwrap();
        }
        w.write_all(br#"],"weights":["#).unwrap();
        w.write_all(vec!["0.01"; 5000].join(",").as_bytes()).unwrap();
        w.write_all(br#"]}],"shared":{"frames":[{"name":"rec","file":"app.py","line":3}]},"exporter":"py-spy@0.4.3"}"#).unwrap();
        drop(w);
        file
    };
    let (big, small) = (write("big.speedscope.json", 10_000), write("small.speedscope.json", 1));
    let (big_peak, small_peak) = (import_peak_rss_of(dir.path(), &big, 5000), import_peak_rss_of(dir.path(), &small, 5000));
    let size = std::fs::metadata(&big).unwrap().len();
    eprintln!("imported {} MB of speedscope with a peak resident memory of {} MB; one frame deep, {} MB", size >> 20, big_peak >> 20, small_peak >> 20);
    assert!(big_peak < small_peak + (32 << 20), "the import's peak resident memory was {} MB for a {} MB file, {} MB one frame deep", big_peak >> 20, size >> 20, small_peak >> 20);
}

/// JSON files claiming more samples than an import holds, by writing them (a samples table of
/// 100 million rows, 200 MB; 100 million speedscope samples, 400 MB): one sentence naming the
/// limit, under a 2 GiB address space. Parsed whole, they needed 3 to 6 GB and the import was
/// killed by the failing allocation.
#[test]
fn json_files_claiming_more_samples_than_an_import_holds_are_one_sentence() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let rows = 100_000_000;
    let gecko = dir.path().join("claims.gecko.json");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&gecko).unwrap());
    w.write_all(br#"{"meta":{"preprocessedProfileVersion":57,"interval":1},"threads":[{"name":"a","tid":7,"samples":{"stack":[0"#).unwrap();
    for _ in 1..rows {
        w.write_all(b",0").unwrap();
    }
    w.write_all(br#"],"time":[0.0]},"stackTable":{"frame":[0],"prefix":[null]},"frameTable":{"func":[0]},"funcTable":{"name":[0]},"stringArray":["f"]}]}"#).unwrap();
    drop(w);
    let ss = dir.path().join("claims.speedscope.json");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&ss).unwrap());
    w.write_all(br#"{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"f"}]},"profiles":[{"type":"sampled","name":"t","unit":"none","startValue":0,"endValue":1,"samples":[[0]"#).unwrap();
    for _ in 1..rows {
        w.write_all(b",[0]").unwrap();
    }
    w.write_all(b"]}]}").unwrap();
    drop(w);
    for (file, what) in [(&gecko, "rows in a samples table"), (&ss, "its samples add up to more than")] {
        let o = threadradar_in_2gib(dir.path(), &["import", file.to_str().unwrap(), "-o", "out.json"]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{}: {e}", file.display());
        assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
        assert!(e.contains(what) && e.contains("limit") && e.contains("shorter"), "{e}");
        assert!(!dir.path().join("out.json").exists());
    }
}

/// Imports `file` (its thousand samples checked) and returns the importer's peak resident memory.
fn import_peak_rss(dir: &Path, file: &Path) -> u64 {
    import_peak_rss_of(dir, file, 1000)
}

/// Imports `file` (its `samples` thread-samples checked) and returns the importer's peak resident
/// memory.
fn import_peak_rss_of(dir: &Path, file: &Path, samples: usize) -> u64 {
    use std::os::unix::process::ExitStatusExt;
    let out = dir.join("run.json");
    let child = std::process::Command::new(bin())
        .args(["import", file.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // SAFETY: `rusage` is plain integers, for which all-zero bytes are a valid value.
    let (mut status, mut usage) = (0i32, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: wait4 on our own child's pid, with pointers to live locals.
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(r, child.id() as i32);
    assert!(std::process::ExitStatus::from_raw(status).success(), "import of {} failed", file.display());
    let run = threadradar_profiler::runfile::read(&out).unwrap();
    assert_eq!(run.samples.iter().map(|s| s.threads.len()).sum::<usize>(), samples);
    usage.ru_maxrss as u64 * 1024
}
