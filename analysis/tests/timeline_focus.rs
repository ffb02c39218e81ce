//! Where an artifact is on the timeline (`timeline::focus`), on hand-made runs with exact
//! expectations, and the layout's highlighted frames.

mod common;

use common::{Fixture, C, I};
use threadradar_analysis::panel::ArtifactKey;
use threadradar_analysis::timeline::focus::{focus, Span};
use threadradar_analysis::timeline::layout::layout;
use threadradar_analysis::timeline::{LayoutRequest, TimelineError, TimelineIndex};
use threadradar_profiler::run::FileKind;

#[test]
fn spans_merge_nested_bars_per_thread_and_cover_classes_and_files() {
    let mut f = Fixture::new();
    f.func("/p/app.py", FileKind::User, "main", 1);
    f.func("/p/app.py", FileKind::User, "Worker.work", 10);
    f.func("/p/app.py", FileKind::User, "step", 20);
    f.func("/p/other.py", FileKind::User, "helper", 5);
    let a = f.thread("a", "T");
    let b = f.thread("b", "T");
    // Ticks 0–2: a in step (also nested step > step), b in helper; 3: a in work; 4–5: a in step
    // again (idle); 6: nobody in step.
    for _ in 0..3 {
        f.sample(&[(a, "main > step > step", C), (b, "main > helper", C)]);
    }
    f.sample(&[(a, "main > Worker.work", C), (b, "main > helper", C)]);
    f.sample(&[(a, "main > step", I), (b, "main > step", C)]);
    f.sample(&[(a, "main > step", I), (b, "main", C)]);
    f.sample(&[(a, "main", C), (b, "main", C)]);
    let run = f.finish();
    let index = TimelineIndex::new(&run).unwrap();
    let t = |k: usize| index.times[k] as f64 / 1e9;

    let step = focus(&run, &index, &ArtifactKey::function("/p/app.py", 20, "step")).unwrap();
    assert_eq!(step.name, "step");
    assert_eq!(
        step.spans,
        vec![
            Span { thread: a, from_s: t(0), to_s: t(3) },
            Span { thread: a, from_s: t(4), to_s: t(6) },
            Span { thread: b, from_s: t(4), to_s: t(5) },
        ]
    );
    assert_eq!((step.from_s, step.to_s, step.threads.clone(), step.span_count), (t(0), t(6), vec![a, b], 3));

    // A class covers its methods; a file every function in it.
    let class = focus(&run, &index, &ArtifactKey::class("/p/app.py", 1, "Worker")).unwrap();
    assert_eq!(class.spans, vec![Span { thread: a, from_s: t(3), to_s: t(4) }]);
    let file = focus(&run, &index, &ArtifactKey::file("/p/other.py")).unwrap();
    assert_eq!(file.spans, vec![Span { thread: b, from_s: t(0), to_s: t(4) }]);

    // The layout marks the frames of the highlighted artifact, and only those.
    let req = LayoutRequest { highlight: Some(ArtifactKey::function("/p/app.py", 20, "step")), ..LayoutRequest::default() };
    let l = layout(&run, &index, &req).unwrap();
    let marked: Vec<&str> = l.frames.iter().filter(|f| f.highlighted == Some(true)).map(|f| f.function.as_str()).collect();
    assert_eq!(marked, vec!["step"]);
    assert_eq!(l.focus.as_ref().map(|f| f.span_count), Some(3));

    // An unknown artifact is one sentence.
    let err = focus(&run, &index, &ArtifactKey("function:/p/app.py:99:nope".into())).unwrap_err();
    assert!(matches!(err, TimelineError::UnknownArtifact(_)));
    let msg = err.to_string();
    assert!(msg.starts_with("no artifact function:/p/app.py:99:nope in this run") && !msg.contains('\n'), "{msg}");
}

/// `focus` reads the samples, not the bars: on random runs with missed ticks, stackless samples,
/// recursion and standard-library frames, its spans are the merged intervals of the artifact's
/// bars in the unfolded lanes.
#[test]
fn spans_from_the_samples_are_the_union_of_the_artifacts_bars() {
    use threadradar_profiler::run::ThreadState;
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let stacks = ["main > work > step", "main > work", "main > step > step", "main > lib_a > lib_b > step", "main > lib_a > work", "main", ""];
    for round in 0..40 {
        let mut f = Fixture::new();
        f.func("/p/app.py", FileKind::User, "main", 1);
        f.func("/p/app.py", FileKind::User, "work", 10);
        f.func("/p/app.py", FileKind::User, "step", 20);
        f.func("/usr/lib/python3.11/lib.py", FileKind::Stdlib, "lib_a", 30);
        f.func("/usr/lib/python3.11/lib.py", FileKind::Stdlib, "lib_b", 40);
        let threads: Vec<_> = (0..3).map(|i| f.thread(&format!("t{i}"), "T")).collect();
        for _ in 0..60 {
            let mut obs: Vec<(u32, &str, ThreadState)> = Vec::new();
            for &t in &threads {
                // Missing from a tick now and then (runs of 1 are bridged, longer ones are not).
                if next(10) >= 2 {
                    obs.push((t, stacks[next(stacks.len() as u64) as usize], [C, I][next(2) as usize]));
                }
            }
            f.sample(&obs);
        }
        let run = f.finish();
        let index = TimelineIndex::new(&run).unwrap();
        let lanes = index.lanes(&run);
        for key in [
            ArtifactKey::function("/p/app.py", 20, "step"),
            ArtifactKey::function("/p/app.py", 10, "work"),
            ArtifactKey::function("/usr/lib/python3.11/lib.py", 40, "lib_b"),
            ArtifactKey::file("/usr/lib/python3.11/lib.py"),
        ] {
            let (member, _) = threadradar_analysis::timeline::focus::members(&run, &key).unwrap();
            let mut want: Vec<Span> = Vec::new();
            for lane in lanes.iter() {
                let mut iv: Vec<(u32, u32)> = lane
                    .rows
                    .iter()
                    .flatten()
                    .filter(|b| member[run.frames[b.frame() as usize].function as usize])
                    .map(|b| (b.start(), b.end()))
                    .collect();
                iv.sort_unstable();
                let mut merged: Vec<(u32, u32)> = Vec::new();
                for (a, b) in iv {
                    match merged.last_mut() {
                        Some(l) if a <= l.1 => l.1 = l.1.max(b),
                        _ => merged.push((a, b)),
                    }
                }
                let t = |k: u32| index.times[k as usize] as f64 / 1e9;
                want.extend(merged.into_iter().map(|(a, b)| Span { thread: lane.thread, from_s: t(a), to_s: t(b) }));
            }
            want.sort_by(|a, b| a.from_s.total_cmp(&b.from_s).then(a.thread.cmp(&b.thread)));
            let got = focus(&run, &index, &key).unwrap();
            assert_eq!(got.spans, want, "round {round}, {}", key.0);
            assert_eq!(got.span_count, want.len());
        }
    }
}
