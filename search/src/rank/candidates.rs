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
