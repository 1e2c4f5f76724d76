//! `cairn retrieve`: exact lines of a document.

use crate::cli::RetrieveArgs;
use crate::commands::{print_json, search_failed};
use crate::output;
use std::process::ExitCode;

/// Prints the lines with their links.
pub fn run(a: RetrieveArgs) -> anyhow::Result<ExitCode> {
    let (start, end) = output::parse_lines(&a.lines)?;
    let engine = a.open.engine()?;
    match engine.retrieve(&a.doc_id, start, end, None) {
        Ok(r) if a.json => print_json(&r)?,
        Ok(r) => print!("{r}"),
        Err(e) => return Ok(search_failed(&e)),
    }
    Ok(ExitCode::SUCCESS)
}
