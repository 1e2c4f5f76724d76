//! Prompt context for bots: a question (or OpenAI-style chat messages) and a
//! token budget → numbered, cited passages that fit the budget, counted with
//! the tokenizer of the model the bot prompts (tiktoken's BPE, not 4 chars a token).
//!
//! Passages are the search hits' lines as retrieve gives them (a notebook's
//! cells unless `raw`), so the budget counts what the bot will read; they are
//! cut at line boundaries when it runs out, and a hit whose evidence is under
//! the threshold never enters.

use crate::engine::{Engine, TextFormat};
use crate::error::{SearchError, invalid};
use crate::filters::{Filters, Mode};
use crate::passages::{Hit, SearchRequest};
use crate::retrieve::{RetrieveResponse, SpanRequest};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Budget used when the caller names none.
pub const DEFAULT_CONTEXT_TOKENS: usize = 2000;
/// Smallest budget accepted: room for the preamble and one short passage.
pub const MIN_CONTEXT_TOKENS: usize = 100;
/// Largest budget accepted (the response stays well under 100,000 characters).
pub const MAX_CONTEXT_TOKENS: usize = 8000;
/// Evidence (cosine with the query) a passage needs when the caller names no threshold.
pub const DEFAULT_CONTEXT_THRESHOLD: f32 = 0.3;
/// Most chat messages accepted.
pub const MAX_MESSAGES: usize = 100;
/// A passage cut to fewer lines than this is left out rather than shown as a stub.
const MIN_PASSAGE_LINES: usize = 3;

/// Which BPE counts the budget.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ToSchema,
    schemars::JsonSchema,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum TokenizerName {
    /// GPT-4o, GPT-4.1, o-series, GPT-5 family.
    #[default]
    #[value(name = "o200k_base")]
    O200kBase,
    /// GPT-4, GPT-3.5.
    #[value(name = "cl100k_base")]
    Cl100kBase,
}

impl TokenizerName {
    /// Parses a tokenizer name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "o200k_base" => Some(Self::O200kBase),
            "cl100k_base" => Some(Self::Cl100kBase),
            _ => None,
        }
    }

    /// Tokens `text` takes.
    pub fn count(&self, text: &str) -> usize {
        let bpe = match self {
            Self::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Self::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        bpe.encode_ordinary(text).len()
    }
}

/// One chat message, OpenAI style.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatMessage {
    /// `system`, `developer`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The text.
    pub content: String,
}

/// A context request.
#[derive(Clone, Debug, Default)]
pub struct ContextRequest {
    /// The question; when absent, the last user message is the question.
    pub query: Option<String>,
    /// Other phrasings, fused with it (see [`crate::SearchRequest::queries`]).
    pub queries: Vec<String>,
    /// Chat messages to add the context to.
    pub messages: Option<Vec<ChatMessage>>,
    /// Token budget of the context block (0: the default).
    pub max_tokens: usize,
    /// Search hits considered (0: 10).
    pub limit: usize,
    /// Filters, as for search.
    pub filters: Filters,
    /// Evidence a passage needs (None: [`DEFAULT_CONTEXT_THRESHOLD`]).
    pub threshold: Option<f32>,
    /// Ranking mode.
    pub mode: Mode,
    /// The BPE that counts the budget.
    pub tokenizer: TokenizerName,
    /// Passages as the exact bytes even for notebooks (default: a notebook's cells).
    pub raw: bool,
    /// Give each citation `last_changed`, where the version records line history.
    pub history: bool,
    /// The caller's access groups (None: a trusted caller).
    pub groups: Option<Vec<String>>,
    /// When the answer stops being wanted (see [`crate::SearchRequest::deadline`]).
    pub deadline: crate::Deadline,
}

/// One cited passage of the context block.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct Citation {
    /// The `[n]` the block cites it by.
    pub n: usize,
    /// The document.
    pub doc_id: String,
    /// First line in the block.
    pub start_line: u32,
    /// Last line in the block.
    pub end_line: u32,
    /// The hit was cut to fit the budget.
    pub truncated: bool,
    /// The form its text is in (a notebook's cells, or raw lines).
    pub text_format: TextFormat,
    /// On the default branch.
    pub github_url: String,
    /// On the exact commit.
    pub permalink: String,
    /// sha256 of the whole file.
    pub content_sha256: String,
    /// When the cited lines last changed (asked for with `history`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_changed: Option<crate::history::LastChanged>,
}

/// The context block and what it cites.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct ContextResponse {
    /// The question answered.
    pub query: String,
    /// Numbered passages, ready to paste into a prompt.
    pub context: String,
    /// Tokens the block takes.
    pub tokens: usize,
    /// The budget it fits.
    pub max_tokens: usize,
    /// The BPE that counted.
    pub tokenizer: TokenizerName,
    /// The passages, in block order.
    pub citations: Vec<Citation>,
    /// No passage cleared the threshold: the bot should say it does not know.
    pub insufficient_evidence: bool,
    /// The messages with the context added to the system message (when messages were given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<ChatMessage>>,
    /// The version answering.
    pub index_version: String,
}

/// The question a request asks: `query`, or the last user message.
fn question(req: &ContextRequest) -> Result<String, SearchError> {
    if let Some(q) = req.query.as_deref().filter(|q| !q.trim().is_empty()) {
        return Ok(q.to_owned());
    }
    let messages = req
        .messages
        .as_deref()
        .ok_or_else(|| invalid("query", "give a query or messages"))?;
    messages
        .iter()
        .rev()
        .find(|m| m.role == "user" && !m.content.trim().is_empty())
        .map(|m| m.content.clone())
        .ok_or_else(|| invalid("messages", "holds no user message with text"))
}

fn preamble(version: &str) -> String {
    format!(
        "Passages from the cairn index {version}, each an exact span of a file at a pinned commit. \
         Cite a passage as [n] with its link.\n"
    )
}

fn passage_header(n: usize, doc_id: &str, start: u32, end: u32, link: &str) -> String {
    format!("\n[{n}] {doc_id} lines {start}-{end}\n{link}\n")
}

/// Wraps lines in a fence longer than any backtick run inside them.
fn fenced(text: &str) -> String {
    let fence = cairn_index::notebook::fence_for(text.lines());
    let body = text.strip_suffix('\n').unwrap_or(text);
    format!("{fence}\n{body}\n{fence}\n")
}

impl Engine {
    /// Builds a prompt context (see the module docs).
    pub fn context(&self, req: &ContextRequest) -> Result<ContextResponse, SearchError> {
        let budget = context_budget(req)?;
        let query = question(req)?;
        let threshold = req.threshold.unwrap_or(DEFAULT_CONTEXT_THRESHOLD);
        let found = self.search(&SearchRequest {
            query: query.clone(),
            queries: req.queries.clone(),
            limit: req.limit,
            filters: req.filters.clone(),
            threshold: Some(threshold),
            mode: req.mode,
            groups: req.groups.clone(),
            deadline: req.deadline.clone(),
        })?;
        let tok = req.tokenizer;
        let text = preamble(&found.index_version);
        let mut block = Block {
            used: tok.count(&text),
            text,
            limit: budget,
            tok,
        };
        let mut citations = Vec::new();
        let strong = found
            .hits
            .iter()
            .filter(|h| crate::passages::evidence(h, found.mode) >= threshold);
        for hit in strong {
            let n = citations.len() + 1;
            let Some(passage) = self.fit_passage(req, hit, n, &block) else {
                continue;
            };
            block.text.push_str(&passage.text);
            block.used += passage.cost;
            citations.push(self.citation(req, n, hit, passage.shown));
        }
        let mut block = block.text;
        let insufficient_evidence = citations.is_empty();
        if insufficient_evidence {
            block = format!(
                "{}\nNo passage in the index answers this with enough evidence. Say so rather than guess.\n",
                preamble(&found.index_version)
            );
        }
        // The block was assembled from separately counted pieces; BPE merges
        // across a seam can only shrink the total, but count the whole to report it.
        let tokens = tok.count(&block);
        let messages = req.messages.as_ref().map(|m| with_context(m, &block));
        Ok(ContextResponse {
            query,
            context: block,
            tokens,
            max_tokens: budget,
            tokenizer: tok,
            citations,
            insufficient_evidence,
            messages,
            index_version: found.index_version,
        })
    }

    /// `hit`'s lines as passage `n`, cut at line boundaries to fit the budget left (or `None`).
    fn fit_passage(
        &self,
        req: &ContextRequest,
        hit: &Hit,
        n: usize,
        block: &Block,
    ) -> Option<Passage> {
        let asked = SpanRequest::lines(
            hit.doc_id.as_str(),
            i64::from(hit.start_line),
            i64::from(hit.end_line),
        )
        .raw(req.raw);
        let mut shown = self.retrieve(&asked, req.groups.as_deref()).ok()?;
        loop {
            // The header cites the lines the passage shows, cut or not.
            let text = format!(
                "{}{}",
                passage_header(
                    n,
                    &shown.doc_id,
                    shown.start_line,
                    shown.end_line,
                    &shown.permalink
                ),
                fenced(&shown.text)
            );
            let cost = block.tok.count(&text);
            if block.used + cost <= block.limit {
                return Some(Passage { text, cost, shown });
            }
            let lines = shown.text.lines().count();
            if lines <= MIN_PASSAGE_LINES {
                return None;
            }
            // Keep a prefix of the lines in proportion to the overshoot; the
            // span ends on the line the last kept one stands for, at least
            // one raw line shorter each round.
            let ratio = (block.limit - block.used) as f64 / cost as f64;
            let keep = ((lines as f64 * ratio) as usize).clamp(1, lines - 1);
            let end = shown.line_number(keep - 1).min(shown.end_line - 1);
            if end < shown.start_line {
                return None;
            }
            let fewer = SpanRequest::lines(
                hit.doc_id.as_str(),
                i64::from(shown.start_line),
                i64::from(end),
            )
            .raw(req.raw);
            shown = self.retrieve(&fewer, req.groups.as_deref()).ok()?;
        }
    }

    /// The citation of passage `n`, the lines `shown` of `hit`.
    fn citation(
        &self,
        req: &ContextRequest,
        n: usize,
        hit: &Hit,
        shown: RetrieveResponse,
    ) -> Citation {
        let last_changed = match req.history {
            true => self
                .visible_doc(&shown.doc_id, req.groups.as_deref())
                .ok()
                .and_then(|d| {
                    self.last_changed(
                        d,
                        cairn_index::LineSpan {
                            start: shown.start_line,
                            end: shown.end_line,
                        },
                    )
                }),
            false => None,
        };
        Citation {
            n,
            last_changed,
            truncated: shown.end_line < hit.end_line,
            doc_id: shown.doc_id,
            start_line: shown.start_line,
            end_line: shown.end_line,
            text_format: shown.text_format,
            github_url: shown.github_url,
            permalink: shown.permalink,
            content_sha256: shown.content_sha256,
        }
    }
}

/// The context block as it fills: its text, the tokens that text takes,
/// the budget, and the BPE that counts.
struct Block {
    text: String,
    used: usize,
    limit: usize,
    tok: TokenizerName,
}

/// A passage that fits: its text with header, the tokens it takes, and
/// the lines it shows.
struct Passage {
    text: String,
    cost: usize,
    shown: RetrieveResponse,
}

/// The token budget `req` asks for, once it and the message count are in range.
fn context_budget(req: &ContextRequest) -> Result<usize, SearchError> {
    let budget = if req.max_tokens == 0 {
        DEFAULT_CONTEXT_TOKENS
    } else {
        req.max_tokens
    };
    if !(MIN_CONTEXT_TOKENS..=MAX_CONTEXT_TOKENS).contains(&budget) {
        return Err(invalid(
            "max_tokens",
            format!("must be {MIN_CONTEXT_TOKENS} to {MAX_CONTEXT_TOKENS}"),
        ));
    }
    if req
        .messages
        .as_ref()
        .is_some_and(|m| m.len() > MAX_MESSAGES)
    {
        return Err(invalid(
            "messages",
            format!("at most {MAX_MESSAGES} messages"),
        ));
    }
    Ok(budget)
}

/// The messages with the context appended to the system message (one is added first if none).
fn with_context(messages: &[ChatMessage], block: &str) -> Vec<ChatMessage> {
    let mut out = messages.to_vec();
    match out
        .iter_mut()
        .find(|m| m.role == "system" || m.role == "developer")
    {
        Some(m) => {
            m.content.push_str("\n\n");
            m.content.push_str(block);
        }
        None => out.insert(
            0,
            ChatMessage {
                role: "system".to_owned(),
                content: block.to_owned(),
            },
        ),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_backticks_inside() {
        assert_eq!(fenced("a\n"), "```\na\n```\n");
        assert_eq!(fenced("x ```` y"), "`````\nx ```` y\n`````\n");
    }

    #[test]
    fn counts_with_a_real_bpe() {
        // "hello world" is two tokens in both encodings; 4-chars-a-token would say 3.
        assert_eq!(TokenizerName::O200kBase.count("hello world"), 2);
        assert_eq!(TokenizerName::Cl100kBase.count("hello world"), 2);
    }

    #[test]
    fn the_question_is_the_last_user_message() {
        let m = |role: &str, content: &str| ChatMessage {
            role: role.into(),
            content: content.into(),
        };
        let req = ContextRequest {
            messages: Some(vec![
                m("user", "first"),
                m("assistant", "a"),
                m("user", "second"),
            ]),
            ..ContextRequest::default()
        };
        assert_eq!(question(&req).ok().as_deref(), Some("second"));
        let none = ContextRequest::default();
        assert!(question(&none).is_err());
        let out = with_context(&[m("user", "q")], "CTX");
        assert_eq!(out[0], m("system", "CTX"));
        let out = with_context(&[m("system", "be brief"), m("user", "q")], "CTX");
        assert_eq!(out[0].content, "be brief\n\nCTX");
        assert_eq!(out.len(), 2);
    }
}
