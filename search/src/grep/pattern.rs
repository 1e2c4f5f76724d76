//! A grep pattern compiled: the line matcher (RE2 semantics, the `regex`
//! crate: linear time, no backreferences) and the trigram query
//! ([`cairn_index::trigrams`]) that selects the documents worth reading.

use super::request::{GrepRequest, MAX_PATTERN_BYTES};
use crate::error::{SearchError, invalid};
use cairn_index::trigrams::Query;
use regex_syntax::hir::{Class, Hir, HirKind};

/// The most exact strings a pattern's trigram query expands (classes, alternations) before it gives up on them.
const MAX_EXACT: usize = 16;

/// A compiled pattern: the line matcher and the trigram query that selects candidates.
pub(crate) struct Pattern {
    /// Matches one line.
    pub line: regex::Regex,
    /// What a document must hold to possibly match.
    pub query: Query,
}

impl Pattern {
    /// Checks and compiles `req`'s pattern.
    pub fn new(req: &GrepRequest) -> Result<Self, SearchError> {
        let p = &req.pattern;
        if p.is_empty() {
            return Err(invalid("pattern", "is empty"));
        }
        if p.len() > MAX_PATTERN_BYTES {
            return Err(invalid(
                "pattern",
                format!("is {} bytes; at most {MAX_PATTERN_BYTES}", p.len()),
            ));
        }
        let body = match req.regex {
            true => p.clone(),
            false => regex::escape(p),
        };
        let body = match req.word {
            true => format!(r"\b(?:{body})\b"),
            false => body,
        };
        let line = regex::RegexBuilder::new(&body)
            .case_insensitive(!req.case_sensitive)
            .multi_line(true)
            .size_limit(4 << 20)
            .dfa_size_limit(8 << 20)
            .build()
            .map_err(|e| invalid("pattern", regex_error(&e)))?;
        let query = regex_syntax::ParserBuilder::new()
            .case_insensitive(!req.case_sensitive)
            .multi_line(true)
            .build()
            .parse(&body)
            .map(|hir| query_of(&hir))
            // Whatever the parser refuses, the regex crate accepted: read every document.
            .unwrap_or(Query::Any);
        Ok(Self { line, query })
    }
}

/// The line matcher and trigram query of `req`'s pattern, as `Engine::grep`
/// makes them (benchmarks time the same).
pub fn compile(req: &GrepRequest) -> Result<(regex::Regex, Query), SearchError> {
    Pattern::new(req).map(|p| (p.line, p.query))
}

/// The regex crate's message, on one line.
fn regex_error(e: &regex::Error) -> String {
    let text = e.to_string();
    match text.lines().last() {
        Some(last) if text.lines().count() > 1 => format!("not a valid regular expression: {last}"),
        _ => format!("not a valid regular expression: {text}"),
    }
}

/// The trigram query of a pattern: what any line it matches must contain.
fn query_of(hir: &Hir) -> Query {
    match exact(hir) {
        Some(set) => any_of(&set),
        None => inexact(hir),
    }
}

/// The query of a set of exact strings: one of them is in the line.
fn any_of(set: &[Vec<u8>]) -> Query {
    set.iter()
        .map(|s| Query::literal(s))
        .reduce(Query::or)
        .unwrap_or(Query::Any)
}

/// The query of a node whose strings cannot all be listed.
fn inexact(hir: &Hir) -> Query {
    match hir.kind() {
        HirKind::Capture(c) => query_of(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => query_of(&r.sub),
        HirKind::Alternation(alts) => alts
            .iter()
            .map(query_of)
            .reduce(Query::or)
            .unwrap_or(Query::Any),
        HirKind::Concat(parts) => {
            // Runs of parts with exact strings are crossed into longer
            // strings (their trigrams span the joins); the rest add their own.
            let mut q = Query::Any;
            let mut run: Vec<Vec<u8>> = vec![Vec::new()];
            for part in parts {
                match exact(part).and_then(|set| cross(&run, &set)) {
                    Some(longer) => run = longer,
                    None => {
                        q = q.and(any_of(&run));
                        run = match exact(part) {
                            Some(set) => set,
                            None => {
                                q = q.and(inexact(part));
                                vec![Vec::new()]
                            }
                        };
                    }
                }
            }
            q.and(any_of(&run))
        }
        _ => Query::Any,
    }
}

/// `a` × `b` as strings, when the result stays small.
fn cross(a: &[Vec<u8>], b: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    if a.len().saturating_mul(b.len()) > MAX_EXACT {
        return None;
    }
    let mut out: Vec<Vec<u8>> = a
        .iter()
        .flat_map(|x| {
            b.iter().map(move |y| {
                let mut s = x.clone();
                s.extend_from_slice(y);
                s
            })
        })
        .collect();
    out.sort();
    out.dedup();
    Some(out)
}

/// Every string a node matches, folded to lowercase (as the trigram index
/// is), when there are few; `None` when there are many or infinitely many.
fn exact(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(vec![Vec::new()]),
        HirKind::Literal(l) => Some(vec![l.0.to_ascii_lowercase()]),
        HirKind::Class(Class::Unicode(c)) => {
            let mut out: Vec<Vec<u8>> = Vec::new();
            for r in c.ranges() {
                if out.len() + (r.end() as usize - r.start() as usize) > MAX_EXACT {
                    return None;
                }
                for ch in r.start()..=r.end() {
                    let mut buf = [0u8; 4];
                    out.push(ch.encode_utf8(&mut buf).as_bytes().to_ascii_lowercase());
                }
            }
            out.sort();
            out.dedup();
            Some(out)
        }
        HirKind::Class(Class::Bytes(c)) => {
            let mut out: Vec<Vec<u8>> = Vec::new();
            for r in c.ranges() {
                if out.len() + usize::from(r.end() - r.start()) > MAX_EXACT {
                    return None;
                }
                out.extend((r.start()..=r.end()).map(|b| vec![b.to_ascii_lowercase()]));
            }
            out.sort();
            out.dedup();
            Some(out)
        }
        HirKind::Capture(c) => exact(&c.sub),
        HirKind::Concat(parts) => parts
            .iter()
            .try_fold(vec![Vec::new()], |acc, p| cross(&acc, &exact(p)?)),
        HirKind::Alternation(alts) => {
            let mut out = Vec::new();
            for a in alts {
                out.extend(exact(a)?);
                if out.len() > MAX_EXACT {
                    return None;
                }
            }
            out.sort();
            out.dedup();
            Some(out)
        }
        HirKind::Repetition(r) if r.min == 1 && r.max == Some(1) => exact(&r.sub),
        HirKind::Repetition(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pattern: &str, regex: bool, case_sensitive: bool) -> Query {
        Pattern::new(&GrepRequest {
            pattern: pattern.to_owned(),
            regex,
            case_sensitive,
            ..GrepRequest::default()
        })
        .map(|p| p.query)
        .unwrap_or_else(|e| panic!("{pattern}: {e}"))
    }

    #[test]
    fn patterns_become_the_trigrams_every_match_holds() {
        assert_eq!(q("get_chi2", false, true), Query::literal(b"get_chi2"));
        assert_eq!(q("Get_Chi2", false, false), Query::literal(b"get_chi2"));
        assert_eq!(q("ab", false, true), Query::Any);
        // An alternation is one of its branches (in byte order).
        assert_eq!(
            q("emcee|dynesty", true, true),
            Query::literal(b"dynesty").or(Query::literal(b"emcee"))
        );
        // A class crosses into the strings around it.
        assert_eq!(
            q("chi[23]", true, true),
            Query::literal(b"chi2").or(Query::literal(b"chi3"))
        );
        // `.*` breaks a concatenation; both sides still count.
        assert_eq!(
            q("def .*sampler", true, true),
            Query::literal(b"def ").and(Query::literal(b"sampler"))
        );
        // Optional parts and wide classes ask for nothing.
        assert_eq!(q("x?", true, true), Query::Any);
        assert_eq!(q(r"\w+", true, true), Query::Any);
    }

    #[test]
    fn bad_patterns_are_refused_by_field() {
        for (pattern, regex) in [("", false), ("(unclosed", true), ("a{1000000}", true)] {
            let e = Pattern::new(&GrepRequest {
                pattern: pattern.to_owned(),
                regex,
                ..GrepRequest::default()
            })
            .err()
            .unwrap_or_else(|| panic!("{pattern:?} accepted"));
            assert!(
                matches!(
                    e,
                    SearchError::Invalid {
                        field: "pattern",
                        ..
                    }
                ),
                "{e}"
            );
        }
        let long = "x".repeat(MAX_PATTERN_BYTES + 1);
        assert!(
            Pattern::new(&GrepRequest {
                pattern: long,
                ..GrepRequest::default()
            })
            .is_err()
        );
    }
}
