//! `cairn __pdf-text`: one PDF's pages read in a process of its own, for a
//! build (`pipeline::pdf` runs it under a memory cap and kills it at the
//! deadline). The PDF comes on stdin; the JSON answer goes to stdout.

use crate::cli::PdfTextArgs;
use cairn_pipeline::pdf::{PdfLimits, helper_answer};
use std::io::{Read, Write};
use std::process::ExitCode;

/// Reads stdin, answers on stdout.
pub fn run(a: PdfTextArgs) -> anyhow::Result<ExitCode> {
    let limits = PdfLimits {
        max_pages: a.max_pages,
        max_text_bytes: a.max_text_bytes,
        max_inflated_bytes: a.max_inflated_bytes,
        ..PdfLimits::default()
    };
    // The build sends only files within its own size limit.
    let mut bytes = Vec::new();
    std::io::stdin().read_to_end(&mut bytes)?;
    let mut out = std::io::stdout().lock();
    out.write_all(helper_answer(&bytes, &limits).as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
