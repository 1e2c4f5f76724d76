//! The vector file: one flat little-endian f32 matrix, `chunks × dim`, mmap-able;
//! and the dot product and best-first order every vector search uses.

use memmap2::Mmap;
use std::fs::File;
use std::io;
use std::path::Path;

#[cfg(not(target_endian = "little"))]
compile_error!("the vector file is read in place as little-endian f32");

/// Appends `values` to `out` as little-endian f32: the one encoding of every
/// vector cairn stores (index versions, build parts, the embedding cache).
pub fn encode_into(out: &mut Vec<u8>, values: &[f32]) {
    out.reserve(values.len() * 4);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Decodes little-endian f32s; `bytes.len()` must be a multiple of 4 (a
/// shorter tail is ignored, and callers check lengths first).
pub fn decode(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// A read-only, memory-mapped vector matrix.
pub struct Vectors {
    map: Mmap,
    dim: usize,
}

impl Vectors {
    /// Maps `path`; fails if its size is not a whole number of `dim`-vectors.
    pub fn open(path: &Path, dim: usize) -> io::Result<Self> {
        let file = File::open(path)?;
        // SAFETY: published index files are never modified or truncated
        // (the format's core promise), so the mapping stays valid.
        #[allow(unsafe_code)]
        let map = unsafe { Mmap::map(&file)? };
        let row_bytes = dim.checked_mul(4).filter(|b| *b > 0);
        if row_bytes.is_none_or(|b| map.len() % b != 0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "vector file of {} bytes is not a multiple of dim {dim}",
                    map.len()
                ),
            ));
        }
        Ok(Self { map, dim })
    }

    /// Tells the kernel rows will be read here and there (re-scoring the
    /// approximate index's candidates), not in order: a page fault then
    /// reads its page alone instead of the readahead window around it,
    /// which at 100x the corpus multiplied what each search pulled in from
    /// disk. Advice only: where the kernel refuses it, nothing changes.
    pub fn expect_random_reads(&self) {
        let _ = self.map.advise(memmap2::Advice::Random);
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.map.len() / (self.dim * 4)
    }

    /// Whether the file holds no vectors.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// All vectors as one slice of `len() * dim()` floats.
    pub fn as_slice(&self) -> &[f32] {
        // SAFETY: mmap memory is page-aligned, every bit pattern is a valid
        // f32, and the length was checked to be a multiple of 4 in `open`.
        #[allow(unsafe_code)]
        let (head, body, tail) = unsafe { self.map.align_to::<f32>() };
        debug_assert!(head.is_empty() && tail.is_empty());
        body
    }

    /// Vector `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.as_slice()[i * self.dim..(i + 1) * self.dim]
    }
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

/// Scored rows best first (ties to the lower number), cut to `k`: the one
/// order of every vector list, exact or approximate.
pub fn best_first(mut scored: Vec<(u32, f32)>, k: usize) -> Vec<(u32, f32)> {
    cut_to_best(&mut scored, k);
    scored.sort_by(best_order);
    scored
}

/// Cuts `scored` to its best `k`, in no order: what [`best_first`] keeps.
/// The order is total (ties go to the lower number), so cutting a growing
/// list now and then keeps the same best `k` as cutting it once.
pub fn cut_to_best(scored: &mut Vec<(u32, f32)>, k: usize) {
    if scored.len() > k {
        scored.select_nth_unstable_by(k, best_order);
        scored.truncate(k);
    }
}

/// Best first: the higher score, then the lower number.
fn best_order(a: &(u32, f32), b: &(u32, f32)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_naive() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.1).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.05).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-4);
    }
}
