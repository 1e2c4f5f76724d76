//! `cairn tree`: the doc_id hierarchy.

use crate::cli::TreeArgs;
use crate::commands::{print_json, search_failed};
use std::process::ExitCode;

/// Prints the tree under the prefix.
pub fn run(a: TreeArgs) -> anyhow::Result<ExitCode> {
    let engine = a.open.engine()?;
    match engine.tree(&a.prefix, a.depth, a.max_entries, None) {
        Ok(t) if a.json => print_json(&t)?,
        Ok(t) => print!("{t}"),
        Err(e) => return Ok(search_failed(&e)),
    }
    Ok(ExitCode::SUCCESS)
}
