//! `manifest.json`: what a version holds, where it came from, and its checksums.

use crate::ids::IndexVersion;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The format this code writes (5: `trigrams.bin`, `definitions.json`; 7: `history.json`).
pub const FORMAT_VERSION: u32 = 7;
/// The first format with `trigrams.bin` and `definitions.json`.
pub const TRIGRAMS_SINCE: u32 = 5;
/// The first format with `history.json`.
pub const HISTORY_SINCE: u32 = 7;
/// The oldest format this code can still read.
pub const OLDEST_READABLE_FORMAT: u32 = 3;

/// The manifest of one index version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// On-disk format version ([`FORMAT_VERSION`] when written by this build).
    pub format_version: u32,
    /// Hash over the registry, the output-affecting config and the model.
    pub index_version: IndexVersion,
    /// RFC 3339 UTC time the build finished.
    pub built_at: String,
    /// `cairn <version>` that wrote it.
    pub builder_version: String,
    /// The embedding model.
    pub model: ModelInfo,
    /// Every repository of the config, built or failed.
    pub repos: Vec<RepoRecord>,
    /// Totals.
    pub counts: Counts,
    /// Every file that was not indexed, with the reason.
    pub skipped: Vec<SkipRecord>,
    /// sha256 and size of every other file of the version, by relative path.
    pub files: BTreeMap<String, FileRecord>,
}

impl Manifest {
    /// When the version was built, for ordering versions by age (`None`: the
    /// time does not parse, which orders before every real time). RFC 3339
    /// texts do not order as strings once their fractions differ in length.
    pub fn built_time(&self) -> Option<time::OffsetDateTime> {
        parse_built_at(&self.built_at)
    }
}

fn parse_built_at(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

/// The embedding model a version was built with; queries must use the same.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// Hub id, e.g. `sentence-transformers/all-MiniLM-L6-v2`.
    pub id: String,
    /// Hub revision, or `local` for a model directory.
    pub revision: String,
    /// Vector dimension.
    pub dim: usize,
    /// Maximum tokens per embedded text.
    pub max_tokens: usize,
    /// sha256 of the weights file.
    pub weights_sha256: String,
}

/// Where one repository's documents came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoRecord {
    /// Repository name.
    pub name: String,
    /// Category.
    pub category: String,
    /// Toolkit.
    pub toolkit: String,
    /// Clone URL as configured (secrets never appear: only URLs from the config).
    pub url: String,
    /// Where citations link.
    pub web_url: String,
    /// The remote's default branch, as its HEAD says.
    pub default_branch: Option<String>,
    /// The configured pin, if any.
    #[serde(rename = "ref")]
    pub pin: Option<String>,
    /// The commit whose tree was read.
    pub commit: Option<String>,
    /// Access groups; empty means public.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Documents indexed from it.
    pub docs: usize,
    /// Set when the repository failed and `--keep-going` built the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The fetch failed (`error` says why) and `--keep-going` indexed the
    /// commit the build cache already held, the last one fetched, instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    /// What the repository is, from repositories.yml.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Set when this entry is an article from repositories.yml's `articles:`
    /// rather than a git repository: `url` is then the PDF fetched and
    /// `web_url` the article's landing page (arXiv abstract, DOI).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub article: bool,
}

/// Totals of a version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Documents indexed.
    pub docs: usize,
    /// Chunks indexed.
    pub chunks: usize,
    /// Subchunks embedded (short windows voting for chunks).
    pub subchunks: usize,
    /// Files skipped, all reasons.
    pub skipped: usize,
    /// Documents by doctype.
    pub docs_by_doctype: BTreeMap<String, usize>,
    /// Skipped files by reason.
    pub skipped_by_reason: BTreeMap<String, usize>,
    /// Tokens embedded over all chunks.
    pub tokens: u64,
}

/// A file that was not indexed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkipRecord {
    /// `<category>/<repo>/<path>` (not validated as a [`crate::DocId`]: it was never indexed).
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Why it was skipped.
    pub reason: SkipReason,
}

/// Why a file was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// Contains NUL bytes or is a known binary format.
    Binary,
    /// Not valid UTF-8.
    NonUtf8,
    /// Over the configured size cap.
    TooLarge,
    /// A git-LFS pointer, not the content.
    LfsPointer,
    /// Minified code (very long lines).
    Minified,
    /// Third-party code copied into the repository.
    Vendored,
    /// Mostly numbers: data tables, not text anyone asks about.
    NumericData,
    /// Matched an `exclude` glob or missed every `include` glob.
    Excluded,
    /// Output of a documentation generator, or a copied-in web or LaTeX asset.
    Generated,
    /// Empty file.
    Empty,
    /// A submodule or symlink: no content at this commit.
    NotAFile,
    /// A file or folder name that is not UTF-8 (it could not be a doc_id).
    NonUtf8Path,
    /// A PDF that needs a password.
    Encrypted,
    /// A PDF whose structure could not be read (corrupt or truncated).
    Unreadable,
    /// A PDF with no extractable text (scanned pages, figures only).
    NoText,
    /// A PDF whose text took longer than the build's limit to extract.
    ExtractTimeout,
    /// A PDF left unread, or cut off, because its repository's PDFs had
    /// used the build's time for them (`pdf_repo_seconds`).
    PdfBudget,
    /// A bibliography entry's link answered with something other than a PDF.
    NotAPdf,
    /// An article left unfetched because the articles' downloads had used
    /// the build's time for them (`articles_fetch_seconds`).
    FetchBudget,
    /// A path whose doc id would be over 1,024 bytes, or that a doc id
    /// cannot hold (a backslash, `%`, a control character); a folder's
    /// whole subtree when its own path is already too long.
    InvalidPath,
    /// A folder nested deeper than the walk descends (`MAX_TREE_DEPTH`).
    TooDeep,
    /// A file past the repository's `max_files`.
    TooManyFiles,
}

impl SkipReason {
    /// The kebab-case name used in manifests and reports.
    pub fn as_str(&self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::NonUtf8 => "non-utf8",
            SkipReason::TooLarge => "too-large",
            SkipReason::LfsPointer => "lfs-pointer",
            SkipReason::Minified => "minified",
            SkipReason::Vendored => "vendored",
            SkipReason::NumericData => "numeric-data",
            SkipReason::Excluded => "excluded",
            SkipReason::Generated => "generated",
            SkipReason::Empty => "empty",
            SkipReason::NotAFile => "not-a-file",
            SkipReason::NonUtf8Path => "non-utf8-path",
            SkipReason::Encrypted => "encrypted",
            SkipReason::Unreadable => "unreadable",
            SkipReason::NoText => "no-text",
            SkipReason::ExtractTimeout => "extract-timeout",
            SkipReason::PdfBudget => "pdf-budget",
            SkipReason::NotAPdf => "not-a-pdf",
            SkipReason::FetchBudget => "fetch-budget",
            SkipReason::InvalidPath => "invalid-path",
            SkipReason::TooDeep => "too-deep",
            SkipReason::TooManyFiles => "too-many-files",
        }
    }
}

/// Checksum of one file of a version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// sha256 of the file's bytes.
    pub sha256: String,
    /// Size in bytes.
    pub size: u64,
}

#[cfg(test)]
mod tests {
    use super::parse_built_at;

    /// Build times compare as times: `….5Z` is later than `….4999Z`, and
    /// earlier than `….5000001Z`, although the strings order otherwise.
    #[test]
    fn build_times_order_as_times_not_strings() {
        let t = |s| parse_built_at(s).expect(s);
        assert!(t("2026-11-23T13:58:09.5Z") < t("2026-11-23T13:58:09.5000001Z"));
        assert!("2026-11-23T13:58:09.5Z" > "2026-11-23T13:58:09.5000001Z");
        assert!(t("2026-11-23T13:58:09Z") < t("2026-11-23T13:58:09.1Z"));
        assert!("2026-11-23T13:58:09Z" > "2026-11-23T13:58:09.1Z");
        assert!(parse_built_at("yesterday").is_none());
    }
}
