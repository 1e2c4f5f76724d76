//! The configured language model: any OpenAI-compatible Chat Completions
//! endpoint (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server),
//! reached with a key read from a file that never leaves this module's
//! request headers. Off unless configured (`--llm-url`, `--llm-model`);
//! `cairn doctor` checks it.

mod client;
mod config;
mod error;
mod places;
mod spend;
mod stream;
mod wire;

pub use client::{LlmClient, Probe};
pub use config::{ApiKey, DEFAULT_STEPS, LlmConfig, MAX_STEPS, TokenField};
pub use error::LlmError;
pub use places::{MAX_MODEL_WAITS, MAX_MODEL_WAITS_EACH, ModelPlace};
pub use spend::Spending;
pub use stream::{Assembly, Line, estimate};
pub use wire::{ChatReply, ChatRequest, FunctionCall, Message, Tool, ToolCall, Usage};
