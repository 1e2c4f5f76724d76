//! Opening a published version for reading: everything a searcher needs,
//! checked once at open.

use crate::ann::AnnIndex;
use crate::definitions::DefinitionRecord;
use crate::ids::{DocId, IndexVersion, LineSpan};
use crate::layout::IndexRoot;
use crate::layout::{LayoutError, files};
use crate::lines::LineIndex;
use crate::manifest::Manifest;
use crate::manifest::{HISTORY_SINCE, TRIGRAMS_SINCE};
use crate::records::{ChunkRecord, DocRecord, SubchunkRecord};
use crate::schema::ChunkSchema;
use crate::trigrams::Trigrams;
use crate::vectors::Vectors;
use crate::weights::PathWeights;
use memmap2::Mmap;
use std::collections::HashMap;
use std::path::Path;

/// Why a version could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Layout, CURRENT or manifest problems (including an unreadable format).
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A file of the version is missing or unreadable.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The files disagree with each other or with the manifest.
    #[error("index {version} is inconsistent: {message}; run `cairn verify`")]
    Inconsistent {
        /// The version.
        version: IndexVersion,
        /// What disagrees.
        message: String,
    },
    /// tantivy could not open its index.
    #[error("tantivy: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
}

/// One published version, opened read-only.
pub struct Snapshot {
    /// Its version.
    pub version: IndexVersion,
    /// Its manifest.
    pub manifest: Manifest,
    /// The doc registry.
    pub docs: Vec<DocRecord>,
    /// The chunks.
    pub chunks: Vec<ChunkRecord>,
    /// Ranking multipliers it was built with.
    pub path_weights: PathWeights,
    /// Chunk vectors.
    pub vectors: Vectors,
    /// The subchunks.
    pub subchunks: Vec<SubchunkRecord>,
    /// Subchunk vectors.
    pub subchunk_vectors: Vectors,
    /// The BM25 index.
    pub index: tantivy::Index,
    /// A reader over it.
    pub reader: tantivy::IndexReader,
    /// Its field handles.
    pub schema: ChunkSchema,
    /// Which documents hold each trigram (format 5 on; `None` for older
    /// versions, which a grep then scans whole).
    pub trigrams: Option<Trigrams<Mmap>>,
    /// What each document defines (format 5 on; empty for older versions).
    pub definitions: Vec<DefinitionRecord>,
    /// Each line's last commit and each document's log (format 7 on;
    /// `None` for older versions, which answer that no history was recorded).
    pub history: Option<crate::history::History>,
    /// Inverted lists over the chunk and subchunk vectors, when the builder
    /// wrote them (large versions); `None` means search scans exactly.
    pub ann: Option<AnnIndex>,
    by_id: HashMap<DocId, u32>,
    lines: Vec<LineIndex>,
    content: Mmap,
}

/// Maps a published file read-only.
fn map(path: &Path) -> Result<Mmap, OpenError> {
    let err = |e: std::io::Error| OpenError::File {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let file = std::fs::File::open(path).map_err(err)?;
    // SAFETY: published files are never modified or truncated, so the
    // mapping stays valid for the snapshot's life.
    #[allow(unsafe_code)]
    unsafe { Mmap::map(&file) }.map_err(err)
}

fn read_json<T: serde::de::DeserializeOwned>(dir: &Path, name: &str) -> Result<T, OpenError> {
    let path = dir.join(name);
    let bytes = std::fs::read(&path).map_err(|e| OpenError::File {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| OpenError::File {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

impl Snapshot {
    /// Opens the version CURRENT names.
    pub fn open_current(root: &IndexRoot) -> Result<Self, OpenError> {
        let version = root.current()?;
        Self::open(root, &version)
    }

    /// Opens one version.
    pub fn open(root: &IndexRoot, version: &IndexVersion) -> Result<Self, OpenError> {
        let dir = root.version_dir(version);
        let manifest = dir.read_manifest()?;
        let path = dir.path();
        let docs: Vec<DocRecord> = read_json(path, files::DOCS)?;
        let chunks: Vec<ChunkRecord> = read_json(path, files::CHUNKS)?;
        let subchunks: Vec<SubchunkRecord> = read_json(path, files::SUBCHUNKS)?;
        let path_weights: PathWeights = read_json(path, files::WEIGHTS)?;
        let content_path = path.join(files::CONTENT);
        let file_err = |p: &Path, e: std::io::Error| OpenError::File {
            path: p.display().to_string(),
            message: e.to_string(),
        };
        let content = map(&content_path)?;
        let vectors_path = path.join(files::VECTORS);
        let vectors = Vectors::open(&vectors_path, manifest.model.dim)
            .map_err(|e| file_err(&vectors_path, e))?;
        let subchunks_path = path.join(files::SUBCHUNK_VECTORS);
        let subchunk_vectors = Vectors::open(&subchunks_path, manifest.model.dim)
            .map_err(|e| file_err(&subchunks_path, e))?;

        let inconsistent = |message: String| OpenError::Inconsistent {
            version: version.clone(),
            message,
        };
        if vectors.len() != chunks.len()
            || subchunk_vectors.len() != subchunks.len()
            || manifest.counts.subchunks != subchunks.len()
            || manifest.counts.chunks != chunks.len()
            || manifest.counts.docs != docs.len()
        {
            return Err(inconsistent(format!(
                "{} docs, {} chunks, {} vectors, {} subchunks and {} subchunk vectors against the manifest's {} docs, {} chunks and {} subchunks",
                docs.len(),
                chunks.len(),
                vectors.len(),
                subchunks.len(),
                subchunk_vectors.len(),
                manifest.counts.docs,
                manifest.counts.chunks,
                manifest.counts.subchunks
            )));
        }
        if subchunks.iter().any(|p| p.chunk as usize >= chunks.len()) {
            return Err(inconsistent(
                "a subchunk refers to a chunk that does not exist".to_owned(),
            ));
        }
        let mut lines = Vec::with_capacity(docs.len());
        let mut by_id = HashMap::with_capacity(docs.len());
        for (i, d) in docs.iter().enumerate() {
            let start = d.content_offset as usize;
            let bytes = content
                .get(start..start + d.size as usize)
                .ok_or_else(|| inconsistent(format!("{} lies outside content.bin", d.doc_id)))?;
            lines.push(LineIndex::new(bytes));
            by_id.insert(d.doc_id.clone(), i as u32);
            if d.pdf
                .as_ref()
                .is_some_and(|p| !p.is_valid_for(d.line_count))
            {
                return Err(inconsistent(format!(
                    "{}: its page starts do not fit its lines",
                    d.doc_id
                )));
            }
        }
        if let Some(c) = chunks.iter().find(|c| {
            docs.get(c.doc as usize)
                .is_none_or(|d| c.span.end > d.line_count)
        }) {
            return Err(inconsistent(format!(
                "a chunk of doc {} lies outside it",
                c.doc
            )));
        }

        let history = match manifest.format_version >= HISTORY_SINCE {
            true => Some(read_json(path, files::HISTORY)?),
            false => None,
        };
        let definitions: Vec<DefinitionRecord> = match manifest.format_version >= TRIGRAMS_SINCE {
            true => read_json(path, files::DEFINITIONS)?,
            false => Vec::new(),
        };
        if definitions.windows(2).any(|w| w[0].doc > w[1].doc) {
            return Err(inconsistent(
                "definitions.json is not in document order".to_owned(),
            ));
        }
        if let Some(d) = definitions.iter().find(|d| {
            docs.get(d.doc as usize)
                .is_none_or(|doc| d.span.end > doc.line_count)
        }) {
            return Err(inconsistent(format!(
                "the definition of {} lies outside its document",
                d.name
            )));
        }
        let trigrams_path = path.join(files::TRIGRAMS);
        let trigrams = match (
            manifest.format_version >= TRIGRAMS_SINCE,
            trigrams_path.exists(),
        ) {
            (false, _) => None,
            (true, false) => return Err(inconsistent(format!("{} is missing", files::TRIGRAMS))),
            (true, true) => {
                let t =
                    Trigrams::new(map(&trigrams_path)?).map_err(|e| inconsistent(e.to_string()))?;
                if t.docs() as usize != docs.len() {
                    return Err(inconsistent(format!(
                        "{} covers {} docs, the registry holds {}",
                        files::TRIGRAMS,
                        t.docs(),
                        docs.len()
                    )));
                }
                Some(t)
            }
        };

        let ann = crate::ann::open(
            path,
            &vectors,
            &subchunk_vectors,
            |s| subchunks.get(s as usize).map(|r| r.chunk),
            crate::ann::DEFAULT_PROBES,
        )
        .map_err(|e| inconsistent(e.to_string()))?;
        if ann.is_some() {
            vectors.expect_random_reads();
            subchunk_vectors.expect_random_reads();
        }

        let index = tantivy::Index::open_in_dir(path.join(files::TANTIVY))?;
        ChunkSchema::register_analyzers(&index);
        let reader = index
            .reader_builder()
            .reload_policy(tantivy::ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            version: version.clone(),
            manifest,
            docs,
            chunks,
            path_weights,
            vectors,
            subchunks,
            subchunk_vectors,
            index,
            reader,
            schema: ChunkSchema::new(),
            trigrams,
            definitions,
            history,
            ann,
            by_id,
            lines,
            content,
        })
    }

    /// A document's position in the registry.
    pub fn doc_index(&self, id: &DocId) -> Option<u32> {
        self.by_id.get(id).copied()
    }

    /// A document's exact bytes.
    pub fn doc_bytes(&self, doc: u32) -> &[u8] {
        let d = &self.docs[doc as usize];
        let start = d.content_offset as usize;
        &self.content[start..start + d.size as usize]
    }

    /// A document's line index.
    pub fn line_index(&self, doc: u32) -> &LineIndex {
        &self.lines[doc as usize]
    }

    /// The exact bytes of `span` of a document, clamped to its end, with the
    /// span actually returned; `None` when the span starts past the end.
    pub fn span_bytes(&self, doc: u32, span: LineSpan) -> Option<(&[u8], LineSpan)> {
        let li = self.line_index(doc);
        let range = li.byte_range(span)?;
        let clamped = LineSpan {
            start: span.start,
            end: span.end.min(li.line_count()),
        };
        Some((&self.doc_bytes(doc)[range], clamped))
    }
}
