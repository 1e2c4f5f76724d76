//! `version`: what index is being served.

use super::{Call, Meta, Method, NoArgs, Op, Route, Toolset};
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
        description: "The index version served, when it was built, the embedding model, each repository's default branch and indexed commit, and, where `cairn watch` runs, how far each is behind its remote. Use it to pin or date citations.",
        answers: "Version, build time, model and each repository's branch and commit",
        toolset: Toolset::Admin,
        ..Meta::READ
    };

    fn run(_: NoArgs, call: &Call) -> Result<VersionResponse, ApiError> {
        Ok(call.engine.version(call.caller.groups()))
    }
}
