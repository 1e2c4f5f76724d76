//! `cairn openapi`: the HTTP API's OpenAPI document.

use crate::cli::OpenapiArgs;
use crate::commands::print_json;
use std::process::ExitCode;

/// Prints the document.
pub fn run(a: OpenapiArgs) -> anyhow::Result<ExitCode> {
    print_json(&cairn_serve::http::openapi::document(
        a.public_url.as_deref(),
    ))?;
    Ok(ExitCode::SUCCESS)
}
