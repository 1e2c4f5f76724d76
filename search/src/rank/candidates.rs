//! Vector candidate lists: exact cosines over chunk and subchunk vectors,
//! or the approximate index's lists for a caller who may search many rows.
//! (The lexical lists, BM25 and identifiers, are in `lexical`.)

use cairn_index::Snapshot;
use cairn_index::ann::{AnnIndex, Partition};
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
    let Some(ann) = rows.ann() else {
        return masks
            .iter()
            .map(|m| exact_lists(rows, query, m, k))
            .collect();
    };
    let listed: Vec<bool> = masks.iter().map(|m| uses_ann(rows, m, how)).collect();
    let mut found: Vec<VectorLists> = vec![(Vec::new(), Vec::new()); masks.len()];
    // Chunks have about 1.5 subchunks each, and several of a chunk's
    // subchunks may come back: ask for more so k chunks remain.
    let (want, want_sub) = (k * how.oversample, 2 * k * how.oversample);
    let scan = AnnScan {
        rows,
        query,
        masks,
        listed: &listed,
        want,
        want_sub,
    };
    for part in ann
        .partitions
        .iter()
        .filter(|p| crate::access::visible_groups(&p.groups, groups))
    {
        let keeps = scan.scopes_of(part, &mut found);
        if keeps.is_empty() {
            continue;
        }
        scan.search_partition(part, &keeps, &mut found);
    }
    found
        .into_iter()
        .zip(masks)
        .zip(&listed)
        .map(|(((chunks, subchunks), mask), &listed)| {
            if !listed {
                return exact_lists(rows, query, mask, k);
            }
            scan.finish(chunks, subchunks, k, how.exact_top)
        })
        .collect()
}

/// A scope's two lists by the exact scan of the rows `mask` allows.
fn exact_lists(rows: &impl VectorRows, query: &[f32], mask: &[bool], k: usize) -> VectorLists {
    (
        top(&chunk_cosines(rows, query, mask), mask, k),
        top(&subchunk_cosines(rows, query, mask), mask, k),
    )
}

/// What one [`vector_lists`] call through the approximate index reads:
/// the rows, the query, each scope's mask and whether it uses the index,
/// and how many candidates each list asks for.
struct AnnScan<'a, R: VectorRows> {
    rows: &'a R,
    query: &'a [f32],
    masks: &'a [&'a [bool]],
    listed: &'a [bool],
    want: usize,
    want_sub: usize,
}

/// A scope that reads a partition's lists: its place among the masks, its
/// mask, and whether it allows the whole partition (then no row is looked up).
#[derive(Clone, Copy)]
struct Keep<'m> {
    scope: usize,
    whole: bool,
    mask: &'m [bool],
}

/// A scope's filter over one partition's rows.
type KeepFn<'k> = Box<dyn Fn(u32) -> bool + 'k>;

impl<'a, R: VectorRows> AnnScan<'a, R> {
    /// Chunk `c`'s cosine with the query, from its f32 row.
    fn chunk_exact(&self, c: u32) -> f32 {
        dot(self.rows.chunk_rows().row(c as usize), self.query)
    }

    /// Subchunk `s`'s cosine with the query, from its f32 row.
    fn subchunk_exact(&self, s: u32) -> f32 {
        dot(self.rows.subchunk_rows().row(s as usize), self.query)
    }

    /// The scopes that read `part`'s lists; one keeping few of its rows scans them into `found`.
    fn scopes_of(&self, part: &Partition, found: &mut [VectorLists]) -> Vec<Keep<'a>> {
        let mut keeps: Vec<Keep<'a>> = Vec::new();
        for (i, mask) in self
            .masks
            .iter()
            .enumerate()
            .filter(|(i, _)| self.listed[*i])
        {
            let allowed = |c: u32| mask.get(c as usize).copied().unwrap_or(false);
            let kept = part.chunk_keys.iter().filter(|&&c| allowed(c)).count();
            if kept == 0 {
                continue;
            }
            if kept * SEARCH_MIN_SHARE >= part.chunk_keys.len() {
                keeps.push(Keep {
                    scope: i,
                    whole: kept == part.chunk_keys.len(),
                    mask,
                });
            } else {
                let (chunks, subchunks) = &mut found[i];
                chunks.extend(
                    part.chunk_keys
                        .iter()
                        .filter(|&&c| allowed(c))
                        .map(|&c| (c, self.chunk_exact(c))),
                );
                subchunks.extend(
                    part.subchunk_keys
                        .iter()
                        .filter(|&&s| allowed(self.rows.chunk_of(s as usize)))
                        .map(|&s| (s, self.subchunk_exact(s))),
                );
            }
        }
        keeps
    }

    /// Reads `part`'s nearest lists once for all of `keeps`, onto their lists in `found`.
    fn search_partition(&self, part: &Partition, keeps: &[Keep<'a>], found: &mut [VectorLists]) {
        let rows = self.rows;
        let allows = |mask: &[bool], c: u32| mask.get(c as usize).copied().unwrap_or(false);
        let by_chunk: Vec<KeepFn<'_>> = keeps
            .iter()
            .map(|&Keep { whole, mask, .. }| {
                Box::new(move |c: u32| whole || allows(mask, c)) as KeepFn<'_>
            })
            .collect();
        let by_subchunk: Vec<KeepFn<'_>> = keeps
            .iter()
            .map(|&Keep { whole, mask, .. }| {
                Box::new(move |s: u32| whole || allows(mask, rows.chunk_of(s as usize)))
                    as KeepFn<'_>
            })
            .collect();
        let by_chunk: Vec<&dyn Fn(u32) -> bool> = by_chunk.iter().map(|f| f.as_ref()).collect();
        let by_subchunk: Vec<&dyn Fn(u32) -> bool> =
            by_subchunk.iter().map(|f| f.as_ref()).collect();
        let chunks = part.chunks.search_scopes(self.query, self.want, &by_chunk);
        let subchunks = part
            .subchunks
            .search_scopes(self.query, self.want_sub, &by_subchunk);
        for ((keep, c), s) in keeps.iter().zip(chunks).zip(subchunks) {
            found[keep.scope].0.extend(c);
            found[keep.scope].1.extend(s);
        }
    }

    /// A scope's `k`-long lists from its approximate candidates, each head re-scored exactly.
    fn finish(
        &self,
        chunks: Vec<(u32, f32)>,
        subchunks: Vec<(u32, f32)>,
        k: usize,
        exact_top: usize,
    ) -> VectorLists {
        let chunks = exact_head(chunks, exact_top, |c| self.chunk_exact(c));
        let mut best: std::collections::HashMap<u32, f32> = std::collections::HashMap::new();
        for (s, d) in exact_head(subchunks, exact_top, |s| self.subchunk_exact(s)) {
            let b = best
                .entry(self.rows.chunk_of(s as usize))
                .or_insert(f32::NEG_INFINITY);
            *b = b.max(d);
        }
        (
            best_first(chunks, k),
            best_first(best.into_iter().collect(), k),
        )
    }
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
