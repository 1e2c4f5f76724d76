//! Per-caller budgets: a token bucket for each caller name, so one busy bot
//! cannot starve the others (429 + Retry-After when empty). A bucket counts
//! requests ([`RateLimiter::take`]) or a cost measured after the work
//! ([`RateLimiter::charge`], milliseconds of the CPU pool), which may leave it
//! in debt: the caller is refused until it has paid it back.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

/// Callers tracked before idle buckets are forgotten.
const MAX_TRACKED: usize = 10_000;

struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// Token buckets refilled at `per_minute` requests a minute, holding at most that many.
pub struct RateLimiter {
    per_minute: f64,
    /// The most debt a charge may leave, in minutes of refill.
    debt_minutes: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl RateLimiter {
    /// Allows each caller `per_minute` requests a minute, in bursts of up to as many.
    pub fn new(per_minute: u32) -> Self {
        Self {
            per_minute: f64::from(per_minute.max(1)),
            debt_minutes: 1.0,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// [`RateLimiter::new`], a charge leaving at most `minutes` of debt
    /// (costs known only after the fact, several at once, can run deep).
    pub fn with_debt(per_minute: u32, minutes: u32) -> Self {
        Self {
            debt_minutes: f64::from(minutes.max(1)),
            ..Self::new(per_minute)
        }
    }

    /// Takes one request from `caller`'s bucket: Ok, or the seconds until one is free.
    pub fn take(&self, caller: &str, now: Instant) -> Result<(), u32> {
        self.with_bucket(caller, now, |b, rate| {
            if b.tokens >= 1.0 {
                b.tokens -= 1.0;
                Ok(())
            } else {
                Err(((1.0 - b.tokens) / rate).ceil().max(1.0) as u32)
            }
        })
    }

    /// Ok while `caller` has something left; else the seconds until it has.
    pub fn check(&self, caller: &str, now: Instant) -> Result<(), u32> {
        self.with_bucket(caller, now, |b, rate| match b.tokens > 0.0 {
            true => Ok(()),
            false => Err(((1.0 - b.tokens) / rate).ceil().max(1.0) as u32),
        })
    }

    /// Takes `amount` from `caller`'s bucket after the fact, into debt if it
    /// holds less (at most a minute's worth of debt).
    pub fn charge(&self, caller: &str, amount: f64, now: Instant) {
        let floor = -self.per_minute * self.debt_minutes;
        self.with_bucket(caller, now, |b, _| {
            b.tokens = (b.tokens - amount.max(0.0)).max(floor);
        });
    }

    /// Runs `f` on `caller`'s bucket refilled to `now`, with the refill rate per second.
    fn with_bucket<T>(
        &self,
        caller: &str,
        now: Instant,
        f: impl FnOnce(&mut Bucket, f64) -> T,
    ) -> T {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let rate = self.per_minute / 60.0;
        if buckets.len() >= MAX_TRACKED && !buckets.contains_key(caller) {
            // A full bucket is indistinguishable from a forgotten one.
            let cap = self.per_minute;
            buckets
                .retain(|_, b| b.tokens + now.duration_since(b.updated).as_secs_f64() * rate < cap);
        }
        let b = buckets.entry(caller.to_owned()).or_insert(Bucket {
            tokens: self.per_minute,
            updated: now,
        });
        let refill = now.saturating_duration_since(b.updated).as_secs_f64() * rate;
        b.tokens = (b.tokens + refill).min(self.per_minute);
        b.updated = b.updated.max(now);
        f(b, rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn buckets_empty_and_refill_per_caller() {
        let rl = RateLimiter::new(2);
        let t = Instant::now();
        assert_eq!(rl.take("a", t), Ok(()));
        assert_eq!(rl.take("a", t), Ok(()));
        assert_eq!(rl.take("a", t), Err(30));
        assert_eq!(rl.take("b", t), Ok(()), "callers have their own buckets");
        assert_eq!(rl.take("a", t + Duration::from_secs(30)), Ok(()));
    }

    #[test]
    fn a_cost_charged_after_the_work_refuses_until_paid_back() {
        // 600 ms a minute: 10 ms a second.
        let rl = RateLimiter::new(600);
        let t = Instant::now();
        assert_eq!(rl.check("a", t), Ok(()));
        rl.charge("a", 900.0, t);
        // 300 ms in debt (the floor is one minute's worth: 600) takes 31 s to repay.
        assert_eq!(rl.check("a", t), Err(31));
        assert_eq!(rl.check("b", t), Ok(()), "callers pay their own");
        assert_eq!(rl.check("a", t + Duration::from_secs(31)), Ok(()));
        rl.charge("a", 1e9, t + Duration::from_secs(31));
        assert_eq!(
            rl.check("a", t + Duration::from_secs(31)),
            Err(61),
            "debt is floored"
        );
    }
}
