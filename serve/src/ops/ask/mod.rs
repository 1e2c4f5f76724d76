//! `ask`: a written answer from the configured model, which reads the index
//! through cairn's own tools as the caller ([`tools`], [`converse`]), every
//! citation and quotation checked against the indexed lines ([`verify`]).

mod converse;
mod progress;
mod tools;
mod verify;

pub use converse::AskResponse;
pub use progress::{AskEvent, Progress, Step};
pub use verify::{AskCitation, Unverified};

use super::{Call, Meta, Method, Op, PassageRef, Route, Toolset};
use crate::problem::ApiError;
use cairn_search::Code;
use converse::ask;
use schemars::JsonSchema;
use serde::Deserialize;

/// A question for the configured model.
#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    /// The question, up to 1,000 characters.
    pub question: String,
    /// Most rounds of tool calls before the model must answer (default and most: the server's --llm-max-steps, 6 unless set).
    #[serde(default)]
    #[arg(long)]
    pub max_steps: Option<u32>,
}

/// The operation.
pub struct Ask;

impl Op for Ask {
    type Args = AskArgs;
    type Output = AskResponse;
    const META: Meta = Meta {
        title: "Ask (a written answer)",
        tool: Some("ask"),
        routes: &[Route {
            method: Method::Post,
            path: "/ask",
            operation_id: "ask",
            summary: "A written answer from the configured model, with checked citations.",
        }],
        tag: "search",
        description: "Where a model is configured: cairn's model answers in prose from the index (searching and reading as you), citing [n] passages with permalinks, each citation and quotation checked. Use it only without a model of your own.",
        answers: "The answer, its checked citations, what did not hold, and the steps taken",
        on_cpu: true,
        model: true,
        cli: Some("ask"),
        toolset: Toolset::Explain,
        ..Meta::READ
    };

    fn run(a: AskArgs, call: &Call) -> Result<AskResponse, ApiError> {
        let Some(llm) = call.llm.as_deref() else {
            return Err(ApiError::new(
                Code::NotFound,
                "ask needs a configured model: start with --llm-url and --llm-model",
            ));
        };
        if call.anonymous {
            return Err(ApiError::new(
                Code::Unauthorized,
                "ask spends the configured model's tokens: send a token",
            ));
        }
        ask(&a.question, a.max_steps, call, llm)
    }

    fn text(r: &AskResponse) -> String {
        r.to_string()
    }

    fn cites(r: &AskResponse) -> Vec<PassageRef> {
        r.citations
            .iter()
            .map(|c| PassageRef {
                doc_id: c.doc_id.clone(),
                start: c.start_line,
                end: c.end_line,
                title: format!("[{}] {}", c.n, c.doc_id),
                version: r.index_version.clone(),
                focus: None,
            })
            .collect()
    }
}
