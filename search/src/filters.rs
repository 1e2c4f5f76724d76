//! What every call may be narrowed by: [`Filters`] (toolkit, doctype,
//! repository, category, path prefix, ref), the ranking [`Mode`], and the
//! one-or-many form a filter is written in. Shared by every call; depends on
//! nothing else in the crate.

use cairn_index::Doctype;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Most values one filter list may hold (`toolkit`, `repo` …), for every connector.
pub const MAX_FILTER_VALUES: usize = 50;

/// How to rank.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ToSchema,
    schemars::JsonSchema,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// BM25 and vector candidates fused by reciprocal rank fusion.
    #[default]
    Hybrid,
    /// BM25 (tantivy) only.
    Bm25,
    /// Exact cosine over the chunk vectors only.
    Vector,
}

impl Mode {
    /// Parses a mode name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "hybrid" => Some(Mode::Hybrid),
            "bm25" => Some(Mode::Bm25),
            "vector" => Some(Mode::Vector),
            _ => None,
        }
    }
}

/// Filters applied before ranking; each field accepts several values (OR),
/// fields combine with AND. The one type that names them: every connector
/// parses it (JSON bodies and MCP arguments flatten it into their
/// arguments, a query string repeats or comma-separates it, the CLI takes
/// repeatable flags), and so do golden-query files. Everywhere a value is
/// split at commas (`doc,notebook` is two doctypes).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema, clap::Args)]
#[serde(default)]
pub struct Filters {
    /// Only these toolkits (lowercase repository names, e.g. `emcee`, `mulensmodel`). In a query string: comma-separated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long, value_name = "TOOLKIT", value_delimiter = ',')]
    pub toolkit: Vec<String>,
    /// Only these doctypes: code, doc, readme, notebook, example, test, config, paper (PDFs, LaTeX and BibTeX). In a query string: comma-separated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long, value_name = "DOCTYPE", value_delimiter = ',')]
    pub doctype: Vec<String>,
    /// Only these repositories (names as in repositories.yml). In a query string: comma-separated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long, value_name = "REPO", value_delimiter = ',')]
    pub repo: Vec<String>,
    /// Only these categories. In a query string: comma-separated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long, value_name = "CATEGORY", value_delimiter = ',')]
    pub category: Vec<String>,
    /// Only doc_ids starting with one of these (`category/repo/folder/`). In a query string: comma-separated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long, value_name = "PREFIX", value_delimiter = ',')]
    pub path_prefix: Vec<String>,
    /// Only these refs of repositories indexed at several (`refs:` in repositories.yml), e.g. `v3.1.6`; by default each repository's default ref. In a query string: comma-separated.
    #[serde(rename = "ref", skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long = "ref", value_name = "REF", value_delimiter = ',')]
    pub refs: Vec<String>,
}

impl Filters {
    /// The wire name of [`Filters::toolkit`].
    pub const TOOLKIT: &'static str = "toolkit";
    /// The wire name of [`Filters::doctype`].
    pub const DOCTYPE: &'static str = "doctype";
    /// The wire name of [`Filters::repo`].
    pub const REPO: &'static str = "repo";
    /// The wire name of [`Filters::category`].
    pub const CATEGORY: &'static str = "category";
    /// The wire name of [`Filters::path_prefix`].
    pub const PATH_PREFIX: &'static str = "path_prefix";
    /// The wire name of [`Filters::refs`].
    pub const REF: &'static str = "ref";
    /// The wire names of the filters, in the order they are documented.
    pub const FIELDS: &'static [&'static str] = &[
        Self::TOOLKIT,
        Self::DOCTYPE,
        Self::REPO,
        Self::CATEGORY,
        Self::PATH_PREFIX,
        Self::REF,
    ];

    /// The list a wire name sets.
    pub fn list_mut(&mut self, field: &str) -> Option<&mut Vec<String>> {
        Some(match field {
            Self::TOOLKIT => &mut self.toolkit,
            Self::DOCTYPE => &mut self.doctype,
            Self::REPO => &mut self.repo,
            Self::CATEGORY => &mut self.category,
            Self::PATH_PREFIX => &mut self.path_prefix,
            Self::REF => &mut self.refs,
            _ => return None,
        })
    }

    /// The values one query-string field holds: comma-separated, blanks left out.
    pub fn split(value: &str) -> impl Iterator<Item = &str> {
        value.split(',').map(str::trim).filter(|s| !s.is_empty())
    }

    /// Each list with its wire name, in [`Filters::FIELDS`] order.
    fn lists(&self) -> [(&'static str, &Vec<String>); 6] {
        [
            (Self::TOOLKIT, &self.toolkit),
            (Self::DOCTYPE, &self.doctype),
            (Self::REPO, &self.repo),
            (Self::CATEGORY, &self.category),
            (Self::PATH_PREFIX, &self.path_prefix),
            (Self::REF, &self.refs),
        ]
    }

    /// Each filter given, as `(wire name, value)` pairs (a URL's query, in order).
    pub fn pairs(&self) -> Vec<(&'static str, &str)> {
        self.lists()
            .into_iter()
            .flat_map(|(name, list)| list.iter().map(move |v| (name, v.as_str())))
            .collect()
    }

    /// Each list within [`MAX_FILTER_VALUES`], each doctype one the index knows.
    pub fn validate(&self) -> Result<(), crate::error::SearchError> {
        for (field, list) in self.lists() {
            if list.len() > MAX_FILTER_VALUES {
                return Err(crate::error::invalid(
                    field,
                    format!("may hold at most {MAX_FILTER_VALUES} values"),
                ));
            }
        }
        for d in &self.doctype {
            if Doctype::parse(d).is_none() {
                return Err(crate::error::invalid(
                    Self::DOCTYPE,
                    format!("{d:?} is not one of {}", doctype_names().join(", ")),
                ));
            }
        }
        Ok(())
    }
}

/// Each filter is one value or a list of them. Written by hand because the
/// connectors flatten `Filters` into their arguments, where serde hands the
/// fields over without their path: an error therefore names its field in
/// backticks itself (the form `problem::parse_json` reads), and a field
/// given twice is refused here rather than silently overwritten.
impl<'de> Deserialize<'de> for Filters {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = Filters;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of filters, each a string or a list of strings")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Filters, A::Error> {
                use serde::de::Error;
                let mut filters = Filters::default();
                let mut seen: Vec<String> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if seen.contains(&key) {
                        return Err(A::Error::custom(format_args!("duplicate field `{key}`")));
                    }
                    let Some(list) = filters.list_mut(&key) else {
                        return Err(A::Error::unknown_field(&key, Filters::FIELDS));
                    };
                    let values: OneOrMany = map.next_value().map_err(|_| {
                        A::Error::custom(format_args!(
                            "`{key}` must be a string or a list of strings"
                        ))
                    })?;
                    // `"doc,notebook"` is two values, as in a query string.
                    *list = values
                        .into_vec()
                        .iter()
                        .flat_map(|v| Filters::split(v))
                        .map(str::to_owned)
                        .collect();
                    seen.push(key);
                }
                Ok(filters)
            }
        }
        d.deserialize_struct("Filters", Self::FIELDS, Fields)
    }
}

/// One value or a list of them: how a filter is written in a JSON body, a
/// golden-query file, or (one per key) a query string.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// Not given.
    #[default]
    None,
    /// One value.
    One(String),
    /// Several values.
    Many(Vec<String>),
}

/// Deserializes a list written as one value or several (`deserialize_with`).
pub fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    OneOrMany::deserialize(d).map(OneOrMany::into_vec)
}

impl OneOrMany {
    /// The values, in order.
    pub fn values(&self) -> Vec<String> {
        self.clone().into_vec()
    }

    /// The values, in order, taking them.
    pub fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::None => Vec::new(),
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// Doctype names the API accepts, for validation messages.
fn doctype_names() -> Vec<&'static str> {
    Doctype::ALL.iter().map(Doctype::as_str).collect()
}
