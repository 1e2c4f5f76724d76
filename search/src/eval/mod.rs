//! `cairn eval`: recall@k, MRR@10 and nDCG@10 over golden queries; over
//! golden errors (`golden/errors.yaml`), raise-site recall@1/@3, explain
//! recall@5 and explain's latency.
//!
//! A hit counts when its doc_id equals a relevant doc_id and its line span
//! overlaps the relevant span (no span: the whole file).

mod errors;
mod features;

pub use errors::{
    ErrorOutcome, ErrorReport, GoldenError, evaluate_errors, is_error_file, load_errors,
};
pub use features::{CandidateFeatures, candidate_features};

use crate::engine::Engine;
use crate::error::SearchError;
use crate::filters::{Filters, Mode};
use crate::passages::{Hit, SearchRequest};
use crate::rank::RankedList;
use cairn_index::LineSpan;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One golden query.
#[derive(Clone, Debug, Deserialize)]
pub struct GoldenQuery {
    /// Unique slug.
    pub id: String,
    /// What the user types.
    pub query: String,
    /// Filters, as a search takes them (each one value or a list).
    #[serde(default)]
    pub filters: Filters,
    /// Acceptable answers, best first.
    pub relevant: Vec<Relevant>,
    /// Question kind.
    #[serde(default)]
    pub kind: String,
    /// doc_id prefixes that must never be the first hit (guards).
    #[serde(default)]
    pub never_first: Vec<String>,
    /// Other phrasings a calling model would add (`queries` of a search),
    /// fused with `query`: from a rewrites file (see [`load_rewrites`]).
    #[serde(default, alias = "rephrasings")]
    pub queries: Vec<String>,
}

impl GoldenQuery {
    /// The search a trusted caller sends for it: `limit` hits in `mode`.
    fn request(&self, mode: Mode, limit: usize) -> SearchRequest {
        SearchRequest {
            query: self.query.clone(),
            queries: self.queries.clone(),
            limit,
            filters: self.filters.clone(),
            threshold: None,
            mode,
            groups: None,
            deadline: crate::Deadline::none(),
        }
    }
}

/// Reads a rewrites file (`id: [phrasing, …]`, written by a model that saw
/// only the questions) into the queries it names.
pub fn load_rewrites(path: &Path, queries: &mut [GoldenQuery]) -> Result<usize, SearchError> {
    let mut map: BTreeMap<String, Vec<String>> = read_golden(path)?;
    let mut used = 0;
    for q in queries.iter_mut() {
        if let Some(r) = map.remove(&q.id) {
            q.queries = r.into_iter().take(crate::MAX_QUERIES).collect();
            used += 1;
        }
    }
    match map.keys().next() {
        Some(id) => Err(crate::error::invalid(
            "rewrites",
            format!("{}: no question {id:?}", path.display()),
        )),
        None => Ok(used),
    }
}

/// An acceptable answer.
#[derive(Clone, Debug, Deserialize)]
pub struct Relevant {
    /// The document.
    pub doc_id: String,
    /// `[start, end]`, or the whole file.
    #[serde(default)]
    pub lines: Option<[u32; 2]>,
}

/// Reads a golden file.
pub fn load(path: &Path) -> Result<Vec<GoldenQuery>, SearchError> {
    read_golden(path)
}

/// A golden file's YAML as `T`, its errors naming the file.
fn read_golden<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, SearchError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::error::invalid("golden", format!("{}: {e}", path.display())))?;
    serde_saphyr::from_str(&text)
        .map_err(|e| crate::error::invalid("golden", format!("{}: {e}", path.display())))
}

/// Metrics over a set of queries.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Metrics {
    /// Queries.
    pub queries: usize,
    /// Share with a relevant hit in the top k.
    pub recall_at_k: f64,
    /// Mean reciprocal rank of the first relevant hit in the top 10.
    pub mrr_at_10: f64,
    /// nDCG@10 with binary relevance.
    pub ndcg_at_10: f64,
    /// Share with a relevant hit in the top k whose cited lines (its focus,
    /// or its span when it has none) are at most [`PRECISE_LINES`] and overlap
    /// the answer: pointed at the right lines, not only the right region.
    pub precise_recall_at_k: f64,
    /// Share with the right document in the top k, whatever its lines: the
    /// bar `recall_at_k` (the right lines) is measured against.
    pub doc_recall_at_k: f64,
    /// Share with a hit in the top k whose cited lines (its focus, or its
    /// span), however many, overlap the answer.
    pub focus_recall_at_k: f64,
    /// Median lines of a top-k hit's span, over every top-k hit.
    pub median_hit_lines: f64,
    /// Median lines a top-k hit cites (its focus, or its span).
    pub median_cited_lines: f64,
}

/// One question's figures, before they are averaged.
#[derive(Clone, Debug, Default)]
struct Row {
    kind: String,
    recall: f64,
    rr: f64,
    ndcg: f64,
    precise: f64,
    doc: f64,
    focus: f64,
    /// Each top-k hit's span and cited lines.
    lines: Vec<(u32, u32)>,
}

/// The median of `values` (0 for none).
fn median(mut values: Vec<u32>) -> f64 {
    values.sort_unstable();
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => f64::from(values[n / 2]),
        n => (f64::from(values[n / 2 - 1]) + f64::from(values[n / 2])) / 2.0,
    }
}

impl Metrics {
    /// The figures of `rows`, averaged.
    fn of(rows: &[&Row]) -> Self {
        let n = rows.len().max(1) as f64;
        let mean = |f: fn(&Row) -> f64| rows.iter().map(|r| f(r)).sum::<f64>() / n;
        let lines = |f: fn(&(u32, u32)) -> u32| {
            median(rows.iter().flat_map(|r| r.lines.iter().map(f)).collect())
        };
        Metrics {
            queries: rows.len(),
            recall_at_k: mean(|r| r.recall),
            mrr_at_10: mean(|r| r.rr),
            ndcg_at_10: mean(|r| r.ndcg),
            precise_recall_at_k: mean(|r| r.precise),
            doc_recall_at_k: mean(|r| r.doc),
            focus_recall_at_k: mean(|r| r.focus),
            median_hit_lines: lines(|l| l.0),
            median_cited_lines: lines(|l| l.1),
        }
    }
}

/// The most lines a precise citation may have.
pub const PRECISE_LINES: u32 = 30;

/// One query's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct QueryOutcome {
    /// Query id.
    pub id: String,
    /// Kind.
    pub kind: String,
    /// Rank (1-based) of the first relevant hit in the top 10.
    pub first_relevant: Option<usize>,
    /// Top hits as `doc_id:start-end`.
    pub top: Vec<String>,
    /// The lines each of them cites (its focus, or its span) as `start-end`.
    pub cited: Vec<String>,
    /// A guard was broken (a `never_first` doc came first, or a hit left the filters).
    pub guard_failed: bool,
    /// Where the best relevant chunk stood in each candidate list before fusion
    /// (`bm25×1.0 #12`): why a miss missed.
    pub lists: Vec<String>,
}

/// The evaluation report.
#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    /// Mode evaluated.
    pub mode: Mode,
    /// k of recall@k.
    pub k: usize,
    /// All queries.
    pub overall: Metrics,
    /// By kind.
    pub by_kind: BTreeMap<String, Metrics>,
    /// Queries whose top k held no relevant hit, or that broke a guard.
    pub misses: Vec<QueryOutcome>,
    /// Every query.
    pub outcomes: Vec<QueryOutcome>,
}

fn relevant_hit(rel: &[Relevant], doc_id: &str, span: LineSpan) -> Option<usize> {
    rel.iter().position(|r| {
        r.doc_id == doc_id
            && r.lines
                .is_none_or(|[s, e]| span.overlaps(&LineSpan { start: s, end: e }))
    })
}

/// The 0-based rank in `list` of its first chunk of which `wanted(doc_id, span)` holds.
fn rank_in(
    engine: &Engine,
    list: &RankedList,
    wanted: impl Fn(&str, LineSpan) -> bool,
) -> Option<usize> {
    let snap = engine.snapshot();
    list.hits.iter().position(|(c, _)| {
        let chunk = &snap.chunks[*c as usize];
        wanted(snap.docs[chunk.doc as usize].doc_id.as_str(), chunk.span)
    })
}

/// For each candidate list, the rank of its first chunk that overlaps a relevant span.
fn list_ranks(engine: &Engine, lists: &[RankedList], relevant: &[Relevant]) -> Vec<String> {
    lists
        .iter()
        .map(|l| {
            let rank = rank_in(engine, l, |doc_id, span| {
                relevant_hit(relevant, doc_id, span).is_some()
            });
            format!(
                "{:?}×{} {}",
                l.source,
                l.share,
                rank.map_or("-".to_owned(), |r| format!("#{}", r + 1))
            )
        })
        .collect()
}

/// Runs every query in `mode` and scores it.
pub fn evaluate(
    engine: &Engine,
    queries: &[GoldenQuery],
    mode: Mode,
    k: usize,
) -> Result<EvalReport, SearchError> {
    let mut outcomes = Vec::new();
    let mut per: Vec<Row> = Vec::new();
    for q in queries {
        let answer = ask(engine, q, mode, k)?;
        let scored = score(q, &answer.hits, k);
        per.push(scored.row);
        outcomes.push(QueryOutcome {
            id: q.id.clone(),
            kind: q.kind.clone(),
            first_relevant: scored.first,
            top: scored.top,
            cited: scored.cited,
            guard_failed: guard_failed(q, &answer.hits),
            lists: list_ranks(engine, &answer.lists, &q.relevant),
        });
    }
    Ok(report(mode, k, &per, outcomes))
}

/// What a golden query got back: its hits and the candidate lists before fusion.
struct Answer {
    hits: Vec<Hit>,
    lists: Vec<RankedList>,
}

/// `q`'s search in `mode`, enough hits for recall@k and the top-10 figures.
fn ask(engine: &Engine, q: &GoldenQuery, mode: Mode, k: usize) -> Result<Answer, SearchError> {
    // A question whose filters this index cannot meet (a toolkit it
    // lacks) is a miss, not the end of the evaluation.
    match engine.search_explained(&q.request(mode, k.max(10))) {
        Ok((resp, lists)) => Ok(Answer {
            hits: resp.hits,
            lists,
        }),
        Err(SearchError::Invalid { field, .. }) if Filters::FIELDS.contains(&field) => Ok(Answer {
            hits: Vec::new(),
            lists: Vec::new(),
        }),
        Err(e) => Err(e),
    }
}

/// One query's figures and what its outcome reports of its hits.
struct Scored {
    row: Row,
    /// Rank (1-based) of the first relevant hit in the top 10.
    first: Option<usize>,
    /// The top k hits as `doc_id:start-end`.
    top: Vec<String>,
    /// The lines each top-k hit cites, as `start-end`.
    cited: Vec<String>,
}

/// Scores `q`'s top 10 `hits` against its relevant answers.
fn score(q: &GoldenQuery, hits: &[Hit], k: usize) -> Scored {
    let mut matched = vec![false; q.relevant.len()];
    let mut first = None;
    let mut dcg = 0.0;
    let mut top = Vec::new();
    let mut precise = false;
    let (mut doc, mut focus, mut lines) = (false, false, Vec::new());
    let mut cited_lines = Vec::new();
    for (rank, h) in hits.iter().take(10).enumerate() {
        let span = LineSpan {
            start: h.start_line,
            end: h.end_line,
        };
        let cited = match (h.focus_start, h.focus_end) {
            (Some(start), Some(end)) => LineSpan { start, end },
            _ => span,
        };
        if rank < k {
            cited_lines.push(format!("{}-{}", cited.start, cited.end));
            let on_cited = relevant_hit(&q.relevant, &h.doc_id, cited).is_some();
            precise |= cited.len() <= PRECISE_LINES && on_cited;
            focus |= on_cited;
            doc |= q.relevant.iter().any(|r| r.doc_id == h.doc_id);
            lines.push((span.len(), cited.len()));
        }
        top.push(format!("{}:{}-{}", h.doc_id, h.start_line, h.end_line));
        if let Some(i) = relevant_hit(&q.relevant, &h.doc_id, span) {
            first.get_or_insert(rank + 1);
            if !matched[i] {
                matched[i] = true;
                dcg += 1.0 / ((rank + 2) as f64).log2();
            }
        }
    }
    let ideal: f64 = (0..q.relevant.len().min(10))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let recall = if first.is_some_and(|r| r <= k) {
        1.0
    } else {
        0.0
    };
    let rr = first.map_or(0.0, |r| 1.0 / r as f64);
    let one = |b: bool| if b { 1.0 } else { 0.0 };
    Scored {
        row: Row {
            kind: q.kind.clone(),
            recall,
            rr,
            ndcg: if ideal > 0.0 { dcg / ideal } else { 0.0 },
            precise: one(precise),
            doc: one(doc),
            focus: one(focus),
            lines,
        },
        first,
        top: top.into_iter().take(k).collect(),
        cited: cited_lines,
    }
}

/// Whether `hits` broke a guard of `q`: a hit outside its filters, or a `never_first` doc first.
fn guard_failed(q: &GoldenQuery, hits: &[Hit]) -> bool {
    let filters = &q.filters;
    let leaked = hits.iter().any(|h| {
        (!filters.toolkit.is_empty() && !filters.toolkit.contains(&h.toolkit))
            || (!filters.doctype.is_empty()
                && !filters.doctype.iter().any(|d| d == h.doctype.as_str()))
    });
    leaked
        || hits.first().is_some_and(|h| {
            q.never_first
                .iter()
                .any(|p| h.doc_id.starts_with(p.as_str()))
        })
}

/// The report of every query's figures (averaged overall and by kind) and outcome.
fn report(mode: Mode, k: usize, per: &[Row], outcomes: Vec<QueryOutcome>) -> EvalReport {
    // Guards check behaviour (filters, never-first); they stay out of the ranking figures.
    let all: Vec<&Row> = per.iter().filter(|p| p.kind != "guard").collect();
    let mut by_kind = BTreeMap::new();
    for kind in per
        .iter()
        .map(|p| p.kind.clone())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let rows: Vec<&Row> = per.iter().filter(|p| p.kind == kind).collect();
        by_kind.insert(kind, Metrics::of(&rows));
    }
    let misses = outcomes
        .iter()
        .filter(|o| o.guard_failed || o.first_relevant.is_none_or(|r| r > k))
        .cloned()
        .collect();
    EvalReport {
        mode,
        k,
        overall: Metrics::of(&all),
        by_kind,
        misses,
        outcomes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The shipped errors files load: unique ids, text, a raise site each, valid spans.
    #[test]
    fn shipped_golden_errors_are_well_formed() {
        for (file, at_least) in [("errors.yaml", 25), ("errors-fresh.yaml", 5)] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../golden")
                .join(file);
            assert!(is_error_file(&path).expect("read"), "{file}");
            let errors = load_errors(&path).expect(file);
            assert!(errors.len() >= at_least, "{file}: {} errors", errors.len());
            let mut ids = BTreeSet::new();
            for e in &errors {
                assert!(ids.insert(e.id.clone()), "{file}: duplicate id {}", e.id);
                assert!(
                    !e.text.trim().is_empty() && e.text.len() <= crate::explain::MAX_TEXT_BYTES,
                    "{}",
                    e.id
                );
                assert!(!e.raise_sites.is_empty(), "{} has no raise site", e.id);
                for r in e.raise_sites.iter().chain(&e.explains) {
                    assert!(cairn_index::DocId::parse(&r.doc_id).is_ok(), "{}", r.doc_id);
                    assert!(r.lines.is_some_and(|[s, e]| 1 <= s && s <= e), "{}", e.id);
                }
            }
        }
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden/queries.yaml");
        assert!(!is_error_file(&path).expect("read"));
    }

    /// Both question sets shipped in `golden/` load, with unique ids, valid
    /// doc ids and spans, so `cairn eval` on them cannot fail on the file.
    #[test]
    fn shipped_golden_files_are_well_formed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden");
        for (file, at_least) in [
            ("queries.yaml", 25),
            ("heldout.yaml", 24),
            ("random.yaml", 100),
            ("users.yaml", 40),
        ] {
            let queries = load(&root.join(file)).expect(file);
            assert!(
                queries.len() >= at_least,
                "{file}: {} queries",
                queries.len()
            );
            let mut ids = BTreeSet::new();
            for q in &queries {
                assert!(ids.insert(q.id.clone()), "{file}: duplicate id {}", q.id);
                assert!(!q.query.trim().is_empty(), "{file}: {} has no query", q.id);
                assert!(!q.relevant.is_empty(), "{file}: {} has no answer", q.id);
                for r in &q.relevant {
                    assert!(cairn_index::DocId::parse(&r.doc_id).is_ok(), "{}", r.doc_id);
                    if let Some([start, end]) = r.lines {
                        assert!(1 <= start && start <= end, "{}: {start}-{end}", q.id);
                    }
                }
            }
        }
    }
}
