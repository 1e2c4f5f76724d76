//! The first stage: every repository synced (fetched, its commit resolved)
//! and its files read, and every article's PDF fetched, into the documents
//! the next stage chunks.

use super::error::BuildError;
use super::plan::BuildOptions;
use crate::config::{BuildSettings, RepoConfig};
use crate::documents::{Skipped, SourceDoc, read_commit};
use crate::report::Reporter;
use crate::sync::Retry;
use cairn_index::DocId;
use cairn_index::history::RepoHistory;
use cairn_index::manifest::RepoRecord;

use crate::documents::PdfClock;

pub(super) struct RepoDocs {
    pub(super) cfg: RepoConfig,
    pub(super) record: RepoRecord,
    pub(super) docs: Vec<SourceDoc>,
    pub(super) skipped: Vec<Skipped>,
    /// Its documents' line history (empty for articles and failed repositories).
    pub(super) history: RepoHistory,
}

pub(super) fn sync_all(
    configs: &[&RepoConfig],
    opts: &BuildOptions,
    settings: &BuildSettings,
    reporter: &dyn Reporter,
) -> Result<Vec<RepoDocs>, BuildError> {
    reporter.stage("syncing repositories", Some(configs.len() as u64));
    let mut out = Vec::new();
    // All articles share one repository's PDF time (`pdf_repo_seconds`):
    // a bibliography of many slow PDFs holds the build no longer than a repository.
    let mut articles_clock = PdfClock::new(settings.read_limits(opts.pdf_helper.as_deref()).pdf);
    // And one download time (`articles_fetch_seconds`): what is left of it
    // is all the next article may take.
    let mut fetch_left = settings.fetch_budget();
    for &cfg in configs {
        let mut record = RepoRecord {
            name: cfg.name.clone(),
            category: cfg.category.clone(),
            toolkit: cfg.toolkit.clone(),
            url: cfg.url.clone(),
            web_url: cfg.web_url.clone(),
            default_branch: None,
            pin: cfg.pin.clone(),
            commit: None,
            groups: cfg.groups.clone(),
            docs: 0,
            error: None,
            stale: false,
            description: cfg.description.clone().unwrap_or_default(),
            article: cfg.article.is_some(),
        };
        if let Some(spec) = &cfg.article {
            out.push(article_docs(
                cfg,
                spec,
                record,
                opts,
                (&mut articles_clock, &mut fetch_left),
                reporter,
            )?);
            reporter.advance(1);
            continue;
        }
        let retrying = |e: &git2::Error, wait: std::time::Duration| {
            reporter.note(&format!(
                "{}: {e}; retrying in {} s",
                cfg.name,
                wait.as_secs()
            ));
        };
        let synced = match crate::sync::sync(cfg, &opts.cache, Retry::default(), retrying) {
            Err(e) if opts.keep_going => match crate::sync::cached(cfg, &opts.cache) {
                // The commit the cache already holds beats a repository that vanishes.
                Some(s) => {
                    reporter.note(&format!(
                        "STALE {e} (indexing the commit fetched before, {})",
                        &s.commit.to_string()[..12]
                    ));
                    record.stale = true;
                    record.error = Some(e.to_string());
                    Ok(s)
                }
                None => Err(e),
            },
            other => other,
        };
        let result = synced.map_err(BuildError::from).and_then(|s| {
            let (docs, skipped) = read_commit(
                &s.repo,
                s.commit,
                cfg,
                &settings.read_limits(opts.pdf_helper.as_deref()),
            )
            .map_err(|source| BuildError::Tree {
                repo: cfg.name.clone(),
                source,
            })?;
            // Text read from the repository (not extracted from a PDF) has lines git can blame.
            let paths: Vec<&str> = docs
                .iter()
                .filter(|d| d.pdf.is_none())
                .map(|d| d.path.as_str())
                .collect();
            let limits = settings.history_limits();
            // Beside the mirror, one per ref: `<mirror>.history.<name>.json`.
            let cached = crate::sync::cache_path(&opts.cache, cfg)
                .with_extension(format!("history.{}.json", cfg.name));
            let history = crate::history::record_cached(&s.repo, s.commit, &paths, limits, &cached);
            Ok((
                s.default_branch,
                s.commit.to_string(),
                docs,
                skipped,
                history,
            ))
        });
        match result {
            Ok((branch, commit, mut docs, skipped, history)) => {
                // Only documents with a valid id are indexed; everything
                // downstream (chunking, the registry, parts) relies on this list.
                docs.retain(|d| DocId::new(&cfg.category, &cfg.name, &d.path).is_ok());
                reporter.note(&format!(
                    "{}: {branch} @ {}: {} docs, {} skipped",
                    cfg.name,
                    &commit[..12],
                    docs.len(),
                    skipped.len()
                ));
                record.default_branch = Some(branch);
                record.commit = Some(commit);
                record.docs = docs.len();
                out.push(RepoDocs {
                    cfg: cfg.clone(),
                    record,
                    docs,
                    skipped,
                    history,
                });
            }
            Err(e) if opts.keep_going => {
                reporter.note(&format!(
                    "FAILED {e} (continuing with the other repositories)"
                ));
                record.error = Some(e.to_string());
                out.push(RepoDocs {
                    cfg: cfg.clone(),
                    record,
                    docs: Vec::new(),
                    skipped: Vec::new(),
                    history: RepoHistory::default(),
                });
            }
            Err(e) => return Err(e),
        }
        reporter.advance(1);
    }
    reporter.finish("synced");
    if out
        .iter()
        .all(|r| r.record.error.is_some() && !r.record.stale)
    {
        return Err(BuildError::NothingBuilt);
    }
    Ok(out)
}

/// An article's one document: its PDF fetched within what is left of the
/// articles' download time (or, when that fails and `--keep-going` is set,
/// or the time is spent, the copy a build fetched before), its text
/// extracted within what is left of their PDF time.
fn article_docs(
    cfg: &RepoConfig,
    spec: &crate::config::ArticleSpec,
    mut record: RepoRecord,
    opts: &BuildOptions,
    (clock, fetch_left): (&mut PdfClock, &mut std::time::Duration),
    reporter: &dyn Reporter,
) -> Result<RepoDocs, BuildError> {
    let max_bytes = clock.max_bytes();
    record.url = crate::articles::public_url(spec);
    if matches!(spec.source, crate::config::ArticleSource::File(_)) {
        // A local path is where this machine keeps it, not an address to cite.
        record.url = cfg.url.clone();
    }
    let retrying = |message: &str, wait: std::time::Duration| {
        reporter.note(&format!(
            "{}: {message}; retrying in {} s",
            cfg.name,
            wait.as_secs()
        ));
    };
    let started = std::time::Instant::now();
    let fetched = crate::articles::fetch(
        cfg,
        spec,
        &opts.cache,
        &opts.arxiv_url,
        max_bytes,
        *fetch_left,
        Retry::default(),
        retrying,
    );
    *fetch_left = fetch_left.saturating_sub(started.elapsed());
    let mut skipped = Vec::new();
    let bytes = match fetched {
        Ok(b) => Some(b),
        // A bibliography's link that now answers with a web page, or an
        // article the download time did not reach: the copy fetched before
        // still stands (stale), as for a failed fetch.
        Err(
            e @ crate::articles::FetchError {
                skip:
                    Some(
                        cairn_index::manifest::SkipReason::NotAPdf
                        | cairn_index::manifest::SkipReason::FetchBudget,
                    ),
                ..
            },
        ) if crate::articles::cached(cfg, spec, &opts.cache).is_some() => {
            reporter.note(&format!("STALE {e} (indexing the copy fetched before)"));
            record.stale = true;
            record.error = Some(e.to_string());
            crate::articles::cached(cfg, spec, &opts.cache)
        }
        Err(crate::articles::FetchError {
            skip: Some(reason),
            message,
            ..
        }) => {
            reporter.note(&format!("{}: skipped: {message}", cfg.name));
            skipped.push(Skipped {
                path: spec.file_name.clone(),
                size: 0,
                reason,
            });
            None
        }
        Err(e) if opts.keep_going => {
            record.error = Some(e.to_string());
            match crate::articles::cached(cfg, spec, &opts.cache) {
                Some(b) => {
                    reporter.note(&format!("STALE {e} (indexing the copy fetched before)"));
                    record.stale = true;
                    Some(b)
                }
                None => {
                    reporter.note(&format!("FAILED {e} (continuing with the others)"));
                    None
                }
            }
        }
        Err(e) => return Err(BuildError::Article(e)),
    };
    let mut docs = Vec::new();
    if let Some(bytes) = bytes {
        match clock.read(&spec.file_name, &bytes) {
            Ok(d) if DocId::new(&cfg.category, &cfg.name, &d.path).is_ok() => docs.push(d),
            Ok(_) => {}
            Err(reason) => {
                reporter.note(&format!(
                    "{}: {} skipped ({})",
                    cfg.name,
                    spec.file_name,
                    reason.as_str()
                ));
                skipped.push(Skipped {
                    path: spec.file_name.clone(),
                    size: bytes.len() as u64,
                    reason,
                });
            }
        }
    }
    record.docs = docs.len();
    Ok(RepoDocs {
        cfg: cfg.clone(),
        record,
        docs,
        skipped,
        history: RepoHistory::default(),
    })
}
