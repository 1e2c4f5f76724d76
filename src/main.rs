//! `cairn`: the command line. Parses arguments ([`cli`]), sets up logging,
//! and hands each subcommand to its file in [`commands`], which calls the
//! libraries and maps the result to an exit code (0 ok, 1 failure, 2 bad
//! input; see the table of codes in docs/API.md).

mod cli;
mod commands;
mod output;
mod progress;
mod setup;

// candle allocates and frees large tensors on every op; glibc malloc returns
// them to the kernel each time (page faults, system time), mimalloc keeps them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::FromArgMatches;
use std::process::ExitCode;

fn main() -> ExitCode {
    let matches = commands::command_line().get_matches();
    progress::init_tracing();
    let result = match matches.subcommand() {
        Some((name, flags)) if let Some(op) = commands::op::by_name(name) => {
            commands::op::run(op, flags)
        }
        _ => match cli::Cli::from_arg_matches(&matches) {
            Ok(cli) => commands::run(cli.command),
            Err(e) => e.exit(),
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            commands::report(&e);
            ExitCode::from(1)
        }
    }
}
