//! `cairn watch`: an index kept fresh by polling. Every poll asks each
//! repository's remote for the ref it indexes (`sync::remote_head`, an
//! ls-remote: nothing is fetched) and runs the ordinary build when one
//! moved, when a repository has never been synced, or when it failed last
//! time; otherwise it does nothing. What fails (a remote, a repository's
//! sync, a whole build) is retried with backoff (`backoff`) while the rest
//! stays fresh. Builds never overlap (one loop runs them in turn) and
//! publish as `cairn build` does, so a build that fails, or a process killed
//! in the middle of one, leaves the live version serving. What each poll
//! found is written, atomically, to `<out>/freshness.json` beside the
//! versions (never inside one); with `pack_to`, each new version is also
//! packed there with a `latest.json` for replicas to pull.

mod backoff;

pub use backoff::MAX_BACKOFF;

use crate::build::{BuildError, BuildOptions, BuildSummary, build, now_rfc3339};
use crate::config::{Registry, RepoConfig};
use crate::report::Reporter;
use crate::sync::{commits_ahead, remote_head};
use backoff::Backoff;
use cairn_index::freshness::{self, BuildRecord, FRESHNESS_FILE, Freshness, RepoFreshness};
use cairn_index::{IndexRoot, IndexVersion};
use std::collections::BTreeMap;
use std::path::PathBuf;
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
    /// Also pack each new version into this folder, with a `latest.json`
    /// naming it (as the nightly release does), for replicas to pull.
    pub pack_to: Option<PathBuf>,
}

/// Polls until `opts.polls` runs out (or forever), building on every change;
/// a repository's name sent on `wake` (a push webhook) starts the next poll
/// early (at most once per [`wake_gap`]) and forgets that repository's
/// backoff. Only a repositories.yml
/// that cannot be read at the start ends it: a failing remote or build, or
/// a config broken later, is recorded and tried again later.
pub fn watch(
    opts: &WatchOptions,
    wake: Option<&Receiver<String>>,
    reporter: &dyn Reporter,
) -> Result<(), BuildError> {
    let mut w = Watcher {
        opts,
        reporter,
        built: BTreeMap::new(),
        last_build: None,
        build_backoff: Backoff::default(),
        needs_build: true,
        failed_on: None,
        repo_backoff: BTreeMap::new(),
        last_seen: BTreeMap::new(),
        packed: None,
    };
    let mut poll = 0u64;
    loop {
        let started = Instant::now();
        match w.poll(started) {
            Ok(()) => {}
            // A repositories.yml broken by an edit while the watch runs:
            // reported, and read again at the next poll (the live version
            // keeps serving); one broken from the start ends the watch.
            Err(BuildError::Config(e)) if poll > 0 => {
                tracing::error!(target: "cairn::watch", error = %e, "repositories.yml");
                w.reporter
                    .note(&format!("{e} (read again at the next poll)"));
            }
            Err(e) => return Err(e),
        }
        poll += 1;
        if opts.polls.is_some_and(|n| poll >= n) {
            return Ok(());
        }
        let rest = opts.every.saturating_sub(started.elapsed());
        let Some(wake) = wake else {
            std::thread::sleep(rest);
            continue;
        };
        match wake.recv_timeout(rest) {
            // A push is a hint: it polls early, at most once per
            // `wake_gap`, and the pushes that arrive meanwhile (or during
            // the build) are served by that one poll. It ends the wait of
            // the repositories it names; a build that failed stays backed
            // off unless that poll finds its inputs moved (`Watcher::build_due`).
            Ok(first) => {
                let gap = wake_gap(opts.every).min(opts.every);
                std::thread::sleep(gap.saturating_sub(started.elapsed()));
                for name in std::iter::once(first).chain(wake.try_iter()) {
                    w.repo_backoff.remove(&name);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            // No listener any more: wait out the interval as without one.
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(rest),
        }
    }
}

/// The least time between two polls a push starts: a tenth of the
/// interval, from 1 s to a minute, so replayed or repeated deliveries wake
/// the watch a bounded number of times.
fn wake_gap(every: Duration) -> Duration {
    (every / 10).clamp(Duration::from_secs(1), Duration::from_secs(60))
}

/// Each repository's remote head as a poll saw it: what a build reads.
type Inputs = BTreeMap<String, Option<String>>;

/// What a watch remembers between polls.
struct Watcher<'a> {
    opts: &'a WatchOptions,
    reporter: &'a dyn Reporter,
    /// Each repository's remote head when the last good build read it.
    built: BTreeMap<String, Option<String>>,
    last_build: Option<BuildRecord>,
    /// Set while the last build failed; retried after its backoff.
    needs_build: bool,
    /// The remote heads the last build failed on: the same again is not
    /// tried before its backoff has passed, whatever wakes the watch.
    failed_on: Option<Inputs>,
    build_backoff: Backoff,
    /// Repositories whose remote or sync failed, and when to try again.
    repo_backoff: BTreeMap<String, Backoff>,
    /// What the last poll saw of each remote (carried while one waits out a backoff).
    last_seen: BTreeMap<String, RepoFreshness>,
    /// The version last packed into `pack_to`.
    packed: Option<IndexVersion>,
}

impl Watcher<'_> {
    /// One poll: ask the remotes, build if something moved, pack what is
    /// new, and record it all in freshness.json.
    fn poll(&mut self, started: Instant) -> Result<(), BuildError> {
        let registry = Registry::load(&self.opts.build.config)?;
        let repos: Vec<RepoFreshness> = registry
            .repos
            .iter()
            .map(|cfg| self.ask(cfg, started))
            .collect();
        // A ref that moved since the last build, or a repository never
        // synced (no cache to ask through yet: the build reads it). A remote
        // that cannot be reached is recorded, not rebuilt for: its cache
        // still holds what is indexed.
        let moved: Vec<String> = repos
            .iter()
            .filter(|r| {
                self.repo_backoff
                    .get(&r.name)
                    .is_none_or(|b| b.ready(started))
                    && match &r.remote_head {
                        Some(_) => self.built.get(&r.name) != Some(&r.remote_head),
                        None => r.error.is_none() && !self.built.contains_key(&r.name),
                    }
            })
            .map(|r| r.name.clone())
            .collect();
        if (self.needs_build || !moved.is_empty()) && self.build_due(&repos, started) {
            self.build(&repos, moved, started);
        }
        self.pack();
        let repos = self.behind(repos, &registry.repos);
        let freshness = Freshness {
            checked_at: now_rfc3339(),
            repos,
            last_build: self.last_build.clone(),
        };
        // Beside the packs too, for replicas' `cairn pull` to bring along.
        let roots = std::iter::once(&self.opts.build.out).chain(self.opts.pack_to.as_ref());
        for root in roots {
            if let Err(e) = freshness::write(root, &freshness) {
                self.reporter
                    .note(&format!("{}: {e}", root.join(FRESHNESS_FILE).display()));
            }
        }
        Ok(())
    }

    /// Asks one remote for its head, unless it is waiting out a backoff
    /// (then what was seen last is carried, with when it is tried next).
    fn ask(&mut self, cfg: &RepoConfig, now: Instant) -> RepoFreshness {
        let backoff = self.repo_backoff.entry(cfg.name.clone()).or_default();
        if !backoff.ready(now) {
            let mut seen = self.last_seen.get(&cfg.name).cloned().unwrap_or_default();
            seen.name = cfg.name.clone();
            seen.failures = backoff.failures();
            seen.retry_at = Some(rfc3339_in(backoff.remaining(now)));
            return seen;
        }
        let checked_at = now_rfc3339();
        let seen = match remote_head(cfg, &self.opts.build.cache) {
            Ok(head) => {
                // A remote that answers again: its sync is tried at once.
                if self
                    .last_seen
                    .get(&cfg.name)
                    .is_some_and(|s| s.error.is_some())
                {
                    backoff.reset();
                }
                RepoFreshness {
                    name: cfg.name.clone(),
                    tracked_ref: head.as_ref().map(|(r, _)| r.clone()),
                    remote_head: head.map(|(_, oid)| oid),
                    checked_at,
                    failures: backoff.failures(),
                    ..RepoFreshness::default()
                }
            }
            Err(e) => {
                let wait = backoff.failed(self.opts.every, now);
                tracing::warn!(target: "cairn::watch", repo = %cfg.name, error = %e, retry_in_s = wait.as_secs(), "remote");
                RepoFreshness {
                    name: cfg.name.clone(),
                    checked_at,
                    error: Some(e.to_string()),
                    failures: backoff.failures(),
                    retry_at: Some(rfc3339_in(wait)),
                    ..RepoFreshness::default()
                }
            }
        };
        self.last_seen.insert(cfg.name.clone(), seen.clone());
        seen
    }

    /// Whether a build may run now: its backoff has passed, or the last
    /// build failed on other inputs than the remotes offer now (a push that
    /// moved a ref). The same inputs again wait out the backoff, however
    /// many deliveries ask.
    fn build_due(&self, repos: &[RepoFreshness], now: Instant) -> bool {
        self.build_backoff.ready(now)
            || self
                .failed_on
                .as_ref()
                .is_some_and(|failed| *failed != inputs(repos))
    }

    /// Runs the build and remembers what it read; a repository the build
    /// could not sync (built around, `--keep-going`) backs off, as does a
    /// build that failed whole.
    fn build(&mut self, repos: &[RepoFreshness], moved: Vec<String>, started: Instant) {
        let outcome = build(&self.opts.build, self.reporter);
        let record = record(moved, &outcome, started);
        tracing::info!(
            target: "cairn::watch",
            moved = ?record.moved,
            index_version = record.index_version.as_deref().unwrap_or(""),
            embedded = record.embedded,
            seconds = record.seconds,
            error = record.error.as_deref().unwrap_or(""),
            "build"
        );
        match &outcome {
            Ok(summary) => {
                self.needs_build = false;
                self.failed_on = None;
                self.build_backoff.reset();
                let failed: BTreeMap<&str, &str> = summary
                    .repos
                    .iter()
                    .filter_map(|r| Some((r.name.as_str(), r.error.as_deref()?)))
                    .collect();
                // A repository read for the first time had no head to ask
                // for yet: what the build indexed is what its remote offered.
                let indexed: BTreeMap<&str, &str> = summary
                    .repos
                    .iter()
                    .filter_map(|r| Some((r.name.as_str(), r.commit.as_deref()?)))
                    .collect();
                self.built.clear();
                // A remote that did not answer was counted when it was asked.
                for r in repos.iter().filter(|r| r.error.is_none()) {
                    let backoff = self.repo_backoff.entry(r.name.clone()).or_default();
                    if let Some(e) = failed.get(r.name.as_str()) {
                        let wait = backoff.failed(self.opts.every, started);
                        tracing::warn!(target: "cairn::watch", repo = %r.name, error = %e, retry_in_s = wait.as_secs(), "sync");
                    } else {
                        backoff.reset();
                        let head = r
                            .remote_head
                            .clone()
                            .or_else(|| indexed.get(r.name.as_str()).map(|c| (*c).to_owned()));
                        self.built.insert(r.name.clone(), head);
                    }
                }
            }
            Err(_) => {
                self.needs_build = true;
                self.failed_on = Some(inputs(repos));
                self.build_backoff.failed(self.opts.every, started);
            }
        }
        self.last_build = Some(record);
    }

    /// Packs CURRENT into `pack_to` when it is not the version packed last
    /// (a failure is reported and tried again at the next poll).
    fn pack(&mut self) {
        let Some(dir) = &self.opts.pack_to else {
            return;
        };
        let root = IndexRoot::new(&self.opts.build.out);
        let Ok(current) = root.current() else {
            return;
        };
        if self.packed.as_ref() == Some(&current) {
            return;
        }
        match cairn_index::pack::publish_latest(&root, &current, dir, self.opts.build.keep) {
            Ok(latest) => {
                tracing::info!(target: "cairn::watch", index_version = %current, pack = %latest.pack, "packed");
                self.packed = Some(current);
            }
            Err(e) => self
                .reporter
                .note(&format!("--pack-to {}: {e}", dir.display())),
        }
    }

    /// Adds how far the live version is behind what each remote offers.
    fn behind(&self, repos: Vec<RepoFreshness>, configs: &[RepoConfig]) -> Vec<RepoFreshness> {
        let indexed = indexed_commits(&self.opts.build.out);
        repos
            .into_iter()
            .zip(configs)
            .map(|(mut r, cfg)| {
                r.indexed_commit = indexed.get(&r.name).cloned();
                r.commits_behind = match (&r.remote_head, &r.indexed_commit) {
                    (Some(remote), Some(at)) => {
                        commits_ahead(cfg, &self.opts.build.cache, remote, at)
                    }
                    _ => None,
                };
                r
            })
            .collect()
    }
}

/// The inputs a poll found: each repository's remote head.
fn inputs(repos: &[RepoFreshness]) -> Inputs {
    repos
        .iter()
        .map(|r| (r.name.clone(), r.remote_head.clone()))
        .collect()
}

fn record(
    moved: Vec<String>,
    outcome: &Result<BuildSummary, BuildError>,
    started: Instant,
) -> BuildRecord {
    let seconds = started.elapsed().as_secs_f64();
    match outcome {
        Ok(s) => BuildRecord {
            at: now_rfc3339(),
            moved,
            index_version: Some(s.index_version.to_string()),
            embedded: s.embedded,
            seconds,
            stages: s.stages,
            error: None,
        },
        Err(e) => BuildRecord {
            at: now_rfc3339(),
            moved,
            index_version: None,
            embedded: 0,
            seconds,
            stages: Default::default(),
            error: Some(e.to_string()),
        },
    }
}

/// The time `wait` from now, RFC 3339.
fn rfc3339_in(wait: Duration) -> String {
    (time::OffsetDateTime::now_utc() + wait)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
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
