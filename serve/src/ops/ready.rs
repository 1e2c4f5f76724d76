//! `ready`: readiness for load balancers.

use super::{Call, Meta, Method, NoArgs, Op, Route, Who};
use crate::problem::ApiError;
use serde::Serialize;
use utoipa::ToSchema;

/// Readiness.
#[derive(Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct ReadyResponse {
    /// An index is loaded and answering.
    pub ready: bool,
    /// The version answering.
    pub index_version: String,
}

/// The operation.
pub struct Ready;

impl Op for Ready {
    type Args = NoArgs;
    type Output = ReadyResponse;
    const META: Meta = Meta {
        title: "Readiness",
        tool: None,
        routes: &[Route {
            method: Method::Get,
            path: "/ready",
            operation_id: "getReady",
            summary: "Whether an index is loaded.",
        }],
        tag: "status",
        description: "Readiness for load balancers: 200 once an index is loaded.",
        answers: "An index is loaded",
        who: Who::Public,
        ..Meta::READ
    };

    fn run(_: NoArgs, call: &Call) -> Result<ReadyResponse, ApiError> {
        Ok(ReadyResponse {
            ready: true,
            index_version: call.index_version(),
        })
    }
}
