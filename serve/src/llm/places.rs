//! How many callers may wait on the configured model at once (each wait
//! holds a thread: a blocking one for `ask`, a relay for a streamed
//! answer): one count for `ask` and the gateway, so neither can take every
//! thread the server has, and a share of it per caller, so one caller
//! cannot take every place.

use std::collections::HashMap;
use std::sync::Mutex;

/// Most waits on the model at once.
pub const MAX_MODEL_WAITS: usize = 64;

/// Most waits on the model one caller may hold at once.
pub const MAX_MODEL_WAITS_EACH: usize = 8;

/// Waits running now, in all and by caller.
static WAITS: Mutex<Option<Waits>> = Mutex::new(None);

/// The counts behind [`WAITS`].
#[derive(Default)]
struct Waits {
    all: usize,
    by_caller: HashMap<String, usize>,
}

/// One of [`MAX_MODEL_WAITS`] places, held by a caller while a wait runs.
#[derive(Debug)]
pub struct ModelPlace {
    caller: String,
}

impl ModelPlace {
    /// A place for `caller`, or `None` when every place, or the caller's
    /// share of them, is taken.
    pub fn take(caller: &str) -> Option<Self> {
        let mut guard = WAITS.lock().unwrap_or_else(|e| e.into_inner());
        let waits = guard.get_or_insert_with(Waits::default);
        let mine = waits.by_caller.get(caller).copied().unwrap_or(0);
        if waits.all >= MAX_MODEL_WAITS || mine >= MAX_MODEL_WAITS_EACH {
            return None;
        }
        waits.all += 1;
        waits.by_caller.insert(caller.to_owned(), mine + 1);
        Some(ModelPlace {
            caller: caller.to_owned(),
        })
    }
}

impl Drop for ModelPlace {
    fn drop(&mut self) {
        let mut guard = WAITS.lock().unwrap_or_else(|e| e.into_inner());
        let waits = guard.get_or_insert_with(Waits::default);
        waits.all = waits.all.saturating_sub(1);
        if let Some(n) = waits.by_caller.get_mut(&self.caller) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                waits.by_caller.remove(&self.caller);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_caller_takes_its_share_and_others_still_get_places() {
        let mine: Vec<ModelPlace> = (0..MAX_MODEL_WAITS_EACH)
            .map(|_| ModelPlace::take("greedy").expect("a place"))
            .collect();
        assert!(ModelPlace::take("greedy").is_none());
        let other = ModelPlace::take("patient").expect("another caller's place");
        drop(mine);
        assert!(ModelPlace::take("greedy").is_some());
        drop(other);
    }
}
