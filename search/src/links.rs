//! GitHub links to a line span (or a PDF's page): on the default branch,
//! and on the commit; an article's links to a page of its landing page and
//! of the PDF fetched.

use cairn_index::LineSpan;

/// Files GitHub renders, where `#L` anchors only work with `?plain=1`.
fn rendered(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [
        ".md",
        ".markdown",
        ".rst",
        ".ipynb",
        ".adoc",
        ".org",
        ".textile",
        ".rdoc",
        ".mediawiki",
        ".wiki",
    ]
    .iter()
    .any(|e| lower.ends_with(e))
}

/// Percent-encodes a path for a URL, keeping `/`: the one encoder of a path
/// in cairn (GitHub links, the web page's routes, MCP's passage URIs). Only
/// RFC 3986's unreserved characters, `/` and `@` stay as they are, so `?`,
/// `#`, `%`, quotes and brackets can never end or change the path.
pub fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `<web_url>/blob/<rev>/<path>[?plain=1]#L<start>-L<end>`.
pub fn blob_link(web_url: &str, rev: &str, path: &str, span: LineSpan) -> String {
    let plain = if rendered(path) { "?plain=1" } else { "" };
    format!(
        "{}{plain}#L{}-L{}",
        blob_url(web_url, rev, path),
        span.start,
        span.end
    )
}

/// `<web_url>/blob/<rev>/<path>#page=<page>`: a PDF in a repository, opened at a page.
pub fn blob_page_link(web_url: &str, rev: &str, path: &str, page: u32) -> String {
    page_link(&blob_url(web_url, rev, path), page)
}

/// `<url>#page=<page>` (an empty `url` stays empty: nothing to link to).
pub fn page_link(url: &str, page: u32) -> String {
    if url.is_empty() {
        return String::new();
    }
    let base = url.split_once('#').map_or(url, |(b, _)| b);
    format!("{base}#page={page}")
}

fn blob_url(web_url: &str, rev: &str, path: &str) -> String {
    format!(
        "{}/blob/{}/{}",
        web_url.trim_end_matches('/'),
        encode_path(rev),
        encode_path(path)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_for_code_and_rendered_files() {
        let s = LineSpan { start: 3, end: 9 };
        assert_eq!(
            blob_link(
                "https://github.com/dfm/emcee",
                "main",
                "src/emcee/ensemble.py",
                s
            ),
            "https://github.com/dfm/emcee/blob/main/src/emcee/ensemble.py#L3-L9"
        );
        assert_eq!(
            blob_link(
                "https://github.com/rpoleski/MulensModel/",
                "master",
                "docs/source/tutorial.rst",
                s
            ),
            "https://github.com/rpoleski/MulensModel/blob/master/docs/source/tutorial.rst?plain=1#L3-L9"
        );
        assert_eq!(
            blob_link("https://github.com/x/y", "abc", "my dir/a#b.py", s),
            "https://github.com/x/y/blob/abc/my%20dir/a%23b.py#L3-L9"
        );
    }

    #[test]
    fn paths_keep_only_unreserved_characters_and_slashes() {
        assert_eq!(encode_path("a/b-c_d.e~f@g"), "a/b-c_d.e~f@g");
        assert_eq!(
            encode_path("x/?lines=1-1#L2%+ (é)"),
            "x/%3Flines%3D1-1%23L2%25%2B%20%28%C3%A9%29"
        );
    }

    #[test]
    fn page_links() {
        assert_eq!(
            blob_page_link(
                "https://github.com/rpoleski/MulensModel",
                "master",
                "documents/parameter_names.pdf",
                2
            ),
            "https://github.com/rpoleski/MulensModel/blob/master/documents/parameter_names.pdf#page=2"
        );
        assert_eq!(
            page_link("https://arxiv.org/abs/1202.3665", 4),
            "https://arxiv.org/abs/1202.3665#page=4"
        );
        assert_eq!(
            page_link("https://x.org/a.pdf#page=9", 1),
            "https://x.org/a.pdf#page=1"
        );
        assert_eq!(page_link("", 1), "");
    }
}
