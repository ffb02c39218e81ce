//! Errors of the analysis layer: each one sentence that says what is wrong and what to do.

/// Why an analysis or a view could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The run refers to a table entry that does not exist.
    #[error("the run is inconsistent ({0}); record the program again")]
    InvalidRun(#[from] threadradar_profiler::run::DanglingId),
    #[error("no thread is named {name:?} in this run (threads: {known})")]
    UnknownThread { name: String, known: String },
    #[error("no thread has the type {name:?} in this run (types: {known})")]
    UnknownThreadType { name: String, known: String },
    #[error("the {which} pattern {pattern:?} is not a valid regular expression: {detail}")]
    BadPattern { which: &'static str, pattern: String, detail: String },
    #[error(
        "the run has no samples of threads in the counted states ({states}){excluded}: \
         count more states with `--states all` (or `--states cpu` for CPU time, which needs a run recorded with kernel accounting), or record the program for longer"
    )]
    NoCountedSamples { states: &'static str, excluded: String },
    #[error("{value:?} is not a valid {what}: use {expected}")]
    BadValue { what: &'static str, value: String, expected: &'static str },
    #[error("the time window {from:.3}–{to:.3} s is not inside the run (0–{duration:.3} s): choose a window that starts before the run ends and ends after it starts, or clear it")]
    BadWindow { from: f64, to: f64, duration: f64 },
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
}
