//! `threadradar export`: a real recorded run (and a synthetic run with hostile names) in every
//! format, each checked by its format's own validator where one runs here (go tool pprof,
//! speedscope's JSON schema with ajv), else against the format's documented structure (the
//! Firefox processed format at the writer's schema version, Chrome JSON traces, Perfetto's
//! TrackEvent rules on the protobuf decoded with prost), and checked
//! against the run itself: same threads by name and tid, same per-thread sample counts.

mod common;

use common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
use threadradar_profiler::run::*;

/// One real recording of tests/scripts/threads.py (five named threads: computing, waiting for
/// the GIL, sleeping, blocked on a lock), shared by the tests of this file.
fn recorded() -> &'static (tempfile::TempDir, PathBuf, Run) {
    static RUN: OnceLock<(tempfile::TempDir, PathBuf, Run)> = OnceLock::new();
    RUN.get_or_init(|| {
        let _g = serial();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("threads.json");
        let o = record(&out, &[], &[&script("threads.py"), "1.5"]);
        assert!(out.exists(), "record failed: {}", stderr(&o));
        let run = read(&out);
        (dir, out, run)
    })
}

/// A run whose thread, function, class and file names need escaping in every format.
const HOSTILE_THREAD: &str = "<script>alert(\"t\")</script>; x\ny";
const HOSTILE_FUNC: &str = "\"><img src=x onerror=alert(1)>;f";

fn hostile_run(dir: &Path) -> PathBuf {
    let mut b = RunBuilder::new(Meta { interval_ms: 2.0, command: vec!["python3".into(), "<evil>.py".into()], ..Meta::default() });
    let f = b.file("/tmp/<evil>;\n.py", FileKind::User, None);
    let func = b.function(f, &FunctionSpec { qualname: HOSTILE_FUNC, class: Some("<C>"), line: 3, end_line: 9, class_line: 1 });
    let main = b.function(f, &FunctionSpec { qualname: "main", line: 10, end_line: 20, ..Default::default() });
    let fr_main = b.frame(main, 12);
    let fr = b.frame(func, 4);
    let s1 = b.stack(&[fr_main, fr]);
    let s0 = b.stack(&[fr_main]);
    let t0 = b.thread(new_thread(10, 10, 1, "MainThread", "_MainThread"));
    let t1 = b.thread(new_thread(10, 11, 2, HOSTILE_THREAD, "<T>"));
    let futex = b.string("futex");
    for i in 0..50u64 {
        let idle = i % 10 >= 6;
        b.push_sample(Sample {
            t: i * 2_000_000,
            threads: vec![
                ThreadSample { thread: t0, stack: s0, state: if idle { ThreadState::Idle } else { ThreadState::Computing }, blocked: idle.then_some(futex), cpu_ns: if idle { 0 } else { 1_900_000 }, ..Default::default() },
                ThreadSample { thread: t1, stack: s1, state: if i % 7 == 0 { ThreadState::Gil } else { ThreadState::Computing }, cpu_ns: 1_000_000, ..Default::default() },
            ],
        });
    }
    let mut run = b.finish();
    run.meta.duration_s = 0.1;
    let path = dir.join("hostile.json");
    threadradar_profiler::runfile::write(&run, &path).unwrap();
    path
}

fn export(run: &Path, format: &str, out: &Path) {
    let o = threadradar(run.parent().unwrap(), &["export", run.to_str().unwrap(), "--format", format, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "export {format} failed: {}", stderr(&o));
    assert!(out.exists());
}

fn samples_per_thread(run: &Run) -> HashMap<(String, u32), u64> {
    let mut m = HashMap::new();
    for s in &run.samples {
        for t in &s.threads {
            let th = &run.threads[t.thread as usize];
            *m.entry((th.name.clone(), th.tid)).or_insert(0) += 1;
        }
    }
    m
}

/// Stretches of consecutive samples in one non-computing state (and blocking call), counted
/// here independently of the exporter.
fn wait_intervals(run: &Run) -> usize {
    let mut last: HashMap<u32, (usize, ThreadState, Option<u32>)> = HashMap::new();
    let mut n = 0;
    for (i, s) in run.samples.iter().enumerate() {
        for t in &s.threads {
            let prev = last.insert(t.thread, (i, t.state, t.blocked));
            let continues = prev.is_some_and(|(pi, ps, pb)| pi + 1 >= i && ps == t.state && pb == t.blocked);
            if t.state != ThreadState::Computing && !continues {
                n += 1;
            }
        }
    }
    n
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

// ------------------------------------------------------------------------------------------
// Firefox Profiler
// ------------------------------------------------------------------------------------------

/// The processed profile format as the Firefox Profiler documents it for the version the file
/// declares: required fields, table lengths, and every index in range.
fn check_firefox(p: &Value) -> Result<(), String> {
    let meta = &p["meta"];
    let version = meta["preprocessedProfileVersion"].as_u64().ok_or("meta.preprocessedProfileVersion is missing")?;
    if version != threadradar_formats::firefox::PROCESSED_PROFILE_VERSION {
        return Err(format!("preprocessedProfileVersion {version}, expected {}", threadradar_formats::firefox::PROCESSED_PROFILE_VERSION));
    }
    for k in ["interval", "startTime", "processType", "product", "categories", "markerSchema", "version"] {
        if meta.get(k).is_none() {
            return Err(format!("meta.{k} is missing"));
        }
    }
    let cats = meta["categories"].as_array().ok_or("meta.categories is not a list")?;
    for c in cats {
        if !(c["name"].is_string() && c["color"].is_string() && c["subcategories"].is_array()) {
            return Err(format!("category {c} lacks name/color/subcategories"));
        }
    }
    let threads = p["threads"].as_array().ok_or("threads is not a list")?;
    for t in threads {
        let name = t["name"].as_str().ok_or("a thread has no name")?;
        let strings = t["stringArray"].as_array().ok_or(format!("thread {name}: no stringArray"))?.len();
        let table = |k: &str| -> Result<(&Value, usize), String> {
            let tab = &t[k];
            let len = tab["length"].as_u64().ok_or(format!("thread {name}: {k}.length missing"))? as usize;
            Ok((tab, len))
        };
        let col = |tab: &Value, k: &str, len: usize| -> Result<Vec<Value>, String> {
            let c = tab[k].as_array().ok_or(format!("thread {name}: column {k} missing"))?;
            if c.len() != len {
                return Err(format!("thread {name}: column {k} has {} entries for length {len}", c.len()));
            }
            Ok(c.clone())
        };
        let in_range = |v: &Value, n: usize, what: &str| -> Result<(), String> {
            match v {
                Value::Null => Ok(()),
                v => match v.as_u64() {
                    Some(i) if (i as usize) < n => Ok(()),
                    _ => Err(format!("thread {name}: {what} {v} out of range (< {n})")),
                },
            }
        };
        let (funcs, nfunc) = table("funcTable")?;
        for v in col(funcs, "name", nfunc)? {
            in_range(&v, strings, "funcTable.name")?;
        }
        let (frames, nframe) = table("frameTable")?;
        for v in col(frames, "func", nframe)? {
            in_range(&v, nfunc, "frameTable.func")?;
        }
        for v in col(frames, "category", nframe)? {
            in_range(&v, cats.len(), "frameTable.category")?;
        }
        let (stacks, nstack) = table("stackTable")?;
        for (i, v) in col(stacks, "prefix", nstack)?.iter().enumerate() {
            in_range(v, i, "stackTable.prefix (must precede its node)")?;
        }
        for v in col(stacks, "frame", nstack)? {
            in_range(&v, nframe, "stackTable.frame")?;
        }
        let (samples, nsample) = table("samples")?;
        for v in col(samples, "stack", nsample)? {
            in_range(&v, nstack, "samples.stack")?;
        }
        if samples.get("time").is_none() && samples.get("timeDeltas").is_none() {
            return Err(format!("thread {name}: samples have neither time nor timeDeltas"));
        }
        let (markers, nmarker) = table("markers")?;
        for k in ["startTime", "endTime", "phase", "category", "data"] {
            col(markers, k, nmarker)?;
        }
        for v in col(markers, "name", nmarker)? {
            in_range(&v, strings, "markers.name")?;
        }
    }
    Ok(())
}

#[test]
fn firefox_profile_has_every_thread_by_name_its_samples_states_and_waits() {
    let (dir, path, run) = recorded();
    let out = dir.path().join("threads.firefox.json");
    export(path, "firefox", &out);
    let p = json(&out);
    check_firefox(&p).unwrap();
    let cats: Vec<&str> = p["meta"]["categories"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    for c in ["Python", "GIL wait", "Idle"] {
        assert!(cats.contains(&c), "category {c} missing: {cats:?}");
    }
    let mut got = HashMap::new();
    let mut markers = 0;
    for t in p["threads"].as_array().unwrap() {
        let tid: u32 = t["tid"].as_str().map(|s| s.parse().unwrap()).or(t["tid"].as_u64().map(|n| n as u32)).unwrap();
        got.insert((t["name"].as_str().unwrap().to_string(), tid), t["samples"]["length"].as_u64().unwrap());
        markers += t["markers"]["data"].as_array().unwrap().iter().filter(|d| d["type"] == "ThreadRadarWait").count();
    }
    assert_eq!(got, samples_per_thread(run));
    let names: Vec<&str> = run.threads.iter().map(|t| t.name.as_str()).collect();
    for n in ["heavy", "light", "sleepy", "locked", "MainThread"] {
        assert!(names.contains(&n), "the recording lacks thread {n}: {names:?}");
    }
    assert_eq!(markers, wait_intervals(run), "one ThreadRadarWait marker per wait interval");
    assert!(markers > 0, "threads.py has sleeping and blocked threads");
    // The sleeping thread's samples are mostly in the Idle category (the leaf frame's category).
    let sleepy = p["threads"].as_array().unwrap().iter().find(|t| t["name"] == "sleepy").unwrap();
    let idle_cat = cats.iter().position(|c| *c == "Idle").unwrap() as u64;
    let (st, ft) = (&sleepy["stackTable"], &sleepy["frameTable"]);
    let category = |stack: u64| ft["category"][st["frame"][stack as usize].as_u64().unwrap() as usize].as_u64();
    let idle = sleepy["samples"]["stack"].as_array().unwrap().iter().filter(|s| s.as_u64().is_some_and(|i| category(i) == Some(idle_cat))).count();
    assert!(idle * 2 > sleepy["samples"]["length"].as_u64().unwrap() as usize, "sleepy is mostly idle: {idle}");
}

#[test]
fn firefox_check_rejects_a_broken_profile() {
    // The structural check can fail: a dangling frame index and a wrong version are caught.
    let (dir, path, _) = recorded();
    let out = dir.path().join("broken.firefox.json");
    export(path, "firefox", &out);
    let mut p = json(&out);
    p["threads"][0]["stackTable"]["frame"][0] = Value::from(1_000_000);
    assert!(check_firefox(&p).unwrap_err().contains("stackTable.frame"));
    let mut p = json(&out);
    p["meta"]["preprocessedProfileVersion"] = Value::from(12);
    assert!(check_firefox(&p).is_err());
}

// ------------------------------------------------------------------------------------------
// Perfetto / Chrome JSON trace
// ------------------------------------------------------------------------------------------

/// The Trace Event Format's rules a viewer relies on: named threads, B/E pairs and complete (X)
/// slices that nest per thread — complete slices in the order they begin, each inside the one it
/// starts in — timestamps that never go back on a thread, state slices outermost, async b/e pairs,
/// flows (v2 `bind_id`) with one start and one later end. Returns per-tid (name, state slices).
fn check_trace(p: &Value) -> Result<HashMap<u64, (String, usize)>, String> {
    let events = p["traceEvents"].as_array().ok_or("traceEvents missing")?;
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut depth: HashMap<u64, (usize, f64, usize)> = HashMap::new();
    let mut open_async: HashMap<(String, String, String, String), (usize, f64)> = HashMap::new();
    let mut flows: HashMap<u64, (Option<f64>, Option<f64>)> = HashMap::new();
    // Per tid, the ends of the complete slices open at the last begin (integer nanoseconds).
    let mut nest: HashMap<u64, Vec<u64>> = HashMap::new();
    for e in events {
        let ph = e["ph"].as_str().ok_or(format!("event without ph: {e}"))?;
        let tid = e["tid"].as_u64().ok_or(format!("event without tid: {e}"))?;
        e["pid"].as_u64().ok_or(format!("event without pid: {e}"))?;
        match ph {
            "M" => {
                if e["name"] == "thread_name" {
                    names.insert(tid, e["args"]["name"].as_str().ok_or("thread_name without args.name")?.to_string());
                }
            }
            "B" | "E" => {
                let ts = e["ts"].as_f64().ok_or(format!("{ph} without ts"))?;
                let d = depth.entry(tid).or_insert((0, f64::MIN, 0));
                if ts < d.1 {
                    return Err(format!("tid {tid}: time goes back from {} to {ts}", d.1));
                }
                d.1 = ts;
                if ph == "B" {
                    e["name"].as_str().ok_or("B without name")?;
                    if e["cat"] == "state" {
                        if d.0 != 0 {
                            return Err(format!("tid {tid}: a state slice is not outermost"));
                        }
                        d.2 += 1;
                    }
                    d.0 += 1;
                } else {
                    if d.0 == 0 {
                        return Err(format!("tid {tid}: E without B at {ts}"));
                    }
                    d.0 -= 1;
                }
            }
            // Complete events: the sampled slices, and zero-length ones carrying the wake-up
            // flows (flow events v2).
            "X" => {
                let ts = e["ts"].as_f64().ok_or("X without ts")?;
                e["name"].as_str().ok_or("X without name")?;
                if e["dur"].as_f64().is_none_or(|d| d < 0.0) {
                    return Err(format!("X without a duration: {e}"));
                }
                if e.get("bind_id").is_none() {
                    let (begin, end) = ((ts * 1000.0).round() as u64, ((ts + e["dur"].as_f64().unwrap()) * 1000.0).round() as u64);
                    let d = depth.entry(tid).or_insert((0, f64::MIN, 0));
                    if ts < d.1 {
                        return Err(format!("tid {tid}: time goes back from {} to {ts}", d.1));
                    }
                    d.1 = ts;
                    let open = nest.entry(tid).or_default();
                    while open.last().is_some_and(|&x| x <= begin) {
                        open.pop();
                    }
                    if let Some(&outer) = open.last() {
                        if end > outer {
                            return Err(format!("tid {tid}: a slice at {ts} ends after the slice it starts in"));
                        }
                    }
                    if e["cat"] == "state" {
                        if !open.is_empty() {
                            return Err(format!("tid {tid}: a state slice is not outermost"));
                        }
                        d.2 += 1;
                    }
                    open.push(end);
                }
                if let Some(id) = e.get("bind_id") {
                    let id = id.as_u64().ok_or(format!("bind_id is not a number: {e}"))?;
                    let (out, inn) = (e["flow_out"] == true, e["flow_in"] == true);
                    if out == inn {
                        return Err(format!("flow {id}: an event must be flow_out or flow_in: {e}"));
                    }
                    let slot = flows.entry(id).or_insert((None, None));
                    let side = if out { &mut slot.0 } else { &mut slot.1 };
                    if side.replace(e["ts"].as_f64().unwrap()).is_some() {
                        return Err(format!("flow {id}: two events on one side"));
                    }
                }
            }
            // Async slices (waits, critical sections): begin and end pair up by category, id and
            // name, in time order.
            "b" | "e" => {
                let ts = e["ts"].as_f64().ok_or(format!("{ph} without ts"))?;
                let key = (e["pid"].to_string(), e["cat"].as_str().ok_or("async event without cat")?.to_string(), e["id"].as_str().ok_or("async event without id")?.to_string(), e["name"].as_str().ok_or("async event without name")?.to_string());
                let a = open_async.entry(key.clone()).or_insert((0, f64::MIN));
                if ts < a.1 {
                    return Err(format!("async {key:?}: time goes back from {} to {ts}", a.1));
                }
                a.1 = ts;
                if ph == "b" {
                    a.0 += 1;
                } else if a.0 == 0 {
                    return Err(format!("async {key:?}: end without begin at {ts}"));
                } else {
                    a.0 -= 1;
                }
            }
            other => return Err(format!("unexpected phase {other}")),
        }
    }
    for (tid, d) in &depth {
        if d.0 != 0 {
            return Err(format!("tid {tid}: {} slices left open", d.0));
        }
    }
    for (key, a) in &open_async {
        if a.0 != 0 {
            return Err(format!("async {key:?}: {} slices left open", a.0));
        }
    }
    for (id, (out, inn)) in &flows {
        match (out, inn) {
            // Strictly later: a reader that sorts events by time must see the start first.
            (Some(o), Some(i)) if i > o => {}
            _ => return Err(format!("flow {id}: not one start and one later end ({out:?}, {inn:?})")),
        }
    }
    Ok(names.into_iter().map(|(tid, n)| (tid, (n.clone(), depth.get(&tid).map_or(0, |d| d.2)))).collect())
}

#[test]
fn chrome_trace_names_threads_and_nests_stacks_under_states() {
    let (dir, path, run) = recorded();
    let out = dir.path().join("threads.trace.json");
    export(path, "chrome", &out);
    let p = json(&out);
    let threads = check_trace(&p).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    for t in &run.threads {
        let (name, states) = &threads[&(t.tid as u64)];
        assert_eq!(name, &t.name);
        assert!(*states > 0, "{name} has state slices");
    }
    assert!(p["otherData"]["note"].as_str().unwrap().contains("inferred from samples"));
    // The idle thread's state slices name the blocking call.
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("\"Idle (") || text.contains("\"Idle\""), "idle state slices present");
}

#[test]
fn chrome_trace_check_can_fail() {
    let bad: Value = serde_json::json!({"traceEvents": [
        {"ph": "B", "pid": 1, "tid": 1, "ts": 5.0, "name": "a", "cat": "state"},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 4.0}
    ]});
    assert!(check_trace(&bad).unwrap_err().contains("goes back"));
    let open: Value = serde_json::json!({"traceEvents": [{"ph": "B", "pid": 1, "tid": 1, "ts": 5.0, "name": "a"}]});
    assert!(check_trace(&open).is_err());
    // Complete slices: a child outliving its parent, a child written before its parent, a state
    // slice inside a frame's.
    let x = |ts: f64, dur: f64, cat: &str| serde_json::json!({"ph": "X", "pid": 1, "tid": 1, "ts": ts, "dur": dur, "name": "a", "cat": cat});
    let trace = |events: Vec<Value>| serde_json::json!({ "traceEvents": events });
    assert!(check_trace(&trace(vec![x(1.0, 2.0, "state"), x(1.0, 1.0, "python"), x(3.0, 1.0, "state")])).is_ok());
    assert!(check_trace(&trace(vec![x(1.0, 2.0, "state"), x(2.0, 2.0, "python")])).unwrap_err().contains("ends after"));
    assert!(check_trace(&trace(vec![x(2.0, 1.0, "python"), x(1.0, 2.0, "state")])).unwrap_err().contains("goes back"));
    assert!(check_trace(&trace(vec![x(1.0, 2.0, "python"), x(1.0, 1.0, "state")])).unwrap_err().contains("not outermost"));
}

// ------------------------------------------------------------------------------------------
// Perfetto protobuf trace
// ------------------------------------------------------------------------------------------

use threadradar_formats::perfetto::proto::{self as pf, Trace};

fn perfetto(path: &Path) -> Trace {
    let bytes = std::fs::read(path).unwrap();
    threadradar_formats::perfetto::read(&bytes).unwrap_or_else(|e| panic!("{} does not decode as a Perfetto trace: {e}", path.display()))
}

/// What a Perfetto trace holds, per thread track: (name, state slices) by tid, and each
/// thread's slice events as `(true, ts_ns, name)` / `(false, ts_ns, "")` in file order; per child
/// track of a thread (by the thread's tid and the track's name) its events `(type, ts_ns, name)`;
/// and the flows that start (`flow_ids`) and end (`terminating_flow_ids`) at events, as
/// `(flow id, tid of the event's thread, ts_ns, event name)`.
#[derive(Debug)]
struct CheckedTrace {
    threads: HashMap<u64, (String, usize)>,
    events: HashMap<u64, Vec<(bool, u64, String)>>,
    children: HashMap<(u64, String), Vec<(i32, u64, String)>>,
    flows_out: Vec<(u64, u64, u64, String)>,
    flows_in: Vec<(u64, u64, u64, String)>,
    names: Vec<String>,
}

/// The rules trace_processor applies to TrackEvent traces (perfetto.dev/docs "Converting
/// arbitrary timestamped data to Perfetto"): one packet sequence whose first packet clears the
/// incremental state, interned names defined before use, events on declared tracks, thread tracks
/// with a tid and a name, child tracks whose parent is declared before them, slices that begin and
/// end in nested order with time never going back on a track, state slices outermost on thread
/// tracks, instants only on child tracks, every flow started once and ended once, later.
fn check_perfetto(trace: &Trace) -> Result<CheckedTrace, String> {
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut cats: HashMap<u64, String> = HashMap::new();
    let mut tracks: HashMap<u64, Option<(u64, String)>> = HashMap::new();
    // Child tracks: uuid → (the parent thread's tid, the track's name).
    let mut children: HashMap<u64, (u64, String)> = HashMap::new();
    let mut out = CheckedTrace { threads: HashMap::new(), events: HashMap::new(), children: HashMap::new(), flows_out: Vec::new(), flows_in: Vec::new(), names: Vec::new() };
    let mut depth: HashMap<u64, (usize, u64)> = HashMap::new();
    for (i, p) in trace.packet.iter().enumerate() {
        if p.trusted_packet_sequence_id != Some(1) {
            return Err(format!("packet {i} is not on the trace's sequence"));
        }
        let flags = p.sequence_flags.unwrap_or(0);
        if i == 0 && flags & pf::SEQ_INCREMENTAL_STATE_CLEARED == 0 {
            return Err("the first packet does not clear the incremental state".into());
        }
        if let Some(d) = &p.interned_data {
            for n in &d.event_names {
                let iid = n.iid.ok_or("interned name without iid")?;
                if names.insert(iid, n.name.clone().ok_or("interned name without a name")?).is_some() {
                    return Err(format!("name iid {iid} interned twice"));
                }
            }
            for c in &d.event_categories {
                cats.insert(c.iid.ok_or("category without iid")?, c.name.clone().unwrap_or_default());
            }
        }
        if let Some(td) = &p.track_descriptor {
            let uuid = td.uuid.ok_or("track without uuid")?;
            let thread = match &td.thread {
                Some(t) => Some((t.tid.ok_or("thread track without tid")? as u64, t.thread_name.clone().ok_or("thread track without name")?)),
                None => None,
            };
            if let (None, Some(parent)) = (&thread, td.parent_uuid) {
                if let Some(Some((tid, _))) = tracks.get(&parent) {
                    children.insert(uuid, (*tid, td.name.clone().ok_or(format!("child track {uuid} without a name"))?));
                } else if !tracks.contains_key(&parent) {
                    return Err(format!("track {uuid}: parent {parent} is not declared before it"));
                }
            }
            tracks.insert(uuid, thread);
        }
        if let Some(e) = &p.track_event {
            let uuid = e.track_uuid.ok_or(format!("packet {i}: event without a track"))?;
            let thread = tracks.get(&uuid).ok_or(format!("packet {i}: event on undeclared track {uuid}"))?;
            let ts = p.timestamp.ok_or(format!("packet {i}: event without timestamp"))?;
            let named = |what: &str| -> Result<String, String> {
                if flags & pf::SEQ_NEEDS_INCREMENTAL_STATE == 0 {
                    return Err(format!("packet {i} uses interned names without needing incremental state"));
                }
                let iid = e.name_iid.ok_or(format!("packet {i}: {what} without name"))?;
                names.get(&iid).cloned().ok_or(format!("packet {i}: name iid {iid} used before it was interned"))
            };
            if let Some((tid, track_name)) = children.get(&uuid).cloned() {
                let d = depth.entry(uuid).or_insert((0, 0));
                if ts < d.1 {
                    return Err(format!("track {track_name:?} of tid {tid}: time goes back from {} to {ts}", d.1));
                }
                d.1 = ts;
                let name = match e.r#type {
                    Some(pf::TYPE_SLICE_BEGIN) => {
                        e.category_iids.first().and_then(|c| cats.get(c)).ok_or(format!("packet {i}: slice without category"))?;
                        d.0 += 1;
                        named("slice")?
                    }
                    Some(pf::TYPE_SLICE_END) => {
                        if d.0 == 0 {
                            return Err(format!("track {track_name:?} of tid {tid}: slice end without begin at {ts}"));
                        }
                        d.0 -= 1;
                        String::new()
                    }
                    Some(pf::TYPE_INSTANT) => named("instant")?,
                    other => return Err(format!("packet {i}: unexpected event type {other:?}")),
                };
                for &id in &e.flow_ids {
                    out.flows_out.push((id, tid, ts, name.clone()));
                }
                for &id in &e.terminating_flow_ids {
                    out.flows_in.push((id, tid, ts, name.clone()));
                }
                out.children.entry((tid, track_name)).or_default().push((e.r#type.unwrap_or(0), ts, name));
                continue;
            }
            let Some((tid, tname)) = thread.clone() else { continue };
            if !e.flow_ids.is_empty() || !e.terminating_flow_ids.is_empty() {
                return Err(format!("packet {i}: a flow on the samples' track of tid {tid}"));
            }
            let entry = out.threads.entry(tid).or_insert((tname, 0));
            let d = depth.entry(uuid).or_insert((0, 0));
            if ts < d.1 {
                return Err(format!("tid {tid}: time goes back from {} to {ts}", d.1));
            }
            d.1 = ts;
            match e.r#type {
                Some(pf::TYPE_SLICE_BEGIN) => {
                    let name = named("slice")?;
                    let cat = e.category_iids.first().and_then(|c| cats.get(c)).ok_or(format!("packet {i}: slice without category"))?;
                    if cat == "state" {
                        if d.0 != 0 {
                            return Err(format!("tid {tid}: a state slice is not outermost"));
                        }
                        entry.1 += 1;
                    }
                    d.0 += 1;
                    out.events.entry(tid).or_default().push((true, ts, name));
                }
                Some(pf::TYPE_SLICE_END) => {
                    if d.0 == 0 {
                        return Err(format!("tid {tid}: slice end without begin at {ts}"));
                    }
                    d.0 -= 1;
                    out.events.entry(tid).or_default().push((false, ts, String::new()));
                }
                other => return Err(format!("packet {i}: unexpected event type {other:?} on a thread track")),
            }
        }
    }
    for (uuid, d) in &depth {
        if d.0 != 0 {
            return Err(format!("track {uuid}: {} slices left open", d.0));
        }
    }
    // Every flow starts once and ends once, not before it starts.
    let mut starts: HashMap<u64, u64> = HashMap::new();
    for (id, _, ts, _) in &out.flows_out {
        if starts.insert(*id, *ts).is_some() {
            return Err(format!("flow {id} starts twice"));
        }
    }
    let mut ended = std::collections::HashSet::new();
    for (id, _, ts, _) in &out.flows_in {
        let start = starts.get(id).ok_or(format!("flow {id} ends without a start"))?;
        // Strictly later: trace_processor sorts events by time and ends only an active flow.
        if ts <= start || !ended.insert(*id) {
            return Err(format!("flow {id} does not end after it starts, or ends twice"));
        }
    }
    if ended.len() != starts.len() {
        return Err(format!("{} flows start, {} end", starts.len(), ended.len()));
    }
    out.names = names.into_values().collect();
    Ok(out)
}

#[test]
fn perfetto_trace_decodes_with_named_thread_tracks_and_the_chrome_traces_slices() {
    let (dir, path, run) = recorded();
    let out = dir.path().join("threads.pftrace");
    export(path, "perfetto", &out);
    let trace = perfetto(&out);
    let checked = check_perfetto(&trace).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    for t in &run.threads {
        let (name, states) = &checked.threads[&(t.tid as u64)];
        assert_eq!(name, &t.name);
        assert!(*states > 0, "{name} has state slices");
    }
    // How it was obtained travels in the file.
    assert!(trace.packet.iter().filter_map(|p| p.track_event.as_ref()).any(|e| e.name.as_deref().is_some_and(|n| n.contains("inferred from samples"))));
    // The same slices, at the same nanoseconds, as the Chrome JSON trace of the same run.
    let js = dir.path().join("threads-for-perfetto.trace.json");
    export(path, "chrome", &js);
    // The complete slices as begins and ends in time order: a slice's end comes before the next
    // slice that begins at or after it.
    let mut want: HashMap<u64, Vec<(bool, u64, String)>> = HashMap::new();
    let mut open: HashMap<u64, Vec<u64>> = HashMap::new();
    for e in json(&js)["traceEvents"].as_array().unwrap() {
        if e["ph"] == "X" && e.get("bind_id").is_none() {
            let tid = e["tid"].as_u64().unwrap();
            let ts = (e["ts"].as_f64().unwrap() * 1000.0).round() as u64;
            let end = ((e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap()) * 1000.0).round() as u64;
            let (events, open) = (want.entry(tid).or_default(), open.entry(tid).or_default());
            while open.last().is_some_and(|&x| x <= ts) {
                events.push((false, open.pop().unwrap(), String::new()));
            }
            events.push((true, ts, e["name"].as_str().unwrap().to_string()));
            open.push(end);
        }
    }
    for (tid, ends) in &mut open {
        while let Some(x) = ends.pop() {
            want.get_mut(tid).unwrap().push((false, x, String::new()));
        }
    }
    assert_eq!(checked.events, want);
    // The samples' slices are smaller than in the JSON they replace (the overlay aside: the
    // scheduler's states are only in the protobuf, and its child tracks follow the thread tracks).
    let thread_tracks: std::collections::HashSet<u64> = trace.packet.iter().filter_map(|p| p.track_descriptor.as_ref()).filter(|t| t.thread.is_some()).filter_map(|t| t.uuid).collect();
    let samples_only = Trace {
        packet: trace.packet.iter().filter(|p| p.track_event.as_ref().is_none_or(|e| e.track_uuid.is_some_and(|u| thread_tracks.contains(&u)))).cloned().collect(),
    };
    let pb = threadradar_formats::perfetto::encoded_len(&samples_only);
    let text = std::fs::read_to_string(&js).unwrap();
    let js: usize = text.lines().filter(|l| !["\"cat\":\"wait\"", "\"cat\":\"wakeup\"", "\"cat\":\"section\""].iter().any(|c| l.contains(c))).map(|l| l.len() + 1).sum();
    assert!(pb * 2 < js, "protobuf {pb} bytes against JSON {js} bytes");
}

#[test]
fn perfetto_check_can_fail() {
    let (dir, path, _) = recorded();
    let out = dir.path().join("broken.pftrace");
    export(path, "perfetto", &out);
    let mut trace = perfetto(&out);
    // Drop the first slice end: a slice is left open (or a later end unbalances the nesting).
    let first_end = trace.packet.iter().position(|p| p.track_event.as_ref().is_some_and(|e| e.r#type == Some(pf::TYPE_SLICE_END))).unwrap();
    let mut broken = trace.clone();
    broken.packet.remove(first_end);
    assert!(check_perfetto(&broken).is_err());
    // A name used before it is interned.
    let first_intern = trace.packet.iter().position(|p| p.interned_data.as_ref().is_some_and(|d| !d.event_names.is_empty())).unwrap();
    trace.packet.remove(first_intern);
    assert!(check_perfetto(&trace).unwrap_err().contains("before it was interned"));
}

// ------------------------------------------------------------------------------------------
// speedscope
// ------------------------------------------------------------------------------------------

/// speedscope's own schema (from its npm package, installed by tests/run_all.sh) through ajv.
fn validate_speedscope(files: &[&Path]) -> std::process::Output {
    let dir = repo().join("tests/formats");
    assert!(
        dir.join("node_modules/speedscope").exists() && dir.join("node_modules/ajv").exists(),
        "the speedscope schema and ajv are not installed: run `npm ci` in tests/formats (tests/run_all.sh does)"
    );
    Command::new("node").arg(dir.join("validate-speedscope.mjs")).args(files).output().expect("running node")
}

#[test]
fn speedscope_file_passes_speedscope_schema_and_lines_threads_up() {
    let (dir, path, run) = recorded();
    let out = dir.path().join("threads.speedscope.json");
    export(path, "speedscope", &out);
    let v = validate_speedscope(&[&out]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    let p = json(&out);
    let mut got = HashMap::new();
    let mut starts = Vec::new();
    for prof in p["profiles"].as_array().unwrap() {
        let name = prof["name"].as_str().unwrap();
        let (n, tid) = name.rsplit_once(" (").unwrap();
        got.insert((n.to_string(), tid.trim_end_matches(')').parse().unwrap()), prof["samples"].as_array().unwrap().len() as u64);
        assert_eq!(prof["unit"], "nanoseconds");
        let weights: u64 = prof["weights"].as_array().unwrap().iter().map(|w| w.as_u64().unwrap()).sum();
        let span = prof["endValue"].as_u64().unwrap() - prof["startValue"].as_u64().unwrap();
        assert!(weights <= span, "weights fit in the profile's span");
        starts.push(prof["startValue"].as_u64().unwrap());
    }
    assert_eq!(got, samples_per_thread(run));
    // Real start times: threads started after the main thread do not start at 0.
    assert!(starts.iter().any(|&s| s > 0), "threads keep their real start: {starts:?}");
}

#[test]
fn speedscope_schema_check_can_fail() {
    // py-spy 0.4.3's own output has `"col": null` and `"activeProfileIndex": null`, which the
    // schema does not allow: the validator really checks.
    let fixture = repo().join("tests/fixtures/formats/pyspy.speedscope.json");
    let v = validate_speedscope(&[&fixture]);
    assert!(!v.status.success());
    assert!(String::from_utf8_lossy(&v.stdout).contains("INVALID"));
}

// ------------------------------------------------------------------------------------------
// pprof
// ------------------------------------------------------------------------------------------

/// Total of the first sample value (`samples/count`) that `go tool pprof -raw` prints.
fn pprof_raw_total(file: &Path, extra: &[&str]) -> Result<u64, String> {
    let o = Command::new("go")
        .args(["tool", "pprof", "-raw"])
        .args(extra)
        .arg(file)
        .env("HOME", std::env::temp_dir())
        .output()
        .map_err(|e| format!("go is not installed ({e}): tests/run_all.sh installs Debian's golang-go"))?;
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&o.stdout);
    let mut in_samples = false;
    let mut total = 0;
    for line in text.lines() {
        if line.starts_with("Samples:") {
            in_samples = true;
            continue;
        }
        if line.starts_with("Locations") {
            break;
        }
        if in_samples {
            if let Some((vals, _)) = line.split_once(':') {
                if let Some(n) = vals.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()) {
                    total += n;
                }
            }
        }
    }
    Ok(total)
}

#[test]
fn pprof_reads_in_go_tool_pprof_with_thread_labels() {
    let (dir, path, run) = recorded();
    let out = dir.path().join("threads.pb.gz");
    export(path, "pprof", &out);
    let total: u64 = run.samples.iter().map(|s| s.threads.len() as u64).sum();
    assert_eq!(pprof_raw_total(&out, &[]).unwrap(), total);
    for ((name, _), n) in samples_per_thread(run) {
        assert_eq!(pprof_raw_total(&out, &[&format!("-tagfocus=thread_name={name}")]).unwrap(), n, "thread {name}");
    }
    // States as labels: the idle samples of every thread.
    let idle = common::count_by_name(run, ThreadState::Idle).values().sum::<u64>();
    assert_eq!(pprof_raw_total(&out, &["-tagfocus=state=idle"]).unwrap(), idle);
    // Thread types and clusters are labels too.
    let heavy_type = pprof_raw_total(&out, &["-tagfocus=thread_type=Cruncher"]).unwrap();
    let crunchers: u64 = samples_per_thread(run).iter().filter(|((n, _), _)| n == "heavy" || n == "light").map(|(_, c)| c).sum();
    assert_eq!(heavy_type, crunchers);
    assert!(pprof_raw_total(&out, &["-tagfocus=cluster=high"]).unwrap() > 0, "some thread is in the high cluster");
    // A corrupt file is refused by the real tool (the check can fail).
    let bad = dir.path().join("bad.pb.gz");
    let bytes = std::fs::read(&out).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    assert!(pprof_raw_total(&bad, &[]).is_err());
}

// ------------------------------------------------------------------------------------------
// Collapsed stacks
// ------------------------------------------------------------------------------------------

#[test]
fn collapsed_stacks_put_the_thread_at_the_root() {
    let (dir, path, run) = recorded();
    let out = dir.path().join("threads.folded");
    export(path, "collapsed", &out);
    let text = std::fs::read_to_string(&out).unwrap();
    let mut got: HashMap<(String, u32), u64> = HashMap::new();
    for line in text.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        let root = stack.split(';').next().unwrap();
        let (name, tid) = root.rsplit_once(" (").unwrap();
        *got.entry((name.to_string(), tid.trim_end_matches(')').parse().unwrap())).or_insert(0) += n.parse::<u64>().unwrap();
    }
    assert_eq!(got, samples_per_thread(run));
    assert!(text.contains(";Cruncher.run (threads.py:"), "frames are `qualname (file:line)`");
}

// ------------------------------------------------------------------------------------------
// Hostile names, round trips, bad input
// ------------------------------------------------------------------------------------------

#[test]
fn hostile_names_survive_escaped_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let run_path = hostile_run(dir.path());
    // JSON formats: the exact names come back after decoding.
    let ff = dir.path().join("h.firefox.json");
    export(&run_path, "firefox", &ff);
    let p = json(&ff);
    check_firefox(&p).unwrap();
    assert!(p["threads"].as_array().unwrap().iter().any(|t| t["name"] == HOSTILE_THREAD));
    // … and come back exactly when the profile is imported.
    let back = dir.path().join("h.back.json");
    let o = threadradar(dir.path(), &["import", ff.to_str().unwrap(), "-o", back.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let imported = read(&back);
    assert!(imported.threads.iter().any(|t| t.name == HOSTILE_THREAD && t.tid == 11), "{:?}", imported.threads);
    assert!(imported.functions.iter().any(|f| imported.str(f.qualname) == HOSTILE_FUNC));
    let tr = dir.path().join("h.trace.json");
    export(&run_path, "chrome", &tr);
    let threads = check_trace(&json(&tr)).unwrap();
    assert_eq!(threads[&11].0, HOSTILE_THREAD);
    let label = format!("{HOSTILE_FUNC} (<evil>;\n.py:4)");
    assert!(json(&tr)["traceEvents"].as_array().unwrap().iter().any(|e| e["name"] == label.as_str()), "the frame's exact name decodes back");
    // Perfetto protobuf: strings are bytes; the exact names decode back.
    let pf = dir.path().join("h.pftrace");
    export(&run_path, "perfetto", &pf);
    let checked = check_perfetto(&perfetto(&pf)).unwrap();
    assert_eq!(checked.threads[&11].0, HOSTILE_THREAD);
    assert!(checked.names.iter().any(|n| n == &label), "the frame's exact name decodes back");
    let ss = dir.path().join("h.speedscope.json");
    export(&run_path, "speedscope", &ss);
    let v = validate_speedscope(&[&ss]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    assert!(json(&ss)["profiles"].as_array().unwrap().iter().any(|p| p["name"] == format!("{HOSTILE_THREAD} (11)")));
    // pprof: strings are protobuf bytes; go tool pprof reads them and filters by label.
    let pp = dir.path().join("h.pb.gz");
    export(&run_path, "pprof", &pp);
    assert_eq!(pprof_raw_total(&pp, &[]).unwrap(), 100);
    assert_eq!(pprof_raw_total(&pp, &["-tagfocus=thread_name=script"]).unwrap(), 50);
    // Folded stacks: `;` and line breaks would split frames and lines; they are replaced.
    let fo = dir.path().join("h.folded");
    export(&run_path, "collapsed", &fo);
    let text = std::fs::read_to_string(&fo).unwrap();
    for line in text.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        n.parse::<u64>().unwrap();
        assert!(stack.split(';').count() <= 3, "no frame was split: {line}");
    }
    assert!(text.contains("<script>alert(\"t\")</script>: x y (11);main (<evil>: .py:12);\"><img src=x onerror=alert(1)>:f (<evil>: .py:4) "));
}

#[test]
fn exports_round_trip_through_their_importers() {
    let (dir, path, run) = recorded();
    let want = samples_per_thread(run);
    for (format, file) in [("collapsed", "rt.folded"), ("speedscope", "rt.speedscope.json"), ("firefox", "rt.firefox.json")] {
        let out = dir.path().join(file);
        export(path, format, &out);
        let back = dir.path().join(format!("rt-{format}.json"));
        let o = threadradar(dir.path(), &["import", out.to_str().unwrap(), "-o", back.to_str().unwrap()]);
        assert!(o.status.success(), "import of the {format} export: {}", stderr(&o));
        let imported = read(&back);
        assert_eq!(samples_per_thread(&imported), want, "{format}: same threads, same per-thread sample counts");
        let note = &imported.meta.imported.as_ref().unwrap().note;
        if format == "firefox" {
            // The export's own categories are read back as thread states: the same samples per
            // thread and state (a sample without any frame carries no category: computing).
            assert_eq!(states_per_thread(&imported), states_per_thread(run), "firefox: same samples per thread and state");
            assert!(!note.contains("every sample counts as computing"), "{note}");
        } else {
            assert!(note.contains("thread states"), "{note}");
        }
        if format == "firefox" {
            // The processed profile keeps times and every stack, frame by frame.
            assert_eq!(stacks_per_thread(&imported), stacks_per_thread(run), "firefox: same stacks per thread");
            // … and the sample times, to the microsecond (the format stores milliseconds as floats).
            let times = |r: &Run| -> HashMap<u32, Vec<u64>> {
                let mut m: HashMap<u32, Vec<u64>> = HashMap::new();
                for s in &r.samples {
                    for t in &s.threads {
                        m.entry(r.threads[t.thread as usize].tid).or_default().push(s.t);
                    }
                }
                m
            };
            let (want_t, got_t) = (times(run), times(&imported));
            for (tid, w) in &want_t {
                let g = &got_t[tid];
                assert_eq!(g.len(), w.len());
                assert!(w.iter().zip(g).all(|(a, b)| a.abs_diff(*b) <= 1_000), "thread {tid}: times differ by more than 1 µs");
            }
        }
    }
}

/// Per (thread name, tid, state): samples; those without any frame count as computing (no
/// format carries the state of a sample without frames).
fn states_per_thread(run: &Run) -> HashMap<(String, u32, ThreadState), u64> {
    let mut m = HashMap::new();
    for s in &run.samples {
        for t in &s.threads {
            let th = &run.threads[t.thread as usize];
            let state = if t.stack.is_some() { t.state } else { ThreadState::Computing };
            *m.entry((th.name.clone(), th.tid, state)).or_insert(0) += 1;
        }
    }
    m
}

/// Per thread (name, tid): how many samples had each stack, as (function, line) outermost first.
fn stacks_per_thread(run: &Run) -> HashMap<(String, u32), HashMap<Vec<(String, u32)>, u64>> {
    let mut m: HashMap<(String, u32), HashMap<Vec<(String, u32)>, u64>> = HashMap::new();
    for s in &run.samples {
        for t in &s.threads {
            let th = &run.threads[t.thread as usize];
            let mut frames = Vec::new();
            let mut next = t.stack;
            while let Some(id) = next {
                let node = &run.stacks[id as usize];
                let fr = &run.frames[node.frame as usize];
                frames.push((run.str(run.functions[fr.function as usize].qualname).to_string(), fr.line));
                next = node.parent;
            }
            frames.reverse();
            *m.entry((th.name.clone(), th.tid)).or_default().entry(frames).or_insert(0) += 1;
        }
    }
    m
}

#[test]
fn an_empty_run_exports_to_valid_empty_files() {
    // A run with no samples (the program exited before the first tick) still gives files every
    // tool opens: no threads, no samples, no error.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.json");
    threadradar_profiler::runfile::write(&Run::new(Meta { interval_ms: 3.0, ..Meta::default() }), &path).unwrap();
    let ff = dir.path().join("e.firefox.json");
    export(&path, "firefox", &ff);
    check_firefox(&json(&ff)).unwrap();
    let tr = dir.path().join("e.trace.json");
    export(&path, "chrome", &tr);
    assert!(check_trace(&json(&tr)).unwrap().is_empty());
    let pf = dir.path().join("e.pftrace");
    export(&path, "perfetto", &pf);
    assert!(check_perfetto(&perfetto(&pf)).unwrap().threads.is_empty());
    let ss = dir.path().join("e.speedscope.json");
    export(&path, "speedscope", &ss);
    let v = validate_speedscope(&[&ss]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    let pp = dir.path().join("e.pb.gz");
    export(&path, "pprof", &pp);
    assert_eq!(pprof_raw_total(&pp, &[]).unwrap(), 0);
    let fo = dir.path().join("e.folded");
    export(&path, "collapsed", &fo);
    assert_eq!(std::fs::read_to_string(&fo).unwrap(), "");
}

#[test]
fn bad_runs_and_formats_get_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let trunc = dir.path().join("cut.json");
    std::fs::write(&trunc, br#"{"format":"threadradar-run","version":1,"meta":{"#).unwrap();
    let o = threadradar(dir.path(), &["export", trunc.to_str().unwrap(), "--format", "pprof", "-o", "x.pb.gz"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("truncated") && e.lines().count() == 1, "{e}");
    assert!(!dir.path().join("x.pb.gz").exists(), "nothing is written for a bad run");
    let o = threadradar(dir.path(), &["export", trunc.to_str().unwrap(), "--format", "svg"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("firefox"), "the formats are listed: {}", stderr(&o));
}

// ------------------------------------------------------------------------------------------
// Waits, wake-ups, scheduler states and critical sections
// ------------------------------------------------------------------------------------------

/// One real recording of tests/scripts/handoffs.py (five hand-offs between named threads: a lock,
/// a condition, an event, a queue, a pipe), with the scheduler's events as tests/waits.rs records
/// it, and its waits view (`threadradar waits RUN --json`).
fn handoffs() -> &'static (tempfile::TempDir, PathBuf, Run, Value) {
    static RUN: OnceLock<(tempfile::TempDir, PathBuf, Run, Value)> = OnceLock::new();
    RUN.get_or_init(|| {
        let _g = serial();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("handoffs.json");
        let o = record(&out, &["--sched", "--interval-ms", "2"], &[&script("handoffs.py"), "8"]);
        assert!(o.status.success(), "record failed: {}", stderr(&o));
        let run = read(&out);
        let w = threadradar(dir.path(), &["waits", out.to_str().unwrap(), "--json"]);
        assert!(w.status.success(), "{}", stderr(&w));
        let view: Value = serde_json::from_slice(&w.stdout).unwrap();
        (dir, out, run, view)
    })
}

/// A Firefox profile's markers of one type: (thread name, marker name, data with the thread's
/// string fields resolved).
fn firefox_markers(p: &Value, ty: &str) -> Vec<(String, String, Value)> {
    let schema = p["meta"]["markerSchema"].as_array().unwrap().iter().find(|m| m["name"] == ty).cloned();
    let mut out = Vec::new();
    for t in p["threads"].as_array().unwrap() {
        let strings = t["stringArray"].as_array().unwrap();
        let m = &t["markers"];
        for i in 0..m["length"].as_u64().unwrap() as usize {
            let mut d = m["data"][i].clone();
            if d["type"] != ty {
                continue;
            }
            for f in schema.as_ref().unwrap()["fields"].as_array().unwrap() {
                if matches!(f["format"].as_str(), Some("unique-string" | "flow-id" | "terminating-flow-id")) {
                    let k = f["key"].as_str().unwrap();
                    d[k] = strings[d[k].as_u64().unwrap() as usize].clone();
                }
            }
            out.push((t["name"].as_str().unwrap().to_string(), strings[m["name"][i].as_u64().unwrap() as usize].as_str().unwrap().to_string(), d));
        }
    }
    out
}

/// (waker, wakee, evidence) of each edge, sorted.
fn edge_triples(view: &Value) -> Vec<(String, String, String)> {
    let mut v: Vec<_> = view["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["waker"].as_str().unwrap().to_string(), e["wakee"].as_str().unwrap().to_string(), e["evidence"].as_str().unwrap().to_string()))
        .collect();
    v.sort();
    v
}

/// `wakes NAME (EVIDENCE)` → (NAME, EVIDENCE).
fn split_flow_name<'a>(name: &'a str, prefix: &str) -> (&'a str, &'a str) {
    let rest = name.strip_prefix(prefix).unwrap_or_else(|| panic!("{name:?} does not start with {prefix:?}"));
    let (who, ev) = rest.rsplit_once(" (").unwrap();
    (who, ev.trim_end_matches(')'))
}

#[test]
fn wake_up_edges_are_flows_in_firefox_perfetto_and_chrome() {
    let (dir, path, run, view) = handoffs();
    let edges = view["edges"].as_array().unwrap();
    assert!(!edges.is_empty(), "handoffs.py has wake-ups");
    let want = edge_triples(view);
    let tid_of = |name: &str| run.threads.iter().find(|t| t.name == name).map(|t| t.tid as u64).unwrap();

    // Firefox: a ThreadRadarWakes marker on the waker and a ThreadRadarWokenBy marker on the
    // wakee per edge, related by their `flow` field, whose schema format is `flow-id`.
    let ff = dir.path().join("handoffs.firefox.json");
    export(path, "firefox", &ff);
    let p = json(&ff);
    check_firefox(&p).unwrap();
    for ty in ["ThreadRadarWakes", "ThreadRadarWokenBy"] {
        let schema = p["meta"]["markerSchema"].as_array().unwrap().iter().find(|m| m["name"] == ty).unwrap_or_else(|| panic!("no {ty} schema"));
        let flow = schema["fields"].as_array().unwrap().iter().find(|f| f["key"] == "flow").unwrap();
        assert_eq!(flow["format"], "flow-id", "{ty}: {schema}");
    }
    let wakes = firefox_markers(&p, "ThreadRadarWakes");
    let woken = firefox_markers(&p, "ThreadRadarWokenBy");
    assert_eq!((wakes.len(), woken.len()), (edges.len(), edges.len()), "one marker pair per edge of `threadradar waits`");
    let mut got: Vec<_> = wakes.iter().map(|(th, _, d)| (th.clone(), d["wakee"].as_str().unwrap().to_string(), d["evidence"].as_str().unwrap().to_string())).collect();
    got.sort();
    assert_eq!(got, want, "waker thread, wakee and evidence of every edge");
    let mut got: Vec<_> = woken.iter().map(|(th, _, d)| (d["waker"].as_str().unwrap().to_string(), th.clone(), d["evidence"].as_str().unwrap().to_string())).collect();
    got.sort();
    assert_eq!(got, want);
    let flows_out: std::collections::BTreeSet<String> = wakes.iter().map(|(_, _, d)| d["flow"].as_str().unwrap().to_string()).collect();
    let flows_in: std::collections::BTreeSet<String> = woken.iter().map(|(_, _, d)| d["flow"].as_str().unwrap().to_string()).collect();
    assert_eq!(flows_out.len(), edges.len(), "distinct flow ids");
    assert_eq!(flows_out, flows_in, "each flow joins a waker's marker and a wakee's");
    for (_, _, d) in wakes.iter().chain(&woken) {
        assert!(d["object"].as_str().is_some_and(|o| !o.is_empty()) && d["kind"].is_string(), "{d}");
        assert!((0.0..=1.0).contains(&d["confidence"].as_f64().unwrap()));
    }
    // The wakee's marker names the waker's tid, the waker's the wakee's.
    for (th, _, d) in &woken {
        assert_eq!(d["wakerTid"].as_f64(), Some(tid_of(d["waker"].as_str().unwrap()) as f64), "on {th}");
    }

    // Perfetto: an instant with `flow_ids` on the waker's "Waits and wake-ups" track and one with
    // `terminating_flow_ids` on the wakee's (check_perfetto pairs them).
    let pt = dir.path().join("handoffs.pftrace");
    export(path, "perfetto", &pt);
    let checked = check_perfetto(&perfetto(&pt)).unwrap_or_else(|e| panic!("{}: {e}", pt.display()));
    assert_eq!((checked.flows_out.len(), checked.flows_in.len()), (edges.len(), edges.len()), "one flow per edge");
    let name_of_tid = |tid: u64| run.threads.iter().find(|t| t.tid as u64 == tid).unwrap().name.clone();
    let mut got: Vec<_> = checked
        .flows_out
        .iter()
        .map(|(_, tid, _, name)| {
            let (wakee, ev) = split_flow_name(name, "wakes ");
            (name_of_tid(*tid), wakee.to_string(), ev.to_string())
        })
        .collect();
    got.sort();
    assert_eq!(got, want, "waker track, wakee and evidence in the flow's start");
    let mut got: Vec<_> = checked
        .flows_in
        .iter()
        .map(|(_, tid, _, name)| {
            let (waker, ev) = split_flow_name(name, "woken by ");
            (waker.to_string(), name_of_tid(*tid), ev.to_string())
        })
        .collect();
    got.sort();
    assert_eq!(got, want, "wakee track, waker and evidence in the flow's end");

    // The check can fail: a flow that never ends is caught.
    let mut broken = perfetto(&pt);
    let end = broken.packet.iter().position(|p| p.track_event.as_ref().is_some_and(|e| !e.terminating_flow_ids.is_empty())).unwrap();
    broken.packet.remove(end);
    assert!(check_perfetto(&broken).unwrap_err().contains("flows start"));

    // Chrome JSON: zero-length complete events bound by `bind_id`, flow_out on the waker.
    let tr = dir.path().join("handoffs.trace.json");
    export(path, "chrome", &tr);
    let t = json(&tr);
    check_trace(&t).unwrap_or_else(|e| panic!("{}: {e}", tr.display()));
    let events = t["traceEvents"].as_array().unwrap();
    let outs: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X" && e["flow_out"] == true).collect();
    let ins: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X" && e["flow_in"] == true).collect();
    assert_eq!((outs.len(), ins.len()), (edges.len(), edges.len()));
    let mut broken = t.clone();
    let end = broken["traceEvents"].as_array().unwrap().iter().position(|e| e["flow_in"] == true).unwrap();
    broken["traceEvents"].as_array_mut().unwrap().remove(end);
    assert!(check_trace(&broken).unwrap_err().contains("flow"), "a flow without its end is caught");
    let mut got: Vec<_> = outs
        .iter()
        .map(|e| {
            let (wakee, ev) = split_flow_name(e["name"].as_str().unwrap(), "wakes ");
            assert_eq!(e["args"]["evidence"], ev);
            (name_of_tid(e["tid"].as_u64().unwrap()), wakee.to_string(), ev.to_string())
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
}

#[test]
fn waits_carry_the_object_waited_on() {
    let (dir, path, run, view) = handoffs();
    let objects: Vec<&str> = view["objects"].as_array().unwrap().iter().map(|o| o["object"].as_str().unwrap()).collect();
    // Per thread name: the object of each wait of the waits view, in time order.
    let mut want: HashMap<String, Vec<String>> = HashMap::new();
    for iv in view["intervals"].as_array().unwrap() {
        let th = &run.threads[iv["thread"].as_u64().unwrap() as usize].name;
        want.entry(th.clone()).or_default().push(objects[iv["object"].as_u64().unwrap() as usize].to_string());
    }
    let condition = objects.iter().find(|o| o.starts_with("threading.Condition")).expect("the waits view names the condition");

    // Firefox: the ThreadRadarWait markers name the objects waited on during them.
    let ff = dir.path().join("objects.firefox.json");
    export(path, "firefox", &ff);
    let waits = firefox_markers(&json(&ff), "ThreadRadarWait");
    let named: Vec<&str> = waits.iter().filter(|(th, _, _)| th == "waiter-condition").filter_map(|(_, _, d)| d["object"].as_str()).collect();
    assert!(named.contains(condition), "waiter-condition waited on {condition}: {named:?}");
    for (th, _, d) in &waits {
        for o in d["object"].as_str().unwrap().split(", ").filter(|o| !o.is_empty()) {
            assert!(objects.contains(&o), "{th}: {o:?} is not an object of the waits view");
        }
    }

    // Perfetto: each thread's "Waits and wake-ups" track has one slice per wait, named by its object.
    let pt = dir.path().join("objects.pftrace");
    export(path, "perfetto", &pt);
    let checked = check_perfetto(&perfetto(&pt)).unwrap();
    let mut got: HashMap<String, Vec<String>> = HashMap::new();
    for ((tid, track), evs) in &checked.children {
        if track == "Waits and wake-ups" {
            let th = run.threads.iter().find(|t| t.tid as u64 == *tid).unwrap().name.clone();
            got.entry(th).or_default().extend(evs.iter().filter(|e| e.0 == pf::TYPE_SLICE_BEGIN).map(|e| e.2.clone()));
        }
    }
    got.retain(|_, v| !v.is_empty());
    assert_eq!(got, want, "one wait slice per wait, named by the object, per thread");

    // Chrome JSON: async wait slices named by the object, on the waiting thread.
    let tr = dir.path().join("objects.trace.json");
    export(path, "chrome", &tr);
    let mut got: HashMap<String, Vec<String>> = HashMap::new();
    for e in json(&tr)["traceEvents"].as_array().unwrap() {
        if e["ph"] == "b" && e["cat"] == "wait" {
            assert_eq!(e["args"]["tid"], e["tid"]);
            got.entry(e["args"]["thread"].as_str().unwrap().to_string()).or_default().push(e["name"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(got, want);
}

#[test]
fn perfetto_scheduler_tracks_follow_the_kernels_switches() {
    let (dir, path, run, _) = handoffs();
    if run.sched.is_none() || run.switches.is_empty() {
        skip("perf events", "the recording has no scheduler events (record --sched needs perf_event_open on the sched tracepoints)");
        return;
    }
    let pt = dir.path().join("sched.pftrace");
    export(path, "perfetto", &pt);
    let checked = check_perfetto(&perfetto(&pt)).unwrap();
    let states = ["Running", "Runnable (R)", "Sleeping (S)", "Uninterruptible (D)"];
    let mut tracks = 0;
    for ((tid, track), evs) in &checked.children {
        if track != "Scheduler" {
            continue;
        }
        tracks += 1;
        let tid = *tid as u32;
        // Every state begins at one of the kernel's events for this thread.
        let mut times = std::collections::HashSet::new();
        for s in &run.switches {
            if s.prev_tid == tid || s.next_tid == tid {
                times.insert(s.t);
            }
        }
        for w in &run.wakeups {
            if w.wakee_tid == tid {
                times.insert(w.t);
            }
        }
        let begins: Vec<&(i32, u64, String)> = evs.iter().filter(|e| e.0 == pf::TYPE_SLICE_BEGIN).collect();
        for (_, ts, name) in &begins {
            assert!(states.contains(&name.as_str()) || name.starts_with("State "), "tid {tid}: {name}");
            assert!(times.contains(ts), "tid {tid}: {name} begins at {ts}, not at a switch or wake-up of the thread");
        }
        // It runs once per switch onto a CPU.
        let switch_ins = run.switches.iter().filter(|s| s.next_tid == tid).count();
        let running = begins.iter().filter(|e| e.2 == "Running").count();
        assert_eq!(running, switch_ins, "tid {tid}: Running slices against switches onto a CPU");
    }
    assert!(tracks >= 5, "the hand-off threads have scheduler tracks: {tracks}");
    // A waiter sleeps far longer than it runs.
    let waiter = run.threads.iter().find(|t| t.name == "waiter-lock").unwrap().tid as u64;
    let evs = &checked.children[&(waiter, "Scheduler".to_string())];
    let mut total: HashMap<String, u64> = HashMap::new();
    let mut open: Option<(u64, String)> = None;
    for (ty, ts, name) in evs {
        if *ty == pf::TYPE_SLICE_BEGIN {
            open = Some((*ts, name.clone()));
        } else if let Some((t0, n)) = open.take() {
            *total.entry(n).or_default() += ts - t0;
        }
    }
    assert!(total.get("Sleeping (S)").copied().unwrap_or(0) > 2 * total.get("Running").copied().unwrap_or(0), "{total:?}");
}

#[test]
fn critical_sections_are_markers_and_slices() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sections.json");
    let log = dir.path().join("log.jsonl");
    {
        let _g = serial();
        let o = record(&path, &["--interval-ms", "2"], &[&script("sections_truth.py"), log.to_str().unwrap(), "4", "100"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let run = read(&path);
    let o = threadradar(dir.path(), &["sections", path.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    // (thread, function, outlier) of every listed execution.
    let mut want = Vec::new();
    for s in v["sections"].as_array().unwrap() {
        let outliers: Vec<u64> = s["outliers"].as_array().unwrap().iter().map(|i| i.as_u64().unwrap()).collect();
        for (i, e) in s["executions"].as_array().unwrap().iter().enumerate() {
            want.push((e["thread"].as_str().unwrap().to_string(), s["function"].as_str().unwrap().to_string(), outliers.contains(&(i as u64))));
        }
    }
    want.sort();
    // (The ~1 ms executions are mostly seen in one sample, counted but not listed.)
    assert!(want.iter().any(|w| w.1 == "Store.update" && w.2), "the slow executions are outliers: {want:?}");
    let function_of = |label: &str| label.rsplit_once(" (").unwrap().0.to_string();

    // Firefox: one ThreadRadarSection marker per execution, on its thread.
    let ff = dir.path().join("sections.firefox.json");
    export(&path, "firefox", &ff);
    let p = json(&ff);
    check_firefox(&p).unwrap();
    let mut got: Vec<_> = firefox_markers(&p, "ThreadRadarSection")
        .into_iter()
        .map(|(th, name, d)| {
            assert!(d["lock"].as_str().unwrap().contains("Store._lock") || !d["section"].as_str().unwrap().starts_with("Store.update"), "{d}");
            (th, function_of(d["section"].as_str().unwrap()), name == "Critical section (outlier)")
        })
        .collect();
    got.sort();
    assert_eq!(got, want);

    // Perfetto: a "Critical section: …" child track per thread and section, a slice per execution.
    let pt = dir.path().join("sections.pftrace");
    export(&path, "perfetto", &pt);
    let checked = check_perfetto(&perfetto(&pt)).unwrap();
    let mut got = Vec::new();
    for ((tid, track), evs) in &checked.children {
        if let Some(label) = track.strip_prefix("Critical section: ") {
            let th = run.threads.iter().find(|t| t.tid as u64 == *tid).unwrap().name.clone();
            for e in evs.iter().filter(|e| e.0 == pf::TYPE_SLICE_BEGIN) {
                got.push((th.clone(), function_of(label), e.2.ends_with(" — outlier")));
            }
        }
    }
    got.sort();
    assert_eq!(got, want);

    // Chrome JSON: an async slice per execution.
    let tr = dir.path().join("sections.trace.json");
    export(&path, "chrome", &tr);
    let t = json(&tr);
    check_trace(&t).unwrap();
    let mut got: Vec<_> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "b" && e["cat"] == "section")
        .map(|e| (e["args"]["thread"].as_str().unwrap().to_string(), function_of(e["name"].as_str().unwrap()), e["args"]["outlier"] == true))
        .collect();
    got.sort();
    assert_eq!(got, want);
}
