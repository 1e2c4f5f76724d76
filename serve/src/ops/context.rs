//! `context`: cited passages within a token budget, for bots that build prompts.

use super::{Call, Meta, Method, Op, Route};
use crate::problem::ApiError;
use cairn_search::{ChatMessage, ContextRequest, ContextResponse, Filters, Mode, TokenizerName};
use schemars::JsonSchema;
use serde::Deserialize;

/// A prompt-context request.
#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[schemars(deny_unknown_fields)]
pub struct ContextArgs {
    /// The question. When absent, the last user message of `messages` is the question.
    #[serde(default)]
    pub query: Option<String>,
    /// Up to 5 other phrasings of the question, fused with it: keyword rewrites naming the identifiers the answer likely uses, and one plain restatement.
    #[serde(default, deserialize_with = "cairn_search::one_or_many")]
    #[schemars(with = "Option<Vec<String>>")]
    #[arg(long = "queries", visible_alias = "also", value_name = "PHRASING")]
    pub queries: Vec<String>,
    /// OpenAI-style chat messages; the answer returns them with the context added to the system message.
    #[serde(default)]
    #[arg(skip)]
    pub messages: Option<Vec<ChatMessage>>,
    /// Token budget of the context block, 100 to 8,000 (default 2,000).
    #[serde(default)]
    #[arg(long)]
    pub max_tokens: Option<usize>,
    /// The tokenizer that counts the budget: o200k_base (default; GPT-4o and later) or cl100k_base.
    #[serde(default)]
    #[arg(long, value_enum)]
    pub tokenizer: Option<TokenizerName>,
    /// Search hits considered (default 10).
    #[serde(default)]
    #[arg(long)]
    pub limit: Option<usize>,
    /// The filters.
    #[serde(flatten)]
    #[command(flatten)]
    pub filters: Filters,
    /// Evidence (cosine, 0 to 1) a passage needs (default 0.3).
    #[serde(default)]
    #[arg(long)]
    pub threshold: Option<f32>,
    /// hybrid (default), bm25 or vector.
    #[serde(default)]
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Passages as the files' exact bytes even for notebooks (default false: a notebook's cells, which carry more content per token).
    #[serde(default)]
    #[arg(long)]
    pub raw: bool,
    /// Give each citation `last_changed`: when its lines last changed, and in which commit.
    #[serde(default)]
    #[arg(long)]
    pub history: bool,
}

/// The operation.
pub struct Context;

impl Op for Context {
    type Args = ContextArgs;
    type Output = ContextResponse;
    const META: Meta = Meta {
        title: "Build a cited context",
        tool: Some("context"),
        routes: &[Route {
            method: Method::Post,
            path: "/context",
            operation_id: "buildContext",
            summary: "Build a cited context block for a prompt.",
        }],
        tag: "search",
        description: "For bots that build prompts: searches, then returns numbered passages ([1], [2] …) cut at line boundaries to fit max_tokens, with their links. Use it to ground a prompt in one call. Add queries: keyword rewrites naming likely identifiers.",
        answers: "Numbered passages within the token budget, and their citations",
        on_cpu: true,
        cli: Some("context"),
        ..Meta::READ
    };

    fn run(a: ContextArgs, call: &Call) -> Result<ContextResponse, ApiError> {
        let request = ContextRequest {
            query: a.query,
            queries: a.queries,
            messages: a.messages,
            max_tokens: a.max_tokens.unwrap_or(0),
            limit: a.limit.unwrap_or(0),
            filters: a.filters,
            threshold: a.threshold,
            mode: a.mode.unwrap_or_default(),
            tokenizer: a.tokenizer.unwrap_or_default(),
            raw: a.raw,
            history: a.history,
            groups: call.groups(),
            deadline: call.deadline.clone(),
        };
        Ok(call.engine.context(&request)?)
    }

    fn text(r: &ContextResponse) -> String {
        r.context.clone()
    }
}
