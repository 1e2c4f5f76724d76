//! `cairn`: the command line. Parses arguments ([`cli`]), sets up logging,
//! and hands each subcommand to its file in [`commands`], which calls the
//! libraries and maps the result to an exit code (0 ok, 1 failure, 2 bad
//! input; see the README's table of codes).

mod cli;
mod commands;
mod output;
mod progress;

// candle allocates and frees large tensors on every op; glibc malloc returns
// them to the kernel each time (page faults, system time), mimalloc keeps them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    progress::init_tracing();
    match commands::run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            commands::report(&e);
            ExitCode::from(1)
        }
    }
}
