//! Retrieve: the exact lines of a document, alone or in a batch, within the
//! span and byte limits.

use super::*;

/// How a live engine finds the earlier version a cited span names.
pub type Earlier<'a> = &'a dyn Fn(&IndexVersion) -> Result<Arc<Engine>, SearchError>;

impl Engine {
    /// Lines `start..=end` of a document, clamped to its end, to
    /// [`MAX_SPAN_LINES`] lines and to [`MAX_TEXT_BYTES`] bytes of text (whole
    /// lines): the exact bytes, or a notebook's cells unless `raw` is asked.
    /// A span naming another `index_version` is read from it, opened from
    /// this engine's root ([`Engine::retrieve_cited`] takes open ones).
    pub fn retrieve(
        &self,
        req: &SpanRequest,
        groups: Option<&[String]>,
    ) -> Result<RetrieveResponse, SearchError> {
        self.retrieve_cited(req, groups, &|v| self.open_version(v).map(Arc::new))
    }

    /// [`Engine::retrieve`], finding earlier versions with `earlier`. Their
    /// lines are read only while the caller may read the document in this
    /// (the live) version: a document whose groups were tightened, or that
    /// was removed, is not read from an older version either.
    pub fn retrieve_cited(
        &self,
        req: &SpanRequest,
        groups: Option<&[String]>,
        earlier: Earlier<'_>,
    ) -> Result<RetrieveResponse, SearchError> {
        match self.cited_engine(req, groups, earlier)? {
            Some(e) => e.retrieve_within(req, groups, MAX_TEXT_BYTES),
            None => self.retrieve_within(req, groups, MAX_TEXT_BYTES),
        }
    }

    /// The earlier engine `req` names, after checking the caller may read
    /// the document now; `None` when it names this version or none.
    fn cited_engine(
        &self,
        req: &SpanRequest,
        groups: Option<&[String]>,
        earlier: Earlier<'_>,
    ) -> Result<Option<Arc<Engine>>, SearchError> {
        match &req.index_version {
            Some(v) if *v != self.snap.version => {
                self.visible_doc(&req.doc_id, groups)?;
                Ok(Some(earlier(v)?))
            }
            _ => Ok(None),
        }
    }

    /// [`Engine::retrieve`] with at most `budget` bytes of text.
    fn retrieve_within(
        &self,
        req: &SpanRequest,
        groups: Option<&[String]>,
        budget: usize,
    ) -> Result<RetrieveResponse, SearchError> {
        if let Some(v) = &req.index_version
            && *v != self.snap.version
        {
            // The connector opens the cited version; answering from another
            // would cite lines the caller never saw.
            return Err(invalid(
                "index_version",
                format!("this engine reads version {}, not {v}", self.snap.version),
            ));
        }
        let doc = self.visible_doc(&req.doc_id, groups)?;
        let (start, end) = req.span();
        let asked = LineSpan::new(start, end)
            .map_err(|e| invalid(if start < 1 { "start" } else { "end" }, e.to_string()))?;
        let total = self.snap.line_index(doc).line_count();
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
        // Whole lines within the budget. Rendering a shorter span of a notebook
        // can add a closing fence, so shrink until it fits; the span shrinks
        // every round.
        let mut text = self.span_text(doc, span, req.raw);
        while text.text.len() > budget && span.end > span.start {
            span.end = text.last_line_within(span, budget).min(span.end - 1);
            text = self.span_text(doc, span, req.raw);
        }
        // A single line longer than the budget is cut.
        let cut = text.text.len() > budget;
        if cut {
            let mut end = budget;
            while !text.text.is_char_boundary(end) {
                end -= 1;
            }
            text.text.truncate(end);
            text.raw_lines.truncate(text.text.lines().count());
        }
        let d = &self.snap.docs[doc as usize];
        let (github_url, permalink) = self.links(doc, span);
        Ok(RetrieveResponse {
            doc_id: d.doc_id.to_string(),
            start_line: span.start,
            end_line: span.end,
            text: text.text,
            text_format: text.format,
            raw_lines: text.raw_lines,
            total_lines: total,
            clamped: span != asked || cut,
            page: self.page_of(doc, span),
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
        self.retrieve_batch_cited(
            items,
            groups,
            &|v| self.open_version(v).map(Arc::new),
            &crate::Deadline::none(),
        )
    }

    /// [`Engine::retrieve_batch`], finding earlier versions with `earlier`
    /// (as [`Engine::retrieve_cited`] does, within the batch's one budget):
    /// at most [`MAX_BATCH_VERSIONS`] of them, each found once, and the
    /// deadline looked at before each item.
    pub fn retrieve_batch_cited(
        &self,
        items: &[SpanRequest],
        groups: Option<&[String]>,
        earlier: Earlier<'_>,
        deadline: &crate::Deadline,
    ) -> Result<Vec<Result<RetrieveResponse, SearchError>>, SearchError> {
        if items.is_empty() || items.len() > MAX_BATCH {
            return Err(invalid(
                "items",
                format!("must hold 1 to {MAX_BATCH} items"),
            ));
        }
        let cited: std::collections::BTreeSet<&IndexVersion> = items
            .iter()
            .filter_map(|i| i.index_version.as_ref())
            .filter(|v| **v != self.snap.version)
            .collect();
        if cited.len() > MAX_BATCH_VERSIONS {
            return Err(invalid(
                "items",
                format!(
                    "cite at most {MAX_BATCH_VERSIONS} earlier index versions in one batch (these cite {})",
                    cited.len()
                ),
            ));
        }
        // Each earlier version found once for the whole batch.
        let opened: std::cell::RefCell<Vec<(IndexVersion, Arc<Engine>)>> = Default::default();
        let once = |v: &IndexVersion| -> Result<Arc<Engine>, SearchError> {
            if let Some((_, e)) = opened.borrow().iter().find(|(k, _)| k == v) {
                return Ok(Arc::clone(e));
            }
            let e = earlier(v)?;
            opened.borrow_mut().push((v.clone(), Arc::clone(&e)));
            Ok(e)
        };
        let mut left = MAX_TEXT_BYTES;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            deadline.check()?;
            if left == 0 {
                out.push(Err(invalid(
                    "items",
                    format!("the batch's {MAX_TEXT_BYTES} bytes of text are used up; ask for fewer or shorter spans"),
                )));
                continue;
            }
            let r = match self.cited_engine(item, groups, &once) {
                Ok(Some(e)) => e.retrieve_within(item, groups, left),
                Ok(None) => self.retrieve_within(item, groups, left),
                Err(e) => Err(e),
            };
            if let Ok(r) = &r {
                left = left.saturating_sub(r.text.len());
            }
            out.push(r);
        }
        Ok(out)
    }
}
