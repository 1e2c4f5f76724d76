//! Progress reporting: the library says what it is doing; only the binary
//! draws bars or log lines.

/// Receives progress events from a build.
pub trait Reporter: Send + Sync {
    /// A stage starts (`total` units when known).
    fn stage(&self, name: &str, total: Option<u64>);
    /// `n` more units of the current stage are done.
    fn advance(&self, n: u64);
    /// The current stage is done.
    fn finish(&self, summary: &str);
    /// A notable event (a repository synced, a failure under `--keep-going`).
    fn note(&self, message: &str);
}

/// Reports nothing (tests, library callers).
pub struct Silent;

impl Reporter for Silent {
    fn stage(&self, _: &str, _: Option<u64>) {}
    fn advance(&self, _: u64) {}
    fn finish(&self, _: &str) {}
    fn note(&self, _: &str) {}
}
