//! `tree`: the doc_id hierarchy under a prefix.

use super::{Call, Meta, Method, Op, Route};
use crate::problem::ApiError;
use cairn_search::TreeResponse;
use schemars::JsonSchema;
use serde::Deserialize;

/// Which part of the document tree.
#[derive(Debug, Default, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct TreeArgs {
    /// A doc_id prefix (`category`, `category/repo`, `category/repo/folder`); empty lists the top.
    #[serde(default)]
    pub prefix: Option<String>,
    /// Levels below the prefix (default 2).
    #[serde(default)]
    #[arg(long)]
    pub depth: Option<usize>,
    /// Most entries returned, 1 to 5,000 (default 500).
    #[serde(default)]
    #[arg(long)]
    pub max_entries: Option<usize>,
}

/// The operation.
pub struct Tree;

impl Op for Tree {
    type Args = TreeArgs;
    type Output = TreeResponse;
    const META: Meta = Meta {
        title: "List documents",
        tool: Some("tree"),
        routes: &[Route {
            method: Method::Get,
            path: "/tree",
            operation_id: "listDocuments",
            summary: "List the documents under a prefix.",
        }],
        tag: "browse",
        description: "Lists the doc_id hierarchy (categories, repositories, folders, files with doctype and line count) under a prefix. Use it to discover what is indexed.",
        answers: "Folders and files under the prefix",
        cli: Some("tree"),
        ..Meta::READ
    };

    fn run(a: TreeArgs, call: &Call) -> Result<TreeResponse, ApiError> {
        Ok(call.engine.tree(
            a.prefix.as_deref().unwrap_or(""),
            a.depth.unwrap_or(cairn_search::DEFAULT_TREE_DEPTH),
            a.max_entries.unwrap_or(cairn_search::DEFAULT_TREE_ENTRIES),
            call.caller.groups(),
        )?)
    }

    fn text(r: &TreeResponse) -> String {
        r.to_string()
    }
}
