//! repositories.yml: the categories, each repository's settings, validated
//! into [`RepoConfig`]s with every error at `file:line:column`.

use super::articles::{self, RawArticle};
use super::entry::{RawRepo, RepoConfig, check_segment};
use super::error::{ConfigError, at, read, yaml_error};
use super::validate::validate_repo;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

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
