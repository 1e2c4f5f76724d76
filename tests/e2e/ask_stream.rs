//! `ask` as it goes (issue 60): asked for server-sent events, `POST /ask`
//! and the ask page send each tool call as it runs and the model's draft
//! as it is written (the model asked to stream), then the checked answer;
//! a bad question is still an ordinary problem. Each caller's model tokens
//! are bounded (`--llm-tokens-per-minute`) and counted in `/metrics`.

use crate::ask::{CORE, scripted};
use crate::http::{bearer, content_type, parts, served};
use crate::llm::{Received, Receiver, Reply};
use actix_web::http::StatusCode;
use actix_web::test as atest;
use cairn_serve::llm::LlmConfig;
use serde_json::{Value, json};
use std::time::Duration;

/// The scripted model, streaming when asked to: its reply cut into chunks
/// as OpenAI streams them (the text in pieces, each tool call's arguments
/// in two), the usage last.
pub(crate) fn streaming(r: &Received) -> Reply {
    let Reply::Json(200, whole) = scripted(r) else {
        return Reply::Json(500, json!({"error": {"message": "unscripted"}}));
    };
    if r.body["stream"] != true {
        return Reply::Json(200, whole);
    }
    let chunk = |delta: Value, finish: Value| {
        json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            .to_string()
    };
    let message = &whole["choices"][0]["message"];
    let mut events = Vec::new();
    if let Some(text) = message["content"].as_str() {
        let cut = text
            .char_indices()
            .nth(text.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        for piece in [&text[..cut], &text[cut..]] {
            events.push(chunk(json!({"content": piece}), Value::Null));
        }
    }
    for (i, call) in message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let args = call["function"]["arguments"].as_str().unwrap_or("");
        let cut = args.len() / 2;
        events.push(chunk(
            json!({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                   "function": {"name": call["function"]["name"], "arguments": &args[..cut]}}]}),
            Value::Null,
        ));
        events.push(chunk(
            json!({"tool_calls": [{"index": i, "function": {"arguments": &args[cut..]}}]}),
            Value::Null,
        ));
    }
    events.push(chunk(
        json!({}),
        whole["choices"][0]["finish_reason"].clone(),
    ));
    events.push(json!({"choices": [], "usage": whole["usage"]}).to_string());
    events.push("[DONE]".to_owned());
    Reply::Events(events)
}

fn config(receiver: &Receiver) -> LlmConfig {
    LlmConfig::new(&receiver.url, "tiny", None, Duration::from_secs(10), 256).expect("config")
}

/// `POST /ask` as `token`'s holder, asking for server-sent events.
fn ask_for_events(token: &str, body: Value) -> atest::TestRequest {
    atest::TestRequest::post()
        .uri("/ask")
        .insert_header(bearer(token))
        .insert_header(("accept", "text/event-stream"))
        .set_json(body)
}

/// A stream's events, as (name, data) pairs.
fn events(text: &str) -> Vec<(String, String)> {
    text.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let mut name = String::new();
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = n.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push(d);
                }
            }
            (name, data.join("\n"))
        })
        .collect()
}

#[actix_web::test]
async fn ask_streams_its_steps_and_draft_then_the_checked_answer() {
    let receiver = Receiver::start(streaming);
    let s = served(None, |o| o.llm = Some(config(&receiver)));
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    let res = atest::call_service(
        &app,
        ask_for_events(&s.reader, json!({"question": "How do I fit a model?"})).to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(content_type(res.headers()), "text/event-stream");
    let text = String::from_utf8(atest::read_body(res).await.to_vec()).expect("utf8");
    let got = events(&text);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["step", "step", "draft", "draft", "answer"],
        "{text}"
    );
    let step: Value = serde_json::from_str(&got[0].1).expect("step json");
    assert_eq!(step["tool"], "search_passages", "{step}");
    assert!(step["ok"].as_bool().unwrap_or(false), "{step}");
    let retrieved: Value = serde_json::from_str(&got[1].1).expect("step json");
    assert_eq!(
        retrieved["returned"],
        json!([format!("{CORE}:5-7")]),
        "{retrieved}"
    );
    // The draft is the model's own words, the answer the checked ones.
    let draft: String = got[2..4]
        .iter()
        .map(|(_, d)| {
            serde_json::from_str::<Value>(d).expect("draft")["text"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert!(draft.contains(&format!("[{CORE}:5-7]")), "{draft}");
    let answer: Value = serde_json::from_str(&got[4].1).expect("answer json");
    assert!(
        answer["answer"]
            .as_str()
            .is_some_and(|a| a.starts_with("Call `def fit_model(data, t_E=1.0):` [1]")),
        "{answer}"
    );
    assert_eq!(answer["citations"][0]["doc_id"], CORE);
    assert_eq!(answer["steps"].as_array().map(Vec::len), Some(2));
    // Every round was streamed, asking for its usage.
    for r in receiver.requests() {
        assert_eq!(r.body["stream"], true);
        assert_eq!(r.body["stream_options"]["include_usage"], true);
    }
    assert_eq!(answer["tokens"], 39, "the streamed usage: 13 a round");
    // A bad question is refused as a problem, before any event.
    let before = receiver.requests().len();
    let (status, ct, body) = parts(
        atest::call_service(
            &app,
            ask_for_events(&s.reader, json!({"question": " "})).to_request(),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, ct.as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, "application/problem+json")
    );
    assert_eq!(body["field"], "question");
    assert_eq!(receiver.requests().len(), before);
}

#[actix_web::test]
async fn the_ask_page_streams_its_steps_as_html() {
    let receiver = Receiver::start(streaming);
    let s = served(None, |o| o.llm = Some(config(&receiver)));
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    let res = atest::call_service(
        &app,
        atest::TestRequest::get()
            .uri("/answer?q=How+do+I+fit+a+model%3F")
            .insert_header(bearer(&s.reader))
            .insert_header(("accept", "text/event-stream"))
            .to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    let text = String::from_utf8(atest::read_body(res).await.to_vec()).expect("utf8");
    let got = events(&text);
    assert_eq!(got[0].0, "step", "{text}");
    assert!(
        got[0].1.starts_with("<li><code>search_passages</code>"),
        "{text}"
    );
    let (last, html) = got.last().expect("events");
    assert_eq!(last, "answer", "{text}");
    assert!(html.contains("<article class=\"answer\">"), "{html}");
    assert!(
        html.contains(&format!("href=\"/doc/{CORE}?lines=5-7\"")),
        "{html}"
    );
    // The draft is the model's text as written (the script sets it as text).
    assert!(
        got.iter()
            .any(|(n, d)| n == "draft" && d.contains("fit_model")),
        "{text}"
    );
}

#[actix_web::test]
async fn each_callers_model_tokens_are_bounded_and_counted() {
    let receiver = Receiver::start(scripted);
    let limited = config(&receiver)
        .with_tokens_per_minute(Some(30))
        .expect("config");
    let s = served(None, |o| o.llm = Some(limited));
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    let ask = |token: &str| {
        atest::TestRequest::post()
            .uri("/ask")
            .insert_header(bearer(token))
            .set_json(json!({"question": "How do I fit a model?"}))
            .to_request()
    };
    // Three rounds of 13 tokens: the third is allowed (some were left) and
    // leaves the caller in debt.
    let (status, _, body) = parts(atest::call_service(&app, ask(&s.reader)).await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sent = receiver.requests().len();
    let res = atest::call_service(&app, ask(&s.reader)).await;
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u32 = res
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("retry-after");
    assert!((1..=60).contains(&wait), "{wait}");
    let (_, _, problem) = parts(res).await;
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("model tokens")),
        "{problem}"
    );
    // The gateway draws on the same tokens.
    let (status, _, _) = parts(
        atest::call_service(
            &app,
            atest::TestRequest::post()
                .uri("/v1/chat/completions")
                .insert_header(bearer(&s.reader))
                .set_json(json!({"messages": [{"role": "user", "content": "fit"}]}))
                .to_request(),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(receiver.requests().len(), sent, "refused before the model");
    // Another caller has its own.
    let (status, _, _) = parts(atest::call_service(&app, ask(&s.team)).await).await;
    assert_eq!(status, StatusCode::OK);
    // Every token read and written is counted.
    let res = atest::call_service(
        &app,
        atest::TestRequest::get()
            .uri("/metrics")
            .insert_header(bearer(&s.admin))
            .to_request(),
    )
    .await;
    let text = String::from_utf8(atest::read_body(res).await.to_vec()).expect("utf8");
    assert!(
        text.contains("cairn_model_tokens_total{kind=\"prompt\"} 64"),
        "{text}"
    );
    assert!(
        text.contains("cairn_model_tokens_total{kind=\"completion\"} 14"),
        "{text}"
    );
}

#[actix_web::test]
async fn a_hostile_stream_stays_bounded() {
    // Round 0: a flood of tool calls at far indexes and one unknown tool;
    // round 1: an unreadable chunk after some text.
    let receiver = Receiver::start(|r| {
        let round = r.body["messages"].as_array().map_or(0, Vec::len);
        let mut events: Vec<String> = (0..200)
            .map(|i| {
                json!({"choices": [{"delta": {"tool_calls": [{"index": i, "id": format!("c{i}"),
                "function": {"name": "no_such_tool", "arguments": "{}"}}]}}]})
                .to_string()
            })
            .collect();
        events.push(json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}).to_string());
        events.push("[DONE]".to_owned());
        if round > 2 {
            events = vec![
                json!({"choices": [{"delta": {"content": "partly"}}]}).to_string(),
                "{not json".to_owned(),
            ];
        }
        Reply::Events(events)
    });
    let s = served(None, |o| o.llm = Some(config(&receiver)));
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    let res = atest::call_service(
        &app,
        ask_for_events(&s.reader, json!({"question": "anything", "max_steps": 2})).to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    let text = String::from_utf8(atest::read_body(res).await.to_vec()).expect("utf8");
    let got = events(&text);
    let steps = got.iter().filter(|(n, _)| n == "step").count();
    assert_eq!(
        steps, 16,
        "at most 16 calls assembled, 4 run, the rest skipped: {text}"
    );
    let (last, problem) = got.last().expect("events");
    assert_eq!(last, "error", "{text}");
    let problem: Value = serde_json::from_str(problem).expect("problem");
    assert_eq!(problem["code"], "model_unavailable", "{problem}");
    assert_eq!(receiver.requests().len(), 2);
}

#[actix_web::test]
async fn a_stream_cut_before_the_model_finished_is_the_models_failure() {
    // Text, then the connection closes: no finish_reason, no [DONE].
    let receiver = Receiver::start(|_| {
        Reply::Events(vec![
            json!({"choices": [{"delta": {"content": "I will now"}}]}).to_string(),
        ])
    });
    let s = served(None, |o| o.llm = Some(config(&receiver)));
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    let res = atest::call_service(
        &app,
        ask_for_events(&s.reader, json!({"question": "anything"})).to_request(),
    )
    .await;
    let text = String::from_utf8(atest::read_body(res).await.to_vec()).expect("utf8");
    let got = events(&text);
    // What was written is shown as the draft it was; the answer is the failure.
    assert_eq!(
        got.first().map(|(n, _)| n.as_str()),
        Some("draft"),
        "{text}"
    );
    let (last, problem) = got.last().expect("events");
    assert_eq!(last, "error", "{text}");
    let problem: Value = serde_json::from_str(problem).expect("problem");
    assert_eq!(problem["code"], "model_unavailable", "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("not a chat completion")),
        "{problem}"
    );
}
