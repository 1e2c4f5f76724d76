//! Requests and responses, shared by every connector (serde shapes are the API).

use cairn_index::IndexVersion;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Most hits a search returns.
pub const MAX_LIMIT: usize = 50;
/// Hits returned when a search names no limit.
pub const DEFAULT_LIMIT: usize = 10;
/// Levels of the doc_id tree shown unless asked otherwise.
pub const DEFAULT_TREE_DEPTH: usize = 2;
/// Entries of the doc_id tree shown unless asked otherwise.
pub const DEFAULT_TREE_ENTRIES: usize = 500;
/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// Most other phrasings a search fuses with its query.
pub const MAX_REPHRASINGS: usize = 5;
/// Most lines one retrieve returns.
pub const MAX_SPAN_LINES: u32 = 400;
/// Most items in one retrieve_batch.
pub const MAX_BATCH: usize = 50;
/// Most earlier index versions one batch may cite: each is opened (and
/// verified) the first time, and a batch rotating over more was a way to make
/// the server reopen versions for every item.
pub const MAX_BATCH_VERSIONS: usize = 2;
/// Most values one filter list may hold (`toolkit`, `repo` …), for every connector.
pub const MAX_FILTER_VALUES: usize = 50;
/// Most bytes of text one retrieve (or one whole retrieve_batch) returns, so a
/// response stays well under GPT Actions' 100,000-character limit.
pub const MAX_TEXT_BYTES: usize = 48_000;

/// Lines of one document, as every connector asks for them (the HTTP body,
/// the MCP arguments, and one item of a batch).
#[derive(Clone, Debug, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpanRequest {
    /// `<category>/<repo>/<path>`, as search hits give it.
    pub doc_id: String,
    /// First line, 1-based (default 1).
    #[serde(default)]
    pub start: Option<i64>,
    /// Last line, inclusive (default: start + 399). At most 400 lines are returned.
    #[serde(default)]
    pub end: Option<i64>,
    /// The exact bytes of the lines even for a notebook (default false: a
    /// notebook span comes as its cells, `text_format: notebook-cells`).
    #[serde(default)]
    pub raw: bool,
    /// The index version the lines were cited from (a search result's
    /// `index_version`): the lines come from that version while it is kept,
    /// and a version no longer kept is refused (`version_gone`) rather than
    /// answered with other lines. Default: the version serving now.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    #[schemars(with = "Option<String>")]
    pub index_version: Option<IndexVersion>,
}

impl SpanRequest {
    /// The same lines as exact bytes (`raw`) or in the reader's form.
    pub fn raw(self, raw: bool) -> Self {
        Self { raw, ..self }
    }

    /// Lines `start..=end` of `doc_id`, in the reader's form.
    pub fn lines(doc_id: impl Into<String>, start: i64, end: i64) -> Self {
        Self {
            doc_id: doc_id.into(),
            start: Some(start),
            end: Some(end),
            raw: false,
            index_version: None,
        }
    }

    /// `start..=end` with the defaults filled in: from line 1, [`MAX_SPAN_LINES`] lines long.
    pub fn span(&self) -> (i64, i64) {
        let start = self.start.unwrap_or(1);
        let end = self
            .end
            .unwrap_or_else(|| start.saturating_add(i64::from(MAX_SPAN_LINES) - 1));
        (start, end)
    }
}

/// On the command line a span is `DOC_ID --lines START:END [--raw]`: one
/// flag for both ends reads better than two, so this is written by hand
/// rather than derived.
impl clap::Args for SpanRequest {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        use clap::{Arg, ArgAction};
        cmd.arg(
            Arg::new("doc_id")
                .required(true)
                .value_name("DOC_ID")
                .help("`<category>/<repo>/<path>`, as search hits give it"),
        )
        .arg(
            Arg::new("lines")
                .long("lines")
                .value_name("START:END")
                .default_value("1:400")
                .help("The lines, 1-based and inclusive (at most 400)"),
        )
        .arg(Arg::new("raw").long("raw").action(ArgAction::SetTrue).help(
            "The file's exact bytes even for a notebook (by default a notebook shows its cells)",
        ))
        .arg(
            Arg::new("index_version")
                .long("index-version")
                .value_name("VERSION")
                .value_parser(|s: &str| IndexVersion::parse(s).map_err(|e| e.to_string()))
                .help("Read the lines as at this kept index version (a hit's index_version)"),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for SpanRequest {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let doc_id = m.get_one::<String>("doc_id").cloned().unwrap_or_default();
        let lines = m.get_one::<String>("lines").map_or("1:400", String::as_str);
        let (start, end) = parse_line_range(lines).ok_or_else(|| {
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("--lines must be START:END with 1 <= START <= END, not {lines:?}\n"),
            )
        })?;
        Ok(Self {
            index_version: m.get_one::<IndexVersion>("index_version").cloned(),
            ..Self::lines(doc_id, start.into(), end.into()).raw(m.get_flag("raw"))
        })
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// `START:END`, `START-END` or one line, 1-based and inclusive, `START <= END`:
/// how the CLI, the pages' URLs and MCP resource URIs write a span.
pub fn parse_line_range(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once([':', '-']).unwrap_or((s, s));
    let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a >= 1 && a <= b).then_some((a, b))
}

/// The form a passage's text is in.
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
)]
#[serde(rename_all = "kebab-case")]
pub enum TextFormat {
    /// The file's lines, byte for byte.
    #[default]
    Raw,
    /// A notebook's cells the span overlaps: decoded sources (markdown as
    /// markdown, code fenced), one `<!-- cell N: kind -->` line before each,
    /// outputs left out. The span and its links stay those of the raw lines.
    NotebookCells,
}

impl TextFormat {
    /// The raw line of the file that line `i` (0-based) of a text in this form
    /// stands for, when the text shows lines from `start` (`raw_lines` is the
    /// map a notebook's cells carry).
    pub fn line_number(self, raw_lines: &[u32], start: u32, i: usize) -> u32 {
        match self {
            Self::Raw => start.saturating_add(i as u32),
            Self::NotebookCells => raw_lines.get(i).copied().unwrap_or(start),
        }
    }
}

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
/// repeatable flags), and so do golden-query files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema, clap::Args)]
#[serde(default)]
pub struct Filters {
    /// Only these toolkits (lowercase repository names, e.g. `emcee`, `mulensmodel`). In a query string: comma-separated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long, value_name = "TOOLKIT")]
    pub toolkit: Vec<String>,
    /// Only these doctypes: code, doc, readme, notebook, example, test, config, paper (PDFs, LaTeX and BibTeX). In a query string: comma-separated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long, value_name = "DOCTYPE")]
    pub doctype: Vec<String>,
    /// Only these repositories (names as in repositories.yml). In a query string: comma-separated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long, value_name = "REPO")]
    pub repo: Vec<String>,
    /// Only these categories. In a query string: comma-separated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long, value_name = "CATEGORY")]
    pub category: Vec<String>,
    /// Only doc_ids starting with one of these (`category/repo/folder/`). In a query string: comma-separated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long, value_name = "PREFIX")]
    pub path_prefix: Vec<String>,
    /// Only these refs of repositories indexed at several (`refs:` in repositories.yml), e.g. `v3.1.6`; by default each repository's default ref. In a query string: comma-separated.
    #[serde(rename = "ref", skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long = "ref", value_name = "REF")]
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
    pub fn validate(&self) -> Result<(), crate::SearchError> {
        for (field, list) in self.lists() {
            if list.len() > MAX_FILTER_VALUES {
                return Err(crate::invalid(
                    field,
                    format!("may hold at most {MAX_FILTER_VALUES} values"),
                ));
            }
        }
        for d in &self.doctype {
            if cairn_index::Doctype::parse(d).is_none() {
                return Err(crate::invalid(
                    Self::DOCTYPE,
                    format!(
                        "{d:?} is not one of {}",
                        crate::rank::doctype_names().join(", ")
                    ),
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
                    *list = values.into_vec();
                    seen.push(key);
                }
                Ok(filters)
            }
        }
        d.deserialize_struct("Filters", Self::FIELDS, Fields)
    }
}

/// A search.
#[derive(Clone, Debug, Default)]
pub struct SearchRequest {
    /// What the user asked.
    pub query: String,
    /// Other phrasings of the same question (at most [`MAX_REPHRASINGS`]),
    /// fused with `query`: a calling model's keyword rewrites, which name
    /// the identifiers the user did not.
    pub rephrasings: Vec<String>,
    /// Hits wanted (1..=50, default 10).
    pub limit: usize,
    /// Filters.
    pub filters: Filters,
    /// Evidence below this makes the answer `insufficient_evidence`.
    pub threshold: Option<f32>,
    /// Ranking mode.
    pub mode: Mode,
    /// The caller's access groups (None: trusted caller, sees everything).
    pub groups: Option<Vec<String>>,
    /// When the answer stops being wanted: the search gives up at its next
    /// stage boundary rather than running on unread.
    pub deadline: crate::Deadline,
}

/// How a hit's score came about.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct ScoreBreakdown {
    /// BM25 score of the best chunk (0 when BM25 did not find it).
    pub bm25: f32,
    /// Cosine similarity of the best chunk with the query (0 when not computed).
    pub vector: f32,
    /// Reciprocal-rank-fusion score.
    pub rrf: f32,
    /// Static and runtime weight applied after fusion: the product of `priors`.
    pub weight: f32,
    /// Each prior of `weight`, named (in process only: the wire carries their product).
    #[serde(skip)]
    #[schema(ignore)]
    pub priors: crate::rank::Priors,
}

/// One cited passage.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct Hit {
    /// `<category>/<repo>/<path>`.
    pub doc_id: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// First line of the hit's focus: the few lines (at most 15) within the
    /// span that answer best; cite these when the whole span is too much.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus_start: Option<u32>,
    /// Last line of the focus, inclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus_end: Option<u32>,
    /// The best few lines, query terms marked with `**`.
    pub snippet: String,
    /// The form the snippet is in (a notebook's cells, or raw lines).
    pub text_format: TextFormat,
    /// Final score (higher is better).
    pub score: f32,
    /// Its parts.
    pub breakdown: ScoreBreakdown,
    /// Repository name.
    pub repo: String,
    /// Category.
    pub category: String,
    /// Toolkit.
    pub toolkit: String,
    /// Doctype.
    pub doctype: String,
    /// Section title or definition name.
    pub title: String,
    /// On the default branch.
    pub github_url: String,
    /// On the exact commit.
    pub permalink: String,
    /// sha256 of the whole file.
    pub content_sha256: String,
    /// The version answering.
    pub index_version: String,
    /// For a PDF: the page the hit is on and its lines within that page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<PageCitation>,
    /// What the hit's lines define (functions, classes, constants, macros
    /// starting in its span), each with its line: where to go from a hit
    /// that is a definition.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub defines: Vec<crate::definitions::Defined>,
}

/// Where a span of a PDF's text lies in the PDF: a page, and lines counted
/// from that page's first line (as a reader counts them on the page).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct PageCitation {
    /// The page the span starts on (1-based).
    pub page: u32,
    /// First line within that page.
    pub start_line: u32,
    /// Last line within its page (`end_page`'s when the span runs onto a later page).
    pub end_line: u32,
    /// The page the span ends on, when not `page`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_page: Option<u32>,
}

/// The answer to a search.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct SearchResponse {
    /// The query as understood.
    pub query: String,
    /// The mode actually used.
    pub mode: Mode,
    /// Hits, best first.
    pub hits: Vec<Hit>,
    /// The best hit is below the threshold (or there is none): say "I don't know".
    pub insufficient_evidence: bool,
    /// Why the mode differs from the one asked, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// The version answering.
    pub index_version: String,
}

/// Exact lines of one document.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct RetrieveResponse {
    /// The document.
    pub doc_id: String,
    /// First line returned.
    pub start_line: u32,
    /// Last line returned.
    pub end_line: u32,
    /// The lines, byte for byte with line endings kept (`text_format: raw`),
    /// or for a notebook the cells they hold (`notebook-cells`; ask `raw` for the bytes).
    pub text: String,
    /// The form `text` is in.
    pub text_format: TextFormat,
    /// For `notebook-cells`: the raw line of the file each line of `text` stands for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub raw_lines: Vec<u32>,
    /// Lines in the whole file.
    pub total_lines: u32,
    /// The span asked for ran past the end or over the cap and was cut.
    pub clamped: bool,
    /// For a PDF: the page the lines are on and their lines within it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<PageCitation>,
    /// On the default branch.
    pub github_url: String,
    /// On the exact commit.
    pub permalink: String,
    /// sha256 of the whole file.
    pub content_sha256: String,
    /// The version answering.
    pub index_version: String,
}

impl RetrieveResponse {
    /// The raw line of the file that line `i` (0-based) of `text` stands for.
    pub fn line_number(&self, i: usize) -> u32 {
        self.text_format
            .line_number(&self.raw_lines, self.start_line, i)
    }
}

/// One node of the doc_id tree.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct TreeEntry {
    /// Path prefix (a folder) or doc_id (a file).
    pub path: String,
    /// `category`, `repo`, `folder` or `file`.
    pub kind: &'static str,
    /// Files only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doctype: Option<String>,
    /// Files only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<u32>,
    /// Folders: files below.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<usize>,
}

/// The tree listing.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct TreeResponse {
    /// Entries in path order.
    pub entries: Vec<TreeEntry>,
    /// More entries exist than were returned.
    pub truncated: bool,
    /// The version answering.
    pub index_version: String,
}

/// Per repository, in `version()`.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct RepoVersion {
    /// Name.
    pub name: String,
    /// Default branch.
    pub default_branch: Option<String>,
    /// Commit indexed.
    pub commit: Option<String>,
    /// Toolkit (the `toolkit` filter's value).
    pub toolkit: String,
    /// What it is, from repositories.yml.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The last fetch failed; the commit is the one fetched before (see `error`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    /// Why the last fetch failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What is being served.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct VersionResponse {
    /// The version.
    pub index_version: String,
    /// When it was built.
    pub built_at: String,
    /// Builder that wrote it.
    pub builder_version: String,
    /// Model id.
    pub model: String,
    /// Model weights digest.
    pub model_weights_sha256: String,
    /// Repositories.
    pub repos: Vec<RepoVersion>,
}

/// Health.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct HealthResponse {
    /// An index is loaded.
    pub loaded: bool,
    /// The version.
    pub index_version: String,
    /// Whether vector search is available (the model is loaded).
    pub vector_search: bool,
    /// Documents by repository.
    pub docs_by_repo: std::collections::BTreeMap<String, usize>,
    /// Documents by doctype.
    pub docs_by_doctype: std::collections::BTreeMap<String, usize>,
    /// Chunks.
    pub chunks: usize,
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
