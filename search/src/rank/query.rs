//! Query analysis: the words BM25 searches (stop words out, composites and
//! their parts, consecutive pairs) and the toolkits a question names.

use cairn_index::Snapshot;
use cairn_index::analyzer::code_analyzer;
use std::collections::BTreeSet;

/// Question words that carry no evidence in a query (as the analyzer stems them).
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from",
    "into", "is", "are", "was", "be", "been", "do", "doe", "did", "how", "what", "which", "when",
    "where", "whi", "who", "i", "my", "me", "we", "our", "you", "your", "it", "that", "this",
    "there", "can", "should", "would", "could", "will", "not",
];

/// A query as BM25 sees it, from one pass of the analyzer.
#[derive(Debug, PartialEq)]
pub struct QueryWords {
    /// Analyzed terms without stop words, deduplicated, in order (composites
    /// like `log_prob` and their parts).
    pub terms: Vec<String>,
    /// Consecutive evidence words, as analyzed leaves (`log_prob` gives `log`,
    /// `prob`), paired for proximity: text where the query's words stand
    /// together is more likely about what the query asks.
    pub pairs: Vec<[String; 2]>,
}

impl QueryWords {
    /// Analyzes `query` once for both.
    pub fn new(query: &str) -> Self {
        let mut analyzer = code_analyzer();
        let mut stream = analyzer.token_stream(query);
        let mut seen = BTreeSet::new();
        let mut terms = Vec::new();
        // The last token at each position is the leaf (composites come first).
        let mut leaves: Vec<(usize, String)> = Vec::new();
        while let Some(t) = stream.next() {
            if STOP_WORDS.contains(&t.text.as_str()) {
                continue;
            }
            if seen.insert(t.text.clone()) {
                terms.push(t.text.clone());
            }
            match leaves.last_mut() {
                Some(last) if last.0 == t.position => last.1 = t.text.clone(),
                _ => leaves.push((t.position, t.text.clone())),
            }
        }
        let mut pairs: Vec<[String; 2]> = Vec::new();
        for w in leaves.windows(2) {
            let pair = [w[0].1.clone(), w[1].1.clone()];
            if pair[0] != pair[1] && !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
        Self { terms, pairs }
    }
}

/// Toolkits the query names (`emcee`, `MulensModel`, `corner.py` or `corner`)
/// among the repositories a caller with `groups` may see.
///
/// Naming a package is strong evidence of where the answer lives; the engine
/// uses it as a soft filter and keeps the name out of the BM25 terms, where it
/// would reward any text that merely mentions the package. A hidden
/// repository's name is just a word, as if the repository did not exist.
pub fn mentioned_toolkits(
    snap: &Snapshot,
    query: &str,
    groups: Option<&[String]>,
) -> (Vec<String>, String) {
    let mut names: Vec<(String, String)> = Vec::new();
    for r in snap
        .manifest
        .repos
        .iter()
        .filter(|r| crate::access::visible_groups(&r.groups, groups))
    {
        for n in [r.name.to_lowercase(), r.toolkit.to_lowercase()] {
            names.push((n.clone(), r.toolkit.clone()));
            if let Some(stem) = n.strip_suffix(".py") {
                names.push((stem.to_owned(), r.toolkit.clone()));
            }
        }
    }
    let mut found = Vec::new();
    let mut rest = Vec::new();
    for word in query.split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_' || c == '-')) {
        let w = word.trim_matches('.').to_lowercase();
        match names.iter().find(|(n, _)| *n == w) {
            Some((_, tk)) => {
                if !found.contains(tk) {
                    found.push(tk.clone());
                }
            }
            None => rest.push(word),
        }
    }
    let remaining = rest.join(" ");
    if remaining.trim().is_empty() {
        // The query is only a package name: keep it as the search text.
        (found, query.to_owned())
    } else {
        (found, remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_consecutive_evidence_words() {
        // Stop words drop out between pairs; identifiers pair by their parts.
        let pairs = QueryWords::new("Error: the initial log_prob was nan").pairs;
        let want: Vec<[String; 2]> = [
            ["error", "initi"],
            ["initi", "log"],
            ["log", "prob"],
            ["prob", "nan"],
        ]
        .iter()
        .map(|[a, b]| [a.to_string(), b.to_string()])
        .collect();
        assert_eq!(pairs, want);
        assert!(QueryWords::new("emcee").pairs.is_empty());
    }
}
