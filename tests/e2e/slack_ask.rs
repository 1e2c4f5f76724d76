//! The Slack app with a configured model (issue 60): a slash command is
//! answered with `ask` (a "reading the index" message at once, updated with
//! the model's steps, then replaced by the answer through the command's
//! `response_url`), a mention likewise through `chat.postMessage` and
//! `chat.update`; against the scripted model and the local Slack receiver.

use crate::fixtures::World;
use crate::slack::{
    Received, Receiver, TEAM, check_blocks_with_slack_sdk, command_body, now, send, sign, start,
};
use serde_json::Value;
use std::time::{Duration, Instant};

#[test]
fn with_a_model_slack_answers_in_words_with_checked_citations() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    // The model takes a while over its second round, so the message shows
    // the steps before the answer replaces it.
    let model = crate::llm::Receiver::start(|r| {
        if r.body["messages"].as_array().is_some_and(|m| m.len() == 4) {
            std::thread::sleep(Duration::from_millis(1_700));
        }
        crate::ask::scripted(r)
    });
    let receiver = Receiver::start();
    let s = start(
        &w,
        &receiver,
        &["--llm-url", &model.url, "--llm-model", "tiny"],
    );
    let body = command_body("How do I fit a model?", TEAM, &receiver.url("/response/m"));
    let ts = now();
    let sent = Instant::now();
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
    // At once, a message saying the model is at work; then that message
    // replaced by the answer (`replace_original`).
    let first = receiver.wait_for("/response/m");
    println!(
        "slack with a scripted model: command to first posted message {:?}",
        first.at - sent
    );
    assert!(
        first.body["blocks"][0]["text"]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Reading the index for: _How do I fit a model?_")),
        "{}",
        first.body
    );
    assert_eq!(first.body["replace_original"], false);
    check_blocks_with_slack_sdk(&first.body);
    let last = wait_until(&receiver, |r| {
        r.path == "/response/m"
            && r.body["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("An answer"))
    });
    println!(
        "slack with a scripted model: command to the answer {:?}",
        last.at - sent
    );
    let message = last.body;
    assert_eq!(message["replace_original"], true, "{message}");
    let answer = message["blocks"][0]["text"]["text"].as_str().unwrap_or("");
    assert!(
        answer.starts_with("Call `def fit_model(data, t_E=1.0):` [1]"),
        "{message}"
    );
    let links = message["blocks"][1]["elements"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(
        links.starts_with("*[1]* <") && links.contains(&format!("|{}:5-7>", crate::ask::CORE)),
        "{message}"
    );
    assert!(
        message.to_string().contains("Not verified: fit_all(x)"),
        "{message}"
    );
    check_blocks_with_slack_sdk(&message);
    let uses = receiver
        .received()
        .iter()
        .filter(|r| r.path == "/response/m")
        .count();
    assert!(
        (2..=5).contains(&uses),
        "a response_url takes 5 uses: {uses}"
    );
    assert_eq!(
        model.requests().len(),
        3,
        "one ask: search, retrieve, answer"
    );
    // A mention: the working message posted in the thread, then updated in
    // place with `chat.update` and the `ts` Slack gave it.
    let mention = serde_json::json!({
        "type": "event_callback", "team_id": TEAM, "event_id": "Ev0101",
        "event": {"type": "app_mention", "user": "U0001", "channel": "C0001",
                  "ts": "1700000000.000100", "text": "<@U0BOT> How do I fit a model?"}
    })
    .to_string();
    let ts = now();
    assert_eq!(
        send(
            &s.url("/slack/events"),
            ts,
            Some(&sign(ts, &mention)),
            &mention,
            &[]
        )
        .0,
        200
    );
    let working = receiver.wait_for("/api/chat.postMessage");
    assert_eq!(working.body["thread_ts"], "1700000000.000100");
    let updated = wait_until(&receiver, |r| {
        r.path == "/api/chat.update"
            && r.body["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("An answer"))
    });
    assert_eq!(updated.authorization, "Bearer xoxb-test-token");
    assert_eq!(
        (&updated.body["channel"], &updated.body["ts"]),
        (&Value::from("C0001"), &Value::from("1700000009.000200"))
    );
    assert!(
        updated.body["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("An answer")),
        "{}",
        updated.body
    );
}

/// The first request `matches` accepts, within 10 s.
fn wait_until(receiver: &Receiver, matches: impl Fn(&Received) -> bool) -> Received {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(r) = receiver.received().into_iter().find(|r| matches(r)) {
            return r;
        }
        assert!(Instant::now() < until, "nothing matching was posted");
        std::thread::sleep(Duration::from_millis(20));
    }
}
