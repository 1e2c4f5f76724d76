//! A passage's page: its lines coloured, the focus marked, what it defines,
//! and both links.

use super::super::highlight;
use super::super::html::{attr, esc, path};
use super::{commit_of, crumbs};
use cairn_search::TextFormat;
use cairn_search::{HistoryResponse, RefStatus, RetrieveResponse};
use std::fmt::Write;

/// A passage page: `cited` is the retrieve answer for the cited lines,
/// `window` the one for the lines around them (it holds `cited`'s lines),
/// `history` the cited lines' history when the version records it.
pub fn passage(
    cited: &RetrieveResponse,
    window: &RetrieveResponse,
    before: u32,
    after: u32,
    focus: Option<(u32, u32)>,
    defined: &std::collections::HashSet<&str>,
    history: Option<&HistoryResponse>,
) -> String {
    let doc = cited.doc_id.as_str();
    let (w_start, w_end, total) = (window.start_line, window.end_line, window.total_lines);
    let shown = Shown::of(window);
    // Each name defined somewhere the visitor may see links to its definitions.
    let coloured: Vec<String> = highlight::lines(doc, &shown.lines)
        .iter()
        .map(|l| highlight::link_identifiers(l, defined))
        .collect();
    let mut out = facts(cited, total, history);
    if window.text_format == TextFormat::NotebookCells {
        out.push_str("<p class=\"notice\">A notebook, shown as its cells; line numbers are the raw <code>.ipynb</code> lines each stands for.</p>");
    }
    // One read holds at most MAX_SPAN_LINES: a full window cannot show more.
    let room = (w_end + 1).saturating_sub(w_start) < cairn_search::MAX_SPAN_LINES;
    if w_start > 1 && room {
        let _ = write!(
            out,
            "<p class=\"more\"><a href=\"{}\">Show 20 more lines above</a></p>",
            attr(&more(cited, before + 20, after))
        );
    }
    let marks = Marks {
        cited: (cited.start_line, cited.end_line),
        focus,
    };
    code_table(&mut out, &coloured, &shown, &marks);
    out.push_str(&history_panel(history));
    if w_end < total && room {
        let _ = write!(
            out,
            "<p class=\"more\"><a href=\"{}\">Show 20 more lines below</a></p>",
            attr(&more(cited, before, after + 20))
        );
    }
    out
}

/// The window's lines as the page shows them, one row each.
struct Shown<'a> {
    lines: Vec<&'a str>,
    /// For a notebook, the raw line each row stands for; else empty.
    raw_lines: &'a [u32],
    /// The first row's line number when `raw_lines` is empty.
    start: u32,
}

impl<'a> Shown<'a> {
    /// `window`'s rows.
    fn of(window: &'a RetrieveResponse) -> Self {
        let (w_start, w_end) = (window.start_line, window.end_line);
        let mut lines: Vec<&str> = window.text.split('\n').collect();
        let raw_lines = &window.raw_lines;
        // The text's final newline ends its last line; it starts no row of its own.
        let rows = match raw_lines.is_empty() {
            true => (w_end + 1).saturating_sub(w_start) as usize,
            false => raw_lines.len(),
        };
        if lines.len() > rows && lines.last() == Some(&"") {
            lines.pop();
        }
        Self {
            lines,
            raw_lines,
            start: w_start,
        }
    }

    /// The line number row `i` shows.
    fn number(&self, i: usize) -> u32 {
        match self.raw_lines.get(i) {
            Some(r) => *r,
            None => self.start + i as u32,
        }
    }
}

/// The lines the table marks: the cited ones, and the focus within them.
struct Marks {
    cited: (u32, u32),
    focus: Option<(u32, u32)>,
}

/// The link to this passage with `before` and `after` lines of context.
fn more(cited: &RetrieveResponse, before: u32, after: u32) -> String {
    let (a, b) = (cited.start_line, cited.end_line);
    let doc = path(cited.doc_id.as_str());
    format!("/doc/{doc}?lines={a}-{b}&before={before}&after={after}")
}

/// The page's heading, the passage's facts (its file has `total` lines) and
/// its citation actions.
fn facts(cited: &RetrieveResponse, total: u32, history: Option<&HistoryResponse>) -> String {
    let doc = cited.doc_id.as_str();
    let (a, b) = (cited.start_line, cited.end_line);
    let permalink = cited.permalink.as_str();
    let markdown = format!("[{doc}:{a}-{b}]({permalink})");
    let plain = format!("{doc}, lines {a}-{b}, {permalink}");
    format!(
        r#"<nav class="crumbs" aria-label="Breadcrumb">{crumbs}</nav>
<h1>{doc_e}<span class="span">:{a}-{b}</span></h1>
<dl class="facts">
<dt>Lines</dt><dd>{a}–{b} of {total}</dd>
<dt>Commit</dt><dd><code>{commit}</code></dd>
<dt>sha256</dt><dd><code class="hash">{sha}</code></dd>
<dt>Index</dt><dd><code>{version}</code></dd>{changed}
</dl>
<div class="actions">
<button type="button" class="copy" data-copy="{md}">Copy citation (Markdown)</button>
<button type="button" class="copy" data-copy="{plain}">Copy citation (text)</button>
<a class="button" href="{github}" rel="noopener">Open these lines on GitHub</a>
<a class="button" href="{permalink_a}" rel="noopener">Permalink at the commit</a>
</div>
<noscript><p class="citation">Citation: <code>{md_text}</code></p></noscript>
"#,
        crumbs = crumbs(doc),
        doc_e = esc(doc),
        commit = esc(commit_of(permalink)),
        sha = esc(&cited.content_sha256),
        version = esc(&cited.index_version),
        md = attr(&markdown),
        plain = attr(&plain),
        md_text = esc(&markdown),
        github = attr(&cited.github_url),
        permalink_a = attr(permalink),
        changed = last_changed(history),
    )
}

/// The coloured lines as a numbered table, the cited and focused lines marked.
fn code_table(out: &mut String, coloured: &[String], shown: &Shown<'_>, marks: &Marks) {
    let (a, b) = marks.cited;
    out.push_str("<div class=\"code\" role=\"region\" aria-label=\"Source lines\" tabindex=\"0\"><table><tbody>");
    let mut anchored = std::collections::HashSet::new();
    for (i, html) in coloured.iter().enumerate() {
        let ln = shown.number(i);
        let cited_line = (a..=b).contains(&ln);
        let focus_line = marks.focus.is_some_and(|(fs, fe)| (fs..=fe).contains(&ln));
        // A notebook's rendered lines can stand for one raw line (a cell's
        // marker, fences, its first line): the anchor goes on the first, the
        // number shows once.
        let first = anchored.insert(ln);
        let (id, link) = match first {
            true => (
                format!(" id=\"L{ln}\""),
                format!("<a href=\"#L{ln}\">{ln}</a>"),
            ),
            false => (String::new(), String::new()),
        };
        let _ = writeln!(
            out,
            "<tr{id}{cls}><td class=\"ln\">{link}</td><td class=\"src\"><code>{html}</code></td></tr>",
            cls = match (cited_line, focus_line) {
                (_, true) => " class=\"cited focus\"",
                (true, false) => " class=\"cited\"",
                _ => "",
            },
        );
    }
    out.push_str("</tbody></table></div>");
}

/// "Last changed <date> in <sha>: <summary>", as a fact of the passage.
fn last_changed(history: Option<&HistoryResponse>) -> String {
    let Some(newest) = history.and_then(|h| h.blame.first()) else {
        return String::new();
    };
    format!(
        "\n<dt>Last changed</dt><dd>{} in <a href=\"{}\" rel=\"noopener\"><code>{}</code></a>: {}</dd>",
        esc(newest.date.get(..10).unwrap_or(&newest.date)),
        attr(&newest.url),
        esc(newest.sha.get(..12).unwrap_or(&newest.sha)),
        esc(&newest.summary)
    )
}

/// Who last changed which of the cited lines, and the file's recent commits.
fn history_panel(history: Option<&HistoryResponse>) -> String {
    let Some(h) = history.filter(|h| !h.blame.is_empty()) else {
        return String::new();
    };
    let mut out =
        String::from("<details class=\"history\"><summary>History of these lines</summary><ul>");
    for c in &h.blame {
        let runs: Vec<String> = c
            .lines
            .iter()
            .map(|[a, b]| match a == b {
                true => a.to_string(),
                false => format!("{a}–{b}"),
            })
            .collect();
        let _ = write!(
            out,
            "<li>Lines {}: <a href=\"{}\" rel=\"noopener\"><code>{}</code></a>, {}, {}: {}</li>",
            esc(&runs.join(", ")),
            attr(&c.url),
            esc(c.sha.get(..12).unwrap_or(&c.sha)),
            esc(c.date.get(..10).unwrap_or(&c.date)),
            esc(&c.author),
            esc(&c.summary)
        );
    }
    out.push_str("</ul>");
    if let Some(b) = &h.boundary {
        let _ = write!(
            out,
            "<p class=\"notice\">The indexed history stops at <code>{}</code>: a line credited to it may be older.</p>",
            esc(b.get(..12).unwrap_or(b))
        );
    }
    out.push_str(&at_refs(h));
    let _ = write!(
        out,
        "<p><a href=\"{}\" rel=\"noopener\">Blame on GitHub</a></p></details>",
        attr(&h.blame_url)
    );
    out
}

/// Whether the cited lines read the same at the repository's other indexed refs.
fn at_refs(h: &HistoryResponse) -> String {
    if h.at_refs.is_empty() {
        return String::new();
    }
    let mut out = String::from("<p>At other indexed refs:</p><ul>");
    for at in &h.at_refs {
        let what = match (at.status, &at.url, at.start_line, at.end_line) {
            (RefStatus::Unchanged, Some(url), Some(a), Some(b)) => format!(
                "unchanged, <a href=\"{}\" rel=\"noopener\">lines {a}–{b}</a>",
                attr(url)
            ),
            (RefStatus::Absent, ..) => "the file is not there".to_owned(),
            _ => "changed".to_owned(),
        };
        let _ = write!(out, "<li><code>{}</code>: {what}</li>", esc(&at.git_ref));
    }
    out.push_str("</ul>");
    out
}
