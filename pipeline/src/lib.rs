//! The index builder: repositories.yml to a published, verifiable index.
//!
//! Data flow: [`config`] parses and validates the YAML; [`sync`] fetches each
//! repository into a bare git cache and resolves the commit; [`documents`]
//! reads and classifies every file of that commit; [`chunk`] cuts documents
//! into exact line spans by structure; [`build`] embeds the chunks (reusing
//! [`embed_cache`]), writes every file of a version through `cairn-index`, and
//! publishes it. Depends on `cairn-index` and `cairn-embed`; nothing depends
//! on it but the `cairn` binary.

pub mod build;
pub mod chunk;
pub mod config;
pub mod documents;
pub mod embed_cache;
pub mod report;
pub mod sync;

pub use build::{BuildError, BuildOptions, BuildSummary, build};
pub use report::{Reporter, Silent};
