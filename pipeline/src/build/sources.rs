//! The first stage: every repository synced (fetched, its commit resolved)
//! and its files read, and every article's PDF fetched, into the documents
//! the next stage chunks.

use super::error::BuildError;
use super::plan::BuildOptions;
use crate::config::{ArticleSpec, BuildSettings, RepoConfig};
use crate::documents::{Skipped, SourceDoc, read_commit};
use crate::report::Reporter;
use crate::sync::{Retry, SyncError, Synced};
use cairn_index::DocId;
use cairn_index::history::RepoHistory;
use cairn_index::manifest::RepoRecord;
use std::time::{Duration, Instant};

use crate::documents::PdfClock;

pub(super) struct RepoDocs {
    pub(super) cfg: RepoConfig,
    pub(super) record: RepoRecord,
    pub(super) docs: Vec<SourceDoc>,
    pub(super) skipped: Vec<Skipped>,
    /// Its documents' line history (empty for articles and failed repositories).
    pub(super) history: RepoHistory,
}

/// The time all articles share, spent as each is fetched and read.
struct ArticleBudget {
    /// All articles share one repository's PDF time (`pdf_repo_seconds`):
    /// a bibliography of many slow PDFs holds the build no longer than a repository.
    clock: PdfClock,
    /// And one download time (`articles_fetch_seconds`): what is left of it
    /// is all the next article may take.
    fetch_left: Duration,
}

/// What one article's steps share: its entry, the build's options and where notes go.
struct ArticleJob<'a> {
    cfg: &'a RepoConfig,
    spec: &'a ArticleSpec,
    opts: &'a BuildOptions,
    reporter: &'a dyn Reporter,
}

/// A synced repository's commit as read: its documents, what was skipped
/// and their line history.
struct ReadRepo {
    default_branch: String,
    commit: String,
    docs: Vec<SourceDoc>,
    skipped: Vec<Skipped>,
    history: RepoHistory,
}

pub(super) fn sync_all(
    configs: &[&RepoConfig],
    opts: &BuildOptions,
    settings: &BuildSettings,
    reporter: &dyn Reporter,
) -> Result<Vec<RepoDocs>, BuildError> {
    reporter.stage("syncing repositories", Some(configs.len() as u64));
    let mut out = Vec::new();
    let mut articles = ArticleBudget {
        clock: PdfClock::new(settings.read_limits(opts.pdf_helper.as_deref()).pdf),
        fetch_left: settings.fetch_budget(),
    };
    for &cfg in configs {
        let record = new_record(cfg);
        let docs = match &cfg.article {
            Some(spec) => {
                let job = ArticleJob {
                    cfg,
                    spec,
                    opts,
                    reporter,
                };
                article_docs(&job, record, &mut articles)?
            }
            None => repo_docs(cfg, record, opts, settings, reporter)?,
        };
        out.push(docs);
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

/// The manifest record of `cfg` before anything is fetched: no commit, no documents.
fn new_record(cfg: &RepoConfig) -> RepoRecord {
    RepoRecord {
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
    }
}

/// A repository's documents: synced, read and its history recorded; with
/// `--keep-going`, a failure leaves a record of it and no documents.
fn repo_docs(
    cfg: &RepoConfig,
    mut record: RepoRecord,
    opts: &BuildOptions,
    settings: &BuildSettings,
    reporter: &dyn Reporter,
) -> Result<RepoDocs, BuildError> {
    let result = sync_or_cached(cfg, opts, &mut record, reporter)
        .map_err(BuildError::from)
        .and_then(|s| read_synced(s, cfg, opts, settings));
    match result {
        Ok(read) => Ok(indexed(cfg, record, read, reporter)),
        Err(e) if opts.keep_going => {
            reporter.note(&format!(
                "FAILED {e} (continuing with the other repositories)"
            ));
            record.error = Some(e.to_string());
            Ok(RepoDocs {
                cfg: cfg.clone(),
                record,
                docs: Vec::new(),
                skipped: Vec::new(),
                history: RepoHistory::default(),
            })
        }
        Err(e) => Err(e),
    }
}

/// `cfg` fetched into the cache; with `--keep-going`, a failed fetch falls
/// back to the commit the cache already holds (the record marked stale).
fn sync_or_cached(
    cfg: &RepoConfig,
    opts: &BuildOptions,
    record: &mut RepoRecord,
    reporter: &dyn Reporter,
) -> Result<Synced, SyncError> {
    let retrying = |e: &git2::Error, wait: Duration| {
        reporter.note(&format!(
            "{}: {e}; retrying in {} s",
            cfg.name,
            wait.as_secs()
        ));
    };
    match crate::sync::sync(cfg, &opts.cache, Retry::default(), retrying) {
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
    }
}

/// The synced commit's documents read, and the line history of those git can blame.
fn read_synced(
    s: Synced,
    cfg: &RepoConfig,
    opts: &BuildOptions,
    settings: &BuildSettings,
) -> Result<ReadRepo, BuildError> {
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
    Ok(ReadRepo {
        default_branch: s.default_branch,
        commit: s.commit.to_string(),
        docs,
        skipped,
        history,
    })
}

/// A read repository's documents that can be indexed, its record filled in.
fn indexed(
    cfg: &RepoConfig,
    mut record: RepoRecord,
    read: ReadRepo,
    reporter: &dyn Reporter,
) -> RepoDocs {
    let ReadRepo {
        default_branch: branch,
        commit,
        mut docs,
        skipped,
        history,
    } = read;
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
    RepoDocs {
        cfg: cfg.clone(),
        record,
        docs,
        skipped,
        history,
    }
}

/// An article's one document: its PDF fetched within what is left of the
/// articles' download time (or, when that fails and `--keep-going` is set,
/// or the time is spent, the copy a build fetched before), its text
/// extracted within what is left of their PDF time.
fn article_docs(
    job: &ArticleJob<'_>,
    mut record: RepoRecord,
    budget: &mut ArticleBudget,
) -> Result<RepoDocs, BuildError> {
    let max_bytes = budget.clock.max_bytes();
    record.url = job.recorded_url();
    let fetched = job.fetch(max_bytes, &mut budget.fetch_left);
    let mut skipped = Vec::new();
    let bytes = job.fetched_or_before(fetched, &mut record, &mut skipped)?;
    let docs = match bytes {
        Some(bytes) => job.read(&bytes, &mut budget.clock, &mut skipped),
        None => Vec::new(),
    };
    record.docs = docs.len();
    Ok(RepoDocs {
        cfg: job.cfg.clone(),
        record,
        docs,
        skipped,
        history: RepoHistory::default(),
    })
}

impl ArticleJob<'_> {
    /// The address the manifest records for the article.
    fn recorded_url(&self) -> String {
        if matches!(self.spec.source, crate::config::ArticleSource::File(_)) {
            // A local path is where this machine keeps it, not an address to cite.
            return self.cfg.url.clone();
        }
        crate::articles::public_url(self.spec)
    }

    /// The PDF downloaded within `fetch_left`, which loses the time it took.
    fn fetch(
        &self,
        max_bytes: u64,
        fetch_left: &mut Duration,
    ) -> Result<Vec<u8>, crate::articles::FetchError> {
        let retrying = |message: &str, wait: Duration| {
            self.reporter.note(&format!(
                "{}: {message}; retrying in {} s",
                self.cfg.name,
                wait.as_secs()
            ));
        };
        let started = Instant::now();
        let fetched = crate::articles::fetch(
            self.cfg,
            self.spec,
            &self.opts.cache,
            &self.opts.arxiv_url,
            max_bytes,
            *fetch_left,
            Retry::default(),
            retrying,
        );
        *fetch_left = fetch_left.saturating_sub(started.elapsed());
        fetched
    }

    /// The PDF's bytes to read: those fetched, else the copy fetched before
    /// (the record marked stale), else none (skipped, or failed with `--keep-going`).
    fn fetched_or_before(
        &self,
        fetched: Result<Vec<u8>, crate::articles::FetchError>,
        record: &mut RepoRecord,
        skipped: &mut Vec<Skipped>,
    ) -> Result<Option<Vec<u8>>, BuildError> {
        let (cfg, spec, opts, reporter) = (self.cfg, self.spec, self.opts, self.reporter);
        Ok(match fetched {
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
        })
    }

    /// The PDF's text as the article's document, when it reads within the
    /// PDF time and has a valid id; a PDF that does not read is skipped.
    fn read(
        &self,
        bytes: &[u8],
        clock: &mut PdfClock,
        skipped: &mut Vec<Skipped>,
    ) -> Vec<SourceDoc> {
        let (cfg, spec) = (self.cfg, self.spec);
        let mut docs = Vec::new();
        match clock.read(&spec.file_name, bytes) {
            Ok(d) if DocId::new(&cfg.category, &cfg.name, &d.path).is_ok() => docs.push(d),
            Ok(_) => {}
            Err(reason) => {
                self.reporter.note(&format!(
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
        docs
    }
}
