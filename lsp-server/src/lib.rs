//! The ThreadRadar language server: `threadradar lsp` speaks LSP 3.17 over stdio.
//!
//! It shows the newest run of the workspace (`.threadradar/runs/`) beside the code, in any LSP
//! client: inlay hints and code lenses at each profiled function, method and class, hovers with
//! the ThreadRadar, workspace symbols ranked by computational runtime, commands (thread filter,
//! run selection, navigation) and the panels' JSON API as custom requests. `docs/lsp.md` is the
//! user-facing reference.
//!
//! This crate is the translation between the protocol and `threadradar_analysis`; it computes no
//! metric itself. Modules:
//! - [`protocol`]: the panel protocol's methods and types, defined once (TypeScript is generated
//!   from them), and its errors.
//! - [`handlers`]: one handler per protocol method and the one dispatcher both transports call.
//! - [`host`]: what a transport gives the handlers (the LSP server and `threadradar serve`).
//! - [`server`]: the LSP transport: lifecycle, documents, editor features, commands, run watching.
//! - [`runs`]: finding and loading runs.
//! - [`recording`]: recording a run from the editor (`threadradar record` as a child process).
//! - [`figures`]: one analysis of the active run arranged by file (cached per filter and states).
//! - [`mapping`]: the run's declarations in the code as it is now (edits, stale declarations).
//! - [`raster`]: glyph SVG → PNG (resvg, the system's fonts loaded once).
//! - [`render`]: the text of hints, lenses and hovers.
//! - [`text`]: open documents and LSP positions.
//! - [`framing`]: a guard that keeps malformed input from ending the connection.
//! - [`views`]: the Sections panel's saved views, stored beside the runs.
//! - [`config`]: what the user can set (`initializationOptions`, `didChangeConfiguration`).
//!

pub mod cmdline;
pub mod config;
pub mod figures;
pub mod framing;
pub mod handlers;
pub mod host;
pub mod history;
pub mod mapping;
pub mod project;
pub mod pytests;
pub mod protocol;
pub mod raster;
pub mod recording;
pub mod render;
pub mod runs;
pub mod server;
pub mod test_job;
pub mod text;
pub mod unittests;
pub mod views;

use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::{LspService, Server};

/// Serves one client over `input`/`output` until it exits or closes the stream.
pub async fn serve<I, O>(input: I, output: O)
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite,
{
    let (reader, writer) = tokio::io::duplex(1 << 16);
    tokio::spawn(framing::sanitise(input, writer));
    let builder = LspService::build(|client| server::Server(Arc::new_cyclic(|me| server::Backend::new(client, me.clone()))))
        .custom_method("threadRadar/overview", server::Server::overview)
        .custom_method("threadRadar/detail", server::Server::detail)
        .custom_method("threadRadar/glyph", server::Server::glyph)
        .custom_method("threadRadar/threads", server::Server::threads)
        .custom_method("threadRadar/runs", server::Server::runs)
        .custom_method("threadRadar/filter", server::Server::filter)
        .custom_method("threadRadar/documentArtifacts", server::Server::document_artifacts)
        .custom_method("threadRadar/artifactAt", server::Server::artifact_at)
        .custom_method("threadRadar/compare", server::Server::compare)
        .custom_method("threadRadar/traceCompare", server::Server::trace_compare)
        .custom_method("threadRadar/timeline", server::Server::timeline)
        .custom_method("threadRadar/sections", server::Server::sections)
        .custom_method("threadRadar/waits", server::Server::waits)
        .custom_method("threadRadar/views", server::Server::views)
        .custom_method("threadRadar/runSet", server::Server::run_set)
        .custom_method("threadRadar/navigate", server::Server::navigate)
        .custom_method("threadRadar/splitCommand", server::Server::split_command)
        .custom_method("window/workDoneProgress/cancel", server::Server::cancel_progress)
        .custom_method(framing::INVALID_MESSAGE, server::Server::invalid_message);
    // A handler that panics on purpose, for the test that its message reaches the client.
    let builder = if std::env::var_os("THREADRADAR_TEST_PANIC").is_some_and(|v| v == "1") {
        builder.custom_method(server::TEST_PANIC_METHOD, server::Server::test_panic)
    } else {
        builder
    };
    let (service, socket) = builder.finish();
    Server::new(reader, output, socket).serve(service).await;
}

/// `threadradar lsp`: serves the client on stdin/stdout.
pub fn run_stdio() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(serve(tokio::io::stdin(), tokio::io::stdout()));
    // The blocking pool may still be analysing a run nobody waits for any more.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(())
}
