//! The second adversarial review (issue 28): the surfaces added after the
//! first round (MCP over HTTP, web sign-in, `cairn pull`, credentials,
//! pinned refs) under hostile use. One test per finding, each against the
//! real thing: a `cairn serve` process, the real app factory, the real
//! builder and pack adoption, a real HTTP server for `cairn pull`. Finding
//! 2 (a token following a redirect) lives in `remote.rs`, beside its git
//! smart-HTTP server.

use crate::fixtures::{World, cairn, stderr};
use crate::http::{bearer, served, served_with};
use crate::serve_process::{Server, agent};
use actix_web::http::StatusCode;
use actix_web::test as atest;
use cairn_index::IndexRoot;
use cairn_index::pack::{Dropped, Rollback, adopt_dropped_packs, unpack};
use cairn_serve::auth::TokenStore;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Resident memory of a running process now, in bytes.
fn rss(pid: u32) -> u64 {
    crate::hardening::proc_memory(pid, "VmRSS")
}

/// An MCP `initialize` request body.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}"#;

/// Finding 1: a flood of `initialize` requests leaves no sessions behind
/// and the server's memory where it was (MCP is served statelessly).
#[test]
fn an_initialize_flood_leaves_no_sessions_and_memory_flat() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let token = TokenStore::new(w.path("tokens.json"))
        .add("weak", &[], false)
        .expect("token");
    let server = Server::start(&w, "out", &[]);
    let post = || {
        agent()
            .post(&server.url("/mcp"))
            .header("Authorization", &format!("Bearer {token}"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .send(INITIALIZE)
            .expect("answer")
    };
    // Warm up the allocator and the workers before measuring.
    for _ in 0..50 {
        let _ = post().into_body().read_to_vec();
    }
    let before = rss(server.child.id());
    for i in 0..3000 {
        let res = post();
        assert_eq!(res.status().as_u16(), 200, "request {i}");
        assert!(
            res.headers().get("mcp-session-id").is_none(),
            "request {i} opened a session"
        );
        let _ = res.into_body().read_to_vec();
    }
    let after = rss(server.child.id());
    eprintln!("initialize flood: RSS {before} → {after} bytes after 3000 requests");
    assert!(
        after < before + (48 << 20),
        "RSS grew from {before} to {after} bytes"
    );
}

/// Finding 13: there is no session to take over: a session id from another
/// caller opens no stream, and every request runs as its own caller.
#[test]
fn no_mcp_session_can_be_taken_over_by_another_token() {
    let w = World::new();
    w.write_config("    groups: [team-a]\n");
    assert!(w.build("out", &[]).status.success());
    let store = TokenStore::new(w.path("tokens.json"));
    let victim = store
        .add("victim", &["team-a".to_owned()], false)
        .expect("token");
    let thief = store.add("thief", &[], false).expect("token");
    let server = Server::start(&w, "out", &[]);
    let res = agent()
        .post(&server.url("/mcp"))
        .header("Authorization", &format!("Bearer {victim}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .send(INITIALIZE)
        .expect("answer");
    assert_eq!(res.status().as_u16(), 200);
    let session = res
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("no-such-session")
        .to_owned();
    let stream = agent()
        .get(&server.url("/mcp"))
        .header("Authorization", &format!("Bearer {thief}"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("last-event-id", "0")
        .call()
        .expect("answer");
    assert_ne!(
        stream.status().as_u16(),
        200,
        "a stream for another's session"
    );
    // A call naming the victim's session runs as the thief, who sees no alpha.
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"retrieve","arguments":{"doc_id":"science/alpha/src/alpha/core.py"}}});
    let mut res = agent()
        .post(&server.url("/mcp"))
        .header("Authorization", &format!("Bearer {thief}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send(call.to_string())
        .expect("answer");
    let body = res.body_mut().read_to_string().unwrap_or_default();
    assert!(!body.contains("fit_model"), "{body}");
}

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

/// Bytes this thread has passed to write(2) so far.
fn thread_written() -> u64 {
    std::fs::read_to_string("/proc/thread-self/io")
        .expect("/proc/thread-self/io")
        .lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("wchar")
}

/// A regular file entry for a pack.
fn entry(tar: &mut tar::Builder<impl Write>, path: &str, len: u64, data: impl Read) {
    let mut h = tar::Header::new_ustar();
    h.set_size(len);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut h, path, data).expect("tar entry");
}

/// Writes `<dir>/cairn-index-<name>.tar.zst` and its `.sha256` from `fill`.
fn write_pack(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut tar::Builder<&mut Vec<u8>>),
) -> PathBuf {
    let mut tar_bytes = Vec::new();
    {
        let mut t = tar::Builder::new(&mut tar_bytes);
        fill(&mut t);
        t.finish().expect("tar");
    }
    let packed = zstd::encode_all(&tar_bytes[..], 3).expect("zstd");
    let path = dir.join(format!("cairn-index-{name}.tar.zst"));
    std::fs::write(&path, &packed).expect("pack");
    let sha = cairn_index::sha256_hex(&packed);
    std::fs::write(
        dir.join(format!("cairn-index-{name}.tar.zst.sha256")),
        format!("{sha}  cairn-index-{name}.tar.zst\n"),
    )
    .expect("sha");
    path
}

/// A tar stream of `len` zero bytes as one entry, compressed on the fly.
fn zero_bomb(dir: &Path, name: &str, inner: &str, len: u64, manifest: Option<&[u8]>) -> PathBuf {
    let path = dir.join(format!("cairn-index-{name}.tar.zst"));
    {
        let file = std::fs::File::create(&path).expect("pack");
        let zst = zstd::Encoder::new(file, 1).expect("zstd").auto_finish();
        let mut t = tar::Builder::new(zst);
        if let Some(m) = manifest {
            entry(&mut t, &format!("{name}/manifest.json"), m.len() as u64, m);
        }
        entry(
            &mut t,
            &format!("{name}/{inner}"),
            len,
            std::io::repeat(0).take(len),
        );
        t.finish().expect("tar");
    }
    let bytes = std::fs::read(&path).expect("read pack");
    let sha = cairn_index::sha256_hex(&bytes);
    std::fs::write(
        dir.join(format!("cairn-index-{name}.tar.zst.sha256")),
        format!("{sha}  cairn-index-{name}.tar.zst\n"),
    )
    .expect("sha");
    path
}

/// Finding 4: a pack that inflates to a gigabyte writes nothing past what
/// its manifest declares, and nothing at all without a manifest first.
#[test]
fn a_pack_bomb_writes_nothing_past_its_manifest() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let root = IndexRoot::new(w.path("out"));
    let live = root.current().expect("current");
    let manifest =
        std::fs::read(root.version_dir(&live).path().join("manifest.json")).expect("manifest");
    let scratch = w.path("packs");
    std::fs::create_dir_all(&scratch).expect("mkdir");
    const GIB: u64 = 1 << 30;

    // No manifest first: refused before a byte of the entry is written.
    let bomb = zero_bomb(&scratch, "00000000000000aa", "big", GIB, None);
    assert!(std::fs::metadata(&bomb).expect("size").len() < 1 << 20);
    let before = thread_written();
    let err = unpack(&bomb, &root, Rollback::Allow).expect_err("a bomb is refused");
    let written = thread_written() - before;
    assert!(written < 4 << 20, "{written} bytes written for {err}");
    assert!(err.to_string().contains("manifest"), "{err}");

    // The manifest first, then an entry far larger than it declares.
    let m: Value = serde_json::from_slice(&manifest).expect("json");
    let (inner, declared) = m["files"]
        .as_object()
        .and_then(|f| f.iter().next())
        .map(|(k, v)| (k.clone(), v["size"].as_u64().unwrap_or(0)))
        .expect("a file in the manifest");
    let bomb = zero_bomb(&scratch, live.as_str(), &inner, GIB, Some(&manifest));
    let other = IndexRoot::new(w.path("other"));
    let before = thread_written();
    let err = unpack(&bomb, &other, Rollback::Allow).expect_err("a bomb is refused");
    let written = thread_written() - before;
    eprintln!("pack bomb: {written} bytes written before refusal: {err}");
    assert!(
        written < declared + manifest.len() as u64 + (4 << 20),
        "{written} bytes written for {err}"
    );
    assert!(err.to_string().contains(&inner), "{err}");
    assert!(other.current().is_err(), "nothing became current");

    // A tar extension record (a GNU long name) of a gigabyte before the
    // manifest: tar would read it whole into memory; the budget stops it.
    let path = scratch.join("cairn-index-00000000000000cc.tar.zst");
    {
        let file = std::fs::File::create(&path).expect("pack");
        let zst = zstd::Encoder::new(file, 1).expect("zstd").auto_finish();
        let mut t = tar::Builder::new(zst);
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::GNULongName);
        h.set_size(GIB);
        h.set_cksum();
        t.append(&h, std::io::repeat(b'a').take(GIB))
            .expect("record");
        entry(&mut t, "00000000000000cc/manifest.json", 2, &b"{}"[..]);
        t.finish().expect("tar");
    }
    let bytes = std::fs::read(&path).expect("read pack");
    std::fs::write(
        scratch.join("cairn-index-00000000000000cc.tar.zst.sha256"),
        format!("{}  x\n", cairn_index::sha256_hex(&bytes)),
    )
    .expect("sha");
    let err = unpack(&path, &other, Rollback::Allow).expect_err("refused");
    assert!(err.to_string().contains("decompresses to more"), "{err}");
}

/// Finding 5: an older kept version, re-packed with its build time moved
/// to 2099 (and under another version's name), is never made current.
#[test]
fn an_older_version_repacked_as_new_is_not_adopted() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let root = IndexRoot::new(w.path("out"));
    let old = root.current().expect("v1");
    crate::fixtures::commit(&w.alpha_repo(), &[("NEW.md", b"# New\n".to_vec())], "new");
    assert!(w.build("out", &[]).status.success());
    let new = root.current().expect("v2");
    assert_ne!(old, new);
    let dir = root.version_dir(&old).path().to_owned();
    let mut manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("m"))
            .expect("json");
    manifest["built_at"] = json!("2099-01-01T00:00:00Z");
    let manifest = serde_json::to_vec_pretty(&manifest).expect("json");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "manifest.json")
        .collect();
    let forged = |name: &str, at: &Path| {
        write_pack(at, name, |t| {
            entry(
                t,
                &format!("{old}/manifest.json"),
                manifest.len() as u64,
                &manifest[..],
            );
            for f in &files {
                let p = dir.join(f);
                if p.is_dir() {
                    for e in walk(&p) {
                        let rel = e
                            .strip_prefix(&dir)
                            .expect("rel")
                            .to_string_lossy()
                            .into_owned();
                        let bytes = std::fs::read(&e).expect("read");
                        entry(t, &format!("{old}/{rel}"), bytes.len() as u64, &bytes[..]);
                    }
                } else {
                    let bytes = std::fs::read(&p).expect("read");
                    entry(t, &format!("{old}/{f}"), bytes.len() as u64, &bytes[..]);
                }
            }
        })
    };
    // Under its own name: the version on disk says when it was built, not the pack.
    let scratch = w.path("forged");
    std::fs::create_dir_all(&scratch).expect("mkdir");
    let own = forged(old.as_str(), &scratch);
    let u = unpack(&own, &root, Rollback::Refuse).expect("checked");
    assert!(!u.current, "an older version was made current");
    assert_eq!(root.current().expect("current"), new);
    // Under another version's name, dropped for a running server: refused.
    let renamed = forged("0123456789abcdef", root.path());
    let outcomes = adopt_dropped_packs(&root, 5);
    assert_eq!(outcomes.len(), 1);
    match &outcomes[0].1 {
        Dropped::Refused(why) => assert!(why.contains("0123456789abcdef"), "{why}"),
        Dropped::Adopted(u) => panic!("adopted {u:?} from {}", renamed.display()),
    }
    assert_eq!(root.current().expect("current"), new);
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
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

/// A one-shot HTTP file server over `files` (path → body), for a bounded number of requests.
fn file_server(files: Vec<(String, Vec<u8>)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16).flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            let target = head.split_whitespace().nth(1).unwrap_or("").to_owned();
            match files.iter().find(|(p, _)| *p == target) {
                Some((_, body)) => {
                    let _ = stream.write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .as_bytes(),
                    );
                    let _ = stream.write_all(body);
                }
                None => {
                    let _ = stream.write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                }
            }
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// Findings 4 and 9 for `cairn pull`: plain HTTP only when asked, a size
/// limit on what it downloads, and a server that never answers is given up on.
#[test]
fn pull_refuses_plain_http_oversized_packs_and_silent_servers() {
    let w = World::new();
    let index = w.path("pulled");
    let index_s = index.to_str().expect("utf8");
    let (silent, _held) = silent_server();
    // Plain HTTP is refused before any connection, unless asked for.
    let out = cairn(&["pull", &format!("{silent}/latest.json"), "--index", index_s]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--allow-http"), "{}", stderr(&out));
    // A server that accepts and says nothing: given up after the timeout.
    let started = Instant::now();
    let out = cairn(&[
        "pull",
        &format!("{silent}/latest.json"),
        "--index",
        index_s,
        "--allow-http",
        "--timeout",
        "2",
    ]);
    let took = started.elapsed();
    assert!(!out.status.success());
    assert!(took < Duration::from_secs(15), "pull waited {took:?}");
    assert!(
        stderr(&out).to_lowercase().contains("time"),
        "{}",
        stderr(&out)
    );
    // A pack larger than the limit is not kept.
    let pack = vec![7u8; 4 << 20];
    let sha = cairn_index::sha256_hex(&pack);
    let name = "cairn-index-00000000000000ab.tar.zst";
    let latest = json!({"index_version": "00000000000000ab", "pack": name, "sha256": sha});
    let base = file_server(vec![
        ("/latest.json".to_owned(), latest.to_string().into_bytes()),
        (format!("/{name}"), pack),
    ]);
    let out = cairn(&[
        "pull",
        &format!("{base}/latest.json"),
        "--index",
        index_s,
        "--allow-http",
        "--max-bytes",
        "1000000",
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("1000000"), "{}", stderr(&out));
    let left: Vec<String> = std::fs::read_dir(&index)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        left.iter().all(|n| !n.contains("00000000000000ab")),
        "{left:?}"
    );
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

/// Finding 11: the URI listed for a document reads that document, whatever
/// characters its path holds.
#[test]
fn an_mcp_resource_uri_reads_exactly_its_document() {
    use rmcp::model::ReadResourceRequestParams;
    let w = World::new();
    crate::fixtures::commit(
        &w.alpha_repo(),
        &[
            ("notes", b"the plain notes\n".to_vec()),
            (
                "notes?lines=1-1",
                b"the other notes, with a question mark\n".to_vec(),
            ),
        ],
        "odd names",
    );
    assert!(w.build("out", &[]).status.success());
    crate::mcp::runtime().block_on(async {
        let client = crate::mcp::stdio_client(&w, "out").await;
        let resources = client.list_all_resources().await.expect("resources");
        for (name, want) in [
            ("science/alpha/notes?lines=1-1", "question mark"),
            ("science/alpha/notes", "plain notes"),
        ] {
            let r = resources
                .iter()
                .find(|r| r.name == name)
                .unwrap_or_else(|| panic!("{name} is not listed"));
            let read = client
                .read_resource(ReadResourceRequestParams::new(r.uri.clone()))
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", r.uri));
            let text = serde_json::to_string(&read.contents).expect("json");
            assert!(text.contains(want), "{} read {text}", r.uri);
        }
        client.cancel().await.expect("close");
    });
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
