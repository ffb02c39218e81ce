//! `threadradar runs [list|label|rm|pin|unpin|prune]`: the project's run history (the runs
//! directory, labels and pins in its index; see docs/testing.md).

use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use threadradar_lsp::history::{self, Index};
use threadradar_lsp::project::ProjectConfig;
use threadradar_lsp::pytests;
use threadradar_profiler::runfile;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  threadradar runs\n  threadradar runs label latest \"before the fix\"\n  threadradar runs pin 20261123T101500Z-pytest.json\n  threadradar runs prune --keep 10"
)]
pub struct RunsArgs {
    /// The runs directory [default: [tool.threadradar] runs-dir, else .threadradar/runs].
    #[arg(long, value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,

    #[command(subcommand)]
    pub action: Option<Action>,
}

#[derive(Subcommand, Debug, Clone)]
pub enum Action {
    /// The runs, newest first: date, test, outcome, duration, threads, label, pin.
    List {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Give a run a label (a labelled run is never pruned); without LABEL, remove it.
    Label { run: String, label: Option<String> },
    /// Delete runs.
    Rm {
        #[arg(required = true)]
        runs: Vec<String>,
    },
    /// Pin a run: it is never pruned.
    Pin { run: String },
    /// Unpin a run.
    Unpin { run: String },
    /// Delete the oldest runs beyond the newest N that have neither a label nor a pin.
    Prune {
        /// How many to keep [default: [tool.threadradar] keep-runs].
        #[arg(long, value_name = "N")]
        keep: Option<usize>,
    },
}

pub fn run(args: RunsArgs) -> anyhow::Result<ExitCode> {
    let root = std::env::current_dir()?;
    let config = ProjectConfig::load(&root).map_err(anyhow::Error::msg)?;
    let dir = args.dir.clone().unwrap_or_else(|| config.runs_dir(&root));
    let err = anyhow::Error::msg;
    match args.action.unwrap_or(Action::List { json: false }) {
        Action::List { json } => list(&dir, json)?,
        Action::Label { run, label } => {
            let path = history::find_run(&dir, &run).map_err(err)?;
            history::set_label(&dir, &path, label.as_deref()).map_err(err)?;
        }
        Action::Rm { runs } => {
            for r in runs {
                let path = history::find_run(&dir, &r).map_err(err)?;
                history::remove(&dir, &path).map_err(err)?;
                eprintln!("threadradar: deleted {}", path.display());
            }
        }
        Action::Pin { run } => history::set_pinned(&dir, &history::find_run(&dir, &run).map_err(err)?, true).map_err(err)?,
        Action::Unpin { run } => history::set_pinned(&dir, &history::find_run(&dir, &run).map_err(err)?, false).map_err(err)?,
        Action::Prune { keep } => {
            let keep = keep
                .or(config.keep_runs)
                .ok_or_else(|| anyhow::anyhow!("how many runs to keep? `threadradar runs prune --keep N`, or set [tool.threadradar] keep-runs"))?;
            let gone = history::prune(&dir, keep).map_err(err)?;
            eprintln!("threadradar: deleted {} runs, kept the newest {keep} and every labelled or pinned one", gone.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list(dir: &std::path::Path, json: bool) -> anyhow::Result<()> {
    let runs = match runfile::list_runs(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => anyhow::bail!("cannot list {}: {e}", dir.display()),
    };
    let index = Index::load(dir).map_err(anyhow::Error::msg)?;
    let mut out = std::io::stdout().lock();
    if json {
        let items: Vec<serde_json::Value> = runs
            .iter()
            .map(|p| {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let e = index.get(&name);
                let f = history::facts(p);
                serde_json::json!({
                    "path": p, "name": name, "label": e.label, "pinned": e.pinned,
                    "readable": f.is_some(),
                    "test": f.as_ref().and_then(|f| f.test.as_ref().map(|t| t.id.clone())),
                    "outcome": f.as_ref().and_then(|f| f.test.as_ref().and_then(|t| t.outcome.clone())),
                    "duration_s": f.as_ref().map(|f| f.duration_s),
                    "threads": f.as_ref().map(|f| f.threads),
                    "start_unix_ms": f.as_ref().map(|f| f.start_unix_ms),
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&items)?)?;
        return Ok(());
    }
    if runs.is_empty() {
        writeln!(out, "no runs in {}: record one with `threadradar test` or `threadradar record -- python3 app.py`", dir.display())?;
        return Ok(());
    }
    for p in &runs {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let e = index.get(&name);
        let what = match history::facts(p) {
            None => match threadradar_profiler::runset::read(p) {
                Ok(Some(set)) => format!("run set of {} runs: {}  (its spread: threadradar report {})", set.runs.len(), set.label, p.display()),
                _ => "(not readable as a run)".to_string(),
            },
            Some(f) => {
                let program = match &f.test {
                    Some(t) => format!("{}: {}", t.id, t.outcome.as_ref().map_or("outcome unknown".into(), pytests::outcome_words)),
                    None => f.command.join(" "),
                };
                format!("{program}  {:.1} s  {} threads{}", f.duration_s, f.threads, if f.partial { "  (partial)" } else { "" })
            }
        };
        let label = e.label.map(|l| format!("  \"{l}\"")).unwrap_or_default();
        let pin = if e.pinned { "  [pinned]" } else { "" };
        let date = history::facts(p).filter(|f| f.start_unix_ms > 0).map(|f| format!("  {}", date(f.start_unix_ms))).unwrap_or_default();
        writeln!(out, "{name}{date}  {what}{label}{pin}")?;
    }
    Ok(())
}

/// When a run started, for the list: `2026-11-23 15:01 UTC` (a run written with `-o` has no time
/// in its name).
fn date(start_unix_ms: u64) -> String {
    let s = runfile::utc_stamp(std::time::UNIX_EPOCH + std::time::Duration::from_millis(start_unix_ms));
    format!("{}-{}-{} {}:{} UTC", &s[0..4], &s[4..6], &s[6..8], &s[9..11], &s[11..13])
}
