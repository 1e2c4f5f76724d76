//! The second adversarial review (issue 28): the surfaces added after the
//! first round (MCP over HTTP, web sign-in, `cairn pull`, credentials,
//! pinned refs) under hostile use. One test per finding, each against the
//! real thing: a `cairn serve` process, the real app factory, the real
//! builder and pack adoption, a real HTTP server for `cairn pull`. Finding
//! 2 (a token following a redirect) lives in `remote.rs`, beside its git
//! smart-HTTP server; the pack findings are in `hardening2_packs.rs` and
//! the MCP ones in `hardening2_mcp.rs`.

use crate::fixtures::{World, cairn, stderr};
use crate::http::{bearer, served, served_with};
use crate::serve_process::{Server, agent};
use actix_web::http::StatusCode;
use actix_web::test as atest;
use cairn_serve::auth::TokenStore;
use serde_json::{Value, json};
use std::net::TcpListener;
use std::time::{Duration, Instant};

/// A form post to the in-process app, as a browser sends it.
fn form(uri: &str, body: String) -> atest::TestRequest {
    atest::TestRequest::post()
        .uri(uri)
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .insert_header(("accept", "text/html"))
        .set_payload(body)
}

/// Finding 3: one token's sign-ins cannot fill the sessions for everyone;
/// a revoked token's sessions go at the next reload; the sign-in page's own
/// words reach the visitor.
#[actix_web::test]
async fn one_token_cannot_lock_everyone_out_of_sign_in() {
    // Sign-ins are anonymous page requests: the shared anonymous budget
    // would stop the flood first, so it is off here to reach the sessions.
    let s = served(Some("team-a"), |o| o.anonymous_rate_limit = None);
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    for i in 0..10_010 {
        let res = atest::call_service(
            &app,
            form("/login", format!("token={}", s.reader)).to_request(),
        )
        .await;
        assert_eq!(res.status(), StatusCode::SEE_OTHER, "sign-in {i}");
    }
    let res = atest::call_service(
        &app,
        form("/login", format!("token={}", s.team)).to_request(),
    )
    .await;
    assert_eq!(
        res.status(),
        StatusCode::SEE_OTHER,
        "another token signs in"
    );
    assert!(
        s.state.sessions.len() <= 64,
        "{} sessions held",
        s.state.sessions.len()
    );
    TokenStore::new(s.w.path("tokens.json"))
        .revoke("reader")
        .expect("revoke");
    std::thread::sleep(Duration::from_millis(20));
    s.state.check_for_changes(false);
    assert_eq!(s.state.sessions.len(), 1, "only the team's session is left");
    // A refused sign-in shows the page that says why, not a generic error.
    let res = atest::call_service(
        &app,
        form("/login", "token=cairn_wrong".to_owned()).to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let body = String::from_utf8_lossy(&atest::read_body(res).await).into_owned();
    assert!(body.contains("not valid"), "{body}");
    assert!(
        body.contains("name=\"token\""),
        "the form is there to try again: {body}"
    );
}

/// Session 19: under `--public-read`, `/metrics` wants a token however its
/// path is spelled: the router decodes `/%6detrics` to `/metrics`, and so
/// does the access check now (before, it compared the raw URI and answered 200).
#[actix_web::test]
async fn metrics_want_a_token_however_the_path_is_spelled() {
    let s = served(None, |o| o.public_read = true);
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    for uri in ["/metrics", "/%6detrics", "/%6D%65trics"] {
        let res = atest::call_service(&app, atest::TestRequest::get().uri(uri).to_request()).await;
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{uri}");
    }
    // Anonymous reads still answer, spelled either way.
    for uri in ["/version", "/%76ersion"] {
        let res = atest::call_service(&app, atest::TestRequest::get().uri(uri).to_request()).await;
        assert_eq!(res.status(), StatusCode::OK, "{uri}");
    }
}

/// Session 19: a tree depth of 2^64-1 with a prefix overflowed the level
/// bound (a panic in this debug build); it saturates, and the answer stays
/// within its entry bound.
#[actix_web::test]
async fn a_tree_of_any_depth_is_bounded() {
    let s = served(None, |_| {});
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    for uri in [
        "/tree?prefix=science/alpha&depth=18446744073709551615",
        "/tree?depth=18446744073709551615",
    ] {
        let req = atest::TestRequest::get()
            .uri(uri)
            .insert_header(bearer(&s.reader));
        let res = atest::call_service(&app, req.to_request()).await;
        assert_eq!(res.status(), StatusCode::OK, "{uri}");
        let body: Value = atest::read_body_json(res).await;
        let entries = body["entries"].as_array().map_or(0, Vec::len);
        assert!(entries > 0 && entries <= 500, "{uri}: {body}");
    }
}

/// Finding 6: `/metrics` wants a token, and a question asked by one group
/// leaves no trace in another group's cache.
#[actix_web::test]
async fn metrics_want_a_token_and_the_query_cache_is_per_group() {
    let s = served(Some("team-a"), |_| {});
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    let res =
        atest::call_service(&app, atest::TestRequest::get().uri("/metrics").to_request()).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let res = atest::call_service(
        &app,
        atest::TestRequest::get()
            .uri("/metrics")
            .insert_header(bearer(&s.admin))
            .to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    let ask = |token: &str| {
        atest::TestRequest::get()
            .uri("/search?query=how%20do%20I%20fit%20a%20secret%20model")
            .insert_header(bearer(token))
            .to_request()
    };
    let stats = || s.state.live.current().query_cache().expect("a model");
    let res = atest::call_service(&app, ask(&s.team)).await;
    assert_eq!(res.status(), StatusCode::OK);
    let after_team = stats();
    let res = atest::call_service(&app, ask(&s.reader)).await;
    assert_eq!(res.status(), StatusCode::OK);
    let after_reader = stats();
    assert_eq!(
        after_reader.hits, after_team.hits,
        "another group's question was a cache hit"
    );
    let res = atest::call_service(&app, ask(&s.team)).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        stats().hits,
        after_reader.hits + 1,
        "the same group repeats from the cache"
    );
}

/// Finding 7: behind a trusted proxy each visitor has their own budget; a
/// spoofed header from an untrusted peer changes nothing; and anonymous
/// searches have a default budget even without `--rate-limit`.
#[test]
fn behind_a_trusted_proxy_each_visitor_has_a_budget() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let page = |server: &Server, forwarded: Option<&str>| {
        let mut req = agent()
            .get(&server.url("/?q=fit_model"))
            .header("accept", "text/html");
        if let Some(f) = forwarded {
            req = req.header("x-forwarded-for", f);
        }
        req.call().expect("answer").status().as_u16()
    };
    let server = Server::start(
        &w,
        "out",
        &["--rate-limit", "3", "--trusted-proxy", "127.0.0.1/32"],
    );
    for _ in 0..3 {
        assert_eq!(page(&server, Some("198.51.100.7, 203.0.113.1")), 200);
    }
    assert_eq!(
        page(&server, Some("198.51.100.7, 203.0.113.1")),
        429,
        "the visitor's budget"
    );
    assert_eq!(
        page(&server, Some("203.0.113.2")),
        200,
        "another visitor has their own"
    );
    // An IPv6 visitor is its /64: rotating addresses inside it is no new budget.
    for a in ["2001:db8::1", "2001:db8::2", "2001:db8::ffff:3"] {
        assert_eq!(page(&server, Some(a)), 200, "{a}");
    }
    assert_eq!(page(&server, Some("2001:db8::4")), 429, "the same /64");
    assert_eq!(page(&server, Some("2001:db8:0:1::1")), 200, "another /64");
    drop(server);

    // Not a trusted proxy: the header is the visitor's own words.
    let server = Server::start(&w, "out", &["--rate-limit", "3"]);
    for i in 0..3 {
        assert_eq!(page(&server, Some(&format!("203.0.113.{i}"))), 200);
    }
    assert_eq!(
        page(&server, Some("203.0.113.99")),
        429,
        "a spoofed header is no new budget"
    );
    drop(server);

    // No --rate-limit: anonymous visitors share a budget (8 here), and each
    // has a quarter of it (2), so one visitor cannot drain it for the others;
    // a request refused by its own budget takes nothing from the shared one.
    let server = Server::start(
        &w,
        "out",
        &[
            "--anonymous-rate-limit",
            "8",
            "--trusted-proxy",
            "127.0.0.1",
        ],
    );
    let one = |addr: &str| page(&server, Some(addr));
    let codes: Vec<u16> = (0..3).map(|_| one("203.0.113.1")).collect();
    assert_eq!(codes, [200, 200, 429], "one visitor's quarter");
    let codes: Vec<u16> = ["203.0.113.2", "203.0.113.3", "203.0.113.4"]
        .iter()
        .flat_map(|a| [one(a), one(a)])
        .collect();
    assert_eq!(codes, [200; 6], "{codes:?}");
    assert_eq!(one("203.0.113.5"), 429, "the shared budget is spent");
    // Signing in never waits on anonymous searches; assets are free.
    let res = agent()
        .get(&server.url("/login"))
        .header("accept", "text/html")
        .header("x-forwarded-for", "203.0.113.6")
        .call()
        .expect("login page");
    assert_eq!(
        res.status().as_u16(),
        200,
        "sign-in is not in the shared budget"
    );
    let res = agent()
        .get(&server.url("/ui/style.css"))
        .call()
        .expect("asset");
    assert_eq!(res.status().as_u16(), 200, "assets are free");
}

/// Finding 8: no form of a URL holding a secret echoes it in the error.
#[test]
fn secrets_in_repository_urls_never_reach_a_message() {
    let w = World::new();
    let cases = [
        "    url: HTTPS://user:SUPERSECRET@github.com/example/alpha.git\n",
        "    url: https://user:SUPERSECRET@github.com\n",
        "    url: user:SUPERSECRET@github.com:example/alpha.git\n",
        "    url: https://user:SUPERSECRET@github.com/example/al pha.git\n",
        "    url: ../repos/alpha\n    web_url: https://user:SUPERSECRET@example.org/alpha\n",
        "    url: ../repos/alpha\n    web_url: ftp://user:SUPERSECRET@example.org/alpha\n",
        "    url: ssh://git:SUPERSECRET@example.org/alpha.git\n",
        "    url: https://SUPERSECRET@gitlab.example.org\n",
    ];
    for (i, url) in cases.iter().enumerate() {
        // web_url given twice is a config error of its own; keep the case's own.
        let yml = match url.contains("web_url") {
            true => format!("science:\n  - name: alpha\n{url}"),
            false => format!(
                "science:\n  - name: alpha\n{url}    web_url: https://github.com/example/alpha\n"
            ),
        };
        w.write("config/repositories.yml", &yml);
        let out = w.build(&format!("out{i}"), &[]);
        let err = stderr(&out);
        assert!(!out.status.success(), "case {i} was accepted");
        assert!(
            !err.contains("SUPERSECRET"),
            "case {i} echoed the secret: {err}"
        );
        assert!(err.contains("repositories.yml:"), "case {i}: {err}");
    }
}

/// A TCP server that accepts connections and says nothing.
pub(crate) fn silent_server() -> (String, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let handle = std::thread::spawn(move || {
        let mut held = Vec::new();
        let started = Instant::now();
        listener.set_nonblocking(true).expect("nonblocking");
        while started.elapsed() < Duration::from_secs(30) {
            if let Ok((s, _)) = listener.accept() {
                held.push(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    (format!("http://127.0.0.1:{port}"), handle)
}

/// Finding 10: the branch link of a repository pinned with `ref:` opens
/// the pinned lines, not the remote's default branch.
#[test]
fn a_pinned_repositorys_branch_link_opens_the_pin() {
    let w = World::new();
    // main moves on after v1: its core.py lines are not v1's.
    crate::fixtures::commit(
        &w.alpha_repo(),
        &[(
            "src/alpha/core.py",
            b"def launch_codes():\n    pass\n".to_vec(),
        )],
        "moved on",
    );
    w.write_config("    ref: v1\n");
    assert!(w.build("out", &[]).status.success());
    let index = w.path("out");
    let out = cairn(&[
        "retrieve",
        "science/alpha/src/alpha/core.py",
        "--lines",
        "5:7",
        "--json",
        "--index",
        index.to_str().expect("utf8"),
        "--model-dir",
        w.model.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let link = v["github_url"].as_str().unwrap_or("");
    assert!(link.contains("/blob/v1/"), "{link}");
    assert!(
        v["text"].as_str().is_some_and(|t| t.contains("fit_model")),
        "{v}"
    );
}

/// Finding 12: the passage page shows every line it cites, a one-line file
/// has one row, and the page is read from one version.
#[actix_web::test]
async fn the_passage_page_shows_the_lines_it_cites() {
    let longer: String = (1..=900).map(|i| format!("row {i}\n")).collect();
    let s = served_with(
        None,
        vec![
            ("one.txt", b"only line\n".to_vec()),
            ("docs/longer.txt", longer.into_bytes()),
        ],
        |_| {},
    );
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    let page = |uri: &str| {
        atest::TestRequest::get()
            .uri(uri)
            .insert_header(bearer(&s.reader))
            .insert_header(("accept", "text/html"))
            .to_request()
    };
    let rows = |body: &str| -> Vec<u32> {
        body.split("id=\"L")
            .skip(1)
            .filter_map(|r| r.split('"').next()?.parse().ok())
            .collect()
    };
    let res = atest::call_service(
        &app,
        page("/doc/science/alpha/docs/longer.txt?lines=200-599&before=150"),
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    let body = String::from_utf8_lossy(&atest::read_body(res).await).into_owned();
    let heading = body
        .split("<span class=\"span\">:")
        .nth(1)
        .and_then(|h| h.split('<').next())
        .unwrap_or("")
        .to_owned();
    let (a, b) = heading.split_once('-').expect("a span in the heading");
    let (a, b): (u32, u32) = (a.parse().expect("start"), b.parse().expect("end"));
    let shown = rows(&body);
    assert!(
        (a..=b).all(|l| shown.contains(&l)),
        "cited {a}-{b}, shown {}-{}",
        shown.first().copied().unwrap_or(0),
        shown.last().copied().unwrap_or(0)
    );
    let res = atest::call_service(&app, page("/doc/science/alpha/one.txt?lines=1-1")).await;
    let body = String::from_utf8_lossy(&atest::read_body(res).await).into_owned();
    assert_eq!(rows(&body), [1], "{body}");
}

/// Finding 14: the deployment DEPLOY.md shows (a non-loopback bind with
/// `--public-url`) accepts its own page's forms.
#[actix_web::test]
async fn a_public_deployment_accepts_its_own_forms() {
    let s = served(None, |o| {
        *o = cairn_serve::http::HttpOptions::new("0.0.0.0:8080".parse().expect("addr"));
        o.public_url = Some("https://cairn.example.org".to_owned());
    });
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    for (path, body) in [
        ("/login", format!("token={}", s.reader)),
        ("/errors", "text=ValueError%3A+bad".to_owned()),
    ] {
        let res = atest::call_service(
            &app,
            form(path, body)
                .insert_header(("host", "cairn.example.org"))
                .insert_header(("origin", "https://cairn.example.org"))
                .to_request(),
        )
        .await;
        assert_ne!(res.status(), StatusCode::FORBIDDEN, "{path}");
        assert!(res.status().as_u16() < 400, "{path}: {}", res.status());
    }
    // Another origin is still refused.
    let res = atest::call_service(
        &app,
        form("/errors", "text=x".to_owned())
            .insert_header(("host", "cairn.example.org"))
            .insert_header(("origin", "https://evil.example"))
            .to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
}

/// `queries` (other phrasings, issue 29) is outside input: bounded in count
/// and length, typed, and refused by field name; five long phrasings answer
/// within the deadline like one.
#[actix_web::test]
async fn other_phrasings_are_bounded_and_named_when_refused() {
    let s = served(None, |_| {});
    let app = atest::init_service(cairn_serve::server::app(s.state.clone())).await;
    let post = |path: &str, body: Value| {
        atest::TestRequest::post()
            .uri(path)
            .insert_header(bearer(&s.reader))
            .set_json(body)
            .to_request()
    };
    let long = "fit ".repeat(250);
    for (path, body) in [
        ("/search", json!({"query": "fit", "queries": vec!["a"; 6]})),
        (
            "/search",
            json!({"query": "fit", "queries": ["x".repeat(1001)]}),
        ),
        ("/search", json!({"query": "fit", "queries": [" "]})),
        ("/search", json!({"query": "fit", "queries": 42})),
        ("/context", json!({"query": "fit", "queries": vec!["a"; 6]})),
    ] {
        let (st, ct, problem) =
            crate::http::parts(atest::call_service(&app, post(path, body.clone())).await).await;
        assert_eq!(ct, "application/problem+json", "{path} {body}: {problem}");
        assert!(st.is_client_error(), "{path} {body}: {st}");
        assert_eq!(problem["field"], "queries", "{path} {body}: {problem}");
    }
    let started = Instant::now();
    let res = atest::call_service(
        &app,
        post(
            "/search",
            json!({"query": long.trim(), "queries": vec![long.trim(); 5]}),
        ),
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "within the deadline"
    );
    // In a query string, one phrasing.
    let res = atest::call_service(
        &app,
        atest::TestRequest::get()
            .uri("/search?query=fit&queries=fit_model%20data")
            .insert_header(bearer(&s.reader))
            .to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
}
