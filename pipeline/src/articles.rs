//! Articles outside repositories: each article's PDF (as `config::articles`
//! parsed it) fetched into the build cache the way `sync` fetches a git
//! remote: with retries, and with the cached copy kept for `--keep-going`
//! when the source is unreachable.

use crate::config::{ArticleSource, ArticleSpec, RepoConfig, redacted};
use crate::sync::Retry;
use cairn_index::manifest::SkipReason;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where arXiv PDFs are fetched from unless the build names a mirror.
pub const DEFAULT_ARXIV_URL: &str = "https://arxiv.org";

/// Why an article's PDF could not be had.
#[derive(Debug, thiserror::Error)]
#[error("{article}: fetch {url}: {message}")]
pub struct FetchError {
    /// The article's name.
    pub article: String,
    /// What was fetched (credentials never appear: only configured URLs).
    pub url: String,
    /// What went wrong.
    pub message: String,
    /// Set when the article is there but is not to be read (over the size
    /// limit): it is skipped with this reason rather than failing the build.
    pub skip: Option<cairn_index::manifest::SkipReason>,
}

/// The PDF's public address, which the manifest records and permalinks
/// use: arXiv's own, whatever mirror the build fetched from.
pub fn public_url(spec: &ArticleSpec) -> String {
    source_url(spec, DEFAULT_ARXIV_URL)
}

/// Where an article's PDF is fetched from, given the arXiv mirror in use.
pub fn source_url(spec: &ArticleSpec, arxiv_url: &str) -> String {
    match &spec.source {
        ArticleSource::Arxiv(id) => format!("{}/pdf/{id}", arxiv_url.trim_end_matches('/')),
        ArticleSource::Url(u) => u.clone(),
        ArticleSource::File(p) => p.display().to_string(),
    }
}

/// The cached copy's path: one file per article name and source.
fn cache_path(cache: &Path, cfg: &RepoConfig, spec: &ArticleSpec) -> PathBuf {
    let key = format!("{}\n{:?}", cfg.name, spec.source);
    cache.join("articles").join(format!(
        "{}.pdf",
        &cairn_index::sha256_hex(key.as_bytes())[..16]
    ))
}

/// The copy of the article a build fetched before, if the cache holds one.
pub fn cached(cfg: &RepoConfig, spec: &ArticleSpec, cache: &Path) -> Option<Vec<u8>> {
    std::fs::read(cache_path(cache, cfg, spec)).ok()
}

/// One download's time at most, whatever is left of the budget.
const DOWNLOAD_SECONDS: u64 = 300;
/// Below this rate (after the first [`SLOW_GRACE`]) a download is given up
/// as too slow: a server trickling bytes would otherwise hold the build
/// for the whole timeout.
const MIN_BYTES_PER_SECOND: u64 = 16 * 1024;
/// How long a download may run before its rate is judged.
const SLOW_GRACE: Duration = Duration::from_secs(20);

/// Fetches the article's PDF (at most `max_bytes`) and keeps a copy in the
/// cache, within `budget`: what is left of the time all of `articles:` may
/// take to download (retries included). A timeout is never retried.
#[allow(clippy::too_many_arguments)]
pub fn fetch(
    cfg: &RepoConfig,
    spec: &ArticleSpec,
    cache: &Path,
    arxiv_url: &str,
    max_bytes: u64,
    budget: Duration,
    retry: Retry,
    mut on_retry: impl FnMut(&str, Duration),
) -> Result<Vec<u8>, FetchError> {
    let url = source_url(spec, arxiv_url);
    let fail = |message: String, skip: Option<SkipReason>| FetchError {
        article: cfg.name.clone(),
        url: redacted(&url),
        message,
        skip,
    };
    let bytes = match &spec.source {
        ArticleSource::File(p) => read_local(p, max_bytes).map_err(|(m, s)| fail(m, s))?,
        _ => {
            let started = std::time::Instant::now();
            let spent = || FetchError {
                article: cfg.name.clone(),
                url: redacted(&url),
                message: format!(
                    "not fetched: the articles' downloads used their {} s (articles_fetch_seconds)",
                    budget.as_secs()
                ),
                skip: Some(SkipReason::FetchBudget),
            };
            let mut delay = retry.first_delay;
            let mut attempt = 1;
            loop {
                let left = budget.saturating_sub(started.elapsed());
                if left.is_zero() {
                    return Err(spent());
                }
                match download(
                    &url,
                    max_bytes,
                    left.min(Duration::from_secs(DOWNLOAD_SECONDS)),
                ) {
                    Ok(b) => break b,
                    Err(Failure {
                        message,
                        transient: true,
                        ..
                    }) if attempt < retry.attempts
                        && budget.saturating_sub(started.elapsed()) > delay =>
                    {
                        on_retry(&message, delay);
                        std::thread::sleep(delay);
                        delay *= 2;
                        attempt += 1;
                    }
                    Err(f) => return Err(fail(f.message, f.skip)),
                }
            }
        }
    };
    if !bytes.starts_with(b"%PDF-") {
        return Err(fail(
            "the answer is not a PDF (it does not start with %PDF-)".to_owned(),
            spec.from_bibliography.then_some(SkipReason::NotAPdf),
        ));
    }
    let path = cache_path(cache, cfg, spec);
    // The copy is written whole or not at all: a killed build leaves no half PDF.
    let stored = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|_| {
            let tmp = path.with_extension("pdf.tmp");
            std::fs::write(&tmp, &bytes).and_then(|_| std::fs::rename(&tmp, &path))
        });
    stored.map_err(|e| fail(format!("caching {}: {e}", path.display()), None))?;
    Ok(bytes)
}

fn too_large_message(size: u64, max_bytes: u64) -> String {
    format!("{size} bytes, over the {max_bytes}-byte limit on PDFs (max_pdf_bytes)")
}

fn read_local(p: &Path, max_bytes: u64) -> Result<Vec<u8>, (String, Option<SkipReason>)> {
    let meta = std::fs::metadata(p).map_err(|e| (e.to_string(), None))?;
    // Checked before reading: a 200 MB file is never loaded.
    if meta.len() > max_bytes {
        return Err((
            too_large_message(meta.len(), max_bytes),
            Some(SkipReason::TooLarge),
        ));
    }
    std::fs::read(p).map_err(|e| (e.to_string(), None))
}

/// Why a download failed.
struct Failure {
    message: String,
    /// Trying again may help (the network's fault, or the server's for now).
    transient: bool,
    skip: Option<SkipReason>,
}

/// The body at `url`, within `time`.
fn download(url: &str, max_bytes: u64, time: Duration) -> Result<Vec<u8>, Failure> {
    let failure = |message: String, transient: bool, skip: Option<SkipReason>| Failure {
        message,
        transient,
        skip,
    };
    // Publishers redirect (doi.org → landing → PDF), but a few hops do;
    // an https article is never fetched over plain http after a redirect.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .max_redirects(5)
        .https_only(url.starts_with("https://"))
        .timeout_connect(Some(Duration::from_secs(30).min(time)))
        .timeout_global(Some(time))
        .build()
        .into();
    let started = std::time::Instant::now();
    let mut response = agent
        .get(url)
        .header("Accept", "application/pdf")
        .header("User-Agent", concat!("cairn/", env!("CARGO_PKG_VERSION")))
        .call()
        .map_err(|e| {
            // A timeout is not tried again: it already took all the time it had.
            let transient = match &e {
                ureq::Error::StatusCode(code) => *code == 429 || *code >= 500,
                ureq::Error::Io(_) | ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => {
                    true
                }
                _ => false,
            };
            failure(e.to_string(), transient, None)
        })?;
    if let Some(len) = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        && len > max_bytes
    {
        return Err(failure(
            too_large_message(len, max_bytes),
            false,
            Some(SkipReason::TooLarge),
        ));
    }
    let mut body = response.body_mut().with_config().limit(max_bytes).reader();
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match std::io::Read::read(&mut body, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                let cause = e
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<ureq::Error>());
                return Err(match cause {
                    Some(ureq::Error::BodyExceedsLimit(_)) => failure(
                        too_large_message(max_bytes + 1, max_bytes),
                        false,
                        Some(SkipReason::TooLarge),
                    ),
                    Some(ureq::Error::Timeout(_)) => failure(e.to_string(), false, None),
                    _ => failure(
                        e.to_string(),
                        e.kind() != std::io::ErrorKind::TimedOut,
                        None,
                    ),
                });
            }
        };
        out.extend_from_slice(&buf[..n]);
        let took = started.elapsed();
        if took > SLOW_GRACE && (out.len() as u64) < MIN_BYTES_PER_SECOND * took.as_secs() {
            return Err(failure(
                format!(
                    "too slow: {} bytes in {} s (under {} KiB/s)",
                    out.len(),
                    took.as_secs(),
                    MIN_BYTES_PER_SECOND / 1024
                ),
                false,
                None,
            ));
        }
    }
    Ok(out)
}
