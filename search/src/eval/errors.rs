//! The error golden files (`golden/errors*.yaml`): each pasted error and the
//! raise site and passages that explain it, and how `explain` does on them.

use super::{Relevant, read_golden, relevant_hit};
use crate::engine::Engine;
use crate::error::SearchError;
use crate::explain::RaiseSite;
use cairn_index::LineSpan;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One golden error: real text and where it is raised and explained.
#[derive(Clone, Debug, Deserialize)]
pub struct GoldenError {
    /// Unique slug.
    pub id: String,
    /// The text's shape (`python-traceback`, `notebook-traceback`, `python-warning` …).
    #[serde(default)]
    pub kind: String,
    /// The package that failed (not passed to explain: a user rarely says).
    #[serde(default)]
    pub toolkit: String,
    /// The error text, verbatim.
    pub text: String,
    /// The statements that raise it.
    pub raise_sites: Vec<Relevant>,
    /// Passages that explain it (may be empty: then only the raise site is scored).
    #[serde(default)]
    pub explains: Vec<Relevant>,
}

/// Whether a golden file holds errors (entries with `text`) rather than queries.
pub fn is_error_file(path: &Path) -> Result<bool, SearchError> {
    let probe: Vec<serde_json::Value> = read_golden(path)?;
    Ok(probe.first().is_some_and(|v| v.get("text").is_some()))
}

/// Reads a golden errors file.
pub fn load_errors(path: &Path) -> Result<Vec<GoldenError>, SearchError> {
    read_golden(path)
}

/// One error's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorOutcome {
    /// Error id.
    pub id: String,
    /// Its shape.
    pub kind: String,
    /// Rank (1-based) of the first correct raise site.
    pub raise_rank: Option<usize>,
    /// Rank (1-based) of the first explaining passage among the explains; None when none in the top 5 or none expected.
    pub explain_rank: Option<usize>,
    /// Whether explaining passages were expected.
    pub explain_expected: bool,
    /// The raise sites answered, as `doc_id:start-end`.
    pub sites: Vec<String>,
    /// The explaining passages answered (top 5).
    pub explains: Vec<String>,
    /// Milliseconds the call took.
    pub ms: f64,
    /// Rank of the first correct raise site when only the last line (`Class: message`) is pasted.
    pub message_only_rank: Option<usize>,
}

/// The errors evaluation report.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorReport {
    /// Errors.
    pub errors: usize,
    /// Share whose first raise site is correct.
    pub raise_recall_at_1: f64,
    /// Share with a correct raise site in the first three.
    pub raise_recall_at_3: f64,
    /// The same with only `Class: message` pasted (no frames to go by).
    pub message_only_recall_at_1: f64,
    /// Over errors with expected explanations: share with one in the top 5.
    pub explain_recall_at_5: f64,
    /// Errors with expected explanations.
    pub explain_scored: usize,
    /// Median milliseconds per explain call (each error explained once, after one warm-up).
    pub p50_ms: f64,
    /// 95th percentile milliseconds.
    pub p95_ms: f64,
    /// Errors missed on either measure.
    pub misses: Vec<ErrorOutcome>,
    /// Every error.
    pub outcomes: Vec<ErrorOutcome>,
}

/// Explains each golden error (no toolkit given, as a user pasting it would)
/// and scores its raise sites and explaining passages.
pub fn evaluate_errors(
    engine: &Engine,
    errors: &[GoldenError],
) -> Result<ErrorReport, SearchError> {
    if let Some(first) = errors.first() {
        // The first call pays for the query model's first use; time what follows.
        engine.explain(&request(&first.text))?;
    }
    let mut outcomes = Vec::new();
    for e in errors {
        outcomes.push(error_outcome(engine, e)?);
    }
    Ok(report(outcomes))
}

/// The explain call a user pasting `text` sends.
fn request(text: &str) -> crate::ExplainRequest {
    crate::ExplainRequest {
        text: text.to_owned(),
        ..Default::default()
    }
}

/// The lines `start..=end`.
fn span(start: u32, end: u32) -> LineSpan {
    LineSpan { start, end }
}

/// Rank (1-based) of the first of `sites` that is one of `relevant`.
fn first_site_rank(sites: &[RaiseSite], relevant: &[Relevant]) -> Option<usize> {
    sites
        .iter()
        .position(|s| {
            relevant_hit(relevant, &s.at.doc_id, span(s.at.start_line, s.at.end_line)).is_some()
        })
        .map(|i| i + 1)
}

/// `e` explained (timed) in full and from its last line alone, both answers scored.
fn error_outcome(engine: &Engine, e: &GoldenError) -> Result<ErrorOutcome, SearchError> {
    let started = std::time::Instant::now();
    let r = engine.explain(&request(&e.text))?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let raise_rank = first_site_rank(&r.raise_sites, &e.raise_sites);
    let parsed = crate::explain::parse(&e.text);
    let line = match parsed.exception.as_deref() {
        Some(c) => format!("{c}: {}", parsed.message),
        None => parsed.message.clone(),
    };
    let message_only_rank = first_site_rank(
        &engine
            .explain(&crate::ExplainRequest {
                text: line,
                ..Default::default()
            })?
            .raise_sites,
        &e.raise_sites,
    );
    let explain_rank = r
        .explains
        .iter()
        .take(5)
        .position(|h| {
            relevant_hit(&e.explains, &h.doc_id, span(h.start_line, h.end_line)).is_some()
        })
        .map(|i| i + 1);
    Ok(ErrorOutcome {
        id: e.id.clone(),
        kind: e.kind.clone(),
        raise_rank,
        explain_rank,
        explain_expected: !e.explains.is_empty(),
        sites: r
            .raise_sites
            .iter()
            .map(|s| format!("{}:{}-{}", s.at.doc_id, s.at.start_line, s.at.end_line))
            .collect(),
        explains: r
            .explains
            .iter()
            .take(5)
            .map(|h| format!("{}:{}-{}", h.doc_id, h.start_line, h.end_line))
            .collect(),
        ms,
        message_only_rank,
    })
}

/// The shares, latency percentiles and misses of every error's outcome.
fn report(outcomes: Vec<ErrorOutcome>) -> ErrorReport {
    let share = |f: &dyn Fn(&ErrorOutcome) -> bool, of: &[&ErrorOutcome]| {
        of.iter().filter(|o| f(o)).count() as f64 / of.len().max(1) as f64
    };
    let all: Vec<&ErrorOutcome> = outcomes.iter().collect();
    let scored: Vec<&ErrorOutcome> = outcomes.iter().filter(|o| o.explain_expected).collect();
    let mut ms: Vec<f64> = outcomes.iter().map(|o| o.ms).collect();
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        ms.get(((ms.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let misses = outcomes
        .iter()
        .filter(|o| {
            o.raise_rank != Some(1)
                || o.message_only_rank != Some(1)
                || (o.explain_expected && o.explain_rank.is_none())
        })
        .cloned()
        .collect();
    ErrorReport {
        errors: outcomes.len(),
        raise_recall_at_1: share(&|o| o.raise_rank == Some(1), &all),
        raise_recall_at_3: share(&|o| o.raise_rank.is_some_and(|r| r <= 3), &all),
        message_only_recall_at_1: share(&|o| o.message_only_rank == Some(1), &all),
        explain_recall_at_5: share(&|o| o.explain_rank.is_some(), &scored),
        explain_scored: scored.len(),
        p50_ms: pct(0.5),
        p95_ms: pct(0.95),
        misses,
        outcomes,
    }
}
