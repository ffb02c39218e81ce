//! A parsed [`Profile`] made into a run the way `record` makes one: through the profiler's
//! `RunBuilder`, files mapped to functions and classes by its `SourceIndex`, thread types from
//! entry points, and what the format does not record stated in `meta.imported`.

use super::profile::{Missing, Profile, RawFrame};
use super::{locate_source, ImportError, DEFAULT_INTERVAL_NS};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use threadradar_profiler::attribution::{derive_entry_point_types, resolve_function};
use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
use threadradar_profiler::run::*;
use threadradar_profiler::source::{file_kind, FileInfo};

/// The interval: given (`--interval-ms`), else stated by the file, else the median of the
/// durations the file gives, else the median gap between a thread's timed samples, else assumed.
fn interval(profile: &Profile, given_ns: Option<u64>) -> (u64, Option<Missing>) {
    if let Some(i) = given_ns.or(profile.interval_ns).filter(|&i| i > 0) {
        return (i, None);
    }
    let median = |mut d: Vec<u64>| {
        d.sort_unstable();
        d.get(d.len() / 2).copied()
    };
    if let Some(i) = median(profile.samples.iter().filter_map(|s| s.duration_ns).filter(|&d| d > 0).collect()) {
        return (i, None);
    }
    let mut last: Vec<Option<u64>> = vec![None; profile.threads.len()];
    let mut gaps = Vec::new();
    for s in &profile.samples {
        if let Some(t) = s.t_ns {
            if let Some(prev) = last[s.thread].replace(t) {
                gaps.extend(t.checked_sub(prev).filter(|&g| g > 0));
            }
        }
    }
    match median(gaps) {
        Some(i) => (i, None),
        None => (DEFAULT_INTERVAL_NS, Some(("interval", "the sampling interval (10 ms is assumed: import it again with --interval-ms)"))),
    }
}

/// The smallest free time at or after `t` for one thread, in amortised near-constant time: each
/// taken time points past itself, and the chains are compressed as they are walked.
#[derive(Default)]
struct Slots {
    next: FxHashMap<u64, u64>,
    path: Vec<u64>,
}

impl Slots {
    fn take(&mut self, t: u64) -> u64 {
        let mut x = t;
        while let Some(&n) = self.next.get(&x) {
            self.path.push(x);
            x = n;
        }
        let after = x + 1;
        for p in self.path.drain(..) {
            self.next.insert(p, after);
        }
        self.next.insert(x, after);
        x
    }
}

/// Times beyond this are held here (the span limit refuses them before; this keeps the
/// arithmetic far from overflowing whatever a caller's limits are).
const TIME_CEILING: u64 = 1 << 62;

/// Samples grouped into ticks by time; a thread's samples without times follow one another. A
/// thread is observed once per tick: a second sample at the same time moves to the next free
/// nanosecond, in linear time however many samples share a time.
fn ticks(profile: &Profile, stack_ids: &[StackId], ids: &[ThreadId], interval_ns: u64) -> Vec<Sample> {
    let mut next_t: Vec<u64> = vec![0; profile.threads.len()];
    let mut slots: Vec<Slots> = (0..profile.threads.len()).map(|_| Slots::default()).collect();
    let mut placed: Vec<(u64, ThreadSample)> = Vec::with_capacity(profile.thread_samples.min(1 << 24) as usize);
    for s in &profile.samples {
        let stack = s.stack.map(|i| stack_ids[i as usize]);
        let step = s.duration_ns.unwrap_or(interval_ns).max(1);
        for _ in 0..s.count.max(1) {
            let t = s.t_ns.unwrap_or(next_t[s.thread]).min(TIME_CEILING);
            next_t[s.thread] = t.saturating_add(step).min(TIME_CEILING);
            let at = slots[s.thread].take(t);
            placed.push((at, ThreadSample { thread: ids[s.thread], stack, state: s.state.unwrap_or(ThreadState::Computing), gil: s.gil, ..Default::default() }));
        }
    }
    drop(slots);
    placed.sort_by_key(|(t, _)| *t); // stable: a tick's threads keep the file's order
    let mut out: Vec<Sample> = Vec::new();
    for (t, ts) in placed {
        match out.last_mut() {
            Some(last) if last.t == t => last.threads.push(ts),
            _ => out.push(Sample { t, threads: vec![ts] }),
        }
    }
    out
}

/// Makes a run of a parsed profile, the way `record` makes one of samples. `interval_ns` is the
/// interval given on the command line, if any.
pub fn build_run(profile: Profile, source: &Path, roots: &[PathBuf], interval_ns: Option<u64>) -> Result<Run, ImportError> {
    let (interval_ns, interval_missing) = interval(&profile, interval_ns);
    let mut b = RunBuilder::new(Meta {
        command: profile.command.clone(),
        cwd: std::env::current_dir().map(|p| p.display().to_string()).unwrap_or_default(),
        mode: RecordMode::Attach,
        interval_ms: interval_ns as f64 / 1e6,
        start_unix_ms: profile.start_unix_ms.unwrap_or(0),
        threadradar_version: env!("CARGO_PKG_VERSION").to_string(),
        ..Meta::default()
    });
    // Files: located here when possible, then fingerprinted and indexed like a recorded run's.
    let mut files: HashMap<String, (FileId, Option<FileInfo>)> = HashMap::new();
    let mut located = 0usize;
    let mut frame_of = |b: &mut RunBuilder, f: &RawFrame| -> FrameId {
        let (file, info) = files
            .entry(f.file.clone())
            .or_insert_with(|| match locate_source(&f.file, roots) {
                Some(here) => {
                    let info = FileInfo::load(&here.display().to_string());
                    let mut kind = file_kind(&f.file);
                    if kind == FileKind::Unknown {
                        kind = info.kind;
                    }
                    located += 1;
                    (b.file(&here.display().to_string(), kind, info.sha256.clone()), Some(info))
                }
                None => (b.file(&f.file, file_kind(&f.file), None), None),
            })
            .clone();
        let (qualname, class, line, end_line, class_line) = resolve_function(info.as_ref().and_then(|i| i.index.as_ref()), &f.name, f.line);
        let func = b.function(file, &FunctionSpec { qualname: &qualname, class: class.as_deref(), line, end_line, class_line });
        b.frame(func, f.line)
    };
    // The profile's frames and stack tree, in order (a node's parent comes before it); a frame is
    // resolved when a stack first uses it, so unused frames add no file.
    let mut frame_ids: Vec<Option<FrameId>> = vec![None; profile.frames.len()];
    let mut stack_ids: Vec<StackId> = Vec::with_capacity(profile.stacks.len());
    for node in &profile.stacks {
        let f = node.frame as usize;
        let frame = match frame_ids[f] {
            Some(id) => id,
            None => *frame_ids[f].insert(frame_of(&mut b, &profile.frames[f])),
        };
        let parent = node.parent.map(|p| stack_ids[p as usize]);
        stack_ids.push(b.stack_node(parent, frame));
    }
    // Threads: the main thread only where the file says which it is (a flag, `MainThread`, or a
    // tid equal to the pid); none is guessed.
    let ids: Vec<ThreadId> = profile
        .threads
        .iter()
        .map(|t| {
            let name = t.name.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| format!("thread {}", t.tid));
            let mut th = new_thread(t.pid, t.tid, 0, &name, "");
            th.is_main = t.main.unwrap_or(name == "MainThread" || (t.pid != 0 && t.pid == t.tid));
            b.thread(th)
        })
        .collect();
    let samples = ticks(&profile, &stack_ids, &ids, interval_ns);
    let (first_t, last_t) = (samples.first().map_or(0, |s| s.t), samples.last().map_or(0, |s| s.t));
    if last_t - first_t > profile.limits().span_ns {
        let what = format!("its samples span {:.0} s", (last_t - first_t) as f64 / 1e9);
        return Err(profile.too_large(what, format!("{} s", profile.limits().span_ns / 1_000_000_000), super::profile::SHORTER));
    }
    for s in samples {
        b.push_sample(s);
    }
    // Thread types: the main thread is `_MainThread`, the others come from their entry points
    // by the rule `record` uses for threads whose object it cannot read.
    for t in &mut b.run_mut().threads {
        if t.is_main {
            t.thread_type = "_MainThread".into();
            t.type_source = TypeSource::Main;
        }
    }
    derive_entry_point_types(b.run_mut(), "unknown");
    let mut pids: Vec<u32> = profile.threads.iter().map(|t| t.pid).collect();
    pids.sort_unstable();
    pids.dedup();
    let mut run = b.finish();
    run.processes = pids.iter().map(|&pid| Process { pid, ppid: None, command: profile.command.clone(), python_version: None, reader: None, root: None }).collect();
    run.meta.pids = pids;
    run.meta.duration_s = last_t.saturating_add(interval_ns) as f64 / 1e9;
    run.meta.achieved_rate_hz = if run.meta.duration_s > 0.0 { run.samples.len() as f64 / run.meta.duration_s } else { 0.0 };
    let no_main = !run.threads.iter().any(|t| t.is_main);
    run.meta.imported = Some(imported(&profile, source, interval_missing, no_main, files.len(), located));
    Ok(run)
}

/// `meta.imported`: where the run came from and what its format does not record.
fn imported(profile: &Profile, source: &Path, interval: Option<Missing>, no_main: bool, files: usize, located: usize) -> Imported {
    let with_state = profile.samples.iter().filter(|s| s.state.is_some()).count();
    let mut missing: Vec<Missing> = Vec::new();
    if with_state == 0 {
        missing.push(("thread_states", "thread states (every sample counts as computing)"));
    } else if with_state < profile.samples.len() {
        missing.push(("thread_states", "the thread state of some samples (they count as computing)"));
    }
    missing.extend(profile.missing.iter().copied());
    if no_main {
        missing.push(("main_thread", "which thread is the main thread (none is typed _MainThread)"));
    }
    missing.extend(interval);
    let sources = if files == 0 { String::new() } else { format!(" {located} of {files} source files were found here and mapped to functions and classes.") };
    let note = if missing.is_empty() {
        format!("Imported from {}, with thread states.{}", profile.format, sources)
    } else {
        let what: Vec<&str> = missing.iter().map(|m| m.1).collect();
        format!("Imported from {}; the format does not record {}.{}", profile.format, what.join(", "), sources)
    };
    let mut unknown: Vec<String> = missing.iter().map(|m| m.0.to_string()).collect();
    unknown.dedup();
    Imported { format: profile.format.clone(), file: source.display().to_string(), note, unknown }
}
