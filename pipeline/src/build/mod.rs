//! `cairn build`: config → sync → documents → chunks → embeddings → a
//! published version, in stages, a file each (`sources.rs`, `chunking.rs`,
//! `embed.rs`, `publish.rs`); a build split across machines
//! writes one shard per machine (`shard.rs`) and publishes them together
//! (`merge.rs`). The
//! version's files are written by `cairn_index::VersionBuilder`; nothing here
//! knows the format.

mod chunking;
mod embed;
mod error;
mod merge;
mod plan;
mod publish;
mod shard;
mod sources;

pub use chunking::chunk_limits;
pub(crate) use chunking::embed_text;
pub use error::BuildError;
pub use merge::merge;
pub use plan::{BuildOptions, BuildSummary};
use plan::{load_model, plan};
pub use shard::{ShardSummary, build_shard};

use chunking::{Assembled, chunk_repos};
use embed::embed_all;
pub(crate) use publish::now_rfc3339;
use publish::{Target, model_info};
use sources::sync_all;

use crate::config::RepoConfig;
use crate::report::Reporter;
use cairn_index::freshness::StageSeconds;
use std::time::Instant;

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
