//! cairn's on-disk index format, and the only code that knows paths inside a
//! version folder.
//!
//! What lives here: the identifiers ([`DocId`], [`LineSpan`], [`IndexVersion`]),
//! the [`LineIndex`] of a file, a notebook's cells mapped to its raw lines
//! ([`notebook`]), the [`Manifest`], the doc registry and chunk
//! and subchunk records, the tantivy schema and its code-aware analyzer, the flat vector
//! file and its one row order ([`rows`]), filling a version ([`builder`]) and
//! atomically publishing it ([`layout`]),
//! [`mod@verify`], and shipping a version as a checked pack ([`pack`]). It
//! knows nothing of git, HTTP or embedding models; the builder
//! (`cairn-pipeline`) and the server depend on it, never the reverse.

pub mod analyzer;
pub mod ann;
pub mod builder;
pub mod definitions;
pub mod freshness;
pub mod history;
pub mod ids;
pub mod language;
pub mod layout;
pub mod lines;
pub mod manifest;
pub mod notebook;
pub mod pack;
pub mod records;
pub mod rows;
pub mod schema;
pub mod snapshot;
pub mod trigrams;
pub mod vectors;
pub mod verify;
pub mod weights;

pub use builder::{NewChunk, VersionBuilder, WriteError};
pub use definitions::{DefKind, DefinitionRecord};
pub use ids::{DocId, IdError, IndexVersion, LineSpan};
pub use language::Language;
pub use layout::{IndexRoot, LayoutError, VersionWriter};
pub use lines::LineIndex;
pub use manifest::{FORMAT_VERSION, Manifest, OLDEST_READABLE_FORMAT};
pub use records::{ChunkRecord, DocRecord, Doctype, PdfSource, SubchunkRecord};
pub use rows::Rows;
pub use snapshot::{OpenError, Snapshot};
pub use verify::{VerifyReport, verify, verify_version};
pub use weights::PathWeights;

/// sha256 of `bytes` as lowercase hex: the one digest used across the format.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

/// sha256 (lowercase hex) and length of everything `reader` yields, read in
/// 64 KiB pieces: a file is hashed without ever being held in memory whole.
pub fn sha256_reader(mut reader: impl std::io::Read) -> std::io::Result<(String, u64)> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut len = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        h.update(&buf[..n]);
        len += n as u64;
    }
    Ok((hex::encode(h.finalize()), len))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// Peak resident memory of this process, in bytes.
    fn peak_rss() -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            })
            .map_or(0, |kb| kb * 1024)
    }

    /// Files are hashed in pieces (what verification, packing and sealing
    /// use): a 512 MiB file moves the peak by far less than its size.
    #[test]
    fn files_are_hashed_without_being_held_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big");
        let size = 512u64 << 20;
        std::fs::File::create(&path)
            .and_then(|f| f.set_len(size))
            .expect("sparse file");
        let before = peak_rss();
        let (sha, len) = std::fs::File::open(&path)
            .and_then(super::sha256_reader)
            .expect("hash");
        let after = peak_rss();
        assert_eq!(len, size);
        assert_eq!(sha.len(), 64);
        assert!(after < before + (64 << 20), "peak grew {before} -> {after}");
    }
}
