//! The HTTP API in process (`actix_web::test` on the real app factory) over a
//! fixture index: shapes, limits, auth and ACL, problem bodies, OpenAPI.

use crate::fixtures::World;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::{test, web};
use cairn_embed::DevicePref;
use cairn_search::EngineOptions;
use cairn_serve::auth::{Authenticator, TokenStore};
use cairn_serve::http::{AppState, HttpOptions};
use cairn_serve::live::LiveIndex;
use cairn_serve::server::app;
use serde_json::{Value, json};
use std::sync::Arc;

/// A served fixture index and a token for each kind of caller.
pub struct Served {
    pub w: World,
    pub state: web::Data<AppState>,
    /// No groups.
    pub reader: String,
    /// Group `team-a`.
    pub team: String,
    /// Admin, no groups.
    pub admin: String,
}

/// Builds the fixture index (alpha restricted to `alpha_groups` when given) and its server state.
pub fn served(alpha_groups: Option<&str>, tweak: impl FnOnce(&mut HttpOptions)) -> Served {
    served_with(alpha_groups, Vec::new(), tweak)
}

/// [`served`], with `extra` files committed to alpha too.
pub fn served_with(
    alpha_groups: Option<&str>,
    extra: Vec<(&str, Vec<u8>)>,
    tweak: impl FnOnce(&mut HttpOptions),
) -> Served {
    let w = World::new();
    if let Some(g) = alpha_groups {
        w.write_config(&format!("    groups: [{g}]\n"));
    }
    served_world(w, extra, tweak)
}

/// [`served_with`] on the world `w` as it is set up (its config and build settings).
pub fn served_world(
    w: World,
    extra: Vec<(&str, Vec<u8>)>,
    tweak: impl FnOnce(&mut HttpOptions),
) -> Served {
    let long: String = (1..=450).map(|i| format!("line {i}\n")).collect();
    let mut files = vec![("docs/long.txt", long.into_bytes())];
    files.extend(extra);
    crate::fixtures::commit(&w.alpha_repo(), &files, "a long file");
    let built = w.build("out", &[]);
    assert!(
        built.status.success(),
        "{}",
        crate::fixtures::stderr(&built)
    );
    let store = TokenStore::new(w.path("tokens.json"));
    let reader = store.add("reader", &[], false).expect("token");
    let team = store
        .add("team", &["team-a".to_owned()], false)
        .expect("token");
    let admin = store.add("admin", &[], true).expect("token");
    let live = LiveIndex::open(EngineOptions {
        index: w.path("out"),
        model_dir: Some(w.model.clone()),
        device: DevicePref::Cpu,
    })
    .expect("open");
    let auth = Authenticator::new(Some(w.path("tokens.json")), None, false).expect("auth");
    let mut opts = HttpOptions::new("127.0.0.1:8080".parse().expect("addr"));
    tweak(&mut opts);
    let state = AppState::new(Arc::new(live), Arc::new(auth), opts).expect("state");
    Served {
        w,
        state,
        reader,
        team,
        admin,
    }
}

pub fn bearer(token: &str) -> (&'static str, String) {
    ("Authorization", format!("Bearer {token}"))
}

/// A response's content type ("" when absent).
pub(crate) fn content_type(headers: &actix_web::http::header::HeaderMap) -> String {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

/// Status, headers of interest and JSON body of a response.
pub async fn parts(res: ServiceResponse<impl MessageBody>) -> (StatusCode, String, Value) {
    let status = res.status();
    let ct = content_type(res.headers());
    let bytes = test::read_body(res).await;
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, ct, body)
}

/// Calls `$app` with the request builder `$req` and returns its [`parts`].
macro_rules! call {
    ($app:expr, $req:expr) => {
        $crate::http::parts(actix_web::test::call_service(&$app, $req.to_request()).await).await
    };
}
pub(crate) use call;

pub(crate) fn get(uri: &str, token: &str) -> test::TestRequest {
    test::TestRequest::get()
        .uri(uri)
        .insert_header(bearer(token))
}

pub(crate) fn post(uri: &str, token: &str, body: Value) -> test::TestRequest {
    test::TestRequest::post()
        .uri(uri)
        .insert_header(bearer(token))
        .set_json(body)
}

pub(crate) fn assert_problem(
    status: StatusCode,
    ct: &str,
    body: &Value,
    want: StatusCode,
    code: &str,
) {
    assert_eq!(status, want, "{body}");
    assert_eq!(ct, "application/problem+json", "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], want.as_u16());
    assert!(body["type"].as_str().is_some_and(|t| t.ends_with(code)));
    assert!(body["title"].is_string() && body["detail"].is_string());
    assert_eq!(body["trace_id"].as_str().map(str::len), Some(32), "{body}");
}

/// Values that differ between runs or machines, kept out of snapshots.
pub(crate) fn stable(v: Value) -> Value {
    redacted(v, true)
}

/// `v` with its index version, build time and trace id blanked (they name a
/// build, not an answer), and with its scores and counts blanked too when
/// `numbers` says so.
pub fn redacted(mut v: Value, numbers: bool) -> Value {
    fn walk(v: &mut Value, numbers: bool) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    match k.as_str() {
                        "index_version" | "built_at" | "trace_id" => *x = json!("[redacted]"),
                        "score" | "rrf" | "bm25" | "vector" | "weight" | "expires_at"
                        | "tokens"
                            if numbers =>
                        {
                            *x = json!("[number]")
                        }
                        _ => walk(x, numbers),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, numbers)),
            // The version also appears inside the context block's preamble.
            Value::String(t) => {
                if let Some(at) = t.find("cairn index ") {
                    let start = at + "cairn index ".len();
                    if t.len() >= start + 16 {
                        t.replace_range(start..start + 16, "[redacted]");
                    }
                }
            }
            _ => {}
        }
    }
    walk(&mut v, numbers);
    v
}

#[actix_web::test]
async fn every_endpoint_answers_in_its_shape() {
    let s = served(None, |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let t = &s.reader;

    let (st, _, search) = call!(app, get("/search?query=fit_model&limit=3", t));
    assert_eq!(st, StatusCode::OK, "{search}");
    assert_eq!(
        search["hits"][0]["doc_id"],
        "science/alpha/src/alpha/core.py"
    );
    insta::assert_json_snapshot!("search_get", stable(search.clone()));
    let (_, _, posted) = call!(
        app,
        post("/search", t, json!({"query": "fit_model", "limit": 3}))
    );
    assert_eq!(stable(posted), stable(search), "GET and POST answer alike");

    let (st, _, r) = call!(
        app,
        post(
            "/retrieve",
            t,
            json!({"doc_id": "science/alpha/src/alpha/core.py", "start": 5, "end": 7})
        )
    );
    assert_eq!(st, StatusCode::OK);
    insta::assert_json_snapshot!("retrieve", stable(r));
    // A notebook comes as its cells unless the caller asks for the raw bytes.
    let nb = "science/alpha/notebooks/demo.ipynb";
    let (_, _, cells) = call!(app, post("/retrieve", t, json!({"doc_id": nb})));
    assert_eq!(cells["text_format"], "notebook-cells");
    assert!(
        cells["text"]
            .as_str()
            .is_some_and(|s| s.starts_with("<!-- cell 1: markdown -->\n"))
    );
    assert_eq!(
        cells["raw_lines"].as_array().map(Vec::len),
        Some(cells["text"].as_str().unwrap_or("").lines().count())
    );
    let (_, _, raw) = call!(
        app,
        post("/retrieve", t, json!({"doc_id": nb, "raw": true}))
    );
    assert_eq!(
        (raw["text_format"].as_str(), raw["text"].as_str()),
        (Some("raw"), Some(crate::fixtures::NOTEBOOK))
    );
    assert!(raw.get("raw_lines").is_none());
    assert_eq!(
        (raw["permalink"].clone(), raw["end_line"].clone()),
        (cells["permalink"].clone(), cells["end_line"].clone())
    );
    let (st, _, bad) = call!(
        app,
        post("/retrieve", t, json!({"doc_id": nb, "raw": "yes"}))
    );
    assert_eq!(
        (st, bad["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("raw")),
        "{bad}"
    );

    let (st, _, b) = call!(
        app,
        post(
            "/retrieve/batch",
            t,
            json!({"items": [
                {"doc_id": "science/alpha/README.md", "start": 1, "end": 3},
                {"doc_id": "science/alpha/nope.md", "start": 1, "end": 3}
            ]})
        )
    );
    assert_eq!(st, StatusCode::OK);
    assert_eq!(b["items"][1]["error"]["code"], "not_found");
    insta::assert_json_snapshot!("retrieve_batch", stable(b));

    let (st, _, tr) = call!(app, get("/tree?prefix=science/alpha&depth=1", t));
    assert_eq!(st, StatusCode::OK);
    insta::assert_json_snapshot!("tree", stable(tr));

    let (st, _, c) = call!(
        app,
        post(
            "/context",
            t,
            json!({"messages": [{"role": "user", "content": "how do I fit_model"}], "max_tokens": 4000, "threshold": 0.0})
        )
    );
    assert_eq!(st, StatusCode::OK, "{c}");
    assert_eq!(c["messages"][0]["role"], "system");
    // The snapshot's budget has slack: the preamble names the index version,
    // whose BPE length varies by a token or two between builds, so a budget
    // that cuts a passage would cut it at a different line on another run.
    assert!(
        c["citations"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|x| x["truncated"] == false),
        "{c}"
    );
    // A tight budget cuts passages at line boundaries and never overshoots.
    for budget in [100, 150, 200, 300] {
        let (_, _, tight) = call!(
            app,
            post(
                "/context",
                t,
                json!({"query": "how do I fit_model", "max_tokens": budget, "threshold": 0.0})
            )
        );
        let used = tight["tokens"].as_u64().unwrap_or(u64::MAX);
        assert!(used <= budget, "{used} tokens over a budget of {budget}");
        let block = tight["context"].as_str().unwrap_or("");
        for cite in tight["citations"].as_array().into_iter().flatten() {
            let (start, end) = (cite["start_line"].as_u64(), cite["end_line"].as_u64());
            let header = format!(
                "[{}] {} lines {}-{}",
                cite["n"],
                cite["doc_id"].as_str().unwrap_or(""),
                start.unwrap_or(0),
                end.unwrap_or(0)
            );
            // A cut passage's link cites the lines shown, not the whole hit.
            let cited = format!("{header}\n{}", cite["permalink"].as_str().unwrap_or(""));
            assert!(block.contains(&cited), "{cited} not in {block}");
            assert!(
                cite["permalink"]
                    .as_str()
                    .is_some_and(|p| p.ends_with(&format!(
                        "#L{}-L{}",
                        start.unwrap_or(0),
                        end.unwrap_or(0)
                    ))),
                "{cite}"
            );
        }
    }
    insta::assert_json_snapshot!("context", stable(c));

    let (st, _, v) = call!(app, get("/version", t));
    assert_eq!(st, StatusCode::OK);
    insta::assert_json_snapshot!("version", stable(v));

    for path in ["/health", "/ready"] {
        let (st, _, body) = call!(app, test::TestRequest::get().uri(path));
        assert_eq!(st, StatusCode::OK, "{path} needs no token");
        insta::assert_json_snapshot!(path.trim_start_matches('/'), stable(body));
    }
    // Operations without parameters ignore a query string (a prober's cache buster).
    for path in ["/health?probe=1", "/ready?t=5", "/version?x"] {
        let (st, _, _) = call!(app, get(path, t));
        assert_eq!(st, StatusCode::OK, "{path}");
    }

    let res = test::call_service(&app, test::TestRequest::get().uri("/metrics").to_request()).await;
    assert_eq!(
        res.status(),
        StatusCode::UNAUTHORIZED,
        "metrics want a token"
    );
    let res = test::call_service(&app, get("/metrics", t).to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
    let text = String::from_utf8_lossy(&test::read_body(res).await).into_owned();
    assert!(text.contains("cairn_http_requests_total{"), "{text}");
    assert!(text.contains("cairn_http_request_duration_seconds_bucket{"));
    assert!(text.contains("cairn_index_info{index_version="));
    // Searches so far embedded their queries once each; the cache says so.
    assert!(
        text.contains("cairn_query_cache{kind=\"misses\"}"),
        "{text}"
    );
    assert!(
        text.contains("cairn_query_cache{kind=\"entries\"}"),
        "{text}"
    );

    let (st, _, w) = call!(
        app,
        post(
            "/weight",
            &s.admin,
            json!({"doc_id": "science/alpha/README.md", "multiplier": 50, "ttl_days": 1})
        )
    );
    assert_eq!(st, StatusCode::OK, "{w}");
    assert_eq!(w["multiplier"], 10.0, "clamped");
    insta::assert_json_snapshot!("weight", stable(w));
}

#[actix_web::test]
async fn responses_are_compressed_when_asked() {
    let s = served(None, |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    for enc in ["gzip", "br"] {
        let req = get("/tree?depth=9", &s.reader).insert_header(("Accept-Encoding", enc));
        let res = app.call(req.to_request()).await.expect("call");
        assert_eq!(
            res.headers()
                .get("content-encoding")
                .map(|v| v.to_str().unwrap_or("")),
            Some(enc)
        );
    }
}

#[actix_web::test]
async fn the_openapi_document_is_valid_for_gpt_actions() {
    let s = served(None, |o| {
        o.public_url = Some("https://cairn.example.org".into())
    });
    let app = test::init_service(app(s.state.clone())).await;
    let (st, _, doc) = call!(app, test::TestRequest::get().uri("/openapi.json"));
    assert_eq!(st, StatusCode::OK);

    // The official OpenAPI 3.1 schema (spec.openapis.org, vendored).
    let schema: Value =
        serde_json::from_str(include_str!("data/openapi-3.1-schema.json")).expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("compile the OAS 3.1 schema");
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");

    // What GPT Actions needs on top.
    assert!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1."))
    );
    assert_eq!(doc["servers"][0]["url"], "https://cairn.example.org");
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    let mut ids = std::collections::BTreeSet::new();
    let paths = doc["paths"].as_object().expect("paths");
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("item") {
            let id = op["operationId"].as_str().expect("operationId");
            assert!(ids.insert(id.to_owned()), "duplicate operationId {id}");
            let desc = op["description"].as_str().unwrap_or("");
            assert!(
                !desc.is_empty() && desc.len() <= 300,
                "{id}: description of {} chars",
                desc.len()
            );
            if method == "post" {
                let consequential = op["x-openai-isConsequential"].as_bool();
                assert_eq!(consequential, Some(path == "/weight"), "{method} {path}");
            }
            for p in op["parameters"].as_array().into_iter().flatten() {
                let d = p["description"].as_str().unwrap_or("");
                assert!(
                    !d.is_empty() && d.len() <= 700,
                    "{id}: parameter {}",
                    p["name"]
                );
            }
        }
    }
    for want in [
        "searchCitations",
        "searchCitationsPost",
        "retrievePassage",
        "retrievePassages",
        "listDocuments",
        "buildContext",
        "setWeight",
        "getIndexVersion",
    ] {
        assert!(ids.contains(want), "{want} missing");
    }
}

#[actix_web::test]
async fn responses_stay_under_gpt_actions_size_limit() {
    let s = served(None, |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let item = json!({"doc_id": "science/alpha/src/alpha/core.py"});
    let req = post(
        "/retrieve/batch",
        &s.reader,
        json!({ "items": vec![item; 50] }),
    );
    let res = test::call_service(&app, req.to_request()).await;
    let body = test::read_body(res).await;
    assert!(body.len() < 100_000, "{} bytes", body.len());
    let req = get(
        "/search?query=alpha%20fit%20model%20magnification&limit=50",
        &s.reader,
    );
    let res = test::call_service(&app, req.to_request()).await;
    assert!(test::read_body(res).await.len() < 100_000);
}
