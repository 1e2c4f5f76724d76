//! The HTTP client of the configured model: one Chat Completions request at
//! a time, bounded in time and bytes, never following a redirect (it would
//! carry the key elsewhere), with the key kept out of every error.

use super::config::{LlmConfig, TokenField};
use super::error::LlmError;
use super::spend::Spending;
use super::stream::{Assembly, Line};
use super::wire::{Answer, Body, ChatReply, ChatRequest, Models, StreamOptions, Usage};
use serde_json::{Map, Value};
use std::io::BufRead;
use std::time::{Duration, Instant};

/// Most bytes of an answer read (a reply bounded by `max_tokens` is far less).
const MAX_ANSWER_BYTES: u64 = 4 << 20;

/// Most bytes of a streamed answer relayed.
const MAX_STREAM_BYTES: u64 = 16 << 20;

/// Most characters of an error body kept for the message.
const MAX_DETAIL_CHARS: usize = 300;

/// A client of the configured model.
pub struct LlmClient {
    config: LlmConfig,
    agent: ureq::Agent,
    spending: Spending,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("config", &self.config)
            .finish()
    }
}

/// What `cairn doctor` learns from the endpoint: whether it lists the
/// model, and how long a one-word completion took.
#[derive(Debug)]
pub struct Probe {
    /// The model is among those `GET /models` lists (`None`: the endpoint
    /// has no such list, as some servers do not).
    pub listed: Option<bool>,
    /// How long the probe's completion took.
    pub latency: Duration,
    /// What it cost.
    pub tokens: u64,
}

impl LlmClient {
    /// A client for `config`.
    pub fn new(config: LlmConfig) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .max_redirects(0)
            // The key goes to the configured endpoint only, never through an
            // HTTP(S)_PROXY from the environment.
            .proxy(None)
            .http_status_as_error(false)
            .build()
            .into();
        let spending = Spending::new(config.tokens_per_minute);
        Self {
            config,
            agent,
            spending,
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// The tokens its callers spent.
    pub fn spending(&self) -> &Spending {
        &self.spending
    }

    /// The model's reply to `request`, asking for at most the configured
    /// tokens; sent by `until` at the latest when given.
    pub fn chat(
        &self,
        request: &ChatRequest,
        until: Option<Instant>,
    ) -> Result<ChatReply, LlmError> {
        let body = self.body(request, false);
        let (url, text) = self.post(&body, until)?;
        let answer: Answer =
            serde_json::from_str(&text).map_err(|e| self.malformed(&url, e.to_string()))?;
        let choice = answer
            .choices
            .into_iter()
            .next()
            .ok_or_else(|| self.malformed(&url, "no choices".to_owned()))?;
        Ok(ChatReply {
            message: choice.message,
            finish_reason: choice.finish_reason,
            usage: answer.usage,
        })
    }

    /// A caller's own Chat Completions request (the gateway's), sent as it
    /// is but for the configured model, at most the configured tokens and
    /// no streaming; the answer as the endpoint wrote it, and its usage.
    pub fn forward(
        &self,
        body: Map<String, Value>,
        until: Option<Instant>,
    ) -> Result<(Value, Usage), LlmError> {
        let body = self.as_configured(body, false);
        let (url, text) = self.post(&body, until)?;
        let answer: Value =
            serde_json::from_str(&text).map_err(|e| self.malformed(&url, e.to_string()))?;
        if !answer["choices"].is_array() {
            return Err(self.malformed(&url, "no choices".to_owned()));
        }
        let usage = serde_json::from_value(answer["usage"].clone()).unwrap_or_default();
        Ok((answer, usage))
    }

    /// [`LlmClient::chat`], streamed: `on_text` is given the model's text
    /// as it is written (and says whether to go on: a caller gone stops the
    /// reading), and the whole reply is returned at the end (its usage
    /// estimated when the endpoint reports none). A stream that ends before
    /// the model says why it stopped, or in an error, is an error.
    pub fn chat_streaming(
        &self,
        request: &ChatRequest,
        until: Option<Instant>,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<ChatReply, LlmError> {
        let body = self.body(request, true);
        let prompt_chars = serde_json::to_string(&request.messages).map_or(0, |s| s.len());
        let (url, events) = self.events(&body, until, MAX_ANSWER_BYTES)?;
        let mut assembly = Assembly::default();
        let mut done = false;
        for line in events.lines() {
            let line = line.map_err(|e| self.unreachable(&url, e.to_string()))?;
            match assembly.take(&line).map_err(|e| self.malformed(&url, e))? {
                Line::Done => {
                    done = true;
                    break;
                }
                Line::Text(t) if !t.is_empty() && !on_text(&t) => {
                    return Err(self.unreachable(&url, "the answer stopped being wanted"));
                }
                Line::Text(_) | Line::Other => {}
            }
        }
        if !done && !assembly.finished() {
            let cut = "the stream ended before the answer did".to_owned();
            return Err(self.malformed(&url, cut));
        }
        Ok(assembly.reply(prompt_chars))
    }

    /// [`LlmClient::forward`], streamed: the endpoint's server-sent events
    /// as they arrive (at most [`MAX_STREAM_BYTES`], within the timeout),
    /// once it has answered 2xx; its error otherwise.
    pub fn forward_stream(
        &self,
        body: Map<String, Value>,
    ) -> Result<Box<dyn std::io::BufRead + Send>, LlmError> {
        let body = self.as_configured(body, true);
        Ok(self.events(&body, None, MAX_STREAM_BYTES)?.1)
    }

    /// Sends `body` asking for server-sent events: its URL and the events
    /// (at most `limit` bytes), once the endpoint has answered 2xx.
    fn events(
        &self,
        body: &impl serde::Serialize,
        until: Option<Instant>,
        limit: u64,
    ) -> Result<(String, Box<dyn std::io::BufRead + Send>), LlmError> {
        let (url, resp) = self.send(body, until)?;
        if !resp.status().is_success() {
            return Err(self.read(&url, resp).err().unwrap_or_else(|| {
                self.malformed(&url, "an error status with no error".to_owned())
            }));
        }
        let reader = resp.into_body().into_with_config().limit(limit).reader();
        Ok((url, Box::new(std::io::BufReader::new(reader))))
    }

    /// `request` as the endpoint is sent it: the configured model and bound,
    /// streamed (asking for the usage at the end) or not.
    fn body<'a>(&'a self, request: &'a ChatRequest, stream: bool) -> Body<'a> {
        Body {
            model: &self.config.model,
            messages: &request.messages,
            tools: &request.tools,
            max_tokens: self.bound(TokenField::MaxTokens),
            max_completion_tokens: self.bound(TokenField::MaxCompletionTokens),
            stream,
            stream_options: stream.then_some(StreamOptions {
                include_usage: true,
            }),
        }
    }

    /// The configured bound on a reply's tokens, when `field` is the one it is sent in.
    fn bound(&self, field: TokenField) -> Option<u32> {
        (self.config.token_field == field).then_some(self.config.max_tokens)
    }

    /// A caller's request body as it goes to the endpoint: the configured
    /// model, at most the configured tokens, streamed or not.
    fn as_configured(&self, mut body: Map<String, Value>, stream: bool) -> Map<String, Value> {
        let cap = u64::from(self.config.max_tokens);
        // Every name a server reads a bound by is taken out, the least kept.
        let asked = ["max_tokens", "max_completion_tokens", "n_predict"]
            .iter()
            .filter_map(|k| body.remove(*k))
            .collect::<Vec<_>>()
            .into_iter()
            .filter_map(|v| v.as_u64())
            .min();
        // One choice: `n` would multiply what the model writes.
        body.remove("n");
        body.insert("model".to_owned(), self.config.model.clone().into());
        body.insert(
            self.config.token_field.name().to_owned(),
            asked.map_or(cap, |a| a.min(cap)).into(),
        );
        body.insert("stream".to_owned(), stream.into());
        if stream {
            // The tokens spent, in the last event (servers that do not know it ignore it).
            body.insert(
                "stream_options".to_owned(),
                serde_json::json!({"include_usage": true}),
            );
        }
        body
    }

    /// Posts `body` to the Chat Completions endpoint: its URL and the
    /// answer's text, or the endpoint's error.
    fn post(
        &self,
        body: &impl serde::Serialize,
        until: Option<Instant>,
    ) -> Result<(String, String), LlmError> {
        let (url, resp) = self.send(body, until)?;
        let text = self.read(&url, resp)?;
        Ok((url, text))
    }

    /// Sends `body` to the Chat Completions endpoint: its URL and the
    /// response, whatever its status.
    fn send(
        &self,
        body: &impl serde::Serialize,
        until: Option<Instant>,
    ) -> Result<(String, ureq::http::Response<ureq::Body>), LlmError> {
        let url = self.config.endpoint("chat/completions");
        let json = serde_json::to_vec(body).map_err(|e| self.malformed(&url, e.to_string()))?;
        let mut req = self
            .agent
            .post(&url)
            .header("Content-Type", "application/json");
        if let Some(left) = until.map(|u| u.saturating_duration_since(Instant::now())) {
            if left.is_zero() {
                return Err(self.unreachable(&url, "the deadline passed before the request"));
            }
            req = req
                .config()
                .timeout_global(Some(left.min(self.config.timeout)))
                .build();
        }
        if let Some(key) = &self.config.key {
            req = req.header("Authorization", &format!("Bearer {}", key.secret()));
        }
        let resp = req
            .send(&json[..])
            .map_err(|e| self.unreachable(&url, e.to_string()))?;
        Ok((url, resp))
    }

    /// Checks the endpoint as `cairn doctor` does: the model list (where
    /// there is one), then a one-word completion.
    pub fn probe(&self) -> Result<Probe, LlmError> {
        let listed = self.models()?.map(|ids| ids.contains(&self.config.model));
        let started = Instant::now();
        let reply = self.chat(
            &ChatRequest {
                messages: vec![super::wire::Message::new("user", "Reply with the word OK.")],
                tools: Vec::new(),
            },
            None,
        )?;
        Ok(Probe {
            listed,
            latency: started.elapsed(),
            tokens: reply.usage.total_tokens,
        })
    }

    /// The models `GET /models` lists; `None` when the endpoint has no list (404).
    fn models(&self) -> Result<Option<Vec<String>>, LlmError> {
        let url = self.config.endpoint("models");
        let mut req = self.agent.get(&url);
        if let Some(key) = &self.config.key {
            req = req.header("Authorization", &format!("Bearer {}", key.secret()));
        }
        let resp = req
            .call()
            .map_err(|e| self.unreachable(&url, e.to_string()))?;
        if resp.status().as_u16() == 404 {
            return Ok(None);
        }
        let text = self.read(&url, resp)?;
        let models: Models =
            serde_json::from_str(&text).map_err(|e| self.malformed(&url, e.to_string()))?;
        Ok(Some(models.data.into_iter().map(|m| m.id).collect()))
    }

    /// A successful answer's body, bounded; an error status as [`LlmError::Status`].
    fn read(
        &self,
        url: &str,
        mut resp: ureq::http::Response<ureq::Body>,
    ) -> Result<String, LlmError> {
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()
            .map_err(|e| self.unreachable(url, e.to_string()));
        if !(200..300).contains(&status) {
            return Err(LlmError::Status {
                url: url.to_owned(),
                status,
                detail: self.blanked(&text.unwrap_or_default()),
            });
        }
        text
    }

    /// An unreachable endpoint's error, the key blanked from the reason.
    fn unreachable(&self, url: &str, detail: impl AsRef<str>) -> LlmError {
        LlmError::Unreachable {
            url: url.to_owned(),
            detail: self.blanked(detail.as_ref()),
        }
    }

    /// An unreadable answer's error.
    fn malformed(&self, url: &str, detail: String) -> LlmError {
        LlmError::Malformed {
            url: url.to_owned(),
            detail: self.blanked(&detail),
        }
    }

    /// `text` cut short, with the key (should an endpoint echo it) blanked.
    fn blanked(&self, text: &str) -> String {
        // Blanked before it is cut, so no part of a key survives at the cut.
        let whole = match &self.config.key {
            Some(key) => text.replace(key.secret(), "[redacted]"),
            None => text.to_owned(),
        };
        whole.chars().take(MAX_DETAIL_CHARS).collect()
    }
}
