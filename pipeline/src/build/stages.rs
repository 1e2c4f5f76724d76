//! The stages of a build, in order: sync every repository, chunk its
//! documents, assemble the documents and their bytes, embed what the cache
//! lacks, and publish through `cairn_index::VersionBuilder`.

use super::embed::Embedded;
use super::*;
use crate::chunk::cites::Bibliography;
use crate::documents::PdfClock;

pub(super) struct RepoDocs {
    pub(super) cfg: RepoConfig,
    pub(super) record: RepoRecord,
    pub(super) docs: Vec<SourceDoc>,
    pub(super) skipped: Vec<Skipped>,
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
            Ok((s.default_branch, s.commit.to_string(), docs, skipped))
        });
        match result {
            Ok((branch, commit, mut docs, skipped)) => {
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
    })
}

/// Each document's chunks, in registry order (the order `assemble` lists them).
pub(super) fn chunk_repos(
    repos: &[RepoDocs],
    settings: &BuildSettings,
    embedder: &dyn Embedder,
    reporter: &dyn Reporter,
) -> Result<Vec<Vec<ChunkDraft>>, BuildError> {
    let texts: Vec<&SourceDoc> = repos.iter().flat_map(|r| r.docs.iter()).collect();
    // Each repository's references, and for each document its repository's.
    let bibliographies: Vec<Bibliography> = repos.iter().map(|r| bibliography(&r.docs)).collect();
    let owner: Vec<&Bibliography> = repos
        .iter()
        .zip(&bibliographies)
        .flat_map(|(r, b)| std::iter::repeat_n(b, r.docs.len()))
        .collect();
    let specials = embedder.count_tokens("")?;
    let (limits, subchunk_limits) = chunk_limits(settings, embedder.model().max_tokens, specials);
    reporter.stage("chunking files", Some(texts.len() as u64));
    let out: Vec<Vec<ChunkDraft>> = texts
        .par_iter()
        .zip(owner.par_iter())
        .map(|(d, bib)| {
            let count = |lines: &[&str]| {
                embedder
                    .count_tokens_batch(lines)
                    .map(|v| v.into_iter().map(|n| n.saturating_sub(specials)).collect())
                    // Counting never fails on valid UTF-8; fall back to a rough count if it does.
                    .unwrap_or_else(|_| lines.iter().map(|l| l.len() / 3 + 1).collect())
            };
            let mut chunks = chunk_document(
                d,
                &LineIndex::new(d.text.as_bytes()),
                &limits,
                &subchunk_limits,
                &count,
            );
            if d.language == cairn_index::Language::Latex && !bib.is_empty() {
                cite_references(&mut chunks, bib, &count);
            }
            reporter.advance(1);
            chunks
        })
        .collect();
    reporter.finish(&format!(
        "{} chunks",
        out.iter().map(Vec::len).sum::<usize>()
    ));
    Ok(out)
}

/// The references a repository's LaTeX may cite: its `.bib` entries and
/// the `\bibitem`s of its `.tex` files.
fn bibliography(docs: &[SourceDoc]) -> Bibliography {
    let mut b = Bibliography::default();
    for d in docs {
        match d.language {
            cairn_index::Language::Bibtex => b.add_bibtex(&d.text),
            cairn_index::Language::Latex => b.add_bibitems(&d.text),
            _ => {}
        }
    }
    b
}

/// Adds `cites: …` (the references a chunk cites) to its text and its
/// subchunks' texts: what is indexed and embedded, never the span. Their
/// token estimates grow by the line's tokens (`count`, as chunking counts).
fn cite_references(
    chunks: &mut [ChunkDraft],
    bib: &Bibliography,
    count: &dyn Fn(&[&str]) -> Vec<usize>,
) {
    let add = |text: &mut String, tokens: &mut usize| {
        if let Some(cites) = bib.resolve(text) {
            *tokens += count(&[cites.as_str()]).first().map_or(0, |t| t + 1);
            text.push('\n');
            text.push_str(&cites);
        }
    };
    for c in chunks {
        add(&mut c.text, &mut c.tokens);
        for s in &mut c.subchunks {
            add(&mut s.text, &mut s.tokens);
        }
    }
}

/// The limits of chunks and of subchunks under `settings`, for a model that
/// reads `max_tokens` tokens of which `specials` are its own.
pub fn chunk_limits(
    settings: &BuildSettings,
    max_tokens: usize,
    specials: usize,
) -> (ChunkLimits, ChunkLimits) {
    let max_tokens = max_tokens.saturating_sub(specials + HEADER_TOKENS).max(16);
    (
        ChunkLimits {
            max_lines: settings.chunk_max_lines,
            overlap: settings.chunk_overlap_lines,
            min_lines: settings.chunk_min_lines,
            max_tokens,
        },
        ChunkLimits {
            max_lines: settings.subchunk_max_lines,
            overlap: settings.subchunk_overlap_lines,
            min_lines: settings.subchunk_min_lines,
            max_tokens,
        },
    )
}

/// The doc registry and the content store, in registry order.
pub(super) fn assemble(repos: &[RepoDocs]) -> (Vec<DocRecord>, Vec<u8>) {
    let mut records = Vec::new();
    let mut content = Vec::new();
    for r in repos {
        for d in &r.docs {
            let Ok(doc_id) = DocId::new(&r.cfg.category, &r.cfg.name, &d.path) else {
                continue;
            };
            records.push(DocRecord {
                doc_id,
                category: r.cfg.category.clone(),
                repo: r.cfg.name.clone(),
                toolkit: r.cfg.toolkit.clone(),
                path: d.path.clone(),
                doctype: d.doctype,
                language: d.language,
                size: d.text.len() as u64,
                sha256: cairn_index::sha256_hex(d.text.as_bytes()),
                line_count: LineIndex::new(d.text.as_bytes()).line_count(),
                content_offset: content.len() as u64,
                groups: r.cfg.groups.clone(),
                pdf: d.pdf.clone(),
            });
            content.extend_from_slice(d.text.as_bytes());
        }
    }
    (records, content)
}

/// Everything of a build but the vectors: repositories, documents, chunks.
pub(super) struct Assembled {
    pub(super) repos: Vec<RepoDocs>,
    pub(super) docs: Vec<DocRecord>,
    pub(super) content: Vec<u8>,
    pub(super) drafts: Vec<Vec<ChunkDraft>>,
    pub(super) skipped: Vec<SkipRecord>,
    pub(super) model: ModelInfo,
}

impl Assembled {
    pub(super) fn new(
        repos: Vec<RepoDocs>,
        drafts: Vec<Vec<ChunkDraft>>,
        model: ModelInfo,
    ) -> Self {
        let (docs, content) = assemble(&repos);
        let skipped = repos
            .iter()
            .flat_map(|r| {
                r.skipped.iter().map(move |s| SkipRecord {
                    path: format!("{}/{}/{}", r.cfg.category, r.cfg.name, s.path),
                    size: s.size,
                    reason: s.reason,
                })
            })
            .collect();
        Self {
            repos,
            docs,
            content,
            drafts,
            skipped,
            model,
        }
    }

    pub(super) fn chunk_count(&self) -> usize {
        self.drafts.iter().map(Vec::len).sum()
    }

    pub(super) fn skipped_by_reason(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for s in &self.skipped {
            *out.entry(s.reason.as_str().to_owned()).or_insert(0) += 1;
        }
        out
    }

    pub(super) fn records(&self) -> Vec<RepoRecord> {
        self.repos.iter().map(|r| r.record.clone()).collect()
    }

    /// Whether the version gets an approximate index: as many vector rows
    /// (chunks and subchunks) as `ann_min_rows`.
    pub(super) fn writes_ann(&self, plan: &Plan) -> bool {
        let rows: usize = self
            .drafts
            .iter()
            .flatten()
            .map(|c| c.embedded_rows())
            .sum();
        rows >= plan.settings.ann_min_rows
    }

    /// Hash over everything that decides the output: same inputs, same version.
    pub(super) fn version(&self, plan: &Plan) -> IndexVersion {
        #[derive(Serialize)]
        struct Inputs<'a> {
            format: u32,
            chunker: u32,
            repos: Vec<&'a RepoRecord>,
            docs: &'a [DocRecord],
            settings: &'a BuildSettings,
            weights: &'a PathWeights,
            model: &'a ModelInfo,
            /// The approximate index's kind ([`cairn_index::ann::KIND`]), left
            /// out without one, so versions without keep their id; a version
            /// with one never shares an id with one without or of another kind.
            #[serde(skip_serializing_if = "Option::is_none")]
            ann: Option<&'static str>,
        }
        let inputs = Inputs {
            format: FORMAT_VERSION,
            chunker: CHUNKER_VERSION,
            repos: self.repos.iter().map(|r| &r.record).collect(),
            docs: &self.docs,
            settings: &plan.settings,
            weights: &plan.weights,
            model: &self.model,
            ann: self.writes_ann(plan).then_some(cairn_index::ann::KIND),
        };
        let bytes = serde_json::to_vec(&inputs).unwrap_or_default();
        IndexVersion::from_digest(&cairn_index::sha256_hex(&bytes))
    }

    /// Tokens the model reads for a text of `text_tokens`: with its header, within the limit.
    pub(super) fn model_tokens(&self, text_tokens: usize) -> u32 {
        (text_tokens + HEADER_TOKENS).min(self.model.max_tokens) as u32
    }

    /// The chunks of document `d` as the index stores them.
    pub(super) fn new_chunks(&self, d: usize) -> Vec<NewChunk<'_>> {
        self.drafts[d]
            .iter()
            .map(|c| NewChunk {
                span: c.span,
                title: &c.title,
                tokens: self.model_tokens(c.tokens),
                text: &c.text,
                symbols: &c.symbols,
                subchunks: c.subchunks.iter().map(|s| s.span).collect(),
            })
            .collect()
    }
}

/// What the model sees: a short header naming the place, then the text.
pub(crate) fn embed_text(doc: &DocRecord, title: &str, text: &str) -> String {
    if title.is_empty() {
        format!("{} {}\n{}", doc.repo, doc.path, text)
    } else {
        format!("{} {}: {}\n{}", doc.repo, doc.path, title, text)
    }
}

pub(super) fn model_info(e: &dyn Embedder) -> ModelInfo {
    let m = e.model();
    ModelInfo {
        id: m.id.clone(),
        revision: m.revision.clone(),
        dim: m.dim,
        max_tokens: m.max_tokens,
        weights_sha256: m.weights_sha256.clone(),
    }
}

/// The summary of a build whose version is already published (nothing is written).
pub(super) fn unchanged(
    root: &IndexRoot,
    version: &IndexVersion,
    set: &Assembled,
    keep: usize,
    started: Instant,
    reporter: &dyn Reporter,
) -> Result<Option<BuildSummary>, BuildError> {
    let Ok(existing) = root.version_dir(version).read_manifest() else {
        return Ok(None);
    };
    root.set_current(version)?;
    root.prune(keep)?;
    reporter.note(&format!(
        "index {version} is unchanged; CURRENT points at it"
    ));
    Ok(Some(BuildSummary {
        index_version: version.clone(),
        unchanged: true,
        docs: existing.counts.docs,
        chunks: existing.counts.chunks,
        skipped_by_reason: set.skipped_by_reason(),
        repos: set.records(),
        embedded: 0,
        cached: 0,
        embedded_tokens: 0,
        embed_seconds: 0.0,
        chunks_per_second: 0.0,
        tokens_per_second: 0.0,
        wall_seconds: started.elapsed().as_secs_f64(),
        peak_rss_bytes: super::peak_rss_bytes(),
        index_bytes: dir_size(root.version_dir(version).path()),
    }))
}

/// Writes every file of the version, seals it, points CURRENT at it, prunes.
#[allow(clippy::too_many_arguments)]
pub(super) fn publish(
    root: &IndexRoot,
    keep: usize,
    plan: &Plan,
    set: &Assembled,
    version: &IndexVersion,
    embedded: &Embedded,
    started: Instant,
    reporter: &dyn Reporter,
) -> Result<BuildSummary, BuildError> {
    reporter.stage("writing index", None);
    let definitions = crate::chunk::definitions(&set.docs, &set.content);
    let mut builder =
        VersionBuilder::create(root, &set.docs, &set.content, &definitions, &plan.weights)?;
    let mut rows = embedded.vectors.iter();
    let mut tokens = 0u64;
    for d in 0..set.docs.len() {
        let chunks = set.new_chunks(d);
        tokens += chunks.iter().map(|c| u64::from(c.tokens)).sum::<u64>();
        builder.add_doc(d as u32, &chunks, &mut rows)?;
    }

    let mut docs_by_doctype = BTreeMap::new();
    for d in &set.docs {
        *docs_by_doctype
            .entry(d.doctype.as_str().to_owned())
            .or_insert(0) += 1;
    }
    let skipped_by_reason = set.skipped_by_reason();
    let manifest = Manifest {
        format_version: FORMAT_VERSION,
        index_version: version.clone(),
        built_at: now_rfc3339(),
        builder_version: format!("cairn {}", env!("CARGO_PKG_VERSION")),
        model: set.model.clone(),
        repos: set.records(),
        counts: Counts {
            docs: set.docs.len(),
            chunks: builder.chunk_count(),
            subchunks: builder.subchunk_count(),
            skipped: set.skipped.len(),
            docs_by_doctype,
            skipped_by_reason: skipped_by_reason.clone(),
            tokens,
        },
        skipped: set.skipped.clone(),
        files: BTreeMap::new(),
    };
    let sealed = builder.with_ann(set.writes_ann(plan)).seal(manifest)?;
    root.set_current(version)?;
    root.prune(keep)?;
    reporter.finish(&format!("published {version}"));
    let s = embedded.stats;
    let per = |n: f64| {
        if s.embed_seconds > 0.0 {
            n / s.embed_seconds
        } else {
            0.0
        }
    };
    Ok(BuildSummary {
        index_version: version.clone(),
        unchanged: false,
        docs: set.docs.len(),
        chunks: set.chunk_count(),
        skipped_by_reason,
        repos: set.records(),
        embedded: s.embedded,
        cached: s.cached,
        embedded_tokens: s.embedded_tokens,
        embed_seconds: s.embed_seconds,
        chunks_per_second: per(s.embedded as f64),
        tokens_per_second: per(s.embedded_tokens as f64),
        wall_seconds: started.elapsed().as_secs_f64(),
        peak_rss_bytes: super::peak_rss_bytes(),
        index_bytes: dir_size(sealed.path()),
    })
}

pub(super) fn dir_size(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        dir_size(&p)
                    } else {
                        e.metadata().map(|m| m.len()).unwrap_or(0)
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

pub(super) fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
