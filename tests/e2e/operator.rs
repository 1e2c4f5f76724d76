//! What an operator sees (issue 61): each MCP tool's calls by outcome and
//! their durations, the served version's age and the repositories behind
//! their remotes, all in `/metrics` and lint-clean by Prometheus's own
//! `promtool check metrics`; and a caller's W3C `traceparent` carried into
//! the answer's trace id (header and problem body).

use crate::fixtures::World;
use crate::serve_process::{Server, agent};
use rmcp::{ServiceExt, transport::StreamableHttpClientTransport};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

#[test]
fn metrics_name_each_tool_and_the_index_freshness_and_pass_promtool() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let store = cairn_serve::auth::TokenStore::new(w.path("tokens.json"));
    let bot = store.add("bot", &[], false).expect("token");
    let admin = store.add("ops", &[], true).expect("token");
    let server = Server::start(&w, "out", &[]);

    // MCP tool calls: one that answers, one the tool refuses, one not listed.
    crate::mcp::runtime().block_on(async {
        let config =
            rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                server.url("/mcp"),
            )
            .auth_header(bot.clone());
        let client =
            ().serve(StreamableHttpClientTransport::from_config(config))
                .await
                .expect("session");
        let ok = crate::mcp::call(&client, "search_passages", json!({"query": "fit_model"})).await;
        assert_eq!(ok.is_error, Some(false));
        let refused =
            crate::mcp::call(&client, "retrieve", json!({"doc_id": "no/such/file.py"})).await;
        assert_eq!(refused.is_error, Some(true));
        let unlisted = crate::mcp::call(
            &client,
            "history",
            json!({"doc_id": "tools/beta/README.md"}),
        )
        .await;
        assert_eq!(unlisted.is_error, Some(true));
        client.cancel().await.expect("close");
    });

    // A caller's trace context: its trace id names the answer, and its error.
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let mut res = agent()
        .post(&server.url("/retrieve"))
        .header("Authorization", &format!("Bearer {bot}"))
        .header("traceparent", &format!("00-{trace}-00f067aa0ba902b7-01"))
        .header("content-type", "application/json")
        .send(json!({"doc_id": "no/such/file.py"}).to_string())
        .expect("answered");
    assert_eq!(res.status().as_u16(), 404);
    assert_eq!(
        res.headers()
            .get("x-trace-id")
            .and_then(|v| v.to_str().ok()),
        Some(trace)
    );
    let problem: serde_json::Value =
        serde_json::from_str(&res.body_mut().read_to_string().unwrap_or_default()).expect("json");
    assert_eq!(problem["trace_id"], trace, "{problem}");

    let mut res = agent()
        .get(&server.url("/metrics"))
        .header("Authorization", &format!("Bearer {admin}"))
        .call()
        .expect("metrics");
    let text = res.body_mut().read_to_string().expect("text");
    for want in [
        "cairn_mcp_tool_calls_total{outcome=\"ok\",tool=\"search_passages\"} 1",
        "cairn_mcp_tool_calls_total{outcome=\"error\",tool=\"retrieve\"} 1",
        "cairn_mcp_tool_calls_total{outcome=\"error\",tool=\"history\"} 1",
        "cairn_mcp_tool_duration_seconds_count{tool=\"search_passages\"} 1",
        "cairn_repositories_behind 0",
        "cairn_index_age_seconds ",
    ] {
        assert!(text.contains(want), "{want} missing:\n{text}");
    }

    // Prometheus's own linter, on what a scrape reads.
    let promtool =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/promtool/usr/bin/promtool");
    if !crate::fixtures::tool_present(
        promtool.is_file(),
        "CAIRN_REQUIRE_PROMTOOL",
        "scripts/promtool.sh",
    ) {
        return;
    }
    let mut child = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("promtool ran");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.trim().is_empty(),
        "promtool: {said}"
    );
}
