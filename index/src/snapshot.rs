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
        let registry = Registry::read(path, manifest.model.dim)?;
        registry.check_counts(&manifest, version)?;
        let DocLookup { lines, by_id } = registry.index_docs(version)?;
        registry.check_chunk_spans(version)?;
        let history = match manifest.format_version >= HISTORY_SINCE {
            true => Some(read_json(path, files::HISTORY)?),
            false => None,
        };
        let definitions = read_definitions(path, &manifest, &registry.docs, version)?;
        let trigrams = open_trigrams(path, &manifest, registry.docs.len(), version)?;
        let ann = registry.open_ann(path, version)?;
        let (index, reader) = open_tantivy(path)?;
        let Registry {
            docs,
            chunks,
            subchunks,
            path_weights,
            content,
            vectors,
            subchunk_vectors,
        } = registry;
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

/// The registry, content and vectors, all read before any cross-check so each sees them all.
struct Registry {
    docs: Vec<DocRecord>,
    chunks: Vec<ChunkRecord>,
    subchunks: Vec<SubchunkRecord>,
    path_weights: PathWeights,
    content: Mmap,
    vectors: Vectors,
    subchunk_vectors: Vectors,
}

/// Each document's line index and its position by id, built in one pass.
struct DocLookup {
    lines: Vec<LineIndex>,
    by_id: HashMap<DocId, u32>,
}

/// The error for files that disagree, naming the version to verify.
fn inconsistent(version: &IndexVersion, message: String) -> OpenError {
    OpenError::Inconsistent {
        version: version.clone(),
        message,
    }
}

impl Registry {
    /// Reads the registry JSON, maps content.bin and opens both vector files.
    fn read(path: &Path, dim: usize) -> Result<Self, OpenError> {
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
        let vectors = Vectors::open(&vectors_path, dim).map_err(|e| file_err(&vectors_path, e))?;
        let subchunks_path = path.join(files::SUBCHUNK_VECTORS);
        let subchunk_vectors =
            Vectors::open(&subchunks_path, dim).map_err(|e| file_err(&subchunks_path, e))?;
        Ok(Self {
            docs,
            chunks,
            subchunks,
            path_weights,
            content,
            vectors,
            subchunk_vectors,
        })
    }

    /// Row counts must agree with the manifest, and subchunks name chunks, before anything indexes.
    fn check_counts(&self, manifest: &Manifest, version: &IndexVersion) -> Result<(), OpenError> {
        let Self {
            docs,
            chunks,
            subchunks,
            vectors,
            subchunk_vectors,
            ..
        } = self;
        if vectors.len() != chunks.len()
            || subchunk_vectors.len() != subchunks.len()
            || manifest.counts.subchunks != subchunks.len()
            || manifest.counts.chunks != chunks.len()
            || manifest.counts.docs != docs.len()
        {
            return Err(inconsistent(
                version,
                format!(
                    "{} docs, {} chunks, {} vectors, {} subchunks and {} subchunk vectors against the manifest's {} docs, {} chunks and {} subchunks",
                    docs.len(),
                    chunks.len(),
                    vectors.len(),
                    subchunks.len(),
                    subchunk_vectors.len(),
                    manifest.counts.docs,
                    manifest.counts.chunks,
                    manifest.counts.subchunks
                ),
            ));
        }
        if subchunks.iter().any(|p| p.chunk as usize >= chunks.len()) {
            return Err(inconsistent(
                version,
                "a subchunk refers to a chunk that does not exist".to_owned(),
            ));
        }
        Ok(())
    }

    /// Indexes each document's lines, checking its bytes and page starts fit.
    fn index_docs(&self, version: &IndexVersion) -> Result<DocLookup, OpenError> {
        let mut lines = Vec::with_capacity(self.docs.len());
        let mut by_id = HashMap::with_capacity(self.docs.len());
        for (i, d) in self.docs.iter().enumerate() {
            let start = d.content_offset as usize;
            let bytes = self
                .content
                .get(start..start + d.size as usize)
                .ok_or_else(|| {
                    inconsistent(version, format!("{} lies outside content.bin", d.doc_id))
                })?;
            lines.push(LineIndex::new(bytes));
            by_id.insert(d.doc_id.clone(), i as u32);
            if d.pdf
                .as_ref()
                .is_some_and(|p| !p.is_valid_for(d.line_count))
            {
                return Err(inconsistent(
                    version,
                    format!("{}: its page starts do not fit its lines", d.doc_id),
                ));
            }
        }
        Ok(DocLookup { lines, by_id })
    }

    /// Every chunk must lie within an existing document's lines.
    fn check_chunk_spans(&self, version: &IndexVersion) -> Result<(), OpenError> {
        if let Some(c) = self.chunks.iter().find(|c| {
            self.docs
                .get(c.doc as usize)
                .is_none_or(|d| c.span.end > d.line_count)
        }) {
            return Err(inconsistent(
                version,
                format!("a chunk of doc {} lies outside it", c.doc),
            ));
        }
        Ok(())
    }

    /// Opens the approximate index; with one, search jumps between rows, so reads go random.
    fn open_ann(&self, path: &Path, version: &IndexVersion) -> Result<Option<AnnIndex>, OpenError> {
        let ann = crate::ann::open(
            path,
            &self.vectors,
            &self.subchunk_vectors,
            |s| self.subchunks.get(s as usize).map(|r| r.chunk),
            crate::ann::DEFAULT_PROBES,
        )
        .map_err(|e| inconsistent(version, e.to_string()))?;
        if ann.is_some() {
            self.vectors.expect_random_reads();
            self.subchunk_vectors.expect_random_reads();
        }
        Ok(ann)
    }
}

/// Reads definitions.json (format 5 on): in document order, each within its document.
fn read_definitions(
    path: &Path,
    manifest: &Manifest,
    docs: &[DocRecord],
    version: &IndexVersion,
) -> Result<Vec<DefinitionRecord>, OpenError> {
    let definitions: Vec<DefinitionRecord> = match manifest.format_version >= TRIGRAMS_SINCE {
        true => read_json(path, files::DEFINITIONS)?,
        false => Vec::new(),
    };
    if definitions.windows(2).any(|w| w[0].doc > w[1].doc) {
        return Err(inconsistent(
            version,
            "definitions.json is not in document order".to_owned(),
        ));
    }
    if let Some(d) = definitions.iter().find(|d| {
        docs.get(d.doc as usize)
            .is_none_or(|doc| d.span.end > doc.line_count)
    }) {
        return Err(inconsistent(
            version,
            format!("the definition of {} lies outside its document", d.name),
        ));
    }
    Ok(definitions)
}

/// Maps the trigram index (required from format 5 on), which must cover every document.
fn open_trigrams(
    path: &Path,
    manifest: &Manifest,
    doc_count: usize,
    version: &IndexVersion,
) -> Result<Option<Trigrams<Mmap>>, OpenError> {
    let trigrams_path = path.join(files::TRIGRAMS);
    match (
        manifest.format_version >= TRIGRAMS_SINCE,
        trigrams_path.exists(),
    ) {
        (false, _) => Ok(None),
        (true, false) => Err(inconsistent(
            version,
            format!("{} is missing", files::TRIGRAMS),
        )),
        (true, true) => {
            let t = Trigrams::new(map(&trigrams_path)?)
                .map_err(|e| inconsistent(version, e.to_string()))?;
            if t.docs() as usize != doc_count {
                return Err(inconsistent(
                    version,
                    format!(
                        "{} covers {} docs, the registry holds {}",
                        files::TRIGRAMS,
                        t.docs(),
                        doc_count
                    ),
                ));
            }
            Ok(Some(t))
        }
    }
}

/// Opens the BM25 index with a manual reader, since a published version never changes.
fn open_tantivy(path: &Path) -> Result<(tantivy::Index, tantivy::IndexReader), OpenError> {
    let index = tantivy::Index::open_in_dir(path.join(files::TANTIVY))?;
    ChunkSchema::register_analyzers(&index);
    let reader = index
        .reader_builder()
        .reload_policy(tantivy::ReloadPolicy::Manual)
        .try_into()?;
    Ok((index, reader))
}
