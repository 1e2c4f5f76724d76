//! What is indexed: the doc_id tree, the version served, health counts,
//! and pages of documents, each as the caller may see it.

use super::*;

impl Engine {
    /// The doc_id hierarchy below `prefix`, `depth` levels deep, at most `max_entries` entries.
    pub fn tree(
        &self,
        prefix: &str,
        depth: usize,
        max_entries: usize,
        groups: Option<&[String]>,
    ) -> Result<TreeResponse, SearchError> {
        let prefix = prefix.trim_matches('/');
        if prefix.contains("..") || prefix.contains('\\') || prefix.contains('%') {
            return Err(invalid("prefix", "must be a doc_id prefix"));
        }
        let base = if prefix.is_empty() {
            0
        } else {
            prefix.split('/').count()
        };
        let mut folders: BTreeMap<String, usize> = BTreeMap::new();
        let mut files = Vec::new();
        for (i, d) in self.snap.docs.iter().enumerate() {
            let id = d.doc_id.as_str();
            let under = prefix.is_empty() || id == prefix || id.starts_with(&format!("{prefix}/"));
            if !under || !access::visible(d, groups) {
                continue;
            }
            let parts: Vec<&str> = id.split('/').collect();
            // A request's depth may be any number: saturating, never wrapping.
            for level in base + 1..parts.len().min(base.saturating_add(depth.max(1))) + 1 {
                if level < parts.len() {
                    *folders.entry(parts[..level].join("/")).or_insert(0) += 1;
                } else {
                    files.push(i);
                }
            }
        }
        let mut entries: Vec<TreeEntry> = folders
            .into_iter()
            .map(|(path, n)| {
                let kind = match path.split('/').count() {
                    1 => "category",
                    2 => "repo",
                    _ => "folder",
                };
                TreeEntry {
                    path,
                    kind,
                    doctype: None,
                    lines: None,
                    files: Some(n),
                }
            })
            .collect();
        entries.extend(files.into_iter().map(|i| {
            let d = &self.snap.docs[i];
            TreeEntry {
                path: d.doc_id.to_string(),
                kind: "file",
                doctype: Some(d.doctype.to_string()),
                lines: Some(d.line_count),
                files: None,
            }
        }));
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let max = max_entries.clamp(1, 5000);
        let truncated = entries.len() > max;
        entries.truncate(max);
        Ok(TreeResponse {
            entries,
            truncated,
            index_version: self.snap.version.to_string(),
        })
    }

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

    /// Up to `n` of the documents a caller with `groups` may see, from the
    /// `cursor`-th on, in doc_id order, and the cursor of the next page.
    pub fn documents(
        &self,
        groups: Option<&[String]>,
        cursor: usize,
        n: usize,
    ) -> (Vec<&DocRecord>, Option<usize>) {
        let mut visible = self
            .snap
            .docs
            .iter()
            .filter(|d| access::visible(d, groups))
            .skip(cursor);
        let page: Vec<&DocRecord> = visible.by_ref().take(n).collect();
        let next = visible.next().map(|_| cursor + page.len());
        (page, next)
    }
}
