//! `cairn watch`: keeps an index fresh by polling each remote's ref and
//! running the ordinary build when one moves (`cairn_pipeline::watch`).

use super::build::{failed, options};
use crate::cli::WatchArgs;
use crate::progress;
use anyhow::Context;
use cairn_pipeline::watch::{WatchOptions, watch};
use cairn_serve::webhook::{self, Hooks, Watched};
use std::process::ExitCode;
use std::time::Duration;

/// Polls and builds until stopped (or `--polls` runs out); a repositories.yml
/// that cannot be read ends it with the build's exit code.
pub fn run(a: WatchArgs) -> anyhow::Result<ExitCode> {
    let mut build = options(a.inputs);
    build.keep_going = true;
    let opts = WatchOptions {
        build,
        every: Duration::from_secs(a.every.max(1)),
        polls: a.polls,
        pack_to: a.pack_to,
    };
    let (wake, woken) = std::sync::mpsc::channel();
    if let Some(addr) = a.listen {
        // Connections to the listener are descriptors too: a slow sender
        // must never leave the watch unable to open repositories.yml.
        cairn_serve::limits::raise_open_files();
        let secret = webhook_secret(a.webhook_secret_file.as_deref())?;
        let registry = cairn_pipeline::config::Registry::load(&opts.build.config)
            .context("reading repositories.yml for the webhooks")?;
        let repos = registry
            .repos
            .iter()
            .map(|r| Watched {
                name: r.name.clone(),
                urls: vec![r.fetch_url.clone(), r.web_url.clone()],
            })
            .collect();
        let bound = webhook::spawn(addr, Hooks::new(secret, repos, wake))
            .with_context(|| format!("--listen {addr}"))?;
        eprintln!("cairn watch: push webhooks on http://{bound}/");
    }
    match watch(&opts, Some(&woken), &progress::TermReporter::new()) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => Ok(failed(e)),
    }
}

/// The webhooks' shared secret: the file's first line, else
/// `CAIRN_WEBHOOK_SECRET`; never empty.
fn webhook_secret(file: Option<&std::path::Path>) -> anyhow::Result<Vec<u8>> {
    let secret = match file {
        Some(f) => std::fs::read_to_string(f)
            .with_context(|| format!("--webhook-secret-file {}", f.display()))?
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_owned(),
        None => std::env::var("CAIRN_WEBHOOK_SECRET").unwrap_or_default(),
    };
    anyhow::ensure!(
        !secret.is_empty(),
        "--listen needs the webhooks' secret: --webhook-secret-file FILE or CAIRN_WEBHOOK_SECRET"
    );
    Ok(secret.into_bytes())
}
