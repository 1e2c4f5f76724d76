//! The ask page (`/answer`, where a model is configured): a question, and
//! the configured model's answer in words with its checked citations, each
//! opening its passage page, and what did not hold.

use super::super::html::{attr, esc};
use super::{github_links, passage_link};
use crate::ops::ask::{AskResponse, Step};
use std::fmt::Write;

/// The ask page: the form, then the answer or the error.
pub fn ask(question: &str, answer: Option<&AskResponse>, error: Option<&str>) -> String {
    let mut main = format!(
        r#"<h1>Ask for a written answer</h1>
<form class="search" action="/answer" method="get">
<label class="q"><span>Your question about the indexed code and docs</span>
<input id="q" name="q" type="search" value="{q}" maxlength="1000" placeholder="e.g. how do I run emcee in parallel?" autocomplete="off" autofocus></label>
<div class="filters"><button type="submit">Ask</button></div>
</form>
<p class="hint">cairn's model reads the index as you and answers with numbered citations; each quotation is checked against the lines it cites. It takes a while.</p>
"#,
        q = attr(question),
    );
    main.push_str("<section id=\"results\" aria-live=\"polite\">");
    main.push_str(error.unwrap_or(""));
    if let Some(a) = answer {
        main.push_str(&answered(a));
    }
    main.push_str("</section>");
    main
}

/// One tool call the model made, as the streamed page lists it.
pub fn step(s: &Step) -> String {
    let what = match (&s.error, s.returned.len()) {
        (Some(e), _) => format!("failed: {}", esc(e)),
        (None, n) => format!("{n} passage{}", if n == 1 { "" } else { "s" }),
    };
    format!(
        "<li><code>{}</code> <span class=\"args\">{}</span> — {what}</li>",
        esc(&s.tool),
        esc(&s.arguments)
    )
}

/// An answer: its words (as plain text, paragraphs kept), its citations
/// linked to their passage pages, and what did not hold.
pub fn answered(a: &AskResponse) -> String {
    let mut out = String::from("<article class=\"answer\">");
    for paragraph in a.answer.split("\n\n").filter(|p| !p.trim().is_empty()) {
        let _ = write!(out, "<p>{}</p>", esc(paragraph.trim()));
    }
    out.push_str("</article>");
    if !a.citations.is_empty() {
        out.push_str("<h2>Cited</h2><ol class=\"cited\">");
        for c in &a.citations {
            let _ = write!(
                out,
                "<li value=\"{}\">{}{}</li>",
                c.n,
                passage_link(&c.doc_id, c.start_line, c.end_line),
                github_links(&c.github_url, &c.permalink)
            );
        }
        out.push_str("</ol>");
    }
    if !a.unverified.is_empty() {
        out.push_str("<h2>Not verified</h2><ul class=\"unverified\">");
        for u in &a.unverified {
            let _ = write!(
                out,
                "<li><code>{}</code>: {}</li>",
                esc(&u.text),
                esc(&u.reason)
            );
        }
        out.push_str("</ul>");
    }
    out
}
