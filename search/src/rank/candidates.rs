//! Candidate lists: BM25 over the fielded chunk index (terms in every field
//! with its boost, word pairs in the body), chunks that define an identifier
//! the query names, and exact cosines over chunk and subchunk vectors.

use super::fusion::{RankedList, Source};
use super::query::QueryWords;
use super::stats::ScopedStats;
use cairn_index::Snapshot;
use cairn_index::schema::ChunkSchema;
use std::collections::BTreeSet;
use std::sync::Arc;
use tantivy::Term;
use tantivy::collector::{FilterCollector, TopDocs};
use tantivy::query::{BooleanQuery, BoostQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::IndexRecordOption;

/// Field boosts for BM25: a match in a definition name or title says more
/// than one in the body; one in the neighbouring chunks' text says less.
const BOOSTS: [(&str, f32); 5] = [
    ("body", 1.0),
    ("title", 2.0),
    ("symbols", 2.5),
    ("path", 1.5),
    ("context", 0.3),
];

/// Weight of a pair of the query's words found together in a body (see [`QueryWords::pairs`]).
const PAIR_BOOST: f32 = 0.7;
/// How many words may stand between a pair's two words (1: "log of prob" still counts).
const PAIR_SLOP: u32 = 1;

/// Top `k` BM25 chunks among the allowed ones, best first.
pub fn bm25(
    snap: &Snapshot,
    stats: &ScopedStats<'_>,
    query: &str,
    allowed: &Arc<Vec<bool>>,
    k: usize,
) -> tantivy::Result<Vec<(u32, f32)>> {
    match bm25_query(&snap.schema, query) {
        Some(q) => run(stats, &q, allowed, k),
        None => Ok(Vec::new()),
    }
}

/// The BM25 query for `query` (`None` when it has no evidence words): each
/// term in every field with its boost, plus the query's word pairs in the body.
pub fn bm25_query(s: &ChunkSchema, query: &str) -> Option<BooleanQuery> {
    let QueryWords { terms, pairs } = QueryWords::new(query);
    if terms.is_empty() {
        return None;
    }
    let fields = [s.body, s.title, s.symbols, s.path, s.context];
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for term in &terms {
        for (field, (_, boost)) in fields.iter().zip(BOOSTS) {
            let q = TermQuery::new(
                Term::from_field_text(*field, term),
                IndexRecordOption::WithFreqs,
            );
            clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
        }
    }
    for [a, b] in pairs {
        let q = PhraseQuery::new_with_offset_and_slop(
            vec![
                (0, Term::from_field_text(s.body, &a)),
                (1, Term::from_field_text(s.body, &b)),
            ],
            PAIR_SLOP,
        );
        clauses.push((
            Occur::Should,
            Box::new(BoostQuery::new(Box::new(q), PAIR_BOOST)),
        ));
    }
    Some(BooleanQuery::new(clauses))
}

/// For each identifier the query names exactly (`fit_model`, `ModelParameters`),
/// a list of the chunks that define it, weighing 1/√(documents
/// defining it among its first `k` definitions). A name defined once points at its definition; a name every
/// tutorial defines (`log_prob`) says little about which one is meant.
pub fn identifier_lists(
    snap: &Snapshot,
    stats: &ScopedStats<'_>,
    query: &str,
    allowed: &Arc<Vec<bool>>,
    k: usize,
) -> tantivy::Result<Vec<RankedList>> {
    let mut idents: Vec<String> = Vec::new();
    for word in query
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map(|w| w.trim_matches('.'))
        .filter(|w| is_identifier(w))
    {
        let word = word.to_lowercase();
        let last = word.rsplit('.').next().unwrap_or(&word).to_owned();
        if !idents.contains(&last) {
            idents.push(last);
        }
    }
    let mut out = Vec::with_capacity(idents.len());
    for ident in &idents {
        let q = TermQuery::new(
            Term::from_field_text(snap.schema.symbols, ident),
            IndexRecordOption::Basic,
        );
        let hits = run(stats, &q, allowed, k)?;
        if hits.is_empty() {
            continue;
        }
        let docs: BTreeSet<u32> = hits
            .iter()
            .map(|(c, _)| snap.chunks[*c as usize].doc)
            .collect();
        out.push(RankedList {
            source: Source::Identifier,
            share: 1.0 / (docs.len() as f32).sqrt(),
            hits,
        });
    }
    Ok(out)
}

/// Looks like code rather than a word: snake_case, camelCase, dotted, or CapWords.
fn is_identifier(w: &str) -> bool {
    let inner_upper =
        w.chars().skip(1).any(char::is_uppercase) && w.chars().any(char::is_lowercase);
    w.len() > 2 && (w.contains('_') || w.contains('.') || inner_upper)
}

/// Top `k` allowed chunks for `query`, scored with the caller's `stats`.
fn run(
    stats: &ScopedStats<'_>,
    query: &dyn Query,
    allowed: &Arc<Vec<bool>>,
    k: usize,
) -> tantivy::Result<Vec<(u32, f32)>> {
    let mask = Arc::clone(allowed);
    let collector = FilterCollector::new(
        "chunk".to_owned(),
        move |ord: u64| mask.get(ord as usize).copied().unwrap_or(false),
        TopDocs::with_limit(k),
    );
    let top = stats
        .searcher
        .search_with_statistics_provider(query, &collector, stats)?;
    let mut out = Vec::with_capacity(top.len());
    for (score, addr) in top {
        if let Some(ord) = stats.tables.chunk(addr.segment_ord as usize, addr.doc_id) {
            out.push((ord, score));
        }
    }
    // Deterministic order: score, then chunk ordinal (doc order, then line).
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(out)
}

/// Each chunk's cosine with `query` (a unit vector); `-inf` where not allowed.
/// Computed once per search and ranked under each scope by [`top`].
pub fn chunk_cosines(snap: &Snapshot, query: &[f32], allowed: &[bool]) -> Vec<f32> {
    let dim = snap.vectors.dim();
    let all = snap.vectors.as_slice();
    allowed
        .iter()
        .enumerate()
        .map(|(i, &ok)| {
            if ok {
                dot(&all[i * dim..(i + 1) * dim], query)
            } else {
                f32::NEG_INFINITY
            }
        })
        .collect()
}

/// Each chunk's best subchunk cosine with `query`; `-inf` where not allowed.
pub fn subchunk_cosines(snap: &Snapshot, query: &[f32], allowed: &[bool]) -> Vec<f32> {
    let dim = snap.subchunk_vectors.dim();
    let all = snap.subchunk_vectors.as_slice();
    let mut best = vec![f32::NEG_INFINITY; allowed.len()];
    for (i, s) in snap.subchunks.iter().enumerate() {
        let c = s.chunk as usize;
        if allowed.get(c).copied().unwrap_or(false) {
            best[c] = best[c].max(dot(&all[i * dim..(i + 1) * dim], query));
        }
    }
    best
}

/// The `k` best allowed chunks by `scores` (one per chunk), best first; ties
/// go to the lower chunk.
pub fn top(scores: &[f32], allowed: &[bool], k: usize) -> Vec<(u32, f32)> {
    let mut scored: Vec<(u32, f32)> = scores
        .iter()
        .zip(allowed)
        .enumerate()
        .filter(|(_, (s, ok))| **ok && s.is_finite())
        .map(|(c, (s, _))| (c as u32, *s))
        .collect();
    let cmp = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if scored.len() > k {
        scored.select_nth_unstable_by(k, cmp);
        scored.truncate(k);
    }
    scored.sort_by(cmp);
    scored
}

/// Dot product written so the compiler vectorises it (eight independent sums).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + ra.iter().zip(rb).map(|(x, y)| x * y).sum::<f32>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a real tantivy index with cairn's schema and analyzer: of two bodies
    /// with the same words (so the same term scores), the one where the
    /// query's words stand together wins; a chunk whose neighbour holds them
    /// is found, below both.
    #[test]
    fn words_together_outrank_words_apart_and_neighbours_count_a_little() -> tantivy::Result<()> {
        use tantivy::collector::TopDocs;
        let s = ChunkSchema::new();
        let index = tantivy::Index::create_in_ram(s.schema.clone());
        ChunkSchema::register_analyzers(&index);
        let mut writer =
            index.writer_with_num_threads::<tantivy::TantivyDocument>(1, 15_000_000)?;
        let apart = "small walkers start here in a ball";
        let together = "walkers start here in a small ball";
        // Chunk 2 holds none of the words; its neighbour does.
        for (ord, body, context) in [
            (0u64, apart, ""),
            (1, together, ""),
            (2, "other words", apart),
        ] {
            let mut d = tantivy::TantivyDocument::new();
            d.add_u64(s.chunk, ord);
            d.add_text(s.body, body);
            d.add_text(s.context, context);
            writer.add_document(d)?;
        }
        writer.commit()?;
        let searcher = index.reader()?.searcher();
        let q = bm25_query(&s, "small ball").expect("evidence words");
        let top = searcher.search(&q, &TopDocs::with_limit(3))?;
        use tantivy::schema::Value;
        let mut order = Vec::new();
        for (_, addr) in &top {
            let d: tantivy::TantivyDocument = searcher.doc(*addr)?;
            order.extend(d.get_first(s.chunk).and_then(|v| v.as_u64()));
        }
        assert_eq!(order, [1, 0, 2], "{top:?}");
        assert!(top[0].0 > top[1].0, "{top:?}");
        assert!(bm25_query(&s, "how do I").is_none());
        Ok(())
    }

    #[test]
    fn dot_matches_naive() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.1).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.05).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-4);
    }
}
