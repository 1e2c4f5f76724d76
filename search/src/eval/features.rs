//! The features of each candidate a search considered, labelled by the
//! golden answers: what `scripts/fit-ranker.py` learns from.

use super::{GoldenQuery, rank_in, relevant_hit};
use crate::engine::Engine;
use crate::error::SearchError;
use crate::filters::Mode;
use cairn_index::LineSpan;
use serde::Serialize;
use std::collections::BTreeMap;

/// One candidate of a golden question and what a learned ranker may weigh
/// (`cairn eval --features`, read by `scripts/fit-ranker.py`).
#[derive(Clone, Debug, Serialize)]
pub struct CandidateFeatures {
    /// The question's id.
    pub id: String,
    /// The question's kind.
    pub kind: String,
    /// The candidate's rank as searched (1-based).
    pub rank: usize,
    /// Whether it counts as a hit of the question (doc and overlapping span).
    pub relevant: bool,
    /// Named features, each a plain number.
    pub features: BTreeMap<&'static str, f32>,
}

/// Each question's first `depth` hybrid candidates with their features:
/// the fusion's parts, each list's rank of the candidate, its priors, its
/// doctype and shape, and how the question's words meet its title, path
/// and lines.
pub fn candidate_features(
    engine: &Engine,
    queries: &[GoldenQuery],
    depth: usize,
) -> Result<Vec<CandidateFeatures>, SearchError> {
    let mut out = Vec::new();
    for q in queries.iter().filter(|q| q.kind != "guard") {
        let (resp, lists) = engine.search_explained(&q.request(Mode::Hybrid, depth))?;
        let words = crate::passages::focus_words(&q.query);
        let share = |text: &str| {
            let text = text.to_lowercase();
            let found = words.iter().filter(|w| text.contains(w.as_str())).count();
            found as f32 / words.len().max(1) as f32
        };
        let lower = q.query.to_lowercase();
        let form = |p: &str| f32::from(u8::from(lower.starts_with(p)));
        let mut docs_above: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, h) in resp.hits.iter().enumerate() {
            let span = LineSpan {
                start: h.start_line,
                end: h.end_line,
            };
            let mut f: BTreeMap<&'static str, f32> = BTreeMap::new();
            f.insert("rrf", h.breakdown.rrf * 60.0);
            f.insert("bm25", h.breakdown.bm25.max(0.0).ln_1p());
            f.insert("cosine", h.breakdown.vector);
            f.insert("prior_path", h.breakdown.priors.path);
            f.insert("prior_form", h.breakdown.priors.form);
            f.insert("prior_brevity", h.breakdown.priors.brevity);
            for (name, source) in [
                ("rr_bm25", crate::rank::Source::Bm25),
                ("rr_vector", crate::rank::Source::Vector),
                ("rr_subchunk", crate::rank::Source::Subchunk),
                ("rr_identifier", crate::rank::Source::Identifier),
            ] {
                // The best rank, in any list of this source, of a chunk of
                // the hit's document overlapping its span.
                let best = lists
                    .iter()
                    .filter(|l| l.source == source)
                    .filter_map(|l| {
                        rank_in(engine, l, |doc_id, s| {
                            doc_id == h.doc_id && s.overlaps(&span)
                        })
                    })
                    .min();
                f.insert(name, best.map_or(0.0, |r| 10.0 / (10.0 + r as f32)));
            }
            f.insert("lines", (span.len() as f32).ln());
            let path = h.doc_id.splitn(3, '/').nth(2).unwrap_or_default();
            f.insert("depth", path.matches('/').count() as f32);
            for (key, doctype) in [
                ("doctype_code", "code"),
                ("doctype_doc", "doc"),
                ("doctype_notebook", "notebook"),
                ("doctype_readme", "readme"),
                ("doctype_paper", "paper"),
            ] {
                f.insert(key, f32::from(u8::from(h.doctype.as_str() == doctype)));
            }
            f.insert("test_path", f32::from(u8::from(path.contains("test"))));
            f.insert("title_words", share(&h.title));
            f.insert("path_words", share(path));
            f.insert("snippet_words", share(&h.snippet));
            f.insert("defines", h.defines.len().min(3) as f32);
            let above = docs_above.entry(h.doc_id.as_str()).or_default();
            f.insert("same_doc_above", (*above).min(3) as f32);
            *above += 1;
            f.insert("q_how", form("how"));
            f.insert("q_what", form("what"));
            f.insert("q_why", form("why"));
            f.insert("q_error", f32::from(u8::from(q.query.contains("Error"))));
            f.insert("q_words", (q.query.split_whitespace().count() as f32).ln());
            out.push(CandidateFeatures {
                id: q.id.clone(),
                kind: q.kind.clone(),
                rank: i + 1,
                relevant: relevant_hit(&q.relevant, &h.doc_id, span).is_some(),
                features: f,
            });
        }
    }
    Ok(out)
}
