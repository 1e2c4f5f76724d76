//! [`Engine::explain`]: pasted error text → where the indexed code raises it,
//! the traceback's frames mapped onto indexed documents, and the passages
//! that explain it. `parse` reads the text, `template` matches messages
//! against what the source writes, `sites` lists every raising statement
//! (built once per opened snapshot). Depends on the engine's search and links.

mod parse;
mod render;
mod run;

pub use crate::raises::{Match, Piece, Syntax, Template};
pub use parse::{Frame, ParsedError, Shape, parse};

use crate::passages::Hit;
use serde::Serialize;
use utoipa::ToSchema;

/// The most text one explain reads, in bytes.
pub const MAX_TEXT_BYTES: usize = 16 * 1024;
/// Raise sites returned, at most.
const MAX_SITES: usize = 5;
/// Explaining passages, by default and at most.
pub const DEFAULT_EXPLAIN_LIMIT: usize = 5;
const MAX_EXPLAIN_LIMIT: usize = 20;
/// How much of a message the matcher reads (a longer one is a log dump).
const MAX_MESSAGE_CHARS: usize = 2_000;
/// Frames read from one traceback, innermost first kept.
const MAX_FRAMES: usize = 64;
/// A literal shorter than this proves nothing (`": "`, `"x"`).
const MIN_LITERAL: usize = 4;

/// An explain call.
#[derive(Clone, Debug, Default)]
pub struct ExplainRequest {
    /// The pasted traceback, log excerpt or message (≤ 16 KB).
    pub text: String,
    /// Only this toolkit's code and docs.
    pub toolkit: Option<String>,
    /// The version the user has installed, when known.
    pub version: Option<String>,
    /// Explaining passages wanted (1..=20, default 5).
    pub limit: usize,
    /// The caller's access groups (None: sees everything).
    pub groups: Option<Vec<String>>,
    /// When the answer stops being wanted.
    pub deadline: crate::Deadline,
}

/// Exact lines of an indexed document, with both links.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct Cited {
    /// The document.
    pub doc_id: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// On the default branch.
    pub github_url: String,
    /// On the exact commit.
    pub permalink: String,
}

/// A statement that raises the error.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct RaiseSite {
    /// Where it is.
    #[serde(flatten)]
    pub at: Cited,
    /// The class it raises as written (`ValueError`, `std::runtime_error`).
    pub exception: String,
    /// Its enclosing function (`EnsembleSampler.run_mcmc`), empty at module level.
    pub function: String,
    /// Its message as the source writes it, `{}` for each computed part.
    pub template: String,
    /// Share of the pasted message its literal text accounts for (0 to 1).
    pub explained: f32,
    /// The traceback's own frame points into this statement.
    pub at_frame: bool,
    /// The statement's source lines.
    pub source: String,
    /// When its lines last changed, where the version records line history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_changed: Option<crate::history::LastChanged>,
}

/// How a frame's line was found in the indexed document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Located {
    /// The printed line number holds the printed source text.
    Line,
    /// No source text was printed; the line number is taken as given.
    LineUnchecked,
    /// The printed source text is on another line (another version of the file).
    Moved,
    /// Found by the function's definition (the text is not in the indexed file).
    Function,
    /// Only the file was found.
    File,
}

/// One traceback frame, and the indexed lines it stands for.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct MappedFrame {
    /// The frame as printed.
    pub frame: Frame,
    /// The indexed lines, when the file is indexed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<Cited>,
    /// How the line was found (absent when the file is not indexed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub located: Option<Located>,
}

/// What the index knows of the raising lines' history.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct History {
    /// Whether any history was found.
    pub available: bool,
    /// Why not, or what it covers.
    pub note: String,
}

impl History {
    /// What the index knows of when the raising lines changed: the best raise
    /// site's newest commit, where the version records line history.
    pub(crate) fn of(sites: &[RaiseSite]) -> History {
        match sites
            .iter()
            .find_map(|s| Some((s, s.last_changed.as_ref()?)))
        {
            Some((site, c)) => History {
                available: true,
                note: format!(
                    "{}:{}-{} last changed {} in {}: {} (the history operation tells each line)",
                    site.at.doc_id,
                    site.at.start_line,
                    site.at.end_line,
                    c.date.get(..10).unwrap_or(&c.date),
                    c.sha,
                    c.summary
                ),
            },
            None => History {
                available: false,
                note: match sites.is_empty() {
                    true => "no raise site, so no history of the raising lines".to_owned(),
                    false => {
                        "this index version records no history of the raising lines".to_owned()
                    }
                },
            },
        }
    }
}

/// The answer to an explain call.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct ExplainResponse {
    /// What the text says.
    pub parsed: ParsedError,
    /// Where the indexed code raises it, best first.
    pub raise_sites: Vec<RaiseSite>,
    /// The traceback's frames, outermost first, mapped to indexed lines.
    pub frames: Vec<MappedFrame>,
    /// Passages that explain it (the hybrid search, seeded with the parsed parts).
    pub explains: Vec<Hit>,
    /// The query the explaining passages answer.
    pub query: String,
    /// When the raising lines last changed.
    pub history: History,
    /// What the caller should know (a version that differs from the indexed one …).
    pub notices: Vec<String>,
    /// Nothing indexed raises or explains it: say "I don't know".
    pub insufficient_evidence: bool,
    /// The version answering.
    pub index_version: String,
}

#[cfg(test)]
mod tests;
