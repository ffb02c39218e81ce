//! ThreadRadar runs to and from the formats other tools already read and write.
//!
//! One file per format, the py-spy way: each exporter turns a [`Run`] into bytes for one viewer,
//! each importer turns another profiler's file into a [`Run`] built through the profiler's
//! [`RunBuilder`](threadradar_profiler::builder::RunBuilder), so imported runs are ordinary runs.
//!
//! - [`firefox`]: the Firefox Profiler's processed profile format (JSON).
//! - [`perfetto`]: Perfetto's protobuf trace (TrackEvent slices with interned names).
//! - [`chrome`]: the Chrome JSON trace format, which Perfetto and `chrome://tracing` read.
//! - [`speedscope`]: speedscope's file format (JSON), one profile per thread.
//! - [`pprof`]: `profile.proto`, gzip-compressed (Go's pprof, Pyroscope, Parca, Grafana).
//! - [`collapsed`]: folded stacks (`flamegraph.pl`, inferno), the thread as the root frame.
//! - [`import`]: py-spy, austin, CPython's `profiling.sampling`, speedscope and `perf script`.
//!
//! What every exporter shares (frame labels, per-sample durations, the intervals a thread spent
//! waiting) lives in [`timeline`], with the [`timeline::Overlay`]: the waits with their objects
//! and the wake-up edges with their evidence (the analysis crate's waits view), the scheduler's
//! per-thread states when the run recorded them, and every execution of every critical section.
//! It is computed once, by the analysis crate, and each exporter only decides how to draw it
//! (Firefox markers related by flow ids, Perfetto child tracks with `flow_ids`, Chrome flow
//! events and async slices); speedscope, pprof and folded stacks have no place for it.
//!
//! The two largest outputs (Perfetto's, Chrome's: hundreds of megabytes for a million samples) are
//! encoded on a thread of their own while the caller's thread writes the bytes out ([`pipe`]).
//!
//! Architecture invariant: exporters read a validated run and write to a `Write`; they never
//! panic on what a profiled program chose to call its threads or functions: every name is
//! escaped as its format needs (JSON by serde, protobuf strings as bytes, folded stacks by
//! [`collapsed::escape_frame`]).

pub mod chrome;
pub mod collapsed;
pub mod firefox;
pub mod import;
pub mod perfetto;
pub mod pipe;
pub mod pprof;
pub mod speedscope;
pub mod timeline;

use std::io::Write;
use threadradar_profiler::Run;

/// The formats `threadradar export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    Firefox,
    Perfetto,
    Chrome,
    Speedscope,
    Pprof,
    Collapsed,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 6] =
        [ExportFormat::Firefox, ExportFormat::Perfetto, ExportFormat::Chrome, ExportFormat::Speedscope, ExportFormat::Pprof, ExportFormat::Collapsed];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Firefox => "firefox",
            ExportFormat::Perfetto => "perfetto",
            ExportFormat::Chrome => "chrome",
            ExportFormat::Speedscope => "speedscope",
            ExportFormat::Pprof => "pprof",
            ExportFormat::Collapsed => "collapsed",
        }
    }

    /// The file name ending viewers expect.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Firefox => "firefox.json",
            ExportFormat::Perfetto => "pftrace",
            ExportFormat::Chrome => "trace.json",
            ExportFormat::Speedscope => "speedscope.json",
            ExportFormat::Pprof => "pb.gz",
            ExportFormat::Collapsed => "folded",
        }
    }
}

/// Why an export failed: only writing can fail, a validated run always converts.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("cannot encode the {format} output: {detail}")]
    Encode { format: &'static str, detail: String },
}

/// Writes `run` in `format` to `out`.
pub fn export(run: &Run, format: ExportFormat, out: &mut dyn Write) -> Result<(), ExportError> {
    match format {
        ExportFormat::Firefox => firefox::write(run, out),
        ExportFormat::Perfetto => perfetto::write(run, out),
        ExportFormat::Chrome => chrome::write(run, out),
        ExportFormat::Speedscope => speedscope::write(run, out),
        ExportFormat::Pprof => pprof::write(run, out),
        ExportFormat::Collapsed => collapsed::write(run, out),
    }
}
