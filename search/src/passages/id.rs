//! The id of a cited passage: which lines of which document, at which index
//! version. Search results carry it, `fetch` takes it back, so a passage
//! cited before a hot swap is still read from the version that was cited
//! (or refused as gone), never silently from newer lines.
//!
//! Its text form is `<index_version>/<doc_id>#L<start>-L<end>`: readable,
//! and unambiguous because the version has a fixed length and the span is
//! the last `#L` (a path may itself hold `#`).

use crate::passages::Hit;
use cairn_index::{DocId, IndexVersion, LineSpan};
use serde::Serialize;
use std::fmt;
use utoipa::ToSchema;

/// Lines of one document at one index version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassageId {
    /// The version the lines were cited from.
    pub version: IndexVersion,
    /// The document.
    pub doc_id: DocId,
    /// The lines.
    pub span: LineSpan,
}

/// Why a passage id was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("expected <index_version>/<doc_id>#L<start>-L<end> (as search results give it): {0}")]
pub struct PassageIdError(String);

impl PassageId {
    /// Parses the text form, validating each part.
    pub fn parse(s: &str) -> Result<Self, PassageIdError> {
        let err = |why: &str| PassageIdError(why.to_owned());
        let (version, rest) = s.split_once('/').ok_or_else(|| err("no `/`"))?;
        let version = IndexVersion::parse(version).map_err(|e| err(&e.to_string()))?;
        let (doc, lines) = rest.rsplit_once("#L").ok_or_else(|| err("no `#L`"))?;
        let (start, end) = lines.split_once("-L").ok_or_else(|| err("no `-L`"))?;
        let number = |n: &str| {
            // Digits only: `+3` or ` 3` would parse but never names a span we gave out.
            match n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() && n.len() <= 10 {
                true => n.parse::<i64>().map_err(|e| err(&e.to_string())),
                false => Err(err("line numbers are digits")),
            }
        };
        let span = LineSpan::new(number(start)?, number(end)?).map_err(|e| err(&e.to_string()))?;
        let doc_id = DocId::parse(doc).map_err(|e| err(&e.to_string()))?;
        Ok(Self {
            version,
            doc_id,
            span,
        })
    }
}

impl fmt::Display for PassageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_id(f, &self.version, &self.doc_id, self.span)
    }
}

/// The one writer of the text form, for typed ids and for hits' fields.
fn write_id(
    f: &mut impl fmt::Write,
    version: &dyn fmt::Display,
    doc_id: &dyn fmt::Display,
    span: LineSpan,
) -> fmt::Result {
    write!(f, "{version}/{doc_id}#{span}")
}

/// `emcee: src/emcee/ensemble.py, lines 10-40 (run_mcmc)`: a passage named
/// for a person choosing which citation to open.
pub fn title(doc_id: &str, span: LineSpan, section: &str) -> String {
    let mut parts = doc_id.splitn(3, '/');
    let (_, repo, path) = (parts.next(), parts.next(), parts.next());
    let place = match (repo, path) {
        (Some(repo), Some(path)) => format!("{repo}: {path}"),
        _ => doc_id.to_owned(),
    };
    let lines = format!("{place}, lines {}-{}", span.start, span.end);
    match section.trim() {
        "" => lines,
        s => format!("{lines} ({s})"),
    }
}

/// One search result as a connector that shows only an id, a title and a
/// link reads it (ChatGPT's `search` contract): `fetch` takes the id back.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct CitationLink {
    /// The passage id (`<index_version>/<doc_id>#L<start>-L<end>`), for `fetch`.
    pub id: String,
    /// Repository, path, lines and section.
    pub title: String,
    /// The permalink: the lines on the indexed commit.
    pub url: String,
}

impl Hit {
    /// The id naming this hit's lines at the version that found them.
    pub fn passage_id(&self) -> String {
        let mut s = String::new();
        let span = LineSpan {
            start: self.start_line,
            end: self.end_line,
        };
        // Writing to a String cannot fail.
        let _ = write_id(&mut s, &self.index_version, &self.doc_id, span);
        s
    }

    /// The hit as a citation link.
    pub fn citation(&self) -> CitationLink {
        let span = LineSpan {
            start: self.start_line,
            end: self.end_line,
        };
        CitationLink {
            id: self.passage_id(),
            title: title(&self.doc_id, span, &self.title),
            url: self.permalink.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_back_and_bad_ones_are_refused() {
        let id = PassageId {
            version: IndexVersion::parse("0123456789abcdef").expect("version"),
            doc_id: DocId::parse("cat/repo/docs/a #L1-L2.md").expect("doc"),
            span: LineSpan::new(3, 9).expect("span"),
        };
        let text = id.to_string();
        assert_eq!(text, "0123456789abcdef/cat/repo/docs/a #L1-L2.md#L3-L9");
        assert_eq!(PassageId::parse(&text), Ok(id));
        for bad in [
            "",
            "0123456789abcdef",
            "0123456789ABCDEF/cat/repo/a.py#L1-L2",
            "0123456789abcdef/cat/repo/a.py",
            "0123456789abcdef/cat/repo/a.py#L2-L1",
            "0123456789abcdef/cat/repo/a.py#L0-L1",
            "0123456789abcdef/cat/repo/a.py#L+1-L2",
            "0123456789abcdef/cat/repo/a.py#L1-L99999999999",
            "0123456789abcdef/../etc/passwd#L1-L2",
        ] {
            assert!(PassageId::parse(bad).is_err(), "{bad:?}");
        }
    }
}
