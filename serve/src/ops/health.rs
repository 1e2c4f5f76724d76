//! `health`: liveness, with counts of what the caller can see.

use super::{Call, Meta, Method, NoArgs, Op, Route, Toolset, Who};
use crate::problem::ApiError;
use cairn_search::HealthResponse;

/// The operation.
pub struct Health;

impl Op for Health {
    type Args = NoArgs;
    type Output = HealthResponse;
    const META: Meta = Meta {
        title: "Health",
        tool: Some("health"),
        routes: &[Route {
            method: Method::Get,
            path: "/health",
            operation_id: "getHealth",
            summary: "Liveness and counts.",
        }],
        tag: "status",
        description: "Liveness: document counts by doctype, when the version was built and how many repositories are behind their remotes. Use it to check the server and the index's freshness.",
        answers: "The server is up; counts of what the caller can see",
        who: Who::Public,
        toolset: Toolset::Admin,
        ..Meta::READ
    };

    fn run(_: NoArgs, call: &Call) -> Result<HealthResponse, ApiError> {
        let mut health = call.engine.health(call.caller.groups());
        // Probes need no names: without credentials, counts only.
        if call.anonymous {
            health.docs_by_repo.clear();
            health.commits_behind.clear();
        }
        Ok(health)
    }
}
