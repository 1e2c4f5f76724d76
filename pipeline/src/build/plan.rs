//! What a build is asked for and reads before it starts: its options, the
//! plan they name (repositories.yml, weights, settings), the model; and the
//! figures a build reports (its summary, this process's peak memory).

use super::error::BuildError;
use crate::config::{BuildSettings, PathWeights, Registry, default_weights, load_weights};
use cairn_embed::{BertEmbedder, DevicePref, ModelSpec};
use cairn_index::IndexVersion;
use cairn_index::freshness::StageSeconds;
use cairn_index::manifest::RepoRecord;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Bumped whenever chunking or the embedded text changes, so the version changes with it.
pub(super) const CHUNKER_VERSION: u32 = 7;
/// Tokens kept free in each chunk for the header (repo, path, title).
pub(super) const HEADER_TOKENS: usize = 24;
/// Texts sent to the model per call (progress granularity; the model batches within).
pub(super) const EMBED_CALL: usize = 256;

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
pub(super) struct Plan {
    pub(super) registry: Registry,
    pub(super) weights: PathWeights,
    pub(super) settings: BuildSettings,
    pub(super) config_sha256: String,
}

/// The plan `opts` name: repositories.yml, and the weights and settings
/// beside it unless named.
pub(super) fn plan(opts: &BuildOptions) -> Result<Plan, BuildError> {
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

/// The model `opts` (or the settings) name, loaded on its device.
pub(super) fn load_model(
    opts: &BuildOptions,
    settings: &BuildSettings,
) -> Result<BertEmbedder, BuildError> {
    let spec = match &opts.model_dir {
        Some(d) => ModelSpec::Dir(d.clone()),
        None => ModelSpec::Hub {
            id: settings.model.clone(),
            revision: settings.model_revision.clone(),
        },
    };
    Ok(BertEmbedder::load(&spec.locate()?, opts.device)?)
}

/// This process's peak resident memory, from the kernel (`VmHWM`).
pub(super) fn peak_rss_bytes() -> Option<u64> {
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
