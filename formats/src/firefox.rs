//! The Firefox Profiler's processed profile format (profiler.firefox.com, "Load a profile from
//! file"), written with `fxprof-processed-profile`, the crate samply uses, so the schema version
//! (`meta.preprocessedProfileVersion`) follows the profiler rather than a hand-kept copy.
//!
//! One track per thread with the program's thread name and tid, grouped by process; samples at
//! their real times with the kernel-accounted CPU delta; every frame's category is the thread's
//! state at that sample (`Python` for computing, `GIL wait`, `Idle`), so the activity graph is
//! coloured by state; and interval markers (`Wait`) for each stretch of consecutive samples in
//! which a thread waited for the GIL or was idle, with the blocking call when known. The markers
//! are inferred from sampling (a wait shorter than an interval may be missed), as their
//! description says. Wake-up edges and critical sections become flow markers here once runs
//! record them.

use crate::timeline::{frame_label, frames_outermost_first, interval_ns, per_thread, state_intervals, state_label};
use crate::ExportError;
use fxprof_processed_profile::{
    CategoryColor, CategoryHandle, CpuDelta, Frame, FrameFlags, FrameInfo, MarkerFieldFlags, MarkerFieldFormat, MarkerTiming, Profile,
    ReferenceTimestamp, SamplingInterval, StaticSchemaMarker, StaticSchemaMarkerField, StringHandle, Timestamp,
};
use std::collections::HashMap;
use std::io::Write;
use threadradar_profiler::run::{Run, ThreadState};

/// The processed-format version the bundled writer produces; the export test checks the file
/// against it so an upgrade of the writer is noticed.
pub const PROCESSED_PROFILE_VERSION: u64 = 55;

/// A stretch in which a thread did not compute, inferred from consecutive samples.
struct WaitMarker {
    name: StringHandle,
    category: CategoryHandle,
    blocked: StringHandle,
    samples: f64,
}

impl StaticSchemaMarker for WaitMarker {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "ThreadRadarWait";
    const DESCRIPTION: Option<&'static str> =
        Some("Consecutive samples in which the thread waited for the GIL or was idle (inferred from sampling: ends are known to within one sampling interval).");
    const CHART_LABEL: Option<&'static str> = Some("{marker.name} {marker.data.blocked}");
    const TABLE_LABEL: Option<&'static str> = Some("{marker.name} {marker.data.blocked} ({marker.data.samples} samples)");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[
        StaticSchemaMarkerField { key: "blocked", label: "Blocked in", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::SEARCHABLE },
        StaticSchemaMarkerField { key: "samples", label: "Samples", format: MarkerFieldFormat::Integer, flags: MarkerFieldFlags::empty() },
    ];
    fn name(&self, _: &mut Profile) -> StringHandle {
        self.name
    }
    fn category(&self, _: &mut Profile) -> CategoryHandle {
        self.category
    }
    fn string_field_value(&self, _: u32) -> StringHandle {
        self.blocked
    }
    fn number_field_value(&self, _: u32) -> f64 {
        self.samples
    }
}

/// The profile, ready to serialise.
pub fn build(run: &Run) -> Profile {
    let product = match run.meta.command.is_empty() {
        true => "ThreadRadar run".to_string(),
        false => run.meta.command.join(" "),
    };
    let mut p = Profile::new(
        &product,
        ReferenceTimestamp::from_millis_since_unix_epoch(run.meta.start_unix_ms as f64),
        SamplingInterval::from_nanos(interval_ns(run)),
    );
    let cats = [
        p.add_category("Python", CategoryColor::Blue),
        p.add_category("GIL wait", CategoryColor::Orange),
        p.add_category("Idle", CategoryColor::Transparent),
    ];
    let cat_of = |s: ThreadState| match s {
        ThreadState::Computing => cats[0],
        ThreadState::Gil => cats[1],
        ThreadState::Idle => cats[2],
    };
    let mut processes = HashMap::new();
    let observations = per_thread(run);
    let mut handles = Vec::with_capacity(run.threads.len());
    for (i, t) in run.threads.iter().enumerate() {
        let process = *processes.entry(t.pid).or_insert_with(|| {
            let cmd = run.processes.iter().find(|pr| pr.pid == t.pid).map(|pr| pr.command.join(" ")).unwrap_or_else(|| product.clone());
            p.add_process(&cmd, t.pid, Timestamp::from_nanos_since_reference(0))
        });
        let obs = &observations[i];
        let start = obs.first().map_or(0, |o| o.t_ns);
        // Not flagged as the process's main thread: the Firefox Profiler would show the process
        // name instead of the program's name for it (`MainThread`).
        let h = p.add_thread(process, t.tid, Timestamp::from_nanos_since_reference(start), false);
        p.set_thread_name(h, &t.name);
        if let Some(last) = obs.last() {
            p.set_thread_end_time(h, Timestamp::from_nanos_since_reference(last.t_ns + last.duration_ns));
        }
        handles.push(h);
    }
    let mut labels: HashMap<u32, StringHandle> = HashMap::new();
    for (i, obs) in observations.iter().enumerate() {
        let h = handles[i];
        let mut stacks = HashMap::new();
        for o in obs {
            let stack = *stacks.entry((o.stack, o.state)).or_insert_with(|| {
                let cat = cat_of(o.state);
                let frames: Vec<FrameInfo> = frames_outermost_first(run, o.stack)
                    .into_iter()
                    .map(|f| {
                        let name = *labels.entry(f).or_insert_with(|| p.intern_string(&frame_label(run, f)));
                        FrameInfo { frame: Frame::Label(name), category_pair: cat.into(), flags: FrameFlags::empty() }
                    })
                    .collect();
                p.intern_stack_frames(h, frames.into_iter())
            });
            p.add_sample(h, Timestamp::from_nanos_since_reference(o.t_ns), stack, CpuDelta::from_nanos(o.cpu_ns), 1);
        }
    }
    for iv in state_intervals(run, &observations) {
        let marker = WaitMarker {
            name: p.intern_string(state_label(iv.state)),
            category: cat_of(iv.state),
            blocked: p.intern_string(iv.blocked.as_deref().unwrap_or("")),
            samples: iv.samples as f64,
        };
        let timing = MarkerTiming::Interval(Timestamp::from_nanos_since_reference(iv.start_ns), Timestamp::from_nanos_since_reference(iv.end_ns));
        p.add_marker(handles[iv.thread as usize], timing, marker);
    }
    p
}

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    let profile = build(run);
    let mut w = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut w, &profile).map_err(|e| ExportError::Encode { format: "firefox", detail: e.to_string() })?;
    w.flush()?;
    Ok(())
}
