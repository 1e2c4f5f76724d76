//! The second stage: each document's chunks (with the cited references a
//! LaTeX chunk names), then the documents and their bytes assembled in the
//! order every later step lists them.

use super::error::BuildError;
use super::plan::{CHUNKER_VERSION, HEADER_TOKENS, Plan};
use crate::chunk::{ChunkDraft, ChunkLimits, Chunked, Definition, chunk_document};
use crate::config::{BuildSettings, PathWeights};
use crate::documents::SourceDoc;
use crate::report::Reporter;
use cairn_embed::Embedder;
use cairn_index::manifest::{ModelInfo, RepoRecord, SkipRecord};
use cairn_index::{DocId, DocRecord, FORMAT_VERSION, IndexVersion, LineIndex, NewChunk};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

use super::sources::RepoDocs;
use crate::chunk::cites::Bibliography;

/// Each document's chunks and definitions, in registry order (the order
/// `assemble` lists them).
pub(super) fn chunk_repos(
    repos: &[RepoDocs],
    settings: &BuildSettings,
    embedder: &dyn Embedder,
    reporter: &dyn Reporter,
) -> Result<Vec<Chunked>, BuildError> {
    let texts: Vec<&SourceDoc> = repos.iter().flat_map(|r| r.docs.iter()).collect();
    // Each repository's references, and for each document its repository's.
    let bibliographies: Vec<Bibliography> = repos.iter().map(|r| bibliography(&r.docs)).collect();
    let owner: Vec<&Bibliography> = repos
        .iter()
        .zip(&bibliographies)
        .flat_map(|(r, b)| std::iter::repeat_n(b, r.docs.len()))
        .collect();
    let specials = embedder.count_tokens("")?;
    let (limits, subchunk_limits) = chunk_limits(settings, embedder.model().max_tokens, specials);
    reporter.stage("chunking files", Some(texts.len() as u64));
    let out: Vec<Chunked> = texts
        .par_iter()
        .zip(owner.par_iter())
        .map(|(d, bib)| {
            let count = |lines: &[&str]| {
                embedder
                    .count_tokens_batch(lines)
                    .map(|v| v.into_iter().map(|n| n.saturating_sub(specials)).collect())
                    // Counting never fails on valid UTF-8; fall back to a rough count if it does.
                    .unwrap_or_else(|_| lines.iter().map(|l| l.len() / 3 + 1).collect())
            };
            let mut chunked = chunk_document(
                d,
                &LineIndex::new(d.text.as_bytes()),
                &limits,
                &subchunk_limits,
                &count,
            );
            if d.language == cairn_index::Language::Latex && !bib.is_empty() {
                cite_references(&mut chunked.chunks, bib, &count);
            }
            reporter.advance(1);
            chunked
        })
        .collect();
    reporter.finish(&format!(
        "{} chunks",
        out.iter().map(|c| c.chunks.len()).sum::<usize>()
    ));
    Ok(out)
}

/// The references a repository's LaTeX may cite: its `.bib` entries and
/// the `\bibitem`s of its `.tex` files.
fn bibliography(docs: &[SourceDoc]) -> Bibliography {
    let mut b = Bibliography::default();
    for d in docs {
        match d.language {
            cairn_index::Language::Bibtex => b.add_bibtex(&d.text),
            cairn_index::Language::Latex => b.add_bibitems(&d.text),
            _ => {}
        }
    }
    b
}

/// Adds `cites: …` (the references a chunk cites) to its text and its
/// subchunks' texts: what is indexed and embedded, never the span. Their
/// token estimates grow by the line's tokens (`count`, as chunking counts).
fn cite_references(
    chunks: &mut [ChunkDraft],
    bib: &Bibliography,
    count: &dyn Fn(&[&str]) -> Vec<usize>,
) {
    let add = |text: &mut String, tokens: &mut usize| {
        if let Some(cites) = bib.resolve(text) {
            *tokens += count(&[cites.as_str()]).first().map_or(0, |t| t + 1);
            text.push('\n');
            text.push_str(&cites);
        }
    };
    for c in chunks {
        add(&mut c.text, &mut c.tokens);
        for s in &mut c.subchunks {
            add(&mut s.text, &mut s.tokens);
        }
    }
}

/// The limits of chunks and of subchunks under `settings`, for a model that
/// reads `max_tokens` tokens of which `specials` are its own.
pub fn chunk_limits(
    settings: &BuildSettings,
    max_tokens: usize,
    specials: usize,
) -> (ChunkLimits, ChunkLimits) {
    let max_tokens = max_tokens.saturating_sub(specials + HEADER_TOKENS).max(16);
    (
        ChunkLimits {
            max_lines: settings.chunk_max_lines,
            overlap: settings.chunk_overlap_lines,
            min_lines: settings.chunk_min_lines,
            max_tokens,
        },
        ChunkLimits {
            max_lines: settings.subchunk_max_lines,
            overlap: settings.subchunk_overlap_lines,
            min_lines: settings.subchunk_min_lines,
            max_tokens,
        },
    )
}

/// The doc registry and the content store, in registry order.
pub(super) fn assemble(repos: &[RepoDocs]) -> (Vec<DocRecord>, Vec<u8>) {
    let mut records = Vec::new();
    let mut content = Vec::new();
    for r in repos {
        for d in &r.docs {
            let Ok(doc_id) = DocId::new(&r.cfg.category, &r.cfg.name, &d.path) else {
                continue;
            };
            records.push(DocRecord {
                doc_id,
                category: r.cfg.category.clone(),
                repo: r.cfg.name.clone(),
                toolkit: r.cfg.toolkit.clone(),
                path: d.path.clone(),
                doctype: d.doctype,
                language: d.language,
                size: d.text.len() as u64,
                sha256: cairn_index::sha256_hex(d.text.as_bytes()),
                line_count: LineIndex::new(d.text.as_bytes()).line_count(),
                content_offset: content.len() as u64,
                groups: r.cfg.groups.clone(),
                pdf: d.pdf.clone(),
            });
            content.extend_from_slice(d.text.as_bytes());
        }
    }
    (records, content)
}

/// Everything of a build but the vectors: repositories, documents, chunks.
pub(super) struct Assembled {
    pub(super) repos: Vec<RepoDocs>,
    pub(super) docs: Vec<DocRecord>,
    pub(super) content: Vec<u8>,
    pub(super) drafts: Vec<Vec<ChunkDraft>>,
    /// Each document's definitions, found while it was chunked.
    pub(super) definitions: Vec<Vec<Definition>>,
    pub(super) skipped: Vec<SkipRecord>,
    pub(super) model: ModelInfo,
    /// The documents' line history, each repository's, compared across refs.
    pub(super) history: cairn_index::history::History,
}

impl Assembled {
    pub(super) fn new(repos: Vec<RepoDocs>, chunked: Vec<Chunked>, model: ModelInfo) -> Self {
        let (drafts, definitions) = chunked
            .into_iter()
            .map(|c| (c.chunks, c.definitions))
            .unzip();
        let (docs, content) = assemble(&repos);
        let skipped = repos
            .iter()
            .flat_map(|r| {
                r.skipped.iter().map(move |s| SkipRecord {
                    path: format!("{}/{}/{}", r.cfg.category, r.cfg.name, s.path),
                    size: s.size,
                    reason: s.reason,
                })
            })
            .collect();
        let history = line_history(&repos);
        Self {
            repos,
            docs,
            content,
            drafts,
            definitions,
            skipped,
            model,
            history,
        }
    }

    pub(super) fn chunk_count(&self) -> usize {
        self.drafts.iter().map(Vec::len).sum()
    }

    pub(super) fn skipped_by_reason(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for s in &self.skipped {
            *out.entry(s.reason.as_str().to_owned()).or_insert(0) += 1;
        }
        out
    }

    pub(super) fn records(&self) -> Vec<RepoRecord> {
        self.repos.iter().map(|r| r.record.clone()).collect()
    }

    /// Whether the version gets an approximate index: as many vector rows
    /// (chunks and subchunks) as `ann_min_rows`.
    pub(super) fn writes_ann(&self, plan: &Plan) -> bool {
        let rows: usize = self
            .drafts
            .iter()
            .flatten()
            .map(|c| c.embedded_rows())
            .sum();
        rows >= plan.settings.ann_min_rows
    }

    /// Hash over everything that decides the output: same inputs, same version.
    pub(super) fn version(&self, plan: &Plan) -> IndexVersion {
        #[derive(Serialize)]
        struct Inputs<'a> {
            format: u32,
            chunker: u32,
            repos: Vec<&'a RepoRecord>,
            docs: &'a [DocRecord],
            settings: &'a BuildSettings,
            weights: &'a PathWeights,
            model: &'a ModelInfo,
            /// The approximate index's kind ([`cairn_index::ann::KIND`]), left
            /// out without one, so versions without keep their id; a version
            /// with one never shares an id with one without or of another kind.
            #[serde(skip_serializing_if = "Option::is_none")]
            ann: Option<&'static str>,
            /// The line history's sha256: history is content too, so a
            /// build that records more of it (a budget filled in later, a
            /// deepened mirror) publishes a new version.
            history: String,
        }
        let inputs = Inputs {
            format: FORMAT_VERSION,
            chunker: CHUNKER_VERSION,
            repos: self.repos.iter().map(|r| &r.record).collect(),
            docs: &self.docs,
            settings: &plan.settings,
            weights: &plan.weights,
            model: &self.model,
            ann: self.writes_ann(plan).then_some(cairn_index::ann::KIND),
            history: cairn_index::sha256_hex(
                &serde_json::to_vec(&self.history).unwrap_or_default(),
            ),
        };
        let bytes = serde_json::to_vec(&inputs).unwrap_or_default();
        IndexVersion::from_digest(&cairn_index::sha256_hex(&bytes))
    }

    /// Tokens the model reads for a text of `text_tokens`: with its header, within the limit.
    pub(super) fn model_tokens(&self, text_tokens: usize) -> u32 {
        (text_tokens + HEADER_TOKENS).min(self.model.max_tokens) as u32
    }

    /// The chunks of document `d` as the index stores them.
    pub(super) fn new_chunks(&self, d: usize) -> Vec<NewChunk<'_>> {
        self.drafts[d]
            .iter()
            .map(|c| NewChunk {
                span: c.span,
                title: &c.title,
                tokens: self.model_tokens(c.tokens),
                text: &c.text,
                symbols: &c.symbols,
                subchunks: c.subchunks.iter().map(|s| s.span).collect(),
            })
            .collect()
    }
}

/// What the model sees: a short header naming the place, then the text.
pub(crate) fn embed_text(doc: &DocRecord, title: &str, text: &str) -> String {
    if title.is_empty() {
        format!("{} {}\n{}", doc.repo, doc.path, text)
    } else {
        format!("{} {}: {}\n{}", doc.repo, doc.path, title, text)
    }
}

/// The version's line history: each repository's as synced (or carried by
/// its part), with every document compared across its repository's refs.
fn line_history(repos: &[RepoDocs]) -> cairn_index::history::History {
    let mut history = cairn_index::history::History {
        repos: repos
            .iter()
            .map(|r| (r.cfg.name.clone(), r.history.clone()))
            .collect(),
    };
    // Only refs that were read: a failed one would look empty.
    let indexed: Vec<_> = repos
        .iter()
        .filter(|r| r.record.commit.is_some())
        .map(|r| crate::history::refs::IndexedRef {
            name: &r.cfg.name,
            base: r.cfg.base_name(),
            docs: r
                .docs
                .iter()
                .map(|d| (d.path.as_str(), d.text.as_str()))
                .collect(),
        })
        .collect();
    crate::history::refs::compare(&mut history, &indexed);
    history
}
