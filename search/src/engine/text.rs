//! A span's text for a reader: the raw lines byte for byte, or for a notebook
//! the cells the span overlaps (see [`cairn_index::notebook`]). Search
//! snippets, retrieve and context all read spans through here.

use super::Engine;
use cairn_index::LineSpan;
use cairn_index::notebook::Notebook;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
use utoipa::ToSchema;

/// A span's text and the form it is in.
#[derive(Clone, Debug)]
pub(crate) struct SpanText {
    /// The text.
    pub text: String,
    /// Its form.
    pub format: TextFormat,
    /// For `notebook-cells`, the raw line each line of `text` stands for; empty for `raw`.
    pub raw_lines: Vec<u32>,
}

impl SpanText {
    /// The raw line of the last whole line of the text (of `span`) that ends
    /// within `budget` bytes; `span.start` when not even the first does.
    pub(crate) fn last_line_within(&self, span: LineSpan, budget: usize) -> u32 {
        let mut used = 0;
        let fit = self
            .text
            .split_inclusive('\n')
            .take_while(|l| {
                used += l.len();
                used <= budget
            })
            .count();
        match fit {
            0 => span.start,
            n => self.format.line_number(&self.raw_lines, span.start, n - 1),
        }
    }
}

/// Each notebook's cells, parsed the first time one of its spans is read.
pub(crate) struct Notebooks(Vec<OnceLock<Option<Notebook>>>);

impl Notebooks {
    /// An empty cache for `docs` documents.
    pub(crate) fn new(docs: usize) -> Self {
        Self((0..docs).map(|_| OnceLock::new()).collect())
    }
}

impl Engine {
    /// The cells of a notebook document; `None` for other documents and for a
    /// notebook that does not parse (it is then read as raw lines).
    pub(crate) fn notebook(&self, doc: u32) -> Option<&Notebook> {
        // The language, as the chunker decides it, not the doctype (a README.ipynb is a readme).
        if self.snap.docs[doc as usize].language != cairn_index::Language::Notebook {
            return None;
        }
        self.notebooks.0[doc as usize]
            .get_or_init(|| {
                let bytes = self.snap.doc_bytes(doc);
                let text = std::str::from_utf8(bytes).ok()?;
                Notebook::parse(text, self.snap.line_index(doc))
            })
            .as_ref()
    }

    /// The text of `span` (within the document): its cells for a notebook
    /// unless `raw`, else the exact lines. A notebook span that holds no cell
    /// source (only outputs or metadata) is shown raw.
    pub(crate) fn span_text(&self, doc: u32, span: LineSpan, raw: bool) -> SpanText {
        let rendered = (!raw)
            .then(|| self.notebook(doc))
            .flatten()
            .and_then(|nb| nb.render(span));
        match rendered {
            Some(r) => SpanText {
                text: r.text,
                format: TextFormat::NotebookCells,
                raw_lines: r.raw_lines,
            },
            None => SpanText {
                text: self
                    .snap
                    .span_bytes(doc, span)
                    .map(|(b, _)| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default(),
                format: TextFormat::Raw,
                raw_lines: Vec::new(),
            },
        }
    }
}

/// Most lines one retrieve returns.
pub const MAX_SPAN_LINES: u32 = 400;
/// Most bytes of text one retrieve (or one whole retrieve_batch) returns, so a
/// response stays well under GPT Actions' 100,000-character limit.
pub const MAX_TEXT_BYTES: usize = 48_000;

/// The form a passage's text is in.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ToSchema,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum TextFormat {
    /// The file's lines, byte for byte.
    #[default]
    Raw,
    /// A notebook's cells the span overlaps: decoded sources (markdown as
    /// markdown, code fenced), one `<!-- cell N: kind -->` line before each,
    /// outputs left out. The span and its links stay those of the raw lines.
    NotebookCells,
}

impl TextFormat {
    /// The raw line of the file that line `i` (0-based) of a text in this form
    /// stands for, when the text shows lines from `start` (`raw_lines` is the
    /// map a notebook's cells carry).
    pub fn line_number(self, raw_lines: &[u32], start: u32, i: usize) -> u32 {
        match self {
            Self::Raw => start.saturating_add(i as u32),
            Self::NotebookCells => raw_lines.get(i).copied().unwrap_or(start),
        }
    }
}
