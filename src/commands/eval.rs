//! `cairn eval`: search scored against golden queries.

use crate::cli::EvalArgs;
use crate::commands::{print_json, status};
use crate::output;
use anyhow::Context;
use cairn_search::Mode;
use cairn_search::eval::EvalReport;
use cairn_search::rank::Prior;
use std::process::ExitCode;

/// Candidates per question written by `--features`: a reranker reorders these.
const FEATURE_DEPTH: usize = 30;

/// Scores each mode; exit 1 when hybrid recall@k is below `--min-recall`.
pub fn run(a: EvalArgs) -> anyhow::Result<ExitCode> {
    let mut engine = a.open.engine()?;
    if let Some(f) = &a.fusion {
        let shares = cairn_search::rank::FusionShares::parse(f).ok_or_else(|| {
            anyhow::anyhow!(
                "--fusion {f:?}: four non-negative numbers, bm25,vector,subchunk,identifier"
            )
        })?;
        engine.set_fusion(shares);
    }
    let off = a
        .without_prior
        .iter()
        .map(|name| {
            Prior::parse(name).ok_or_else(|| {
                let names: Vec<&str> = Prior::ALL.iter().map(|p| p.name()).collect();
                anyhow::anyhow!("--without-prior {name:?}: one of {}", names.join(", "))
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    engine.set_priors_off(off);
    if let Some(rows) = a.exact_below {
        engine.set_exact_below(rows);
    }
    if cairn_search::eval::is_error_file(&a.golden)? {
        return errors(&engine, &a);
    }
    let mut queries = cairn_search::eval::load(&a.golden)?;
    if let Some(path) = &a.rewrites {
        cairn_search::eval::load_rewrites(path, &mut queries)?;
    }
    if let Some(path) = &a.features {
        let rows = cairn_search::eval::candidate_features(&engine, &queries, FEATURE_DEPTH)?;
        let mut text = String::new();
        for r in &rows {
            text.push_str(&serde_json::to_string(r)?);
            text.push('\n');
        }
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
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
    let fell = match (&a.baseline, gate) {
        (Some(path), Some(r)) => fell_since(path, r, a.max_drop)?,
        _ => false,
    };
    let guard = a.fail_on_guard
        && reports
            .iter()
            .flat_map(|r| &r.outcomes)
            .any(|o| o.guard_failed);
    if guard {
        eprintln!("a guard question failed (see the misses)");
    }
    Ok(status(below || fell || guard))
}

/// Scores explain over a golden errors file; exit 1 when raise-site recall@1
/// is below `--min-recall`.
fn errors(engine: &cairn_search::Engine, a: &EvalArgs) -> anyhow::Result<ExitCode> {
    let errors = cairn_search::eval::load_errors(&a.golden)?;
    let r = cairn_search::eval::evaluate_errors(engine, &errors)?;
    if a.json {
        print_json(&r)?;
    } else {
        output::print_error_eval(&a.golden.display().to_string(), &r, a.markdown);
    }
    Ok(status(
        a.min_recall.is_some_and(|min| r.raise_recall_at_1 < min),
    ))
}

/// Compares `now` with the same mode's figures in a previous `--json`
/// report, printing both to stderr; true when either fell by more than `max_drop`.
fn fell_since(path: &std::path::Path, now: &EvalReport, max_drop: f64) -> anyhow::Result<bool> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("--baseline {}", path.display()))?;
    let before: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "--baseline {}: not a `cairn eval --json` report",
            path.display()
        )
    })?;
    let mode = serde_json::to_value(now.mode)?;
    let Some(old) = before
        .as_array()
        .and_then(|a| a.iter().find(|r| r["mode"] == mode))
    else {
        anyhow::bail!("--baseline {}: holds no {mode} report", path.display());
    };
    let mut fell = false;
    for (name, was, is) in [
        (
            "recall@k",
            old["overall"]["recall_at_k"].as_f64(),
            now.overall.recall_at_k,
        ),
        (
            "MRR@10",
            old["overall"]["mrr_at_10"].as_f64(),
            now.overall.mrr_at_10,
        ),
    ] {
        let Some(was) = was else {
            anyhow::bail!("--baseline {}: no {name}", path.display());
        };
        let drop = was - is;
        eprintln!("{name} {is:.3} (baseline {was:.3}, {:+.3})", is - was);
        if drop > max_drop + 1e-9 {
            eprintln!("{name} fell by {drop:.3}, more than --max-drop {max_drop}");
            fell = true;
        }
    }
    Ok(fell)
}
