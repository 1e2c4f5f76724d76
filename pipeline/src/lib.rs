//! The index builder: repositories.yml to a published, verifiable index.
pub mod chunk;
pub mod config;
pub mod documents;
pub mod sync;
