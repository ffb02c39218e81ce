//! What a parser reads, before it becomes a run: threads, interned frames and stacks, samples.
//! Everything a file can make grow is added through [`Profile`]'s methods, which check it against
//! the [`Limits`]: a file claiming more stops the import with one sentence, before anything is
//! allocated for it.

use super::{Ctx, ImportError, Limits};
use rustc_hash::FxHashMap;
use std::path::PathBuf;
use threadradar_profiler::run::ThreadState;

/// A frame as another profiler names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RawFrame {
    pub file: String,
    pub name: String,
    /// 0 when the format does not give the line.
    pub line: u32,
}

/// A thread as another profiler identifies it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawThread {
    /// 0 when unknown.
    pub pid: u32,
    pub tid: u32,
    pub name: Option<String>,
    /// Whether it is the process's main thread, when the format says (CPython's and Firefox's
    /// `isMainThread`); otherwise only a `MainThread` name or a tid equal to the pid make it one.
    pub main: Option<bool>,
}

/// A node of a profile's stack tree: `frame` (an index into [`Profile::frames`]) called from
/// `parent` (an index into [`Profile::stacks`], always smaller than the node's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RawStack {
    pub parent: Option<u32>,
    pub frame: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawSample {
    pub thread: usize,
    /// Nanoseconds since the start, when the format has times.
    pub t_ns: Option<u64>,
    /// How long the sample stands for, when the format says.
    pub duration_ns: Option<u64>,
    /// The sampled stack (an index into [`Profile::stacks`]); `None` for a sample without frames.
    pub stack: Option<u32>,
    /// How many consecutive samples of the thread this stands for (folded stacks' counts).
    pub count: u64,
    /// The thread's state, when the format records it (austin's idle flag in full mode,
    /// ThreadRadar's own Firefox export, CPython's gecko markers); `None` counts as computing.
    pub state: Option<ThreadState>,
    /// The thread held the GIL, as far as the format says (CPython's gecko markers).
    pub gil: bool,
}

/// What the format does not record: a key for `meta.imported.unknown` and the words for its note.
pub type Missing = (&'static str, &'static str);

/// What a parser read. Frames and stacks are interned, as in a run: a 1 M-sample profile has a
/// few thousand distinct frames and stacks, and making, hashing and freeing every sample's frames
/// as strings cost 95 % of an import (docs/benchmarks.md).
#[derive(Clone, Debug)]
pub struct Profile {
    /// The format as the run will name it, e.g. `py-spy raw (collapsed stacks)`.
    pub format: String,
    pub threads: Vec<RawThread>,
    /// Every distinct frame, added by [`Profile::frame`].
    pub frames: Vec<RawFrame>,
    /// The stack tree, added by [`Profile::stack_node`] and [`Profile::stack`].
    pub stacks: Vec<RawStack>,
    /// Each stack's depth (frames), for the depth limit.
    depths: Vec<u32>,
    frame_ids: FxHashMap<RawFrame, u32>,
    stack_ids: FxHashMap<RawStack, u32>,
    thread_ids: FxHashMap<(u32, u32), usize>,
    pub samples: Vec<RawSample>,
    /// The thread-samples the samples stand for, counts and weights expanded.
    pub thread_samples: u64,
    /// The interval the file states.
    pub interval_ns: Option<u64>,
    /// The profiled command, when the format records it.
    pub command: Vec<String>,
    /// Wall-clock start, milliseconds since the Unix epoch, when known.
    pub start_unix_ms: Option<u64>,
    /// What the format does not record, beyond thread states (known from the samples).
    pub missing: Vec<Missing>,
    limits: Limits,
    path: PathBuf,
}

impl Profile {
    pub(crate) fn new(ctx: &Ctx, format: impl Into<String>) -> Self {
        Profile {
            format: format.into(),
            threads: Vec::new(),
            frames: Vec::new(),
            stacks: Vec::new(),
            depths: Vec::new(),
            frame_ids: FxHashMap::default(),
            stack_ids: FxHashMap::default(),
            thread_ids: FxHashMap::default(),
            samples: Vec::new(),
            thread_samples: 0,
            interval_ns: None,
            command: Vec::new(),
            start_unix_ms: None,
            missing: Vec::new(),
            limits: ctx.limits,
            path: ctx.path.to_path_buf(),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The import stops: the file claims `what`, above `limit`; `next` says what to do.
    pub(crate) fn too_large(&self, what: String, limit: String, next: &'static str) -> ImportError {
        ImportError::TooLarge { path: self.path.clone(), what, limit, next }
    }

    /// A name (function, file, thread) within the size limit.
    pub fn check_name(&self, name: &str) -> Result<(), ImportError> {
        if name.len() > self.limits.name_bytes {
            return Err(self.too_large(format!("a name is {} bytes long", name.len()), format!("{} bytes", self.limits.name_bytes), NOT_A_PROFILE));
        }
        Ok(())
    }

    /// The thread with this pid/tid, added when new.
    pub fn thread(&mut self, pid: u32, tid: u32, name: Option<&str>) -> Result<usize, ImportError> {
        if let Some(n) = name {
            self.check_name(n)?;
        }
        if let Some(&i) = self.thread_ids.get(&(pid, tid)) {
            if self.threads[i].name.is_none() {
                self.threads[i].name = name.map(str::to_string);
            }
            return Ok(i);
        }
        if self.threads.len() >= self.limits.threads {
            return Err(self.too_large(format!("it has more than {} threads", self.limits.threads), format!("{} threads", self.limits.threads), SPLIT));
        }
        self.threads.push(RawThread { pid, tid, name: name.map(str::to_string), main: None });
        self.thread_ids.insert((pid, tid), self.threads.len() - 1);
        Ok(self.threads.len() - 1)
    }

    /// The index of `frame` in [`Profile::frames`], added when new.
    pub fn frame(&mut self, frame: RawFrame) -> Result<u32, ImportError> {
        if let Some(&id) = self.frame_ids.get(&frame) {
            return Ok(id);
        }
        self.check_name(&frame.name)?;
        self.check_name(&frame.file)?;
        if self.frames.len() >= self.limits.frames {
            return Err(self.too_large(format!("it has more than {} distinct frames", self.limits.frames), format!("{} frames", self.limits.frames), SPLIT));
        }
        let id = self.frames.len() as u32;
        self.frames.push(frame.clone());
        self.frame_ids.insert(frame, id);
        Ok(id)
    }

    /// The node for `frame` called from `parent`, added when new.
    pub fn stack_node(&mut self, parent: Option<u32>, frame: u32) -> Result<u32, ImportError> {
        let node = RawStack { parent, frame };
        if let Some(&id) = self.stack_ids.get(&node) {
            return Ok(id);
        }
        let depth = parent.map_or(0, |p| self.depths[p as usize]) + 1;
        if depth as usize > self.limits.depth {
            return Err(self.too_large(format!("a stack is more than {} frames deep", self.limits.depth), format!("{} frames", self.limits.depth), DEEP));
        }
        if self.stacks.len() >= self.limits.stacks {
            return Err(self.too_large(format!("it has more than {} distinct stacks", self.limits.stacks), format!("{} stacks", self.limits.stacks), SPLIT));
        }
        let id = self.stacks.len() as u32;
        self.stacks.push(node);
        self.depths.push(depth);
        self.stack_ids.insert(node, id);
        Ok(id)
    }

    /// The stack of `frames` given outermost (the thread's entry) first; `None` when empty.
    pub fn stack(&mut self, frames_outermost_first: impl IntoIterator<Item = RawFrame>) -> Result<Option<u32>, ImportError> {
        let mut parent = None;
        for f in frames_outermost_first {
            let f = self.frame(f)?;
            parent = Some(self.stack_node(parent, f)?);
        }
        Ok(parent)
    }

    /// Adds a sample; the thread-samples it stands for (its count) are added up and checked.
    pub fn push_sample(&mut self, sample: RawSample) -> Result<(), ImportError> {
        let n = sample.count.max(1);
        self.thread_samples = self.thread_samples.saturating_add(n);
        if self.thread_samples > self.limits.samples {
            let what = if n > self.limits.samples {
                format!("one of its samples stands for {n} samples")
            } else {
                format!("its samples add up to more than {} (counts and weights included)", self.limits.samples)
            };
            return Err(self.too_large(what, format!("{} samples", self.limits.samples), SHORTER));
        }
        for d in [sample.t_ns, sample.duration_ns].into_iter().flatten() {
            if d > self.limits.span_ns {
                return Err(self.too_large(format!("a sample's time or duration is {:.0} s", d as f64 / 1e9), format!("{} s", self.limits.span_ns / 1_000_000_000), NOT_A_PROFILE));
            }
        }
        self.samples.push(sample);
        Ok(())
    }

    /// A stack's frames, outermost first.
    pub fn frames_of(&self, stack: Option<u32>) -> Vec<&RawFrame> {
        let mut out = Vec::new();
        let mut next = stack;
        while let Some(s) = next {
            let node = self.stacks[s as usize];
            out.push(&self.frames[node.frame as usize]);
            next = node.parent;
        }
        out.reverse();
        out
    }
}

/// What to do when a file claims too much.
pub(crate) const SHORTER: &str = "profile for a shorter time or at a lower rate, or split the file and import the parts";
pub(crate) const SPLIT: &str = "split the file (by process or thread) and import the parts";
pub(crate) const DEEP: &str = "check that the file is the profiler's own output (a recursion this deep is rarely profiled), or cut its deepest frames";
pub(crate) const NOT_A_PROFILE: &str = "check that the file is the profiler's own output";
