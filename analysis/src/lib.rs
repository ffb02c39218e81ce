//! ThreadRadar's analysis layer: thread-aware runtime metrics, constrained clustering of threads,
//! thread filters and the view model, computed from a recorded [`Run`].
//!
//! Architecture invariant: this crate is pure. It reads no files, opens no sockets, prints nothing
//! and knows nothing of LSP: a run comes in, values come out. The CLI, the language server and the
//! web panels format those values.
//!
//! - [`artifact`]: functions, classes, files and the program (paper §2.1).
//! - [`metrics`]: `frq` and `crt`, Eq. 1–7 (paper §2.2), self time, callers and callees, seconds.
//! - [`cluster`]: COP-KMeans and the plain k-means baseline (paper §2.3).
//! - [`threads`]: counted thread states, the thread filter, thread types.
//! - [`analysis`]: [`Analysis`], all of the above for one run and one set of [`Options`].
//! - [`view`]: the serialisable report ([`ReportView`]) behind `report --json` and the panels.
//! - [`glyph`]: the ThreadRadar's three-level scale, the one palette, the SVG glyph and the text
//!   glyph (PNG is rasterised outside this crate: `threadradar_lsp::raster`, which loads fonts).
//! - [`histogram`]: the `crt(a, th)` histogram of the detail view (paper Fig. 11).
//! - [`panel`]: the overview/detail panels' JSON API, shared by `threadradar serve` and the
//!   language server.
//! - [`period`]: the sampling period, one definition for every view and export.
//! - [`filter`]: which artifacts a view lists.
//! - [`stability`]: adjusted Rand index between the clusterings of two runs.
//! - [`timeline`]: per-thread icicles on one merged, log-scalable time axis, viewport layouts,
//!   the per-thread overview and the static chart.
//! - [`sections`]: critical sections, every execution of each, its variability and outliers.
//! - [`compare`]: two runs side by side (before and after a fix): per artifact, what changed.
//! - [`changes`]: what changed as data (figure, before, after, evidence), its words and its ranking.
//! - [`waits`]: who waits for whom: wait intervals, wake edges with their evidence, objects.
//! - [`locksections`]: exact critical sections from `record --exact-locks` lock events.
//! - [`dump`]: one snapshot of every thread (`threadradar dump`): stacks, waits, holders, deadlocks.
//! - [`waitcounts`]: the waits view's edges counted by evidence and its ends by source.
//! - [`runset`]: repeated runs: mean and spread, clustering stability, Welch's t-test, and
//!   `mark_significance`, which tests a comparison's changes against two run sets (every client's).
//! - [`tracediff`]: two runs as traces (TraceDiff): threads paired, timeline stretches matched.
//! - [`units`]: asyncio tasks as the units of concurrency (`--units tasks`): a run whose tasks are
//!   entries of `threads`, so every view counts them.
//!
//! ```
//! use threadradar_analysis::{Analysis, Options, ReportView, ViewOptions};
//! # let run = threadradar_profiler::Run::new(Default::default());
//! let analysis = Analysis::new(&run, &Options::default()).unwrap();
//! // An empty run has nothing counted, which the view reports as an error sentence.
//! assert!(ReportView::build(&run, &analysis, &ViewOptions::default()).is_err());
//! ```
//!
//! [`Run`]: threadradar_profiler::Run

pub mod analysis;
pub mod artifact;
pub mod changes;
pub mod cluster;
pub mod compare;
pub mod dump;
pub mod error;
pub mod filter;
pub mod glyph;
pub mod histogram;
pub mod locksections;
pub mod metrics;
pub mod panel;
pub mod period;
pub mod sections;
pub mod stability;
pub mod svg;
pub mod threads;
pub mod timeline;
pub mod runset;
pub mod tracediff;
pub mod units;
pub mod view;
pub mod waitcounts;
pub mod waits;
pub mod waits_groups;
pub mod waits_locks;

pub use analysis::{Analysis, Cluster, Options, TimeWindow, Window};
pub use artifact::{Artifact, ArtifactId, ArtifactKind, Artifacts, Level};
pub use cluster::{ClusterMethod, Clustering, CopKMeans};
pub use compare::{ArtifactDelta, Change, CompareOptions, Comparison, DeltaStatus, SideFigures, SideSummary, Trend};
pub use error::AnalysisError;
pub use filter::{ArtifactFilter, FilterSpec};
pub use metrics::{Metrics, TimeSource};
pub use units::Units;
pub use threads::{has_cpu_accounting, thread_types, CountedStates, ThreadFilter, ThreadType};
pub use view::{ReportView, ViewOptions};
