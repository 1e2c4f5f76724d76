//! The tools `ask` offers its model: cairn's own read operations, from the
//! operations table (name, description and input schema as MCP lists
//! them), run on this thread as the caller. What a tool returns is its
//! text rendering, cut to a bound; a failure is returned as text too, so
//! the model can correct its call.

use super::progress::Step;
use crate::llm::Tool;
use crate::ops::{Call, Input, OPERATIONS, Operation};
use serde_json::Value;

/// The operations the model may call.
const OFFERED: [&str; 7] = [
    "search_passages",
    "retrieve",
    "grep",
    "definitions",
    "references",
    "explain",
    "history",
];

/// Most bytes of one tool result given back to the model.
const MAX_RESULT_BYTES: usize = 12 << 10;

/// Most characters of a call's arguments kept in its step.
const MAX_ARGUMENT_CHARS: usize = 500;

/// What one tool call came to: the text for the model, the step for the audit.
pub(super) struct Outcome {
    pub text: String,
    pub step: Step,
}

/// The offered operations.
fn offered() -> impl Iterator<Item = &'static Operation> {
    OPERATIONS
        .iter()
        .filter(|op| op.meta.tool.is_some_and(|t| OFFERED.contains(&t)))
}

/// The tools as the model is offered them.
pub(super) fn specs() -> Vec<Tool> {
    offered()
        .map(|op| {
            Tool::function(
                op.meta.tool.unwrap_or_default(),
                op.meta.description,
                Value::Object((op.input)().as_ref().clone()),
            )
        })
        .collect()
}

/// Runs the tool `name` on `arguments` (the model's JSON text) for `call`.
pub(super) fn run(name: &str, arguments: &str, call: &Call) -> Outcome {
    let Some(op) = offered().find(|op| op.meta.tool == Some(name)) else {
        return failed(name, arguments, format!("no tool is named {name:?}"));
    };
    let args: Value = match serde_json::from_str(if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    }) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => {
            return failed(
                name,
                arguments,
                "the arguments must be a JSON object".to_owned(),
            );
        }
        Err(e) => return failed(name, arguments, format!("the arguments are not JSON: {e}")),
    };
    // On a server the call goes to the CPU pool like any other, under its
    // payer's budget and an ordinary deadline; the CLI runs it here.
    let answered = match (call.pool.is_some(), tokio::runtime::Handle::try_current()) {
        (true, Ok(rt)) => rt.block_on(op.run(Input::Value(args), call.for_step())),
        _ => op.run_here(Input::Value(args), call),
    };
    match answered {
        Ok(answer) => Outcome {
            text: bounded(&answer.text),
            step: Step {
                tool: name.to_owned(),
                arguments: cut(arguments, MAX_ARGUMENT_CHARS),
                ok: true,
                returned: answer
                    .cites
                    .iter()
                    .map(|p| format!("{}:{}-{}", p.doc_id, p.start, p.end))
                    .collect(),
                error: None,
            },
        },
        Err(e) => {
            let why = match &e.field {
                Some(field) => format!("{} [{field}]: {}", e.code, e.detail),
                None => format!("{}: {}", e.code, e.detail),
            };
            failed(name, arguments, why)
        }
    }
}

/// A call past the round's limit: not run.
pub(super) fn skipped(name: &str, arguments: &str) -> Outcome {
    failed(
        name,
        arguments,
        "skipped: too many calls in one round".to_owned(),
    )
}

/// A call that did not run, told to the model as an error it may correct.
fn failed(name: &str, arguments: &str, why: String) -> Outcome {
    Outcome {
        text: format!("error: {why}"),
        step: Step {
            tool: cut(name, 100),
            arguments: cut(arguments, MAX_ARGUMENT_CHARS),
            ok: false,
            returned: Vec::new(),
            error: Some(cut(&why, MAX_ARGUMENT_CHARS)),
        },
    }
}

/// `text` within [`MAX_RESULT_BYTES`], cut at a line, saying so.
fn bounded(text: &str) -> String {
    if text.len() <= MAX_RESULT_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_RESULT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let kept = text[..end]
        .rfind('\n')
        .map_or(&text[..end], |at| &text[..at]);
    format!("{kept}\n[cut at {MAX_RESULT_BYTES} bytes: ask for fewer lines or hits]")
}

/// The first `n` characters of `s`.
fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_offered_tool_is_an_operation() {
        let names: Vec<String> = specs().iter().map(|t| t.function.name.clone()).collect();
        assert_eq!(names.len(), OFFERED.len(), "{names:?}");
        for t in specs() {
            assert_eq!(
                t.function.parameters["type"], "object",
                "{}",
                t.function.name
            );
        }
    }

    #[test]
    fn long_results_are_cut_at_a_line() {
        let text: String = (0..5_000).map(|i| format!("line {i}\n")).collect();
        let out = bounded(&text);
        assert!(out.len() < MAX_RESULT_BYTES + 100);
        assert!(out.ends_with("hits]"));
        assert!(
            out.lines()
                .rev()
                .nth(1)
                .is_some_and(|l| l.starts_with("line "))
        );
    }
}
