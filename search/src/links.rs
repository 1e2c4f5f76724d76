//! GitHub links to a line span: on the default branch, and on the commit.

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

/// Percent-encodes a repository path for a URL, keeping `/`.
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/+@".contains(&b) {
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
        "{}/blob/{}/{}{plain}#L{}-L{}",
        web_url.trim_end_matches('/'),
        encode_path(rev),
        encode_path(path),
        span.start,
        span.end
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
}
