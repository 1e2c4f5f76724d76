//! Training pairs mined from a published version's own text, for adapting
//! the embedding model to the corpus (`cairn adapt`, [`cairn_embed::adapt`]).
//!
//! Each pair joins a short, question-like text the corpus wrote about a
//! passage to that passage as the index embeds it, with the short text's own
//! lines taken out (left in, the model would learn to match words it can
//! already see, which BM25 does):
//!
//! * a Python definition's docstring summary ↔ the definition;
//! * a parameter's description (numpy, Google or Sphinx style) ↔ the
//!   definition, which still names the parameter;
//! * a prose section's heading ↔ the section, without the heading line or a
//!   header title that repeats it.
//!
//! The passage is the definition's or section's own lines (the model reads
//! its first tokens), headed the way the index heads that place.
//!
//! Nothing here looks at questions or answers: the pairs are a function of
//! the indexed text alone. Tests are left out (their docstrings describe the
//! test, not the library), and so are notebooks (their indexed bytes are
//! JSON; the cell text the build decodes is not kept in a version).
//! Depends on `cairn-index` (reading a snapshot), `cairn-embed` (the pair
//! type) and the build's `embed_text` (how the index heads a passage).

use crate::build::embed_text;
use cairn_embed::adapt::Pair;
use cairn_index::{DefKind, Doctype, Language, LineSpan, Snapshot};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

/// Where a pair came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// A docstring's first paragraph.
    Summary,
    /// A parameter's description.
    Parameter,
    /// A section heading.
    Heading,
}

impl Source {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Summary => "summary",
            Source::Parameter => "parameter",
            Source::Heading => "heading",
        }
    }
}

/// A pair and where it came from.
#[derive(Clone, Debug)]
pub struct Mined {
    /// The pair.
    pub pair: Pair,
    /// Its source.
    pub source: Source,
}

/// Fewest words an anchor may have (shorter ones say too little), most it keeps.
const ANCHOR_WORDS: std::ops::RangeInclusive<usize> = 3..=60;
/// Fewest words a positive must keep once the anchor's lines are out.
const POSITIVE_WORDS: usize = 20;

/// Mines at most `limit` pairs from `snap`, the same ones for the same
/// version: candidates are ordered by a hash of their anchor and the first
/// `limit` kept, so a cap samples every repository and source alike. An
/// anchor written more than once (an inherited docstring, a heading every
/// page has) is dropped: it points at no one passage.
pub fn mine(snap: &Snapshot, limit: usize) -> Vec<Mined> {
    let mut by_doc: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, c) in snap.chunks.iter().enumerate() {
        by_doc.entry(c.doc).or_default().push(i);
    }
    // (definition, anchor lines, anchor, source)
    let mut found: Vec<(usize, Vec<u32>, String, Source)> = Vec::new();
    // The lines of the document last read: a file's definitions come together.
    let mut read: Option<(u32, Vec<String>)> = None;
    for (k, def) in snap.definitions.iter().enumerate() {
        let doc = &snap.docs[def.doc as usize];
        if doc.language == Language::Notebook || doc.doctype == Doctype::Test {
            continue;
        }
        match def.kind {
            DefKind::Function | DefKind::Class if doc.language == Language::Python => {
                if read.as_ref().is_none_or(|(d, _)| *d != def.doc) {
                    let text = String::from_utf8_lossy(snap.doc_bytes(def.doc));
                    read = Some((def.doc, text.lines().map(str::to_owned).collect()));
                }
                let lines: Vec<&str> = read
                    .as_ref()
                    .map(|(_, l)| l.iter().map(String::as_str).collect())
                    .unwrap_or_default();
                if let Some(d) = docstring(&lines, def.span) {
                    found.push((k, d.summary.0, d.summary.1, Source::Summary));
                    for (at, words) in d.parameters {
                        found.push((k, at, words, Source::Parameter));
                    }
                }
            }
            DefKind::Section if matches!(doc.doctype, Doctype::Doc | Doctype::Readme) => {
                found.push((k, vec![def.span.start], clean(&def.name), Source::Heading));
            }
            _ => {}
        }
    }

    let mut count: HashMap<String, usize> = HashMap::new();
    for (_, _, anchor, _) in &found {
        *count.entry(anchor.to_lowercase()).or_default() += 1;
    }
    let mut ordered: BTreeMap<[u8; 32], Mined> = BTreeMap::new();
    for (k, lines, anchor, source) in found {
        let words = anchor.split_whitespace().count();
        if count.get(&anchor.to_lowercase()) != Some(&1)
            || !ANCHOR_WORDS.contains(&words)
            || (source == Source::Heading && anchor.len() < 4)
        {
            continue;
        }
        let def = &snap.definitions[k];
        let Some((bytes, span)) = snap.span_bytes(def.doc, def.span) else {
            continue;
        };
        let body: Vec<&str> = std::str::from_utf8(bytes)
            .unwrap_or_default()
            .lines()
            .enumerate()
            .filter(|&(i, l)| {
                let n = span.start + i as u32;
                let title = source == Source::Heading && i < 3 && titles(l, &anchor);
                !(lines.contains(&n) || title)
            })
            .map(|(_, l)| l)
            .collect();
        let body = body.join("\n");
        if body.split_whitespace().count() < POSITIVE_WORDS {
            continue;
        }
        // The title the index gives this place, except a heading's own,
        // which would repeat the anchor.
        let title = match source {
            Source::Heading => "",
            _ => by_doc
                .get(&def.doc)
                .and_then(|cs| {
                    cs.iter()
                        .map(|&i| &snap.chunks[i])
                        .find(|c| c.span.start <= def.span.start && def.span.start <= c.span.end)
                })
                .map_or("", |c| c.title.as_str()),
        };
        let positive = embed_text(&snap.docs[def.doc as usize], title, &body);
        let key: [u8; 32] = Sha256::digest(anchor.as_bytes()).into();
        ordered.insert(
            key,
            Mined {
                pair: Pair { anchor, positive },
                source,
            },
        );
    }
    ordered.into_values().take(limit).collect()
}

/// Whether a line at a section's top is its title: the heading's words, or a
/// reST over- or underline.
fn titles(line: &str, heading: &str) -> bool {
    let t = line.trim();
    let adornment = !t.is_empty() && t.chars().all(|c| c.is_ascii_punctuation());
    adornment || clean(t).to_lowercase().contains(&heading.to_lowercase())
}

/// Collapses whitespace and strips markup a heading or docstring carries.
fn clean(text: &str) -> String {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| matches!(c, '`' | '*' | '#' | '=')))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A Python docstring's summary and parameter descriptions, each with the
/// (1-based) lines it was read from.
struct Docstring {
    summary: (Vec<u32>, String),
    parameters: Vec<(Vec<u32>, String)>,
}

/// Reads the docstring of the definition at `span`: the first statement
/// after the signature's closing colon, when it is a string literal.
fn docstring(lines: &[&str], span: LineSpan) -> Option<Docstring> {
    let at = |n: u32| lines.get(n as usize - 1).copied();
    let mut n = span.start;
    // The signature ends at the first line whose code ends with a colon; a
    // definition with none (`class E(Exception): pass`) has no docstring,
    // and reading on would take the next definition's.
    loop {
        if n > span.end {
            return None;
        }
        let code = at(n)?.split('#').next().unwrap_or_default().trim_end();
        if code.ends_with(':') {
            break;
        }
        n += 1;
    }
    n += 1;
    while at(n)?.trim().is_empty() {
        n += 1;
    }
    let first = at(n)?.trim_start();
    let body = first.trim_start_matches(['r', 'R', 'u', 'U']);
    let quote = ["\"\"\"", "'''"]
        .into_iter()
        .find(|q| body.starts_with(q))?;
    let mut text: Vec<(u32, String)> = vec![(n, body[3..].to_owned())];
    while !text.last()?.1.contains(quote) {
        n += 1;
        if n > span.end {
            return None;
        }
        text.push((n, at(n)?.to_owned()));
    }
    if let Some(last) = text.last_mut()
        && let Some(cut) = last.1.find(quote)
    {
        last.1.truncate(cut);
    }

    let mut summary = (Vec::new(), Vec::new());
    for (line, t) in &text {
        if t.trim().is_empty() {
            if summary.1.is_empty() {
                continue;
            }
            break;
        }
        if starts_a_section(t) {
            break;
        }
        summary.0.push(*line);
        summary.1.push(t.trim());
    }
    let summary = (summary.0, clean(&summary.1.join(" ")));
    Some(Docstring {
        summary,
        parameters: parameters(&text),
    })
}

/// Whether a docstring line opens a section (`Args:`, `Returns`, a numpy
/// underline), which ends a summary written without a blank line after it.
fn starts_a_section(line: &str) -> bool {
    let t = line.trim();
    let underline = t.len() >= 3 && t.chars().all(|c| c == '-' || c == '=');
    let header = t.ends_with(':') && t.split_whitespace().count() <= 2;
    underline
        || header
        || matches!(
            t,
            "Parameters" | "Returns" | "Yields" | "Raises" | "Examples" | "Notes" | "Attributes"
        )
}

/// The parameter entries of a docstring's lines: `name : type` with an
/// indented description below (numpy), `name (type): description`
/// (Google), or `:param name: description` (Sphinx).
fn parameters(text: &[(u32, String)]) -> Vec<(Vec<u32>, String)> {
    let indent = |s: &str| s.len() - s.trim_start().len();
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let (line, raw) = &text[i];
        let t = raw.trim();
        let entry_indent = indent(raw);
        // Sphinx and typed Google entries begin their description on the
        // entry's line; numpy entries (`name : type`) below it.
        let same_line = if let Some(rest) = t.strip_prefix(":param ") {
            rest.split_once(':').map(|(_, d)| d.trim().to_owned())
        } else if let Some((head, desc)) = t.split_once("):") {
            is_name_with_type(head).then(|| desc.trim().to_owned())
        } else {
            None
        };
        let numpy = same_line.is_none()
            && (t
                .split_once(" : ")
                .is_some_and(|(name, _)| is_identifier(name))
                || t.strip_suffix(" :").is_some_and(is_identifier));
        if same_line.is_none() && !numpy {
            i += 1;
            continue;
        }
        let mut lines = vec![*line];
        let mut words: Vec<String> = same_line.into_iter().collect();
        let mut j = i + 1;
        while j < text.len() {
            let (l, r) = &text[j];
            if r.trim().is_empty() || indent(r) <= entry_indent {
                break;
            }
            lines.push(*l);
            words.push(r.trim().to_owned());
            j += 1;
        }
        let description = clean(&words.join(" "));
        if !description.is_empty() {
            // A numpy entry's line (name and type) stays in the passage; a
            // Sphinx or Google line holds the description too, and goes
            // with it.
            if numpy {
                lines.remove(0);
            }
            if !lines.is_empty() {
                out.push((lines, description));
            }
        }
        i = j;
    }
    out
}

fn is_identifier(s: &str) -> bool {
    let s = s.trim().trim_start_matches('*');
    !s.is_empty()
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// `name (type` of a Google-style entry `name (type): …`.
fn is_name_with_type(head: &str) -> bool {
    head.split_once(" (")
        .is_some_and(|(name, _)| is_identifier(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<&str> {
        s.lines().collect()
    }

    #[test]
    fn a_numpy_docstring_gives_its_summary_and_parameters() {
        let src = "def run_mcmc(self, initial_state, nsteps,\n             progress=False):\n    \"\"\"Iterate sample for nsteps iterations and return the result.\n\n    Args:\n        initial_state : State or ndarray\n            The initial state or position vector of the walkers.\n        nsteps : int\n            The number of steps to run.\n        progress (bool): Show a progress bar while it runs, using tqdm.\n    \"\"\"\n    return 1\n";
        let l = lines(src);
        let d = docstring(&l, LineSpan { start: 1, end: 12 }).expect("docstring");
        assert_eq!(
            d.summary,
            (
                vec![3],
                "Iterate sample for nsteps iterations and return the result.".to_owned()
            )
        );
        assert_eq!(
            d.parameters,
            vec![
                (
                    vec![7],
                    "The initial state or position vector of the walkers.".to_owned()
                ),
                (vec![9], "The number of steps to run.".to_owned()),
                (
                    vec![10],
                    "Show a progress bar while it runs, using tqdm.".to_owned()
                ),
            ]
        );
    }

    proptest::proptest! {
        /// Whatever a repository holds, reading docstrings neither panics
        /// nor names a line outside the file.
        #[test]
        fn any_text_reads_without_panicking(
            text in "(def f\\(x\\):\n|    \"\"\"|'''|    [a-z_]{1,8} : int\n|        [a-zé ]{0,20}\n|\n|[^\n]{0,12}\n|\\):|:param ){0,40}",
            start in 1u32..50,
            len in 0u32..50,
        ) {
            let l = lines(&text);
            let span = LineSpan { start, end: start + len };
            if let Some(d) = docstring(&l, span) {
                let count = l.len() as u32;
                for n in d.summary.0.iter().chain(d.parameters.iter().flat_map(|p| p.0.iter())) {
                    proptest::prop_assert!(*n >= 1 && *n <= count);
                }
            }
        }
    }

    #[test]
    fn a_one_line_definition_does_not_take_the_next_ones_docstring() {
        let src = "class AError(Exception): pass\n\n\ndef g():\n    \"\"\"Say what g does in a few words.\"\"\"\n    return 1\n";
        let l = lines(src);
        assert!(docstring(&l, LineSpan { start: 1, end: 1 }).is_none());
        let g = docstring(&l, LineSpan { start: 4, end: 6 }).expect("g");
        assert_eq!(g.summary.1, "Say what g does in a few words.");
    }

    #[test]
    fn a_summary_ends_where_a_section_begins() {
        let src = "def h(a):\n    \"\"\"Scale the samples by a factor.\n    Args:\n        a (float): the factor applied to every sample\n    \"\"\"\n";
        let d = docstring(&lines(src), LineSpan { start: 1, end: 5 }).expect("h");
        assert_eq!(
            d.summary,
            (vec![2], "Scale the samples by a factor.".to_owned())
        );
        assert_eq!(
            d.parameters,
            vec![(vec![4], "the factor applied to every sample".to_owned())]
        );
    }

    #[test]
    fn a_sections_title_lines_are_its_heading_and_adornments() {
        assert!(titles("=========", "Moves"));
        assert!(titles("Moves and proposals", "moves and proposals"));
        assert!(titles("## Moves and proposals", "Moves and proposals"));
        assert!(!titles("The moves are proposals.", "Moves and proposals"));
    }

    #[test]
    fn code_without_a_docstring_gives_nothing() {
        let src = "def f(x):\n    return \"\"\"not a docstring\"\"\" if x else 1\n";
        assert!(docstring(&lines(src), LineSpan { start: 1, end: 2 }).is_none());
        let unclosed = "def f(x):\n    \"\"\"never closed\n    return 1\n";
        assert!(docstring(&lines(unclosed), LineSpan { start: 1, end: 3 }).is_none());
        let sphinx = "def g(a):\n    '''Add one.\n\n    :param a: the number to which one is added\n    '''\n";
        let d = docstring(&lines(sphinx), LineSpan { start: 1, end: 5 }).expect("doc");
        assert_eq!(
            d.parameters,
            vec![(vec![4], "the number to which one is added".to_owned())]
        );
    }
}
