//! Packing and windowing: small neighbouring sections packed into one, a
//! section over the line or token limit cut into overlapping windows at soft
//! boundaries, each window a draft.

use super::languages::{Grammar, def_name, symbols};
use super::{ChunkDraft, ChunkLimits, Section};
use cairn_index::LineSpan;

pub(super) struct Ctx<'a> {
    pub(super) lines: &'a [&'a str],
    pub(super) tokens: &'a [usize],
    pub(super) soft: &'a [bool],
    /// Lines no chunk spans across (a PDF's page starts): sections are cut
    /// there already, and packing never joins over them.
    pub(super) breaks: &'a [u32],
    pub(super) limits: &'a ChunkLimits,
    pub(super) grammar: Grammar,
}

impl Ctx<'_> {
    /// The drafts of `sections`: packed, cut into windows, blank windows dropped.
    pub(super) fn drafts(&self, sections: Vec<Section>) -> Vec<ChunkDraft> {
        let mut out = Vec::new();
        for section in pack(self, sections) {
            for span in self.windows(&section) {
                let lines = &self.lines[(span.start - 1) as usize..span.end as usize];
                let text = lines.join("\n");
                if text.trim().is_empty() {
                    continue;
                }
                out.push(ChunkDraft {
                    symbols: symbols(self.grammar, lines),
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

    pub(super) fn tokens_of(&self, start: u32, end: u32) -> usize {
        // One extra token a line stands in for the newline the line tokens do not see.
        self.tokens[(start - 1) as usize..end as usize]
            .iter()
            .map(|t| t + 1)
            .sum()
    }

    pub(super) fn fits(&self, start: u32, end: u32) -> bool {
        self.line_count(start, end) <= self.limits.max_lines
            && self.tokens_of(start, end) <= self.limits.max_tokens
    }

    /// Lines that count against the limit: in a notebook only lines that carry
    /// cell source (outputs between cells are in the span but not in the text).
    pub(super) fn line_count(&self, start: u32, end: u32) -> u32 {
        if self.grammar.cells {
            self.lines[(start - 1) as usize..end as usize]
                .iter()
                .filter(|l| !l.is_empty())
                .count() as u32
        } else {
            end - start + 1
        }
    }

    /// Cuts a section into windows within the limits, preferring soft boundaries.
    pub(super) fn windows(&self, s: &Section) -> Vec<LineSpan> {
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

    pub(super) fn window_title(&self, s: &Section, span: LineSpan) -> String {
        // Inside a long class, name the method the window is in.
        if self.grammar.python_defs && !self.grammar.cells {
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
pub(super) fn pack(ctx: &Ctx, sections: Vec<Section>) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    for s in sections {
        if let Some(prev) = out.last_mut() {
            let small = |a: u32, b: u32| ctx.line_count(a, b) < ctx.limits.min_lines;
            // A notebook's short markdown cell and the code cells after it belong
            // together, across the outputs between them; a titled (markdown)
            // cell starts a new chunk rather than trailing the code before it.
            let starts_section = (ctx.grammar.cells && !s.title.is_empty())
                || ctx.breaks.binary_search(&s.start).is_ok();
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
