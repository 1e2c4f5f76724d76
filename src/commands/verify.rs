//! `cairn verify`: every checksum, content hash and span of CURRENT rechecked.

use crate::cli::VerifyArgs;
use crate::commands::{print_json, status};
use anyhow::Context;
use cairn_index::IndexRoot;
use std::process::ExitCode;

/// Prints the report; exit 1 when it found a problem.
pub fn run(a: VerifyArgs) -> anyhow::Result<ExitCode> {
    let index = crate::cli::index_root(a.index.as_deref())?;
    let report = cairn_index::verify(&IndexRoot::new(&index))
        .with_context(|| format!("verifying {}", index.display()))?;
    if a.json {
        print_json(&report)?;
    } else {
        for p in &report.problems {
            println!("problem: {p}");
        }
        println!(
            "{} {}: {} files, {} docs, {} chunks checked, {} problems",
            if report.ok() { "ok" } else { "FAILED" },
            report.index_version.as_ref().map_or("?", |v| v.as_str()),
            report.files_checked,
            report.docs_checked,
            report.chunks_checked,
            report.problems.len()
        );
    }
    Ok(status(!report.ok()))
}
