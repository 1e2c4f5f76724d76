//! `cairn explain`: an error's raise sites, frames and explaining passages.

use crate::cli::ExplainArgs;
use crate::commands::answer;
use anyhow::Context;
use cairn_search::ExplainRequest;
use cairn_search::explain::MAX_TEXT_BYTES;
use std::io::Read;
use std::process::ExitCode;

/// Explains the text given, or stdin's.
pub fn run(a: ExplainArgs) -> anyhow::Result<ExitCode> {
    let text = match a.text.as_deref() {
        Some(t) if t != "-" => t.to_owned(),
        _ => {
            // One byte past the limit is enough to know it is too long.
            let mut bytes = Vec::new();
            std::io::stdin()
                .take(MAX_TEXT_BYTES as u64 + 1)
                .read_to_end(&mut bytes)
                .context("reading the error text from stdin")?;
            if bytes.len() > MAX_TEXT_BYTES {
                anyhow::bail!(
                    "stdin holds more than {MAX_TEXT_BYTES} bytes: paste the traceback's last part"
                );
            }
            String::from_utf8(bytes).map_err(|e| {
                anyhow::anyhow!(
                    "stdin is not UTF-8 text (invalid byte at offset {}): paste the error as text",
                    e.utf8_error().valid_up_to()
                )
            })?
        }
    };
    let engine = a.open.engine()?;
    let resp = engine.explain(&ExplainRequest {
        text,
        toolkit: a.toolkit,
        version: a.version,
        limit: a.limit,
        groups: None,
        deadline: None,
    });
    answer(resp, a.json)
}
