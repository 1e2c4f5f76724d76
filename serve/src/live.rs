//! The live index: the engine requests use now, swapped atomically when
//! `<index>/CURRENT` names a new version (or a pack dropped into the index
//! root has been adopted as one).
//!
//! A new version is verified (every checksum) and opened off the request
//! path, then swapped in; requests already running hold the old engine until
//! they finish. A version that fails to verify or open is refused with a log
//! line, and the old one keeps serving.

use crate::ops::Versions;
use arc_swap::ArcSwap;
use cairn_index::pack::Dropped;
use cairn_index::{IndexRoot, IndexVersion};
use cairn_search::{Engine, EngineOptions, SearchError};
use std::sync::{Arc, Mutex};

/// What one check of CURRENT found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwapOutcome {
    /// CURRENT names the live version (or a version refused before).
    Unchanged,
    /// The new version is live.
    Swapped {
        /// The version replaced.
        from: String,
        /// The version now live.
        to: String,
    },
    /// The new version was refused; the old one keeps serving.
    Refused {
        /// The version refused.
        version: String,
        /// Why.
        reason: String,
    },
}

/// The engine being served and how to open the next one.
pub struct LiveIndex {
    engine: ArcSwap<Engine>,
    opts: EngineOptions,
    /// The last version refused, so a broken version is not retried every tick.
    refused: Mutex<Option<IndexVersion>>,
    /// Versions (and tried packs) kept after a pack is adopted.
    keep: usize,
    /// Earlier versions opened to read cited lines, least recently used
    /// first; at most [`PAST_OPEN`] (each holds its parsed records).
    past: Mutex<Vec<Arc<Engine>>>,
    /// What verifying earlier versions found, so none is hashed twice.
    checked: Mutex<Vec<(IndexVersion, bool)>>,
    /// Held while an earlier version is verified and opened: one at a time,
    /// so a burst naming versions costs one open, not one per request.
    opening: Mutex<()>,
}

impl LiveIndex {
    /// Opens CURRENT (failing fast when it is missing or incompatible).
    pub fn open(opts: EngineOptions) -> Result<Self, SearchError> {
        let engine = Engine::open(&opts)?;
        Ok(Self::from_engine(engine, opts))
    }

    /// Serves an engine already opened from `opts`.
    pub fn from_engine(engine: Engine, opts: EngineOptions) -> Self {
        Self {
            engine: ArcSwap::from_pointee(engine),
            opts,
            refused: Mutex::new(None),
            keep: cairn_index::layout::DEFAULT_KEEP,
            past: Mutex::new(Vec::new()),
            checked: Mutex::new(Vec::new()),
            opening: Mutex::new(()),
        }
    }

    /// Keeps `keep` versions (and tried packs) after each adoption.
    pub fn with_keep(mut self, keep: usize) -> Self {
        self.keep = keep.max(1);
        self
    }

    /// The engine to answer one request with (held until the request ends).
    pub fn current(&self) -> Arc<Engine> {
        self.engine.load_full()
    }

    /// Reads CURRENT and swaps in the version it names if that is new.
    /// `force` retries a version refused before (SIGHUP).
    pub fn check(&self, force: bool) -> SwapOutcome {
        let root = IndexRoot::new(&self.opts.index);
        // Packs a nightly job dropped into the root become versions (and CURRENT) first.
        for (pack, outcome) in cairn_index::pack::adopt_dropped_packs(&root, self.keep) {
            match outcome {
                Dropped::Adopted(u) => {
                    let named = cairn_index::pack::version_from_name(&pack);
                    if named.as_ref().is_some_and(|n| *n != u.version) {
                        tracing::warn!(pack = %pack.display(), version = %u.version, "the pack's name does not match the version inside");
                    }
                    tracing::info!(pack = %pack.display(), version = %u.version, "pack adopted (moved to packs/adopted)")
                }
                Dropped::Refused(why) => {
                    tracing::error!(pack = %pack.display(), reason = %why, "pack not adopted (moved to packs/rejected)")
                }
            }
        }
        let wanted = match root.current() {
            Ok(v) => v,
            Err(e) => {
                return SwapOutcome::Refused {
                    version: "?".to_owned(),
                    reason: e.to_string(),
                };
            }
        };
        let live = self.current();
        if live.snapshot().version == wanted {
            return SwapOutcome::Unchanged;
        }
        let mut refused = self.refused.lock().unwrap_or_else(|p| p.into_inner());
        if !force && refused.as_ref() == Some(&wanted) {
            return SwapOutcome::Unchanged;
        }
        let refuse = |reason: String| SwapOutcome::Refused {
            version: wanted.to_string(),
            reason,
        };
        let outcome = match cairn_index::verify_version(&root.version_dir(&wanted), &wanted) {
            Err(e) => refuse(e.to_string()),
            Ok(report) if !report.ok() => refuse(format!(
                "verify found {} problems, first: {}",
                report.problems.len(),
                report.problems.first().map(String::as_str).unwrap_or("")
            )),
            Ok(_) => match live.reopen(&self.opts) {
                // CURRENT may have moved again while verifying; only swap what was verified.
                Ok(next) if next.snapshot().version == wanted => {
                    self.engine.store(Arc::new(next));
                    SwapOutcome::Swapped {
                        from: live.snapshot().version.to_string(),
                        to: wanted.to_string(),
                    }
                }
                Ok(_) => SwapOutcome::Unchanged,
                Err(e) => refuse(e.to_string()),
            },
        };
        *refused = match &outcome {
            SwapOutcome::Refused { .. } => Some(wanted),
            _ => None,
        };
        outcome
    }

    /// An earlier version already open.
    fn held(&self, version: &IndexVersion) -> Option<Arc<Engine>> {
        let past = self.past.lock().unwrap_or_else(|p| p.into_inner());
        past.iter()
            .find(|e| e.snapshot().version == *version)
            .cloned()
    }

    /// Keeps `engine` among the open earlier versions, dropping the least recently used.
    fn remember(&self, engine: Arc<Engine>) {
        let mut past = self.past.lock().unwrap_or_else(|p| p.into_inner());
        past.retain(|e| e.snapshot().version != engine.snapshot().version);
        past.push(engine);
        let over = past.len().saturating_sub(PAST_OPEN);
        past.drain(..over);
    }

    /// Whether `version` verifies (every checksum, as a swap checks), hashed once.
    fn verifies(&self, root: &IndexRoot, version: &IndexVersion) -> bool {
        let known = {
            let checked = self.checked.lock().unwrap_or_else(|p| p.into_inner());
            checked
                .iter()
                .find(|(v, _)| v == version)
                .map(|(_, ok)| *ok)
        };
        if let Some(ok) = known {
            return ok;
        }
        let verdict = cairn_index::verify_version(&root.version_dir(version), version)
            .map_err(|e| e.to_string())
            .and_then(|r| match r.ok() {
                true => Ok(()),
                false => Err(format!("{} problems", r.problems.len())),
            });
        if let Err(why) = &verdict {
            tracing::error!(%version, reason = %why, "a kept version failed verify; its lines are not read");
        }
        let mut checked = self.checked.lock().unwrap_or_else(|p| p.into_inner());
        checked.push((version.clone(), verdict.is_ok()));
        verdict.is_ok()
    }
}

/// Earlier versions held open at once for reading cited lines.
const PAST_OPEN: usize = 2;

impl Versions for LiveIndex {
    /// The live engine, an earlier one still open, or a kept version opened
    /// now (verified once first). A version gone from disk is refused even
    /// while open here: what the root no longer holds is not cited.
    fn engine(&self, version: &IndexVersion) -> Result<Arc<Engine>, SearchError> {
        let live = self.current();
        if live.snapshot().version == *version {
            return Ok(live);
        }
        let root = IndexRoot::new(&self.opts.index);
        if !root.version_dir(version).path().is_dir() {
            return Err(SearchError::VersionGone(version.clone()));
        }
        let engine = match self.held(version) {
            Some(e) => e,
            None => {
                let _one_at_a_time = self.opening.lock().unwrap_or_else(|p| p.into_inner());
                // Another request may have opened it while this one waited.
                match self.held(version) {
                    Some(e) => e,
                    None if !self.verifies(&root, version) => {
                        return Err(SearchError::VersionGone(version.clone()));
                    }
                    None => Arc::new(live.open_version(version)?),
                }
            }
        };
        self.remember(Arc::clone(&engine));
        Ok(engine)
    }
}
