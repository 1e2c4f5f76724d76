//! The holes an adversarial review found (issue 13), one test each: every
//! one failed on the code before the fix. In process on the real app factory
//! where that shows the behaviour, against `cairn serve` as a process where
//! it needs one (memory, threads), and on the real builder. The pack
//! findings are in `hardening_packs.rs`.

use crate::fixtures::{World, current_dir, stderr};
use crate::http::{bearer, parts, served};
use crate::serve_process::{Server, agent};
use actix_web::http::{Method, StatusCode};
use actix_web::test as atest;
use cairn_serve::auth::TokenStore;
use cairn_serve::server::app;
use serde_json::{Value, json};
use std::io::Write;

/// A brotli body that decodes to `decoded` zero bytes.
fn brotli_bomb(decoded: usize) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut out, 1 << 16, 5, 22);
        let zeros = vec![0u8; 1 << 20];
        let mut left = decoded;
        while left > 0 {
            let n = left.min(zeros.len());
            w.write_all(&zeros[..n]).expect("compress");
            left -= n;
        }
    }
    out
}

/// Finding 1: a compressed request body is refused before anything decodes it.
#[actix_web::test]
async fn compressed_request_bodies_are_refused_unread() {
    let s = served(None, |_| {});
    let app = atest::init_service(app(s.state.clone())).await;
    let body = json!({"query": "fit_model"}).to_string();
    let bomb = brotli_bomb(64 << 20);
    assert!(bomb.len() < 4096, "{} bytes", bomb.len());
    for (enc, bytes) in [("br", bomb), ("gzip", body.clone().into_bytes())] {
        for path in ["/search", "/context", "/explain", "/errors", "/mcp"] {
            let req = atest::TestRequest::post()
                .uri(path)
                .insert_header(bearer(&s.reader))
                .insert_header(("content-type", "application/json"))
                .insert_header(("content-encoding", enc))
                .set_payload(bytes.clone());
            let (st, ct, problem) = parts(atest::call_service(&app, req.to_request()).await).await;
            assert_eq!(
                st,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "{path} {enc}: {problem}"
            );
            assert_eq!(ct, "application/problem+json");
            assert_eq!(problem["code"], "unsupported_media_type");
        }
    }
    // Identity is no encoding at all; responses are still compressed on request.
    let req = atest::TestRequest::post()
        .uri("/search")
        .insert_header(bearer(&s.reader))
        .insert_header(("content-encoding", "identity"))
        .insert_header(("accept-encoding", "br"))
        .set_payload(body);
    let res = atest::call_service(&app, req.to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.headers().get("content-encoding").map(|v| v.as_bytes()),
        Some(&b"br"[..])
    );
}

/// A memory figure of a running process from `/proc/PID/status`
/// (`VmHWM` the peak, `VmRSS` now), in bytes.
pub fn proc_memory(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"))
}

/// Peak resident memory of a running process, in bytes.
fn peak_rss(pid: u32) -> u64 {
    proc_memory(pid, "VmHWM")
}

/// Finding 1, against the real server: a 256 MiB brotli bomb leaves its peak memory where it was.
#[test]
fn a_decompression_bomb_does_not_move_the_servers_peak_memory() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let token = TokenStore::new(w.path("tokens.json"))
        .add("bot", &[], false)
        .expect("token");
    let server = Server::start(&w, "out", &[]);
    let before = peak_rss(server.child.id());
    let bomb = brotli_bomb(256 << 20);
    let res = agent()
        .post(&server.url("/search"))
        .header("Authorization", &format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("content-encoding", "br")
        .send(&bomb[..])
        .expect("answer");
    assert_eq!(res.status().as_u16(), 415);
    let after = peak_rss(server.child.id());
    assert!(
        after < before + (32 << 20),
        "peak RSS grew from {before} to {after} bytes"
    );
}

/// Finding 9: bodies over the limit are refused on every route, MCP included.
#[actix_web::test]
async fn oversized_bodies_are_refused_on_every_route() {
    let s = served(None, |_| {});
    let app = atest::init_service(app(s.state.clone())).await;
    let big = format!(
        r#"{{"query": "fit", "repo": [{}]}}"#,
        vec!["\"r\""; 40_000].join(",")
    );
    assert!(big.len() > cairn_serve::http::MAX_BODY_BYTES);
    for path in ["/search", "/explain", "/errors", "/mcp"] {
        let req = atest::TestRequest::post()
            .uri(path)
            .insert_header(bearer(&s.reader))
            .insert_header(("content-type", "application/json"))
            .insert_header(("accept", "application/json, text/event-stream"))
            .set_payload(big.clone());
        let (st, _, problem) = parts(atest::call_service(&app, req.to_request()).await).await;
        assert_eq!(st, StatusCode::PAYLOAD_TOO_LARGE, "{path}: {problem}");
        assert_eq!(problem["code"], "payload_too_large");
    }
    // Within the body limit, a filter list is still capped (every connector
    // parses into the same library request).
    let many: Vec<String> = (0..51).map(|i| format!("r{i}")).collect();
    let req = atest::TestRequest::post()
        .uri("/search")
        .insert_header(bearer(&s.reader))
        .set_json(json!({"query": "fit", "toolkit": many}));
    let (st, _, problem) = parts(atest::call_service(&app, req.to_request()).await).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert_eq!(problem["field"], "toolkit");
    let req = atest::TestRequest::get()
        .uri(&format!("/search?query=fit&ref={}", many.join(",")))
        .insert_header(bearer(&s.reader));
    let (st, _, problem) = parts(atest::call_service(&app, req.to_request()).await).await;
    assert_eq!(
        (st, problem["field"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("ref")),
        "{problem}"
    );
}

/// Finding 5: whatever methods and paths arrive, the metric series stay a fixed set.
#[actix_web::test]
async fn metrics_series_stay_fixed_whatever_is_sent() {
    let s = served(None, |_| {});
    let app = atest::init_service(app(s.state.clone())).await;
    let series = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("cairn_http_requests_total{"))
            .count()
    };
    let metrics = async || {
        let res = atest::call_service(
            &app,
            atest::TestRequest::get()
                .uri("/metrics")
                .insert_header(bearer(&s.reader))
                .to_request(),
        )
        .await;
        String::from_utf8_lossy(&atest::read_body(res).await).into_owned()
    };
    for i in 0..300 {
        let method =
            Method::from_bytes(format!("M{i}{}", "X".repeat(i)).as_bytes()).expect("method");
        let req = atest::TestRequest::default()
            .method(method)
            .uri(&format!("/health/{i}/nope"));
        atest::call_service(&app, req.to_request()).await;
        let req = atest::TestRequest::default()
            .method(Method::from_bytes(format!("Q{i}").as_bytes()).expect("method"))
            .uri("/health");
        atest::call_service(&app, req.to_request()).await;
    }
    let text = metrics().await;
    let n = series(&text);
    assert!(n <= 8, "{n} series:\n{text}");
    assert!(!text.contains("M1X"), "a method became a label");
    assert!(text.contains(r#"method="OTHER""#), "{text}");
}

/// Finding 6: a name not on the allow-list gets 403 on every route; IP addresses pass.
#[actix_web::test]
async fn a_rebound_host_is_refused_on_every_route() {
    let s = served(Some("team-a"), |o| {
        o.allowed_hosts.push("cairn.example.org".into())
    });
    let app = atest::init_service(app(s.state.clone())).await;
    let with_host = |path: &str, host: &str| {
        atest::TestRequest::get()
            .uri(path)
            .insert_header(bearer(&s.team))
            .insert_header(("host", host.to_owned()))
    };
    for path in [
        "/search?query=fit",
        "/health",
        "/tree",
        "/openapi.json",
        "/mcp",
    ] {
        let req = with_host(path, "rebind.attacker.example");
        let (st, _, problem) = parts(atest::call_service(&app, req.to_request()).await).await;
        assert_eq!(st, StatusCode::FORBIDDEN, "{path}: {problem}");
        assert_eq!(problem["code"], "forbidden");
    }
    for host in [
        "localhost:8080",
        "LOCALHOST",
        "127.0.0.1:8080",
        "[::1]:8080",
        "10.1.2.3:8080",
        "cairn.example.org",
        "cairn.example.org:443",
    ] {
        let req = with_host("/search?query=fit", host);
        let (st, _, body) = parts(atest::call_service(&app, req.to_request()).await).await;
        assert_eq!(st, StatusCode::OK, "{host}: {body}");
    }
}

/// Finding 10: without a token, /health says counts, never repository names.
#[actix_web::test]
async fn health_without_a_token_names_no_repository() {
    let s = served(None, |_| {});
    let app = atest::init_service(app(s.state.clone())).await;
    let (st, _, anonymous) = parts(
        atest::call_service(&app, atest::TestRequest::get().uri("/health").to_request()).await,
    )
    .await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(anonymous["docs_by_repo"], json!({}), "{anonymous}");
    assert!(anonymous["chunks"].as_u64().is_some_and(|n| n > 0));
    let req = atest::TestRequest::get()
        .uri("/health")
        .insert_header(bearer(&s.reader));
    let (_, _, known) = parts(atest::call_service(&app, req.to_request()).await).await;
    assert!(known["docs_by_repo"]["beta"].as_u64().is_some(), "{known}");
}

/// Finding 10: an admin learns nothing about documents their own groups hide.
#[actix_web::test]
async fn set_weight_respects_the_admins_groups() {
    let s = served(Some("team-a"), |_| {});
    let app = atest::init_service(app(s.state.clone())).await;
    let weigh = |doc: &str| {
        atest::TestRequest::post()
            .uri("/weight")
            .insert_header(bearer(&s.admin))
            .set_json(json!({"doc_id": doc, "multiplier": 2}))
    };
    let (st, _, hidden) = parts(
        atest::call_service(&app, weigh("science/alpha/src/alpha/core.py").to_request()).await,
    )
    .await;
    let (_, _, missing) = parts(
        atest::call_service(&app, weigh("science/alpha/src/alpha/nope.py").to_request()).await,
    )
    .await;
    assert_eq!(st, StatusCode::NOT_FOUND, "{hidden}");
    let strip = |v: &Value| json!([v["status"], v["code"], v["field"]]);
    assert_eq!(strip(&hidden), strip(&missing), "no existence leak");
    let (st, _, _) =
        parts(atest::call_service(&app, weigh("tools/beta/README.md").to_request()).await).await;
    assert_eq!(st, StatusCode::OK);
}

/// Finding 8: a folder name that is not UTF-8 is skipped, not fatal to its
/// repository. (That an excluded or too-large file is never read is tested
/// beside `read_commit`.)
#[test]
fn a_non_utf8_folder_name_is_skipped_not_fatal() {
    let w = World::new();
    let repo = w.alpha_repo();
    let small = repo.blob(b"odd\n").expect("blob");
    let head = repo.head().and_then(|h| h.peel_to_tree()).expect("tree");
    let mut odd = repo.treebuilder(None).expect("builder");
    odd.insert("x.txt", small, 0o100644).expect("insert");
    let odd = odd.write().expect("odd tree");
    let mut root = repo.treebuilder(Some(&head)).expect("builder");
    root.insert(&b"caf\xe9"[..], odd, 0o040000).expect("insert");
    let tree = repo.find_tree(root.write().expect("tree")).expect("tree");
    let sig = git2::Signature::new(
        "Fixture",
        "f@example.org",
        &git2::Time::new(1_700_000_100, 0),
    )
    .expect("sig");
    let parent = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .expect("parent");
    repo.commit(Some("HEAD"), &sig, &sig, "odd", &tree, &[&parent])
        .expect("commit");

    let built = w.build("out", &[]);
    assert!(built.status.success(), "{}", stderr(&built));
    let manifest = crate::fixtures::read_json(&current_dir(&w.path("out")).join("manifest.json"));
    let skipped = manifest["skipped"].to_string();
    assert!(skipped.contains(r#""reason":"non-utf8-path""#), "{skipped}");
    let alpha = manifest["repos"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "alpha"))
        .cloned()
        .unwrap_or_default();
    assert!(alpha["error"].is_null(), "{alpha}");
    assert!(alpha["docs"].as_u64().is_some_and(|n| n >= 6), "{alpha}");
}

/// Finding 10: credentials in a repository URL are refused where they are
/// written (file:line:column, without echoing them), so they reach no
/// manifest, pack or log; `token_env` names where a token lives instead.
#[test]
fn url_credentials_are_refused_and_never_echoed() {
    let w = World::new();
    for url in [
        "https://bot:s3cret-pw@127.0.0.1:9/alpha.git",
        "https://s3cret-pw@127.0.0.1:9/alpha.git",
    ] {
        let yml = format!(
            "science:\n  - name: alpha\n    url: {url}\n    web_url: https://github.com/example/alpha\ntools:\n  - name: beta\n    url: {}\n    web_url: https://github.com/example/beta\n",
            w.beta.display()
        );
        w.write("config/repositories.yml", &yml);
        let built = w.build("out", &["--keep-going"]);
        assert_eq!(built.status.code(), Some(2), "{}", stderr(&built));
        assert!(
            stderr(&built).contains("repositories.yml:3:") && stderr(&built).contains("token_env"),
            "{}",
            stderr(&built)
        );
        assert!(!stderr(&built).contains("s3cret"), "{}", stderr(&built));
        assert!(
            !w.path("out").join("CURRENT").exists(),
            "nothing is written"
        );
    }
}

/// Findings 2 and 3: for a caller who cannot see a repository, every answer,
/// scores included, is the one an index without that repository gives.
mod hidden_equals_absent {
    use crate::fixtures::{World, stderr};
    use crate::hardening_packs::live;
    use crate::http::{bearer, parts, redacted};
    use actix_web::http::StatusCode;
    use actix_web::{test as atest, web};
    use cairn_serve::auth::{Authenticator, TokenStore};
    use cairn_serve::http::{AppState, HttpOptions};
    use cairn_serve::server::app;
    use proptest::prelude::*;
    use serde_json::{Value, json};
    use std::sync::Arc;

    /// The same documents served twice: with alpha restricted to team-a, and without alpha.
    struct Pair {
        present: web::Data<AppState>,
        absent: web::Data<AppState>,
        reader: String,
        _w: World,
    }

    fn state(w: &World, out: &str) -> web::Data<AppState> {
        let auth = Authenticator::new(Some(w.path("tokens.json")), None, false).expect("auth");
        let opts = HttpOptions::new("127.0.0.1:8080".parse().expect("addr"));
        AppState::new(Arc::new(live(&w.path(out), &w.model)), Arc::new(auth), opts).expect("state")
    }

    fn pair() -> Pair {
        let w = World::new();
        w.write_config("    groups: [team-a]\n");
        let built = w.build("present", &[]);
        assert!(built.status.success(), "{}", stderr(&built));
        let built = w.build_without_alpha("absent");
        assert!(built.status.success(), "{}", stderr(&built));
        let reader = TokenStore::new(w.path("tokens.json"))
            .add("reader", &[], false)
            .expect("token");
        Pair {
            present: state(&w, "present"),
            absent: state(&w, "absent"),
            reader,
            _w: w,
        }
    }

    thread_local! {
        static PAIR: Arc<Pair> = Arc::new(pair());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn a_hidden_repository_changes_no_answer(
            words in prop::collection::vec(
                prop::sample::select(vec!["alpha", "beta", "fit", "model", "binary", "lens", "magnification", "install", "the", "BinaryMag", "widget"]),
                1..4,
            ),
            mode in prop::sample::select(vec!["hybrid", "bm25", "vector"]),
        ) {
            let p = PAIR.with(Arc::clone);
            let query = words.join(" ");
            let sys = actix_web::rt::System::new();
            sys.block_on(async {
                let mut answers = Vec::new();
                let mut greps = Vec::new();
                for state in [&p.present, &p.absent] {
                    let app = atest::init_service(app(state.clone())).await;
                    let search = atest::TestRequest::post()
                        .uri("/search")
                        .insert_header(bearer(&p.reader))
                        .set_json(json!({"query": query, "mode": mode, "limit": 20}));
                    let (st, _, s) = parts(atest::call_service(&app, search.to_request()).await).await;
                    prop_assert_eq!(st, StatusCode::OK);
                    let context = atest::TestRequest::post()
                        .uri("/context")
                        .insert_header(bearer(&p.reader))
                        .set_json(json!({"query": query, "mode": mode, "threshold": 0.0}));
                    let (_, _, c) = parts(atest::call_service(&app, context.to_request()).await).await;
                    // A page of grep, and the cursor to the next (its rank once counted hidden documents).
                    let grep = atest::TestRequest::get()
                        .uri(&format!("/grep?pattern={}&limit=1", words[0]))
                        .insert_header(bearer(&p.reader));
                    let (_, _, mut g) = parts(atest::call_service(&app, grep.to_request()).await).await;
                    let cursor = g["next_cursor"].as_str().and_then(|c| c.split_once('.')).map(|(_, rest)| rest.to_owned());
                    g["next_cursor"] = json!(cursor);
                    answers.push((redacted(s, false), redacted(c, false)));
                    greps.push(redacted(g, false));
                }
                prop_assert_eq!(&greps[0], &greps[1], "grep for {:?}", words[0]);
                prop_assert_eq!(&answers[0].0, &answers[1].0, "search for {:?}", query);
                // The context block quotes the version id, whose token count varies with its digits.
                for (_, c) in &mut answers {
                    c["tokens"] = Value::Null;
                }
                prop_assert_eq!(&answers[0].1, &answers[1].1, "context for {:?}", query);
                Ok(())
            })?;
        }
    }
}
