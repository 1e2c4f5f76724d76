//! `cairn watch`: keeps an index fresh by polling each remote's ref and
//! running the ordinary build when one moves (`cairn_pipeline::watch`).

use super::build::{failed, options};
use crate::cli::WatchArgs;
use crate::progress;
use cairn_pipeline::watch::{WatchOptions, watch};
use std::process::ExitCode;
use std::time::Duration;

/// Polls and builds until stopped (or `--polls` runs out); a repositories.yml
/// that cannot be read ends it with the build's exit code.
pub fn run(a: WatchArgs) -> anyhow::Result<ExitCode> {
    let mut build = options(a.inputs);
    build.keep_going = true;
    let opts = WatchOptions {
        build,
        every: Duration::from_secs(a.every.max(1)),
        polls: a.polls,
    };
    match watch(&opts, &progress::TermReporter::new()) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => Ok(failed(e)),
    }
}
