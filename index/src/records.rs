//! What the index records about each document and chunk.

use crate::ids::{DocId, LineSpan};
use crate::language::Language;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What kind of document a file is; `code` means source files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Doctype {
    /// Source code (.py, .c, .cpp, .h, .f90, .rs, .js …).
    Code,
    /// Prose documentation (.md, .rst, .tex, .txt).
    Doc,
    /// A repository's or folder's README.
    Readme,
    /// A Jupyter notebook.
    Notebook,
    /// Example scripts and example folders.
    Example,
    /// Tests.
    Test,
    /// Configuration and build files (.yml, .toml, .cfg, .ini, setup.py …).
    Config,
    /// Articles: PDFs, LaTeX sources and BibTeX files, in a repository or
    /// listed under `articles:` in repositories.yml.
    Paper,
}

impl Doctype {
    /// Every doctype, in a stable order.
    pub const ALL: [Doctype; 8] = [
        Doctype::Code,
        Doctype::Doc,
        Doctype::Readme,
        Doctype::Notebook,
        Doctype::Example,
        Doctype::Test,
        Doctype::Config,
        Doctype::Paper,
    ];

    /// The lowercase name used in the API and filters.
    pub fn as_str(&self) -> &'static str {
        match self {
            Doctype::Code => "code",
            Doctype::Doc => "doc",
            Doctype::Readme => "readme",
            Doctype::Notebook => "notebook",
            Doctype::Example => "example",
            Doctype::Test => "test",
            Doctype::Config => "config",
            Doctype::Paper => "paper",
        }
    }

    /// Parses a filter value.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

impl fmt::Display for Doctype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One indexed file, as the doc registry (`docs.json`) lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocRecord {
    /// `<category>/<repo>/<path>`.
    pub doc_id: DocId,
    /// Category from repositories.yml.
    pub category: String,
    /// Repository name.
    pub repo: String,
    /// Toolkit (the repository name lowercased unless configured).
    pub toolkit: String,
    /// Path inside the repository.
    pub path: String,
    /// Kind of document.
    pub doctype: Doctype,
    /// Language, by extension (`python`, `cpp`, `markdown` …).
    pub language: Language,
    /// Size in bytes.
    pub size: u64,
    /// sha256 of the file's bytes at the commit.
    pub sha256: String,
    /// Number of lines.
    pub line_count: u32,
    /// Where its bytes start in the content store.
    pub content_offset: u64,
    /// Access groups; empty means public.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// For a document whose text was extracted from a PDF: the PDF and its pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdf: Option<PdfSource>,
}

/// The PDF a document's text was extracted from. The document's own `sha256`
/// and `size` are those of the extracted text (what the content store holds
/// and `verify` checks); these are the PDF's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PdfSource {
    /// sha256 of the PDF's bytes.
    pub sha256: String,
    /// Size of the PDF in bytes.
    pub size: u64,
    /// The first line of each page in the extracted text, page 1 first.
    pub page_starts: Vec<u32>,
}

impl PdfSource {
    /// The page holding `line`, and the line's number within that page (both 1-based).
    pub fn page_of(&self, line: u32) -> Option<(u32, u32)> {
        let i = self.page_starts.partition_point(|&s| s <= line);
        let start = *self.page_starts.get(i.checked_sub(1)?)?;
        Some((i as u32, line - start + 1))
    }

    /// Whether the page starts are a valid map of a text of `line_count` lines:
    /// page 1 starts at line 1 and every page starts after the one before.
    pub fn is_valid_for(&self, line_count: u32) -> bool {
        self.page_starts.first() == Some(&1)
            && self.page_starts.windows(2).all(|w| w[0] < w[1])
            && self
                .page_starts
                .last()
                .is_some_and(|&l| l <= line_count.max(1))
    }
}

/// One chunk: an exact line span of one document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkRecord {
    /// Position of the chunk's document in the registry.
    pub doc: u32,
    /// The lines of the raw file the chunk covers.
    pub span: LineSpan,
    /// Section title or definition name, if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// Number of model tokens the embedded text took (after truncation).
    pub tokens: u32,
}

/// One subchunk: a short window of a document, embedded on its own, that
/// votes for the chunk it overlaps most (a long chunk's vector blurs a
/// one-paragraph answer inside it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubchunkRecord {
    /// Row in chunks.json of the chunk it stands for.
    pub chunk: u32,
    /// The lines of the raw file it covers.
    pub span: LineSpan,
}
