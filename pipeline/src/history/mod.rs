//! Each indexed line's history, recorded while the repository is at hand
//! (issue 48): git's blame of every indexed text document at the indexed
//! commit, and a walk of the history listing the commits that changed each
//! document (its log), within a per-repository time budget
//! (`history_seconds`; what it leaves out is recorded with the reason).
//! Commits are kept once per repository, without e-mail addresses.
//! `cache` makes a rebuild pay only for what changed; `refs` compares a
//! repository's documents across the refs it is indexed at.
//! Used by `build::sources` and `build::publish`; depends on git2 and the
//! index's history types.

mod blame;
mod cache;
pub mod refs;

pub use cache::record_cached;

use blame::{Runs, blame};
use cairn_index::history::{CommitInfo, DocHistory, RepoHistory, cut};
use git2::{DiffOptions, Oid, Repository, Sort};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

/// How much history a build records.
#[derive(Clone, Copy, Debug)]
pub struct HistoryLimits {
    /// Time one repository's history may take.
    pub budget: Duration,
    /// Commits kept in each document's log.
    pub depth: usize,
}

/// Characters of a reason a document's history was left out.
const MAX_REASON_CHARS: usize = 300;

/// Why a document's history is left out when the budget runs out.
const BUDGET_SPENT: &str = "history budget spent (history_seconds)";

/// The commits a history names, each once.
#[derive(Default)]
struct Commits {
    list: Vec<CommitInfo>,
    index: HashMap<String, u32>,
}

impl Commits {
    /// The index of commit `oid`, read from `repo` the first time.
    fn intern(&mut self, repo: &Repository, oid: Oid) -> u32 {
        let sha = oid.to_string();
        if let Some(&i) = self.index.get(&sha) {
            return i;
        }
        let info = repo
            .find_commit(oid)
            .map(|c| {
                // libgit2's summary is git's subject (the first paragraph
                // on one line), uncut: `CommitInfo::new` bounds it.
                let summary = String::from_utf8_lossy(c.summary_bytes().unwrap_or(b""));
                let author = c.author();
                let name = String::from_utf8_lossy(author.name_bytes());
                CommitInfo::new(&sha, &name, &rfc3339(author.when()), &summary)
            })
            .unwrap_or_else(|_| CommitInfo::new(&sha, "", "", ""));
        self.adopt(info)
    }

    /// The index of a commit another history already described.
    fn adopt(&mut self, info: CommitInfo) -> u32 {
        if let Some(&i) = self.index.get(&info.sha) {
            return i;
        }
        let i = self.list.len() as u32;
        self.index.insert(info.sha.clone(), i);
        self.list.push(info);
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

/// The history of `paths` at `commit` of `repo`, all of it recorded afresh.
pub fn record(
    repo: &Repository,
    commit: Oid,
    paths: &[&str],
    limits: HistoryLimits,
) -> RepoHistory {
    Recorder::new(repo, commit, limits)
        .finish(paths, &Reuse::new())
        .0
}

/// Blame runs an earlier recording holds that are still true, by path,
/// with their commits described (see `cache`).
type Reuse = HashMap<String, Vec<(u32, u32, CommitInfo)>>;

/// One recording of one repository's history.
struct Recorder<'r> {
    repo: &'r Repository,
    commit: Oid,
    limits: HistoryLimits,
    started: Instant,
    commits: Commits,
    /// Where a shallow mirror's history is cut.
    boundary: Option<Oid>,
}

impl<'r> Recorder<'r> {
    fn new(repo: &'r Repository, commit: Oid, limits: HistoryLimits) -> Self {
        Self {
            repo,
            commit,
            limits,
            started: Instant::now(),
            commits: Commits::default(),
            // A shallow mirror's history stops at its boundary commits, whose
            // parents it lacks: blame stops there too, crediting them with what
            // came before, as `git blame` does (its `^sha` lines).
            boundary: shallow_boundary(repo, commit),
        }
    }

    fn spent(&self) -> bool {
        self.started.elapsed() > self.limits.budget
    }

    /// Blames every path (keeping what `reuse` holds), then fills the logs;
    /// with whether the logs are whole (the budget did not cut the walk).
    fn finish(mut self, paths: &[&str], reuse: &Reuse) -> (RepoHistory, bool) {
        let mut docs: BTreeMap<String, DocHistory> = BTreeMap::new();
        let mut skipped = BTreeMap::new();
        let todo: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| !reuse.contains_key(*p))
            .collect();
        let mut blamed: HashMap<&str, Result<Runs, String>> =
            todo.iter().copied().zip(self.blame_all(&todo)).collect();
        // Commits are numbered in path order, whichever thread blamed what,
        // so a version's history.json does not depend on the threads.
        for &path in paths {
            let blame = match reuse.get(path) {
                Some(runs) => Ok(runs
                    .iter()
                    .map(|(first, n, c)| [*first, *n, self.commits.adopt(c.clone())])
                    .collect()),
                None => match blamed.remove(path) {
                    Some(Ok(runs)) => Ok(runs
                        .into_iter()
                        .map(|(first, n, oid)| [first, n, self.commits.intern(self.repo, oid)])
                        .collect()),
                    Some(Err(why)) => Err(why),
                    None => Err(BUDGET_SPENT.to_owned()),
                },
            };
            match blame {
                Ok(blame) => {
                    docs.insert(
                        path.to_owned(),
                        DocHistory {
                            blame,
                            ..DocHistory::default()
                        },
                    );
                }
                Err(why) => {
                    // git's message can quote the path and more: one line, bounded.
                    skipped.insert(path.to_owned(), cut(&why, MAX_REASON_CHARS));
                }
            }
        }
        let whole = self.log(&mut docs);
        let history = RepoHistory {
            commits: self.commits.list,
            docs,
            skipped,
            boundary: self.boundary.map(|b| b.to_string()),
            ..RepoHistory::default()
        };
        (history, whole)
    }

    /// Each path's blame at the commit, in `paths` order: blame reads the
    /// whole history of each file, so the files are shared among threads,
    /// one mirror handle each (a handle may not be shared).
    fn blame_all(&self, paths: &[&str]) -> Vec<Result<Runs, String>> {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(paths.len());
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (limits, started, commit, boundary) =
            (self.limits, self.started, self.commit, self.boundary);
        let git_dir = self.repo.path();
        let mut results: Vec<Option<Result<Runs, String>>> = vec![None; paths.len()];
        let done: Vec<Vec<(usize, Result<Runs, String>)>> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        let repo = Repository::open(git_dir)
                            .map_err(|e| format!("blame failed: {}", e.message()));
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(path) = paths.get(i) else { break };
                            if started.elapsed() > limits.budget {
                                mine.push((i, Err(BUDGET_SPENT.to_owned())));
                                continue;
                            }
                            let r = repo.as_ref().map_err(Clone::clone).and_then(|r| {
                                blame(r, commit, boundary, path, started + limits.budget)
                            });
                            mine.push((i, r));
                        }
                        mine
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_default())
                .collect()
        });
        for (i, r) in done.into_iter().flatten() {
            results[i] = Some(r);
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err("blame failed: its thread stopped".to_owned())))
            .collect()
    }

    /// Fills each document's log with one walk from the commit, until every
    /// log is full or the history ends (true), or the budget is spent.
    fn log(&mut self, docs: &mut BTreeMap<String, DocHistory>) -> bool {
        let depth = self.limits.depth;
        let mut open = docs.values().filter(|d| d.log.len() < depth).count();
        let paths: Vec<String> = docs.keys().cloned().collect();
        self.walk(&paths, |path, oid, commits, repo| {
            if open == 0 {
                return false;
            }
            if let Some(d) = docs.get_mut(path)
                && d.log.len() < depth
            {
                d.log.push(commits.intern(repo, oid));
                if d.log.len() == depth {
                    open -= 1;
                }
            }
            true
        })
        .unwrap_or(false)
    }

    /// Walks the history from the commit, newest first,
    /// telling `visit` each (path, commit) where the commit changed the
    /// path against its first parent, until `visit` says stop (true), the
    /// history ends (true) or the budget is spent (false). `None` when the
    /// walk cannot start.
    fn walk(
        &mut self,
        paths: &[String],
        mut visit: impl FnMut(&str, Oid, &mut Commits, &Repository) -> bool,
    ) -> Option<bool> {
        // No paths is no pathspec, which libgit2 reads as every path.
        if paths.is_empty() {
            return Some(true);
        }
        let repo = self.repo;
        let mut walk = repo.revwalk().ok()?;
        walk.push(self.commit).ok()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME).ok()?;
        for oid in walk.flatten() {
            if self.spent() {
                return Some(false);
            }
            let Ok(c) = repo.find_commit(oid) else {
                break;
            };
            let (Ok(tree), parent) = (c.tree(), c.parents().next().and_then(|p| p.tree().ok()))
            else {
                break;
            };
            let Ok(diff) =
                repo.diff_tree_to_tree(parent.as_ref(), Some(&tree), Some(&mut only(paths)))
            else {
                continue;
            };
            for delta in diff.deltas() {
                let Some(path) = delta.new_file().path().and_then(|p| p.to_str()) else {
                    continue;
                };
                if !visit(path, oid, &mut self.commits, repo) {
                    return Some(true);
                }
            }
        }
        Some(true)
    }
}

/// Diff options that look at `paths` only, as an exact list: the walk
/// never descends into a folder none of them is under (a tree nested
/// 30,000 deep that no document is in costs nothing, where a whole diff
/// would hold a path per level, gigabytes).
fn only(paths: &[String]) -> DiffOptions {
    let mut opts = DiffOptions::new();
    opts.disable_pathspec_match(true);
    for p in paths {
        opts.pathspec(p);
    }
    opts
}

/// Which of `paths` the commits since `since` (up to `commit`) changed,
/// each against its first parent; `None` when `since` is not on `commit`'s
/// first-parent line or the walk could not finish within `budget` (then
/// nothing may be trusted as unchanged).
fn changed_since(
    repo: &Repository,
    commit: Oid,
    since: Oid,
    paths: &[String],
    budget: Duration,
) -> Option<HashSet<String>> {
    let started = Instant::now();
    let mut walk = repo.revwalk().ok()?;
    walk.push(commit).ok()?;
    walk.hide(since).ok()?;
    let new: Vec<Oid> = walk.collect::<Result<_, _>>().ok()?;
    // Down the first parents from `commit` to `since`: every step is one of
    // the new commits, so at most that many steps.
    let mut c = repo.find_commit(commit).ok()?;
    for _ in 0..=new.len() {
        if c.id() == since {
            break;
        }
        c = c.parent(0).ok()?;
    }
    if c.id() != since {
        return None;
    }
    let mut changed = HashSet::new();
    // No paths is no pathspec, which libgit2 reads as every path.
    if paths.is_empty() {
        return Some(changed);
    }
    for oid in new {
        if started.elapsed() > budget {
            return None;
        }
        let c = repo.find_commit(oid).ok()?;
        let tree = c.tree().ok()?;
        let parent = c.parents().next().and_then(|p| p.tree().ok());
        let diff = repo
            .diff_tree_to_tree(parent.as_ref(), Some(&tree), Some(&mut only(paths)))
            .ok()?;
        for delta in diff.deltas() {
            for f in [delta.old_file(), delta.new_file()] {
                if let Some(p) = f.path().and_then(|p| p.to_str()) {
                    changed.insert(p.to_owned());
                }
            }
        }
    }
    Some(changed)
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
