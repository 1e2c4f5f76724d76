//! `explain`: where a pasted error is raised and what explains it.

use super::{Call, Meta, Method, Op, Route, Toolset};
use crate::problem::ApiError;
use cairn_search::{ExplainRequest, ExplainResponse};
use schemars::JsonSchema;
use serde::Deserialize;

/// An error to explain.
#[derive(Debug, Default, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ExplainArgs {
    /// The pasted traceback, log excerpt or one-line message, up to 16,384 bytes.
    #[arg(
        default_value = "-",
        value_parser = text_or_stdin,
        help = "The error text (a traceback, a log excerpt or a message); `-` or none reads stdin"
    )]
    pub text: String,
    /// Only this toolkit's code and docs (lowercase repository name, e.g. `emcee`).
    #[serde(default)]
    #[arg(long)]
    pub toolkit: Option<String>,
    /// The version of the package you have installed, e.g. `3.1.6`.
    #[serde(default)]
    #[arg(long)]
    pub version: Option<String>,
    /// Explaining passages wanted, 1 to 20 (default 5).
    #[serde(default)]
    #[arg(long)]
    pub limit: Option<usize>,
}

/// The CLI's text: as given, or stdin's for `-` (a traceback is easier piped than quoted).
fn text_or_stdin(given: &str) -> Result<String, String> {
    use cairn_search::explain::MAX_TEXT_BYTES;
    use std::io::Read;
    if given != "-" {
        return Ok(given.to_owned());
    }
    // One byte past the limit is enough to know it is too long.
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_TEXT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("reading the error text from stdin: {e}"))?;
    if bytes.len() > MAX_TEXT_BYTES {
        return Err(format!(
            "stdin holds more than {MAX_TEXT_BYTES} bytes: paste the traceback's last part"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "stdin is not UTF-8 text (invalid byte at offset {}): paste the error as text",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The operation.
pub struct Explain;

impl Op for Explain {
    type Args = ExplainArgs;
    type Output = ExplainResponse;
    const META: Meta = Meta {
        title: "Explain an error",
        tool: Some("explain"),
        routes: &[Route {
            method: Method::Post,
            path: "/explain",
            operation_id: "explainError",
            summary: "Explain a pasted error: where it is raised and what explains it.",
        }],
        tag: "search",
        description: "Paste a traceback, log excerpt or error message: returns the raise/throw/warn statements whose message matches (exact lines, GitHub links), the frames mapped to indexed lines, and passages that explain it. Use it when a user reports an error.",
        answers: "Raise sites, mapped frames and explaining passages, each with exact lines and links",
        on_cpu: true,
        cli: Some("explain"),
        toolset: Toolset::Explain,
        ..Meta::READ
    };

    fn run(a: ExplainArgs, call: &Call) -> Result<ExplainResponse, ApiError> {
        let request = ExplainRequest {
            text: a.text,
            toolkit: a.toolkit,
            version: a.version,
            limit: a
                .limit
                .unwrap_or(cairn_search::explain::DEFAULT_EXPLAIN_LIMIT),
            groups: call.groups(),
            deadline: call.deadline.clone(),
        };
        Ok(call.engine.explain(&request)?)
    }

    fn text(r: &ExplainResponse) -> String {
        r.to_string()
    }
}
