//! The embedding cache: vectors keyed by (model weights sha256, forward pass,
//! chunk text sha256), so a nightly rebuild embeds only chunks whose text
//! changed, and vectors from another forward pass (cairn's CPU pass, candle's
//! on CPU or GPU) never stand in for this one's.
//!
//! One file per model and forward pass under `<cache>/embeddings/`: a sequence of records, each
//! the 32-byte text digest followed by `dim` little-endian f32. It is
//! rewritten atomically after each build with the entries that build used,
//! plus up to [`KEEP_UNUSED`] earlier ones (so shards or branches built
//! alternately into one cache keep each other's vectors), so it never grows
//! without bound.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Entries a save keeps beyond the ones the build used (about 80 MB at 384 dimensions).
pub const KEEP_UNUSED: usize = 50_000;

/// Digest of an embedded text.
pub type TextKey = [u8; 32];

/// The key of `text`.
pub fn text_key(text: &str) -> TextKey {
    Sha256::digest(text.as_bytes()).into()
}

/// Cached vectors for one model.
pub struct EmbedCache {
    path: PathBuf,
    dim: usize,
    entries: HashMap<TextKey, Vec<f32>>,
}

impl EmbedCache {
    /// Opens the cache for the model with `weights_sha256` and `dim` run by
    /// the `forward` pass; a missing or damaged file gives an empty cache (it
    /// is only a cache).
    pub fn open(cache_dir: &Path, weights_sha256: &str, forward: &str, dim: usize) -> Self {
        // The pass's name goes into a file name: keep it to safe characters.
        let forward: String = forward
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let name = format!(
            "{}-{dim}-{forward}.bin",
            &weights_sha256[..weights_sha256.len().min(16)]
        );
        let path = cache_dir.join("embeddings").join(name);
        let entries = std::fs::read(&path)
            .ok()
            .map(|bytes| parse(&bytes, dim))
            .unwrap_or_default();
        Self { path, dim, entries }
    }

    /// Cached vector of a text, if any.
    pub fn get(&self, key: &TextKey) -> Option<&Vec<f32>> {
        self.entries.get(key)
    }

    /// Number of cached vectors.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Replaces the file, atomically, with the `used` (key, vector) pairs and
    /// up to [`KEEP_UNUSED`] of the entries it held before.
    pub fn save<'a>(&self, used: impl Iterator<Item = (&'a TextKey, &'a [f32])>) -> io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        {
            let mut w = io::BufWriter::new(tmp.as_file_mut());
            let mut seen = std::collections::HashSet::new();
            let mut record = Vec::with_capacity(32 + self.dim * 4);
            let mut write = |key: &TextKey, v: &[f32]| -> io::Result<()> {
                record.clear();
                record.extend_from_slice(key);
                cairn_index::vectors::encode_into(&mut record, v);
                w.write_all(&record)
            };
            for (key, v) in used {
                if v.len() == self.dim && seen.insert(*key) {
                    write(key, v)?;
                }
            }
            // Earlier entries, in key order so the file is the same whatever the map's order.
            let mut older: Vec<(&TextKey, &Vec<f32>)> = self
                .entries
                .iter()
                .filter(|(k, _)| !seen.contains(*k))
                .collect();
            older.sort_by_key(|(k, _)| **k);
            for (key, v) in older.into_iter().take(KEEP_UNUSED) {
                write(key, v)?;
            }
            w.flush()?;
        }
        tmp.as_file().sync_all()?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

fn parse(bytes: &[u8], dim: usize) -> HashMap<TextKey, Vec<f32>> {
    let record = 32 + dim * 4;
    if dim == 0 || !bytes.len().is_multiple_of(record) {
        return HashMap::new();
    }
    bytes
        .chunks_exact(record)
        .map(|r| {
            let mut key = [0u8; 32];
            key.copy_from_slice(&r[..32]);
            (key, cairn_index::vectors::decode(&r[32..]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let dir = tempfile::tempdir().expect("tempdir");
        let c = EmbedCache::open(dir.path(), "abcdef0123456789ff", "cpu", 2);
        assert!(c.is_empty());
        let k = text_key("hello");
        let v = vec![0.5f32, -1.0];
        c.save(std::iter::once((&k, v.as_slice()))).expect("save");
        let c = EmbedCache::open(dir.path(), "abcdef0123456789ff", "cpu", 2);
        assert_eq!(c.get(&k), Some(&v));
        // Entries a later save did not use are kept too.
        let c = EmbedCache::open(dir.path(), "abcdef0123456789ff", "cpu", 2);
        let k2 = text_key("world");
        c.save(std::iter::once((&k2, v.as_slice()))).expect("save");
        let c = EmbedCache::open(dir.path(), "abcdef0123456789ff", "cpu", 2);
        assert_eq!((c.len(), c.get(&k)), (2, Some(&v)));
        // A different model never sees these vectors.
        assert!(EmbedCache::open(dir.path(), "0000000000000000", "cpu", 2).is_empty());
        // Nor does another forward pass of the same model.
        assert!(EmbedCache::open(dir.path(), "abcdef0123456789ff", "candle-cuda", 2).is_empty());
        // A truncated file is ignored rather than trusted.
        let path = dir.path().join("embeddings/abcdef0123456789-2-cpu.bin");
        let bytes = std::fs::read(&path).expect("read");
        std::fs::write(&path, &bytes[..bytes.len() - 1]).expect("write");
        assert!(EmbedCache::open(dir.path(), "abcdef0123456789ff", "cpu", 2).is_empty());
    }
}
