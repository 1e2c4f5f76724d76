//! The configured model (issue 60): a scripted OpenAI-compatible receiver,
//! a real HTTP server on a local port that answers each request as its
//! script says and records what it was sent, behind `--llm-url`; and
//! `cairn doctor`'s check of it: what it sends (the key as a bearer token,
//! the model, the bound on tokens), what it says when the endpoint refuses,
//! is silent or lacks the model, and that the key is never printed.

use crate::fixtures::{cairn, stderr, stdout};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request the receiver was sent.
#[derive(Clone, Debug)]
pub struct Received {
    /// `GET /v1/models`, `POST /v1/chat/completions` …
    pub line: String,
    /// Its `Authorization` header, if any.
    pub authorization: Option<String>,
    /// Its body, as JSON (`Null` when it is not).
    pub body: Value,
}

/// What the receiver answers a request with: a status and a JSON body, or
/// silence (it reads the request and never answers).
pub enum Reply {
    Json(u16, Value),
    /// Server-sent events, each `data: …` line as given, the connection
    /// closed after the last.
    Events(Vec<String>),
    Silent,
}

/// A scripted OpenAI-compatible endpoint on 127.0.0.1.
pub struct Receiver {
    /// Its base URL, `http://127.0.0.1:PORT/v1`.
    pub url: String,
    /// What it was sent, in order.
    pub received: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    /// Serves `script`'s answer to each request until the test ends.
    pub fn start(script: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        let script = Arc::new(script);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (log, script) = (Arc::clone(&log), Arc::clone(&script));
                std::thread::spawn(move || answer(stream, &log, script.as_ref()));
            }
        });
        Self {
            url: format!("http://127.0.0.1:{port}/v1"),
            received,
        }
    }

    /// What it was sent so far.
    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().expect("log").clone()
    }
}

/// Reads one request from `stream`, records it and answers as `script` says.
fn answer(
    mut stream: std::net::TcpStream,
    log: &Mutex<Vec<Received>>,
    script: &(dyn Fn(&Received) -> Reply + Send + Sync),
) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let (mut length, mut authorization) = (0usize, None);
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "authorization" => authorization = Some(value.trim().to_owned()),
                _ => {}
            }
        }
    }
    let mut body = vec![0u8; length];
    let _ = reader.read_exact(&mut body);
    let received = Received {
        line: line
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" "),
        authorization,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    log.lock().expect("log").push(received.clone());
    match script(&received) {
        Reply::Json(status, value) => {
            let text = value.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
        }
        Reply::Events(events) => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
            );
            for e in events {
                let _ = write!(stream, "data: {e}\n\n");
                let _ = stream.flush();
            }
        }
        Reply::Silent => std::thread::sleep(Duration::from_secs(30)),
    }
}

/// A Chat Completions answer saying `text`.
pub fn completion(text: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "tiny",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}
    })
}

/// A model list naming `ids`.
pub fn models(ids: &[&str]) -> Value {
    json!({"object": "list", "data": ids.iter().map(|id| json!({"id": id, "object": "model"})).collect::<Vec<_>>()})
}

/// The key the tests configure, and a file holding it (mode 600).
fn key_file(dir: &std::path::Path, mode: u32) -> (String, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let key = "sk-cairn-test-7f3a9c1e5b".to_owned();
    let path = dir.join("llm.key");
    std::fs::write(&path, format!("{key}\n")).expect("key");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    (key, path)
}

/// `cairn doctor --json` with the model flags `llm`: its `llm` check
/// (status and detail), and everything it printed.
fn doctor_llm(dir: &std::path::Path, llm: &[&str]) -> (String, String, String) {
    let index = dir.join("no-index");
    let mut args = vec!["doctor", "--index", index.to_str().expect("utf8"), "--json"];
    args.extend(llm);
    let o = cairn(&args);
    let printed = format!("{}{}", stdout(&o), stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap_or(Value::Null);
    let check = v
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == "llm"))
        .cloned()
        .unwrap_or(Value::Null);
    (
        check["status"].as_str().unwrap_or("").to_owned(),
        check["detail"].as_str().unwrap_or("").to_owned(),
        printed,
    )
}

#[test]
fn doctor_checks_the_model_and_sends_the_key_only_to_it() {
    let dir = tempfile::tempdir().expect("dir");
    let (key, file) = key_file(dir.path(), 0o600);
    let good = Receiver::start(|r| match r.line.as_str() {
        "GET /v1/models" => Reply::Json(200, models(&["tiny", "other"])),
        _ => Reply::Json(200, completion("OK")),
    });
    let file_arg = file.to_str().expect("utf8");
    let (status, detail, printed) = doctor_llm(
        dir.path(),
        &[
            "--llm-url",
            &good.url,
            "--llm-model",
            "tiny",
            "--llm-key-file",
            file_arg,
        ],
    );
    assert_eq!(status, "ok", "{printed}");
    assert!(
        detail.contains("tiny at") && detail.contains("13 tokens"),
        "{detail}"
    );
    let sent = good.requests();
    assert_eq!(sent.len(), 2, "{sent:?}");
    for r in &sent {
        assert_eq!(
            r.authorization.as_deref(),
            Some(format!("Bearer {key}").as_str())
        );
    }
    assert_eq!(sent[1].line, "POST /v1/chat/completions");
    assert_eq!(sent[1].body["model"], "tiny");
    assert_eq!(sent[1].body["max_tokens"], 1024);
    assert_eq!(sent[1].body["stream"], false);
    assert!(!printed.contains(&key), "{printed}");

    // A model the endpoint does not list is a warning, not a failure.
    let (status, detail, _) = doctor_llm(
        dir.path(),
        &[
            "--llm-url",
            &good.url,
            "--llm-model",
            "absent",
            "--llm-key-file",
            file_arg,
        ],
    );
    assert_eq!(status, "warn", "{detail}");
    assert!(detail.contains("--llm-model"), "{detail}");

    // OpenAI's reasoning models take the bound as `max_completion_tokens` only.
    let (status, _, _) = doctor_llm(
        dir.path(),
        &[
            "--llm-url",
            &good.url,
            "--llm-model",
            "tiny",
            "--llm-key-file",
            file_arg,
            "--llm-token-field",
            "max_completion_tokens",
        ],
    );
    assert_eq!(status, "ok");
    let last = good.requests().pop().expect("sent");
    assert_eq!(last.body["max_completion_tokens"], 1024, "{}", last.body);
    assert!(last.body.get("max_tokens").is_none(), "{}", last.body);

    // No model configured: no check, and nothing sent.
    let before = good.requests().len();
    let (status, _, printed) = doctor_llm(dir.path(), &[]);
    assert_eq!(status, "", "{printed}");
    assert_eq!(good.requests().len(), before);
}

#[test]
fn a_refusing_or_silent_endpoint_fails_the_check_without_the_key() {
    let dir = tempfile::tempdir().expect("dir");
    let (key, file) = key_file(dir.path(), 0o600);
    let file_arg = file.to_str().expect("utf8");
    // An endpoint that echoes the key it was sent in its error body.
    let refusing = Receiver::start(|r| {
        Reply::Json(
            401,
            json!({"error": {"message": format!("bad key {}", r.authorization.clone().unwrap_or_default())}}),
        )
    });
    let (status, detail, printed) = doctor_llm(
        dir.path(),
        &[
            "--llm-url",
            &refusing.url,
            "--llm-model",
            "tiny",
            "--llm-key-file",
            file_arg,
        ],
    );
    assert_eq!(status, "fail", "{printed}");
    assert!(
        detail.contains("401") && detail.contains("[redacted]"),
        "{detail}"
    );
    assert!(!printed.contains(&key), "{printed}");

    let silent = Receiver::start(|_| Reply::Silent);
    let started = Instant::now();
    let (status, detail, printed) = doctor_llm(
        dir.path(),
        &[
            "--llm-url",
            &silent.url,
            "--llm-model",
            "tiny",
            "--llm-key-file",
            file_arg,
            "--llm-timeout-ms",
            "500",
        ],
    );
    assert_eq!(status, "fail", "{printed}");
    assert!(detail.contains("could not be reached"), "{detail}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(!printed.contains(&key), "{printed}");
}

#[test]
fn a_bad_configuration_fails_before_anything_is_sent() {
    let dir = tempfile::tempdir().expect("dir");
    let receiver = Receiver::start(|_| Reply::Json(200, completion("OK")));
    let (key, readable) = key_file(dir.path(), 0o644);
    let (status, detail, printed) = doctor_llm(
        dir.path(),
        &[
            "--llm-url",
            &receiver.url,
            "--llm-model",
            "tiny",
            "--llm-key-file",
            readable.to_str().expect("utf8"),
        ],
    );
    assert_eq!(status, "fail", "{printed}");
    assert!(
        detail.contains("--llm-key-file") && detail.contains("chmod 600"),
        "{detail}"
    );
    assert!(!printed.contains(&key));
    let (status, detail, _) = doctor_llm(
        dir.path(),
        &[
            "--llm-url",
            "https://user:pw@example.com/v1",
            "--llm-model",
            "tiny",
        ],
    );
    assert_eq!(status, "fail");
    assert!(
        detail.contains("--llm-url") && detail.contains("credentials"),
        "{detail}"
    );
    assert!(receiver.requests().is_empty());
    // A URL without a model is refused by the command line itself.
    let o = cairn(&["doctor", "--llm-url", &receiver.url]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--llm-model"), "{}", stderr(&o));
}
