//! Runtime weights: per-document multipliers set while serving, stored in a
//! small state file beside (never inside) the immutable index.
//!
//! Each weight is clamped to [0.1, 10], belongs to a namespace (`global`, or a
//! toolkit: applied only when a search filters on that toolkit) and expires,
//! so one loud user cannot skew ranking forever. The file is rewritten
//! atomically on every change and survives restarts.

use crate::error::{SearchError, invalid};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

/// Smallest multiplier accepted.
pub const MIN_WEIGHT: f32 = 0.1;
/// Largest multiplier accepted.
pub const MAX_WEIGHT: f32 = 10.0;

/// One stored weight.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuntimeWeight {
    /// The multiplier, already clamped.
    pub multiplier: f32,
    /// Unix seconds after which it no longer applies.
    pub expires_at: i64,
}

type Table = BTreeMap<String, BTreeMap<String, RuntimeWeight>>;

/// The weights of one index root, loaded from and saved to its state file.
pub struct RuntimeWeights {
    path: Option<PathBuf>,
    table: RwLock<Table>,
}

impl RuntimeWeights {
    /// Runtime weights kept in `path` (read now if it exists; a damaged file is an error, not a reset).
    pub fn load(path: PathBuf) -> Result<Self, SearchError> {
        let table = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| SearchError::State {
                path: path.display().to_string(),
                message: e.to_string(),
            })?,
            Err(_) => Table::new(),
        };
        Ok(Self {
            path: Some(path),
            table: RwLock::new(table),
        })
    }

    /// Runtime weights that live only in memory (tests, read-only deployments).
    pub fn in_memory() -> Self {
        Self {
            path: None,
            table: RwLock::new(Table::new()),
        }
    }

    /// Sets a weight; returns the clamped multiplier and its expiry (unix seconds).
    pub fn set(
        &self,
        doc_id: &str,
        multiplier: f32,
        namespace: &str,
        ttl_days: f64,
        now: i64,
    ) -> Result<RuntimeWeight, SearchError> {
        if !multiplier.is_finite() {
            return Err(invalid("multiplier", "must be a finite number"));
        }
        if !(ttl_days.is_finite() && ttl_days > 0.0 && ttl_days <= 365.0) {
            return Err(invalid("ttl_days", "must be more than 0 and at most 365"));
        }
        if namespace.is_empty() || namespace.len() > 100 {
            return Err(invalid("namespace", "must be `global` or a toolkit name"));
        }
        let w = RuntimeWeight {
            multiplier: multiplier.clamp(MIN_WEIGHT, MAX_WEIGHT),
            expires_at: now + (ttl_days * 86_400.0) as i64,
        };
        let snapshot = {
            let mut t = self.table.write().map_err(|_| poisoned())?;
            // Drop what has expired while we are here, so the file stays small.
            for ns in t.values_mut() {
                ns.retain(|_, v| v.expires_at > now);
            }
            t.entry(namespace.to_owned())
                .or_default()
                .insert(doc_id.to_owned(), w.clone());
            t.clone()
        };
        self.save(&snapshot)?;
        Ok(w)
    }

    /// The product of the live weights of `doc_id` in `global` and in the given toolkit namespaces.
    pub fn multiplier(&self, doc_id: &str, toolkits: &[String], now: i64) -> f32 {
        let Ok(t) = self.table.read() else { return 1.0 };
        let live = |ns: &str| {
            t.get(ns)
                .and_then(|m| m.get(doc_id))
                .filter(|w| w.expires_at > now)
                .map_or(1.0, |w| w.multiplier)
        };
        toolkits
            .iter()
            .fold(live("global"), |acc, tk| acc * live(tk))
    }

    fn save(&self, table: &Table) -> Result<(), SearchError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let err = |e: String| SearchError::State {
            path: path.display().to_string(),
            message: e,
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| err(e.to_string()))?;
        let bytes = serde_json::to_vec_pretty(table).map_err(|e| err(e.to_string()))?;
        std::io::Write::write_all(&mut tmp, &bytes).map_err(|e| err(e.to_string()))?;
        tmp.as_file().sync_all().map_err(|e| err(e.to_string()))?;
        tmp.persist(path).map_err(|e| err(e.to_string()))?;
        Ok(())
    }
}

fn poisoned() -> SearchError {
    SearchError::State {
        path: String::new(),
        message: "weights lock poisoned".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamp_namespace_expiry_and_persistence() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("weights-state.json");
        let w = RuntimeWeights::load(path.clone()).expect("load");
        let now = 1_000_000;
        assert_eq!(
            w.set("c/r/a.py", 50.0, "global", 1.0, now)
                .expect("set")
                .multiplier,
            MAX_WEIGHT
        );
        w.set("c/r/b.py", 0.001, "emcee", 2.0, now).expect("set");
        assert_eq!(w.multiplier("c/r/a.py", &[], now), 10.0);
        assert_eq!(
            w.multiplier("c/r/b.py", &[], now),
            1.0,
            "toolkit weights need that toolkit's filter"
        );
        assert_eq!(w.multiplier("c/r/b.py", &["emcee".into()], now), MIN_WEIGHT);
        // Survives a restart.
        let again = RuntimeWeights::load(path).expect("reload");
        assert_eq!(again.multiplier("c/r/a.py", &[], now + 10), 10.0);
        // Expires.
        assert_eq!(again.multiplier("c/r/a.py", &[], now + 86_401), 1.0);
        assert!(w.set("x", 1.0, "global", 0.0, now).is_err());
        assert!(w.set("x", f32::NAN, "global", 1.0, now).is_err());
    }
}
