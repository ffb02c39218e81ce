//! Other profilers' files as runs: py-spy (raw and speedscope), austin (text and MOJO),
//! CPython's `profiling.sampling` (collapsed and gecko), flame-graph folded stacks, speedscope
//! files and Firefox Profiler processed profiles (ThreadRadar's own exports included) and Linux
//! `perf script` of a Python 3.12+ process run with `-X perf`.
//!
//! Each parser turns its file into a [`Profile`]: threads and, per sample, a thread, a time when
//! the format has one, and the Python frames outermost first. [`build_run`] then makes the run
//! the way `record` does: through the profiler's `RunBuilder`, with every file mapped to its
//! functions and classes by the profiler's `SourceIndex` (and its sha256 kept) when the source
//! can be found here, and thread types derived from entry points. What a format does not know
//! (thread states, names, times) is stated in the run's `meta.imported.note`, never made up:
//! without states every sample counts as computing. States are read where a format has them:
//! austin's idle flag (full mode, text and MOJO) and ThreadRadar's own Firefox export (its
//! `Python` / `GIL wait` / `Idle` categories).

mod austin;
mod austin_mojo;
mod collapsed;
mod gecko;
mod perf;
mod speedscope;

use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use threadradar_profiler::attribution::{derive_entry_point_types, resolve_function};
use threadradar_profiler::builder::{new_thread, FunctionSpec, RunBuilder};
use threadradar_profiler::run::*;
use threadradar_profiler::source::{file_kind, FileInfo};

/// The formats `threadradar import` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImportFormat {
    /// Folded stacks: py-spy `--format raw`, CPython `profiling.sampling --collapsed`,
    /// flamegraph.pl input, ThreadRadar's `export --format collapsed`.
    Collapsed,
    /// austin's text output (one sample per line, `P<pid>;T<iid>:<tid>;file:func:line;… µs`).
    Austin,
    /// austin's binary MOJO output (`austin -b`).
    AustinMojo,
    /// speedscope JSON (py-spy `--format speedscope`, ThreadRadar's export).
    Speedscope,
    /// `perf script` output.
    Perf,
    /// The Firefox Profiler's processed profile (ThreadRadar's `export --format firefox`,
    /// CPython 3.15 `profiling.sampling --gecko`).
    Gecko,
}

impl ImportFormat {
    pub fn name(self) -> &'static str {
        match self {
            ImportFormat::Collapsed => "collapsed stacks",
            ImportFormat::Austin => "austin",
            ImportFormat::AustinMojo => "austin MOJO",
            ImportFormat::Speedscope => "speedscope",
            ImportFormat::Perf => "perf script",
            ImportFormat::Gecko => "Firefox Profiler (processed gecko)",
        }
    }
}

/// Why a file could not be imported, as one sentence with what to do.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is empty: expected {} {format} file; profile the program again", article(format))]
    Empty { path: PathBuf, format: &'static str },
    #[error("{path} is not {} {format} file: parsing stopped at {at}: {detail}; pass a file written by the profiler, or name its format with --format", article(format))]
    Parse { path: PathBuf, format: &'static str, at: String, detail: String },
    #[error("{path} is truncated: the {format} file ends in the middle ({at}); copy or record it again")]
    Truncated { path: PathBuf, format: &'static str, at: String },
    #[error("{path} holds no samples ({format}): profile the program for longer, or check that the profiler could read it")]
    NoSamples { path: PathBuf, format: &'static str },
    #[error("cannot tell which profiler wrote {path} (it is neither speedscope JSON, a Firefox Profiler (gecko) profile, austin (text or MOJO) or collapsed stacks, nor perf script output); name its format with --format")]
    Unknown { path: PathBuf },
}

/// `an` before a format whose name starts with a vowel (`an austin file`), else `a`.
fn article(format: &str) -> &'static str {
    match format.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

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
    /// ThreadRadar's own Firefox export); `None` counts as computing.
    pub state: Option<ThreadState>,
}

/// What a parser read. Frames and stacks are interned, as in a run: a 1 M-sample profile has a
/// few thousand distinct frames and stacks, and making, hashing and freeing every sample's frames
/// as strings cost 95 % of an import (docs/benchmarks.md).
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// The format as the run will name it, e.g. `py-spy raw (collapsed stacks)`.
    pub format: String,
    pub threads: Vec<RawThread>,
    /// Every distinct frame, added by [`Profile::frame`].
    pub frames: Vec<RawFrame>,
    /// The stack tree, added by [`Profile::stack_node`] and [`Profile::stack`].
    pub stacks: Vec<RawStack>,
    frame_ids: FxHashMap<RawFrame, u32>,
    stack_ids: FxHashMap<RawStack, u32>,
    pub samples: Vec<RawSample>,
    pub interval_ns: Option<u64>,
    /// The profiled command, when the format records it.
    pub command: Vec<String>,
    /// Wall-clock start, milliseconds since the Unix epoch, when known.
    pub start_unix_ms: Option<u64>,
    /// What the format does not record, beyond thread states (always unknown).
    pub missing: Vec<&'static str>,
}

impl Profile {
    /// The thread with this pid/tid, added when new.
    pub fn thread(&mut self, pid: u32, tid: u32, name: Option<&str>) -> usize {
        if let Some(i) = self.threads.iter().position(|t| t.pid == pid && t.tid == tid) {
            if self.threads[i].name.is_none() {
                self.threads[i].name = name.map(str::to_string);
            }
            return i;
        }
        self.threads.push(RawThread { pid, tid, name: name.map(str::to_string) });
        self.threads.len() - 1
    }

    /// The index of `frame` in [`Profile::frames`], added when new.
    pub fn frame(&mut self, frame: RawFrame) -> u32 {
        if let Some(&id) = self.frame_ids.get(&frame) {
            return id;
        }
        let id = self.frames.len() as u32;
        self.frames.push(frame.clone());
        self.frame_ids.insert(frame, id);
        id
    }

    /// The node for `frame` called from `parent`, added when new.
    pub fn stack_node(&mut self, parent: Option<u32>, frame: u32) -> u32 {
        let node = RawStack { parent, frame };
        let next = self.stacks.len() as u32;
        *self.stack_ids.entry(node).or_insert_with(|| {
            self.stacks.push(node);
            next
        })
    }

    /// The stack of `frames` given outermost (the thread's entry) first; `None` when empty.
    pub fn stack(&mut self, frames_outermost_first: impl IntoIterator<Item = RawFrame>) -> Option<u32> {
        let mut parent = None;
        for f in frames_outermost_first {
            let f = self.frame(f);
            parent = Some(self.stack_node(parent, f));
        }
        parent
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

/// How to import.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The format, or `None` to recognise it from the content.
    pub format: Option<ImportFormat>,
    /// Where to look for the profiled program's sources when a recorded path does not exist here
    /// (a profile from another machine): the longest tail of the path found under a root wins.
    pub source_roots: Vec<PathBuf>,
}

/// Reads a file written by another profiler and makes a run of it.
pub fn import_file(path: &Path, opts: &ImportOptions) -> Result<Run, ImportError> {
    let bytes = std::fs::read(path).map_err(|e| ImportError::Io { path: path.to_path_buf(), source: e })?;
    import_bytes(&bytes, path, opts)
}

/// Like [`import_file`], from bytes; `path` names the file in messages and in the run.
pub fn import_bytes(bytes: &[u8], path: &Path, opts: &ImportOptions) -> Result<Run, ImportError> {
    let format = match opts.format {
        Some(f) => f,
        None => detect(bytes).ok_or_else(|| {
            if bytes.iter().all(u8::is_ascii_whitespace) {
                ImportError::Empty { path: path.to_path_buf(), format: "profile (speedscope, Firefox Profiler, austin, collapsed stacks or perf script)" }
            } else {
                ImportError::Unknown { path: path.to_path_buf() }
            }
        })?,
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ImportError::Empty { path: path.to_path_buf(), format: format.name() });
    }
    let ctx = Ctx { path, format: format.name() };
    let profile = match format {
        ImportFormat::Collapsed => collapsed::parse(bytes, &ctx)?,
        ImportFormat::Austin => austin::parse(bytes, &ctx)?,
        ImportFormat::AustinMojo => austin_mojo::parse(bytes, &ctx)?,
        ImportFormat::Speedscope => speedscope::parse(bytes, &ctx)?,
        ImportFormat::Perf => perf::parse(bytes, &ctx)?,
        ImportFormat::Gecko => gecko::parse(bytes, &ctx)?,
    };
    if profile.samples.is_empty() {
        return Err(ImportError::NoSamples { path: path.to_path_buf(), format: format.name() });
    }
    Ok(build_run(profile, path, &opts.source_roots))
}

/// Recognises a format from the first bytes.
pub fn detect(bytes: &[u8]) -> Option<ImportFormat> {
    if austin_mojo::looks_like(bytes) {
        return Some(ImportFormat::AustinMojo);
    }
    let text = std::str::from_utf8(&bytes[..bytes.len().min(64 * 1024)]).unwrap_or_else(|e| std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""));
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        if gecko::looks_like(trimmed) {
            return Some(ImportFormat::Gecko);
        }
        return trimmed.contains("speedscope").then_some(ImportFormat::Speedscope);
    }
    let mut lines = trimmed.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next()?;
    if first.starts_with("# austin:") || austin::is_sample_line(first) {
        return Some(ImportFormat::Austin);
    }
    if perf::is_header(first) {
        return Some(ImportFormat::Perf);
    }
    let first_stack = std::iter::once(first).chain(lines).find(|l| !l.starts_with('#'))?;
    collapsed::is_line(first_stack).then_some(ImportFormat::Collapsed)
}

/// Where a parser is, for its error messages.
pub(crate) struct Ctx<'a> {
    pub path: &'a Path,
    pub format: &'static str,
}

impl Ctx<'_> {
    pub fn parse_error(&self, line: usize, detail: impl Into<String>) -> ImportError {
        ImportError::Parse { path: self.path.to_path_buf(), format: self.format, at: format!("line {line}"), detail: detail.into() }
    }

    /// The file ends in the middle of what starts at `at` (`line 12`).
    pub fn truncated(&self, at: impl Into<String>) -> ImportError {
        ImportError::Truncated { path: self.path.to_path_buf(), format: self.format, at: at.into() }
    }

    /// A line-oriented file as text, checked by [`Ctx::check_last_line`]; a file that ends in
    /// the middle of a UTF-8 character is truncated too.
    pub fn lines_text<'b>(&self, bytes: &'b [u8]) -> Result<&'b str, ImportError> {
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) if e.error_len().is_none() => {
                return Err(self.truncated(format!("line {}, which ends in the middle of a character", collapsed::line_of(bytes, e.valid_up_to()))))
            }
            Err(e) => return Err(self.parse_error(collapsed::line_of(bytes, e.valid_up_to()), "it is not UTF-8 text")),
        };
        self.check_last_line(text)?;
        Ok(text)
    }

    /// A line-oriented file whose last line has no line break was cut while it was written or
    /// copied: every profiler here ends each line it writes with one. The error names that line.
    pub fn check_last_line(&self, text: &str) -> Result<(), ImportError> {
        if text.is_empty() || text.ends_with('\n') || text.rsplit('\n').next().is_some_and(|l| l.trim().is_empty()) {
            return Ok(());
        }
        Err(self.truncated(format!("line {}, which has no line break", text.lines().count())))
    }
}

/// Finds a recorded source path here: as it is, else the longest tail of it under a root.
pub fn locate_source(path: &str, roots: &[PathBuf]) -> Option<PathBuf> {
    if path.starts_with('<') || path.is_empty() {
        return None;
    }
    let p = Path::new(path);
    if p.is_file() {
        return Some(std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()));
    }
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    for start in 0..parts.len() {
        let tail: PathBuf = parts[start..].iter().collect();
        for root in roots {
            let c = root.join(&tail);
            if c.is_file() {
                return Some(std::fs::canonicalize(&c).unwrap_or(c));
            }
        }
    }
    None
}

/// Makes a run of a parsed profile, the way `record` makes one of samples.
pub fn build_run(profile: Profile, source: &Path, roots: &[PathBuf]) -> Run {
    let interval_ns = profile.interval_ns.filter(|&i| i > 0).unwrap_or_else(|| {
        let mut d: Vec<u64> = profile.samples.iter().filter_map(|s| s.duration_ns).filter(|&d| d > 0).collect();
        d.sort_unstable();
        d.get(d.len() / 2).copied().unwrap_or(10_000_000)
    });
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
    // Threads.
    let first_pid = profile.threads.first().map_or(0, |t| t.pid);
    let ids: Vec<ThreadId> = profile
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let name = t.name.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| format!("thread {}", t.tid));
            let mut th = new_thread(t.pid, t.tid, 0, &name, "");
            th.is_main = name == "MainThread" || (t.pid != 0 && t.pid == t.tid) || (i == 0 && t.pid == first_pid && !profile.threads.iter().any(|o| o.name.as_deref() == Some("MainThread")));
            b.thread(th)
        })
        .collect();
    // Samples, grouped into ticks by time; a thread's samples without times follow one another.
    let mut next_t: Vec<u64> = vec![0; profile.threads.len()];
    let mut ticks: BTreeMap<u64, Vec<ThreadSample>> = BTreeMap::new();
    for s in &profile.samples {
        let stack = s.stack.map(|i| stack_ids[i as usize]);
        for _ in 0..s.count.max(1) {
            let t = s.t_ns.unwrap_or(next_t[s.thread]);
            next_t[s.thread] = t + s.duration_ns.unwrap_or(interval_ns).max(1);
            let mut tt = t;
            let mut tick = ticks.entry(tt).or_default();
            // One observation per thread and tick: a second one at the same time moves on by 1 ns.
            while tick.iter().any(|x| x.thread == ids[s.thread]) {
                tt += 1;
                tick = ticks.entry(tt).or_default();
            }
            tick.push(ThreadSample { thread: ids[s.thread], stack, state: s.state.unwrap_or(ThreadState::Computing), ..Default::default() });
        }
    }
    let mut last_t = 0;
    for (t, threads) in ticks {
        last_t = t;
        b.push_sample(Sample { t, threads });
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
    run.meta.duration_s = (last_t + interval_ns) as f64 / 1e9;
    run.meta.achieved_rate_hz = if run.meta.duration_s > 0.0 { run.samples.len() as f64 / run.meta.duration_s } else { 0.0 };
    let with_state = profile.samples.iter().filter(|s| s.state.is_some()).count();
    let mut missing = Vec::new();
    if with_state == 0 {
        missing.push("thread states (every sample counts as computing)");
    } else if with_state < profile.samples.len() {
        missing.push("the thread state of some samples (they count as computing)");
    }
    missing.extend(profile.missing.iter().copied());
    let sources = if files.is_empty() {
        String::new()
    } else {
        format!(" {located} of {} source files were found here and mapped to functions and classes.", files.len())
    };
    run.meta.imported = Some(Imported {
        format: profile.format.clone(),
        file: source.display().to_string(),
        note: if missing.is_empty() {
            format!("Imported from {}, with thread states.{}", profile.format, sources)
        } else {
            format!("Imported from {}; the format does not record {}.{}", profile.format, missing.join(", "), sources)
        },
    });
    run
}
