//! A hit's focus: the few lines that answer best, inside its span or just
//! past its edge. A hit cites a readable unit (a section, a definition, up
//! to 40 lines); its focus is the subchunk (at most 10 lines, embedded at
//! build time) whose vector is nearest the query, with the share of the
//! query's words it holds as the second voice (the only one in BM25 mode),
//! joined by its better neighbour while both fit in [`FOCUS_LINES`].
//! When that subchunk lies just past the span (an answer that starts after
//! a chunk boundary, the next paragraph of a page), the hit grows to hold it.

use crate::engine::Engine;
use crate::rank;
use cairn_index::LineSpan;

/// The most lines a focus holds.
pub(crate) const FOCUS_LINES: u32 = 15;
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
        let mut scored: Vec<(f32, LineSpan)> = Vec::new();
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
            scored.push((score, s.span));
        }
        // The best subchunk, joined by its better neighbour (the subchunk
        // just before or after it) while the two stay within FOCUS_LINES: an
        // answer cut by a subchunk boundary is cited whole.
        let (i, &(_, best)) = scored.iter().enumerate().fold(
            None,
            |b: Option<(usize, &(f32, LineSpan))>, (i, x)| match b {
                Some((_, y)) if y.0 >= x.0 => b,
                _ => Some((i, x)),
            },
        )?;
        let neighbours = [i.checked_sub(1), Some(i + 1)];
        let joined = neighbours
            .into_iter()
            .flatten()
            .filter_map(|j| scored.get(j))
            .filter(|(_, n)| n.union(&best).len() <= FOCUS_LINES)
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.start.cmp(&a.1.start)))
            .map_or(best, |(_, n)| n.union(&best));
        Some(narrowed(joined, reach, &lines, words))
    }
}

/// `span` cut to its [`FOCUS_LINES`] lines holding most of the query's words
/// (the earliest such window): a long subchunk (a notebook cell's raw lines)
/// is still cited by its best few lines. `lines` are the lowercase lines of
/// `reach`, which holds `span`.
fn narrowed(span: LineSpan, reach: LineSpan, lines: &[String], words: &[String]) -> LineSpan {
    if span.len() <= FOCUS_LINES {
        return span;
    }
    let hits = |l: u32| {
        lines.get((l - reach.start) as usize).map_or(0, |text| {
            words.iter().filter(|w| text.contains(w.as_str())).count()
        })
    };
    let best = (span.start..=span.end - FOCUS_LINES + 1)
        .max_by_key(|&start| {
            let n: usize = (start..start + FOCUS_LINES).map(hits).sum();
            (n, std::cmp::Reverse(start))
        })
        .unwrap_or(span.start);
    LineSpan {
        start: best,
        end: best + FOCUS_LINES - 1,
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
