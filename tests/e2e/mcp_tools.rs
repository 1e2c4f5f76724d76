//! Fewer tools in the context window (issue 61): `cairn mcp` lists the
//! seven tools a model needs most unless asked for sets (`--toolsets`) or
//! tools (`--tools`), `/mcp?toolsets=…` chooses per request, a tool not
//! listed is not answered, and the list's size is measured (characters / 4,
//! as `tools/list` returns it): at most 6,000 tokens by default, 12,000
//! with every tool. Every description says when to use its tool.

use crate::fixtures::World;
use crate::serve_process::Server;
use rmcp::model::Tool;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ServiceExt, transport::StreamableHttpClientTransport};
use std::collections::BTreeSet;

/// `tools/list` from `cairn mcp` started with `extra`.
async fn listed(w: &World, extra: &[&str]) -> Vec<Tool> {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn")).configure(|c| {
        c.arg("mcp")
            .arg("--index")
            .arg(w.path("out"))
            .arg("--model-dir")
            .arg(&w.model)
            .args(extra)
            .env("CAIRN_LOG", "warn")
            .stderr(std::process::Stdio::null());
    });
    let client = ().serve(TokioChildProcess::new(cmd).expect("spawn")).await.expect("initialize");
    let tools = client.list_all_tools().await.expect("tools/list");
    client.cancel().await.expect("close");
    tools
}

/// The list's size in tokens, as a client's context holds it (characters / 4).
fn tokens(tools: &[Tool]) -> usize {
    serde_json::to_string(tools).expect("json").len() / 4
}

fn names(tools: &[Tool]) -> BTreeSet<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

#[test]
fn the_default_list_is_lean_and_sets_bring_the_rest() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    crate::mcp::runtime().block_on(async {
        let default = listed(&w, &[]).await;
        let want: BTreeSet<String> = cairn_serve::toolsets::DEFAULT_TOOLS
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(names(&default), want);
        // With a model configured, every tool, `ask` included.
        let model = ["--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m"];
        let all = listed(&w, &[&["--toolsets", "all"][..], &model[..]].concat()).await;
        let every: BTreeSet<String> = cairn_serve::ops::OPERATIONS
            .iter()
            .filter_map(|op| op.meta.tool.map(str::to_owned))
            .collect();
        assert_eq!(names(&all), every);
        println!(
            "tools/list: default {} tokens, all {} tokens",
            tokens(&default),
            tokens(&all)
        );
        assert!(tokens(&default) <= 6_000, "default: {}", tokens(&default));
        assert!(tokens(&all) <= 12_000, "all: {}", tokens(&all));
        for set in ["read", "code", "history", "explain", "admin"] {
            let one = listed(&w, &["--toolsets", set]).await;
            println!(
                "  --toolsets {set}: {:?}, {} tokens",
                names(&one),
                tokens(&one)
            );
            assert!(!one.is_empty(), "{set}");
        }
        let some = listed(&w, &["--toolsets", "code", "--tools", "history"]).await;
        assert_eq!(
            names(&some),
            ["definitions", "grep", "history", "references"]
                .map(str::to_owned)
                .into()
        );
        // Each description says when to use its tool.
        for t in &all {
            let d = t.description.as_deref().unwrap_or("");
            assert!(
                d.contains("Use it") || d.contains("Use when"),
                "{}: {d}",
                t.name
            );
        }
        // A lean output schema still describes every result: a search's
        // answer conforms to it.
        let search = default
            .iter()
            .find(|t| t.name == "search_passages")
            .expect("listed");
        let schema =
            serde_json::Value::Object((*search.output_schema.clone().expect("schema")).clone());
        let validator = jsonschema::validator_for(&schema).expect("schema");
        let o = crate::fixtures::cairn(&[
            "search",
            "fit_model",
            "--json",
            "--index",
            w.path("out").to_str().expect("utf8"),
            "--model-dir",
            w.model.to_str().expect("utf8"),
        ]);
        let answer: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert!(validator.is_valid(&answer), "{answer}");
        // A name that is neither a tool nor a set is refused at start.
        let o = crate::fixtures::cairn(&["mcp", "--toolsets", "reed"]);
        assert!(!o.status.success());
        assert!(crate::fixtures::stderr(&o).contains("\"reed\" is neither a tool nor a set"));
    });
}

#[test]
fn a_remote_client_chooses_per_request_and_unlisted_tools_are_not_answered() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let token = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("bot", &[], false)
        .expect("token");
    let server = Server::start(&w, "out", &[]);
    crate::mcp::runtime().block_on(async {
        let connect = |path: &str| {
            let config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                server.url(path),
            )
            .auth_header(token.clone());
            ().serve(StreamableHttpClientTransport::from_config(config))
        };
        let plain = connect("/mcp").await.expect("session");
        let tools = plain.list_all_tools().await.expect("tools");
        assert_eq!(names(&tools).len(), 7);
        let r = crate::mcp::call(&plain, "history", serde_json::json!({"doc_id": "tools/beta/README.md"})).await;
        assert_eq!(r.is_error, Some(true));
        let said = r.structured_content.expect("structured");
        assert_eq!(said["code"], "not_found", "{said}");
        assert!(said["message"].as_str().is_some_and(|m| m.contains("not offered")), "{said}");
        // A set that does not exist is refused by name, not read as none.
        let misspelt = connect("/mcp?toolsets=reed&tools=x%00y").await.expect("session");
        let refused = misspelt.list_all_tools().await.expect_err("an unknown set");
        assert!(refused.to_string().contains("reed"), "{refused}");
        let chosen = connect("/mcp?toolsets=history,code").await.expect("session");
        let tools = chosen.list_all_tools().await.expect("tools");
        assert_eq!(
            names(&tools),
            ["definitions", "grep", "history", "references"].map(str::to_owned).into()
        );
        let r = crate::mcp::call(&chosen, "history", serde_json::json!({"doc_id": "tools/beta/README.md"})).await;
        assert_eq!(r.is_error, Some(false), "{r:?}");
    });
}
