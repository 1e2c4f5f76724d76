//! `version`: what index is being served.

use super::{Call, Meta, Method, NoArgs, Op, Route};
use crate::problem::ApiError;
use cairn_search::VersionResponse;

/// The operation.
pub struct Version;

impl Op for Version {
    type Args = NoArgs;
    type Output = VersionResponse;
    const META: Meta = Meta {
        title: "Index version",
        tool: Some("version"),
        cli: Some("version"),
        routes: &[Route {
            method: Method::Get,
            path: "/version",
            operation_id: "getIndexVersion",
            summary: "What index is being served.",
        }],
        tag: "status",
        description: "The index version being served, when it was built, the embedding model, and each repository's default branch and indexed commit; where `cairn watch` keeps the index fresh, when each remote was last checked, its head, and how many commits the indexed one is behind.",
        answers: "Version, build time, model and each repository's branch and commit",
        ..Meta::READ
    };

    fn run(_: NoArgs, call: &Call) -> Result<VersionResponse, ApiError> {
        Ok(call.engine.version(call.caller.groups()))
    }
}
