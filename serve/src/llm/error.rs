//! What can go wrong talking to the configured model.

/// A failure of the configured model's endpoint or of its configuration.
/// No variant carries the key, and an upstream body is cut short and has
/// any occurrence of the key blanked before it is kept.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The configuration cannot be used (the flag is named).
    #[error("{flag}: {detail}")]
    Config {
        /// The flag at fault.
        flag: &'static str,
        /// Why.
        detail: String,
    },
    /// The endpoint could not be reached, or stopped answering in time.
    #[error("the model at {url} could not be reached: {detail}")]
    Unreachable {
        /// The endpoint (without credentials: they are refused at start).
        url: String,
        /// The transport's reason.
        detail: String,
    },
    /// The endpoint answered with an error status.
    #[error("the model at {url} answered {status}: {detail}")]
    Status {
        /// The endpoint.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of its body, the key blanked.
        detail: String,
    },
    /// The endpoint answered something that is not a Chat Completions answer.
    #[error("the model at {url} answered something unreadable: {detail}")]
    Malformed {
        /// The endpoint.
        url: String,
        /// What was wrong with it.
        detail: String,
    },
}

impl LlmError {
    /// Whether the same request may succeed later (unreachable, 429, 5xx).
    pub fn retryable(&self) -> bool {
        match self {
            LlmError::Unreachable { .. } => true,
            LlmError::Status { status, .. } => *status == 429 || *status >= 500,
            LlmError::Config { .. } | LlmError::Malformed { .. } => false,
        }
    }
}
