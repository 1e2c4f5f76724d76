//! Who may call what over HTTP: the auth matrix and groups (with a property
//! test over queries), rate limits, a full queue and a handler's panic.

use crate::http::{assert_problem, call, content_type, get, parts, post, served};
use actix_web::http::StatusCode;
use actix_web::{test, web};
use cairn_serve::auth::TokenStore;
use cairn_serve::server::app;
use serde_json::{Value, json};

#[actix_web::test]
async fn auth_matrix_and_acl() {
    let s = served(Some("team-a"), |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let secret = "science/alpha/src/alpha/core.py";

    // No token, a bad token, a malformed header.
    let (st, ct, body) = call!(app, test::TestRequest::get().uri("/search?query=fit"));
    assert_problem(st, &ct, &body, StatusCode::UNAUTHORIZED, "unauthorized");
    let res = test::call_service(
        &app,
        test::TestRequest::get()
            .uri("/search?query=fit")
            .to_request(),
    )
    .await;
    assert!(res.headers().contains_key("www-authenticate"));
    let (st, ct, body) = call!(app, get("/search?query=fit", "cairn_0000"));
    assert_problem(st, &ct, &body, StatusCode::UNAUTHORIZED, "unauthorized");
    let req = test::TestRequest::get()
        .uri("/search?query=fit")
        .insert_header(("Authorization", "Basic dXNlcjpwYXNz"));
    let (st, ct, body) = call!(app, req);
    assert_problem(st, &ct, &body, StatusCode::UNAUTHORIZED, "unauthorized");

    // A reader without team-a: the restricted doc does not exist for them.
    let (st, _, r) = call!(app, get("/search?query=fit_model&limit=50", &s.reader));
    assert_eq!(st, StatusCode::OK);
    assert!(
        r["hits"]
            .as_array()
            .is_some_and(|h| h.iter().all(|h| h["repo"] != "alpha")),
        "{r}"
    );
    let (st, ct, missing) = call!(
        app,
        post(
            "/retrieve",
            &s.reader,
            json!({"doc_id": "science/alpha/nope.py"})
        )
    );
    assert_problem(st, &ct, &missing, StatusCode::NOT_FOUND, "not_found");
    let (st, ct, hidden) = call!(app, post("/retrieve", &s.reader, json!({"doc_id": secret})));
    assert_problem(st, &ct, &hidden, StatusCode::NOT_FOUND, "not_found");
    let strip = |v: &Value| {
        let mut v = v.clone();
        v["trace_id"] = json!(null);
        v["detail"] = json!(null);
        v
    };
    assert_eq!(strip(&hidden), strip(&missing), "no existence leak");
    let (_, _, tree) = call!(app, get("/tree?depth=5", &s.reader));
    assert!(!tree.to_string().contains("alpha"), "{tree}");
    let (_, _, version) = call!(app, get("/version", &s.reader));
    assert!(!version.to_string().contains("alpha"), "{version}");
    let (_, _, ctx) = call!(
        app,
        post(
            "/context",
            &s.reader,
            json!({"query": "fit_model", "threshold": 0.0})
        )
    );
    assert!(!ctx.to_string().contains("science/alpha"), "{ctx}");

    // A team-a member sees it.
    let (st, _, r) = call!(app, post("/retrieve", &s.team, json!({"doc_id": secret})));
    assert_eq!(st, StatusCode::OK, "{r}");
    let (_, _, r) = call!(app, get("/search?query=fit_model&limit=50", &s.team));
    assert!(
        r["hits"]
            .as_array()
            .is_some_and(|h| h.iter().any(|h| h["repo"] == "alpha"))
    );

    // Weights: admin only.
    let w = json!({"doc_id": "tools/beta/README.md", "multiplier": 2});
    let (st, ct, body) = call!(app, post("/weight", &s.team, w.clone()));
    assert_problem(st, &ct, &body, StatusCode::FORBIDDEN, "forbidden");
    let (st, _, _) = call!(app, post("/weight", &s.admin, w));
    assert_eq!(st, StatusCode::OK);

    // Revoked tokens stop working once the server rereads the file.
    TokenStore::new(s.w.path("tokens.json"))
        .revoke("team")
        .expect("revoke");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(s.w.path("tokens.json"))
        .and_then(|f| f.set_modified(later))
        .expect("touch");
    s.state.check_for_changes(false);
    let (st, ct, body) = call!(app, get("/search?query=fit", &s.team));
    assert_problem(st, &ct, &body, StatusCode::UNAUTHORIZED, "unauthorized");

    // Origins: an unknown browser origin is refused before anything else.
    let req = get("/search?query=fit", &s.reader).insert_header(("Origin", "http://evil.example"));
    let (st, ct, body) = call!(app, req);
    assert_problem(st, &ct, &body, StatusCode::FORBIDDEN, "forbidden");
    let req =
        get("/search?query=fit", &s.reader).insert_header(("Origin", "http://localhost:8080"));
    let (st, _, _) = call!(app, req);
    assert_eq!(st, StatusCode::OK);
}

#[actix_web::test]
async fn rate_limits_answer_429_with_retry_after() {
    let s = served(None, |o| o.rate_limit = Some(3));
    let app = test::init_service(app(s.state.clone())).await;
    for _ in 0..3 {
        let (st, _, _) = call!(app, get("/version", &s.reader));
        assert_eq!(st, StatusCode::OK);
    }
    let res = test::call_service(&app, get("/version", &s.reader).to_request()).await;
    assert_eq!(
        res.headers().get("retry-after").map(|v| v.as_bytes()),
        Some(&b"20"[..])
    );
    let (st, ct, body) = parts(res).await;
    assert_problem(
        st,
        &ct,
        &body,
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
    );
    let (st, _, _) = call!(app, get("/version", &s.team));
    assert_eq!(st, StatusCode::OK, "other callers keep their budget");
    let (st, _, _) = call!(app, test::TestRequest::get().uri("/health"));
    assert_eq!(st, StatusCode::OK, "probes are not rate limited");
}

#[actix_web::test]
async fn a_full_queue_answers_503_and_a_panic_500() {
    // No CPU worker can take a job: the queue of one fills at once.
    let s = served(None, |o| {
        o.cpu_workers = 1;
        o.queue = 1;
        o.deadline = std::time::Duration::from_millis(300);
    });
    let blocker = s.state.clone();
    // Occupy the only worker and the only queue slot for longer than the deadline.
    let hold = || std::thread::sleep(std::time::Duration::from_millis(800));
    let pause = || actix_web::rt::time::sleep(std::time::Duration::from_millis(100));
    let a = actix_web::rt::spawn({
        let st = blocker.clone();
        async move {
            st.pool
                .run(st.deadline_at(), Default::default(), hold)
                .await
        }
    });
    pause().await; // the worker has taken it
    let b = actix_web::rt::spawn({
        let st = blocker.clone();
        async move {
            st.pool
                .run(st.deadline_at(), Default::default(), hold)
                .await
        }
    });
    pause().await; // and this one waits in the queue
    let app = test::init_service(app(s.state.clone()).route(
        "/explode",
        web::get().to(|| async {
            if std::hint::black_box(true) {
                panic!("kaboom: secret internals");
            }
            "unreachable"
        }),
    ))
    .await;
    let res = test::call_service(&app, get("/search?query=fit", &s.reader).to_request()).await;
    assert!(res.headers().contains_key("retry-after"));
    let (st, ct, body) = parts(res).await;
    assert_problem(
        st,
        &ct,
        &body,
        StatusCode::SERVICE_UNAVAILABLE,
        "overloaded",
    );
    // Bad input is refused before it would queue: 400, not 503, even now.
    let res = test::call_service(&app, get("/search?limit=3", &s.reader).to_request()).await;
    let (st, ct, body) = parts(res).await;
    assert_problem(st, &ct, &body, StatusCode::BAD_REQUEST, "malformed_request");
    let _ = (a.await, b.await);

    // A panic leaves the middleware as an error, which the server answers with
    // its own response (what actix's dispatcher sends on the wire).
    let err = test::try_call_service(&app, get("/explode", &s.reader).to_request())
        .await
        .err()
        .expect("the panic became an error");
    let res = err.error_response();
    assert!(res.headers().contains_key("x-trace-id"));
    let status = res.status();
    let ct = content_type(res.headers());
    let bytes = actix_web::body::to_bytes(res.into_body())
        .await
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    assert_problem(
        status,
        &ct,
        &body,
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
    );
    assert!(
        !body.to_string().contains("kaboom"),
        "no panic text to clients"
    );
    let (st, _, _) = call!(app, get("/version", &s.reader));
    assert_eq!(st, StatusCode::OK, "the server carries on");
}

mod acl_property {
    use crate::fixtures::World;
    use crate::http::{get, parts, post, served};
    use actix_web::http::StatusCode;
    use actix_web::{test as atest, web};
    use cairn_serve::http::AppState;
    use cairn_serve::server::app;
    use proptest::prelude::*;
    use serde_json::json;
    use std::sync::Arc;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        /// Whatever the query, filters and mode, a caller only ever sees its groups' documents.
        #[test]
        fn results_stay_within_the_callers_groups(
            query in "(fit|model|alpha|beta|magnification|lens|install|data|t_E|the){1,4}",
            mode in prop::sample::select(vec!["hybrid", "bm25", "vector"]),
            as_team in any::<bool>(),
        ) {
            let s = SERVED.with(|s| s.clone());
            let token = if as_team { s.1.clone() } else { s.2.clone() };
            let sys = actix_web::rt::System::new();
            sys.block_on(async {
                let app = atest::init_service(app(s.0.clone())).await;
                let uri = format!("/search?query={}&mode={mode}&limit=50", query.replace(' ', "+"));
                let (st, _, body) = parts(atest::call_service(&app, get(&uri, &token).to_request()).await).await;
                prop_assert_eq!(st, StatusCode::OK);
                for h in body["hits"].as_array().into_iter().flatten() {
                    prop_assert!(as_team || h["repo"] != "alpha", "{} leaked to a reader", h["doc_id"]);
                }
                let req = post("/context", &token, json!({"query": query, "threshold": 0.0}));
                let (_, _, ctx) = parts(atest::call_service(&app, req.to_request()).await).await;
                if !as_team {
                    prop_assert!(!ctx.to_string().contains("science/alpha"));
                }
                Ok(())
            })?;
        }
    }

    thread_local! {
        /// One served index per test thread (building is the slow part).
        static SERVED: (web::Data<AppState>, String, String, Arc<World>) = {
            let s = served(Some("team-a"), |_| {});
            (s.state, s.team, s.reader, Arc::new(s.w))
        };
    }
}
