//! The operations' subcommands, generated from the server's table of
//! operations (those whose `meta.cli` names one): each takes
//! the operation's own arguments as flags, plus where the index is and
//! `--json`, and runs the same code the HTTP API and MCP run, for the local
//! user (who sees every document).

use crate::cli::{LlmArgs, OpenArgs};
use cairn_serve::llm::LlmClient;
use cairn_serve::ops::{Call, OPERATIONS, Operation};
use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches};
use std::process::ExitCode;
use std::sync::Arc;

/// The operations the CLI offers.
pub fn offered() -> impl Iterator<Item = &'static Operation> {
    OPERATIONS.iter().filter(|op| op.meta.cli.is_some())
}

/// The operation a subcommand name runs, when it names one.
pub fn by_name(name: &str) -> Option<&'static Operation> {
    offered().find(|op| op.meta.cli == Some(name))
}

/// The subcommand of `op`: its arguments, the index flags and `--json`.
pub fn command(op: &Operation) -> clap::Command {
    let about = op.meta.routes.first().map_or("", |r| r.summary);
    let cmd = clap::Command::new(op.meta.cli.unwrap_or_default());
    let cmd = match op.meta.model {
        true => LlmArgs::augment_args(cmd),
        false => cmd,
    };
    // The argument groups bring their own doc comments as about: set ours last.
    OpenArgs::augment_args((op.flags)(cmd))
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("Print the API's JSON"),
        )
        .about(about)
        .long_about(op.meta.description)
}

/// Runs `op` with its subcommand's parsed flags and prints the answer (the
/// API's JSON with `--json`, else its text), or the error with its code's
/// exit status.
pub fn run(op: &Operation, flags: &ArgMatches) -> anyhow::Result<ExitCode> {
    let open = OpenArgs::from_arg_matches(flags)?;
    let json = flags.get_flag("json");
    let mut call = Call::local(Arc::new(open.engine()?));
    call.text = !json;
    if op.meta.model {
        let llm = LlmArgs::from_arg_matches(flags)?.config()?;
        call = call.with_model(llm.map(|c| Arc::new(LlmClient::new(c))));
    }
    match op.run_local(flags, &call) {
        Ok(answer) if json => super::print_json(&answer.value)?,
        Ok(answer) => {
            // Matches in bold on a terminal (not under NO_COLOR); plain text in a pipe.
            let styled = std::io::IsTerminal::is_terminal(&std::io::stdout())
                && std::env::var_os("NO_COLOR").is_none();
            let query = flags
                .try_get_one::<String>("query")
                .ok()
                .flatten()
                .filter(|_| styled);
            match query {
                Some(q) => super::print_out(&crate::output::bold_matches(&answer.text, q))?,
                None => super::print_out(&answer.text)?,
            }
        }
        Err(e) => {
            match &e.field {
                Some(field) => eprintln!("error [{}]: {field}: {}", e.code, e.detail),
                None => eprintln!("error [{}]: {}", e.code, e.detail),
            }
            return Ok(ExitCode::from(e.code.exit_code()));
        }
    }
    Ok(ExitCode::SUCCESS)
}
