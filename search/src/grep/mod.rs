//! Exact search, like `git grep -n` over the indexed commits: a literal or a
//! regular expression (RE2 semantics, the `regex` crate: linear time, no
//! backreferences) matched line by line, over the documents a caller may
//! see, each match a cited line span. The pattern also becomes a trigram
//! query ([`cairn_index::trigrams`]) so only candidate documents are read.
//! Here: the request, the answer, and the scan (candidates within the
//! filters and the caller's groups, read in doc_id order and matched line by
//! line; pages by cursor; stops at the caps and the deadline); `pattern.rs`
//! compiles a pattern and its trigram query.

mod pattern;
mod request;

pub use pattern::compile;
pub use request::{
    DEFAULT_GREP_LIMIT, GrepRequest, MAX_CONTEXT, MAX_GREP_LIMIT, MAX_LINE_CHARS, MAX_PATTERN_BYTES,
};

use crate::access;
use crate::engine::{Engine, MAX_TEXT_BYTES};
use crate::error::{SearchError, invalid};
use cairn_index::LineSpan;
use pattern::Pattern;
use serde::Serialize;
use utoipa::ToSchema;

/// Lines matched between two looks at the deadline.
const LINES_PER_CHECK: usize = 4096;
/// Bytes of a file matched at once before the deadline is looked at again.
const BYTES_PER_CHECK: usize = 256 * 1024;
/// The longest `path` glob taken: its matcher is a regular expression built
/// per call, and a long enough glob makes one too large to build.
pub const MAX_GLOB_BYTES: usize = 256;

/// One matching line, cited.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct GrepMatch {
    /// The matching line, 1-based.
    pub line: u32,
    /// Its text (cut at 500 characters).
    pub text: String,
    /// First line of the cited span (the match with its context).
    pub start_line: u32,
    /// Last line of the cited span.
    pub end_line: u32,
    /// The context lines before the match, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    /// The context lines after the match, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// The span on GitHub, on the default branch.
    pub github_url: String,
    /// The span on GitHub, at the indexed commit.
    pub permalink: String,
}

/// The matches in one document.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct GrepFile {
    /// `<category>/<repo>/<path>`.
    pub doc_id: String,
    /// Toolkit.
    pub toolkit: String,
    /// Doctype.
    #[schema(value_type = String)]
    #[schemars(with = "String")]
    pub doctype: cairn_index::Doctype,
    /// Its matches, by line.
    pub matches: Vec<GrepMatch>,
}

/// Why a page of matches stopped before the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GrepCap {
    /// `limit` matches were found.
    Matches,
    /// The text returned reached 48,000 bytes.
    Bytes,
    /// The deadline came first.
    Deadline,
}

impl GrepCap {
    /// Its name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            GrepCap::Matches => "matches",
            GrepCap::Bytes => "bytes",
            GrepCap::Deadline => "deadline",
        }
    }
}

/// A page of matches, ordered by doc_id, then line.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct GrepResponse {
    /// The pattern as given.
    pub pattern: String,
    /// Documents with matches, in doc_id order.
    pub files: Vec<GrepFile>,
    /// Matches in this page.
    pub matches: usize,
    /// Why this page stopped early, when it did (more may follow from `next_cursor`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<GrepCap>,
    /// Pass as `cursor` for the next page; absent when this page is the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Documents read (those the trigram index could not rule out, within the filters).
    pub documents_read: usize,
    /// The version answering.
    pub index_version: String,
}

impl std::fmt::Display for GrepResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for file in &self.files {
            for m in &file.matches {
                writeln!(f, "{}:{}:{}", file.doc_id, m.line, m.text)?;
            }
        }
        match (self.truncated, &self.next_cursor) {
            (Some(cap), Some(c)) => writeln!(
                f,
                "(stopped at the {} cap; more with --cursor {c})",
                cap.name()
            ),
            _ => Ok(()),
        }
    }
}

/// Where a page starts: after position `line` (a line; in a notebook, a
/// line of its cells' source) of the document at `rank` in doc_id order.
struct Cursor {
    rank: usize,
    line: u32,
}

impl Engine {
    /// The documents in doc_id order.
    fn by_doc_id(&self) -> &[u32] {
        self.by_doc_id.get_or_init(|| {
            let mut order: Vec<u32> = (0..self.snap.docs.len() as u32).collect();
            order.sort_by(|a, b| {
                self.snap.docs[*a as usize]
                    .doc_id
                    .as_str()
                    .cmp(self.snap.docs[*b as usize].doc_id.as_str())
            });
            order
        })
    }

    /// `version.rank.line`, so a page of another version is refused, not misread.
    fn cursor(&self, c: &Cursor) -> String {
        format!("{}.{}.{}", self.snap.version, c.rank, c.line)
    }

    fn parse_cursor(&self, s: &str) -> Result<Cursor, SearchError> {
        let bad = || invalid("cursor", format!("{s:?} is not a cursor this index gave"));
        let mut parts = s.split('.');
        let (Some(version), Some(rank), Some(line), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if version != self.snap.version.as_str() {
            return Err(invalid(
                "cursor",
                format!(
                    "comes from index {version}; this is {}: start the grep again",
                    self.snap.version
                ),
            ));
        }
        Ok(Cursor {
            rank: rank.parse().map_err(|_| bad())?,
            line: line.parse().map_err(|_| bad())?,
        })
    }

    /// Every line matching `req`'s pattern in the documents the caller may
    /// see, a page at a time.
    pub fn grep(&self, req: &GrepRequest) -> Result<GrepResponse, SearchError> {
        let pattern = Pattern::new(req)?;
        access::check_filters(&self.snap, &req.filters, req.groups.as_deref())?;
        let limit = grep_limit(req)?;
        let glob = req.path.as_deref().map(path_glob).transpose()?;
        let start = req
            .cursor
            .as_deref()
            .map(|c| self.parse_cursor(c))
            .transpose()?
            .unwrap_or(Cursor { rank: 0, line: 0 });
        let allowed = access::allowed_docs(&self.snap, &req.filters, req.groups.as_deref());
        let may_match = self.may_match(&pattern, allowed.len());
        let mut page = Page {
            out: GrepResponse {
                pattern: req.pattern.clone(),
                files: Vec::new(),
                matches: 0,
                truncated: None,
                next_cursor: None,
                documents_read: 0,
                index_version: self.snap.version.to_string(),
            },
            bytes: 0,
            limit,
        };
        // A cursor's rank counts only the documents this caller and these
        // filters allow: counting all of them would tell how many hidden
        // documents sort between two visible ones.
        let order = self.by_doc_id().iter().filter(|d| allowed[**d as usize]);
        for (rank, &doc) in order.enumerate().skip(start.rank) {
            let d = &self.snap.docs[doc as usize];
            if may_match.as_ref().is_some_and(|m| !m[doc as usize])
                || glob.as_ref().is_some_and(|g| !g.is_match(&d.path))
            {
                continue;
            }
            if req.deadline.passed() {
                page.stop(GrepCap::Deadline, self.cursor(&Cursor { rank, line: 0 }));
                break;
            }
            page.out.documents_read += 1;
            let Ok(text) = std::str::from_utf8(self.snap.doc_bytes(doc)) else {
                continue;
            };
            let lines = match self.doc_lines(doc, text, &pattern, &req.deadline) {
                DocLines::Lines(lines) => lines,
                DocLines::NoMatch => continue,
                DocLines::Deadline => {
                    page.stop(GrepCap::Deadline, self.cursor(&Cursor { rank, line: 0 }));
                    break;
                }
            };
            // The cursor counts positions in `lines` (a notebook's raw line can hold several).
            let from = if rank == start.rank { start.line } else { 0 };
            let scan = DocScan {
                doc,
                rank,
                from,
                lines: &lines,
            };
            let file = self.match_lines(&mut page, &scan, req, &pattern);
            if !file.matches.is_empty() {
                page.out.files.push(file);
            }
            if page.out.truncated.is_some() {
                break;
            }
        }
        Ok(page.out)
    }

    /// The documents that may hold a match by the trigram index (`None`: all may).
    fn may_match(&self, pattern: &Pattern, docs: usize) -> Option<Vec<bool>> {
        // The walk only ever visits allowed documents, so this need not mask them.
        self.snap
            .trigrams
            .as_ref()
            .and_then(|t| t.candidates(&pattern.query))
            .map(|candidates| {
                let mut keep = vec![false; docs];
                for d in candidates {
                    if let Some(k) = keep.get_mut(d as usize) {
                        *k = true;
                    }
                }
                keep
            })
    }

    /// The lines of `doc` to match, each with the raw line it cites.
    fn doc_lines<'t>(
        &'t self,
        doc: u32,
        text: &'t str,
        pattern: &Pattern,
        deadline: &crate::Deadline,
    ) -> DocLines<'t> {
        // A notebook's lines are its cells' decoded source, others' their own.
        if let Some(nb) = self.notebook(doc) {
            return DocLines::Lines(
                nb.cells
                    .iter()
                    .flat_map(|c| c.lines.iter().map(|l| (l.raw, l.text.as_str())))
                    .collect(),
            );
        }
        // Whole-text first: most candidates hold no match, and one
        // pass finds that; in blocks of whole lines, so a slow
        // pattern over a large file still meets the deadline.
        match any_line_matches(text, &pattern.line, deadline) {
            Some(true) => {}
            Some(false) => return DocLines::NoMatch,
            None => return DocLines::Deadline,
        }
        let count = self.snap.line_index(doc).line_count() as usize;
        DocLines::Lines(
            text.split('\n')
                .take(count)
                .enumerate()
                .map(|(i, l)| (i as u32 + 1, l))
                .collect(),
        )
    }

    /// One document's matches from `scan.from` on, until the page fills or the deadline passes.
    fn match_lines(
        &self,
        page: &mut Page,
        scan: &DocScan<'_>,
        req: &GrepRequest,
        pattern: &Pattern,
    ) -> GrepFile {
        let d = &self.snap.docs[scan.doc as usize];
        let mut file = GrepFile {
            doc_id: d.doc_id.to_string(),
            toolkit: d.toolkit.clone(),
            doctype: d.doctype,
            matches: Vec::new(),
        };
        let (rank, from) = (scan.rank, scan.from);
        for (i, (_, line)) in scan.lines.iter().enumerate().skip(from as usize) {
            if i % LINES_PER_CHECK == 0 && i > from as usize && req.deadline.passed() {
                // This file's matches so far are kept; the next page starts here.
                let line = i as u32;
                page.stop(GrepCap::Deadline, self.cursor(&Cursor { rank, line }));
                break;
            }
            if !pattern.line.is_match(line) {
                continue;
            }
            let m = self.grep_match(scan, i, req.context as usize);
            page.bytes += m.text.len()
                + m.before
                    .iter()
                    .chain(&m.after)
                    .map(String::len)
                    .sum::<usize>();
            let position = i as u32 + 1;
            if page.bytes > MAX_TEXT_BYTES && page.out.matches > 0 {
                let line = position - 1;
                page.stop(GrepCap::Bytes, self.cursor(&Cursor { rank, line }));
                break;
            }
            file.matches.push(m);
            page.out.matches += 1;
            if page.out.matches == page.limit {
                let line = position;
                page.stop(GrepCap::Matches, self.cursor(&Cursor { rank, line }));
                break;
            }
        }
        file
    }

    /// The match at position `i` of `scan.lines`, with `ctx` lines of context either side.
    fn grep_match(&self, scan: &DocScan<'_>, i: usize, ctx: usize) -> GrepMatch {
        let lines = scan.lines;
        let (n, line) = lines[i];
        let cut = |l: &(u32, &str)| l.1.chars().take(MAX_LINE_CHARS).collect::<String>();
        let around = &lines[i.saturating_sub(ctx)..(i + 1 + ctx).min(lines.len())];
        let before: Vec<String> = lines[i.saturating_sub(ctx)..i].iter().map(cut).collect();
        let after: Vec<String> = lines[i + 1..(i + 1 + ctx).min(lines.len())]
            .iter()
            .map(cut)
            .collect();
        let span = LineSpan {
            start: around.first().map_or(n, |l| l.0),
            end: around.last().map_or(n, |l| l.0),
        };
        let (github_url, permalink) = self.links(scan.doc, span);
        GrepMatch {
            line: n,
            text: cut(&(n, line)),
            start_line: span.start,
            end_line: span.end,
            before,
            after,
            github_url,
            permalink,
        }
    }
}

/// A page of matches as it fills: the answer so far, the text bytes it
/// returns, and the most matches it may hold.
struct Page {
    out: GrepResponse,
    bytes: usize,
    limit: usize,
}

impl Page {
    /// Ends the page early at `cap`; the next one starts from `cursor`.
    fn stop(&mut self, cap: GrepCap, cursor: String) {
        self.out.truncated = Some(cap);
        self.out.next_cursor = Some(cursor);
    }
}

/// One document's lines being matched: where it stands in the walk and
/// the position of its lines the page starts from.
struct DocScan<'t> {
    doc: u32,
    rank: usize,
    from: u32,
    lines: &'t [(u32, &'t str)],
}

/// What a document offers the line-by-line match.
enum DocLines<'t> {
    /// Its lines, each with the raw line it cites.
    Lines(Vec<(u32, &'t str)>),
    /// The whole-text pass found no match: nothing to read line by line.
    NoMatch,
    /// The deadline passed during the whole-text pass.
    Deadline,
}

/// The page size `req` asks for, once its limit and context are in range.
fn grep_limit(req: &GrepRequest) -> Result<usize, SearchError> {
    let limit = match req.limit {
        0 => DEFAULT_GREP_LIMIT,
        n if n > MAX_GREP_LIMIT => {
            return Err(invalid("limit", format!("at most {MAX_GREP_LIMIT}")));
        }
        n => n,
    };
    if req.context > MAX_CONTEXT {
        return Err(invalid("context", format!("at most {MAX_CONTEXT} lines")));
    }
    Ok(limit)
}

/// The matcher of a `path` glob, or why it is refused (422 naming `path`):
/// too long, not a glob, or one whose matcher is too large to build (the
/// set builder says so where a single glob's matcher would panic).
fn path_glob(g: &str) -> Result<globset::GlobSet, SearchError> {
    if g.len() > MAX_GLOB_BYTES {
        return Err(invalid(
            "path",
            format!("a glob of at most {MAX_GLOB_BYTES} bytes"),
        ));
    }
    let glob = globset::GlobBuilder::new(g)
        .literal_separator(false)
        .build()
        .map_err(|e| invalid("path", format!("not a glob: {}", e.kind())))?;
    globset::GlobSetBuilder::new()
        .add(glob)
        .build()
        .map_err(|_| invalid("path", "this glob is too complex to match; simplify it"))
}

/// Whether any line of `text` matches `re`, looked at in blocks of whole
/// lines with the deadline checked between them; `None` once it passed.
fn any_line_matches(text: &str, re: &regex::Regex, deadline: &crate::Deadline) -> Option<bool> {
    let mut rest = text;
    while !rest.is_empty() {
        if deadline.passed() {
            return None;
        }
        let cut = match rest.len() <= BYTES_PER_CHECK {
            true => rest.len(),
            // A newline byte is always a character boundary.
            false => rest.as_bytes()[BYTES_PER_CHECK..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(rest.len(), |i| BYTES_PER_CHECK + i + 1),
        };
        let (block, after) = rest.split_at(cut);
        if re.is_match(block) {
            return Some(true);
        }
        rest = after;
    }
    Some(false)
}
