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
    /// Earlier versions opened to read cited lines, newest use last; at most
    /// `keep` (there are no more on disk), so naming versions in turn never
    /// makes the server reopen one it already holds.
    past: Mutex<Vec<Arc<Engine>>>,
    /// Earlier versions that failed verification: refused without hashing
    /// them again, so naming one over and over costs nothing.
    unreadable: Mutex<Vec<IndexVersion>>,
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
            unreadable: Mutex::new(Vec::new()),
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
                    // Passages cited a moment ago are read from the engine that cited them.
                    self.remember(Arc::clone(&live));
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

    fn is_unreadable(&self, version: &IndexVersion) -> bool {
        let bad = self.unreadable.lock().unwrap_or_else(|p| p.into_inner());
        bad.contains(version)
    }

    /// Keeps `engine` among the earlier versions, dropping the least recently used.
    fn remember(&self, engine: Arc<Engine>) {
        let mut past = self.past.lock().unwrap_or_else(|p| p.into_inner());
        past.retain(|e| e.snapshot().version != engine.snapshot().version);
        past.push(engine);
        let over = past.len().saturating_sub(self.keep);
        past.drain(..over);
    }
}

impl Versions for LiveIndex {
    /// The live engine, an earlier one still open, or a kept version opened
    /// now (verified first, as a swap verifies). A version gone from disk is
    /// refused even while open here: what the root no longer holds is not cited.
    fn engine(&self, version: &IndexVersion) -> Result<Arc<Engine>, SearchError> {
        let live = self.current();
        if live.snapshot().version == *version {
            return Ok(live);
        }
        let root = IndexRoot::new(&self.opts.index);
        let dir = root.version_dir(version);
        if !dir.path().is_dir() {
            return Err(SearchError::VersionGone(version.clone()));
        }
        let held = {
            let past = self.past.lock().unwrap_or_else(|p| p.into_inner());
            past.iter()
                .find(|e| e.snapshot().version == *version)
                .cloned()
        };
        let engine = match held {
            Some(e) => e,
            None if self.is_unreadable(version) => {
                return Err(SearchError::VersionGone(version.clone()));
            }
            None => {
                let verified = cairn_index::verify_version(&dir, version)
                    .map_err(|e| e.to_string())
                    .and_then(|r| match r.ok() {
                        true => Ok(()),
                        false => Err(format!("{} problems", r.problems.len())),
                    });
                if let Err(why) = verified {
                    tracing::error!(%version, reason = %why, "a kept version failed verify; its lines are not read");
                    let mut bad = self.unreadable.lock().unwrap_or_else(|p| p.into_inner());
                    bad.push(version.clone());
                    return Err(SearchError::VersionGone(version.clone()));
                }
                Arc::new(live.open_version(version)?)
            }
        };
        self.remember(Arc::clone(&engine));
        Ok(engine)
    }
}
