//! Fusion: reciprocal rank fusion of the candidate lists, each counting by
//! its share (and a multiplier per kind of list, to measure other fusions).

use std::collections::HashMap;

/// RRF's k: how fast a list's influence falls with rank.
const RRF_K: f32 = 60.0;

/// A chunk's evidence from each list.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fused {
    /// Chunk ordinal.
    pub chunk: u32,
    /// BM25 score (0 if absent).
    pub bm25: f32,
    /// Cosine (0 if absent).
    pub cosine: f32,
    /// RRF score.
    pub rrf: f32,
}

/// How much each kind of candidate list counts in the fusion, as a
/// multiplier of its share (1 everywhere: the shares as the engine sets them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FusionShares {
    /// BM25 lists.
    pub bm25: f32,
    /// Chunk-vector lists.
    pub vector: f32,
    /// Subchunk-vector lists.
    pub subchunk: f32,
    /// Identifier lists.
    pub identifier: f32,
}

impl Default for FusionShares {
    fn default() -> Self {
        Self {
            bm25: 1.0,
            vector: 1.0,
            subchunk: 1.0,
            identifier: 1.0,
        }
    }
}

impl FusionShares {
    /// Parses `bm25,vector,subchunk,identifier` (four non-negative numbers).
    pub fn parse(s: &str) -> Option<Self> {
        let v: Vec<f32> = s
            .split(',')
            .map(|x| {
                x.trim()
                    .parse()
                    .ok()
                    .filter(|n: &f32| n.is_finite() && *n >= 0.0)
            })
            .collect::<Option<_>>()?;
        match v[..] {
            [bm25, vector, subchunk, identifier] => Some(Self {
                bm25,
                vector,
                subchunk,
                identifier,
            }),
            _ => None,
        }
    }

    /// The multiplier of lists from `source`.
    pub fn of(&self, source: Source) -> f32 {
        match source {
            Source::Bm25 => self.bm25,
            Source::Vector => self.vector,
            Source::Subchunk => self.subchunk,
            Source::Identifier => self.identifier,
        }
    }
}

/// Where a ranked list came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// BM25 scores.
    Bm25,
    /// Cosine similarities.
    Vector,
    /// Cosine similarities of each chunk's best subchunk.
    Subchunk,
    /// Chunks defining an identifier the query names.
    Identifier,
}

/// One ranked candidate list and its share of the fusion.
pub struct RankedList {
    /// What produced it.
    pub source: Source,
    /// How much a rank in it counts (a share, not a ranking weight).
    pub share: f32,
    /// (chunk, score), best first.
    pub hits: Vec<(u32, f32)>,
}

/// Reciprocal rank fusion, each list counting by its share. Identifier matches count as lists of
/// their own, so a query naming a definition finds it.
pub fn fuse(lists: &[RankedList]) -> Vec<Fused> {
    let mut by_chunk: HashMap<u32, Fused> = HashMap::new();
    for list in lists {
        for (rank, (chunk, score)) in list.hits.iter().enumerate() {
            let f = by_chunk.entry(*chunk).or_insert(Fused {
                chunk: *chunk,
                ..Fused::default()
            });
            match list.source {
                Source::Bm25 => f.bm25 = f.bm25.max(*score),
                Source::Vector => f.cosine = f.cosine.max(*score),
                // A hit's cosine stays its chunk's own: one meaning for the breakdown.
                Source::Subchunk | Source::Identifier => {}
            }
            f.rrf += list.share / (RRF_K + rank as f32 + 1.0);
        }
    }
    let mut out: Vec<Fused> = by_chunk.into_values().collect();
    out.sort_by(|a, b| b.rrf.total_cmp(&a.rrf).then(a.chunk.cmp(&b.chunk)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_shares_parse_four_non_negative_numbers() {
        let f = FusionShares::parse("1, 0.5,2,1").expect("parse");
        assert_eq!((f.of(Source::Bm25), f.of(Source::Vector)), (1.0, 0.5));
        assert_eq!(
            (f.of(Source::Subchunk), f.of(Source::Identifier)),
            (2.0, 1.0)
        );
        for bad in ["1,1,1", "1,1,1,1,1", "1,-1,1,1", "1,x,1,1", "1,NaN,1,1", ""] {
            assert!(FusionShares::parse(bad).is_none(), "{bad}");
        }
        assert_eq!(
            FusionShares::default(),
            FusionShares::parse("1,1,1,1").expect("ones")
        );
    }

    fn list(source: Source, share: f32, hits: &[(u32, f32)]) -> RankedList {
        RankedList {
            source,
            share,
            hits: hits.to_vec(),
        }
    }

    #[test]
    fn fusion_rewards_agreement() {
        let bm = [(1, 9.0), (2, 8.0), (3, 7.0)];
        let vec = [(3, 0.9), (4, 0.8), (1, 0.7)];
        let f = fuse(&[
            list(Source::Bm25, 1.0, &bm),
            list(Source::Vector, 1.0, &vec),
        ]);
        let order: Vec<u32> = f.iter().map(|x| x.chunk).collect();
        assert_eq!(order[..2], [1, 3]);
        assert_eq!(f[0].bm25, 9.0);
        assert_eq!(f[0].cosine, 0.7);
        assert_eq!(fuse(&[list(Source::Bm25, 1.0, &bm)]).len(), 3);
        let with_ident = fuse(&[
            list(Source::Bm25, 1.0, &bm),
            list(Source::Vector, 1.0, &vec),
            list(Source::Identifier, 1.0, &[(4, 1.0)]),
        ]);
        assert_eq!(
            with_ident[0].chunk, 4,
            "an exact identifier match is protected"
        );
        let weighted = fuse(&[
            list(Source::Bm25, 0.5, &[(7, 1.0)]),
            list(Source::Bm25, 1.0, &[(8, 1.0)]),
        ]);
        assert_eq!(weighted[0].chunk, 8, "list weights scale ranks");
    }
}
