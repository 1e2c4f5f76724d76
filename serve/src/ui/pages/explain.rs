//! The error-explaining page: the form, and the raise sites, frames and
//! passages that explain the pasted error.

use super::super::html::{attr, esc, marked};
use super::{github_links, passage_link, section, select, title_span, toolkits, wire_name};
use crate::ops::explain::ExplainArgs;
use cairn_search::VersionResponse;
use cairn_search::explain::{Cited, ExplainResponse};
use std::fmt::Write;

/// What the explain form holds.
#[derive(Default)]
pub struct ExplainForm {
    /// The pasted error.
    pub text: String,
    /// Toolkit filter (empty: all).
    pub toolkit: String,
    /// Installed version (empty: not said).
    pub version: String,
}

impl ExplainForm {
    /// The operation's arguments.
    pub fn args(&self) -> ExplainArgs {
        let given = |v: &String| (!v.is_empty()).then(|| v.clone());
        ExplainArgs {
            text: self.text.clone(),
            toolkit: given(&self.toolkit),
            version: given(&self.version),
            limit: None,
        }
    }
}

/// The explain page: the form, then the answer or the error.
pub fn explain(
    form: &ExplainForm,
    version: &VersionResponse,
    answer: Option<&ExplainResponse>,
    error: Option<&str>,
) -> String {
    let toolkits = toolkits(version);
    let mut main = format!(
        r#"<h1>Explain an error</h1>
<form class="explain" action="/errors" method="post">
<label class="text"><span>Paste a traceback, a log excerpt or an error message</span>
<textarea id="text" name="text" rows="12" spellcheck="false" required maxlength="16384" placeholder="Traceback (most recent call last): …">{text}</textarea></label>
<div class="filters">{tk}<label><span>Installed version</span><input name="version" value="{version}" size="10" maxlength="64" placeholder="e.g. 3.1.6"></label><button type="submit">Explain</button></div>
</form>
"#,
        text = esc(&form.text),
        tk = select("toolkit", "Toolkit", &form.toolkit, &toolkits),
        version = attr(&form.version),
    );
    main.push_str("<section id=\"results\" aria-live=\"polite\">");
    main.push_str(error.unwrap_or(""));
    if let Some(a) = answer {
        main.push_str(&explained(a));
    }
    main.push_str("</section>");
    main
}

/// A cited span as a link to its passage page and both GitHub links.
pub(super) fn cited_links(c: &Cited) -> (String, String) {
    (
        passage_link(&c.doc_id, c.start_line, c.end_line),
        github_links(&c.github_url, &c.permalink),
    )
}

/// An explain answer: the parsed error, raise sites, frames, explaining passages.
pub(super) fn explained(a: &ExplainResponse) -> String {
    let mut out = String::new();
    let p = &a.parsed;
    let _ = write!(
        out,
        "<p class=\"parsed\"><code>{}</code>{} <span class=\"tag\">{}</span></p>",
        esc(p.exception.as_deref().unwrap_or("")),
        match p.message.lines().next() {
            Some(m) if !m.is_empty() => format!(": {}", esc(m)),
            _ => String::new(),
        },
        esc(&wire_name(&p.shape))
    );
    if a.insufficient_evidence {
        out.push_str("<p class=\"insufficient\" role=\"status\">Nothing indexed raises or explains this error.</p>");
    }
    for n in &a.notices {
        let _ = write!(out, "<p class=\"notice\">{}</p>", esc(n));
    }
    let sites: Vec<String> = a
        .raise_sites
        .iter()
        .map(|site| {
            let (link, links) = cited_links(&site.at);
            format!(
                "<li class=\"hit\"><h3>{link}</h3><p class=\"meta\"><span class=\"tag\">{}</span> in <code>{}</code> · explains {:.0}% of the message{}</p><pre class=\"snippet\">{}</pre>{links}</li>",
                esc(&site.exception),
                esc(match site.function.as_str() {
                    "" => "<module>",
                    f => f,
                }),
                site.explained * 100.0,
                if site.at_frame {
                    " · the traceback's own frame"
                } else {
                    ""
                },
                esc(&site.source),
            )
        })
        .collect();
    section(&mut out, "Raised at", "ol class=\"hits\"", &sites);
    let frames: Vec<String> = a
        .frames
        .iter()
        .filter_map(|f| {
            let fr = &f.frame;
            let (link, _) = cited_links(f.at.as_ref()?);
            Some(format!(
                "<li><code>{}:{}</code> in <code>{}</code> → {link} <span class=\"tag\">{}</span></li>",
                esc(&fr.file),
                fr.line,
                esc(&fr.function),
                esc(&f.located.as_ref().map(wire_name).unwrap_or_default()),
            ))
        })
        .collect();
    section(
        &mut out,
        "Frames in indexed code",
        "ul class=\"frames\"",
        &frames,
    );
    let hits: Vec<String> = a
        .explains
        .iter()
        .map(|h| {
            format!(
                "<li class=\"hit\"><h3>{}</h3><p class=\"meta\"><span class=\"tag\">{}</span> <span class=\"tag\">{}</span>{}</p><pre class=\"snippet\">{}</pre>{}</li>",
                passage_link(&h.doc_id, h.start_line, h.end_line),
                esc(&h.toolkit),
                esc(h.doctype.as_str()),
                title_span(h),
                marked(&h.snippet),
                github_links(&h.github_url, &h.permalink),
            )
        })
        .collect();
    section(&mut out, "What explains it", "ol class=\"hits\"", &hits);
    let _ = write!(
        out,
        "<p class=\"hint\">History: {}</p>",
        esc(&a.history.note)
    );
    out
}
