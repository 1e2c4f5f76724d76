//! The Chat Completions wire: the parts of OpenAI's request and answer that
//! cairn sends and reads (messages, tools and tool calls, usage); fields it
//! does not name are ignored on the way in.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One chat message.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// Its text (an assistant's may be absent when it calls tools).
    #[serde(default)]
    pub content: Option<String>,
    /// The tools an assistant's message calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call a `tool` message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A message of `role` saying `text`.
    pub fn new(role: &str, text: impl Into<String>) -> Self {
        Self {
            role: role.to_owned(),
            content: Some(text.into()),
            ..Self::default()
        }
    }
}

/// A tool call in an assistant's message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id its answer names.
    #[serde(default)]
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type", default = "function")]
    pub kind: String,
    /// The function and its arguments.
    pub function: FunctionCall,
}

fn function() -> String {
    "function".to_owned()
}

/// The function a tool call names, and its arguments as the model wrote them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool's name.
    pub name: String,
    /// A JSON object, as text (it may not parse: the model wrote it).
    #[serde(default)]
    pub arguments: String,
}

/// A tool offered to the model.
#[derive(Clone, Debug, Serialize)]
pub struct Tool {
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Its name, description and JSON schema.
    pub function: ToolFunction,
}

/// A tool's name, what it does and its arguments' JSON schema.
#[derive(Clone, Debug, Serialize)]
pub struct ToolFunction {
    /// The name the model calls it by.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its arguments' JSON schema.
    pub parameters: Value,
}

impl Tool {
    /// The function tool `name`.
    pub fn function(name: &str, description: &str, parameters: Value) -> Self {
        Self {
            kind: "function",
            function: ToolFunction {
                name: name.to_owned(),
                description: description.to_owned(),
                parameters,
            },
        }
    }
}

/// What cairn asks of the model.
#[derive(Clone, Debug, Default)]
pub struct ChatRequest {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools it may call (none: it answers in text).
    pub tools: Vec<Tool>,
}

/// Tokens a request took, as the endpoint counted them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Tokens written.
    #[serde(default)]
    pub completion_tokens: u64,
    /// Both.
    #[serde(default)]
    pub total_tokens: u64,
}

/// The model's answer: its message, why it stopped, and what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatReply {
    /// The assistant's message.
    pub message: Message,
    /// `stop`, `length`, `tool_calls` …, when the endpoint says.
    pub finish_reason: Option<String>,
    /// Tokens used.
    pub usage: Usage,
}

/// The request body: the model, the messages, the tools, the bound.
#[derive(Serialize)]
pub(super) struct Body<'a> {
    pub model: &'a str,
    pub messages: &'a [Message],
    #[serde(skip_serializing_if = "<[Tool]>::is_empty")]
    pub tools: &'a [Tool],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
}

/// What a streamed answer should carry besides the text.
#[derive(Serialize)]
pub(super) struct StreamOptions {
    /// The tokens spent, in a last chunk.
    pub include_usage: bool,
}

/// The answer body, as far as cairn reads it.
#[derive(Deserialize)]
pub(super) struct Answer {
    pub choices: Vec<Choice>,
    #[serde(default)]
    pub usage: Usage,
}

/// One choice of an answer.
#[derive(Deserialize)]
pub(super) struct Choice {
    pub message: Message,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// `GET /models`: the models the endpoint serves.
#[derive(Deserialize)]
pub(super) struct Models {
    pub data: Vec<ModelEntry>,
}

/// One served model.
#[derive(Deserialize)]
pub(super) struct ModelEntry {
    pub id: String,
}
