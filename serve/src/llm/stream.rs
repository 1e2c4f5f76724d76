//! Streamed Chat Completions: the endpoint's server-sent events read one
//! `data:` line at a time and assembled into the reply they make (its
//! text, its tool calls by index, why it stopped, its usage), so a caller
//! can show the text as it is written and still act on the whole reply.

use super::wire::{ChatReply, FunctionCall, Message, ToolCall, Usage};
use serde::Deserialize;

/// Most tool calls one streamed reply may make (more are dropped).
const MAX_CALLS: usize = 16;

/// A streamed reply, assembled chunk by chunk.
#[derive(Debug, Default)]
pub struct Assembly {
    content: String,
    calls: Vec<ToolCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
}

/// One `chat.completion.chunk`, as far as cairn reads it.
#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<Usage>,
    /// What an endpoint sends instead when it fails mid-stream.
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    delta: Delta,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Default, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<CallDelta>,
}

#[derive(Deserialize)]
struct CallDelta {
    #[serde(default)]
    index: usize,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// What one line of the stream was.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// Text the model wrote (possibly empty: a chunk of tool calls or usage).
    Text(String),
    /// `data: [DONE]`: the reply is whole.
    Done,
    /// Not a data line (a comment, an event name, a blank).
    Other,
}

impl Assembly {
    /// Takes one line of the stream; an unreadable `data:` line is an error.
    pub fn take(&mut self, line: &str) -> Result<Line, String> {
        let Some(data) = line.trim_end().strip_prefix("data:") else {
            return Ok(Line::Other);
        };
        let data = data.trim_start();
        if data == "[DONE]" {
            return Ok(Line::Done);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| e.to_string())?;
        if let Some(e) = chunk.error {
            let said: String = e.to_string().chars().take(300).collect();
            return Err(format!("the stream ended in an error: {said}"));
        }
        if let Some(u) = chunk.usage {
            self.usage = Some(u);
        }
        let mut text = String::new();
        for choice in chunk.choices.into_iter().take(1) {
            if let Some(t) = choice.delta.content {
                text.push_str(&t);
            }
            for d in choice.delta.tool_calls {
                self.call_delta(d);
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
        self.content.push_str(&text);
        Ok(Line::Text(text))
    }

    /// Adds one piece of a tool call to the call at its index.
    fn call_delta(&mut self, d: CallDelta) {
        if d.index >= MAX_CALLS {
            return;
        }
        while self.calls.len() <= d.index {
            self.calls.push(ToolCall {
                id: String::new(),
                kind: "function".to_owned(),
                function: FunctionCall {
                    name: String::new(),
                    arguments: String::new(),
                },
            });
        }
        let call = &mut self.calls[d.index];
        if let Some(id) = d.id {
            call.id = id;
        }
        if let Some(f) = d.function {
            call.function.name.push_str(f.name.as_deref().unwrap_or(""));
            call.function
                .arguments
                .push_str(f.arguments.as_deref().unwrap_or(""));
        }
    }

    /// The whole reply; without the endpoint's usage, an estimate (four
    /// characters a token) from `prompt_chars` and what was written.
    pub fn reply(self, prompt_chars: usize) -> ChatReply {
        let usage = self.usage(prompt_chars);
        let calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .filter(|c| !c.function.name.is_empty())
            .collect();
        ChatReply {
            message: Message {
                role: "assistant".to_owned(),
                content: Some(self.content).filter(|c| !c.is_empty()),
                tool_calls: calls,
                tool_call_id: None,
            },
            finish_reason: self.finish_reason,
            usage,
        }
    }

    /// The usage so far: the endpoint's, or an estimate as in [`Assembly::reply`].
    pub fn usage(&self, prompt_chars: usize) -> Usage {
        self.usage
            .unwrap_or_else(|| estimate(prompt_chars, self.written()))
    }

    /// Whether the model said why it stopped (a stream cut short did not).
    pub fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// Characters written: the text and every tool call's name and arguments.
    fn written(&self) -> usize {
        self.content.len()
            + self
                .calls
                .iter()
                .map(|c| c.function.name.len() + c.function.arguments.len())
                .sum::<usize>()
    }
}

/// Tokens estimated at four characters each (an endpoint that reports none).
pub fn estimate(prompt_chars: usize, written_chars: usize) -> Usage {
    let (p, c) = (
        prompt_chars.div_ceil(4) as u64,
        written_chars.div_ceil(4) as u64,
    );
    Usage {
        prompt_tokens: p,
        completion_tokens: c,
        total_tokens: p + c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_tool_calls_are_assembled_from_their_pieces() {
        let mut a = Assembly::default();
        let lines = [
            r#"data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "}}]}"#,
            ": keep-alive",
            r#"data: {"choices":[{"index":0,"delta":{"content":"look."}}]}"#,
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"grep","arguments":"{\"pat"}}]}}]}"#,
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"tern\":\"x\"}"}}]}}]}"#,
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":99,"function":{"name":"flood"}}]},"finish_reason":"tool_calls"}]}"#,
            r#"data: {"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39}}"#,
        ];
        let mut shown = String::new();
        for l in lines {
            if let Line::Text(t) = a.take(l).expect("line") {
                shown.push_str(&t);
            }
        }
        assert_eq!(a.take("data: [DONE]"), Ok(Line::Done));
        let reply = a.reply(0);
        assert_eq!(shown, "Let me look.");
        assert_eq!(reply.message.content.as_deref(), Some("Let me look."));
        assert_eq!(reply.message.tool_calls.len(), 1);
        assert_eq!(reply.message.tool_calls[0].id, "c1");
        assert_eq!(
            reply.message.tool_calls[0].function.arguments,
            r#"{"pattern":"x"}"#
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(reply.usage.total_tokens, 39);
    }

    #[test]
    fn an_error_chunk_is_an_error_and_a_cut_stream_is_unfinished() {
        let mut a = Assembly::default();
        a.take(r#"data: {"choices":[{"delta":{"content":"par"}}]}"#)
            .expect("line");
        assert!(!a.finished(), "no finish_reason yet");
        let e = a
            .take(r#"data: {"error":{"message":"overloaded"}}"#)
            .expect_err("an error chunk");
        assert!(e.contains("overloaded"), "{e}");
    }

    #[test]
    fn without_usage_the_tokens_are_estimated_and_bad_lines_refused() {
        let mut a = Assembly::default();
        a.take(r#"data: {"choices":[{"delta":{"content":"12345678"}}]}"#)
            .expect("line");
        assert!(a.take("data: {not json").is_err());
        let u = a.reply(40).usage;
        assert_eq!((u.prompt_tokens, u.completion_tokens), (10, 2));
    }
}
