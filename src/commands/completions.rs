//! `threadradar completions SHELL`

use clap::{Args, CommandFactory};
use clap_complete::Shell;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to generate completions for.
    pub shell: Shell,
}

pub fn run<C: CommandFactory>(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = C::command();
    clap_complete::generate(args.shell, &mut cmd, "threadradar", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}
