//! The tantivy schema of the chunk index, shared by the builder and searchers.

use crate::analyzer::{CODE_ANALYZER, code_analyzer};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};

/// Field handles of the chunk index.
#[derive(Clone, Debug)]
pub struct ChunkSchema {
    /// The tantivy schema.
    pub schema: Schema,
    /// Chunk ordinal: row in `chunks.json` and in the vector file.
    pub chunk: Field,
    /// Repository name (exact; fast for filtering).
    pub repo: Field,
    /// Category (exact; fast).
    pub category: Field,
    /// Toolkit (exact; fast).
    pub toolkit: Field,
    /// Doctype (exact; fast).
    pub doctype: Field,
    /// The doc's path inside its repo (exact; fast, for prefix filters).
    pub path_exact: Field,
    /// The path inside the repo, analyzed: `examples/fit_lc.py` finds `examples`, `fit`, `lc`.
    pub path: Field,
    /// Section heading or definition name.
    pub title: Field,
    /// Names defined in the chunk (functions, classes, parameters).
    pub symbols: Field,
    /// The chunk's text.
    pub body: Field,
    /// The text of the chunks before and after it in its document: words
    /// the passage's surroundings use count a little for it.
    pub context: Field,
}

impl ChunkSchema {
    /// Builds the schema (the same every time: it is part of the format).
    pub fn new() -> Self {
        let mut b = Schema::builder();
        let analyzed = |positions: bool| {
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(CODE_ANALYZER)
                    .set_index_option(if positions {
                        IndexRecordOption::WithFreqsAndPositions
                    } else {
                        IndexRecordOption::WithFreqs
                    }),
            )
        };
        let chunk = b.add_u64_field("chunk", INDEXED | STORED | FAST);
        let repo = b.add_text_field("repo", STRING | FAST | STORED);
        let category = b.add_text_field("category", STRING | FAST | STORED);
        let toolkit = b.add_text_field("toolkit", STRING | FAST | STORED);
        let doctype = b.add_text_field("doctype", STRING | FAST | STORED);
        let path_exact = b.add_text_field("path_exact", STRING | FAST);
        let path = b.add_text_field("path", analyzed(false));
        let title = b.add_text_field("title", analyzed(false));
        let symbols = b.add_text_field("symbols", analyzed(false));
        let body = b.add_text_field("body", analyzed(true));
        let context = b.add_text_field("context", analyzed(false));
        Self {
            schema: b.build(),
            chunk,
            repo,
            category,
            toolkit,
            doctype,
            path_exact,
            path,
            title,
            symbols,
            body,
            context,
        }
    }

    /// Registers cairn's analyzers on an index (needed after every open).
    pub fn register_analyzers(index: &tantivy::Index) {
        index.tokenizers().register(CODE_ANALYZER, code_analyzer());
    }
}

impl Default for ChunkSchema {
    fn default() -> Self {
        Self::new()
    }
}
