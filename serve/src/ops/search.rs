//! `search` (MCP: `search_passages`): ranked passages for a question.

use super::{Call, Meta, Method, Op, PassageRef, Route};
use crate::problem::ApiError;
use cairn_search::{Filters, Mode, SearchRequest, SearchResponse};
use schemars::JsonSchema;
use serde::Deserialize;

/// A search.
#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[schemars(deny_unknown_fields)]
pub struct SearchArgs {
    /// The question or keywords, up to 1,000 characters.
    pub query: String,
    /// Up to 5 other phrasings of the same question, fused with `query`. A calling model should add keyword rewrites that name the identifiers the answer likely uses (function, class, parameter names) and one plain restatement: users describe the effect they want, the code names it.
    #[serde(default, deserialize_with = "cairn_search::one_or_many")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long = "queries", visible_alias = "also", value_name = "PHRASING")]
    pub queries: Vec<String>,
    /// Hits wanted, 1 to 50 (default 10).
    #[serde(default)]
    #[arg(long)]
    pub limit: Option<usize>,
    /// The filters.
    #[serde(flatten)]
    #[command(flatten)]
    pub filters: Filters,
    /// 0 to 1: when the best hit's evidence (cosine) is below this, the answer says insufficient_evidence.
    #[serde(default)]
    #[arg(long)]
    pub threshold: Option<f32>,
    /// hybrid (default), bm25 or vector.
    #[serde(default)]
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
}

impl SearchArgs {
    /// The library request for `call`.
    pub fn into_request(self, call: &Call) -> SearchRequest {
        SearchRequest {
            query: self.query,
            queries: self.queries,
            limit: self.limit.unwrap_or(cairn_search::DEFAULT_LIMIT),
            filters: self.filters,
            threshold: self.threshold,
            mode: self.mode.unwrap_or_default(),
            groups: call.groups(),
            deadline: call.deadline.clone(),
        }
    }
}

/// The operation.
pub struct Search;

impl Op for Search {
    type Args = SearchArgs;
    type Output = SearchResponse;
    const META: Meta = Meta {
        title: "Search passages",
        // MCP's `search` is ChatGPT's citation shape (`chatgpt_search.rs`); this is the rich answer.
        tool: Some("search_passages"),
        routes: &[
            Route {
                method: Method::Get,
                path: "/search",
                operation_id: "searchCitations",
                summary: "Search the indexed repositories for passages that answer a question.",
            },
            Route {
                method: Method::Post,
                path: "/search",
                operation_id: "searchCitationsPost",
                summary: "Search, with the arguments as a JSON body.",
            },
        ],
        tag: "search",
        description: "Finds the passages of the indexed scientific-software repositories that best answer a question: doc_id, lines, focus lines, snippet, GitHub links. Use it first for any question. Add queries: 2-3 keyword rewrites naming likely functions or parameters; toolkit keeps to one package.",
        answers: "Ranked passages, each with exact lines and GitHub links",
        on_cpu: true,
        cli: Some("search"),
        ..Meta::READ
    };

    fn run(args: SearchArgs, call: &Call) -> Result<SearchResponse, ApiError> {
        Ok(call.engine.search(&args.into_request(call))?)
    }

    fn text(r: &SearchResponse) -> String {
        r.to_string()
    }

    fn cites(r: &SearchResponse) -> Vec<PassageRef> {
        r.hits
            .iter()
            .map(|h| PassageRef {
                doc_id: h.doc_id.clone(),
                start: h.start_line,
                end: h.end_line,
                title: h.citation().title,
                version: h.index_version.clone(),
                focus: h.focus_start.zip(h.focus_end),
            })
            .collect()
    }
}
