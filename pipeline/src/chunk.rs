//! Structure-aware chunking: every chunk is an exact line span of the raw file.
//!
//! A document is first cut into *sections* by its structure (Markdown and reST
//! headings, LaTeX sections, top-level `def`/`class` in Python, top-level
//! blocks in brace languages, Fortran units, notebook cells mapped back to the
//! raw `.ipynb` lines). Small neighbouring sections are packed together; a
//! section over the line or token limit is cut into overlapping windows,
//! preferring blank lines and inner definitions as cut points. The text that
//! is indexed and embedded is the span's text (for notebooks: the decoded cell
//! source); the span itself never changes.
//!
//! The same cuts under tighter limits give *subchunks*: short windows that are
//! embedded on their own and each vote for the chunk they overlap most, so a
//! paragraph inside a long chunk is found by its own meaning.

use crate::documents::SourceDoc;
use cairn_index::{LineIndex, LineSpan};

/// Limits a chunk must respect.
#[derive(Clone, Copy, Debug)]
pub struct ChunkLimits {
    /// Most lines in one chunk.
    pub max_lines: u32,
    /// Lines repeated between windows of one long section.
    pub overlap: u32,
    /// Sections shorter than this are packed with their neighbours.
    pub min_lines: u32,
    /// Most model tokens of chunk text (the header and special tokens already taken off).
    pub max_tokens: usize,
}

/// One chunk before embedding.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChunkDraft {
    /// Lines of the raw file.
    pub span: LineSpan,
    /// Section title or definition name.
    pub title: String,
    /// Names defined in the chunk.
    pub symbols: Vec<String>,
    /// Text to index and embed.
    pub text: String,
    /// Estimated model tokens of `text`.
    pub tokens: usize,
    /// The subchunks that vote for this chunk.
    #[serde(default)]
    pub subchunks: Vec<SubchunkDraft>,
}

impl ChunkDraft {
    /// Rows it adds to the embedded vectors (their order is [`cairn_index::rows`]').
    pub fn embedded_rows(&self) -> usize {
        cairn_index::rows::rows_of_chunk(self.subchunks.len())
    }
}

/// One subchunk before embedding (see the module doc).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SubchunkDraft {
    /// Lines of the raw file.
    pub span: LineSpan,
    /// Section title or definition name.
    pub title: String,
    /// Text to embed.
    pub text: String,
    /// Estimated model tokens of `text`.
    pub tokens: usize,
}

/// A structural unit: lines `start..=end` (1-based).
#[derive(Clone, Debug)]
struct Section {
    start: u32,
    end: u32,
    title: String,
}

/// Chunks `doc` under `limits`, with its subchunks under `subchunk_limits`
/// attached. `count` returns model tokens for each line (no special tokens).
pub fn chunk_document(
    doc: &SourceDoc,
    index: &LineIndex,
    limits: &ChunkLimits,
    subchunk_limits: &ChunkLimits,
    count: &dyn Fn(&[&str]) -> Vec<usize>,
) -> Vec<ChunkDraft> {
    let n = index.line_count();
    if n == 0 {
        return Vec::new();
    }
    let raw: Vec<&str> = (1..=n)
        .map(|l| {
            let r = index
                .byte_range(LineSpan { start: l, end: l })
                .unwrap_or(0..0);
            doc.text[r].trim_end_matches(['\n', '\r'])
        })
        .collect();
    let notebook = doc.language == "notebook";
    let (sections, display): (Vec<Section>, Vec<String>) = if notebook {
        match notebook_sections(&doc.text, index) {
            Some(s) => {
                // Only cell sources carry text; outputs and metadata stay out of the index.
                let mut inside = vec![false; raw.len()];
                for sec in &s {
                    inside[(sec.start - 1) as usize..sec.end as usize].fill(true);
                }
                let display = raw
                    .iter()
                    .zip(&inside)
                    .map(|(l, &keep)| {
                        if keep {
                            notebook_line_text(l)
                        } else {
                            String::new()
                        }
                    })
                    .collect();
                (s, display)
            }
            None => (
                vec![whole(n)],
                raw.iter().map(|l| (*l).to_owned()).collect(),
            ),
        }
    } else {
        (
            sections_for(doc.language, &raw),
            raw.iter().map(|l| (*l).to_owned()).collect(),
        )
    };
    let display_refs: Vec<&str> = display.iter().map(String::as_str).collect();
    let tokens = count(&display_refs);
    let soft = soft_boundaries(doc.language, &raw);
    let ctx = |limits| Ctx {
        lines: &display_refs,
        tokens: &tokens,
        soft: &soft,
        limits,
        language: doc.language,
    };
    let mut chunks = ctx(limits).drafts(sections.clone());
    let subchunks = ctx(subchunk_limits).drafts(sections);
    attach(&mut chunks, subchunks);
    chunks
}

/// Gives each subchunk to the chunk it overlaps most (the first such chunk on a tie).
fn attach(chunks: &mut [ChunkDraft], subchunks: Vec<ChunkDraft>) {
    for s in subchunks {
        let best = chunks
            .iter()
            .enumerate()
            .max_by_key(|(i, c)| (c.span.shared_lines(&s.span), std::cmp::Reverse(*i)))
            .map(|(i, _)| i);
        if let Some(i) = best.filter(|&i| chunks[i].span.overlaps(&s.span)) {
            chunks[i].subchunks.push(SubchunkDraft {
                span: s.span,
                title: s.title,
                text: s.text,
                tokens: s.tokens,
            });
        }
    }
}

fn whole(n: u32) -> Section {
    Section {
        start: 1,
        end: n,
        title: String::new(),
    }
}

struct Ctx<'a> {
    lines: &'a [&'a str],
    tokens: &'a [usize],
    soft: &'a [bool],
    limits: &'a ChunkLimits,
    language: &'a str,
}

impl Ctx<'_> {
    /// The drafts of `sections`: packed, cut into windows, blank windows dropped.
    fn drafts(&self, sections: Vec<Section>) -> Vec<ChunkDraft> {
        let mut out = Vec::new();
        for section in pack(self, sections) {
            for span in self.windows(&section) {
                let lines = &self.lines[(span.start - 1) as usize..span.end as usize];
                let text = lines.join("\n");
                if text.trim().is_empty() {
                    continue;
                }
                out.push(ChunkDraft {
                    symbols: symbols(self.language, lines),
                    tokens: self.tokens_of(span.start, span.end),
                    title: self.window_title(&section, span),
                    span,
                    text,
                    subchunks: Vec::new(),
                });
            }
        }
        out
    }

    fn tokens_of(&self, start: u32, end: u32) -> usize {
        // One extra token a line stands in for the newline the line tokens do not see.
        self.tokens[(start - 1) as usize..end as usize]
            .iter()
            .map(|t| t + 1)
            .sum()
    }

    fn fits(&self, start: u32, end: u32) -> bool {
        self.line_count(start, end) <= self.limits.max_lines
            && self.tokens_of(start, end) <= self.limits.max_tokens
    }

    /// Lines that count against the limit: in a notebook only lines that carry
    /// cell source (outputs between cells are in the span but not in the text).
    fn line_count(&self, start: u32, end: u32) -> u32 {
        if self.language == "notebook" {
            self.lines[(start - 1) as usize..end as usize]
                .iter()
                .filter(|l| !l.is_empty())
                .count() as u32
        } else {
            end - start + 1
        }
    }

    /// Cuts a section into windows within the limits, preferring soft boundaries.
    fn windows(&self, s: &Section) -> Vec<LineSpan> {
        let mut out = Vec::new();
        let mut start = s.start;
        loop {
            // Skip leading blank lines: a span should start on content.
            while start < s.end && self.lines[(start - 1) as usize].trim().is_empty() {
                start += 1;
            }
            let mut end = start;
            while end < s.end && self.fits(start, end + 1) {
                end += 1;
            }
            if end < s.end {
                // Back off to a soft boundary in the last two thirds of the window.
                let floor = start + (end - start) / 3;
                if let Some(cut) = (floor + 1..=end).rev().find(|&l| self.soft[l as usize]) {
                    end = cut;
                }
            }
            let mut last = end;
            while last > start && self.lines[(last - 1) as usize].trim().is_empty() {
                last -= 1;
            }
            out.push(LineSpan { start, end: last });
            if end >= s.end {
                break;
            }
            let next = (end + 1).saturating_sub(self.limits.overlap);
            start = if next > start { next } else { end + 1 };
        }
        out
    }

    fn window_title(&self, s: &Section, span: LineSpan) -> String {
        // Inside a long class, name the method the window is in.
        if self.language == "python" {
            let inner = (s.start..=span.end).rev().find_map(|l| {
                let line = self.lines[(l - 1) as usize];
                let t = line.trim_start();
                (line.len() != t.len()).then(|| def_name(t)).flatten()
            });
            if let Some(name) = inner
                && !s.title.is_empty()
            {
                return format!("{} > {name}", s.title);
            }
        }
        s.title.clone()
    }
}

/// Packs runs of small sections into one, while the result fits.
fn pack(ctx: &Ctx, sections: Vec<Section>) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    for s in sections {
        if let Some(prev) = out.last_mut() {
            let small = |a: u32, b: u32| ctx.line_count(a, b) < ctx.limits.min_lines;
            // A notebook's short markdown cell and the code cells after it belong
            // together, across the outputs between them; a titled (markdown)
            // cell starts a new chunk rather than trailing the code before it.
            let starts_section = ctx.language == "notebook" && !s.title.is_empty();
            if !starts_section
                && (small(prev.start, prev.end) || small(s.start, s.end))
                && ctx.fits(prev.start, s.end)
            {
                prev.end = s.end;
                if prev.title.is_empty() {
                    prev.title = s.title;
                }
                continue;
            }
        }
        out.push(s);
    }
    out
}

/// Turns boundary lines (1-based, sorted) into sections covering lines 1..=n.
fn from_boundaries(n: u32, mut starts: Vec<(u32, String)>) -> Vec<Section> {
    starts.retain(|(l, _)| *l >= 1 && *l <= n);
    starts.dedup_by_key(|(l, _)| *l);
    if starts.first().is_none_or(|(l, _)| *l != 1) {
        starts.insert(0, (1, String::new()));
    }
    let mut out = Vec::with_capacity(starts.len());
    for (i, (start, title)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(n, |(next, _)| next - 1);
        out.push(Section {
            start: *start,
            end,
            title: title.clone(),
        });
    }
    out
}

fn sections_for(language: &str, lines: &[&str]) -> Vec<Section> {
    let n = lines.len() as u32;
    let starts = match language {
        "markdown" => markdown_headings(lines),
        "rst" => rst_headings(lines),
        "latex" => latex_sections(lines),
        "python" => python_defs(lines),
        "c" | "cpp" | "cuda" | "rust" | "javascript" | "typescript" | "java" | "go" => {
            brace_blocks(lines)
        }
        "fortran" => fortran_units(lines),
        _ => Vec::new(),
    };
    from_boundaries(n, starts)
}

fn markdown_headings(lines: &[&str]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut fence = false;
    let mut path: Vec<(usize, String)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if fence || !l.starts_with('#') {
            continue;
        }
        let level = l.chars().take_while(|&c| c == '#').count();
        let rest = &l[level..];
        if level > 6 || !(rest.is_empty() || rest.starts_with(' ')) {
            continue;
        }
        let title = rest.trim().trim_end_matches('#').trim().to_owned();
        path.retain(|(lv, _)| *lv < level);
        path.push((level, title));
        out.push((i as u32 + 1, join_path(&path)));
    }
    out
}

fn join_path(path: &[(usize, String)]) -> String {
    path.iter()
        .map(|(_, t)| t.as_str())
        .collect::<Vec<_>>()
        .join(" > ")
}

fn is_rst_underline(l: &str) -> Option<char> {
    let t = l.trim_end();
    let c = t.chars().next()?;
    (t.len() >= 3 && "=-~^\"'`#*+:.".contains(c) && t.chars().all(|x| x == c)).then_some(c)
}

fn rst_headings(lines: &[&str]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut levels: Vec<char> = Vec::new();
    let mut path: Vec<(usize, String)> = Vec::new();
    for i in 0..lines.len().saturating_sub(1) {
        let title = lines[i].trim();
        if title.is_empty() || is_rst_underline(lines[i]).is_some() || lines[i].starts_with(' ') {
            continue;
        }
        let Some(c) = is_rst_underline(lines[i + 1]) else {
            continue;
        };
        if lines[i + 1].trim_end().len() < title.chars().count().min(3) {
            continue;
        }
        let overline = i > 0 && is_rst_underline(lines[i - 1]) == Some(c);
        let level = levels.iter().position(|&x| x == c).unwrap_or_else(|| {
            levels.push(c);
            levels.len() - 1
        });
        path.retain(|(lv, _)| *lv < level);
        path.push((level, title.to_owned()));
        let start = if overline { i } else { i + 1 };
        out.push((start as u32, join_path(&path)));
    }
    out
}

fn latex_sections(lines: &[&str]) -> Vec<(u32, String)> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let t = l.trim_start();
            [
                "\\chapter",
                "\\section",
                "\\subsection",
                "\\subsubsection",
                "\\paragraph",
                "\\begin{table",
            ]
            .iter()
            .any(|p| t.starts_with(p))
            .then(|| (i as u32 + 1, t.chars().take(80).collect()))
        })
        .collect()
}

/// `def name` / `class name` of a trimmed line.
fn def_name(t: &str) -> Option<String> {
    let rest = t
        .strip_prefix("async def ")
        .or_else(|| t.strip_prefix("def "))
        .map(|r| ("def", r))
        .or_else(|| t.strip_prefix("class ").map(|r| ("class", r)))?;
    let name: String = rest
        .1
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then(|| format!("{} {name}", rest.0))
}

fn python_defs(lines: &[&str]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = def_name(l) else { continue };
        // Decorators and comments directly above belong to the definition.
        let mut start = i;
        while start > 0 {
            let p = lines[start - 1];
            if p.starts_with('@') || p.starts_with('#') {
                start -= 1;
            } else {
                break;
            }
        }
        out.push((start as u32 + 1, name));
    }
    out
}

fn brace_blocks(lines: &[&str]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut depth: i64 = 0;
    for (i, l) in lines.iter().enumerate() {
        let starts_block = depth == 0
            && l.chars()
                .next()
                .is_some_and(|c| !c.is_whitespace() && c != '}' && c != '{' && c != ')')
            && (i == 0 || lines[i - 1].trim().is_empty() || lines[i - 1].starts_with('}'));
        if starts_block {
            let title = lines[i..]
                .iter()
                .take(6)
                .map(|x| x.trim())
                .find(|x| {
                    !x.starts_with("//")
                        && !x.starts_with("/*")
                        && !x.starts_with('*')
                        && !x.is_empty()
                })
                .unwrap_or("")
                .chars()
                .take(100)
                .collect();
            out.push((i as u32 + 1, title));
        }
        depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
        depth = depth.max(0);
    }
    out
}

fn fortran_units(lines: &[&str]) -> Vec<(u32, String)> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let t = l.trim().to_ascii_lowercase();
            let unit = !t.starts_with("end")
                && (t.starts_with("subroutine ")
                    || t.starts_with("module ")
                    || t.starts_with("program ")
                    || t.contains("function ") && !t.starts_with('!'));
            unit.then(|| (i as u32 + 1, l.trim().chars().take(80).collect()))
        })
        .collect()
}

/// `soft[l]`: line `l` (1-based) is a good place to end a window (the next line starts something).
fn soft_boundaries(language: &str, lines: &[&str]) -> Vec<bool> {
    let n = lines.len();
    let mut soft = vec![false; n + 1];
    for l in 1..n {
        let next = lines[l];
        let blank_here = lines[l - 1].trim().is_empty();
        let next_t = next.trim_start();
        let inner_def = language == "python"
            && (next_t.starts_with("def ")
                || next_t.starts_with("async def ")
                || next_t.starts_with('@'));
        soft[l] = blank_here || inner_def;
    }
    soft[n] = true;
    soft
}

/// Definition and parameter names in Python lines, function names in brace languages.
fn symbols(language: &str, lines: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for l in lines {
        let t = l.trim_start();
        if language == "python" || language == "notebook" {
            if let Some(name) = def_name(t) {
                out.push(
                    name.split_once(' ')
                        .map_or(name.clone(), |(_, n)| n.to_owned()),
                );
                if let Some(params) = t.split_once('(').map(|(_, p)| p) {
                    for p in params.split([',', ')']) {
                        let p = p.trim().trim_start_matches('*');
                        let name: String = p
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if name.len() > 1 && name != "self" && name != "cls" {
                            out.push(name);
                        }
                    }
                }
            }
        } else if !l.starts_with(char::is_whitespace)
            && !t.ends_with(';')
            && let Some((head, _)) = t.split_once('(')
        {
            let name: String = head
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .to_owned();
            if name.len() > 1
                && !["if", "for", "while", "switch", "return"].contains(&name.as_str())
            {
                out.push(name);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Each notebook cell's span: the raw lines of its `source` (outputs, which
/// nbformat writes before the source, are left out).
fn notebook_sections(text: &str, index: &LineIndex) -> Option<Vec<Section>> {
    use serde_json::value::RawValue;
    #[derive(serde::Deserialize)]
    struct Nb<'a> {
        #[serde(borrow)]
        cells: Vec<&'a RawValue>,
    }
    #[derive(serde::Deserialize)]
    struct Cell<'a> {
        cell_type: String,
        #[serde(borrow)]
        source: &'a RawValue,
    }
    let nb: Nb = serde_json::from_str(text).ok()?;
    let base = text.as_ptr() as usize;
    let mut out = Vec::new();
    for raw in nb.cells {
        let cell: Cell = serde_json::from_str(raw.get()).ok()?;
        // RawValue borrows from `text`, so pointer differences are byte offsets into it.
        let src = cell.source.get();
        let src_start = src.as_ptr() as usize - base;
        let src_end = src_start + src.len();
        let start = index.line_of_byte(src_start);
        let end = index.line_of_byte(src_end.saturating_sub(1));
        let first_line = match serde_json::from_str::<serde_json::Value>(src).ok()? {
            serde_json::Value::Array(a) => {
                a.first().and_then(|v| v.as_str()).unwrap_or("").to_owned()
            }
            serde_json::Value::String(s) => s.lines().next().unwrap_or("").to_owned(),
            _ => String::new(),
        };
        let title = if cell.cell_type == "markdown" {
            first_line
                .trim_start_matches('#')
                .trim()
                .chars()
                .take(80)
                .collect()
        } else {
            String::new()
        };
        out.push(Section { start, end, title });
    }
    Some(out)
}

/// The text a raw `.ipynb` line carries: the decoded string of a source line, else nothing.
fn notebook_line_text(line: &str) -> String {
    let t = line.trim().trim_end_matches(',');
    if t.starts_with('"')
        && t.ends_with('"')
        && t.len() >= 2
        && !t.contains("\": ")
        && let Ok(s) = serde_json::from_str::<String>(t)
    {
        return s.trim_end_matches('\n').to_owned();
    }
    // `"source": "one line"` form, and structural lines.
    if let Some(rest) = t.strip_prefix("\"source\": ") {
        return serde_json::from_str::<String>(rest).unwrap_or_default();
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_index::Doctype;

    fn doc(path: &str, language: &'static str, text: &str) -> SourceDoc {
        SourceDoc {
            path: path.into(),
            text: text.into(),
            doctype: Doctype::Doc,
            language,
        }
    }

    fn words(lines: &[&str]) -> Vec<usize> {
        lines.iter().map(|l| l.split_whitespace().count()).collect()
    }

    const LIMITS: ChunkLimits = ChunkLimits {
        max_lines: 20,
        overlap: 2,
        min_lines: 3,
        max_tokens: 200,
    };

    const SUBCHUNKS: ChunkLimits = ChunkLimits {
        max_lines: 4,
        overlap: 1,
        min_lines: 2,
        max_tokens: 200,
    };

    fn chunks(d: &SourceDoc) -> Vec<ChunkDraft> {
        chunk_document(
            d,
            &LineIndex::new(d.text.as_bytes()),
            &LIMITS,
            &SUBCHUNKS,
            &words,
        )
    }

    #[test]
    fn subchunks_cover_every_chunk_and_vote_for_the_one_they_overlap_most() {
        let body: String = (1..=30).map(|i| format!("line {i} of prose\n")).collect();
        let text = format!("# Title\n{body}## Next\nshort\ntail\n");
        let c = chunks(&doc("README.md", "markdown", &text));
        assert!(c.len() >= 2, "{c:?}");
        for chunk in &c {
            assert!(!chunk.subchunks.is_empty(), "{chunk:?}");
            for s in &chunk.subchunks {
                assert!(s.span.len() <= SUBCHUNKS.max_lines);
                let mine = chunk.span.shared_lines(&s.span);
                assert!(mine >= 1, "{s:?} outside {:?}", chunk.span);
                // No other chunk shares more of the subchunk's lines.
                assert!(c.iter().all(|o| o.span.shared_lines(&s.span) <= mine));
                let raw: Vec<&str> = text.lines().collect();
                assert_eq!(
                    s.text,
                    raw[(s.span.start - 1) as usize..s.span.end as usize].join("\n")
                );
            }
        }
    }

    #[test]
    fn markdown_sections_follow_headings() {
        let text = "# Title\nintro line\nmore intro\nthird\n\n## Install\npip install x\nthen this\nand that\n\n```\n# not a heading\n```\n## Use\nimport x\nx.run()\nfinal\n";
        let c = chunks(&doc("README.md", "markdown", text));
        let titles: Vec<&str> = c.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, vec!["Title", "Title > Install", "Title > Use"]);
        assert_eq!(c[1].span, LineSpan { start: 6, end: 13 });
        assert!(c[1].text.contains("# not a heading"));
    }

    #[test]
    fn rst_underlines_are_headings() {
        let text = "Quickstart\n==========\n\nSome text here\nand here\n\nPeriodic\n--------\nUse periodic=[0]\nfor angles\nthat wrap\n";
        let c = chunks(&doc("q.rst", "rst", text));
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].title, "Quickstart > Periodic");
        assert_eq!(c[1].span.start, 7);
    }

    #[test]
    fn python_defs_and_long_sections_window_with_overlap() {
        let mut text = String::from(
            "import os\n\n\n@decorator\ndef short(alpha, beta=2):\n    return alpha\n\n\nclass Big:\n",
        );
        for i in 0..50 {
            text.push_str(&format!("    def m{i}(self):\n        return {i}\n\n"));
        }
        let c = chunks(&doc("m.py", "python", &text));
        assert_eq!(c[0].span.start, 1);
        assert!(
            c.iter().any(|c| c.span.start == 4
                && c.title == "def short"
                && c.symbols.contains(&"beta".to_owned())),
            "{:?}",
            &c[..2]
        );
        let big: Vec<&ChunkDraft> = c
            .iter()
            .filter(|c| c.title.starts_with("class Big"))
            .collect();
        assert!(big.len() > 5);
        for w in big.windows(2) {
            assert!(
                w[1].span.start <= w[0].span.end + 1,
                "windows leave a gap: {:?}",
                (w[0].span, w[1].span)
            );
            assert!(w[1].span.start > w[0].span.start);
        }
        for ch in &c {
            assert!(ch.span.len() <= LIMITS.max_lines);
        }
    }

    #[test]
    fn notebook_cells_map_to_raw_lines() {
        let nb = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "# Parallel\n",
    "Use a pool."
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "metadata": {},
   "outputs": [],
   "source": [
    "with Pool() as pool:\n",
    "    sampler = emcee.EnsembleSampler(pool=pool)"
   ]
  }
 ],
 "metadata": {},
 "nbformat": 4,
 "nbformat_minor": 4
}"##;
        let index = LineIndex::new(nb.as_bytes());
        let sections = notebook_sections(nb, &index).expect("parses");
        assert_eq!((sections[0].start, sections[0].end), (6, 9));
        assert_eq!((sections[1].start, sections[1].end), (16, 19));
        let c = chunks(&doc("p.ipynb", "notebook", nb));
        let all: String = c
            .iter()
            .map(|c| c.text.clone())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(all.contains("with Pool() as pool:"), "{all}");
        assert!(!all.contains("execution_count"));
    }

    #[test]
    fn no_final_newline_and_token_limit() {
        let text = "a b c d e f g h i j\n".repeat(30) + "last line";
        let d = doc("x.txt", "text", &text);
        let limits = ChunkLimits {
            max_tokens: 50,
            ..LIMITS
        };
        let c = chunk_document(
            &d,
            &LineIndex::new(text.as_bytes()),
            &limits,
            &SUBCHUNKS,
            &words,
        );
        assert_eq!(c.last().map(|c| c.span.end), Some(31));
        assert!(c.iter().all(|c| c.tokens <= 50));
    }
}
