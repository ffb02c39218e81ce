//! `threadradar html RUN -o DIR`: the overview and detail panels as one self-contained HTML file
//! (`DIR/index.html`) for sharing. The answers the page needs for the run as recorded (the
//! overview, the threads, the detail of every listed artifact) are embedded; a request the export
//! does not hold (another thread selection, filter or theme) is answered with a sentence saying so.

use anyhow::Context;
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use threadradar_analysis::panel::{ArtifactKey, DetailRequest, OverviewRequest, Panels, Params, ThreadsRequest};
use threadradar_profiler::runfile;

#[derive(Args, Debug)]
pub struct HtmlArgs {
    /// A run file, or a directory of runs (its newest run is used).
    pub run: PathBuf,

    /// The directory to write `index.html` into (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,

    #[command(flatten)]
    pub units: super::runpath::UnitsArg,
}

pub fn run(args: HtmlArgs) -> anyhow::Result<ExitCode> {
    let path = super::runpath::resolve_run_path(Some(&args.run))?;
    let run = runfile::read(&path)?;
    let run = args.units.apply(run)?;
    let panels = Panels::new(run);
    let overview = panels.overview(&OverviewRequest::default())?;
    let mut answers: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    // Keys as the page's static transport builds them: method, space, canonical JSON of the
    // parameters that differ from the defaults (see web/transport.js `normalise`).
    let mut keys: Vec<ArtifactKey> = vec![ArtifactKey::program()];
    keys.extend(overview.functions.iter().chain(&overview.classes).map(|a| a.key.clone()));
    for key in keys {
        let req = DetailRequest {
            artifact: key.clone(),
            params: Params::default(),
            theme: Default::default(),
            size: None,
            histogram_width: None,
            histogram_height: None,
            histogram_columns: None,
        };
        let detail = panels.detail(&req)?;
        answers.insert(format!("detail {{\"artifact\":{}}}", serde_json::to_string(&key)?), serde_json::to_value(&detail)?);
    }
    answers.insert("threads {}".into(), serde_json::to_value(panels.threads(&ThreadsRequest::default())?)?);
    answers.insert("overview {}".into(), serde_json::to_value(&overview)?);
    let data = serde_json::json!({
        "run_name": path.file_name().map(|n| n.to_string_lossy().into_owned()),
        "answers": answers,
    });
    let html = super::serve::page(&super::serve::nonce(), &data.to_string());
    std::fs::create_dir_all(&args.output).with_context(|| format!("cannot create {}", args.output.display()))?;
    let out = args.output.join("index.html");
    super::outfile::write_atomic(&out, html.as_bytes())?;
    println!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}
