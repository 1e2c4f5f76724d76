//! `cairn build`: config → sync → documents → chunks → embeddings → a
//! published version.

use crate::chunk::{ChunkDraft, ChunkLimits, chunk_document};
use crate::config::{
    BuildSettings, ConfigError, Registry, RepoConfig, Weights, default_weights, load_weights,
};
use crate::documents::{Skipped, SourceDoc, read_commit};
use crate::embed_cache::{EmbedCache, TextKey, text_key};
use crate::report::Reporter;
use crate::sync::{SyncError, sync};
use cairn_embed::{BertEmbedder, DevicePref, EmbedError, Embedder, ModelSpec};
use cairn_index::layout::files;
use cairn_index::manifest::{Counts, ModelInfo, RepoRecord, SkipRecord};
use cairn_index::schema::ChunkSchema;
use cairn_index::{
    ChunkRecord, DocId, DocRecord, FORMAT_VERSION, IndexRoot, IndexVersion, LayoutError, LineIndex,
    Manifest, VersionWriter,
};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Bumped whenever chunking or the embedded text changes, so the version changes with it.
const CHUNKER_VERSION: u32 = 3;
/// Tokens kept free in each chunk for the header (repo, path, title).
const HEADER_TOKENS: usize = 24;
/// Texts sent to the model per call (progress granularity; the model batches within).
const EMBED_CALL: usize = 256;

/// What to build, from where, into where.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// repositories.yml.
    pub config: PathBuf,
    /// weights.yaml (default: beside the config, when present).
    pub weights: Option<PathBuf>,
    /// build settings YAML (default: build.yaml beside the config, when present).
    pub settings: Option<PathBuf>,
    /// Index root to publish into.
    pub out: PathBuf,
    /// Git and embedding cache.
    pub cache: PathBuf,
    /// A model folder instead of the hub cache.
    pub model_dir: Option<PathBuf>,
    /// Where the model runs.
    pub device: DevicePref,
    /// Versions kept after publishing.
    pub keep: usize,
    /// Build the other repositories when one fails.
    pub keep_going: bool,
}

/// Why a build failed. Nothing was published.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A configuration file is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The model could not be loaded or run.
    #[error(transparent)]
    Model(#[from] EmbedError),
    /// A repository could not be synced.
    #[error(transparent)]
    Sync(#[from] SyncError),
    /// A repository's tree could not be read.
    #[error("{repo}: read tree: {source}")]
    Tree {
        /// Repository name.
        repo: String,
        /// git's message.
        source: git2::Error,
    },
    /// The output could not be written.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// tantivy failed.
    #[error("tantivy: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// Another build holds the output folder.
    #[error("{0}: another build is writing this index (build.lock is held)")]
    Locked(PathBuf),
    /// A file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Every repository failed.
    #[error("every repository failed; nothing to publish")]
    NothingBuilt,
}

impl BuildError {
    /// The process exit code: 2 for bad configuration, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            BuildError::Config(_) => 2,
            _ => 1,
        }
    }
}

/// Figures of one build.
#[derive(Clone, Debug, Serialize)]
pub struct BuildSummary {
    /// The published version.
    pub index_version: IndexVersion,
    /// True when this exact version was already published (nothing written).
    pub unchanged: bool,
    /// Documents indexed.
    pub docs: usize,
    /// Chunks indexed.
    pub chunks: usize,
    /// Files skipped, by reason.
    pub skipped_by_reason: BTreeMap<String, usize>,
    /// Repositories and what became of them.
    pub repos: Vec<RepoRecord>,
    /// Chunks the model embedded in this build.
    pub embedded: usize,
    /// Chunks whose vectors came from the embedding cache.
    pub cached: usize,
    /// Tokens the model embedded in this build.
    pub embedded_tokens: u64,
    /// Seconds spent in the model.
    pub embed_seconds: f64,
    /// Embedding throughput, chunks per second.
    pub chunks_per_second: f64,
    /// Embedding throughput, tokens per second.
    pub tokens_per_second: f64,
    /// Whole build, seconds.
    pub wall_seconds: f64,
    /// Bytes of the published version folder.
    pub index_bytes: u64,
}

struct RepoDocs {
    cfg: RepoConfig,
    record: RepoRecord,
    docs: Vec<SourceDoc>,
    skipped: Vec<Skipped>,
}

/// Runs a whole build and publishes the result.
pub fn build(opts: &BuildOptions, reporter: &dyn Reporter) -> Result<BuildSummary, BuildError> {
    let started = Instant::now();
    let registry = Registry::load(&opts.config)?;
    let beside = |name: &str| {
        opts.config
            .parent()
            .map(|d| d.join(name))
            .filter(|p| p.is_file())
    };
    let weights = match opts.weights.clone().or_else(|| beside("weights.yaml")) {
        Some(p) => load_weights(&p)?,
        None => default_weights(),
    };
    let settings = match opts.settings.clone().or_else(|| beside("build.yaml")) {
        Some(p) => BuildSettings::load(&p)?,
        None => BuildSettings::default(),
    };
    let spec = match &opts.model_dir {
        Some(d) => ModelSpec::Dir(d.clone()),
        None => ModelSpec::Hub {
            id: settings.model.clone(),
            revision: settings.model_revision.clone(),
        },
    };
    let embedder = BertEmbedder::load(&spec.locate()?, opts.device)?;

    let root = IndexRoot::new(&opts.out);
    std::fs::create_dir_all(&opts.out).map_err(|source| BuildError::Io {
        path: opts.out.clone(),
        source,
    })?;
    let _lock = lock(&opts.out)?;
    root.clean_tmp()?;

    let repos = sync_all(&registry, opts, &settings, reporter)?;
    let (docs, content, texts) = assemble(&repos);
    let drafts = chunk_all(&docs, &texts, &settings, &embedder, reporter)?;
    let version = index_version(&repos, &docs, &settings, &weights, &embedder);
    let model = model_info(&embedder);

    let skipped: Vec<SkipRecord> = repos
        .iter()
        .flat_map(|r| {
            r.skipped.iter().map(move |s| SkipRecord {
                path: format!("{}/{}/{}", r.cfg.category, r.cfg.name, s.path),
                size: s.size,
                reason: s.reason,
            })
        })
        .collect();
    let mut skipped_by_reason = BTreeMap::new();
    for s in &skipped {
        *skipped_by_reason
            .entry(s.reason.as_str().to_owned())
            .or_insert(0) += 1;
    }
    let repo_records: Vec<RepoRecord> = repos.iter().map(|r| r.record.clone()).collect();
    let chunk_count: usize = drafts.iter().map(Vec::len).sum();

    if let Ok(existing) = root.version_dir(&version).read_manifest() {
        // Same inputs, same version: publishing again would change nothing.
        root.set_current(&version)?;
        root.prune(opts.keep)?;
        reporter.note(&format!(
            "index {version} is unchanged; CURRENT points at it"
        ));
        return Ok(BuildSummary {
            index_version: version.clone(),
            unchanged: true,
            docs: existing.counts.docs,
            chunks: existing.counts.chunks,
            skipped_by_reason,
            repos: repo_records,
            embedded: 0,
            cached: 0,
            embedded_tokens: 0,
            embed_seconds: 0.0,
            chunks_per_second: 0.0,
            tokens_per_second: 0.0,
            wall_seconds: started.elapsed().as_secs_f64(),
            index_bytes: dir_size(root.version_dir(&version).path()),
        });
    }

    // Embed, reusing cached vectors.
    let embed_texts: Vec<(usize, String)> = drafts
        .iter()
        .enumerate()
        .flat_map(|(d, chunks)| chunks.iter().map(move |c| (d, c)))
        .map(|(d, c)| (d, embed_text(&docs[d], c)))
        .collect();
    let keys: Vec<TextKey> = embed_texts.iter().map(|(_, t)| text_key(t)).collect();
    let cache = EmbedCache::open(
        &opts.cache,
        &embedder.model().weights_sha256,
        embedder.model().dim,
    );
    let mut todo: Vec<usize> = (0..keys.len())
        .filter(|&i| cache.get(&keys[i]).is_none())
        .collect();
    // Embed each distinct text once.
    let mut seen = std::collections::HashSet::new();
    todo.retain(|&i| seen.insert(keys[i]));
    let chunk_tokens: Vec<u32> = drafts
        .iter()
        .flatten()
        .map(|c| (c.tokens + HEADER_TOKENS).min(embedder.model().max_tokens) as u32)
        .collect();
    reporter.stage("embedding chunks", Some(todo.len() as u64));
    let embed_started = Instant::now();
    let mut fresh: std::collections::HashMap<TextKey, Vec<f32>> = std::collections::HashMap::new();
    for batch in todo.chunks(EMBED_CALL) {
        let texts: Vec<&str> = batch.iter().map(|&i| embed_texts[i].1.as_str()).collect();
        let vectors = embedder.embed(&texts)?;
        for (&i, v) in batch.iter().zip(vectors) {
            fresh.insert(keys[i], v);
        }
        reporter.advance(batch.len() as u64);
    }
    let embed_seconds = embed_started.elapsed().as_secs_f64();
    let embedded_tokens: u64 = todo.iter().map(|&i| u64::from(chunk_tokens[i])).sum();
    reporter.finish(&format!(
        "embedded {} chunks ({} from cache) in {embed_seconds:.1}s",
        todo.len(),
        keys.len() - todo.len()
    ));
    let vectors: Vec<&[f32]> = keys
        .iter()
        .map(|k| {
            fresh
                .get(k)
                .or_else(|| cache.get(k))
                .map(Vec::as_slice)
                .unwrap_or(&[])
        })
        .collect();

    reporter.stage("writing index", None);
    let mut chunk_records = Vec::with_capacity(chunk_count);
    for (d, chunks) in drafts.iter().enumerate() {
        for c in chunks {
            chunk_records.push(ChunkRecord {
                doc: d as u32,
                span: c.span,
                title: c.title.clone(),
                tokens: chunk_tokens[chunk_records.len()],
            });
        }
    }
    let writer = VersionWriter::create(&root)?;
    writer.write_json(files::DOCS, &docs)?;
    writer.write_bytes(files::CONTENT, &content)?;
    writer.write_json(files::CHUNKS, &chunk_records)?;
    writer.write_json(files::WEIGHTS, &weights)?;
    let mut vec_bytes = Vec::with_capacity(vectors.len() * model.dim * 4);
    for v in &vectors {
        for x in *v {
            vec_bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    writer.write_bytes(files::VECTORS, &vec_bytes)?;
    write_tantivy(&writer.dir().file(files::TANTIVY), &docs, &drafts)?;

    let mut docs_by_doctype = BTreeMap::new();
    for d in &docs {
        *docs_by_doctype
            .entry(d.doctype.as_str().to_owned())
            .or_insert(0) += 1;
    }
    let manifest = Manifest {
        format_version: FORMAT_VERSION,
        index_version: version.clone(),
        built_at: now_rfc3339(),
        builder_version: format!("cairn {}", env!("CARGO_PKG_VERSION")),
        model,
        repos: repo_records.clone(),
        counts: Counts {
            docs: docs.len(),
            chunks: chunk_count,
            skipped: skipped.len(),
            docs_by_doctype,
            skipped_by_reason: skipped_by_reason.clone(),
            tokens: chunk_tokens.iter().map(|&t| u64::from(t)).sum(),
        },
        skipped,
        files: BTreeMap::new(),
    };
    let sealed = writer.seal(manifest)?;
    root.set_current(&version)?;
    root.prune(opts.keep)?;
    // The cache only matters for the next build; failing to save it loses nothing published.
    if let Err(e) = cache.save(keys.iter().zip(vectors.iter().copied())) {
        reporter.note(&format!("could not save the embedding cache: {e}"));
    }
    reporter.finish(&format!("published {version}"));
    let per = |n: f64| {
        if embed_seconds > 0.0 {
            n / embed_seconds
        } else {
            0.0
        }
    };
    Ok(BuildSummary {
        index_version: version,
        unchanged: false,
        docs: docs.len(),
        chunks: chunk_count,
        skipped_by_reason,
        repos: repo_records,
        embedded: todo.len(),
        cached: keys.len() - todo.len(),
        embedded_tokens,
        embed_seconds,
        chunks_per_second: per(todo.len() as f64),
        tokens_per_second: per(embedded_tokens as f64),
        wall_seconds: started.elapsed().as_secs_f64(),
        index_bytes: dir_size(sealed.path()),
    })
}

/// Holds `<out>/build.lock` for the build's lifetime; the OS drops it if the process dies.
fn lock(out: &Path) -> Result<std::fs::File, BuildError> {
    let path = out.join("build.lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| BuildError::Io {
            path: path.clone(),
            source,
        })?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => Err(BuildError::Locked(out.to_owned())),
        Err(std::fs::TryLockError::Error(source)) => Err(BuildError::Io { path, source }),
    }
}

fn sync_all(
    registry: &Registry,
    opts: &BuildOptions,
    settings: &BuildSettings,
    reporter: &dyn Reporter,
) -> Result<Vec<RepoDocs>, BuildError> {
    reporter.stage("syncing repositories", Some(registry.repos.len() as u64));
    let mut out = Vec::new();
    for cfg in &registry.repos {
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
        };
        let result = sync(cfg, &opts.cache)
            .map_err(BuildError::from)
            .and_then(|s| {
                let (docs, skipped) = read_commit(&s.repo, s.commit, cfg, settings.max_file_bytes)
                    .map_err(|source| BuildError::Tree {
                        repo: cfg.name.clone(),
                        source,
                    })?;
                Ok((s.default_branch, s.commit.to_string(), docs, skipped))
            });
        match result {
            Ok((branch, commit, docs, skipped)) => {
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
                reporter.note(&format!("FAILED {e} (continuing: --keep-going)"));
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
    if out.iter().all(|r| r.record.error.is_some()) {
        return Err(BuildError::NothingBuilt);
    }
    Ok(out)
}

/// The doc registry, the content store and each doc's text, in registry order.
fn assemble(repos: &[RepoDocs]) -> (Vec<DocRecord>, Vec<u8>, Vec<&SourceDoc>) {
    let mut records = Vec::new();
    let mut content = Vec::new();
    let mut texts = Vec::new();
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
                language: d.language.to_owned(),
                size: d.text.len() as u64,
                sha256: cairn_index::sha256_hex(d.text.as_bytes()),
                line_count: LineIndex::new(d.text.as_bytes()).line_count(),
                content_offset: content.len() as u64,
                groups: r.cfg.groups.clone(),
            });
            content.extend_from_slice(d.text.as_bytes());
            texts.push(d);
        }
    }
    (records, content, texts)
}

fn chunk_all(
    docs: &[DocRecord],
    texts: &[&SourceDoc],
    settings: &BuildSettings,
    embedder: &dyn Embedder,
    reporter: &dyn Reporter,
) -> Result<Vec<Vec<ChunkDraft>>, BuildError> {
    let specials = embedder.count_tokens("")?;
    let limits = ChunkLimits {
        max_lines: settings.chunk_max_lines,
        overlap: settings.chunk_overlap_lines,
        min_lines: settings.chunk_min_lines,
        max_tokens: embedder
            .model()
            .max_tokens
            .saturating_sub(specials + HEADER_TOKENS)
            .max(16),
    };
    reporter.stage("chunking files", Some(docs.len() as u64));
    let out: Vec<Vec<ChunkDraft>> = texts
        .par_iter()
        .map(|d| {
            let count = |lines: &[&str]| {
                embedder
                    .count_tokens_batch(lines)
                    .map(|v| v.into_iter().map(|n| n.saturating_sub(specials)).collect())
                    // Counting never fails on valid UTF-8; fall back to a rough count if it does.
                    .unwrap_or_else(|_| lines.iter().map(|l| l.len() / 3 + 1).collect())
            };
            let chunks = chunk_document(d, &LineIndex::new(d.text.as_bytes()), &limits, &count);
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

/// What the model sees: a short header naming the place, then the chunk.
fn embed_text(doc: &DocRecord, c: &ChunkDraft) -> String {
    if c.title.is_empty() {
        format!("{} {}\n{}", doc.repo, doc.path, c.text)
    } else {
        format!("{} {}: {}\n{}", doc.repo, doc.path, c.title, c.text)
    }
}

fn model_info(e: &dyn Embedder) -> ModelInfo {
    let m = e.model();
    ModelInfo {
        id: m.id.clone(),
        revision: m.revision.clone(),
        dim: m.dim,
        max_tokens: m.max_tokens,
        weights_sha256: m.weights_sha256.clone(),
    }
}

/// Hash over everything that decides the output: same inputs, same version.
fn index_version(
    repos: &[RepoDocs],
    docs: &[DocRecord],
    settings: &BuildSettings,
    weights: &Weights,
    embedder: &dyn Embedder,
) -> IndexVersion {
    #[derive(Serialize)]
    struct Inputs<'a> {
        format: u32,
        chunker: u32,
        repos: Vec<&'a RepoRecord>,
        docs: &'a [DocRecord],
        settings: &'a BuildSettings,
        weights: &'a Weights,
        model: ModelInfo,
    }
    let inputs = Inputs {
        format: FORMAT_VERSION,
        chunker: CHUNKER_VERSION,
        repos: repos.iter().map(|r| &r.record).collect(),
        docs,
        settings,
        weights,
        model: model_info(embedder),
    };
    let bytes = serde_json::to_vec(&inputs).unwrap_or_default();
    IndexVersion::from_digest(&cairn_index::sha256_hex(&bytes))
}

fn write_tantivy(
    dir: &Path,
    docs: &[DocRecord],
    drafts: &[Vec<ChunkDraft>],
) -> Result<(), BuildError> {
    use tantivy::{Index, TantivyDocument};
    std::fs::create_dir_all(dir).map_err(|source| BuildError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let s = ChunkSchema::new();
    let index = Index::create_in_dir(dir, s.schema.clone())?;
    ChunkSchema::register_analyzers(&index);
    let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, 200_000_000)?;
    let mut ordinal = 0u64;
    for (d, chunks) in drafts.iter().enumerate() {
        let doc = &docs[d];
        for c in chunks {
            let mut t = TantivyDocument::new();
            t.add_u64(s.chunk, ordinal);
            t.add_text(s.repo, &doc.repo);
            t.add_text(s.category, &doc.category);
            t.add_text(s.toolkit, &doc.toolkit);
            t.add_text(s.doctype, doc.doctype.as_str());
            t.add_text(s.path_exact, &doc.path);
            t.add_text(s.path, &doc.path);
            t.add_text(s.title, &c.title);
            t.add_text(s.symbols, c.symbols.join(" "));
            t.add_text(s.body, &c.text);
            writer.add_document(t)?;
            ordinal += 1;
        }
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    Ok(())
}

fn dir_size(path: &Path) -> u64 {
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

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
