//! Signing in on the web page: a visitor posts a token once (in a form body,
//! never in a URL) and gets an HttpOnly, SameSite=Strict cookie holding a
//! random session id. The server keeps, per id, the token's sha256 (the same
//! lookup the tokens file holds) and an expiry; each page looks the token up
//! again, so revoking the token ends its sessions. Sessions live in memory: a
//! restart signs everyone out.

use crate::auth::Caller;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The cookie's name.
pub const COOKIE: &str = "cairn_session";
/// How long a session lasts.
pub const LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Most sessions held at once (a login past it is refused until some expire).
const MAX_SESSIONS: usize = 10_000;

/// The signed-in sessions.
#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, ([u8; 32], Instant)>>,
}

impl Sessions {
    /// A new session for the token with sha256 `digest`; None when full.
    pub fn open(&self, digest: [u8; 32]) -> Option<String> {
        let mut b = [0u8; 32];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut b);
        let id = hex::encode(b);
        let now = Instant::now();
        let mut map = self.map.lock().ok()?;
        if map.len() >= MAX_SESSIONS {
            map.retain(|_, (_, expires)| *expires > now);
        }
        if map.len() >= MAX_SESSIONS {
            return None;
        }
        map.insert(id.clone(), (digest, now + LIFETIME));
        Some(id)
    }

    /// The token digest of a live session.
    pub fn digest(&self, id: &str) -> Option<[u8; 32]> {
        let now = Instant::now();
        let mut map = self.map.lock().ok()?;
        match map.get(id) {
            Some((d, expires)) if *expires > now => Some(*d),
            Some(_) => {
                map.remove(id);
                None
            }
            None => None,
        }
    }

    /// Ends a session.
    pub fn close(&self, id: &str) {
        if let Ok(mut map) = self.map.lock() {
            map.remove(id);
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_open_look_up_and_close() {
        let s = Sessions::default();
        let id = s.open([7; 32]).expect("open");
        assert_eq!(id.len(), 64);
        assert_eq!(s.digest(&id), Some([7; 32]));
        assert_eq!(s.digest("nope"), None);
        s.close(&id);
        assert_eq!(s.digest(&id), None);
    }
}
