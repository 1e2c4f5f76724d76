//! `history.json` (format 7 on): which commit last changed each line of
//! every indexed text document at the indexed commit (git's blame), the
//! document's most recent commits, and those commits' metadata once per
//! repository; recorded by the builder, which holds the mirrors, so the
//! server stays a static reader. Author e-mail addresses are never stored.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One commit, as a history names it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitInfo {
    /// Its full sha.
    pub sha: String,
    /// Its author's name.
    pub author: String,
    /// When it was authored (RFC 3339, UTC).
    pub date: String,
    /// Its summary line.
    pub summary: String,
}

/// One document's history.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocHistory {
    /// Runs of lines last changed by one commit: `[first line, lines,
    /// commit]`, the commit an index into its repository's `commits`, in
    /// line order, covering the document.
    pub blame: Vec<[u32; 3]>,
    /// Its most recent commits, newest first (indexes into `commits`).
    pub log: Vec<u32>,
    /// Where its repository is indexed at other refs: by the other ref's
    /// repository name, the runs of its lines found unchanged there,
    /// `[first line here, lines, first line there]`, in line order. A ref
    /// listed in `other_refs` but absent here lacks the document.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub at_refs: BTreeMap<String, Vec<[u32; 3]>>,
}

impl DocHistory {
    /// The commit (index) that last changed `line`, if recorded.
    pub fn commit_of(&self, line: u32) -> Option<u32> {
        self.blame
            .iter()
            .find(|[start, n, _]| (*start..start.saturating_add(*n)).contains(&line))
            .map(|r| r[2])
    }
}

/// One repository's part of a history.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoHistory {
    /// The commits its documents name.
    pub commits: Vec<CommitInfo>,
    /// Each document's history, by path.
    pub docs: BTreeMap<String, DocHistory>,
    /// Documents whose history was not recorded, and why (the time budget,
    /// an error).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, String>,
    /// Where a shallow mirror's history is cut: lines older than this
    /// commit are credited to it (as git blame's boundary `^sha`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boundary: Option<String>,
    /// The same repository's other indexed refs (their repository names),
    /// which each document's `at_refs` is compared with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_refs: Vec<String>,
}

/// A version's history: each repository's, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// By repository name.
    pub repos: BTreeMap<String, RepoHistory>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_finds_the_run_that_holds_it() {
        let h = DocHistory {
            blame: vec![[1, 3, 0], [4, 1, 2], [5, 10, 1]],
            log: vec![2, 1, 0],
            ..DocHistory::default()
        };
        assert_eq!(h.commit_of(1), Some(0));
        assert_eq!(h.commit_of(3), Some(0));
        assert_eq!(h.commit_of(4), Some(2));
        assert_eq!(h.commit_of(14), Some(1));
        assert_eq!(h.commit_of(15), None);
    }
}
