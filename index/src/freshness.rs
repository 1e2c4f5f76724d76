//! `freshness.json`: how far an index root is behind its remotes, beside its
//! versions (never inside one: versions are immutable, this is rewritten
//! after every poll of `cairn watch`). The builder writes it whole or not at
//! all; the server reads it to say, per repository, when its remote was
//! last asked and how many commits the indexed one is behind.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file's name in the index root.
pub const FRESHNESS_FILE: &str = "freshness.json";

/// What the last poll saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Freshness {
    /// When the poll ran (RFC 3339).
    pub checked_at: String,
    /// Each repository.
    pub repos: Vec<RepoFreshness>,
    /// The last build the watch ran, if it ran one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_build: Option<BuildRecord>,
}

/// One repository as the last poll saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoFreshness {
    /// Its name in repositories.yml.
    pub name: String,
    /// The ref it indexes, as the remote names it (`HEAD`: the default branch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracked_ref: Option<String>,
    /// The commit the remote's ref points at, when the poll could read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_head: Option<String>,
    /// The commit the live version indexes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexed_commit: Option<String>,
    /// Commits the remote's head is ahead of the indexed one, when the
    /// builder's mirror holds both (0: fresh).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits_behind: Option<u64>,
    /// When the remote was last asked (RFC 3339).
    pub checked_at: String,
    /// Why the remote could not be read, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Consecutive failures of its remote or its sync (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failures: u32,
    /// When a failing remote or sync is tried next (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_at: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One build a watch ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BuildRecord {
    /// When it finished (RFC 3339).
    pub at: String,
    /// The repositories whose ref moved (all of them on the first build).
    pub moved: Vec<String>,
    /// The version it published (or found already published).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_version: Option<String>,
    /// Texts embedded anew.
    pub embedded: usize,
    /// Its wall time, from the poll that started it.
    pub seconds: f64,
    /// Where the build's time went.
    #[serde(default)]
    pub stages: StageSeconds,
    /// Why it failed, when it did (the live version kept serving).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Seconds one build spent in each stage (the rest of its wall time is
/// reading the config and the lock).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageSeconds {
    /// Loading the embedding model.
    pub model: f64,
    /// Fetching each repository and reading its tree at the resolved commit.
    pub sync: f64,
    /// Chunking the documents.
    pub chunk: f64,
    /// Embedding what the cache lacks.
    pub embed: f64,
    /// Writing, sealing and publishing the version (or finding it unchanged).
    pub publish: f64,
}

/// The root's `freshness.json`, when there is one and it reads.
pub fn read(root: &Path) -> Option<Freshness> {
    serde_json::from_slice(&std::fs::read(root.join(FRESHNESS_FILE)).ok()?).ok()
}

/// Writes the root's `freshness.json` whole or not at all: a reader sees the
/// old file or the new one.
pub fn write(root: &Path, freshness: &Freshness) -> std::io::Result<()> {
    std::fs::create_dir_all(root)?;
    let tmp = root.join(format!("{FRESHNESS_FILE}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(freshness)?)?;
    std::fs::rename(&tmp, root.join(FRESHNESS_FILE))
}
