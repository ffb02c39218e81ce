//! The lock events of `record --exact-locks` in the Perfetto and Firefox exports: a run with one
//! lock taken by two threads in turn (the second waits for the first's release) exported and read
//! back — a track per thread and lock with its waits and holds, their figures, and the name of the
//! thread that let the waiter in kept byte for byte however hostile (each format's own string
//! encoding, nothing dropped or mangled).

use threadradar_formats::perfetto::{self, proto};
use threadradar_profiler::lockevents::kind::{ACQUIRED as A, CALL as C, RELEASED as R};
use threadradar_profiler::run::{LockEvent, LockInfo, Run};
use threadradar_profiler::synth::{synthetic_run, SynthSpec};

const HOSTILE: &str = "<script>alert(\"x\")</script> & 'y'\u{1b}";

/// Thread 0 (named [`HOSTILE`]) holds lock 0xabc 1 µs → 50 µs after a 1 µs wait; thread 1 calls
/// at 2 µs, gets it at 51 µs from thread 0's release and holds it to 90 µs.
fn run() -> Run {
    let mut run = synthetic_run(SynthSpec { ticks: 200, threads: 2, functions: 20, stacks: 40, seed: 3 });
    run.threads[0].name = HOSTILE.to_string();
    let (a, b) = (run.threads[0].tid, run.threads[1].tid);
    let t0 = run.samples[50].t;
    run.locks = Some(LockInfo { source: "uprobes".into(), events: 6, ..LockInfo::default() });
    run.lock_events = [(0, a, C), (1_000, a, A), (2_000, b, C), (50_000, a, R), (51_000, b, A), (90_000, b, R)]
        .into_iter()
        .map(|(dt, tid, kind)| LockEvent { t: t0 + dt, tid, kind, lock: 0xabc })
        .collect();
    run
}

#[test]
fn perfetto_has_a_track_per_thread_and_lock_with_its_waits_and_holds() {
    let run = run();
    let mut bytes = Vec::new();
    perfetto::write(&run, &mut bytes).unwrap();
    let trace = perfetto::read(&bytes).unwrap();
    let names: std::collections::HashMap<u64, String> =
        trace.packet.iter().filter_map(|p| p.interned_data.as_ref()).flat_map(|d| d.event_names.iter().map(|n| (n.iid.unwrap(), n.name.clone().unwrap()))).collect();
    let tracks: Vec<u64> = trace
        .packet
        .iter()
        .filter_map(|p| p.track_descriptor.as_ref())
        .filter(|t| t.name.as_deref().is_some_and(|n| n.starts_with("Lock events (exact, uprobe): lock 0xabc")))
        .map(|t| t.uuid.unwrap())
        .collect();
    assert_eq!(tracks.len(), 2, "one track per thread that took the lock");
    let slices: Vec<&proto::TrackEvent> = trace
        .packet
        .iter()
        .filter_map(|p| p.track_event.as_ref())
        .filter(|e| e.r#type == Some(proto::TYPE_SLICE_BEGIN) && e.track_uuid.is_some_and(|u| tracks.contains(&u)))
        .collect();
    let named = |prefix: &str| slices.iter().filter(|e| names[&e.name_iid.unwrap()].starts_with(prefix)).count();
    assert_eq!((named("holds lock 0xabc"), named("waits for lock 0xabc")), (2, 2), "two holds, two waits to enter");
    let arg = |e: &proto::TrackEvent, k: &str| e.debug_annotations.iter().find(|a| a.name.as_deref() == Some(k)).cloned();
    let let_in: Vec<&&proto::TrackEvent> = slices.iter().filter(|e| arg(e, "waited_for").is_some()).collect();
    assert_eq!(let_in.len(), 2, "the waiter's wait and hold name who let it in");
    for e in let_in {
        assert_eq!(arg(e, "waited_for").unwrap().string_value.as_deref(), Some(HOSTILE), "the name as the program gave it");
        assert_eq!(arg(e, "evidence").unwrap().string_value.as_deref(), Some("lock-event (exact, uprobe)"));
        let wait = arg(e, "wait_to_enter_ms").unwrap().double_value.unwrap();
        let held = arg(e, "held_ms").unwrap().double_value.unwrap();
        assert!((wait - 0.049).abs() < 1e-9 && (held - 0.039).abs() < 1e-9, "exact figures: waited {wait} ms, held {held} ms");
    }
}

#[test]
fn firefox_has_lock_markers_with_the_names_escaped_as_json() {
    let run = run();
    let mut bytes = Vec::new();
    threadradar_formats::firefox::write(&run, &mut bytes).unwrap();
    let profile: serde_json::Value = serde_json::from_slice(&bytes).expect("the profile is valid JSON whatever the names");
    let schema = profile["meta"]["markerSchema"].as_array().unwrap();
    assert!(schema.iter().any(|s| s["name"] == "ThreadRadarLock"), "the lock marker's schema");
    // Every marker of the lock: its name and its data, across the threads.
    let mut found = Vec::new();
    let strings: Vec<String> = profile["shared"]["stringArray"].as_array().map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect()).unwrap_or_default();
    for th in profile["threads"].as_array().unwrap() {
        let table = &th["markers"];
        let local: Vec<String> = th["stringArray"].as_array().map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect()).unwrap_or_else(|| strings.clone());
        for (i, d) in table["data"].as_array().unwrap().iter().enumerate() {
            if d["type"] == "ThreadRadarLock" {
                let s = |v: &serde_json::Value| v.as_u64().map_or_else(|| v.as_str().unwrap_or("").to_string(), |k| local[k as usize].clone());
                found.push((s(&table["name"][i]), s(&d["lock"]), s(&d["waitedFor"])));
            }
        }
    }
    found.sort();
    let holds = found.iter().filter(|f| f.0 == "Lock held (exact)").count();
    let waits = found.iter().filter(|f| f.0 == "Lock wait (exact)").count();
    assert_eq!((holds, waits), (2, 2), "{found:?}");
    assert!(found.iter().all(|f| f.1.starts_with("lock 0xabc")), "{found:?}");
    assert_eq!(found.iter().filter(|f| f.2 == HOSTILE).count(), 2, "the waiter's markers name the releaser as the program did: {found:?}");
}
