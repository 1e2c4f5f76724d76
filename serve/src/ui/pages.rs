//! The pages, each rendered from the operations' typed answers: search, a
//! passage, the tree, an error explained, the API reference.

use super::highlight;
use super::html::{attr, esc, marked, path, query_value};
use crate::ops::explain::ExplainArgs;
use crate::ops::grep::GrepArgs;
use crate::ops::search::SearchArgs;
use cairn_search::explain::{Cited, ExplainResponse};
use cairn_search::{
    DefinitionsResponse, Filters, GrepResponse, Hit, RetrieveResponse, SearchResponse, TextFormat,
    TreeResponse, VersionResponse,
};
use std::fmt::Write;
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::{Operation, Parameter};

/// A value's name on the wire (an enum's serde name), for showing it.
fn wire_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// What a search page was asked: the query and its filters, from the URL.
#[derive(Debug, Default)]
pub struct SearchForm {
    /// The question.
    pub q: String,
    /// The filters chosen (the form offers toolkit, doctype and repository).
    pub filters: Filters,
    /// Show each hit's score parts.
    pub scores: bool,
    /// Find the exact text (grep) rather than ranked passages.
    pub exact: bool,
}

/// What a search page shows: ranked passages, or the lines that hold the text.
pub enum Found {
    /// The search operation's answer.
    Passages(SearchResponse),
    /// The grep operation's answer.
    Lines(GrepResponse),
}

impl SearchForm {
    /// The arguments of the search operation.
    pub fn args(&self) -> SearchArgs {
        SearchArgs {
            query: self.q.clone(),
            queries: Vec::new(),
            limit: Some(20),
            filters: self.filters.clone(),
            threshold: None,
            mode: None,
        }
    }

    /// The arguments of the grep operation (the question as literal text, any case).
    pub fn grep_args(&self) -> GrepArgs {
        GrepArgs {
            pattern: self.q.clone(),
            regex: false,
            ignore_case: true,
            word: false,
            filters: self.filters.clone(),
            path: None,
            context: None,
            limit: Some(200),
            cursor: None,
        }
    }

    /// This form's URL with `scores` set to `on`.
    fn url(&self, scores: bool) -> String {
        let mut u = format!("/?q={}", query_value(&self.q));
        for (k, v) in self.filters.pairs() {
            let _ = write!(u, "&{k}={}", query_value(v));
        }
        if self.exact {
            u.push_str("&exact=1");
        }
        if scores {
            u.push_str("&scores=1");
        }
        u
    }
}

/// The value a one-choice `<select>` shows for a filter ("" for all).
fn chosen(list: &[String]) -> &str {
    list.first().map_or("", String::as_str)
}

/// A `<select>` named `name` with an "all" option and `choices`.
fn select(name: &str, label: &str, chosen: &str, choices: &[String]) -> String {
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

/// The search form and, when a query was given, its hits (`answer` is the
/// search operation's answer) or why it was refused (`error`, HTML).
/// `version` is the version operation's answer, whose repositories are the
/// filter choices this caller may see.
pub fn search(
    form: &SearchForm,
    version: &VersionResponse,
    answer: Option<&Found>,
    error: Option<&str>,
) -> String {
    let repos: Vec<String> = version.repos.iter().map(|r| r.name.clone()).collect();
    let toolkits = toolkits(version);
    let doctypes: Vec<String> = cairn_index::Doctype::ALL
        .iter()
        .map(|d| d.as_str().to_owned())
        .collect();
    let mut main = format!(
        r#"<h1 class="visually-hidden">Search</h1>
<form class="search" action="/" method="get" role="search">
<label class="q"><span>Search the indexed code and docs</span>
<input id="q" name="q" type="search" value="{q}" placeholder="e.g. emcee multiprocessing Pool" autocomplete="off" autofocus></label>
<div class="filters">{tk}{dt}{rp}<label class="check"><input type="checkbox" name="exact" value="1"{exact}> Exact text</label><button type="submit">Search</button></div>
</form>
"#,
        q = attr(&form.q),
        tk = select(
            Filters::TOOLKIT,
            "Toolkit",
            chosen(&form.filters.toolkit),
            &toolkits
        ),
        dt = select(
            Filters::DOCTYPE,
            "Type",
            chosen(&form.filters.doctype),
            &doctypes
        ),
        rp = select(
            Filters::REPO,
            "Repository",
            chosen(&form.filters.repo),
            &repos
        ),
        exact = if form.exact { " checked" } else { "" },
    );
    main.push_str("<section id=\"results\" aria-live=\"polite\">");
    main.push_str(error.unwrap_or(""));
    if let Some(a) = answer {
        main.push_str(&results(form, a));
    } else if error.is_none() {
        main.push_str("<p class=\"hint\">Ask a question or type an identifier. Press <kbd>/</kbd> to search, <kbd>j</kbd>/<kbd>k</kbd> to move between hits, <kbd>Enter</kbd> to open one.</p>");
        main.push_str(&indexed(version));
    }
    main.push_str("</section>");
    main
}

/// What the index holds: each repository the visitor may see, its toolkit,
/// its description and the commit indexed (stale ones say so).
fn indexed(version: &VersionResponse) -> String {
    if version.repos.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>What is indexed</h2><dl class=\"indexed\">");
    for r in &version.repos {
        let commit = r.commit.as_deref().unwrap_or("");
        let _ = write!(
            out,
            "<dt><a href=\"/?q=&amp;{key}={tk}\">{name}</a> <span class=\"tag\">{tk}</span></dt><dd>{desc}<span class=\"meta\">{branch} @ <code>{commit}</code>{stale}</span></dd>",
            key = Filters::TOOLKIT,
            tk = attr(&r.toolkit),
            name = esc(&r.name),
            desc = match r.description.as_str() {
                "" => String::new(),
                d => format!("{} ", esc(d)),
            },
            branch = esc(r.default_branch.as_deref().unwrap_or("")),
            commit = esc(&commit.chars().take(12).collect::<String>()),
            stale = match r.stale {
                true =>
                    " · <strong>stale</strong>: the last fetch failed, this is the commit fetched before",
                false => "",
            },
        );
    }
    out.push_str("</dl>");
    out
}

/// The results section of an answer.
pub fn results(form: &SearchForm, found: &Found) -> String {
    match found {
        Found::Passages(a) => passages(form, a),
        Found::Lines(a) => lines(form, a),
    }
}

/// The lines holding the exact text, by document, each linked to its place.
fn lines(form: &SearchForm, a: &GrepResponse) -> String {
    let mut out = String::new();
    if a.matches == 0 {
        let _ = write!(
            out,
            "<p class=\"insufficient\" role=\"status\">No line holds “{}” exactly. Untick “Exact text” to search passages by meaning.</p>",
            esc(&form.q)
        );
        return out;
    }
    let _ = write!(
        out,
        "<p class=\"count\">{} lines in {} files{}</p><ol class=\"hits\">",
        a.matches,
        a.files.len(),
        if a.truncated.is_some() {
            " (the first ones)"
        } else {
            ""
        }
    );
    for f in &a.files {
        let Some(first) = f.matches.first() else {
            continue;
        };
        let at = |line: u32, start: u32, end: u32| {
            format!(
                "/doc/{}?lines={start}-{end}&focus={line}-{line}#L{line}",
                path(&f.doc_id)
            )
        };
        let _ = write!(
            out,
            "<li class=\"hit\"><h2><a class=\"hit-link\" href=\"{}\">{}</a></h2><p class=\"meta\"><span class=\"tag\">{}</span> <span class=\"tag\">{}</span></p><pre class=\"snippet\">",
            attr(&at(first.line, first.start_line, first.end_line)),
            esc(&f.doc_id),
            esc(&f.toolkit),
            esc(&f.doctype),
        );
        for m in &f.matches {
            let _ = writeln!(
                out,
                "<a href=\"{}\">{}</a>: {}",
                attr(&at(m.line, m.start_line, m.end_line)),
                m.line,
                esc(&m.text)
            );
        }
        out.push_str("</pre></li>");
    }
    out.push_str("</ol>");
    out
}

/// The hits of a search answer, as the results section.
fn passages(form: &SearchForm, a: &SearchResponse) -> String {
    let hits = &a.hits;
    let mut out = String::new();
    if a.insufficient_evidence || hits.is_empty() {
        let _ = write!(
            out,
            "<p class=\"insufficient\" role=\"status\">Nothing here answers this well: the index holds no passage close enough to “{}”. Try other words, or fewer filters.</p>",
            esc(&form.q)
        );
    }
    if let Some(notice) = &a.notice {
        let _ = write!(out, "<p class=\"notice\">{}</p>", esc(notice));
    }
    if hits.is_empty() {
        return out;
    }
    let _ = write!(
        out,
        "<p class=\"count\">{} passages · <a href=\"{}\">{}</a></p><ol class=\"hits\">",
        hits.len(),
        attr(&form.url(!form.scores)),
        if form.scores {
            "hide scores"
        } else {
            "show scores"
        }
    );
    for h in hits {
        let (doc, start, end) = (h.doc_id.as_str(), h.start_line, h.end_line);
        // The passage page highlights the focus (the few lines that answer
        // best) within the cited span, and opens at it.
        let focus = h.focus_start.zip(h.focus_end);
        let href = match focus {
            Some((fs, fe)) => format!(
                "/doc/{}?lines={start}-{end}&focus={fs}-{fe}#L{fs}",
                path(doc)
            ),
            None => format!("/doc/{}?lines={start}-{end}", path(doc)),
        };
        let _ = write!(
            out,
            r#"<li class="hit"><h2><a class="hit-link" href="{href}">{doc}<span class="span">:{start}-{end}</span></a></h2>
<p class="meta"><span class="tag">{toolkit}</span> <span class="tag">{doctype}</span>{page}{title}</p>
<pre class="snippet">{snippet}</pre>
"#,
            href = attr(&href),
            doc = esc(doc),
            toolkit = esc(&h.toolkit),
            doctype = esc(&h.doctype),
            page = page_tag(h.page.as_ref()),
            title = title_span(h),
            snippet = marked(&h.snippet),
        );
        if !h.defines.is_empty() {
            let names: Vec<String> = h
                .defines
                .iter()
                .map(|d| {
                    format!(
                        "<a href=\"{}\"><code>{}</code></a> <span class=\"muted\">{}</span>",
                        attr(&format!(
                            "/doc/{}?lines={start}-{end}&focus={l}-{l}#L{l}",
                            path(doc),
                            l = d.line
                        )),
                        esc(&d.name),
                        esc(&d.kind)
                    )
                })
                .collect();
            let _ = write!(out, "<p class=\"meta\">Defines {}</p>", names.join(", "));
        }
        if form.scores {
            let b = &h.breakdown;
            let _ = write!(
                out,
                "<p class=\"scores\">score {:.4} = rrf {:.4} × weight {:.2} · bm25 {:.2} · cosine {:.3}</p>",
                h.score, b.rrf, b.weight, b.bm25, b.vector
            );
        }
        let _ = writeln!(out, "{}</li>", github_links(&h.github_url, &h.permalink));
    }
    out.push_str("</ol>");
    out
}

/// A passage page: `cited` is the retrieve answer for the cited lines,
/// `window` the one for the lines around them (it holds `cited`'s lines).
pub fn passage(
    cited: &RetrieveResponse,
    window: &RetrieveResponse,
    before: u32,
    after: u32,
    focus: Option<(u32, u32)>,
    defined: &std::collections::HashSet<&str>,
) -> String {
    let doc = cited.doc_id.as_str();
    let (a, b) = (cited.start_line, cited.end_line);
    let (w_start, w_end, total) = (window.start_line, window.end_line, window.total_lines);
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
    let number = |i: usize| match raw_lines.get(i) {
        Some(r) => *r,
        None => w_start + i as u32,
    };
    // Each name defined somewhere the visitor may see links to its definitions.
    let coloured: Vec<String> = highlight::lines(doc, &lines)
        .iter()
        .map(|l| highlight::link_identifiers(l, defined))
        .collect();
    let permalink = cited.permalink.as_str();
    let markdown = format!("[{doc}:{a}-{b}]({permalink})");
    let plain = format!("{doc}, lines {a}-{b}, {permalink}");
    let lines_q = format!("{a}-{b}");
    let more =
        |bf: u32, af: u32| format!("/doc/{}?lines={lines_q}&before={bf}&after={af}", path(doc));
    let mut out = format!(
        r#"<nav class="crumbs" aria-label="Breadcrumb">{crumbs}</nav>
<h1>{doc_e}<span class="span">:{a}-{b}</span></h1>
<dl class="facts">
<dt>Lines</dt><dd>{a}–{b} of {total}</dd>
<dt>Commit</dt><dd><code>{commit}</code></dd>
<dt>sha256</dt><dd><code class="hash">{sha}</code></dd>
<dt>Index</dt><dd><code>{version}</code></dd>
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
    );
    if window.text_format == TextFormat::NotebookCells {
        out.push_str("<p class=\"notice\">A notebook, shown as its cells; line numbers are the raw <code>.ipynb</code> lines each stands for.</p>");
    }
    // One read holds at most MAX_SPAN_LINES: a full window cannot show more.
    let room = (w_end + 1).saturating_sub(w_start) < cairn_search::MAX_SPAN_LINES;
    if w_start > 1 && room {
        let _ = write!(
            out,
            "<p class=\"more\"><a href=\"{}\">Show 20 more lines above</a></p>",
            attr(&more(before + 20, after))
        );
    }
    out.push_str("<div class=\"code\" role=\"region\" aria-label=\"Source lines\" tabindex=\"0\"><table><tbody>");
    let mut anchored = std::collections::HashSet::new();
    for (i, html) in coloured.iter().enumerate() {
        let ln = number(i);
        let cited_line = (a..=b).contains(&ln);
        let focus_line = focus.is_some_and(|(fs, fe)| (fs..=fe).contains(&ln));
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
    if w_end < total && room {
        let _ = write!(
            out,
            "<p class=\"more\"><a href=\"{}\">Show 20 more lines below</a></p>",
            attr(&more(before, after + 20))
        );
    }
    out
}

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

/// The commit in a permalink (`…/blob/<commit>/…`).
fn commit_of(permalink: &str) -> &str {
    permalink
        .split("/blob/")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or("")
}

/// Links to each prefix of a doc_id's path, for the browse pages.
fn crumbs(doc: &str) -> String {
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
                esc(e.doctype.as_deref().unwrap_or("")),
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

/// The API reference, from the OpenAPI document: each operation, its
/// parameters and a curl line.
pub fn api(doc: &OpenApi, base: &str) -> String {
    let mut out = String::from(
        "<h1>HTTP API</h1><p>Every operation answers JSON; errors are RFC 9457 <code>application/problem+json</code> naming the field at fault. Send <code>Authorization: Bearer $CAIRN_TOKEN</code> (make one with <code>cairn token add NAME</code>). The machine-readable document is <a href=\"/openapi.json\">/openapi.json</a> (import it as a GPT Action).</p>",
    );
    // Every (method, path, operation) of the document, in its order.
    let ops: Vec<(&str, &str, &Operation)> = doc
        .paths
        .paths
        .iter()
        .flat_map(|(p, item)| {
            [("get", &item.get), ("post", &item.post)]
                .into_iter()
                .filter_map(move |(m, op)| Some((m, p.as_str(), op.as_ref()?)))
        })
        .collect();
    let id = |op: &Operation| op.operation_id.clone().unwrap_or_default();
    out.push_str("<nav aria-label=\"Operations\"><ul class=\"toc\">");
    for (method, p, op) in &ops {
        let _ = write!(
            out,
            "<li><a href=\"#{}\"><code>{} {}</code></a> {}</li>",
            attr(&id(op)),
            esc(&method.to_uppercase()),
            esc(p),
            esc(op.summary.as_deref().unwrap_or(""))
        );
    }
    out.push_str("</ul></nav>");
    for (method, p, op) in &ops {
        let _ = write!(
            out,
            "<section class=\"op\" id=\"{}\"><h2><code>{} {}</code></h2><p>{}</p>",
            attr(&id(op)),
            esc(&method.to_uppercase()),
            esc(p),
            esc(op.description.as_deref().unwrap_or(""))
        );
        let params: &[Parameter] = op.parameters.as_deref().unwrap_or_default();
        if !params.is_empty() {
            out.push_str("<table class=\"params\"><thead><tr><th scope=\"col\">Parameter</th><th scope=\"col\">In</th><th scope=\"col\">Required</th><th scope=\"col\">Meaning</th></tr></thead><tbody>");
            for prm in params {
                let _ = write!(
                    out,
                    "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&prm.name),
                    esc(&wire_name(&prm.parameter_in)),
                    if required(prm) { "yes" } else { "no" },
                    esc(prm.description.as_deref().unwrap_or(""))
                );
            }
            out.push_str("</tbody></table>");
        }
        let _ = write!(
            out,
            "<pre class=\"curl\" tabindex=\"0\"><code>{}</code></pre></section>",
            esc(&curl(base, p, method, params))
        );
    }
    out
}

fn required(prm: &Parameter) -> bool {
    matches!(prm.required, utoipa::openapi::Required::True)
}

/// A curl line for one operation, with the required parameters filled by example values.
fn curl(base: &str, p: &str, method: &str, params: &[Parameter]) -> String {
    let example = |name: &str| match name {
        "query" => "emcee multiprocessing Pool",
        "doc_id" => "general_tools/emcee/src/emcee/ensemble.py",
        "start" => "560",
        "end" => "570",
        "prefix" => "general_tools",
        _ => "…",
    };
    if method == "get" {
        let q: Vec<String> = params
            .iter()
            .filter(|prm| required(prm))
            .map(|prm| format!("{}={}", prm.name, query_value(example(&prm.name))))
            .collect();
        let sep = if q.is_empty() { "" } else { "?" };
        format!(
            "curl -H \"Authorization: Bearer $CAIRN_TOKEN\" \"{base}{p}{sep}{}\"",
            q.join("&")
        )
    } else {
        let body = match p {
            "/search" | "/context" => r#"{"query": "emcee multiprocessing Pool"}"#,
            "/retrieve" => {
                r#"{"doc_id": "general_tools/emcee/src/emcee/ensemble.py", "start": 560, "end": 570}"#
            }
            _ => "{}",
        };
        format!(
            "curl -X POST -H \"Authorization: Bearer $CAIRN_TOKEN\" -H 'content-type: application/json' \\\n  -d '{body}' {base}{p}"
        )
    }
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

/// The toolkits a version answer lists, sorted, each once.
fn toolkits(version: &VersionResponse) -> Vec<String> {
    let mut t: Vec<String> = version.repos.iter().map(|r| r.toolkit.clone()).collect();
    t.sort();
    t.dedup();
    t
}

/// A heading and its list (`list` is the opening tag's inside), when it has items.
fn section(out: &mut String, heading: &str, list: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let tag = list.split(' ').next().unwrap_or(list);
    let _ = write!(out, "<h2>{heading}</h2><{list}>{}</{tag}>", items.concat());
}

/// ` § title` for a hit with a section title.
fn title_span(h: &Hit) -> String {
    match h.title.as_str() {
        "" => String::new(),
        t => format!(" <span class=\"title\">§ {}</span>", esc(t)),
    }
}

/// A PDF hit's place as a reader finds it: `p. 3, lines 12–20`.
fn page_tag(page: Option<&cairn_search::PageCitation>) -> String {
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
fn github_links(github_url: &str, permalink: &str) -> String {
    format!(
        "<p class=\"links\"><a href=\"{}\" rel=\"noopener\">on the default branch</a> · <a href=\"{}\" rel=\"noopener\">permalink at the commit</a></p>",
        attr(github_url),
        attr(permalink)
    )
}

/// A cited span as a link to its passage page.
fn passage_link(doc: &str, start: u32, end: u32) -> String {
    let href = format!("/doc/{}?lines={start}-{end}", path(doc));
    format!(
        "<a href=\"{}\">{}<span class=\"span\">:{start}-{end}</span></a>",
        attr(&href),
        esc(doc)
    )
}

/// A cited span as a link to its passage page and both GitHub links.
fn cited_links(c: &Cited) -> (String, String) {
    (
        passage_link(&c.doc_id, c.start_line, c.end_line),
        github_links(&c.github_url, &c.permalink),
    )
}

/// An explain answer: the parsed error, raise sites, frames, explaining passages.
fn explained(a: &ExplainResponse) -> String {
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
                esc(&h.doctype),
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
