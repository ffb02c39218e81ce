//! Exports of a synthetic run with thousands of distinct stacks shared across threads (the shape
//! of the 1 M-sample benchmark, smaller) imported back: every thread's samples come back in order
//! with the same stack, frame by frame, and (Firefox) the same times. The importers intern frames
//! and stacks; this is the check that interning loses or merges nothing.

use std::collections::HashMap;
use std::path::Path;
use threadradar_formats::{export, import, ExportFormat};
use threadradar_profiler::run::Run;
use threadradar_profiler::synth::{synthetic_run, SynthSpec};

type Frames = Vec<(String, u32)>;

/// Per thread (name, tid): its samples in time order, each as (time, frames outermost first).
fn samples_per_thread(run: &Run) -> HashMap<(String, u32), Vec<(u64, Frames)>> {
    let mut m: HashMap<(String, u32), Vec<(u64, Frames)>> = HashMap::new();
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
            m.entry((th.name.clone(), th.tid)).or_default().push((s.t, frames));
        }
    }
    m
}

fn round_trip(run: &Run, format: ExportFormat, file: &str) -> Run {
    let mut bytes = Vec::new();
    export(run, format, &mut bytes).unwrap();
    import::import_bytes(&bytes, Path::new(file), &Default::default()).unwrap_or_else(|e| panic!("import of the {} export: {e}", format.name()))
}

fn run() -> Run {
    synthetic_run(SynthSpec { ticks: 3_000, threads: 6, functions: 300, stacks: 1_500, seed: 7 })
}

#[test]
fn firefox_export_imports_back_sample_for_sample() {
    let run = run();
    let want = samples_per_thread(&run);
    assert!(run.stacks.len() > 1_000, "the run has many stacks to intern ({})", run.stacks.len());
    let got = samples_per_thread(&round_trip(&run, ExportFormat::Firefox, "rt.firefox.json"));
    assert_eq!(got.len(), want.len(), "same threads");
    for (thread, w) in &want {
        let g = &got[thread];
        assert_eq!(g.len(), w.len(), "{thread:?}: same number of samples");
        for (i, ((wt, wf), (gt, gf))) in w.iter().zip(g).enumerate() {
            assert_eq!(gf, wf, "{thread:?} sample {i}: same stack");
            // The format stores milliseconds as floats: times agree to the microsecond.
            assert!(wt.abs_diff(*gt) <= 1_000, "{thread:?} sample {i}: time {gt} ns, recorded {wt} ns");
        }
    }
}

#[test]
fn speedscope_export_imports_back_sample_for_sample() {
    let run = run();
    let want = samples_per_thread(&run);
    let got = samples_per_thread(&round_trip(&run, ExportFormat::Speedscope, "rt.speedscope.json"));
    assert_eq!(got.len(), want.len(), "same threads");
    for (thread, w) in &want {
        let stacks = |v: &Vec<(u64, Frames)>| v.iter().map(|(_, f)| f.clone()).collect::<Vec<_>>();
        assert_eq!(stacks(&got[thread]), stacks(w), "{thread:?}: the same stacks in the same order");
    }
}

#[test]
fn collapsed_export_imports_back_with_the_same_stack_counts() {
    let run = run();
    let counts = |r: &Run| -> HashMap<(String, u32), HashMap<Frames, usize>> {
        samples_per_thread(r)
            .into_iter()
            .map(|(k, v)| {
                let mut c: HashMap<Frames, usize> = HashMap::new();
                for (_, f) in v {
                    *c.entry(f).or_default() += 1;
                }
                (k, c)
            })
            .collect()
    };
    assert_eq!(counts(&round_trip(&run, ExportFormat::Collapsed, "rt.folded")), counts(&run));
}
