//! Cited lines inline in chat clients (MCP Apps, SEP-1865): the `ui://`
//! resource that `search_passages`, `retrieve` and `fetch` name in their
//! `_meta.ui.resourceUri`. A host that supports the extension reads it
//! once, shows it in a sandboxed frame and sends it each call's result; the
//! view (ui/assets/mcp-app.html) shows the cited lines with the focus
//! marked, in the web page's markup and stylesheet, loading nothing from
//! any host. A search answer's snippets are not its focus lines, so a
//! `search_passages` result also carries, in its `_meta` (which models do
//! not read), each hit's focus lines ([`focus_requests`], [`focus_meta`]);
//! the Slack app shows the same lines. Clients without the extension ignore
//! `_meta` and get exactly the answers they always did. Used by
//! [`crate::mcp`] and [`crate::slack`]; depends on `ops` (the CPU pool).

use crate::ops::{Call, PassageRef};
use crate::problem::ApiError;
use cairn_index::IndexVersion;
use cairn_search::{RetrieveResponse, SearchError, SpanRequest};
use serde_json::{Map, Value, json};

/// A JSON object's map, as `_meta` and capabilities take it.
pub type Object = Map<String, Value>;

fn object(v: Value) -> Object {
    match v {
        Value::Object(m) => m,
        _ => Object::new(),
    }
}

/// The view's URI.
pub const VIEW_URI: &str = "ui://cairn/passage.html";
/// The MIME type hosts render as an app.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The extension's id in capabilities.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";
/// The tools whose results the view shows.
pub const TOOLS: [&str; 3] = ["search_passages", "retrieve", "fetch"];

/// The view's HTML: the template with the web page's stylesheet inlined
/// (a sandboxed frame has no origin to load it from).
pub fn view_html() -> String {
    const TEMPLATE: &str = include_str!("ui/assets/mcp-app.html");
    const STYLE: &str = include_str!("ui/assets/style.css");
    TEMPLATE.replacen("/*STYLE*/", STYLE, 1)
}

/// The resource's `_meta`: a content security policy that allows no host
/// at all, and a border.
pub fn resource_meta() -> Object {
    object(
        json!({"ui": {"csp": {"connectDomains": [], "resourceDomains": []}, "prefersBorder": true}}),
    )
}

/// The extension's settings in the server's capabilities.
pub fn capability() -> Object {
    object(json!({"mimeTypes": [MIME_TYPE]}))
}

/// A tool's `_meta` naming the view (and the key hosts of the first drafts read).
pub fn tool_meta() -> Object {
    object(json!({"ui": {"resourceUri": VIEW_URI}, "ui/resourceUri": VIEW_URI}))
}

/// The `_meta` key of a search result's focus lines.
pub const FOCUS_KEY: &str = "cairn/focus";

/// For each passage an answer cites, the request for its focus lines (its
/// whole span when it has none) at the version that cited it.
pub fn focus_requests(cites: &[PassageRef]) -> Vec<SpanRequest> {
    cites
        .iter()
        .map(|c| {
            let (start, end) = c.focus.unwrap_or((c.start, c.end));
            SpanRequest {
                doc_id: c.doc_id.clone(),
                start: Some(i64::from(start)),
                end: Some(i64::from(end)),
                raw: false,
                index_version: IndexVersion::parse(&c.version).ok(),
            }
        })
        .collect()
}

/// The focus lines read for [`focus_requests`], hit by hit, as the result's
/// `_meta`: `{"cairn/focus": [{"start", "end", "text"} or null, …]}`.
pub fn focus_meta(read: &[Result<RetrieveResponse, SearchError>]) -> Object {
    let lines: Vec<Value> = read
        .iter()
        .map(|r| match r {
            Ok(r) => json!({"start": r.start_line, "end": r.end_line, "text": r.text}),
            Err(_) => Value::Null,
        })
        .collect();
    object(json!({ FOCUS_KEY: lines }))
}

/// The focus lines of each passage an answer cites, read as `call`'s caller
/// on the CPU pool: what that caller may read, and nothing else.
pub async fn read_focus(
    cites: &[PassageRef],
    call: Call,
) -> Result<Vec<Result<RetrieveResponse, SearchError>>, ApiError> {
    let spans = focus_requests(cites);
    if spans.is_empty() {
        return Ok(Vec::new());
    }
    crate::ops::on_pool(call, move |c| {
        c.engine.retrieve_batch(&spans, c.caller.groups())
    })
    .await?
    .map_err(ApiError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_inlines_the_stylesheet_and_loads_nothing() {
        let html = view_html();
        assert!(!html.contains("/*STYLE*/"));
        assert!(html.contains("--cited-edge"));
        for remote in [
            "src=\"http",
            "href=\"http",
            "@import",
            "url(http",
            "fetch(",
            "XMLHttpRequest",
        ] {
            assert!(!html.contains(remote), "{remote}");
        }
        assert!(html.contains("default-src 'none'"));
    }
}
