//! cairn's search library: the one API that the CLI, the HTTP server and the
//! MCP server call (nancy-brain's RAGService): [`Engine::search`],
//! [`Engine::retrieve`], [`Engine::retrieve_batch`], [`Engine::tree`],
//! [`Engine::version`], [`Engine::health`], [`Engine::context`] (cited passages
//! that fit a prompt's token budget), [`Engine::explain`] (an error's raise
//! sites, frames and explaining passages) and runtime weights. Connectors
//! never read index files; they call this.
//!
//! Depends on `cairn-index` (reading a version) and `cairn-embed` (the query
//! embedder). One module per call: [`passages`] (search), [`retrieve`],
//! [`tree`], `status` (version and health), [`grep`], [`definitions`],
//! [`context`], [`explain`], each with its request, its answer, their text
//! form and its `impl Engine` block; `engine` holds what they share (the
//! opened snapshot, text, access), `filters` what narrows every call.
//! Ranking lives in [`rank`], links in [`links`], the golden-query
//! evaluation in [`eval`].

pub mod access;
pub mod code;
pub mod context;
mod deadline;
pub mod definitions;
mod engine;
pub mod eval;
pub mod explain;
mod filters;
pub mod grep;
pub mod history;
pub mod links;
pub mod passages;
pub mod query_vectors;
mod raises;
pub mod rank;
pub mod retrieve;
pub mod runtime_weights;
mod status;
pub mod tree;

pub use access::Caller;
pub use code::Code;
pub use context::{ChatMessage, Citation, ContextRequest, ContextResponse, TokenizerName};
pub use deadline::Deadline;
pub use definitions::{DefinitionsRequest, DefinitionsResponse};
pub use engine::{Engine, EngineOptions, MAX_SPAN_LINES, MAX_TEXT_BYTES, PageCitation, TextFormat};
pub use explain::{ExplainRequest, ExplainResponse};
pub use filters::{Filters, MAX_FILTER_VALUES, Mode, OneOrMany, one_or_many};
pub use grep::{GrepRequest, GrepResponse};
pub use history::{HistoryCommit, HistoryResponse, LastChanged, RefStatus, SpanAtRef};
pub use passages::{
    CitationLink, DEFAULT_LIMIT, Hit, MAX_LIMIT, MAX_QUERIES, MAX_QUERY_CHARS, PassageId,
    PassageIdError, ScoreBreakdown, SearchRequest, SearchResponse,
};
pub use query_vectors::CacheStats;
pub use retrieve::{
    Earlier, MAX_BATCH, MAX_BATCH_VERSIONS, RetrieveResponse, SpanRequest, parse_line_range,
};
pub use status::{HealthResponse, RepoVersion, VersionResponse};
pub use tree::{DEFAULT_TREE_DEPTH, DEFAULT_TREE_ENTRIES, TreeEntry, TreeResponse};

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

fn invalid(field: &'static str, message: impl Into<String>) -> SearchError {
    SearchError::Invalid {
        field,
        message: message.into(),
    }
}
