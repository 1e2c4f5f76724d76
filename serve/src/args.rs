//! What a caller sends: the argument types that both connectors parse (HTTP
//! bodies and query strings, MCP tool arguments), with their defaults and
//! their conversion into library requests, so the two cannot drift apart.
//!
//! Each type derives serde (the wire shape, unknown fields refused), utoipa
//! (the OpenAPI schema) and schemars (the MCP input schema) from one
//! definition. Only `http` and `mcp` depend on this module.

use crate::problem::Problem;
use cairn_search::{
    Caller, ChatMessage, ContextRequest, Engine, Filters, Mode, OneOrMany, RetrieveResponse,
    SearchError, SearchRequest, SpanRequest, TokenizerName, TreeResponse,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use utoipa::{IntoParams, ToSchema};

/// The five filter lists of a request, as the library takes them.
fn filters(
    toolkit: OneOrMany,
    doctype: OneOrMany,
    repo: OneOrMany,
    category: OneOrMany,
    path_prefix: OneOrMany,
    refs: OneOrMany,
) -> Filters {
    Filters {
        toolkit: toolkit.into_vec(),
        doctype: doctype.into_vec(),
        repo: repo.into_vec(),
        category: category.into_vec(),
        path_prefix: path_prefix.into_vec(),
        refs: refs.into_vec(),
    }
}

/// A search.
#[derive(Debug, Deserialize, ToSchema, IntoParams, JsonSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchArgs {
    /// The question or keywords, up to 1,000 characters.
    query: String,
    /// Up to 5 other phrasings of the same question, fused with `query`. A calling model should add keyword rewrites that name the identifiers the answer likely uses (function, class, parameter names) and one plain restatement: users describe the effect they want, the code names it.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    #[schemars(with = "Option<Vec<String>>")]
    queries: OneOrMany,
    /// Hits wanted, 1 to 50 (default 10).
    #[serde(default)]
    limit: Option<usize>,
    /// Only these toolkits (lowercase repository names, e.g. `emcee`, `mulensmodel`). In a query string: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    #[schemars(with = "Option<Vec<String>>")]
    toolkit: OneOrMany,
    /// Only these doctypes: code, doc, readme, notebook, example, test, config. In a query string: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    #[schemars(with = "Option<Vec<String>>")]
    doctype: OneOrMany,
    /// Only these repositories (names as in repositories.yml). In a query string: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    #[schemars(with = "Option<Vec<String>>")]
    repo: OneOrMany,
    /// Only these categories. In a query string: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    #[schemars(with = "Option<Vec<String>>")]
    category: OneOrMany,
    /// Only doc_ids starting with one of these (`category/repo/folder/`). In a query string: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    #[schemars(with = "Option<Vec<String>>")]
    path_prefix: OneOrMany,
    /// Only these refs of repositories indexed at several (`refs:` in repositories.yml), e.g. `v3.1.6`; by default each repository's default ref. In a query string: comma-separated.
    #[serde(default, rename = "ref")]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    #[schemars(with = "Option<Vec<String>>")]
    refs: OneOrMany,
    /// 0 to 1: when the best hit's evidence (cosine) is below this, the answer says insufficient_evidence.
    #[serde(default)]
    threshold: Option<f32>,
    /// hybrid (default), bm25 or vector.
    #[serde(default)]
    mode: Option<Mode>,
}

impl SearchArgs {
    /// The library request, for a caller with `groups`, wanted until `deadline`.
    pub fn into_request(
        self,
        groups: Option<Vec<String>>,
        deadline: std::time::Instant,
    ) -> SearchRequest {
        SearchRequest {
            query: self.query,
            rephrasings: self.queries.into_vec(),
            limit: self.limit.unwrap_or(cairn_search::DEFAULT_LIMIT),
            filters: filters(
                self.toolkit,
                self.doctype,
                self.repo,
                self.category,
                self.path_prefix,
                self.refs,
            ),
            threshold: self.threshold,
            mode: self.mode.unwrap_or_default(),
            groups,
            deadline: Some(deadline),
        }
    }
}

/// A prompt-context request.
#[derive(Debug, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextArgs {
    /// The question. When absent, the last user message of `messages` is the question.
    #[serde(default)]
    query: Option<String>,
    /// Up to 5 other phrasings of the question, fused with it: keyword rewrites naming the identifiers the answer likely uses, and one plain restatement.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[schemars(with = "Option<Vec<String>>")]
    queries: OneOrMany,
    /// OpenAI-style chat messages; the answer returns them with the context added to the system message.
    #[serde(default)]
    messages: Option<Vec<ChatMessage>>,
    /// Token budget of the context block, 100 to 8,000 (default 2,000).
    #[serde(default)]
    max_tokens: Option<usize>,
    /// The tokenizer that counts the budget: o200k_base (default; GPT-4o and later) or cl100k_base.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    tokenizer: Option<TokenizerName>,
    /// Search hits considered (default 10).
    #[serde(default)]
    limit: Option<usize>,
    /// Only these toolkits (lowercase repository names, e.g. `emcee`, `mulensmodel`).
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[schemars(with = "Option<Vec<String>>")]
    toolkit: OneOrMany,
    /// Only these doctypes: code, doc, readme, notebook, example, test, config.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[schemars(with = "Option<Vec<String>>")]
    doctype: OneOrMany,
    /// Only these repositories (names as in repositories.yml).
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[schemars(with = "Option<Vec<String>>")]
    repo: OneOrMany,
    /// Only these categories.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[schemars(with = "Option<Vec<String>>")]
    category: OneOrMany,
    /// Only doc_ids starting with one of these (`category/repo/folder/`).
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[schemars(with = "Option<Vec<String>>")]
    path_prefix: OneOrMany,
    /// Only these refs of repositories indexed at several (`refs:` in repositories.yml), e.g. `v3.1.6`; by default each repository's default ref. In a query string: comma-separated.
    #[serde(default, rename = "ref")]
    #[schema(value_type = Option<Vec<String>>)]
    #[schemars(with = "Option<Vec<String>>")]
    refs: OneOrMany,
    /// Evidence (cosine, 0 to 1) a passage needs (default 0.3).
    #[serde(default)]
    threshold: Option<f32>,
    /// hybrid (default), bm25 or vector.
    #[serde(default)]
    mode: Option<Mode>,
    /// Passages as the files' exact bytes even for notebooks (default false: a notebook's cells, which carry more content per token).
    #[serde(default)]
    raw: bool,
}

impl ContextArgs {
    /// The library request, for a caller with `groups`, wanted until `deadline`.
    pub fn into_request(
        self,
        groups: Option<Vec<String>>,
        deadline: std::time::Instant,
    ) -> ContextRequest {
        ContextRequest {
            query: self.query,
            rephrasings: self.queries.into_vec(),
            messages: self.messages,
            max_tokens: self.max_tokens.unwrap_or(0),
            limit: self.limit.unwrap_or(0),
            filters: filters(
                self.toolkit,
                self.doctype,
                self.repo,
                self.category,
                self.path_prefix,
                self.refs,
            ),
            threshold: self.threshold,
            mode: self.mode.unwrap_or_default(),
            tokenizer: self.tokenizer.unwrap_or_default(),
            raw: self.raw,
            groups,
            deadline: Some(deadline),
        }
    }
}

/// Several spans at once.
#[derive(Debug, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchArgs {
    /// 1 to 50 spans.
    pub items: Vec<SpanRequest>,
}

/// Which part of the document tree.
#[derive(Debug, Deserialize, ToSchema, IntoParams, JsonSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TreeArgs {
    /// A doc_id prefix (`category`, `category/repo`, `category/repo/folder`); empty lists the top.
    #[serde(default)]
    prefix: Option<String>,
    /// Levels below the prefix (default 2).
    #[serde(default)]
    depth: Option<usize>,
    /// Most entries returned, 1 to 5,000 (default 500).
    #[serde(default)]
    max_entries: Option<usize>,
}

impl TreeArgs {
    /// The tree under the prefix, as a caller with `groups` may see it.
    pub fn run(
        &self,
        engine: &Engine,
        groups: Option<&[String]>,
    ) -> Result<TreeResponse, SearchError> {
        engine.tree(
            self.prefix.as_deref().unwrap_or(""),
            self.depth.unwrap_or(cairn_search::DEFAULT_TREE_DEPTH),
            self.max_entries
                .unwrap_or(cairn_search::DEFAULT_TREE_ENTRIES),
            groups,
        )
    }
}

/// A runtime ranking weight.
#[derive(Debug, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WeightArgs {
    /// The document to boost or demote.
    doc_id: String,
    /// Multiplier, clamped to 0.1 to 10.
    multiplier: f32,
    /// `global` (default), or a toolkit: applies when a search filters on it.
    #[serde(default)]
    namespace: Option<String>,
    /// Days until it expires, up to 365 (default 30).
    #[serde(default)]
    ttl_days: Option<f64>,
}

/// What was stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct WeightResponse {
    /// The document.
    pub doc_id: String,
    /// The namespace.
    pub namespace: String,
    /// The multiplier after clamping.
    pub multiplier: f32,
    /// Unix seconds when it stops applying.
    pub expires_at: i64,
    /// The version answering.
    pub index_version: String,
}

impl WeightArgs {
    /// Stores the weight; the library refuses a caller who is not an admin,
    /// and a document the admin's own groups may not see answers like a
    /// missing one.
    pub fn apply(self, engine: &Engine, by: &Caller) -> Result<WeightResponse, SearchError> {
        let namespace = self.namespace.unwrap_or_else(|| "global".to_owned());
        let w = engine.set_weight(
            &self.doc_id,
            self.multiplier,
            &namespace,
            self.ttl_days.unwrap_or(30.0),
            by,
        )?;
        Ok(WeightResponse {
            doc_id: self.doc_id,
            namespace,
            multiplier: w.multiplier,
            expires_at: w.expires_at,
            index_version: engine.snapshot().version.to_string(),
        })
    }
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// One item of a batch: the passage, or why not.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchItem {
    /// Whether this item succeeded.
    ok: bool,
    /// The passage, when ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    passage: Option<RetrieveResponse>,
    /// The problem, when not ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Problem>,
}

impl BatchItem {
    /// An item that succeeded.
    pub fn passage(p: RetrieveResponse) -> Self {
        Self {
            ok: true,
            passage: Some(p),
            error: None,
        }
    }

    /// An item that failed.
    pub fn problem(p: Problem) -> Self {
        Self {
            ok: false,
            passage: None,
            error: Some(p),
        }
    }
}

/// The answer to a batch.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchResponse {
    /// One per item, in order.
    pub items: Vec<BatchItem>,
    /// The version answering.
    pub index_version: String,
}

impl fmt::Display for BatchResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for item in &self.items {
            if let Some(p) = &item.passage {
                write!(f, "{p}")?;
            }
            if let Some(e) = &item.error {
                writeln!(
                    f,
                    "error [{}] ({}): {}",
                    e.code,
                    e.field.as_deref().unwrap_or("-"),
                    e.detail
                )?;
            }
        }
        Ok(())
    }
}

/// Readiness.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReadyResponse {
    /// An index is loaded and answering.
    pub ready: bool,
    /// The version answering.
    pub index_version: String,
}

/// An error to explain.
#[derive(Debug, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplainArgs {
    /// The pasted traceback, log excerpt or one-line message, up to 16,384 bytes.
    text: String,
    /// Only this toolkit's code and docs (lowercase repository name, e.g. `emcee`).
    #[serde(default)]
    toolkit: Option<String>,
    /// The version of the package you have installed, e.g. `3.1.6`.
    #[serde(default)]
    version: Option<String>,
    /// Explaining passages wanted, 1 to 20 (default 5).
    #[serde(default)]
    limit: Option<usize>,
}

impl ExplainArgs {
    /// The library request, for a caller with `groups`, wanted until `deadline`.
    pub fn into_request(
        self,
        groups: Option<Vec<String>>,
        deadline: std::time::Instant,
    ) -> cairn_search::ExplainRequest {
        cairn_search::ExplainRequest {
            text: self.text,
            toolkit: self.toolkit,
            version: self.version,
            limit: self
                .limit
                .unwrap_or(cairn_search::explain::DEFAULT_EXPLAIN_LIMIT),
            groups,
            deadline: Some(deadline),
        }
    }
}
