//! Candidate lists: BM25 over the fielded chunk index (terms in every field
//! with its boost, word pairs in the body), chunks that define an identifier
//! the query names, and exact cosines over chunk and subchunk vectors.

use super::fusion::{RankedList, Source};
use super::query::QueryWords;
use super::stats::ScopedStats;
use cairn_index::Snapshot;
use cairn_index::ann::AnnIndex;
use cairn_index::schema::ChunkSchema;
use cairn_index::vectors::Vectors;
pub use cairn_index::vectors::{best_first, dot};
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

/// The vector rows a search scores: a version's, or a benchmark's
/// synthetic ones (`search/examples/bench_scale.rs` runs this code).
pub trait VectorRows {
    /// One row per chunk.
    fn chunk_rows(&self) -> &Vectors;
    /// One row per subchunk.
    fn subchunk_rows(&self) -> &Vectors;
    /// The chunk subchunk `s` belongs to.
    fn chunk_of(&self, s: usize) -> u32;
    /// The approximate index over both, when there is one.
    fn ann(&self) -> Option<&AnnIndex>;
}

impl VectorRows for Snapshot {
    fn chunk_rows(&self) -> &Vectors {
        &self.vectors
    }
    fn subchunk_rows(&self) -> &Vectors {
        &self.subchunk_vectors
    }
    fn chunk_of(&self, s: usize) -> u32 {
        self.subchunks.get(s).map_or(u32::MAX, |r| r.chunk)
    }
    fn ann(&self) -> Option<&AnnIndex> {
        self.ann.as_ref()
    }
}

/// Each chunk's cosine with `query` (a unit vector); `-inf` where not allowed.
/// Computed once per search and ranked under each scope by [`top`].
pub fn chunk_cosines(rows: &impl VectorRows, query: &[f32], allowed: &[bool]) -> Vec<f32> {
    let vectors = rows.chunk_rows();
    allowed
        .iter()
        .enumerate()
        .map(|(i, &ok)| match ok {
            true => dot(vectors.row(i), query),
            false => f32::NEG_INFINITY,
        })
        .collect()
}

/// Each chunk's best subchunk cosine with `query`; `-inf` where not allowed.
pub fn subchunk_cosines(rows: &impl VectorRows, query: &[f32], allowed: &[bool]) -> Vec<f32> {
    let vectors = rows.subchunk_rows();
    let mut best = vec![f32::NEG_INFINITY; allowed.len()];
    for i in 0..vectors.len() {
        let c = rows.chunk_of(i) as usize;
        if allowed.get(c).copied().unwrap_or(false) {
            best[c] = best[c].max(dot(vectors.row(i), query));
        }
    }
    best
}

/// A scope's two vector lists: chunks by their own cosine, and by their
/// best subchunk's, each best first.
pub type VectorLists = (Vec<(u32, f32)>, Vec<(u32, f32)>);

/// When the vector lists come from the approximate index, and how many candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorSearch {
    /// Below this many rows (chunks and subchunks) a caller may search, the
    /// lists come from an exact scan of those rows (about 7 ms of one core);
    /// from it on, from the approximate index when the version has one.
    pub exact_below: usize,
    /// Approximate candidates taken per list entry wanted, before exact re-scoring.
    pub oversample: usize,
}

impl Default for VectorSearch {
    fn default() -> Self {
        Self {
            exact_below: cairn_index::ann::DEFAULT_MIN_ROWS,
            oversample: 2,
        }
    }
}

/// A partition's lists are searched only when the caller's filter keeps at
/// least this share of its rows (1 / n): a search reads about `k / share`
/// rows to find `k` that pass, so a narrower filter scans its rows exactly.
const SEARCH_MIN_SHARE: usize = 20;

/// One item per vector row `mask` lets a caller search: its chunks, then
/// their subchunks.
fn allowed_rows<'a, R: VectorRows>(rows: &'a R, mask: &'a [bool]) -> impl Iterator<Item = ()> + 'a {
    let allowed = move |c: u32| mask.get(c as usize).copied().unwrap_or(false);
    let subchunks = (0..rows.subchunk_rows().len()).filter(move |&s| allowed(rows.chunk_of(s)));
    mask.iter()
        .filter(|&&ok| ok)
        .map(|_| ())
        .chain(subchunks.map(|_| ()))
}

/// The vector rows `mask` lets a caller search: its chunks and their subchunks.
pub fn mask_rows(rows: &impl VectorRows, mask: &[bool]) -> usize {
    allowed_rows(rows, mask).count()
}

/// Whether `mask` allows at least `n` vector rows, stopping as soon as it
/// knows (a search asks this of every caller; at 100x the corpus a full
/// count is a pass over 2.8 M rows).
fn mask_rows_at_least(rows: &impl VectorRows, mask: &[bool], n: usize) -> bool {
    n == 0 || allowed_rows(rows, mask).nth(n - 1).is_some()
}

/// Whether a caller who may search `mask` uses the approximate index: the
/// version has one, and an exact scan would cover at least `exact_below` rows.
pub fn uses_ann(rows: &impl VectorRows, mask: &[bool], how: &VectorSearch) -> bool {
    rows.ann().is_some() && mask_rows_at_least(rows, mask, how.exact_below)
}

/// The two vector lists of one scope: the `k` chunks nearest `query` by
/// their own vector and by their best subchunk, among those `mask` allows.
/// Through the approximate index when [`uses_ann`] says so: only the
/// partitions of groups the caller may see (`groups`, as
/// [`crate::access`] reads them); each partition's nearest lists are read
/// with the filter applied to every row when the filter keeps enough of it,
/// else its kept rows are scanned exactly; candidates are re-scored
/// exactly, so scores are the exact scan's. Without it, the exact scan.
pub fn vector_lists(
    rows: &impl VectorRows,
    query: &[f32],
    mask: &[bool],
    k: usize,
    groups: Option<&[String]>,
    how: &VectorSearch,
) -> VectorLists {
    let ann = rows.ann().filter(|_| uses_ann(rows, mask, how));
    let Some(ann) = ann else {
        return (
            top(&chunk_cosines(rows, query, mask), mask, k),
            top(&subchunk_cosines(rows, query, mask), mask, k),
        );
    };
    let allowed = |c: u32| mask.get(c as usize).copied().unwrap_or(false);
    let chunk_score = |c: u32| (c, dot(rows.chunk_rows().row(c as usize), query));
    let mut chunks: Vec<(u32, f32)> = Vec::new();
    let mut best: std::collections::HashMap<u32, f32> = std::collections::HashMap::new();
    let mut best_sub = |s: u32| {
        let d = dot(rows.subchunk_rows().row(s as usize), query);
        let b = best
            .entry(rows.chunk_of(s as usize))
            .or_insert(f32::NEG_INFINITY);
        *b = b.max(d);
    };
    for part in ann
        .partitions
        .iter()
        .filter(|p| crate::access::visible_groups(&p.groups, groups))
    {
        let kept = part.chunk_keys.iter().filter(|&&c| allowed(c)).count();
        if kept == 0 {
            continue;
        }
        // Chunks have about 1.5 subchunks each, and several of a chunk's
        // subchunks may come back: ask for more so k chunks remain.
        let (want, want_sub) = (k * how.oversample, 2 * k * how.oversample);
        if kept * SEARCH_MIN_SHARE >= part.chunk_keys.len() {
            // The whole partition allowed: no row needs looking up.
            let whole = kept == part.chunk_keys.len();
            let c = part.chunks.search(query, want, |c| whole || allowed(c));
            let s = part.subchunks.search(query, want_sub, |s| {
                whole || allowed(rows.chunk_of(s as usize))
            });
            chunks.extend(c.into_iter().map(|(c, _)| chunk_score(c)));
            s.into_iter().for_each(|(s, _)| best_sub(s));
        } else {
            chunks.extend(
                part.chunk_keys
                    .iter()
                    .filter(|&&c| allowed(c))
                    .map(|&c| chunk_score(c)),
            );
            part.subchunk_keys
                .iter()
                .filter(|&&s| allowed(rows.chunk_of(s as usize)))
                .for_each(|&s| best_sub(s));
        }
    }
    (
        best_first(chunks, k),
        best_first(best.into_iter().collect(), k),
    )
}

/// The `k` best allowed chunks by `scores` (one per chunk), best first; ties
/// go to the lower chunk.
pub fn top(scores: &[f32], allowed: &[bool], k: usize) -> Vec<(u32, f32)> {
    let scored: Vec<(u32, f32)> = scores
        .iter()
        .zip(allowed)
        .enumerate()
        .filter(|(_, (s, ok))| **ok && s.is_finite())
        .map(|(c, (s, _))| (c as u32, *s))
        .collect();
    best_first(scored, k)
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
}
