//! `cairn build`: config → sync → documents → chunks → embeddings → a
//! published version, in stages, a file each (`sources.rs`, `chunking.rs`,
//! `embed.rs`, `publish.rs`); a build split across machines
//! writes one shard per machine (`shard.rs`) and publishes them together
//! (`merge.rs`). The
//! version's files are written by `cairn_index::VersionBuilder`; nothing here
//! knows the format.

mod chunking;
mod embed;
mod merge;
mod publish;
mod shard;
mod sources;

pub use chunking::chunk_limits;
pub(crate) use chunking::embed_text;
pub use merge::merge;
pub use shard::{ShardSummary, build_shard};

use chunking::{Assembled, chunk_repos};
use embed::embed_all;
pub(crate) use publish::now_rfc3339;
use publish::{Target, model_info};
use sources::sync_all;

use crate::config::{
    BuildSettings, ConfigError, PathWeights, Registry, RepoConfig, default_weights, load_weights,
};
use crate::part::PartError;
use crate::report::Reporter;
use crate::sync::SyncError;
use cairn_embed::{BertEmbedder, DevicePref, EmbedError, ModelSpec};
use cairn_index::freshness::StageSeconds;
use cairn_index::manifest::RepoRecord;
use cairn_index::{IndexVersion, LayoutError, WriteError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

/// Bumped whenever chunking or the embedded text changes, so the version changes with it.
const CHUNKER_VERSION: u32 = 7;
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
    /// Where arXiv articles are fetched from (`articles:`); a mirror or a test server.
    pub arxiv_url: String,
    /// A program that reads each PDF in a process of its own
    /// ([`crate::pdf::PdfLimits::helper`]); `None` reads them in this one.
    pub pdf_helper: Option<PathBuf>,
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
    /// An article's PDF could not be fetched.
    #[error(transparent)]
    Article(#[from] crate::articles::FetchError),
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
    /// This process's peak resident memory so far, bytes (Linux; absent
    /// where the kernel does not say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
    /// Bytes of the published version folder.
    pub index_bytes: u64,
    /// Where the time went, stage by stage.
    pub stages: StageSeconds,
}

/// Config, weights and settings of a build, read and validated.
struct Plan {
    registry: Registry,
    weights: PathWeights,
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

/// Runs a whole build and publishes the result.
pub fn build(opts: &BuildOptions, reporter: &dyn Reporter) -> Result<BuildSummary, BuildError> {
    let started = Instant::now();
    let mut stages = StageSeconds::default();
    let mut lap = Instant::now();
    let mut clock = |stage: &mut f64| {
        *stage = lap.elapsed().as_secs_f64();
        lap = Instant::now();
    };
    let plan = plan(opts)?;
    let embedder = load_model(opts, &plan.settings)?;
    clock(&mut stages.model);
    let target = Target::open(opts, started, reporter)?;
    let configs: Vec<&RepoConfig> = plan.registry.repos.iter().collect();
    let repos = sync_all(&configs, opts, &plan.settings, reporter)?;
    clock(&mut stages.sync);
    let drafts = chunk_repos(&repos, &plan.settings, &embedder, reporter)?;
    clock(&mut stages.chunk);
    let set = Assembled::new(repos, drafts, model_info(&embedder));
    let version = set.version(&plan);
    if let Some(done) = target.unchanged(&version, &set)? {
        clock(&mut stages.publish);
        return Ok(BuildSummary { stages, ..done });
    }
    let mode = plan.settings.subchunk_vectors;
    let embedded = embed_all(&set, &embedder, mode, &opts.cache, reporter)?;
    clock(&mut stages.embed);
    let summary = target.publish(&plan, &set, &version, &embedded)?;
    embedded.save_cache(reporter);
    clock(&mut stages.publish);
    Ok(BuildSummary { stages, ..summary })
}

/// This process's peak resident memory, from the kernel (`VmHWM`).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}
