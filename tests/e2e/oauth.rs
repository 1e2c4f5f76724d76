//! cairn as an OAuth 2.1 resource server (issue 31), against real parties:
//!
//! - an authorization server this test serves over HTTP (OpenID discovery
//!   and a JWKS, its own RSA keys), whose tokens the test signs: every
//!   refusal (another audience, expired, another issuer, a query-string
//!   token, a missing scope), key rotation and its rate bound;
//! - the protocol versions MCP clients speak, over raw HTTP.
//!
//! The whole flow with `oidc-provider` and the MCP Python SDK's client is in
//! `oauth_parties.rs`; anonymous callers of `--public-read` in `public_read.rs`.

use crate::fixtures::World;
use crate::serve_process::{Server, agent, free_port};
use actix_web::{App, HttpResponse, HttpServer, web};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use rsa::pkcs8::{EncodePrivateKey, LineEnding};
use rsa::traits::PublicKeyParts;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A signing key: its id, the PEM that signs, the JWK that verifies.
struct Key {
    kid: String,
    pem: String,
    jwk: Value,
}

impl Key {
    fn new(kid: &str) -> Self {
        let private = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("key");
        let b64 = |b: Vec<u8>| {
            use base64::Engine as _;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
        };
        let jwk = json!({
            "kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid,
            "n": b64(private.n().to_bytes_be()), "e": b64(private.e().to_bytes_be()),
        });
        let pem = private
            .to_pkcs8_pem(LineEnding::LF)
            .expect("pem")
            .to_string();
        Self {
            kid: kid.to_owned(),
            pem,
            jwk,
        }
    }

    fn sign(&self, claims: &Value) -> String {
        let mut h = Header::new(Algorithm::RS256);
        h.kid = Some(self.kid.clone());
        encode(
            &h,
            claims,
            &EncodingKey::from_rsa_pem(self.pem.as_bytes()).expect("pem"),
        )
        .expect("sign")
    }
}

/// An authorization server's public face: discovery and keys over HTTP.
struct Issuer {
    url: String,
    published: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
}

impl Issuer {
    /// Serves OpenID discovery (RFC 8414's URL answers 404, as many do) and `keys`.
    fn start(keys: &[&Key]) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!(
            "http://127.0.0.1:{}",
            listener.local_addr().expect("addr").port()
        );
        let published = Arc::new(Mutex::new(
            keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>(),
        ));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (p, f, u) = (Arc::clone(&published), Arc::clone(&fetches), url.clone());
        std::thread::spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                let server = HttpServer::new(move || {
                    let (p, f, u) = (Arc::clone(&p), Arc::clone(&f), u.clone());
                    App::new()
                        .route(
                            "/.well-known/openid-configuration",
                            web::get().to(move || {
                                let u = u.clone();
                                async move {
                                    HttpResponse::Ok()
                                        .json(json!({"issuer": u, "jwks_uri": format!("{u}/jwks")}))
                                }
                            }),
                        )
                        .route(
                            "/jwks",
                            web::get().to(move || {
                                f.fetch_add(1, Ordering::SeqCst);
                                let keys = p.lock().expect("keys").clone();
                                async move { HttpResponse::Ok().json(json!({"keys": keys})) }
                            }),
                        )
                })
                .workers(1)
                .listen(listener)
                .expect("listen")
                .run();
                let _ = server.await;
            });
        });
        Self {
            url,
            published,
            fetches,
        }
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The response of `GET path` with `authorization` (if any): status, WWW-Authenticate, body.
pub(crate) fn get(url: &str, authorization: Option<&str>) -> (u16, String, Value) {
    let mut req = agent().get(url);
    if let Some(a) = authorization {
        req = req.header("Authorization", a);
    }
    let mut r = req.call().expect("response");
    let challenge = r
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = r.body_mut().read_to_string().unwrap_or_default();
    (
        r.status().as_u16(),
        challenge,
        serde_json::from_str(&body).unwrap_or(Value::Null),
    )
}

/// A JSON-RPC POST to `/mcp`: status, the challenge, the JSON answer.
pub(crate) fn mcp_post(
    url: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, String, Value) {
    let mut req = agent()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(t) = token {
        req = req.header("Authorization", &format!("Bearer {t}"));
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut r = req.send(body.to_string()).expect("response");
    let challenge = r
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let text = r.body_mut().read_to_string().unwrap_or_default();
    // A JSON answer, or the data line of a one-event stream.
    let json = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str(d.trim()).ok())
            .unwrap_or(Value::Null)
    });
    (r.status().as_u16(), challenge, json)
}

/// A fixture index whose `alpha` repository only `team-a` may see.
pub(crate) fn world() -> World {
    let w = World::new();
    w.write_config("    groups: [team-a]\n");
    assert!(w.build("out", &[]).status.success());
    w
}

#[test]
fn access_tokens_are_checked_as_the_mcp_authorization_spec_asks() {
    let w = world();
    let key = Key::new("k1");
    let issuer = Issuer::start(&[&key]);
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}");
    let index = w.path("out");
    let server = Server::start_on(
        &w,
        index.to_str().expect("utf8"),
        port,
        &[
            "--oauth-issuer",
            &issuer.url,
            "--public-url",
            &public,
            "--oauth-key-refresh-secs",
            "2",
        ],
    );
    let started = std::time::Instant::now();
    let mcp_resource = format!("{public}/mcp");
    let claims = |over: Value| {
        let mut c = json!({
            "iss": issuer.url, "sub": "alice", "aud": mcp_resource, "exp": now() + 300,
            "iat": now(), "scope": "cairn:read offline_access", "groups": ["team-a"],
        });
        if let (Some(c), Some(o)) = (c.as_object_mut(), over.as_object()) {
            for (k, v) in o {
                c.insert(k.clone(), v.clone());
            }
        }
        c
    };
    let bearer = |t: &str| format!("Bearer {t}");

    // RFC 9728 metadata, for the server and for its MCP endpoint, without credentials.
    let (status, _, doc) = get(&server.url("/.well-known/oauth-protected-resource"), None);
    assert_eq!(status, 200);
    assert_eq!(
        doc,
        json!({"resource": public, "authorization_servers": [issuer.url], "scopes_supported": ["cairn:read"],
               "bearer_methods_supported": ["header"], "resource_name": "cairn"})
    );
    let (_, _, doc) = get(
        &server.url("/.well-known/oauth-protected-resource/mcp"),
        None,
    );
    assert_eq!(doc["resource"], mcp_resource);

    // No credentials: 401 naming where to learn how to get some, on the API and on /mcp.
    let (status, challenge, body) = get(&server.url("/search?query=fit_model"), None);
    assert_eq!((status, body["code"].as_str()), (401, Some("unauthorized")));
    assert_eq!(
        challenge,
        format!(
            "Bearer resource_metadata=\"{public}/.well-known/oauth-protected-resource\", scope=\"cairn:read\""
        )
    );
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, challenge, _) = mcp_post(&server.url("/mcp"), None, &[], &init);
    assert_eq!(status, 401);
    assert!(
        challenge.contains(&format!(
            "resource_metadata=\"{public}/.well-known/oauth-protected-resource/mcp\""
        )),
        "{challenge}"
    );

    // A valid token: its groups claim decides what the caller sees.
    let team = key.sign(&claims(json!({})));
    let (status, _, body) = get(
        &server.url("/search?query=fit_model&limit=50"),
        Some(&bearer(&team)),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body["hits"]
            .as_array()
            .is_some_and(|h| h.iter().any(|h| h["repo"] == "alpha")),
        "{body}"
    );
    let outsider = key.sign(&claims(json!({"groups": []})));
    let (status, _, body) = get(
        &server.url("/search?query=fit_model&limit=50"),
        Some(&bearer(&outsider)),
    );
    assert_eq!(status, 200);
    assert!(
        body["hits"]
            .as_array()
            .is_some_and(|h| h.iter().all(|h| h["repo"] != "alpha")),
        "hidden is absent: {body}"
    );
    // The server's own resource works as audience too.
    let api = key.sign(&claims(json!({"aud": public})));
    assert_eq!(get(&server.url("/version"), Some(&bearer(&api))).0, 200);
    // And MCP takes it.
    let (status, _, answer) = mcp_post(&server.url("/mcp"), Some(&team), &[], &init);
    assert_eq!(
        (status, answer["result"]["protocolVersion"].as_str()),
        (200, Some("2025-06-18")),
        "{answer}"
    );

    // Refused with 401 invalid_token: another resource, expired, another issuer, unsigned.
    let stranger = Key::new("k1");
    let mut other_issuer = claims(json!({}));
    other_issuer["iss"] = json!("http://127.0.0.1:9");
    let unsigned = {
        use base64::Engine as _;
        let b = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        format!(
            "{}.{}.",
            b(json!({"alg": "none", "typ": "JWT"})),
            b(claims(json!({})))
        )
    };
    let typed = |typ: &str| {
        let mut h = Header::new(Algorithm::RS256);
        h.kid = Some(key.kid.clone());
        h.typ = Some(typ.to_owned());
        let pem = EncodingKey::from_rsa_pem(key.pem.as_bytes()).expect("pem");
        encode(&h, &claims(json!({})), &pem).expect("sign")
    };
    let at_jwt = typed("at+jwt");
    assert_eq!(
        get(&server.url("/version"), Some(&bearer(&at_jwt))).0,
        200,
        "RFC 9068's type"
    );
    for (why, token) in [
        (
            "another resource",
            key.sign(&claims(json!({"aud": "https://other.example/mcp"}))),
        ),
        (
            "`resource` is not the audience",
            key.sign(&claims(
                json!({"aud": "https://other.example", "resource": mcp_resource}),
            )),
        ),
        ("not an access token", typed("logout+jwt")),
        ("no audience", key.sign(&claims(json!({"aud": null})))),
        ("expired", key.sign(&claims(json!({"exp": now() - 3600})))),
        ("another issuer", key.sign(&other_issuer)),
        (
            "signed by a stranger with a known kid",
            stranger.sign(&claims(json!({}))),
        ),
        ("alg none", unsigned),
    ] {
        let (status, challenge, body) = get(&server.url("/version"), Some(&bearer(&token)));
        assert_eq!(
            (status, body["code"].as_str()),
            (401, Some("unauthorized")),
            "{why}"
        );
        assert!(
            challenge.ends_with("error=\"invalid_token\""),
            "{why}: {challenge}"
        );
        let (status, _, _) = mcp_post(&server.url("/mcp"), Some(&token), &[], &init);
        assert_eq!(status, 401, "{why} over MCP");
    }
    // A valid token in the query string is never accepted, with or without a header.
    let in_url = server.url(&format!("/version?access_token={team}"));
    let (status, challenge, body) = get(&in_url, None);
    assert_eq!(
        (status, body["field"].as_str()),
        (400, Some("access_token")),
        "{body}"
    );
    assert!(
        challenge.ends_with("error=\"invalid_request\""),
        "{challenge}"
    );
    assert_eq!(get(&in_url, Some(&bearer(&team))).0, 400);
    // Without the scope: 403 insufficient_scope, naming the scope.
    let narrow = key.sign(&claims(json!({"scope": "openid"})));
    let (status, challenge, body) = get(&server.url("/version"), Some(&bearer(&narrow)));
    assert_eq!((status, body["code"].as_str()), (403, Some("forbidden")));
    assert!(
        challenge.contains("scope=\"cairn:read\"")
            && challenge.ends_with("error=\"insufficient_scope\""),
        "{challenge}"
    );

    // Key rotation: a token signed with a key published since is accepted
    // after one fetch; an unknown kid right after does not fetch again.
    std::thread::sleep(Duration::from_secs(2).saturating_sub(started.elapsed()));
    let rotated = Key::new("k2");
    issuer
        .published
        .lock()
        .expect("keys")
        .push(rotated.jwk.clone());
    let before = issuer.fetches.load(Ordering::SeqCst);
    let fresh = rotated.sign(&claims(json!({})));
    assert_eq!(
        get(&server.url("/version"), Some(&bearer(&fresh))).0,
        200,
        "a rotated key is fetched"
    );
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), before + 1);
    let forged = Key::new("k3").sign(&claims(json!({})));
    for _ in 0..5 {
        assert_eq!(get(&server.url("/version"), Some(&bearer(&forged))).0, 401);
    }
    assert_eq!(
        issuer.fetches.load(Ordering::SeqCst),
        before + 1,
        "unknown kids fetch at most once per interval"
    );

    // Static tokens keep working beside OAuth.
    let store = cairn_serve::auth::TokenStore::new(w.path("tokens.json"));
    let static_token = store.add("bot", &[], false).expect("token");
    std::thread::sleep(Duration::from_millis(2_100));
    assert_eq!(
        get(&server.url("/version"), Some(&bearer(&static_token))).0,
        200
    );
}

#[test]
fn oauth_flags_are_checked_before_serving() {
    let w = world();
    let index = w.path("out");
    let index = index.to_str().expect("utf8");
    for (args, says) in [
        (
            vec!["--oauth-issuer", "https://id.example.org"],
            "--public-url",
        ),
        (
            vec![
                "--oauth-issuer",
                "https://id.example.org",
                "--public-url",
                "https://cairn.example.org/sub",
            ],
            "no path",
        ),
        (
            vec![
                "--oauth-issuer",
                "http://id.example.org",
                "--public-url",
                "https://cairn.example.org",
            ],
            "https",
        ),
    ] {
        let mut argv = vec!["serve", "--index", index, "--bind", "127.0.0.1:0"];
        argv.extend(args.iter().copied());
        let o = crate::fixtures::cairn(&argv);
        assert!(!o.status.success(), "{args:?}");
        assert!(
            crate::fixtures::stderr(&o).contains(says),
            "{args:?}: {}",
            crate::fixtures::stderr(&o)
        );
    }
}

/// MCP clients of three protocol generations get answers from `/mcp`:
/// 2025-06-18 and 2025-11-25 by the `initialize` handshake, 2026-07-28
/// without one (per-request metadata). No session is kept for any.
#[test]
fn mcp_clients_of_each_protocol_version_are_served() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let token = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("c", &[], false)
        .expect("token");
    let server = Server::start(&w, "out", &[]);
    let url = server.url("/mcp");
    for version in ["2025-06-18", "2025-11-25"] {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let (status, _, answer) = mcp_post(&url, Some(&token), &[], &init);
        assert_eq!(
            (status, answer["result"]["protocolVersion"].as_str()),
            (200, Some(version)),
            "{answer}"
        );
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let (status, _, answer) = mcp_post(
            &url,
            Some(&token),
            &[("MCP-Protocol-Version", version)],
            &list,
        );
        assert_eq!(status, 200, "{answer}");
        assert!(
            answer["result"]["tools"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["name"] == "fetch")),
            "{answer}"
        );
    }
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
                      "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}});
    let discover =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}});
    let (status, _, answer) = mcp_post(
        &url,
        Some(&token),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "server/discover"),
        ],
        &discover,
    );
    assert_eq!(status, 200, "{answer}");
    let versions = &answer["result"]["supportedVersions"];
    for v in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        assert!(
            versions
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == v)),
            "{v} in {answer}"
        );
    }
    let search = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "fit_model"}, "_meta": meta}});
    let (status, _, answer) = mcp_post(
        &url,
        Some(&token),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "search"),
        ],
        &search,
    );
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer["result"]["structuredContent"]["results"][0]["id"].is_string(),
        "{answer}"
    );
}
