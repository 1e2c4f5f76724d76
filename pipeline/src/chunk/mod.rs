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
//!
//! Where things are: `languages.rs` finds each language's sections and
//! symbols, `notebook.rs` maps notebook cells back to raw lines, `windows.rs`
//! packs small sections and windows long ones within the limits, and
//! `cites.rs` resolves a LaTeX chunk's citations to add to its text.

mod caps;
pub mod cites;
mod definitions;
mod drafts;
mod languages;
mod notebook;
mod windows;

use crate::documents::SourceDoc;
use cairn_index::{LineIndex, LineSpan};
pub use definitions::Definition;
pub use drafts::{ChunkDraft, ChunkLimits, SubchunkDraft};
use drafts::{Section, whole};
use languages::{Grammar, sections_for, soft_boundaries};
use notebook::notebook_lines;
use windows::Ctx;

/// What chunking a document gives: its chunks, and the definitions its
/// lines hold (read from the same lines, by the same grammar).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chunked {
    /// The chunks, in line order.
    pub chunks: Vec<ChunkDraft>,
    /// What the document defines (functions, classes, sections …).
    pub definitions: Vec<Definition>,
}

/// Chunks `doc` under `limits`, with its subchunks under `subchunk_limits`
/// attached, and finds what it defines. `count` returns model tokens for
/// each line (no special tokens).
pub fn chunk_document(
    doc: &SourceDoc,
    index: &LineIndex,
    limits: &ChunkLimits,
    subchunk_limits: &ChunkLimits,
    count: &dyn Fn(&[&str]) -> Vec<usize>,
) -> Chunked {
    let n = index.line_count();
    if n == 0 {
        return Chunked::default();
    }
    let raw: Vec<&str> = (1..=n)
        .map(|l| {
            let r = index
                .byte_range(LineSpan { start: l, end: l })
                .unwrap_or(0..0);
            doc.text[r].trim_end_matches(['\n', '\r'])
        })
        .collect();
    let grammar = Grammar::of(doc.language);
    let definitions = definitions::of_lines(grammar.defines, &raw);
    let own_lines = || raw.iter().map(|l| (*l).to_owned()).collect();
    let (sections, display): (Vec<Section>, Vec<String>) = if grammar.cells {
        // Only cell sources carry text; outputs and metadata stay out of the index.
        notebook_lines(&doc.text, index).unwrap_or_else(|| (vec![whole(n)], own_lines()))
    } else {
        (sections_for(grammar, &raw), own_lines())
    };
    // A PDF's chunks stay within one page: a citation is a page and lines on it.
    let breaks: &[u32] = doc.pdf.as_ref().map_or(&[], |p| &p.page_starts);
    let sections = split_at(sections, breaks);
    let display_refs: Vec<&str> = display.iter().map(String::as_str).collect();
    let tokens = count(&display_refs);
    let soft = soft_boundaries(grammar, &raw);
    let defs = inner_defs(grammar, &display_refs);
    let ctx = |limits, own_drafts| Ctx {
        lines: &display_refs,
        tokens: &tokens,
        soft: &soft,
        inner_defs: &defs,
        breaks,
        limits,
        grammar,
        count,
        own_drafts,
    };
    let mut chunks = ctx(limits, true).drafts(sections.clone());
    let subchunks = ctx(subchunk_limits, false).drafts(sections);
    attach(&mut chunks, subchunks);
    Chunked {
        chunks,
        definitions,
    }
}

/// Cuts every section that spans one of `breaks` (first lines of pages) at
/// it; the piece after a break keeps the section's title.
fn split_at(sections: Vec<Section>, breaks: &[u32]) -> Vec<Section> {
    if breaks.is_empty() {
        return sections;
    }
    let mut out = Vec::with_capacity(sections.len() + breaks.len());
    for s in sections {
        let mut start = s.start;
        // `breaks` ascend: the section's are a slice of them.
        let first = breaks.partition_point(|&b| b <= s.start);
        let last = breaks.partition_point(|&b| b <= s.end);
        for &b in breaks.get(first..last).unwrap_or_default() {
            out.push(Section {
                start,
                end: b - 1,
                title: s.title.clone(),
                own: None,
            });
            start = b;
        }
        out.push(Section {
            start,
            end: s.end,
            title: s.title,
            own: s.own,
        });
    }
    out
}

/// Gives each subchunk to the chunk it overlaps most (the first such chunk on a tie).
///
/// Only chunks that overlap a subchunk are looked at: chunks by start, and
/// the furthest end among each prefix of them, bound the walk back from the
/// last chunk starting by the subchunk's end (a hostile file's 4 million
/// short lines were a quadratic comparison of every pair).
fn attach(chunks: &mut [ChunkDraft], subchunks: Vec<ChunkDraft>) {
    let mut by_start: Vec<usize> = (0..chunks.len()).collect();
    by_start.sort_by_key(|&i| (chunks[i].span.start, i));
    let furthest_end: Vec<u32> = by_start
        .iter()
        .scan(0, |end, &i| {
            *end = chunks[i].span.end.max(*end);
            Some(*end)
        })
        .collect();
    for s in subchunks {
        let last = by_start.partition_point(|&i| chunks[i].span.start <= s.span.end);
        let best = (0..last)
            .rev()
            .take_while(|&j| furthest_end[j] >= s.span.start)
            .map(|j| by_start[j])
            .filter(|&i| chunks[i].span.overlaps(&s.span))
            .max_by_key(|&i| (chunks[i].span.shared_lines(&s.span), std::cmp::Reverse(i)));
        if let Some(i) = best {
            chunks[i].subchunks.push(SubchunkDraft {
                span: s.span,
                title: s.title,
                text: s.text,
                tokens: s.tokens,
            });
        }
    }
}

/// For each line (0-based), the line (1-based) of the nearest indented
/// `def` or `class` at or above it, in Python (a window inside a long class
/// is titled by the method it is in); empty for other grammars. One pass,
/// where a walk back from each window was quadratic on long class bodies.
fn inner_defs(grammar: Grammar, lines: &[&str]) -> Vec<Option<u32>> {
    if !grammar.python_defs || grammar.cells {
        return Vec::new();
    }
    let mut last = None;
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let t = line.trim_start();
            if line.len() != t.len() && languages::def_name(t).is_some() {
                last = Some(i as u32 + 1);
            }
            last
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::notebook::*;
    use super::*;
    use cairn_index::Doctype;

    fn doc(path: &str, text: &str) -> SourceDoc {
        SourceDoc {
            path: path.into(),
            text: text.into(),
            doctype: Doctype::Doc,
            language: cairn_index::Language::of_path(path),
            pdf: None,
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

    /// The walk over overlapping chunks gives every subchunk to the chunk the
    /// comparison with all of them would: spans nested, overlapping, equal
    /// and apart, in any order.
    #[test]
    fn subchunks_go_where_comparing_every_chunk_puts_them() {
        let draft = |start: u32, end: u32| ChunkDraft {
            span: LineSpan { start, end },
            title: String::new(),
            symbols: Vec::new(),
            text: format!("{start}-{end}"),
            tokens: 0,
            subchunks: Vec::new(),
        };
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n) as u32
        };
        for _ in 0..200 {
            let spans = |n: u64, next: &mut dyn FnMut(u64) -> u32| -> Vec<(u32, u32)> {
                (0..n)
                    .map(|_| {
                        let a = 1 + next(40);
                        (a, a + next(12))
                    })
                    .collect()
            };
            let cs = spans(1 + u64::from(next(8)), &mut next);
            let ss = spans(1 + u64::from(next(8)), &mut next);
            let mut chunks: Vec<ChunkDraft> = cs.iter().map(|&(a, b)| draft(a, b)).collect();
            let subs: Vec<ChunkDraft> = ss.iter().map(|&(a, b)| draft(a, b)).collect();
            let want: Vec<Option<usize>> = subs
                .iter()
                .map(|s| {
                    chunks
                        .iter()
                        .enumerate()
                        .max_by_key(|(i, c)| (c.span.shared_lines(&s.span), std::cmp::Reverse(*i)))
                        .map(|(i, _)| i)
                        .filter(|&i| chunks[i].span.overlaps(&s.span))
                })
                .collect();
            attach(&mut chunks, subs.clone());
            for (s, w) in subs.iter().zip(want) {
                let got = chunks
                    .iter()
                    .position(|c| c.subchunks.iter().any(|x| x.text == s.text));
                assert_eq!(got, w, "{cs:?} {ss:?}");
            }
        }
    }

    fn chunks(d: &SourceDoc) -> Vec<ChunkDraft> {
        chunk_document(
            d,
            &LineIndex::new(d.text.as_bytes()),
            &LIMITS,
            &SUBCHUNKS,
            &words,
        )
        .chunks
    }

    #[test]
    fn subchunks_cover_every_chunk_and_vote_for_the_one_they_overlap_most() {
        let body: String = (1..=30).map(|i| format!("line {i} of prose\n")).collect();
        let text = format!("# Title\n{body}## Next\nshort\ntail\n");
        let c = chunks(&doc("README.md", &text));
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
        let c = chunks(&doc("README.md", text));
        let titles: Vec<&str> = c.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, vec!["Title", "Title > Install", "Title > Use"]);
        assert_eq!(c[1].span, LineSpan { start: 6, end: 13 });
        assert!(c[1].text.contains("# not a heading"));
    }

    #[test]
    fn rst_underlines_are_headings() {
        let text = "Quickstart\n==========\n\nSome text here\nand here\n\nPeriodic\n--------\nUse periodic=[0]\nfor angles\nthat wrap\n";
        let c = chunks(&doc("q.rst", text));
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
        let c = chunks(&doc("m.py", &text));
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
        let (sections, display) = notebook_lines(nb, &index).expect("parses");
        assert_eq!(display[6], "# Parallel");
        assert_eq!(display[7], "Use a pool.");
        assert_eq!(display[5], "", "the `\"source\": [` line carries nothing");
        assert_eq!((sections[0].start, sections[0].end), (6, 9));
        assert_eq!((sections[1].start, sections[1].end), (16, 19));
        let c = chunks(&doc("p.ipynb", nb));
        let all: String = c
            .iter()
            .map(|c| c.text.clone())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(all.contains("with Pool() as pool:"), "{all}");
        assert!(!all.contains("execution_count"));
    }

    /// Third review, finding 2: one huge heading over thousands of
    /// subheadings is cut in every chunk title, heading path and scope
    /// (before, each of them copied it whole: a 657 MB definitions.json).
    #[test]
    fn a_huge_heading_is_cut_in_every_title_path_and_scope() {
        use super::caps::{MAX_HEADING_CHARS, MAX_PATH_CHARS};
        let huge = "h".repeat(100_000);
        let mut md = format!("# {huge}\n");
        let mut rst = format!("{huge}\n{}\n", "=".repeat(100_000));
        for i in 0..2_000 {
            md.push_str(&format!("## part {i}\ntext {i}\n### detail {i}\nmore\n"));
            rst.push_str(&format!("part {i}\n-------\ntext\n\n"));
        }
        for (path, text, defines) in [
            (
                "a.md",
                &md,
                super::definitions::markdown as fn(&[&str]) -> Vec<_>,
            ),
            ("a.rst", &rst, super::definitions::rst),
        ] {
            let c = chunks(&doc(path, text));
            assert!(c.len() > 100, "{path}");
            for ch in &c {
                assert!(
                    ch.title.chars().count() <= MAX_PATH_CHARS,
                    "{path}: {}",
                    ch.title.len()
                );
            }
            let lines: Vec<&str> = text.lines().collect();
            let defs = defines(&lines);
            assert!(defs.len() >= 2_000, "{path}");
            for d in &defs {
                assert!(d.name.chars().count() <= MAX_HEADING_CHARS, "{path}");
                assert!(d.scope.chars().count() <= MAX_PATH_CHARS, "{path}");
            }
            let deep = defs.iter().find(|d| d.name == "part 7").expect("part 7");
            assert!(
                deep.scope.starts_with("hhh") && deep.scope.ends_with('…'),
                "{}",
                deep.scope
            );
        }
        let md_defs = super::definitions::markdown(&md.lines().collect::<Vec<_>>());
        let detail = md_defs
            .iter()
            .find(|d| d.name == "detail 9")
            .expect("detail 9");
        assert!(detail.scope.ends_with(" > part 9"), "{}", detail.scope);
    }

    /// The same for Python and Fortran scopes: deep nesting of long names
    /// keeps the innermost names within the cap.
    #[test]
    fn deep_scopes_keep_their_innermost_names_within_the_cap() {
        use super::caps::{MAX_NAME_CHARS, MAX_PATH_CHARS};
        let name = |i: usize| format!("f{i}_{}", "n".repeat(250));
        let py: String = (0..200)
            .map(|i| format!("{}def {}():\n", "    ".repeat(i), name(i)))
            .collect::<String>()
            + &"    ".repeat(200)
            + "return 1\n";
        let defs = super::definitions::python(&py.lines().collect::<Vec<_>>());
        assert_eq!(defs.len(), 200);
        for d in &defs {
            assert!(d.name.chars().count() <= MAX_NAME_CHARS);
            assert!(
                d.scope.chars().count() <= MAX_PATH_CHARS,
                "{}",
                d.scope.len()
            );
        }
        let last = &defs[199].scope;
        assert!(
            last.contains(&name(198)[..MAX_NAME_CHARS]) && last.contains('…'),
            "{last}"
        );
        let f90: String = (0..200)
            .map(|i| format!("module {}\n", name(i)))
            .collect::<String>()
            + &"end module\n".repeat(200);
        for d in super::definitions::fortran(&f90.lines().collect::<Vec<_>>()) {
            assert!(d.scope.chars().count() <= MAX_PATH_CHARS);
        }
    }

    #[test]
    fn paths_keep_the_root_and_the_innermost_parts_that_fit() {
        use super::caps::{MAX_PATH_CHARS, join_capped};
        assert_eq!(join_capped(&["A", "B", "C"], " > "), "A > B > C");
        assert_eq!(join_capped(&[], " > "), "");
        let long: Vec<String> = (0..10).map(|i| format!("{i}{}", "x".repeat(60))).collect();
        let parts: Vec<&str> = long.iter().map(String::as_str).collect();
        let joined = join_capped(&parts, " > ");
        assert!(joined.chars().count() <= MAX_PATH_CHARS, "{}", joined.len());
        assert!(joined.starts_with("0xxx") && joined.contains(" > … > "));
        assert!(joined.ends_with(&long[9]), "{joined}");
    }

    /// Third review, finding 3: a notebook saved on one line gives each
    /// cell its own text, not the whole notebook (quadratic before).
    #[test]
    fn a_notebook_on_one_line_gives_each_cell_its_own_text() {
        let mut cells: Vec<String> = (0..400)
            .map(|i| {
                format!(
                    r#"{{"cell_type":"code","metadata":{{}},"outputs":[],"source":["x{i} = {i}\n","print(x{i})"]}}"#
                )
            })
            .collect();
        // Empty cells on the same line carry nothing (a review found each
        // one took the whole line's text).
        for _ in 0..50 {
            cells.push(r#"{"cell_type":"code","metadata":{},"outputs":[],"source":[]}"#.to_owned());
        }
        let nb = format!(
            r#"{{"cells":[{}],"metadata":{{}},"nbformat":4,"nbformat_minor":5}}"#,
            cells.join(",")
        );
        assert!(!nb.contains('\n'));
        let c = chunks(&doc("one.ipynb", &nb));
        assert_eq!(c.len(), 400);
        for (i, ch) in c.iter().enumerate() {
            assert_eq!(ch.text, format!("x{i} = {i}\nprint(x{i})"));
            assert_eq!(ch.span, LineSpan { start: 1, end: 1 });
            assert!(ch.tokens > 0 && ch.tokens < 20, "{}", ch.tokens);
        }
        let total: usize = c
            .iter()
            .map(|ch| ch.text.len() + ch.subchunks.iter().map(|s| s.text.len()).sum::<usize>())
            .sum();
        assert!(
            total < 2 * nb.len(),
            "{total} bytes of text for a {} byte notebook",
            nb.len()
        );
    }

    /// Windows inside a long class are titled by the method they are in,
    /// found in one pass (the walk back from each window was quadratic).
    #[test]
    fn windows_in_a_long_class_name_their_method() {
        let mut text = String::from("class Big:\n");
        for i in 0..300 {
            text.push_str(&format!(
                "    def m{i}(self):\n        a = {i}\n        return a\n\n"
            ));
        }
        let c = chunks(&doc("big.py", &text));
        assert!(c.len() > 20);
        for ch in &c[1..] {
            let name = ch.title.strip_prefix("class Big > def ").expect(&ch.title);
            let def_line = text
                .lines()
                .enumerate()
                .take(ch.span.end as usize)
                .filter(|(_, l)| l.trim_start().starts_with("def "))
                .last()
                .map(|(_, l)| l.trim_start().to_owned())
                .expect("a def above");
            assert!(
                def_line.starts_with(&format!("def {name}(")),
                "{} vs {def_line}",
                ch.title
            );
        }
    }

    #[test]
    fn no_final_newline_and_token_limit() {
        let text = "a b c d e f g h i j\n".repeat(30) + "last line";
        let d = doc("x.txt", &text);
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
        )
        .chunks;
        assert_eq!(c.last().map(|c| c.span.end), Some(31));
        assert!(c.iter().all(|c| c.tokens <= 50));
    }
}
