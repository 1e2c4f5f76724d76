//! The `search` call (the passages that answer a question): its request,
//! its answer and their text form here; how it runs in `run.rs`
//! (candidates from BM25 and exact cosine over what the caller may see,
//! fused, weighted, merged per document and widened to readable spans).

//! `focus.rs` picks each hit's best few lines; `id.rs` names a cited passage.

mod focus;
mod id;
mod run;

pub(crate) use focus::focus_words;
pub use id::{CitationLink, PassageId, PassageIdError, title};

use crate::engine::{PageCitation, TextFormat};
use crate::filters::{Filters, Mode};
use serde::Serialize;
use std::fmt;
use utoipa::ToSchema;

/// How strongly a hit answers the query, 0 to 1: its cosine when the query
/// was embedded, else its BM25 score squashed into the same range.
pub(crate) fn evidence(hit: &Hit, mode: Mode) -> f32 {
    match mode {
        Mode::Hybrid | Mode::Vector => hit.breakdown.vector,
        Mode::Bm25 => hit.breakdown.bm25 / (hit.breakdown.bm25 + 10.0),
    }
}

/// Most hits a search returns.
pub const MAX_LIMIT: usize = 50;

/// Hits returned when a search names no limit.
pub const DEFAULT_LIMIT: usize = 10;

/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;

/// Most other phrasings a search fuses with its query.
pub const MAX_QUERIES: usize = 5;

/// A search.
#[derive(Clone, Debug, Default)]
pub struct SearchRequest {
    /// What the user asked.
    pub query: String,
    /// Other phrasings of the same question (at most [`MAX_QUERIES`]),
    /// fused with `query`: a calling model's keyword rewrites, which name
    /// the identifiers the user did not.
    pub queries: Vec<String>,
    /// Hits wanted (1..=50, default 10).
    pub limit: usize,
    /// Filters.
    pub filters: Filters,
    /// Evidence below this makes the answer `insufficient_evidence`.
    pub threshold: Option<f32>,
    /// Ranking mode.
    pub mode: Mode,
    /// The caller's access groups (None: trusted caller, sees everything).
    pub groups: Option<Vec<String>>,
    /// When the answer stops being wanted: the search gives up at its next
    /// stage boundary rather than running on unread.
    pub deadline: crate::Deadline,
}

/// How a hit's score came about.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct ScoreBreakdown {
    /// BM25 score of the best chunk (0 when BM25 did not find it).
    pub bm25: f32,
    /// Cosine similarity of the best chunk with the query (0 when not computed).
    pub vector: f32,
    /// Reciprocal-rank-fusion score.
    pub rrf: f32,
    /// Static and runtime weight applied after fusion: the product of `priors`.
    pub weight: f32,
    /// Each prior of `weight`, named (in process only: the wire carries their product).
    #[serde(skip)]
    #[schema(ignore)]
    pub priors: crate::rank::Priors,
}

/// One cited passage.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct Hit {
    /// `<category>/<repo>/<path>`.
    pub doc_id: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// First line of the hit's focus: the few lines (at most 15) within the
    /// span that answer best; cite these when the whole span is too much.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus_start: Option<u32>,
    /// Last line of the focus, inclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus_end: Option<u32>,
    /// The best few lines, query terms marked with `**`.
    pub snippet: String,
    /// The form the snippet is in (a notebook's cells, or raw lines).
    pub text_format: TextFormat,
    /// Final score (higher is better).
    pub score: f32,
    /// Its parts.
    pub breakdown: ScoreBreakdown,
    /// Repository name.
    pub repo: String,
    /// Category.
    pub category: String,
    /// Toolkit.
    pub toolkit: String,
    /// Doctype.
    #[schema(value_type = String)]
    #[schemars(with = "String")]
    pub doctype: cairn_index::Doctype,
    /// Section title or definition name.
    pub title: String,
    /// On the default branch.
    pub github_url: String,
    /// On the exact commit.
    pub permalink: String,
    /// sha256 of the whole file.
    pub content_sha256: String,
    /// The version answering.
    pub index_version: String,
    /// For a PDF: the page the hit is on and its lines within that page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<PageCitation>,
    /// What the hit's lines define (functions, classes, constants, macros
    /// starting in its span), each with its line: where to go from a hit
    /// that is a definition.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub defines: Vec<crate::definitions::Defined>,
    /// The newest commit among those that last changed the hit's lines,
    /// where the version records line history (`history` tells the rest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_changed: Option<crate::history::LastChanged>,
}

/// The answer to a search.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct SearchResponse {
    /// The query as understood.
    pub query: String,
    /// The mode actually used.
    pub mode: Mode,
    /// Hits, best first.
    pub hits: Vec<Hit>,
    /// The best hit is below the threshold (or there is none): say "I don't know".
    pub insufficient_evidence: bool,
    /// Why the mode differs from the one asked, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// The version answering.
    pub index_version: String,
    /// When that version was built (RFC 3339): how old a citation's commit
    /// can be (`/version` says how far each repository is behind).
    pub built_at: String,
}

impl Hit {
    /// The hit as the text forms name it: the lines to read first (its
    /// focus, inside the passage cited), then its toolkit and doctype:
    /// `doc_id:fs-fe (in start-end)  [toolkit doctype]`.
    pub fn headline(&self) -> String {
        let cited = match (self.focus_start, self.focus_end) {
            (Some(fs), Some(fe)) => format!(
                "{}:{fs}-{fe} (in {}-{})",
                self.doc_id, self.start_line, self.end_line
            ),
            _ => format!("{}:{}-{}", self.doc_id, self.start_line, self.end_line),
        };
        format!("{cited}  [{} {}]", self.toolkit, self.doctype)
    }
}

impl fmt::Display for SearchResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(n) = &self.notice {
            writeln!(f, "note: {n}")?;
        }
        if self.insufficient_evidence {
            writeln!(f, "insufficient evidence: nothing answers this confidently")?;
        }
        for (i, h) in self.hits.iter().enumerate() {
            writeln!(
                f,
                "{:2}. {}  score {:.4} (bm25 {:.2}, cos {:.3}, w {:.2})",
                i + 1,
                h.headline(),
                h.score,
                h.breakdown.bm25,
                h.breakdown.vector,
                h.breakdown.weight
            )?;
            if !h.title.is_empty() {
                writeln!(f, "    § {}", h.title)?;
            }
            if let Some(p) = &h.page {
                match p.end_page {
                    Some(e) => writeln!(
                        f,
                        "    page {}, line {} to page {e}, line {}",
                        p.page, p.start_line, p.end_line
                    )?,
                    None => writeln!(
                        f,
                        "    page {}, lines {}-{}",
                        p.page, p.start_line, p.end_line
                    )?,
                }
            }
            for line in crate::rank::unmark(&h.snippet, &self.query).lines() {
                writeln!(f, "    | {line}")?;
            }
            writeln!(f, "    {}", h.github_url)?;
            writeln!(f, "    permalink: {}", h.permalink)?;
        }
        let mode = serde_json::to_string(&self.mode).unwrap_or_default();
        writeln!(
            f,
            "({} hits, {} mode, index {})",
            self.hits.len(),
            mode.trim_matches('"'),
            self.index_version
        )
    }
}
