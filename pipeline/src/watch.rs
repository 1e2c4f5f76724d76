//! `cairn watch`: an index kept fresh by polling. Every poll asks each
//! repository's remote for the ref it indexes (`sync::remote_head`, an
//! ls-remote: nothing is fetched) and runs the ordinary build when one
//! moved, when a repository has never been synced, or when the last build
//! failed; otherwise it does nothing. Builds never overlap (one loop runs
//! them in turn) and publish as `cairn build` does, so a build that fails,
//! or a process killed in the middle of one, leaves the live version
//! serving. What each poll found is written, atomically, to
//! `<out>/freshness.json` beside the versions (never inside one).

use crate::build::{BuildError, BuildOptions, BuildSummary, build, now_rfc3339};
use crate::config::Registry;
use crate::report::Reporter;
use crate::sync::{commits_ahead, remote_head};
use cairn_index::IndexRoot;
use cairn_index::freshness::{self, BuildRecord, FRESHNESS_FILE, Freshness, RepoFreshness};
use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How a watch runs.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    /// The build each change runs (its `out` is the index root watched).
    pub build: BuildOptions,
    /// Time between two polls.
    pub every: Duration,
    /// Stop after this many polls (`None`: run until killed).
    pub polls: Option<u64>,
}

/// Polls until `opts.polls` runs out (or forever), building on every change;
/// a name sent on `wake` (a push webhook) starts the next poll at once.
/// Only a repositories.yml that cannot be read ends it: a failing remote or
/// build is recorded and tried again at the next poll.
pub fn watch(
    opts: &WatchOptions,
    wake: Option<&Receiver<String>>,
    reporter: &dyn Reporter,
) -> Result<(), BuildError> {
    let mut built: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut last_build = None;
    let mut needs_build = true;
    let mut poll = 0u64;
    loop {
        let started = Instant::now();
        let registry = Registry::load(&opts.build.config)?;
        let repos: Vec<RepoFreshness> = registry
            .repos
            .iter()
            .map(|cfg| {
                let checked_at = now_rfc3339();
                match remote_head(cfg, &opts.build.cache) {
                    Ok(head) => RepoFreshness {
                        name: cfg.name.clone(),
                        tracked_ref: head.as_ref().map(|(r, _)| r.clone()),
                        remote_head: head.map(|(_, oid)| oid),
                        checked_at,
                        ..RepoFreshness::default()
                    },
                    Err(e) => RepoFreshness {
                        name: cfg.name.clone(),
                        checked_at,
                        error: Some(e.to_string()),
                        ..RepoFreshness::default()
                    },
                }
            })
            .collect();
        // A ref that moved since the last build, or a repository never
        // synced (no cache to ask through yet: the build reads it). A remote
        // that cannot be reached is recorded, not rebuilt for: its cache
        // still holds what is indexed.
        let moved: Vec<String> = repos
            .iter()
            .filter(|r| match &r.remote_head {
                Some(_) => built.get(&r.name) != Some(&r.remote_head),
                None => r.error.is_none() && !built.contains_key(&r.name),
            })
            .map(|r| r.name.clone())
            .collect();
        if needs_build || !moved.is_empty() {
            let outcome = build(&opts.build, reporter);
            let record = record(&moved, &outcome, started);
            tracing::info!(
                target: "cairn::watch",
                moved = ?record.moved,
                index_version = record.index_version.as_deref().unwrap_or(""),
                embedded = record.embedded,
                seconds = record.seconds,
                error = record.error.as_deref().unwrap_or(""),
                "build"
            );
            needs_build = outcome.is_err();
            if outcome.is_ok() {
                built = repos
                    .iter()
                    .map(|r| (r.name.clone(), r.remote_head.clone()))
                    .collect();
            }
            last_build = Some(record);
        }
        // How far the live version is behind what each remote offers.
        let indexed = indexed_commits(&opts.build.out);
        let repos = repos
            .into_iter()
            .zip(&registry.repos)
            .map(|(mut r, cfg)| {
                r.indexed_commit = indexed.get(&r.name).cloned();
                r.commits_behind = match (&r.remote_head, &r.indexed_commit) {
                    (Some(remote), Some(at)) => commits_ahead(cfg, &opts.build.cache, remote, at),
                    _ => None,
                };
                r
            })
            .collect();
        let freshness = Freshness {
            checked_at: now_rfc3339(),
            repos,
            last_build: last_build.clone(),
        };
        if let Err(e) = freshness::write(&opts.build.out, &freshness) {
            reporter.note(&format!("{FRESHNESS_FILE}: {e}"));
        }
        poll += 1;
        if opts.polls.is_some_and(|n| poll >= n) {
            return Ok(());
        }
        let rest = opts.every.saturating_sub(started.elapsed());
        match wake {
            Some(wake) => match wake.recv_timeout(rest) {
                // Pushes that arrived during the build: one poll serves them all.
                Ok(_) => while wake.try_recv().is_ok() {},
                Err(RecvTimeoutError::Timeout) => {}
                // No listener any more: wait out the interval as without one.
                Err(RecvTimeoutError::Disconnected) => std::thread::sleep(rest),
            },
            None => std::thread::sleep(rest),
        }
    }
}

fn record(
    moved: &[String],
    outcome: &Result<BuildSummary, BuildError>,
    started: Instant,
) -> BuildRecord {
    let seconds = started.elapsed().as_secs_f64();
    match outcome {
        Ok(s) => BuildRecord {
            at: now_rfc3339(),
            moved: moved.to_vec(),
            index_version: Some(s.index_version.to_string()),
            embedded: s.embedded,
            seconds,
            error: None,
        },
        Err(e) => BuildRecord {
            at: now_rfc3339(),
            moved: moved.to_vec(),
            index_version: None,
            embedded: 0,
            seconds,
            error: Some(e.to_string()),
        },
    }
}

/// Each repository's commit in the version CURRENT names.
fn indexed_commits(out: &std::path::Path) -> BTreeMap<String, String> {
    let root = IndexRoot::new(out);
    let manifest = root
        .current()
        .ok()
        .and_then(|v| root.version_dir(&v).read_manifest().ok());
    manifest
        .map(|m| {
            m.repos
                .into_iter()
                .filter_map(|r| Some((r.name, r.commit?)))
                .collect()
        })
        .unwrap_or_default()
}
