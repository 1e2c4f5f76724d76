//! Repositories behind a real git smart-HTTP server (`git http-backend`
//! behind a small HTTP/1.1 front that asks for Basic credentials and can
//! fail on purpose): a private repository read with the token its
//! `token_env` names, a transient failure retried, and under `--keep-going`
//! an unreachable repository keeping the commit the cache holds, marked stale.

use crate::fixtures::{World, read_json, stderr};
use base64::Engine as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const TOKEN: &str = "s3cret-token";

/// What the front does with each request.
struct Front {
    root: PathBuf,
    /// Requests answered 503 before serving (a flaky network or server).
    fail_first: AtomicUsize,
    /// Every request answered 503 (the remote is down).
    down: std::sync::atomic::AtomicBool,
    /// Every request answered `302 Found` to the same path under this base URL.
    redirect_to: std::sync::Mutex<Option<String>>,
    /// Requests that carried an `Authorization` header, whatever it held.
    authorized: AtomicUsize,
}

impl Front {
    /// A front for `root` that fails its first `fail_first` requests.
    fn new(root: PathBuf, fail_first: usize) -> Arc<Self> {
        Arc::new(Self {
            root,
            fail_first: AtomicUsize::new(fail_first),
            down: false.into(),
            redirect_to: std::sync::Mutex::new(None),
            authorized: AtomicUsize::new(0),
        })
    }
}

/// Serves `root`'s repositories on a free port; returns the base URL.
fn serve(front: Arc<Front>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().expect("addr").port()
    );
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let front = Arc::clone(&front);
            std::thread::spawn(move || answer(&front, stream));
        }
    });
    url
}

/// One request, answered and closed (`Connection: close`).
fn answer(front: &Front, stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (
        parts.next().unwrap_or("").to_owned(),
        parts.next().unwrap_or("").to_owned(),
    );
    let (mut auth, mut length, mut chunked, mut ctype) =
        (String::new(), 0usize, false, String::new());
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        let (k, v) = h.split_once(':').unwrap_or((&h, ""));
        match k.trim().to_ascii_lowercase().as_str() {
            "authorization" => auth = v.trim().to_owned(),
            "content-length" => length = v.trim().parse().unwrap_or(0),
            "transfer-encoding" => chunked = v.to_ascii_lowercase().contains("chunked"),
            "content-type" => ctype = v.trim().to_owned(),
            _ => {}
        }
    }
    let body = if chunked {
        dechunk(&mut reader)
    } else {
        let mut b = vec![0; length];
        let _ = reader.read_exact(&mut b);
        b
    };
    let mut out = stream;
    if !auth.is_empty() {
        front.authorized.fetch_add(1, Ordering::SeqCst);
    }
    let redirect = front
        .redirect_to
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    if let Some(base) = redirect {
        let _ = out.write_all(
            format!("HTTP/1.1 302 Found\r\nLocation: {base}{target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
        return;
    }
    let down = front.down.load(Ordering::SeqCst);
    let flaky = front
        .fail_first
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    if down || flaky {
        let _ = out.write_all(
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
        return;
    }
    let want = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{TOKEN}"))
    );
    if auth != want {
        let _ = out.write_all(b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"private\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut cgi = Command::new("git")
        .arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", &front.root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", &method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_TYPE", &ctype)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_USER", "x-access-token")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", &front.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git http-backend (git is needed for this test)");
    let _ = cgi.stdin.take().expect("stdin").write_all(&body);
    let output = cgi.wait_with_output().expect("cgi");
    // CGI: headers, a blank line, the body; `Status:` sets the status.
    let split = output
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| {
            output
                .stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|i| (i, 2))
        });
    let Some((at, sep)) = split else { return };
    let head = String::from_utf8_lossy(&output.stdout[..at]).into_owned();
    let payload = &output.stdout[at + sep..];
    let mut status = "200 OK".to_owned();
    let mut headers = String::new();
    for h in head.lines() {
        match h.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_owned(),
            Some(_) => headers.push_str(&format!("{h}\r\n")),
            None => {}
        }
    }
    let _ = out.write_all(
        format!(
            "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
            payload.len()
        )
        .as_bytes(),
    );
    let _ = out.write_all(payload);
}

/// A chunked request body, joined.
fn dechunk(reader: &mut impl BufRead) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        if reader.read_line(&mut size).unwrap_or(0) == 0 {
            break;
        }
        let n =
            usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
        if n == 0 {
            let mut end = String::new();
            let _ = reader.read_line(&mut end);
            break;
        }
        let mut chunk = vec![0; n + 2];
        if reader.read_exact(&mut chunk).is_err() {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body
}

/// A bare copy of alpha under `root`, as a git server would hold it.
fn publish(w: &World, root: &Path) {
    git2::build::RepoBuilder::new()
        .bare(true)
        .clone(w.alpha.to_str().expect("utf8"), &root.join("alpha.git"))
        .expect("bare copy");
}

fn config(w: &World, url: &str, extra: &str) {
    w.write(
        "config/repositories.yml",
        &format!("science:\n  - name: alpha\n    url: {url}/alpha.git\n    web_url: https://github.com/example/alpha\n    description: Alpha fits light curves\n{extra}"),
    );
}

fn build(w: &World, out: &str, token: Option<&str>, extra: &[&str]) -> std::process::Output {
    let (config, out, cache) = (
        w.path("config/repositories.yml"),
        w.path(out),
        w.path("cache"),
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(["build", "--config"])
        .arg(config)
        .arg("--out")
        .arg(out)
        .arg("--cache")
        .arg(cache)
        .arg("--model-dir")
        .arg(&w.model)
        .args(extra)
        .env("CAIRN_LOG", "info")
        .env_remove("ALPHA_TOKEN");
    if let Some(t) = token {
        cmd.env("ALPHA_TOKEN", t);
    }
    cmd.output().expect("run cairn")
}

#[test]
fn a_private_repository_is_read_with_the_token_its_config_names() {
    let w = World::new();
    let root = w.path("server");
    publish(&w, &root);
    let front = Front::new(root, 0);
    let url = serve(Arc::clone(&front));
    config(&w, &url, "    token_env: ALPHA_TOKEN\n");

    let out = build(&w, "out", None, &[]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("set the environment variable ALPHA_TOKEN"),
        "{}",
        stderr(&out)
    );
    let out = build(&w, "out", Some("wrong"), &[]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("were refused"), "{}", stderr(&out));

    let out = build(&w, "out", Some(TOKEN), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = read_json(&crate::fixtures::current_dir(&w.path("out")).join("manifest.json"));
    let repo = &manifest["repos"][0];
    assert!(repo["docs"].as_u64().is_some_and(|n| n > 3), "{repo}");
    assert_eq!(repo["description"], "Alpha fits light curves");
    assert!(
        !manifest.to_string().contains(TOKEN),
        "the token is never recorded"
    );

    // A token written into the URL is refused, with the line and column.
    config(
        &w,
        &url.replace("http://", &format!("http://x-access-token:{TOKEN}@")),
        "",
    );
    let out = build(&w, "out2", None, &[]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("repositories.yml:3:") && stderr(&out).contains("token_env"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_flaky_remote_is_retried_and_a_dead_one_keeps_the_cached_commit_marked_stale() {
    let w = World::new();
    let root = w.path("server");
    publish(&w, &root);
    let front = Front::new(root, 1);
    let url = serve(Arc::clone(&front));
    config(&w, &url, "    token_env: ALPHA_TOKEN\n");

    let out = build(&w, "out", Some(TOKEN), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("retrying in 2 s"), "{}", stderr(&out));
    let before = read_json(&crate::fixtures::current_dir(&w.path("out")).join("manifest.json"));

    // The remote goes down and alpha gains a commit nobody can fetch.
    front.down.store(true, Ordering::SeqCst);
    crate::fixtures::commit(
        &w.alpha_repo(),
        &[("NEW.md", b"# New\n".to_vec())],
        "unseen",
    );
    let out = build(&w, "out", Some(TOKEN), &[]);
    assert!(
        !out.status.success(),
        "without --keep-going a failed repository fails the build"
    );
    let out = build(&w, "out", Some(TOKEN), &["--keep-going"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("STALE"), "{}", stderr(&out));
    let after = read_json(&crate::fixtures::current_dir(&w.path("out")).join("manifest.json"));
    let repo = &after["repos"][0];
    assert_eq!(repo["stale"], true, "{repo}");
    assert!(
        repo["error"].as_str().is_some_and(|e| e.contains("503")),
        "{repo}"
    );
    assert_eq!(
        repo["commit"], before["repos"][0]["commit"],
        "the commit fetched before"
    );
    assert_eq!(repo["docs"], before["repos"][0]["docs"]);
}

/// Hardening round 2, finding 2: a remote that redirects elsewhere never
/// receives the token, and a token over plain HTTP to another machine is
/// refused at its line.
#[test]
fn the_token_goes_only_to_the_remote_it_was_configured_for() {
    let w = World::new();
    let root = w.path("server");
    publish(&w, &root);
    // The real server, on another port: another origin than the one configured.
    let elsewhere = Front::new(root.clone(), 0);
    let elsewhere_url = serve(Arc::clone(&elsewhere));
    let configured = Front::new(root, 0);
    *configured
        .redirect_to
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = Some(elsewhere_url);
    let url = serve(Arc::clone(&configured));
    config(&w, &url, "    token_env: ALPHA_TOKEN\n");
    let out = build(&w, "out", Some(TOKEN), &[]);
    assert!(!out.status.success(), "{}", stderr(&out));
    assert_eq!(
        elsewhere.authorized.load(Ordering::SeqCst),
        0,
        "the redirect target received credentials: {}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains(TOKEN));

    // Plain HTTP carries the token in cleartext: only loopback may have it.
    w.write(
        "config/repositories.yml",
        "science:\n  - name: alpha\n    url: http://git.example.org/alpha.git\n    web_url: https://github.com/example/alpha\n    token_env: ALPHA_TOKEN\n",
    );
    let out = build(&w, "out3", Some(TOKEN), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("repositories.yml:5:") && stderr(&out).contains("https"),
        "{}",
        stderr(&out)
    );
}
