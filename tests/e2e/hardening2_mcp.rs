//! The second adversarial review's MCP findings (issue 28), against a real
//! `cairn serve` process: an initialize flood, one token taking over
//! another's session, and a resource URI that reads only its document.

use crate::fixtures::World;
use crate::serve_process::{Server, agent};
use cairn_serve::auth::TokenStore;
use serde_json::json;

/// Resident memory of a running process now, in bytes.
fn rss(pid: u32) -> u64 {
    crate::hardening::proc_memory(pid, "VmRSS")
}

/// An MCP `initialize` request body.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}"#;

/// Finding 1: a flood of `initialize` requests leaves no sessions behind
/// and the server's memory where it was (MCP is served statelessly).
#[test]
fn an_initialize_flood_leaves_no_sessions_and_memory_flat() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let token = TokenStore::new(w.path("tokens.json"))
        .add("weak", &[], false)
        .expect("token");
    let server = Server::start(&w, "out", &[]);
    let post = || {
        agent()
            .post(&server.url("/mcp"))
            .header("Authorization", &format!("Bearer {token}"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .send(INITIALIZE)
            .expect("answer")
    };
    // Warm up the allocator and the workers before measuring.
    for _ in 0..50 {
        let _ = post().into_body().read_to_vec();
    }
    let before = rss(server.child.id());
    for i in 0..3000 {
        let res = post();
        assert_eq!(res.status().as_u16(), 200, "request {i}");
        assert!(
            res.headers().get("mcp-session-id").is_none(),
            "request {i} opened a session"
        );
        let _ = res.into_body().read_to_vec();
    }
    let after = rss(server.child.id());
    eprintln!("initialize flood: RSS {before} → {after} bytes after 3000 requests");
    assert!(
        after < before + (48 << 20),
        "RSS grew from {before} to {after} bytes"
    );
}

/// Finding 13: there is no session to take over: a session id from another
/// caller opens no stream, and every request runs as its own caller.
#[test]
fn no_mcp_session_can_be_taken_over_by_another_token() {
    let w = World::new();
    w.write_config("    groups: [team-a]\n");
    assert!(w.build("out", &[]).status.success());
    let store = TokenStore::new(w.path("tokens.json"));
    let victim = store
        .add("victim", &["team-a".to_owned()], false)
        .expect("token");
    let thief = store.add("thief", &[], false).expect("token");
    let server = Server::start(&w, "out", &[]);
    let res = agent()
        .post(&server.url("/mcp"))
        .header("Authorization", &format!("Bearer {victim}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .send(INITIALIZE)
        .expect("answer");
    assert_eq!(res.status().as_u16(), 200);
    let session = res
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("no-such-session")
        .to_owned();
    let stream = agent()
        .get(&server.url("/mcp"))
        .header("Authorization", &format!("Bearer {thief}"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("last-event-id", "0")
        .call()
        .expect("answer");
    assert_ne!(
        stream.status().as_u16(),
        200,
        "a stream for another's session"
    );
    // A call naming the victim's session runs as the thief, who sees no alpha.
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"retrieve","arguments":{"doc_id":"science/alpha/src/alpha/core.py"}}});
    let mut res = agent()
        .post(&server.url("/mcp"))
        .header("Authorization", &format!("Bearer {thief}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send(call.to_string())
        .expect("answer");
    let body = res.body_mut().read_to_string().unwrap_or_default();
    assert!(!body.contains("fit_model"), "{body}");
}

/// Finding 11: the URI listed for a document reads that document, whatever
/// characters its path holds.
#[test]
fn an_mcp_resource_uri_reads_exactly_its_document() {
    use rmcp::model::ReadResourceRequestParams;
    let w = World::new();
    crate::fixtures::commit(
        &w.alpha_repo(),
        &[
            ("notes", b"the plain notes\n".to_vec()),
            (
                "notes?lines=1-1",
                b"the other notes, with a question mark\n".to_vec(),
            ),
        ],
        "odd names",
    );
    assert!(w.build("out", &[]).status.success());
    crate::mcp::runtime().block_on(async {
        let client = crate::mcp::stdio_client(&w, "out").await;
        let resources = client.list_all_resources().await.expect("resources");
        for (name, want) in [
            ("science/alpha/notes?lines=1-1", "question mark"),
            ("science/alpha/notes", "plain notes"),
        ] {
            let r = resources
                .iter()
                .find(|r| r.name == name)
                .unwrap_or_else(|| panic!("{name} is not listed"));
            let read = client
                .read_resource(ReadResourceRequestParams::new(r.uri.clone()))
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", r.uri));
            let text = serde_json::to_string(&read.contents).expect("json");
            assert!(text.contains(want), "{} read {text}", r.uri);
        }
        client.cancel().await.expect("close");
    });
}
