//! One entry of repositories.yml: its raw form as read ([`RawRepo`]), the
//! config it is validated into ([`RepoConfig`], for a repository or an
//! article), and the one rule every name segment follows. The validating
//! is `validate` (repositories) and `articles` (articles).

use super::error::{ConfigError, at};
use globset::GlobSet;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::path::{Path, PathBuf};

/// One repository to index, validated.
#[derive(Clone, Debug)]
pub struct RepoConfig {
    /// Category (the top-level key).
    pub category: String,
    /// Repository name, unique across the file.
    pub name: String,
    /// Clone URL as written in the file.
    pub url: String,
    /// What git2 is given: the URL, or a local path resolved against the file's folder.
    pub fetch_url: String,
    /// Where citations link: `https://github.com/owner/repo`.
    pub web_url: String,
    /// Branch, tag or full commit sha to pin; the remote's default branch when absent.
    pub pin: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// The environment variable holding an HTTPS token for a private repository
    /// (the token itself never appears in the file).
    pub token_env: Option<String>,
    /// Toolkit used for filtering (the name lowercased by default).
    pub toolkit: String,
    /// Only paths matching one of these are indexed (all when empty).
    pub include: Vec<String>,
    /// Paths matching one of these are skipped.
    pub exclude: Vec<String>,
    /// Access groups (the repo's own, else its category's); empty means public.
    pub groups: Vec<String>,
    /// Set for an article from `articles:`: a PDF fetched as one document, not a git repository.
    pub article: Option<ArticleSpec>,
    pub(super) include_set: Option<GlobSet>,
    pub(super) exclude_set: GlobSet,
}

/// What an article's config holds beyond its category and name.
pub(crate) struct ArticleParts {
    pub(crate) url: String,
    pub(crate) fetch_url: String,
    pub(crate) web_url: String,
    pub(crate) toolkit: String,
    pub(crate) groups: Vec<String>,
    pub(crate) description: Option<String>,
    pub(crate) spec: ArticleSpec,
}

impl RepoConfig {
    /// The config of an article listed under `articles:`.
    pub(crate) fn article(category: &str, name: &str, parts: ArticleParts) -> Self {
        Self {
            category: category.to_owned(),
            name: name.to_owned(),
            url: parts.url,
            fetch_url: parts.fetch_url,
            web_url: parts.web_url,
            pin: None,
            description: parts.description,
            token_env: None,
            toolkit: parts.toolkit,
            include: Vec::new(),
            exclude: Vec::new(),
            groups: parts.groups,
            article: Some(parts.spec),
            include_set: None,
            exclude_set: GlobSet::empty(),
        }
    }

    /// The same repository at another ref, indexed as its own documents:
    /// `<category>/<name>@<ref>/<path>` (a name holds no `@`, so the ids stay apart).
    pub fn at_ref(&self, r: &str) -> Self {
        Self {
            name: format!("{}@{r}", self.name),
            pin: Some(r.to_owned()),
            ..self.clone()
        }
    }

    /// The repository's own name (without `@ref`): what its git cache is named by.
    pub fn base_name(&self) -> &str {
        self.name.split_once('@').map_or(&self.name, |(b, _)| b)
    }

    /// Whether the include/exclude globs let `path` in.
    pub fn wants(&self, path: &str) -> bool {
        self.include_set.as_ref().is_none_or(|s| s.is_match(path))
            && !self.exclude_set.is_match(path)
    }
}

/// Where an article's PDF comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArticleSource {
    /// An arXiv identifier (`1202.3665`, `astro-ph/0501001`, with or without a version).
    Arxiv(String),
    /// A URL answering with the PDF.
    Url(String),
    /// A local PDF.
    File(PathBuf),
}

/// An article's PDF: where it comes from and the file name its document takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArticleSpec {
    /// Where the PDF comes from.
    pub source: ArticleSource,
    /// The document's path (`1202.3665.pdf`).
    pub file_name: String,
    /// Listed by a `bibtex:` file: an entry whose link is a web page rather
    /// than a PDF is skipped (`not-a-pdf`), not a failed build.
    pub from_bibliography: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRepo {
    pub(super) name: Spanned<String>,
    pub(super) url: Spanned<String>,
    #[serde(rename = "ref")]
    pub(super) pin: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) refs: Vec<Spanned<String>>,
    pub(super) description: Option<String>,
    pub(super) token_env: Option<Spanned<String>>,
    pub(super) web_url: Option<Spanned<String>>,
    pub(super) toolkit: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) include: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) exclude: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) groups: Vec<Spanned<String>>,
}

/// Whether `s` may be one segment of a doc id (a category, a name, a
/// group, a ref), else the error at its place.
pub(crate) fn check_segment(
    path: &Path,
    s: &Spanned<String>,
    what: &str,
) -> Result<(), ConfigError> {
    let v = &s.value;
    let ok = !v.is_empty()
        && v != "."
        && v != ".."
        && v.chars().all(|c| c.is_alphanumeric() || "._-+".contains(c));
    if ok {
        Ok(())
    } else {
        Err(at(
            path,
            s,
            format!("{what} {v:?} must be letters, digits, '.', '_', '-' or '+'"),
        ))
    }
}
