//! `history.json` (format 7 on): which commit last changed each line of
//! every indexed text document at the indexed commit (git's blame), the
//! document's most recent commits, and those commits' metadata once per
//! repository; recorded by the builder, which holds the mirrors, so the
//! server stays a static reader. Author e-mail addresses are never stored.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Characters of a commit's summary kept: one line, as `git log --oneline`
/// shows it (a message's first paragraph can be megabytes, and every
/// answer citing the commit's lines repeats it).
pub const MAX_SUMMARY_CHARS: usize = 200;
/// Characters of an author's name kept.
pub const MAX_AUTHOR_CHARS: usize = 100;
/// Characters of the other fields (a sha, a date) kept from a file.
const MAX_FIELD_CHARS: usize = 64;

/// One commit, as a history names it. Its text is bounded however it was
/// made: [`CommitInfo::new`] cuts it, and so does reading it from a file
/// (a version recorded before the bounds, or a build cache), so no answer
/// that cites a commit can grow with its message.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "UncheckedCommit")]
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

impl CommitInfo {
    /// A commit's description with each field cut to its bound: the
    /// summary to its first line and [`MAX_SUMMARY_CHARS`], the author to
    /// [`MAX_AUTHOR_CHARS`].
    pub fn new(sha: &str, author: &str, date: &str, summary: &str) -> Self {
        let first_line = summary.trim_start().lines().next().unwrap_or("");
        Self {
            sha: cut(sha, MAX_FIELD_CHARS),
            author: cut(author.trim(), MAX_AUTHOR_CHARS),
            date: cut(date, MAX_FIELD_CHARS),
            summary: cut(first_line.trim_end(), MAX_SUMMARY_CHARS),
        }
    }
}

/// A commit as a file spells it, before its bounds are applied.
#[derive(Deserialize)]
struct UncheckedCommit {
    #[serde(default)]
    sha: String,
    #[serde(default)]
    author: String,
    #[serde(default)]
    date: String,
    #[serde(default)]
    summary: String,
}

impl From<UncheckedCommit> for CommitInfo {
    fn from(c: UncheckedCommit) -> Self {
        Self::new(&c.sha, &c.author, &c.date, &c.summary)
    }
}

/// `text` cut to at most `max` characters, `…` marking a cut.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some(_) => {
            let keep: String = text.chars().take(max.saturating_sub(1)).collect();
            keep + "…"
        }
    }
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
    fn a_commit_is_one_short_line_however_it_is_made() {
        let long = format!("{}\nsecond line", "word ".repeat(4_000_000));
        let made = CommitInfo::new(&"a".repeat(40), &"N".repeat(1 << 20), "2026", &long);
        assert_eq!(made.summary.chars().count(), MAX_SUMMARY_CHARS);
        assert!(made.summary.ends_with('…') && !made.summary.contains('\n'));
        assert_eq!(made.author.chars().count(), MAX_AUTHOR_CHARS);
        assert_eq!(made.sha.len(), 40);
        // Read from a version written before the bounds: cut the same way.
        let file = serde_json::json!({"sha": "b".repeat(40), "author": "é".repeat(500),
            "date": "2026-01-01T00:00:00Z", "summary": format!("one\n{}", "x".repeat(9_000))});
        let read: CommitInfo = serde_json::from_value(file).expect("commit");
        assert_eq!(read.summary, "one");
        assert_eq!(read.author.chars().count(), MAX_AUTHOR_CHARS);
        // Short text is kept as it is.
        let short = CommitInfo::new("c", "Ann", "d", "Fix the fit\n\nBecause.");
        assert_eq!(
            (short.author.as_str(), short.summary.as_str()),
            ("Ann", "Fix the fit")
        );
    }

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
