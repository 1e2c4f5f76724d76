//! The build cache of line histories: one file per indexed repository and
//! ref, beside its mirror, holding the commit it was recorded at, each
//! document's blob id and the history. A rebuild at the same commit reads
//! the file and blames nothing; one at a later commit blames again only the
//! documents whose blob changed or that a commit since touched (a revert
//! leaves the blob as it was but moves the blame), and walks the history
//! once for the logs. Documents the budget left out are blamed on the next
//! build, so a repository too big for one build's budget fills in over a
//! few. Used by `build::sources` through [`record_cached`].

use super::{HistoryLimits, Recorder, Reuse, changed_since, shallow_boundary};
use cairn_index::history::RepoHistory;
use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// What the cache file holds.
#[derive(Serialize, Deserialize)]
struct Cached {
    /// The commit the history is of.
    commit: String,
    /// The log depth it was recorded with.
    depth: usize,
    /// Whether every log is whole (the budget did not cut the walk).
    whole_log: bool,
    /// Each recorded document's blob id, by path.
    blobs: BTreeMap<String, String>,
    history: RepoHistory,
}

/// The history of `paths` at `commit` of `repo`, reusing what `file` (a
/// file under the build cache) recorded for an earlier build, and leaving
/// there what this one recorded.
pub fn record_cached(
    repo: &Repository,
    commit: Oid,
    paths: &[&str],
    limits: HistoryLimits,
    file: &Path,
) -> RepoHistory {
    let old = std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice::<Cached>(&b).ok())
        // A mirror deepened since (or made shallow) moves every blame.
        .filter(|c| {
            c.depth == limits.depth
                && c.history.boundary == shallow_boundary(repo, commit).map(|b| b.to_string())
        });
    if let Some(c) = &old
        && c.commit == commit.to_string()
        && c.whole_log
        && c.history.skipped.is_empty()
        && c.history.docs.len() == paths.len()
        && paths.iter().all(|p| c.history.docs.contains_key(*p))
    {
        return c.history.clone();
    }
    let blobs = blobs_at(repo, commit, paths);
    let recorder = Recorder::new(repo, commit, limits);
    // The walk since the cached commit spends the same budget as the blames.
    let budget = limits.budget.saturating_sub(recorder.started.elapsed());
    let reuse = old
        .as_ref()
        .map(|c| still_true(repo, commit, c, &blobs, budget))
        .unwrap_or_default();
    let (history, whole_log) = recorder.finish(paths, &reuse);
    let cached = Cached {
        commit: commit.to_string(),
        depth: limits.depth,
        whole_log,
        blobs: blobs
            .into_iter()
            .filter(|(p, _)| history.docs.contains_key(p))
            .collect(),
        history,
    };
    if let Some(dir) = file.parent()
        && std::fs::create_dir_all(dir).is_ok()
        && let Ok(bytes) = serde_json::to_vec(&cached)
    {
        // Written whole or not at all, under a name no other build writes.
        let tmp = file.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, bytes).is_ok() {
            let _ = std::fs::rename(&tmp, file);
        }
    }
    cached.history
}

/// Each path's blob id at `commit`.
fn blobs_at(repo: &Repository, commit: Oid, paths: &[&str]) -> BTreeMap<String, String> {
    let Ok(tree) = repo.find_commit(commit).and_then(|c| c.tree()) else {
        return BTreeMap::new();
    };
    paths
        .iter()
        .filter_map(|p| {
            let entry = tree.get_path(Path::new(p)).ok()?;
            Some(((*p).to_owned(), entry.id().to_string()))
        })
        .collect()
}

/// The blame runs of `old` still true at `commit`: those of documents with
/// the same blob that no commit since `old.commit` touched. Nothing when
/// `old.commit` is not on `commit`'s first-parent line (a force-push, or a
/// merge that brought it in as a side: blame then follows the first parent
/// past it) or the commits since cannot be walked within `budget`.
fn still_true(
    repo: &Repository,
    commit: Oid,
    old: &Cached,
    blobs: &BTreeMap<String, String>,
    budget: std::time::Duration,
) -> Reuse {
    let Ok(since) = Oid::from_str(&old.commit) else {
        return Reuse::new();
    };
    let paths: Vec<String> = blobs.keys().cloned().collect();
    let Some(changed) = changed_since(repo, commit, since, &paths, budget) else {
        return Reuse::new();
    };
    let h = &old.history;
    h.docs
        .iter()
        .filter(|(path, _)| {
            !changed.contains(*path)
                && blobs
                    .get(*path)
                    .is_some_and(|b| old.blobs.get(*path) == Some(b))
        })
        .filter_map(|(path, d)| {
            // A run naming a commit the file lacks means the file is not
            // what this build wrote: blame that document again.
            let runs = d
                .blame
                .iter()
                .map(|&[first, n, c]| Some((first, n, h.commits.get(c as usize)?.clone())))
                .collect::<Option<Vec<_>>>()?;
            Some((path.clone(), runs))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{commit, init_repo};
    use std::time::Duration;

    const LIMITS: HistoryLimits = HistoryLimits {
        budget: Duration::from_secs(60),
        depth: 10,
    };

    fn read(file: &Path) -> Cached {
        serde_json::from_slice(&std::fs::read(file).expect("cache file")).expect("cached")
    }

    #[test]
    fn a_later_commit_blames_again_only_what_it_touched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = init_repo(&dir.path().join("r"), "main");
        let file = dir.path().join("r.history.r.json");
        let paths = ["a.py", "b.py"];
        commit(
            &repo,
            &[("a.py", b"a\n".to_vec()), ("b.py", b"b\n".to_vec())],
            "one",
        );
        let first = commit(&repo, &[("b.py", b"b\nbb\n".to_vec())], "two");
        let h = record_cached(&repo, first, &paths, LIMITS, &file);
        assert_eq!(h.docs.len(), 2);
        // Mark what the cache says of both files, so a reuse shows.
        let mut c = read(&file);
        for info in &mut c.history.commits {
            info.summary = format!("cached: {}", info.summary);
        }
        std::fs::write(&file, serde_json::to_vec(&c).expect("json")).expect("write");

        // The same commit: read whole from the cache.
        let again = record_cached(&repo, first, &paths, LIMITS, &file);
        assert!(
            again
                .commits
                .iter()
                .all(|c| c.summary.starts_with("cached: "))
        );

        // A commit touching b only: a's blame is the cache's, b's is new.
        let second = commit(&repo, &[("b.py", b"b\nbb\nbbb\n".to_vec())], "three");
        let h = record_cached(&repo, second, &paths, LIMITS, &file);
        let summary = |path: &str, line: u32| {
            let c = h.docs[path].commit_of(line).expect("blamed");
            h.commits[c as usize].summary.clone()
        };
        assert_eq!(summary("a.py", 1), "cached: one");
        assert_eq!(summary("b.py", 3), "three");
        assert_eq!(read(&file).commit, second.to_string());

        // Changed and changed back since: b's blob is the cached one, yet
        // its blame moved to the revert.
        commit(&repo, &[("b.py", b"b\nbb\nBBB\n".to_vec())], "four");
        let back = commit(&repo, &[("b.py", b"b\nbb\nbbb\n".to_vec())], "revert");
        let h = record_cached(&repo, back, &paths, LIMITS, &file);
        let c = h.docs["b.py"].commit_of(3).expect("blamed");
        assert_eq!(h.commits[c as usize].summary, "revert");
    }
}
