//! Deliveries signed with a shared secret (GitHub and GitLab push webhooks
//! for `cairn watch`, Slack's requests to `cairn serve`): the HMAC-SHA256
//! check, in constant time, and the memory of recent delivery ids, so a
//! replayed or retried delivery is acted on once. Used by [`crate::webhook`]
//! and [`crate::slack`]; depends on nothing else here.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;

/// Whether `given` (raw bytes, hex-decoded by the caller) is the HMAC-SHA256
/// of the concatenated `parts` under `secret`, compared in constant time.
pub fn hmac_matches(secret: &[u8], parts: &[&[u8]], given: &[u8]) -> bool {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
        return false;
    };
    for p in parts {
        mac.update(p);
    }
    mac.verify_slice(given).is_ok()
}

/// The last `capacity` delivery ids seen.
pub struct RecentIds {
    capacity: usize,
    seen: Mutex<(VecDeque<String>, HashSet<String>)>,
}

impl RecentIds {
    /// Remembers up to `capacity` ids.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            seen: Mutex::new((VecDeque::new(), HashSet::new())),
        }
    }

    /// Whether `id` is new (and remembers it); the oldest id is forgotten
    /// once `capacity` are held.
    pub fn first_time(&self, id: &str) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let (order, set) = &mut *seen;
        if !set.insert(id.to_owned()) {
            return false;
        }
        order.push_back(id.to_owned());
        if order.len() > self.capacity
            && let Some(old) = order.pop_front()
        {
            set.remove(&old);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_new_once_until_it_is_forgotten() {
        let ids = RecentIds::new(2);
        assert!(ids.first_time("a"));
        assert!(!ids.first_time("a"));
        assert!(ids.first_time("b"));
        assert!(ids.first_time("c"));
        assert!(ids.first_time("a"), "forgotten after two newer ones");
    }

    #[test]
    fn the_hmac_of_the_parts_together() {
        let mac = {
            let mut m = Hmac::<Sha256>::new_from_slice(b"key").expect("key");
            m.update(b"v0:1:body");
            m.finalize().into_bytes()
        };
        assert!(hmac_matches(b"key", &[b"v0:1:", b"body"], &mac));
        assert!(!hmac_matches(b"other", &[b"v0:1:", b"body"], &mac));
        assert!(!hmac_matches(b"key", &[b"v0:2:", b"body"], &mac));
    }
}
