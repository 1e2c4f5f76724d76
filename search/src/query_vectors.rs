//! Query embeddings with a small least-recently-used cache in front of the
//! model: a query's embedding is most of a search's cost (about 10 of 12 ms
//! on two cores), and bots and students ask the same questions again.
//!
//! The cache is partitioned by the caller's access groups: a hit is faster
//! than a miss, so a shared cache would tell one group whether another had
//! asked a question. Callers with the same groups share a partition.

use cairn_embed::{EmbedError, Embedder, ModelId};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How many query vectors are kept (384 floats each: about 1.5 MiB in all).
pub const CAPACITY: usize = 1024;

/// The query model, with the vectors of recent queries.
pub struct QueryVectors {
    model: Arc<dyn Embedder>,
    capacity: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// (partition, query text) → (vector, when last used).
    vectors: HashMap<(String, String), (Vec<f32>, u64)>,
    clock: u64,
    stats: CacheStats,
}

/// What the cache has done since the model was loaded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Queries answered from the cache.
    pub hits: u64,
    /// Queries the model embedded.
    pub misses: u64,
    /// Vectors held now.
    pub entries: usize,
}

impl QueryVectors {
    /// `model` behind a cache of `capacity` vectors (at least one).
    pub fn new(model: Arc<dyn Embedder>, capacity: usize) -> Self {
        Self {
            model,
            capacity: capacity.max(1),
            state: Mutex::new(State::default()),
        }
    }

    /// Which model embeds the queries.
    pub fn model(&self) -> &ModelId {
        self.model.model()
    }

    /// The unit vector of `query` asked by a caller with `groups`: from that
    /// group set's part of the cache, or embedded and kept there.
    pub fn vector(
        &self,
        groups: Option<&[String]>,
        query: &str,
    ) -> Result<Option<Vec<f32>>, EmbedError> {
        let key = (partition(groups), query.to_owned());
        {
            let mut s = self.lock();
            s.clock += 1;
            let now = s.clock;
            if let Some((v, used)) = s.vectors.get_mut(&key) {
                *used = now;
                let v = v.clone();
                s.stats.hits += 1;
                return Ok(Some(v));
            }
        }
        // Embed outside the lock: other searches go on meanwhile.
        let Some(v) = self.model.embed(&[query])?.pop() else {
            return Ok(None);
        };
        let mut s = self.lock();
        s.stats.misses += 1;
        if s.vectors.len() >= self.capacity && !s.vectors.contains_key(&key) {
            let oldest = s
                .vectors
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                s.vectors.remove(&k);
            }
        }
        let now = s.clock;
        s.vectors.insert(key, (v.clone(), now));
        Ok(Some(v))
    }

    /// Hits, misses and entries so far.
    pub fn stats(&self) -> CacheStats {
        let s = self.lock();
        CacheStats {
            entries: s.vectors.len(),
            ..s.stats
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves a consistent map.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The cache partition of a caller with `groups`: the sorted set, or one
/// partition for trusted callers who see everything.
fn partition(groups: Option<&[String]>) -> String {
    match groups {
        None => "\u{0}all".to_owned(),
        Some(g) => {
            let mut g: Vec<&str> = g.iter().map(String::as_str).collect();
            g.sort_unstable();
            g.dedup();
            g.join("\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_embed::{BertEmbedder, DevicePref, ModelSpec};

    #[test]
    fn repeats_come_from_the_cache_and_the_least_recent_goes_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        cairn_embed::fixtures::write_tiny_bert(dir.path()).expect("tiny model");
        let files = ModelSpec::Dir(dir.path().to_owned())
            .locate()
            .expect("model files");
        let model: Arc<dyn Embedder> =
            Arc::new(BertEmbedder::load(&files, DevicePref::Cpu).expect("load"));
        let direct = model.embed(&["fit a model"]).expect("embed").pop();
        let q = QueryVectors::new(Arc::clone(&model), 2);

        let first = q.vector(None, "fit a model").expect("embed");
        assert_eq!(first, direct, "the cache returns the model's own vector");
        assert_eq!(q.vector(None, "fit a model").expect("embed"), first);
        let s = q.stats();
        assert_eq!((s.hits, s.misses, s.entries), (1, 1, 1));

        // With "b" in, the cache is full: "c" pushes out the least recently
        // used, "fit a model", which then has to be embedded again.
        q.vector(None, "b").expect("embed");
        q.vector(None, "c").expect("embed");
        assert_eq!(q.stats().entries, 2, "capacity holds");
        q.vector(None, "c").expect("embed");
        q.vector(None, "fit a model").expect("embed");
        let s = q.stats();
        assert_eq!((s.hits, s.misses), (2, 4), "{s:?}");
        // Another group set asks the same: embedded for it, not a hit.
        let team = ["team-a".to_owned()];
        q.vector(Some(&team), "fit a model").expect("embed");
        assert_eq!(q.stats().hits, 2);
        q.vector(Some(&team), "fit a model").expect("embed");
        assert_eq!(q.stats().hits, 3);
    }
}
