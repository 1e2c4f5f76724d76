//! The vector file: one flat little-endian f32 matrix, `chunks × dim`, mmap-able.

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
        if dim == 0 || map.len() % (dim * 4) != 0 {
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
