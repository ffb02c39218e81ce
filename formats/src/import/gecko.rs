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
use super::{bounded, quote, Ctx, ImportError, Profile, RawFrame, RawSample};
use serde_json::Value;
use threadradar_profiler::run::ThreadState;

/// Whether JSON text looks like a processed Firefox profile (the first 64 KiB suffice: `meta`
/// comes first in both writers).
pub fn looks_like(head: &str) -> bool {
    head.contains("\"preprocessedProfileVersion\"") || (head.contains("\"stackTable\"") && head.contains("\"frameTable\""))
}

fn err(ctx: &Ctx, at: impl Into<String>, detail: impl Into<String>) -> ImportError {
    ImportError::Parse { path: ctx.path.to_path_buf(), format: ctx.format, at: at.into(), detail: bounded(detail.into()) }
}

/// A column of a table: the array, or (as fxprof writes columns whose every value is the same)
/// nothing, which reads as all-null.
fn column<'a>(table: &'a Value, key: &str) -> &'a [Value] {
    table.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn index(v: Option<&Value>) -> Option<usize> {
    v.and_then(Value::as_u64).map(|i| i as usize)
}

/// A number or a numeric string (pids and tids are either, depending on the writer).
fn id(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

/// `Worker.run (app.py:12)` → (`Worker.run`, `app.py`, 12).
fn split_label(name: &str) -> Option<(String, String, u32)> {
    let (n, loc) = name.strip_suffix(')')?.rsplit_once(" (")?;
    let (file, line) = loc.rsplit_once(':')?;
    Some((n.to_string(), file.to_string(), line.parse().ok()?))
}

/// The file as JSON, its `meta` and its `threads`; a raw (unprocessed) Gecko profile is refused.
fn read_root<'a>(root: &'a Value, ctx: &Ctx) -> Result<(&'a Value, &'a [Value]), ImportError> {
    let meta = root.get("meta").filter(|m| m.is_object()).ok_or_else(|| err(ctx, "the top-level object", "it has no \"meta\" object"))?;
    let threads = root.get("threads").and_then(Value::as_array).ok_or_else(|| err(ctx, "the top-level object", "it has no \"threads\" array"))?;
    if meta.get("preprocessedProfileVersion").is_none() {
        let raw = threads.iter().any(|t| t.get("samples").and_then(|s| s.get("schema")).is_some());
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
    Ok((meta, threads))
}

/// ThreadRadar's categories, by index: the thread states they stand for (empty for other
/// writers' categories).
fn category_states(meta: &Value) -> Vec<Option<ThreadState>> {
    let names: Vec<&str> = meta.get("categories").and_then(Value::as_array).map_or(Vec::new(), |c| c.iter().map(|c| c.get("name").and_then(Value::as_str).unwrap_or("")).collect());
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

pub fn parse(bytes: &[u8], ctx: &Ctx) -> Result<Profile, ImportError> {
    let root: Value = serde_json::from_slice(bytes).map_err(|e| {
        let at = format!("line {} column {}", e.line(), e.column());
        if e.is_eof() {
            ImportError::Truncated { path: ctx.path.to_path_buf(), format: ctx.format, at }
        } else {
            err(ctx, at, e.to_string())
        }
    })?;
    let (meta, threads) = read_root(&root, ctx)?;
    let version = meta["preprocessedProfileVersion"].as_u64().unwrap_or(0);
    let from_cpython = meta.get("importedFrom").and_then(Value::as_str).is_some_and(|s| s.contains("Tachyon")) || meta.get("product").and_then(Value::as_str) == Some("Python");
    let mut p = Profile::new(ctx, if from_cpython { format!("CPython profiling.sampling gecko (processed profile v{version})") } else { format!("Firefox Profiler processed profile v{version}") });
    if let Some(i) = meta.get("interval").and_then(Value::as_f64).filter(|i| *i > 0.0) {
        p.interval_ns = Some((i * 1e6).round() as u64);
    }
    // `startTime` is the Unix epoch in ms for fxprof's writer; CPython's is a monotonic clock.
    let start_ms = meta.get("startTime").and_then(Value::as_f64).unwrap_or(0.0);
    if start_ms > 1e12 && !from_cpython {
        p.start_unix_ms = Some(start_ms as u64);
    }
    if let Some(product) = meta.get("product").and_then(Value::as_str).filter(|s| !s.is_empty() && !from_cpython && *s != "ThreadRadar run") {
        p.check_name(product)?;
        p.command = product.split(' ').map(str::to_string).collect();
    }
    let states = category_states(meta);
    let shared_strings = column(root.get("shared").unwrap_or(&Value::Null), "stringArray");
    // CPython writes its own pid (the sampler's) for every thread; the program's is its main
    // thread's tid (CPython flags the main thread; on Linux its tid is the process id).
    let main_tid = threads.iter().find(|t| t.get("isMainThread").and_then(Value::as_bool) == Some(true)).and_then(|t| t.get("tid").and_then(id));
    let cpython_pid = main_tid.unwrap_or(0) as u32;
    // The profile's last sample time: CPython closes every open state marker there.
    let profile_end = threads.iter().flat_map(|t| column(t.get("samples").unwrap_or(&Value::Null), "time")).filter_map(Value::as_f64).fold(0.0, f64::max);
    let mut any_states = false;
    // Sample times are milliseconds from the profile's start; the earliest becomes 0 unless the
    // file's clock starts at the profile's (fxprof), so the threads keep their relative times.
    let mut any_sample = false;
    for (ti, th) in threads.iter().enumerate() {
        let name = th.get("name").and_then(Value::as_str).unwrap_or("");
        let quoted = quote(name);
        let at = |what: String| format!("thread {ti} ({quoted}) {what}");
        let strings = th.get("stringArray").or_else(|| th.get("stringTable")).and_then(Value::as_array).map_or(shared_strings, Vec::as_slice);
        let string = |i: Option<usize>| i.and_then(|i| strings.get(i)).and_then(Value::as_str);
        let tid = th.get("tid").and_then(id).unwrap_or(ti as u64 + 1) as u32;
        let pid = if from_cpython { cpython_pid } else { th.get("pid").and_then(id).unwrap_or(0) as u32 };
        let thread_name = (!from_cpython && !name.is_empty()).then_some(name);
        let thread = p.thread(pid, tid, thread_name)?;
        if let Some(main) = th.get("isMainThread").and_then(Value::as_bool) {
            p.threads[thread].main = Some(main);
        }
        let markers = if states.is_empty() { StateMarkers::read(th, |i| strings.get(i).and_then(Value::as_str), ms_to_ns(profile_end)) } else { None };
        any_states |= markers.is_some();
        let samples = th.get("samples").ok_or_else(|| err(ctx, at("".into()), "it has no \"samples\" table"))?;
        let (stacks, frames, funcs) = (&th["stackTable"], &th["frameTable"], &th["funcTable"]);
        let (stack_frame, stack_prefix, stack_category) = (column(stacks, "frame"), column(stacks, "prefix"), column(stacks, "category"));
        let frame_category = column(frames, "category");
        // A sample's state: the category of its stack (or of the stack's frame).
        let state_of = |st: usize| -> Option<ThreadState> {
            if states.is_empty() {
                return None;
            }
            let c = index(stack_category.get(st)).or_else(|| index(stack_frame.get(st)).and_then(|f| index(frame_category.get(f))))?;
            states.get(c).copied().flatten()
        };
        let (frame_func, frame_line) = (column(frames, "func"), column(frames, "line"));
        let (func_name, func_file, func_line) = (column(funcs, "name"), column(funcs, "fileName"), column(funcs, "lineNumber"));
        // The profile's frame for each frame index, and its stack for each stack index, made
        // when a sample first uses them: each sample then costs one lookup.
        let mut made: Vec<Option<u32>> = vec![None; stack_frame.len().max(frame_func.len())];
        let mut frame_of = |p: &mut Profile, f: usize, si: usize| -> Result<u32, ImportError> {
            if let Some(Some(r)) = made.get(f) {
                return Ok(*r);
            }
            let func = index(frame_func.get(f)).ok_or_else(|| err(ctx, at(format!("sample {si}")), format!("frame {f} has no function (the frame table has {})", frame_func.len())))?;
            let label = string(index(func_name.get(func))).ok_or_else(|| err(ctx, at(format!("sample {si}")), format!("function {func} has no name in the string table")))?;
            let line = frame_line.get(f).and_then(Value::as_u64).or_else(|| func_line.get(func).and_then(Value::as_u64)).unwrap_or(0) as u32;
            let r = match string(index(func_file.get(func))) {
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
        let stack_col = column(samples, "stack");
        let times = column(samples, "time");
        let deltas = column(samples, "timeDeltas");
        let weights = column(samples, "weight");
        let counts_samples = samples.get("weightType").and_then(Value::as_str).is_none_or(|w| w == "samples");
        if times.is_empty() && deltas.is_empty() && !stack_col.is_empty() {
            return Err(err(ctx, at("samples".into()), "it has neither \"time\" nor \"timeDeltas\""));
        }
        let mut t_ms = 0.0;
        for (si, s) in stack_col.iter().enumerate() {
            t_ms = match (times.get(si), deltas.get(si)) {
                (Some(t), _) => t.as_f64().ok_or_else(|| err(ctx, at(format!("sample {si}")), "its time is not a number"))?,
                (None, Some(d)) => t_ms + d.as_f64().ok_or_else(|| err(ctx, at(format!("sample {si}")), "its time delta is not a number"))?,
                (None, None) => {
                    return Err(err(ctx, at(format!("sample {si}")), format!("it has no time: the time column has {} entries for {} samples", times.len().max(deltas.len()), stack_col.len())))
                }
            };
            // The stack: its prefixes walked, innermost first, up to one already made; a null
            // stack is a sample without frames.
            let mut chain = Vec::new();
            let mut next = index(Some(s));
            let mut parent = None;
            while let Some(st) = next {
                if let Some(Some(id)) = stack_ids.get(st) {
                    parent = Some(*id);
                    break;
                }
                if chain.len() > stack_frame.len() {
                    return Err(err(ctx, at(format!("sample {si}")), format!("stack {st}'s prefixes loop")));
                }
                let f = index(stack_frame.get(st)).ok_or_else(|| err(ctx, at(format!("sample {si}")), format!("stack {st} does not exist (the stack table has {})", stack_frame.len())))?;
                chain.push((st, f));
                next = index(stack_prefix.get(st));
            }
            for &(st, f) in chain.iter().rev() {
                let frame = frame_of(&mut p, f, si)?;
                let id = p.stack_node(parent, frame)?;
                stack_ids[st] = Some(id);
                parent = Some(id);
            }
            let count = if counts_samples { weights.get(si).and_then(Value::as_u64).filter(|&w| w > 0).unwrap_or(1) } else { 1 };
            let t_ns = ms_to_ns(t_ms);
            let (state, gil) = match &markers {
                Some(m) => m.at(t_ns).map_or((None, false), |(s, g)| (Some(s), g)),
                None => (index(Some(s)).and_then(state_of), false),
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
