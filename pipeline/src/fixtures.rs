//! Test fixtures: git repositories made on the spot with git2, for tests of
//! the real sync and build code paths (this crate's and the workspace's).
//! Compiled only for tests and the `test-fixtures` feature.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use git2::{IndexAddOption, Oid, Repository, RepositoryInitOptions, Signature};
use std::path::Path;

/// A new repository at `path` whose HEAD is `branch`.
pub fn init_repo(path: &Path, branch: &str) -> Repository {
    let mut opts = RepositoryInitOptions::new();
    opts.initial_head(branch);
    Repository::init_opts(path, &opts).expect("init")
}

/// Writes `files` into the repo's work tree and commits them on HEAD (at a
/// fixed time, so the same files give the same commit).
pub fn commit(repo: &Repository, files: &[(&str, Vec<u8>)], message: &str) -> Oid {
    let root = repo.workdir().expect("work tree").to_owned();
    for (path, bytes) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, bytes).expect("write");
    }
    let mut index = repo.index().expect("index");
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .expect("add");
    index.write().expect("write index");
    let tree = repo
        .find_tree(index.write_tree().expect("tree"))
        .expect("find tree");
    let sig = Signature::new(
        "Fixture",
        "fixture@example.org",
        &git2::Time::new(1_700_000_000, 0),
    )
    .expect("sig");
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .expect("commit")
}
