//! Test fixtures: git repositories made on the spot with git2, and a
//! sandbox of two repositories, their config and the tiny model, for tests
//! of the real sync and build code paths (this crate's and the workspace's).
//! Compiled only for tests and the `test-fixtures` feature.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::BuildOptions;
use cairn_embed::DevicePref;
use git2::{IndexAddOption, Oid, Repository, RepositoryInitOptions, Signature};
use std::path::{Path, PathBuf};

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

/// Files of a fixture repository: (path, bytes).
pub type Files<'a> = &'a [(&'a str, Vec<u8>)];

/// Two repositories in a temp folder, `science/alpha` (branch `main`, seen
/// only by `alpha_groups` when any are given) and `tools/beta` (branch
/// `master`), their repositories.yml, and the tiny model.
pub struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    /// Commits `alpha` and `beta` and writes the config and the model.
    pub fn new(alpha: Files<'_>, beta: Files<'_>, alpha_groups: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        commit(
            &init_repo(&root.join("repos/alpha"), "main"),
            alpha,
            "first",
        );
        commit(
            &init_repo(&root.join("repos/beta"), "master"),
            beta,
            "first",
        );
        let groups = match alpha_groups {
            [] => String::new(),
            g => format!("    groups: [{}]\n", g.join(", ")),
        };
        std::fs::create_dir_all(root.join("config")).expect("mkdir");
        std::fs::write(
            root.join("config/repositories.yml"),
            format!(
                "science:\n  - name: alpha\n    url: ../repos/alpha\n    web_url: https://github.com/example/alpha\n{groups}tools:\n  - name: beta\n    url: ../repos/beta\n    web_url: https://github.com/example/beta\n"
            ),
        )
        .expect("config");
        cairn_embed::fixtures::write_tiny_bert(&root.join("model")).expect("tiny model");
        Self { dir }
    }

    /// A path inside the sandbox.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Options building the sandbox's config into `out` with the tiny model.
    pub fn options(&self, out: &str) -> BuildOptions {
        BuildOptions {
            config: self.path("config/repositories.yml"),
            weights: None,
            settings: None,
            out: self.path(out),
            cache: self.path("cache"),
            model_dir: Some(self.path("model")),
            device: DevicePref::Cpu,
            keep: cairn_index::layout::DEFAULT_KEEP,
            keep_going: false,
        }
    }
}
