//! The `tree` call (the doc_id tree, folders with their file counts) and
//! pages of documents, each as the caller may see it.

use crate::access;
use crate::engine::Engine;
use crate::error::{SearchError, invalid};
use cairn_index::DocRecord;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use utoipa::ToSchema;

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
                doctype: Some(d.doctype),
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

/// Levels of the doc_id tree shown unless asked otherwise.
pub const DEFAULT_TREE_DEPTH: usize = 2;
/// Entries of the doc_id tree shown unless asked otherwise.
pub const DEFAULT_TREE_ENTRIES: usize = 500;

/// One node of the doc_id tree.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct TreeEntry {
    /// Path prefix (a folder) or doc_id (a file).
    pub path: String,
    /// `category`, `repo`, `folder` or `file`.
    pub kind: &'static str,
    /// Files only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    #[schemars(with = "Option<String>")]
    pub doctype: Option<cairn_index::Doctype>,
    /// Files only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<u32>,
    /// Folders: files below.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<usize>,
}

/// The tree listing.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct TreeResponse {
    /// Entries in path order.
    pub entries: Vec<TreeEntry>,
    /// More entries exist than were returned.
    pub truncated: bool,
    /// The version answering.
    pub index_version: String,
}

impl fmt::Display for TreeResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.entries {
            match (e.kind, e.files, e.lines) {
                ("file", _, Some(lines)) => writeln!(
                    f,
                    "{}  ({}, {lines} lines)",
                    e.path,
                    e.doctype.map_or("", |d| d.as_str())
                )?,
                (kind, Some(n), _) => writeln!(f, "{}/  ({kind}, {n} files)", e.path)?,
                _ => writeln!(f, "{}", e.path)?,
            }
        }
        if self.truncated {
            writeln!(f, "… (more entries; raise max_entries)")?;
        }
        Ok(())
    }
}
