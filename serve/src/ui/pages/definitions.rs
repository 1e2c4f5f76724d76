//! Where a name is defined, and where it is used.

use super::super::html::{attr, esc, path};
use super::search::lines;
use super::{SearchForm, github_links};
use cairn_search::{DefinitionsResponse, GrepResponse};
use std::fmt::Write;

/// The definitions of a name, each linked to its lines, then the lines that use it.
pub fn definitions(a: &DefinitionsResponse, uses: &GrepResponse) -> String {
    let mut out = format!("<h1>Definitions of <code>{}</code></h1>", esc(&a.name));
    let form = SearchForm {
        q: a.name.clone(),
        exact: true,
        ..SearchForm::default()
    };
    let uses = format!("<h2>Where it is used</h2>{}", lines(&form, uses));
    if a.definitions.is_empty() {
        out.push_str(
            "<p class=\"insufficient\" role=\"status\">Nothing indexed defines this name.</p>",
        );
        out.push_str(&uses);
        return out;
    }
    out.push_str("<ol class=\"hits\">");
    for d in &a.definitions {
        let scope = match d.scope.as_str() {
            "" => String::new(),
            s => format!(" in <code>{}</code>", esc(s)),
        };
        let _ = write!(
            out,
            "<li class=\"hit\"><h2><a class=\"hit-link\" href=\"{}\">{}<span class=\"span\">:{}-{}</span></a></h2><p class=\"meta\"><span class=\"tag\">{}</span> <span class=\"tag\">{}</span>{scope}</p><pre class=\"snippet\">{}</pre>{}</li>",
            attr(&format!(
                "/doc/{}?lines={}-{}&focus={l}-{l}#L{l}",
                path(&d.doc_id),
                d.start_line,
                d.end_line.min(d.start_line + 200),
                l = d.start_line
            )),
            esc(&d.doc_id),
            d.start_line,
            d.end_line,
            esc(&d.kind),
            esc(&d.toolkit),
            esc(&d.signature),
            github_links(&d.github_url, &d.permalink),
        );
    }
    out.push_str("</ol>");
    out.push_str(&uses);
    out
}
