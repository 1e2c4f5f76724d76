//! How many callers may wait on the configured model at once (each wait
//! holds a thread: a blocking one for `ask`, a relay for a streamed
//! answer): one count for `ask` and the gateway, so neither can take every
//! thread the server has.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Most waits on the model at once.
pub const MAX_MODEL_WAITS: usize = 64;

/// Waits running now.
static WAITS: AtomicUsize = AtomicUsize::new(0);

/// One of [`MAX_MODEL_WAITS`] places, held while a wait runs.
#[derive(Debug)]
pub struct ModelPlace(());

impl ModelPlace {
    /// A place, or `None` when every one is taken.
    pub fn take() -> Option<Self> {
        WAITS
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_MODEL_WAITS).then_some(n + 1)
            })
            .ok()
            .map(|_| ModelPlace(()))
    }
}

impl Drop for ModelPlace {
    fn drop(&mut self) {
        WAITS.fetch_sub(1, Ordering::AcqRel);
    }
}
