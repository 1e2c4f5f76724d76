//! The ranking a search runs, one call per stage: [`Ranker::lists`] (the
//! candidate lists of one phrasing, per scope: BM25, chunk and subchunk
//! vectors, identifiers, each with its share of the fusion), [`fuse`]
//! (reciprocal rank fusion, `fusion.rs`) and [`Ranker::weigh`] (each fused
//! candidate times its priors, best first). What a hit is made of after that
//! (its span, focus and snippet) is the search call's (`crate::passages`).

use super::{
    Bm25Tables, Fused, FusionShares, Prior, Priors, RankedList, ScopeCache, ScopedStats, Source,
    VectorSearch, bm25, brevity, chunk_cosines, form_prior, identifier_lists, mentioned_toolkits,
    question_form, subchunk_cosines, top, uses_ann, vector_lists,
};
use crate::error::SearchError;
use crate::filters::{Filters, Mode};
use crate::runtime_weights::RuntimeWeights;
use cairn_index::Snapshot;
use std::sync::Arc;

/// Candidates each list contributes before fusion.
const CANDIDATES: usize = 200;
/// The dense evidence is split evenly between chunk vectors and subchunk
/// vectors (a subchunk votes for the chunk it overlaps most), so hybrid keeps
/// its balance between BM25 and meaning. Measured on both question sets: the
/// split gains on each (see docs/QUALITY.md), adding subchunks on top of the
/// chunk list at full share loses.
const SUBCHUNK_SHARE: f32 = 0.5;

/// What ranking reads: an opened version and the engine's settings.
pub(crate) struct Ranker<'a> {
    /// The version.
    pub snap: &'a Snapshot,
    /// What caller-scoped BM25 statistics read.
    pub bm25: &'a Bm25Tables,
    /// The masks and counts of recent callers.
    pub scopes: &'a ScopeCache,
    /// When the approximate index is used.
    pub vector_search: &'a VectorSearch,
    /// How much each kind of list counts.
    pub fusion: &'a FusionShares,
    /// Priors that count 1.
    pub priors_off: &'a [Prior],
    /// The runtime weights.
    pub runtime_weights: &'a RuntimeWeights,
}

/// One phrasing to rank, and for whom.
#[derive(Clone, Copy)]
pub(crate) struct Ask<'a> {
    /// The phrasing.
    pub query: &'a str,
    /// Its embedding (hybrid and vector modes).
    pub qvec: Option<&'a [f32]>,
    /// The mode the search runs in.
    pub mode: Mode,
    /// The caller's filters.
    pub filters: &'a Filters,
    /// The caller's access groups (None: sees everything).
    pub groups: Option<&'a [String]>,
}

impl Ranker<'_> {
    /// The ranked candidate lists of one phrasing (BM25, vector and
    /// identifier matches, per scope), before weights and merging.
    pub(crate) fn lists(&self, ask: &Ask<'_>) -> Result<Vec<RankedList>, SearchError> {
        let Ask {
            query,
            qvec,
            mode,
            filters,
            groups,
        } = *ask;
        let allowed = self.scopes.allowed(self.snap, filters, groups);
        // Every statistic a score depends on comes from what the caller may see.
        let visible = self.scopes.visible(self.snap, self.bm25, groups);
        let stats = ScopedStats::new(self.snap, self.bm25, &visible);
        let (mentioned, bm25_text) = mentioned_toolkits(self.snap, query, groups);
        // A toolkit the query names (and no explicit filter) gets its own candidate
        // lists at full share; the unrestricted lists still count, at half, so
        // questions that span packages keep their other half.
        let mut scopes: Vec<(Arc<Vec<bool>>, f32)> = Vec::new();
        if filters.toolkit.is_empty() && !mentioned.is_empty() {
            let narrowed = Filters {
                toolkit: mentioned.clone(),
                ..filters.clone()
            };
            scopes.push((self.scopes.allowed(self.snap, &narrowed, groups), 1.0));
            scopes.push((Arc::clone(&allowed), 0.5));
        } else {
            scopes.push((Arc::clone(&allowed), 1.0));
        }
        // A caller who may search many rows of a version with an approximate
        // index reads its lists (each scope on its own, with its own filter);
        // otherwise every scope is within `allowed`: score each vector once
        // exactly, rank per scope.
        let approximate = uses_ann(self.snap, &allowed, self.vector_search);
        let dense = match (qvec, approximate) {
            (Some(q), false) => Some((
                chunk_cosines(self.snap, q, &allowed),
                subchunk_cosines(self.snap, q, &allowed),
            )),
            _ => None,
        };
        // Each list kind is made for every scope in one pass (the postings
        // and the approximate index's lists are read once).
        let masks: Vec<&[bool]> = scopes.iter().map(|(m, _)| m.as_slice()).collect();
        let mut bm25_lists = match mode {
            Mode::Vector => Vec::new(),
            _ => bm25(self.snap, &stats, &bm25_text, &masks, CANDIDATES)?,
        }
        .into_iter();
        let mut vector_lists = match (&dense, qvec) {
            (Some((chunk_cos, subchunk_cos)), _) => masks
                .iter()
                .map(|m| {
                    (
                        top(chunk_cos, m, CANDIDATES),
                        top(subchunk_cos, m, CANDIDATES),
                    )
                })
                .collect(),
            (None, Some(q)) => {
                vector_lists(self.snap, q, &masks, CANDIDATES, groups, self.vector_search)
            }
            _ => Vec::new(),
        }
        .into_iter();
        let mut lists = Vec::new();
        for (_, share) in &scopes {
            if let Some(hits) = bm25_lists.next() {
                lists.push(RankedList {
                    source: Source::Bm25,
                    share: *share,
                    hits,
                });
            }
            if let Some((by_chunk, by_subchunk)) = vector_lists.next() {
                lists.push(RankedList {
                    source: Source::Vector,
                    share: *share * (1.0 - SUBCHUNK_SHARE),
                    hits: by_chunk,
                });
                lists.push(RankedList {
                    source: Source::Subchunk,
                    share: *share * SUBCHUNK_SHARE,
                    hits: by_subchunk,
                });
            }
        }
        if mode != Mode::Vector {
            lists.extend(identifier_lists(self.snap, &stats, query, &allowed, 20)?);
        }
        for l in &mut lists {
            l.share *= self.fusion.of(l.source);
        }
        Ok(lists)
    }

    /// Each fused candidate's score times its priors (path and runtime
    /// weights, the question's form, brevity), best first; ties by chunk.
    pub(crate) fn weigh<'f>(
        &self,
        fused: &'f [Fused],
        query: &str,
        toolkit: &[String],
        now: i64,
    ) -> Vec<(f32, Priors, &'f Fused)> {
        let form = question_form(query);
        let mut scored: Vec<(f32, Priors, &Fused)> = fused
            .iter()
            .map(|f| {
                let chunk = &self.snap.chunks[f.chunk as usize];
                let doc = &self.snap.docs[chunk.doc as usize];
                let priors = Priors {
                    path: self.snap.path_weights.for_path(&doc.path),
                    form: form_prior(form, doc.doctype),
                    brevity: brevity(chunk.tokens),
                    runtime: self
                        .runtime_weights
                        .multiplier(doc.doc_id.as_str(), toolkit, now),
                }
                .without(self.priors_off);
                (f.rrf * priors.product(), priors, f)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.chunk.cmp(&b.2.chunk)));
        scored
    }
}
