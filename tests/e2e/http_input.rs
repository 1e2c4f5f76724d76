//! The HTTP API's edges in process: each limit just under, at and over, and
//! bad input answered with problem+json naming the field.

use crate::http::{assert_problem, bearer, call, get, parts, post, served};
use actix_web::http::StatusCode;
use actix_web::test;
use cairn_serve::server::app;
use serde_json::json;

#[actix_web::test]
async fn limits_just_under_at_and_over() {
    let s = served(None, |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let t = &s.reader;
    let ok = StatusCode::OK;
    let bad = StatusCode::UNPROCESSABLE_ENTITY;

    for (q, want) in [(999, ok), (1000, ok), (1001, bad)] {
        let (st, ct, body) = call!(app, post("/search", t, json!({"query": "a".repeat(q)})));
        if want == ok {
            assert_eq!(st, ok, "{q} chars: {body}");
        } else {
            assert_problem(st, &ct, &body, bad, "invalid_argument");
            assert_eq!(body["field"], "query");
        }
    }
    for (limit, want) in [(49, ok), (50, ok), (51, bad)] {
        let (st, ct, body) = call!(app, get(&format!("/search?query=fit&limit={limit}"), t));
        if want == ok {
            assert_eq!(st, ok, "limit {limit}: {body}");
        } else {
            assert_problem(st, &ct, &body, bad, "invalid_argument");
            assert_eq!(body["field"], "limit");
        }
    }
    let item = json!({"doc_id": "science/alpha/README.md", "start": 1, "end": 2});
    for (n, want) in [(49, ok), (50, ok), (51, bad)] {
        let (st, ct, body) = call!(
            app,
            post(
                "/retrieve/batch",
                t,
                json!({ "items": vec![item.clone(); n] })
            )
        );
        if want == ok {
            assert_eq!(st, ok, "{n} items: {body}");
            assert_eq!(body["items"].as_array().map(Vec::len), Some(n));
        } else {
            assert_problem(st, &ct, &body, bad, "invalid_argument");
            assert_eq!(body["field"], "items");
        }
    }
    // Spans: at most 400 lines.
    let long = "science/alpha/docs/long.txt";
    for (end, clamped, got) in [(399, false, 399), (400, false, 400), (401, true, 400)] {
        let (st, _, body) = call!(
            app,
            post(
                "/retrieve",
                t,
                json!({"doc_id": long, "start": 1, "end": end})
            )
        );
        assert_eq!(st, ok);
        assert_eq!(body["clamped"], clamped, "end {end}");
        assert_eq!(body["end_line"], got);
        assert_eq!(
            body["text"].as_str().map(|t| t.lines().count()),
            Some(got as usize)
        );
    }
    let doc = "science/alpha/src/alpha/core.py";
    let (_, _, body) = call!(
        app,
        post(
            "/retrieve",
            t,
            json!({"doc_id": doc, "start": 10, "end": 99})
        )
    );
    assert_eq!(
        (body["end_line"].as_u64(), body["clamped"].as_bool()),
        (Some(16), Some(true))
    );
    let (st, ct, body) = call!(
        app,
        post("/retrieve", t, json!({"doc_id": doc, "start": 0, "end": 3}))
    );
    assert_problem(st, &ct, &body, bad, "invalid_argument");
    assert_eq!(body["field"], "start");
    let (st, ct, body) = call!(
        app,
        post("/retrieve", t, json!({"doc_id": doc, "start": 5, "end": 3}))
    );
    assert_problem(st, &ct, &body, bad, "invalid_argument");
    assert_eq!(body["field"], "end");

    // The body limit: 64 KiB.
    let limit = cairn_serve::http::MAX_BODY_BYTES;
    let padded = |size: usize| {
        let mut body = r#"{"query": "fit""#.to_owned();
        let tail = "}";
        body.push_str(&" ".repeat(size - body.len() - tail.len()));
        body.push_str(tail);
        assert_eq!(body.len(), size);
        body
    };
    for (size, want) in [
        (limit - 1, ok),
        (limit, ok),
        (limit + 1, StatusCode::PAYLOAD_TOO_LARGE),
    ] {
        let req = test::TestRequest::post()
            .uri("/search")
            .insert_header(bearer(t))
            .insert_header(("content-type", "application/json"))
            .set_payload(padded(size));
        let (st, ct, body) = call!(app, req);
        if want == ok {
            assert_eq!(st, ok, "{size} bytes: {body}");
        } else {
            assert_problem(st, &ct, &body, want, "payload_too_large");
        }
    }
}

#[actix_web::test]
async fn bad_input_gets_problems_naming_the_field() {
    let s = served(None, |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let t = &s.reader;
    let cases: Vec<(test::TestRequest, StatusCode, &str, Option<&str>)> = vec![
        (
            get("/search?limit=3", t),
            StatusCode::BAD_REQUEST,
            "malformed_request",
            Some("query"),
        ),
        (
            get("/search?query=x&limit=ten", t),
            StatusCode::BAD_REQUEST,
            "malformed_request",
            Some("limit"),
        ),
        (
            get("/search?query=x&mode=fast", t),
            StatusCode::BAD_REQUEST,
            "malformed_request",
            Some("mode"),
        ),
        (
            get("/search?query=x&colour=red", t),
            StatusCode::BAD_REQUEST,
            "malformed_request",
            Some("colour"),
        ),
        (
            get("/search?query=x&doctype=poem", t),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_argument",
            Some("doctype"),
        ),
        (
            get("/search?query=x&threshold=2", t),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_argument",
            Some("threshold"),
        ),
        (
            post("/retrieve", t, json!({"doc_id": "../etc/passwd"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_argument",
            Some("doc_id"),
        ),
        (
            post("/retrieve", t, json!({"doc_id": "science/alpha/%2e%2e/x"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_argument",
            Some("doc_id"),
        ),
        (
            post(
                "/retrieve",
                t,
                json!({"doc_id": "science/alpha/missing.py"}),
            ),
            StatusCode::NOT_FOUND,
            "not_found",
            Some("doc_id"),
        ),
        (
            post("/retrieve", t, json!({"doc_id": 7})),
            StatusCode::BAD_REQUEST,
            "malformed_request",
            Some("doc_id"),
        ),
        (
            post(
                "/retrieve/batch",
                t,
                json!({"items": [{"doc_id": "a/b/c", "start": "x"}]}),
            ),
            StatusCode::BAD_REQUEST,
            "malformed_request",
            Some("items[0].start"),
        ),
        (
            post("/context", t, json!({"max_tokens": 50, "query": "x"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_argument",
            Some("max_tokens"),
        ),
        (
            post("/context", t, json!({})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_argument",
            Some("query"),
        ),
        (get("/nowhere", t), StatusCode::NOT_FOUND, "not_found", None),
        (
            test::TestRequest::delete()
                .uri("/search")
                .insert_header(bearer(t)),
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            None,
        ),
    ];
    for (req, want, code, field) in cases {
        let (st, ct, body) = call!(app, req);
        assert_problem(st, &ct, &body, want, code);
        assert_eq!(body["field"].as_str(), field, "{body}");
    }
    let req = test::TestRequest::post()
        .uri("/search")
        .insert_header(bearer(t))
        .insert_header(("content-type", "application/json"))
        .set_payload("{\"query\": ");
    let (st, ct, body) = call!(app, req);
    assert_problem(st, &ct, &body, StatusCode::BAD_REQUEST, "malformed_request");
    // A field given twice is refused, naming it, not silently last-wins.
    let req = test::TestRequest::post()
        .uri("/search")
        .insert_header(bearer(t))
        .insert_header(("content-type", "application/json"))
        .set_payload(r#"{"query": "fit", "query": "install"}"#);
    let (st, ct, body) = call!(app, req);
    assert_problem(st, &ct, &body, StatusCode::BAD_REQUEST, "malformed_request");
    assert_eq!(body["field"], "query", "{body}");
    let req = test::TestRequest::post()
        .uri("/search")
        .insert_header(bearer(t))
        .insert_header(("content-type", "text/plain"))
        .set_payload("query");
    let (st, ct, body) = call!(app, req);
    assert_problem(
        st,
        &ct,
        &body,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    );

    // The trace id in the body is the one in the header (and in the log line).
    let res = test::call_service(&app, get("/search", t).to_request()).await;
    let header = res
        .headers()
        .get("x-trace-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let (_, _, body) = parts(res).await;
    assert_eq!(body["trace_id"].as_str(), header.as_deref());
    // A caller's own request id is used when it is safe to echo.
    let req = get("/search", t).insert_header(("x-request-id", "bot-42"));
    let (_, _, body) = call!(app, req);
    assert_eq!(body["trace_id"], "bot-42");
}
