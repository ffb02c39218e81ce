//! ThreadRadar's profiler: samples every thread of a CPython program from outside (through
//! `py-spy` and `remoteprocess`) and stores what it saw as a run file.
//!
//! - [`run`]: the data model of a run, shared with `analysis` and the language server.
//! - [`runfile`]: reading (with clear errors) and atomic writing of run files; [`repair`]: what a
//!   read run claims beyond its ids (time order, interval, bounds), restored with a note.
//! - [`runset`]: run sets (`record --repeat N`, or a list of runs): one reader for every client.
//! - [`builder`]: interning tables while a run is built.
//! - [`attribution`]: a frame's function and a thread's type from its entry point, for recorded
//!   and imported runs alike.
//! - `sampler` (feature `sampler`): the sampling loop, processes, thread states.
//! - `waits`, `sched` (feature `sampler`): what blocked threads wait on; the scheduler's switch
//!   and wake-up events (`perf_event_open`).
//! - `doctor` (feature `sampler`): what this machine allows (ptrace, perf events, the target's
//!   interpreter and root), probed the way `record` will; `threadradar doctor` prints it.
//! - `config` (feature `source`): the one schema of `[tool.threadradar]` / `threadradar.toml`,
//!   read by every command and the language server.
//! - [`sections`]: critical sections of Python source (discovery with feature `source`).
//! - `source` (feature `source`, part of `sampler`): definitions and hashes of Python source files.

pub mod attribution;
pub mod builder;
#[cfg(feature = "source")]
pub mod config;
pub mod lockevents;
pub mod repair;
pub mod run;
pub mod runfile;
pub mod runset;
pub mod sections;
pub mod sourceroots;
pub mod synth;
pub mod tasks;

pub use run::Run;

#[cfg(feature = "sampler")]
pub mod cpython;
#[cfg(feature = "sampler")]
pub mod doctor;
#[cfg(feature = "sampler")]
pub mod error;
#[cfg(feature = "sampler")]
pub mod gil;
#[cfg(feature = "sampler")]
pub mod procfs;
#[cfg(feature = "sampler")]
pub mod sampler;
#[cfg(feature = "sampler")]
pub mod sched;
#[cfg(feature = "sampler")]
pub mod uprobes;
#[cfg(feature = "sampler")]
pub mod lockmethods;
pub mod schedpack;
#[cfg(feature = "sampler")]
pub mod perfring;
#[cfg(feature = "source")]
pub mod source;
#[cfg(feature = "sampler")]
pub mod stack_source;
#[cfg(feature = "sampler")]
pub mod state;
#[cfg(feature = "sampler")]
pub mod waits;
