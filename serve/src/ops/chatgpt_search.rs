//! `search` as ChatGPT's connectors call it: a question in, citations out
//! (`{"results": [{"id", "title", "url"}]}`), the text item the same JSON.
//! ChatGPT without developer mode calls only tools named `search` and
//! `fetch` of exactly this shape, so this answer has nothing else in it; the
//! rich answer (snippets, focus lines, scores, "I don't know") is
//! `search_passages`, whose readable text a model reads better than JSON.

use super::search::SearchArgs;
use super::{Call, Meta, Method, Op, Route};
use crate::problem::ApiError;
use cairn_search::{CitationLink, Filters};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A question, and optionally cairn's filters (ChatGPT sends the query only).
#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[schemars(deny_unknown_fields)]
pub struct CitationsArgs {
    /// The question or keywords, up to 1,000 characters.
    pub query: String,
    /// The filters.
    #[serde(flatten)]
    #[command(flatten)]
    pub filters: Filters,
}

/// The citations, best first.
#[derive(Debug, Serialize, ToSchema, JsonSchema)]
pub struct CitationsResponse {
    /// Each passage's id (for `fetch`), title and permalink.
    pub results: Vec<CitationLink>,
}

/// The operation.
pub struct ChatGptSearch;

impl Op for ChatGptSearch {
    type Args = CitationsArgs;
    type Output = CitationsResponse;
    const META: Meta = Meta {
        title: "Search (citations)",
        tool: Some("search"),
        routes: &[Route {
            method: Method::Get,
            path: "/citations",
            operation_id: "searchCitationLinks",
            summary: "Search, answering only each passage's id, title and permalink.",
        }],
        tag: "search",
        description: "Finds passages of the indexed scientific-software repositories answering a question; returns each one's id, title and permalink. Use it where a client expects search/fetch (ChatGPT); read one with fetch(id). search_passages gives snippets and lines in one call.",
        answers: "Citations: id (for fetch), title and permalink of each passage",
        on_cpu: true,
        ..Meta::READ
    };

    fn run(args: CitationsArgs, call: &Call) -> Result<CitationsResponse, ApiError> {
        let search = SearchArgs {
            query: args.query,
            queries: Vec::new(),
            limit: None,
            filters: args.filters,
            threshold: None,
            mode: None,
        };
        let found = call.engine.search(&search.into_request(call))?;
        Ok(CitationsResponse {
            results: found.hits.iter().map(|h| h.citation()).collect(),
        })
    }

    /// The contract's text item: the same JSON.
    fn text(r: &CitationsResponse) -> String {
        serde_json::to_string(r).unwrap_or_default()
    }
}
