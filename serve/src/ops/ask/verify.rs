//! Checks a model's answer against the index: each citation
//! (`[doc_id:start-end]`) is read as the caller at the version answering,
//! and each quotation (text in backticks) must stand in the lines of the
//! citation that follows it in its paragraph, or, without one, in any
//! cited lines. What holds is numbered; what does not is marked in the
//! text and listed.

use crate::ops::Call;
use cairn_search::SpanRequest;
use schemars::JsonSchema;
use serde::Serialize;
use std::fmt;
use utoipa::ToSchema;

/// Most citations read for one answer (a model could write thousands).
const MAX_LOOKUPS: usize = 50;
/// Most citation markers considered in one answer (the rest stay text).
const MAX_MARKERS: usize = 200;
/// Most quotations checked in one answer (the rest are marked unchecked).
const MAX_QUOTATIONS: usize = 200;
/// Most bytes of an answer checked and shown.
const MAX_ANSWER_BYTES: usize = 32 << 10;
/// Farthest a marker's `]` may be from its `[`.
const MAX_MARKER_BYTES: usize = 1_100;

/// Most lines one citation may span.
const MAX_CITED_LINES: u32 = 400;

/// A citation that held: the index has these lines for this caller.
#[derive(Clone, Debug, Serialize, ToSchema, JsonSchema)]
pub struct AskCitation {
    /// The `[n]` the answer cites it by.
    pub n: usize,
    /// The document.
    pub doc_id: String,
    /// First line.
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// The lines on the default branch.
    pub github_url: String,
    /// The lines at the indexed commit.
    pub permalink: String,
}

/// A citation or quotation that did not hold.
#[derive(Clone, Debug, Serialize, ToSchema, JsonSchema)]
pub struct Unverified {
    /// What the answer said: the citation as written, or the quotation.
    pub text: String,
    /// Why it does not hold.
    pub reason: String,
}

impl fmt::Display for Unverified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.text, self.reason)
    }
}

/// The answer as checked.
pub(super) struct Checked {
    pub text: String,
    pub citations: Vec<AskCitation>,
    pub unverified: Vec<Unverified>,
}

/// A citation marker found in the text.
struct Marker {
    /// Its bytes in the text.
    at: std::ops::Range<usize>,
    doc_id: String,
    start: u32,
    end: u32,
}

/// A marker as checked: the number of its citation when it held.
struct Read {
    n: Option<usize>,
}

/// Checks `answer` (cut to [`MAX_ANSWER_BYTES`]) for `call`'s caller.
pub(super) fn verify(answer: &str, call: &Call) -> Checked {
    let answer = within(answer, MAX_ANSWER_BYTES);
    let quotes = quotations(answer);
    // A marker inside a quotation is quoted text, not a citation.
    let markers: Vec<Marker> = markers(answer)
        .into_iter()
        .filter(|m| {
            !quotes
                .iter()
                .any(|q| q.start < m.at.end && m.at.start < q.end)
        })
        .take(MAX_MARKERS)
        .collect();
    let mut cited = Cited::default();
    let reads: Vec<Read> = markers
        .iter()
        .map(|m| Read {
            n: cited.check(m, &answer[m.at.clone()], call),
        })
        .collect();
    let text = rewrite(
        answer,
        &markers,
        quotes,
        &reads,
        &cited.spans,
        &mut cited.unverified,
    );
    Checked {
        text,
        citations: cited.citations,
        unverified: cited.unverified,
    }
}

/// The citations checked so far: those that held (and their lines,
/// [`squash`]ed, by number), and what did not hold.
#[derive(Default)]
struct Cited {
    citations: Vec<AskCitation>,
    spans: Vec<String>,
    unverified: Vec<Unverified>,
    looked_up: usize,
}

impl Cited {
    /// The number of the citation `m` (written `written`) when it holds:
    /// read as the caller once, at most [`MAX_LOOKUPS`] reads an answer.
    fn check(&mut self, m: &Marker, written: &str, call: &Call) -> Option<usize> {
        let same = self
            .citations
            .iter()
            .find(|c| c.doc_id == m.doc_id && c.start_line == m.start && c.end_line == m.end);
        if let Some(c) = same {
            return Some(c.n);
        }
        let mut refused = |reason: String| {
            self.unverified.push(Unverified {
                text: written.to_owned(),
                reason,
            });
            None
        };
        if self.looked_up == MAX_LOOKUPS {
            return refused(format!("more than {MAX_LOOKUPS} citations: not read"));
        }
        self.looked_up += 1;
        let span =
            SpanRequest::lines(m.doc_id.clone(), i64::from(m.start), i64::from(m.end)).raw(true);
        match call.retrieve(&span) {
            Ok(r) if r.start_line == m.start && r.end_line == m.end => {
                let n = self.citations.len() + 1;
                self.spans.push(squash(&r.text));
                self.citations.push(AskCitation {
                    n,
                    doc_id: r.doc_id,
                    start_line: r.start_line,
                    end_line: r.end_line,
                    github_url: r.github_url,
                    permalink: r.permalink,
                });
                Some(n)
            }
            Ok(r) if r.total_lines < m.end => {
                refused(format!("the document has lines 1-{} only", r.total_lines))
            }
            Ok(_) => refused("longer than one read allows: cite fewer lines".to_owned()),
            // One answer for hidden and absent: the caller learns nothing of either.
            Err(_) => refused("no such document in the index you may read".to_owned()),
        }
    }
}

/// `text` cut to at most `max` bytes, at a character.
fn within(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `answer` with each marker replaced by `[n]` (or `[unverified]`) and each
/// quotation its lines do not hold followed by `[unverified]`.
fn rewrite(
    answer: &str,
    markers: &[Marker],
    quotes: Vec<Quote>,
    reads: &[Read],
    spans: &[String],
    unverified: &mut Vec<Unverified>,
) -> String {
    let all = spans.join("\n");
    let mut checked = 0;
    let mut out = String::with_capacity(answer.len());
    let mut at = 0;
    let mut quotes = quotes.into_iter().peekable();
    for (m, read) in markers
        .iter()
        .zip(reads)
        .chain(std::iter::once((&Marker::end(answer), &Read { n: None })))
    {
        while let Some(q) = quotes.next_if(|q| q.start < m.at.start) {
            let paragraph_ends = answer[q.end..m.at.start].contains("\n\n");
            let lines = match (m.at.is_empty() || paragraph_ends, read.n) {
                (false, Some(n)) => spans.get(n - 1).map_or("", String::as_str),
                (false, None) => "",
                (true, _) => all.as_str(),
            };
            out.push_str(&answer[at..q.end]);
            at = q.end;
            let quoted = &answer[q.start + q.ticks..q.end - q.ticks];
            checked += 1;
            let reason = match checked > MAX_QUOTATIONS {
                true => Some(format!(
                    "more than {MAX_QUOTATIONS} quotations: not checked"
                )),
                false => (!holds(lines, quoted)).then(|| "not in the cited lines".to_owned()),
            };
            if let Some(reason) = reason {
                out.push_str(" [unverified]");
                unverified.push(Unverified {
                    text: quoted.chars().take(300).collect(),
                    reason,
                });
            }
        }
        if m.at.is_empty() {
            break;
        }
        out.push_str(&answer[at..m.at.start]);
        match read.n {
            Some(n) => out.push_str(&format!("[{n}]")),
            None => out.push_str("[unverified]"),
        }
        at = m.at.end;
    }
    out.push_str(&answer[at..]);
    out
}

impl Marker {
    /// An empty marker at the end of `answer`: quotations after the last
    /// citation are checked against every cited line.
    fn end(answer: &str) -> Marker {
        Marker {
            at: answer.len()..answer.len(),
            doc_id: String::new(),
            start: 0,
            end: 0,
        }
    }
}

/// Whether lines (already [`squash`]ed) hold `quoted`, whitespace runs counting as one space.
fn holds(squashed_lines: &str, quoted: &str) -> bool {
    let q = squash(quoted);
    !q.is_empty() && squashed_lines.contains(&q)
}

/// `text` with each whitespace run one space (squashed once per cited span,
/// not per quotation).
fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The citation markers of `text`: `[doc_id:start-end]` (or `:line`, or
/// `#Lstart-Lend`) where the doc id has a `/` and no space.
fn markers(text: &str) -> Vec<Marker> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find('[').map(|i| from + i) {
        let window = (open + MAX_MARKER_BYTES).min(text.len());
        let Some(close) = text.as_bytes()[open..window]
            .iter()
            .position(|&b| b == b']')
            .map(|i| open + i)
        else {
            from = open + 1;
            continue;
        };
        if let Some((doc_id, start, end)) = parse_marker(&text[open + 1..close]) {
            found.push(Marker {
                at: open..close + 1,
                doc_id,
                start,
                end,
            });
            from = close + 1;
        } else {
            from = open + 1;
        }
    }
    found
}

/// `doc_id:start-end`, `doc_id:line` or `doc_id#Lstart-Lend`, as (doc, start, end).
fn parse_marker(inner: &str) -> Option<(String, u32, u32)> {
    let (doc, lines) = inner.rsplit_once('#').or_else(|| inner.rsplit_once(':'))?;
    if !doc.contains('/') || doc.chars().any(char::is_whitespace) || doc.len() > 1_000 {
        return None;
    }
    let lines = lines.replace('L', "");
    let (a, b) = lines.split_once('-').unwrap_or((&lines, &lines));
    let (start, end): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (start >= 1 && end >= start && end - start < MAX_CITED_LINES)
        .then(|| (doc.to_owned(), start, end))
}

/// A quotation: its bytes, backticks included, and how many backticks open it.
struct Quote {
    start: usize,
    end: usize,
    ticks: usize,
}

/// The backtick spans of `text` (inline code and fenced blocks), in order.
fn quotations(text: &str) -> Vec<Quote> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let ticks = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        let fence = "`".repeat(ticks);
        let body = i + ticks;
        match text[body..].find(&fence) {
            Some(len) => {
                let end = body + len + ticks;
                let mut inner_start = body;
                // A fenced block's first line names its language, not its text.
                if ticks >= 3 {
                    inner_start = text[body..end - ticks]
                        .find('\n')
                        .map_or(body, |n| body + n + 1);
                }
                found.push(Quote {
                    start: inner_start - ticks,
                    end,
                    ticks,
                });
                i = end;
            }
            None => break,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_doc_ids_with_lines() {
        let text = "See [science/alpha/src/core.py:5-7] and [a/b.py#L3-L4], [x:1], [a/b:9], [a/b c:1-2], [a/b:7-3].";
        let found: Vec<_> = markers(text)
            .into_iter()
            .map(|m| (m.doc_id, m.start, m.end))
            .collect();
        assert_eq!(
            found,
            [
                ("science/alpha/src/core.py".to_owned(), 5, 7),
                ("a/b.py".to_owned(), 3, 4),
                ("a/b".to_owned(), 9, 9)
            ]
        );
    }

    #[test]
    fn quotations_are_inline_code_and_fences() {
        let text = "Use `fit_model(data)` then\n```python\nx = 1\n```\n and ``a`b``.";
        let q: Vec<&str> = quotations(text)
            .iter()
            .map(|q| &text[q.start + q.ticks..q.end - q.ticks])
            .collect();
        assert_eq!(q, ["fit_model(data)", "x = 1\n", "a`b"]);
    }

    #[test]
    fn a_marker_inside_a_quotation_is_quoted_text() {
        let text = "See `[a/b.py:1-2]` and ``` [c/d.py:3-4] ``` then [e/f.py:5-6].";
        let quotes = quotations(text);
        let kept: Vec<String> = markers(text)
            .into_iter()
            .filter(|m| {
                !quotes
                    .iter()
                    .any(|q| q.start < m.at.end && m.at.start < q.end)
            })
            .map(|m| m.doc_id)
            .collect();
        assert_eq!(kept, ["e/f.py"]);
        let reads = [Read { n: Some(1) }];
        let kept: Vec<Marker> = markers(text)
            .into_iter()
            .filter(|m| m.doc_id == "e/f.py")
            .collect();
        let mut unverified = Vec::new();
        let out = rewrite(
            text,
            &kept,
            quotes,
            &reads,
            &["x".to_owned()],
            &mut unverified,
        );
        assert!(out.ends_with("then [1]."), "{out}");
        assert_eq!(
            unverified.len(),
            2,
            "both quotations are not in the cited lines"
        );
    }

    #[test]
    fn quotations_hold_whatever_the_spacing() {
        assert!(holds(
            &squash("def fit_model(data,   t_E=1.0):\n    pass"),
            "fit_model(data, t_E=1.0)"
        ));
        assert!(!holds(
            &squash("def fit_model(data):"),
            "fit_model(data, t_E=2)"
        ));
        assert!(!holds("anything", "   "));
    }
}
