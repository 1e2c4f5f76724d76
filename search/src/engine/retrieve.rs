//! Retrieve: the exact lines of a document, alone or in a batch, within the
//! span and byte limits.

use super::*;

impl Engine {
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
}
