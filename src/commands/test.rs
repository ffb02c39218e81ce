//! `threadradar test [PYTEST ARGS…]`: records `PYTHON -m pytest …` with its subprocesses (so
//! pytest-xdist workers are sampled too), with the project's interpreter and configuration, and
//! stores the tests' outcome from pytest's JUnit XML report in the run. Exits with pytest's code.

use super::record::{self, RecordArgs};
use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use threadradar_lsp::history;
use threadradar_lsp::project::{self, ProjectConfig};
use threadradar_lsp::pytests;
use threadradar_profiler::run::{Interpreter, TestRun};
use threadradar_profiler::runfile;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  threadradar test tests/test_pool.py::TestPool::test_map\n  threadradar test -- -n 4 tests/\n  threadradar test --python .venv/bin/python -k slow\n\n\
The interpreter is --python, else [tool.threadradar] python (pyproject.toml or threadradar.toml),\n\
else .venv/bin/python, venv/bin/python, $VIRTUAL_ENV/bin/python, python3 on PATH.\nSee docs/testing.md."
)]
pub struct TestArgs {
    /// The Python interpreter that runs pytest (overrides the project's configuration).
    #[arg(long, value_name = "PYTHON")]
    pub python: Option<PathBuf>,

    /// The interpreter the editor has selected: used when the project configures none.
    #[arg(long, value_name = "PYTHON", hide = true)]
    pub selected_python: Option<PathBuf>,

    /// Where to write the run [default: the project's runs directory].
    #[arg(short, long, value_name = "RUN")]
    pub output: Option<PathBuf>,

    /// Milliseconds between samples [default: [tool.threadradar] interval-ms, else 3].
    #[arg(long, value_name = "MS")]
    pub interval_ms: Option<f64>,

    /// How the tests run, overriding [tool.threadradar] test-command: pytest, unittest, or a
    /// template as a JSON list of words, e.g. '["{python}", "-m", "pytest", "-x", "{tests}"]'.
    #[arg(long, value_name = "COMMAND")]
    pub test_command: Option<String>,

    /// Where runs go and are pruned [default: [tool.threadradar] runs-dir, else .threadradar/runs].
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,

    /// After the run, delete older runs without a label or pin, keeping N [default:
    /// [tool.threadradar] keep-runs, else every run is kept].
    #[arg(long, value_name = "N")]
    pub keep_runs: Option<usize>,

    /// Do not draw the progress line.
    #[arg(long)]
    pub no_progress: bool,

    /// Print a `threadradar: progress …` line every second (for editors).
    #[arg(long, hide = true)]
    pub progress_lines: bool,
    /// Run the test N times as one run set (the mean and spread of each figure, and whether a
    /// change is more than noise when compared); `-o` then names the set's manifest.
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,

    /// Arguments for pytest: test files, node ids (`file.py::Class::test`), options (after `--`
    /// when they start with `-`).
    #[arg(value_name = "PYTEST ARGS", trailing_var_arg = true, allow_hyphen_values = true)]
    pub pytest_args: Vec<String>,
}

pub fn run(args: TestArgs) -> anyhow::Result<ExitCode> {
    let root = std::env::current_dir().context("cannot read the current directory")?;
    // The command line's (the editor's) values over [tool.threadradar], key by key.
    let overrides = project::Overrides {
        test_command: args.test_command.as_deref().map(project::parse_test_command).transpose().map_err(anyhow::Error::msg)?,
        interval_ms: None, // --interval-ms is applied where the recording starts
        runs_dir: args.runs_dir.as_ref().map(|d| d.display().to_string()),
        keep_runs: match args.keep_runs {
            Some(0) => anyhow::bail!("--keep-runs must be at least 1 (leave it out to keep every run)"),
            k => k,
        },
    };
    if let Some(ms) = args.interval_ms.filter(|ms| !(ms.is_finite() && (0.05..=10_000.0).contains(ms))) {
        anyhow::bail!("--interval-ms must be between 0.05 and 10000 milliseconds (got {ms}); the default is [tool.threadradar] interval-ms, else 3");
    }
    let config = ProjectConfig::load(&root).map_err(anyhow::Error::msg)?.overridden(&overrides, &root);
    let python = project::resolve_python(&root, &config, args.python.as_deref(), args.selected_python.as_deref()).map_err(anyhow::Error::msg)?;
    // unittest when the project says so, or when pytest is missing and unittest can run the tests.
    let unittest = threadradar_lsp::unittests::wanted(config.test_command.as_deref())
        || match project::check_pytest(&python.path) {
            Ok(()) => false,
            Err(_) if threadradar_lsp::unittests::runnable(&root, &args.pytest_args) => true,
            Err(e) => anyhow::bail!(e),
        };

    let runs_dir = config.runs_dir(&root);
    let n = args.repeat.unwrap_or(1);
    if !(1..=1000).contains(&n) {
        anyhow::bail!("--repeat must be between 1 and 1000 (got {n}); 5 runs are usually enough to see the spread");
    }
    let output = match &args.output {
        Some(o) => o.clone(),
        None => {
            std::fs::create_dir_all(&runs_dir).with_context(|| format!("cannot create the runs directory {}", runs_dir.display()))?;
            runfile::new_run_path(&runs_dir, if n > 1 { "pytest.runset" } else { "pytest" }, std::time::SystemTime::now())
        }
    };
    let id = test_id(&args.pytest_args);
    let runner = if unittest { "unittest" } else { "pytest" };
    say!("threadradar: testing {id} with {} ({}) and {runner}", python.path.display(), python.source);
    if n == 1 {
        let (path, exit) = test_once(&args, &config, &python, unittest, &id, output)?;
        prune(&config, &runs_dir, &path);
        return Ok(exit);
    }
    // A run set: N runs beside the manifest, `<stem>-<i>.json`, as `record --repeat` writes them.
    let stem = output.to_string_lossy().trim_end_matches(".json").trim_end_matches(".runset").to_string();
    let mut runs = Vec::new();
    let mut exit = ExitCode::SUCCESS;
    for i in 1..=n {
        say!("threadradar: run {i} of {n}");
        let (path, e) = test_once(&args, &config, &python, unittest, &id, PathBuf::from(format!("{stem}-{i}.json")))?;
        runs.push(path);
        if e != ExitCode::SUCCESS {
            exit = e;
        }
        if record::stopped() {
            say!("threadradar: interrupted: the run set holds the {} run(s) recorded so far", runs.len());
            break;
        }
    }
    let command = vec!["pytest".to_string(), id.clone()];
    threadradar_profiler::runset::write(&output, &id, &command, &runs)?;
    say!("threadradar: run set of {} runs → {}", runs.len(), output.display());
    if let Some(last) = runs.last() {
        prune(&config, &runs_dir, last);
    }
    Ok(exit)
}

/// One recorded test run written to `output`, with its outcome; its path and exit code.
fn test_once(args: &TestArgs, config: &ProjectConfig, python: &project::Python, unittest: bool, id: &str, output: PathBuf) -> anyhow::Result<(PathBuf, ExitCode)> {
    let junit = std::env::temp_dir().join(format!(
        "threadradar-junit-{}-{}.xml",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
    ));
    let command = if unittest {
        threadradar_lsp::unittests::command(&python.path, &args.pytest_args, &junit)
    } else {
        pytests::pytest_command(&python.path, config.test_command.as_deref(), &args.pytest_args, &junit)
    };
    let runner = if unittest { "unittest" } else { "pytest" };
    let recorded = record::record(&RecordArgs {
        output: Some(output),
        interval_ms: args.interval_ms.or(config.interval_ms).unwrap_or(3.0),
        subprocesses: true,
        no_progress: args.no_progress,
        progress_lines: args.progress_lines,
        ..RecordArgs::launching(command)
    });
    let report = std::fs::read_to_string(&junit).ok();
    let _ = std::fs::remove_file(&junit);
    let mut rec = recorded?;
    let read_report = |r: &str| if unittest { threadradar_lsp::unittests::outcome(r) } else { pytests::junit_outcome(r) };
    let outcome = match report.as_deref().map(read_report) {
        Some(Ok(o)) => Some(o),
        Some(Err(e)) => {
            say!("threadradar: {e}");
            None
        }
        None => None,
    };
    // A cancelled or interrupted run has no outcome: its report (pytest writes one after a
    // Ctrl-C) counts only the tests that ended before the interrupt.
    let stopped_early = interrupted(&rec.run, unittest, outcome.as_ref());
    let outcome = if stopped_early { None } else { outcome };
    rec.run.meta.interpreter = Some(Interpreter { path: python.path.display().to_string(), source: python.source.clone() });
    rec.run.meta.test = Some(TestRun { id: id.to_string(), outcome: outcome.clone() });
    runfile::write(&rec.run, &rec.path).with_context(|| format!("cannot add the outcome to {}", rec.path.display()))?;
    record::summarize(&rec.run, &rec.path);
    match &outcome {
        Some(o) => {
            let first = o.first_failure.as_ref().map(|f| format!(" — first failure: {f}")).unwrap_or_default();
            say!("threadradar: outcome {}{first}", pytests::outcome_words(o));
        }
        None if stopped_early => say!("threadradar: outcome unknown: {runner} was interrupted before its tests ended ({})", how_pytest_ended(&rec.run)),
        None => say!("threadradar: outcome unknown: {runner} wrote no report ({})", how_pytest_ended(&rec.run)),
    }
    Ok((rec.path, rec.exit))
}

/// Whether a test run was stopped before its tests ended: the recording was cancelled (Ctrl-C,
/// the editor's stop), or pytest exited with 2, "interrupted", without an error in its report (a
/// collection error also exits with 2, and its report counts the error).
fn interrupted(run: &threadradar_profiler::Run, unittest: bool, outcome: Option<&threadradar_profiler::run::TestOutcome>) -> bool {
    use threadradar_profiler::run::EndReason;
    if record::stopped() || run.meta.end_reason == EndReason::Interrupted {
        return true;
    }
    !unittest && run.meta.exit_status.and_then(|s| s.code) == Some(2) && outcome.is_none_or(|o| o.errors == 0)
}

/// `keep-runs`: prunes the runs directory after a run written into it.
fn prune(config: &ProjectConfig, runs_dir: &Path, written: &Path) {
    if let Some(keep) = config.keep_runs {
        if written.parent() == Some(runs_dir) {
            match history::prune(runs_dir, keep) {
                Ok(gone) if !gone.is_empty() => {
                    say!("threadradar: pruned {} old runs (keep-runs = {keep}; labelled and pinned runs are kept)", gone.len())
                }
                Ok(_) => {}
                Err(e) => say!("threadradar: {e}"),
            }
        }
    }
}

/// The test a run is of: the node ids and paths among pytest's arguments, else `pytest`.
pub fn test_id(args: &[String]) -> String {
    let mut skip_next = false;
    let mut ids = Vec::new();
    for a in args {
        if skip_next {
            skip_next = false;
            continue;
        }
        if a == "--" {
            continue;
        }
        if a.starts_with('-') {
            // Options whose value is the next argument.
            skip_next = matches!(a.as_str(), "-k" | "-m" | "-n" | "-p" | "-c" | "-o" | "--numprocesses" | "--rootdir" | "--maxfail" | "--tb");
            continue;
        }
        ids.push(a.as_str());
    }
    if ids.is_empty() {
        "pytest".into()
    } else {
        ids.join(" ")
    }
}

fn how_pytest_ended(run: &threadradar_profiler::Run) -> String {
    match &run.meta.exit_status {
        Some(threadradar_profiler::run::ExitStatus { signal: Some(9), .. }) => "it was killed with SIGKILL".into(),
        Some(threadradar_profiler::run::ExitStatus { signal: Some(s), .. }) => format!("it was ended by signal {s}"),
        Some(threadradar_profiler::run::ExitStatus { code: Some(c), .. }) => format!("it exited with {c}"),
        _ => "it was stopped".into(),
    }
}
