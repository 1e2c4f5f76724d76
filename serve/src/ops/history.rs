//! `history`: when and why a span's lines changed.

use super::{Call, Meta, Method, Op, Route, Toolset};
use crate::problem::ApiError;
use cairn_search::{HistoryResponse, SpanRequest};

/// The operation.
pub struct History;

impl Op for History {
    type Args = SpanRequest;
    type Output = HistoryResponse;
    const META: Meta = Meta {
        title: "Line history",
        tool: Some("history"),
        routes: &[Route {
            method: Method::Get,
            path: "/history",
            operation_id: "getLineHistory",
            summary: "When and why a span's lines changed.",
        }],
        tag: "retrieve",
        description: "When and why lines start..end of a document changed: each commit that last changed one of them (sha, date, author, summary, link), GitHub's blame link, the file's recent commits. Use it when asked since when or why code is as it is.",
        answers: "Who last changed each line, when and why, and the file's recent commits",
        cli: Some("history"),
        // Like every page and read, on the CPU pool within the deadline.
        on_cpu: true,
        toolset: Toolset::History,
        ..Meta::READ
    };

    fn run(span: SpanRequest, call: &Call) -> Result<HistoryResponse, ApiError> {
        Ok(call.engine.history(&span, call.caller.groups())?)
    }

    fn text(r: &HistoryResponse) -> String {
        r.to_string()
    }
}
