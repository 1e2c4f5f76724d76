//! The search page: the form, what the index holds, and the answer (passages
//! or, for exact text, the matching lines).

use super::super::html::{attr, esc, marked, path, query_value};
use super::{chosen, github_links, page_tag, select, title_span, toolkits};
use crate::ops::grep::GrepArgs;
use crate::ops::search::SearchArgs;
use cairn_search::VersionResponse;
use cairn_search::{Filters, GrepResponse, SearchResponse};
use std::fmt::Write;

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

/// The search form and, when a query was given, its hits (`answer` is the
/// search operation's answer) or why it was refused (`error`, HTML).
/// `version` is the version operation's answer, whose repositories are the
/// filter choices this caller may see.
pub fn search(
    form: &SearchForm,
    version: &VersionResponse,
    answer: Option<&Found>,
    error: Option<&str>,
    can_ask: bool,
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
    if can_ask && !form.q.is_empty() {
        let q: String = url::form_urlencoded::byte_serialize(form.q.as_bytes()).collect();
        main.push_str(&format!(
            "<p class=\"hint\"><a href=\"{}\">Ask cairn's model for a written answer</a></p>",
            attr(&format!("/answer?q={q}"))
        ));
    }
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
pub(super) fn indexed(version: &VersionResponse) -> String {
    if version.repos.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>What is indexed</h2><dl class=\"indexed\">");
    for r in &version.repos {
        let commit = r.commit.as_deref().unwrap_or("");
        let _ = write!(
            out,
            "<dt><a href=\"/?q=&amp;{key}={tk}\">{name}</a> <span class=\"tag\">{tk}</span></dt><dd>{desc}<span class=\"meta\">{branch} @ <code>{commit}</code>{stale}{fresh}</span></dd>",
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
            fresh = freshness(r),
        );
    }
    out.push_str("</dl>");
    out
}

/// How far the indexed commit is behind its remote, where `cairn watch`
/// measured it: "up to date" or "N commits behind", and when it looked.
fn freshness(r: &cairn_search::RepoVersion) -> String {
    let Some(checked) = &r.checked_at else {
        return String::new();
    };
    let behind = match r.commits_behind {
        Some(0) => "up to date".to_owned(),
        Some(1) => "1 commit behind".to_owned(),
        Some(n) => format!("{n} commits behind"),
        None => "behind unknown".to_owned(),
    };
    // RFC 3339 to the minute, as a reader wants it.
    let when: String = checked
        .chars()
        .take(16)
        .collect::<String>()
        .replace('T', " ");
    format!(" · {behind} (checked {} UTC)", esc(&when))
}

/// The results section of an answer.
pub fn results(form: &SearchForm, found: &Found) -> String {
    match found {
        Found::Passages(a) => passages(form, a),
        Found::Lines(a) => lines(form, a),
    }
}

/// The lines holding the exact text, by document, each linked to its place.
pub(super) fn lines(form: &SearchForm, a: &GrepResponse) -> String {
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
            esc(f.doctype.as_str()),
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
pub(super) fn passages(form: &SearchForm, a: &SearchResponse) -> String {
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
            doctype = esc(h.doctype.as_str()),
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

#[cfg(test)]
mod tests {
    use super::indexed;
    use cairn_search::{RepoVersion, VersionResponse};

    #[test]
    fn the_about_list_says_how_far_behind_each_repository_is() {
        let repo = |name: &str, behind: Option<u64>, checked: bool| RepoVersion {
            name: name.to_owned(),
            commit: Some("0123456789abcdef".to_owned()),
            toolkit: name.to_owned(),
            checked_at: checked.then(|| "2026-11-28T05:38:29.077850Z".to_owned()),
            commits_behind: behind,
            ..RepoVersion::default()
        };
        let html = indexed(&VersionResponse {
            index_version: "v".to_owned(),
            built_at: String::new(),
            builder_version: String::new(),
            model: String::new(),
            model_weights_sha256: String::new(),
            repos: vec![
                repo("fresh", Some(0), true),
                repo("late", Some(3), true),
                repo("unwatched", None, false),
            ],
        });
        assert!(
            html.contains("up to date (checked 2026-11-28 05:38 UTC)"),
            "{html}"
        );
        assert!(html.contains("3 commits behind (checked"), "{html}");
        let unwatched = &html[html.find("unwatched").expect("listed")..];
        assert!(!unwatched.contains("checked"), "{html}");
    }
}
