//! How far an `ask` has come, told as it goes: each tool call of the
//! model's once it has run ([`Step`]), and the model's text as it writes it
//! (a draft: the answer given at the end is the checked one). Connectors
//! that show progress (HTTP's server-sent events, the page, Slack) give
//! the call a [`Progress`] and read its events; the others give none.

use schemars::JsonSchema;
use serde::Serialize;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use utoipa::ToSchema;

/// One tool call of the model's.
#[derive(Clone, Debug, Serialize, ToSchema, JsonSchema)]
pub struct Step {
    /// The tool it called.
    pub tool: String,
    /// Its arguments as the model wrote them (cut at 500 characters).
    pub arguments: String,
    /// Whether the call succeeded.
    pub ok: bool,
    /// The passages the call returned, as `doc_id:start-end`.
    pub returned: Vec<String>,
    /// Why it failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Something an `ask` did.
#[derive(Clone, Debug)]
pub enum AskEvent {
    /// A tool call ran.
    Step(Step),
    /// The model wrote this text (its draft; drafts come only when asked for).
    Draft(String),
}

/// Where an `ask` tells its progress. The receiver may have gone: what it
/// is told then is dropped.
#[derive(Clone, Debug)]
pub struct Progress {
    tx: UnboundedSender<AskEvent>,
    drafts: bool,
}

impl Progress {
    /// A progress and its events; with `drafts`, the model's text as it is
    /// written too (the model is then asked to stream).
    pub fn new(drafts: bool) -> (Self, UnboundedReceiver<AskEvent>) {
        let (tx, rx) = unbounded_channel();
        (Self { tx, drafts }, rx)
    }

    /// Whether the model's text is wanted as it is written.
    pub fn wants_drafts(&self) -> bool {
        self.drafts
    }

    /// Tells `event`.
    pub fn tell(&self, event: AskEvent) {
        let _ = self.tx.send(event);
    }
}
