//! `references`: the lines that use an identifier as a whole word.

use super::grep::GrepArgs;
use super::{Call, Meta, Method, Op, Route, Toolset};
use crate::problem::ApiError;
use cairn_search::{Filters, GrepResponse};
use schemars::JsonSchema;
use serde::Deserialize;

/// Where a name is used.
#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[schemars(deny_unknown_fields)]
pub struct ReferencesArgs {
    /// The identifier, e.g. `get_chi2` or `EnsembleSampler` (matched as a whole word, case matters).
    pub name: String,
    /// The filters.
    #[serde(flatten)]
    #[command(flatten)]
    pub filters: Filters,
    /// Only paths inside their repository matching this glob, e.g. `*.py`.
    #[serde(default)]
    #[arg(long, value_name = "GLOB")]
    pub path: Option<String>,
    /// Lines of context around each use, 0 to 5 (default 0).
    #[serde(default)]
    #[arg(long, short = 'C')]
    pub context: Option<u32>,
    /// Uses wanted, 1 to 1,000 (default 100).
    #[serde(default)]
    #[arg(long)]
    pub limit: Option<usize>,
    /// The previous page's next_cursor.
    #[serde(default)]
    #[arg(long)]
    pub cursor: Option<String>,
}

/// The operation.
pub struct References;

impl Op for References {
    type Args = ReferencesArgs;
    type Output = GrepResponse;
    const META: Meta = Meta {
        title: "Find references",
        tool: Some("references"),
        routes: &[Route {
            method: Method::Get,
            path: "/references",
            operation_id: "findReferences",
            summary: "Every line that uses an identifier as a whole word.",
        }],
        tag: "browse",
        description: "Every line of the indexed code and docs using an identifier as a whole word (case matters), grouped by document, each a cited span with GitHub links. Use it to find who calls a function or where a parameter is read. Paged by cursor.",
        answers: "The lines using the name, by document, each with its span and links",
        on_cpu: true,
        cli: Some("references"),
        toolset: Toolset::Code,
        ..Meta::READ
    };

    /// A grep for the name as a whole word, case mattering.
    fn run(a: ReferencesArgs, call: &Call) -> Result<GrepResponse, ApiError> {
        let grep = GrepArgs {
            pattern: a.name,
            regex: false,
            ignore_case: false,
            word: true,
            filters: a.filters,
            path: a.path,
            context: a.context,
            limit: a.limit,
            cursor: a.cursor,
        };
        Ok(call.engine.grep(&grep.into_request(call))?)
    }

    fn text(r: &GrepResponse) -> String {
        r.to_string()
    }
}
