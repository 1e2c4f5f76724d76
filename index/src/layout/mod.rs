//! Where things live under an index root, and how a version is published.
//!
//! ```text
//! <root>/CURRENT                 the live version's name, replaced atomically
//! <root>/versions/<version>/     one immutable version (see docs/INDEX_FORMAT.md)
//! <root>/tmp/                    versions being written; never read
//! ```
//! A version is written under `tmp/`, fsynced, renamed into `versions/`
//! ([`VersionWriter::seal`]), and only then named in `CURRENT`
//! ([`IndexRoot::set_current`]). A process killed at any point leaves the
//! previous `CURRENT` naming a complete version.

mod fsync;
mod locate;
mod root;
mod writer;

pub use locate::{
    NoIndex, default_roots, find_root, holds_index, is_project, user_root, write_root,
};
pub use root::IndexRoot;
pub use writer::{VersionWriter, checksum_tree};

use crate::manifest::{FORMAT_VERSION, Manifest, OLDEST_READABLE_FORMAT};
use std::fs::{self};
use std::io;
use std::path::{Path, PathBuf};

/// Errors reading or writing the layout.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// A filesystem operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// No version has been published yet.
    #[error("{0}: no CURRENT file; build an index first with `cairn build`")]
    NoCurrent(PathBuf),
    /// CURRENT names something that is not a version.
    #[error("{path}: CURRENT does not name a valid version: {reason}")]
    BadCurrent {
        /// The CURRENT file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// manifest.json does not parse.
    #[error("{path}: invalid manifest: {source}")]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// manifest.json parses but holds a value no build writes.
    #[error("{path}: invalid manifest: {reason}")]
    ManifestValue {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The index was written by a newer cairn.
    #[error(
        "index format {found} is newer than this cairn reads (up to {supported}); upgrade cairn, or rebuild the index with this version"
    )]
    NewerFormat {
        /// Format of the index.
        found: u32,
        /// Newest format this build reads.
        supported: u32,
    },
    /// The index is older than this cairn still reads.
    #[error(
        "index format {found} is older than this cairn reads (from {oldest}); rebuild it with `cairn build`"
    )]
    OlderFormat {
        /// Format of the index.
        found: u32,
        /// Oldest format this build reads.
        oldest: u32,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> LayoutError + '_ {
    move |source| LayoutError::Io {
        path: path.to_owned(),
        source,
    }
}

/// File names inside a version folder.
pub mod files {
    /// The manifest.
    pub const MANIFEST: &str = "manifest.json";
    /// The doc registry: `[DocRecord]`.
    pub const DOCS: &str = "docs.json";
    /// Every doc's bytes, concatenated in registry order.
    pub const CONTENT: &str = "content.bin";
    /// The chunks: `[ChunkRecord]`.
    pub const CHUNKS: &str = "chunks.json";
    /// The vectors, `chunks × dim` little-endian f32.
    pub const VECTORS: &str = "vectors.f32";
    /// The subchunks: `[SubchunkRecord]`.
    pub const SUBCHUNKS: &str = "subchunks.json";
    /// The subchunk vectors, `subchunks × dim` little-endian f32.
    pub const SUBCHUNK_VECTORS: &str = "subchunks.f32";
    /// Search weights copied from weights.yaml.
    pub const WEIGHTS: &str = "weights.json";
    /// The tantivy index folder.
    pub const TANTIVY: &str = "tantivy";
    /// Which documents hold each trigram (format 5 on).
    pub const TRIGRAMS: &str = "trigrams.bin";
    /// What each document defines (format 5 on).
    pub const DEFINITIONS: &str = "definitions.json";
    /// Each line's last commit and each document's recent log (format 7 on).
    pub const HISTORY: &str = "history.json";
    /// The approximate index's partitions, when the version has one
    /// (`ann-<i>-chunks.ivf`, `ann-<i>-subchunks.ivf` each).
    pub const ANN: &str = crate::ann::PARTITIONS;
}

/// The folder of one version (published, or still being written).
#[derive(Clone, Debug)]
pub struct VersionDir {
    path: PathBuf,
}

impl VersionDir {
    /// A version folder anywhere (a scratch copy being checked).
    pub(crate) fn at(path: PathBuf) -> Self {
        Self { path }
    }

    /// The folder itself.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Path of a file of this version, by its name in [`files`].
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Reads and checks the manifest: parses, and refuses unreadable formats.
    pub fn read_manifest(&self) -> Result<Manifest, LayoutError> {
        let path = self.file(files::MANIFEST);
        let bytes = fs::read(&path).map_err(io_err(&path))?;
        parse_manifest(&bytes, &path)
    }
}

/// Parses a manifest read from `path` (a file, or a pack's entry), refusing
/// formats this build cannot read.
pub fn parse_manifest(bytes: &[u8], path: &Path) -> Result<Manifest, LayoutError> {
    // Check the format number before the full parse so a newer index gets
    // the upgrade advice rather than an unknown-field error.
    #[derive(serde::Deserialize)]
    struct Head {
        format_version: u32,
    }
    let manifest_error = |source| LayoutError::Manifest {
        path: path.to_owned(),
        source,
    };
    let head: Head = serde_json::from_slice(bytes).map_err(manifest_error)?;
    check_format(head.format_version)?;
    let manifest: Manifest = serde_json::from_slice(bytes).map_err(manifest_error)?;
    // Every size read from the vector files is a product with the dimension:
    // one no model has would overflow it (and a pack can say anything).
    if !(1..=MAX_DIM).contains(&manifest.model.dim) {
        return Err(LayoutError::ManifestValue {
            path: path.to_owned(),
            reason: format!(
                "model.dim is {}; it must be from 1 to {MAX_DIM}",
                manifest.model.dim
            ),
        });
    }
    Ok(manifest)
}

/// The largest embedding dimension a version may declare (MiniLM's is 384;
/// the largest embedders' are a few thousand).
pub const MAX_DIM: usize = 16_384;

/// Refuses formats this build cannot read.
pub fn check_format(found: u32) -> Result<(), LayoutError> {
    if found > FORMAT_VERSION {
        return Err(LayoutError::NewerFormat {
            found,
            supported: FORMAT_VERSION,
        });
    }
    if found < OLDEST_READABLE_FORMAT {
        return Err(LayoutError::OlderFormat {
            found,
            oldest: OLDEST_READABLE_FORMAT,
        });
    }
    Ok(())
}

/// Versions kept by default after a build or an adopted pack.
pub const DEFAULT_KEEP: usize = 3;

/// The index root used unless another is named.
pub const DEFAULT_ROOT: &str = ".cairn/index";

/// Scratch entries older than this are a dead writer's where the system
/// cannot say whether a process is alive (no `/proc`).
const STALE_SCRATCH: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Whether the writer that owns the scratch entry `name` (`what-PID-…`) may
/// still be running. Names without a process id belong to nobody.
fn owner_alive(name: &str, path: &Path) -> bool {
    let Some(pid) = name.split('-').nth(1).and_then(|p| p.parse::<u32>().ok()) else {
        return false;
    };
    if pid == std::process::id() {
        return true;
    }
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        return proc.join(pid.to_string()).exists();
    }
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age < STALE_SCRATCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Finding 10 of the third review: a writer dropped unsealed (a failed
    /// build) takes its scratch folder with it; a sealed one's is the version.
    #[test]
    fn an_unsealed_writer_leaves_no_scratch_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = IndexRoot::new(dir.path());
        let w = VersionWriter::create(&root).expect("writer");
        w.write_bytes("vectors.f32", &[0u8; 4096]).expect("write");
        w.write_json("docs.json", &vec!["a"; 10]).expect("json");
        let scratch = w.dir().path().to_owned();
        assert!(scratch.is_dir());
        drop(w);
        assert!(!scratch.exists(), "scratch folder left behind");
        let left: Vec<_> = fs::read_dir(root.tmp()).expect("tmp").collect();
        assert!(left.is_empty(), "{left:?}");
    }

    /// write_json streams the same bytes `to_vec_pretty` gives.
    #[test]
    fn json_is_written_as_pretty_json() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = IndexRoot::new(dir.path());
        let w = VersionWriter::create(&root).expect("writer");
        let value = serde_json::json!({"a": [1, 2, {"b": "c"}], "d": null});
        w.write_json("x.json", &value).expect("json");
        let got = fs::read(w.dir().file("x.json")).expect("read");
        assert_eq!(got, serde_json::to_vec_pretty(&value).expect("pretty"));
    }
}
