//! The engine: one opened snapshot, the query embedder, runtime weights.

use crate::links::blob_link;
use crate::query_vectors::{self, QueryVectors};
use crate::rank::{self, Fused, RankedList, Source};
use crate::runtime_weights::{RuntimeWeight, RuntimeWeights};
use crate::*;
use cairn_embed::{BertEmbedder, DevicePref, Embedder, ModelSpec};
use cairn_index::{DocId, DocRecord, IndexRoot, LineSpan, Snapshot};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Candidates each list contributes before fusion.
const CANDIDATES: usize = 200;
/// Hits kept per document after merging, so answers span several documents
/// (3 measured better than 2 on the golden queries: MRR 0.695 against 0.687).
const HITS_PER_DOC: usize = 3;
/// A hit grows to its whole section up to this many lines.
const SECTION_LINES: u32 = 40;
/// A hit shorter than this grows to it, evenly on both sides: a one-line
/// match is cited with the lines that explain it. Measured on the golden
/// queries (hybrid recall@5 0.80 → 0.84, MRR@10 0.735 → 0.791, and every mode
/// gains), with the same figures anywhere from 15 to 30 lines.
const MIN_HIT_LINES: u32 = 20;
/// The dense evidence is split evenly between chunk vectors and subchunk
/// vectors (a subchunk votes for the chunk it overlaps most), so hybrid keeps
/// its balance between BM25 and meaning. Measured on both question sets: the
/// split gains on each (see docs/QUALITY.md), adding subchunks on top of the
/// chunk list at full weight loses.
const SUBCHUNK_SHARE: f32 = 0.5;
/// Lines shown in a snippet.
const SNIPPET_LINES: usize = 6;

/// What a search fuses: its candidate lists and the query vector.
struct Candidates {
    /// The mode actually used.
    pub mode: Mode,
    /// Why it differs from the one asked, if it does.
    pub notice: Option<String>,
    /// The query's embedding (hybrid and vector modes).
    pub qvec: Option<Vec<f32>>,
    /// Ranked lists, each with its source and fusion weight.
    pub lists: Vec<RankedList>,
}

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
    snap: Snapshot,
    /// The query model and its cache; shared with the next engine on a hot
    /// swap that keeps the model.
    embedder: Option<Arc<QueryVectors>>,
    /// Why vector search is off, when it is.
    degraded: Option<String>,
    weights: RuntimeWeights,
    root: IndexRoot,
    /// What caller-scoped BM25 statistics read, gathered at open.
    bm25: rank::Bm25Tables,
}

/// A prior against chunks too short to answer anything (a lone heading, a
/// one-line cell): BM25's length normalisation otherwise favours them.
/// 1.0 from 64 tokens up, falling to 0.5 for the shortest.
fn brevity(tokens: u32) -> f32 {
    ((tokens as f32) / 64.0).sqrt().clamp(0.5, 1.0)
}

/// `span` grown to `min` lines (evenly, then on whichever side has room), within 1..=`total`.
fn widen(span: LineSpan, min: u32, total: u32) -> LineSpan {
    if span.len() >= min || total <= span.len() {
        return span;
    }
    let grow = min - span.len();
    let room_up = span.start - 1;
    let up = (grow / 2).min(room_up);
    let down = (grow - up).min(total - span.end);
    let up = (grow - down).min(room_up);
    LineSpan {
        start: span.start - up,
        end: span.end + down,
    }
}

/// How strongly a hit answers the query, 0 to 1: its cosine when the query
/// was embedded, else its BM25 score squashed into the same range.
pub(crate) fn evidence(hit: &Hit, mode: Mode) -> f32 {
    match mode {
        Mode::Hybrid | Mode::Vector => hit.breakdown.vector,
        Mode::Bm25 => hit.breakdown.bm25 / (hit.breakdown.bm25 + 10.0),
    }
}

/// Gives up on work nobody will read: the caller's deadline has passed.
fn check_deadline(deadline: Option<std::time::Instant>) -> Result<(), SearchError> {
    match deadline {
        Some(d) if std::time::Instant::now() >= d => Err(SearchError::DeadlineExceeded),
        _ => Ok(()),
    }
}

fn now_unix() -> i64 {
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
            // The revision the index was built with; a model folder records `local`.
            None => ModelSpec::Hub {
                id: snap.manifest.model.id.clone(),
                revision: match snap.manifest.model.revision.as_str() {
                    "" | "local" => "main".to_owned(),
                    r => r.to_owned(),
                },
            },
        };
        let embedder: Result<Arc<dyn Embedder>, String> = spec
            .locate()
            .and_then(|files| BertEmbedder::load(&files, opts.device))
            .map(|e| Arc::new(e) as Arc<dyn Embedder>)
            .map_err(|e| e.to_string());
        let weights = RuntimeWeights::load(state_path(&root))?;
        Self::from_parts(root, snap, embedder, weights)
    }

    /// Opens the version CURRENT names now, reusing this engine's query model
    /// when the new version was built with the same weights (the hot-swap path:
    /// loading the model again would stall the swap for no reason).
    pub fn reopen(&self, opts: &EngineOptions) -> Result<Self, SearchError> {
        let root = IndexRoot::new(&opts.index);
        let snap = Snapshot::open_current(&root)?;
        match &self.embedder {
            Some(e) if e.model().weights_sha256 == snap.manifest.model.weights_sha256 => {
                let weights = RuntimeWeights::load(state_path(&root))?;
                Ok(Self {
                    bm25: rank::Bm25Tables::new(&snap)?,
                    snap,
                    embedder: Some(Arc::clone(e)),
                    degraded: None,
                    weights,
                    root,
                })
            }
            _ => Self::open(opts),
        }
    }

    /// Builds an engine from an opened snapshot and the result of loading a model.
    pub fn from_parts(
        root: IndexRoot,
        snap: Snapshot,
        embedder: Result<Arc<dyn Embedder>, String>,
        weights: RuntimeWeights,
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
        Ok(Self {
            bm25: rank::Bm25Tables::new(&snap)?,
            snap,
            embedder,
            degraded,
            weights,
            root,
        })
    }

    /// The opened snapshot.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    /// What the query-vector cache has done (`None` without a model).
    pub fn query_cache(&self) -> Option<CacheStats> {
        self.embedder.as_ref().map(|e| e.stats())
    }

    /// Hybrid, BM25 or vector search (see the crate docs).
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse, SearchError> {
        self.search_explained(req).map(|(resp, _)| resp)
    }

    /// [`Engine::search`], with the candidate lists it fused (what `cairn
    /// eval` shows to explain a miss).
    pub fn search_explained(
        &self,
        req: &SearchRequest,
    ) -> Result<(SearchResponse, Vec<RankedList>), SearchError> {
        let query = req.query.trim();
        if query.is_empty() {
            return Err(invalid("query", "must not be empty"));
        }
        if query.chars().count() > MAX_QUERY_CHARS {
            return Err(invalid(
                "query",
                format!("must be at most {MAX_QUERY_CHARS} characters"),
            ));
        }
        let limit = if req.limit == 0 { 10 } else { req.limit };
        if limit > MAX_LIMIT {
            return Err(invalid("limit", format!("must be 1 to {MAX_LIMIT}")));
        }
        if let Some(t) = req.threshold
            && !(t.is_finite() && (0.0..=1.0).contains(&t))
        {
            return Err(invalid("threshold", "must be between 0 and 1"));
        }
        req.filters.validate()?;
        let Candidates {
            mode,
            notice,
            qvec,
            lists,
        } = self.candidates(req, query)?;
        check_deadline(req.deadline)?;
        let fused = rank::fuse(&lists);
        let hits = self.merge(&fused, qvec.as_deref(), query, &req.filters, limit);
        let evidence = hits.first().map(|h| evidence(h, mode));
        let insufficient_evidence = match (evidence, req.threshold) {
            (None, _) => true,
            (Some(e), Some(t)) => e < t,
            (Some(_), None) => false,
        };
        let resp = SearchResponse {
            query: query.to_owned(),
            mode,
            hits,
            insufficient_evidence,
            notice,
            index_version: self.snap.version.to_string(),
        };
        Ok((resp, lists))
    }

    /// The ranked candidate lists a search fuses (BM25, vector and identifier
    /// matches, per scope), before weights and merging.
    fn candidates(&self, req: &SearchRequest, query: &str) -> Result<Candidates, SearchError> {
        let (mode, notice) = match (&self.embedder, req.mode) {
            (None, Mode::Hybrid | Mode::Vector) => (Mode::Bm25, self.degraded.clone()),
            (_, m) => (m, None),
        };
        let groups = req.groups.as_deref();
        let allowed = Arc::new(access::allowed_chunks(&self.snap, &req.filters, groups));
        // Every statistic a score depends on comes from what the caller may see.
        let visible = access::visible_chunks(&self.snap, groups);
        let stats = rank::ScopedStats::new(&self.snap, &self.bm25, &visible);
        let (mentioned, bm25_text) = rank::mentioned_toolkits(&self.snap, query, groups);
        let qvec = match (&self.embedder, mode) {
            (Some(e), Mode::Hybrid | Mode::Vector) => e.vector(query)?,
            _ => None,
        };
        check_deadline(req.deadline)?;
        // A toolkit the query names (and no explicit filter) gets its own candidate
        // lists at full weight; the unrestricted lists still count, at half, so
        // questions that span packages keep their other half.
        let mut scopes: Vec<(Arc<Vec<bool>>, f32)> = Vec::new();
        if req.filters.toolkit.is_empty() && !mentioned.is_empty() {
            let narrowed = Filters {
                toolkit: mentioned.clone(),
                ..req.filters.clone()
            };
            scopes.push((
                Arc::new(access::allowed_chunks(&self.snap, &narrowed, groups)),
                1.0,
            ));
            scopes.push((Arc::clone(&allowed), 0.5));
        } else {
            scopes.push((Arc::clone(&allowed), 1.0));
        }
        // Every scope is within `allowed`: score each vector once, rank per scope.
        let dense = qvec.as_ref().map(|q| {
            (
                rank::chunk_cosines(&self.snap, q, &allowed),
                rank::subchunk_cosines(&self.snap, q, &allowed),
            )
        });
        let mut lists = Vec::new();
        for (mask, weight) in &scopes {
            if mode != Mode::Vector {
                let hits = rank::bm25(&self.snap, &stats, &bm25_text, mask, CANDIDATES)?;
                lists.push(RankedList {
                    source: Source::Bm25,
                    weight: *weight,
                    hits,
                });
            }
            if let Some((chunk_cos, subchunk_cos)) = &dense {
                lists.push(RankedList {
                    source: Source::Vector,
                    weight: *weight * (1.0 - SUBCHUNK_SHARE),
                    hits: rank::top(chunk_cos, mask, CANDIDATES),
                });
                lists.push(RankedList {
                    source: Source::Subchunk,
                    weight: *weight * SUBCHUNK_SHARE,
                    hits: rank::top(subchunk_cos, mask, CANDIDATES),
                });
            }
        }
        if mode != Mode::Vector {
            lists.extend(rank::identifier_lists(
                &self.snap, &stats, query, &allowed, 20,
            )?);
        }
        Ok(Candidates {
            mode,
            notice,
            qvec,
            lists,
        })
    }

    /// Weights, then overlapping chunks of a doc merged into one hit, a few hits per doc.
    fn merge(
        &self,
        fused: &[Fused],
        qvec: Option<&[f32]>,
        query: &str,
        filters: &Filters,
        limit: usize,
    ) -> Vec<Hit> {
        let now = now_unix();
        struct Draft {
            doc: u32,
            span: LineSpan,
            best: Fused,
            score: f32,
            weight: f32,
            title: String,
        }
        let mut scored: Vec<(f32, f32, &Fused)> = fused
            .iter()
            .map(|f| {
                let doc = &self.snap.docs[self.snap.chunks[f.chunk as usize].doc as usize];
                let w = self.snap.weights.for_path(&doc.path)
                    * brevity(self.snap.chunks[f.chunk as usize].tokens)
                    * self
                        .weights
                        .multiplier(doc.doc_id.as_str(), &filters.toolkit, now);
                (f.rrf * w, w, f)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.chunk.cmp(&b.2.chunk)));
        let mut drafts: Vec<Draft> = Vec::new();
        for (score, weight, f) in scored {
            let chunk = &self.snap.chunks[f.chunk as usize];
            let span = self.section_span(f.chunk);
            if let Some(d) = drafts.iter_mut().find(|d| {
                d.doc == chunk.doc && d.span.start <= span.end + 1 && span.start <= d.span.end + 1
            }) {
                if d.span.union(&span).len() <= MAX_SPAN_LINES {
                    d.span = d.span.union(&span);
                }
                continue;
            }
            if drafts.iter().filter(|d| d.doc == chunk.doc).count() >= HITS_PER_DOC {
                continue;
            }
            if drafts.len() >= limit {
                break;
            }
            drafts.push(Draft {
                doc: chunk.doc,
                span,
                best: *f,
                score,
                weight,
                title: chunk.title.clone(),
            });
        }
        // A chunk merged into one draft can make it touch another draft of the same doc.
        drafts.sort_by_key(|d| (d.doc, d.span.start));
        let mut merged: Vec<Draft> = Vec::with_capacity(drafts.len());
        for d in drafts {
            match merged.last_mut() {
                Some(m) if m.doc == d.doc && d.span.start <= m.span.end + 1 => {
                    m.span = m.span.union(&d.span);
                    if d.score > m.score {
                        (m.score, m.best, m.weight, m.title) = (d.score, d.best, d.weight, d.title);
                    }
                }
                _ => merged.push(d),
            }
        }
        merged.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.doc.cmp(&b.doc))
                .then(a.span.start.cmp(&b.span.start))
        });
        merged
            .into_iter()
            .map(|d| {
                let cosine = match qvec {
                    Some(q) if d.best.cosine == 0.0 => {
                        rank::dot(self.snap.vectors.row(d.best.chunk as usize), q)
                    }
                    _ => d.best.cosine,
                };
                let text = self
                    .snap
                    .span_bytes(d.doc, d.span)
                    .map(|(b, _)| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default();
                let doc = &self.snap.docs[d.doc as usize];
                let (github_url, permalink) = self.links(d.doc, d.span);
                Hit {
                    doc_id: doc.doc_id.to_string(),
                    start_line: d.span.start,
                    end_line: d.span.end,
                    snippet: rank::snippet(&text, query, SNIPPET_LINES),
                    score: d.score,
                    breakdown: ScoreBreakdown {
                        bm25: d.best.bm25,
                        vector: cosine,
                        rrf: d.best.rrf,
                        weight: d.weight,
                    },
                    repo: doc.repo.clone(),
                    category: doc.category.clone(),
                    toolkit: doc.toolkit.clone(),
                    doctype: doc.doctype.to_string(),
                    title: d.title,
                    github_url,
                    permalink,
                    content_sha256: doc.sha256.clone(),
                    index_version: self.snap.version.to_string(),
                }
            })
            .collect()
    }

    /// A chunk's span widened to its section: the neighbouring chunks of the
    /// same document and title (windows of one long section, or one heading's
    /// text), while the whole stays within [`SECTION_LINES`]; then, if still
    /// shorter than [`MIN_HIT_LINES`], the lines around it. A citation then
    /// covers the passage a reader needs, not an arbitrary window of it.
    fn section_span(&self, chunk: u32) -> LineSpan {
        let chunks = &self.snap.chunks;
        let i = chunk as usize;
        let c = &chunks[i];
        let mut span = c.span;
        if !c.title.is_empty() {
            let same = |o: &cairn_index::ChunkRecord| o.doc == c.doc && o.title == c.title;
            let mut lo = i;
            while lo > 0
                && same(&chunks[lo - 1])
                && span.union(&chunks[lo - 1].span).len() <= SECTION_LINES
            {
                lo -= 1;
                span = span.union(&chunks[lo].span);
            }
            let mut hi = i;
            while hi + 1 < chunks.len()
                && same(&chunks[hi + 1])
                && span.union(&chunks[hi + 1].span).len() <= SECTION_LINES
            {
                hi += 1;
                span = span.union(&chunks[hi].span);
            }
        }
        widen(
            span,
            MIN_HIT_LINES,
            self.snap.docs[c.doc as usize].line_count,
        )
    }

    /// Links to `span` of a document by id (empty when the id is unknown).
    pub(crate) fn span_links(&self, doc_id: &str, span: LineSpan) -> (String, String) {
        DocId::parse(doc_id)
            .ok()
            .and_then(|id| self.snap.doc_index(&id))
            .map(|doc| self.links(doc, span))
            .unwrap_or_default()
    }

    fn links(&self, doc: u32, span: LineSpan) -> (String, String) {
        let d = &self.snap.docs[doc as usize];
        let repo = self.snap.manifest.repos.iter().find(|r| r.name == d.repo);
        let web = repo.map_or("", |r| r.web_url.as_str());
        let branch = repo
            .and_then(|r| r.default_branch.as_deref())
            .unwrap_or("HEAD");
        let commit = repo.and_then(|r| r.commit.as_deref()).unwrap_or(branch);
        (
            blob_link(web, branch, &d.path, span),
            blob_link(web, commit, &d.path, span),
        )
    }

    fn visible_doc(&self, doc_id: &str, groups: Option<&[String]>) -> Result<u32, SearchError> {
        let id = DocId::parse(doc_id).map_err(|e| invalid("doc_id", e.to_string()))?;
        self.snap
            .doc_index(&id)
            .filter(|&i| access::visible(&self.snap.docs[i as usize], groups))
            // A doc the caller may not see answers exactly like a missing one.
            .ok_or_else(|| SearchError::NotFound(doc_id.to_owned()))
    }

    /// The exact lines `start..=end` of a document, clamped to its end, to
    /// [`MAX_SPAN_LINES`] lines and to [`MAX_TEXT_BYTES`] bytes (whole lines).
    pub fn retrieve(
        &self,
        doc_id: &str,
        start: i64,
        end: i64,
        groups: Option<&[String]>,
    ) -> Result<RetrieveResponse, SearchError> {
        self.retrieve_within(doc_id, start, end, groups, MAX_TEXT_BYTES)
    }

    /// [`Engine::retrieve`] with at most `budget` bytes of text.
    fn retrieve_within(
        &self,
        doc_id: &str,
        start: i64,
        end: i64,
        groups: Option<&[String]>,
        budget: usize,
    ) -> Result<RetrieveResponse, SearchError> {
        let doc = self.visible_doc(doc_id, groups)?;
        let asked = LineSpan::new(start, end)
            .map_err(|e| invalid(if start < 1 { "start" } else { "end" }, e.to_string()))?;
        let lines = self.snap.line_index(doc);
        let total = lines.line_count();
        if asked.start > total {
            return Err(invalid(
                "start",
                format!(
                    "start line {} is past the end of the file ({total} lines)",
                    asked.start
                ),
            ));
        }
        let mut span = LineSpan {
            start: asked.start,
            end: asked
                .end
                .min(total)
                .min(asked.start.saturating_add(MAX_SPAN_LINES - 1)),
        };
        // Whole lines within the budget; a single line longer than the budget is cut.
        while span.end > span.start && lines.byte_range(span).is_some_and(|r| r.len() > budget) {
            span.end -= 1;
        }
        let range = lines.byte_range(span).unwrap_or(0..0);
        let bytes = &self.snap.doc_bytes(doc)[range];
        let text = String::from_utf8_lossy(bytes);
        let cut = text.len() > budget;
        let text = if cut {
            let mut end = budget;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text[..end].to_owned()
        } else {
            text.into_owned()
        };
        let d = &self.snap.docs[doc as usize];
        let (github_url, permalink) = self.links(doc, span);
        Ok(RetrieveResponse {
            doc_id: d.doc_id.to_string(),
            start_line: span.start,
            end_line: span.end,
            text,
            total_lines: total,
            clamped: span != asked || cut,
            github_url,
            permalink,
            content_sha256: d.sha256.clone(),
            index_version: self.snap.version.to_string(),
        })
    }

    /// Several retrieves; each item succeeds or fails on its own. Together they
    /// return at most [`MAX_TEXT_BYTES`] bytes of text: later items are clamped
    /// to what is left, and once nothing is left they fail with `invalid_argument`.
    pub fn retrieve_batch(
        &self,
        items: &[SpanRequest],
        groups: Option<&[String]>,
    ) -> Result<Vec<Result<RetrieveResponse, SearchError>>, SearchError> {
        if items.is_empty() || items.len() > MAX_BATCH {
            return Err(invalid(
                "items",
                format!("must hold 1 to {MAX_BATCH} items"),
            ));
        }
        let mut left = MAX_TEXT_BYTES;
        Ok(items
            .iter()
            .map(|item| {
                if left == 0 {
                    return Err(invalid(
                        "items",
                        format!("the batch's {MAX_TEXT_BYTES} bytes of text are used up; ask for fewer or shorter spans"),
                    ));
                }
                let (start, end) = item.span();
                let r = self.retrieve_within(&item.doc_id, start, end, groups, left)?;
                left = left.saturating_sub(r.text.len());
                Ok(r)
            })
            .collect())
    }

    /// The doc_id hierarchy below `prefix`, `depth` levels deep, at most `max_entries` entries.
    pub fn tree(
        &self,
        prefix: &str,
        depth: usize,
        max_entries: usize,
        groups: Option<&[String]>,
    ) -> Result<TreeResponse, SearchError> {
        let prefix = prefix.trim_matches('/');
        if prefix.contains("..") || prefix.contains('\\') || prefix.contains('%') {
            return Err(invalid("prefix", "must be a doc_id prefix"));
        }
        let base = if prefix.is_empty() {
            0
        } else {
            prefix.split('/').count()
        };
        let mut folders: BTreeMap<String, usize> = BTreeMap::new();
        let mut files = Vec::new();
        for (i, d) in self.snap.docs.iter().enumerate() {
            let id = d.doc_id.as_str();
            let under = prefix.is_empty() || id == prefix || id.starts_with(&format!("{prefix}/"));
            if !under || !access::visible(d, groups) {
                continue;
            }
            let parts: Vec<&str> = id.split('/').collect();
            for level in base + 1..parts.len().min(base + depth.max(1)) + 1 {
                if level < parts.len() {
                    *folders.entry(parts[..level].join("/")).or_insert(0) += 1;
                } else {
                    files.push(i);
                }
            }
        }
        let mut entries: Vec<TreeEntry> = folders
            .into_iter()
            .map(|(path, n)| {
                let kind = match path.split('/').count() {
                    1 => "category",
                    2 => "repo",
                    _ => "folder",
                };
                TreeEntry {
                    path,
                    kind,
                    doctype: None,
                    lines: None,
                    files: Some(n),
                }
            })
            .collect();
        entries.extend(files.into_iter().map(|i| {
            let d = &self.snap.docs[i];
            TreeEntry {
                path: d.doc_id.to_string(),
                kind: "file",
                doctype: Some(d.doctype.to_string()),
                lines: Some(d.line_count),
                files: None,
            }
        }));
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let max = max_entries.clamp(1, 5000);
        let truncated = entries.len() > max;
        entries.truncate(max);
        Ok(TreeResponse {
            entries,
            truncated,
            index_version: self.snap.version.to_string(),
        })
    }

    /// What is being served: the repositories the caller may see, with their commits.
    pub fn version(&self, groups: Option<&[String]>) -> VersionResponse {
        let m = &self.snap.manifest;
        VersionResponse {
            index_version: m.index_version.to_string(),
            built_at: m.built_at.clone(),
            builder_version: m.builder_version.clone(),
            model: m.model.id.clone(),
            model_weights_sha256: m.model.weights_sha256.clone(),
            repos: m
                .repos
                .iter()
                .filter(|r| access::visible_groups(&r.groups, groups))
                .map(|r| RepoVersion {
                    name: r.name.clone(),
                    default_branch: r.default_branch.clone(),
                    commit: r.commit.clone(),
                })
                .collect(),
        }
    }

    /// Counts of what the caller may see, and whether vector search is on.
    pub fn health(&self, groups: Option<&[String]>) -> HealthResponse {
        let mut by_repo = BTreeMap::new();
        let mut by_doctype = BTreeMap::new();
        let mut visible = vec![false; self.snap.docs.len()];
        for (i, d) in self.snap.docs.iter().enumerate() {
            if access::visible(d, groups) {
                visible[i] = true;
                *by_repo.entry(d.repo.clone()).or_insert(0) += 1;
                *by_doctype.entry(d.doctype.to_string()).or_insert(0) += 1;
            }
        }
        HealthResponse {
            loaded: true,
            index_version: self.snap.version.to_string(),
            vector_search: self.embedder.is_some(),
            docs_by_repo: by_repo,
            docs_by_doctype: by_doctype,
            chunks: self
                .snap
                .chunks
                .iter()
                .filter(|c| visible[c.doc as usize])
                .count(),
        }
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
            .weights
            .set(doc_id, multiplier, namespace, ttl_days, now_unix())?;
        tracing::info!(doc_id, namespace, multiplier = w.multiplier, caller = %by.name, "runtime weight set");
        Ok(w)
    }

    /// Up to `n` of the documents a caller with `groups` may see, from the
    /// `cursor`-th on, in doc_id order, and the cursor of the next page.
    pub fn documents(
        &self,
        groups: Option<&[String]>,
        cursor: usize,
        n: usize,
    ) -> (Vec<&DocRecord>, Option<usize>) {
        let mut visible = self
            .snap
            .docs
            .iter()
            .filter(|d| access::visible(d, groups))
            .skip(cursor);
        let page: Vec<&DocRecord> = visible.by_ref().take(n).collect();
        let next = visible.next().map(|_| cursor + page.len());
        (page, next)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_hits_widen_evenly_within_the_file() {
        let s = |start, end| LineSpan { start, end };
        assert_eq!(widen(s(50, 52), 20, 500), s(42, 61));
        assert_eq!(widen(s(2, 4), 20, 500), s(1, 20), "room below only");
        assert_eq!(widen(s(495, 499), 20, 500), s(481, 500), "room above only");
        assert_eq!(widen(s(3, 5), 20, 8), s(1, 8), "short files whole");
        assert_eq!(widen(s(10, 40), 20, 500), s(10, 40), "long enough already");
    }
}
