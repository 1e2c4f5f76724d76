//! The doc_id tree, folder by folder.

use super::super::html::{attr, esc, path};
use super::crumbs;
use cairn_search::TreeResponse;
use std::fmt::Write;

/// A browse page: the tree answer's entries under `prefix`.
pub fn browse(prefix: &str, tree: &TreeResponse) -> String {
    let mut out = String::new();
    if prefix.is_empty() {
        out.push_str("<h1>Browse</h1>");
    } else {
        let _ = write!(
            out,
            "<nav class=\"crumbs\" aria-label=\"Breadcrumb\">{}</nav><h1>{}</h1>",
            crumbs(&format!("{prefix}/")),
            esc(prefix)
        );
    }
    let entries = &tree.entries;
    if entries.is_empty() {
        out.push_str("<p>Nothing here.</p>");
        return out;
    }
    out.push_str("<ul class=\"tree\">");
    for e in entries {
        let p = e.path.as_str();
        let name = p.rsplit('/').next().unwrap_or(p);
        if e.kind == "file" {
            let lines = e.lines.unwrap_or(0);
            let _ = write!(
                out,
                "<li class=\"file\"><a href=\"/doc/{}?lines=1-{}\">{}</a> <span class=\"tag\">{}</span> <span class=\"muted\">{lines} lines</span></li>",
                attr(&path(p)),
                lines.clamp(1, 40),
                esc(name),
                esc(e.doctype.map_or("", |d| d.as_str())),
            );
        } else {
            let _ = write!(
                out,
                "<li class=\"dir\"><a href=\"/browse/{}\">{}/</a> <span class=\"muted\">{} files · {}</span></li>",
                attr(&path(p)),
                esc(name),
                e.files.unwrap_or(0),
                esc(e.kind),
            );
        }
    }
    out.push_str("</ul>");
    if tree.truncated {
        out.push_str("<p class=\"notice\">Only the first entries are listed.</p>");
    }
    out
}
