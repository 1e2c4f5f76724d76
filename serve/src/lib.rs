//! cairn's connectors: the read-only HTTP API ([`http`], actix-web) and the
//! MCP server ([`mcp`], rmcp) over the search library, both generated from
//! one table of operations ([`ops`], one file each), as the CLI is;
//! plus what serving needs around them: how a server is configured and
//! started ([`config`]), credentials ([`auth`]), the hot-swapped live index
//! ([`live`]), the bounded CPU pool ([`pool`]), problem+json errors
//! ([`problem`]), metrics and per-caller rate limits; and the web page for
//! people ([`ui`]), rendered from the same operations.
//!
//! Connectors never read index files: every answer comes from
//! `cairn_search::Engine`. Only the `cairn` binary depends on this crate.

pub mod auth;
pub mod config;
pub mod http;
pub mod live;
pub mod mcp;
pub mod metrics;
pub mod ops;
pub mod pool;
pub mod problem;
pub mod ratelimit;
pub mod ui;
