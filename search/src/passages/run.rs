//! How a search runs: candidates from BM25 and exact cosine over what the
//! caller may see, fused and weighted (`crate::rank`), merged per document,
//! widened to readable spans, each given its focus and snippet.

use super::focus;
use super::{
    DEFAULT_LIMIT, Hit, MAX_LIMIT, MAX_QUERIES, MAX_QUERY_CHARS, ScoreBreakdown, SearchRequest,
    SearchResponse, evidence,
};
use crate::engine::now_unix;
use crate::engine::{Engine, MAX_SPAN_LINES};
use crate::error::{SearchError, invalid};
use crate::filters::{Filters, Mode};
use crate::rank::{self, Ask, Fused, Priors, RankedList, Ranker};
use cairn_index::LineSpan;

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
/// Lines shown in a snippet.
const SNIPPET_LINES: usize = 6;

/// What one phrasing brings to a search: the mode used, why it differs
/// from the one asked, the query's embedding, and the ranked lists.
struct Candidates {
    mode: Mode,
    notice: Option<String>,
    qvec: Option<Vec<f32>>,
    lists: Vec<RankedList>,
}

/// Hits drafted together: a block's drafts may absorb a later candidate
/// that touches them, then the block is final, and the next block drafts
/// from the candidates after it (one touching a final hit is dropped). So
/// the first hits never depend on how many were asked for (a caller asking
/// for 5 and one asking for 50 get the same first five, lines and focus
/// alike), and a deep answer's hits are as tight as its first ten.
const DRAFT_BLOCK: usize = DEFAULT_LIMIT;

/// A hit before its focus, snippet and links: its document, lines, best
/// chunk, score and title.
struct Draft {
    doc: u32,
    span: LineSpan,
    best: Fused,
    score: f32,
    priors: Priors,
    title: String,
}

/// `span` grown to `min` lines (evenly, then on whichever side has room), within 1..=`total`.
fn widen(span: LineSpan, min: u32, within: LineSpan) -> LineSpan {
    if span.len() >= min || within.len() <= span.len() {
        return span;
    }
    let grow = min - span.len();
    let room_up = span.start.saturating_sub(within.start);
    let up = (grow / 2).min(room_up);
    let down = (grow - up).min(within.end.saturating_sub(span.end));
    let up = (grow - down).min(room_up);
    LineSpan {
        start: span.start - up,
        end: span.end + down,
    }
}

impl Engine {
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
        if req.queries.len() > MAX_QUERIES {
            return Err(invalid(
                "queries",
                format!("at most {MAX_QUERIES} other phrasings"),
            ));
        }
        let mut phrasings = vec![query];
        for p in &req.queries {
            let p = p.trim();
            if p.is_empty() || p.chars().count() > MAX_QUERY_CHARS {
                return Err(invalid(
                    "queries",
                    format!("each phrasing must be 1 to {MAX_QUERY_CHARS} characters"),
                ));
            }
            if !phrasings.contains(&p) {
                phrasings.push(p);
            }
        }
        let limit = if req.limit == 0 {
            DEFAULT_LIMIT
        } else {
            req.limit
        };
        if limit > MAX_LIMIT {
            return Err(invalid("limit", format!("must be 1 to {MAX_LIMIT}")));
        }
        if let Some(t) = req.threshold
            && !(t.is_finite() && (0.0..=1.0).contains(&t))
        {
            return Err(invalid("threshold", "must be between 0 and 1"));
        }
        crate::access::check_filters(&self.snap, &req.filters, req.groups.as_deref())?;
        // Each phrasing ranks on its own; all their lists fuse as one, each
        // phrasing's at an equal part of the whole. The first (the user's
        // own question) supplies the vector a hit's cosine is reported with.
        let mut lists = Vec::new();
        let (mut mode, mut notice, mut qvec) = (req.mode, None, None);
        for (i, p) in phrasings.iter().enumerate() {
            let c = self.candidates(req, p)?;
            let part = 1.0 / phrasings.len() as f32;
            lists.extend(c.lists.into_iter().map(|l| RankedList {
                share: l.share * part,
                ..l
            }));
            if i == 0 {
                (mode, notice, qvec) = (c.mode, c.notice, c.qvec);
            }
            req.deadline.check()?;
        }
        let fused = rank::fuse(&lists);
        let words = phrasings.join(" ");
        let hits = self.merge(&fused, qvec.as_deref(), query, &words, &req.filters, limit);
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
            built_at: self.snap.manifest.built_at.clone(),
        };
        Ok((resp, lists))
    }

    /// What ranking reads of this engine's version and settings.
    fn ranker(&self) -> Ranker<'_> {
        Ranker {
            snap: &self.snap,
            bm25: &self.bm25,
            scopes: &self.scopes,
            vector_search: &self.vector_search,
            fusion: &self.fusion,
            priors_off: &self.priors_off,
            runtime_weights: &self.runtime_weights,
        }
    }

    /// The mode a search runs in (BM25 when the model is missing, and why),
    /// the query's embedding, and the ranked candidate lists of one phrasing.
    fn candidates(&self, req: &SearchRequest, query: &str) -> Result<Candidates, SearchError> {
        let (mode, notice) = match (&self.embedder, req.mode) {
            (None, Mode::Hybrid | Mode::Vector) => (Mode::Bm25, self.degraded.clone()),
            (_, m) => (m, None),
        };
        let groups = req.groups.as_deref();
        let qvec = match (&self.embedder, mode) {
            (Some(e), Mode::Hybrid | Mode::Vector) => e.vector(groups, query)?,
            _ => None,
        };
        req.deadline.check()?;
        let lists = self.ranker().lists(&Ask {
            query,
            qvec: qvec.as_deref(),
            mode,
            filters: &req.filters,
            groups,
        })?;
        Ok(Candidates {
            mode,
            notice,
            qvec,
            lists,
        })
    }

    /// Path and runtime weights, then overlapping chunks of a doc merged into one hit, a few hits per doc.
    fn merge(
        &self,
        fused: &[Fused],
        qvec: Option<&[f32]>,
        query: &str,
        words: &str,
        filters: &Filters,
        limit: usize,
    ) -> Vec<Hit> {
        let now = now_unix();
        let scored = self.ranker().weigh(fused, query, &filters.toolkit, now);
        let mut merged = self.drafts(&scored);
        merged.truncate(limit);
        // Every phrasing's words point at the answer's lines (a rewrite names identifiers).
        let words = focus::focus_words(words);
        merged
            .into_iter()
            .map(|d| {
                // A PDF's focus stays on the hit's page, like its span.
                let unit = self.unit_of(d.doc, d.span.start);
                let focus = self
                    .focus(d.doc, d.best.chunk, d.span, qvec, &words)
                    .and_then(|f| {
                        let (start, end) = (f.start.max(unit.start), f.end.min(unit.end));
                        (start <= end).then_some(LineSpan { start, end })
                    });
                // An answer just past the span's edge: the hit follows it.
                let span = match focus {
                    Some(f) if d.span.union(&f).len() <= MAX_SPAN_LINES => d.span.union(&f),
                    _ => d.span,
                };
                let d = Draft { span, ..d };
                let cosine = match qvec {
                    Some(q) if d.best.cosine == 0.0 => {
                        rank::dot(self.snap.vectors.row(d.best.chunk as usize), q)
                    }
                    _ => d.best.cosine,
                };
                let text = self.span_text(d.doc, d.span, false);
                let doc = &self.snap.docs[d.doc as usize];
                let (github_url, permalink) = self.links(d.doc, d.span);
                Hit {
                    doc_id: doc.doc_id.to_string(),
                    start_line: d.span.start,
                    end_line: d.span.end,
                    focus_start: focus.map(|f| f.start),
                    focus_end: focus.map(|f| f.end),
                    snippet: rank::snippet(&text.text, query, SNIPPET_LINES),
                    text_format: text.format,
                    score: d.score,
                    breakdown: ScoreBreakdown {
                        bm25: d.best.bm25,
                        vector: cosine,
                        rrf: d.best.rrf,
                        weight: d.priors.product(),
                        priors: d.priors,
                    },
                    repo: doc.repo.clone(),
                    category: doc.category.clone(),
                    toolkit: doc.toolkit.clone(),
                    doctype: doc.doctype,
                    title: d.title,
                    github_url,
                    permalink,
                    content_sha256: doc.sha256.clone(),
                    index_version: self.snap.version.to_string(),
                    page: self.page_of(d.doc, d.span),
                    defines: self.defined_in(d.doc, d.span),
                    last_changed: self.last_changed(d.doc, d.span),
                }
            })
            .collect()
    }

    /// The drafts of at most [`MAX_LIMIT`] hits from the weighed candidates
    /// (best first), in blocks of [`DRAFT_BLOCK`]; in rank order.
    fn drafts(&self, scored: &[(f32, Priors, &Fused)]) -> Vec<Draft> {
        let mut done: Vec<Draft> = Vec::new();
        let mut block: Vec<Draft> = Vec::new();
        let touches = |d: &Draft, doc: u32, span: LineSpan| {
            d.doc == doc
                && d.span.start <= span.end + 1
                && span.start <= d.span.end + 1
                && self.one_unit(d.doc, d.span, span)
        };
        for &(score, priors, f) in scored {
            let chunk = &self.snap.chunks[f.chunk as usize];
            let span = self.section_span(f.chunk);
            if done.iter().any(|d| touches(d, chunk.doc, span)) {
                continue;
            }
            if let Some(d) = block.iter_mut().find(|d| touches(d, chunk.doc, span)) {
                if d.span.union(&span).len() <= MAX_SPAN_LINES {
                    d.span = d.span.union(&span);
                }
                continue;
            }
            let of_doc = |ds: &[Draft]| ds.iter().filter(|d| d.doc == chunk.doc).count();
            if of_doc(&done) + of_doc(&block) >= HITS_PER_DOC {
                continue;
            }
            if block.len() >= DRAFT_BLOCK {
                done.extend(self.settle(std::mem::take(&mut block)));
                if done.len() >= MAX_LIMIT {
                    break;
                }
                // This candidate may touch a hit just settled.
                if done.iter().any(|d| touches(d, chunk.doc, span)) {
                    continue;
                }
            }
            block.push(Draft {
                doc: chunk.doc,
                span,
                best: *f,
                score,
                priors,
                title: chunk.title.clone(),
            });
        }
        done.extend(self.settle(block));
        done
    }

    /// A block's drafts made final: those that came to touch (a chunk
    /// joined one and reached the next) merged, within [`MAX_SPAN_LINES`],
    /// then in rank order.
    fn settle(&self, mut drafts: Vec<Draft>) -> Vec<Draft> {
        drafts.sort_by_key(|d| (d.doc, d.span.start));
        let mut merged: Vec<Draft> = Vec::with_capacity(drafts.len());
        for d in drafts {
            match merged.last_mut() {
                Some(m)
                    if m.doc == d.doc
                        && d.span.start <= m.span.end + 1
                        && m.span.union(&d.span).len() <= MAX_SPAN_LINES
                        && self.one_unit(m.doc, m.span, d.span) =>
                {
                    m.span = m.span.union(&d.span);
                    if d.score > m.score {
                        (m.score, m.best, m.priors, m.title) = (d.score, d.best, d.priors, d.title);
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
        let unit = self.unit_of(c.doc, c.span.start);
        if !c.title.is_empty() {
            let same = |o: &cairn_index::ChunkRecord| {
                o.doc == c.doc && o.title == c.title && unit.contains_span(&o.span)
            };
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
        widen(span, MIN_HIT_LINES, unit)
    }

    /// The lines a hit on `line` of `doc` may span: the page of a PDF, any
    /// other document whole (a citation of a PDF is one page's lines).
    fn unit_of(&self, doc: u32, line: u32) -> LineSpan {
        let d = &self.snap.docs[doc as usize];
        let whole = LineSpan {
            start: 1,
            end: d.line_count.max(1),
        };
        let Some(pdf) = &d.pdf else { return whole };
        let i = pdf.page_starts.partition_point(|&s| s <= line);
        match i.checked_sub(1).and_then(|k| pdf.page_starts.get(k)) {
            Some(&start) => LineSpan {
                start,
                end: pdf
                    .page_starts
                    .get(i)
                    .map_or(whole.end, |&next| next.saturating_sub(1).max(start)),
            },
            None => whole,
        }
    }

    /// Whether `a` and `b` may be one hit of `doc`: on one page of a PDF.
    fn one_unit(&self, doc: u32, a: LineSpan, b: LineSpan) -> bool {
        self.unit_of(doc, a.start).contains_span(&a.union(&b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_hits_widen_evenly_within_the_file() {
        let s = |start, end| LineSpan { start, end };
        assert_eq!(widen(s(50, 52), 20, s(1, 500)), s(42, 61));
        assert_eq!(widen(s(2, 4), 20, s(1, 500)), s(1, 20), "room below only");
        assert_eq!(
            widen(s(495, 499), 20, s(1, 500)),
            s(481, 500),
            "room above only"
        );
        assert_eq!(widen(s(3, 5), 20, s(1, 8)), s(1, 8), "short files whole");
        assert_eq!(
            widen(s(10, 40), 20, s(1, 500)),
            s(10, 40),
            "long enough already"
        );
        assert_eq!(widen(s(12, 13), 20, s(10, 16)), s(10, 16), "one PDF page");
    }
}
