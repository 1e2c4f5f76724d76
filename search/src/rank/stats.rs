//! BM25 statistics scoped to what a caller may see: document frequencies
//! and average field lengths over the visible chunks only, so a hidden
//! document never shapes a visible one's score.

use cairn_index::Snapshot;
use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocSet, Searcher, TERMINATED, Term};

/// What caller-scoped BM25 statistics read, gathered once per opened
/// version: each tantivy document's chunk ordinal, and each scored field's
/// length per chunk (tantivy's fieldnorm, the length its BM25 uses).
pub struct Bm25Tables {
    /// Per segment, per document: the chunk ordinal.
    chunk_of: Vec<Vec<u32>>,
    /// Per scored field: its length in each chunk (by ordinal).
    lengths: Vec<(Field, Vec<u32>)>,
    /// Per scored field: its tokens over all chunks.
    totals: Vec<u64>,
}

impl Bm25Tables {
    /// Reads the tables of `snap`'s index.
    pub fn new(snap: &Snapshot) -> tantivy::Result<Self> {
        let s = &snap.schema;
        let fields = [s.body, s.title, s.symbols, s.path, s.context];
        let mut lengths: Vec<(Field, Vec<u32>)> = fields
            .iter()
            .map(|f| (*f, vec![0; snap.chunks.len()]))
            .collect();
        let searcher = snap.reader.searcher();
        let mut chunk_of = Vec::new();
        for seg in searcher.segment_readers() {
            let column = seg.fast_fields().u64("chunk")?;
            let norms = fields
                .iter()
                .map(|f| seg.get_fieldnorms_reader(*f))
                .collect::<tantivy::Result<Vec<_>>>()?;
            let mut ords = Vec::with_capacity(seg.max_doc() as usize);
            for doc in 0..seg.max_doc() {
                let ord = column.first(doc).map_or(u32::MAX, |o| o as u32);
                ords.push(ord);
                for ((_, per_chunk), norm) in lengths.iter_mut().zip(&norms) {
                    if let Some(len) = per_chunk.get_mut(ord as usize) {
                        *len = norm.fieldnorm(doc);
                    }
                }
            }
            chunk_of.push(ords);
        }
        let totals = lengths
            .iter()
            .map(|(_, per_chunk)| per_chunk.iter().map(|n| u64::from(*n)).sum())
            .collect();
        Ok(Self {
            chunk_of,
            lengths,
            totals,
        })
    }

    /// The chunk ordinal of a tantivy document.
    pub(super) fn chunk(&self, segment: usize, doc: tantivy::DocId) -> Option<u32> {
        self.chunk_of
            .get(segment)
            .and_then(|d| d.get(doc as usize))
            .copied()
            .filter(|o| *o != u32::MAX)
    }
}

/// The chunks a caller may see and what BM25 counts over them, worked out
/// once per group set (see `scopes`): each is a pass over every chunk.
pub struct Visible {
    /// Per chunk: visible or not.
    pub mask: Vec<bool>,
    /// Visible chunks.
    docs: u64,
    /// Per scored field (as in `tables.lengths`): its tokens over the
    /// visible chunks.
    tokens: Vec<u64>,
    /// Each term's visible document frequency once counted, for every
    /// search of this group set: each count reads the term's whole
    /// postings, and a search asks for each term several times (both
    /// stages, every scope, every phrasing). Emptied past `COUNTED_KEPT`.
    counted: std::sync::Mutex<std::collections::HashMap<Term, u64>>,
}

/// Terms whose counts a group set keeps (a term and a count each).
const COUNTED_KEPT: usize = 65_536;

impl Visible {
    /// The counts over the chunks `mask` marks.
    pub fn new(tables: &Bm25Tables, mask: Vec<bool>) -> Self {
        let docs = mask.iter().filter(|v| **v).count() as u64;
        let tokens = match docs as usize == mask.len() {
            true => tables.totals.clone(),
            false => tables
                .lengths
                .iter()
                .map(|(_, per_chunk)| {
                    per_chunk
                        .iter()
                        .zip(&mask)
                        .filter(|(_, v)| **v)
                        .map(|(n, _)| u64::from(*n))
                        .sum()
                })
                .collect(),
        };
        Self {
            mask,
            docs,
            tokens,
            counted: Default::default(),
        }
    }
}

/// BM25 statistics (document count, field lengths, document frequencies)
/// over the chunks one caller may see, so that a hidden document moves no
/// visible score: the answer is the one the caller would get if the hidden
/// documents did not exist.
pub struct ScopedStats<'a> {
    pub(super) searcher: Searcher,
    pub(super) tables: &'a Bm25Tables,
    visible: &'a Visible,
    /// Every chunk is visible: document frequencies come from tantivy's
    /// term dictionary (the same count, without scanning postings).
    all: bool,
}

impl<'a> ScopedStats<'a> {
    /// Statistics over the chunks `visible` marks.
    pub fn new(snap: &Snapshot, tables: &'a Bm25Tables, visible: &'a Visible) -> Self {
        Self {
            searcher: snap.reader.searcher(),
            tables,
            all: visible.docs as usize == visible.mask.len(),
            visible,
        }
    }

    fn sees(&self, chunk: u32) -> bool {
        self.visible
            .mask
            .get(chunk as usize)
            .copied()
            .unwrap_or(false)
    }
}

impl Bm25StatisticsProvider for ScopedStats<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        match self.tables.lengths.iter().position(|(f, _)| *f == field) {
            Some(i) => Ok(self.visible.tokens[i]),
            None => self.searcher.total_num_tokens(field),
        }
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.visible.docs)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        if self.all {
            return self.searcher.doc_freq(term);
        }
        let counted = &self.visible.counted;
        if let Some(n) = counted.lock().ok().and_then(|c| c.get(term).copied()) {
            return Ok(n);
        }
        let n = self.count_visible(term)?;
        if let Ok(mut c) = counted.lock() {
            if c.len() >= COUNTED_KEPT {
                c.clear();
            }
            c.insert(term.clone(), n);
        }
        Ok(n)
    }
}

impl ScopedStats<'_> {
    /// How many visible chunks hold `term`: a pass over its postings.
    fn count_visible(&self, term: &Term) -> tantivy::Result<u64> {
        let mut n = 0u64;
        for (s, seg) in self.searcher.segment_readers().iter().enumerate() {
            let inverted = seg.inverted_index(term.field())?;
            let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic)? else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if self.tables.chunk(s, doc).is_some_and(|c| self.sees(c)) {
                    n += 1;
                }
                doc = postings.advance();
            }
        }
        Ok(n)
    }
}
