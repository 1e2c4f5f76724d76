//! What a search may rank, remembered for one version: the chunks each
//! (groups, filters) allows, and each group set's visible chunks with
//! their BM25 counts. Working them out is a pass over every chunk (1.13 M
//! at 100× the corpus), several per search; callers repeat the same few
//! group sets and filters, so the last `KEPT` of each are kept. The masks
//! are `access`'s, unchanged: hidden still equals absent. An engine holds
//! one (a hot swap opens a new engine, so nothing outlives its version).

use super::stats::{Bm25Tables, Visible};
use crate::access::{allowed_chunks, visible_chunks};
use crate::filters::Filters;
use cairn_index::Snapshot;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// How many of each kind are kept (a mask is a byte per chunk).
const KEPT: usize = 16;

/// A caller's groups as a key: sorted, without repeats (`None`: trusted).
type Groups = Option<Vec<String>>;

fn key(groups: Option<&[String]>) -> Groups {
    groups.map(|g| {
        let mut g = g.to_vec();
        g.sort();
        g.dedup();
        g
    })
}

/// The most recently used entries, newest first.
struct Recent<K, V>(Mutex<VecDeque<(K, Arc<V>)>>);

impl<K: PartialEq, V> Default for Recent<K, V> {
    fn default() -> Self {
        Self(Mutex::new(VecDeque::new()))
    }
}

impl<K: PartialEq, V> Recent<K, V> {
    fn get(&self, key: K, make: impl FnOnce() -> V) -> Arc<V> {
        if let Ok(mut list) = self.0.lock()
            && let Some(i) = list.iter().position(|(k, _)| *k == key)
            && let Some(hit) = list.remove(i)
        {
            let value = Arc::clone(&hit.1);
            list.push_front(hit);
            return value;
        }
        // Made outside the lock: a slow pass must not hold up other callers.
        let value = Arc::new(make());
        if let Ok(mut list) = self.0.lock() {
            list.push_front((key, Arc::clone(&value)));
            list.truncate(KEPT);
        }
        value
    }
}

/// The masks and counts of one version's recent callers.
#[derive(Default)]
pub struct ScopeCache {
    allowed: Recent<(Groups, Filters), Vec<bool>>,
    visible: Recent<Groups, Visible>,
}

impl ScopeCache {
    /// The chunks `filters` and `groups` allow (see [`allowed_chunks`]).
    pub fn allowed(
        &self,
        snap: &Snapshot,
        filters: &Filters,
        groups: Option<&[String]>,
    ) -> Arc<Vec<bool>> {
        self.allowed.get((key(groups), filters.clone()), || {
            allowed_chunks(snap, filters, groups)
        })
    }

    /// The chunks `groups` may see, with their BM25 counts (see [`visible_chunks`]).
    pub fn visible(
        &self,
        snap: &Snapshot,
        tables: &Bm25Tables,
        groups: Option<&[String]>,
    ) -> Arc<Visible> {
        self.visible.get(key(groups), || {
            Visible::new(tables, visible_chunks(snap, groups))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trusted caller (no groups given) never shares a mask with a public
    /// one (no groups held); the same groups in another order or repeated do.
    #[test]
    fn keys_keep_trusted_and_public_apart_and_ignore_order() {
        let (a, b) = ("a".to_owned(), "b".to_owned());
        assert_ne!(key(None), key(Some(&[])));
        assert_ne!(key(None), key(Some(std::slice::from_ref(&a))));
        assert_eq!(
            key(Some(&[b.clone(), a.clone(), b.clone()])),
            key(Some(&[a.clone(), b.clone()]))
        );
        assert_ne!(key(Some(&[a])), key(Some(&[b])));
    }

    /// The newest entry is found again; past `KEPT` the oldest is dropped.
    #[test]
    fn recent_entries_are_kept_and_the_oldest_dropped() {
        let r: Recent<usize, usize> = Recent::default();
        for i in 0..=KEPT {
            assert_eq!(*r.get(i, || i * 10), i * 10);
        }
        assert_eq!(*r.get(KEPT, || 0), KEPT * 10, "kept, not made again");
        assert_eq!(
            *r.get(0, || 7),
            7,
            "the oldest was dropped and is made again"
        );
    }
}
