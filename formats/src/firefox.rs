//! The Firefox Profiler's processed profile format (profiler.firefox.com, "Load a profile from
//! file"), written with `fxprof-processed-profile`, the crate samply uses, so the schema version
//! (`meta.preprocessedProfileVersion`) follows the profiler rather than a hand-kept copy.
//!
//! One track per thread with the program's thread name and tid, grouped by process; samples at
//! their real times with the kernel-accounted CPU delta; every frame's category is the thread's
//! state at that sample (`Python` for computing, `GIL wait`, `Idle`), so the activity graph is
//! coloured by state. Markers (their schemas are in the file's `meta.markerSchema`):
//!
//! - `ThreadRadarWait` (interval): each stretch of consecutive samples in which a thread waited
//!   for the GIL or was idle, with the blocking call and the object(s) the waits view says it
//!   waited on (`object`: `threading.Condition self.cond`, `pipe:[123]`; empty for sleeps).
//!   Inferred from sampling (a wait shorter than an interval may be missed), as its description
//!   says.
//! - `ThreadRadarWakes` (instant, on the waker at the wake-up) and `ThreadRadarWokenBy`
//!   (instant, on the wakee where the wait ended): one pair per wake-up edge of the waits view,
//!   with the other thread's name and tid, the object, the evidence (`kernel`, `gil-holder`,
//!   `same-object`, `running-thread`), the kind and the confidence. Both carry the same `flow`
//!   field of format `flow-id`, which the Firefox Profiler uses to relate markers of different
//!   threads as one flow. The writer crate has no flow format, so the field is declared as a
//!   `unique-string` (the same storage: an index into the thread's string table holding the id in
//!   hexadecimal) and the schema's format is rewritten to `flow-id` as the file is written
//!   ([`FlowFormat`]).
//! - `ThreadRadarLock` (interval), for runs recorded with `record --exact-locks`: every wait to
//!   enter a lock (`Lock wait (exact)`: its acquire function called → returned) and every hold
//!   (`Lock held (exact)`: → released), named by the lock's address and place, with the thread
//!   whose release let it in; exact (kernel uprobes), category `Lock (exact)`.
//! - `ThreadRadarSection` (interval): every execution of a critical section found by
//!   `threadradar sections`, named `Critical section` (or `Critical section (outlier)`), with
//!   the section, its lock, the estimate's error, the wait to enter and the waiters.

use crate::timeline::{drop_later, frame_label, frames_outermost_first, interval_ns, per_thread, state_intervals, state_label, with_overlay, Overlay};
use crate::ExportError;
use fxprof_processed_profile::{
    CategoryColor, CategoryHandle, CpuDelta, Frame, FrameFlags, FrameInfo, MarkerFieldFlags, MarkerFieldFormat, MarkerTiming, Profile,
    ReferenceTimestamp, SamplingInterval, StackHandle, StaticSchemaMarker, StaticSchemaMarkerField, StringHandle, Timestamp,
};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::io::Write;
use threadradar_profiler::run::{Run, StackId, ThreadState};

/// The processed-format version the bundled writer produces; the export test checks the file
/// against it so an upgrade of the writer is noticed.
pub const PROCESSED_PROFILE_VERSION: u64 = 55;

/// A stretch in which a thread did not compute, inferred from consecutive samples.
struct WaitMarker {
    name: StringHandle,
    category: CategoryHandle,
    blocked: StringHandle,
    object: StringHandle,
    samples: f64,
}

impl StaticSchemaMarker for WaitMarker {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "ThreadRadarWait";
    const DESCRIPTION: Option<&'static str> =
        Some("Consecutive samples in which the thread waited for the GIL or was idle (inferred from sampling: ends are known to within one sampling interval).");
    const CHART_LABEL: Option<&'static str> = Some("{marker.name} {marker.data.blocked} {marker.data.object}");
    const TABLE_LABEL: Option<&'static str> = Some("{marker.name} {marker.data.blocked} {marker.data.object} ({marker.data.samples} samples)");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[
        StaticSchemaMarkerField { key: "blocked", label: "Blocked in", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::SEARCHABLE },
        StaticSchemaMarkerField { key: "object", label: "Waited on", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::SEARCHABLE },
        StaticSchemaMarkerField { key: "samples", label: "Samples", format: MarkerFieldFormat::Integer, flags: MarkerFieldFlags::empty() },
    ];
    fn name(&self, _: &mut Profile) -> StringHandle {
        self.name
    }
    fn category(&self, _: &mut Profile) -> CategoryHandle {
        self.category
    }
    fn string_field_value(&self, i: u32) -> StringHandle {
        if i == 0 {
            self.blocked
        } else {
            self.object
        }
    }
    fn number_field_value(&self, _: u32) -> f64 {
        self.samples
    }
}

/// The flow field both wake-up markers share: declared as a `unique-string` (an index into the
/// thread's string table, which is how the profiler stores flow ids too) and rewritten to
/// `flow-id` in the schema as the file is written ([`FlowFormat`]).
const FLOW_FIELD: StaticSchemaMarkerField = StaticSchemaMarkerField { key: "flow", label: "Flow", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::empty() };

/// The fields of the two wake-up markers: the other thread, the object, how the edge was found.
macro_rules! wake_fields {
    ($other:literal, $other_label:literal, $tid:literal, $tid_label:literal) => {
        &[
            StaticSchemaMarkerField { key: $other, label: $other_label, format: MarkerFieldFormat::String, flags: MarkerFieldFlags::SEARCHABLE },
            StaticSchemaMarkerField { key: $tid, label: $tid_label, format: MarkerFieldFormat::Integer, flags: MarkerFieldFlags::empty() },
            StaticSchemaMarkerField { key: "object", label: "Object", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::SEARCHABLE },
            StaticSchemaMarkerField { key: "evidence", label: "Evidence", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::SEARCHABLE },
            StaticSchemaMarkerField { key: "kind", label: "Kind", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::empty() },
            StaticSchemaMarkerField { key: "confidence", label: "Confidence", format: MarkerFieldFormat::Percentage, flags: MarkerFieldFlags::empty() },
            FLOW_FIELD,
        ]
    };
}

/// One side of a wake-up edge: string fields (other thread, object, evidence, kind, flow id) and
/// number fields (other tid, confidence), in the order of the schema's fields.
struct WakeSide {
    name: StringHandle,
    category: CategoryHandle,
    strings: [StringHandle; 5],
    tid: f64,
    confidence: f64,
}

impl WakeSide {
    fn string(&self, i: u32) -> StringHandle {
        match i {
            0 => self.strings[0],
            2 => self.strings[1],
            3 => self.strings[2],
            4 => self.strings[3],
            _ => self.strings[4],
        }
    }
    fn number(&self, i: u32) -> f64 {
        if i == 1 {
            self.tid
        } else {
            self.confidence
        }
    }
}

/// One end of a wake-up edge: `WakeMarker::<false>` (`ThreadRadarWakes`) on the waker, at the
/// wake-up; `WakeMarker::<true>` (`ThreadRadarWokenBy`) on the wakee, where the wait ended (at
/// the wake-up itself for a futile wake-up or a lock hand-off, which did not end it). The two
/// differ only in their schema's texts and in which thread the fields name.
struct WakeMarker<const WOKEN: bool>(WakeSide);

impl<const WOKEN: bool> StaticSchemaMarker for WakeMarker<WOKEN> {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = if WOKEN { "ThreadRadarWokenBy" } else { "ThreadRadarWakes" };
    const DESCRIPTION: Option<&'static str> = Some(if WOKEN {
        "Another thread released this one from a wait (a wake-up edge of `threadradar waits`), placed where the wait ended: kernel evidence is the scheduler's own wake-up, exact; gil-holder, same-object and running-thread are inferred from samples. The flow field relates it to the waker's ThreadRadarWakes marker."
    } else {
        "This thread released another one from a wait (a wake-up edge of `threadradar waits`): kernel evidence is the scheduler's own wake-up, exact; gil-holder, same-object and running-thread are inferred from samples. The flow field relates it to the woken thread's ThreadRadarWokenBy marker."
    });
    const CHART_LABEL: Option<&'static str> = Some(if WOKEN { "{marker.data.waker} ({marker.data.evidence})" } else { "{marker.data.wakee} ({marker.data.evidence})" });
    const TOOLTIP_LABEL: Option<&'static str> =
        Some(if WOKEN { "Woken by {marker.data.waker} on {marker.data.object} ({marker.data.evidence})" } else { "Wakes {marker.data.wakee} on {marker.data.object} ({marker.data.evidence})" });
    const TABLE_LABEL: Option<&'static str> = Some(if WOKEN {
        "woken by {marker.data.waker} ({marker.data.wakerTid}) on {marker.data.object}: {marker.data.kind}, {marker.data.evidence}"
    } else {
        "wakes {marker.data.wakee} ({marker.data.wakeeTid}) on {marker.data.object}: {marker.data.kind}, {marker.data.evidence}"
    });
    const FIELDS: &'static [StaticSchemaMarkerField] =
        if WOKEN { wake_fields!("waker", "Waker", "wakerTid", "Waker tid") } else { wake_fields!("wakee", "Woken thread", "wakeeTid", "Woken tid") };
    fn name(&self, _: &mut Profile) -> StringHandle {
        self.0.name
    }
    fn category(&self, _: &mut Profile) -> CategoryHandle {
        self.0.category
    }
    fn string_field_value(&self, i: u32) -> StringHandle {
        self.0.string(i)
    }
    fn number_field_value(&self, i: u32) -> f64 {
        self.0.number(i)
    }
}

/// One execution of a critical section.
struct SectionMarker {
    name: StringHandle,
    category: CategoryHandle,
    /// section, lock, wait to enter.
    strings: [StringHandle; 3],
    /// error (ms), samples, waiters.
    numbers: [f64; 3],
}

impl StaticSchemaMarker for SectionMarker {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "ThreadRadarSection";
    const DESCRIPTION: Option<&'static str> = Some(
        "One execution of a critical section (`threadradar sections`): its ends are estimated at the midpoints between samples, the true duration is within the error; outliers are longer than the section's p99 or 5 medians even at their shortest.",
    );
    const CHART_LABEL: Option<&'static str> = Some("{marker.data.section} {marker.data.lock}");
    const TABLE_LABEL: Option<&'static str> = Some("{marker.name}: {marker.data.section}, lock {marker.data.lock}, ± {marker.data.error}, waited {marker.data.waitToEnter}");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[
        StaticSchemaMarkerField { key: "section", label: "Section", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::SEARCHABLE },
        StaticSchemaMarkerField { key: "lock", label: "Lock", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::SEARCHABLE },
        StaticSchemaMarkerField { key: "error", label: "Error (±)", format: MarkerFieldFormat::Duration, flags: MarkerFieldFlags::empty() },
        StaticSchemaMarkerField { key: "waitToEnter", label: "Waited to enter", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::empty() },
        StaticSchemaMarkerField { key: "samples", label: "Samples inside", format: MarkerFieldFormat::Integer, flags: MarkerFieldFlags::empty() },
        StaticSchemaMarkerField { key: "waiters", label: "Threads waiting meanwhile", format: MarkerFieldFormat::Integer, flags: MarkerFieldFlags::empty() },
    ];
    fn name(&self, _: &mut Profile) -> StringHandle {
        self.name
    }
    fn category(&self, _: &mut Profile) -> CategoryHandle {
        self.category
    }
    fn string_field_value(&self, i: u32) -> StringHandle {
        match i {
            0 => self.strings[0],
            1 => self.strings[1],
            _ => self.strings[2],
        }
    }
    fn number_field_value(&self, i: u32) -> f64 {
        match i {
            2 => self.numbers[0],
            4 => self.numbers[1],
            _ => self.numbers[2],
        }
    }
}

/// One wait to enter or one hold of a lock, from the lock events of `record --exact-locks`.
struct LockMarker {
    name: StringHandle,
    category: CategoryHandle,
    /// lock, the thread whose release let it in (or `-`).
    strings: [StringHandle; 2],
}

impl StaticSchemaMarker for LockMarker {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "ThreadRadarLock";
    const DESCRIPTION: Option<&'static str> = Some(
        "Exact (uprobe): a wait to enter a lock (its acquire function called → returned with it) or a hold (→ released), from kernel uprobes on the interpreter's lock functions (`record --exact-locks`), no sampling error.",
    );
    const CHART_LABEL: Option<&'static str> = Some("{marker.data.lock}");
    const TABLE_LABEL: Option<&'static str> = Some("{marker.name}: {marker.data.lock}, let in by {marker.data.waitedFor}");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[
        StaticSchemaMarkerField { key: "lock", label: "Lock", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::SEARCHABLE },
        StaticSchemaMarkerField { key: "waitedFor", label: "Let in by", format: MarkerFieldFormat::String, flags: MarkerFieldFlags::SEARCHABLE },
    ];
    fn name(&self, _: &mut Profile) -> StringHandle {
        self.name
    }
    fn category(&self, _: &mut Profile) -> CategoryHandle {
        self.category
    }
    fn string_field_value(&self, i: u32) -> StringHandle {
        self.strings[(i as usize).min(1)]
    }
    fn number_field_value(&self, _: u32) -> f64 {
        0.0
    }
}

/// The profile, ready to serialise (with the waits, wake-ups and critical sections of
/// [`Overlay::of`]; write it with [`write`], which declares the flow fields as `flow-id`).
pub fn build(run: &Run) -> Profile {
    let (mut p, parts) = build_samples(run);
    let overlay = Overlay::of(run);
    add_markers(run, &mut p, &parts, &overlay);
    p
}

/// What [`build_samples`] hands to [`add_markers`].
struct Parts {
    handles: Vec<fxprof_processed_profile::ThreadHandle>,
    cats: [CategoryHandle; 6],
    observations: Vec<Vec<crate::timeline::Observation>>,
}

fn build_samples(run: &Run) -> (Profile, Parts) {
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
        p.add_category("Wake-up", CategoryColor::Green),
        p.add_category("Critical section", CategoryColor::Red),
        p.add_category("Lock (exact)", CategoryColor::Purple),
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
    let mut labels: Vec<Option<StringHandle>> = vec![None; run.frames.len()];
    let mut frames: Vec<FrameInfo> = Vec::new();
    for (i, obs) in observations.iter().enumerate() {
        let h = handles[i];
        let mut stacks: FxHashMap<(Option<StackId>, ThreadState), Option<StackHandle>> = FxHashMap::default();
        for o in obs {
            let stack = *stacks.entry((o.stack, o.state)).or_insert_with(|| {
                let cat = cat_of(o.state);
                frames.clear();
                frames.extend(frames_outermost_first(run, o.stack).into_iter().map(|f| {
                    let name = *labels[f as usize].get_or_insert_with(|| p.intern_string(&frame_label(run, f)));
                    FrameInfo { frame: Frame::Label(name), category_pair: cat.into(), flags: FrameFlags::empty() }
                }));
                p.intern_stack_frames(h, frames.drain(..))
            });
            p.add_sample(h, Timestamp::from_nanos_since_reference(o.t_ns), stack, CpuDelta::from_nanos(o.cpu_ns), 1);
        }
    }
    (p, Parts { handles, cats, observations })
}

fn add_markers(run: &Run, p: &mut Profile, parts: &Parts, overlay: &Overlay) {
    let Parts { handles, cats, observations } = parts;
    let cat_of = |s: ThreadState| match s {
        ThreadState::Computing => cats[0],
        ThreadState::Gil => cats[1],
        ThreadState::Idle => cats[2],
    };
    let at = Timestamp::from_nanos_since_reference;
    let state_names = [ThreadState::Computing, ThreadState::Gil, ThreadState::Idle].map(|s| p.intern_string(state_label(s)));
    let no_object = p.intern_string("");
    let mut object = String::new();
    for iv in state_intervals(run, observations) {
        overlay.objects_during_into(iv.thread, iv.start_ns, iv.end_ns, &mut object);
        let marker = WaitMarker {
            name: state_names[iv.state as usize],
            category: cat_of(iv.state),
            blocked: p.intern_string(iv.blocked.as_deref().unwrap_or("")),
            object: if object.is_empty() { no_object } else { p.intern_string(&object) },
            samples: iv.samples as f64,
        };
        p.add_marker(handles[iv.thread as usize], MarkerTiming::Interval(at(iv.start_ns), at(iv.end_ns)), marker);
    }
    let (wakes_name, woken_name) = (p.intern_string("Wakes"), p.intern_string("Woken by"));
    // Thread names, objects, evidence and kinds repeat from edge to edge: interned once each.
    let thread_names: Vec<StringHandle> = run.threads.iter().map(|t| p.intern_string(&t.name)).collect();
    let mut strings: FxHashMap<&str, StringHandle> = FxHashMap::default();
    let mut flow_id = String::new();
    for w in &overlay.wakes {
        let (waker, wakee) = (&run.threads[w.waker as usize], &run.threads[w.wakee as usize]);
        let mut handle = |s: &'static str| *strings.entry(s).or_insert_with(|| p.intern_string(s));
        let (evidence, kind) = (handle(w.evidence), handle(w.kind()));
        let object = *strings.entry(w.object.as_str()).or_insert_with(|| p.intern_string(&w.object));
        flow_id.clear();
        let _ = std::fmt::Write::write_fmt(&mut flow_id, format_args!("{:x}", w.id));
        let flow = p.intern_string(&flow_id);
        let side = |name, other: StringHandle, tid: u32| WakeSide { name, category: cats[3], strings: [other, object, evidence, kind, flow], tid: tid as f64, confidence: w.confidence };
        let (wakee_name, waker_name) = (thread_names[w.wakee as usize], thread_names[w.waker as usize]);
        p.add_marker(handles[w.waker as usize], MarkerTiming::Instant(at(w.wake_ns)), WakeMarker::<false>(side(wakes_name, wakee_name, wakee.tid)));
        p.add_marker(handles[w.wakee as usize], MarkerTiming::Instant(at(w.resume_ns)), WakeMarker::<true>(side(woken_name, waker_name, waker.tid)));
    }
    let (section_name, outlier_name) = (p.intern_string("Critical section"), p.intern_string("Critical section (outlier)"));
    for s in &overlay.sections {
        let wait = match s.wait_ns {
            Some(ns) => format!("{:.3} ms", ns as f64 / 1e6),
            None => "unknown (no wait data)".into(),
        };
        let marker = SectionMarker {
            name: if s.outlier { outlier_name } else { section_name },
            category: cats[4],
            strings: [p.intern_string(&s.label), p.intern_string(&s.lock), p.intern_string(&wait)],
            numbers: [s.error_ns as f64 / 1e6, s.samples as f64, s.waiters as f64],
        };
        p.add_marker(handles[s.thread as usize], MarkerTiming::Interval(at(s.start_ns), at(s.end_ns.max(s.start_ns))), marker);
    }
    let (wait_name, hold_name, nobody) = (p.intern_string("Lock wait (exact)"), p.intern_string("Lock held (exact)"), p.intern_string("-"));
    for l in &overlay.locks {
        let lock = p.intern_string(&l.lock);
        let by = l.waited_for.as_deref().map_or(nobody, |b| p.intern_string(b));
        let handle = handles[l.thread as usize];
        if l.acquired_ns > l.called_ns {
            p.add_marker(handle, MarkerTiming::Interval(at(l.called_ns), at(l.acquired_ns)), LockMarker { name: wait_name, category: cats[5], strings: [lock, by] });
        }
        p.add_marker(handle, MarkerTiming::Interval(at(l.acquired_ns), at(l.released_ns.max(l.acquired_ns))), LockMarker { name: hold_name, category: cats[5], strings: [lock, by] });
    }
}

/// Writes through to `inner`, rewriting the format of the wake-up markers' `flow` field from
/// `unique-string` to `flow-id` in the profile's `meta.markerSchema` (`meta` is serialised first;
/// its end is the `"libs"` key that follows it). Only the schema is touched: a `"` inside a JSON
/// string is always escaped, so the pattern cannot occur in a name the program chose.
pub struct FlowFormat<W: Write> {
    inner: W,
    head: Vec<u8>,
    done: bool,
}

const FLOW_AS_WRITTEN: &[u8] = br#"{"key":"flow","label":"Flow","format":"unique-string"}"#;
const FLOW_AS_READ: &[u8] = br#"{"key":"flow","label":"Flow","format":"flow-id"}"#;
const META_END: &[u8] = br#"},"libs":"#;

impl<W: Write> FlowFormat<W> {
    pub fn new(inner: W) -> Self {
        FlowFormat { inner, head: Vec::new(), done: false }
    }

    fn release(&mut self) -> std::io::Result<()> {
        let mut out = Vec::with_capacity(self.head.len());
        let mut i = 0;
        while i < self.head.len() {
            if self.head[i..].starts_with(FLOW_AS_WRITTEN) {
                out.extend_from_slice(FLOW_AS_READ);
                i += FLOW_AS_WRITTEN.len();
            } else {
                out.push(self.head[i]);
                i += 1;
            }
        }
        self.done = true;
        self.head = Vec::new();
        self.inner.write_all(&out)
    }
}

impl<W: Write> Write for FlowFormat<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.done {
            return self.inner.write(buf);
        }
        let from = self.head.len().saturating_sub(META_END.len());
        self.head.extend_from_slice(buf);
        if self.head[from..].windows(META_END.len()).any(|w| w == META_END) {
            self.release()?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if !self.done {
            self.release()?;
        }
        self.inner.flush()
    }
}

pub fn write(run: &Run, out: &mut dyn Write) -> Result<(), ExportError> {
    // The overlay (waits view, sections) is computed while the samples are added.
    let ((mut profile, parts), overlay) = with_overlay(run, Overlay::of, || build_samples(run));
    add_markers(run, &mut profile, &parts, &overlay);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, FlowFormat::new(out));
    serde_json::to_writer(&mut w, &profile).map_err(|e| ExportError::Encode { format: "firefox", detail: e.to_string() })?;
    w.flush()?;
    // Freed on a thread of its own: nobody needs to wait for that.
    drop_later((profile, parts, overlay));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_fields_are_declared_flow_id_in_the_schema_only() {
        let schema = br#"{"meta":{"markerSchema":[{"name":"A","fields":[{"key":"flow","label":"Flow","format":"unique-string"}]},{"name":"B","fields":[{"key":"flow","label":"Flow","format":"unique-string"}]}]},"libs":[],"threads":[{"name":"{\"key\":\"flow\",\"label\":\"Flow\",\"format\":\"unique-string\"}"}]}"#;
        // Written in small pieces that split the patterns.
        for piece in [1, 7, 64, schema.len()] {
            let mut out = Vec::new();
            let mut w = FlowFormat::new(&mut out);
            for chunk in schema.chunks(piece) {
                w.write_all(chunk).unwrap();
            }
            w.flush().unwrap();
            let text = String::from_utf8(out).unwrap();
            assert_eq!(text.matches(r#""format":"flow-id""#).count(), 2, "{text}");
            assert!(text.contains(r#""name":"{\"key\":\"flow\",\"label\":\"Flow\",\"format\":\"unique-string\"}""#), "a thread's name is untouched: {text}");
        }
    }
}
