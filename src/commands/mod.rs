//! One file per subcommand: each turns its `cli` arguments into one library
//! call and prints the answer. Flag names live only here and in `cli`: a
//! library error that a flag would fix gets that flag named by [`flag_hint`].

mod adapt;
mod build;
mod completions;
mod doctor;
mod eval;
mod mcp;
pub mod op;
mod openapi;
mod pack;
mod pdf_text;
mod pull;
mod serve;
mod setup;
mod token;
mod unpack;
mod verify;
mod watch;

use crate::cli::Command;
use std::process::ExitCode;

/// The whole command line: `cli::Cli`'s subcommands and one per operation
/// the CLI offers (from the server's table, [`op`]). Parsing, completions
/// and the man page all use it.
pub fn command_line() -> clap::Command {
    use clap::CommandFactory;
    op::offered().fold(crate::cli::Cli::command(), |cmd, o| {
        cmd.subcommand(op::command(o))
    })
}

/// The agent skill, `skills/cairn/SKILL.md`, as `cairn skill` prints it.
pub const SKILL: &str = include_str!("../../skills/cairn/SKILL.md");

/// Runs one subcommand.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Build(a) => build::run(a),
        Command::Watch(a) => watch::run(a),
        Command::Adapt(a) => adapt::run(a),
        Command::Pack(a) => pack::run(a),
        Command::Unpack(a) => unpack::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Serve(a) => serve::run(*a),
        Command::Mcp(a) => mcp::run(a),
        Command::Token(a) => token::run(a),
        Command::Openapi(a) => openapi::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Pull(a) => pull::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Completions(a) => completions::completions(a),
        Command::Man => completions::man(),
        Command::Skill => {
            print!("{}", SKILL);
            Ok(ExitCode::SUCCESS)
        }
        Command::Setup(a) => setup::run(a),
        Command::PdfText(a) => pdf_text::run(a),
    }
}

/// The flag that fixes `error` (or an error it wraps), when one does: the
/// libraries describe what went wrong, only the CLI knows its flags.
pub fn flag_hint(error: &(dyn std::error::Error + 'static)) -> Option<&'static str> {
    use cairn_embed::EmbedError;
    use cairn_serve::config::ServeError;
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(e) = e.downcast_ref::<EmbedError>() {
            match e {
                EmbedError::NotFound { .. } => return Some("--model-dir DIR (or CAIRN_MODEL_DIR)"),
                EmbedError::Device(_) => return Some("--device cpu"),
                _ => {}
            }
        }
        if let Some(ServeError::OpenOffLoopback(_)) = e.downcast_ref::<ServeError>() {
            return Some("--no-auth is for a loopback --bind only");
        }
        next = e.source();
    }
    None
}

/// Prints a failed command's error (its whole chain), and the flag that fixes it, if any.
pub fn report(error: &anyhow::Error) {
    say(&format!("{error:#}"), error.chain().find_map(flag_hint));
}

/// Prints a library error whose message already names its causes, and the flag that fixes it.
pub fn report_error(error: &(dyn std::error::Error + 'static)) {
    say(&error.to_string(), flag_hint(error));
}

fn say(message: &str, flag: Option<&str>) {
    eprintln!("error: {message}");
    if let Some(flag) = flag {
        eprintln!("hint: {flag}");
    }
}

/// Prints `value` as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    print_out(&(serde_json::to_string_pretty(value)? + "\n"))
}

/// Writes `text` to stdout; a reader that went away (`| head`) ends the
/// output quietly, as it does for other Unix tools, instead of a panic.
pub fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Exit status 1 when `failed`, else 0.
pub fn status(failed: bool) -> ExitCode {
    ExitCode::from(u8::from(failed))
}
