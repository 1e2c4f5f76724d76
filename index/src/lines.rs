//! Byte offsets of line starts, and the one convention for lines and bytes.

use crate::ids::LineSpan;
use std::ops::Range;

/// The byte offset where each line of a file starts.
///
/// Convention: lines are 1-based and inclusive ([`LineSpan`]), bytes are
/// 0-based and half-open. A line's bytes include its terminating `\n` (and a
/// `\r` before it), so concatenating the byte ranges of all lines gives back
/// the file exactly. A file that does not end in `\n` still has its last,
/// unterminated line; an empty file has no lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    /// Indexes `bytes` (files over 4 GiB are never indexed: the size cap is far lower).
    pub fn new(bytes: &[u8]) -> Self {
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        let mut starts = Vec::with_capacity(bytes.len() / 40 + 1);
        if !bytes.is_empty() {
            starts.push(0);
        }
        for (i, b) in bytes.iter().enumerate() {
            if *b == b'\n' && i + 1 < bytes.len() {
                starts.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
            }
        }
        Self { starts, len }
    }

    /// Number of lines.
    pub fn line_count(&self) -> u32 {
        u32::try_from(self.starts.len()).unwrap_or(u32::MAX)
    }

    /// The byte range of `span`, clamped to the file; `None` when it starts past the end.
    pub fn byte_range(&self, span: LineSpan) -> Option<Range<usize>> {
        let n = self.line_count();
        if span.start > n {
            return None;
        }
        let end_line = span.end.min(n);
        let start = self.starts[(span.start - 1) as usize] as usize;
        let end = if end_line == n {
            self.len as usize
        } else {
            self.starts[end_line as usize] as usize
        };
        Some(start..end)
    }

    /// The 1-based line holding byte `offset` (the last line for offsets past the end).
    pub fn line_of_byte(&self, offset: usize) -> u32 {
        let offset = u32::try_from(offset).unwrap_or(u32::MAX);
        match self.starts.binary_search(&offset) {
            Ok(i) => i as u32 + 1,
            Err(i) => i.max(1) as u32,
        }
    }

    /// The span of the whole file, `None` for an empty file.
    pub fn full_span(&self) -> Option<LineSpan> {
        (self.line_count() > 0).then(|| LineSpan {
            start: 1,
            end: self.line_count(),
        })
    }
}

/// Counts the lines of a text fed piece by piece, as [`LineIndex::new`]
/// counts them whole: a text is checked without being held whole.
#[derive(Debug, Default)]
pub struct LineCounter {
    newlines: u64,
    len: u64,
    ends_in_newline: bool,
}

impl LineCounter {
    /// Counts the next piece.
    pub fn feed(&mut self, piece: &[u8]) {
        if let Some(last) = piece.last() {
            self.newlines += piece.iter().filter(|b| **b == b'\n').count() as u64;
            self.len += piece.len() as u64;
            self.ends_in_newline = *last == b'\n';
        }
    }

    /// Lines so far: a last newline ends the last line rather than starting one.
    pub fn line_count(&self) -> u32 {
        if self.len == 0 {
            return 0;
        }
        let lines = self.newlines - u64::from(self.ends_in_newline) + 1;
        u32::try_from(lines).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counting_piece_by_piece_agrees_with_the_index() {
        for text in [
            "",
            "a",
            "a\n",
            "\n",
            "\n\n",
            "a\nb",
            "a\r\nb\r\n",
            "x\n\ny\n\n",
        ] {
            let whole = super::LineIndex::new(text.as_bytes()).line_count();
            for cut in 0..=text.len() {
                let mut c = super::LineCounter::default();
                c.feed(&text.as_bytes()[..cut]);
                c.feed(&[]);
                c.feed(&text.as_bytes()[cut..]);
                assert_eq!(c.line_count(), whole, "{text:?} cut at {cut}");
            }
        }
    }

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn no_final_newline() {
        let text = b"a\nbb\nccc";
        let li = LineIndex::new(text);
        assert_eq!(li.line_count(), 3);
        let r = li
            .byte_range(LineSpan { start: 3, end: 3 })
            .expect("in range");
        assert_eq!(&text[r], b"ccc");
        let r = li
            .byte_range(LineSpan { start: 2, end: 9 })
            .expect("clamped");
        assert_eq!(&text[r], b"bb\nccc");
        assert!(li.byte_range(LineSpan { start: 4, end: 4 }).is_none());
    }

    #[test]
    fn final_newline_and_crlf() {
        let text = b"a\r\nb\r\n";
        let li = LineIndex::new(text);
        assert_eq!(li.line_count(), 2);
        let r = li
            .byte_range(LineSpan { start: 2, end: 2 })
            .expect("in range");
        assert_eq!(&text[r], b"b\r\n");
        assert_eq!(li.line_of_byte(0), 1);
        assert_eq!(li.line_of_byte(3), 2);
        assert_eq!(li.line_of_byte(4), 2);
    }

    #[test]
    fn empty_file() {
        let li = LineIndex::new(b"");
        assert_eq!(li.line_count(), 0);
        assert!(li.full_span().is_none());
    }

    proptest! {
        #[test]
        fn lines_concatenate_to_file(text in "[a-c\\r\\n]{0,60}") {
            let bytes = text.as_bytes();
            let li = LineIndex::new(bytes);
            let mut joined = Vec::new();
            for l in 1..=li.line_count() {
                let r = li.byte_range(LineSpan { start: l, end: l }).expect("line exists");
                prop_assert_eq!(li.line_of_byte(r.start), l);
                joined.extend_from_slice(&bytes[r]);
            }
            prop_assert_eq!(joined, bytes.to_vec());
            prop_assert_eq!(li.line_count() as usize, text.split_inclusive('\n').count());
        }
    }
}
