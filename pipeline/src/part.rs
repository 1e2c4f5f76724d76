//! A partial build on disk: what one shard (`cairn build --shard I/N`)
//! synced, chunked and embedded, for `cairn build --merge` to publish.
//!
//! ```text
//! <part>/part.json     shard, config digest, settings, weights, model, and per
//!                      repository: its record, documents, skips and chunks
//! <part>/vectors.f32   every chunk's vector, in part order, little-endian f32
//! ```
//! A part holds the documents' text, so the merge needs neither git nor the model.

use crate::chunk::ChunkDraft;
use crate::config::{BuildSettings, PathWeights};
use crate::documents::{Skipped, SourceDoc};
use cairn_index::manifest::{ModelInfo, RepoRecord, SkipReason};
use cairn_index::{Doctype, Rows};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::path::{Path, PathBuf};

/// Bumped when the part layout changes; a merge refuses other versions.
pub const PART_FORMAT: u32 = 4;
const PART_JSON: &str = "part.json";
const PART_VECTORS: &str = "vectors.f32";

/// Why a part could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum PartError {
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The parts do not make up one build.
    #[error("{0}")]
    Mismatch(String),
}

/// Which slice of the repositories one machine builds: shard `index` of `count`, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// This shard, 1 to `count`.
    pub index: usize,
    /// How many shards there are.
    pub count: usize,
}

impl Shard {
    /// Parses `I/N` (1 ≤ I ≤ N).
    pub fn parse(s: &str) -> Result<Self, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("shard {s:?}: expected I/N, e.g. 2/4"))?;
        let (index, count) = (
            i.trim()
                .parse::<usize>()
                .map_err(|_| format!("shard {s:?}: I is not a number"))?,
            n.trim()
                .parse::<usize>()
                .map_err(|_| format!("shard {s:?}: N is not a number"))?,
        );
        if count == 0 || index == 0 || index > count {
            return Err(format!("shard {s:?}: need 1 ≤ I ≤ N"));
        }
        Ok(Self { index, count })
    }

    /// The repositories of `registry` this shard builds, in file order.
    pub fn select<'a>(
        &self,
        registry: &'a crate::config::Registry,
    ) -> Vec<&'a crate::config::RepoConfig> {
        registry
            .repos
            .iter()
            .filter(|r| self.takes(&format!("{}/{}", r.category, r.name)))
            .collect()
    }

    /// Whether the repository `<category>/<name>` belongs to this shard.
    ///
    /// By a hash of that name, not its position in repositories.yml: adding
    /// or removing a repository moves no other one to another shard, so
    /// every shard's embedding cache stays warm.
    pub fn takes(&self, repo: &str) -> bool {
        let digest = sha2::Sha256::digest(repo.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        // `count` ≥ 1 (parse refuses 0); the remainder fits usize.
        (u64::from_be_bytes(first) % self.count as u64) as usize == self.index - 1
    }
}

/// One document as a part stores it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartDoc {
    /// Path in the repository.
    pub path: String,
    /// The file's text.
    pub text: String,
    /// Its doctype.
    pub doctype: Doctype,
    /// The PDF its text came from, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdf: Option<cairn_index::PdfSource>,
}

/// One skipped file as a part stores it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartSkip {
    /// Path in the repository.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Why.
    pub reason: SkipReason,
}

/// One repository of a part.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartRepo {
    /// What the build recorded about it (branch, commit, error).
    pub record: RepoRecord,
    /// Its documents, in path order.
    pub docs: Vec<PartDoc>,
    /// Its skipped files.
    pub skipped: Vec<PartSkip>,
    /// Each document's chunks.
    pub chunks: Vec<Vec<ChunkDraft>>,
    /// Each document's definitions, found while it was chunked.
    pub definitions: Vec<Vec<crate::chunk::Definition>>,
    /// Its documents' line history, recorded where the mirror was.
    pub history: cairn_index::history::RepoHistory,
}

impl PartRepo {
    /// The documents as the builder handles them.
    pub fn source_docs(&self) -> Vec<SourceDoc> {
        self.docs
            .iter()
            .map(|d| SourceDoc {
                language: cairn_index::Language::of_path(&d.path),
                path: d.path.clone(),
                text: d.text.clone(),
                doctype: d.doctype,
                pdf: d.pdf.clone(),
            })
            .collect()
    }

    /// The skipped files as the builder handles them.
    pub fn skips(&self) -> Vec<Skipped> {
        self.skipped
            .iter()
            .map(|s| Skipped {
                path: s.path.clone(),
                size: s.size,
                reason: s.reason,
            })
            .collect()
    }
}

/// Embedding figures of a part, summed by the merge.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct PartStats {
    /// Chunks embedded.
    pub embedded: usize,
    /// Chunks from the cache.
    pub cached: usize,
    /// Tokens embedded.
    pub embedded_tokens: u64,
    /// Seconds in the model.
    pub embed_seconds: f64,
}

/// The part's manifest.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartManifest {
    /// [`PART_FORMAT`].
    pub format: u32,
    /// Which shard this is.
    pub shard: Shard,
    /// sha256 of repositories.yml's bytes: every part of a merge must share it.
    pub config_sha256: String,
    /// The builder's chunker version.
    pub chunker: u32,
    /// Build settings.
    pub settings: BuildSettings,
    /// Ranking weights.
    pub weights: PathWeights,
    /// The embedding model.
    pub model: ModelInfo,
    /// The repositories of this shard, in repositories.yml order.
    pub repos: Vec<PartRepo>,
    /// Embedding figures.
    pub stats: PartStats,
}

fn file_err(path: &Path, e: impl ToString) -> PartError {
    PartError::File {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

/// Writes a part: its manifest and every row's vector.
pub fn write(dir: &Path, manifest: &PartManifest, vectors: &Rows) -> Result<(), PartError> {
    std::fs::create_dir_all(dir).map_err(|e| file_err(dir, e))?;
    let json = dir.join(PART_JSON);
    let bytes = serde_json::to_vec(manifest).map_err(|e| file_err(&json, e))?;
    std::fs::write(&json, bytes).map_err(|e| file_err(&json, e))?;
    let vec_path = dir.join(PART_VECTORS);
    std::fs::write(&vec_path, vectors.to_le_bytes()).map_err(|e| file_err(&vec_path, e))
}

/// Reads a part back, checking its vectors against its chunks.
pub fn read(dir: &Path) -> Result<(PartManifest, Rows), PartError> {
    let json = dir.join(PART_JSON);
    let bytes = std::fs::read(&json).map_err(|e| file_err(&json, e))?;
    let manifest: PartManifest = serde_json::from_slice(&bytes).map_err(|e| file_err(&json, e))?;
    if manifest.format != PART_FORMAT {
        return Err(file_err(
            &json,
            format!(
                "part format {} (this cairn reads {PART_FORMAT}); rebuild the shard",
                manifest.format
            ),
        ));
    }
    // A part is input: each document must come with its chunks and its
    // definitions, or a merge would pair one document with another's.
    for r in &manifest.repos {
        let docs = r.docs.len();
        if r.chunks.len() != docs || r.definitions.len() != docs {
            return Err(file_err(
                &json,
                format!(
                    "repository {} lists {docs} documents but {} chunk lists and {} definition lists",
                    r.record.name,
                    r.chunks.len(),
                    r.definitions.len()
                ),
            ));
        }
    }
    let vec_path = dir.join(PART_VECTORS);
    let raw = std::fs::read(&vec_path).map_err(|e| file_err(&vec_path, e))?;
    let rows: usize = manifest
        .repos
        .iter()
        .flat_map(|r| r.chunks.iter().flatten())
        .map(ChunkDraft::embedded_rows)
        .sum();
    let vectors = Rows::from_le_bytes(&raw, rows, manifest.model.dim.max(1))
        .map_err(|e| file_err(&vec_path, format!("{e} (chunks and subchunks)")))?;
    Ok((manifest, vectors))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inserting a repository anywhere in repositories.yml moves no other
    /// repository to another shard (their caches stay warm).
    #[test]
    fn an_inserted_repository_moves_no_other() {
        let registry = |yml: &str| {
            crate::config::Registry::parse(Path::new("/x/repositories.yml"), yml).expect("registry")
        };
        let names = |yml: &str, shard: usize| -> Vec<String> {
            let r = registry(yml);
            Shard {
                index: shard,
                count: 3,
            }
            .select(&r)
            .iter()
            .map(|c| c.name.clone())
            .collect()
        };
        let repo = |n: &str| format!("  - name: {n}\n    url: https://github.com/x/{n}\n");
        let before = format!(
            "tools:\n{}{}{}{}",
            repo("emcee"),
            repo("corner"),
            repo("dynesty"),
            repo("pyLIMA")
        );
        let after = format!(
            "tools:\n{}{}{}{}{}",
            repo("aaa"),
            repo("emcee"),
            repo("corner"),
            repo("dynesty"),
            repo("pyLIMA")
        );
        for shard in 1..=3 {
            let mut grown = names(&after, shard);
            grown.retain(|n| n != "aaa");
            assert_eq!(names(&before, shard), grown, "shard {shard}");
        }
    }

    #[test]
    fn shards_split_the_repositories_without_overlap() {
        let shards: Vec<Shard> = (1..=3)
            .map(|i| Shard::parse(&format!("{i}/3")).expect("parse"))
            .collect();
        let names: Vec<String> = (0..40).map(|i| format!("cat/repo{i}")).collect();
        for name in &names {
            let owners = shards.iter().filter(|s| s.takes(name)).count();
            assert_eq!(owners, 1, "{name}");
        }
        // Every shard gets some of 40 repositories.
        assert!(shards.iter().all(|s| names.iter().any(|n| s.takes(n))));
        for bad in ["0/3", "4/3", "1/0", "x/2", "2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
