//! `trigrams.bin`: which documents hold each trigram of their text, so a
//! grep reads only the documents that can match (as zoekt and Google Code
//! Search do: the pattern becomes a query over trigrams, the real pattern
//! then runs on the candidates alone).
//!
//! A notebook's trigrams are those of its raw JSON and of its cells' decoded
//! source, which is what a grep matches there. Trigrams are of ASCII-lowercased bytes, so one file serves case-sensitive
//! and case-insensitive searches (the pattern, folded the same way, selects a
//! superset that the real match narrows); those holding a line break are
//! left out, since a grep matches within one line. The format, little-endian:
//! `CTRG`, u32 format (1), u32 documents, u32 trigrams; then per trigram,
//! sorted, `(u32 key, u32 offset, u32 documents)`; then the postings, each a
//! run of LEB128 deltas of ascending document numbers.

use crate::records::DocRecord;
use std::collections::HashMap;

const MAGIC: &[u8; 4] = b"CTRG";
const FORMAT: u32 = 1;
const HEADER: usize = 16;
const ENTRY: usize = 12;
/// Candidates few enough that reading another posting list to narrow them costs more than scanning them.
const SMALL: usize = 8;

/// A trigram as its three folded bytes.
pub type Key = u32;

/// The trigram keys of `text`, folded, in text order (with repeats).
pub fn keys(text: &[u8]) -> impl Iterator<Item = Key> + '_ {
    text.windows(3).filter_map(|w| {
        if w.contains(&b'\n') || w.contains(&b'\r') {
            return None;
        }
        let [a, b, c] = [w[0], w[1], w[2]].map(|x| u32::from(x.to_ascii_lowercase()));
        Some((a << 16) | (b << 8) | c)
    })
}

/// What a pattern requires of a document's trigrams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Query {
    /// Nothing known: every document is a candidate.
    Any,
    /// This trigram.
    Tri(Key),
    /// All of these.
    And(Vec<Query>),
    /// One of these.
    Or(Vec<Query>),
}

impl Query {
    /// Every trigram of `literal` (folded): a document holding the literal holds them all.
    pub fn literal(literal: &[u8]) -> Self {
        let mut tris: Vec<Key> = keys(literal).collect();
        tris.sort_unstable();
        tris.dedup();
        match tris.len() {
            0 => Query::Any,
            1 => Query::Tri(tris[0]),
            _ => Query::And(tris.into_iter().map(Query::Tri).collect()),
        }
    }

    /// `self` and `other`, simplified.
    pub fn and(self, other: Query) -> Query {
        match (self, other) {
            (Query::Any, q) | (q, Query::Any) => q,
            (Query::And(mut a), Query::And(b)) => {
                a.extend(b);
                Query::And(a)
            }
            (Query::And(mut a), q) | (q, Query::And(mut a)) => {
                a.push(q);
                Query::And(a)
            }
            (a, b) => Query::And(vec![a, b]),
        }
    }

    /// `self` or `other`, simplified.
    pub fn or(self, other: Query) -> Query {
        match (self, other) {
            (Query::Any, _) | (_, Query::Any) => Query::Any,
            (Query::Or(mut a), Query::Or(b)) => {
                a.extend(b);
                Query::Or(a)
            }
            (Query::Or(mut a), q) | (q, Query::Or(mut a)) => {
                a.push(q);
                Query::Or(a)
            }
            (a, b) => Query::Or(vec![a, b]),
        }
    }
}

/// The file's bytes for `docs`, whose text lies in `content`.
pub fn encode(docs: &[DocRecord], content: &[u8]) -> Vec<u8> {
    let mut postings: HashMap<Key, Vec<u32>> = HashMap::new();
    let mut seen: Vec<Key> = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        let start = d.content_offset as usize;
        let text = content
            .get(start..start.saturating_add(d.size as usize))
            .unwrap_or_default();
        seen.clear();
        seen.extend(keys(text));
        // A notebook is searched by its cells' decoded text, whose trigrams
        // (an unescaped quote, a backslash) the JSON does not hold.
        if d.language == crate::Language::Notebook
            && let Some(nb) = std::str::from_utf8(text)
                .ok()
                .and_then(|s| crate::notebook::Notebook::parse(s, &crate::LineIndex::new(text)))
        {
            for line in nb.cells.iter().flat_map(|c| &c.lines) {
                seen.extend(keys(line.text.as_bytes()));
            }
        }
        seen.sort_unstable();
        seen.dedup();
        for k in &seen {
            postings.entry(*k).or_default().push(i as u32);
        }
    }
    let mut table: Vec<(Key, Vec<u32>)> = postings.into_iter().collect();
    table.sort_unstable_by_key(|(k, _)| *k);
    let mut out = Vec::with_capacity(HEADER + table.len() * (ENTRY + 4));
    out.extend_from_slice(MAGIC);
    for n in [FORMAT, docs.len() as u32, table.len() as u32] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    let mut body = Vec::new();
    for (k, list) in &table {
        out.extend_from_slice(&k.to_le_bytes());
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&(list.len() as u32).to_le_bytes());
        let mut prev = 0u32;
        for (j, d) in list.iter().enumerate() {
            let delta = if j == 0 { *d } else { d - prev };
            leb128(&mut body, delta);
            prev = *d;
        }
    }
    out.extend_from_slice(&body);
    out
}

fn leb128(out: &mut Vec<u8>, mut v: u32) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Why a trigram file cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("trigrams.bin is not a trigram file of this format: {0}")]
pub struct TrigramError(&'static str);

/// A trigram file, read.
pub struct Trigrams<B> {
    bytes: B,
    docs: u32,
    count: usize,
}

impl<B: AsRef<[u8]>> Trigrams<B> {
    /// Checks the header and the table's bounds.
    pub fn new(bytes: B) -> Result<Self, TrigramError> {
        let b = bytes.as_ref();
        if b.len() < HEADER || &b[..4] != MAGIC {
            return Err(TrigramError("no CTRG header"));
        }
        let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        if word(4) != FORMAT {
            return Err(TrigramError("another format"));
        }
        let (docs, count) = (word(8), word(12) as usize);
        if count
            .checked_mul(ENTRY)
            .and_then(|t| t.checked_add(HEADER))
            .is_none_or(|end| end > b.len())
        {
            return Err(TrigramError("the table runs past the end"));
        }
        Ok(Self { bytes, docs, count })
    }

    /// Documents the file covers.
    pub fn docs(&self) -> u32 {
        self.docs
    }

    fn entry(&self, i: usize) -> (Key, usize, usize) {
        let b = self.bytes.as_ref();
        let at = HEADER + i * ENTRY;
        let word = |j: usize| u32::from_le_bytes([b[j], b[j + 1], b[j + 2], b[j + 3]]);
        (word(at), word(at + 4) as usize, word(at + 8) as usize)
    }

    /// The table entry of `key`.
    fn find(&self, key: Key) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.entry(mid).0.cmp(&key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The documents holding `key`, ascending (empty when none or when the
    /// postings are damaged: a search then finds nothing there rather than failing).
    pub fn docs_with(&self, key: Key) -> Vec<u32> {
        self.find(key).map(|i| self.postings(i)).unwrap_or_default()
    }

    fn postings(&self, i: usize) -> Vec<u32> {
        let (_, offset, n) = self.entry(i);
        let body = &self.bytes.as_ref()[HEADER + self.count * ENTRY..];
        let mut out = Vec::with_capacity(n);
        let (mut at, mut prev) = (offset, 0u32);
        for _ in 0..n {
            let (mut v, mut shift) = (0u32, 0);
            loop {
                let Some(byte) = body.get(at) else {
                    return Vec::new();
                };
                at += 1;
                v |= u32::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
                shift += 7;
                if byte & 0x80 == 0 {
                    break;
                }
            }
            prev = if out.is_empty() {
                v
            } else {
                prev.saturating_add(v)
            };
            out.push(prev);
        }
        out
    }

    /// The candidate documents of `q`, ascending; `None` when every document is one.
    pub fn candidates(&self, q: &Query) -> Option<Vec<u32>> {
        match q {
            Query::Any => None,
            Query::Tri(k) => Some(self.docs_with(*k)),
            Query::And(qs) => {
                // Single trigrams by how many documents hold them, read
                // rarest first; once few candidates are left, a long list
                // costs more to read than the scan it would save, so it is
                // skipped (candidates are a superset either way).
                let mut tris: Vec<(usize, usize)> = Vec::new();
                let mut acc: Option<Vec<u32>> = None;
                for q in qs {
                    match q {
                        Query::Tri(k) => match self.find(*k) {
                            Some(i) => tris.push((self.entry(i).2, i)),
                            None => return Some(Vec::new()),
                        },
                        other => {
                            if let Some(l) = self.candidates(other) {
                                acc = Some(match acc {
                                    Some(a) => intersect(&a, &l),
                                    None => l,
                                });
                            }
                        }
                    }
                }
                tris.sort_unstable();
                for (count, i) in tris {
                    acc = match acc {
                        None => Some(self.postings(i)),
                        Some(a) if a.len() <= SMALL || count > 16 * a.len() => Some(a),
                        Some(a) => Some(intersect(&a, &self.postings(i))),
                    };
                }
                acc
            }
            Query::Or(qs) => {
                let mut all = Vec::new();
                for q in qs {
                    all.extend(self.candidates(q)?);
                }
                all.sort_unstable();
                all.dedup();
                Some(all)
            }
        }
    }
}

fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DocId, Doctype, Language};

    fn docs(texts: &[&str]) -> (Vec<DocRecord>, Vec<u8>) {
        let mut content = Vec::new();
        let docs = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let d = DocRecord {
                    doc_id: DocId::new("c", "r", &format!("f{i}.py")).expect("id"),
                    category: "c".into(),
                    repo: "r".into(),
                    toolkit: "r".into(),
                    path: format!("f{i}.py"),
                    doctype: Doctype::Code,
                    language: Language::Python,
                    size: t.len() as u64,
                    sha256: String::new(),
                    line_count: 1,
                    content_offset: content.len() as u64,
                    groups: Vec::new(),
                    pdf: None,
                };
                content.extend_from_slice(t.as_bytes());
                d
            })
            .collect();
        (docs, content)
    }

    #[test]
    fn literals_select_exactly_the_documents_holding_their_trigrams() {
        let (d, c) = docs(&[
            "def get_chi2(self):",
            "Get_Chi2 in caps",
            "nothing\nhere",
            "chi",
        ]);
        let t = Trigrams::new(encode(&d, &c)).expect("read");
        assert_eq!(t.docs(), 4);
        assert_eq!(t.candidates(&Query::literal(b"get_chi2")), Some(vec![0, 1]));
        assert_eq!(t.candidates(&Query::literal(b"chi")), Some(vec![0, 1, 3]));
        // A trigram across a line break is never indexed, nor asked for.
        assert_eq!(t.candidates(&Query::literal(b"g\nh")), None);
        assert_eq!(t.candidates(&Query::literal(b"ng\nh")), None);
        assert_eq!(t.candidates(&Query::literal(b"zzz")), Some(vec![]));
        let either = Query::literal(b"caps").or(Query::literal(b"here"));
        assert_eq!(t.candidates(&either), Some(vec![1, 2]));
        assert_eq!(t.candidates(&Query::Any.or(Query::literal(b"x"))), None);
        assert!(Trigrams::new(b"CTRG\x02\0\0\0".to_vec()).is_err());
        assert!(Trigrams::new(b"nope".to_vec()).is_err());
    }
}
