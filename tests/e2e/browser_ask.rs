//! The ask page in a real headless Chromium (issue 60): a question typed and
//! asked, the model's steps listed as they come, then the checked answer in
//! their place without a page load; typing there searches nothing.

use crate::browser::Browser;
use crate::fixtures::World;
use crate::serve_process::Server;
use serde_json::{Value, json};
use std::time::Duration;

#[test]
fn the_ask_page_streams_the_answer_in_a_real_browser() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    // The scripted model takes a while over its last round, so the steps
    // are on the page before the answer replaces them.
    let model = crate::llm::Receiver::start(|r| {
        if r.body["messages"].as_array().is_some_and(|m| m.len() == 6) {
            std::thread::sleep(Duration::from_millis(1_500));
        }
        crate::ask_stream::streaming(r)
    });
    let server = Server::start(
        &w,
        "out",
        &["--no-auth", "--llm-url", &model.url, "--llm-model", "tiny"],
    );
    let Some(mut b) = Browser::launch() else {
        return;
    };
    b.open(&server.url("/answer"));
    // A mark on this page: it survives only if the answer comes without a new page load.
    b.eval("window.cairnStayed = true; document.getElementById('q').focus(); true");
    b.call("Input.insertText", json!({"text": "How do I fit a model?"}));
    // Typing on the ask page searches nothing (the search page's search as you type).
    std::thread::sleep(Duration::from_millis(500));
    b.eval("document.querySelector('form.search button').click(); true");
    b.until("document.querySelectorAll('.steps li').length === 2");
    let steps = b.eval("document.querySelector('.steps').textContent");
    assert!(
        steps
            .as_str()
            .is_some_and(|s| s.contains("search_passages") && s.contains("retrieve")),
        "{steps}"
    );
    b.until("document.querySelector('article.answer') !== null");
    assert_eq!(b.eval("window.cairnStayed === true"), Value::Bool(true));
    let answer = b.eval("document.querySelector('article.answer').textContent");
    assert!(
        answer
            .as_str()
            .is_some_and(|a| a.starts_with("Call `def fit_model(data, t_E=1.0):` [1]")),
        "{answer}"
    );
    assert_eq!(
        b.eval("document.querySelector('ol.cited a').getAttribute('href')"),
        Value::from(format!("/doc/{}?lines=5-7", crate::ask::CORE))
    );
    assert_eq!(
        b.eval("location.search"),
        Value::from("?q=How+do+I+fit+a+model%3F")
    );
    assert!(
        !b.requests.iter().any(|u| u.contains("partial=1")),
        "{:?}",
        b.requests
    );
}
