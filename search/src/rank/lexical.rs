//! Lexical candidate lists: BM25 over the fielded chunk index (terms in
//! every field with its boost, word pairs in the body) and the chunks that
//! define an identifier the query names.
//!
//! BM25 runs in two stages, so that the expensive part costs what the top
//! of the list needs, not what the corpus holds: the term clauses' union
//! keeps the best `FIRST_STAGE × k` allowed chunks by their terms (tantivy's
//! `for_each_pruning`: only a chunk above the running threshold reaches the
//! heap; the caller's allowed chunks applied as each arrives), and the word
//! pairs, whose position reads were most of the cost, are scored for those
//! (a pair's scorer still reads positions of the chunks holding both words
//! on its way from one candidate to the next, but no further than the last). A chunk's score is the sum of its clauses' scores in clause
//! order, whichever path found it (`scored`).
//! `bm25_exhaustive` reads every posting; `examples/bm25_check.rs` compares
//! the two on the golden files. Used by `pipeline`; depends on tantivy and
//! the caller-scoped statistics (`stats`).

use super::fusion::{RankedList, Source};
use super::query::QueryWords;
use super::stats::ScopedStats;
use cairn_index::Snapshot;
use cairn_index::schema::ChunkSchema;
use std::collections::{BTreeSet, BinaryHeap};
use std::sync::Arc;
use tantivy::collector::{FilterCollector, TopDocs};
use tantivy::query::{
    BooleanQuery, BoostQuery, EnableScoring, Occur, PhraseQuery, Query, TermQuery,
};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, DocId, DocSet, Score, TERMINATED, Term};

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
/// Chunks the first stage keeps per chunk asked for: room for the word
/// pairs to reorder them.
const FIRST_STAGE: usize = 4;
/// Chunks the exhaustive search keeps past the k asked for: the union
/// scorer's sums may differ from `scored`'s in the last bits.
const SLACK: usize = 8;

/// The BM25 query of a question: its clauses, term clauses first.
pub struct Bm25Query {
    /// Each term in every field with its boost, then each word pair in the body.
    clauses: Vec<Box<dyn Query>>,
    /// How many of `clauses` are term clauses (the first stage's).
    terms: usize,
}

impl Bm25Query {
    /// The query for `query`; `None` when it has no evidence words.
    pub fn new(s: &ChunkSchema, query: &str) -> Option<Self> {
        let QueryWords { terms, pairs } = QueryWords::new(query);
        if terms.is_empty() {
            return None;
        }
        let fields = [s.body, s.title, s.symbols, s.path, s.context];
        let mut clauses: Vec<Box<dyn Query>> = Vec::new();
        for term in &terms {
            for (field, (_, boost)) in fields.iter().zip(BOOSTS) {
                let t = Term::from_field_text(*field, term);
                let q = TermQuery::new(t, IndexRecordOption::WithFreqs);
                clauses.push(Box::new(BoostQuery::new(Box::new(q), boost)));
            }
        }
        let n_terms = clauses.len();
        for [a, b] in pairs {
            let (a, b) = (
                Term::from_field_text(s.body, &a),
                Term::from_field_text(s.body, &b),
            );
            let q = PhraseQuery::new_with_offset_and_slop(vec![(0, a), (1, b)], PAIR_SLOP);
            clauses.push(Box::new(BoostQuery::new(Box::new(q), PAIR_BOOST)));
        }
        Some(Self {
            clauses,
            terms: n_terms,
        })
    }

    /// The clauses `range` as one union.
    fn union(&self, range: std::ops::Range<usize>) -> BooleanQuery {
        BooleanQuery::new(
            self.clauses[range]
                .iter()
                .map(|c| (Occur::Should, c.box_clone()))
                .collect(),
        )
    }
}

/// Top `k` BM25 chunks among the allowed ones, best first, by the
/// two-stage search (see [`pruned`]: a chunk lifted into the top k by word
/// pairs alone, from below the first stage, is missed); one list per mask
/// in `scopes`, from one pass over the postings (a search with a toolkit
/// in its question ranks that toolkit and everything).
pub fn bm25(
    snap: &Snapshot,
    stats: &ScopedStats<'_>,
    query: &str,
    scopes: &[&[bool]],
    k: usize,
) -> tantivy::Result<Vec<Vec<(u32, f32)>>> {
    match Bm25Query::new(&snap.schema, query) {
        Some(q) => pruned(stats, &q, scopes, k),
        None => Ok(vec![Vec::new(); scopes.len()]),
    }
}

/// Top `k` BM25 chunks with every posting of every clause read (no
/// pruning): the reference the pruned search is checked against.
pub fn bm25_exhaustive(
    snap: &Snapshot,
    stats: &ScopedStats<'_>,
    query: &str,
    allowed: &Arc<Vec<bool>>,
    k: usize,
) -> tantivy::Result<Vec<(u32, f32)>> {
    let Some(q) = Bm25Query::new(&snap.schema, query) else {
        return Ok(Vec::new());
    };
    let whole = q.union(0..q.clauses.len());
    let found = top_docs(stats, &whole, allowed, k.saturating_add(SLACK))?;
    let mut out = scored(stats, &q, found.into_iter().map(|(_, a)| a).collect())?;
    out.truncate(k);
    Ok(out)
}

/// A first-stage candidate: its term score, chunk, segment and document,
/// ordered so that the heap's top is the weakest: the lowest score, then
/// the latest chunk (chunk order, not segment order, which changes from
/// build to build, so ties at the cut fall the same way every time).
struct Candidate(Score, u32, usize, DocId);

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

/// The two-stage search: the term clauses keep the `FIRST_STAGE × k`
/// allowed chunks with the best term scores, then the word pairs are
/// scored on those alone. A chunk whose terms rank below them but whose
/// pairs would lift it into the top k is missed: `examples/bm25_check.rs`
/// counts how often on the golden files. tantivy runs block-max WAND in a
/// segment where every term clause has postings with frequencies; a word
/// absent from some field (most questions have one) gets the plain union.
/// Dropping the absent clauses so that WAND always ran was slower here
/// (40-odd clauses, 800 kept), and slower still for a caller who sees 5 %.
///
/// Each of `scopes` keeps its own candidates from the one pass (the bar
/// passed to tantivy is the lowest of theirs, and each keeps what it
/// would alone), and the union of them is scored once: each list is what
/// a search of that scope alone returns, but for one case. Where block-max
/// WAND runs, a first-stage score is summed in an order that depends on
/// the bars met on the way, so a chunk at the cut could differ from the
/// scope searched alone in the last bit (the answer stays the same for
/// the same question and scopes; the final scores are `scored`'s).
fn pruned(
    stats: &ScopedStats<'_>,
    q: &Bm25Query,
    scopes: &[&[bool]],
    k: usize,
) -> tantivy::Result<Vec<Vec<(u32, f32)>>> {
    if scopes.is_empty() {
        return Ok(Vec::new());
    }
    let searcher = &stats.searcher;
    let scoring = EnableScoring::enabled_from_statistics_provider(stats, searcher);
    let keep = k.saturating_mul(FIRST_STAGE).max(1);
    let terms = q.union(0..q.terms).weight(scoring)?;
    // Just under the weakest kept score: a chunk that ties it still comes
    // in (tantivy passes only scores above the bar) and the lower chunk stays.
    let bar = |heaps: &[BinaryHeap<Candidate>]| {
        heaps
            .iter()
            .map(|heap| match heap.len() >= keep {
                true => heap.peek().map_or(Score::MIN, |c| c.0.next_down()),
                false => Score::MIN,
            })
            .fold(Score::MAX, Score::min)
    };
    let mut heaps: Vec<BinaryHeap<Candidate>> = scopes
        .iter()
        .map(|_| BinaryHeap::with_capacity(keep.min(4096) + 1))
        .collect();
    for (s, seg) in searcher.segment_readers().iter().enumerate() {
        let mut threshold = bar(&heaps);
        terms.for_each_pruning(threshold, seg, &mut |doc, score| {
            let Some(chunk) = stats.tables.chunk(s, doc) else {
                return threshold;
            };
            for (heap, allowed) in heaps.iter_mut().zip(scopes) {
                // Scopes may have different bars: each keeps only what it would alone.
                let above = heap.len() < keep || heap.peek().is_some_and(|c| score >= c.0);
                if above && allowed.get(chunk as usize).copied().unwrap_or(false) {
                    heap.push(Candidate(score, chunk, s, doc));
                    if heap.len() > keep {
                        heap.pop();
                    }
                }
            }
            threshold = bar(&heaps);
            threshold
        })?;
    }
    let kept: Vec<std::collections::HashSet<u32>> = heaps
        .iter()
        .map(|heap| heap.iter().map(|c| c.1).collect())
        .collect();
    let found = heaps
        .into_iter()
        .flat_map(BinaryHeap::into_vec)
        .map(|Candidate(_, _, s, doc)| DocAddress::new(s as u32, doc))
        .collect();
    let all = scored(stats, q, found)?;
    Ok(kept
        .iter()
        .map(|kept| {
            all.iter()
                .filter(|(chunk, _)| kept.contains(chunk))
                .take(k)
                .copied()
                .collect()
        })
        .collect())
}

/// The chunks at `found`, each scored as the sum of its clauses' scores in
/// clause order, best first (ties by chunk). One order for every path: a
/// union scorer's sum depends on the order its clauses run out, so two
/// ways through the postings could differ in the last bits.
fn scored(
    stats: &ScopedStats<'_>,
    q: &Bm25Query,
    found: Vec<DocAddress>,
) -> tantivy::Result<Vec<(u32, f32)>> {
    let searcher = &stats.searcher;
    let scoring = EnableScoring::enabled_from_statistics_provider(stats, searcher);
    let mut by_segment: Vec<Vec<DocId>> = vec![Vec::new(); searcher.segment_readers().len()];
    for a in found {
        if let Some(docs) = by_segment.get_mut(a.segment_ord as usize) {
            docs.push(a.doc_id);
        }
    }
    let weights = q
        .clauses
        .iter()
        .map(|c| c.weight(scoring))
        .collect::<tantivy::Result<Vec<_>>>()?;
    let mut out = Vec::new();
    for (s, docs) in by_segment.iter_mut().enumerate() {
        if docs.is_empty() {
            // A phrase scorer reads positions up to its first match as it opens.
            continue;
        }
        docs.sort_unstable();
        docs.dedup();
        let seg = &searcher.segment_readers()[s];
        let mut sums: Vec<Score> = vec![0.0; docs.len()];
        for w in &weights {
            let mut scorer = w.scorer(seg, 1.0)?;
            for (doc, sum) in docs.iter().zip(sums.iter_mut()) {
                if scorer.doc() < *doc {
                    scorer.seek(*doc);
                }
                if scorer.doc() == *doc && *doc != TERMINATED {
                    *sum += scorer.score();
                }
            }
        }
        for (doc, sum) in docs.iter().zip(sums) {
            if let Some(chunk) = stats.tables.chunk(s, *doc) {
                out.push((chunk, sum));
            }
        }
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(out)
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

/// The top `k` allowed documents for `query` with their scores, every
/// posting read.
fn top_docs(
    stats: &ScopedStats<'_>,
    query: &dyn Query,
    allowed: &Arc<Vec<bool>>,
    k: usize,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    let mask = Arc::clone(allowed);
    let collector = FilterCollector::new(
        "chunk".to_owned(),
        move |ord: u64| mask.get(ord as usize).copied().unwrap_or(false),
        TopDocs::with_limit(k),
    );
    stats
        .searcher
        .search_with_statistics_provider(query, &collector, stats)
}

/// Top `k` allowed chunks for a one-clause `query` (an identifier), scored
/// with the caller's `stats`, every posting read.
fn run(
    stats: &ScopedStats<'_>,
    query: &dyn Query,
    allowed: &Arc<Vec<bool>>,
    k: usize,
) -> tantivy::Result<Vec<(u32, f32)>> {
    let mut out: Vec<(u32, f32)> = top_docs(stats, query, allowed, k)?
        .into_iter()
        .filter_map(|(score, addr)| {
            let ord = stats.tables.chunk(addr.segment_ord as usize, addr.doc_id)?;
            Some((ord, score))
        })
        .collect();
    // Deterministic order: score, then chunk ordinal (doc order, then line).
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(out)
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
        let q = Bm25Query::new(&s, "small ball").expect("evidence words");
        let q = q.union(0..q.clauses.len());
        let top = searcher.search(&q, &TopDocs::with_limit(3))?;
        use tantivy::schema::Value;
        let mut order = Vec::new();
        for (_, addr) in &top {
            let d: tantivy::TantivyDocument = searcher.doc(*addr)?;
            order.extend(d.get_first(s.chunk).and_then(|v| v.as_u64()));
        }
        assert_eq!(order, [1, 0, 2], "{top:?}");
        assert!(top[0].0 > top[1].0, "{top:?}");
        assert!(Bm25Query::new(&s, "how do I").is_none());
        Ok(())
    }
}
