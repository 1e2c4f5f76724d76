//! Vector candidate lists: exact cosines over chunk and subchunk vectors,
//! or the approximate index's lists for a caller who may search many rows.
//! (The lexical lists, BM25 and identifiers, are in `lexical`.)

use cairn_index::Snapshot;
use cairn_index::ann::AnnIndex;
use cairn_index::vectors::Vectors;
pub use cairn_index::vectors::{best_first, dot};

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
    /// Approximate candidates taken per list entry wanted.
    pub oversample: usize,
    /// Of each approximate list, how many of the best are scored again with
    /// their f32 rows; the rest keep the query-in-f32 against int8 scores.
    pub exact_top: usize,
}

impl Default for VectorSearch {
    fn default() -> Self {
        Self {
            exact_below: cairn_index::ann::DEFAULT_MIN_ROWS,
            oversample: 2,
            exact_top: EXACT_TOP,
        }
    }
}

/// The head of each approximate list whose order is the exact scan's. RRF
/// gives rank 1 four times the weight of rank 200, and answers are made of
/// the best-fused few; re-scoring all 400 chunk and 800 subchunk candidates
/// read one random page of the f32 rows each, which at 100× the corpus was
/// most of what a search paged in (docs/log/benchmarks.md), while the int8
/// scores already order the rest to within their rounding.
pub const EXACT_TOP: usize = 32;

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

/// The two vector lists of each scope in `masks`: the `k` chunks nearest
/// `query` by their own vector and by their best subchunk, among those
/// the mask allows. Through the approximate index when [`uses_ann`] says
/// so: only the partitions of groups the caller may see (`groups`, as
/// [`crate::access`] reads them); each partition's nearest lists are read
/// once for every scope whose filter keeps enough of it, with each scope's
/// filter applied to every row, and a scope that keeps few of its rows
/// scans those rows exactly; the best [`VectorSearch::exact_top`] of each
/// list by those scores are re-scored with their f32 rows, so the head of
/// each list carries exact scores. Without it, the exact scan.
pub fn vector_lists(
    rows: &impl VectorRows,
    query: &[f32],
    masks: &[&[bool]],
    k: usize,
    groups: Option<&[String]>,
    how: &VectorSearch,
) -> Vec<VectorLists> {
    let exact = |mask: &[bool]| {
        (
            top(&chunk_cosines(rows, query, mask), mask, k),
            top(&subchunk_cosines(rows, query, mask), mask, k),
        )
    };
    let Some(ann) = rows.ann() else {
        return masks.iter().map(|m| exact(m)).collect();
    };
    let listed: Vec<bool> = masks.iter().map(|m| uses_ann(rows, m, how)).collect();
    let chunk_exact = |c: u32| dot(rows.chunk_rows().row(c as usize), query);
    let subchunk_exact = |s: u32| dot(rows.subchunk_rows().row(s as usize), query);
    let mut found: Vec<VectorLists> = vec![(Vec::new(), Vec::new()); masks.len()];
    // Chunks have about 1.5 subchunks each, and several of a chunk's
    // subchunks may come back: ask for more so k chunks remain.
    let (want, want_sub) = (k * how.oversample, 2 * k * how.oversample);
    for part in ann
        .partitions
        .iter()
        .filter(|p| crate::access::visible_groups(&p.groups, groups))
    {
        // The scopes that read this partition's lists: each one's mask, and
        // whether it allows the whole partition (then no row is looked up).
        let mut keeps: Vec<(usize, bool, &[bool])> = Vec::new();
        for (i, mask) in masks.iter().enumerate().filter(|(i, _)| listed[*i]) {
            let allowed = |c: u32| mask.get(c as usize).copied().unwrap_or(false);
            let kept = part.chunk_keys.iter().filter(|&&c| allowed(c)).count();
            if kept == 0 {
                continue;
            }
            if kept * SEARCH_MIN_SHARE >= part.chunk_keys.len() {
                keeps.push((i, kept == part.chunk_keys.len(), mask));
            } else {
                let (chunks, subchunks) = &mut found[i];
                chunks.extend(
                    part.chunk_keys
                        .iter()
                        .filter(|&&c| allowed(c))
                        .map(|&c| (c, chunk_exact(c))),
                );
                subchunks.extend(
                    part.subchunk_keys
                        .iter()
                        .filter(|&&s| allowed(rows.chunk_of(s as usize)))
                        .map(|&s| (s, subchunk_exact(s))),
                );
            }
        }
        if keeps.is_empty() {
            continue;
        }
        type Keep<'k> = Box<dyn Fn(u32) -> bool + 'k>;
        let allows = |mask: &[bool], c: u32| mask.get(c as usize).copied().unwrap_or(false);
        let by_chunk: Vec<Keep<'_>> = keeps
            .iter()
            .map(|&(_, whole, mask)| Box::new(move |c: u32| whole || allows(mask, c)) as Keep<'_>)
            .collect();
        let by_subchunk: Vec<Keep<'_>> = keeps
            .iter()
            .map(|&(_, whole, mask)| {
                Box::new(move |s: u32| whole || allows(mask, rows.chunk_of(s as usize))) as Keep<'_>
            })
            .collect();
        let by_chunk: Vec<&dyn Fn(u32) -> bool> = by_chunk.iter().map(|f| f.as_ref()).collect();
        let by_subchunk: Vec<&dyn Fn(u32) -> bool> =
            by_subchunk.iter().map(|f| f.as_ref()).collect();
        let chunks = part.chunks.search_scopes(query, want, &by_chunk);
        let subchunks = part.subchunks.search_scopes(query, want_sub, &by_subchunk);
        for (((i, _, _), c), s) in keeps.iter().zip(chunks).zip(subchunks) {
            found[*i].0.extend(c);
            found[*i].1.extend(s);
        }
    }
    found
        .into_iter()
        .zip(masks)
        .zip(listed)
        .map(|(((chunks, subchunks), mask), listed)| {
            if !listed {
                return exact(mask);
            }
            let chunks = exact_head(chunks, how.exact_top, chunk_exact);
            let mut best: std::collections::HashMap<u32, f32> = std::collections::HashMap::new();
            for (s, d) in exact_head(subchunks, how.exact_top, subchunk_exact) {
                let b = best
                    .entry(rows.chunk_of(s as usize))
                    .or_insert(f32::NEG_INFINITY);
                *b = b.max(d);
            }
            (
                best_first(chunks, k),
                best_first(best.into_iter().collect(), k),
            )
        })
        .collect()
}

/// `list` best first, its first `n` scored again by `exact` and put back in
/// order among the rest.
fn exact_head(list: Vec<(u32, f32)>, n: usize, exact: impl Fn(u32) -> f32) -> Vec<(u32, f32)> {
    let mut list = best_first(list, usize::MAX);
    for (row, score) in list.iter_mut().take(n) {
        *score = exact(*row);
    }
    best_first(list, usize::MAX)
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
