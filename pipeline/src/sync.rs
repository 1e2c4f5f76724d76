//! Git: keep a bare cache of each repository, find its default branch, and
//! resolve the commit to read.
//!
//! The first sync initialises a bare repository and fetches everything (a
//! clone without a checkout); later syncs fetch. The default branch comes from
//! the remote's HEAD, never from a guess. Talking to the remote is retried
//! with backoff when the failure is the network's ([`Retry`]); credentials
//! come from the environment variable a repository names (`token_env`), a git
//! credential helper or ssh-agent, never from the file. When the remote
//! cannot be reached at all, [`cached`] offers the commit the cache already
//! holds (what `--keep-going` indexes, marked stale).

use crate::config::{RepoConfig, is_loopback, same_origin, url_origin};
use git2::{
    Cred, CredentialType, Direction, ErrorClass, ErrorCode, FetchOptions, Oid, RemoteCallbacks,
    Repository,
};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the cache remembers the remote's default branch (for [`cached`]).
const DEFAULT_BRANCH_KEY: &str = "cairn.defaultbranch";
/// Credential offers before giving up (libgit2 asks again after each refusal).
const MAX_CREDENTIAL_TRIES: u32 = 3;

/// How hard to try a remote before giving up on it.
#[derive(Clone, Copy, Debug)]
pub struct Retry {
    /// Attempts in all (1: no retry).
    pub attempts: u32,
    /// The wait after the first failure; each later wait doubles.
    pub first_delay: Duration,
}

impl Default for Retry {
    /// Three attempts, 2 s then 4 s apart: a blip on one repository must not
    /// fail a nightly build, and a dead remote costs 6 s.
    fn default() -> Self {
        Self {
            attempts: 3,
            first_delay: Duration::from_secs(2),
        }
    }
}

/// Whether a failure may pass by itself: the network's, not a wrong URL,
/// a refused credential or a missing ref.
fn transient(e: &git2::Error) -> bool {
    e.code() != ErrorCode::Auth
        && matches!(
            e.class(),
            ErrorClass::Net | ErrorClass::Http | ErrorClass::Ssl | ErrorClass::Ssh
        )
}

/// Runs `op` up to `retry.attempts` times while it fails transiently.
pub fn with_retry<T>(
    retry: Retry,
    mut on_retry: impl FnMut(&git2::Error, Duration),
    mut op: impl FnMut() -> Result<T, git2::Error>,
) -> Result<T, git2::Error> {
    let mut delay = retry.first_delay;
    for attempt in 1.. {
        match op() {
            Err(e) if attempt < retry.attempts && transient(&e) => {
                on_retry(&e, delay);
                std::thread::sleep(delay);
                delay *= 2;
            }
            other => return other,
        }
    }
    unreachable!("the loop returns on its last attempt")
}

/// The credentials offered to `cfg`'s remote: its `token_env` token over
/// HTTPS, else a git credential helper; ssh-agent over SSH.
fn callbacks<'a>(cfg: &'a RepoConfig, tries: &'a Cell<u32>) -> RemoteCallbacks<'a> {
    let mut cb = RemoteCallbacks::new();
    cb.credentials(move |url, username, allowed| {
        tries.set(tries.get() + 1);
        if tries.get() > MAX_CREDENTIAL_TRIES {
            let hint = cfg
                .token_env
                .as_deref()
                .map_or(String::new(), |v| format!(" (the token in {v})"));
            return Err(git2::Error::new(
                ErrorCode::Auth,
                ErrorClass::Callback,
                format!("{url}: the credentials{hint} were refused"),
            ));
        }
        // Passwords are for http(s) remotes; an SSH server that also offers
        // password login goes on to the agent below.
        if allowed.contains(CredentialType::USER_PASS_PLAINTEXT) && url_origin(url).is_some() {
            // A password goes only to the scheme, host and port it was
            // configured for: never to where a redirect points, and never
            // in cleartext to another machine. A user name in the URL asked
            // for can only come from a redirect (the config refuses one), and
            // libgit2 prints it decoded, so it could fake the host: refused.
            if username.is_some() || !same_origin(url, &cfg.fetch_url) {
                return Err(git2::Error::new(
                    ErrorCode::Auth,
                    ErrorClass::Callback,
                    format!(
                        "{} asks for credentials, but they are only sent to {}: refused (did the remote redirect?)",
                        crate::config::redacted(url),
                        url_origin(&cfg.fetch_url).map_or_else(String::new, |(s, h, p)| format!("{s}://{h}:{p}"))
                    ),
                ));
            }
            if url_origin(url).is_some_and(|(scheme, host, _)| scheme == "http" && !is_loopback(&host)) {
                return Err(git2::Error::new(
                    ErrorCode::Auth,
                    ErrorClass::Callback,
                    format!(
                        "{} asks for credentials over plain http: refused (use https)",
                        crate::config::redacted(url)
                    ),
                ));
            }
            if let Some(var) = cfg.token_env.as_deref() {
                return match std::env::var(var) {
                    Ok(token) if !token.is_empty() => {
                        Cred::userpass_plaintext("x-access-token", &token)
                    }
                    _ => Err(git2::Error::new(
                        ErrorCode::Auth,
                        ErrorClass::Callback,
                        format!(
                            "{} needs a token: set the environment variable {var} (token_env)",
                            crate::config::redacted(url)
                        ),
                    )),
                };
            }
            if let Ok(c) = git2::Config::open_default()
                .and_then(|config| Cred::credential_helper(&config, url, None))
            {
                return Ok(c);
            }
        }
        if allowed.contains(CredentialType::SSH_KEY) {
            return Cred::ssh_key_from_agent(username.unwrap_or("git"));
        }
        if allowed.contains(CredentialType::DEFAULT) {
            return Cred::default();
        }
        Err(git2::Error::new(
            ErrorCode::Auth,
            ErrorClass::Callback,
            format!("{url} asks for credentials: name the variable holding a token with token_env, or configure a git credential helper or ssh-agent"),
        ))
    });
    cb
}

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
    cache
        .join("git")
        .join(format!("{}-{key}.git", cfg.base_name()))
}

/// Fetches `cfg` into the cache and resolves the commit to index, retrying
/// network failures as `retry` says (`on_retry` hears of each).
pub fn sync(
    cfg: &RepoConfig,
    cache: &Path,
    retry: Retry,
    mut on_retry: impl FnMut(&git2::Error, Duration),
) -> Result<Synced, SyncError> {
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
    // A token is for the configured remote only: with one, no redirect is
    // followed at all (libgit2 would replay the credentials it holds to the
    // new location); without, libgit2's default follows the first request's.
    repo.config()
        .and_then(|mut c| match cfg.token_env {
            Some(_) => c.set_str("http.followRedirects", "false"),
            None => match c.remove("http.followRedirects") {
                Err(e) if e.code() == ErrorCode::NotFound => Ok(()),
                other => other,
            },
        })
        .map_err(err("configure redirects"))?;
    let default_branch = with_retry(retry, &mut on_retry, || {
        let tries = Cell::new(0);
        let mut remote = repo.find_remote("origin")?;
        let mut conn = remote.connect_auth(Direction::Fetch, Some(callbacks(cfg, &tries)), None)?;
        let head = conn.remote().default_branch()?;
        let head = head.as_str().unwrap_or_default();
        Ok(head.strip_prefix("refs/heads/").unwrap_or(head).to_owned())
    })
    .map_err(err("read the remote's HEAD"))?;
    with_retry(retry, &mut on_retry, || {
        let tries = Cell::new(0);
        let mut remote = repo.find_remote("origin")?;
        let mut opts = FetchOptions::new();
        opts.download_tags(git2::AutotagOption::All);
        // The config key above reaches only the connection; the fetch takes its own.
        if cfg.token_env.is_some() {
            opts.follow_redirects(git2::RemoteRedirect::None);
        }
        opts.remote_callbacks(callbacks(cfg, &tries));
        remote.fetch(
            &[
                "+refs/heads/*:refs/remotes/origin/*",
                "+refs/tags/*:refs/tags/*",
            ],
            Some(&mut opts),
            None,
        )
    })
    .map_err(err("fetch"))?;
    // Remembered for a later build that cannot reach the remote (`cached`).
    repo.config()
        .and_then(|mut c| c.set_str(DEFAULT_BRANCH_KEY, &default_branch))
        .map_err(err("record the default branch"))?;
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

/// What the remote offers for the ref `cfg` indexes (its pinned ref, or
/// HEAD: the default branch), without fetching anything (`git ls-remote`):
/// the ref's name and the object it points at. `Ok(None)` when the cache has
/// never been synced (the remote is then read by the next build, which
/// also configures its credentials and redirects) or the remote does not
/// offer the ref.
pub fn remote_head(cfg: &RepoConfig, cache: &Path) -> Result<Option<(String, String)>, SyncError> {
    let err = |source| SyncError {
        repo: cfg.name.clone(),
        action: "list the remote's refs".to_owned(),
        source,
    };
    let Ok(repo) = Repository::open_bare(cache_path(cache, cfg)) else {
        return Ok(None);
    };
    let wanted: Vec<String> = match &cfg.pin {
        Some(p) => vec![
            p.clone(),
            format!("refs/heads/{p}"),
            format!("refs/tags/{p}^{{}}"),
            format!("refs/tags/{p}"),
        ],
        None => vec!["HEAD".to_owned()],
    };
    // A mirror without refs/ is read through a view of it (see `sync`):
    // refreshed here, so the view offers what the mirror holds now.
    if let Some(view) = refless_mirror(cfg, cache) {
        view.map_err(err)?;
    }
    let tries = Cell::new(0);
    let mut remote = repo.find_remote("origin").map_err(err)?;
    let mut conn = remote
        .connect_auth(Direction::Fetch, Some(callbacks(cfg, &tries)), None)
        .map_err(err)?;
    let heads = conn.remote().list().map_err(err)?;
    // An annotated tag's peeled commit (`^{}`) before the tag object itself.
    Ok(wanted.iter().find_map(|w| {
        heads
            .iter()
            .find(|h| h.name() == w)
            .map(|h| (w.trim_end_matches("^{}").to_owned(), h.oid().to_string()))
    }))
}

/// How many commits `remote` is ahead of `indexed` in `cfg`'s cache, when
/// the cache holds both (a later fetch brings the remote's); `None` when it
/// cannot tell.
pub fn commits_ahead(cfg: &RepoConfig, cache: &Path, remote: &str, indexed: &str) -> Option<u64> {
    let repo = Repository::open_bare(cache_path(cache, cfg)).ok()?;
    let (remote, indexed) = (Oid::from_str(remote).ok()?, Oid::from_str(indexed).ok()?);
    let (ahead, _) = repo.graph_ahead_behind(remote, indexed).ok()?;
    u64::try_from(ahead).ok()
}

/// The commit `cfg` resolves to in the cache as the last successful sync left
/// it, without touching the remote; `None` when there is no such cache.
pub fn cached(cfg: &RepoConfig, cache: &Path) -> Option<Synced> {
    let path = cache_path(cache, cfg);
    let repo = Repository::open_bare(&path).ok()?;
    let default_branch = repo.config().ok()?.get_string(DEFAULT_BRANCH_KEY).ok()?;
    let commit = resolve(
        &repo,
        cfg.pin.as_deref().unwrap_or(&default_branch),
        cfg.pin.is_some(),
    )
    .ok()?;
    Some(Synced {
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
            .join(format!("{}-{key}.git", cfg.base_name()));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_to_the_configured_origin_only() {
        let configured = "https://git.example.org/team/alpha.git";
        for same in [
            "https://git.example.org/team/alpha.git/info/refs",
            "HTTPS://Git.Example.org:443/other/path",
        ] {
            assert!(same_origin(same, configured), "{same}");
        }
        for other in [
            "http://git.example.org/team/alpha.git",
            "https://git.example.org:8443/team/alpha.git",
            "https://evil.example/team/alpha.git",
            "https://git.example.org.evil.example/x",
            "ssh://git.example.org/team/alpha.git",
            "not a url",
        ] {
            assert!(!same_origin(other, configured), "{other}");
        }
        assert!(same_origin(
            "http://127.0.0.1:9000/a",
            "http://127.0.0.1:9000/b"
        ));
        assert!(!same_origin(
            "http://127.0.0.1:9001/a",
            "http://127.0.0.1:9000/b"
        ));
        assert!(same_origin("https://[::1]:8443/a", "https://[::1]:8443/b"));
        assert!(
            same_origin("https://::1/a", "https://[::1]/b"),
            "libgit2's bracketless IPv6"
        );
    }
}
