//! `cairn eval`: search scored against golden queries.

use crate::cli::EvalArgs;
use crate::commands::{print_json, status};
use crate::output;
use cairn_search::Mode;
use std::process::ExitCode;

/// Scores each mode; exit 1 when hybrid recall@k is below `--min-recall`.
pub fn run(a: EvalArgs) -> anyhow::Result<ExitCode> {
    let engine = a.open.engine()?;
    let queries = cairn_search::eval::load(&a.golden)?;
    let modes: Vec<Mode> = match a.mode.is_empty() {
        true => vec![Mode::Hybrid, Mode::Bm25, Mode::Vector],
        false => a
            .mode
            .iter()
            .map(|m| {
                Mode::parse(m)
                    .ok_or_else(|| anyhow::anyhow!("--mode {m:?}: hybrid, bm25 or vector"))
            })
            .collect::<anyhow::Result<_>>()?,
    };
    let mut reports = Vec::new();
    for m in modes {
        reports.push(cairn_search::eval::evaluate(&engine, &queries, m, a.k)?);
    }
    if a.json {
        print_json(&reports)?;
    } else if a.markdown {
        print!(
            "{}",
            output::eval_markdown(&a.golden.display().to_string(), &reports)
        );
    } else {
        reports.iter().for_each(output::print_eval);
    }
    let gate = reports
        .iter()
        .find(|r| r.mode == Mode::Hybrid)
        .or(reports.first());
    let below = match (a.min_recall, gate) {
        (Some(min), Some(r)) => r.overall.recall_at_k < min,
        _ => false,
    };
    Ok(status(below))
}
