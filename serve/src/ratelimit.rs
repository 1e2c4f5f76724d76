//! Per-caller request budgets: a token bucket for each caller name, so one
//! busy bot cannot starve the others (429 + Retry-After when empty).

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
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl RateLimiter {
    /// Allows each caller `per_minute` requests a minute, in bursts of up to as many.
    pub fn new(per_minute: u32) -> Self {
        Self {
            per_minute: f64::from(per_minute.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request from `caller`'s bucket: Ok, or the seconds until one is free.
    pub fn take(&self, caller: &str, now: Instant) -> Result<(), u32> {
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
        let refill = now.duration_since(b.updated).as_secs_f64() * rate;
        b.tokens = (b.tokens + refill).min(self.per_minute);
        b.updated = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - b.tokens) / rate).ceil().max(1.0) as u32)
        }
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
}
