//! An explanation as plain text, for the CLI and beside MCP's structured result.

use std::fmt;

impl fmt::Display for super::ExplainResponse {
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
                "{:2}. {}{}",
                i + 1,
                h.headline(),
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
