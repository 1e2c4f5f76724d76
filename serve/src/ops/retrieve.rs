//! `retrieve`: the exact lines of one document.

use super::{Call, Meta, Method, Op, PassageRef, Route};
use crate::problem::ApiError;
use cairn_search::{RetrieveResponse, SpanRequest};

/// The operation.
pub struct Retrieve;

impl Op for Retrieve {
    type Args = SpanRequest;
    type Output = RetrieveResponse;
    const META: Meta = Meta {
        title: "Retrieve lines",
        tool: Some("retrieve"),
        routes: &[Route {
            method: Method::Post,
            path: "/retrieve",
            operation_id: "retrievePassage",
            summary: "Get the exact lines of a document.",
        }],
        tag: "retrieve",
        description: "Returns lines start..end of a document (doc_id from a hit) as at the indexed commit, with GitHub links and the file's sha256; notebooks as cells, raw=true the exact bytes. Use it to read around a hit before quoting.",
        answers: "The lines as at the indexed commit (a notebook's as its cells)",
        // Reading a kept version may open it (and verify it) first.
        on_cpu: true,
        cli: Some("retrieve"),
        ..Meta::READ
    };

    fn run(span: SpanRequest, call: &Call) -> Result<RetrieveResponse, ApiError> {
        call.retrieve(&span)
    }

    fn text(r: &RetrieveResponse) -> String {
        r.to_string()
    }

    fn cites(r: &RetrieveResponse) -> Vec<PassageRef> {
        vec![PassageRef {
            doc_id: r.doc_id.clone(),
            start: r.start_line,
            end: r.end_line,
            title: format!("{} lines {}-{}", r.doc_id, r.start_line, r.end_line),
            version: r.index_version.clone(),
            focus: None,
        }]
    }
}
