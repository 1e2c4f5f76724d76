//! `cairn build`: config → sync → documents → chunks → embeddings → a
//! published version.

use crate::chunk::{ChunkDraft, ChunkLimits, chunk_document};
use crate::config::{
    BuildSettings, ConfigError, Registry, RepoConfig, Weights, default_weights, load_weights,
};
use crate::documents::{Skipped, SourceDoc, read_commit};
use crate::embed_cache::{EmbedCache, TextKey, text_key};
use crate::part::{self, PartDoc, PartError, PartManifest, PartRepo, PartSkip, PartStats, Shard};
use crate::report::Reporter;
use crate::sync::{SyncError, sync};
use cairn_embed::{BertEmbedder, DevicePref, EmbedError, Embedder, ModelSpec};
use cairn_index::manifest::{Counts, ModelInfo, RepoRecord, SkipRecord};
use cairn_index::rows::{Row, order};
use cairn_index::{
    DocId, DocRecord, FORMAT_VERSION, IndexRoot, IndexVersion, LayoutError, LineIndex, Manifest,
    NewChunk, Rows, VersionBuilder, WriteError,
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
    /// The version's files could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
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
    /// A part of a sharded build is unreadable or does not fit.
    #[error(transparent)]
    Part(#[from] PartError),
}

impl BuildError {
    /// The process exit code: 2 for bad configuration, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
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

/// Config, weights and settings of a build, read and validated.
struct Plan {
    registry: Registry,
    weights: Weights,
    settings: BuildSettings,
    config_sha256: String,
}

fn plan(opts: &BuildOptions) -> Result<Plan, BuildError> {
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
    let config_sha256 = std::fs::read(&opts.config)
        .map(|b| cairn_index::sha256_hex(&b))
        .map_err(|source| BuildError::Io {
            path: opts.config.clone(),
            source,
        })?;
    Ok(Plan {
        registry,
        weights,
        settings,
        config_sha256,
    })
}

fn load_model(opts: &BuildOptions, settings: &BuildSettings) -> Result<BertEmbedder, BuildError> {
    let spec = match &opts.model_dir {
        Some(d) => ModelSpec::Dir(d.clone()),
        None => ModelSpec::Hub {
            id: settings.model.clone(),
            revision: settings.model_revision.clone(),
        },
    };
    Ok(BertEmbedder::load(&spec.locate()?, opts.device)?)
}

/// The output root, locked and cleared of a killed build's leftovers.
fn open_out(out: &Path) -> Result<(IndexRoot, std::fs::File), BuildError> {
    std::fs::create_dir_all(out).map_err(|source| BuildError::Io {
        path: out.to_owned(),
        source,
    })?;
    let lock = lock(out)?;
    let root = IndexRoot::new(out);
    root.clean_tmp()?;
    Ok((root, lock))
}

/// Runs a whole build and publishes the result.
pub fn build(opts: &BuildOptions, reporter: &dyn Reporter) -> Result<BuildSummary, BuildError> {
    let started = Instant::now();
    let plan = plan(opts)?;
    let embedder = load_model(opts, &plan.settings)?;
    let (root, _lock) = open_out(&opts.out)?;
    let configs: Vec<&RepoConfig> = plan.registry.repos.iter().collect();
    let repos = sync_all(&configs, opts, &plan.settings, reporter)?;
    let drafts = chunk_repos(&repos, &plan.settings, &embedder, reporter)?;
    let set = Assembled::new(repos, drafts, model_info(&embedder));
    let version = set.version(&plan);
    if let Some(done) = unchanged(&root, &version, &set, opts.keep, started, reporter)? {
        return Ok(done);
    }
    let embedded = embed_all(&set, &embedder, &opts.cache, reporter)?;
    let summary = publish(
        &root, opts.keep, &plan, &set, &version, &embedded, started, reporter,
    )?;
    embedded.save_cache(reporter);
    Ok(summary)
}

/// What `build_shard` wrote.
#[derive(Clone, Debug, Serialize)]
pub struct ShardSummary {
    /// The shard.
    pub shard: Shard,
    /// The part folder.
    pub part: PathBuf,
    /// Repositories in this shard.
    pub repos: Vec<RepoRecord>,
    /// Documents.
    pub docs: usize,
    /// Chunks.
    pub chunks: usize,
    /// Embedding figures.
    pub stats: PartStats,
    /// Whole run, seconds.
    pub wall_seconds: f64,
}

/// Builds one deterministic slice of the repositories (every `count`-th, from
/// `index`) into a part folder at `opts.out`, for `merge` to publish.
pub fn build_shard(
    opts: &BuildOptions,
    shard: Shard,
    reporter: &dyn Reporter,
) -> Result<ShardSummary, BuildError> {
    let started = Instant::now();
    let plan = plan(opts)?;
    let embedder = load_model(opts, &plan.settings)?;
    let configs: Vec<&RepoConfig> = plan
        .registry
        .repos
        .iter()
        .enumerate()
        .filter(|(i, _)| shard.takes(*i))
        .map(|(_, r)| r)
        .collect();
    let repos = if configs.is_empty() {
        Vec::new()
    } else {
        sync_all(&configs, opts, &plan.settings, reporter)?
    };
    let drafts = chunk_repos(&repos, &plan.settings, &embedder, reporter)?;
    let set = Assembled::new(repos, drafts, model_info(&embedder));
    let embedded = embed_all(&set, &embedder, &opts.cache, reporter)?;
    let mut next = 0;
    let part_repos: Vec<PartRepo> = set
        .repos
        .iter()
        .map(|r| {
            let chunks = set.drafts[next..next + r.docs.len()].to_vec();
            next += r.docs.len();
            PartRepo {
                record: r.record.clone(),
                docs: r
                    .docs
                    .iter()
                    .map(|d| PartDoc {
                        path: d.path.clone(),
                        text: d.text.clone(),
                        doctype: d.doctype,
                    })
                    .collect(),
                skipped: r
                    .skipped
                    .iter()
                    .map(|s| PartSkip {
                        path: s.path.clone(),
                        size: s.size,
                        reason: s.reason,
                    })
                    .collect(),
                chunks,
            }
        })
        .collect();
    let manifest = PartManifest {
        format: part::PART_FORMAT,
        shard,
        config_sha256: plan.config_sha256.clone(),
        chunker: CHUNKER_VERSION,
        settings: plan.settings.clone(),
        weights: plan.weights.clone(),
        model: set.model.clone(),
        repos: part_repos,
        stats: embedded.stats,
    };
    part::write(&opts.out, &manifest, &embedded.vectors)?;
    embedded.save_cache(reporter);
    reporter.finish(&format!(
        "shard {}/{} written to {}",
        shard.index,
        shard.count,
        opts.out.display()
    ));
    Ok(ShardSummary {
        shard,
        part: opts.out.clone(),
        repos: set.repos.iter().map(|r| r.record.clone()).collect(),
        docs: set.docs.len(),
        chunks: set.chunk_count(),
        stats: embedded.stats,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}

/// Publishes the parts of a sharded build as one index, identical to what a
/// single-machine `build` of the same config writes (same `index_version`).
pub fn merge(
    opts: &BuildOptions,
    parts: &[PathBuf],
    reporter: &dyn Reporter,
) -> Result<BuildSummary, BuildError> {
    let started = Instant::now();
    let plan = plan(opts)?;
    let mut loaded = Vec::new();
    for p in parts {
        loaded.push(part::read(p)?);
    }
    let mismatch = |m: String| BuildError::Part(PartError::Mismatch(m));
    let Some((first, _)) = loaded.first() else {
        return Err(mismatch("a merge needs at least one part".to_owned()));
    };
    let count = first.shard.count;
    let mut seen = vec![false; count];
    for (m, _) in &loaded {
        if m.config_sha256 != plan.config_sha256 {
            return Err(mismatch(format!(
                "shard {}/{} was built from another repositories.yml than {}",
                m.shard.index,
                m.shard.count,
                opts.config.display()
            )));
        }
        if m.chunker != CHUNKER_VERSION
            || m.settings != first.settings
            || m.weights != first.weights
            || m.model != first.model
        {
            return Err(mismatch(format!(
                "shard {}/{} was built with other settings, weights, model or cairn version than shard {}/{}",
                m.shard.index, m.shard.count, first.shard.index, first.shard.count
            )));
        }
        if m.shard.count != count || seen[m.shard.index - 1] {
            return Err(mismatch(format!(
                "shard {}/{} does not fit with the others (each of 1..{count} exactly once)",
                m.shard.index, m.shard.count
            )));
        }
        seen[m.shard.index - 1] = true;
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        return Err(mismatch(format!(
            "shard {}/{count} is missing",
            missing + 1
        )));
    }
    let plan = Plan {
        weights: first.weights.clone(),
        settings: first.settings.clone(),
        ..plan
    };
    let model = first.model.clone();
    // Every repository of the config, in config order, from whichever part holds it.
    let mut by_name = std::collections::HashMap::new();
    let mut stats = PartStats::default();
    for (m, vectors) in loaded {
        stats.embedded += m.stats.embedded;
        stats.cached += m.stats.cached;
        stats.embedded_tokens += m.stats.embedded_tokens;
        stats.embed_seconds += m.stats.embed_seconds;
        let mut rows = vectors.iter();
        for r in m.repos {
            let n: usize = r
                .chunks
                .iter()
                .flatten()
                .map(ChunkDraft::embedded_rows)
                .sum();
            let mut mine = Rows::new(model.dim);
            rows.by_ref().take(n).for_each(|v| mine.push(v));
            by_name.insert(r.record.name.clone(), (r, mine));
        }
    }
    let (mut repos, mut drafts, mut vectors) = (Vec::new(), Vec::new(), Rows::new(model.dim));
    for cfg in &plan.registry.repos {
        let (r, v) = by_name
            .remove(&cfg.name)
            .ok_or_else(|| mismatch(format!("no part holds repository {}", cfg.name)))?;
        repos.push(RepoDocs {
            cfg: cfg.clone(),
            docs: r.source_docs(),
            skipped: r.skips(),
            record: r.record,
        });
        drafts.extend(r.chunks);
        v.iter().for_each(|row| vectors.push(row));
    }
    let (root, _lock) = open_out(&opts.out)?;
    let set = Assembled::new(repos, drafts, model);
    let version = set.version(&plan);
    if let Some(done) = unchanged(&root, &version, &set, opts.keep, started, reporter)? {
        return Ok(done);
    }
    let embedded = Embedded {
        vectors,
        stats,
        cache: None,
    };
    publish(
        &root, opts.keep, &plan, &set, &version, &embedded, started, reporter,
    )
}

/// Everything of a build but the vectors: repositories, documents, chunks.
struct Assembled {
    repos: Vec<RepoDocs>,
    docs: Vec<DocRecord>,
    content: Vec<u8>,
    drafts: Vec<Vec<ChunkDraft>>,
    skipped: Vec<SkipRecord>,
    model: ModelInfo,
}

impl Assembled {
    fn new(repos: Vec<RepoDocs>, drafts: Vec<Vec<ChunkDraft>>, model: ModelInfo) -> Self {
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

    fn chunk_count(&self) -> usize {
        self.drafts.iter().map(Vec::len).sum()
    }

    fn skipped_by_reason(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for s in &self.skipped {
            *out.entry(s.reason.as_str().to_owned()).or_insert(0) += 1;
        }
        out
    }

    fn records(&self) -> Vec<RepoRecord> {
        self.repos.iter().map(|r| r.record.clone()).collect()
    }

    /// Hash over everything that decides the output: same inputs, same version.
    fn version(&self, plan: &Plan) -> IndexVersion {
        #[derive(Serialize)]
        struct Inputs<'a> {
            format: u32,
            chunker: u32,
            repos: Vec<&'a RepoRecord>,
            docs: &'a [DocRecord],
            settings: &'a BuildSettings,
            weights: &'a Weights,
            model: &'a ModelInfo,
        }
        let inputs = Inputs {
            format: FORMAT_VERSION,
            chunker: CHUNKER_VERSION,
            repos: self.repos.iter().map(|r| &r.record).collect(),
            docs: &self.docs,
            settings: &plan.settings,
            weights: &plan.weights,
            model: &self.model,
        };
        let bytes = serde_json::to_vec(&inputs).unwrap_or_default();
        IndexVersion::from_digest(&cairn_index::sha256_hex(&bytes))
    }

    /// What the model sees and how many tokens it takes, row by row: each
    /// chunk, then its subchunks ([`ChunkDraft::embedded_rows`]).
    fn embed_rows(&self) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        for (d, chunks) in self.drafts.iter().enumerate() {
            let doc = &self.docs[d];
            for row in order(chunks, |c| &c.subchunks) {
                let (title, text, tokens) = match row {
                    Row::Chunk(c) => (&c.title, &c.text, c.tokens),
                    Row::Subchunk(s) => (&s.title, &s.text, s.tokens),
                };
                out.push((embed_text(doc, title, text), self.model_tokens(tokens)));
            }
        }
        out
    }

    /// Tokens the model reads for a text of `text_tokens`: with its header, within the limit.
    fn model_tokens(&self, text_tokens: usize) -> u32 {
        (text_tokens + HEADER_TOKENS).min(self.model.max_tokens) as u32
    }

    /// The chunks of document `d` as the index stores them.
    fn new_chunks(&self, d: usize) -> Vec<NewChunk<'_>> {
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

/// The summary of a build whose version is already published (nothing is written).
fn unchanged(
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
        index_bytes: dir_size(root.version_dir(version).path()),
    }))
}

/// Every row's vector ([`ChunkDraft::embedded_rows`]), and the cache to save them to.
struct Embedded {
    vectors: Rows,
    stats: PartStats,
    cache: Option<(EmbedCache, Vec<TextKey>)>,
}

impl Embedded {
    /// The cache only matters for the next build; failing to save it loses nothing published.
    fn save_cache(&self, reporter: &dyn Reporter) {
        if let Some((cache, keys)) = &self.cache
            && let Err(e) = cache.save(keys.iter().zip(self.vectors.iter()))
        {
            reporter.note(&format!("could not save the embedding cache: {e}"));
        }
    }
}

/// Embeds every chunk whose text is not in the cache, each distinct text once.
fn embed_all(
    set: &Assembled,
    embedder: &dyn Embedder,
    cache_dir: &Path,
    reporter: &dyn Reporter,
) -> Result<Embedded, BuildError> {
    let (texts, tokens): (Vec<String>, Vec<u32>) = set.embed_rows().into_iter().unzip();
    let keys: Vec<TextKey> = texts.iter().map(|t| text_key(t)).collect();
    let cache = EmbedCache::open(cache_dir, &set.model.weights_sha256, set.model.dim);
    let mut todo: Vec<usize> = (0..keys.len())
        .filter(|&i| cache.get(&keys[i]).is_none())
        .collect();
    let mut seen = std::collections::HashSet::new();
    todo.retain(|&i| seen.insert(keys[i]));
    reporter.stage("embedding chunks and subchunks", Some(todo.len() as u64));
    let started = Instant::now();
    let mut fresh: std::collections::HashMap<TextKey, Vec<f32>> = std::collections::HashMap::new();
    for batch in todo.chunks(EMBED_CALL) {
        let batch_texts: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
        for (&i, v) in batch.iter().zip(embedder.embed(&batch_texts)?) {
            fresh.insert(keys[i], v);
        }
        reporter.advance(batch.len() as u64);
    }
    let embed_seconds = started.elapsed().as_secs_f64();
    reporter.finish(&format!(
        "embedded {} chunks and subchunks ({} from cache) in {embed_seconds:.1}s",
        todo.len(),
        keys.len() - todo.len()
    ));
    let mut vectors = Rows::new(set.model.dim);
    for k in &keys {
        vectors.push(
            fresh
                .get(k)
                .or_else(|| cache.get(k))
                .map_or(&[], Vec::as_slice),
        );
    }
    Ok(Embedded {
        vectors,
        stats: PartStats {
            embedded: todo.len(),
            cached: keys.len() - todo.len(),
            embedded_tokens: todo.iter().map(|&i| u64::from(tokens[i])).sum(),
            embed_seconds,
        },
        cache: Some((cache, keys)),
    })
}

/// Writes every file of the version, seals it, points CURRENT at it, prunes.
#[allow(clippy::too_many_arguments)]
fn publish(
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
    let mut builder = VersionBuilder::create(root, &set.docs, &set.content, &plan.weights)?;
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
    let sealed = builder.seal(manifest)?;
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
    configs: &[&RepoConfig],
    opts: &BuildOptions,
    settings: &BuildSettings,
    reporter: &dyn Reporter,
) -> Result<Vec<RepoDocs>, BuildError> {
    reporter.stage("syncing repositories", Some(configs.len() as u64));
    let mut out = Vec::new();
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
    if out.iter().all(|r| r.record.error.is_some()) {
        return Err(BuildError::NothingBuilt);
    }
    Ok(out)
}

/// The doc registry and the content store, in registry order.
fn assemble(repos: &[RepoDocs]) -> (Vec<DocRecord>, Vec<u8>) {
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
                language: d.language.to_owned(),
                size: d.text.len() as u64,
                sha256: cairn_index::sha256_hex(d.text.as_bytes()),
                line_count: LineIndex::new(d.text.as_bytes()).line_count(),
                content_offset: content.len() as u64,
                groups: r.cfg.groups.clone(),
            });
            content.extend_from_slice(d.text.as_bytes());
        }
    }
    (records, content)
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

/// Each document's chunks, in registry order (the order `assemble` lists them).
fn chunk_repos(
    repos: &[RepoDocs],
    settings: &BuildSettings,
    embedder: &dyn Embedder,
    reporter: &dyn Reporter,
) -> Result<Vec<Vec<ChunkDraft>>, BuildError> {
    let texts: Vec<&SourceDoc> = repos.iter().flat_map(|r| r.docs.iter()).collect();
    let specials = embedder.count_tokens("")?;
    let (limits, subchunk_limits) = chunk_limits(settings, embedder.model().max_tokens, specials);
    reporter.stage("chunking files", Some(texts.len() as u64));
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
            let chunks = chunk_document(
                d,
                &LineIndex::new(d.text.as_bytes()),
                &limits,
                &subchunk_limits,
                &count,
            );
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

/// What the model sees: a short header naming the place, then the text.
fn embed_text(doc: &DocRecord, title: &str, text: &str) -> String {
    if title.is_empty() {
        format!("{} {}\n{}", doc.repo, doc.path, text)
    } else {
        format!("{} {}: {}\n{}", doc.repo, doc.path, title, text)
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
