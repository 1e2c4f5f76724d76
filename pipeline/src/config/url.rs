//! Remote URLs as repositories.yml writes them: their scheme and origin,
//! credentials kept out of what is logged or published, and the GitHub
//! page a remote's files are linked at.

/// The lowercase scheme of `url` (`HTTPS://…` → `https`), if it has one.
pub(crate) fn scheme_of(url: &str) -> Option<&'static str> {
    let (scheme, _) = url.split_once("://")?;
    ["https", "http", "ssh", "git", "file"]
        .into_iter()
        .find(|s| scheme.eq_ignore_ascii_case(s))
        .or(Some("other"))
}

/// `(scheme, host, port)` of an http(s) URL, lowercased, with the default
/// port filled in; `None` for any other form.
pub(crate) fn url_origin(url: &str) -> Option<(String, String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "https" => 443,
        "http" => 80,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match hostport.strip_prefix('[') {
        Some(v6) => {
            let (h, tail) = v6.split_once(']')?;
            (h, tail.strip_prefix(':'))
        }
        // libgit2 prints an IPv6 host without its brackets.
        None if hostport.matches(':').count() >= 2 => (hostport, None),
        None => match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        },
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => default,
    };
    Some((scheme, host.to_ascii_lowercase(), port))
}

/// Whether `asked` is the configured remote's own scheme, host and port.
pub(crate) fn same_origin(asked: &str, configured: &str) -> bool {
    match (url_origin(asked), url_origin(configured)) {
        (Some(a), Some(c)) => a == c,
        _ => false,
    }
}

/// Whether `host` is this machine (`localhost`, 127.0.0.0/8, `::1`).
pub(crate) fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Where the user information of `rest` (a URL after its `scheme://`, or an
/// scp-like `user@host:path`) ends: the `@` before the host. Normally the last
/// `@` before the first `/`, `?` or `#`; but a password holding one of those
/// (`user:pa/ss@host`) still ends at the first `@` after a `user:` that is
/// not a `host:port/`.
fn userinfo_end(rest: &str) -> Option<usize> {
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if let Some(at) = rest[..authority_end].rfind('@') {
        return Some(at);
    }
    let at = rest.find('@')?;
    let (user, pass) = rest[..at].split_once(':')?;
    let port = pass
        .split(['/', '?', '#'])
        .next()
        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    (!user.contains(['/', '?', '#']) && !port).then_some(at)
}

/// `url` split into (up to and including `://`, user information, the rest after its `@`).
fn split_userinfo(url: &str) -> (&str, Option<&str>, &str) {
    let (prefix, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    match userinfo_end(rest) {
        Some(at) => (prefix, Some(&rest[..at]), &rest[at + 1..]),
        None => (prefix, None, rest),
    }
}

/// Whether `url` carries a secret: a password (`user:pass@`) anywhere, or
/// a bare `token@` on an http(s) URL. `git@host:…` and `ssh://git@host/…`
/// name a user, not a secret.
pub(crate) fn has_credentials(url: &str) -> bool {
    let Some(user) = split_userinfo(url).1 else {
        return false;
    };
    let web = matches!(scheme_of(url), Some("https" | "http" | "other"));
    user.contains(':') || (web && !user.is_empty())
}

/// `url` with its user information replaced by `***`, for any message that
/// shows a URL: whatever its form, a secret in it never reaches a log.
pub fn redacted(url: &str) -> String {
    match split_userinfo(url) {
        (prefix, Some(_), rest) => format!("{prefix}***@{rest}"),
        _ => url.to_owned(),
    }
}

/// `url` without the `user:password@` (or token@) part of its authority:
/// the form manifests, packs, logs and answers may carry.
pub fn without_credentials(url: &str) -> String {
    match split_userinfo(url) {
        (prefix, Some(_), rest) if !prefix.is_empty() => format!("{prefix}{rest}"),
        _ => url.to_owned(),
    }
}

/// `https://github.com/owner/repo` for GitHub clone URLs, else `None`.
pub fn github_web_url(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://github.com/")
        .or_else(|| url.strip_prefix("http://github.com/"))
        .or_else(|| url.strip_prefix("git@github.com:"))
        .or_else(|| url.strip_prefix("ssh://git@github.com/"))?;
    let rest = rest.trim_end_matches('/').trim_end_matches(".git");
    let mut parts = rest.split('/');
    let (owner, repo) = (parts.next()?, parts.next()?);
    if owner.is_empty() || repo.is_empty() || parts.next().is_some() {
        return None;
    }
    Some(format!("https://github.com/{owner}/{repo}"))
}
