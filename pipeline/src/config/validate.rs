//! One repository's entry checked: its name, URL (resolved against the
//! file's folder when local), refs, globs and groups, into a `RepoConfig`.

use super::entry::{RawRepo, RepoConfig, check_segment};
use super::error::{ConfigError, at};
use super::url::{
    github_web_url, has_credentials, is_loopback, redacted, scheme_of, url_origin,
    without_credentials,
};
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_saphyr::Spanned;
use std::path::{Path, PathBuf};

/// One repository's entry checked, its errors in the order the fields are
/// checked: url, web_url, include, exclude, ref, token_env, toolkit, groups.
pub(super) fn validate_repo(
    path: &Path,
    base: &Path,
    category: &str,
    category_groups: &[Spanned<String>],
    r: RawRepo,
) -> Result<RepoConfig, ConfigError> {
    // What is recorded and shown never carries credentials; only fetching uses them.
    let url = without_credentials(r.url.value.trim());
    let fetch_url = resolve_url(path, base, &r.url)?;
    let web_url = web_url(path, &r, &url)?;
    let include_set = glob_set(path, &r.include)?;
    let exclude_set = glob_set(path, &r.exclude)?.unwrap_or_else(GlobSet::empty);
    if let Some(p) = &r.pin {
        check_pin(path, p)?;
    }
    if let Some(t) = &r.token_env {
        check_token_env(path, t, &fetch_url, &url)?;
    }
    let toolkit = match &r.toolkit {
        Some(t) => {
            check_segment(path, t, "toolkit")?;
            t.value.clone()
        }
        None => r.name.value.to_lowercase(),
    };
    let groups_src = if r.groups.is_empty() {
        category_groups
    } else {
        &r.groups
    };
    for g in groups_src {
        check_segment(path, g, "group")?;
    }
    Ok(RepoConfig {
        category: category.to_owned(),
        name: r.name.value.clone(),
        url,
        fetch_url,
        web_url,
        pin: r.pin.map(|p| p.value),
        description: r.description,
        token_env: r.token_env.map(|t| t.value),
        toolkit,
        include: r.include.into_iter().map(|g| g.value).collect(),
        exclude: r.exclude.into_iter().map(|g| g.value).collect(),
        groups: groups_src.iter().map(|g| g.value.clone()).collect(),
        article: None,
        include_set,
        exclude_set,
    })
}

/// The page citations link to: `web_url` when given (checked), else the
/// GitHub page of `url` (credentials already removed).
fn web_url(path: &Path, r: &RawRepo, url: &str) -> Result<String, ConfigError> {
    let Some(w) = &r.web_url else {
        return github_web_url(url).ok_or_else(|| {
            at(
                path,
                &r.url,
                format!(
                    "url {:?} is not a GitHub URL: add web_url, the page citations should link to",
                    redacted(url)
                ),
            )
        });
    };
    let v = w.value.trim_end_matches('/');
    // Every citation carries this URL: a secret in it would be published.
    if has_credentials(v) {
        return Err(at(
            path,
            w,
            "web_url holds a user name or password: remove it (citations carry this URL to everyone)",
        ));
    }
    if !(v.starts_with("https://") || v.starts_with("http://")) || v.contains(char::is_whitespace) {
        return Err(at(
            path,
            w,
            format!("web_url {:?} must be an http(s) URL", redacted(v)),
        ));
    }
    Ok(v.to_owned())
}

/// The globs of `include` or `exclude` as one set (`None` when there are none).
fn glob_set(path: &Path, list: &[Spanned<String>]) -> Result<Option<GlobSet>, ConfigError> {
    let Some(first) = list.first() else {
        return Ok(None);
    };
    let mut b = GlobSetBuilder::new();
    for g in list {
        b.add(Glob::new(&g.value).map_err(|e| at(path, g, format!("bad glob: {e}")))?);
    }
    b.build()
        .map(Some)
        .map_err(|e| at(path, first, format!("bad glob: {e}")))
}

/// Whether `ref` can name a branch, tag or commit.
fn check_pin(path: &Path, p: &Spanned<String>) -> Result<(), ConfigError> {
    if p.value.trim().is_empty() || p.value.contains(char::is_whitespace) || p.value.contains("..")
    {
        return Err(at(
            path,
            p,
            format!("ref {:?} is not a branch, tag or commit", p.value),
        ));
    }
    Ok(())
}

/// Whether `token_env` names a variable (not the token itself) and the
/// token would only travel encrypted (`url` is what errors show).
fn check_token_env(
    path: &Path,
    t: &Spanned<String>,
    fetch_url: &str,
    url: &str,
) -> Result<(), ConfigError> {
    let ok = t
        .value
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && t.value
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        // Not echoed: a token pasted here is exactly what must not be printed.
        return Err(at(
            path,
            t,
            "token_env must name an environment variable (A-Z, 0-9, _), not hold the token",
        ));
    }
    // Over plain HTTP the token would cross the network in cleartext.
    if url_origin(fetch_url)
        .is_some_and(|(scheme, host, _)| scheme == "http" && !is_loopback(&host))
    {
        return Err(at(
            path,
            t,
            format!(
                "token_env needs an https:// url: {:?} would send the token in cleartext",
                redacted(url)
            ),
        ));
    }
    Ok(())
}

/// Checks the URL's form and resolves local paths against the config's folder.
pub(super) fn resolve_url(
    path: &Path,
    base: &Path,
    url: &Spanned<String>,
) -> Result<String, ConfigError> {
    let u = url.value.trim();
    // A secret written into the file ends up in logs, manifests and git
    // history: refused first, whatever else is wrong with the URL.
    if has_credentials(u) {
        return Err(at(
            path,
            url,
            "url holds a password or token: remove it and name the environment variable that holds it with token_env".to_owned(),
        ));
    }
    if u.is_empty() || u.contains(char::is_whitespace) {
        return Err(at(
            path,
            url,
            format!("url {:?} is empty or contains spaces", redacted(u)),
        ));
    }
    let scheme = scheme_of(u);
    if matches!(scheme, Some("https" | "http" | "ssh" | "git")) {
        // A query or fragment is where some hosts take a token (`?private_token=`).
        if u.contains(['?', '#']) {
            return Err(at(
                path,
                url,
                "url must not carry a query or fragment (a token there would be recorded): name the variable that holds it with token_env".to_owned(),
            ));
        }
        let rest = u.split_once("://").map_or("", |(_, r)| r);
        let authority = rest.split('/').next().unwrap_or("");
        if authority.is_empty() || !rest.contains('/') {
            return Err(at(
                path,
                url,
                format!("url {:?} has no host or path", redacted(u)),
            ));
        }
        return Ok(u.to_owned());
    }
    if scheme.is_some_and(|s| s != "file") {
        return Err(at(
            path,
            url,
            format!("url {:?} has an unsupported scheme", redacted(u)),
        ));
    }
    // scp-like `git@host:owner/repo.git`
    if let Some((userhost, _)) = u.split_once(':')
        && userhost.contains('@')
        && !userhost.contains('/')
    {
        return Ok(u.to_owned());
    }
    let local = u.strip_prefix("file://").unwrap_or(u);
    let p = if Path::new(local).is_absolute() {
        PathBuf::from(local)
    } else {
        base.join(local)
    };
    // Absolute, so the cache does not depend on the working directory.
    match std::fs::canonicalize(&p) {
        Ok(abs) => Ok(abs.to_string_lossy().into_owned()),
        Err(_) => Err(at(
            path,
            url,
            format!(
                "url {:?}: no such local repository ({})",
                redacted(u),
                redacted(&p.display().to_string())
            ),
        )),
    }
}
