//! cairn's connectors: the read-only HTTP API ([`http`], actix-web) and the
//! MCP server ([`mcp`], rmcp) over the search library, both generated from
//! one table of operations ([`ops`], one file each), as the CLI is;
//! plus what serving needs around them: how a server is configured
//! ([`config`], defaults and limits in [`limits`]) and started ([`server`]),
//! credentials ([`auth`], OAuth access tokens in [`oauth`]) and web
//! sign-in sessions ([`session`]), the
//! hot-swapped live index ([`live`]), the bounded CPU pool ([`pool`]) and
//! what each caller's work on it costs ([`costs`]), request bodies under a
//! deadline ([`body`]), problem+json errors
//! ([`problem`]), metrics and per-caller rate limits;
//! and the web page for people ([`ui`]), rendered from the same operations;
//! the Slack app ([`slack`]); the MCP Apps view of cited lines ([`mcp_app`]); push webhooks for `cairn watch` ([`webhook`]),
//! both checked by [`signed`].
//!
//! Imports point one way, from the top: `server` → `ui` → `http` → `mcp` →
//! `ops` → (`pool`, `costs` → `ratelimit`, `problem`); `mcp` → `mcp_app`; `http` → `slack` (the
//! Slack app) → `ops`, `live`, `signed`; `http`, `webhook` (`cairn watch`'s
//! listener) → `body`; `webhook` → `signed`; `live` → `ops`; `config`, `session` →
//! `auth` → `oauth` → `limits`.
//!
//! Connectors never read index files: every answer comes from
//! `cairn_search::Engine`. Only the `cairn` binary depends on this crate.

pub mod auth;
pub mod body;
pub mod config;
pub mod costs;
pub mod http;
pub mod limits;
pub mod live;
pub mod llm;
pub mod mcp;
pub mod mcp_app;
pub mod metrics;
pub mod oauth;
pub mod ops;
pub mod pool;
pub mod problem;
pub mod ratelimit;
pub mod server;
pub mod session;
pub mod signed;
pub mod slack;
pub mod toolsets;
pub mod ui;
pub mod webhook;
