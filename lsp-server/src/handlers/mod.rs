//! One handler per protocol method, written once against a [`Host`], and [`dispatch`], the one
//! entry point both transports call (the language server's `threadRadar/<method>` and
//! `threadradar serve`'s `POST /api/<method>`).

mod compare;
mod documents;
mod panels;
mod runs;
pub mod runset;
mod sections;
mod timeline;
mod tracecompare;
mod waits;
mod views;

pub use documents::{document_artifact, placed, Placed};

use crate::host::Host;
use crate::protocol::{self as p, Method, ProtocolError};
use serde_json::Value;

/// Answers one request. The same `(method, params)` on the same host state gives the same JSON
/// whichever transport carried it.
pub fn dispatch(host: &dyn Host, method: &str, params: Value) -> Result<Value, ProtocolError> {
    match method {
        p::Overview::NAME => call::<p::Overview>(host, with_project_filter(host, with_defaults(host, params)), panels::overview),
        p::Detail::NAME => call::<p::Detail>(host, with_defaults(host, params), panels::detail),
        p::Glyph::NAME => call::<p::Glyph>(host, with_defaults(host, params), panels::glyph),
        p::Threads::NAME => call::<p::Threads>(host, with_defaults(host, params), panels::threads),
        p::Runs::NAME => call::<p::Runs>(host, params, runs::runs),
        p::Filter::NAME => call::<p::Filter>(host, params, runs::filter),
        p::Compare::NAME => call::<p::Compare>(host, params, compare::compare),
        p::DocumentArtifacts::NAME => call::<p::DocumentArtifacts>(host, params, documents::document_artifacts),
        p::ArtifactAt::NAME => call::<p::ArtifactAt>(host, params, documents::artifact_at),
        p::Timeline::NAME => call::<p::Timeline>(host, params, timeline::timeline),
        p::Sections::NAME => call::<p::Sections>(host, params, sections::sections),
        p::Waits::NAME => call::<p::Waits>(host, params, waits::waits),
        p::TraceCompare::NAME => call::<p::TraceCompare>(host, params, tracecompare::trace_compare),
        p::Views::NAME => call::<p::Views>(host, params, views::views),
        p::RunSet::NAME => call::<p::RunSet>(host, params, runset::run_set),
        p::Navigate::NAME => call::<p::Navigate>(host, params, |h, req| h.navigate(&req.file, req.line)),
        p::SplitCommand::NAME => call::<p::SplitCommand>(host, params, |_, req| split_command(req)),
        other => Err(ProtocolError::new(
            p::ErrorCode::UnknownMethod,
            format!("no method {other:?}: {}", p::METHODS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")),
        )),
    }
}

/// `splitCommand`: the server's one command-line splitter ([`crate::cmdline`]) for the editors.
fn split_command(req: p::SplitCommandParams) -> Result<p::SplitCommandResult, ProtocolError> {
    match (req.line, req.words) {
        (Some(line), None) => Ok(match crate::cmdline::split(&line) {
            Ok(words) => p::SplitCommandResult { line: crate::cmdline::join(&words), words, error: None },
            Err(e) => p::SplitCommandResult { words: Vec::new(), line, error: Some(e) },
        }),
        (None, Some(words)) => Ok(p::SplitCommandResult { line: crate::cmdline::join(&words), words, error: None }),
        _ => Err(ProtocolError::new(p::ErrorCode::InvalidParams, "splitCommand takes either `line` (a command line to split) or `words` (words to join), not both or neither")),
    }
}

/// The panel requests' `exclude_threads`, `states` and `theme`, where the request leaves them
/// out, from the host: the global thread filter and the configured states and theme.
fn with_defaults(host: &dyn Host, params: Value) -> Value {
    let mut params = if params.is_null() { Value::Object(Default::default()) } else { params };
    if let Value::Object(o) = &mut params {
        let d = host.defaults();
        o.entry("exclude_threads").or_insert_with(|| serde_json::json!(d.exclude_threads));
        o.entry("states").or_insert_with(|| serde_json::json!(d.states));
        o.entry("theme").or_insert_with(|| serde_json::json!(d.theme));
        if let Some(w) = d.window {
            o.entry("window").or_insert_with(|| serde_json::json!(w));
        }
    }
    params
}

/// The overview's `include`/`exclude`, where the request names neither, from the project's
/// configuration (issue 19).
fn with_project_filter(host: &dyn Host, mut params: Value) -> Value {
    if let Value::Object(o) = &mut params {
        let d = host.defaults();
        let named = |k: &str| o.get(k).and_then(Value::as_array).is_some_and(|a| !a.is_empty());
        if !named("include") && !named("exclude") && !(d.include.is_empty() && d.exclude.is_empty()) {
            o.insert("include".into(), serde_json::json!(d.include));
            o.insert("exclude".into(), serde_json::json!(d.exclude));
        }
    }
    params
}

fn call<M: Method>(host: &dyn Host, params: Value, handler: fn(&dyn Host, M::Params) -> Result<M::Result, ProtocolError>) -> Result<Value, ProtocolError> {
    let params = if params.is_null() { Value::Object(Default::default()) } else { params };
    let req: M::Params = serde_json::from_value(params).map_err(|e| ProtocolError::invalid(format!("the parameters of {} are not valid: {e}", M::NAME)))?;
    let result = handler(host, req)?;
    serde_json::to_value(result).map_err(|e| ProtocolError::new(p::ErrorCode::Internal, format!("the answer to {} could not be written: {e}", M::NAME)))
}
