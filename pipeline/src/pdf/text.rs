//! A PDF's pages to text: pdf-extract's glyphs through cairn's own output
//! device (spaces along each baseline, ligatures spelled out, hyphenation
//! joined), the pages joined within the byte limit.

use cairn_index::manifest::SkipReason;
use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};
use std::fmt::Write as _;

/// A PDF's text: pages in order, each ending in a newline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PdfText {
    /// The whole text.
    pub text: String,
    /// The first line of each page (1-based), page 1 first.
    pub page_starts: Vec<u32>,
}

/// Joins cleaned pages into one text with its page map.
pub(super) fn assemble(pages: Vec<String>, max_text_bytes: usize) -> Result<PdfText, SkipReason> {
    let mut text = String::new();
    let mut page_starts = Vec::with_capacity(pages.len());
    let mut line = 1u32;
    let mut words = 0usize;
    for raw in pages {
        let page = clean(&raw);
        if !text.is_empty() && text.len() + page.len() > max_text_bytes {
            break;
        }
        words += page.split_whitespace().filter(|w| w.len() > 1).count();
        page_starts.push(line);
        line += page.matches('\n').count() as u32;
        text.push_str(&page);
    }
    // Scanned pages and figure-only files yield a handful of stray glyphs.
    if words < 20 {
        return Err(SkipReason::NoText);
    }
    Ok(PdfText { text, page_starts })
}

/// One page's text made indexable: ligatures spelled out, hyphenated line
/// breaks joined, control characters and trailing spaces dropped, runs of
/// blank lines squeezed to one, and at least one line (ending in a newline).
pub fn clean(raw: &str) -> String {
    let mut lines: Vec<String> = raw
        .lines()
        .map(|l| {
            let mut s = String::with_capacity(l.len());
            for c in l.chars() {
                match ligature(c) {
                    Some(spelled) => s.push_str(spelled),
                    None if c.is_control() && c != '\t' => {}
                    None => s.push(c),
                }
            }
            s.trim_end().to_owned()
        })
        .collect();
    for i in 0..lines.len().saturating_sub(1) {
        let joinable = {
            let (this, next) = (&lines[i], lines[i + 1].trim_start());
            this.ends_with('-')
                && this[..this.len() - 1]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphabetic)
                && next.chars().next().is_some_and(char::is_lowercase)
        };
        if joinable {
            let next = lines[i + 1].trim_start().to_owned();
            let cut = next.find(char::is_whitespace).unwrap_or(next.len());
            lines[i].pop();
            lines[i].push_str(&next[..cut]);
            lines[i + 1] = next[cut..].trim_start().to_owned();
        }
    }
    let mut out = String::new();
    let mut blank = true;
    for l in lines {
        if l.is_empty() {
            if !blank {
                out.push('\n');
            }
            blank = true;
        } else {
            out.push_str(&l);
            out.push('\n');
            blank = false;
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    if out.is_empty() {
        out.push('\n');
    }
    out
}

pub(super) fn ligature(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{FB00}' => "ff",
        '\u{FB01}' => "fi",
        '\u{FB02}' => "fl",
        '\u{FB03}' => "ffi",
        '\u{FB04}' => "ffl",
        '\u{FB05}' | '\u{FB06}' => "st",
        _ => return None,
    })
}

/// An output device that lays glyphs out along their own baseline.
#[derive(Default)]
pub(super) struct PageText {
    pub(super) out: String,
    /// Bytes of text the page may still hold: a page past it stops being
    /// read (forms drawing forms can draw 10^8 glyphs from a few KB).
    pub(super) budget: usize,
    /// Set when the budget stopped the page: its text so far is kept.
    pub(super) full: bool,
    /// Where the last glyph ended along its baseline, its offset across
    /// it, its direction and its size; `None` before the page's first glyph.
    pub(super) last: Option<Pen>,
    /// Set by `begin_word`: the next glyph starts a new run of text, and
    /// only there are spaces and breaks decided (as pdf-extract's own
    /// plain-text device does).
    pub(super) run_start: bool,
}

#[derive(Clone, Copy)]
pub(super) struct Pen {
    end: f64,
    across: f64,
    dir: (f64, f64),
    size: f64,
}

impl OutputDev for PageText {
    fn begin_page(
        &mut self,
        _page: u32,
        _media: &MediaBox,
        _art: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.last = None;
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        self.out.push('\n');
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        glyph: &str,
    ) -> Result<(), OutputError> {
        if self.out.len() >= self.budget {
            self.full = true;
            return Err(OutputError::FormatError(std::fmt::Error));
        }
        let len = (trm.m11 * trm.m11 + trm.m12 * trm.m12).sqrt();
        let dir = if len > 1e-9 {
            (trm.m11 / len, trm.m12 / len)
        } else {
            (1.0, 0.0)
        };
        let size = (trm.m11 * trm.m22 - trm.m12 * trm.m21).abs().sqrt() * font_size;
        let size = if size.is_finite() && size > 1e-6 {
            size
        } else {
            1.0
        };
        let (x, y) = (trm.m31, trm.m32);
        let along = x * dir.0 + y * dir.1;
        // Across the baseline, positive above it (PDF space has y up).
        let across = y * dir.0 - x * dir.1;
        if let Some(last) = self.last.filter(|_| self.run_start) {
            let turned = dir.0 * last.dir.0 + dir.1 * last.dir.1 < 0.99;
            let moved = (across - last.across).abs();
            if turned || moved > last.size.max(size) * 1.5 {
                self.out.push('\n');
            }
            if turned || (along < last.end && moved > last.size.min(size) * 0.5) {
                self.out.push('\n');
            } else if along > last.end + size * 0.1 {
                self.out.push(' ');
            }
        }
        let _ = write!(self.out, "{glyph}");
        self.run_start = false;
        self.last = Some(Pen {
            end: along + width * size,
            across,
            dir,
            size,
        });
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.run_start = true;
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}
