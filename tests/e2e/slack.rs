//! The Slack app on a real `cairn serve`: requests signed exactly as Slack
//! signs them are answered, in Block Kit that Slack's own SDK (`slack_sdk`,
//! PyPI) accepts, at a local HTTP receiver standing in for Slack's API
//! (`--slack-api-url`); unsigned, tampered, stale and replayed requests, and
//! other workspaces, are refused and answered nowhere; a retried event is
//! answered once; the Slack caller sees public documents only unless given
//! groups.
//!
//! Without `target/slack-py` (scripts/slack-sdk.sh) the block check says so
//! and is left out, unless `CAIRN_REQUIRE_SLACK_SDK=1` (set by `.ci/run`).

use crate::fixtures::World;
use crate::serve_process::{Server, agent};
use hmac::Mac;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";
pub const TEAM: &str = "T0001";

/// A request the receiver got: when, its path, its Authorization header, its JSON body.
#[derive(Clone, Debug)]
pub struct Received {
    pub at: Instant,
    pub path: String,
    pub authorization: String,
    pub body: Value,
}

/// A local HTTP server standing in for Slack's API and response URLs: it
/// records every request and answers `{"ok": true}` with a message `ts`
/// (as `chat.postMessage` does).
pub struct Receiver {
    port: u16,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&got);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
                let (mut length, mut authorization) = (0usize, String::new());
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                        break;
                    }
                    let (k, v) = h.split_once(':').unwrap_or((&h, ""));
                    match k.trim().to_ascii_lowercase().as_str() {
                        "content-length" => length = v.trim().parse().unwrap_or(0),
                        "authorization" => authorization = v.trim().to_owned(),
                        _ => {}
                    }
                }
                let mut body = vec![0u8; length];
                let _ = reader.read_exact(&mut body);
                sink.lock().expect("lock").push(Received {
                    at: Instant::now(),
                    path,
                    authorization,
                    body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                });
                let mut stream = reader.into_inner();
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 36\r\nConnection: close\r\n\r\n{\"ok\":true,\"ts\":\"1700000009.000200\"}",
                );
            }
        });
        Self { port, got }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn received(&self) -> Vec<Received> {
        self.got.lock().expect("lock").clone()
    }

    /// The first request to `path`, within 10 s.
    pub fn wait_for(&self, path: &str) -> Received {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(r) = self.received().into_iter().find(|r| r.path == path) {
                return r;
            }
            assert!(Instant::now() < until, "nothing posted to {path}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

/// Slack's signature of `body` at `ts`.
pub fn sign(ts: i64, body: &str) -> String {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).expect("key");
    mac.update(format!("v0:{ts}:{body}").as_bytes());
    format!("v0={}", hex::encode(mac.finalize().into_bytes()))
}

/// POSTs `body` to `url` with Slack's headers (`signature` as given); the status and body.
pub fn send(
    url: &str,
    ts: i64,
    signature: Option<&str>,
    body: &str,
    extra: &[(&str, &str)],
) -> (u16, String) {
    let mut req = agent()
        .post(url)
        .header("X-Slack-Request-Timestamp", &ts.to_string());
    if let Some(s) = signature {
        req = req.header("X-Slack-Signature", s);
    }
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    match req.send(body.as_bytes()) {
        Ok(mut r) => (
            r.status().as_u16(),
            r.body_mut().read_to_string().unwrap_or_default(),
        ),
        Err(e) => (0, e.to_string()),
    }
}

pub fn command_body(text: &str, team: &str, response_url: &str) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("token", "deprecated-verification-token")
        .append_pair("team_id", team)
        .append_pair("channel_id", "C0001")
        .append_pair("user_id", "U0001")
        .append_pair("command", "/cairn")
        .append_pair("text", text)
        .append_pair("response_url", response_url)
        .finish()
}

/// The doc_ids an answer links to.
pub fn cited(message: &Value) -> Vec<String> {
    message["blocks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"]["text"].as_str())
        .filter_map(|t| t.strip_prefix("*<"))
        .filter_map(|t| {
            t.split_once('|')
                .map(|(_, rest)| rest.split(':').next().unwrap_or("").to_owned())
        })
        .collect()
}

/// Every block of `message` parsed and validated by slack_sdk's block models.
pub fn check_blocks_with_slack_sdk(message: &Value) {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/slack-py/bin/python");
    if !crate::fixtures::tool_present(
        python.is_file(),
        "CAIRN_REQUIRE_SLACK_SDK",
        "scripts/slack-sdk.sh",
    ) {
        return;
    }
    let script = r#"
import json, sys
from slack_sdk.models.blocks import Block
blocks = json.load(sys.stdin)
assert 0 < len(blocks) <= 50, len(blocks)
for raw in blocks:
    block = Block.parse(raw)
    assert block is not None, raw
    block.validate_json()
    assert block.to_dict() == raw, (block.to_dict(), raw)
print("ok", len(blocks))
"#;
    let mut child = std::process::Command::new(python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(message["blocks"].to_string().as_bytes())
        .expect("write");
    let o = child.wait_with_output().expect("wait");
    assert!(
        o.status.success(),
        "slack_sdk refused the blocks: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        message["blocks"]
    );
}

pub fn start(w: &World, receiver: &Receiver, extra: &[&str]) -> Server {
    w.write("slack/secret", &format!("{SECRET}\n"));
    w.write("slack/bot-token", "xoxb-test-token\n");
    let (secret, token) = (w.path("slack/secret"), w.path("slack/bot-token"));
    let api = receiver.url("/api");
    let mut args = vec![
        "--slack-signing-secret-file",
        secret.to_str().expect("utf8"),
        "--slack-bot-token-file",
        token.to_str().expect("utf8"),
        "--slack-team",
        TEAM,
        "--slack-api-url",
        &api,
        "--public-url",
        "http://127.0.0.1:1",
    ];
    args.extend_from_slice(extra);
    Server::start(w, "out", &args)
}

#[test]
fn slack_commands_and_mentions_are_answered_once_in_valid_block_kit_and_bad_requests_never() {
    let w = World::new();
    // alpha belongs to team-a: the Slack caller (public only) must not see it.
    w.write_config("    groups: [team-a]\n");
    assert!(w.build("out", &[]).status.success());
    let receiver = Receiver::start();
    let s = start(&w, &receiver, &[]);
    let commands = s.url("/slack/commands");

    // A slash command: acknowledged at once, answered at response_url.
    let body = command_body(
        "binary lens magnification",
        TEAM,
        &receiver.url("/response/1"),
    );
    let ts = now();
    let (status, ack) = send(&commands, ts, Some(&sign(ts, &body)), &body, &[]);
    assert_eq!(status, 200, "{ack}");
    let ack: Value = serde_json::from_str(&ack).expect("json ack");
    assert_eq!(ack["response_type"], "ephemeral");
    let answer = receiver.wait_for("/response/1").body;
    assert_eq!(answer["response_type"], "in_channel", "{answer}");
    let docs = cited(&answer);
    assert!(
        docs.iter().any(|d| d.starts_with("tools/beta/")),
        "{answer}"
    );
    assert!(
        !docs.iter().any(|d| d.contains("alpha")),
        "a hidden document: {answer}"
    );
    assert!(
        !answer.to_string().contains("alpha"),
        "hidden equals absent: {answer}"
    );
    assert!(docs.len() <= 5);
    assert!(
        answer
            .to_string()
            .contains("http://127.0.0.1:1/?q=binary+lens+magnification"),
        "{answer}"
    );
    check_blocks_with_slack_sdk(&answer);

    // Refused, and answered nowhere.
    let refused = [
        ("unsigned", send(&commands, ts, None, &body, &[]).0, 401),
        (
            "tampered",
            {
                let tampered = body.replace("binary", "secret");
                send(&commands, ts, Some(&sign(ts, &body)), &tampered, &[]).0
            },
            401,
        ),
        (
            "stale",
            {
                let old = now() - 600;
                send(&commands, old, Some(&sign(old, &body)), &body, &[]).0
            },
            401,
        ),
        (
            "replayed",
            send(&commands, ts, Some(&sign(ts, &body)), &body, &[]).0,
            409,
        ),
        (
            "another workspace",
            {
                let other = command_body("magnification", "T9999", &receiver.url("/response/2"));
                send(&commands, ts, Some(&sign(ts, &other)), &other, &[]).0
            },
            403,
        ),
        (
            "a response_url elsewhere",
            {
                let elsewhere = command_body(
                    "magnification",
                    TEAM,
                    "http://169.254.169.254/latest/meta-data",
                );
                send(&commands, ts, Some(&sign(ts, &elsewhere)), &elsewhere, &[]).0
            },
            400,
        ),
        (
            "compressed",
            send(
                &commands,
                ts,
                Some(&sign(ts, &body)),
                &body,
                &[("Content-Encoding", "gzip")],
            )
            .0,
            415,
        ),
        (
            "oversized",
            {
                let big = command_body(&"a".repeat(70_000), TEAM, &receiver.url("/response/3"));
                send(&commands, ts, Some(&sign(ts, &big)), &big, &[]).0
            },
            413,
        ),
    ];
    for (what, got, want) in refused {
        assert_eq!(got, want, "{what}");
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        receiver.received().len(),
        1,
        "only the good command was answered"
    );

    // Events: the URL handshake, then a mention answered in its thread, once.
    let events = s.url("/slack/events");
    let handshake = r#"{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}"#;
    let ts = now();
    let (status, echoed) = send(&events, ts, Some(&sign(ts, handshake)), handshake, &[]);
    assert_eq!(status, 200);
    let echoed: Value = serde_json::from_str(&echoed).expect("json");
    assert_eq!(
        echoed["challenge"],
        "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    );
    let mention = serde_json::json!({
        "type": "event_callback", "team_id": TEAM, "event_id": "Ev0001",
        "event": {"type": "app_mention", "user": "U0001", "channel": "C0001",
                  "ts": "1700000000.000100", "text": "<@U0BOT> where is BinaryMag defined?"}
    })
    .to_string();
    let (status, _) = send(&events, ts, Some(&sign(ts, &mention)), &mention, &[]);
    assert_eq!(status, 200);
    let posted = receiver.wait_for("/api/chat.postMessage");
    assert_eq!(posted.authorization, "Bearer xoxb-test-token");
    assert_eq!(posted.body["channel"], "C0001");
    assert_eq!(posted.body["thread_ts"], "1700000000.000100");
    assert!(
        !posted.body.to_string().contains("alpha"),
        "{}",
        posted.body
    );
    check_blocks_with_slack_sdk(&posted.body);
    // Slack's retry: a new timestamp and signature, the same event id.
    let retry_ts = now() + 1;
    let (status, _) = send(
        &events,
        retry_ts,
        Some(&sign(retry_ts, &mention)),
        &mention,
        &[
            ("X-Slack-Retry-Num", "1"),
            ("X-Slack-Retry-Reason", "http_timeout"),
        ],
    );
    assert_eq!(status, 200);
    // cairn's own answer in the channel, echoed back as an event: never answered.
    let own = serde_json::json!({
        "type": "event_callback", "team_id": TEAM, "event_id": "Ev0002",
        "event": {"type": "message", "channel_type": "im", "bot_id": "B0001", "channel": "D0001",
                  "ts": "1700000001.000100", "text": "3 cited passages"}
    })
    .to_string();
    assert_eq!(
        send(&events, retry_ts, Some(&sign(retry_ts, &own)), &own, &[]).0,
        200
    );
    std::thread::sleep(Duration::from_millis(800));
    let posts = receiver
        .received()
        .iter()
        .filter(|r| r.path == "/api/chat.postMessage")
        .count();
    assert_eq!(posts, 1, "one answer per event");

    // p99 from command to posted answer, 20 commands one after another.
    let mut waits = Vec::new();
    for i in 0..20 {
        let path = format!("/timed/{i}");
        let body = command_body("how do I fit a model to data", TEAM, &receiver.url(&path));
        let ts = now();
        let sent = Instant::now();
        assert_eq!(
            send(&commands, ts, Some(&sign(ts, &body)), &body, &[]).0,
            200
        );
        waits.push(receiver.wait_for(&path).at - sent);
    }
    waits.sort();
    let p99 = waits[waits.len() - 1];
    eprintln!(
        "slack: command to posted answer p50 {:?}, p99 {:?}",
        waits[waits.len() / 2],
        p99
    );
    assert!(p99 <= Duration::from_secs(3), "{waits:?}");
}

#[test]
fn the_slack_caller_sees_the_groups_it_is_given() {
    let w = World::new();
    w.write_config("    groups: [team-a]\n");
    assert!(w.build("out", &[]).status.success());
    let receiver = Receiver::start();
    let s = start(&w, &receiver, &["--slack-groups", "team-a"]);
    let body = command_body("fit_model light curves", TEAM, &receiver.url("/response/a"));
    let ts = now();
    assert_eq!(
        send(
            &s.url("/slack/commands"),
            ts,
            Some(&sign(ts, &body)),
            &body,
            &[]
        )
        .0,
        200
    );
    let answer = receiver.wait_for("/response/a").body;
    assert!(
        cited(&answer)
            .iter()
            .any(|d| d.starts_with("science/alpha/")),
        "{answer}"
    );
}

/// With a model configured, a question is answered in words: the model's
/// answer with its checked citations linked, the quotation its lines do not
/// hold listed as not verified, in blocks slack_sdk accepts.
#[test]
fn the_slack_manifest_asks_for_four_scopes_and_names_the_two_routes() {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/slack-app.yml"),
    )
    .expect("docs/slack-app.yml");
    let manifest: Value = serde_saphyr::from_str(&text).expect("yaml");
    assert_eq!(
        manifest["oauth_config"]["scopes"]["bot"],
        serde_json::json!(["commands", "app_mentions:read", "chat:write", "im:history"])
    );
    let command = &manifest["features"]["slash_commands"][0];
    assert_eq!(command["command"], "/cairn");
    assert!(
        command["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/slack/commands"))
    );
    let events = &manifest["settings"]["event_subscriptions"];
    assert!(
        events["request_url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/slack/events"))
    );
    assert_eq!(
        events["bot_events"],
        serde_json::json!(["app_mention", "message.im"])
    );
}
