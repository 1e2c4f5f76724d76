//! `retrieve_batch`: several spans in one call, each succeeding or failing alone.

use super::{Call, Meta, Method, Op, Route};
use crate::problem::{ApiError, Problem};
use cairn_search::{RetrieveResponse, SpanRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use utoipa::ToSchema;

/// Several spans at once.
#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct BatchArgs {
    /// 1 to 50 spans.
    #[arg(skip)]
    pub items: Vec<SpanRequest>,
}

/// One item of a batch: the passage, or why not.
#[derive(Debug, Serialize, ToSchema, schemars::JsonSchema)]
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

/// The answer to a batch.
#[derive(Debug, Serialize, ToSchema, schemars::JsonSchema)]
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

/// The operation.
pub struct RetrieveBatch;

impl Op for RetrieveBatch {
    type Args = BatchArgs;
    type Output = BatchResponse;
    const META: Meta = Meta {
        title: "Retrieve several spans",
        tool: Some("retrieve_batch"),
        routes: &[Route {
            method: Method::Post,
            path: "/retrieve/batch",
            operation_id: "retrievePassages",
            summary: "Get several spans in one call.",
        }],
        tag: "retrieve",
        description: "Like retrieve for up to 50 spans; each item succeeds or fails on its own (48,000 bytes of text in all). Use it to read several hits' lines in one call.",
        answers: "One result per item; each succeeds or fails alone",
        // An item citing a kept version may open (and verify) it first.
        on_cpu: true,
        ..Meta::READ
    };

    /// Each item its passage or its problem (one shape over HTTP and MCP).
    fn run(a: BatchArgs, call: &Call) -> Result<BatchResponse, ApiError> {
        let items = call
            .engine
            .retrieve_batch_cited(
                &a.items,
                call.caller.groups(),
                &|v| call.earlier(v),
                &call.deadline,
            )?
            .into_iter()
            .map(|r| match r {
                Ok(p) => BatchItem {
                    ok: true,
                    passage: Some(p),
                    error: None,
                },
                Err(e) => BatchItem {
                    ok: false,
                    passage: None,
                    error: Some(ApiError::from(e).problem(&call.trace_id, &call.instance)),
                },
            })
            .collect();
        Ok(BatchResponse {
            items,
            index_version: call.index_version(),
        })
    }

    fn text(r: &BatchResponse) -> String {
        r.to_string()
    }
}
