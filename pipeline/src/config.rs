//! repositories.yml, weights.yaml and build settings: parsed and validated at
//! the edge, so the rest of the builder trusts them.
//!
//! Every error names `file:line:column`. Unknown keys are errors, not silent
//! defaults.

use crate::articles::RawArticle;
pub use crate::articles::{ArticleSource, ArticleSpec};
pub use cairn_index::PathWeights;
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// A configuration error, located in its file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Bad YAML or a bad value, at a known place.
    #[error("{path}:{line}:{column}: {message}")]
    At {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// What is wrong.
        message: String,
    },
}

pub(crate) fn at<T>(path: &Path, s: &Spanned<T>, message: impl Into<String>) -> ConfigError {
    ConfigError::At {
        path: path.to_owned(),
        line: s.referenced.line(),
        column: s.referenced.column(),
        message: message.into(),
    }
}

fn yaml_error(path: &Path, e: &serde_saphyr::Error) -> ConfigError {
    let (line, column) = e.location().map_or((1, 1), |l| (l.line(), l.column()));
    // The rendered error repeats the location and a snippet; keep its message line.
    let rendered = e.to_string();
    let first = rendered
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid YAML")
        .trim();
    let first = first.strip_prefix("error:").unwrap_or(first).trim_start();
    // Drop the "line N column M:" prefix: the location leads our message already.
    let message = match first.strip_prefix("line ").and_then(|r| r.split_once(": ")) {
        Some((_, rest)) => rest.to_owned(),
        None => first.to_owned(),
    };
    ConfigError::At {
        path: path.to_owned(),
        line,
        column,
        message,
    }
}

fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })
}

/// One repository to index, validated.
#[derive(Clone, Debug)]
pub struct RepoConfig {
    /// Category (the top-level key).
    pub category: String,
    /// Repository name, unique across the file.
    pub name: String,
    /// Clone URL as written in the file.
    pub url: String,
    /// What git2 is given: the URL, or a local path resolved against the file's folder.
    pub fetch_url: String,
    /// Where citations link: `https://github.com/owner/repo`.
    pub web_url: String,
    /// Branch, tag or full commit sha to pin; the remote's default branch when absent.
    pub pin: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// The environment variable holding an HTTPS token for a private repository
    /// (the token itself never appears in the file).
    pub token_env: Option<String>,
    /// Toolkit used for filtering (the name lowercased by default).
    pub toolkit: String,
    /// Only paths matching one of these are indexed (all when empty).
    pub include: Vec<String>,
    /// Paths matching one of these are skipped.
    pub exclude: Vec<String>,
    /// Access groups (the repo's own, else its category's); empty means public.
    pub groups: Vec<String>,
    /// Set for an article from `articles:`: a PDF fetched as one document, not a git repository.
    pub article: Option<ArticleSpec>,
    include_set: Option<GlobSet>,
    exclude_set: GlobSet,
}

/// What an article's config holds beyond its category and name.
pub(crate) struct ArticleParts {
    pub(crate) url: String,
    pub(crate) fetch_url: String,
    pub(crate) web_url: String,
    pub(crate) toolkit: String,
    pub(crate) groups: Vec<String>,
    pub(crate) description: Option<String>,
    pub(crate) spec: ArticleSpec,
}

impl RepoConfig {
    /// The config of an article listed under `articles:`.
    pub(crate) fn article(category: &str, name: &str, parts: ArticleParts) -> Self {
        Self {
            category: category.to_owned(),
            name: name.to_owned(),
            url: parts.url,
            fetch_url: parts.fetch_url,
            web_url: parts.web_url,
            pin: None,
            description: parts.description,
            token_env: None,
            toolkit: parts.toolkit,
            include: Vec::new(),
            exclude: Vec::new(),
            groups: parts.groups,
            article: Some(parts.spec),
            include_set: None,
            exclude_set: GlobSet::empty(),
        }
    }

    /// The same repository at another ref, indexed as its own documents:
    /// `<category>/<name>@<ref>/<path>` (a name holds no `@`, so the ids stay apart).
    pub fn at_ref(&self, r: &str) -> Self {
        Self {
            name: format!("{}@{r}", self.name),
            pin: Some(r.to_owned()),
            ..self.clone()
        }
    }

    /// The repository's own name (without `@ref`): what its git cache is named by.
    pub fn base_name(&self) -> &str {
        self.name.split_once('@').map_or(&self.name, |(b, _)| b)
    }

    /// Whether the include/exclude globs let `path` in.
    pub fn wants(&self, path: &str) -> bool {
        self.include_set.as_ref().is_none_or(|s| s.is_match(path))
            && !self.exclude_set.is_match(path)
    }
}

/// The parsed repositories.yml.
#[derive(Clone, Debug)]
pub struct Registry {
    /// The file it came from.
    pub path: PathBuf,
    /// Repositories, in file order within categories sorted by name.
    pub repos: Vec<RepoConfig>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRepo {
    name: Spanned<String>,
    url: Spanned<String>,
    #[serde(rename = "ref")]
    pin: Option<Spanned<String>>,
    #[serde(default)]
    refs: Vec<Spanned<String>>,
    description: Option<String>,
    token_env: Option<Spanned<String>>,
    web_url: Option<Spanned<String>>,
    toolkit: Option<Spanned<String>>,
    #[serde(default)]
    include: Vec<Spanned<String>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    groups: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCategoryTable {
    #[serde(default)]
    groups: Vec<Spanned<String>>,
    repos: Vec<RawRepo>,
}

/// A category is nancy-brain's list of repos, or `{groups, repos}`.
enum RawCategory {
    List(Vec<RawRepo>),
    Table(RawCategoryTable),
}

impl<'de> Deserialize<'de> for RawCategory {
    // Dispatching on the node's shape (rather than `#[serde(untagged)]`, which
    // buffers the input) keeps every source location for error messages.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{MapAccess, SeqAccess, Visitor, value};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawCategory;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of repositories, or a mapping with `groups` and `repos`")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<RawCategory, A::Error> {
                Vec::deserialize(value::SeqAccessDeserializer::new(seq)).map(RawCategory::List)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawCategory, A::Error> {
                RawCategoryTable::deserialize(value::MapAccessDeserializer::new(map))
                    .map(RawCategory::Table)
            }
        }
        d.deserialize_any(V)
    }
}

/// The whole file: categories of repositories, and the reserved key `articles`.
struct RawFile {
    categories: Vec<(Spanned<String>, RawCategory)>,
    articles: Vec<Spanned<RawArticle>>,
}

impl<'de> Deserialize<'de> for RawFile {
    // Keys are read one by one so that `articles` takes its own shape and
    // every value keeps its source location.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawFile;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a mapping of categories to repositories (and an optional `articles` list)",
                )
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawFile, A::Error> {
                let mut file = RawFile {
                    categories: Vec::new(),
                    articles: Vec::new(),
                };
                let mut seen = HashSet::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    if !seen.insert(key.value.clone()) {
                        return Err(A::Error::custom(format!("duplicate key {:?}", key.value)));
                    }
                    if key.value == ARTICLES_KEY {
                        file.articles = map.next_value()?;
                    } else {
                        let value = map.next_value()?;
                        file.categories.push((key, value));
                    }
                }
                Ok(file)
            }
        }
        d.deserialize_map(V)
    }
}

/// The top-level key listing articles rather than a category's repositories.
pub const ARTICLES_KEY: &str = "articles";

impl Registry {
    /// Reads and validates `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = read(path)?;
        Self::parse(path, &text)
    }

    /// Validates `text` as if read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let file: RawFile = serde_saphyr::from_str(text).map_err(|e| yaml_error(path, &e))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut names: HashSet<String> = HashSet::new();
        let mut repos = Vec::new();
        // Categories sorted by name, repositories in file order: the same file always
        // gives the same registry.
        let mut raw = file.categories;
        raw.sort_by(|a, b| a.0.value.cmp(&b.0.value));
        // Each category's groups, which its articles take like its repositories.
        let mut groups_of: HashMap<String, Vec<String>> = HashMap::new();
        for (category, value) in raw {
            check_segment(path, &category, "category")?;
            let (category_groups, list) = match value {
                RawCategory::List(l) => (Vec::new(), l),
                RawCategory::Table(t) => (t.groups, t.repos),
            };
            for g in &category_groups {
                check_segment(path, g, "group")?;
            }
            groups_of.insert(
                category.value.clone(),
                category_groups.iter().map(|g| g.value.clone()).collect(),
            );
            for mut r in list {
                check_segment(path, &r.name, "repository name")?;
                if !names.insert(r.name.value.clone()) {
                    return Err(at(
                        path,
                        &r.name,
                        format!("duplicate repository name {:?}", r.name.value),
                    ));
                }
                let refs = std::mem::take(&mut r.refs);
                if let (Some(first), Some(_)) = (refs.first(), &r.pin) {
                    return Err(at(
                        path,
                        first,
                        "give ref (one pinned ref) or refs (several), not both",
                    ));
                }
                // The first of `refs` is the default ref: it keeps the plain ids.
                if let Some(first) = refs.first() {
                    r.pin = Some(first.clone());
                }
                let cfg = validate_repo(path, base, &category.value, &category_groups, r)?;
                let mut seen = HashSet::new();
                for rf in &refs {
                    check_segment(path, rf, "ref in refs (a tag or branch without '/')")?;
                    if !seen.insert(rf.value.clone()) {
                        return Err(at(path, rf, format!("ref {:?} is listed twice", rf.value)));
                    }
                }
                let extra: Vec<RepoConfig> = refs
                    .iter()
                    .skip(1)
                    .map(|rf| cfg.at_ref(&rf.value))
                    .collect();
                repos.push(cfg);
                repos.extend(extra);
            }
        }
        // Articles follow the repositories, in file order.
        repos.extend(crate::articles::configs(
            path,
            base,
            file.articles,
            &mut names,
            &groups_of,
        )?);
        if repos.is_empty() {
            return Err(ConfigError::At {
                path: path.to_owned(),
                line: 1,
                column: 1,
                message: "no repositories listed".into(),
            });
        }
        Ok(Self {
            path: path.to_owned(),
            repos,
        })
    }
}

pub(crate) fn check_segment(
    path: &Path,
    s: &Spanned<String>,
    what: &str,
) -> Result<(), ConfigError> {
    let v = &s.value;
    let ok = !v.is_empty()
        && v != "."
        && v != ".."
        && v.chars().all(|c| c.is_alphanumeric() || "._-+".contains(c));
    if ok {
        Ok(())
    } else {
        Err(at(
            path,
            s,
            format!("{what} {v:?} must be letters, digits, '.', '_', '-' or '+'"),
        ))
    }
}

fn validate_repo(
    path: &Path,
    base: &Path,
    category: &str,
    category_groups: &[Spanned<String>],
    r: RawRepo,
) -> Result<RepoConfig, ConfigError> {
    // What is recorded and shown never carries credentials; only fetching uses them.
    let url = without_credentials(r.url.value.trim());
    let fetch_url = resolve_url(path, base, &r.url)?;
    let web_url = match &r.web_url {
        Some(w) => {
            let v = w.value.trim_end_matches('/');
            // Every citation carries this URL: a secret in it would be published.
            if has_credentials(v) {
                return Err(at(
                    path,
                    w,
                    "web_url holds a user name or password: remove it (citations carry this URL to everyone)",
                ));
            }
            if !(v.starts_with("https://") || v.starts_with("http://"))
                || v.contains(char::is_whitespace)
            {
                return Err(at(
                    path,
                    w,
                    format!("web_url {:?} must be an http(s) URL", redacted(v)),
                ));
            }
            v.to_owned()
        }
        None => github_web_url(&url).ok_or_else(|| {
            at(
                path,
                &r.url,
                format!(
                    "url {:?} is not a GitHub URL: add web_url, the page citations should link to",
                    redacted(&url)
                ),
            )
        })?,
    };
    let globs = |list: &[Spanned<String>]| -> Result<Option<GlobSet>, ConfigError> {
        if list.is_empty() {
            return Ok(None);
        }
        let mut b = GlobSetBuilder::new();
        for g in list {
            b.add(Glob::new(&g.value).map_err(|e| at(path, g, format!("bad glob: {e}")))?);
        }
        b.build()
            .map(Some)
            .map_err(|e| at(path, &list[0], format!("bad glob: {e}")))
    };
    let include_set = globs(&r.include)?;
    let exclude_set = globs(&r.exclude)?.unwrap_or_else(GlobSet::empty);
    if let Some(p) = &r.pin
        && (p.value.trim().is_empty()
            || p.value.contains(char::is_whitespace)
            || p.value.contains(".."))
    {
        return Err(at(
            path,
            p,
            format!("ref {:?} is not a branch, tag or commit", p.value),
        ));
    }
    if let Some(t) = &r.token_env {
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
        if url_origin(&fetch_url)
            .is_some_and(|(scheme, host, _)| scheme == "http" && !is_loopback(&host))
        {
            return Err(at(
                path,
                t,
                format!(
                    "token_env needs an https:// url: {:?} would send the token in cleartext",
                    redacted(&url)
                ),
            ));
        }
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

/// Checks the URL's form and resolves local paths against the config's folder.
fn resolve_url(path: &Path, base: &Path, url: &Spanned<String>) -> Result<String, ConfigError> {
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

/// The lowercase scheme of `url` (`HTTPS://…` → `https`), if it has one.
fn scheme_of(url: &str) -> Option<&'static str> {
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

/// The weights used when no weights.yaml is given: `config/weights.yaml`, compiled in.
pub fn default_weights() -> PathWeights {
    const DEFAULT: &str = include_str!("../../config/weights.yaml");
    parse_weights(Path::new("config/weights.yaml"), DEFAULT).unwrap_or_default()
}

/// Reads weights.yaml, rejecting negative or absurd multipliers.
pub fn load_weights(path: &Path) -> Result<PathWeights, ConfigError> {
    parse_weights(path, &read(path)?)
}

fn parse_weights(path: &Path, text: &str) -> Result<PathWeights, ConfigError> {
    {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            #[serde(default)]
            extensions: BTreeMap<String, Spanned<f32>>,
            #[serde(default)]
            path_includes: BTreeMap<String, Spanned<f32>>,
        }
        let raw: Raw = serde_saphyr::from_str(text).map_err(|e| yaml_error(path, &e))?;
        let check =
            |m: BTreeMap<String, Spanned<f32>>| -> Result<BTreeMap<String, f32>, ConfigError> {
                m.into_iter()
                    .map(|(k, v)| {
                        if v.value.is_finite() && (0.0..=10.0).contains(&v.value) {
                            Ok((k, v.value))
                        } else {
                            Err(at(
                                path,
                                &v,
                                format!("weight for {k:?} must be between 0 and 10"),
                            ))
                        }
                    })
                    .collect()
            };
        Ok(PathWeights {
            extensions: check(raw.extensions)?,
            path_includes: check(raw.path_includes)?,
        })
    }
}

/// Build settings: chunking, model and size limits. Every field has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BuildSettings {
    /// Hub id of the embedding model.
    pub model: String,
    /// Hub revision of the model.
    pub model_revision: String,
    /// Files larger than this are skipped (bytes).
    pub max_file_bytes: u64,
    /// A chunk never spans more lines than this.
    pub chunk_max_lines: u32,
    /// Lines repeated between consecutive windows of one long section.
    pub chunk_overlap_lines: u32,
    /// Sections shorter than this are merged with their neighbours.
    pub chunk_min_lines: u32,
    /// A subchunk (a short window embedded on its own) never spans more lines than this.
    pub subchunk_max_lines: u32,
    /// Lines repeated between consecutive subchunks of one long section.
    pub subchunk_overlap_lines: u32,
    /// Sections shorter than this are merged with their neighbours into one subchunk.
    pub subchunk_min_lines: u32,
    /// How subchunk vectors are made. Left out of the serialized settings
    /// when independent, so indexes built before this setting keep their version.
    #[serde(skip_serializing_if = "SubchunkVectors::is_independent")]
    pub subchunk_vectors: SubchunkVectors,
    /// Versions with at least this many vector rows (chunks and subchunks)
    /// get an approximate index (inverted lists) for vector search (0: always). Left out of the
    /// serialized settings at its default, so smaller indexes keep their version.
    #[serde(skip_serializing_if = "is_default_ann_min_rows")]
    pub ann_min_rows: usize,
    /// PDFs larger than this are skipped unread (bytes). Left out of the
    /// serialized settings at its default, like `ann_min_rows`.
    #[serde(skip_serializing_if = "is_default_max_pdf_bytes")]
    pub max_pdf_bytes: u64,
    /// Seconds one PDF's text may take to extract before the file is skipped.
    #[serde(skip_serializing_if = "is_default_pdf_seconds")]
    pub pdf_seconds: f64,
    /// Seconds all of one repository's PDFs may take together.
    #[serde(skip_serializing_if = "is_default_pdf_repo_seconds")]
    pub pdf_repo_seconds: f64,
    /// Seconds all of `articles:` may take to download together.
    #[serde(skip_serializing_if = "is_default_articles_fetch_seconds")]
    pub articles_fetch_seconds: f64,
}

/// What all of `articles:` may take to download, by default.
pub const DEFAULT_ARTICLES_FETCH_SECONDS: f64 = 600.0;

fn is_default_articles_fetch_seconds(s: &f64) -> bool {
    *s == DEFAULT_ARTICLES_FETCH_SECONDS
}

fn is_default_pdf_repo_seconds(s: &f64) -> bool {
    *s == crate::pdf::PdfLimits::default().repo_budget.as_secs_f64()
}

fn is_default_max_pdf_bytes(n: &u64) -> bool {
    *n == crate::pdf::PdfLimits::default().max_bytes
}

fn is_default_pdf_seconds(s: &f64) -> bool {
    *s == crate::pdf::PdfLimits::default().timeout.as_secs_f64()
}

/// Rows below which a version gets no approximate index.
pub const DEFAULT_ANN_MIN_ROWS: usize = cairn_index::ann::DEFAULT_MIN_ROWS;

fn is_default_ann_min_rows(n: &usize) -> bool {
    *n == DEFAULT_ANN_MIN_ROWS
}

/// How a subchunk gets its vector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubchunkVectors {
    /// Its own text (with its header) through the model.
    #[default]
    Independent,
    /// Pooled from its chunk's forward pass: the header's and its lines'
    /// token states ("late chunking"), so it carries the chunk's context.
    Late,
}

impl SubchunkVectors {
    fn is_independent(&self) -> bool {
        *self == SubchunkVectors::Independent
    }
}

impl Default for BuildSettings {
    fn default() -> Self {
        Self {
            model: cairn_embed::DEFAULT_MODEL.to_owned(),
            model_revision: "main".to_owned(),
            max_file_bytes: 512 * 1024,
            chunk_max_lines: 60,
            chunk_overlap_lines: 2,
            chunk_min_lines: 6,
            subchunk_max_lines: 10,
            subchunk_overlap_lines: 1,
            subchunk_min_lines: 3,
            subchunk_vectors: SubchunkVectors::default(),
            ann_min_rows: DEFAULT_ANN_MIN_ROWS,
            max_pdf_bytes: crate::pdf::PdfLimits::default().max_bytes,
            pdf_seconds: crate::pdf::PdfLimits::default().timeout.as_secs_f64(),
            pdf_repo_seconds: crate::pdf::PdfLimits::default().repo_budget.as_secs_f64(),
            articles_fetch_seconds: DEFAULT_ARTICLES_FETCH_SECONDS,
        }
    }
}

/// Seconds as a duration within 1 ms and a day (what `BuildSettings::load` accepts).
fn seconds(s: f64) -> std::time::Duration {
    std::time::Duration::try_from_secs_f64(s)
        .unwrap_or(std::time::Duration::ZERO)
        .clamp(
            std::time::Duration::from_millis(1),
            std::time::Duration::from_secs(86_400),
        )
}

impl BuildSettings {
    /// The size and extraction bounds files are read under; PDFs are read
    /// by `pdf_helper` in processes of their own when one is given.
    pub fn read_limits(&self, pdf_helper: Option<&Path>) -> crate::documents::ReadLimits {
        crate::documents::ReadLimits {
            max_file_bytes: self.max_file_bytes,
            pdf: crate::pdf::PdfLimits {
                max_bytes: self.max_pdf_bytes,
                // `load` bounds both; settings made in code are clamped the same way.
                timeout: seconds(self.pdf_seconds),
                repo_budget: seconds(self.pdf_repo_seconds),
                helper: pdf_helper.map(Path::to_path_buf),
                ..crate::pdf::PdfLimits::default()
            },
        }
    }

    /// What all of `articles:` may take to download together.
    pub fn fetch_budget(&self) -> std::time::Duration {
        seconds(self.articles_fetch_seconds)
    }

    /// Reads `path` over the defaults.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = read(path)?;
        let s: Self = serde_saphyr::from_str(&text).map_err(|e| yaml_error(path, &e))?;
        for (kind, max, overlap) in [
            ("chunk", s.chunk_max_lines, s.chunk_overlap_lines),
            ("subchunk", s.subchunk_max_lines, s.subchunk_overlap_lines),
        ] {
            if max < 2 || overlap >= max / 2 {
                return Err(ConfigError::At {
                    path: path.to_owned(),
                    line: 1,
                    column: 1,
                    message: format!(
                        "{kind}_max_lines must be at least 2 and {kind}_overlap_lines under half of it"
                    ),
                });
            }
        }
        for (name, value) in [
            ("pdf_seconds", s.pdf_seconds),
            ("pdf_repo_seconds", s.pdf_repo_seconds),
            ("articles_fetch_seconds", s.articles_fetch_seconds),
        ] {
            if !(value.is_finite() && value > 0.0 && value <= 86_400.0) {
                return Err(ConfigError::At {
                    path: path.to_owned(),
                    line: 1,
                    column: 1,
                    message: format!(
                        "{name} must be a number of seconds above 0 and at most 86400"
                    ),
                });
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_weights_parse() {
        let w = default_weights();
        assert!(w.extensions.contains_key(".py") && w.path_includes.contains_key("tests"));
        let stale = w.for_path("examples/tutorial_old.ipynb");
        let current = w.for_path("examples/tutorial.ipynb");
        assert!(
            stale < current,
            "a stale copy ranks below the current file: {stale} vs {current}"
        );
    }

    #[test]
    fn pdf_time_bounds_are_checked_and_default_ones_leave_the_version_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("build.yaml");
        for bad in [
            "pdf_repo_seconds: 0\n",
            "pdf_repo_seconds: -5\n",
            "pdf_repo_seconds: .nan\n",
            "pdf_seconds: 100000\n",
        ] {
            std::fs::write(&path, bad).expect("write");
            let e = BuildSettings::load(&path).expect_err(bad).to_string();
            let key = bad.split(':').next().unwrap_or_default();
            assert!(e.contains(key), "{bad}: {e}");
        }
        std::fs::write(&path, "pdf_repo_seconds: 30\n").expect("write");
        let s = BuildSettings::load(&path).expect("load");
        assert_eq!(
            s.read_limits(None).pdf.repo_budget,
            std::time::Duration::from_secs(30)
        );
        // The default is left out of what the version hashes.
        let json = serde_json::to_string(&BuildSettings::default()).expect("json");
        assert!(!json.contains("pdf_repo_seconds"), "{json}");
    }

    #[test]
    fn credentials_never_reach_the_recorded_url() {
        assert_eq!(
            without_credentials("https://bot:s3cret@github.com/o/r.git"),
            "https://github.com/o/r.git"
        );
        assert_eq!(
            without_credentials("https://ghp_token@github.com/o/r"),
            "https://github.com/o/r"
        );
        assert_eq!(
            without_credentials("ssh://git@example.org:22/o/r"),
            "ssh://example.org:22/o/r"
        );
        // No authority credentials to remove: unchanged.
        for u in [
            "https://github.com/o/r",
            "git@github.com:o/r.git",
            "../repos/alpha",
            "https://example.org/a@b",
        ] {
            assert_eq!(without_credentials(u), u);
        }
    }

    #[test]
    fn no_form_of_url_shows_its_secret() {
        for (url, shown) in [
            (
                "HTTPS://user:TOPSECRET@github.com/o/r.git",
                "HTTPS://***@github.com/o/r.git",
            ),
            (
                "https://user:TOPSECRET@github.com",
                "https://***@github.com",
            ),
            (
                "user:TOPSECRET@github.com:o/r.git",
                "***@github.com:o/r.git",
            ),
            ("https://TOPSECRET@host/a b", "https://***@host/a b"),
            ("https://user:pa/ss@host/r.git", "https://***@host/r.git"),
            ("https://user:p#ss@host", "https://***@host"),
            ("https://host:8080/a@b", "https://host:8080/a@b"),
            ("https://github.com/o/r", "https://github.com/o/r"),
        ] {
            assert_eq!(redacted(url), shown);
        }
        for secret in [
            "HTTPS://user:TOPSECRET@github.com/o/r.git",
            "https://user:TOPSECRET@github.com",
            "user:TOPSECRET@github.com:o/r.git",
            "https://TOPSECRET@gitlab.example.org",
            "ssh://git:TOPSECRET@example.org/r.git",
            "ftp://user:TOPSECRET@example.org/r",
            "https://user:TOP/SECRET@example.org/r.git",
        ] {
            assert!(has_credentials(secret), "{secret}");
        }
        for plain in [
            "git@github.com:o/r.git",
            "ssh://git@example.org/r.git",
            "https://github.com/o/r",
            "https://example.org/a@b",
            "https://example.org:8443/a@b",
            "../repos/alpha",
        ] {
            assert!(!has_credentials(plain), "{plain}");
        }
        let loopback = |u: &str| url_origin(u).is_some_and(|(_, h, _)| is_loopback(&h));
        assert!(loopback("http://127.0.0.1:9000/a.git"));
        assert!(loopback("http://localhost/a.git"));
        assert!(loopback("http://[::1]:80/a.git"));
        assert!(!loopback("http://git.example.org/a.git"));
    }

    #[test]
    fn github_urls_give_web_urls() {
        assert_eq!(
            github_web_url("https://github.com/dfm/emcee.git").as_deref(),
            Some("https://github.com/dfm/emcee")
        );
        assert_eq!(
            github_web_url("git@github.com:dfm/corner.py.git").as_deref(),
            Some("https://github.com/dfm/corner.py")
        );
        assert_eq!(github_web_url("https://gitlab.com/a/b"), None);
    }
}
