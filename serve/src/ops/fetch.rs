//! `fetch`: the lines a citation id names, from the index version that
//! cited them (ChatGPT's `fetch` contract: `{"id", "title", "text", "url",
//! "metadata"}`, the text item the same JSON). A version no longer kept is
//! refused as `version_gone`, never answered with newer lines.

use super::{Call, Meta, Method, Op, Route};
use crate::problem::ApiError;
use cairn_search::{PassageId, SpanRequest, TextFormat, passages};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Which passage.
#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct FetchArgs {
    /// A citation id as search gives it: `<index_version>/<doc_id>#L<start>-L<end>`.
    pub id: String,
}

/// A cited passage's lines.
#[derive(Debug, Serialize, ToSchema, JsonSchema)]
pub struct FetchResponse {
    /// The id asked for.
    pub id: String,
    /// Repository, path and lines.
    pub title: String,
    /// The lines as at the indexed commit (a notebook's as its cells).
    pub text: String,
    /// The permalink: these lines on the indexed commit.
    pub url: String,
    /// Where the lines come from.
    pub metadata: FetchMetadata,
}

/// Where a fetched passage comes from.
#[derive(Debug, Serialize, ToSchema, JsonSchema)]
pub struct FetchMetadata {
    /// `<category>/<repo>/<path>`.
    pub doc_id: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive (the file's last line when the id asked for more).
    pub end_line: u32,
    /// The form the text is in.
    pub text_format: TextFormat,
    /// The lines on the default branch (they may have moved since).
    pub github_url: String,
    /// sha256 of the whole file.
    pub content_sha256: String,
    /// The version the lines were read from (the id's).
    pub index_version: String,
}

/// The operation.
pub struct Fetch;

impl Op for Fetch {
    type Args = FetchArgs;
    type Output = FetchResponse;
    const META: Meta = Meta {
        title: "Fetch a cited passage",
        tool: Some("fetch"),
        routes: &[Route {
            method: Method::Get,
            path: "/fetch",
            operation_id: "fetchPassage",
            summary: "Get the lines a citation id names, from the version that cited them.",
        }],
        tag: "retrieve",
        description: "Returns the lines a citation id from search names, as at the indexed commit and the index version that cited them, with the permalink to quote. Use it after search, to read and quote one result.",
        answers: "The cited lines, title, permalink and where they come from",
        // Reading a kept version may open (and verify) it first.
        on_cpu: true,
        cli: Some("fetch"),
        ..Meta::READ
    };

    fn run(args: FetchArgs, call: &Call) -> Result<FetchResponse, ApiError> {
        let id = PassageId::parse(&args.id).map_err(|e| ApiError::invalid("id", e.to_string()))?;
        let span = SpanRequest {
            index_version: Some(id.version.clone()),
            ..SpanRequest::lines(id.doc_id.as_str(), id.span.start.into(), id.span.end.into())
        };
        let r = call.retrieve(&span)?;
        let lines = cairn_index::LineSpan {
            start: r.start_line,
            end: r.end_line,
        };
        Ok(FetchResponse {
            id: args.id,
            title: passages::title(&r.doc_id, lines, ""),
            text: r.text,
            url: r.permalink,
            metadata: FetchMetadata {
                doc_id: r.doc_id,
                start_line: r.start_line,
                end_line: r.end_line,
                text_format: r.text_format,
                github_url: r.github_url,
                content_sha256: r.content_sha256,
                index_version: r.index_version,
            },
        })
    }

    /// The contract's text item: the same JSON.
    fn text(r: &FetchResponse) -> String {
        serde_json::to_string(r).unwrap_or_default()
    }
}
