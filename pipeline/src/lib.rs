//! The index builder: repositories.yml to a published, verifiable index.
//!
//! Data flow: [`config`] parses and validates the YAML; [`sync`] fetches each
//! repository into a bare git cache and resolves the commit; [`documents`]
//! reads and classifies every file of that commit (a PDF through [`pdf`]'s
//! text extraction), and [`articles`] fetches the PDFs listed under
//! `articles:`; [`chunk`] cuts documents
//! into exact line spans by structure; [`mod@build`] embeds the chunks (reusing
//! [`embed_cache`]), writes every file of a version through `cairn-index`, and
//! publishes it; a build can also run as shards on several machines, each
//! writing a [`part`], merged into the same index a single machine writes.
//! Depends on `cairn-index` and `cairn-embed`; nothing depends on it but the
//! `cairn` binary.

pub mod articles;
pub mod bibtex;
pub mod build;
pub mod chunk;
pub mod config;
pub mod documents;
pub mod embed_cache;
#[cfg(any(test, feature = "test-fixtures"))]
pub mod fixtures;
pub mod history;
pub mod pairs;
pub mod part;
pub mod pdf;
pub mod report;
pub mod sync;
pub mod watch;

pub use build::{BuildError, BuildOptions, BuildSummary, ShardSummary, build, build_shard, merge};
pub use part::Shard;
pub use report::{Reporter, Silent};

/// The repositories file read unless another is named.
pub const DEFAULT_CONFIG: &str = "config/repositories.yml";
/// The git and embedding cache used unless another is named.
pub const DEFAULT_CACHE: &str = ".cairn/cache";
