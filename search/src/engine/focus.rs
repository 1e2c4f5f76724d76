//! A hit's focus: the few lines that answer best, inside its span or just
//! past its edge. A hit cites a readable unit (a section, a definition, up
//! to 40 lines); its focus is the subchunk (at most 10 lines, embedded at
//! build time) whose vector is nearest the query, with the share of the
//! query's words it holds as the second voice (the only one in BM25 mode).
//! When that subchunk lies just past the span (an answer that starts after
//! a chunk boundary, the next paragraph of a page), the hit grows to hold it.

use super::*;

/// How far past a hit's edge its focus may lie.
pub(crate) const FOCUS_REACH: u32 = 12;
/// What the share of the query's words counts beside the cosine (both 0 to 1).
const WORD_WEIGHT: f32 = 0.15;
/// A subchunk past the edge must beat one inside by this much: the span the
/// ranking chose stays the default.
const OUTSIDE_MARGIN: f32 = 0.02;

/// Words too common to say where an answer is.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "what", "how", "can", "does", "are", "not", "you",
    "from", "use", "there", "way", "when", "which", "why", "would", "should", "into", "have",
    "has", "get", "all", "any", "its", "was", "but", "out", "one",
];

/// The lowercase words of `query` a focus looks for.
pub(crate) fn focus_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

impl Engine {
    /// The focus of a hit on `doc` over `span` whose best chunk is
    /// `best_chunk`: the best subchunk within [`FOCUS_REACH`] lines of the
    /// span, or `None` when the document has no subchunks there.
    pub(crate) fn focus(
        &self,
        doc: u32,
        best_chunk: u32,
        span: LineSpan,
        qvec: Option<&[f32]>,
        words: &[String],
    ) -> Option<LineSpan> {
        let chunks = &self.snap.chunks;
        // A document's chunks are contiguous, and subchunks follow chunk order.
        let (mut lo, mut hi) = (best_chunk as usize, best_chunk as usize);
        while lo > 0 && chunks[lo - 1].doc == doc {
            lo -= 1;
        }
        while hi + 1 < chunks.len() && chunks[hi + 1].doc == doc {
            hi += 1;
        }
        let subs = &self.snap.subchunks;
        let first = subs.partition_point(|s| (s.chunk as usize) < lo);
        let last = subs.partition_point(|s| (s.chunk as usize) <= hi);
        let total = self.snap.docs[doc as usize].line_count;
        let reach = LineSpan {
            start: span.start.saturating_sub(FOCUS_REACH).max(1),
            end: span
                .end
                .saturating_add(FOCUS_REACH)
                .min(total.max(span.end)),
        };
        let lines: Vec<String> = self
            .snap
            .span_bytes(doc, reach)
            .map(|(b, _)| String::from_utf8_lossy(b).to_lowercase())
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect();
        let mut best: Option<(f32, LineSpan)> = None;
        for (i, s) in subs.iter().enumerate().take(last).skip(first) {
            if s.span.start < reach.start || s.span.end > reach.end {
                continue;
            }
            let inside = s.span.start >= span.start && s.span.end <= span.end;
            let touches = s.span.overlaps(&span)
                || s.span.end + 1 == span.start
                || span.end + 1 == s.span.start;
            if !inside && !touches {
                continue;
            }
            let cosine = qvec.map_or(0.0, |q| rank::dot(self.snap.subchunk_vectors.row(i), q));
            let from = (s.span.start - reach.start) as usize;
            let to = ((s.span.end - reach.start + 1) as usize).min(lines.len());
            let text = lines.get(from..to).unwrap_or_default();
            let found = words
                .iter()
                .filter(|w| text.iter().any(|l| l.contains(w.as_str())))
                .count();
            let share = found as f32 / words.len().max(1) as f32;
            let score = cosine + WORD_WEIGHT * share - if inside { 0.0 } else { OUTSIDE_MARGIN };
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, s.span));
            }
        }
        best.map(|(_, s)| s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn focus_words_drop_the_common_ones() {
        assert_eq!(
            focus_words("How do I set the number of walkers for the EnsembleSampler?"),
            ["ensemblesampler", "number", "set", "walkers"]
        );
    }
}
