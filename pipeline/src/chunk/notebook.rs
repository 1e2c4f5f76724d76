//! Notebooks: each cell a section over the raw `.ipynb` lines of its source,
//! and the text each raw line carries (its decoded source lines; none for
//! outputs and metadata). The cells come from [`cairn_index::notebook`], the
//! same reading the engine renders passages with.

use super::drafts::Section;
use cairn_index::LineIndex;
use cairn_index::notebook::{CellKind, Notebook};

/// The sections of a notebook and, for each raw line, the text it carries;
/// `None` when `text` is not a notebook. A cell whose raw lines carry other
/// cells' source too (a notebook saved on one line) gets its own text, so no
/// chunk holds the other cells' (which made each chunk the whole notebook:
/// quadratic time and memory).
pub(super) fn notebook_lines(text: &str, index: &LineIndex) -> Option<(Vec<Section>, Vec<String>)> {
    let nb = Notebook::parse(text, index)?;
    let mut display = vec![String::new(); index.line_count() as usize];
    // How many cells each raw line carries source of.
    let mut owners = vec![0u32; display.len()];
    for cell in &nb.cells {
        let mut last = 0;
        for l in &cell.lines {
            if l.raw != last {
                owners[(l.raw - 1) as usize] += 1;
                last = l.raw;
            }
        }
    }
    let mut sections = Vec::with_capacity(nb.cells.len());
    for cell in &nb.cells {
        for l in &cell.lines {
            let slot = &mut display[(l.raw - 1) as usize];
            if !slot.is_empty() {
                slot.push('\n');
            }
            slot.push_str(&l.text);
        }
        let title = match (cell.kind, cell.lines.first()) {
            (CellKind::Markdown, Some(first)) => first
                .text
                .trim_start_matches('#')
                .trim()
                .chars()
                .take(80)
                .collect(),
            _ => String::new(),
        };
        // A raw line of its span carries another cell's source: its own
        // lines are counted once in `owners`, an empty cell's not at all.
        let mut own_lines = cell.lines.iter().map(|l| l.raw).peekable();
        let shared = (cell.span.start..=cell.span.end).any(|raw| {
            while own_lines.next_if(|&r| r < raw).is_some() {}
            let mine = u32::from(own_lines.peek() == Some(&raw));
            owners.get(raw as usize - 1).is_some_and(|&n| n > mine)
        });
        sections.push(Section {
            start: cell.span.start,
            end: cell.span.end,
            title,
            own: shared.then(|| {
                cell.lines
                    .iter()
                    .map(|l| l.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        });
    }
    Some((sections, display))
}
