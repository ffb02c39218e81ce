//! `threadradar lsp`: the language server over stdio. Everything lives in `threadradar_lsp`.

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct LspArgs {
    /// Talk over stdin/stdout (the default and only transport; accepted because clients pass it).
    #[arg(long)]
    pub stdio: bool,
}

pub fn run(_args: LspArgs) -> anyhow::Result<ExitCode> {
    threadradar_lsp::run_stdio()?;
    Ok(ExitCode::SUCCESS)
}
