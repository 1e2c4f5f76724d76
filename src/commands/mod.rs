//! One file per subcommand: each turns its `cli` arguments into one library
//! call and prints the answer. Flag names live only here and in `cli`: a
//! library error that a flag would fix gets that flag added by [`hint`].

mod build;
mod eval;
mod mcp;
mod openapi;
mod pack;
mod retrieve;
mod search;
mod serve;
mod token;
mod tree;
mod unpack;
mod verify;

use crate::cli::Command;
use std::process::ExitCode;

/// Runs one subcommand.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Build(a) => build::run(a),
        Command::Pack(a) => pack::run(a),
        Command::Unpack(a) => unpack::run(a),
        Command::Search(a) => search::run(a),
        Command::Retrieve(a) => retrieve::run(a),
        Command::Tree(a) => tree::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Mcp(a) => mcp::run(a),
        Command::Token(a) => token::run(a),
        Command::Openapi(a) => openapi::run(a),
        Command::Verify(a) => verify::run(a),
    }
}

/// `error` with the flag that fixes it, when one does.
pub fn hint<E>(error: E) -> anyhow::Error
where
    E: std::error::Error + Send + Sync + 'static,
{
    use cairn_embed::EmbedError;
    use cairn_serve::config::ServeError;
    let error = anyhow::Error::new(error);
    let flag = error.chain().find_map(|e| {
        if let Some(e) = e.downcast_ref::<EmbedError>() {
            return match e {
                EmbedError::NotFound { .. } => Some("--model-dir DIR (or CAIRN_MODEL_DIR)"),
                EmbedError::Device(_) => Some("--device cpu"),
                _ => None,
            };
        }
        match e.downcast_ref::<ServeError>() {
            Some(ServeError::OpenOffLoopback(_)) => Some("--no-auth is for a loopback --bind only"),
            _ => None,
        }
    });
    match flag {
        Some(flag) => anyhow::anyhow!("{error:#} (hint: {flag})"),
        None => error,
    }
}

/// A failed search call: `error [code]: message`, and the code's exit status.
pub fn search_failed(e: &cairn_search::SearchError) -> ExitCode {
    eprintln!("error [{}]: {e}", e.code());
    ExitCode::from(e.code().exit_code())
}

/// Prints `value` as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// Exit status 1 when `failed`, else 0.
pub fn status(failed: bool) -> ExitCode {
    ExitCode::from(u8::from(failed))
}
