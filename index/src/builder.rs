//! Writing a version: [`VersionBuilder`] takes the documents, their bytes and
//! their chunks with the chunks' vectors, fills every file of the format
//! (records, vector files, the tantivy index) and seals the folder. This is
//! the only writer of a version's contents; the builder crate hands it data
//! and never touches the files or tantivy itself.

use crate::definitions::DefinitionRecord;
use crate::ids::LineSpan;
use crate::layout::IndexRoot;
use crate::layout::{LayoutError, VersionDir, VersionWriter, files};
use crate::manifest::Manifest;
use crate::records::{ChunkRecord, DocRecord, SubchunkRecord};
use crate::rows::{Row, order};
use crate::schema::ChunkSchema;
use crate::vectors::encode_into;
use crate::weights::PathWeights;
use tantivy::{Index, IndexWriter, TantivyDocument};

/// tantivy's indexing memory: one thread, so documents keep their order.
const TANTIVY_HEAP_BYTES: usize = 200_000_000;

/// Why a version could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file of the version could not be written.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// tantivy failed.
    #[error("tantivy: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// The approximate-search graph could not be built.
    #[error(transparent)]
    Ann(#[from] crate::ann::AnnError),
    /// Fewer vectors than chunks and subchunks.
    #[error("{missing} rows of vectors are missing for the chunks and subchunks given")]
    MissingRows {
        /// How many.
        missing: usize,
    },
}

/// One chunk as the index stores it: its record, what BM25 searches, and
/// its subchunks' lines.
#[derive(Clone, Debug)]
pub struct NewChunk<'a> {
    /// Lines of its document.
    pub span: LineSpan,
    /// Section heading or definition name.
    pub title: &'a str,
    /// Model tokens it takes.
    pub tokens: u32,
    /// Its text (BM25's body, and its neighbours' context).
    pub text: &'a str,
    /// Names it defines.
    pub symbols: &'a [String],
    /// Its subchunks' lines.
    pub subchunks: Vec<LineSpan>,
}

/// A version being filled; nothing is visible until [`VersionBuilder::seal`].
pub struct VersionBuilder {
    writer: VersionWriter,
    docs: Vec<DocRecord>,
    schema: ChunkSchema,
    tantivy: IndexWriter<TantivyDocument>,
    chunks: Vec<ChunkRecord>,
    subchunks: Vec<SubchunkRecord>,
    vectors: Vec<u8>,
    subchunk_vectors: Vec<u8>,
    /// Whether to write the approximate index.
    ann: bool,
}

impl VersionBuilder {
    /// Starts a version holding `docs` (whose bytes, in order, are `content`),
    /// what they define, and the ranking `weights`.
    pub fn create(
        root: &IndexRoot,
        docs: &[DocRecord],
        content: &[u8],
        definitions: &[DefinitionRecord],
        weights: &PathWeights,
    ) -> Result<Self, WriteError> {
        let writer = VersionWriter::create(root)?;
        writer.write_json(files::DOCS, &docs)?;
        writer.write_bytes(files::CONTENT, content)?;
        writer.write_json(files::WEIGHTS, weights)?;
        writer.write_bytes(files::TRIGRAMS, &crate::trigrams::encode(docs, content))?;
        writer.write_json(files::DEFINITIONS, &definitions)?;
        let dir = writer.dir().file(files::TANTIVY);
        std::fs::create_dir_all(&dir).map_err(|source| LayoutError::Io {
            path: dir.clone(),
            source,
        })?;
        let schema = ChunkSchema::new();
        let index = Index::create_in_dir(&dir, schema.schema.clone())?;
        ChunkSchema::register_analyzers(&index);
        let tantivy = index.writer_with_num_threads(1, TANTIVY_HEAP_BYTES)?;
        Ok(Self {
            writer,
            docs: docs.to_vec(),
            schema,
            tantivy,
            chunks: Vec::new(),
            subchunks: Vec::new(),
            vectors: Vec::new(),
            subchunk_vectors: Vec::new(),
            ann: false,
        })
    }

    /// Writes the version's history (`history.json`).
    pub fn write_history(&self, history: &crate::history::History) -> Result<(), WriteError> {
        Ok(self.writer.write_json(files::HISTORY, history)?)
    }

    /// Adds document `doc`'s chunks, in line order, taking their vectors from
    /// `rows` in [`crate::rows`] order.
    pub fn add_doc<'r>(
        &mut self,
        doc: u32,
        chunks: &[NewChunk<'_>],
        rows: &mut impl Iterator<Item = &'r [f32]>,
    ) -> Result<(), WriteError> {
        let first = self.chunks.len() as u32;
        for row in order(chunks, |c| &c.subchunks) {
            let vector = rows.next().ok_or(WriteError::MissingRows { missing: 1 })?;
            match row {
                Row::Chunk(c) => {
                    encode_into(&mut self.vectors, vector);
                    self.chunks.push(ChunkRecord {
                        doc,
                        span: c.span,
                        title: c.title.to_owned(),
                        tokens: c.tokens,
                    });
                }
                Row::Subchunk(span) => {
                    encode_into(&mut self.subchunk_vectors, vector);
                    self.subchunks.push(SubchunkRecord {
                        chunk: self.chunks.len() as u32 - 1,
                        span: *span,
                    });
                }
            }
        }
        for (i, c) in chunks.iter().enumerate() {
            self.index_chunk(doc, first + i as u32, c, chunks, i)?;
        }
        Ok(())
    }

    /// The chunk's BM25 document: its fields, and its neighbours' text as context.
    fn index_chunk(
        &mut self,
        doc: u32,
        ordinal: u32,
        c: &NewChunk<'_>,
        siblings: &[NewChunk<'_>],
        i: usize,
    ) -> Result<(), WriteError> {
        let s = &self.schema;
        let d = &self.docs[doc as usize];
        let mut t = TantivyDocument::new();
        for n in [i.checked_sub(1), Some(i + 1)]
            .into_iter()
            .flatten()
            .filter_map(|n| siblings.get(n))
        {
            t.add_text(s.context, n.text);
        }
        t.add_u64(s.chunk, u64::from(ordinal));
        t.add_text(s.repo, &d.repo);
        t.add_text(s.category, &d.category);
        t.add_text(s.toolkit, &d.toolkit);
        t.add_text(s.doctype, d.doctype.as_str());
        t.add_text(s.path_exact, &d.path);
        t.add_text(s.path, &d.path);
        t.add_text(s.title, c.title);
        t.add_text(s.symbols, c.symbols.join(" "));
        t.add_text(s.body, c.text);
        self.tantivy.add_document(t)?;
        Ok(())
    }

    /// Chunks added so far.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Subchunks added so far.
    pub fn subchunk_count(&self) -> usize {
        self.subchunks.len()
    }

    /// Also writes inverted lists over the chunk and subchunk vectors
    /// ([`crate::ann`]) for approximate search; the builder asks for them
    /// on versions large enough for an exact scan to cost.
    pub fn with_ann(mut self, ann: bool) -> Self {
        self.ann = ann;
        self
    }

    /// Writes the remaining files, records every checksum in `manifest`, and
    /// renames the folder into `versions/`. CURRENT is not touched.
    pub fn seal(mut self, manifest: Manifest) -> Result<VersionDir, WriteError> {
        self.tantivy.commit()?;
        self.tantivy.wait_merging_threads()?;
        self.writer.write_json(files::CHUNKS, &self.chunks)?;
        self.writer.write_json(files::SUBCHUNKS, &self.subchunks)?;
        self.writer.write_bytes(files::VECTORS, &self.vectors)?;
        self.writer
            .write_bytes(files::SUBCHUNK_VECTORS, &self.subchunk_vectors)?;
        if self.ann {
            let chunk_doc: Vec<u32> = self.chunks.iter().map(|c| c.doc).collect();
            let subchunk_chunk: Vec<u32> = self.subchunks.iter().map(|s| s.chunk).collect();
            crate::ann::write(
                self.writer.dir().path(),
                &self.docs,
                &chunk_doc,
                &subchunk_chunk,
                &crate::vectors::decode(&self.vectors),
                &crate::vectors::decode(&self.subchunk_vectors),
                manifest.model.dim,
            )?;
        }
        Ok(self.writer.seal(manifest)?)
    }
}
