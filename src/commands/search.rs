//! `cairn search`: ranked citations for a question.

use crate::cli::SearchArgs;
use crate::commands::answer;
use cairn_search::{Filters, Mode, SearchRequest};
use std::process::ExitCode;

/// Searches and prints the hits.
pub fn run(a: SearchArgs) -> anyhow::Result<ExitCode> {
    let mode = Mode::parse(&a.mode)
        .ok_or_else(|| anyhow::anyhow!("--mode must be hybrid, bm25 or vector"))?;
    let engine = a.open.engine()?;
    let resp = engine.search(&SearchRequest {
        query: a.query,
        rephrasings: a.also,
        limit: a.limit,
        filters: Filters {
            repo: a.repo,
            category: a.category,
            toolkit: a.toolkit,
            doctype: a.doctype,
            path_prefix: a.path_prefix,
            refs: a.refs,
        },
        threshold: a.threshold,
        mode,
        groups: None,
        deadline: None,
    });
    answer(resp, a.json)
}
