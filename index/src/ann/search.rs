//! Reading the lists: the nearest lists to a query, their rows scored in
//! int8, the best candidates scored again with the query in f32.

use super::train::{dot_f32_i8, dot_i8, quantise};
use super::{AnnError, FORMAT, HEADER, Ivf, MAGIC, err, u32s};
use crate::vectors::{best_first, cut_to_best, dot};
use memmap2::Mmap;
use std::path::Path;

/// Rows a scope's candidates may grow to before they are cut to the best k.
const TRIM_AT: usize = 4096;

impl Ivf {
    /// Maps the file at `path`, checking it holds `rows` distinct row
    /// numbers below `total` of `dim` dimensions in well-formed lists.
    pub(super) fn open(
        path: &Path,
        dim: usize,
        rows: usize,
        total: usize,
        probes: usize,
    ) -> Result<Self, AnnError> {
        let file = std::fs::File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => err(
                path,
                "missing (a version written by an older cairn may hold HNSW graphs instead: rebuild it with `cairn build`)",
            ),
            _ => err(path, e),
        })?;
        // SAFETY: published index files are never modified or truncated
        // (the format's core promise), so the mapping stays valid.
        #[allow(unsafe_code)]
        let map = unsafe { Mmap::map(&file) }.map_err(|e| err(path, e))?;
        if map.len() < HEADER {
            return Err(err(path, "too short for its header"));
        }
        let [format, d, n, lists] = u32s(&map, 8, 4)[..] else {
            return Err(err(path, "too short for its header"));
        };
        if &map[..8] != MAGIC || format != FORMAT {
            return Err(err(
                path,
                "not a list file of this cairn's format (a version from an older cairn: rebuild it)",
            ));
        }
        let (n, lists) = (n as usize, lists as usize);
        if dim == 0 || d as usize != dim || n != rows {
            return Err(err(
                path,
                format!("{n} rows of {d} dimensions, expected {rows} of {dim}"),
            ));
        }
        // Sizes from the header, checked: a hostile header must not wrap them.
        let size = || {
            let words = lists
                .checked_mul(dim)?
                .checked_add(lists)?
                .checked_add(1)?
                .checked_add(n.checked_mul(2)?)?;
            let codes_at = words.checked_mul(4)?.checked_add(HEADER)?;
            Some((codes_at, codes_at.checked_add(n.checked_mul(dim)?)?))
        };
        let codes_at = match size() {
            Some((codes_at, total)) if total == map.len() && (n > 0) == (lists > 0) => codes_at,
            _ => return Err(err(path, "its size does not match its header")),
        };
        let centroids = crate::vectors::decode(&map[HEADER..HEADER + 4 * lists * dim]);
        let at = HEADER + 4 * lists * dim;
        let offsets = u32s(&map, at, lists + 1);
        let keys = u32s(&map, at + 4 * (lists + 1), n);
        let scales = crate::vectors::decode(&map[at + 4 * (lists + 1 + n)..codes_at]);
        let well_formed = offsets.first() == Some(&0)
            && offsets.last() == Some(&(n as u32))
            && offsets.windows(2).all(|w| w[0] <= w[1])
            && offsets.windows(2).all(|w| {
                keys[w[0] as usize..w[1] as usize]
                    .windows(2)
                    .all(|k| k[0] < k[1])
            })
            && keys.iter().all(|&k| (k as usize) < total)
            && scales.iter().all(|s| s.is_finite());
        if !well_formed {
            return Err(err(
                path,
                "its lists are not ascending row numbers in range",
            ));
        }
        Ok(Self {
            dim,
            centroids,
            offsets,
            keys,
            scales,
            map,
            codes_at,
            probes: probes.max(1),
        })
    }

    pub(super) fn sorted_keys(&self) -> Vec<u32> {
        let mut k = self.keys.clone();
        k.sort_unstable();
        k
    }

    /// Up to `k` rows nearest `query` among those `keep` accepts, nearest
    /// first: the lists of the nearest centroids, at least the opener's
    /// `probes` of them and more until `k` rows are kept or every list is
    /// read. Every row read is scored in int8 against the quantised query;
    /// the best `k` are then scored with the query in f32 against their
    /// int8 rows, which removes the query's rounding from their order and
    /// reads nothing more (their rows were just scanned).
    pub fn search(&self, query: &[f32], k: usize, keep: impl Fn(u32) -> bool) -> Vec<(u32, f32)> {
        let mut found = self.search_scopes(query, k, &[&keep]);
        found.pop().unwrap_or_default()
    }

    /// [`Ivf::search`] for each of `keeps` in one pass over the lists: a
    /// row is read once however many scopes keep it, and each scope stops
    /// taking rows at the list where it alone would have stopped, so each
    /// answer is the one `search` gives.
    pub fn search_scopes(
        &self,
        query: &[f32],
        k: usize,
        keeps: &[&dyn Fn(u32) -> bool],
    ) -> Vec<Vec<(u32, f32)>> {
        let mut order: Vec<(u32, f32)> = self
            .centroids
            .chunks_exact(self.dim)
            .enumerate()
            .map(|(l, c)| (l as u32, dot(c, query)))
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let (q, q_scale) = quantise(query);
        let codes = &self.map[self.codes_at..];
        let row = |r: usize| &codes[r * self.dim..(r + 1) * self.dim];
        // Rows by their place in the file until the cut, then by row number.
        let mut found: Vec<Vec<(u32, f32)>> = vec![Vec::new(); keeps.len()];
        let mut open = vec![true; keeps.len()];
        for (n, &(l, _)) in order.iter().enumerate() {
            for (open, found) in open.iter_mut().zip(&found) {
                *open = *open && !(n >= self.probes && found.len() >= k);
            }
            if !open.contains(&true) {
                break;
            }
            let l = l as usize;
            for r in self.offsets[l] as usize..self.offsets[l + 1] as usize {
                let key = self.keys[r];
                let mut score = None;
                for ((keep, found), _) in keeps.iter().zip(&mut found).zip(&open).filter(|x| *x.1) {
                    if keep(key) {
                        let s = *score.get_or_insert_with(|| {
                            dot_i8(&q, row(r)) as f32 * q_scale * self.scales[r]
                        });
                        found.push((r as u32, s));
                    }
                }
            }
            // Only the best k can come out: holding every row read cost more
            // in allocation and sorting than the scan itself at 100×.
            for found in &mut found {
                if found.len() >= TRIM_AT.max(k.saturating_mul(4)) {
                    cut_to_best(found, k);
                }
            }
        }
        found
            .into_iter()
            .map(|found| {
                let rescored = best_first(found, k)
                    .into_iter()
                    .map(|(r, _)| {
                        let r = r as usize;
                        (self.keys[r], dot_f32_i8(query, row(r)) * self.scales[r])
                    })
                    .collect();
                best_first(rescored, k)
            })
            .collect()
    }

    /// Rows in the file.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the file holds no rows.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}
