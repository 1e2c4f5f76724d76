//! cairn's OAuth resource server against real parties (issue 31):
//! `oidc-provider` (a certified OpenID provider, from npm) and the official
//! MCP Python SDK's OAuth client doing the whole flow: metadata discovery,
//! dynamic registration, PKCE, the token, tool calls. It needs node and the
//! SDK (`scripts/oauth-test-parties.sh` installs both); it skips without them
//! unless `CAIRN_REQUIRE_OAUTH_PARTIES=1` (CI sets it).

use crate::oauth::world;
use crate::serve_process::{Server, agent, free_port};
use serde_json::{Value, json};

/// The whole flow with real parties: oidc-provider issues the token after
/// dynamic registration and PKCE; the MCP Python SDK's OAuth client finds
/// it from cairn's 401, then calls `search` and `fetch` at each protocol version.
#[test]
fn a_real_oauth_client_gets_a_token_from_a_real_provider_and_searches() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join("target/mcp-py/bin/python");
    let modules = std::env::var("CAIRN_OIDC_MODULES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join("target/oidc/node_modules"));
    let have = python.exists() && modules.join("oidc-provider").exists() && which("node");
    if !have {
        cairn_embed::fixtures::skip_unless_required(
            "CAIRN_REQUIRE_OAUTH_PARTIES",
            "node, oidc-provider and the MCP Python SDK (scripts/oauth-test-parties.sh)",
        );
        return;
    }
    let w = world();
    let mut provider = std::process::Command::new("node")
        .arg(root.join("tests/e2e/data/oauth/provider.mjs"))
        .args(["--port", "0", "--groups", "team-a"])
        .env("CAIRN_OIDC_MODULES", &modules)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node");
    let issuer = {
        use std::io::BufRead;
        let out = provider.stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(out)
            .read_line(&mut line)
            .expect("READY line");
        line.trim()
            .strip_prefix("READY ")
            .unwrap_or_else(|| panic!("provider said {line:?}"))
            .to_owned()
    };
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}");
    let index = w.path("out");
    let server = Server::start_on(
        &w,
        index.to_str().expect("utf8"),
        port,
        &["--oauth-issuer", &issuer, "--public-url", &public],
    );
    let token = o_token(&python, root, &server.url("/mcp"));
    for protocol in ["2025-06-18", "2025-11-25", "2026-07-28", "auto"] {
        let o = std::process::Command::new(&python)
            .arg(root.join("tests/e2e/data/oauth/client.py"))
            .args(["--protocol", protocol, &server.url("/mcp"), "fit the model"])
            .output()
            .expect("python");
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{protocol}: {}\n{stdout}",
            String::from_utf8_lossy(&o.stderr)
        );
        let r: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{protocol}: {e}: {stdout}"));
        if protocol != "auto" {
            assert_eq!(r["protocol_version"], protocol);
        }
        assert_eq!(r["token_audience"], format!("{public}/mcp"), "{r}");
        let first = &r["search"]["results"][0];
        assert!(
            first["url"].as_str().is_some_and(|u| u.contains("/blob/")),
            "{r}"
        );
        // The provider's groups claim let this caller see team-a's alpha.
        assert!(
            r["search"]["results"]
                .as_array()
                .is_some_and(|a| a.iter().any(|h| h["id"]
                    .as_str()
                    .is_some_and(|i| i.contains("/science/alpha/")))),
            "{r}"
        );
        assert_eq!(r["fetch"]["id"], first["id"]);
        assert_eq!(r["fetch"]["url"], first["url"]);
        let text = r["fetch"]["text"].as_str().expect("text");
        assert!(!text.is_empty(), "{r}");
        // The fetched text is what `retrieve` gives for those lines.
        let m = &r["fetch"]["metadata"];
        let body = json!({"doc_id": m["doc_id"], "start": m["start_line"], "end": m["end_line"]});
        let mut resp = agent()
            .post(&server.url("/retrieve"))
            .header("Authorization", &format!("Bearer {token}"))
            .header("content-type", "application/json")
            .send(body.to_string())
            .expect("retrieve");
        let retrieved: Value =
            serde_json::from_str(&resp.body_mut().read_to_string().unwrap_or_default())
                .expect("json");
        assert_eq!(retrieved["text"].as_str(), Some(text));
    }
    drop(server);
    let _ = provider.kill();
    let _ = provider.wait();
}

/// An access token from the whole flow (the SDK's `--token-only`).
fn o_token(python: &std::path::Path, root: &std::path::Path, mcp: &str) -> String {
    let o = std::process::Command::new(python)
        .arg(root.join("tests/e2e/data/oauth/client.py"))
        .args(["--token-only", mcp])
        .output()
        .expect("python");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

fn which(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}
