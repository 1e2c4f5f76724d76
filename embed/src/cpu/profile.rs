//! Where the CPU pass's time goes, stage by stage, when asked
//! (`CAIRN_PROFILE_EMBED=1`; `embed_bench --profile` prints it): each stage's
//! time summed over every thread and text. Off, a stage costs one load of a
//! flag.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::Instant;

/// A stage of the forward pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Word, position and type embeddings and their layer norm.
    Embeddings,
    /// The query, key and value product.
    Qkv,
    /// Attention's scores, every head (a query's whole attention).
    Scores,
    /// Their softmax.
    Softmax,
    /// The values weighted by it.
    Context,
    /// The attention output product.
    AttnOut,
    /// Its residual and layer norm.
    Norm1,
    /// The intermediate product.
    Up,
    /// GELU over the intermediate rows.
    Gelu,
    /// The output product.
    Down,
    /// Its residual and layer norm.
    Norm2,
}

/// Every stage, in the order a layer runs them.
pub const STAGES: [Stage; 11] = [
    Stage::Embeddings,
    Stage::Qkv,
    Stage::Scores,
    Stage::Softmax,
    Stage::Context,
    Stage::AttnOut,
    Stage::Norm1,
    Stage::Up,
    Stage::Gelu,
    Stage::Down,
    Stage::Norm2,
];

static NANOS: [AtomicU64; 11] = [const { AtomicU64::new(0) }; 11];

/// 0: not yet known, 1: off, 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);

fn on() -> bool {
    match STATE.load(Ordering::Relaxed) {
        0 => {
            let on = std::env::var_os("CAIRN_PROFILE_EMBED").is_some_and(|v| v == "1");
            STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
        state => state == 2,
    }
}

/// Turns profiling on for this process, whatever the environment says.
pub fn enable() {
    STATE.store(2, Ordering::Relaxed);
}

/// Runs `f`, counting its time against `stage` when profiling is on.
pub(super) fn time<T>(stage: Stage, f: impl FnOnce() -> T) -> T {
    if !on() {
        return f();
    }
    let started = Instant::now();
    let out = f();
    NANOS[stage as usize].fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    out
}

/// Seconds spent in each stage so far, summed over threads.
pub fn seconds() -> Vec<(Stage, f64)> {
    STAGES
        .iter()
        .map(|&s| (s, NANOS[s as usize].load(Ordering::Relaxed) as f64 / 1e9))
        .collect()
}
