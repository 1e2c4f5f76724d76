//! CPU work (query embedding, ranking) off the async workers: a fixed set of
//! threads behind a bounded queue. A full queue answers at once, so a burst
//! gets 503 + Retry-After instead of unbounded latency; a job still queued at
//! its deadline is dropped unrun; a job whose caller stops waiting (its
//! deadline passed, or the connection went) sees its abandon flag raised, so
//! work that checks it stops; a panic in a job becomes an error, never a
//! dead worker.

use crossbeam_channel::{Sender, TrySendError, bounded};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

type Job = Box<dyn FnOnce() + Send>;

/// Why a job did not produce a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolError {
    /// The queue is full.
    Overloaded,
    /// The deadline passed before the result was ready.
    DeadlineExceeded,
    /// The job panicked.
    Panicked,
}

/// Worker threads and their bounded queue.
#[derive(Clone)]
pub struct CpuPool {
    tx: Sender<Job>,
    waiting: Arc<AtomicUsize>,
}

impl CpuPool {
    /// `workers` threads and room for `queue` jobs waiting.
    pub fn new(workers: usize, queue: usize) -> Self {
        let (tx, rx) = bounded::<Job>(queue.max(1));
        for i in 0..workers.max(1) {
            let rx = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("cairn-cpu-{i}"))
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        job();
                    }
                });
            if let Err(e) = spawned {
                tracing::error!(error = %e, "could not start a CPU worker");
            }
        }
        Self {
            tx,
            waiting: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Jobs queued or running.
    pub fn depth(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Runs `f` on a worker and waits for it, until `deadline`; raises
    /// `abandon` once it stops waiting, whatever the reason (the job's work
    /// should check it: see `cairn_search::Deadline`).
    pub async fn run<T, F>(
        &self,
        deadline: Instant,
        abandon: Arc<AtomicBool>,
        f: F,
    ) -> Result<T, PoolError>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        /// Raises the flag when the waiting ends: answered, timed out, or dropped.
        struct Raise(Arc<AtomicBool>);
        impl Drop for Raise {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let _raise = Raise(abandon);
        let (done, result) = tokio::sync::oneshot::channel();
        let waiting = Arc::clone(&self.waiting);
        let job: Job = Box::new(move || {
            if Instant::now() < deadline {
                let _ = done.send(catch_unwind(AssertUnwindSafe(f)));
            }
            waiting.fetch_sub(1, Ordering::Relaxed);
        });
        self.waiting.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = self.tx.try_send(job) {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            return Err(match e {
                TrySendError::Full(_) => PoolError::Overloaded,
                TrySendError::Disconnected(_) => PoolError::Panicked,
            });
        }
        match tokio::time::timeout_at(deadline.into(), result).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(panic))) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                tracing::error!(panic = %what, "a CPU job panicked");
                Err(PoolError::Panicked)
            }
            // Dropped unrun at its deadline, or still running past it.
            Ok(Err(_)) | Err(_) => Err(PoolError::DeadlineExceeded),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn full_queue_panics_and_deadlines_are_errors() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let pool = CpuPool::new(1, 1);
            let later = || Instant::now() + Duration::from_secs(5);
            let flag = || Arc::new(AtomicBool::new(false));
            assert_eq!(pool.run(later(), flag(), || 2 + 2).await, Ok(4));
            let boom: Result<(), _> = pool.run(later(), flag(), || panic!("boom")).await;
            assert_eq!(boom, Err(PoolError::Panicked));
            assert_eq!(
                pool.run(later(), flag(), || 1).await,
                Ok(1),
                "the worker survived"
            );
            // One job runs, one waits, the third finds the queue full.
            let slow = || std::thread::sleep(Duration::from_millis(300));
            let (a, b, c) = tokio::join!(
                pool.run(later(), flag(), slow),
                pool.run(later(), flag(), slow),
                pool.run(later(), flag(), slow)
            );
            let results = [a, b, c];
            assert!(results.contains(&Err(PoolError::Overloaded)), "{results:?}");
            let soon = Instant::now() + Duration::from_millis(50);
            assert_eq!(
                pool.run(soon, flag(), slow).await,
                Err(PoolError::DeadlineExceeded)
            );
        });
    }

    /// A job whose caller stopped waiting sees its flag raised and stops:
    /// the worker is free again long before the job would have ended.
    #[test]
    fn an_abandoned_job_is_told_and_stops() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let pool = CpuPool::new(1, 4);
            let abandon = Arc::new(AtomicBool::new(false));
            let seen = Arc::clone(&abandon);
            // Would spin for 10 s unless told.
            let job = move || {
                let start = Instant::now();
                while start.elapsed() < Duration::from_secs(10) {
                    if seen.load(Ordering::Relaxed) {
                        return start.elapsed();
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                start.elapsed()
            };
            let soon = Instant::now() + Duration::from_millis(100);
            assert_eq!(
                pool.run(soon, Arc::clone(&abandon), job).await,
                Err(PoolError::DeadlineExceeded)
            );
            assert!(abandon.load(Ordering::Relaxed));
            // The next job runs at once: the abandoned one gave the worker back.
            let started = Instant::now();
            let later = Instant::now() + Duration::from_secs(5);
            let fresh = Arc::new(AtomicBool::new(false));
            assert_eq!(pool.run(later, fresh, || 7).await, Ok(7));
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "{:?}",
                started.elapsed()
            );
        });
    }
}
