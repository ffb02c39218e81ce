//! `threadradar`: a thread-aware sampling profiler for Python whose findings live in the editor.
//!
//! This file only parses the command line and hands off to `commands::*`.

mod commands;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// ThreadRadar: see which threads ran your Python code, and how the work was spread across them.
///
/// Record a program (`threadradar record -- python3 app.py`), then read the per-function
/// thread metrics (`threadradar report`) or open the project in an editor with the ThreadRadar
/// language server to see the radars beside the code.
#[derive(Parser, Debug)]
#[command(name = "threadradar", version, propagate_version = true, max_term_width = 100)]
struct Cli {
    /// More logging on stderr (-v info, -vv debug).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Profile a Python program: launch it (`-- python3 prog.py`) or attach (`--pid`).
    Record(commands::record::RecordArgs),
    /// Thread-aware metrics and clusters of a run, as a table or JSON.
    Report(commands::report::ReportArgs),
    /// Compare two runs (before and after a change): crt, threads and radar per artifact.
    Compare(commands::compare::CompareArgs),
    /// What a run file holds: command, threads, samples, sampling quality.
    Info(commands::info::InfoArgs),
    /// Profile the bundled Bug 1 sample and show its radars.
    Demo(commands::demo::DemoArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(commands::completions::CompletionsArgs),
    /// Open the overview and detail panels of a run in a browser (a server on 127.0.0.1).
    Serve(commands::serve::ServeArgs),
    /// Critical sections: every execution of lock-holding code, its variability and outliers.
    Sections(commands::sections::SectionsArgs),
    /// Write one ThreadRadar glyph as SVG or PNG.
    Radar(commands::radar::RadarArgs),
    /// Every thread's icicle on one time axis: a chart (SVG/PNG), the bars as JSON, or an overview.
    Timeline(commands::timeline::TimelineArgs),
    /// Who waited for whom: waited-on objects, their waiters and wakers, futile wake-ups, edges.
    Waits(commands::waits::WaitsArgs),
    /// One snapshot of every thread of a running Python program: stacks, waits, lock holders, deadlocks.
    Dump(commands::dump::DumpArgs),
    /// Export the panels of a run as a static HTML page for sharing.
    Html(commands::html::HtmlArgs),
    /// The language server (LSP over stdio): radars as inlay hints, code lenses and hovers.
    Lsp(commands::lsp::LspArgs),
    /// Write a run for another viewer: Firefox Profiler, Perfetto, speedscope, pprof, collapsed.
    Export(commands::export::ExportArgs),
    /// Make a run from another profiler's file: py-spy, austin, CPython, speedscope, perf script.
    Import(commands::import::ImportArgs),
    /// A Model Context Protocol server over stdio: the run's figures as tools for coding agents.
    Mcp(commands::mcp::McpArgs),
    /// Profile your tests: record `PYTHON -m pytest …` with the project's interpreter, keep the outcome.
    Test(commands::test::TestArgs),
    /// The run history: list, label, delete, pin and prune runs.
    Runs(commands::runs::RunsArgs),
    /// Why a recording would fail here: ptrace, perf events, a process's interpreter, config.
    Doctor(commands::doctor::DoctorArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let result = match cli.command {
        Command::Record(a) => commands::record::run(a),
        Command::Report(a) => commands::report::run(a),
        Command::Compare(a) => commands::compare::run(a),
        Command::Info(a) => commands::info::run(a),
        Command::Demo(a) => commands::demo::run(a),
        Command::Completions(a) => commands::completions::run::<Cli>(a),
        Command::Serve(a) => commands::serve::run(a),
        Command::Radar(a) => commands::radar::run(a),
        Command::Sections(a) => commands::sections::run(a),
        Command::Timeline(a) => commands::timeline::run(a),
        Command::Waits(a) => commands::waits::run(a),
        Command::Dump(a) => commands::dump::run(a),
        Command::Html(a) => commands::html::run(a),
        Command::Lsp(a) => commands::lsp::run(a),
        Command::Export(a) => commands::export::run(a),
        Command::Import(a) => commands::import::run(a),
        Command::Mcp(a) => commands::mcp::run(a),
        Command::Test(a) => commands::test::run(a),
        Command::Runs(a) => commands::runs::run(a),
        Command::Doctor(a) => commands::doctor::run(a),
    };
    match result {
        Ok(code) => code,
        // A reader that went away (`threadradar info | head`): stop quietly, like other Unix tools.
        Err(err)
            if err.chain().any(|e| {
                e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
                    // JSON written straight to stdout (`waits --json | head`) fails inside serde_json.
                    || e.downcast_ref::<serde_json::Error>().and_then(|j| j.io_error_kind()) == Some(std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(err) => {
            // One clear sentence (the error and its context), never a backtrace.
            eprintln!("threadradar: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("THREADRADAR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("threadradar={level},threadradar_profiler={level}")));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).without_time().try_init();
}
