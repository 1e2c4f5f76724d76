//! LaTeX citations understood: the keys of `\cite`, `\citep`, `\citet` …
//! resolved against the repository's bibliography (its `.bib` entries and
//! the `\bibitem`s of its `.tex` files), so a passage that cites a paper is
//! found by that paper's authors and title. The resolution is added to the
//! chunk's indexed and embedded text only; its span and snippet stay the
//! file's own lines. Used by `build` after chunking a repository.

use std::collections::{BTreeMap, BTreeSet};

/// Most characters one resolved reference adds.
const REFERENCE_CHARS: usize = 160;
/// Most references one passage's `cites:` line names: a survey paragraph
/// citing hundreds of papers is not about each of them, and its indexed text
/// stays within a few lines more than its own.
const REFERENCES_PER_TEXT: usize = 16;
/// Most keys read from one passage.
const KEYS_PER_TEXT: usize = 256;
/// Most characters of a citation's optional argument (`[see][p.~3]`).
const OPTION_CHARS: usize = 200;

/// A repository's references by citation key.
#[derive(Clone, Debug, Default)]
pub struct Bibliography {
    by_key: BTreeMap<String, String>,
}

impl Bibliography {
    /// Adds a `.bib` file's entries: `Authors (Year) Title`.
    pub fn add_bibtex(&mut self, text: &str) {
        for e in crate::bibtex::entries(text) {
            let parts: Vec<String> = [e.field("author"), e.field("year"), e.field("title")]
                .into_iter()
                .flatten()
                .collect();
            if !parts.is_empty() {
                self.insert(e.key, parts.join(" "));
            }
        }
    }

    /// Adds a LaTeX file's `\bibitem[label]{key} reference` lines.
    pub fn add_bibitems(&mut self, tex: &str) {
        let lines: Vec<&str> = tex.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = line.trim_start().strip_prefix("\\bibitem") else {
                continue;
            };
            let (label, rest) = match rest.trim_start().strip_prefix('[') {
                Some(r) => match r.split_once(']') {
                    Some((label, after)) => (label, after),
                    None => continue,
                },
                None => ("", rest),
            };
            let Some((key, after)) = rest
                .trim_start()
                .strip_prefix('{')
                .and_then(|r| r.split_once('}'))
            else {
                continue;
            };
            // The reference runs on the next lines until the next item.
            let mut text = format!("{label} {after}");
            for next in lines.iter().skip(i + 1).take(3) {
                if next.trim_start().starts_with("\\bibitem") || next.trim().is_empty() {
                    break;
                }
                text.push(' ');
                text.push_str(next);
            }
            self.insert(key.trim().to_owned(), plain(&text));
        }
    }

    fn insert(&mut self, key: String, reference: String) {
        let reference: String = reference.chars().take(REFERENCE_CHARS).collect();
        self.by_key.entry(key).or_insert(reference);
    }

    /// Whether it holds no reference.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// `cites: …` for the keys `text` cites that it knows, in order of first
    /// citation (each once); `None` when it knows none of them.
    /// At most [`REFERENCES_PER_TEXT`] references.
    pub fn resolve(&self, text: &str) -> Option<String> {
        let mut named = BTreeSet::new();
        let mut refs: Vec<&str> = Vec::new();
        for key in keys(text) {
            if refs.len() == REFERENCES_PER_TEXT {
                break;
            }
            if let Some(r) = self.by_key.get(&key)
                && named.insert(r.as_str())
            {
                refs.push(r);
            }
        }
        (!refs.is_empty()).then(|| format!("cites: {}", refs.join("; ")))
    }
}

/// The keys cited in `text`: every command whose name holds `cite`
/// (natbib's `\citep`, `\citet`, `\citealp` …, biblatex's `\autocite`,
/// `\parencite`, `\textcite` …), starred or not, after its optional
/// `[…]` arguments; each key once, at most [`KEYS_PER_TEXT`]. A group that
/// is not closed before the next brace or command is no citation.
pub fn keys(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        let after = &rest[at + 1..];
        let name_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        rest = &after[name_len..];
        if !after[..name_len].contains("cite") {
            continue;
        }
        let mut tail = rest.trim_start_matches('*');
        // Optional arguments: `[see][p. 3]`, each closed within a few words
        // and before any brace (so an unclosed one costs no rescan).
        while let Some(r) = tail.strip_prefix('[') {
            let close = r
                .char_indices()
                .take(OPTION_CHARS)
                .find(|&(_, c)| matches!(c, ']' | '{' | '}'));
            tail = match close {
                Some((end, ']')) => &r[end + 1..],
                _ => "",
            };
        }
        let Some(group) = tail.strip_prefix('{') else {
            continue;
        };
        let Some(end) = group.find(['}', '{', '\\']) else {
            continue;
        };
        rest = &group[end..];
        if group.as_bytes()[end] != b'}' {
            continue;
        }
        for k in group[..end].split(',').map(str::trim) {
            if out.len() == KEYS_PER_TEXT {
                return out;
            }
            if !k.is_empty() && seen.insert(k) {
                out.push(k.to_owned());
            }
        }
    }
    out
}

/// LaTeX markup dropped from a reference: commands' backslashes, braces,
/// ties and escaped ampersands, spaces squeezed.
fn plain(s: &str) -> String {
    s.replace("\\&", "&")
        .replace(['{', '}', '~'], " ")
        .replace('\\', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_every_citation_form() {
        let t = "as in \\citep[for example,][]{Dunkley:2005} and \\citet{a, b} \\cite*{c}; \\citetalias{Goodman:2010} \\parencite[p.~3]{d} \\textcite{e} \\emph{f} \\cite{";
        assert_eq!(
            keys(t),
            ["Dunkley:2005", "a", "b", "c", "Goodman:2010", "d", "e"]
        );
        assert!(keys("no citations here").is_empty());
        // An unclosed group reads nothing, and never the rest of the text.
        assert_eq!(keys("\\cite{a, \\cite{b}"), ["b"]);
        assert_eq!(keys("\\citep[see {x}]{a}"), Vec::<String>::new());
        // A hostile line costs its length: keys once each, at most 256.
        let line = "\\cite{a,".repeat(50_000) + "}";
        assert_eq!(keys(&line), ["a"]);
        assert!(keys(&"\\cite[".repeat(50_000)).is_empty());
        let many: String = (0..1000).map(|i| format!("\\cite{{k{i}}} ")).collect();
        assert_eq!(keys(&many).len(), KEYS_PER_TEXT);
    }

    #[test]
    fn citations_resolve_to_authors_and_titles() {
        let mut b = Bibliography::default();
        b.add_bibtex("@article{fm13, author = {Foreman-Mackey, D.}, year = {2013}, title = {emcee: The {MCMC} Hammer}}\n");
        b.add_bibitems("\\bibitem[Goodman \\& Weare(2010)]{Goodman:2010} Goodman, J. \\& Weare, J.\\ 2010,\nComm. App. Math.\n\\bibitem{x} X\n");
        assert_eq!(
            b.resolve("walkers \\citep{fm13, Goodman:2010, unknown} and \\citet{fm13}")
                .as_deref(),
            Some(
                "cites: Foreman-Mackey, D. 2013 emcee: The MCMC Hammer; Goodman & Weare(2010) Goodman, J. & Weare, J. 2010, Comm. App. Math."
            )
        );
        assert_eq!(b.resolve("\\cite{unknown}"), None);
        // A paragraph citing hundreds of papers names the first few.
        let mut big = Bibliography::default();
        for i in 0..100 {
            big.add_bibtex(&format!("@article{{k{i}, title = {{Paper {i}}}}}\n"));
        }
        let all: Vec<String> = (0..100).map(|i| format!("k{i}")).collect();
        let cites = big
            .resolve(&format!("\\citep{{{}}}", all.join(",")))
            .unwrap_or_default();
        assert_eq!(cites.matches("Paper").count(), REFERENCES_PER_TEXT);
    }
}
