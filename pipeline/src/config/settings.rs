//! build.yaml: the build's settings over their defaults, and the bounds
//! files are read under.

use super::error::{ConfigError, read, yaml_error};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// How large a file may be before it is skipped unread.
#[derive(Clone, Debug)]
pub struct ReadLimits {
    /// Any text file (bytes).
    pub max_file_bytes: u64,
    /// PDFs: their size, and the bounds on extracting their text.
    pub pdf: crate::pdf::PdfLimits,
    /// Files of one repository read at most; the rest are skipped as
    /// `too-many-files`.
    pub max_files: usize,
}

/// Build settings: chunking, model and size limits. Every field has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BuildSettings {
    /// Hub id of the embedding model.
    pub model: String,
    /// Hub revision of the model.
    pub model_revision: String,
    /// Files larger than this are skipped (bytes).
    pub max_file_bytes: u64,
    /// A chunk never spans more lines than this.
    pub chunk_max_lines: u32,
    /// Lines repeated between consecutive windows of one long section.
    pub chunk_overlap_lines: u32,
    /// Sections shorter than this are merged with their neighbours.
    pub chunk_min_lines: u32,
    /// A subchunk (a short window embedded on its own) never spans more lines than this.
    pub subchunk_max_lines: u32,
    /// Lines repeated between consecutive subchunks of one long section.
    pub subchunk_overlap_lines: u32,
    /// Sections shorter than this are merged with their neighbours into one subchunk.
    pub subchunk_min_lines: u32,
    /// How subchunk vectors are made. Left out of the serialized settings
    /// when independent, so indexes built before this setting keep their version.
    #[serde(skip_serializing_if = "SubchunkVectors::is_independent")]
    pub subchunk_vectors: SubchunkVectors,
    /// Versions with at least this many vector rows (chunks and subchunks)
    /// get an approximate index (inverted lists) for vector search (0: always). Left out of the
    /// serialized settings at its default, so smaller indexes keep their version.
    #[serde(skip_serializing_if = "is_default_ann_min_rows")]
    pub ann_min_rows: usize,
    /// PDFs larger than this are skipped unread (bytes). Left out of the
    /// serialized settings at its default, like `ann_min_rows`.
    #[serde(skip_serializing_if = "is_default_max_pdf_bytes")]
    pub max_pdf_bytes: u64,
    /// Seconds one PDF's text may take to extract before the file is skipped.
    #[serde(skip_serializing_if = "is_default_pdf_seconds")]
    pub pdf_seconds: f64,
    /// Seconds all of one repository's PDFs may take together.
    #[serde(skip_serializing_if = "is_default_pdf_repo_seconds")]
    pub pdf_repo_seconds: f64,
    /// Seconds all of `articles:` may take to download together.
    #[serde(skip_serializing_if = "is_default_articles_fetch_seconds")]
    pub articles_fetch_seconds: f64,
    /// Seconds one repository's line history (blame and log) may take;
    /// documents past it are recorded without history, with the reason.
    #[serde(skip_serializing_if = "is_default_history_seconds")]
    pub history_seconds: f64,
    /// Commits kept in each document's log.
    #[serde(skip_serializing_if = "is_default_history_depth")]
    pub history_depth: usize,
    /// Files of one repository read at most (a repository of 20,000 paths
    /// to one blob is 1 MB of git objects and 20,000 documents to embed);
    /// files past it are skipped as `too-many-files`.
    #[serde(skip_serializing_if = "is_default_max_files")]
    pub max_files: usize,
}

/// Files one repository may have read, by default.
pub const DEFAULT_MAX_FILES: usize = 20_000;

fn is_default_max_files(n: &usize) -> bool {
    *n == DEFAULT_MAX_FILES
}

/// What one repository's history may take, by default.
pub const DEFAULT_HISTORY_SECONDS: f64 = 120.0;
/// Commits in each document's log, by default.
pub const DEFAULT_HISTORY_DEPTH: usize = 10;

fn is_default_history_seconds(s: &f64) -> bool {
    *s == DEFAULT_HISTORY_SECONDS
}

fn is_default_history_depth(n: &usize) -> bool {
    *n == DEFAULT_HISTORY_DEPTH
}

/// What all of `articles:` may take to download, by default.
pub const DEFAULT_ARTICLES_FETCH_SECONDS: f64 = 600.0;

fn is_default_articles_fetch_seconds(s: &f64) -> bool {
    *s == DEFAULT_ARTICLES_FETCH_SECONDS
}

fn is_default_pdf_repo_seconds(s: &f64) -> bool {
    *s == crate::pdf::PdfLimits::default().repo_budget.as_secs_f64()
}

fn is_default_max_pdf_bytes(n: &u64) -> bool {
    *n == crate::pdf::PdfLimits::default().max_bytes
}

fn is_default_pdf_seconds(s: &f64) -> bool {
    *s == crate::pdf::PdfLimits::default().timeout.as_secs_f64()
}

/// Rows below which a version gets no approximate index.
pub const DEFAULT_ANN_MIN_ROWS: usize = cairn_index::ann::DEFAULT_MIN_ROWS;

fn is_default_ann_min_rows(n: &usize) -> bool {
    *n == DEFAULT_ANN_MIN_ROWS
}

/// How a subchunk gets its vector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubchunkVectors {
    /// Its own text (with its header) through the model.
    #[default]
    Independent,
    /// Pooled from its chunk's forward pass: the header's and its lines'
    /// token states ("late chunking"), so it carries the chunk's context.
    Late,
}

impl SubchunkVectors {
    fn is_independent(&self) -> bool {
        *self == SubchunkVectors::Independent
    }
}

impl Default for BuildSettings {
    fn default() -> Self {
        Self {
            model: cairn_embed::DEFAULT_MODEL.to_owned(),
            model_revision: "main".to_owned(),
            max_file_bytes: 512 * 1024,
            chunk_max_lines: 60,
            chunk_overlap_lines: 2,
            chunk_min_lines: 6,
            subchunk_max_lines: 10,
            subchunk_overlap_lines: 1,
            subchunk_min_lines: 3,
            subchunk_vectors: SubchunkVectors::default(),
            ann_min_rows: DEFAULT_ANN_MIN_ROWS,
            max_pdf_bytes: crate::pdf::PdfLimits::default().max_bytes,
            pdf_seconds: crate::pdf::PdfLimits::default().timeout.as_secs_f64(),
            pdf_repo_seconds: crate::pdf::PdfLimits::default().repo_budget.as_secs_f64(),
            articles_fetch_seconds: DEFAULT_ARTICLES_FETCH_SECONDS,
            history_seconds: DEFAULT_HISTORY_SECONDS,
            history_depth: DEFAULT_HISTORY_DEPTH,
            max_files: DEFAULT_MAX_FILES,
        }
    }
}

impl BuildSettings {
    /// How much line history a build records per repository.
    pub fn history_limits(&self) -> crate::history::HistoryLimits {
        crate::history::HistoryLimits {
            budget: seconds(self.history_seconds),
            depth: self.history_depth,
        }
    }
}

/// Seconds as a duration within 1 ms and a day (what `BuildSettings::load` accepts).
fn seconds(s: f64) -> std::time::Duration {
    std::time::Duration::try_from_secs_f64(s)
        .unwrap_or(std::time::Duration::ZERO)
        .clamp(
            std::time::Duration::from_millis(1),
            std::time::Duration::from_secs(86_400),
        )
}

impl BuildSettings {
    /// The size and extraction bounds files are read under; PDFs are read
    /// by `pdf_helper` in processes of their own when one is given.
    pub fn read_limits(&self, pdf_helper: Option<&Path>) -> ReadLimits {
        ReadLimits {
            max_file_bytes: self.max_file_bytes,
            pdf: crate::pdf::PdfLimits {
                max_bytes: self.max_pdf_bytes,
                // `load` bounds both; settings made in code are clamped the same way.
                timeout: seconds(self.pdf_seconds),
                repo_budget: seconds(self.pdf_repo_seconds),
                helper: pdf_helper.map(Path::to_path_buf),
                ..crate::pdf::PdfLimits::default()
            },
            max_files: self.max_files,
        }
    }

    /// What all of `articles:` may take to download together.
    pub fn fetch_budget(&self) -> std::time::Duration {
        seconds(self.articles_fetch_seconds)
    }

    /// Reads `path` over the defaults.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = read(path)?;
        let s: Self = serde_saphyr::from_str(&text).map_err(|e| yaml_error(path, &e))?;
        for (kind, max, overlap) in [
            ("chunk", s.chunk_max_lines, s.chunk_overlap_lines),
            ("subchunk", s.subchunk_max_lines, s.subchunk_overlap_lines),
        ] {
            if max < 2 || overlap >= max / 2 {
                return Err(ConfigError::At {
                    path: path.to_owned(),
                    line: 1,
                    column: 1,
                    message: format!(
                        "{kind}_max_lines must be at least 2 and {kind}_overlap_lines under half of it"
                    ),
                });
            }
        }
        for (name, value) in [
            ("pdf_seconds", s.pdf_seconds),
            ("pdf_repo_seconds", s.pdf_repo_seconds),
            ("articles_fetch_seconds", s.articles_fetch_seconds),
        ] {
            if !(value.is_finite() && value > 0.0 && value <= 86_400.0) {
                return Err(ConfigError::At {
                    path: path.to_owned(),
                    line: 1,
                    column: 1,
                    message: format!(
                        "{name} must be a number of seconds above 0 and at most 86400"
                    ),
                });
            }
        }
        Ok(s)
    }
}
