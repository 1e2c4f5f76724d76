//! One file's blame at a commit: which commit last changed each line.
//! `git blame --porcelain` when a `git` executable is on PATH and the
//! history is whole, libgit2's blame otherwise. git's is preferred because
//! it is what the answers are checked against and what GitHub's blame view
//! shows (libgit2's diff lacks git's indent heuristic, so an insertion next
//! to an identical line can be credited differently), and because it is
//! about 5× faster on a long history: libgit2 walks the whole history
//! again for every file.

use git2::{BlameOptions, Oid, Repository};
use std::path::Path;
use std::process::Command;

/// Blame runs before their commits are numbered: `(first line, lines, commit)`.
pub(super) type Runs = Vec<(u32, u32, Oid)>;

/// `path`'s blame at `commit` in `repo`, not below `boundary` (a shallow
/// mirror's cut, where libgit2 is told to stop; git would complain of the
/// missing parents of a mirror fetched from a shallow one).
pub(super) fn blame(
    repo: &Repository,
    commit: Oid,
    boundary: Option<Oid>,
    path: &str,
) -> Result<Runs, String> {
    if boundary.is_none() && git_present() {
        return git_blame(repo.path(), commit, path);
    }
    libgit2_blame(repo, commit, boundary, path)
}

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

/// `git blame --porcelain` of `path` at `commit`, read into runs. No
/// system or user configuration is read, so a `blame.*` or `diff.*`
/// setting on the build machine cannot change what is recorded.
fn git_blame(git_dir: &Path, commit: Oid, path: &str) -> Result<Runs, String> {
    let out = Command::new("git")
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
        .output()
        .map_err(|e| format!("blame failed: git: {e}"))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Err(format!("blame failed: git: {}", why.trim()));
    }
    Ok(porcelain_runs(&out.stdout))
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

/// libgit2's blame of `path` at `commit`, not below `boundary`.
fn libgit2_blame(
    repo: &Repository,
    commit: Oid,
    boundary: Option<Oid>,
    path: &str,
) -> Result<Runs, String> {
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
        let git = git_blame(repo.path(), head, "f.py").expect("git blame");
        let lib = libgit2_blame(&repo, head, None, "f.py").expect("libgit2 blame");
        assert_eq!(per_line(&git), per_line(&lib));
        assert_eq!(per_line(&git).len(), 6);
        // A path git cannot blame is an error with git's reason, not a panic.
        assert!(git_blame(repo.path(), head, "missing.py").is_err());
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
