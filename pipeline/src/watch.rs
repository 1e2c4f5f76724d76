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
use crate::sync::remote_head;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// The file beside the index root's versions that says how fresh it is.
pub const FRESHNESS_FILE: &str = "freshness.json";

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

/// One repository as the last poll saw it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepoFreshness {
    /// Its name in repositories.yml.
    pub name: String,
    /// The ref it indexes, as the remote names it (`HEAD` for the default branch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracked_ref: Option<String>,
    /// The commit the remote's ref points at, when the poll could read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_head: Option<String>,
    /// When the remote was last asked (RFC 3339).
    pub checked_at: String,
    /// Why the remote could not be read, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What `freshness.json` holds.
#[derive(Clone, Debug, Serialize)]
pub struct Freshness {
    /// When the last poll ran.
    pub checked_at: String,
    /// Each repository as it saw it.
    pub repos: Vec<RepoFreshness>,
    /// The last build the watch ran, if it ran one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_build: Option<BuildRecord>,
}

/// One build a watch ran.
#[derive(Clone, Debug, Serialize)]
pub struct BuildRecord {
    /// When it finished.
    pub at: String,
    /// The repositories whose ref moved (all of them on the first build).
    pub moved: Vec<String>,
    /// The version it published (or found already published).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_version: Option<String>,
    /// Texts embedded anew.
    pub embedded: usize,
    /// Its wall time.
    pub seconds: f64,
    /// Why it failed, when it did (the live version kept serving).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Polls until `opts.polls` runs out (or forever), building on every change.
/// Only a repositories.yml that cannot be read ends it: a failing remote or
/// build is recorded and tried again at the next poll.
pub fn watch(opts: &WatchOptions, reporter: &dyn Reporter) -> Result<(), BuildError> {
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
                        error: None,
                    },
                    Err(e) => RepoFreshness {
                        name: cfg.name.clone(),
                        tracked_ref: None,
                        remote_head: None,
                        checked_at,
                        error: Some(e.to_string()),
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
        let freshness = Freshness {
            checked_at: now_rfc3339(),
            repos,
            last_build: last_build.clone(),
        };
        if let Err(e) = write_freshness(&opts.build.out, &freshness) {
            reporter.note(&format!("{FRESHNESS_FILE}: {e}"));
        }
        poll += 1;
        if opts.polls.is_some_and(|n| poll >= n) {
            return Ok(());
        }
        std::thread::sleep(opts.every.saturating_sub(started.elapsed()));
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

/// Writes `freshness.json` whole or not at all: a reader sees the old file
/// or the new one.
fn write_freshness(out: &Path, freshness: &Freshness) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let tmp = out.join(format!("{FRESHNESS_FILE}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(freshness)?)?;
    std::fs::rename(&tmp, out.join(FRESHNESS_FILE))
}
