//! MCP with a real client (rmcp's): a spawned `cairn mcp` over stdio, and
//! `/mcp` on a running `cairn serve` over streamable HTTP with bearer tokens.

use crate::fixtures::World;
use crate::serve_process::Server;
use rmcp::model::{CallToolRequestParams, CallToolResult, ReadResourceRequestParams};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ServiceExt, transport::StreamableHttpClientTransport};
use serde_json::{Value, json};

/// A real MCP client over stdio to `cairn mcp` on the world's index in `out`,
/// every tool listed (`--toolsets all`; the lean default list is
/// `mcp_tools.rs`'s), chatty logging on stderr (any line of it on stdout
/// would break the protocol).
pub async fn stdio_client(w: &World, out: &str) -> RunningService<RoleClient, ()> {
    stdio_client_with(w, out, &[]).await
}

/// [`stdio_client`], the server started with `env` set too.
pub async fn stdio_client_with(
    w: &World,
    out: &str,
    env: &[(&str, &str)],
) -> RunningService<RoleClient, ()> {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn")).configure(|c| {
        c.arg("mcp")
            .arg("--index")
            .arg(w.path(out))
            .arg("--model-dir")
            .arg(&w.model)
            .args(["--toolsets", "all"])
            .env("CAIRN_LOG", "debug")
            .envs(env.iter().copied())
            .stderr(std::process::Stdio::null());
    });
    ().serve(TokioChildProcess::new(cmd).expect("spawn"))
        .await
        .expect("initialize")
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

pub async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &'static str,
    args: Value,
) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn stdio_session_runs_every_tool_and_resource() {
    let w = World::new();
    let (path, bytes) = crate::explain::UNITS_PY;
    crate::fixtures::commit(&w.alpha_repo(), &[(path, bytes.to_vec())], "units");
    assert!(w.build("out", &[]).status.success());
    runtime().block_on(async {
        let client = stdio_client(&w, "out").await;
        let info = client.peer_info().expect("server info");
        assert_eq!(info.server_info.as_ref().map(|i| i.name.as_str()), Some("cairn"));

        let tools = client.list_all_tools().await.expect("tools/list");
        let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        // Exactly the operations table's tools (the local user is an admin;
        // `ask` only with a model).
        let offered: std::collections::BTreeSet<String> = cairn_serve::ops::OPERATIONS
            .iter()
            .filter(|op| !op.meta.model)
            .filter_map(|op| op.meta.tool.map(str::to_owned))
            .collect();
        assert_eq!(names.iter().cloned().collect::<std::collections::BTreeSet<_>>(), offered);
        for want in ["search_passages", "search", "fetch", "retrieve", "history", "grep", "definitions"] {
            assert!(names.contains(&want.to_owned()), "{want} missing from {names:?}");
        }
        assert!(tools.iter().all(|t| t.title.as_deref().is_some_and(|s| !s.is_empty())), "every tool has a title");
        // The exact-navigation tools answer through the same session.
        let r = call(&client, "grep", json!({"pattern": "fit_model", "toolkit": "alpha"})).await;
        let s = r.structured_content.as_ref().expect("structured");
        assert!(s["matches"].as_u64().is_some_and(|n| n >= 1), "{s}");
        let r = call(&client, "definitions", json!({"name": "Model.magnification"})).await;
        let s = r.structured_content.as_ref().expect("structured");
        assert_eq!(s["matched"], "dotted", "{s}");
        // Every answer conforms to the output schema its tool declares.
        for (tool, args) in [
            ("search_passages", json!({"query": "fit the model", "limit": 3})),
            ("search", json!({"query": "fit the model"})),
            ("retrieve", json!({"doc_id": "science/alpha/src/alpha/core.py", "start": 1, "end": 9})),
            ("retrieve_batch", json!({"items": [{"doc_id": "science/alpha/README.md"}, {"doc_id": "nope/x/y"}]})),
            ("tree", json!({})),
            ("context", json!({"query": "fit the model", "max_tokens": 300})),
            ("explain", json!({"text": crate::explain::TRACEBACK})),
            ("grep", json!({"pattern": "t_E", "context": 1})),
            ("references", json!({"name": "Model"})),
            ("definitions", json!({"name": "fit_model"})),
            ("version", json!({})),
            ("health", json!({})),
        ] {
            let declared = tools
                .iter()
                .find(|t| t.name == tool)
                .and_then(|t| t.output_schema.clone())
                .unwrap_or_else(|| panic!("{tool} declares no output schema"));
            let schema = Value::Object((*declared).clone());
            let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{tool}: {e}"));
            let r = call(&client, tool, args).await;
            let answer = r.structured_content.clone().expect("structured");
            let errors: Vec<String> = validator.iter_errors(&answer).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{tool}: {errors:?}");
        }
        let search_tool = tools.iter().find(|t| t.name == "search_passages").expect("search_passages");
        // Each toolkit is named with what its repositories.yml says it is.
        let described = search_tool.description.as_deref().unwrap_or("");
        assert!(described.contains("Toolkits: alpha (Alpha fits light curves); beta"), "{described}");
        let props = &search_tool.input_schema["properties"];
        assert!(props["query"]["description"].is_string() && props["toolkit"].is_object());
        assert!(names.contains(&"set_weight".to_owned()), "the local stdio user is trusted");

        let r = call(&client, "search_passages", json!({"query": "fit_model", "limit": 3})).await;
        assert_eq!(r.is_error, Some(false));
        // Each hit is also a resource link the client can open.
        let link = r.content.iter().find_map(|c| c.as_resource_link()).expect("a resource link");
        assert!(link.uri.starts_with("cairn://doc/science/alpha/src/alpha/core.py?lines="), "{}", link.uri);
        let s = r.structured_content.as_ref().expect("structured");
        assert_eq!(s["hits"][0]["doc_id"], "science/alpha/src/alpha/core.py");
        let t = text(&r);
        assert!(t.contains("science/alpha/src/alpha/core.py:") && t.contains("permalink: https://github.com/example/alpha/blob/"), "{t}");

        let r = call(&client, "retrieve", json!({"doc_id": "science/alpha/src/alpha/core.py", "start": 5, "end": 5})).await;
        assert_eq!(r.structured_content.as_ref().expect("s")["text"], "def fit_model(data, t_E=1.0):\n");
        let r = call(&client, "retrieve_batch", json!({"items": [{"doc_id": "science/alpha/README.md", "end": 1}, {"doc_id": "science/alpha/nope"}]})).await;
        let s = r.structured_content.as_ref().expect("s");
        assert_eq!((s["items"][0]["ok"].as_bool(), s["items"][1]["error"]["code"].as_str()), (Some(true), Some("not_found")));
        let r = call(&client, "tree", json!({"prefix": "science"})).await;
        assert!(text(&r).contains("science/alpha/"), "{}", text(&r));
        let r = call(&client, "context", json!({"query": "fit_model", "max_tokens": 400, "threshold": 0.0})).await;
        assert!(text(&r).contains("[1] science/alpha/"), "{}", text(&r));
        let r = call(&client, "explain", json!({"text": crate::explain::TRACEBACK})).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        let s = r.structured_content.as_ref().expect("structured");
        assert_eq!((s["raise_sites"][0]["doc_id"].as_str(), s["raise_sites"][0]["start_line"].as_u64()), (Some("science/alpha/src/alpha/units.py"), Some(6)));
        assert!(text(&r).contains("raised at:") && text(&r).contains("check_t_E"), "{}", text(&r));
        for name in ["version", "health"] {
            let r = call(&client, name, json!({})).await;
            assert_eq!(r.is_error, Some(false), "{name}");
        }
        let r = call(&client, "set_weight", json!({"doc_id": "science/alpha/README.md", "multiplier": 2.0})).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));

        // Bad arguments, a missing doc and an over-limit value are tool errors with stable codes.
        for (name, args, code, field) in [
            ("search_passages", json!({"limit": 3}), "malformed_request", Some("query")),
            ("search_passages", json!({"query": "x", "limit": "ten"}), "malformed_request", Some("limit")),
            ("search_passages", json!({"query": "x", "limit": 51}), "invalid_argument", Some("limit")),
            ("search", json!({"query": "x", "limit": 3}), "malformed_request", Some("limit")),
            ("fetch", json!({"id": "science/alpha/README.md"}), "invalid_argument", Some("id")),
            ("retrieve", json!({"doc_id": "science/alpha/../../etc"}), "invalid_argument", Some("doc_id")),
            ("retrieve", json!({"doc_id": "science/alpha/missing.py"}), "not_found", Some("doc_id")),
        ] {
            let r = call(&client, name, args.clone()).await;
            assert_eq!(r.is_error, Some(true), "{name} {args}");
            let s = r.structured_content.as_ref().expect("structured error");
            assert_eq!((s["code"].as_str(), s["field"].as_str()), (Some(code), field), "{s}");
            assert!(text(&r).contains(code));
        }
        // The session survived all of that.
        let r = call(&client, "version", json!({})).await;
        assert_eq!(r.is_error, Some(false));

        let resources = client.list_all_resources().await.expect("resources/list");
        assert!(resources.iter().any(|r| r.uri == "cairn://doc/science/alpha/README.md"));
        let templates = client.list_all_resource_templates().await.expect("templates");
        assert!(templates[0].uri_template.starts_with("cairn://doc/"));
        let read = client
            .read_resource(ReadResourceRequestParams::new("cairn://doc/science/alpha/src/alpha/core.py?lines=5-6"))
            .await
            .expect("resources/read");
        let body = serde_json::to_value(&read.contents[0]).expect("json");
        assert_eq!(body["text"], "def fit_model(data, t_E=1.0):\n    \"\"\"Fit a point lens model to data.\"\"\"\n");
        for (uri, mime, starts) in [
            ("cairn://doc/science/alpha/notebooks/demo.ipynb", "text/markdown", "<!-- cell 1: markdown -->"),
            ("cairn://doc/science/alpha/notebooks/demo.ipynb?raw=true", "text/plain", "{"),
        ] {
            let read = client.read_resource(ReadResourceRequestParams::new(uri)).await.expect("resources/read");
            let body = serde_json::to_value(&read.contents[0]).expect("json");
            assert_eq!(body["mimeType"], mime, "{uri}");
            assert!(body["text"].as_str().is_some_and(|t| t.starts_with(starts)), "{uri}: {body}");
        }
        let missing = client
            .read_resource(ReadResourceRequestParams::new("cairn://doc/science/alpha/nope.md"))
            .await;
        assert!(missing.is_err());
        client.cancel().await.expect("close");
    });
}

#[test]
fn http_transport_enforces_tokens_and_groups() {
    let w = World::new();
    w.write_config("    groups: [team-a]\n");
    assert!(w.build("out", &[]).status.success());
    let store = cairn_serve::auth::TokenStore::new(w.path("tokens.json"));
    let reader = store.add("reader", &[], false).expect("token");
    let team = store
        .add("team", &["team-a".to_owned()], false)
        .expect("token");
    let server = Server::start(&w, "out", &["--toolsets", "all"]);
    let url = server.url("/mcp");
    runtime().block_on(async {
        let connect = |token: String| {
            let config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.clone())
                .auth_header(token);
            ().serve(StreamableHttpClientTransport::from_config(config))
        };
        // No token: refused before any session exists.
        let anonymous = ().serve(StreamableHttpClientTransport::from_uri(url.clone())).await;
        assert!(anonymous.is_err(), "an MCP session without a token");

        let reader_client = connect(reader).await.expect("reader session");
        let names: Vec<String> = reader_client
            .list_all_tools()
            .await
            .expect("tools")
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert!(!names.contains(&"set_weight".to_owned()), "not an admin");
        let r = call(&reader_client, "search_passages", json!({"query": "fit_model", "limit": 50})).await;
        let hits = r.structured_content.as_ref().expect("s")["hits"].clone();
        assert!(hits.as_array().is_some_and(|h| h.iter().all(|h| h["repo"] != "alpha")), "{hits}");
        // The focus lines the MCP Apps view reads are the reader's hits' only.
        let meta = serde_json::to_string(&r.meta).expect("json");
        assert!(meta.contains("cairn/focus") && !meta.contains("def fit_model"), "{meta}");
        let r = call(&reader_client, "retrieve", json!({"doc_id": "science/alpha/src/alpha/core.py"})).await;
        assert_eq!(r.structured_content.as_ref().expect("s")["code"], "not_found");
        let resources = reader_client.list_all_resources().await.expect("resources");
        assert!(resources.iter().all(|r| !r.uri.contains("/alpha/")));
        let r = call(&reader_client, "set_weight", json!({"doc_id": "tools/beta/README.md", "multiplier": 2.0})).await;
        assert_eq!(r.is_error, Some(true), "set_weight is admin only");
        // The same answer HTTP gives: the admin rule lives in the library.
        assert_eq!(r.structured_content.as_ref().expect("s")["code"], "forbidden");

        let team_client = connect(team).await.expect("team session");
        let r = call(&team_client, "retrieve", json!({"doc_id": "science/alpha/src/alpha/core.py", "start": 5, "end": 5})).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        reader_client.cancel().await.expect("close");
        team_client.cancel().await.expect("close");
    });

    // DNS-rebinding protection: a foreign Origin gets nothing.
    let res = crate::serve_process::agent()
        .post(&server.url("/mcp"))
        .header("Origin", "http://evil.example")
        .header("content-type", "application/json")
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .expect("response");
    assert_eq!(res.status().as_u16(), 403);
}

/// ChatGPT's contract over `/mcp`: `search` answers only `{"results": [{id,
/// title, url}]}` with one text item holding the same JSON, and `fetch(id)`
/// gives the lines `retrieve` gives, from the version that cited them, even
/// after a hot swap changed those lines; once that version is gone, it says so.
#[test]
fn chatgpt_search_then_fetch_reads_the_cited_version() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let token = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("gpt", &[], false)
        .expect("token");
    let server = Server::start(&w, "out", &["--watch-ms", "100", "--toolsets", "all"]);
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            server.url("/mcp"),
        )
        .auth_header(token.clone());
    let only_text = |r: &CallToolResult| -> Value {
        assert_eq!(r.content.len(), 1, "exactly one content item");
        let t = r.content[0].as_text().expect("a text item").text.clone();
        let parsed: Value = serde_json::from_str(&t).expect("the text is JSON");
        assert_eq!(
            Some(&parsed),
            r.structured_content.as_ref(),
            "the text holds the structured answer"
        );
        parsed
    };
    runtime().block_on(async {
        let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("session");
        let tools = client.list_all_tools().await.expect("tools");
        let search = tools.iter().find(|t| t.name == "search").expect("search");
        assert_eq!(search.input_schema["required"], json!(["query"]));
        let found = only_text(&call(&client, "search", json!({"query": "fit_model"})).await);
        assert_eq!(found.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()), Some(vec!["results".to_owned()]));
        let first = found["results"][0].clone();
        let id = first["id"].as_str().expect("id").to_owned();
        assert!(first["title"].as_str().is_some_and(|t| t.starts_with("alpha: src/alpha/core.py, lines ")), "{first}");
        assert!(first["url"].as_str().is_some_and(|u| u.starts_with("https://github.com/example/alpha/blob/") && u.contains("/src/alpha/core.py#L")), "{first}");

        let fetched = only_text(&call(&client, "fetch", json!({"id": id})).await);
        let (start, end) = (fetched["metadata"]["start_line"].clone(), fetched["metadata"]["end_line"].clone());
        let retrieved = call(&client, "retrieve", json!({"doc_id": "science/alpha/src/alpha/core.py", "start": start, "end": end})).await;
        let cited_text = retrieved.structured_content.as_ref().expect("s")["text"].clone();
        assert_eq!(fetched["text"], cited_text);
        assert_eq!((fetched["id"].as_str(), &fetched["url"]), (Some(id.as_str()), &first["url"]));
        let cited_version = fetched["metadata"]["index_version"].as_str().expect("version").to_owned();
        assert!(id.starts_with(&format!("{cited_version}/science/alpha/src/alpha/core.py#L")), "{id}");

        // A new version moves core.py's lines down by two; the live version swaps in.
        let repo = w.alpha_repo();
        let tree = repo.head().and_then(|h| h.peel_to_tree()).expect("tree");
        let entry = tree.get_path(std::path::Path::new("src/alpha/core.py")).expect("core.py");
        let core = String::from_utf8(repo.find_blob(entry.id()).expect("blob").content().to_vec()).expect("utf8");
        crate::fixtures::commit(&w.alpha_repo(), &[("src/alpha/core.py", format!("# moved\n\n{core}").into_bytes())], "move");
        assert!(w.build("out", &[]).status.success());
        let started = std::time::Instant::now();
        loop {
            let v = call(&client, "version", json!({})).await;
            if v.structured_content.as_ref().expect("s")["index_version"] != cited_version.as_str() {
                break;
            }
            assert!(started.elapsed() < std::time::Duration::from_secs(20), "never swapped");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let now = call(&client, "retrieve", json!({"doc_id": "science/alpha/src/alpha/core.py", "start": start, "end": end})).await;
        assert_ne!(now.structured_content.as_ref().expect("s")["text"], cited_text, "the live lines moved");
        let again = only_text(&call(&client, "fetch", json!({"id": id})).await);
        assert_eq!(again["text"], cited_text, "fetch reads the version that cited the lines");
        let pinned = call(&client, "retrieve", json!({"doc_id": "science/alpha/src/alpha/core.py", "start": start, "end": end, "index_version": cited_version})).await;
        assert_eq!(pinned.structured_content.as_ref().expect("s")["text"], cited_text, "retrieve takes the same index_version");

        // The cited version leaves the root: fetch says so instead of answering other lines.
        std::fs::remove_dir_all(w.path("out/versions").join(&cited_version)).expect("remove the old version");
        let gone = call(&client, "fetch", json!({"id": id})).await;
        assert_eq!(gone.is_error, Some(true));
        assert_eq!(gone.structured_content.as_ref().expect("s")["code"], "version_gone");

        // A later version restricts alpha to team-a: lines this caller cited
        // from the earlier version are hidden too, not read from it.
        let found = only_text(&call(&client, "search", json!({"query": "fit_model"})).await);
        let id2 = found["results"][0]["id"].as_str().expect("id").to_owned();
        let v2 = id2.split('/').next().expect("version").to_owned();
        w.write_config("    groups: [team-a]\n");
        assert!(w.build("out", &[]).status.success());
        let started = std::time::Instant::now();
        while call(&client, "version", json!({})).await.structured_content.as_ref().expect("s")["index_version"] == v2.as_str() {
            assert!(started.elapsed() < std::time::Duration::from_secs(20), "never swapped");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let hidden = call(&client, "fetch", json!({"id": id2})).await;
        assert_eq!(hidden.structured_content.as_ref().expect("s")["code"], "not_found", "{}", text(&hidden));
        let pinned = call(&client, "retrieve", json!({"doc_id": "science/alpha/src/alpha/core.py", "index_version": v2})).await;
        assert_eq!(pinned.structured_content.as_ref().expect("s")["code"], "not_found");
        client.cancel().await.expect("close");
    });
    // The same over HTTP: 410 with a problem body.
    let (status, body) = crate::serve_process::get_json(
        &server.url(&format!(
            "/fetch?id={}",
            "0123456789abcdef%2Ftools%2Fbeta%2FREADME.md%23L1-L2"
        )),
        &token,
    );
    assert_eq!(
        (status, body["code"].as_str()),
        (410, Some("version_gone")),
        "{body}"
    );
}

/// Hostile citation ids and versions: malformed, oversized, traversing,
/// naming another group's document or a version that never existed. Each
/// is refused by field or answered exactly as a missing document, and
/// none opens a version.
#[test]
fn hostile_citation_ids_and_versions_are_refused_cheaply() {
    let w = World::new();
    w.write_config("    groups: [team-a]\n");
    assert!(w.build("out", &[]).status.success());
    let token = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("outsider", &[], false)
        .expect("token");
    let server = Server::start(&w, "out", &["--toolsets", "all"]);
    let version = std::fs::read_to_string(w.path("out/CURRENT"))
        .expect("current")
        .trim()
        .to_owned();
    let fetch = |id: &str| {
        let q: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
        crate::serve_process::get_json(&server.url(&format!("/fetch?id={q}")), &token)
    };
    let long = format!("{version}/tools/beta/{}#L1-L2", "a".repeat(6000));
    for bad in [
        "",
        "x",
        "0123456789abcdef",
        "../../etc/passwd#L1-L2",
        "0123456789ABCDEF/tools/beta/README.md#L1-L2",
        &format!("{version}/tools/beta/README.md#L2-L1"),
        &format!("{version}/tools/beta/README.md#L1-L99999999999"),
        &format!("{version}/tools/../../secret#L1-L2"),
        &format!("{version}/tools/beta/README.md\u{0}#L1-L2"),
        &long,
    ] {
        let (status, body) = fetch(bad);
        assert_eq!(
            (status, body["field"].as_str()),
            (422, Some("id")),
            "{bad:.80}: {body}"
        );
    }
    // Another group's document answers exactly as a document that does not exist.
    let hidden = fetch(&format!("{version}/science/alpha/README.md#L1-L2"));
    let missing = fetch(&format!("{version}/science/alpha/NOPE.md#L1-L2"));
    assert_eq!((hidden.0, missing.0), (404, 404));
    assert_eq!(hidden.1["code"], missing.1["code"]);
    // A version that never existed is gone, whatever the document; a
    // malformed one is refused by field.
    for v in 0..20 {
        let (status, body) = fetch(&format!("{v:016x}/tools/beta/README.md#L1-L2"));
        assert_eq!(
            (status, body["code"].as_str()),
            (410, Some("version_gone")),
            "{body}"
        );
    }
    let post = |body: serde_json::Value| {
        crate::serve_process::agent()
            .post(&server.url("/retrieve"))
            .header("Authorization", &format!("Bearer {token}"))
            .header("content-type", "application/json")
            .send(body.to_string())
            .map(|mut r| {
                let s = r.status().as_u16();
                (
                    s,
                    serde_json::from_str::<Value>(
                        &r.body_mut().read_to_string().unwrap_or_default(),
                    )
                    .unwrap_or(Value::Null),
                )
            })
            .expect("response")
    };
    let (status, body) =
        post(json!({"doc_id": "tools/beta/README.md", "index_version": "../../x"}));
    assert_eq!(
        (status, body["field"].as_str()),
        (400, Some("index_version")),
        "{body}"
    );
    let (status, body) =
        post(json!({"doc_id": "science/alpha/README.md", "index_version": "00000000000000ff"}));
    assert_eq!(
        (status, body["code"].as_str()),
        (404, Some("not_found")),
        "a hidden document is checked first: {body}"
    );
}
