//! The Firefox Profiler's processed profile format (`meta.preprocessedProfileVersion`), as
//! ThreadRadar's `export --format firefox` writes it (through `fxprof-processed-profile`, the
//! crate samply uses) and CPython 3.15's `profiling.sampling --gecko` writes it.
//!
//! Per thread: `samples` (`stack`, and `time` or `timeDeltas` in milliseconds, optional
//! `weight`), `stackTable` (`frame`, `prefix`: a stack is its frame under its prefix),
//! `frameTable` (`func`, `line`), `funcTable` (`name`, `fileName`, `lineNumber`), with the strings
//! in the thread's `stringArray` or in `shared.stringArray`. A function without a `fileName`
//! may carry its place in its name, as ThreadRadar's labels do (`Worker.run (app.py:12)`).
//! Thread names and tids are kept, except CPython's, which are `Thread-<tid>` whatever the
//! program called the thread. Categories are thread states only in ThreadRadar's own export
//! (`Python` computing, `GIL wait`, `Idle`, the category of a sample's innermost frame): they are
//! read back when the profile's categories are those, so a round trip keeps the states; a sample
//! without frames carries no category and counts as computing. Other writers' categories (e.g.
//! CPython's `Python`, samply's `User`/`Kernel`) say nothing about the thread's state; CPython's
//! state markers do (`Has GIL`, `On CPU`, `Waiting for GIL`…: `gecko_states.rs`). CPython
//! writes its sampler's pid for every thread: the program's is the tid of the thread it flags
//! `isMainThread`.

use super::gecko_states::{ms_to_ns, StateMarkers};
use super::json::{self, Categories, Col, Count, Flag, Frames, Id, Ix, Line, Markers, Num, Samples, Stacks, Str, Strings, Threads};
use super::{bounded, quote, Ctx, ImportError, Profile, RawFrame, RawSample};
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::io::BufRead;
use threadradar_profiler::run::ThreadState;

/// Whether JSON text looks like a processed Firefox profile (the first 64 KiB suffice: `meta`
/// comes first in both writers).
pub fn looks_like(head: &str) -> bool {
    head.contains("\"preprocessedProfileVersion\"") || (head.contains("\"stackTable\"") && head.contains("\"frameTable\""))
}

fn err(ctx: &Ctx, at: impl Into<String>, detail: impl Into<String>) -> ImportError {
    ImportError::Parse { path: ctx.path.to_path_buf(), format: ctx.format, at: at.into(), detail: bounded(detail.into()) }
}

// The file as the importer reads it: only what it uses, typed and capped (`json.rs`); every
// other key is skipped as it is read. Columns that are not arrays read as empty, values of
// another type than expected as absent, as the Firefox Profiler itself tolerates them.

#[derive(Deserialize)]
struct File {
    meta: Option<Meta>,
    threads: Option<Col<Thread, Threads>>,
    shared: Option<Shared>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Meta {
    preprocessed_profile_version: Option<Count>,
    imported_from: Str,
    product: Str,
    interval: Option<Num>,
    start_time: Option<Num>,
    categories: Col<Category, Categories>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Category {
    name: Str,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Shared {
    string_array: Col<Str, Strings>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Thread {
    name: Str,
    tid: Id,
    pid: Id,
    is_main_thread: Flag,
    samples: Option<SampleTable>,
    stack_table: Option<StackTable>,
    frame_table: Option<FrameTable>,
    func_table: Option<FuncTable>,
    string_array: Option<Col<Str, Strings>>,
    string_table: Option<Col<Str, Strings>>,
    markers: Option<MarkerTable>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct SampleTable {
    stack: Col<Ix, Samples>,
    time: Col<Num, Samples>,
    time_deltas: Col<Num, Samples>,
    weight: Col<Count, Samples>,
    weight_type: Str,
    /// Firefox's raw (unprocessed) format has a `schema` here.
    schema: Option<IgnoredAny>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct StackTable {
    frame: Col<Ix, Stacks>,
    prefix: Col<Ix, Stacks>,
    category: Col<Ix, Stacks>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct FrameTable {
    func: Col<Ix, Frames>,
    line: Col<Line, Frames>,
    category: Col<Ix, Frames>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct FuncTable {
    name: Col<Ix, Frames>,
    file_name: Col<Ix, Frames>,
    line_number: Col<Line, Frames>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct MarkerTable {
    pub name: Col<Ix, Markers>,
    pub start_time: Col<Num, Markers>,
    pub end_time: Col<Num, Markers>,
}

/// An index column's entry `i`, if it has one.
fn index(col: &[Ix], i: usize) -> Option<usize> {
    col.get(i).and_then(|x| x.get())
}

/// `Worker.run (app.py:12)` → (`Worker.run`, `app.py`, 12).
fn split_label(name: &str) -> Option<(String, String, u32)> {
    let (n, loc) = name.strip_suffix(')')?.rsplit_once(" (")?;
    let (file, line) = loc.rsplit_once(':')?;
    Some((n.to_string(), file.to_string(), line.parse().ok()?))
}

/// The file's `meta` and `threads`; a raw (unprocessed) Gecko profile is refused.
fn read_root(file: File, ctx: &Ctx) -> Result<(Meta, Vec<Thread>, Shared), ImportError> {
    let meta = file.meta.ok_or_else(|| err(ctx, "the top-level object", "it has no \"meta\" object"))?;
    let threads = file.threads.ok_or_else(|| err(ctx, "the top-level object", "it has no \"threads\" array"))?.0;
    if meta.preprocessed_profile_version.is_none() {
        let raw = threads.iter().any(|t| t.samples.as_ref().is_some_and(|s| s.schema.is_some()));
        return Err(err(
            ctx,
            "meta",
            if raw {
                "it is a Gecko profile in Firefox's raw format (\"schema\"/\"data\" tables), not the processed one: open it in profiler.firefox.com and upload or save it from there to get the processed file"
            } else {
                "it has no \"preprocessedProfileVersion\""
            },
        ));
    }
    Ok((meta, threads, file.shared.unwrap_or_default()))
}

/// ThreadRadar's categories, by index: the thread states they stand for (empty for other
/// writers' categories).
fn category_states(meta: &Meta) -> Vec<Option<ThreadState>> {
    let names: Vec<&str> = meta.categories.iter().map(|c| c.name.get().unwrap_or("")).collect();
    if !(names.contains(&"GIL wait") && names.contains(&"Idle") && names.contains(&"Python")) {
        return Vec::new();
    }
    names
        .iter()
        .map(|n| match *n {
            "Python" => Some(ThreadState::Computing),
            "GIL wait" => Some(ThreadState::Gil),
            "Idle" => Some(ThreadState::Idle),
            _ => None,
        })
        .collect()
}

pub fn parse(reader: impl BufRead, ctx: &Ctx) -> Result<Profile, ImportError> {
    let file: File = json::read(reader, ctx, |de| File::deserialize(de))?;
    let (meta, threads, shared) = read_root(file, ctx)?;
    let version = meta.preprocessed_profile_version.map_or(0, |v| v.0);
    let from_cpython = meta.imported_from.get().is_some_and(|s| s.contains("Tachyon")) || meta.product.get() == Some("Python");
    let mut p = Profile::new(ctx, if from_cpython { format!("CPython profiling.sampling gecko (processed profile v{version})") } else { format!("Firefox Profiler processed profile v{version}") });
    if let Some(i) = meta.interval.and_then(Num::get).filter(|i| *i > 0.0) {
        p.interval_ns = Some((i * 1e6).round() as u64);
    }
    // `startTime` is the Unix epoch in ms for fxprof's writer; CPython's is a monotonic clock.
    let start_ms = meta.start_time.and_then(Num::get).unwrap_or(0.0);
    if start_ms > 1e12 && !from_cpython {
        p.start_unix_ms = Some(start_ms as u64);
    }
    if let Some(product) = meta.product.get().filter(|s| !s.is_empty() && !from_cpython && *s != "ThreadRadar run") {
        p.check_name(product)?;
        p.command = product.split(' ').map(str::to_string).collect();
    }
    let states = category_states(&meta);
    let shared_strings = &shared.string_array[..];
    // CPython writes its own pid (the sampler's) for every thread; the program's is its main
    // thread's tid (CPython flags the main thread; on Linux its tid is the process id).
    let main_tid = threads.iter().find(|t| t.is_main_thread.0 == Some(true)).and_then(|t| t.tid.0);
    let cpython_pid = main_tid.unwrap_or(0) as u32;
    // The profile's last sample time: CPython closes every open state marker there.
    let profile_end = threads.iter().flat_map(|t| t.samples.iter().flat_map(|s| s.time.iter())).filter_map(|t| t.get()).fold(0.0, f64::max);
    let mut any_states = false;
    // Sample times are milliseconds from the profile's start; the earliest becomes 0 unless the
    // file's clock starts at the profile's (fxprof), so the threads keep their relative times.
    let mut any_sample = false;
    let (no_stacks, no_frames, no_funcs) = (StackTable::default(), FrameTable::default(), FuncTable::default());
    for (ti, th) in threads.iter().enumerate() {
        let name = th.name.get().unwrap_or("");
        let quoted = quote(name);
        let at = |what: String| format!("thread {ti} ({quoted}) {what}");
        let strings: &[Str] = th.string_array.as_deref().or(th.string_table.as_deref()).unwrap_or(shared_strings);
        let string = |i: Option<usize>| i.and_then(|i| strings.get(i)).and_then(Str::get);
        let tid = th.tid.0.unwrap_or(ti as u64 + 1) as u32;
        let pid = if from_cpython { cpython_pid } else { th.pid.0.unwrap_or(0) as u32 };
        let thread_name = (!from_cpython && !name.is_empty()).then_some(name);
        let thread = p.thread(pid, tid, thread_name)?;
        if let Some(main) = th.is_main_thread.0 {
            p.threads[thread].main = Some(main);
        }
        let markers = match &th.markers {
            Some(m) if states.is_empty() => StateMarkers::read(m, |i| strings.get(i).and_then(Str::get), ms_to_ns(profile_end)),
            _ => None,
        };
        any_states |= markers.is_some();
        let samples = th.samples.as_ref().ok_or_else(|| err(ctx, at("".into()), "it has no \"samples\" table"))?;
        let stacks = th.stack_table.as_ref().unwrap_or(&no_stacks);
        let frames = th.frame_table.as_ref().unwrap_or(&no_frames);
        let funcs = th.func_table.as_ref().unwrap_or(&no_funcs);
        let (stack_frame, stack_prefix, stack_category) = (&stacks.frame[..], &stacks.prefix[..], &stacks.category[..]);
        let frame_category = &frames.category[..];
        // A sample's state: the category of its stack (or of the stack's frame).
        let state_of = |st: usize| -> Option<ThreadState> {
            if states.is_empty() {
                return None;
            }
            let c = index(stack_category, st).or_else(|| index(stack_frame, st).and_then(|f| index(frame_category, f)))?;
            states.get(c).copied().flatten()
        };
        let (frame_func, frame_line) = (&frames.func[..], &frames.line[..]);
        let (func_name, func_file, func_line) = (&funcs.name[..], &funcs.file_name[..], &funcs.line_number[..]);
        // The profile's frame for each frame index, and its stack for each stack index, made
        // when a sample first uses them: each sample then costs one lookup.
        let mut made: Vec<Option<u32>> = vec![None; stack_frame.len().max(frame_func.len())];
        let mut frame_of = |p: &mut Profile, f: usize, si: usize| -> Result<u32, ImportError> {
            if let Some(Some(r)) = made.get(f) {
                return Ok(*r);
            }
            let func = index(frame_func, f).ok_or_else(|| err(ctx, at(format!("sample {si}")), format!("frame {f} has no function (the frame table has {})", frame_func.len())))?;
            let label = string(index(func_name, func)).ok_or_else(|| err(ctx, at(format!("sample {si}")), format!("function {func} has no name in the string table")))?;
            let line = frame_line.get(f).and_then(|l| l.0).or_else(|| func_line.get(func).and_then(|l| l.0)).unwrap_or(0);
            let r = match string(index(func_file, func)) {
                Some(file) => RawFrame { file: file.to_string(), name: label.to_string(), line },
                None => match split_label(label) {
                    Some((n, file, l)) => RawFrame { file, name: n, line: if line > 0 { line } else { l } },
                    None => RawFrame { file: String::new(), name: label.to_string(), line },
                },
            };
            let id = p.frame(r)?;
            if f >= made.len() {
                made.resize(f + 1, None);
            }
            made[f] = Some(id);
            Ok(id)
        };
        let mut stack_ids: Vec<Option<u32>> = vec![None; stack_frame.len()];
        let (stack_col, times, deltas, weights) = (&samples.stack[..], &samples.time[..], &samples.time_deltas[..], &samples.weight[..]);
        let counts_samples = samples.weight_type.get().is_none_or(|w| w == "samples");
        if times.is_empty() && deltas.is_empty() && !stack_col.is_empty() {
            return Err(err(ctx, at("samples".into()), "it has neither \"time\" nor \"timeDeltas\""));
        }
        let mut t_ms = 0.0;
        for (si, s) in stack_col.iter().enumerate() {
            t_ms = match (times.get(si), deltas.get(si)) {
                (Some(t), _) => t.get().ok_or_else(|| err(ctx, at(format!("sample {si}")), "its time is not a number"))?,
                (None, Some(d)) => t_ms + d.get().ok_or_else(|| err(ctx, at(format!("sample {si}")), "its time delta is not a number"))?,
                (None, None) => {
                    return Err(err(ctx, at(format!("sample {si}")), format!("it has no time: the time column has {} entries for {} samples", times.len().max(deltas.len()), stack_col.len())))
                }
            };
            // The stack: its prefixes walked, innermost first, up to one already made; a null
            // stack is a sample without frames.
            let mut chain = Vec::new();
            let mut next = s.get();
            let mut parent = None;
            while let Some(st) = next {
                if let Some(Some(id)) = stack_ids.get(st) {
                    parent = Some(*id);
                    break;
                }
                if chain.len() > stack_frame.len() {
                    return Err(err(ctx, at(format!("sample {si}")), format!("stack {st}'s prefixes loop")));
                }
                let f = index(stack_frame, st).ok_or_else(|| err(ctx, at(format!("sample {si}")), format!("stack {st} does not exist (the stack table has {})", stack_frame.len())))?;
                chain.push((st, f));
                next = index(stack_prefix, st);
            }
            for &(st, f) in chain.iter().rev() {
                let frame = frame_of(&mut p, f, si)?;
                let id = p.stack_node(parent, frame)?;
                stack_ids[st] = Some(id);
                parent = Some(id);
            }
            let count = if counts_samples { weights.get(si).map(|w| w.0).filter(|&w| w > 0).unwrap_or(1) } else { 1 };
            let t_ns = ms_to_ns(t_ms);
            let (state, gil) = match &markers {
                Some(m) => m.at(t_ns).map_or((None, false), |(s, g)| (Some(s), g)),
                None => (s.get().and_then(state_of), false),
            };
            p.push_sample(RawSample { thread, t_ns: Some(t_ns), duration_ns: None, stack: parent, count, state, gil })?;
            any_sample = true;
        }
    }
    if from_cpython {
        p.missing.push(("thread_names", "thread names (CPython's gecko output calls every thread Thread-<tid>)"));
        if main_tid.is_none() {
            p.missing.push(("pid", "the program's process id (CPython gives its sampler's, and no thread is flagged main)"));
        }
        if any_states {
            p.missing.push(("io_waits", "blocking I/O apart from other waits (an off-CPU thread without the GIL counts as idle)"));
        }
    }
    if !any_sample {
        p.samples.clear();
    }
    Ok(p)
}
