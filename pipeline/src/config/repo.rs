//! repositories.yml: the categories, each repository's settings, validated
//! into [`RepoConfig`]s with every error at `file:line:column`.

use super::articles::{self, RawArticle};
use super::validate::validate_repo;
use super::*;
use serde_saphyr::Spanned;
use std::collections::{HashMap, HashSet};
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

/// The parsed repositories.yml.
#[derive(Clone, Debug)]
pub struct Registry {
    /// The file it came from.
    pub path: PathBuf,
    /// Repositories, in file order within categories sorted by name.
    pub repos: Vec<RepoConfig>,
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCategoryTable {
    #[serde(default)]
    groups: Vec<Spanned<String>>,
    repos: Vec<RawRepo>,
}

/// A category is nancy-brain's list of repos, or `{groups, repos}`.
enum RawCategory {
    List(Vec<RawRepo>),
    Table(RawCategoryTable),
}

impl<'de> Deserialize<'de> for RawCategory {
    // Dispatching on the node's shape (rather than `#[serde(untagged)]`, which
    // buffers the input) keeps every source location for error messages.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{MapAccess, SeqAccess, Visitor, value};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawCategory;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of repositories, or a mapping with `groups` and `repos`")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<RawCategory, A::Error> {
                Vec::deserialize(value::SeqAccessDeserializer::new(seq)).map(RawCategory::List)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawCategory, A::Error> {
                RawCategoryTable::deserialize(value::MapAccessDeserializer::new(map))
                    .map(RawCategory::Table)
            }
        }
        d.deserialize_any(V)
    }
}

/// The whole file: categories of repositories, and the reserved key `articles`.
struct RawFile {
    categories: Vec<(Spanned<String>, RawCategory)>,
    articles: Vec<Spanned<RawArticle>>,
}

impl<'de> Deserialize<'de> for RawFile {
    // Keys are read one by one so that `articles` takes its own shape and
    // every value keeps its source location.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawFile;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a mapping of categories to repositories (and an optional `articles` list)",
                )
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawFile, A::Error> {
                let mut file = RawFile {
                    categories: Vec::new(),
                    articles: Vec::new(),
                };
                let mut seen = HashSet::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    if !seen.insert(key.value.clone()) {
                        return Err(A::Error::custom(format!("duplicate key {:?}", key.value)));
                    }
                    if key.value == ARTICLES_KEY {
                        file.articles = map.next_value()?;
                    } else {
                        let value = map.next_value()?;
                        file.categories.push((key, value));
                    }
                }
                Ok(file)
            }
        }
        d.deserialize_map(V)
    }
}

/// The top-level key listing articles rather than a category's repositories.
pub const ARTICLES_KEY: &str = "articles";

impl Registry {
    /// Reads and validates `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = read(path)?;
        Self::parse(path, &text)
    }

    /// Validates `text` as if read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let file: RawFile = serde_saphyr::from_str(text).map_err(|e| yaml_error(path, &e))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut names: HashSet<String> = HashSet::new();
        let mut repos = Vec::new();
        // Categories sorted by name, repositories in file order: the same file always
        // gives the same registry.
        let mut raw = file.categories;
        raw.sort_by(|a, b| a.0.value.cmp(&b.0.value));
        // Each category's groups, which its articles take like its repositories.
        let mut groups_of: HashMap<String, Vec<String>> = HashMap::new();
        for (category, value) in raw {
            check_segment(path, &category, "category")?;
            let (category_groups, list) = match value {
                RawCategory::List(l) => (Vec::new(), l),
                RawCategory::Table(t) => (t.groups, t.repos),
            };
            for g in &category_groups {
                check_segment(path, g, "group")?;
            }
            groups_of.insert(
                category.value.clone(),
                category_groups.iter().map(|g| g.value.clone()).collect(),
            );
            for mut r in list {
                check_segment(path, &r.name, "repository name")?;
                if !names.insert(r.name.value.clone()) {
                    return Err(at(
                        path,
                        &r.name,
                        format!("duplicate repository name {:?}", r.name.value),
                    ));
                }
                let refs = std::mem::take(&mut r.refs);
                if let (Some(first), Some(_)) = (refs.first(), &r.pin) {
                    return Err(at(
                        path,
                        first,
                        "give ref (one pinned ref) or refs (several), not both",
                    ));
                }
                // The first of `refs` is the default ref: it keeps the plain ids.
                if let Some(first) = refs.first() {
                    r.pin = Some(first.clone());
                }
                let cfg = validate_repo(path, base, &category.value, &category_groups, r)?;
                let mut seen = HashSet::new();
                for rf in &refs {
                    check_segment(path, rf, "ref in refs (a tag or branch without '/')")?;
                    if !seen.insert(rf.value.clone()) {
                        return Err(at(path, rf, format!("ref {:?} is listed twice", rf.value)));
                    }
                }
                let extra: Vec<RepoConfig> = refs
                    .iter()
                    .skip(1)
                    .map(|rf| cfg.at_ref(&rf.value))
                    .collect();
                repos.push(cfg);
                repos.extend(extra);
            }
        }
        // Articles follow the repositories, in file order.
        repos.extend(articles::configs(
            path,
            base,
            file.articles,
            &mut names,
            &groups_of,
        )?);
        if repos.is_empty() {
            return Err(ConfigError::At {
                path: path.to_owned(),
                line: 1,
                column: 1,
                message: "no repositories listed".into(),
            });
        }
        Ok(Self {
            path: path.to_owned(),
            repos,
        })
    }
}

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
