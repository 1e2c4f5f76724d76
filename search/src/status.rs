//! The `version` and `health` calls: the version served, each repository's
//! commit, and the counts a caller may see.

use crate::access;
use crate::engine::Engine;
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

impl Engine {
    /// What is being served: the repositories the caller may see, with their commits.
    pub fn version(&self, groups: Option<&[String]>) -> VersionResponse {
        let m = &self.snap.manifest;
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
        HealthResponse {
            loaded: true,
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

/// Per repository, in `version()`.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
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
}
