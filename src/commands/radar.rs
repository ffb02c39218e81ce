//! `threadradar radar RUN --artifact NAME -o FILE.svg|FILE.png`: one ThreadRadar as a file.

use anyhow::bail;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use threadradar_analysis::glyph::Theme;
use threadradar_analysis::panel::{self, GlyphRequest, Params};
use threadradar_analysis::{Analysis, Options};
use threadradar_profiler::runfile;

#[derive(Args, Debug)]
pub struct RadarArgs {
    /// A run file, or a directory of runs (its newest run is used).
    pub run: PathBuf,

    /// The artifact: a qualified name (`Worker.run`, `Worker`), an artifact key as the panels
    /// show it, or `program`.
    #[arg(long, value_name = "QUALNAME|program")]
    pub artifact: String,

    /// Output file; `.svg` or `.png`.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,

    /// Height in px (the width is 1.75 × the height).
    #[arg(long, default_value_t = 128, value_name = "PX")]
    pub size: u32,

    #[arg(long, value_enum, default_value_t = Theme::Light)]
    pub theme: Theme,

    #[command(flatten)]
    pub units: super::runpath::UnitsArg,
}


pub fn run(args: RadarArgs) -> anyhow::Result<ExitCode> {
    let ext = args.output.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let png = match ext.as_deref() {
        Some("svg") => false,
        Some("png") => true,
        _ => bail!("{} must end in .svg or .png", args.output.display()),
    };
    if !(8..=4096).contains(&args.size) {
        bail!("--size {} is out of range: pass 8 to 4096 px", args.size);
    }
    let path = super::runpath::resolve_run_path(Some(&args.run))?;
    let run = runfile::read(&path)?;
    let run = args.units.apply(run)?;
    let analysis = Analysis::new(&run, &Options::default())?;
    let key = panel::find(&run, &analysis, &args.artifact)?;
    let theme = args.theme;
    let svg = panel::glyph(&run, &GlyphRequest { artifact: key, params: Params::default(), theme, size: Some(args.size), interactive: false })?;
    let bytes = if png { threadradar_lsp::raster::png(&svg, args.size)? } else { svg.into_bytes() };
    super::outfile::write_atomic(&args.output, &bytes)?;
    println!("wrote {}", args.output.display());
    Ok(ExitCode::SUCCESS)
}
