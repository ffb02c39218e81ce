//! What a file can claim is capped (samples after counts and weights, threads, stack depth,
//! distinct frames and stacks, name sizes, time span), with one sentence when a cap is hit; and
//! what a file legitimately holds in bulk (many samples of a thread at one time) is imported in
//! linear time.

use std::fmt::Write;
use std::path::Path;
use threadradar_formats::import::{import_bytes, ImportError, ImportFormat, ImportOptions, Limits};

fn import(format: ImportFormat, bytes: &[u8]) -> Result<threadradar_profiler::run::Run, ImportError> {
    import_bytes(bytes, Path::new("in.profile"), &ImportOptions { format: Some(format), ..Default::default() })
}

/// The import fails with one sentence that names the limit and what to do.
fn refused(format: ImportFormat, bytes: &[u8], what: &str) -> String {
    let e = match import(format, bytes) {
        Ok(run) => panic!("{format:?} imported ({} samples) instead of refusing {what}", run.samples.len()),
        Err(e) => e.to_string(),
    };
    assert!(!e.contains('\n') && e.len() < 400, "one short sentence: {e}");
    assert!(e.contains("limit") && e.contains(what), "{e}");
    e
}

#[test]
fn counts_and_weights_are_capped_before_anything_is_allocated_for_them() {
    let e = refused(ImportFormat::Collapsed, b"main;work 100000000000\n", "100000000000");
    assert!(e.contains("shorter"), "{e}");
    // Counts add up across lines.
    let max = Limits::default().samples;
    let lines = format!("a;b {}\na;c {}\n", max / 2 + 1, max / 2 + 1);
    refused(ImportFormat::Collapsed, lines.as_bytes(), "samples");
    // A Firefox profile's sample weight.
    let gecko = r#"{"meta":{"preprocessedProfileVersion":55,"interval":1},"threads":[{"name":"a","tid":7,"samples":{"stack":[0],"time":[0.0],"weight":[100000000000],"weightType":"samples"},"stackTable":{"frame":[0],"prefix":[null]},"frameTable":{"func":[0]},"funcTable":{"name":[0]},"stringArray":["f"]}]}"#;
    refused(ImportFormat::Gecko, gecko.as_bytes(), "100000000000");
}

#[test]
fn stack_depth_is_capped_in_every_line_format() {
    let depth = Limits::default().depth + 1;
    let frames = vec!["f (a.py:1)"; depth].join(";");
    refused(ImportFormat::Collapsed, format!("{frames} 1\n").as_bytes(), "deep");
    let frames = vec!["a.py:f:1"; depth].join(";");
    refused(ImportFormat::Austin, format!("P1;T0:1;{frames} 10\n").as_bytes(), "deep");
    let mut perf = String::from("python3 12 100.5: 1 cpu-clock:\n");
    for _ in 0..depth {
        perf.push_str("\t ffff py::f:/a.py+0x1 (/tmp/perf-1.map)\n");
    }
    perf.push('\n');
    refused(ImportFormat::Perf, perf.as_bytes(), "deep");
    let stack = vec!["0"; depth].join(",");
    let ss = format!(r#"{{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{{"frames":[{{"name":"f"}}]}},"profiles":[{{"type":"sampled","name":"t","unit":"none","startValue":0,"endValue":1,"samples":[[{stack}]],"weights":[1]}}]}}"#);
    refused(ImportFormat::Speedscope, ss.as_bytes(), "deep");
}

#[test]
fn threads_and_names_are_capped() {
    let mut austin = String::new();
    for tid in 0..=Limits::default().threads {
        writeln!(austin, "P1;T0:{tid};a.py:f:1 10").unwrap();
    }
    refused(ImportFormat::Austin, austin.as_bytes(), "threads");
    let name = "x".repeat(Limits::default().name_bytes + 1);
    refused(ImportFormat::Collapsed, format!("main;{name} 1\n").as_bytes(), "bytes");
    // A MOJO string as long.
    let mut mojo = b"MOJ\x03".to_vec();
    mojo.push(11);
    mojo.push(2);
    mojo.extend_from_slice(name.as_bytes());
    mojo.push(0);
    refused(ImportFormat::AustinMojo, &mojo, "bytes");
}

#[test]
fn sample_times_beyond_a_year_are_refused() {
    let gecko = r#"{"meta":{"preprocessedProfileVersion":55,"interval":1},"threads":[{"name":"a","tid":7,"samples":{"stack":[0,0],"time":[0.0,1e300]},"stackTable":{"frame":[0],"prefix":[null]},"frameTable":{"func":[0]},"funcTable":{"name":[0]},"stringArray":["f"]}]}"#;
    refused(ImportFormat::Gecko, gecko.as_bytes(), "time");
}

#[test]
fn many_samples_of_a_thread_at_one_time_are_kept_one_nanosecond_apart() {
    // 200 000 samples of one thread, all at 0 ms, and one of another thread: each thread is
    // observed once per tick, so the first thread's samples are laid 1 ns apart (in order), and
    // the other thread's shares the first tick.
    let n = 200_000;
    let stacks = vec!["0"; n].join(",");
    let times = vec!["0.0"; n].join(",");
    let gecko = format!(
        r#"{{"meta":{{"preprocessedProfileVersion":55,"interval":1}},"threads":[
        {{"name":"a","tid":7,"samples":{{"stack":[{stacks}],"time":[{times}]}},"stackTable":{{"frame":[0],"prefix":[null]}},"frameTable":{{"func":[0]}},"funcTable":{{"name":[0]}},"stringArray":["f"]}},
        {{"name":"b","tid":8,"samples":{{"stack":[0],"time":[0.0]}},"stackTable":{{"frame":[0],"prefix":[null]}},"frameTable":{{"func":[0]}},"funcTable":{{"name":[0]}},"stringArray":["g"]}}]}}"#
    );
    let run = import(ImportFormat::Gecko, gecko.as_bytes()).unwrap();
    assert_eq!(run.samples.len(), n);
    assert!(run.samples.iter().enumerate().all(|(i, s)| s.t == i as u64), "ticks 1 ns apart from 0");
    assert_eq!(run.samples[0].threads.len(), 2);
    assert!(run.samples[1..].iter().all(|s| s.threads.len() == 1 && run.threads[s.threads[0].thread as usize].tid == 7));
    // The same from perf script, whose samples all carry one time.
    let mut perf = String::new();
    for _ in 0..n {
        perf.push_str("python3 12 100.5: 1 cpu-clock:\n\t ffff py::f:/a.py+0x1 (/tmp/perf-1.map)\n\n");
    }
    let run = import(ImportFormat::Perf, perf.as_bytes()).unwrap();
    assert_eq!(run.samples.len(), n);
    assert_eq!(run.samples.last().unwrap().t, n as u64 - 1);
}

#[test]
fn files_are_capped_by_size_json_more_tightly() {
    // The JSON formats are parsed into memory whole, at many times their size.
    let limits = Limits { json_bytes: 100, file_bytes: 1_000, ..Limits::default() };
    let gecko = r#"{"meta":{"preprocessedProfileVersion":55,"interval":1},"threads":[{"name":"a","tid":7,"samples":{"stack":[0],"time":[0.0]},"stackTable":{"frame":[0],"prefix":[null]},"frameTable":{"func":[0]},"funcTable":{"name":[0]},"stringArray":["f"]}]}"#;
    let opts = |format| ImportOptions { format, limits, ..Default::default() };
    for format in [Some(ImportFormat::Gecko), None] {
        let e = import_bytes(gecko.as_bytes(), Path::new("big.json"), &opts(format)).unwrap_err().to_string();
        assert!(e.contains(&format!("it is {} bytes, above the limit of 100 bytes", gecko.len())) && e.contains("Firefox Profiler"), "{e}");
    }
    // The same size of folded stacks is within its limit; ten times that is not.
    let folded = "main;work 1\n".repeat(gecko.len() / 12 + 1);
    assert!(import_bytes(folded.as_bytes(), Path::new("f.folded"), &opts(None)).is_ok());
    let e = import_bytes(folded.repeat(10).as_bytes(), Path::new("f.folded"), &opts(None)).unwrap_err().to_string();
    assert!(e.contains("collapsed stacks file it is") && e.contains("limit of 1000 bytes"), "{e}");
    // A file on disk is refused before it is read.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.json");
    std::fs::write(&f, gecko.repeat(20)).unwrap();
    let e = threadradar_formats::import::import_file(&f, &opts(None)).unwrap_err().to_string();
    assert!(e.contains("bytes, above the limit of 1000 bytes"), "{e}");
}

/// What the JSON and MOJO formats claim beyond samples and stacks — a string's size, nesting, a
/// table's or a string table's rows, MOJO's string and frame definitions — is capped while the
/// file is read, with one sentence (small limits here, so each case is quick).
#[test]
fn json_strings_nesting_tables_and_mojo_definitions_are_capped() {
    let limits = Limits { samples: 1_000, frames: 100, stacks: 1_000, name_bytes: 1_000, ..Limits::default() };
    let refused_with = |format, bytes: &[u8], what: &str| {
        let opts = ImportOptions { format: Some(format), limits, ..Default::default() };
        let e = match import_bytes(bytes, Path::new("in.profile"), &opts) {
            Ok(run) => panic!("{format:?} imported ({} samples) instead of refusing {what}", run.samples.len()),
            Err(e) => e.to_string(),
        };
        assert!(!e.contains('\n') && e.len() < 400, "one short sentence: {e}");
        assert!(e.contains("limit") && e.contains(what), "{e}");
    };
    let gecko = |thread_extra: &str, stacks: &str, strings: &str| {
        format!(r#"{{"meta":{{"preprocessedProfileVersion":55,"interval":1}},"threads":[{{"name":"a","tid":7{thread_extra},"samples":{{"stack":[{stacks}],"time":[0.0]}},"stackTable":{{"frame":[0],"prefix":[null]}},"frameTable":{{"func":[0]}},"funcTable":{{"name":[0]}},"stringArray":[{strings}]}}]}}"#)
    };
    // A string the importer would skip is as capped as a name: serde_json would buffer it.
    let long = format!(r#","note":"{}""#, "x".repeat(1_001));
    refused_with(ImportFormat::Gecko, gecko(&long, "0", r#""f""#).as_bytes(), "more than 1000 bytes long");
    let ss = format!(r#"{{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{{"frames":[{{"name":"{}"}}]}},"profiles":[]}}"#, "y".repeat(5_000));
    refused_with(ImportFormat::Speedscope, ss.as_bytes(), "more than 1000 bytes long");
    // Nesting, in a key the importer skips.
    let deep = format!(r#","x":{}{}"#, "[".repeat(1_001), "]".repeat(1_001));
    refused_with(ImportFormat::Gecko, gecko(&deep, "0", r#""f""#).as_bytes(), "nested more than 1000 deep");
    // A samples table, a string table.
    refused_with(ImportFormat::Gecko, gecko("", &vec!["0"; 1_001].join(","), r#""f""#).as_bytes(), "rows in a samples table");
    refused_with(ImportFormat::Gecko, gecko("", "0", &vec![r#""s""#; 201].join(",")).as_bytes(), "strings in a string table");
    // Speedscope's shared frames.
    let ss = format!(r#"{{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{{"frames":[{}]}},"profiles":[]}}"#, vec![r#"{"name":"f"}"#; 101].join(","));
    refused_with(ImportFormat::Speedscope, ss.as_bytes(), "rows in a frame or function table");
    // MOJO: string definitions (event 11, key, NUL-terminated string).
    let mut mojo = b"MOJ\x03".to_vec();
    for key in 0..201u8 {
        mojo.extend_from_slice(&[11, key & 0x3f | if key > 0x3f { 0x80 } else { 0 }]);
        if key > 0x3f {
            mojo.push(key >> 6);
        }
        mojo.extend_from_slice(b"s\0");
    }
    refused_with(ImportFormat::AustinMojo, &mojo, "strings");
}

/// The JSON importers keep their behaviour when the file's keys come in another order than
/// their writers' (JSON objects are unordered): speedscope's `shared` before or after the
/// profiles, a Firefox profile's string table before or after its threads.
#[test]
fn json_keys_in_any_order_give_the_same_run() {
    let stacks = |run: &threadradar_profiler::run::Run| -> Vec<(u64, Vec<String>)> {
        run.samples.iter().map(|s| (s.t, s.threads.iter().map(|t| format!("{}:{:?}", t.thread, t.stack)).collect())).collect()
    };
    let profiles = r#""profiles":[{"type":"sampled","name":"Thread 7 \"main\"","unit":"milliseconds","startValue":0,"endValue":3,"samples":[[0,1],[0],[0,1,1]],"weights":[1,1,1]}]"#;
    let shared = r#""shared":{"frames":[{"name":"main","file":"app.py","line":1},{"name":"work","file":"app.py","line":2}]}"#;
    let schema = r#""$schema":"https://www.speedscope.app/file-format-schema.json""#;
    let a = import(ImportFormat::Speedscope, format!("{{{schema},{profiles},{shared}}}").as_bytes()).unwrap();
    let b = import(ImportFormat::Speedscope, format!("{{{shared},{profiles},{schema}}}").as_bytes()).unwrap();
    assert_eq!(stacks(&a), stacks(&b));
    assert_eq!(a.samples.len(), 3);
    let threads = r#""threads":[{"name":"a","tid":7,"samples":{"stack":[1,0],"time":[0.0,1.0]},"stackTable":{"frame":[0,1],"prefix":[null,0]},"frameTable":{"func":[0,1]},"funcTable":{"name":[0,1]}}]"#;
    let meta = r#""meta":{"preprocessedProfileVersion":55,"interval":1}"#;
    let strings = r#""shared":{"stringArray":["main","work"]}"#;
    let a = import(ImportFormat::Gecko, format!("{{{meta},{threads},{strings}}}").as_bytes()).unwrap();
    let b = import(ImportFormat::Gecko, format!("{{{strings},{threads},{meta}}}").as_bytes()).unwrap();
    assert_eq!(stacks(&a), stacks(&b));
    assert_eq!(a.samples.len(), 2);
}
