//! The panel protocol: every request the panels and the editor clients make, defined once.
//!
//! One method is one [`Method`]: a name, a parameter type and a result type, all serde types with
//! TypeScript declarations generated from them ([`typescript`]; checked in once, as
//! `web/protocol.d.ts`, which the web panels and the VS Code extension both import). Two transports carry the
//! same methods to the same handlers ([`crate::handlers::dispatch`]):
//!
//! - the language server: request `threadRadar/<name>`, params = the parameters;
//! - `threadradar serve`: `POST /api/<name>` with the parameters as the JSON body.
//!
//! For the same parameters and run both answer the same JSON, byte for byte. Errors are a
//! [`ProtocolError`]: one sentence and an [`ErrorCode`], mapped to an HTTP status and to a
//! JSON-RPC error code here and nowhere else.
//!
//! How to add a view: define its parameter and result types (in `analysis` when they are view
//! models), add a unit type implementing [`Method`] below and list it in [`METHODS`] and
//! [`typescript`], write its handler in `handlers/`, add its arm to `dispatch`, and regenerate the
//! TypeScript (`UPDATE_EXPECT=1 cargo test --test protocol`).

pub mod sections;
pub mod history;
pub mod types;
pub mod waits;
pub mod tracecompare;
pub mod views;
pub mod runset;

use serde::de::DeserializeOwned;
use serde::Serialize;
use ts_rs::TS;

pub use sections::*;
pub use history::*;
pub use types::*;
pub use waits::*;
pub use tracecompare::*;
pub use views::*;
pub use runset::*;

/// The protocol's version. It grows when a method's parameters or results change incompatibly;
/// clients read it from `threadRadar/runs` (`protocol`) and from the server's capabilities.
pub const VERSION: u32 = 2;

/// The LSP method name of a protocol method.
pub fn lsp_name(method: &str) -> String {
    format!("threadRadar/{method}")
}

/// One request of the protocol.
pub trait Method {
    /// `overview`, `detail`, …: `threadRadar/<NAME>` over LSP, `POST /api/<NAME>` over HTTP.
    const NAME: &'static str;
    /// What it answers, in a sentence, for `docs/panels.md`.
    const DOC: &'static str;
    type Params: DeserializeOwned + TS + 'static;
    type Result: Serialize + TS + 'static;
}

macro_rules! methods {
    ($($ty:ident = $name:literal, $params:ty => $result:ty, $doc:literal;)*) => {
        $(
            #[doc = $doc]
            pub struct $ty;
            impl Method for $ty {
                const NAME: &'static str = $name;
                const DOC: &'static str = $doc;
                type Params = $params;
                type Result = $result;
            }
        )*
        /// Every method: (name, parameter type, result type, description).
        pub const METHODS: &[(&str, &str, &str, &str)] = &[
            $(($name, stringify!($params), stringify!($result), $doc),)*
        ];
    };
}

use threadradar_analysis::panel::{DetailRequest, DetailResponse, GlyphRequest, OverviewRequest, OverviewResponse, ThreadsRequest, ThreadsResponse};
use threadradar_analysis::timeline::layout::{Layout, LayoutRequest};
use threadradar_analysis::Comparison;

methods! {
    Overview = "overview", OverviewRequest => OverviewResponse,
        "The lists of functions and classes by crt, the Program ThreadRadar and the threads tab.";
    Detail = "detail", DetailRequest => DetailResponse,
        "One artifact under a thread selection: enlarged glyph, clusters, thread tree, histogram, callers and callees.";
    Glyph = "glyph", GlyphRequest => GlyphResult,
        "One ThreadRadar as SVG.";
    Threads = "threads", ThreadsRequest => ThreadsResponse,
        "Every thread with its crt, cluster and where it ran.";
    Runs = "runs", RunsParams => RunsResult,
        "The runs of the workspace (or served directory), the active one with its summary; `select` makes a run active.";
    Filter = "filter", FilterParams => FilterResult,
        "The global thread filter and time window; `exclude_threads` sets the one, `window` (`null` clears it) the other (every figure, hint and panel then leaves those threads out, or counts only that window).";
    Compare = "compare", CompareParams => Comparison,
        "Two runs side by side per artifact: deltas, statuses and their statements in words.";
    DocumentArtifacts = "documentArtifacts", DocumentArtifactsParams => DocumentArtifactsResult,
        "The profiled declarations of one document at their current lines, with the text glyph and optionally the SVG.";
    ArtifactAt = "artifactAt", ArtifactAtParams => ArtifactAtResult,
        "The innermost profiled function and class at a position of a document, found with tree-sitter in the current text.";
    Timeline = "timeline", LayoutRequest => Layout,
        "One viewport of the timeline: every thread's icicle on one merged, log-scalable time axis, narrower bars aggregated.";
    Sections = "sections", SectionsParams => SectionsResult,
        "The active run's critical sections (found in the source) and every execution of each: durations, waits to enter, contention, figures and outliers.";
    Waits = "waits", WaitsParams => WaitsResult,
        "Who waited for whom: wait intervals per thread in a time range, wake edges with their evidence (bundled per pixel column given a width), the objects table and what evidence the run holds.";
    TraceCompare = "traceCompare", TraceCompareParams => TraceCompareResult,
        "Two runs matched as traces (TraceDiff) and laid out in pixels: lanes per matched thread pair, their bars, match groups as bundled edges, unmatched threads and the changes in words.";
    Views = "views", ViewsParams => ViewsResult,
        "The Sections panel's saved views (a section, optionally an execution or a thread, and a note), each resolved against the active run; `save` saves one, `delete` deletes one.";
    RunSet = "runSet", RunSetParams => RunSetAnswer,
        "A run set's figures (by default the set the active run belongs to): the mean, standard deviation and range over its runs of the program's and each artifact's crt, seconds, threads and clusters.";
    Navigate = "navigate", NavigateParams => NavigateResult,
        "Asks the host to show a file at a line (the editor opens it; `serve` prints it).";
    SplitCommand = "splitCommand", SplitCommandParams => SplitCommandResult,
        "A command line split into a program and its arguments as the server splits `recordCommand` and `threadradar.record`'s line (a shell's quoting, no expansions), or the sentence saying why it cannot be; or words joined into such a line. The editors' one way to read a typed command.";
}

/// What kind of failure a [`ProtocolError`] is; decides the HTTP status and the JSON-RPC code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The parameters do not fit the method (or a value in them is not valid).
    InvalidParams,
    /// No method of that name.
    UnknownMethod,
    /// There is no run to answer from yet.
    NoRun,
    /// The artifact, thread, run or file asked for does not exist.
    NotFound,
    /// The request cannot be answered in this state (e.g. nothing to compare with).
    Conflict,
    /// The run or file could not be read or analysed.
    Unprocessable,
    /// A bug: the answer could not be built.
    Internal,
}

impl ErrorCode {
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidParams => 400,
            ErrorCode::UnknownMethod | ErrorCode::NotFound => 404,
            ErrorCode::NoRun | ErrorCode::Conflict => 409,
            ErrorCode::Unprocessable => 422,
            ErrorCode::Internal => 500,
        }
    }

    /// JSON-RPC error codes: the reserved ones where they fit, else the server range.
    pub fn jsonrpc_code(self) -> i64 {
        match self {
            ErrorCode::InvalidParams => -32602,
            ErrorCode::UnknownMethod => -32601,
            ErrorCode::Internal => -32603,
            ErrorCode::NoRun => -32002,
            ErrorCode::NotFound => -32004,
            ErrorCode::Conflict => -32009,
            ErrorCode::Unprocessable => -32022,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidParams => "invalid_params",
            ErrorCode::UnknownMethod => "unknown_method",
            ErrorCode::NoRun => "no_run",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Unprocessable => "unprocessable",
            ErrorCode::Internal => "internal",
        }
    }
}

/// Why a request failed: one sentence that says what to do, and its kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct ProtocolError {
    pub code: ErrorCode,
    pub message: String,
}

impl ProtocolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ProtocolError {
        ProtocolError { code, message: message.into() }
    }
    pub fn invalid(message: impl Into<String>) -> ProtocolError {
        ProtocolError::new(ErrorCode::InvalidParams, message)
    }
    pub fn not_found(message: impl Into<String>) -> ProtocolError {
        ProtocolError::new(ErrorCode::NotFound, message)
    }
    pub fn no_run() -> ProtocolError {
        ProtocolError::new(ErrorCode::NoRun, "there is no run: record one with `threadradar record -- python3 your_program.py`")
    }

    /// The HTTP body: `{"error": sentence, "code": kind}`.
    pub fn http_body(&self) -> serde_json::Value {
        serde_json::json!({ "error": self.message, "code": self.code.as_str() })
    }

    /// The JSON-RPC error: the sentence as message, the kind as `data.code`.
    pub fn to_jsonrpc(&self) -> tower_lsp_server::jsonrpc::Error {
        tower_lsp_server::jsonrpc::Error {
            code: tower_lsp_server::jsonrpc::ErrorCode::from(self.code.jsonrpc_code()),
            message: self.message.clone().into(),
            data: Some(serde_json::json!({ "code": self.code.as_str() })),
        }
    }
}

impl From<threadradar_analysis::panel::PanelError> for ProtocolError {
    fn from(e: threadradar_analysis::panel::PanelError) -> ProtocolError {
        use threadradar_analysis::panel::PanelError;
        let code = match e {
            PanelError::UnknownArtifact { .. } | PanelError::UnknownThread(_) => ErrorCode::NotFound,
            PanelError::Analysis(threadradar_analysis::AnalysisError::BadPattern { .. } | threadradar_analysis::AnalysisError::BadValue { .. }) => {
                ErrorCode::InvalidParams
            }
            PanelError::Analysis(_) => ErrorCode::Unprocessable,
        };
        ProtocolError::new(code, e.to_string())
    }
}

impl From<threadradar_analysis::timeline::TimelineError> for ProtocolError {
    fn from(e: threadradar_analysis::timeline::TimelineError) -> ProtocolError {
        use threadradar_analysis::timeline::TimelineError as T;
        let code = match e {
            T::UnknownThread(..) | T::NoThreadMatches(..) => ErrorCode::NotFound,
            T::TooManyFrames(_) | T::TooManyTicks(_) => ErrorCode::Unprocessable,
            _ => ErrorCode::InvalidParams,
        };
        ProtocolError::new(code, e.to_string())
    }
}

impl From<threadradar_analysis::AnalysisError> for ProtocolError {
    fn from(e: threadradar_analysis::AnalysisError) -> ProtocolError {
        threadradar_analysis::panel::PanelError::from(e).into()
    }
}

/// The TypeScript declarations of every protocol type, as checked in for the VS Code extension
/// and the web panels. Generated, never edited by hand.
pub fn typescript() -> String {
    use threadradar_analysis as a;
    let cfg = ts_rs::Config::new().with_large_int("number");
    let mut out = String::from(
        "// Generated from the Rust types of the panel protocol (lsp-server/src/protocol): do not edit.\n\
         // Regenerate with `UPDATE_EXPECT=1 cargo test --test protocol`.\n\n",
    );
    out.push_str(&format!("export const PROTOCOL_VERSION = {VERSION};\n\n"));
    out.push_str("/** Every method: `threadRadar/<name>` over LSP, `POST /api/<name>` over HTTP. */\nexport const Methods = {\n");
    for (name, ..) in METHODS {
        out.push_str(&format!("  {name}: \"{name}\",\n"));
    }
    out.push_str("} as const;\n\n/** The parameters and result of each method. */\nexport interface MethodTypes {\n");
    for (name, params, result, _) in METHODS {
        out.push_str(&format!("  {name}: {{ params: {}; result: {} }};\n", ts_name(params), ts_name(result)));
    }
    out.push_str("}\n");
    macro_rules! decl {
        ($($t:ty),* $(,)?) => {
            $(
                out.push('\n');
                if let Some(docs) = <$t as TS>::docs() {
                    out.push_str(&docs);
                }
                out.push_str("export ");
                out.push_str(&<$t as TS>::decl(&cfg));
                out.push('\n');
            )*
        };
    }
    decl!(
        ErrorCode,
        ProtocolError,
        // View model, defined once.
        a::CountedStates,
        a::Units,
        a::Level,
        a::ArtifactKind,
        a::FilterSpec,
        a::Window,
        a::glyph::Theme,
        a::glyph::ClusterColour,
        a::glyph::RadarLevel,
        a::glyph::Palette,
        a::glyph::GlyphCellJson,
        threadradar_profiler::run::FileKind,
        a::metrics::TimeSource,
        // overview, detail, glyph, threads
        a::panel::ArtifactKey,
        a::panel::Params,
        a::panel::OverviewRequest,
        a::panel::OverviewResponse,
        a::panel::RunInfo,
        a::panel::PaletteView,
        a::panel::ArtifactEntry,
        a::panel::ClusterInfo,
        a::panel::ThreadEntry,
        a::panel::DetailRequest,
        a::panel::DetailResponse,
        a::panel::Selection,
        a::panel::DetailThread,
        a::panel::TypeGroup,
        a::panel::EdgeEntry,
        a::histogram::HistogramBin,
        a::panel::GlyphRequest,
        GlyphResult,
        a::panel::ThreadsRequest,
        a::panel::ThreadsResponse,
        // runs, filter
        RunsParams,
        RunsResult,
        RunItem,
        RunSummary,
        RunLabel,
        RunPin,
        RunOutcome,
        RunHistory,
        FilterParams,
        FilterResult,
        // compare
        CompareParams,
        a::Comparison,
        a::SideSummary,
        a::compare::ProgramFigures,
        a::SideFigures,
        a::DeltaStatus,
        a::Trend,
        a::ArtifactDelta,
        a::compare::Change,
        a::changes::Figure,
        a::changes::ChangeEvidence,
        a::changes::EvidenceSource,
        a::changes::EvidenceUnit,
        a::runset::Significance,
        // documents
        DocumentArtifactsParams,
        GlyphImageOptions,
        DocumentArtifactsResult,
        FileEntry,
        DocumentArtifact,
        ArtifactAtParams,
        ArtifactAtResult,
        // timeline
        a::timeline::layout::LayoutRequest,
        a::timeline::layout::Fold,
        a::timeline::layout::ThreadSelection,
        a::timeline::layout::Layout,
        a::timeline::layout::StateColours,
        a::timeline::layout::AxisTick,
        a::timeline::layout::FrameInfo,
        a::timeline::layout::LaneLayout,
        a::timeline::layout::StateBox,
        a::timeline::tasks::AwaitBox,
        a::timeline::layout::BarBox,
        a::timeline::layout::Block,
        a::timeline::index::BarState,
        a::timeline::index::BlockedKind,
        a::timeline::focus::Focus,
        a::timeline::focus::Span,
        a::timeline::overview::ThreadOverview,
        a::timeline::overview::Wait,
        a::timeline::overview::TopFrame,
        // waits
        WaitsParams,
        WaitsResult,
        EdgeBundle,
        a::waits::WaitsView,
        a::waitcounts::WaitCounts,
        a::waits_groups::WaitsGroups,
        a::waits_groups::ObjectGroup,
        a::waits_groups::WakeCell,
        a::waitcounts::EdgeCounts,
        a::waitcounts::EvidenceCount,
        a::waits::EvidenceAvailable,
        a::waits::WaitThread,
        a::waits::WaitInterval,
        a::waits::WakeEdge,
        a::waits::Evidence,
        a::waits::WakeKind,
        a::waits_locks::ExactHandoff,
        a::waits::ObjectSummary,
        a::waits::Location,
        NavigateParams,
        NavigateResult,
        SplitCommandParams,
        SplitCommandResult,
        // traceCompare
        TraceCompareParams,
        TraceCompareResult,
        TraceSide,
        a::tracediff::Shift,
        CompareBar,
        PairLane,
        CompareEdge,
        a::tracediff::TraceThread,
        a::tracediff::TraceFrame,
        a::tracediff::PairedBy,
        a::tracediff::MatchGroup,
        // sections
        SectionsParams,
        SectionsResult,
        a::sections::SectionsView,
        a::sections::SectionFigures,
        a::histogram::LogHistogram,
        a::histogram::LogBin,
        a::sections::Execution,
        a::sections::ShortExecutions,
        a::sections::Unseen,
        a::sections::LockObject,
        a::sections::WaitSource,
        threadradar_profiler::sections::SectionKind,
        // run sets
        RunSetParams,
        RunSetAnswer,
        RunSetResult,
        a::runset::ArtifactSpread,
        a::runset::ProgramSpread,
        a::runset::Spread,
        // saved views
        ViewsParams,
        SaveView,
        ViewsResult,
        ViewItem,
        crate::views::SavedView,
        crate::views::SectionRef,
        crate::views::SavedExecution,
    );
    out
}

fn ts_name(rust: &str) -> &str {
    match rust {
        "GlyphCellJson" => "GlyphCell",
        other => other,
    }
}

/// The methods table of `docs/panels.md` (between its `<!-- methods -->` markers).
pub fn methods_markdown() -> String {
    let mut out = String::from("| method | parameters | result | what it answers |\n|---|---|---|---|\n");
    for (name, params, result, doc) in METHODS {
        out.push_str(&format!("| `{name}` | `{}` | `{}` | {doc} |\n", ts_name(params), ts_name(result)));
    }
    out
}
