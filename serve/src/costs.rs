//! What a caller's work costs, and who may start more of it. Budgets count
//! the CPU pool's time a caller's jobs took (milliseconds a minute, charged
//! when each job ends, however it ends), not requests: one grep that scans
//! everything costs what a thousand small searches cost. Anonymous callers
//! (the web page's visitors, `--public-read`) also have at most
//! [`JOBS_PER_VISITOR`] jobs each at once, and all of them together at most
//! half the pool's workers, so a token holder always finds one free. A
//! token holder with a budget has at most half the workers' worth of jobs
//! at once: its budget is checked as a job starts and charged as it ends,
//! so without a cap a burst sent at once would all be admitted while the
//! budget still looked unspent, and hold every worker for a deadline.
//!
//! The HTTP middleware names each request's [`Payer`]; `ops` has every CPU
//! job [`Payer::enter`] before it is queued and [`Payer::charge`] when it
//! ends. Depends on `ratelimit`, `problem` and `limits`.

use crate::limits::ANONYMOUS_SHARE;
use crate::problem::ApiError;
use crate::ratelimit::RateLimiter;
use cairn_search::Code;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// CPU jobs one anonymous visitor may have queued or running at once.
pub const JOBS_PER_VISITOR: usize = 2;

/// The budgets of one server.
pub struct Costs {
    /// Each token holder's pool milliseconds a minute (None: unlimited).
    caller_ms: Option<RateLimiter>,
    /// Each anonymous visitor's (by address): a share of all of theirs.
    visitor_ms: Option<RateLimiter>,
    /// All anonymous callers' together.
    anonymous_ms: Option<RateLimiter>,
    /// Places for anonymous jobs, queued or running: half the workers.
    anonymous_places: Arc<Semaphore>,
    /// Jobs each payer with a cap (an anonymous visitor, a token holder
    /// with a budget) has queued or running now.
    jobs: Mutex<HashMap<String, usize>>,
    /// Jobs one token holder with a budget may have at once.
    jobs_per_caller: usize,
}

impl Costs {
    /// Budgets for a pool of `workers`: `caller_ms` pool milliseconds a
    /// minute for each token holder, `anonymous_ms` for all anonymous
    /// callers together (each visitor a [`ANONYMOUS_SHARE`] of it).
    pub fn new(workers: usize, caller_ms: Option<u32>, anonymous_ms: Option<u32>) -> Self {
        Self {
            caller_ms: caller_ms.map(RateLimiter::new),
            visitor_ms: anonymous_ms.map(|n| RateLimiter::new((n / ANONYMOUS_SHARE).max(1))),
            anonymous_ms: anonymous_ms.map(RateLimiter::new),
            anonymous_places: Arc::new(Semaphore::new((workers / 2).max(1))),
            jobs: Mutex::new(HashMap::new()),
            jobs_per_caller: (workers / 2).max(1),
        }
    }
}

/// Who pays for a call's CPU work.
#[derive(Clone)]
pub struct Payer {
    costs: Arc<Costs>,
    /// The caller's name, or `anonymous@<visitor>` for an anonymous one.
    key: String,
    anonymous: bool,
}

/// A job's place: held from before it is queued until it ends, or until it
/// is dropped unrun, so an abandoned job still counts while it runs.
pub struct Place {
    payer: Payer,
    /// Whether the payer's count of jobs holds this one.
    counted: bool,
    _anonymous: Option<OwnedSemaphorePermit>,
}

impl Drop for Place {
    fn drop(&mut self) {
        if self.counted {
            let mut jobs = self
                .payer
                .costs
                .jobs
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if let Some(n) = jobs.get_mut(&self.payer.key) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    jobs.remove(&self.payer.key);
                }
            }
        }
    }
}

impl Payer {
    /// The payer `key` (a caller's name, or `anonymous@<visitor>`) under `costs`.
    pub fn new(costs: Arc<Costs>, key: String, anonymous: bool) -> Self {
        Self {
            costs,
            key,
            anonymous,
        }
    }

    /// The budgets this payer draws on, with its key in each.
    fn budgets(&self) -> Vec<(&RateLimiter, &str)> {
        let c = &self.costs;
        match self.anonymous {
            true => [
                c.visitor_ms.as_ref().map(|l| (l, self.key.as_str())),
                c.anonymous_ms.as_ref().map(|l| (l, "anonymous")),
            ]
            .into_iter()
            .flatten()
            .collect(),
            false => c.caller_ms.iter().map(|l| (l, self.key.as_str())).collect(),
        }
    }

    /// A place for one more job, or why not: a budget in debt (429 with
    /// the seconds until it is paid back), a visitor with
    /// [`JOBS_PER_VISITOR`] jobs already or a token holder with a budget
    /// and half the workers' worth (429), or no anonymous place free
    /// before `until` (503).
    pub async fn enter(&self, until: Instant) -> Result<Place, ApiError> {
        let now = Instant::now();
        for (budget, key) in self.budgets() {
            if let Err(wait) = budget.check(key, now) {
                let who = match key {
                    "anonymous" => "anonymous use of this server",
                    _ => "this caller",
                };
                return Err(ApiError::new(
                    Code::RateLimited,
                    format!("{who} has used its CPU time for now; retry in {wait} s"),
                )
                .retry_after(wait));
            }
        }
        // The most jobs at once: a visitor's few, a token holder with a
        // budget half the workers, a token holder without one any number.
        let cap = match (self.anonymous, self.costs.caller_ms.is_some()) {
            (true, _) => Some((JOBS_PER_VISITOR, "one address")),
            (false, true) => Some((self.costs.jobs_per_caller, "one caller")),
            (false, false) => None,
        };
        let mut place = Place {
            payer: self.clone(),
            counted: false,
            _anonymous: None,
        };
        if let Some((cap, who)) = cap {
            let mut jobs = self.costs.jobs.lock().unwrap_or_else(|p| p.into_inner());
            let n = jobs.entry(self.key.clone()).or_default();
            if *n >= cap {
                return Err(ApiError::new(
                    Code::RateLimited,
                    format!("at most {cap} requests at a time from {who}; wait for the others"),
                )
                .retry_after(1));
            }
            *n += 1;
            // Counted from here: dropping the place gives the count back.
            place.counted = true;
        }
        if !self.anonymous {
            return Ok(place);
        }
        let places = Arc::clone(&self.costs.anonymous_places);
        match tokio::time::timeout_at(until.into(), places.acquire_owned()).await {
            Ok(Ok(permit)) => {
                place._anonymous = Some(permit);
                Ok(place)
            }
            _ => Err(ApiError::new(
                Code::Overloaded,
                "the workers anonymous callers may use are busy; retry shortly",
            )
            .retry_after(1)),
        }
    }

    /// Charges `spent` of the pool's time to every budget this payer draws on.
    pub fn charge(&self, spent: Duration) {
        let now = Instant::now();
        let ms = spent.as_secs_f64() * 1000.0;
        for (budget, key) in self.budgets() {
            budget.charge(key, ms, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Finding 4 of issue 57: 30 heavy jobs sent at once by a token holder
    /// with a budget were all admitted (the budget is charged as each
    /// ends), holding every worker; now half the workers' worth are, the
    /// rest refused at once, and another token holder still finds a place.
    #[test]
    fn a_token_holders_burst_holds_half_the_workers_at_most() {
        rt().block_on(async {
            let soon = || Instant::now() + Duration::from_millis(200);
            let costs = Arc::new(Costs::new(4, Some(5_000), None));
            let a = Payer::new(Arc::clone(&costs), "a".into(), false);
            let b = Payer::new(Arc::clone(&costs), "b".into(), false);
            let mut held = Vec::new();
            let mut refused = 0;
            for _ in 0..30 {
                match a.enter(soon()).await {
                    Ok(p) => held.push(p),
                    Err(e) => {
                        assert_eq!(e.status.as_u16(), 429);
                        refused += 1;
                    }
                }
            }
            assert_eq!((held.len(), refused), (2, 28));
            let _other = b.enter(soon()).await.expect("another token holder");
            held.pop();
            let _again = a.enter(soon()).await.expect("a place came back");
            // Without a budget, a token holder is trusted with any number.
            let open = Arc::new(Costs::new(4, None, None));
            let c = Payer::new(Arc::clone(&open), "c".into(), false);
            let mut many = Vec::new();
            for _ in 0..30 {
                many.push(c.enter(soon()).await.expect("no cap without a budget"));
            }
        });
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime")
    }

    #[test]
    fn a_visitor_pays_for_its_time_and_holds_few_places() {
        rt().block_on(async {
            let costs = Arc::new(Costs::new(4, None, Some(4_000)));
            let soon = || Instant::now() + Duration::from_millis(200);
            let a = Payer::new(Arc::clone(&costs), "anonymous@a".into(), true);
            let b = Payer::new(Arc::clone(&costs), "anonymous@b".into(), true);
            let bot = Payer::new(Arc::clone(&costs), "bot".into(), false);
            // Two jobs at once, not three.
            let p1 = a.enter(soon()).await.expect("first");
            let _p2 = a.enter(soon()).await.expect("second");
            let third = a.enter(soon()).await.err().expect("a third is refused");
            assert_eq!(third.status.as_u16(), 429);
            drop(p1);
            let _p3 = a.enter(soon()).await.expect("a place came back");
            // Half the 4 workers are anonymous places: b waits, then is refused.
            let full = b.enter(soon()).await.err().expect("no anonymous place");
            assert_eq!(full.status.as_u16(), 503);
            // A token holder is never kept out by anonymous jobs.
            let _t = bot.enter(soon()).await.expect("token holder");
            // 1,000 ms a minute is a's share; 1.5 s of work puts it in debt.
            a.charge(Duration::from_millis(1_500));
            let e = a.enter(soon()).await.err().expect("in debt");
            assert_eq!(e.status.as_u16(), 429);
            assert!(
                e.retry_after.is_some_and(|s| s >= 30),
                "{:?}",
                e.retry_after
            );
            bot.charge(Duration::from_secs(100));
            assert!(
                bot.enter(soon()).await.is_ok(),
                "no budget set for token holders"
            );
        });
    }
}
