//! Why a call failed ([`SearchError`]), each failure mapped to its stable
//! [`Code`]; and the one way a call says which field of its input is wrong.
//! A leaf: every call returns these, and this file imports none of them.

use crate::code::Code;

/// Why a call failed. Each variant maps to one stable code for the connectors.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The index could not be opened.
    #[error(transparent)]
    Open(#[from] cairn_index::OpenError),
    /// The index was built with another model than the one found.
    #[error(
        "model mismatch: the index was built with {built} (weights sha256 {built_sha}), but the model found has weights sha256 {found_sha}"
    )]
    ModelMismatch {
        /// Model id in the manifest.
        built: String,
        /// Model weights digest in the manifest.
        built_sha: String,
        /// Model weights digest of the model found.
        found_sha: String,
    },
    /// Bad input, naming the field.
    #[error("{field}: {message}")]
    Invalid {
        /// The offending field.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// No such document (or not visible to the caller).
    #[error("doc_id {0:?} not found")]
    NotFound(String),
    /// The query embedder failed.
    #[error("embedding the query failed: {0}")]
    Embed(#[from] cairn_embed::EmbedError),
    /// tantivy failed.
    #[error("tantivy: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// The caller may not do this (setting weights needs an admin).
    #[error("{0}")]
    Forbidden(String),
    /// The caller's deadline passed before the answer was ready; the work stopped.
    #[error("the deadline passed before the answer was ready")]
    DeadlineExceeded,
    /// A cited index version that is no longer kept.
    #[error("index version {0} is no longer kept; search again to cite the current lines")]
    VersionGone(cairn_index::IndexVersion),
    /// The runtime weights file could not be written.
    #[error("{path}: {message}")]
    State {
        /// The state file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

impl SearchError {
    /// The stable code connectors put in problem+json, MCP errors and the CLI's exit status.
    pub fn code(&self) -> Code {
        match self {
            SearchError::Open(_) => Code::IndexUnavailable,
            SearchError::ModelMismatch { .. } => Code::ModelMismatch,
            SearchError::Invalid { .. } => Code::InvalidArgument,
            SearchError::NotFound(_) => Code::NotFound,
            SearchError::Forbidden(_) => Code::Forbidden,
            SearchError::DeadlineExceeded => Code::DeadlineExceeded,
            SearchError::VersionGone(_) => Code::VersionGone,
            SearchError::Embed(_) | SearchError::Tantivy(_) | SearchError::State { .. } => {
                Code::Internal
            }
        }
    }
}

/// The error for bad input in `field`.
pub(crate) fn invalid(field: &'static str, message: impl Into<String>) -> SearchError {
    SearchError::Invalid {
        field,
        message: message.into(),
    }
}
