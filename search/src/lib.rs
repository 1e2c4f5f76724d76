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
mod error;
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
pub use error::SearchError;
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
