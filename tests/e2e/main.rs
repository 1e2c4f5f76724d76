//! End-to-end tests of the `cairn` binary on fixture repositories made here
//! with git2 and a tiny random BERT, so the real code paths run in seconds.

mod adapt;
mod ann;
mod browser;
mod build;
mod cli;
mod compat;
mod config_errors;
mod conformance;
mod explain;
mod fixtures;
mod fuzz;
mod grep;
mod hardening;
mod hardening2;
mod hardening3;
mod http;
mod install;
mod layout;
mod mcp;
mod oauth;
mod ops;
mod papers;
mod publish;
mod reading;
mod readme;
mod real_model;
mod refs;
mod remote;
mod replicas;
mod search;
mod serve_process;
mod ship;
mod skill;
mod ui;
mod watch;
