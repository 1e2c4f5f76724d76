//! `cairn completions SHELL` and `cairn man`: generated from the same clap
//! types that parse the arguments, so they cannot drift from them.

use super::command_line;
use crate::cli::CompletionsArgs;
use std::process::ExitCode;

/// Prints the completion script for one shell.
pub fn completions(a: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = command_line();
    clap_complete::generate(a.shell, &mut cmd, "cairn", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

/// Prints the man page (its SUBCOMMANDS section lists each; `cairn help
/// SUBCOMMAND` has their options).
pub fn man() -> anyhow::Result<ExitCode> {
    clap_mangen::Man::new(command_line()).render(&mut std::io::stdout().lock())?;
    Ok(ExitCode::SUCCESS)
}
