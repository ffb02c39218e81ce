//! Building a [`Run`] with interning: the sampler uses it while recording, tests and benchmarks use
//! it to make runs by hand.

use crate::run::*;
use std::collections::HashMap;

/// Appends to a run's tables, reusing an id whenever the same string, file, function, frame or
/// stack node was added before.
#[derive(Debug)]
pub struct RunBuilder {
    run: Run,
    strings: HashMap<String, StrId>,
    files: HashMap<StrId, FileId>,
    functions: HashMap<(FileId, StrId, u32), FunctionId>,
    frames: HashMap<Frame, FrameId>,
    stacks: HashMap<StackNode, StackId>,
    waits: HashMap<WaitTarget, WaitId>,
}

/// A function to add with [`RunBuilder::function`].
#[derive(Clone, Debug, Default)]
pub struct FunctionSpec<'a> {
    pub qualname: &'a str,
    pub class: Option<&'a str>,
    pub line: u32,
    pub end_line: u32,
    pub class_line: u32,
}

impl RunBuilder {
    pub fn new(meta: Meta) -> Self {
        RunBuilder {
            run: Run::new(meta),
            strings: HashMap::new(),
            files: HashMap::new(),
            functions: HashMap::new(),
            frames: HashMap::new(),
            stacks: HashMap::new(),
            waits: HashMap::new(),
        }
    }

    /// The run built so far.
    pub fn run(&self) -> &Run {
        &self.run
    }

    /// Mutable access for what the builder does not intern (meta, processes, threads).
    pub fn run_mut(&mut self) -> &mut Run {
        &mut self.run
    }

    /// Finishes the run, filling in the sample count.
    pub fn finish(mut self) -> Run {
        self.run.meta.sample_count = self.run.samples.len() as u64;
        self.run
    }

    pub fn string(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.strings.get(s) {
            return id;
        }
        let id = self.run.strings.len() as StrId;
        self.run.strings.push(s.to_string());
        self.strings.insert(s.to_string(), id);
        id
    }

    /// Adds a file, or returns the existing one with that path (its hash and kind are kept).
    pub fn file(&mut self, path: &str, kind: FileKind, sha256: Option<String>) -> FileId {
        let p = self.string(path);
        if let Some(&id) = self.files.get(&p) {
            return id;
        }
        let id = self.run.files.len() as FileId;
        self.run.files.push(SourceFile { path: p, sha256, kind });
        self.files.insert(p, id);
        id
    }

    /// Adds a function of `file`, identified by its qualified name and definition line.
    pub fn function(&mut self, file: FileId, spec: &FunctionSpec) -> FunctionId {
        let q = self.string(spec.qualname);
        let key = (file, q, spec.line);
        if let Some(&id) = self.functions.get(&key) {
            return id;
        }
        let short = spec.qualname.rsplit('.').next().unwrap_or(spec.qualname);
        let name = self.string(short);
        let class = spec.class.map(|c| self.string(c));
        let id = self.run.functions.len() as FunctionId;
        self.run.functions.push(Function {
            file,
            qualname: q,
            name,
            class,
            line: spec.line,
            end_line: spec.end_line,
            class_line: spec.class_line,
        });
        self.functions.insert(key, id);
        id
    }

    pub fn frame(&mut self, function: FunctionId, line: u32) -> FrameId {
        let f = Frame { function, line };
        let next = self.run.frames.len() as FrameId;
        *self.frames.entry(f).or_insert_with(|| {
            self.run.frames.push(f);
            next
        })
    }

    /// The id of a wait target, adding it when no equal one was added before.
    pub fn wait(&mut self, target: WaitTarget) -> WaitId {
        if let Some(&id) = self.waits.get(&target) {
            return id;
        }
        let id = self.run.waits.len() as WaitId;
        self.run.waits.push(target.clone());
        self.waits.insert(target, id);
        id
    }

    /// The node for `frame` called from `parent`.
    pub fn stack_node(&mut self, parent: Option<StackId>, frame: FrameId) -> StackId {
        let n = StackNode { frame, parent };
        let next = self.run.stacks.len() as StackId;
        *self.stacks.entry(n).or_insert_with(|| {
            self.run.stacks.push(n);
            next
        })
    }

    /// The stack of `frames` given outermost (the thread's entry) first; `None` when empty.
    pub fn stack(&mut self, frames_outermost_first: &[FrameId]) -> Option<StackId> {
        let mut parent = None;
        for &f in frames_outermost_first {
            parent = Some(self.stack_node(parent, f));
        }
        parent
    }

    /// Adds a thread and returns its id.
    pub fn thread(&mut self, thread: Thread) -> ThreadId {
        self.run.threads.push(thread);
        (self.run.threads.len() - 1) as ThreadId
    }

    /// Appends a sample, keeping each thread's first/last sample index up to date.
    pub fn push_sample(&mut self, sample: Sample) {
        let idx = self.run.samples.len() as u32;
        for ts in &sample.threads {
            if let Some(th) = self.run.threads.get_mut(ts.thread as usize) {
                if th.first_sample > idx || th.last_sample == u32::MAX {
                    th.first_sample = idx;
                }
                th.last_sample = idx;
            }
        }
        self.run.samples.push(sample);
    }
}

/// A thread with just the identifying fields set; the rest is filled as samples arrive.
pub fn new_thread(pid: u32, tid: u32, python_id: u64, name: &str, thread_type: &str) -> Thread {
    Thread {
        pid,
        tid,
        python_id,
        name: name.to_string(),
        thread_type: thread_type.to_string(),
        type_source: TypeSource::Unknown,
        is_main: pid == tid,
        start_time: None,
        first_sample: u32::MAX,
        last_sample: u32::MAX,
        cpu_ns_first: None,
        cpu_ns_last: None,
        runq_ns_first: None,
        runq_ns_last: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_reuses_ids_and_builds_a_valid_run() {
        let mut b = RunBuilder::new(Meta::default());
        let f = b.file("/p/a.py", FileKind::User, None);
        assert_eq!(b.file("/p/a.py", FileKind::User, None), f);
        let main = b.function(f, &FunctionSpec { qualname: "main", line: 1, end_line: 9, ..Default::default() });
        let run = b.function(f, &FunctionSpec { qualname: "W.run", class: Some("W"), line: 3, end_line: 5, class_line: 2 });
        assert_eq!(b.function(f, &FunctionSpec { qualname: "W.run", class: Some("W"), line: 3, end_line: 5, class_line: 2 }), run);
        let f1 = b.frame(main, 4);
        let f2 = b.frame(run, 4);
        let s1 = b.stack(&[f1, f2]).unwrap();
        assert_eq!(b.stack(&[f1, f2]), Some(s1));
        let s0 = b.stack(&[f1]).unwrap();
        assert_ne!(s0, s1);
        let t = b.thread(new_thread(1, 1, 7, "MainThread", "_MainThread"));
        b.push_sample(Sample { t: 0, threads: vec![ThreadSample { thread: t, stack: Some(s1), ..Default::default() }] });
        b.push_sample(Sample { t: 3, threads: vec![ThreadSample { thread: t, stack: Some(s0), ..Default::default() }] });
        let run_ = b.finish();
        run_.validate().unwrap();
        assert_eq!(run_.meta.sample_count, 2);
        assert_eq!((run_.threads[0].first_sample, run_.threads[0].last_sample), (0, 1));
        let names: Vec<_> = run_.stack_frames(s1).map(|fr| run_.qualname(fr.function)).collect();
        assert_eq!(names, ["W.run", "main"]);
    }
}
