//! The last stage: the version's files written through
//! `cairn_index::VersionBuilder`, sealed, CURRENT pointed at it and old
//! versions pruned; or, when the same version is already there, nothing
//! written.

use super::chunking::Assembled;
use super::embed::Embedded;
use super::error::BuildError;
use super::plan::{BuildOptions, BuildSummary, Plan, peak_rss_bytes};
use crate::report::Reporter;
use cairn_embed::Embedder;
use cairn_index::freshness::StageSeconds;
use cairn_index::manifest::{Counts, ModelInfo};
use cairn_index::{FORMAT_VERSION, IndexRoot, IndexVersion, Manifest, VersionBuilder};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

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

/// Where a build publishes and how: its output root, locked for the build's
/// lifetime and cleared of a killed build's leftovers, the versions to keep,
/// when the build started and where it reports. The one context the last
/// stage needs, for a whole build and a merge alike.
pub(super) struct Target<'a> {
    root: IndexRoot,
    /// Held while the build runs; the OS drops it if the process dies.
    _lock: std::fs::File,
    keep: usize,
    started: Instant,
    reporter: &'a dyn Reporter,
}

impl<'a> Target<'a> {
    /// Locks and cleans `opts.out`.
    pub(super) fn open(
        opts: &BuildOptions,
        started: Instant,
        reporter: &'a dyn Reporter,
    ) -> Result<Self, BuildError> {
        let out = &opts.out;
        std::fs::create_dir_all(out).map_err(|source| BuildError::Io {
            path: out.to_owned(),
            source,
        })?;
        let lock = lock(out)?;
        let root = IndexRoot::new(out);
        root.clean_tmp()?;
        Ok(Self {
            root,
            _lock: lock,
            keep: opts.keep,
            started,
            reporter,
        })
    }
}

/// Holds `<out>/build.lock`; the OS drops it if the process dies.
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

impl Target<'_> {
    /// The summary of a build whose version is already published (nothing is written).
    pub(super) fn unchanged(
        &self,
        version: &IndexVersion,
        set: &Assembled,
    ) -> Result<Option<BuildSummary>, BuildError> {
        let (root, keep, started, reporter) = (&self.root, self.keep, self.started, self.reporter);
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
            peak_rss_bytes: peak_rss_bytes(),
            index_bytes: dir_size(root.version_dir(version).path()),
            stages: StageSeconds::default(),
        }))
    }

    /// Writes every file of the version, seals it, points CURRENT at it, prunes.
    pub(super) fn publish(
        &self,
        plan: &Plan,
        set: &Assembled,
        version: &IndexVersion,
        embedded: &Embedded,
    ) -> Result<BuildSummary, BuildError> {
        let (root, keep, started, reporter) = (&self.root, self.keep, self.started, self.reporter);
        reporter.stage("writing index", None);
        let definitions: Vec<_> = (0..)
            .zip(&set.definitions)
            .flat_map(|(doc, found)| found.iter().map(move |d| d.record(doc)))
            .collect();
        let mut builder =
            VersionBuilder::create(root, &set.docs, &set.content, &definitions, &plan.weights)?;
        builder.write_history(&set.history)?;
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
            peak_rss_bytes: peak_rss_bytes(),
            index_bytes: dir_size(sealed.path()),
            stages: StageSeconds::default(),
        })
    }
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

pub(crate) fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
