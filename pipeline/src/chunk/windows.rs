//! Packing and windowing: small neighbouring sections packed into one, a
//! section over the line or token limit cut into overlapping windows at soft
//! boundaries, each window a draft.

use super::caps::{MAX_PATH_CHARS, capped};
use super::drafts::{ChunkDraft, ChunkLimits, Section, SubchunkDraft};
use super::languages::{Grammar, def_name, symbols};
use cairn_index::LineSpan;

pub(super) struct Ctx<'a> {
    pub(super) lines: &'a [&'a str],
    pub(super) tokens: &'a [usize],
    pub(super) soft: &'a [bool],
    /// For each line, the nearest indented definition at or above it
    /// (Python; see `inner_defs`).
    pub(super) inner_defs: &'a [Option<u32>],
    /// Lines no chunk spans across (a PDF's page starts): sections are cut
    /// there already, and packing never joins over them.
    pub(super) breaks: &'a [u32],
    pub(super) limits: &'a ChunkLimits,
    pub(super) grammar: Grammar,
    /// Model tokens of each line (a section's own text is counted with it).
    pub(super) count: &'a dyn Fn(&[&str]) -> Vec<usize>,
    /// Whether a section with its own text gives a draft (the chunks'
    /// pass: one chunk, its own subchunk inside) or only keeps its place
    /// (the subchunks' pass: no other section is packed across it).
    pub(super) own_drafts: bool,
}

impl Ctx<'_> {
    /// The drafts of `sections`: packed, cut into windows, blank windows dropped.
    pub(super) fn drafts(&self, sections: Vec<Section>) -> Vec<ChunkDraft> {
        let mut out = Vec::new();
        for section in pack(self, sections) {
            if let Some(own) = &section.own {
                if self.own_drafts {
                    out.extend(self.own_draft(&section, own));
                }
                continue;
            }
            for span in self.windows(&section) {
                let lines = &self.lines[(span.start - 1) as usize..span.end as usize];
                let text = lines.join("\n");
                if text.trim().is_empty() {
                    continue;
                }
                out.push(ChunkDraft {
                    symbols: symbols(self.grammar, lines),
                    tokens: self.tokens_of(span.start, span.end),
                    title: capped(&self.window_title(&section, span), MAX_PATH_CHARS),
                    span,
                    text,
                    subchunks: Vec::new(),
                });
            }
        }
        out
    }

    /// The one draft of a section with its own text (see `Section::own`),
    /// with that text as its one subchunk: the lines cannot tell which
    /// chunk a subchunk of theirs belongs to.
    fn own_draft(&self, s: &Section, own: &str) -> Option<ChunkDraft> {
        if own.trim().is_empty() {
            return None;
        }
        let lines: Vec<&str> = own.split('\n').collect();
        let span = LineSpan {
            start: s.start,
            end: s.end,
        };
        let title = capped(&s.title, MAX_PATH_CHARS);
        let tokens = (self.count)(&lines).iter().map(|t| t + 1).sum();
        Some(ChunkDraft {
            span,
            symbols: symbols(self.grammar, &lines),
            tokens,
            subchunks: vec![SubchunkDraft {
                span,
                title: title.clone(),
                text: own.to_owned(),
                tokens,
            }],
            title,
            text: own.to_owned(),
        })
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
        let inner = self
            .inner_defs
            .get(span.end as usize - 1)
            .copied()
            .flatten()
            .filter(|&l| l >= s.start)
            .and_then(|l| def_name(self.lines[l as usize - 1].trim_start()));
        match inner {
            Some(name) if !s.title.is_empty() => format!("{} > {name}", s.title),
            _ => s.title.clone(),
        }
    }
}

/// Packs runs of small sections into one, while the result fits.
pub(super) fn pack(ctx: &Ctx, sections: Vec<Section>) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    for s in sections {
        if let Some(prev) = out
            .last_mut()
            .filter(|p| p.own.is_none() && s.own.is_none())
        {
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
