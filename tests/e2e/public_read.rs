//! `--public-read`: a public read-only index answers anonymous callers over
//! the API and MCP with public documents only, within anonymous budgets.

use crate::oauth::{get, mcp_post, world};
use crate::serve_process::{Server, agent};
use serde_json::json;

/// `--public-read`: a public read-only index answers the API and MCP
/// without credentials, as an anonymous caller (documents without groups,
/// never admin, within the anonymous budgets), while credentials that are
/// sent are still judged and still widen what a caller sees.
#[test]
fn public_read_answers_anonymous_callers_with_public_documents_only() {
    let w = world();
    let team = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("team", &["team-a".to_owned()], false)
        .expect("token");
    let server = Server::start(
        &w,
        "out",
        &["--public-read", "--anonymous-rate-limit", "40"],
    );
    let (status, _, body) = get(&server.url("/search?query=fit_model&limit=50"), None);
    assert_eq!(status, 200, "{body}");
    assert!(
        body["hits"]
            .as_array()
            .is_some_and(|h| !h.is_empty() && h.iter().all(|h| h["repo"] != "alpha")),
        "{body}"
    );
    // Anonymous over MCP is anonymous too: health gives what /health gives, no repository names.
    let health = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "health", "arguments": {}}});
    let v = [("MCP-Protocol-Version", "2025-06-18")];
    let (_, _, answer) = mcp_post(&server.url("/mcp?toolsets=admin"), None, &v, &health);
    let (_, _, http_health) = get(&server.url("/health"), None);
    assert_eq!(http_health["docs_by_repo"], json!({}), "{http_health}");
    assert_eq!(
        answer["result"]["structuredContent"], http_health,
        "{answer}"
    );
    let (status, _, body) = get(
        &server.url("/search?query=fit_model&limit=50"),
        Some(&format!("Bearer {team}")),
    );
    assert_eq!(status, 200);
    assert!(
        body["hits"]
            .as_array()
            .is_some_and(|h| h.iter().any(|h| h["repo"] == "alpha")),
        "{body}"
    );
    assert_eq!(
        get(&server.url("/version"), Some("Bearer cairn_wrong")).0,
        401,
        "a wrong token is still refused"
    );
    assert_eq!(
        get(&server.url("/metrics"), None).0,
        401,
        "metrics still want a token"
    );
    let weight = agent()
        .post(&server.url("/weight"))
        .header("content-type", "application/json")
        .send(r#"{"doc_id": "tools/beta/README.md", "multiplier": 2.0}"#)
        .expect("response");
    assert_eq!(weight.status().as_u16(), 403, "anonymous is never admin");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    assert_eq!(
        mcp_post(&server.url("/mcp"), None, &[], &call).0,
        200,
        "MCP without a token"
    );
    let search = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "fit_model"}}});
    let (_, _, answer) = mcp_post(
        &server.url("/mcp"),
        None,
        &[("MCP-Protocol-Version", "2025-06-18")],
        &search,
    );
    let results = &answer["result"]["structuredContent"]["results"];
    assert!(
        results.as_array().is_some_and(|r| r
            .iter()
            .all(|r| !r["id"].as_str().unwrap_or("").contains("/science/alpha/"))),
        "{answer}"
    );
    // One address gets a quarter of the shared anonymous budget (40 a minute).
    let statuses: Vec<u16> = (0..12)
        .map(|_| get(&server.url("/version"), None).0)
        .collect();
    assert!(statuses.contains(&429), "{statuses:?}");
    assert_eq!(
        get(&server.url("/version"), Some(&format!("Bearer {team}"))).0,
        200,
        "a token holder is not held up"
    );
}
