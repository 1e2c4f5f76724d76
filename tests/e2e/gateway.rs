//! The chat gateway (`POST /v1/chat/completions`, issue 60) in process on
//! the real app factory, in front of the scripted OpenAI-compatible
//! receiver: what the model is sent (the caller's request grounded with the
//! passages its caller may see, cairn's own fields taken out, the configured
//! model and token bound), what the caller gets back (the model's answer and
//! the citations), and the refusals (bad fields, a failing model, no model,
//! no credentials) with the key never in an answer.

use crate::http::{bearer, parts, served};
use crate::llm::{Receiver, Reply, completion};
use actix_web::http::StatusCode;
use actix_web::test;
use cairn_serve::llm::{ApiKey, LlmConfig};
use cairn_serve::server::app;
use serde_json::{Value, json};
use std::time::Duration;

pub(crate) const KEY: &str = "sk-gateway-5c1d9e7a";

/// The configuration of `receiver`, with [`KEY`] from a mode-600 file.
pub(crate) fn config(receiver: &Receiver, dir: &std::path::Path) -> LlmConfig {
    use std::os::unix::fs::PermissionsExt;
    let file = dir.join("llm.key");
    std::fs::write(&file, KEY).expect("key");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let key = ApiKey::from_file(&file).expect("key file");
    LlmConfig::new(
        &receiver.url,
        "tiny",
        Some(key),
        Duration::from_secs(10),
        256,
    )
    .expect("config")
}

/// A request asking how to fit the model, with a system message of its own.
fn asking(extra: Value) -> Value {
    let mut body = json!({
        "model": "whatever-the-caller-says",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "how do I fit the model with fit_model"}
        ],
        "temperature": 0.1,
        "max_tokens": 100000,
        "max_completion_tokens": 99999,
        "n": 3
    });
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    body
}

fn post(token: &str, body: &Value) -> test::TestRequest {
    test::TestRequest::post()
        .uri("/v1/chat/completions")
        .insert_header(bearer(token))
        .set_json(body)
}

#[actix_web::test]
async fn a_grounded_request_reaches_the_model_with_the_callers_passages_only() {
    let receiver = Receiver::start(|r| match r.body["stream"].as_bool() {
        Some(true) => Reply::Events(vec![
            json!({"choices": [{"index": 0, "delta": {"content": "Call "}}]}).to_string(),
            json!({"choices": [{"index": 0, "delta": {"content": "fit_model [1]."}}]}).to_string(),
            "[DONE]".to_owned(),
        ]),
        _ => Reply::Json(200, completion("Call fit_model [1].")),
    });
    let dir = tempfile::tempdir().expect("dir");
    let llm = config(&receiver, dir.path());
    let s = served(Some("team-a"), |o| o.llm = Some(llm));
    let app = test::init_service(app(s.state.clone())).await;

    let (status, _, answer) =
        parts(test::call_service(&app, post(&s.team, &asking(json!({}))).to_request()).await).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "Call fit_model [1]."
    );
    let citations = answer["citations"].as_array().expect("citations");
    assert!(!citations.is_empty(), "{answer}");
    assert!(
        citations
            .iter()
            .any(|c| c["doc_id"].as_str().is_some_and(|d| d.contains("/alpha/"))),
        "{answer}"
    );
    for c in citations {
        assert!(
            c["permalink"]
                .as_str()
                .is_some_and(|p| p.contains("/blob/") && p.contains("#L")),
            "{c}"
        );
        assert_eq!(c["content_sha256"].as_str().map(str::len), Some(64), "{c}");
    }
    assert_eq!(answer["insufficient_evidence"], false);
    assert!(answer["index_version"].is_string());

    let sent = receiver.requests();
    assert_eq!(sent.len(), 1);
    let body = &sent[0].body;
    assert_eq!(sent[0].line, "POST /v1/chat/completions");
    assert_eq!(
        sent[0].authorization.as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(
        body["model"], "tiny",
        "the configured model, not the caller's"
    );
    assert_eq!(body["max_tokens"], 256, "capped at --llm-max-tokens");
    assert!(
        body.get("max_completion_tokens").is_none() && body.get("n").is_none(),
        "{body}"
    );
    assert_eq!(body["stream"], false);
    assert_eq!(
        body["temperature"], 0.1,
        "the caller's own fields pass through"
    );
    assert!(
        body.get("rag").is_none() && body.get("use_rag").is_none(),
        "{body}"
    );
    let system = body["messages"][0]["content"]
        .as_str()
        .expect("system text");
    assert!(
        system.starts_with("Be brief.\n\nPassages from the cairn index"),
        "{system}"
    );
    let first = citations[0]["doc_id"].as_str().expect("doc id");
    assert!(system.contains(first), "{system}");
    assert_eq!(body["messages"][1], asking(json!({}))["messages"][1]);

    // Another caller's prompt never holds a document it may not see.
    let (status, _, answer) =
        parts(test::call_service(&app, post(&s.reader, &asking(json!({}))).to_request()).await)
            .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let sent = receiver.requests();
    let system = sent[1].body["messages"][0]["content"]
        .as_str()
        .expect("system text");
    assert!(!system.contains("/alpha/"), "{system}");
    assert!(
        !answer["citations"].to_string().contains("/alpha/"),
        "{answer}"
    );

    // Streamed: the model's events as they came, then the citations, then the end.
    let streamed = asking(json!({"stream": true}));
    let res = test::call_service(&app, post(&s.team, &streamed).to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
    let ct = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    assert_eq!(ct, "text/event-stream");
    let text = String::from_utf8(test::read_body(res).await.to_vec()).expect("utf8");
    let events: Vec<&str> = text.split("\n\n").filter(|e| !e.is_empty()).collect();
    assert_eq!(events.len(), 4, "{text}");
    assert!(
        events[0].contains("\"Call \"") && events[1].contains("fit_model"),
        "{text}"
    );
    let grounds: Value =
        serde_json::from_str(events[2].trim_start_matches("data: ")).expect("json");
    assert_eq!(grounds["object"], "cairn.citations");
    assert!(
        grounds["citations"]
            .as_array()
            .is_some_and(|c| !c.is_empty()),
        "{grounds}"
    );
    assert_eq!(events[3], "data: [DONE]");
    assert_eq!(receiver.requests()[2].body["stream"], true);

    // Opting out forwards the conversation as it came.
    let plain = asking(json!({"use_rag": false}));
    let (status, _, answer) =
        parts(test::call_service(&app, post(&s.team, &plain).to_request()).await).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer.get("citations").is_none(), "{answer}");
    assert_eq!(receiver.requests()[3].body["messages"], plain["messages"]);
}

#[actix_web::test]
async fn bad_fields_a_failing_model_and_missing_credentials_are_refused() {
    // A model that fails, echoing the key it was sent.
    let receiver = Receiver::start(|r| {
        Reply::Json(
            500,
            json!({"error": format!("upstream broke; you sent {:?}", r.authorization)}),
        )
    });
    let dir = tempfile::tempdir().expect("dir");
    let llm = config(&receiver, dir.path());
    let s = served(None, |o| {
        o.llm = Some(llm);
        o.public_read = true;
    });
    let app = test::init_service(app(s.state.clone())).await;

    let res = test::call_service(&app, post(&s.reader, &asking(json!({}))).to_request()).await;
    let retry = res.headers().get("retry-after").cloned();
    let (status, ct, problem) = parts(res).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{problem}");
    assert_eq!(ct, "application/problem+json");
    assert_eq!(problem["code"], "model_unavailable");
    assert!(retry.is_some(), "a 500 upstream may pass: Retry-After");
    let text = problem.to_string();
    // A failure's status, not the endpoint's words (they may name an account).
    assert!(
        text.contains("answered 500") && !text.contains("upstream broke"),
        "{text}"
    );
    assert!(
        !text.contains(KEY) && !text.contains(&receiver.url),
        "{text}"
    );

    // Streamed or not, the model's failure comes before any event: a problem.
    let streamed = post(&s.reader, &asking(json!({"stream": true})));
    let (status, ct, problem) = parts(test::call_service(&app, streamed.to_request()).await).await;
    assert_eq!(
        (status, ct.as_str()),
        (StatusCode::BAD_GATEWAY, "application/problem+json"),
        "{problem}"
    );
    assert!(!problem.to_string().contains(KEY), "{problem}");

    // An unknown field does not parse (400, as everywhere in the API); a
    // known one with a value that cannot be used is 422; both name it.
    let (bad, invalid) = (StatusCode::BAD_REQUEST, StatusCode::UNPROCESSABLE_ENTITY);
    for (extra, want, field) in [
        (json!({"rag": {"bogus": 1}}), bad, "rag.bogus"),
        (
            json!({"rag": {"toolkit": "nosuch"}}),
            invalid,
            "rag.toolkit",
        ),
        (json!({"rag": {"query": "other"}}), invalid, "rag.query"),
        (json!({"use_rag": "yes"}), invalid, "use_rag"),
        (json!({"stream": "yes"}), invalid, "stream"),
        (
            json!({"messages": [{"role": "assistant", "content": "hi"}]}),
            invalid,
            "messages",
        ),
    ] {
        let before = receiver.requests().len();
        let request = post(&s.reader, &asking(extra.clone())).to_request();
        let (status, _, problem) = parts(test::call_service(&app, request).await).await;
        assert_eq!(status, want, "{extra}: {problem}");
        assert_eq!(problem["field"], field, "{extra}: {problem}");
        assert_eq!(
            receiver.requests().len(),
            before,
            "{extra} reached the model"
        );
    }

    // --public-read answers anonymous searches, but not the model's tokens.
    let req = test::TestRequest::post()
        .uri("/v1/chat/completions")
        .set_json(asking(json!({})));
    let (status, _, problem) = parts(test::call_service(&app, req.to_request()).await).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{problem}");

    // Without a model there is no gateway.
    let bare = served(None, |_| {});
    let without = test::init_service(cairn_serve::server::app(bare.state.clone())).await;
    let (status, _, _) = parts(
        test::call_service(
            &without,
            post(&bare.reader, &asking(json!({}))).to_request(),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// Oversized, compressed and non-JSON bodies to the gateway and `ask` are
/// refused before anything is parsed, and none of them reaches the model.
#[actix_web::test]
async fn hostile_bodies_never_reach_the_model() {
    let receiver = Receiver::start(|_| Reply::Json(200, completion("ok")));
    let dir = tempfile::tempdir().expect("dir");
    let llm = config(&receiver, dir.path());
    let s = served(None, |o| o.llm = Some(llm));
    let app = test::init_service(cairn_serve::server::app(s.state.clone())).await;
    let long = "x".repeat(cairn_serve::http::MAX_BODY_BYTES + 1);
    let oversized = json!({"messages": [{"role": "user", "content": long}]}).to_string();
    let small = asking(json!({})).to_string();
    for path in ["/v1/chat/completions", "/ask"] {
        for (body, headers, want) in [
            (
                oversized.clone(),
                vec![("content-type", "application/json")],
                StatusCode::PAYLOAD_TOO_LARGE,
            ),
            (
                small.clone(),
                vec![
                    ("content-type", "application/json"),
                    ("content-encoding", "gzip"),
                ],
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ),
            (
                small.clone(),
                vec![("content-type", "text/plain")],
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ),
            (
                "{\"messages\": [".to_owned(),
                vec![("content-type", "application/json")],
                StatusCode::BAD_REQUEST,
            ),
        ] {
            let mut req = test::TestRequest::post()
                .uri(path)
                .insert_header(bearer(&s.team))
                .set_payload(body);
            for h in headers {
                req = req.insert_header(h);
            }
            let (status, ct, problem) =
                parts(test::call_service(&app, req.to_request()).await).await;
            assert_eq!(status, want, "{path}: {problem}");
            assert_eq!(ct, "application/problem+json", "{path}");
        }
    }
    assert!(receiver.requests().is_empty(), "{:?}", receiver.requests());
}
