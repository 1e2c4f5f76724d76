//! The configured model against a real OpenAI-compatible server (issue 60):
//! node-llama-cpp running Gemma 3 270M on the CPU behind
//! `tests/e2e/data/llm/server.mjs`, so doctor, the gateway (plain and
//! streamed) and `ask` are checked on the wire against an implementation
//! cairn did not write. The model is tiny: what it says is not judged, only
//! that every answer is well formed and every citation is checked. It needs
//! node, node-llama-cpp and the model (`scripts/llm-test-server.sh`); it
//! skips without them unless `CAIRN_REQUIRE_LLM_SERVER=1` (CI sets it).

use crate::fixtures::{World, cairn, stderr, stdout};
use crate::serve_process::Server;
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The model file and the name the server lists it by.
const MODEL: &str = "gemma-3-270m-q4_k_m.gguf";

/// The real model server, stopped when dropped.
struct LlmServer {
    child: Child,
    url: String,
}

impl LlmServer {
    /// Starts it, or `None` when node, node-llama-cpp or the model is missing.
    fn start() -> Option<Self> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let model = root.join("target/llm-model").join(MODEL);
        let modules = root.join("target/llm-node/node_modules/node-llama-cpp");
        let node = Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !(node && model.is_file() && modules.is_dir()) {
            return None;
        }
        let mut child = Command::new("node")
            .arg(root.join("tests/e2e/data/llm/server.mjs"))
            .arg("--model")
            .arg(&model)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node");
        let mut line = String::new();
        let out = child.stdout.take().expect("stdout");
        std::io::BufReader::new(out)
            .read_line(&mut line)
            .expect("READY line");
        let url = line
            .trim()
            .strip_prefix("READY ")
            .unwrap_or_else(|| panic!("server said {line:?}"))
            .to_owned();
        Some(Self { child, url })
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn post(url: &str, token: &str, body: &Value) -> (u16, String, String) {
    post_accepting(url, token, body, "application/json")
}

/// [`post`], asking for server-sent events.
fn post_streamed(url: &str, token: &str, body: &Value) -> (u16, String, String) {
    post_accepting(url, token, body, "text/event-stream")
}

/// `body` posted to `url` as `token`'s holder, accepting `accept`: the
/// status, content type and body.
fn post_accepting(url: &str, token: &str, body: &Value, accept: &str) -> (u16, String, String) {
    // A real model on two busy cores: minutes, not the usual 20 s.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(300)))
        .build()
        .into();
    match agent
        .post(url)
        .header("Authorization", &format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", accept)
        .send(body.to_string())
    {
        Ok(mut r) => {
            let ct = r
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            (
                r.status().as_u16(),
                ct,
                r.body_mut()
                    .with_config()
                    .limit(64 << 20)
                    .read_to_string()
                    .expect("the whole answer, within the timeout"),
            )
        }
        Err(e) => (0, String::new(), e.to_string()),
    }
}

#[test]
fn doctor_the_gateway_and_ask_work_against_a_real_model_server() {
    let Some(llm) = LlmServer::start() else {
        cairn_embed::fixtures::skip_unless_required(
            "CAIRN_REQUIRE_LLM_SERVER",
            "node, node-llama-cpp and Gemma 3 270M (scripts/llm-test-server.sh)",
        );
        return;
    };
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let index = w.path("out");
    let index = index.to_str().expect("utf8");
    let flags = ["--llm-url", llm.url.as_str(), "--llm-model", MODEL];

    let mut args = vec!["doctor", "--index", index, "--json"];
    args.extend(flags);
    let o = cairn(&args);
    let checks: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let check = checks
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == "llm"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(check["status"], "ok", "{check}");

    let token = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("bot", &[], false)
        .expect("token");
    let server = Server::start(&w, "out", &flags);
    let chat = json!({
        "model": "any",
        "messages": [{"role": "user", "content": "How do I fit a model with fit_model?"}],
        "max_tokens": 24,
        "rag": {"max_tokens": 300}
    });
    let (status, _, body) = post(&server.url("/v1/chat/completions"), &token, &chat);
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("json");
    assert!(
        answer["choices"][0]["message"]["content"].is_string(),
        "{answer}"
    );
    assert!(
        answer["citations"]
            .as_array()
            .is_some_and(|c| !c.is_empty()),
        "{answer}"
    );
    assert!(
        answer["usage"]["total_tokens"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "{answer}"
    );

    let mut streamed = chat.clone();
    streamed["stream"] = true.into();
    let (status, ct, body) = post(&server.url("/v1/chat/completions"), &token, &streamed);
    assert_eq!((status, ct.as_str()), (200, "text/event-stream"), "{body}");
    let events: Vec<&str> = body
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .collect();
    assert!(events.len() >= 3, "{body}");
    assert!(events[0].contains("chat.completion.chunk"), "{body}");
    assert!(
        events[events.len() - 2].contains("\"object\":\"cairn.citations\""),
        "{body}"
    );
    assert_eq!(events[events.len() - 1], "data: [DONE]");

    // ask, streamed: the model asked to stream each round (its tool calls
    // assembled from the chunks), each step and draft told as it comes,
    // the checked answer last.
    let (status, ct, body) = post_streamed(
        &server.url("/ask"),
        &token,
        &json!({"question": "How do I fit a model with fit_model?", "max_steps": 2}),
    );
    assert_eq!((status, ct.as_str()), (200, "text/event-stream"), "{body}");
    let names: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(names.last(), Some(&"answer"), "{body}");
    assert!(
        names[..names.len() - 1]
            .iter()
            .all(|n| matches!(*n, "step" | "draft")),
        "{body}"
    );
    let last = body
        .rsplit("event: answer\ndata: ")
        .next()
        .unwrap_or("")
        .trim();
    let streamed_ask: Value = serde_json::from_str(last).expect("answer json");
    assert!(
        streamed_ask["tokens"].as_u64().is_some_and(|n| n > 0),
        "{streamed_ask}"
    );
    let count = |name: &str| names.iter().filter(|n| **n == name).count();
    println!(
        "the real model's streamed ask: {} steps, {} drafts, {} citations",
        count("step"),
        count("draft"),
        streamed_ask["citations"].as_array().map_or(0, Vec::len)
    );
    drop(server);

    // ask: whatever the tiny model does, the answer is well formed, within
    // its rounds, and only checked citations are numbered.
    let mut args = vec![
        "ask",
        "How do I fit a model?",
        "--index",
        index,
        "--json",
        "--llm-max-steps",
        "2",
    ];
    args.extend(flags);
    let mut with_model = args.clone();
    with_model.extend(["--model-dir", w.model.to_str().expect("utf8")]);
    let o = cairn(&with_model);
    assert!(o.status.success(), "{}", stderr(&o));
    let asked: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let cited = asked["citations"].as_array().map_or(0, Vec::len);
    assert_eq!(asked["insufficient_evidence"], cited == 0, "{asked}");
    assert!(
        asked["steps"].as_array().is_some_and(|s| s.len() <= 8),
        "{asked}"
    );
    assert!(asked["tokens"].as_u64().is_some_and(|n| n > 0), "{asked}");
    println!(
        "the real model's ask: {cited} citations, {} steps",
        asked["steps"].as_array().map_or(0, Vec::len)
    );
}
