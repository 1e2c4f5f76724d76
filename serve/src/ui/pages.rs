//! The pages, each rendered from operation answers (JSON values shaped by the
//! library's response types): search, a passage, the tree, the API reference.

use super::highlight;
use super::html::{attr, esc, marked, path, query_value};
use serde_json::Value;
use std::fmt::Write;

/// The doctypes a search may be limited to (the library's names).
pub const DOCTYPES: [&str; 7] = [
    "code", "doc", "readme", "notebook", "example", "test", "config",
];

/// A string field of `v` ("" when missing).
fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A number field of `v` (0 when missing).
fn n(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// What a search page was asked: the query and its filters, from the URL.
#[derive(Debug, Default)]
pub struct SearchForm {
    /// The question.
    pub q: String,
    /// Chosen toolkit ("" for all).
    pub toolkit: String,
    /// Chosen doctype ("" for all).
    pub doctype: String,
    /// Chosen repository ("" for all).
    pub repo: String,
    /// Show each hit's score parts.
    pub scores: bool,
}

impl SearchForm {
    /// The arguments of the search operation.
    pub fn args(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("query".into(), Value::String(self.q.clone()));
        m.insert("limit".into(), Value::from(20));
        for (k, v) in [
            ("toolkit", &self.toolkit),
            ("doctype", &self.doctype),
            ("repo", &self.repo),
        ] {
            if !v.is_empty() {
                m.insert(k.into(), Value::Array(vec![Value::String(v.clone())]));
            }
        }
        Value::Object(m)
    }

    /// This form's URL with `scores` set to `on`.
    fn url(&self, scores: bool) -> String {
        let mut u = format!("/?q={}", query_value(&self.q));
        for (k, v) in [
            ("toolkit", &self.toolkit),
            ("doctype", &self.doctype),
            ("repo", &self.repo),
        ] {
            if !v.is_empty() {
                let _ = write!(u, "&{k}={}", query_value(v));
            }
        }
        if scores {
            u.push_str("&scores=1");
        }
        u
    }
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
    version: &Value,
    answer: Option<&Value>,
    error: Option<&str>,
) -> String {
    let repos = repo_field(version, "name");
    let mut toolkits = repo_field(version, "toolkit");
    toolkits.sort();
    toolkits.dedup();
    let doctypes: Vec<String> = DOCTYPES.iter().map(|d| (*d).to_owned()).collect();
    let mut main = format!(
        r#"<h1 class="visually-hidden">Search</h1>
<form class="search" action="/" method="get" role="search">
<label class="q"><span>Search the indexed code and docs</span>
<input id="q" name="q" type="search" value="{q}" placeholder="e.g. emcee multiprocessing Pool" autocomplete="off" autofocus></label>
<div class="filters">{tk}{dt}{rp}<button type="submit">Search</button></div>
</form>
"#,
        q = attr(&form.q),
        tk = select("toolkit", "Toolkit", &form.toolkit, &toolkits),
        dt = select("doctype", "Type", &form.doctype, &doctypes),
        rp = select("repo", "Repository", &form.repo, &repos),
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
fn indexed(version: &Value) -> String {
    let repos = version
        .get("repos")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if repos.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>What is indexed</h2><dl class=\"indexed\">");
    for r in &repos {
        let commit = s(r, "commit");
        let _ = write!(
            out,
            "<dt><a href=\"/?q=&amp;toolkit={tk}\">{name}</a> <span class=\"tag\">{tk}</span></dt><dd>{desc}<span class=\"meta\">{branch} @ <code>{commit}</code>{stale}</span></dd>",
            tk = attr(s(r, "toolkit")),
            name = esc(s(r, "name")),
            desc = match s(r, "description") {
                "" => String::new(),
                d => format!("{} ", esc(d)),
            },
            branch = esc(s(r, "default_branch")),
            commit = esc(&commit.chars().take(12).collect::<String>()),
            stale = match r.get("stale").and_then(Value::as_bool) {
                Some(true) =>
                    " · <strong>stale</strong>: the last fetch failed, this is the commit fetched before",
                _ => "",
            },
        );
    }
    out.push_str("</dl>");
    out
}

/// The hits of a search answer, as the results section.
pub fn results(form: &SearchForm, a: &Value) -> String {
    let hits = a
        .get("hits")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = String::new();
    if a.get("insufficient_evidence").and_then(Value::as_bool) == Some(true) || hits.is_empty() {
        let _ = write!(
            out,
            "<p class=\"insufficient\" role=\"status\">Nothing here answers this well: the index holds no passage close enough to “{}”. Try other words, or fewer filters.</p>",
            esc(&form.q)
        );
    }
    if let Some(notice) = a.get("notice").and_then(Value::as_str) {
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
    for h in &hits {
        let (doc, start, end) = (s(h, "doc_id"), n(h, "start_line"), n(h, "end_line"));
        // The passage page highlights the focus (the few lines that answer
        // best) within the cited span, and opens at it.
        let focus = match (h.get("focus_start"), h.get("focus_end")) {
            (Some(fs), Some(fe)) => fs.as_u64().zip(fe.as_u64()),
            _ => None,
        };
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
<p class="meta"><span class="tag">{toolkit}</span> <span class="tag">{doctype}</span>{title}</p>
<pre class="snippet">{snippet}</pre>
"#,
            href = attr(&href),
            doc = esc(doc),
            toolkit = esc(s(h, "toolkit")),
            doctype = esc(s(h, "doctype")),
            title = title_span(h),
            snippet = marked(s(h, "snippet")),
        );
        if form.scores
            && let Some(b) = h.get("breakdown")
        {
            let f = |k: &str| b.get(k).and_then(Value::as_f64).unwrap_or(0.0);
            let _ = write!(
                out,
                "<p class=\"scores\">score {:.4} = rrf {:.4} × weight {:.2} · bm25 {:.2} · cosine {:.3}</p>",
                h.get("score").and_then(Value::as_f64).unwrap_or(0.0),
                f("rrf"),
                f("weight"),
                f("bm25"),
                f("vector")
            );
        }
        let _ = writeln!(
            out,
            "<p class=\"links\"><a href=\"{}\" rel=\"noopener\">on the default branch</a> · <a href=\"{}\" rel=\"noopener\">permalink at the commit</a></p></li>",
            attr(s(h, "github_url")),
            attr(s(h, "permalink"))
        );
    }
    out.push_str("</ol>");
    out
}

/// A passage page: `cited` is the retrieve answer for the cited lines,
/// `window` the one for the lines around them (it holds `cited`'s lines).
pub fn passage(
    cited: &Value,
    window: &Value,
    before: u32,
    after: u32,
    focus: Option<(u32, u32)>,
) -> String {
    let doc = s(cited, "doc_id");
    let (a, b) = (n(cited, "start_line") as u32, n(cited, "end_line") as u32);
    let (w_start, w_end, total) = (
        n(window, "start_line") as u32,
        n(window, "end_line") as u32,
        n(window, "total_lines") as u32,
    );
    let text = s(window, "text");
    let mut lines: Vec<&str> = text.split('\n').collect();
    let raw_lines: Vec<u32> = window
        .get("raw_lines")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(Value::as_u64)
                .map(|x| x as u32)
                .collect()
        })
        .unwrap_or_default();
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
    let coloured = highlight::lines(doc, &lines);
    let permalink = s(cited, "permalink");
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
        sha = esc(s(cited, "content_sha256")),
        version = esc(s(cited, "index_version")),
        md = attr(&markdown),
        plain = attr(&plain),
        md_text = esc(&markdown),
        github = attr(s(cited, "github_url")),
        permalink_a = attr(permalink),
    );
    if s(window, "text_format") == "notebook-cells" {
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
pub fn browse(prefix: &str, tree: &Value) -> String {
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
    let entries = tree
        .get("entries")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if entries.is_empty() {
        out.push_str("<p>Nothing here.</p>");
        return out;
    }
    out.push_str("<ul class=\"tree\">");
    for e in &entries {
        let p = s(e, "path");
        let name = p.rsplit('/').next().unwrap_or(p);
        if s(e, "kind") == "file" {
            let lines = n(e, "lines");
            let _ = write!(
                out,
                "<li class=\"file\"><a href=\"/doc/{}?lines=1-{}\">{}</a> <span class=\"tag\">{}</span> <span class=\"muted\">{lines} lines</span></li>",
                attr(&path(p)),
                lines.clamp(1, 40),
                esc(name),
                esc(s(e, "doctype")),
            );
        } else {
            let _ = write!(
                out,
                "<li class=\"dir\"><a href=\"/browse/{}\">{}/</a> <span class=\"muted\">{} files · {}</span></li>",
                attr(&path(p)),
                esc(name),
                n(e, "files"),
                esc(s(e, "kind")),
            );
        }
    }
    out.push_str("</ul>");
    if tree.get("truncated").and_then(Value::as_bool) == Some(true) {
        out.push_str("<p class=\"notice\">Only the first entries are listed.</p>");
    }
    out
}

/// The API reference, from the OpenAPI document: each operation, its
/// parameters and a curl line.
pub fn api(doc: &Value, base: &str) -> String {
    let mut out = String::from(
        "<h1>HTTP API</h1><p>Every operation answers JSON; errors are RFC 9457 <code>application/problem+json</code> naming the field at fault. Send <code>Authorization: Bearer $CAIRN_TOKEN</code> (make one with <code>cairn token add NAME</code>). The machine-readable document is <a href=\"/openapi.json\">/openapi.json</a> (import it as a GPT Action).</p>",
    );
    // Every (method, path, operation) of the document, in its order.
    let ops: Vec<(&str, &str, &Value)> = doc
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .flat_map(|(p, item)| {
            item.as_object()
                .into_iter()
                .flatten()
                .map(move |(m, op)| (m.as_str(), p.as_str(), op))
        })
        .collect();
    out.push_str("<nav aria-label=\"Operations\"><ul class=\"toc\">");
    for (method, p, op) in &ops {
        let _ = write!(
            out,
            "<li><a href=\"#{}\"><code>{} {}</code></a> {}</li>",
            attr(s(op, "operationId")),
            esc(&method.to_uppercase()),
            esc(p),
            esc(s(op, "summary"))
        );
    }
    out.push_str("</ul></nav>");
    for (method, p, op) in &ops {
        let _ = write!(
            out,
            "<section class=\"op\" id=\"{}\"><h2><code>{} {}</code></h2><p>{}</p>",
            attr(s(op, "operationId")),
            esc(&method.to_uppercase()),
            esc(p),
            esc(s(op, "description"))
        );
        let params = op
            .get("parameters")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if !params.is_empty() {
            out.push_str("<table class=\"params\"><thead><tr><th scope=\"col\">Parameter</th><th scope=\"col\">In</th><th scope=\"col\">Required</th><th scope=\"col\">Meaning</th></tr></thead><tbody>");
            for prm in &params {
                let _ = write!(
                    out,
                    "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(s(prm, "name")),
                    esc(s(prm, "in")),
                    if prm.get("required").and_then(Value::as_bool) == Some(true) {
                        "yes"
                    } else {
                        "no"
                    },
                    esc(s(prm, "description"))
                );
            }
            out.push_str("</tbody></table>");
        }
        let _ = write!(
            out,
            "<pre class=\"curl\" tabindex=\"0\"><code>{}</code></pre></section>",
            esc(&curl(base, p, method, &params, op))
        );
    }
    out
}

/// A curl line for one operation, with the required parameters filled by example values.
fn curl(base: &str, p: &str, method: &str, params: &[Value], op: &Value) -> String {
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
            .filter(|prm| prm.get("required").and_then(Value::as_bool) == Some(true))
            .map(|prm| {
                format!(
                    "{}={}",
                    s(prm, "name"),
                    query_value(example(s(prm, "name")))
                )
            })
            .collect();
        let sep = if q.is_empty() { "" } else { "?" };
        format!(
            "curl -H \"Authorization: Bearer $CAIRN_TOKEN\" \"{base}{p}{sep}{}\"",
            q.join("&")
        )
    } else {
        let body = match op.pointer("/requestBody/content/application~1json/example") {
            Some(e) => e.to_string(),
            None => match p {
                "/search" | "/context" => r#"{"query": "emcee multiprocessing Pool"}"#.to_owned(),
                "/retrieve" => r#"{"doc_id": "general_tools/emcee/src/emcee/ensemble.py", "start": 560, "end": 570}"#.to_owned(),
                _ => "{}".to_owned(),
            },
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
    pub fn args(&self) -> Value {
        let mut a = serde_json::json!({ "text": self.text });
        if !self.toolkit.is_empty() {
            a["toolkit"] = Value::from(self.toolkit.clone());
        }
        if !self.version.is_empty() {
            a["version"] = Value::from(self.version.clone());
        }
        a
    }
}

/// The explain page: the form, then the answer or the error.
pub fn explain(
    form: &ExplainForm,
    version: &Value,
    answer: Option<&Value>,
    error: Option<&str>,
) -> String {
    let mut toolkits = repo_field(version, "toolkit");
    toolkits.sort();
    toolkits.dedup();
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

/// One field of each repository a version answer lists.
fn repo_field(version: &Value, field: &str) -> Vec<String> {
    version
        .get("repos")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|r| s(r, field).to_owned()).collect())
        .unwrap_or_default()
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
fn title_span(h: &Value) -> String {
    match s(h, "title") {
        "" => String::new(),
        t => format!(" <span class=\"title\">§ {}</span>", esc(t)),
    }
}

/// A cited span as a link to its passage page and both GitHub links.
fn cited_links(v: &Value) -> (String, String) {
    let (doc, start, end) = (s(v, "doc_id"), n(v, "start_line"), n(v, "end_line"));
    let href = format!("/doc/{}?lines={start}-{end}", path(doc));
    (
        format!(
            "<a href=\"{}\">{}<span class=\"span\">:{start}-{end}</span></a>",
            attr(&href),
            esc(doc)
        ),
        format!(
            "<p class=\"links\"><a href=\"{}\" rel=\"noopener\">on the default branch</a> · <a href=\"{}\" rel=\"noopener\">permalink at the commit</a></p>",
            attr(s(v, "github_url")),
            attr(s(v, "permalink"))
        ),
    )
}

/// An explain answer: the parsed error, raise sites, frames, explaining passages.
fn explained(a: &Value) -> String {
    let mut out = String::new();
    let p = a.get("parsed").cloned().unwrap_or(Value::Null);
    let _ = write!(
        out,
        "<p class=\"parsed\"><code>{}</code>{} <span class=\"tag\">{}</span></p>",
        esc(s(&p, "exception")),
        match s(&p, "message").lines().next() {
            Some(m) if !m.is_empty() => format!(": {}", esc(m)),
            _ => String::new(),
        },
        esc(s(&p, "shape"))
    );
    if a.get("insufficient_evidence").and_then(Value::as_bool) == Some(true) {
        out.push_str("<p class=\"insufficient\" role=\"status\">Nothing indexed raises or explains this error.</p>");
    }
    for n in a
        .get("notices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let _ = write!(
            out,
            "<p class=\"notice\">{}</p>",
            esc(n.as_str().unwrap_or(""))
        );
    }
    let list = |k: &str| {
        a.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let sites: Vec<String> = list("raise_sites")
        .iter()
        .map(|site| {
            let (link, links) = cited_links(site);
            format!(
                "<li class=\"hit\"><h3>{link}</h3><p class=\"meta\"><span class=\"tag\">{}</span> in <code>{}</code> · explains {:.0}% of the message{}</p><pre class=\"snippet\">{}</pre>{links}</li>",
                esc(s(site, "exception")),
                esc(match s(site, "function") {
                    "" => "<module>",
                    f => f,
                }),
                site.get("explained").and_then(Value::as_f64).unwrap_or(0.0) * 100.0,
                if site.get("at_frame").and_then(Value::as_bool) == Some(true) {
                    " · the traceback's own frame"
                } else {
                    ""
                },
                esc(s(site, "source")),
            )
        })
        .collect();
    section(&mut out, "Raised at", "ol class=\"hits\"", &sites);
    let frames: Vec<String> = list("frames")
        .iter()
        .filter_map(|f| {
            let fr = f.get("frame")?;
            let (link, _) = cited_links(f.get("at")?);
            Some(format!(
                "<li><code>{}:{}</code> in <code>{}</code> → {link} <span class=\"tag\">{}</span></li>",
                esc(s(fr, "file")),
                n(fr, "line"),
                esc(s(fr, "function")),
                esc(s(f, "located")),
            ))
        })
        .collect();
    section(
        &mut out,
        "Frames in indexed code",
        "ul class=\"frames\"",
        &frames,
    );
    let hits: Vec<String> = list("explains")
        .iter()
        .map(|h| {
            let (link, links) = cited_links(h);
            format!(
                "<li class=\"hit\"><h3>{link}</h3><p class=\"meta\"><span class=\"tag\">{}</span> <span class=\"tag\">{}</span>{}</p><pre class=\"snippet\">{}</pre>{links}</li>",
                esc(s(h, "toolkit")),
                esc(s(h, "doctype")),
                title_span(h),
                marked(s(h, "snippet")),
            )
        })
        .collect();
    section(&mut out, "What explains it", "ol class=\"hits\"", &hits);
    let history = a.get("history").cloned().unwrap_or(Value::Null);
    let _ = write!(
        out,
        "<p class=\"hint\">History: {}</p>",
        esc(s(&history, "note"))
    );
    out
}
