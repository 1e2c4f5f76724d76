//! Signing in on the web page: a visitor posts a token once (in a form body,
//! never in a URL) and gets an HttpOnly, SameSite=Strict cookie holding a
//! random session id. The server keeps, per id, the token's sha256 (the same
//! lookup the tokens file holds) and an expiry; each page looks the token up
//! again, so revoking the token ends its sessions. Sessions live in memory: a
//! restart signs everyone out.

use crate::auth::Caller;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The cookie's name.
pub const COOKIE: &str = "cairn_session";
/// How long a session lasts.
pub const LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Most sessions held at once; past it the oldest is ended.
const MAX_SESSIONS: usize = 10_000;
/// Most sessions one token holds (browsers and devices of one person); past
/// it that token's oldest is ended, so one token cannot crowd out the others.
pub const MAX_PER_TOKEN: usize = 16;

/// One signed-in browser.
struct Session {
    /// sha256 of the token it signed in with.
    digest: [u8; 32],
    /// When it was opened (which session is oldest).
    opened: Instant,
}

/// The signed-in sessions.
#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    /// A new session for the token with sha256 `digest`. When that token
    /// already holds [`MAX_PER_TOKEN`] sessions its oldest ends; when the
    /// server holds [`MAX_SESSIONS`], the expired and then the oldest end.
    pub fn open(&self, digest: [u8; 32]) -> String {
        let mut b = [0u8; 32];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut b);
        let id = hex::encode(b);
        let now = Instant::now();
        let mut map = self.lock();
        let oldest = |map: &HashMap<String, Session>, mine: bool| {
            map.iter()
                .filter(|(_, s)| !mine || s.digest == digest)
                .min_by_key(|(_, s)| s.opened)
                .map(|(k, _)| k.clone())
        };
        if map.values().filter(|s| s.digest == digest).count() >= MAX_PER_TOKEN
            && let Some(k) = oldest(&map, true)
        {
            map.remove(&k);
        }
        if map.len() >= MAX_SESSIONS {
            map.retain(|_, s| now.duration_since(s.opened) < LIFETIME);
        }
        if map.len() >= MAX_SESSIONS
            && let Some(k) = oldest(&map, false)
        {
            map.remove(&k);
        }
        map.insert(
            id.clone(),
            Session {
                digest,
                opened: now,
            },
        );
        id
    }

    /// The token digest of a live session.
    pub fn digest(&self, id: &str) -> Option<[u8; 32]> {
        let mut map = self.lock();
        match map.get(id) {
            Some(s) if s.opened.elapsed() < LIFETIME => Some(s.digest),
            Some(_) => {
                map.remove(id);
                None
            }
            None => None,
        }
    }

    /// Ends a session.
    pub fn close(&self, id: &str) {
        self.lock().remove(id);
    }

    /// Ends every session whose token `valid` no longer accepts (revoked or
    /// expired), so a reloaded tokens file frees their room at once.
    pub fn retain_tokens(&self, valid: impl Fn(&[u8; 32]) -> bool) {
        self.lock().retain(|_, s| valid(&s.digest));
    }

    /// How many sessions are held.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no session is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The caller a request's session cookie stands for, if it is live and its token still valid.
    pub fn caller(
        &self,
        cookie: Option<&str>,
        auth: &crate::auth::Authenticator,
    ) -> Option<Caller> {
        let d = self.digest(cookie?)?;
        auth.caller_of_digest(&d)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        // Every change leaves the map whole, so a poisoned lock is still usable.
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_open_look_up_and_close() {
        let s = Sessions::default();
        let id = s.open([7; 32]);
        assert_eq!(id.len(), 64);
        assert_eq!(s.digest(&id), Some([7; 32]));
        assert_eq!(s.digest("nope"), None);
        s.close(&id);
        assert_eq!(s.digest(&id), None);
    }

    #[test]
    fn one_token_holds_a_bounded_number_of_sessions_and_revoked_ones_go() {
        let s = Sessions::default();
        let first = s.open([1; 32]);
        for _ in 0..MAX_PER_TOKEN * 3 {
            s.open([1; 32]);
        }
        let other = s.open([2; 32]);
        assert_eq!(s.len(), MAX_PER_TOKEN + 1);
        assert_eq!(s.digest(&first), None, "the oldest went first");
        s.retain_tokens(|d| *d != [1; 32]);
        assert_eq!(s.len(), 1);
        assert_eq!(s.digest(&other), Some([2; 32]));
    }
}
