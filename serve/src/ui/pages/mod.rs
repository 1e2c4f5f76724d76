//! The pages, each rendered from the operations' typed answers, one file
//! each: `search.rs` (the form and its answer), `passage.rs`,
//! `definitions.rs`, `browse.rs` (the tree), `explain.rs` (an error
//! explained), `api.rs` (the API reference); here, the sign-in and error
//! pages and the pieces they share (links, tags, selects).

mod api;
mod ask;
mod browse;
mod definitions;
mod explain;
mod passage;
mod search;

pub use api::api;
pub use ask::{answered, ask, step};
pub use browse::browse;
pub use definitions::definitions;
pub use explain::{ExplainForm, explain};
pub use passage::passage;
pub use search::{Found, SearchForm, results, search};

use super::html::{attr, esc, path};
use cairn_search::{Hit, VersionResponse};
use std::fmt::Write;

/// A value's name on the wire (an enum's serde name), for showing it.
pub(super) fn wire_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// The value a one-choice `<select>` shows for a filter ("" for all).
pub(super) fn chosen(list: &[String]) -> &str {
    list.first().map_or("", String::as_str)
}

/// A `<select>` named `name` with an "all" option and `choices`.
pub(super) fn select(name: &str, label: &str, chosen: &str, choices: &[String]) -> String {
    let mut out = format!(
        "<label>{label} <select name=\"{name}\"><option value=\"\">all</option>",
        label = esc(label)
    );
    for c in choices {
        let sel = if c == chosen { " selected" } else { "" };
        let _ = write!(
            out,
            "<option value=\"{}\"{sel}>{}</option>",
            attr(c),
            esc(c)
        );
    }
    out.push_str("</select></label>");
    out
}

/// The commit in a permalink (`…/blob/<commit>/…`).
pub(super) fn commit_of(permalink: &str) -> &str {
    permalink
        .split("/blob/")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or("")
}

/// Links to each prefix of a doc_id's path, for the browse pages.
pub(super) fn crumbs(doc: &str) -> String {
    let mut out = String::from("<a href=\"/browse/\">all</a>");
    let parts: Vec<&str> = doc.split('/').collect();
    for i in 0..parts.len().saturating_sub(1) {
        let prefix = parts[..=i].join("/");
        let _ = write!(
            out,
            " / <a href=\"/browse/{}\">{}</a>",
            attr(&path(&prefix)),
            esc(parts[i])
        );
    }
    out
}

/// The sign-in page: who is signed in, or the form (and why the last try failed).
pub fn login(open: bool, who: Option<&str>, error: Option<&str>) -> String {
    if open {
        return "<h1>Sign in</h1><p>This server needs no sign-in: it was started without credentials (<code>--no-auth</code>), and every visitor sees every document.</p>".to_owned();
    }
    let mut out = String::from("<h1>Sign in</h1>");
    if let Some(name) = who {
        let _ = write!(
            out,
            "<p>Signed in as <strong>{}</strong>: pages show your groups' documents.</p><form method=\"post\" action=\"/logout\"><button type=\"submit\">Sign out</button></form>",
            esc(name)
        );
        return out;
    }
    if let Some(e) = error {
        let _ = write!(out, "<p class=\"error\" role=\"alert\">{}</p>", esc(e));
    }
    out.push_str("<p>Without signing in you see the public documents. A token from your course or group (<code>cairn token add</code>) shows its documents too; it is sent once, in this form, and the page then keeps only a session cookie.</p><form class=\"login\" method=\"post\" action=\"/login\"><label>Access token <input name=\"token\" type=\"password\" autocomplete=\"off\" required></label> <button type=\"submit\">Sign in</button></form>");
    out
}

/// An error as a page for a browser (API clients get problem+json).
pub fn problem(status: u16, title: &str, detail: &str, trace_id: &str) -> String {
    format!(
        "<h1>{status} {}</h1><p>{}</p><p class=\"muted\">Trace id <code>{}</code>. <a href=\"/\">Back to search</a></p>",
        esc(title),
        esc(detail),
        esc(trace_id)
    )
}

/// The toolkits a version answer lists, sorted, each once.
pub(super) fn toolkits(version: &VersionResponse) -> Vec<String> {
    let mut t: Vec<String> = version.repos.iter().map(|r| r.toolkit.clone()).collect();
    t.sort();
    t.dedup();
    t
}

/// A heading and its list (`list` is the opening tag's inside), when it has items.
pub(super) fn section(out: &mut String, heading: &str, list: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let tag = list.split(' ').next().unwrap_or(list);
    let _ = write!(out, "<h2>{heading}</h2><{list}>{}</{tag}>", items.concat());
}

/// ` § title` for a hit with a section title.
pub(super) fn title_span(h: &Hit) -> String {
    match h.title.as_str() {
        "" => String::new(),
        t => format!(" <span class=\"title\">§ {}</span>", esc(t)),
    }
}

/// A PDF hit's place as a reader finds it: `p. 3, lines 12–20`.
pub(super) fn page_tag(page: Option<&cairn_search::PageCitation>) -> String {
    let Some(p) = page else {
        return String::new();
    };
    let end = match p.end_page {
        Some(e) => format!("p. {e} line {}", p.end_line),
        None => format!("{}", p.end_line),
    };
    format!(
        " <span class=\"tag page\">p. {}, lines {}–{end}</span>",
        p.page, p.start_line
    )
}

/// Both GitHub links of a cited span.
pub(super) fn github_links(github_url: &str, permalink: &str) -> String {
    format!(
        "<p class=\"links\"><a href=\"{}\" rel=\"noopener\">on the default branch</a> · <a href=\"{}\" rel=\"noopener\">permalink at the commit</a></p>",
        attr(github_url),
        attr(permalink)
    )
}

/// A cited span as a link to its passage page.
pub(super) fn passage_link(doc: &str, start: u32, end: u32) -> String {
    let href = format!("/doc/{}?lines={start}-{end}", path(doc));
    format!(
        "<a href=\"{}\">{}<span class=\"span\">:{start}-{end}</span></a>",
        attr(&href),
        esc(doc)
    )
}

#[cfg(test)]
mod tests {
    use super::page_tag;
    use cairn_search::PageCitation;

    #[test]
    fn a_pdf_hit_shows_its_page_and_lines() {
        let on = |end_page| PageCitation {
            page: 2,
            start_line: 3,
            end_line: 9,
            end_page,
        };
        assert_eq!(page_tag(None), "");
        assert_eq!(
            page_tag(Some(&on(None))),
            " <span class=\"tag page\">p. 2, lines 3–9</span>"
        );
        assert_eq!(
            page_tag(Some(&on(Some(3)))),
            " <span class=\"tag page\">p. 2, lines 3–p. 3 line 9</span>"
        );
    }
}
