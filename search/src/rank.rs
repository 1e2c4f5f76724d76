//! Ranking: BM25 and vector candidates, reciprocal rank fusion with protected
//! identifier matches, weights, merging overlapping chunks, snippets.

use cairn_index::analyzer::code_analyzer;
use cairn_index::schema::ChunkSchema;
use cairn_index::{Doctype, Snapshot};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use tantivy::query::{
    Bm25StatisticsProvider, BooleanQuery, BoostQuery, Occur, PhraseQuery, Query, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocSet, Searcher, TERMINATED, Term, collector::FilterCollector, collector::TopDocs};

/// RRF's k: how fast a list's influence falls with rank.
const RRF_K: f32 = 60.0;
/// Field boosts for BM25: a match in a definition name or title says more
/// than one in the body; one in the neighbouring chunks' text says less.
const BOOSTS: [(&str, f32); 5] = [
    ("body", 1.0),
    ("title", 2.0),
    ("symbols", 2.5),
    ("path", 1.5),
    ("context", 0.3),
];

/// Weight of a pair of the query's words found together in a body (see [`QueryWords::pairs`]).
const PAIR_BOOST: f32 = 0.7;
/// How many words may stand between a pair's two words (1: "log of prob" still counts).
const PAIR_SLOP: u32 = 1;

/// What caller-scoped BM25 statistics read, gathered once per opened
/// version: each tantivy document's chunk ordinal, and each scored field's
/// length per chunk (tantivy's fieldnorm, the length its BM25 uses).
pub struct Bm25Tables {
    /// Per segment, per document: the chunk ordinal.
    chunk_of: Vec<Vec<u32>>,
    /// Per scored field: its length in each chunk (by ordinal).
    lengths: Vec<(Field, Vec<u32>)>,
}

impl Bm25Tables {
    /// Reads the tables of `snap`'s index.
    pub fn new(snap: &Snapshot) -> tantivy::Result<Self> {
        let s = &snap.schema;
        let fields = [s.body, s.title, s.symbols, s.path, s.context];
        let mut lengths: Vec<(Field, Vec<u32>)> = fields
            .iter()
            .map(|f| (*f, vec![0; snap.chunks.len()]))
            .collect();
        let searcher = snap.reader.searcher();
        let mut chunk_of = Vec::new();
        for seg in searcher.segment_readers() {
            let column = seg.fast_fields().u64("chunk")?;
            let norms = fields
                .iter()
                .map(|f| seg.get_fieldnorms_reader(*f))
                .collect::<tantivy::Result<Vec<_>>>()?;
            let mut ords = Vec::with_capacity(seg.max_doc() as usize);
            for doc in 0..seg.max_doc() {
                let ord = column.first(doc).map_or(u32::MAX, |o| o as u32);
                ords.push(ord);
                for ((_, per_chunk), norm) in lengths.iter_mut().zip(&norms) {
                    if let Some(len) = per_chunk.get_mut(ord as usize) {
                        *len = norm.fieldnorm(doc);
                    }
                }
            }
            chunk_of.push(ords);
        }
        Ok(Self { chunk_of, lengths })
    }

    /// The chunk ordinal of a tantivy document.
    fn chunk(&self, segment: usize, doc: tantivy::DocId) -> Option<u32> {
        self.chunk_of
            .get(segment)
            .and_then(|d| d.get(doc as usize))
            .copied()
            .filter(|o| *o != u32::MAX)
    }
}

/// BM25 statistics (document count, field lengths, document frequencies)
/// over the chunks one caller may see, so that a hidden document moves no
/// visible score: the answer is the one the caller would get if the hidden
/// documents did not exist.
pub struct ScopedStats<'a> {
    searcher: Searcher,
    tables: &'a Bm25Tables,
    visible: &'a [bool],
    /// Every chunk is visible: document frequencies come from tantivy's
    /// term dictionary (the same count, without scanning postings).
    all: bool,
}

impl<'a> ScopedStats<'a> {
    /// Statistics over the chunks `visible` marks.
    pub fn new(snap: &Snapshot, tables: &'a Bm25Tables, visible: &'a [bool]) -> Self {
        Self {
            searcher: snap.reader.searcher(),
            tables,
            visible,
            all: visible.iter().all(|v| *v),
        }
    }

    fn sees(&self, chunk: u32) -> bool {
        self.visible.get(chunk as usize).copied().unwrap_or(false)
    }
}

impl Bm25StatisticsProvider for ScopedStats<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        match self.tables.lengths.iter().find(|(f, _)| *f == field) {
            Some((_, per_chunk)) => Ok(per_chunk
                .iter()
                .zip(self.visible)
                .filter(|(_, v)| **v)
                .map(|(n, _)| u64::from(*n))
                .sum()),
            None => self.searcher.total_num_tokens(field),
        }
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.visible.iter().filter(|v| **v).count() as u64)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        if self.all {
            return self.searcher.doc_freq(term);
        }
        let mut n = 0u64;
        for (s, seg) in self.searcher.segment_readers().iter().enumerate() {
            let inverted = seg.inverted_index(term.field())?;
            let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic)? else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if self.tables.chunk(s, doc).is_some_and(|c| self.sees(c)) {
                    n += 1;
                }
                doc = postings.advance();
            }
        }
        Ok(n)
    }
}

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

/// What a question asks for, read from its wording: the form decides which
/// doctype gets a prior (see [`form_prior`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuestionForm {
    /// "how does X compute…", "how is…": how the code works.
    Mechanism,
    /// About building, testing in CI or releasing the package.
    Build,
    /// Anything else: no prior.
    Other,
}

/// Words that make a question one about building or releasing. "install" is
/// not among them: install questions are answered by docs and READMEs.
const BUILD_WORDS: [&str; 15] = [
    "ci", "workflow", "release", "released", "pypi", "wheel", "wheels", "docker", "makefile",
    "cmake", "doctest", "doctests", "compile", "build", "built",
];

/// Reads the question's form.
pub fn question_form(query: &str) -> QuestionForm {
    let q = query.trim().to_lowercase();
    if q.split(|c: char| !c.is_alphanumeric())
        .any(|w| BUILD_WORDS.contains(&w))
    {
        QuestionForm::Build
    } else if ["how does ", "how is ", "how are "]
        .iter()
        .any(|p| q.starts_with(p))
    {
        QuestionForm::Mechanism
    } else {
        QuestionForm::Other
    }
}

/// The prior a doctype gets under a question form. A mechanism question's
/// answer is the code that does it, not the page describing its use (1.3); a
/// build question's answer is a workflow, Makefile or pyproject, whose
/// extension weight (0.7 in `config/weights.yaml`) this lifts back (1.4).
/// Measured in docs/QUALITY.md (issue 19); a doc prior for "what is"/"why"
/// and an example prior for "how do I" were measured too and moved nothing.
pub fn form_prior(form: QuestionForm, doctype: Doctype) -> f32 {
    match (form, doctype) {
        (QuestionForm::Mechanism, Doctype::Code) => 1.3,
        (QuestionForm::Build, Doctype::Config) => 1.4,
        _ => 1.0,
    }
}

/// Top `k` BM25 chunks among the allowed ones, best first.
pub fn bm25(
    snap: &Snapshot,
    stats: &ScopedStats<'_>,
    query: &str,
    allowed: &Arc<Vec<bool>>,
    k: usize,
) -> tantivy::Result<Vec<(u32, f32)>> {
    match bm25_query(&snap.schema, query) {
        Some(q) => run(stats, &q, allowed, k),
        None => Ok(Vec::new()),
    }
}

/// The BM25 query for `query` (`None` when it has no evidence words): each
/// term in every field with its boost, plus the query's word pairs in the body.
pub fn bm25_query(s: &ChunkSchema, query: &str) -> Option<BooleanQuery> {
    let QueryWords { terms, pairs } = QueryWords::new(query);
    if terms.is_empty() {
        return None;
    }
    let fields = [s.body, s.title, s.symbols, s.path, s.context];
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for term in &terms {
        for (field, (_, boost)) in fields.iter().zip(BOOSTS) {
            let q = TermQuery::new(
                Term::from_field_text(*field, term),
                IndexRecordOption::WithFreqs,
            );
            clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
        }
    }
    for [a, b] in pairs {
        let q = PhraseQuery::new_with_offset_and_slop(
            vec![
                (0, Term::from_field_text(s.body, &a)),
                (1, Term::from_field_text(s.body, &b)),
            ],
            PAIR_SLOP,
        );
        clauses.push((
            Occur::Should,
            Box::new(BoostQuery::new(Box::new(q), PAIR_BOOST)),
        ));
    }
    Some(BooleanQuery::new(clauses))
}

/// For each identifier the query names exactly (`fit_model`, `ModelParameters`),
/// a list of the chunks that define it, weighing 1/√(documents
/// defining it among its first `k` definitions). A name defined once points at its definition; a name every
/// tutorial defines (`log_prob`) says little about which one is meant.
pub fn identifier_lists(
    snap: &Snapshot,
    stats: &ScopedStats<'_>,
    query: &str,
    allowed: &Arc<Vec<bool>>,
    k: usize,
) -> tantivy::Result<Vec<RankedList>> {
    let mut idents: Vec<String> = Vec::new();
    for word in query
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map(|w| w.trim_matches('.'))
        .filter(|w| is_identifier(w))
    {
        let word = word.to_lowercase();
        let last = word.rsplit('.').next().unwrap_or(&word).to_owned();
        if !idents.contains(&last) {
            idents.push(last);
        }
    }
    let mut out = Vec::with_capacity(idents.len());
    for ident in &idents {
        let q = TermQuery::new(
            Term::from_field_text(snap.schema.symbols, ident),
            IndexRecordOption::Basic,
        );
        let hits = run(stats, &q, allowed, k)?;
        if hits.is_empty() {
            continue;
        }
        let docs: BTreeSet<u32> = hits
            .iter()
            .map(|(c, _)| snap.chunks[*c as usize].doc)
            .collect();
        out.push(RankedList {
            source: Source::Identifier,
            share: 1.0 / (docs.len() as f32).sqrt(),
            hits,
        });
    }
    Ok(out)
}

/// Looks like code rather than a word: snake_case, camelCase, dotted, or CapWords.
fn is_identifier(w: &str) -> bool {
    let inner_upper =
        w.chars().skip(1).any(char::is_uppercase) && w.chars().any(char::is_lowercase);
    w.len() > 2 && (w.contains('_') || w.contains('.') || inner_upper)
}

/// Top `k` allowed chunks for `query`, scored with the caller's `stats`.
fn run(
    stats: &ScopedStats<'_>,
    query: &dyn Query,
    allowed: &Arc<Vec<bool>>,
    k: usize,
) -> tantivy::Result<Vec<(u32, f32)>> {
    let mask = Arc::clone(allowed);
    let collector = FilterCollector::new(
        "chunk".to_owned(),
        move |ord: u64| mask.get(ord as usize).copied().unwrap_or(false),
        TopDocs::with_limit(k),
    );
    let top = stats
        .searcher
        .search_with_statistics_provider(query, &collector, stats)?;
    let mut out = Vec::with_capacity(top.len());
    for (score, addr) in top {
        if let Some(ord) = stats.tables.chunk(addr.segment_ord as usize, addr.doc_id) {
            out.push((ord, score));
        }
    }
    // Deterministic order: score, then chunk ordinal (doc order, then line).
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(out)
}

/// Each chunk's cosine with `query` (a unit vector); `-inf` where not allowed.
/// Computed once per search and ranked under each scope by [`top`].
pub fn chunk_cosines(snap: &Snapshot, query: &[f32], allowed: &[bool]) -> Vec<f32> {
    let dim = snap.vectors.dim();
    let all = snap.vectors.as_slice();
    allowed
        .iter()
        .enumerate()
        .map(|(i, &ok)| {
            if ok {
                dot(&all[i * dim..(i + 1) * dim], query)
            } else {
                f32::NEG_INFINITY
            }
        })
        .collect()
}

/// Each chunk's best subchunk cosine with `query`; `-inf` where not allowed.
pub fn subchunk_cosines(snap: &Snapshot, query: &[f32], allowed: &[bool]) -> Vec<f32> {
    let dim = snap.subchunk_vectors.dim();
    let all = snap.subchunk_vectors.as_slice();
    let mut best = vec![f32::NEG_INFINITY; allowed.len()];
    for (i, s) in snap.subchunks.iter().enumerate() {
        let c = s.chunk as usize;
        if allowed.get(c).copied().unwrap_or(false) {
            best[c] = best[c].max(dot(&all[i * dim..(i + 1) * dim], query));
        }
    }
    best
}

/// The `k` best allowed chunks by `scores` (one per chunk), best first; ties
/// go to the lower chunk.
pub fn top(scores: &[f32], allowed: &[bool], k: usize) -> Vec<(u32, f32)> {
    let mut scored: Vec<(u32, f32)> = scores
        .iter()
        .zip(allowed)
        .enumerate()
        .filter(|(_, (s, ok))| **ok && s.is_finite())
        .map(|(c, (s, _))| (c as u32, *s))
        .collect();
    let cmp = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if scored.len() > k {
        scored.select_nth_unstable_by(k, cmp);
        scored.truncate(k);
    }
    scored.sort_by(cmp);
    scored
}

/// Dot product written so the compiler vectorises it (eight independent sums).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + ra.iter().zip(rb).map(|(x, y)| x * y).sum::<f32>()
}

/// A chunk's evidence from each list.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fused {
    /// Chunk ordinal.
    pub chunk: u32,
    /// BM25 score (0 if absent).
    pub bm25: f32,
    /// Cosine (0 if absent).
    pub cosine: f32,
    /// RRF score.
    pub rrf: f32,
}

/// How much each kind of candidate list counts in the fusion, as a
/// multiplier of its share (1 everywhere: the shares as the engine sets them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FusionShares {
    /// BM25 lists.
    pub bm25: f32,
    /// Chunk-vector lists.
    pub vector: f32,
    /// Subchunk-vector lists.
    pub subchunk: f32,
    /// Identifier lists.
    pub identifier: f32,
}

impl Default for FusionShares {
    fn default() -> Self {
        Self {
            bm25: 1.0,
            vector: 1.0,
            subchunk: 1.0,
            identifier: 1.0,
        }
    }
}

impl FusionShares {
    /// Parses `bm25,vector,subchunk,identifier` (four non-negative numbers).
    pub fn parse(s: &str) -> Option<Self> {
        let v: Vec<f32> = s
            .split(',')
            .map(|x| {
                x.trim()
                    .parse()
                    .ok()
                    .filter(|n: &f32| n.is_finite() && *n >= 0.0)
            })
            .collect::<Option<_>>()?;
        match v[..] {
            [bm25, vector, subchunk, identifier] => Some(Self {
                bm25,
                vector,
                subchunk,
                identifier,
            }),
            _ => None,
        }
    }

    /// The multiplier of lists from `source`.
    pub fn of(&self, source: Source) -> f32 {
        match source {
            Source::Bm25 => self.bm25,
            Source::Vector => self.vector,
            Source::Subchunk => self.subchunk,
            Source::Identifier => self.identifier,
        }
    }
}

/// Where a ranked list came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// BM25 scores.
    Bm25,
    /// Cosine similarities.
    Vector,
    /// Cosine similarities of each chunk's best subchunk.
    Subchunk,
    /// Chunks defining an identifier the query names.
    Identifier,
}

/// One ranked candidate list and its share of the fusion.
pub struct RankedList {
    /// What produced it.
    pub source: Source,
    /// How much a rank in it counts (a share, not a ranking weight).
    pub share: f32,
    /// (chunk, score), best first.
    pub hits: Vec<(u32, f32)>,
}

/// Reciprocal rank fusion, each list counting by its share. Identifier matches count as lists of
/// their own, so a query naming a definition finds it.
pub fn fuse(lists: &[RankedList]) -> Vec<Fused> {
    let mut by_chunk: HashMap<u32, Fused> = HashMap::new();
    for list in lists {
        for (rank, (chunk, score)) in list.hits.iter().enumerate() {
            let f = by_chunk.entry(*chunk).or_insert(Fused {
                chunk: *chunk,
                ..Fused::default()
            });
            match list.source {
                Source::Bm25 => f.bm25 = f.bm25.max(*score),
                Source::Vector => f.cosine = f.cosine.max(*score),
                // A hit's cosine stays its chunk's own: one meaning for the breakdown.
                Source::Subchunk | Source::Identifier => {}
            }
            f.rrf += list.share / (RRF_K + rank as f32 + 1.0);
        }
    }
    let mut out: Vec<Fused> = by_chunk.into_values().collect();
    out.sort_by(|a, b| b.rrf.total_cmp(&a.rrf).then(a.chunk.cmp(&b.chunk)));
    out
}

/// Query words worth marking in a snippet.
fn snippet_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .collect()
}

/// The best `n` lines of `text` for `query`, matches marked with `**`.
pub fn snippet(text: &str, query: &str, n: usize) -> String {
    let words = snippet_words(query);
    let lines: Vec<&str> = text.lines().collect();
    let hits: Vec<usize> = lines
        .iter()
        .map(|l| {
            let lower = l.to_lowercase();
            words.iter().filter(|w| lower.contains(w.as_str())).count()
        })
        .collect();
    let n = n.min(lines.len()).max(1);
    let best = (0..=lines.len().saturating_sub(n))
        .max_by_key(|&s| {
            (
                hits[s..(s + n).min(lines.len())].iter().sum::<usize>(),
                std::cmp::Reverse(s),
            )
        })
        .unwrap_or(0);
    lines[best..(best + n).min(lines.len())]
        .iter()
        .map(|l| mark(&truncate(l, 200), &words))
        .collect::<Vec<_>>()
        .join("\n")
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        s.chars().take(max).collect::<String>() + "…"
    }
}

fn mark(line: &str, words: &[String]) -> String {
    let lower = line.to_lowercase();
    if lower.len() != line.len() {
        return line.to_owned();
    }
    let mut marks = vec![false; line.len()];
    for w in words {
        let mut from = 0;
        while let Some(i) = lower[from..].find(w.as_str()) {
            marks[from + i..from + i + w.len()].fill(true);
            from += i + w.len();
        }
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut open = false;
    for (i, c) in line.char_indices() {
        if marks[i] != open {
            out.push_str("**");
            open = marks[i];
        }
        out.push(c);
    }
    if open {
        out.push_str("**");
    }
    out
}

/// Doctype names the API accepts, for validation messages.
pub fn doctype_names() -> Vec<&'static str> {
    Doctype::ALL.iter().map(Doctype::as_str).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_shares_parse_four_non_negative_numbers() {
        let f = FusionShares::parse("1, 0.5,2,1").expect("parse");
        assert_eq!((f.of(Source::Bm25), f.of(Source::Vector)), (1.0, 0.5));
        assert_eq!(
            (f.of(Source::Subchunk), f.of(Source::Identifier)),
            (2.0, 1.0)
        );
        for bad in ["1,1,1", "1,1,1,1,1", "1,-1,1,1", "1,x,1,1", "1,NaN,1,1", ""] {
            assert!(FusionShares::parse(bad).is_none(), "{bad}");
        }
        assert_eq!(
            FusionShares::default(),
            FusionShares::parse("1,1,1,1").expect("ones")
        );
    }

    fn list(source: Source, share: f32, hits: &[(u32, f32)]) -> RankedList {
        RankedList {
            source,
            share,
            hits: hits.to_vec(),
        }
    }

    #[test]
    fn fusion_rewards_agreement() {
        let bm = [(1, 9.0), (2, 8.0), (3, 7.0)];
        let vec = [(3, 0.9), (4, 0.8), (1, 0.7)];
        let f = fuse(&[
            list(Source::Bm25, 1.0, &bm),
            list(Source::Vector, 1.0, &vec),
        ]);
        let order: Vec<u32> = f.iter().map(|x| x.chunk).collect();
        assert_eq!(order[..2], [1, 3]);
        assert_eq!(f[0].bm25, 9.0);
        assert_eq!(f[0].cosine, 0.7);
        assert_eq!(fuse(&[list(Source::Bm25, 1.0, &bm)]).len(), 3);
        let with_ident = fuse(&[
            list(Source::Bm25, 1.0, &bm),
            list(Source::Vector, 1.0, &vec),
            list(Source::Identifier, 1.0, &[(4, 1.0)]),
        ]);
        assert_eq!(
            with_ident[0].chunk, 4,
            "an exact identifier match is protected"
        );
        let weighted = fuse(&[
            list(Source::Bm25, 0.5, &[(7, 1.0)]),
            list(Source::Bm25, 1.0, &[(8, 1.0)]),
        ]);
        assert_eq!(weighted[0].chunk, 8, "list weights scale ranks");
    }

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

    /// In a real tantivy index with cairn's schema and analyzer: of two bodies
    /// with the same words (so the same term scores), the one where the
    /// query's words stand together wins; a chunk whose neighbour holds them
    /// is found, below both.
    #[test]
    fn words_together_outrank_words_apart_and_neighbours_count_a_little() -> tantivy::Result<()> {
        use tantivy::collector::TopDocs;
        let s = ChunkSchema::new();
        let index = tantivy::Index::create_in_ram(s.schema.clone());
        ChunkSchema::register_analyzers(&index);
        let mut writer =
            index.writer_with_num_threads::<tantivy::TantivyDocument>(1, 15_000_000)?;
        let apart = "small walkers start here in a ball";
        let together = "walkers start here in a small ball";
        // Chunk 2 holds none of the words; its neighbour does.
        for (ord, body, context) in [
            (0u64, apart, ""),
            (1, together, ""),
            (2, "other words", apart),
        ] {
            let mut d = tantivy::TantivyDocument::new();
            d.add_u64(s.chunk, ord);
            d.add_text(s.body, body);
            d.add_text(s.context, context);
            writer.add_document(d)?;
        }
        writer.commit()?;
        let searcher = index.reader()?.searcher();
        let q = bm25_query(&s, "small ball").expect("evidence words");
        let top = searcher.search(&q, &TopDocs::with_limit(3))?;
        use tantivy::schema::Value;
        let mut order = Vec::new();
        for (_, addr) in &top {
            let d: tantivy::TantivyDocument = searcher.doc(*addr)?;
            order.extend(d.get_first(s.chunk).and_then(|v| v.as_u64()));
        }
        assert_eq!(order, [1, 0, 2], "{top:?}");
        assert!(top[0].0 > top[1].0, "{top:?}");
        assert!(bm25_query(&s, "how do I").is_none());
        Ok(())
    }

    #[test]
    fn question_forms_and_their_priors() {
        assert_eq!(
            question_form("How does emcee detect blobs?"),
            QuestionForm::Mechanism
        );
        assert_eq!(
            question_form("which python versions is corner tested on in CI"),
            QuestionForm::Build
        );
        assert_eq!(question_form("build the paper PDF"), QuestionForm::Build);
        // "builder" and "cinema" are not build words: whole words only.
        assert_eq!(
            question_form("the builder pattern in cinema"),
            QuestionForm::Other
        );
        assert_eq!(
            question_form("install corner from source"),
            QuestionForm::Other
        );
        assert_eq!(form_prior(QuestionForm::Mechanism, Doctype::Code), 1.3);
        assert_eq!(form_prior(QuestionForm::Mechanism, Doctype::Doc), 1.0);
        assert_eq!(form_prior(QuestionForm::Build, Doctype::Config), 1.4);
        assert_eq!(form_prior(QuestionForm::Other, Doctype::Config), 1.0);
    }

    #[test]
    fn snippet_marks_terms() {
        let s = snippet("a\nb\nthe emcee Pool here\nc", "emcee pool", 1);
        assert_eq!(s, "the **emcee** **Pool** here");
    }

    #[test]
    fn dot_matches_naive() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.1).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.05).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-4);
    }
}
