//! Retrying what failed, less and less often: a remote that cannot be
//! reached, a repository whose sync failed, a build that failed. The first
//! retry waits one poll interval, each further failure doubles the wait, up
//! to [`MAX_BACKOFF`]; one success (or a push for it) starts over.

use std::time::{Duration, Instant};

/// The longest wait between two tries.
pub const MAX_BACKOFF: Duration = Duration::from_secs(15 * 60);

/// Consecutive failures of one thing, and when to try it again.
#[derive(Clone, Debug, Default)]
pub struct Backoff {
    failures: u32,
    until: Option<Instant>,
}

impl Backoff {
    /// Whether the thing may be tried now.
    pub fn ready(&self, now: Instant) -> bool {
        self.until.is_none_or(|t| now >= t)
    }

    /// Records one more failure; returns how long until the next try.
    pub fn failed(&mut self, every: Duration, now: Instant) -> Duration {
        self.failures = self.failures.saturating_add(1);
        let wait = every
            .saturating_mul(1 << (self.failures - 1).min(16))
            .min(MAX_BACKOFF);
        self.until = Some(now + wait);
        wait
    }

    /// Records a success (or a reason to try at once): back to no wait.
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Consecutive failures so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// How long until the next try (zero when ready).
    pub fn remaining(&self, now: Instant) -> Duration {
        self.until
            .map_or(Duration::ZERO, |t| t.saturating_duration_since(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_cap_and_a_success_starts_over() {
        let every = Duration::from_secs(60);
        let now = Instant::now();
        let mut b = Backoff::default();
        assert!(b.ready(now));
        let waits: Vec<u64> = (0..6).map(|_| b.failed(every, now).as_secs()).collect();
        assert_eq!(waits, [60, 120, 240, 480, 900, 900]);
        assert!(!b.ready(now));
        assert!(b.ready(now + MAX_BACKOFF));
        assert_eq!(b.failures(), 6);
        b.reset();
        assert!(b.ready(now));
        assert_eq!(b.remaining(now), Duration::ZERO);
    }
}
