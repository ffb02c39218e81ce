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
//! (thread states, names, times, the interval, the main thread, the pid) is stated in the run's
//! `meta.imported` (`note`, and `unknown` as keys), never made up: without states every sample
//! counts as computing, and no thread is made the main one. States are read where a format has
//! them: austin's idle flag (full mode, text and MOJO), ThreadRadar's own Firefox export (its
//! `Python` / `GIL wait` / `Idle` categories) and CPython's gecko state markers.
//!
//! Everything a file makes grow goes through [`Profile`]'s methods, checked against [`Limits`]:
//! whatever a file claims, an import stops with one sentence instead of allocating without bound
//! (docs/reliability.md).

mod austin;
mod austin_mojo;
mod build;
mod collapsed;
mod gecko;
mod gecko_states;
mod json;
mod lines;
mod perf;
mod profile;
mod speedscope;

pub use build::build_run;
pub use profile::{Profile, RawFrame, RawSample, RawStack, RawThread};
use std::path::{Path, PathBuf};
use threadradar_profiler::run::Run;

/// The interval assumed when neither the file nor `--interval-ms` gives one.
pub(crate) const DEFAULT_INTERVAL_NS: u64 = 10_000_000;

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
    /// Whether files of this format are read line by line (never held whole).
    pub fn line_oriented(self) -> bool {
        matches!(self, ImportFormat::Collapsed | ImportFormat::Austin | ImportFormat::Perf)
    }

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
    #[error("{path} holds more than an import takes: {what}, above the limit of {limit}; {next}")]
    TooLarge { path: PathBuf, what: String, limit: String, next: &'static str },
    #[error("--interval-ms {given} is not a sampling interval: give the interval in milliseconds, more than 0 and at most {max}")]
    BadInterval { given: f64, max: f64 },
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

/// How to import.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The format, or `None` to recognise it from the content.
    pub format: Option<ImportFormat>,
    /// Where to look for the profiled program's sources when a recorded path does not exist here
    /// (a profile from another machine): the longest tail of the path found under a root wins.
    pub source_roots: Vec<PathBuf>,
    /// The sampling interval in milliseconds, for a file that does not state it (`--interval-ms`);
    /// it takes precedence over one the file states.
    pub interval_ms: Option<f64>,
    /// What a file may claim.
    pub limits: Limits,
}

/// The most a file may claim; beyond, the import stops with a sentence naming the limit. Each
/// bounds what the run (and the import on the way) holds in memory, whatever the file says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Thread-samples after folded counts and weights are expanded (a run holds each one).
    pub samples: u64,
    /// Frames in one stack.
    pub depth: usize,
    /// Threads.
    pub threads: usize,
    /// Distinct frames.
    pub frames: usize,
    /// Distinct stacks (nodes of the stack tree).
    pub stacks: usize,
    /// Bytes of one name: a function, file or thread name, a frame label; in the JSON formats,
    /// of any string (as written), and in MOJO of any string.
    pub name_bytes: usize,
    /// Nanoseconds from the first sample to the last.
    pub span_ns: u64,
    /// Bytes of a JSON file (speedscope, Firefox Profiler). It is read as it goes, but a Firefox
    /// profile's tables are held (typed, 4 to 8 bytes a value) until its end, since its string
    /// table may come last.
    pub json_bytes: u64,
    /// Bytes of any other file (read as it goes).
    pub file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // 1 kHz for 10 threads during 20 minutes; about 1 GB as a run in memory.
            samples: 12_000_000,
            // Python's default recursion limit is 1 000.
            depth: 10_000,
            threads: 100_000,
            frames: 2_000_000,
            stacks: 8_000_000,
            name_bytes: 64 * 1024,
            // A year.
            span_ns: 365 * 24 * 3600 * 1_000_000_000,
            // The sample limit's worth of samples in the JSON formats is a few hundred MB.
            json_bytes: 1 << 30,
            // perf script spends 1–2 kB of text per sample with its native frames.
            file_bytes: 8 << 30,
        }
    }
}

/// Reads a file written by another profiler and makes a run of it. Every format is read from
/// the file as it goes, never held whole: the line-oriented ones (folded stacks, austin's text,
/// perf script) line by line, MOJO event by event, and the JSON formats (speedscope, Firefox
/// Profiler) through typed, capped deserializers (`json.rs`).
pub fn import_file(path: &Path, opts: &ImportOptions) -> Result<Run, ImportError> {
    use std::io::BufRead;
    let io = |e| ImportError::Io { path: path.to_path_buf(), source: e };
    let size = std::fs::metadata(path).map_err(io)?.len();
    check_size(size, path, opts.limits.file_bytes.max(opts.limits.json_bytes), None)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path).map_err(io)?);
    // The format from the file's start (what `detect` looks at), without consuming it.
    let format = match opts.format {
        Some(f) => f,
        None => {
            let head = reader.fill_buf().map_err(io)?;
            match detect(head) {
                Some(f) => f,
                None => return import_bytes(head, path, opts), // the sentence for an unknown or empty file
            }
        }
    };
    check_size(size, path, size_limit(format, &opts.limits), Some(format))?;
    let interval_ns = interval_ns(opts)?;
    let head = reader.fill_buf().map_err(io)?;
    if (head.len() as u64) >= size && head.iter().all(u8::is_ascii_whitespace) {
        return Err(ImportError::Empty { path: path.to_path_buf(), format: format.name() });
    }
    let profile = parse(format, reader, path, opts)?;
    finish(profile, path, format, opts, interval_ns)
}

/// The largest file of `format` an import takes.
fn size_limit(format: ImportFormat, limits: &Limits) -> u64 {
    match format {
        ImportFormat::Speedscope | ImportFormat::Gecko => limits.json_bytes,
        _ => limits.file_bytes,
    }
}

/// A file of `format` from `reader`, as its parser reads it.
fn parse(format: ImportFormat, reader: impl std::io::BufRead, path: &Path, opts: &ImportOptions) -> Result<Profile, ImportError> {
    let ctx = Ctx { path, format: format.name(), limits: opts.limits };
    match format {
        ImportFormat::Collapsed => collapsed::parse(&mut lines::LineSource::new(reader, &ctx), &ctx),
        ImportFormat::Austin => austin::parse(&mut lines::LineSource::new(reader, &ctx), &ctx),
        ImportFormat::Perf => perf::parse(&mut lines::LineSource::new(reader, &ctx), &ctx),
        ImportFormat::AustinMojo => austin_mojo::parse(reader, &ctx),
        ImportFormat::Speedscope => speedscope::parse(reader, &ctx),
        ImportFormat::Gecko => gecko::parse(reader, &ctx),
    }
}

/// A file within the size limit of its format (`None`: of any format).
fn check_size(size: u64, path: &Path, limit: u64, format: Option<ImportFormat>) -> Result<(), ImportError> {
    if size <= limit {
        return Ok(());
    }
    let what = match format {
        Some(f) => format!("as {} {} file it is {size} bytes", article(f.name()), f.name()),
        None => format!("it is {size} bytes"),
    };
    Err(ImportError::TooLarge { path: path.to_path_buf(), what, limit: format!("{limit} bytes"), next: profile::SHORTER })
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
    check_size(bytes.len() as u64, path, size_limit(format, &opts.limits), Some(format))?;
    let interval_ns = interval_ns(opts)?;
    let profile = parse(format, bytes, path, opts)?;
    finish(profile, path, format, opts, interval_ns)
}

/// `--interval-ms` in nanoseconds, checked before anything is read.
fn interval_ns(opts: &ImportOptions) -> Result<Option<u64>, ImportError> {
    match opts.interval_ms {
        Some(ms) if ms.is_finite() && ms > 0.0 && ms <= MAX_INTERVAL_MS => Ok(Some(((ms * 1e6).round() as u64).max(1))),
        Some(ms) => Err(ImportError::BadInterval { given: ms, max: MAX_INTERVAL_MS }),
        None => Ok(None),
    }
}

fn finish(profile: Profile, path: &Path, format: ImportFormat, opts: &ImportOptions, interval_ns: Option<u64>) -> Result<Run, ImportError> {
    if profile.samples.is_empty() {
        return Err(ImportError::NoSamples { path: path.to_path_buf(), format: format.name() });
    }
    build_run(profile, path, &opts.source_roots, interval_ns)
}

/// The longest interval `--interval-ms` takes: a minute.
const MAX_INTERVAL_MS: f64 = 60_000.0;

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
    pub limits: Limits,
}

impl Ctx<'_> {
    pub fn parse_error(&self, line: usize, detail: impl Into<String>) -> ImportError {
        ImportError::Parse { path: self.path.to_path_buf(), format: self.format, at: format!("line {line}"), detail: bounded(detail.into()) }
    }

    /// The file ends in the middle of what starts at `at` (`line 12`).
    pub fn truncated(&self, at: impl Into<String>) -> ImportError {
        ImportError::Truncated { path: self.path.to_path_buf(), format: self.format, at: at.into() }
    }
}

/// A piece of the file quoted in a message, cut to 40 characters: a message stays one short
/// sentence whatever the file holds.
pub(crate) fn quote(s: &str) -> String {
    if s.chars().count() <= 40 {
        format!("{s:?}")
    } else {
        format!("{:?}…", s.chars().take(40).collect::<String>())
    }
}

/// A parser's detail (which may quote the file, e.g. serde_json's) cut to 200 characters.
pub(crate) fn bounded(detail: String) -> String {
    if detail.chars().count() <= 200 {
        detail
    } else {
        format!("{}…", detail.chars().take(200).collect::<String>())
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
