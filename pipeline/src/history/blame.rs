//! One file's blame at a commit: which commit last changed each line.
//! `git blame --porcelain` when a `git` executable is on PATH and the
//! history is whole, libgit2's blame otherwise. git's is preferred because
//! it is what the answers are checked against and what GitHub's blame view
//! shows (libgit2's diff lacks git's indent heuristic, so an insertion next
//! to an identical line can be credited differently), and because it is
//! about 5× faster on a long history: libgit2 walks the whole history
//! again for every file.

use git2::{BlameOptions, Oid, Repository};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Blame runs before their commits are numbered: `(first line, lines, commit)`.
pub(super) type Runs = Vec<(u32, u32, Oid)>;

/// `path`'s blame at `commit` in `repo`, not below `boundary` (a shallow
/// mirror's cut, where libgit2 is told to stop; git would complain of the
/// missing parents of a mirror fetched from a shallow one), stopped at
/// `deadline`: one file with thousands of commits must not take the
/// repository's whole history budget and more.
pub(super) fn blame(
    repo: &Repository,
    commit: Oid,
    boundary: Option<Oid>,
    path: &str,
    deadline: Instant,
) -> Result<Runs, String> {
    if boundary.is_none() && git_present() {
        return git_blame(repo.path(), commit, path, deadline);
    }
    libgit2_blame(repo.path(), commit, boundary, path, deadline)
}

/// Why a blame stopped at the history budget.
pub(super) const BLAME_STOPPED: &str =
    "history budget spent (history_seconds) while blaming this file";

/// Whether `git` runs here (asked once).
fn git_present() -> bool {
    static PRESENT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PRESENT.get_or_init(|| {
        Command::new("git")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// `git blame --porcelain` of `path` at `commit`, read into runs; killed
/// at `deadline`. No system or user configuration is read, so a `blame.*`
/// or `diff.*` setting on the build machine cannot change what is recorded.
fn git_blame(git_dir: &Path, commit: Oid, path: &str, deadline: Instant) -> Result<Runs, String> {
    let mut child = Command::new("git")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        // A path is a path, never pathspec magic (`:(glob)…`).
        .env("GIT_LITERAL_PATHSPECS", "1")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["-c", "safe.directory=*", "blame", "--porcelain"])
        .arg(commit.to_string())
        .arg("--")
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("blame failed: git: {e}"))?;
    // Both pipes drained on threads of their own, so git never blocks on a
    // full pipe while this one watches the clock.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut out);
            }
            out
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(BLAME_STOPPED.to_owned());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("blame failed: git: {e}")),
        }
    };
    let (out, err) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    if !status.success() {
        let why = String::from_utf8_lossy(&err);
        return Err(format!("blame failed: git: {}", why.trim()));
    }
    Ok(porcelain_runs(&out))
}

/// Runs from `git blame --porcelain`: each line's header is `<sha> <line
/// there> <line here> [<lines in group>]`; metadata follows, and the
/// line's text, which starts with a tab (so never reads as a header).
fn porcelain_runs(porcelain: &[u8]) -> Runs {
    let mut runs: Runs = Vec::new();
    for line in porcelain.split(|&b| b == b'\n') {
        if line.first().is_none_or(|&b| b == b'\t') {
            continue;
        }
        let text = String::from_utf8_lossy(line);
        let mut fields = text.split(' ');
        let (Some(sha), Some(_), Some(here)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let (Ok(oid), Ok(here)) = (Oid::from_str(sha), here.parse::<u32>()) else {
            continue;
        };
        if sha.len() != 40 {
            continue;
        }
        match runs.last_mut() {
            Some((first, n, c)) if *c == oid && *first + *n == here => *n += 1,
            _ => runs.push((here, 1, oid)),
        }
    }
    runs
}

/// libgit2's blame of `path` at `commit`, not below `boundary`, on a
/// thread of its own with its own handle of the mirror at `git_dir`:
/// libgit2's blame cannot be stopped, so at `deadline` it is abandoned
/// (it finishes on its own and its answer is dropped).
fn libgit2_blame(
    git_dir: &Path,
    commit: Oid,
    boundary: Option<Oid>,
    path: &str,
    deadline: Instant,
) -> Result<Runs, String> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let (git_dir, path) = (git_dir.to_owned(), path.to_owned());
    std::thread::Builder::new()
        .name("cairn-blame".into())
        .spawn(move || {
            let _ = tx.send(libgit2_blame_now(&git_dir, commit, boundary, &path));
        })
        .map_err(|e| format!("blame failed: {e}"))?;
    match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(runs) => runs,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(BLAME_STOPPED.to_owned()),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err("blame failed: its thread stopped".to_owned())
        }
    }
}

/// libgit2's blame, on the calling thread.
fn libgit2_blame_now(
    git_dir: &Path,
    commit: Oid,
    boundary: Option<Oid>,
    path: &str,
) -> Result<Runs, String> {
    let repo = Repository::open(git_dir).map_err(|e| format!("blame failed: {}", e.message()))?;
    let mut opts = BlameOptions::new();
    opts.newest_commit(commit);
    if let Some(b) = boundary {
        opts.oldest_commit(b);
    }
    let blame = repo
        .blame_file(Path::new(path), Some(&mut opts))
        .map_err(|e| format!("blame failed: {}", e.message()))?;
    Ok(blame
        .iter()
        .map(|h| {
            (
                h.final_start_line() as u32,
                h.lines_in_hunk() as u32,
                h.final_commit_id(),
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{commit, init_repo};

    /// Each line's commit, from runs.
    fn per_line(runs: &Runs) -> Vec<Oid> {
        runs.iter()
            .flat_map(|(_, n, c)| std::iter::repeat_n(*c, *n as usize))
            .collect()
    }

    #[test]
    fn git_and_libgit2_credit_the_same_commits() {
        // The test suite needs git anyway (tests/e2e/history.rs checks against it).
        assert!(git_present(), "git is not on PATH");
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = init_repo(&dir.path().join("r"), "main");
        commit(&repo, &[("f.py", b"a\nb\nc\nd\n".to_vec())], "one");
        commit(&repo, &[("f.py", b"a\nB\nc\nd\ne\n".to_vec())], "two");
        let head = commit(&repo, &[("f.py", b"x\na\nB\nc\nd\ne\n".to_vec())], "three");
        let later = Instant::now() + Duration::from_secs(60);
        let git = git_blame(repo.path(), head, "f.py", later).expect("git blame");
        let lib = libgit2_blame(repo.path(), head, None, "f.py", later).expect("libgit2 blame");
        assert_eq!(per_line(&git), per_line(&lib));
        assert_eq!(per_line(&git).len(), 6);
        // A path git cannot blame is an error with git's reason, not a panic.
        assert!(git_blame(repo.path(), head, "missing.py", later).is_err());
    }

    /// Finding 8 of issue 57: a file with a long history is blamed within
    /// the time left, by git (killed) and by libgit2 (abandoned); before,
    /// git's blame ran to its end (5.4 s against a 1 s budget).
    #[test]
    fn a_long_blame_stops_at_its_deadline() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = init_repo(&dir.path().join("r"), "main");
        let mut text = String::new();
        let mut head = None;
        for i in 0..1_500 {
            text.push_str(&format!("line {i}\n"));
            head = Some(commit(
                &repo,
                &[("f.py", text.clone().into_bytes())],
                "more",
            ));
        }
        let head = head.expect("commits");
        let started = Instant::now();
        let far = started + Duration::from_secs(120);
        let whole = git_blame(repo.path(), head, "f.py", far).expect("git blame");
        let took = started.elapsed();
        assert_eq!(per_line(&whole).len(), 1_500);
        for (name, run) in [
            (
                "git",
                git_blame as fn(&Path, Oid, &str, Instant) -> Result<Runs, String>,
            ),
            ("libgit2", |d: &Path, c, p: &str, t| {
                libgit2_blame(d, c, None, p, t)
            }),
        ] {
            let started = Instant::now();
            let budget = took / 10;
            let cut = run(repo.path(), head, "f.py", started + budget);
            let spent = started.elapsed();
            assert_eq!(cut, Err(BLAME_STOPPED.to_owned()), "{name}");
            assert!(
                spent < budget + Duration::from_millis(200),
                "{name}: {spent:?} against a budget of {budget:?} (a whole blame {took:?})"
            );
        }
    }

    #[test]
    fn porcelain_reads_into_runs_of_one_commit() {
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let text = format!(
            "{a} 1 1 2\nauthor X\nfilename f\n\tone\n{a} 2 2\n\t{b} 9 9 9\n{b} 1 3 1\nauthor Y\nboundary\nfilename f\n\tthree\n{a} 5 4 1\n\tfour\n"
        );
        let runs = porcelain_runs(text.as_bytes());
        let (oa, ob) = (Oid::from_str(&a).expect("a"), Oid::from_str(&b).expect("b"));
        // A content line that looks like a header (it starts with a tab) is text.
        assert_eq!(runs, vec![(1, 2, oa), (3, 1, ob), (4, 1, oa)]);
    }
}
