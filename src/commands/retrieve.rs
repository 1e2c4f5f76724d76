//! `cairn retrieve`: lines of a document (a notebook's cells unless `--raw`).

use crate::cli::RetrieveArgs;
use crate::commands::answer;
use crate::output;
use cairn_search::SpanRequest;
use std::process::ExitCode;

/// Prints the lines with their links.
pub fn run(a: RetrieveArgs) -> anyhow::Result<ExitCode> {
    let (start, end) = output::parse_lines(&a.lines)?;
    let engine = a.open.engine()?;
    answer(
        engine.retrieve(&SpanRequest::lines(a.doc_id, start, end).raw(a.raw), None),
        a.json,
    )
}
