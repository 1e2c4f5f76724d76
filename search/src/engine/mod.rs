//! The engine: one opened snapshot, the query embedder, runtime weights;
//! what every call shares. Opening and reopening, access to a document and
//! runtime weights live here, and `text.rs` reads a span's text. Each call
//! is its own module at the crate's top (`passages`, `retrieve`, `tree`,
//! `status`, `grep`, `definitions`, `context`, `explain`), holding its
//! request, its answer, their text form and its `impl Engine` block.

mod text;

pub use text::{MAX_SPAN_LINES, MAX_TEXT_BYTES, TextFormat};

use crate::access::{self, Caller};
use crate::error::{SearchError, invalid};
use crate::links::{blob_link, blob_page_link, page_link};
use crate::query_vectors::CacheStats;
use crate::query_vectors::{self, QueryVectors};
use crate::rank;
use crate::runtime_weights::{RuntimeWeight, RuntimeWeights};
use cairn_embed::{BertEmbedder, DevicePref, Embedder, ModelSpec};
use cairn_index::{DocId, IndexRoot, IndexVersion, LineSpan, Snapshot};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use utoipa::ToSchema;

/// How to open an engine.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// The index root (holding CURRENT).
    pub index: PathBuf,
    /// A model folder instead of the hub cache (must be the model the index was built with).
    pub model_dir: Option<PathBuf>,
    /// Where the query embedder runs.
    pub device: DevicePref,
}

/// Search over one index version.
pub struct Engine {
    pub(crate) snap: Snapshot,
    /// The query model and its cache; shared with the next engine on a hot
    /// swap that keeps the model.
    pub(crate) embedder: Option<Arc<QueryVectors>>,
    /// Why vector search is off, when it is.
    pub(crate) degraded: Option<String>,
    pub(crate) runtime_weights: RuntimeWeights,
    pub(crate) root: IndexRoot,
    /// How much each kind of candidate list counts (`cairn eval --fusion`).
    pub(crate) fusion: rank::FusionShares,
    /// Priors that count 1 (`cairn eval --without-prior`).
    pub(crate) priors_off: Vec<rank::Prior>,
    /// When the approximate index is used (`cairn eval --exact-below`).
    pub(crate) vector_search: rank::VectorSearch,
    /// What caller-scoped BM25 statistics read, gathered at open.
    pub(crate) bm25: rank::Bm25Tables,
    /// The masks and counts of recent callers.
    pub(crate) scopes: rank::ScopeCache,
    /// Notebooks' cells, parsed when first read.
    pub(crate) notebooks: text::Notebooks,
    /// Every raising statement and the documents by file name, read at the
    /// first explain (a search-only engine, or a hot swap, never pays for it).
    pub(crate) sites: std::sync::OnceLock<crate::raises::Sites>,
    /// The documents in doc_id order (a grep's order), made on first use.
    pub(crate) by_doc_id: std::sync::OnceLock<Vec<u32>>,
}

pub(crate) fn now_unix() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl Engine {
    /// Opens CURRENT and the model it names. A missing model leaves BM25
    /// search working (and says so); a different model is an error.
    pub fn open(opts: &EngineOptions) -> Result<Self, SearchError> {
        let root = IndexRoot::new(&opts.index);
        let snap = Snapshot::open_current(&root)?;
        let spec = match &opts.model_dir {
            Some(d) => ModelSpec::Dir(d.clone()),
            None => ModelSpec::recorded(&snap.manifest.model.id, &snap.manifest.model.revision),
        };
        let embedder: Result<Arc<dyn Embedder>, String> = spec
            .locate()
            .and_then(|files| BertEmbedder::load(&files, opts.device))
            .map(|e| Arc::new(e) as Arc<dyn Embedder>)
            .map_err(|e| e.to_string());
        let runtime_weights = RuntimeWeights::load(state_path(&root))?;
        Self::from_parts(root, snap, embedder, runtime_weights)
    }

    /// Opens the version CURRENT names now, reusing this engine's query model
    /// when the new version was built with the same weights (the hot-swap path:
    /// loading the model again would stall the swap for no reason).
    pub fn reopen(&self, opts: &EngineOptions) -> Result<Self, SearchError> {
        let root = IndexRoot::new(&opts.index);
        let snap = Snapshot::open_current(&root)?;
        match &self.embedder {
            Some(e) if e.model().weights_sha256 == snap.manifest.model.weights_sha256 => {
                let runtime_weights = RuntimeWeights::load(state_path(&root))?;
                Self::assemble(root, snap, Some(Arc::clone(e)), None, runtime_weights)
            }
            _ => Self::open(opts),
        }
    }

    /// Opens another version of this engine's index root for reading cited
    /// lines (retrieve, tree): no query model, so its searches are BM25.
    /// A version no longer on disk is [`SearchError::VersionGone`].
    pub fn open_version(&self, version: &IndexVersion) -> Result<Self, SearchError> {
        if !self.root.version_dir(version).path().is_dir() {
            return Err(SearchError::VersionGone(version.clone()));
        }
        let snap = Snapshot::open(&self.root, version)?;
        let runtime_weights = RuntimeWeights::load(state_path(&self.root))?;
        let why = "an earlier version, kept for reading cited lines".to_owned();
        Self::assemble(self.root.clone(), snap, None, Some(why), runtime_weights)
    }

    /// Builds an engine from an opened snapshot and the result of loading a model.
    pub fn from_parts(
        root: IndexRoot,
        snap: Snapshot,
        embedder: Result<Arc<dyn Embedder>, String>,
        runtime_weights: RuntimeWeights,
    ) -> Result<Self, SearchError> {
        let (embedder, degraded) = match embedder {
            Ok(e) => {
                let want = &snap.manifest.model;
                if e.model().weights_sha256 != want.weights_sha256 {
                    return Err(SearchError::ModelMismatch {
                        built: want.id.clone(),
                        built_sha: want.weights_sha256.clone(),
                        found_sha: e.model().weights_sha256.clone(),
                    });
                }
                (
                    Some(Arc::new(QueryVectors::new(e, query_vectors::CAPACITY))),
                    None,
                )
            }
            Err(why) => (
                None,
                Some(format!("vector search is off ({why}); answering with bm25")),
            ),
        };
        Self::assemble(root, snap, embedder, degraded, runtime_weights)
    }

    fn assemble(
        root: IndexRoot,
        snap: Snapshot,
        embedder: Option<Arc<QueryVectors>>,
        degraded: Option<String>,
        runtime_weights: RuntimeWeights,
    ) -> Result<Self, SearchError> {
        Ok(Self {
            bm25: rank::Bm25Tables::new(&snap)?,
            scopes: rank::ScopeCache::default(),
            notebooks: text::Notebooks::new(snap.docs.len()),
            sites: std::sync::OnceLock::new(),
            by_doc_id: std::sync::OnceLock::new(),
            snap,
            embedder,
            degraded,
            runtime_weights,
            root,
            fusion: rank::FusionShares::default(),
            priors_off: Vec::new(),
            vector_search: rank::VectorSearch::default(),
        })
    }

    /// Makes each kind of candidate list count `fusion` times its share (an
    /// evaluation's way to measure other fusions on the same index).
    pub fn set_fusion(&mut self, fusion: rank::FusionShares) {
        self.fusion = fusion;
    }

    /// Scans vectors exactly only for callers who may search fewer than
    /// `rows` rows (0: always use the approximate index a version has): an
    /// evaluation's way to measure it on a small index.
    pub fn set_exact_below(&mut self, rows: usize) {
        self.vector_search.exact_below = rows;
    }

    /// Re-scores the best `rows` of each approximate vector list with their
    /// f32 rows (default [`rank::EXACT_TOP`]; `usize::MAX`: every candidate,
    /// so the lists order as the exact scan): an evaluation's way to measure
    /// what the int8 order costs.
    pub fn set_exact_top(&mut self, rows: usize) {
        self.vector_search.exact_top = rows;
    }

    /// Makes the priors in `off` count 1 (an evaluation's way to measure each).
    pub fn set_priors_off(&mut self, off: Vec<rank::Prior>) {
        self.priors_off = off;
    }

    /// The opened snapshot.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    /// What the query-vector cache has done (`None` without a model).
    pub fn query_cache(&self) -> Option<CacheStats> {
        self.embedder.as_ref().map(|e| e.stats())
    }

    pub(crate) fn links(&self, doc: u32, span: LineSpan) -> (String, String) {
        let d = &self.snap.docs[doc as usize];
        let repo = self.snap.manifest.repos.iter().find(|r| r.name == d.repo);
        let web = repo.map_or("", |r| r.web_url.as_str());
        let page = self.page_of(doc, span).map(|p| p.page);
        if let (Some(r), Some(page)) = (repo.filter(|r| r.article), page) {
            // An article: its landing page, and the PDF fetched (a local
            // file's path is no link: the landing page stands for it).
            let pdf = if r.url.starts_with("https://") || r.url.starts_with("http://") {
                r.url.as_str()
            } else {
                web
            };
            return (page_link(web, page), page_link(pdf, page));
        }
        // A pinned repository's (and another ref's) branch link is the pin:
        // its lines are the pin's, not the default branch's.
        let branch = match d.repo.split_once('@') {
            Some((_, rf)) => rf,
            None => repo
                .and_then(|r| r.pin.as_deref().or(r.default_branch.as_deref()))
                .unwrap_or("HEAD"),
        };
        let commit = repo.and_then(|r| r.commit.as_deref()).unwrap_or(branch);
        match page {
            Some(page) => (
                blob_page_link(web, branch, &d.path, page),
                blob_page_link(web, commit, &d.path, page),
            ),
            None => (
                blob_link(web, branch, &d.path, span),
                blob_link(web, commit, &d.path, span),
            ),
        }
    }

    /// Where `span` of a document extracted from a PDF lies: its page and
    /// its lines counted within that page (`None` for any other document).
    pub(crate) fn page_of(&self, doc: u32, span: LineSpan) -> Option<crate::PageCitation> {
        let pdf = self.snap.docs[doc as usize].pdf.as_ref()?;
        let (page, start_line) = pdf.page_of(span.start)?;
        let (end_page, end_line) = pdf.page_of(span.end)?;
        Some(crate::PageCitation {
            page,
            start_line,
            end_line,
            end_page: (end_page != page).then_some(end_page),
        })
    }

    /// Whether the caller may read `doc_id` in this version (`NotFound` when
    /// not, exactly as for a missing document).
    pub fn visible(&self, doc_id: &str, groups: Option<&[String]>) -> Result<(), SearchError> {
        self.visible_doc(doc_id, groups).map(|_| ())
    }

    pub(crate) fn visible_doc(
        &self,
        doc_id: &str,
        groups: Option<&[String]>,
    ) -> Result<u32, SearchError> {
        let id = DocId::parse(doc_id).map_err(|e| invalid("doc_id", e.to_string()))?;
        self.snap
            .doc_index(&id)
            .filter(|&i| access::visible(&self.snap.docs[i as usize], groups))
            // A doc the caller may not see answers exactly like a missing one.
            .ok_or_else(|| SearchError::NotFound(doc_id.to_owned()))
    }

    /// Sets a runtime weight on a document the caller may see; only an admin may.
    pub fn set_weight(
        &self,
        doc_id: &str,
        multiplier: f32,
        namespace: &str,
        ttl_days: f64,
        by: &Caller,
    ) -> Result<RuntimeWeight, SearchError> {
        if !by.admin {
            return Err(SearchError::Forbidden(
                "setting weights needs an admin token (`cairn token add NAME --admin`)".to_owned(),
            ));
        }
        self.visible_doc(doc_id, by.groups())?;
        let w = self
            .runtime_weights
            .set(doc_id, multiplier, namespace, ttl_days, now_unix())?;
        tracing::info!(doc_id, namespace, multiplier = w.multiplier, caller = %by.name, "runtime weight set");
        Ok(w)
    }

    /// The raising statements of the snapshot.
    pub(crate) fn sites(&self) -> &crate::raises::Sites {
        self.sites
            .get_or_init(|| crate::raises::Sites::new(&self.snap))
    }

    /// The index root.
    pub fn root(&self) -> &IndexRoot {
        &self.root
    }
}

/// Runtime weights live beside the index root's versions, never inside one.
fn state_path(root: &IndexRoot) -> PathBuf {
    root.path().join("runtime-weights.json")
}

/// Where a span of a PDF's text lies in the PDF: a page, and lines counted
/// from that page's first line (as a reader counts them on the page).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct PageCitation {
    /// The page the span starts on (1-based).
    pub page: u32,
    /// First line within that page.
    pub start_line: u32,
    /// Last line within its page (`end_page`'s when the span runs onto a later page).
    pub end_line: u32,
    /// The page the span ends on, when not `page`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_page: Option<u32>,
}
