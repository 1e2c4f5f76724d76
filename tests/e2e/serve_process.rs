//! `cairn serve` as a real process on loopback: fail-fast startup, hot swaps
//! under concurrent requests (by polling and by SIGHUP), a broken version
//! refused, and a graceful exit on SIGTERM.

use crate::fixtures::{World, commit, current_dir};
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A running `cairn serve`.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into()
}

impl Server {
    /// Starts `cairn serve` on the fixture index in `out`, waiting until it is ready.
    pub fn start(w: &World, out: &str, extra: &[&str]) -> Server {
        Self::start_at(w, w.path(out).to_str().expect("utf8"), extra)
    }

    /// Starts `cairn serve --index INDEX` (a root or a pack), waiting until it is ready.
    pub fn start_at(w: &World, index: &str, extra: &[&str]) -> Server {
        Self::start_on(w, index, free_port(), extra)
    }

    /// Starts `cairn serve --index INDEX` on `port`, waiting until it is ready.
    pub fn start_on(w: &World, index: &str, port: u16, extra: &[&str]) -> Server {
        let bind = format!("127.0.0.1:{port}");
        let child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["serve", "--index", index])
            .arg("--model-dir")
            .arg(&w.model)
            .args(["--bind", &bind, "--tokens"])
            .arg(w.path("tokens.json"))
            .args(extra)
            .env("CAIRN_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn cairn serve");
        let s = Server { child, port };
        let started = Instant::now();
        loop {
            if let Ok(r) = agent().get(&s.url("/ready")).call()
                && r.status() == 200
            {
                return s;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "server did not become ready"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {sig}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn get_json(url: &str, token: &str) -> (u16, Value) {
    match agent()
        .get(url)
        .header("Authorization", &format!("Bearer {token}"))
        .call()
    {
        Ok(mut r) => {
            let status = r.status().as_u16();
            let body = r.body_mut().read_to_string().unwrap_or_default();
            (status, serde_json::from_str(&body).unwrap_or(Value::Null))
        }
        Err(e) => (0, Value::String(e.to_string())),
    }
}

fn post_json(url: &str, token: &str, body: &Value) -> u16 {
    agent()
        .post(url)
        .header("Authorization", &format!("Bearer {token}"))
        .header("content-type", "application/json")
        .send(body.to_string())
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

fn live_version(s: &Server, token: &str) -> String {
    get_json(&s.url("/version"), token).1["index_version"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn wait_for_version(s: &Server, token: &str, want: &str) {
    let started = Instant::now();
    while live_version(s, token) != want {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "never swapped to {want}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Commits a change to alpha and rebuilds `out`; returns the new version.
fn publish_change(w: &World, n: usize) -> String {
    commit(
        &w.alpha_repo(),
        &[(
            "docs/changes.md",
            format!("# Changes\n\nRelease {n} fits light curves faster.\n").into_bytes(),
        )],
        "change",
    );
    let out = w.build("out", &[]);
    assert!(out.status.success(), "{}", crate::fixtures::stderr(&out));
    std::fs::read_to_string(w.path("out/CURRENT"))
        .expect("CURRENT")
        .trim()
        .to_owned()
}

#[test]
fn startup_fails_fast_with_a_clear_message() {
    let w = World::new();
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["serve", "--index"])
        .arg(w.path("no-index-here"))
        .args(["--bind", "127.0.0.1:0"])
        .env("CAIRN_LOG", "warn")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("opening the index at"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["serve", "--no-auth", "--bind", "0.0.0.0:8080", "--index"])
        .arg(w.path("no-index-here"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"));
}

#[test]
fn hot_swaps_under_concurrent_requests_lose_nothing() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let token = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("bot", &[], false)
        .expect("token");
    let s = Arc::new(Server::start(&w, "out", &["--watch-ms", "100"]));
    let first = live_version(&s, &token);
    assert!(!first.is_empty());

    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let clients: Vec<_> = (0..4)
        .map(|i| {
            let (s, token, stop, ok, failed) = (
                Arc::clone(&s),
                token.clone(),
                Arc::clone(&stop),
                Arc::clone(&ok),
                Arc::clone(&failed),
            );
            std::thread::spawn(move || {
                let retrieve =
                    serde_json::json!({"doc_id": "science/alpha/README.md", "start": 1, "end": 3});
                while !stop.load(Ordering::Relaxed) {
                    let status = if i % 2 == 0 {
                        get_json(&s.url("/search?query=fit+light+curves"), &token).0
                    } else {
                        post_json(&s.url("/retrieve"), &token, &retrieve)
                    };
                    if status == 200 {
                        ok.fetch_add(1, Ordering::Relaxed);
                    } else {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();

    // Two swaps by polling CURRENT, while the clients run.
    let second = publish_change(&w, 2);
    assert_ne!(second, first);
    wait_for_version(&s, &token, &second);
    let third = publish_change(&w, 3);
    wait_for_version(&s, &token, &third);

    // A broken version is refused; the live one keeps serving.
    let live = current_dir(&w.path("out"));
    let broken = w.path("out/versions/00000000deadbeef");
    copy_dir(&live, &broken);
    let content = broken.join("content.bin");
    let mut bytes = std::fs::read(&content).expect("read");
    bytes[0] ^= 0xff;
    std::fs::write(&content, bytes).expect("write");
    std::fs::write(w.path("out/CURRENT"), "00000000deadbeef").expect("point CURRENT");
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        live_version(&s, &token),
        third,
        "the broken version was refused"
    );

    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().expect("client");
    }
    assert_eq!(failed.load(Ordering::Relaxed), 0, "failed requests");
    assert!(
        ok.load(Ordering::Relaxed) > 20,
        "too few requests to mean anything"
    );
}

pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).expect("copy");
        }
    }
}

#[test]
fn sighup_swaps_at_once_and_sigterm_exits_cleanly() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let token = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("bot", &[], false)
        .expect("token");
    // Polling is slow here, so only SIGHUP can explain a quick swap.
    let mut s = Server::start(&w, "out", &["--watch-ms", "600000"]);
    let next = publish_change(&w, 2);
    std::thread::sleep(Duration::from_millis(300));
    assert_ne!(live_version(&s, &token), next, "no swap without a signal");
    s.signal("-HUP");
    wait_for_version(&s, &token, &next);

    s.signal("-TERM");
    let started = Instant::now();
    let status = loop {
        if let Some(st) = s.child.try_wait().expect("wait") {
            break st;
        }
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "no exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
}
