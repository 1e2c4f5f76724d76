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
    /// The caller has spent its model tokens for now (`--llm-tokens-per-minute`).
    #[error("this caller has used its model tokens for now; retry in {wait} s")]
    OverBudget {
        /// Seconds until it has some again.
        wait: u32,
    },
}

impl LlmError {
    /// What a caller is told: the failure without the endpoint's address
    /// (the operator's log has it), the endpoint's own words where it gave some.
    pub fn for_caller(&self) -> String {
        match self {
            LlmError::Config { .. } => "the model is not configured as it should be".to_owned(),
            LlmError::Unreachable { .. } => "the configured model could not be reached".to_owned(),
            // The endpoint's words only where they are about the request
            // (other answers may name an account, or part of the key).
            LlmError::Status { status, detail, .. } if matches!(status, 400 | 413 | 422) => {
                format!("the configured model answered {status}: {detail}")
            }
            LlmError::Status { status, .. } => {
                format!("the configured model answered {status}")
            }
            LlmError::Malformed { .. } => {
                "the configured model answered something that is not a chat completion".to_owned()
            }
            e @ LlmError::OverBudget { .. } => e.to_string(),
        }
    }

    /// Whether the same request may succeed later (unreachable, 429, 5xx).
    pub fn retryable(&self) -> bool {
        match self {
            LlmError::Unreachable { .. } => true,
            LlmError::Status { status, .. } => *status == 429 || *status >= 500,
            LlmError::OverBudget { .. } => true,
            LlmError::Config { .. } | LlmError::Malformed { .. } => false,
        }
    }
}
