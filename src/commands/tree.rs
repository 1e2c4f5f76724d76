//! `cairn tree`: the doc_id hierarchy.

use crate::cli::TreeArgs;
use crate::commands::answer;
use std::process::ExitCode;

/// Prints the tree under the prefix.
pub fn run(a: TreeArgs) -> anyhow::Result<ExitCode> {
    let engine = a.open.engine()?;
    answer(engine.tree(&a.prefix, a.depth, a.max_entries, None), a.json)
}
