//! Plain-text renderings of the answers, for people and for language models:
//! the CLI prints them and the MCP tools return them beside the structured
//! result, so both read the same. Every hit shows its span and both links.

use crate::{RetrieveResponse, SearchResponse, TextFormat, TreeResponse};
use std::fmt;

impl fmt::Display for SearchResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(n) = &self.notice {
            writeln!(f, "note: {n}")?;
        }
        if self.insufficient_evidence {
            writeln!(f, "insufficient evidence: nothing answers this confidently")?;
        }
        for (i, h) in self.hits.iter().enumerate() {
            writeln!(
                f,
                "{:2}. {}:{}-{}  [{} {}]  score {:.4} (bm25 {:.2}, cos {:.3}, w {:.2})",
                i + 1,
                h.doc_id,
                h.start_line,
                h.end_line,
                h.toolkit,
                h.doctype,
                h.score,
                h.breakdown.bm25,
                h.breakdown.vector,
                h.breakdown.weight
            )?;
            if !h.title.is_empty() {
                writeln!(f, "    § {}", h.title)?;
            }
            if let (Some(fs), Some(fe)) = (h.focus_start, h.focus_end) {
                writeln!(f, "    best lines: {fs}-{fe}")?;
            }
            if let Some(p) = &h.page {
                match p.end_page {
                    Some(e) => writeln!(
                        f,
                        "    page {}, line {} to page {e}, line {}",
                        p.page, p.start_line, p.end_line
                    )?,
                    None => writeln!(
                        f,
                        "    page {}, lines {}-{}",
                        p.page, p.start_line, p.end_line
                    )?,
                }
            }
            for line in h.snippet.lines() {
                writeln!(f, "    | {line}")?;
            }
            writeln!(f, "    {}", h.github_url)?;
            writeln!(f, "    permalink: {}", h.permalink)?;
        }
        let mode = serde_json::to_string(&self.mode).unwrap_or_default();
        writeln!(
            f,
            "({} hits, {} mode, index {})",
            self.hits.len(),
            mode.trim_matches('"'),
            self.index_version
        )
    }
}

impl fmt::Display for RetrieveResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{}-{} of {} lines{}{}",
            self.doc_id,
            self.start_line,
            self.end_line,
            self.total_lines,
            if self.clamped { " (clamped)" } else { "" },
            match self.text_format {
                TextFormat::Raw => "",
                TextFormat::NotebookCells => " (as notebook cells; --raw for the exact lines)",
            }
        )?;
        writeln!(f, "{}", self.permalink)?;
        for (i, line) in self.text.lines().enumerate() {
            writeln!(f, "{:6}  {line}", self.line_number(i))?;
        }
        Ok(())
    }
}

impl fmt::Display for TreeResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.entries {
            match (e.kind, e.files, e.lines) {
                ("file", _, Some(lines)) => writeln!(
                    f,
                    "{}  ({}, {lines} lines)",
                    e.path,
                    e.doctype.as_deref().unwrap_or("")
                )?,
                (kind, Some(n), _) => writeln!(f, "{}/  ({kind}, {n} files)", e.path)?,
                _ => writeln!(f, "{}", e.path)?,
            }
        }
        if self.truncated {
            writeln!(f, "… (more entries; raise max_entries)")?;
        }
        Ok(())
    }
}

impl fmt::Display for crate::ExplainResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.parsed;
        let shape = serde_json::to_string(&p.shape).unwrap_or_default();
        writeln!(
            f,
            "error: {}{}  ({})",
            p.exception
                .as_deref()
                .map_or(String::new(), |e| format!("{e}: ")),
            p.message.lines().next().unwrap_or(""),
            shape.trim_matches('"')
        )?;
        for n in &self.notices {
            writeln!(f, "note: {n}")?;
        }
        if self.insufficient_evidence {
            writeln!(
                f,
                "insufficient evidence: nothing indexed raises or explains this"
            )?;
        }
        if !self.raise_sites.is_empty() {
            writeln!(f, "\nraised at:")?;
        }
        for (i, s) in self.raise_sites.iter().enumerate() {
            writeln!(
                f,
                "{:2}. {}:{}-{}  {} in {}  (explains {:.0}% of the message{})",
                i + 1,
                s.at.doc_id,
                s.at.start_line,
                s.at.end_line,
                s.exception,
                if s.function.is_empty() {
                    "<module>"
                } else {
                    &s.function
                },
                s.explained * 100.0,
                if s.at_frame {
                    ", the traceback's own frame"
                } else {
                    ""
                }
            )?;
            for line in s.source.lines() {
                writeln!(f, "    | {line}")?;
            }
            writeln!(f, "    {}", s.at.permalink)?;
        }
        let mapped: Vec<_> = self
            .frames
            .iter()
            .filter_map(|m| Some((m, m.at.as_ref()?)))
            .collect();
        if !mapped.is_empty() {
            writeln!(f, "\nframes in indexed code:")?;
        }
        for (m, at) in mapped {
            let how = serde_json::to_string(&m.located).unwrap_or_default();
            writeln!(
                f,
                "  {}:{} in {}  →  {}:{}  ({})",
                m.frame.file,
                m.frame.line,
                m.frame.function,
                at.doc_id,
                at.start_line,
                how.trim_matches('"')
            )?;
            writeln!(f, "    {}", at.permalink)?;
        }
        if !self.explains.is_empty() {
            writeln!(f, "\nexplained by:")?;
        }
        for (i, h) in self.explains.iter().enumerate() {
            writeln!(
                f,
                "{:2}. {}:{}-{}  [{} {}]{}",
                i + 1,
                h.doc_id,
                h.start_line,
                h.end_line,
                h.toolkit,
                h.doctype,
                if h.title.is_empty() {
                    String::new()
                } else {
                    format!("  § {}", h.title)
                }
            )?;
            writeln!(f, "    {}", h.permalink)?;
        }
        writeln!(f, "\nhistory: {}", self.history.note)?;
        writeln!(f, "(index {})", self.index_version)
    }
}
