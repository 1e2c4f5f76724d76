//! What a grep asks: its pattern and how to match it, the filters, the
//! page, and the bounds each is held to. A leaf: the scan and the pattern
//! compiler both read it.

use crate::filters::Filters;

/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1000;
/// Matches returned when a grep names no limit.
pub const DEFAULT_GREP_LIMIT: usize = 100;
/// Most matches one grep returns.
pub const MAX_GREP_LIMIT: usize = 1000;
/// Most lines of context on each side of a match.
pub const MAX_CONTEXT: u32 = 5;
/// Longest line returned; longer ones are cut (a minified line can be megabytes).
pub const MAX_LINE_CHARS: usize = 500;

/// A grep.
#[derive(Clone, Debug, Default)]
pub struct GrepRequest {
    /// What to find.
    pub pattern: String,
    /// `pattern` is a regular expression (else a literal).
    pub regex: bool,
    /// Letters must match in case (git grep's default).
    pub case_sensitive: bool,
    /// Match only where the pattern stands as a whole word (`\b…\b`).
    pub word: bool,
    /// Filters, as a search takes them.
    pub filters: Filters,
    /// Only paths (inside their repository) matching this glob, e.g. `*.py`, `src/**/*.cpp`.
    pub path: Option<String>,
    /// Lines of context on each side (0 to 5).
    pub context: u32,
    /// Matches wanted (1 to 1,000).
    pub limit: usize,
    /// Where the previous page stopped ([`GrepResponse::next_cursor`]).
    pub cursor: Option<String>,
    /// The caller's access groups (None: sees everything).
    pub groups: Option<Vec<String>>,
    /// When the answer stops being wanted: the scan stops there and says so.
    pub deadline: crate::Deadline,
}
