//! When an answer stops being wanted: a time, and a flag the caller raises
//! when it gives up sooner (the connection dropped, a 503 already sent). Long
//! work checks it between stages, and grep also within a file, so abandoned
//! work stops instead of holding a CPU thread. Used by every request type
//! that may run long; depends on nothing else here.

use crate::error::SearchError;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A request's deadline (the default: none).
#[derive(Clone, Debug, Default)]
pub struct Deadline {
    at: Option<Instant>,
    abandoned: Option<Arc<AtomicBool>>,
}

impl Deadline {
    /// No deadline: the work runs to its end (the CLI, evaluations).
    pub fn none() -> Self {
        Self::default()
    }

    /// The answer stops being wanted at `at`.
    pub fn at(at: Instant) -> Self {
        Self {
            at: Some(at),
            abandoned: None,
        }
    }

    /// The same, and also once `flag` is raised.
    pub fn or_when(self, flag: Arc<AtomicBool>) -> Self {
        Self {
            abandoned: Some(flag),
            ..self
        }
    }

    /// The time it passes at, if it has one.
    pub fn instant(&self) -> Option<Instant> {
        self.at
    }

    /// Whether the answer is no longer wanted.
    pub fn passed(&self) -> bool {
        self.at.is_some_and(|at| Instant::now() >= at)
            || self
                .abandoned
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Gives up on work nobody will read.
    pub fn check(&self) -> Result<(), SearchError> {
        match self.passed() {
            true => Err(SearchError::DeadlineExceeded),
            false => Ok(()),
        }
    }

    /// A deadline `share` (0 to 1) of the time left from now, for work that
    /// answers with what it has (grep's partial page) while its caller is
    /// still waiting for it; abandoned when this one is.
    pub fn sooner(&self, share: f64) -> Self {
        let at = self.at.map(|at| {
            let now = Instant::now();
            let left = at.saturating_duration_since(now);
            now + Duration::from_secs_f64(left.as_secs_f64() * share.clamp(0.0, 1.0))
        });
        Self {
            at,
            abandoned: self.abandoned.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_passes_at_its_time_or_when_abandoned() {
        assert!(!Deadline::none().passed());
        assert!(Deadline::at(Instant::now()).passed());
        let later = Deadline::at(Instant::now() + Duration::from_secs(60));
        assert!(!later.passed());
        let flag = Arc::new(AtomicBool::new(false));
        let d = later.clone().or_when(Arc::clone(&flag));
        let sooner = d.sooner(0.5);
        assert!(!d.passed() && !sooner.passed());
        flag.store(true, Ordering::Relaxed);
        assert!(
            d.passed() && sooner.passed(),
            "abandoned, and so is the sooner one"
        );
        assert!(matches!(d.check(), Err(SearchError::DeadlineExceeded)));
        let half = Deadline::at(Instant::now() + Duration::from_secs(10)).sooner(0.5);
        let at = half.at.expect("a time");
        let left = at.saturating_duration_since(Instant::now());
        assert!(
            left <= Duration::from_secs(5) && left > Duration::from_secs(4),
            "{left:?}"
        );
    }
}
