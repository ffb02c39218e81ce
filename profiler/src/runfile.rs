//! Reading and writing run files.
//!
//! Writing goes to a temporary file beside the target and is renamed into place, so a reader never
//! sees half a run. Reading checks the format, the version and every id before handing the run out,
//! and turns each way a file can be bad into one sentence that says what to do.

use crate::run::{
    Frame, Function, LockEvent, LockInfo, Meta, Process, Run, Sample, SchedInfo, SchedSwitch, SchedWakeup, SourceFile, StackNode, Thread, ThreadId, WaitTarget, FORMAT,
    VERSION,
};
use crate::schedpack::{PackedSched, Packer, Unpacker};
use serde::Deserialize;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Why a run file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RunFileError {
    #[error("no run file at {0}: record one with `threadradar record -- python3 your_program.py`")]
    NotFound(PathBuf),
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0} is empty: the recording that wrote it did not finish; record the program again")]
    Empty(PathBuf),
    #[error("{path} is truncated (it ends in the middle, {detail}): the recording that wrote it was cut off; record the program again")]
    Truncated { path: PathBuf, detail: String },
    #[error("{path} is not a ThreadRadar run file ({detail}); pass a file from .threadradar/runs/")]
    NotARun { path: PathBuf, detail: String },
    #[error("{path} is a version {found} run file, but this threadradar reads versions up to {supported}: upgrade threadradar")]
    NewerVersion { path: PathBuf, found: u32, supported: u32 },
    #[error("{path} is corrupt ({detail}); record the program again")]
    Corrupt { path: PathBuf, detail: String },
    #[error("cannot write the run file {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

/// Reads and validates a run file.
pub fn read(path: &Path) -> Result<Run, RunFileError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(RunFileError::NotFound(path.to_path_buf())),
        Err(e) => return Err(RunFileError::Io { path: path.to_path_buf(), source: e }),
    };
    from_slice(&bytes, path)
}

/// Parses and validates a run from bytes; `path` is only used in error messages.
pub fn from_slice(bytes: &[u8], path: &Path) -> Result<Run, RunFileError> {
    let p = || path.to_path_buf();
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(RunFileError::Empty(p()));
    }
    let first_line = bytes.split(|&b| b == b'\n').next().unwrap_or(bytes);
    if let Ok(h) = serde_json::from_slice::<StreamHeader>(first_line) {
        check_header(&h.format, Some(h.version), path)?;
        return from_stream(&bytes[first_line.len()..], path);
    }
    match serde_json::from_slice::<Run>(bytes) {
        Ok(mut run) => {
            check_header(run.format.as_str(), Some(run.version), path)?;
            run.validate().map_err(|e| RunFileError::Corrupt { path: p(), detail: e.to_string() })?;
            crate::repair::repair(&mut run);
            Ok(run)
        }
        Err(e) => Err(diagnose(bytes, e, path)),
    }
}

/// The first line of a version 2 file: only these two fields (a version 1 document, which has
/// more, is not mistaken for it).
#[derive(serde::Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StreamHeader {
    format: String,
    version: u32,
}

/// One line of a version 2 file after the header: additions to the run's tables, in order.
/// `threads` are new threads; `thread_updates` replace earlier ones (a name read later, the last
/// sample, the kernel's accounting); `meta` and `sched` replace what came before; `end` marks the
/// final chunk. `waits`, `switches` and `wakeups` are appended like the other tables.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Chunk {
    meta: Option<Meta>,
    strings: Vec<String>,
    files: Vec<SourceFile>,
    functions: Vec<Function>,
    frames: Vec<Frame>,
    stacks: Vec<StackNode>,
    processes: Vec<Process>,
    threads: Vec<Thread>,
    thread_updates: Vec<(ThreadId, Thread)>,
    samples: Vec<Sample>,
    waits: Vec<WaitTarget>,
    sched: Option<SchedInfo>,
    switches: Vec<SchedSwitch>,
    wakeups: Vec<SchedWakeup>,
    /// The scheduler events in their packed form ([`crate::schedpack`]), appended after
    /// `switches`/`wakeups`.
    sched_packed: Option<PackedSched>,
    locks: Option<LockInfo>,
    lock_events: Vec<LockEvent>,
    tasks_info: Option<crate::tasks::TasksInfo>,
    tasks: Vec<crate::tasks::Task>,
    /// Tasks of earlier chunks seen again (their last sample, name or state moved on).
    task_updates: Vec<(crate::tasks::TaskId, crate::tasks::Task)>,
    task_runs: Vec<crate::tasks::TaskRun>,
    task_states: Vec<crate::tasks::TaskState>,
    end: bool,
}

/// What a writer appends: a [`Chunk`] that borrows the run's tables.
#[derive(Default, serde::Serialize)]
pub struct ChunkRef<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<&'a Meta>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub strings: &'a [String],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub files: &'a [SourceFile],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub functions: &'a [Function],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub frames: &'a [Frame],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub stacks: &'a [StackNode],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub processes: &'a [Process],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub threads: &'a [Thread],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub thread_updates: &'a [(ThreadId, &'a Thread)],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub samples: &'a [Sample],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub waits: &'a [WaitTarget],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sched: Option<&'a SchedInfo>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub switches: &'a [SchedSwitch],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub wakeups: &'a [SchedWakeup],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locks: Option<&'a LockInfo>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub lock_events: &'a [LockEvent],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks_info: Option<&'a crate::tasks::TasksInfo>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub tasks: &'a [crate::tasks::Task],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub task_updates: &'a [(crate::tasks::TaskId, &'a crate::tasks::Task)],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub task_runs: &'a [crate::tasks::TaskRun],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub task_states: &'a [crate::tasks::TaskState],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub end: bool,
}

/// A [`Chunk`] is also what the [`BackgroundWriter`] hands to its thread: a copy of a [`ChunkRef`].
impl Chunk {
    /// A copy of what `chunk` borrows, its samples copied into `spare` (the sample lists of a
    /// chunk written before, whose memory is reused: see [`BackgroundWriter`]).
    fn of(chunk: &ChunkRef, mut spare: Vec<Sample>) -> Chunk {
        spare.truncate(chunk.samples.len());
        for (to, from) in spare.iter_mut().zip(chunk.samples) {
            to.t = from.t;
            to.threads.clone_from(&from.threads);
        }
        let reused = spare.len();
        spare.extend_from_slice(&chunk.samples[reused..]);
        Chunk {
            meta: chunk.meta.cloned(),
            strings: chunk.strings.to_vec(),
            files: chunk.files.to_vec(),
            functions: chunk.functions.to_vec(),
            frames: chunk.frames.to_vec(),
            stacks: chunk.stacks.to_vec(),
            processes: chunk.processes.to_vec(),
            threads: chunk.threads.to_vec(),
            thread_updates: chunk.thread_updates.iter().map(|&(i, t)| (i, t.clone())).collect(),
            samples: spare,
            waits: chunk.waits.to_vec(),
            sched: chunk.sched.cloned(),
            switches: chunk.switches.to_vec(),
            wakeups: chunk.wakeups.to_vec(),
            locks: chunk.locks.cloned(),
            lock_events: chunk.lock_events.to_vec(),
            tasks_info: chunk.tasks_info.cloned(),
            tasks: chunk.tasks.to_vec(),
            task_updates: chunk.task_updates.iter().map(|&(i, t)| (i, t.clone())).collect(),
            task_runs: chunk.task_runs.to_vec(),
            task_states: chunk.task_states.to_vec(),
            sched_packed: None,
            end: false,
        }
    }

    fn write(&self, w: &mut StreamWriter) -> Result<(), RunFileError> {
        let thread_updates: Vec<(ThreadId, &Thread)> = self.thread_updates.iter().map(|(i, t)| (*i, t)).collect();
        let task_updates: Vec<(crate::tasks::TaskId, &crate::tasks::Task)> = self.task_updates.iter().map(|(i, t)| (*i, t)).collect();
        w.append(&ChunkRef {
            meta: self.meta.as_ref(),
            strings: &self.strings,
            files: &self.files,
            functions: &self.functions,
            frames: &self.frames,
            stacks: &self.stacks,
            processes: &self.processes,
            threads: &self.threads,
            thread_updates: &thread_updates,
            samples: &self.samples,
            waits: &self.waits,
            sched: self.sched.as_ref(),
            switches: &self.switches,
            wakeups: &self.wakeups,
            locks: self.locks.as_ref(),
            lock_events: &self.lock_events,
            tasks_info: self.tasks_info.as_ref(),
            tasks: &self.tasks,
            task_updates: &task_updates,
            task_runs: &self.task_runs,
            task_states: &self.task_states,
            end: false,
        })
    }
}

/// A [`StreamWriter`] on a thread of its own: the sampler hands it each chunk and samples on.
/// Serializing half a second of a thousand threads' samples takes 20–35 ms, ten ticks at 3 ms,
/// which the sampling thread would otherwise miss. Dropping it waits for every chunk handed over
/// to be written (the caller then replaces the file with the finished run).
pub struct BackgroundWriter {
    tx: Option<std::sync::mpsc::Sender<Chunk>>,
    /// The sample lists of written chunks, handed back for the next copy: copying half a second
    /// of a thousand threads' samples (165 000 thread-samples) into fresh memory took 10–18 ms on
    /// the sampling thread (the allocator had given the last copy's pages back to the kernel, and
    /// every page faulted in again), 2–7 ms into memory already touched.
    spent: std::sync::mpsc::Receiver<Vec<Sample>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundWriter {
    /// Creates `path` (see [`StreamWriter::create`]) and the writing thread.
    pub fn create(path: &Path) -> Result<BackgroundWriter, RunFileError> {
        let mut writer = StreamWriter::create(path)?;
        let (tx, rx) = std::sync::mpsc::channel::<Chunk>();
        let (spent_tx, spent) = std::sync::mpsc::channel::<Vec<Sample>>();
        let thread = std::thread::Builder::new()
            .name("threadradar-writer".into())
            .spawn(move || {
                for mut chunk in rx {
                    if let Err(e) = chunk.write(&mut writer) {
                        tracing::warn!("stopped writing the run while recording: {e}");
                        return;
                    }
                    let _ = spent_tx.send(std::mem::take(&mut chunk.samples));
                }
            })
            .map_err(|e| RunFileError::Write { path: path.to_path_buf(), source: e })?;
        Ok(BackgroundWriter { tx: Some(tx), spent, thread: Some(thread) })
    }

    /// Hands a copy of `chunk` to the writing thread; false once that thread stopped (a write
    /// failed).
    pub fn send(&self, chunk: &ChunkRef) -> bool {
        // The most recently written chunk's lists; older ones (a slow disk) are dropped.
        let spare = self.spent.try_iter().last().unwrap_or_default();
        self.tx.as_ref().is_some_and(|tx| tx.send(Chunk::of(chunk, spare)).is_ok())
    }
}

impl Drop for BackgroundWriter {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A chunk as it is written: its scheduler events packed (`sched_packed`) instead of spelled out.
#[derive(serde::Serialize)]
struct PackedChunk<'a> {
    #[serde(flatten)]
    chunk: ChunkRef<'a>,
    #[serde(skip_serializing_if = "PackedSched::is_empty")]
    sched_packed: PackedSched,
}

impl<'a> PackedChunk<'a> {
    fn new(chunk: &ChunkRef<'a>, packer: &mut Packer) -> PackedChunk<'a> {
        let sched_packed = packer.pack(chunk.switches, chunk.wakeups);
        PackedChunk { chunk: ChunkRef { switches: &[], wakeups: &[], ..*chunk }, sched_packed }
    }
}

/// Folds the chunks of a version 2 file into a run. A last line cut off mid-way (the recorder was
/// killed while writing) is dropped, as long as a whole chunk came before it.
fn from_stream(body: &[u8], path: &Path) -> Result<Run, RunFileError> {
    let p = || path.to_path_buf();
    let mut run = Run::new(Meta::default());
    let mut chunks = 0usize;
    let mut ended = false;
    let mut unpacker = Unpacker::default();
    let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)).collect();
    let complete_last = body.trim_ascii_end().len() < body.len();
    for (i, line) in lines.iter().enumerate() {
        let c: Chunk = match serde_json::from_slice(line) {
            Ok(c) => c,
            Err(e) if e.is_eof() && i + 1 == lines.len() && !complete_last && chunks > 0 => break,
            Err(e) if e.is_eof() && i + 1 == lines.len() => {
                return Err(RunFileError::Truncated { path: p(), detail: format!("in chunk {}", i + 1) })
            }
            Err(e) => return Err(RunFileError::Corrupt { path: p(), detail: format!("chunk {}: {e}", i + 1) }),
        };
        chunks += 1;
        if let Some(m) = c.meta {
            run.meta = m;
        }
        run.strings.extend(c.strings);
        run.files.extend(c.files);
        run.functions.extend(c.functions);
        run.frames.extend(c.frames);
        run.stacks.extend(c.stacks);
        run.processes.extend(c.processes);
        run.threads.extend(c.threads);
        apply_updates(&mut run.threads, c.thread_updates).map_err(|id| RunFileError::Corrupt { path: p(), detail: format!("chunk {} updates thread {id}, which it does not have", i + 1) })?;
        run.samples.extend(c.samples);
        run.waits.extend(c.waits);
        if c.sched.is_some() {
            run.sched = c.sched;
        }
        if c.locks.is_some() {
            run.locks = c.locks;
        }
        run.lock_events.extend(c.lock_events);
        if c.tasks_info.is_some() {
            run.tasks_info = c.tasks_info;
        }
        run.tasks.extend(c.tasks);
        apply_updates(&mut run.tasks, c.task_updates).map_err(|id| RunFileError::Corrupt { path: p(), detail: format!("chunk {} updates task {id}, which it does not have", i + 1) })?;
        run.task_runs.extend(c.task_runs);
        run.task_states.extend(c.task_states);
        run.switches.extend(c.switches);
        run.wakeups.extend(c.wakeups);
        if let Some(packed) = c.sched_packed {
            unpacker
                .unpack(packed, &mut run.switches, &mut run.wakeups)
                .map_err(|e| RunFileError::Corrupt { path: p(), detail: format!("chunk {}: {e}", i + 1) })?;
        }
        if c.end {
            ended = true;
            break;
        }
    }
    if chunks == 0 {
        return Err(RunFileError::Truncated { path: p(), detail: "after its header".into() });
    }
    run.validate().map_err(|e| RunFileError::Corrupt { path: p(), detail: e.to_string() })?;
    crate::repair::repair(&mut run);
    if !ended {
        run.meta.partial = true;
        run.meta.sample_count = run.samples.len() as u64;
        if let (Some(first), Some(last)) = (run.samples.first(), run.samples.last()) {
            run.meta.duration_s = run.meta.duration_s.max((last.t - first.t) as f64 / 1e9);
        }
        if run.meta.duration_s > 0.0 {
            run.meta.achieved_rate_hz = run.samples.len() as f64 / run.meta.duration_s;
        }
    }
    Ok(run)
}

/// Where a run is written while it is recorded: `.<name>.recording` beside `path`. Hidden, so that
/// run lists (and the editors watching them) only ever see finished runs; a recorder that is killed
/// leaves it behind, readable like any run file.
pub fn live_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into());
    path.with_file_name(format!(".{name}.recording"))
}

/// Appends a run to a version 2 file while it is recorded: each [`StreamWriter::append`] writes
/// one chunk and hands it to the kernel, so a recorder killed with SIGKILL leaves everything up to
/// its last append readable. The final, complete run then replaces the file with [`write`].
pub struct StreamWriter {
    path: PathBuf,
    file: fs::File,
    /// The scheduler events' packing runs across the file's chunks.
    packer: Packer,
}

impl StreamWriter {
    /// Creates (or truncates) `path` and writes the header.
    pub fn create(path: &Path) -> Result<StreamWriter, RunFileError> {
        let werr = |e| RunFileError::Write { path: path.to_path_buf(), source: e };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(werr)?;
        }
        let mut file = fs::File::create(path).map_err(werr)?;
        let mut line = serde_json::to_vec(&StreamHeader { format: FORMAT.into(), version: VERSION }).map_err(|e| werr(e.into()))?;
        line.push(b'\n');
        file.write_all(&line).map_err(werr)?;
        Ok(StreamWriter { path: path.to_path_buf(), file, packer: Packer::default() })
    }

    /// Appends one chunk with a single write.
    pub fn append(&mut self, chunk: &ChunkRef) -> Result<(), RunFileError> {
        let werr = |e| RunFileError::Write { path: self.path.clone(), source: e };
        let mut line = serde_json::to_vec(&PackedChunk::new(chunk, &mut self.packer)).map_err(|e| werr(e.into()))?;
        line.push(b'\n');
        self.file.write_all(&line).map_err(werr)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<u32>,
}

fn check_header(format: &str, version: Option<u32>, path: &Path) -> Result<(), RunFileError> {
    if format != FORMAT {
        return Err(RunFileError::NotARun {
            path: path.to_path_buf(),
            detail: format!("its format is {format:?}, not {FORMAT:?}"),
        });
    }
    match version {
        Some(v) if v > VERSION => Err(RunFileError::NewerVersion { path: path.to_path_buf(), found: v, supported: VERSION }),
        Some(0) | None => Err(RunFileError::NotARun { path: path.to_path_buf(), detail: "it has no valid version".into() }),
        Some(_) => Ok(()),
    }
}

/// Turns a failed full parse into the most useful error: a newer version or another kind of file
/// says so even when the body does not match this build's model.
fn diagnose(bytes: &[u8], err: serde_json::Error, path: &Path) -> RunFileError {
    let p = path.to_path_buf();
    if err.is_eof() {
        return RunFileError::Truncated { path: p, detail: format!("at line {} column {}", err.line(), err.column()) };
    }
    if let Ok(h) = serde_json::from_slice::<Header>(bytes) {
        match h.format.as_deref() {
            Some(f) => {
                if let Err(e) = check_header(f, h.version, path) {
                    return e;
                }
            }
            None => return RunFileError::NotARun { path: p, detail: "it has no \"format\" field".into() },
        }
    } else if err.is_syntax() && !bytes.trim_ascii_start().starts_with(b"{") {
        return RunFileError::NotARun { path: p, detail: "it is not JSON".into() };
    }
    RunFileError::Corrupt { path: p, detail: err.to_string() }
}

/// Writes `run` to `path` atomically: a temporary file in the same directory, flushed and synced,
/// then renamed over `path`. Creates missing parent directories.
pub fn write(run: &Run, path: &Path) -> Result<(), RunFileError> {
    let werr = |e| RunFileError::Write { path: path.to_path_buf(), source: e };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(werr)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let file = fs::File::create(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        serde_json::to_writer(&mut w, &StreamHeader { format: FORMAT.into(), version: VERSION }).map_err(std::io::Error::other)?;
        w.write_all(b"\n")?;
        let all = ChunkRef {
            meta: Some(&run.meta),
            strings: &run.strings,
            files: &run.files,
            functions: &run.functions,
            frames: &run.frames,
            stacks: &run.stacks,
            processes: &run.processes,
            threads: &run.threads,
            thread_updates: &[],
            samples: &run.samples,
            waits: &run.waits,
            sched: run.sched.as_ref(),
            switches: &run.switches,
            wakeups: &run.wakeups,
            locks: run.locks.as_ref(),
            lock_events: &run.lock_events,
            tasks_info: run.tasks_info.as_ref(),
            tasks: &run.tasks,
            task_updates: &[],
            task_runs: &run.task_runs,
            task_states: &run.task_states,
            end: true,
        };
        serde_json::to_writer(&mut w, &PackedChunk::new(&all, &mut Packer::default())).map_err(std::io::Error::other)?;
        w.write_all(b"\n")?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(werr(e));
    }
    Ok(())
}

/// The run files in a directory (normally `.threadradar/runs`), newest first by name (names start
/// with a sortable timestamp), then by modification time.
pub fn list_runs(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut runs: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        let mtime = entry.metadata().and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH);
        runs.push((mtime, path));
    }
    runs.sort_by_cached_key(|(mtime, path)| std::cmp::Reverse(run_order(&path.file_name().unwrap_or_default().to_string_lossy(), *mtime)));
    Ok(runs.into_iter().map(|(_, p)| p).collect())
}

/// The key that orders runs oldest → newest: the UTC time at the start of the file name
/// (`20261121T120012Z-…`, as `record` names runs; the modification time for other names), then
/// the modification time (two runs of the same second: `app.json` and `app-2.json`), then the name.
pub fn run_order(name: &str, mtime: std::time::SystemTime) -> (String, std::time::SystemTime, String) {
    let stamp = name.get(..16).filter(|s| {
        let b = s.as_bytes();
        b[..8].iter().all(u8::is_ascii_digit) && b[8] == b'T' && b[9..15].iter().all(u8::is_ascii_digit) && b[15] == b'Z'
    });
    (stamp.map_or_else(|| utc_stamp(mtime), str::to_string), mtime, name.to_string())
}

/// The default directory for runs under a project directory.
pub fn runs_dir(project: &Path) -> PathBuf {
    project.join(".threadradar").join("runs")
}

/// A short name for the program: the script (`app` for `python3 app.py`), the module for
/// `python3 -m pytest`, else the executable.
pub fn program_name(command: &[String]) -> String {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    let mut it = command.iter().skip(1);
    while let Some(a) = it.next() {
        if a == "-m" {
            if let Some(m) = it.next() {
                return sanitize(m);
            }
        } else if a.ends_with(".py") {
            return sanitize(base(a).trim_end_matches(".py"));
        } else if a == "-c" {
            return "python-c".into();
        }
    }
    command.first().map(|c| sanitize(&base(c))).unwrap_or_else(|| "run".into())
}

fn sanitize(s: &str) -> String {
    let s: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' }).collect();
    if s.is_empty() {
        "run".into()
    } else {
        s
    }
}

/// `20261121T143012Z`: sortable, and safe in file names everywhere.
pub fn utc_stamp(t: std::time::SystemTime) -> String {
    let secs = t.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}


/// A new run file's path in `dir`: `<UTC time>-<program>.json`, numbered when that exists.
pub fn new_run_path(dir: &Path, program: &str, now: std::time::SystemTime) -> PathBuf {
    let stamp = utc_stamp(now);
    let mut path = dir.join(format!("{stamp}-{program}.json"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{stamp}-{program}-{n}.json"));
        n += 1;
    }
    path
}

/// Replaces entries of an earlier chunk's table (threads, tasks) by their newer versions; the id
/// of an update whose entry does not exist is the error.
fn apply_updates<T>(table: &mut [T], updates: Vec<(u32, T)>) -> Result<(), u32> {
    for (id, t) in updates {
        *table.get_mut(id as usize).ok_or(id)? = t;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Meta;

    fn sample_run() -> Run {
        let mut run = Run::new(Meta { interval_ms: 3.0, ..Meta::default() });
        run.strings.push("x".into());
        run
    }

    #[test]
    fn write_then_read_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/run.json");
        let run = sample_run();
        write(&run, &path).unwrap();
        assert_eq!(read(&path).unwrap(), run);
        // No temporary file is left behind.
        let names: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn each_bad_file_gets_its_own_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        assert!(matches!(read(&path), Err(RunFileError::NotFound(_))));

        let good = serde_json::to_vec(&sample_run()).unwrap();
        fs::write(&path, &good[..good.len() / 2]).unwrap();
        assert!(matches!(read(&path), Err(RunFileError::Truncated { .. })), "{:?}", read(&path));

        fs::write(&path, b"").unwrap();
        assert!(matches!(read(&path), Err(RunFileError::Empty(_))));

        fs::write(&path, b"\x00\x01garbage").unwrap();
        assert!(matches!(read(&path), Err(RunFileError::NotARun { .. })));

        fs::write(&path, br#"{"format":"speedscope","version":1}"#).unwrap();
        assert!(matches!(read(&path), Err(RunFileError::NotARun { .. })));

        fs::write(&path, br#"{"format":"threadradar-run","version":99,"whatever":[]}"#).unwrap();
        let e = read(&path).unwrap_err();
        assert!(matches!(e, RunFileError::NewerVersion { found: 99, .. }));
        assert!(e.to_string().contains("upgrade threadradar"));

        let mut run = sample_run();
        run.files.push(crate::run::SourceFile { path: 7, sha256: None, kind: Default::default() });
        fs::write(&path, serde_json::to_vec(&run).unwrap()).unwrap();
        assert!(matches!(read(&path), Err(RunFileError::Corrupt { .. })));

        let text = String::from_utf8(good.clone()).unwrap().replace("\"samples\":[]", "\"samples\":[{\"t\":1}]");
        fs::write(&path, text).unwrap();
        assert!(matches!(read(&path), Err(RunFileError::Corrupt { .. })));
    }

    #[test]
    fn version_1_files_still_load() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/run-v1.json");
        let run = read(&path).unwrap();
        assert_eq!(run.version, 1);
        assert!(!run.meta.partial);
        assert_eq!(run.meta.started_at, None);
        let mut names: Vec<&str> = run.threads.iter().map(|t| t.name.as_str()).collect();
        names.sort();
        assert_eq!(names, ["MainThread", "heavy", "light", "locked", "sleepy"]);
        assert_eq!(run.samples.len() as u64, run.meta.sample_count);
        assert!(run.threads.iter().all(|t| t.start_time.is_none()));
        // Written again, it is a version 2 file with the same content.
        let dir = tempfile::tempdir().unwrap();
        let again = dir.path().join("v2.json");
        write(&run, &again).unwrap();
        let text = fs::read_to_string(&again).unwrap();
        assert!(text.starts_with("{\"format\":\"threadradar-run\",\"version\":2}\n"), "{}", &text[..80]);
        let back = read(&again).unwrap();
        assert_eq!(Run { version: 1, ..back }, run);
    }

    #[test]
    fn the_background_writer_writes_every_chunk_it_was_handed_before_it_is_dropped() {
        use crate::builder::{new_thread, RunBuilder};
        use crate::run::{Sample, ThreadSample};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.json");
        let mut b = RunBuilder::new(Meta { interval_ms: 3.0, ..Meta::default() });
        let ts: Vec<_> = (0..3).map(|i| b.thread(new_thread(1, 1 + i, 7 + i as u64, "MainThread", "_MainThread"))).collect();
        let w = BackgroundWriter::create(&path).unwrap();
        // Chunks of 200 to 1 100 samples of 1 to 3 threads, some handed over faster than they
        // are written, some after the last was written (its sample lists are then reused, for a
        // chunk longer or shorter than it); each copy is the chunk as it was when handed over (the
        // run grows and is renamed meanwhile).
        let threads_at = |t: u64| (t / 3_000_000 % 3 + 1) as usize;
        let mut total = 0;
        for c in 0..20u64 {
            let from = b.run().samples.len();
            for _ in 0..200 + (c * 397) % 900 {
                let t = total as u64 * 3_000_000;
                let threads = ts[..threads_at(t)].iter().map(|&thread| ThreadSample { thread, cpu_ns: t / 3_000 % 1_000_000 + thread as u64, ..Default::default() }).collect();
                b.push_sample(Sample { t, threads });
                total += 1;
            }
            let run = b.run();
            let meta = (c == 0).then_some(&run.meta);
            let threads = if c == 0 { &run.threads[..] } else { &[] };
            assert!(w.send(&ChunkRef { meta, threads, samples: &run.samples[from..], ..Default::default() }));
            b.run_mut().threads[0].name = format!("renamed {c}");
            if c % 2 == 1 {
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
        }
        drop(w);
        let got = read(&path).unwrap();
        assert_eq!(got.samples.len(), total);
        assert!(got.samples.windows(2).all(|p| p[1].t == p[0].t + 3_000_000));
        for s in &got.samples {
            let want: Vec<u64> = ts[..threads_at(s.t)].iter().map(|&th| s.t / 3_000 % 1_000_000 + th as u64).collect();
            assert_eq!(s.threads.iter().map(|t| t.cpu_ns).collect::<Vec<_>>(), want, "sample at {}", s.t);
        }
        assert_eq!(got.threads[0].name, "MainThread");
    }

    #[test]
    fn a_stream_cut_off_mid_chunk_reads_up_to_its_last_whole_chunk() {
        use crate::builder::{new_thread, RunBuilder};
        use crate::run::{Sample, ThreadSample};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.json");
        let mut b = RunBuilder::new(Meta { interval_ms: 3.0, ..Meta::default() });
        let t = b.thread(new_thread(1, 1, 7, "MainThread", "_MainThread"));
        b.push_sample(Sample { t: 0, threads: vec![ThreadSample { thread: t, ..Default::default() }] });
        let mut w = StreamWriter::create(&path).unwrap();
        let run = b.run();
        w.append(&ChunkRef { meta: Some(&run.meta), threads: &run.threads, samples: &run.samples, ..Default::default() }).unwrap();
        // The thread gets its real name later; a second thread and sample arrive.
        b.run_mut().threads[0].name = "Main".into();
        let u = b.thread(new_thread(1, 2, 8, "w", "Thread"));
        b.push_sample(Sample { t: 3_000_000, threads: vec![ThreadSample { thread: u, ..Default::default() }] });
        let run = b.run();
        w.append(&ChunkRef { threads: &run.threads[1..], thread_updates: &[(0, &run.threads[0])], samples: &run.samples[1..], ..Default::default() })
            .unwrap();
        let whole = fs::read(&path).unwrap();
        // Killed in the middle of writing a third chunk.
        fs::write(&path, [&whole[..], b"{\"samples\":[{\"t\":6000000,\"threads\":[[0,nu"].concat()).unwrap();
        let got = read(&path).unwrap();
        assert!(got.meta.partial);
        assert_eq!(got.samples.len(), 2);
        assert_eq!(got.meta.sample_count, 2);
        assert_eq!(got.threads.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["Main", "w"]);
        // A cut inside an earlier chunk is corruption, not a cut-off end.
        fs::write(&path, [&whole[..whole.len() - 10], b"\n", &whole[..]].concat()).unwrap();
        assert!(matches!(read(&path), Err(RunFileError::Corrupt { .. })), "{:?}", read(&path));
        // Only a header: nothing to read.
        fs::write(&path, &whole[..whole.iter().position(|&c| c == b'\n').unwrap() + 1]).unwrap();
        assert!(matches!(read(&path), Err(RunFileError::Truncated { .. })));
    }

    /// Tasks stream like threads: a later chunk updates a task of an earlier one; an update of a
    /// thread or task the file does not have is corruption, said with the chunk.
    #[test]
    fn tasks_and_their_updates_stream_and_a_bad_update_is_corrupt() {
        use crate::builder::{new_thread, RunBuilder};
        use crate::run::{Sample, ThreadSample};
        use crate::tasks::{Task, TaskRun};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.json");
        let mut b = RunBuilder::new(Meta { interval_ms: 3.0, ..Meta::default() });
        let t = b.thread(new_thread(1, 1, 7, "MainThread", "_MainThread"));
        b.push_sample(Sample { t: 0, threads: vec![ThreadSample { thread: t, ..Default::default() }] });
        let mut task = Task { pid: 1, address: 0x1000, name: "Task-1".into(), coro: "main".into(), thread: t, ..Default::default() };
        let mut w = StreamWriter::create(&path).unwrap();
        let run = b.run();
        w.append(&ChunkRef { meta: Some(&run.meta), threads: &run.threads, samples: &run.samples, tasks: std::slice::from_ref(&task), ..Default::default() }).unwrap();
        task.name = "fetch-0".into();
        task.last_sample = 1;
        task.done = true;
        let runs = [TaskRun { thread: t, task: 0, first: 0, last: 1 }];
        w.append(&ChunkRef { task_updates: &[(0, &task)], task_runs: &runs, ..Default::default() }).unwrap();
        let whole = fs::read(&path).unwrap();
        let got = read(&path).unwrap();
        assert_eq!(got.tasks, vec![task.clone()]);
        assert_eq!(got.task_runs, runs);
        for (what, chunk) in [("task 3", r#"{"task_updates":[[3,{"pid":1,"address":1,"name":"x","coro":"c","thread":0,"first_sample":0,"last_sample":0}]]}"#), ("thread 5", r#"{"thread_updates":[[5,{"pid":1,"tid":1,"python_id":1,"name":"x","type":"T","type_source":"unknown","is_main":false,"first_sample":0,"last_sample":0}]]}"#)] {
            fs::write(&path, [&whole[..], chunk.as_bytes(), b"\n"].concat()).unwrap();
            match read(&path) {
                Err(RunFileError::Corrupt { detail, .. }) => assert!(detail.contains(&format!("updates {what}, which it does not have")), "{detail}"),
                other => panic!("{what}: {other:?}"),
            }
        }
    }

    /// A run with every wait and scheduler table filled, appended in two chunks and cut off
    /// mid-way through a third (the recorder killed): what was flushed stays.
    #[test]
    fn waits_and_sched_events_round_trip_through_chunks() {
        use crate::builder::{new_thread, RunBuilder};
        use crate::run::{SchedInfo, SchedSwitch, SchedWakeup, ThreadSample, ThreadState, WaitObject, WaitTarget};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.json");
        let mut b = RunBuilder::new(Meta { interval_ms: 3.0, ..Meta::default() });
        let t = b.thread(new_thread(1, 1, 7, "MainThread", "_MainThread"));
        let futex = b.string("futex");
        let cond = b.string("threading.Condition");
        let w0 = b.wait(WaitTarget { syscall: futex, futex: Some(0x7f00_1000), object: Some(WaitObject { addr: 0x7f00_2000, type_name: cond, name: None, frame: None, owner: None }), ..Default::default() });
        assert_eq!(b.wait(b.run().waits[0].clone()), w0, "one entry per distinct target");
        b.push_sample(Sample { t: 0, threads: vec![ThreadSample { thread: t, state: ThreadState::Idle, blocked: Some(futex), wait: Some(w0), ..Default::default() }] });
        let run = b.run_mut();
        run.sched = Some(SchedInfo { source: "perf_event_open".into(), lost_events: 0, note: None });
        run.switches.push(SchedSwitch { t: 10, prev_tid: 1, prev_state: b'S', next_tid: 0 });
        run.wakeups.push(SchedWakeup { t: 20, waker_tid: 0, wakee_tid: 1 });
        let mut w = StreamWriter::create(&path).unwrap();
        let run = b.run();
        w.append(&ChunkRef {
            meta: Some(&run.meta),
            strings: &run.strings,
            threads: &run.threads,
            samples: &run.samples,
            waits: &run.waits,
            sched: run.sched.as_ref(),
            switches: &run.switches,
            wakeups: &run.wakeups,
            ..Default::default()
        })
        .unwrap();
        let read_ = b.string("read");
        let pipe = b.string("pipe:[456]");
        let w1 = b.wait(WaitTarget { syscall: read_, fd: Some(3), fd_target: Some(pipe), ..Default::default() });
        b.push_sample(Sample { t: 3_000_000, threads: vec![ThreadSample { thread: t, state: ThreadState::Computing, blocked: Some(read_), wait: Some(w1), ..Default::default() }] });
        let run = b.run_mut();
        run.sched.as_mut().unwrap().lost_events = 4;
        run.switches.push(SchedSwitch { t: 2_000_000, prev_tid: 0, prev_state: b'R', next_tid: 1 });
        run.wakeups.push(SchedWakeup { t: 2_500_000, waker_tid: 9, wakee_tid: 1 });
        let run = b.run();
        w.append(&ChunkRef {
            strings: &run.strings[2..],
            samples: &run.samples[1..],
            waits: &run.waits[1..],
            sched: run.sched.as_ref(),
            switches: &run.switches[1..],
            wakeups: &run.wakeups[1..],
            ..Default::default()
        })
        .unwrap();
        let whole = fs::read(&path).unwrap();
        // Written packed: the second chunk's times are differences, its tids indexes into the
        // table the first chunk began (tid 9 is new there).
        let text = String::from_utf8_lossy(&whole);
        let chunks: Vec<serde_json::Value> = text.lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect();
        assert!(chunks.iter().all(|c| c.get("switches").is_none() && c.get("wakeups").is_none()), "{text}");
        assert!(text.contains(r#""sched_packed":{"tids":[9],"switches":[[1999990,1,82,0]],"wakeups":[[2499980,2,0]]}"#), "{text}");
        fs::write(&path, [&whole[..], b"{\"switches\":[[3000000,1,8"].concat()).unwrap();
        let got = read(&path).unwrap();
        assert!(got.meta.partial);
        assert_eq!(got.waits, run.waits);
        assert_eq!(got.sched, run.sched);
        assert_eq!(got.switches, run.switches);
        assert_eq!(got.wakeups, run.wakeups);
        assert_eq!(got.samples, run.samples);
        // The finished run, written in one piece, reads back the same.
        let done = dir.path().join("done.json");
        write(&got, &done).unwrap();
        assert_eq!(read(&done).unwrap(), got);
    }

    /// Chunks of files written before the packed form (spelled-out `switches`/`wakeups`) still
    /// load, also next to packed ones; a packed event naming a tid the table lacks is a corrupt
    /// file, said in one sentence.
    #[test]
    fn spelled_out_and_packed_sched_events_both_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mixed.json");
        let meta = serde_json::to_string(&Meta { interval_ms: 3.0, ..Meta::default() }).unwrap();
        let head = format!("{{\"format\":\"threadradar-run\",\"version\":2}}\n{{\"meta\":{meta},\"sched\":{{\"source\":\"perf_event_open\",\"lost_events\":0}},");
        let old = "\"switches\":[[10,1,83,0]],\"wakeups\":[[20,0,1]]}\n";
        let packed = "{\"sched_packed\":{\"tids\":[1,0],\"switches\":[[30,0,82,1]],\"wakeups\":[[25,1,0]]},\"end\":true}\n";
        fs::write(&path, format!("{head}{old}{packed}")).unwrap();
        let run = read(&path).unwrap();
        let sw: Vec<_> = run.switches.iter().map(|s| (s.t, s.prev_tid, s.prev_state, s.next_tid)).collect();
        assert_eq!(sw, [(10, 1, b'S', 0), (30, 1, b'R', 0)]);
        let wk: Vec<_> = run.wakeups.iter().map(|w| (w.t, w.waker_tid, w.wakee_tid)).collect();
        assert_eq!(wk, [(20, 0, 1), (25, 0, 1)]);
        let bad = "{\"sched_packed\":{\"tids\":[1],\"switches\":[[30,0,82,5]]},\"end\":true}\n";
        fs::write(&path, format!("{head}{old}{bad}")).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("chunk 2") && e.contains("tid 5 of a table of 1"), "{e}");
    }

    /// Version 2 runs written before waits and scheduler events existed load with empty tables.
    #[test]
    fn v2_runs_without_waits_load() {
        // A version 2 file as an older writer made it: the header, then the tables of a recorded
        // run (the version 1 fixture's) in one final chunk, with none of the new fields.
        let v1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/run-v1.json");
        let mut doc: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&fs::read(&v1).unwrap()).unwrap();
        doc.remove("format");
        doc.remove("version");
        doc.insert("end".into(), true.into());
        let text = format!("{{\"format\":\"threadradar-run\",\"version\":2}}\n{}\n", serde_json::Value::Object(doc));
        assert!(!text.contains("\"waits\"") && !text.contains("\"switches\"") && !text.contains("\"sched\""));
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old-v2.json");
        fs::write(&old, text).unwrap();
        let run = read(&old).unwrap();
        assert_eq!(run.version, 2);
        assert!(!run.samples.is_empty());
        assert!(run.waits.is_empty() && run.sched.is_none() && run.switches.is_empty() && run.wakeups.is_empty());
        assert!(run.samples.iter().flat_map(|s| &s.threads).all(|t| t.wait.is_none()));
        // And such a run is written again without the new fields.
        let again = dir.path().join("again.json");
        write(&run, &again).unwrap();
        let text = fs::read_to_string(&again).unwrap();
        assert!(!text.contains("\"waits\"") && !text.contains("\"sched\"") && !text.contains("\"wakeups\""));
        assert_eq!(read(&again).unwrap(), run);
    }

    #[test]
    fn names_and_stamps() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(program_name(&v(&["python3", "samples/bug1/buggy.py", "-n", "3"])), "buggy");
        assert_eq!(program_name(&v(&["python3", "-u", "-m", "pytest", "tests"])), "pytest");
        assert_eq!(program_name(&v(&["/usr/bin/my app"])), "my_app");
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_262_412);
        assert_eq!(utc_stamp(t), "20261121T120012Z");
        assert_eq!(utc_stamp(std::time::UNIX_EPOCH), "19700101T000000Z");
        let dir = tempfile::tempdir().unwrap();
        let first = new_run_path(dir.path(), "app", t);
        assert_eq!(first, dir.path().join("20261121T120012Z-app.json"));
        std::fs::write(&first, "").unwrap();
        assert_eq!(new_run_path(dir.path(), "app", t), dir.path().join("20261121T120012Z-app-2.json"));
    }

    #[test]
    fn runs_are_ordered_by_their_time_then_modification() {
        use std::time::{Duration, UNIX_EPOCH};
        let t = UNIX_EPOCH + Duration::from_secs(1_795_262_412); // 20261121T120012Z
        let later = t + Duration::from_millis(300);
        // The same second: the one written later is newer, whatever its name.
        assert!(run_order("20261121T120012Z-app-2.json", later) > run_order("20261121T120012Z-app.json", t));
        // Stamps decide over modification times (a copied old run stays old).
        assert!(run_order("20261121T120013Z-app.json", t) > run_order("20261121T120012Z-app.json", later));
        // A name without a stamp is placed by its modification time.
        assert!(run_order("mine.json", later + Duration::from_secs(5)) > run_order("20261121T120012Z-app.json", later));
        assert!(run_order("mine.json", UNIX_EPOCH) < run_order("20261121T120012Z-app.json", t));
        let dir = tempfile::tempdir().unwrap();
        let first = new_run_path(dir.path(), "app", t);
        std::fs::write(&first, "{}").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let second = new_run_path(dir.path(), "app", t);
        std::fs::write(&second, "{}").unwrap();
        assert_eq!(list_runs(dir.path()).unwrap(), vec![second, first], "the run written last is listed first");
    }
}
