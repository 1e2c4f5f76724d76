//! Publishing the parts of a sharded build as one index: each part checked
//! against the config and the others, then published exactly as a
//! single-machine build would (same `index_version`).

use super::chunking::Assembled;
use super::embed::Embedded;
use super::error::BuildError;
use super::plan::{BuildOptions, BuildSummary, CHUNKER_VERSION, Plan, plan};
use super::publish::Target;
use super::sources::RepoDocs;
use crate::chunk::{ChunkDraft, Chunked};
use crate::part;
use crate::part::{PartError, PartManifest, PartStats};
use crate::report::Reporter;
use cairn_index::Rows;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn mismatch(m: String) -> BuildError {
    BuildError::Part(PartError::Mismatch(m))
}

/// Whether `parts` make one build of `plan`: the same config, settings,
/// weights, model and chunker, and each shard of 1..N exactly once.
fn check_parts(
    plan: &Plan,
    config: &Path,
    parts: &[(PartManifest, Rows)],
) -> Result<(), BuildError> {
    let Some((first, _)) = parts.first() else {
        return Err(mismatch("a merge needs at least one part".to_owned()));
    };
    let count = first.shard.count;
    let mut seen = vec![false; count];
    for (m, _) in parts {
        if m.config_sha256 != plan.config_sha256 {
            return Err(mismatch(format!(
                "shard {}/{} was built from another repositories.yml than {}",
                m.shard.index,
                m.shard.count,
                config.display()
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
        // A part file is input: its shard numbers are checked, never trusted as indices.
        let slot = m
            .shard
            .index
            .checked_sub(1)
            .filter(|_| m.shard.count == count);
        match slot.and_then(|i| seen.get_mut(i)) {
            Some(taken) if !*taken => *taken = true,
            _ => {
                return Err(mismatch(format!(
                    "shard {}/{} does not fit with the others (each of 1..{count} exactly once)",
                    m.shard.index, m.shard.count
                )));
            }
        }
    }
    match seen.iter().position(|s| !s) {
        Some(missing) => Err(mismatch(format!(
            "shard {}/{count} is missing",
            missing + 1
        ))),
        None => Ok(()),
    }
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
    check_parts(&plan, &opts.config, &loaded)?;
    let Some((first, _)) = loaded.first() else {
        return Err(mismatch("a merge needs at least one part".to_owned()));
    };
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
    let (mut repos, mut chunked, mut vectors) = (Vec::new(), Vec::new(), Rows::new(model.dim));
    for cfg in &plan.registry.repos {
        let (r, v) = by_name
            .remove(&cfg.name)
            .ok_or_else(|| mismatch(format!("no part holds repository {}", cfg.name)))?;
        repos.push(RepoDocs {
            cfg: cfg.clone(),
            docs: r.source_docs(),
            skipped: r.skips(),
            record: r.record,
            history: r.history,
        });
        chunked.extend(
            r.chunks
                .into_iter()
                .zip(r.definitions)
                .map(|(chunks, definitions)| Chunked {
                    chunks,
                    definitions,
                }),
        );
        v.iter().for_each(|row| vectors.push(row));
    }
    let target = Target::open(opts, started, reporter)?;
    let set = Assembled::new(repos, chunked, model);
    let version = set.version(&plan);
    if let Some(done) = target.unchanged(&version, &set)? {
        return Ok(done);
    }
    let embedded = Embedded {
        vectors,
        stats,
        cache: None,
    };
    target.publish(&plan, &set, &version, &embedded)
}
