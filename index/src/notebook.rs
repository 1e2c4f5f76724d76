//! Notebooks read as cells: an `.ipynb`'s cells with their decoded source,
//! each source line knowing the raw line of the file it sits on, and a span of
//! raw lines rendered as the cells it overlaps.
//!
//! The builder chunks notebooks by these cells and the engine shows spans
//! through them, so both agree on which raw line every source line is: a
//! citation stays a span of the raw file while readers get the cells.

use crate::ids::LineSpan;
use crate::lines::LineIndex;
use serde::Deserialize;
use serde_json::value::RawValue;

/// What a cell holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellKind {
    /// Markdown prose.
    Markdown,
    /// Code in the notebook's language.
    Code,
    /// A raw cell (passed through unrendered by Jupyter).
    Raw,
}

impl CellKind {
    fn name(self) -> &'static str {
        match self {
            Self::Markdown => "markdown",
            Self::Code => "code",
            Self::Raw => "raw",
        }
    }
}

/// One line of a cell's decoded source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceLine {
    /// The raw line of the `.ipynb` its text starts on (1-based).
    pub raw: u32,
    /// The decoded text, without its line break.
    pub text: String,
}

/// One cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Its position in the notebook, 1-based.
    pub number: u32,
    /// What it holds.
    pub kind: CellKind,
    /// The raw lines its `source` value occupies (outputs, which nbformat
    /// writes before the source, are outside).
    pub span: LineSpan,
    /// Its decoded source, line by line.
    pub lines: Vec<SourceLine>,
}

/// A parsed notebook: its code language and its cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notebook {
    /// The language code cells are fenced in (`python` when the metadata names none).
    pub language: String,
    /// The cells, in order.
    pub cells: Vec<Cell>,
}

/// A span of a notebook as text for a reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The cells the span overlaps, each line ending in `\n`.
    pub text: String,
    /// For each line of `text`, the raw line it stands for.
    pub raw_lines: Vec<u32>,
}

#[derive(Deserialize)]
struct RawNotebook<'a> {
    #[serde(borrow)]
    cells: Vec<&'a RawValue>,
    #[serde(default)]
    metadata: Metadata,
}

#[derive(Default, Deserialize)]
struct Metadata {
    #[serde(default)]
    language_info: Option<Named>,
    #[serde(default)]
    kernelspec: Option<KernelSpec>,
}

#[derive(Deserialize)]
struct Named {
    name: Option<String>,
}

#[derive(Deserialize)]
struct KernelSpec {
    language: Option<String>,
}

#[derive(Deserialize)]
struct RawCell<'a> {
    cell_type: String,
    #[serde(borrow)]
    source: &'a RawValue,
}

impl Notebook {
    /// Parses `text` (the whole `.ipynb`, whose lines `index` knows); `None`
    /// when it is not a notebook nbformat 4 writes.
    pub fn parse(text: &str, index: &LineIndex) -> Option<Self> {
        let nb: RawNotebook = serde_json::from_str(text).ok()?;
        let language = nb
            .metadata
            .language_info
            .and_then(|l| l.name)
            .or_else(|| nb.metadata.kernelspec.and_then(|k| k.language))
            .filter(|l| {
                !l.is_empty()
                    && l.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+-_".contains(c))
            })
            .unwrap_or_else(|| "python".to_owned());
        // RawValue borrows from `text`, so pointer differences are byte offsets into it.
        let base = text.as_ptr() as usize;
        let line_of = |raw: &RawValue| index.line_of_byte(raw.get().as_ptr() as usize - base);
        let mut cells = Vec::with_capacity(nb.cells.len());
        for (i, raw) in nb.cells.into_iter().enumerate() {
            let cell: RawCell = serde_json::from_str(raw.get()).ok()?;
            let kind = match cell.cell_type.as_str() {
                "markdown" => CellKind::Markdown,
                "code" => CellKind::Code,
                _ => CellKind::Raw,
            };
            let src = cell.source.get();
            let start = line_of(cell.source);
            let end =
                index.line_of_byte((src.as_ptr() as usize - base) + src.len().saturating_sub(1));
            // nbformat writes a list of strings, one a line; a single string is allowed too.
            let pieces: Vec<(u32, String)> = if src.starts_with('[') {
                let items: Vec<&RawValue> = serde_json::from_str(src).ok()?;
                items
                    .into_iter()
                    .map(|p| Some((line_of(p), serde_json::from_str::<String>(p.get()).ok()?)))
                    .collect::<Option<_>>()?
            } else {
                vec![(start, serde_json::from_str::<String>(src).ok()?)]
            };
            cells.push(Cell {
                number: i as u32 + 1,
                kind,
                span: LineSpan { start, end },
                lines: split_lines(pieces),
            });
        }
        Some(Self { language, cells })
    }

    /// The cells that `span` overlaps, each introduced by a one-line marker
    /// (`<!-- cell 4: markdown -->`), markdown as itself and code fenced in the
    /// notebook's language; only the source lines inside `span` are shown.
    /// `None` when `span` holds no cell source (only outputs or metadata).
    pub fn render(&self, span: LineSpan) -> Option<Rendered> {
        let mut out = Rendered {
            text: String::new(),
            raw_lines: Vec::new(),
        };
        let mut push = |text: &str, raw: u32| {
            out.text.push_str(text);
            out.text.push('\n');
            out.raw_lines.push(raw);
        };
        for cell in self.cells.iter().filter(|c| c.span.overlaps(&span)) {
            let inside: Vec<&SourceLine> = cell
                .lines
                .iter()
                .filter(|l| (span.start..=span.end).contains(&l.raw))
                .collect();
            let (Some(first), Some(last)) = (inside.first(), inside.last()) else {
                continue;
            };
            push(
                &format!("<!-- cell {}: {} -->", cell.number, cell.kind.name()),
                first.raw,
            );
            let fence = (cell.kind == CellKind::Code)
                .then(|| fence_for(inside.iter().map(|l| l.text.as_str())));
            if let Some(f) = &fence {
                push(&format!("{f}{}", self.language), first.raw);
            }
            for l in &inside {
                push(&l.text, l.raw);
            }
            if let Some(f) = &fence {
                push(f, last.raw);
            }
        }
        (!out.raw_lines.is_empty()).then_some(out)
    }
}

/// The decoded pieces of a source joined and cut at their line breaks; a line
/// belongs to the raw line its first piece sits on.
fn split_lines(pieces: Vec<(u32, String)>) -> Vec<SourceLine> {
    let mut lines = Vec::new();
    let mut open: Option<SourceLine> = None;
    for (raw, piece) in pieces {
        for seg in piece.split_inclusive('\n') {
            let line = open.get_or_insert_with(|| SourceLine {
                raw,
                text: String::new(),
            });
            match seg.strip_suffix('\n') {
                Some(body) => {
                    line.text.push_str(body.strip_suffix('\r').unwrap_or(body));
                    lines.extend(open.take());
                }
                None => line.text.push_str(seg),
            }
        }
    }
    lines.extend(open);
    lines
}

/// A Markdown code fence longer than any run of backticks in `lines`, so the
/// block cannot be closed early by what it quotes.
pub fn fence_for<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut longest = 0;
    for line in lines {
        let mut run = 0;
        for c in line.chars() {
            run = if c == '`' { run + 1 } else { 0 };
            longest = longest.max(run);
        }
    }
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// markdown with a heading and a unicode character, code with an output
    /// and an escaped quote, and a cell whose source is one string.
    const NB: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "# Fit a lens ✓\n",
    "Some prose."
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "metadata": {},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "\"hello\"\n"
     ]
    }
   ],
   "source": [
    "x = 1\n",
    "print(\"hello\")\n",
    "y = x"
   ]
  },
  {
   "cell_type": "code",
   "metadata": {},
   "outputs": [],
   "source": "a = 1\nb = 2"
  }
 ],
 "metadata": {"kernelspec": {"language": "python"}},
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

    fn parsed() -> Notebook {
        Notebook::parse(NB, &LineIndex::new(NB.as_bytes())).expect("parses")
    }

    #[test]
    fn each_source_line_knows_its_raw_line() {
        let nb = parsed();
        let raw: Vec<&str> = NB.lines().collect();
        assert_eq!(nb.cells.len(), 3);
        for cell in &nb.cells {
            for l in &cell.lines {
                let line = raw[l.raw as usize - 1];
                // The raw line holds the JSON-escaped form of the decoded text.
                let escaped = serde_json::to_string(&l.text).expect("json");
                let escaped = escaped.trim_matches('"');
                assert!(line.contains(escaped), "{line:?} lacks {escaped:?}");
            }
        }
        assert_eq!(nb.cells[0].lines[0].text, "# Fit a lens ✓");
        assert_eq!(nb.cells[1].lines[1].text, "print(\"hello\")");
        // One string source: both lines sit on its one raw line.
        let single = &nb.cells[2];
        assert_eq!(single.lines.len(), 2);
        assert_eq!(single.lines[0].raw, single.lines[1].raw);
        assert_eq!(single.span.start, single.span.end);
    }

    #[test]
    fn renders_cells_without_outputs_or_json() {
        let nb = parsed();
        let all = LineSpan {
            start: 1,
            end: NB.lines().count() as u32,
        };
        let r = nb.render(all).expect("cells");
        assert_eq!(
            r.text,
            "<!-- cell 1: markdown -->\n# Fit a lens ✓\nSome prose.\n\
             <!-- cell 2: code -->\n```python\nx = 1\nprint(\"hello\")\ny = x\n```\n\
             <!-- cell 3: code -->\n```python\na = 1\nb = 2\n```\n"
        );
        assert_eq!(r.raw_lines.len(), r.text.lines().count());
        assert!(r.raw_lines.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn a_span_through_a_cell_shows_only_its_lines() {
        let nb = parsed();
        let code = &nb.cells[1];
        let second = code.lines[1].raw;
        let r = nb
            .render(LineSpan {
                start: second,
                end: second + 1,
            })
            .expect("cells");
        assert_eq!(
            r.text,
            "<!-- cell 2: code -->\n```python\nprint(\"hello\")\ny = x\n```\n"
        );
        assert_eq!(
            r.raw_lines,
            vec![second, second, second, second + 1, second + 1]
        );
        // Outputs only: nothing to show.
        let output = NB
            .lines()
            .position(|l| l.contains("\\\"hello\\\"\\n"))
            .expect("output") as u32
            + 1;
        assert_eq!(
            nb.render(LineSpan {
                start: output,
                end: output
            }),
            None
        );
    }

    #[test]
    fn fences_outgrow_backticks_inside() {
        assert_eq!(fence_for(["a"]), "```");
        assert_eq!(fence_for(["x ```` y", "`"]), "`````");
    }

    #[test]
    fn not_a_notebook_is_none() {
        for bad in [
            "",
            "{",
            "[]",
            "{\"cells\": [{\"cell_type\": \"code\"}]}",
            "{\"cells\": [{\"cell_type\": \"code\", \"source\": [1]}]}",
        ] {
            assert!(
                Notebook::parse(bad, &LineIndex::new(bad.as_bytes())).is_none(),
                "{bad}"
            );
        }
    }
}
