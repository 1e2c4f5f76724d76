//! Notebooks: each cell's source mapped back to the raw `.ipynb` lines it
//! occupies, and the text a raw line carries.

use super::Section;
use cairn_index::LineIndex;

/// Each notebook cell's span: the raw lines of its `source` (outputs, which
/// nbformat writes before the source, are left out).
pub(super) fn notebook_sections(text: &str, index: &LineIndex) -> Option<Vec<Section>> {
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
pub(super) fn notebook_line_text(line: &str) -> String {
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
