//! Whose code a frame is and what kind of thread runs it: the two rules every way of making a run
//! shares (`record`'s sampler and the importers of other profilers' files), kept here once so
//! that a recorded run and an imported one attribute the same frames the same way.
//!
//! - [`resolve_function`]: the function (and class) a frame belongs to, from the source when it
//!   is here, else from the interpreter's own name.
//! - [`derive_entry_point_types`]: a thread's type from its entry point, for threads whose
//!   `threading.Thread` object was not read (docs/run-format.md).

use crate::run::{Frame, Function, Run, StackId, ThreadId, TypeSource};

/// `(qualname, class, def line, end line, class line)` of the function a frame belongs to.
pub type ResolvedFunction = (String, Option<String>, u32, u32, u32);

/// The function of a frame at `line` named `runtime_name` by the interpreter: from the source's
/// index when there is one (by line, or by qualified name when the line is unknown, as in perf's
/// trampolines), else the interpreter's name (a qualified name on 3.11+, where `A.m` without
/// `<locals>` is method `m` of class `A`).
#[cfg(feature = "source")]
pub fn resolve_function(index: Option<&crate::source::SourceIndex>, runtime_name: &str, line: u32) -> ResolvedFunction {
    let from_index = |idx: &crate::source::SourceIndex, line: u32| {
        let r = idx.resolve_named(line, runtime_name);
        let (class, class_line) = match r.class {
            Some((c, l)) => (Some(c), l),
            None => (None, 0),
        };
        (r.qualname, class, r.line, r.end_line, class_line)
    };
    match index {
        Some(idx) if line > 0 => from_index(idx, line),
        Some(idx) => match idx.find(runtime_name, 0) {
            Some(def) => from_index(idx, def.line),
            None => runtime_function(runtime_name),
        },
        None => runtime_function(runtime_name),
    }
}

/// A function known only by the interpreter's name for it.
pub fn runtime_function(runtime_name: &str) -> ResolvedFunction {
    let class = match runtime_name.rsplit_once('.') {
        Some((owner, _)) if !owner.contains('<') && runtime_name != "<module>" => Some(owner.to_string()),
        _ => None,
    };
    (runtime_name.to_string(), class, 0, 0, 0)
}

/// Gives every thread whose type is still empty a type from its entry point: the frame just
/// above `threading`'s bootstrap (`_bootstrap_inner`), or the outermost frame when there is none.
/// `Thread.run` (threading.py) means a plain `Thread(target=…)`, a method `X.run` means type `X`
/// ([`TypeSource::EntryPoint`]). A thread without the bootstrap was not started by `threading`
/// (`_thread.start_new_thread(f)`, or C code): its type is its root function's qualified name
/// (`WorkerPool._perform_spawn`, [`TypeSource::RootFunction`]) — the class of a method it runs
/// is not the thread's kind. A thread whose
/// outermost frame is a module (`<module>`, a main thread) has no entry point, nor has one that
/// starts in `runpy` (`python -m`, and CPython's sampler running a script: `_run_module_as_main`
/// then `_run_code` above the module). Threads without one get `unknown` with
/// [`TypeSource::Unknown`].
pub fn derive_entry_point_types(run: &mut Run, unknown: &str) {
    let mut pending: Vec<bool> = run.threads.iter().map(|t| t.thread_type.is_empty()).collect();
    let mut left = pending.iter().filter(|p| **p).count();
    if left == 0 {
        return;
    }
    let mut found: Vec<Option<(String, TypeSource)>> = vec![None; run.threads.len()];
    let mut seen: std::collections::HashSet<(ThreadId, StackId)> = std::collections::HashSet::new();
    'outer: for s in &run.samples {
        for ts in &s.threads {
            let i = ts.thread as usize;
            if !pending[i] {
                continue;
            }
            let Some(stack) = ts.stack else { continue };
            // A stack already looked at for this thread says nothing new (a thread without an
            // entry point would otherwise cost its samples times its stack depth).
            if !seen.insert((ts.thread, stack)) {
                continue;
            }
            let frames: Vec<&Frame> = run.stack_frames(stack).collect();
            // Outermost first.
            let outer: Vec<&Function> = frames.iter().rev().map(|f| &run.functions[f.function as usize]).collect();
            let in_runpy = |f: &&Function| {
                let file = run.file_path(f.file);
                file == "<frozen runpy>" || file.ends_with("/runpy.py")
            };
            let outer: Vec<&Function> = outer.into_iter().skip_while(in_runpy).collect();
            let boot = outer.iter().position(|f| run.str(f.name) == "_bootstrap_inner");
            let entry = match boot {
                Some(b) => outer.get(b + 1),
                None => outer.first().filter(|f| run.str(f.name) != "<module>"),
            };
            let Some(f) = entry else { continue };
            let file = run.file_path(f.file);
            // A thread caught while `threading` starts it (`Event.set`, `_set_tstate_lock`) or
            // ends it: its entry point is not on the stack yet; look at another sample.
            let in_threading = file.ends_with("threading.py");
            if in_threading && run.str(f.qualname) != "Thread.run" {
                continue;
            }
            let ty = if in_threading {
                ("Thread".to_string(), TypeSource::EntryPoint)
            } else if boot.is_none() {
                (run.str(f.qualname).to_string(), TypeSource::RootFunction)
            } else if let Some(c) = f.class {
                (run.str(c).rsplit('.').next().unwrap_or("Thread").to_string(), TypeSource::EntryPoint)
            } else {
                (run.str(f.name).to_string(), TypeSource::EntryPoint)
            };
            found[i] = Some(ty);
            pending[i] = false;
            left -= 1;
            if left == 0 {
                break 'outer;
            }
        }
    }
    for (t, ty) in run.threads.iter_mut().zip(found) {
        if t.thread_type.is_empty() {
            match ty {
                Some((ty, source)) => {
                    t.thread_type = ty;
                    t.type_source = source;
                }
                None => {
                    t.thread_type = unknown.to_string();
                    t.type_source = TypeSource::Unknown;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{new_thread, FunctionSpec, RunBuilder};
    use crate::run::*;

    #[test]
    fn functions_without_source_use_runtime_names() {
        assert_eq!(runtime_function("Worker.run").1.as_deref(), Some("Worker"));
        assert_eq!(runtime_function("f.<locals>.g").1, None);
        assert_eq!(runtime_function("main").1, None);
        assert_eq!(runtime_function("<module>").1, None);
    }

    #[test]
    fn entry_points_name_thread_types() {
        let mut b = RunBuilder::new(Meta::default());
        let threading = b.file("/usr/lib/python3.11/threading.py", FileKind::Stdlib, None);
        let app = b.file("/app/a.py", FileKind::User, None);
        let boot = b.function(threading, &FunctionSpec { qualname: "Thread._bootstrap_inner", class: Some("Thread"), line: 1, end_line: 2, class_line: 1 });
        let trun = b.function(threading, &FunctionSpec { qualname: "Thread.run", class: Some("Thread"), line: 3, end_line: 4, class_line: 1 });
        let wrun = b.function(app, &FunctionSpec { qualname: "Worker.run", class: Some("Worker"), line: 5, end_line: 6, class_line: 4 });
        let serve = b.function(app, &FunctionSpec { qualname: "serve", line: 7, end_line: 8, ..Default::default() });
        let module = b.function(app, &FunctionSpec { qualname: "<module>", line: 1, end_line: 9, ..Default::default() });
        let fr = |b: &mut RunBuilder, f| b.frame(f, 1);
        let (fb, ft, fw, fs, fm) = (fr(&mut b, boot), fr(&mut b, trun), fr(&mut b, wrun), fr(&mut b, serve), fr(&mut b, module));
        let stacks = [b.stack(&[fb, fw]), b.stack(&[fb, ft, fs]), b.stack(&[fs]), b.stack(&[fm, fs]), b.stack(&[fb])];
        let threads: Vec<ThreadId> = (0..6).map(|i| b.thread(new_thread(1, 10 + i, 0, &format!("t{i}"), if i == 5 { "Known" } else { "" }))).collect();
        b.push_sample(Sample {
            t: 0,
            threads: (0..5).map(|i| ThreadSample { thread: threads[i], stack: stacks[i], ..Default::default() }).chain([ThreadSample { thread: threads[5], stack: stacks[0], ..Default::default() }]).collect(),
        });
        let mut run = b.finish();
        derive_entry_point_types(&mut run, "unknown");
        let types: Vec<(&str, TypeSource)> = run.threads.iter().map(|t| (t.thread_type.as_str(), t.type_source)).collect();
        assert_eq!(types[0], ("Worker", TypeSource::EntryPoint));
        assert_eq!(types[1], ("Thread", TypeSource::EntryPoint));
        assert_eq!(types[2], ("serve", TypeSource::RootFunction), "not started by threading");
        assert_eq!(types[3], ("unknown", TypeSource::Unknown), "a module at the bottom is no entry point");
        assert_eq!(types[4], ("unknown", TypeSource::Unknown), "caught while threading starts it");
        assert_eq!(types[5].0, "Known", "a type read from the thread object stays");
    }
}
