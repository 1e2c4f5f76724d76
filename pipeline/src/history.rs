//! Each indexed line's history, recorded while the repository is at hand
//! (issue 48): git's blame of every indexed text document at the indexed
//! commit, and one walk of the history listing the commits that changed
//! each document (its log), within a per-repository time budget
//! (`history_seconds`; what it leaves out is recorded with the reason).
//! Commits are kept once per repository, without e-mail addresses.
//! Used by `build::sources`; depends on git2 and the index's history types.

use cairn_index::history::{CommitInfo, DocHistory, RepoHistory};
use git2::{BlameOptions, Oid, Repository, Sort};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

/// How much history a build records.
#[derive(Clone, Copy, Debug)]
pub struct HistoryLimits {
    /// Time one repository's history may take.
    pub budget: Duration,
    /// Commits kept in each document's log.
    pub depth: usize,
}

/// The commits a history names, each once.
#[derive(Default)]
struct Commits {
    list: Vec<CommitInfo>,
    index: HashMap<Oid, u32>,
}

impl Commits {
    fn intern(&mut self, repo: &Repository, oid: Oid) -> u32 {
        if let Some(&i) = self.index.get(&oid) {
            return i;
        }
        let info = repo
            .find_commit(oid)
            .map(|c| CommitInfo {
                sha: oid.to_string(),
                author: c.author().name().unwrap_or("").to_owned(),
                date: rfc3339(c.author().when()),
                summary: c.summary().unwrap_or("").to_owned(),
            })
            .unwrap_or_else(|_| CommitInfo {
                sha: oid.to_string(),
                ..CommitInfo::default()
            });
        let i = self.list.len() as u32;
        self.list.push(info);
        self.index.insert(oid, i);
        i
    }
}

/// A commit's time in UTC (RFC 3339), so that dates compare as text.
fn rfc3339(t: git2::Time) -> String {
    time::OffsetDateTime::from_unix_timestamp(t.seconds())
        .ok()
        .and_then(|d| {
            d.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

/// The history of `paths` at `commit` of `repo`, from `cached` (a file
/// under the build cache) when a build recorded it whole for this commit
/// before: an unchanged repository costs a file read, not a blame.
pub fn record_cached(
    repo: &Repository,
    commit: Oid,
    paths: &[&str],
    limits: HistoryLimits,
    cached: &Path,
) -> RepoHistory {
    let covers = |h: &RepoHistory| paths.iter().all(|p| h.docs.contains_key(*p));
    if let Some(mut h) = std::fs::read(cached)
        .ok()
        .and_then(|b| serde_json::from_slice::<RepoHistory>(&b).ok())
        .filter(|h| covers(h))
    {
        h.docs.retain(|p, _| paths.contains(&p.as_str()));
        return h;
    }
    let h = record(repo, commit, paths, limits);
    // Only a whole history is kept: one cut by the budget is tried again.
    if h.skipped.is_empty()
        && let Some(dir) = cached.parent()
        && std::fs::create_dir_all(dir).is_ok()
        && let Ok(bytes) = serde_json::to_vec(&h)
    {
        let tmp = cached.with_extension("tmp");
        if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, cached).is_ok() {
            forget_older(cached);
        }
    }
    h
}

/// Removes the histories cached for the same repository's earlier commits
/// (`<mirror>.history-*.json` beside `kept`), so the cache holds one.
fn forget_older(kept: &Path) {
    let (Some(dir), Some(name)) = (kept.parent(), kept.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    let Some((stem, _)) = name.split_once(".history-") else {
        return;
    };
    let prefix = format!("{stem}.history-");
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let n = entry.file_name();
        let n = n.to_string_lossy();
        if n.starts_with(&prefix) && n.ends_with(".json") && *n != *name {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The history of `paths` at `commit` of `repo`.
pub fn record(
    repo: &Repository,
    commit: Oid,
    paths: &[&str],
    limits: HistoryLimits,
) -> RepoHistory {
    let started = Instant::now();
    let spent = || started.elapsed() > limits.budget;
    let mut commits = Commits::default();
    let mut docs: BTreeMap<String, DocHistory> = BTreeMap::new();
    let mut skipped = BTreeMap::new();
    // A shallow mirror's history stops at its boundary commits, whose
    // parents it lacks: blame stops there too, crediting them with what
    // came before, as `git blame` does (its `^sha` lines).
    let boundary = shallow_boundary(repo, commit);
    for &path in paths {
        if spent() {
            skipped.insert(
                path.to_owned(),
                "history budget spent (history_seconds)".to_owned(),
            );
            continue;
        }
        let mut opts = BlameOptions::new();
        opts.newest_commit(commit);
        if let Some(b) = boundary {
            opts.oldest_commit(b);
        }
        match repo.blame_file(Path::new(path), Some(&mut opts)) {
            Ok(blame) => {
                let runs = blame
                    .iter()
                    .map(|h| {
                        [
                            h.final_start_line() as u32,
                            h.lines_in_hunk() as u32,
                            commits.intern(repo, h.final_commit_id()),
                        ]
                    })
                    .collect();
                docs.insert(
                    path.to_owned(),
                    DocHistory {
                        blame: runs,
                        log: Vec::new(),
                    },
                );
            }
            Err(e) => {
                skipped.insert(path.to_owned(), format!("blame failed: {}", e.message()));
            }
        }
    }
    log(repo, commit, &mut docs, &mut commits, limits, started);
    RepoHistory {
        commits: commits.list,
        docs,
        skipped,
        boundary: boundary.map(|b| b.to_string()),
    }
}

/// The commit a shallow history is cut at: the first `shallow` entry, or
/// (a mirror fetched from a shallow one keeps no such file) the newest
/// commit down `commit`'s first parents whose parents are missing; `None`
/// for a whole history.
fn shallow_boundary(repo: &Repository, commit: Oid) -> Option<Oid> {
    if let Ok(text) = std::fs::read_to_string(repo.path().join("shallow"))
        && let Some(b) = text.lines().find_map(|l| Oid::from_str(l.trim()).ok())
    {
        return Some(b);
    }
    // Down the first parents: a revwalk cannot even start where parents are missing.
    let mut c = repo.find_commit(commit).ok()?;
    loop {
        if (0..c.parent_count()).any(|i| c.parent(i).is_err()) {
            return Some(c.id());
        }
        c = c.parent(0).ok()?;
    }
}

/// Fills each document's log: one walk from `commit`, newest first, noting
/// for each commit the documents it changed against its first parent, until
/// every log is full, the history ends or the budget is spent.
fn log(
    repo: &Repository,
    commit: Oid,
    docs: &mut BTreeMap<String, DocHistory>,
    commits: &mut Commits,
    limits: HistoryLimits,
    started: Instant,
) {
    let Ok(mut walk) = repo.revwalk() else {
        return;
    };
    if walk.push(commit).is_err() || walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME).is_err() {
        return;
    }
    let mut open = docs.len();
    for oid in walk.flatten() {
        if open == 0 || started.elapsed() > limits.budget {
            break;
        }
        let Ok(c) = repo.find_commit(oid) else { break };
        let (Ok(tree), parent) = (c.tree(), c.parents().next().and_then(|p| p.tree().ok())) else {
            break;
        };
        let Ok(diff) = repo.diff_tree_to_tree(parent.as_ref(), Some(&tree), None) else {
            continue;
        };
        for delta in diff.deltas() {
            let Some(path) = delta.new_file().path().and_then(|p| p.to_str()) else {
                continue;
            };
            if let Some(d) = docs.get_mut(path)
                && d.log.len() < limits.depth
            {
                d.log.push(commits.intern(repo, oid));
                if d.log.len() == limits.depth {
                    open -= 1;
                }
            }
        }
    }
}
