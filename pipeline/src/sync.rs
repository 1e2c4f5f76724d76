//! Git: keep a bare cache of each repository, find its default branch, and
//! resolve the commit to read.
//!
//! The first sync initialises a bare repository and fetches everything (a
//! clone without a checkout); later syncs fetch. The default branch comes from
//! the remote's HEAD, never from a guess.

use crate::config::RepoConfig;
use git2::{Direction, FetchOptions, Oid, Repository};
use std::path::{Path, PathBuf};

/// A git failure, with the repository it concerns.
#[derive(Debug, thiserror::Error)]
#[error("{repo}: {action}: {source}")]
pub struct SyncError {
    /// Repository name.
    pub repo: String,
    /// What was being done.
    pub action: String,
    /// git's message.
    pub source: git2::Error,
}

/// A repository ready to read.
pub struct Synced {
    /// The bare cache repository.
    pub repo: Repository,
    /// The remote's default branch.
    pub default_branch: String,
    /// The commit whose tree is indexed.
    pub commit: Oid,
}

/// Where `cfg`'s bare cache lives under `cache`.
pub fn cache_path(cache: &Path, cfg: &RepoConfig) -> PathBuf {
    let key = &cairn_index::sha256_hex(cfg.fetch_url.as_bytes())[..12];
    cache.join("git").join(format!("{}-{key}.git", cfg.name))
}

/// Fetches `cfg` into the cache and resolves the commit to index.
pub fn sync(cfg: &RepoConfig, cache: &Path) -> Result<Synced, SyncError> {
    let err = |action: &str| {
        let action = action.to_owned();
        let repo = cfg.name.clone();
        move |source| SyncError {
            repo,
            action,
            source,
        }
    };
    let path = cache_path(cache, cfg);
    let repo = if path.join("HEAD").is_file() {
        Repository::open_bare(&path).map_err(err("open cache"))?
    } else {
        std::fs::create_dir_all(&path)
            .map_err(|e| git2::Error::from_str(&format!("{}: {e}", path.display())))
            .map_err(err("create cache"))?;
        let r = Repository::init_bare(&path).map_err(err("init cache"))?;
        r.remote("origin", &cfg.fetch_url)
            .map_err(err("add remote"))?;
        r
    };
    let fetch_url = match refless_mirror(cfg, cache) {
        Some(shadow) => shadow.map_err(err("prepare a readable view of the mirror"))?,
        None => cfg.fetch_url.clone(),
    };
    repo.remote_set_url("origin", &fetch_url)
        .map_err(err("set remote url"))?;
    let default_branch = {
        let mut remote = repo.find_remote("origin").map_err(err("find remote"))?;
        remote.connect(Direction::Fetch).map_err(err("connect"))?;
        let head = remote
            .default_branch()
            .map_err(err("read the remote's HEAD"))?;
        let head = head.as_str().unwrap_or_default();
        let branch = head.strip_prefix("refs/heads/").unwrap_or(head).to_owned();
        remote.disconnect().map_err(err("disconnect"))?;
        branch
    };
    {
        let mut remote = repo.find_remote("origin").map_err(err("find remote"))?;
        let mut opts = FetchOptions::new();
        opts.download_tags(git2::AutotagOption::All);
        remote
            .fetch(
                &[
                    "+refs/heads/*:refs/remotes/origin/*",
                    "+refs/tags/*:refs/tags/*",
                ],
                Some(&mut opts),
                None,
            )
            .map_err(err("fetch"))?;
    }
    let commit = resolve(
        &repo,
        cfg.pin.as_deref().unwrap_or(&default_branch),
        cfg.pin.is_some(),
    )
    .map_err(err(&format!(
        "resolve {}",
        cfg.pin
            .as_deref()
            .map_or(format!("default branch {default_branch}"), |p| format!(
                "ref {p}"
            ))
    )))?;
    Ok(Synced {
        repo,
        default_branch,
        commit,
    })
}

/// A local bare repository copied without its (empty) `refs/` folder is
/// refused by git. For such a mirror, returns a view under the cache that git
/// accepts: a fresh bare repository borrowing the mirror's objects through
/// `objects/info/alternates`, with its HEAD, packed-refs and shallow files.
/// The mirror itself is only read.
fn refless_mirror(cfg: &RepoConfig, cache: &Path) -> Option<Result<String, git2::Error>> {
    let src = Path::new(&cfg.fetch_url);
    let refless = src.is_absolute()
        && src.join("HEAD").is_file()
        && src.join("objects").is_dir()
        && !src.join("refs").exists();
    if !refless {
        return None;
    }
    let make = || -> Result<String, git2::Error> {
        let key = &cairn_index::sha256_hex(cfg.fetch_url.as_bytes())[..12];
        let view = cache
            .join("mirror-views")
            .join(format!("{}-{key}.git", cfg.name));
        let io = |e: std::io::Error| git2::Error::from_str(&format!("{}: {e}", view.display()));
        if view.exists() {
            std::fs::remove_dir_all(&view).map_err(io)?;
        }
        Repository::init_bare(&view)?;
        let objects = src.join("objects");
        std::fs::write(
            view.join("objects/info/alternates"),
            format!("{}\n", objects.display()),
        )
        .map_err(io)?;
        for f in ["HEAD", "packed-refs", "shallow"] {
            if src.join(f).is_file() {
                std::fs::copy(src.join(f), view.join(f)).map_err(io)?;
            }
        }
        Ok(view.to_string_lossy().into_owned())
    };
    Some(make())
}

/// A branch, tag or full sha to a commit id.
fn resolve(repo: &Repository, what: &str, pinned: bool) -> Result<Oid, git2::Error> {
    if pinned && what.len() == 40 && what.bytes().all(|b| b.is_ascii_hexdigit()) {
        let oid = Oid::from_str(what)?;
        return Ok(repo.find_commit(oid)?.id());
    }
    for name in [
        format!("refs/remotes/origin/{what}"),
        format!("refs/tags/{what}"),
    ] {
        if let Ok(r) = repo.find_reference(&name) {
            return Ok(r.peel_to_commit()?.id());
        }
    }
    Err(git2::Error::from_str(&format!(
        "no branch, tag or commit named {what:?}"
    )))
}
