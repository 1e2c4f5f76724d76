//! HTML text: escaping and the page frame. Every value that came from a
//! request or the index goes through [`esc`] (or [`attr`]); nothing else
//! writes markup from data.

use std::fmt::Write;

/// `s` as HTML text: `& < > " '` escaped, so a doc_id, a snippet or a query is never markup.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` for a double-quoted attribute value (the same escaping).
pub fn attr(s: &str) -> String {
    esc(s)
}

/// `s` percent-encoded for one query-string value.
pub fn query_value(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A doc_id or prefix as a URL path: each segment percent-encoded, `/` kept.
pub fn path(s: &str) -> String {
    cairn_search::links::encode_path(s)
}

/// A snippet as HTML: escaped, with the search's `**word**` marks as `<mark>`.
pub fn marked(snippet: &str) -> String {
    let mut out = String::new();
    for (i, part) in esc(snippet).split("**").enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<mark>{part}</mark>");
        } else {
            out.push_str(part);
        }
    }
    out
}

/// A whole page: the frame around `main` (already HTML).
pub fn page(title: &str, main: &str, footer: &str) -> String {
    format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{title} · cairn</title>
<link rel="stylesheet" href="/ui/style.css">
<script src="/ui/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><nav aria-label="Site"><a class="brand" href="/">cairn</a><a href="/">Search</a><a href="/errors">Explain an error</a><a href="/browse/">Browse</a><a href="/api">API</a><a href="/login">Sign in</a></nav></header>
<main id="main">
{main}
</main>
<footer>{footer}</footer>
</body>
</html>
"##,
        title = esc(title),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_data_is_text() {
        assert_eq!(
            esc(r#"<script>alert("x")</script>&'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"
        );
        assert_eq!(marked("a **<b>** c"), "a <mark>&lt;b&gt;</mark> c");
        assert_eq!(path("cat/re po/<x>.py"), "cat/re%20po/%3Cx%3E.py");
        assert_eq!(query_value("a b&c"), "a+b%26c");
        assert!(page("<t>", "", "").contains("<title>&lt;t&gt; · cairn</title>"));
    }
}
