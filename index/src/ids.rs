//! Identifiers that carry meaning: documents, line spans and index versions.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why an identifier was rejected.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum IdError {
    /// A doc id that could name something outside the index.
    #[error("invalid doc_id {id:?}: {reason}")]
    DocId {
        /// The rejected id.
        id: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A line span that is empty, reversed or zero-based.
    #[error("invalid line span {start}..{end}: {reason}")]
    Span {
        /// First line asked for.
        start: i64,
        /// Last line asked for.
        end: i64,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An index version that is not a short lowercase hex hash.
    #[error("invalid index version {0:?}")]
    Version(String),
}

/// `<category>/<repo>/<path in repo>`: an id, never a filesystem path.
///
/// Parsing rejects every form that could escape the index (`..`, absolute
/// paths, backslashes, percent-encoding, control characters), so code that
/// holds a `DocId` never has to re-check.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DocId(String);

impl DocId {
    /// Builds an id from its three parts, validating the result.
    pub fn new(category: &str, repo: &str, path: &str) -> Result<Self, IdError> {
        Self::parse(&format!("{category}/{repo}/{path}"))
    }

    /// Validates a client- or file-supplied id.
    pub fn parse(id: &str) -> Result<Self, IdError> {
        let bad = |reason| {
            Err(IdError::DocId {
                id: id.chars().take(200).collect(),
                reason,
            })
        };
        if id.is_empty() || id.len() > 1024 {
            return bad("must be 1 to 1024 bytes long");
        }
        if id.starts_with('/') {
            return bad("must not be absolute");
        }
        if id.contains('\\') {
            return bad("must not contain a backslash");
        }
        if id.contains('%') {
            return bad("must not be percent-encoded");
        }
        if id.chars().any(char::is_control) {
            return bad("must not contain control characters");
        }
        let parts: Vec<&str> = id.split('/').collect();
        if parts.len() < 3 {
            return bad("must be <category>/<repo>/<path>");
        }
        if parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == "..")
        {
            return bad("must not contain empty, '.' or '..' segments");
        }
        Ok(Self(id.to_owned()))
    }

    /// The whole id.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The category segment.
    pub fn category(&self) -> &str {
        self.0.split('/').next().unwrap_or_default()
    }

    /// The repository segment.
    pub fn repo(&self) -> &str {
        self.0.split('/').nth(1).unwrap_or_default()
    }

    /// The path inside the repository.
    pub fn path(&self) -> &str {
        self.0.splitn(3, '/').nth(2).unwrap_or_default()
    }
}

impl TryFrom<String> for DocId {
    type Error = IdError;
    fn try_from(s: String) -> Result<Self, IdError> {
        Self::parse(&s)
    }
}

impl From<DocId> for String {
    fn from(d: DocId) -> String {
        d.0
    }
}

impl fmt::Display for DocId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Lines `start..=end` of a file: 1-based and inclusive, as GitHub's `#L3-L9`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LineSpan {
    /// First line, 1-based.
    pub start: u32,
    /// Last line, inclusive.
    pub end: u32,
}

impl LineSpan {
    /// A span from untrusted numbers: rejects zero, negative and reversed spans.
    pub fn new(start: i64, end: i64) -> Result<Self, IdError> {
        let bad = |reason| Err(IdError::Span { start, end, reason });
        if start < 1 || end < 1 {
            return bad("lines are 1-based");
        }
        if start > end {
            return bad("start is after end");
        }
        match (u32::try_from(start), u32::try_from(end)) {
            (Ok(start), Ok(end)) => Ok(Self { start, end }),
            _ => bad("line number too large"),
        }
    }

    /// Number of lines in the span.
    pub fn len(&self) -> u32 {
        self.end - self.start + 1
    }

    /// Spans always hold at least one line.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether the two spans share at least one line.
    pub fn overlaps(&self, other: &LineSpan) -> bool {
        self.shared_lines(other) > 0
    }

    /// How many lines the two spans share (0 when they are apart).
    pub fn shared_lines(&self, other: &LineSpan) -> u32 {
        (self.end.min(other.end) + 1).saturating_sub(self.start.max(other.start))
    }

    /// Whether every line of `other` lies within this span.
    pub fn contains_span(&self, other: &LineSpan) -> bool {
        self.start <= other.start && other.end <= self.end
    }

    /// The smallest span covering both.
    pub fn union(&self, other: &LineSpan) -> LineSpan {
        LineSpan {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

impl fmt::Display for LineSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L{}-L{}", self.start, self.end)
    }
}

/// Short content hash naming one immutable index version.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct IndexVersion(String);

impl IndexVersion {
    /// Length in hex characters.
    pub const LEN: usize = 16;

    /// Derives the version from a full sha256 hex digest.
    pub fn from_digest(hex: &str) -> Self {
        Self(hex.chars().take(Self::LEN).collect())
    }

    /// Validates a version read from disk or a client.
    pub fn parse(s: &str) -> Result<Self, IdError> {
        let ok = s.len() == Self::LEN && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if ok {
            Ok(Self(s.to_owned()))
        } else {
            Err(IdError::Version(s.chars().take(64).collect()))
        }
    }

    /// The version as text, also the name of its folder.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for IndexVersion {
    type Error = IdError;
    fn try_from(s: String) -> Result<Self, IdError> {
        Self::parse(&s)
    }
}

impl From<IndexVersion> for String {
    fn from(v: IndexVersion) -> String {
        v.0
    }
}

impl fmt::Display for IndexVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_id_parts() {
        let d = DocId::parse("cat/repo/a/b.py").expect("valid");
        assert_eq!(
            (d.category(), d.repo(), d.path()),
            ("cat", "repo", "a/b.py")
        );
    }

    #[test]
    fn doc_id_rejects_traversal() {
        for bad in [
            "../etc/passwd",
            "cat/repo/../x",
            "/cat/repo/x",
            "cat\\repo\\x",
            "cat/repo/%2e%2e/x",
            "cat/repo",
            "cat//x",
            "cat/repo/./x",
            "cat/repo/x\0",
            "",
        ] {
            assert!(DocId::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn spans_validate() {
        assert!(LineSpan::new(0, 3).is_err());
        assert!(LineSpan::new(-1, 3).is_err());
        assert!(LineSpan::new(5, 3).is_err());
        let s = LineSpan::new(3, 5).expect("valid");
        assert_eq!(s.len(), 3);
        assert!(s.overlaps(&LineSpan { start: 5, end: 9 }));
        assert!(!s.overlaps(&LineSpan { start: 6, end: 9 }));
        assert_eq!(s.shared_lines(&LineSpan { start: 4, end: 9 }), 2);
        assert_eq!(s.shared_lines(&LineSpan { start: 7, end: 9 }), 0);
        assert_eq!(s.shared_lines(&s), s.len());
    }

    #[test]
    fn versions_validate() {
        assert!(IndexVersion::parse("0123456789abcdef").is_ok());
        assert!(IndexVersion::parse("../../etc").is_err());
        assert!(IndexVersion::parse("0123456789ABCDEF").is_err());
    }
}
