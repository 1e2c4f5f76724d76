//! One shard of a build: every `count`-th repository, synced, chunked and
//! embedded into a part folder that [`super::merge`] publishes with the others.

use super::chunking::{Assembled, chunk_repos};
use super::embed::embed_all;
use super::error::BuildError;
use super::plan::{BuildOptions, CHUNKER_VERSION, load_model, plan};
use super::publish::model_info;
use super::sources::sync_all;
use crate::config::RepoConfig;
use crate::part;
use crate::part::{PartDoc, PartManifest, PartRepo, PartSkip, PartStats, Shard};
use crate::report::Reporter;
use cairn_index::manifest::RepoRecord;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

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
    let configs: Vec<&RepoConfig> = shard.select(&plan.registry);
    let repos = if configs.is_empty() {
        Vec::new()
    } else {
        sync_all(&configs, opts, &plan.settings, reporter)?
    };
    let drafts = chunk_repos(&repos, &plan.settings, &embedder, reporter)?;
    let set = Assembled::new(repos, drafts, model_info(&embedder));
    let mode = plan.settings.subchunk_vectors;
    let embedded = embed_all(&set, &embedder, mode, &opts.cache, reporter)?;
    let mut next = 0;
    let part_repos: Vec<PartRepo> = set
        .repos
        .iter()
        .map(|r| {
            let chunks = set.drafts[next..next + r.docs.len()].to_vec();
            let definitions = set.definitions[next..next + r.docs.len()].to_vec();
            next += r.docs.len();
            PartRepo {
                record: r.record.clone(),
                history: r.history.clone(),
                docs: r
                    .docs
                    .iter()
                    .map(|d| PartDoc {
                        path: d.path.clone(),
                        text: d.text.clone(),
                        doctype: d.doctype,
                        pdf: d.pdf.clone(),
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
                definitions,
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
