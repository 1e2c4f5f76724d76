//! The `version` and `health` calls: the version served, each repository's
//! commit, and the counts a caller may see.

use crate::access;
use crate::engine::Engine;
use cairn_index::freshness::Freshness;
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

impl Engine {
    /// What is being served: the repositories the caller may see, with their commits.
    pub fn version(&self, groups: Option<&[String]>) -> VersionResponse {
        let m = &self.snap.manifest;
        // What `cairn watch` last saw of each remote, beside the versions.
        let fresh = cairn_index::freshness::read(self.root.path()).unwrap_or_default();
        VersionResponse {
            index_version: m.index_version.to_string(),
            built_at: m.built_at.clone(),
            builder_version: m.builder_version.clone(),
            model: m.model.id.clone(),
            model_weights_sha256: m.model.weights_sha256.clone(),
            repos: m
                .repos
                .iter()
                .filter(|r| access::visible_groups(&r.groups, groups))
                .map(|r| RepoVersion {
                    name: r.name.clone(),
                    default_branch: r.default_branch.clone(),
                    commit: r.commit.clone(),
                    toolkit: r.toolkit.clone(),
                    description: r.description.clone(),
                    stale: r.stale,
                    error: r.error.clone(),
                    ..freshness(&fresh, &r.name, r.commit.as_deref())
                })
                .collect(),
        }
    }

    /// Counts of what the caller may see, and whether vector search is on.
    pub fn health(&self, groups: Option<&[String]>) -> HealthResponse {
        let mut by_repo = BTreeMap::new();
        let mut by_doctype = BTreeMap::new();
        let mut visible = vec![false; self.snap.docs.len()];
        for (i, d) in self.snap.docs.iter().enumerate() {
            if access::visible(d, groups) {
                visible[i] = true;
                *by_repo.entry(d.repo.clone()).or_insert(0) += 1;
                *by_doctype.entry(d.doctype.to_string()).or_insert(0) += 1;
            }
        }
        let fresh = cairn_index::freshness::read(self.root.path()).unwrap_or_default();
        let commits_behind: BTreeMap<String, u64> = self
            .snap
            .manifest
            .repos
            .iter()
            .filter(|r| access::visible_groups(&r.groups, groups))
            .filter_map(|r| {
                let behind = freshness(&fresh, &r.name, r.commit.as_deref()).commits_behind?;
                (behind > 0).then(|| (r.name.clone(), behind))
            })
            .collect();
        HealthResponse {
            loaded: true,
            built_at: self.snap.manifest.built_at.clone(),
            checked_at: (!fresh.checked_at.is_empty()).then_some(fresh.checked_at),
            repos_behind: commits_behind.len(),
            commits_behind,
            index_version: self.snap.version.to_string(),
            vector_search: self.embedder.is_some(),
            docs_by_repo: by_repo,
            docs_by_doctype: by_doctype,
            chunks: self
                .snap
                .chunks
                .iter()
                .filter(|c| visible[c.doc as usize])
                .count(),
        }
    }
}

/// What `cairn watch`'s last poll saw of repository `name`: when its remote
/// was asked, the commit it offered, and how far behind it `commit` (the
/// served one) is, when the watcher measured that commit.
fn freshness(fresh: &Freshness, name: &str, commit: Option<&str>) -> RepoVersion {
    let seen = fresh.repos.iter().find(|r| r.name == name);
    RepoVersion {
        checked_at: seen.map(|r| r.checked_at.clone()),
        remote_head: seen.and_then(|r| r.remote_head.clone()),
        commits_behind: seen
            .filter(|r| r.indexed_commit.is_some() && r.indexed_commit.as_deref() == commit)
            .and_then(|r| r.commits_behind),
        ..RepoVersion::default()
    }
}

/// Per repository, in `version()`.
#[derive(Clone, Debug, Default, Serialize, ToSchema, schemars::JsonSchema)]
pub struct RepoVersion {
    /// Name.
    pub name: String,
    /// Default branch.
    pub default_branch: Option<String>,
    /// Commit indexed.
    pub commit: Option<String>,
    /// Toolkit (the `toolkit` filter's value).
    pub toolkit: String,
    /// What it is, from repositories.yml.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The last fetch failed; the commit is the one fetched before (see `error`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    /// Why the last fetch failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When `cairn watch` last asked the remote (RFC 3339); absent when no
    /// watch keeps this index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked_at: Option<String>,
    /// The commit the remote's indexed ref pointed at then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_head: Option<String>,
    /// How many commits `commit` is behind `remote_head` (0: fresh), when
    /// the watcher could count them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits_behind: Option<u64>,
}

/// What is being served.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct VersionResponse {
    /// The version.
    pub index_version: String,
    /// When it was built.
    pub built_at: String,
    /// Builder that wrote it.
    pub builder_version: String,
    /// Model id.
    pub model: String,
    /// Model weights digest.
    pub model_weights_sha256: String,
    /// Repositories.
    pub repos: Vec<RepoVersion>,
}

/// Health.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct HealthResponse {
    /// An index is loaded.
    pub loaded: bool,
    /// The version.
    pub index_version: String,
    /// Whether vector search is available (the model is loaded).
    pub vector_search: bool,
    /// Documents by repository.
    pub docs_by_repo: std::collections::BTreeMap<String, usize>,
    /// Documents by doctype.
    pub docs_by_doctype: std::collections::BTreeMap<String, usize>,
    /// Chunks.
    pub chunks: usize,
    /// When the version was built (RFC 3339).
    pub built_at: String,
    /// When `cairn watch` last asked the remotes (RFC 3339); absent when no
    /// watch keeps this index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked_at: Option<String>,
    /// How many of the repositories the caller sees are behind their remote.
    pub repos_behind: usize,
    /// Commits each of them is behind, where the watcher counted (named for
    /// a caller with credentials only, as `docs_by_repo`).
    pub commits_behind: std::collections::BTreeMap<String, u64>,
}
