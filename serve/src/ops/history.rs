//! `history`: when and why a span's lines changed.

use super::{Call, Meta, Method, Op, Route};
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
        description: "When and why lines start..end of a document (doc_id from a search hit) changed: each commit that last changed one of them (sha, date, author, summary, its lines, its link), GitHub's blame link, and the file's recent commits.",
        answers: "Who last changed each line, when and why, and the file's recent commits",
        cli: Some("history"),
        // Like every page and read, on the CPU pool within the deadline.
        on_cpu: true,
        ..Meta::READ
    };

    fn run(span: SpanRequest, call: &Call) -> Result<HistoryResponse, ApiError> {
        Ok(call.engine.history(&span, call.caller.groups())?)
    }

    fn text(r: &HistoryResponse) -> String {
        r.to_string()
    }
}
