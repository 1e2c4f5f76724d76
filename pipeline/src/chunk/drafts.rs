//! What chunking makes, before anything is embedded: the limits a chunk
//! keeps to, sections (a document's structural units), and chunk and
//! subchunk drafts. A leaf: every step of chunking reads and makes these.

use cairn_index::LineSpan;

/// Limits a chunk must respect.
#[derive(Clone, Copy, Debug)]
pub struct ChunkLimits {
    /// Most lines in one chunk.
    pub max_lines: u32,
    /// Lines repeated between windows of one long section.
    pub overlap: u32,
    /// Sections shorter than this are packed with their neighbours.
    pub min_lines: u32,
    /// Most model tokens of chunk text (the header and special tokens already taken off).
    pub max_tokens: usize,
}

/// One chunk before embedding.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChunkDraft {
    /// Lines of the raw file.
    pub span: LineSpan,
    /// Section title or definition name.
    pub title: String,
    /// Names defined in the chunk.
    pub symbols: Vec<String>,
    /// Text to index and embed.
    pub text: String,
    /// Estimated model tokens of `text`.
    pub tokens: usize,
    /// The subchunks that vote for this chunk.
    #[serde(default)]
    pub subchunks: Vec<SubchunkDraft>,
}

impl ChunkDraft {
    /// Rows it adds to the embedded vectors (their order is [`cairn_index::rows`]').
    pub fn embedded_rows(&self) -> usize {
        cairn_index::rows::rows_of_chunk(self.subchunks.len())
    }
}

/// One subchunk before embedding (see the module doc).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SubchunkDraft {
    /// Lines of the raw file.
    pub span: LineSpan,
    /// Section title or definition name.
    pub title: String,
    /// Text to embed.
    pub text: String,
    /// Estimated model tokens of `text`.
    pub tokens: usize,
}

/// A structural unit: lines `start..=end` (1-based).
#[derive(Clone, Debug)]
pub(super) struct Section {
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) title: String,
    /// Its own text, where its raw lines also carry other sections' text (a
    /// notebook saved on one line: every cell is on line 1). Such a section
    /// is one chunk of this text, never packed with another or windowed: the
    /// lines cannot tell its text from theirs.
    pub(super) own: Option<String>,
}

/// The whole file, lines `1..=n`, as one section.
pub(super) fn whole(n: u32) -> Section {
    Section {
        start: 1,
        end: n,
        title: String::new(),
        own: None,
    }
}
