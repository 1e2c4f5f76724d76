//! `definitions`: where a name is defined, cited.

use super::{Call, Meta, Method, Op, Route, Toolset};
use crate::problem::ApiError;
use cairn_search::{DefinitionsRequest, DefinitionsResponse, Filters};
use schemars::JsonSchema;
use serde::Deserialize;

/// Where is a name defined.
#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[schemars(deny_unknown_fields)]
pub struct DefinitionsArgs {
    /// The name: a function, class, constant, macro or section heading, or a dotted name such as `EnsembleSampler.run_mcmc`. Exact first, then any case, then the dotted name's last part within its scope.
    pub name: String,
    /// The filters.
    #[serde(flatten)]
    #[command(flatten)]
    pub filters: Filters,
    /// Definitions wanted, 1 to 200 (default 20).
    #[serde(default)]
    #[arg(long)]
    pub limit: Option<usize>,
}

/// The operation.
pub struct Definitions;

impl Op for Definitions {
    type Args = DefinitionsArgs;
    type Output = DefinitionsResponse;
    const META: Meta = Meta {
        title: "Go to definition",
        tool: Some("definitions"),
        routes: &[Route {
            method: Method::Get,
            path: "/definitions",
            operation_id: "findDefinitions",
            summary: "Where a function, class, constant or section is defined.",
        }],
        tag: "browse",
        description: "Go to definition: the spans defining a name (function, method, class, constant, macro, Fortran unit, doc heading) with kind, scope, defining line and GitHub links. Use it when you know a name and need its source; dotted names (EnsembleSampler.run_mcmc) match in scope.",
        answers: "The definitions, code first, each with its span and links",
        cli: Some("definitions"),
        toolset: Toolset::Code,
        ..Meta::READ
    };

    fn run(a: DefinitionsArgs, call: &Call) -> Result<DefinitionsResponse, ApiError> {
        let request = DefinitionsRequest {
            name: a.name,
            filters: a.filters,
            limit: a.limit.unwrap_or(0),
            groups: call.groups(),
        };
        Ok(call.engine.definitions(&request)?)
    }

    fn text(r: &DefinitionsResponse) -> String {
        r.to_string()
    }
}
