//! `set_weight`: an admin's runtime ranking multiplier for one document.

use super::{Call, Meta, Method, Op, Route, Toolset, Who};
use crate::problem::ApiError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A runtime ranking weight.
#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct WeightArgs {
    /// The document to boost or demote.
    doc_id: String,
    /// Multiplier, clamped to 0.1 to 10.
    #[arg(long)]
    multiplier: f32,
    /// `global` (default), or a toolkit: applies when a search filters on it.
    #[serde(default)]
    #[arg(long)]
    namespace: Option<String>,
    /// Days until it expires, up to 365 (default 30).
    #[serde(default)]
    #[arg(long)]
    ttl_days: Option<f64>,
}

/// What was stored.
#[derive(Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct WeightResponse {
    /// The document.
    pub doc_id: String,
    /// The namespace.
    pub namespace: String,
    /// The multiplier after clamping.
    pub multiplier: f32,
    /// Unix seconds when it stops applying.
    pub expires_at: i64,
    /// The version answering.
    pub index_version: String,
}

/// The operation.
pub struct SetWeight;

impl Op for SetWeight {
    type Args = WeightArgs;
    type Output = WeightResponse;
    const META: Meta = Meta {
        title: "Set a ranking weight",
        tool: Some("set_weight"),
        routes: &[Route {
            method: Method::Post,
            path: "/weight",
            operation_id: "setWeight",
            summary: "Set a runtime ranking weight (admin tokens only).",
        }],
        tag: "admin",
        description: "Admin only: multiplies a document's ranking score (clamped 0.1 to 10) in a namespace until it expires. Use it to correct a ranking; changes future answers.",
        answers: "The stored weight",
        who: Who::Admin,
        read_only: false,
        toolset: Toolset::Admin,
        ..Meta::READ
    };

    /// Stores the weight; the library refuses a caller who is not an admin,
    /// and a document the admin's own groups may not see answers like a
    /// missing one.
    fn run(a: WeightArgs, call: &Call) -> Result<WeightResponse, ApiError> {
        let namespace = a.namespace.unwrap_or_else(|| "global".to_owned());
        let w = call.engine.set_weight(
            &a.doc_id,
            a.multiplier,
            &namespace,
            a.ttl_days.unwrap_or(30.0),
            &call.caller,
        )?;
        Ok(WeightResponse {
            doc_id: a.doc_id,
            namespace,
            multiplier: w.multiplier,
            expires_at: w.expires_at,
            index_version: call.index_version(),
        })
    }

    fn text(w: &WeightResponse) -> String {
        format!(
            "weight {} set on {} in {} until unix time {}",
            w.multiplier, w.doc_id, w.namespace, w.expires_at
        )
    }
}
