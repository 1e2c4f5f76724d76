//! `cairn watch`: a commit pushed to a watched repository reaches the served
//! index at the next poll, and a poll with nothing moved builds nothing.

use crate::fixtures::{World, commit};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The watch process, killed when the test ends however it ends.
pub struct Watching(pub Child);

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cairn watch` on the world's config, index and cache, with `extra` flags.
pub fn start_watch(w: &World, extra: &[&str], env: &[(&str, &str)]) -> Watching {
    let arg = |rel: &str| w.path(rel).to_str().expect("utf8").to_owned();
    Watching(
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["watch", "--config", &arg("config/repositories.yml")])
            .args(["--out", &arg("out"), "--cache", &arg("cache")])
            .args(["--model-dir", w.model.to_str().expect("utf8")])
            .args(extra)
            .envs(env.iter().copied())
            .env("CAIRN_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start cairn watch"),
    )
}

/// What `f` gives once it gives something, within a minute.
pub fn within_a_minute<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < until, "waited a minute for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A watch polling every second, once it has built and read alpha's head:
/// the watch, the first version and that head.
fn polling_every_second(w: &World) -> (Watching, String, git2::Oid) {
    let out = w.path("out");
    let watch = start_watch(w, &["--every", "1"], &[]);
    let first = within_a_minute("the first build", || {
        std::fs::read_to_string(out.join("CURRENT")).ok()
    });
    let head = w.alpha_repo().head().expect("head").target().expect("oid");
    within_a_minute("a poll that reads alpha's head", || {
        freshness(&out).filter(|f| alpha_head(f) == Some(head.to_string()))
    });
    (watch, first, head)
}

pub fn freshness(out: &Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(out.join("freshness.json")).ok()?).ok()
}

fn alpha_head(f: &serde_json::Value) -> Option<String> {
    f["repos"]
        .as_array()?
        .iter()
        .find(|r| r["name"] == "alpha")?["remote_head"]
        .as_str()
        .map(str::to_owned)
}

#[test]
fn a_commit_reaches_the_index_at_the_next_poll() {
    let w = World::new();
    let out = w.path("out");
    let (_watch, first, _) = polling_every_second(&w);
    let current = || std::fs::read_to_string(out.join("CURRENT")).ok();

    // A push: the next poll sees the ref move and builds.
    let pushed = commit(
        &w.alpha_repo(),
        &[(
            "src/alpha/fresh.py",
            b"def freshly_pushed_helper():\n    return 42\n".to_vec(),
        )],
        "add a helper",
    );
    let second = within_a_minute("the build after the push", || {
        current().filter(|c| *c != first)
    });
    let f = within_a_minute("the poll after the push", || {
        freshness(&out).filter(|f| alpha_head(f) == Some(pushed.to_string()))
    });
    assert_eq!(
        f["last_build"]["moved"],
        serde_json::json!(["alpha"]),
        "{f}"
    );
    assert_eq!(f["last_build"]["index_version"], second.trim(), "{f}");
    let v = w.json("out", &["search", "freshly_pushed_helper"]);
    assert_eq!(
        v["hits"][0]["doc_id"], "science/alpha/src/alpha/fresh.py",
        "{v}"
    );
    // A bot reads how fresh each cited commit is.
    let version = w.json("out", &["version"]);
    let alpha = &version["repos"][0];
    assert_eq!(alpha["name"], "alpha", "{version}");
    assert_eq!(alpha["commit"], pushed.to_string(), "{version}");
    assert_eq!(alpha["remote_head"], pushed.to_string(), "{version}");
    assert_eq!(alpha["commits_behind"], 0, "{version}");
    assert!(alpha["checked_at"].is_string(), "{version}");

    // Polls with nothing moved build nothing.
    let checked = f["checked_at"].clone();
    within_a_minute("two more polls", || {
        freshness(&out).filter(|g| g["checked_at"] != checked)
    });
    std::thread::sleep(Duration::from_millis(2500));
    let g = freshness(&out).expect("freshness");
    assert_eq!(g["last_build"]["at"], f["last_build"]["at"], "{g}");
    assert_eq!(current(), Some(second));
}

fn repo<'a>(f: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    f["repos"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == name))
        .unwrap_or(&serde_json::Value::Null)
}

#[test]
fn a_failing_remote_backs_off_while_the_others_stay_fresh() {
    let w = World::new();
    let out = w.path("out");
    let (_watch, first, head) = polling_every_second(&w);
    let current = || std::fs::read_to_string(out.join("CURRENT")).ok();

    // alpha's remote goes away (an empty folder in its place, so the
    // config still reads); beta moves on.
    let moved = w.path("repos/alpha.away");
    std::fs::rename(&w.alpha, &moved).expect("move alpha away");
    std::fs::create_dir(&w.alpha).expect("an empty folder");
    let beta = git2::Repository::open(&w.beta).expect("beta");
    let pushed = commit(&beta, &[("NEWS.md", b"# News\n".to_vec())], "news");
    let second = within_a_minute("beta's build while alpha fails", || {
        current().filter(|c| *c != first)
    });
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            out.join("versions")
                .join(second.trim())
                .join("manifest.json"),
        )
        .expect("manifest"),
    )
    .expect("json");
    let beta_commit = manifest["repos"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == "beta"))
        .map(|r| r["commit"].clone());
    assert_eq!(beta_commit, Some(serde_json::json!(pushed.to_string())));

    // Polls run every second, but alpha is asked after 1 s, 2 s, 4 s, …
    let f = within_a_minute("alpha's second failure", || {
        freshness(&out).filter(|f| repo(f, "alpha")["failures"].as_u64() >= Some(2))
    });
    assert!(repo(&f, "alpha")["error"].is_string(), "{f}");
    assert!(repo(&f, "alpha")["retry_at"].is_string(), "{f}");
    assert!(repo(&f, "beta")["error"].is_null(), "{f}");
    std::thread::sleep(Duration::from_millis(2500));
    let g = freshness(&out).expect("freshness");
    let failures = repo(&g, "alpha")["failures"].as_u64().unwrap_or(0);
    assert!(
        failures <= 3,
        "backed off: {failures} failures in ~4 polls: {g}"
    );
    assert_ne!(g["checked_at"], f["checked_at"], "polls went on: {g}");

    // Back again: alpha is read again after its backoff, and clean.
    std::fs::remove_dir(&w.alpha).expect("the empty folder");
    std::fs::rename(&moved, &w.alpha).expect("move alpha back");
    within_a_minute("alpha to answer again", || {
        freshness(&out).filter(|f| {
            let a = repo(f, "alpha");
            a["error"].is_null() && a["failures"].is_null() && a["remote_head"] == head.to_string()
        })
    });
}

/// A delivery to the watch's webhook listener: its status.
pub fn deliver(port: u16, headers: &[(&str, &str)], body: &[u8]) -> u16 {
    let mut req = crate::serve_process::agent().post(&format!("http://127.0.0.1:{port}/webhook"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send(body).map(|r| r.status().as_u16()).unwrap_or(0)
}

/// GitHub's signature of `body` under `secret`.
pub fn github_signature(secret: &str, body: &[u8]) -> String {
    use hmac::Mac;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

#[test]
fn a_signed_push_webhook_builds_at_once_and_a_bad_one_never_does() {
    let w = World::new();
    let out = w.path("out");
    let arg = |p: &Path| p.to_str().expect("utf8").to_owned();
    let port = crate::serve_process::free_port();
    let secret = "s3cret-for-tests";
    let listen = format!("127.0.0.1:{port}");
    // An hour between polls: only a webhook makes a build happen soon.
    let mut watch = start_watch(
        &w,
        &["--every", "3600", "--listen", &listen],
        &[("CAIRN_WEBHOOK_SECRET", secret)],
    );
    let current = || std::fs::read_to_string(out.join("CURRENT")).ok();
    let first = within_a_minute("the first build", current);
    let ping = br#"{"zen": "Keep it logically awesome."}"#;
    within_a_minute("the listener", || {
        let sig = github_signature(secret, ping);
        let headers = [
            ("X-GitHub-Event", "ping"),
            ("X-Hub-Signature-256", sig.as_str()),
        ];
        (deliver(port, &headers, ping) == 200).then_some(())
    });

    // The push, then deliveries that must not build it.
    let pushed = commit(
        &w.alpha_repo(),
        &[(
            "src/alpha/hooked.py",
            b"def hooked_helper():\n    return 7\n".to_vec(),
        )],
        "add a helper",
    );
    let alpha_url = arg(&w.alpha);
    let push = serde_json::json!({
        "ref": "refs/heads/main",
        "after": pushed.to_string(),
        "repository": {"clone_url": alpha_url, "full_name": "example/alpha"}
    })
    .to_string();
    let push = push.as_bytes();
    let good = github_signature(secret, push);
    let wrong = github_signature("another secret", push);
    let github = |event: &'static str, sig: &str, id: &str| {
        vec![
            ("X-GitHub-Event", event.to_owned()),
            ("X-Hub-Signature-256", sig.to_owned()),
            ("X-GitHub-Delivery", id.to_owned()),
            ("Content-Type", "application/json".to_owned()),
        ]
    };
    let send = |h: Vec<(&str, String)>, body: &[u8]| {
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
        deliver(port, &h, body)
    };
    let unsigned = [("X-GitHub-Event", "push"), ("X-GitHub-Delivery", "d-0")];
    assert_eq!(deliver(port, &unsigned, push), 401, "unsigned");
    assert_eq!(
        send(github("push", &wrong, "d-1"), push),
        401,
        "badly signed"
    );
    let issues = github_signature(secret, b"{}");
    assert_eq!(
        send(github("issues", &issues, "d-2"), b"{}"),
        400,
        "another event"
    );
    let big = vec![b' '; 2 << 20];
    let big_sig = github_signature(secret, &big);
    assert_eq!(
        send(github("push", &big_sig, "d-3"), &big),
        413,
        "oversized"
    );
    let gitlab_wrong = [("X-Gitlab-Event", "Push Hook"), ("X-Gitlab-Token", "nope")];
    assert_eq!(
        deliver(port, &gitlab_wrong, push),
        401,
        "GitLab, wrong token"
    );
    let elsewhere =
        serde_json::json!({"repository": {"clone_url": "https://github.com/x/y"}}).to_string();
    let elsewhere_sig = github_signature(secret, elsewhere.as_bytes());
    assert_eq!(
        send(github("push", &elsewhere_sig, "d-4"), elsewhere.as_bytes()),
        202,
        "an unknown repository is acknowledged"
    );
    let garbage = b"{not json";
    let garbage_sig = github_signature(secret, garbage);
    assert_eq!(
        send(github("push", &garbage_sig, "d-6"), garbage),
        400,
        "malformed"
    );
    let mut gzipped = github("push", &good, "d-7");
    gzipped.push(("Content-Encoding", "gzip".to_owned()));
    assert_eq!(send(gzipped, push), 415, "compressed");
    // None of those woke the watch: alpha moved, yet nothing was built.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(current(), Some(first.clone()), "a refused delivery built");

    assert_eq!(
        send(github("push", &good, "d-5"), push),
        202,
        "a valid push"
    );
    let second = within_a_minute("the build the push asked for", || {
        current().filter(|c| *c != first)
    });
    assert_eq!(send(github("push", &good, "d-5"), push), 409, "a replay");
    let v = w.json("out", &["search", "hooked_helper"]);
    assert_eq!(
        v["hits"][0]["doc_id"], "science/alpha/src/alpha/hooked.py",
        "{v}"
    );
    assert_eq!(current(), Some(second));

    // SIGTERM stops the watch, listener and all (a service manager's stop).
    let stopped = Command::new("kill")
        .arg(watch.0.id().to_string())
        .status()
        .expect("kill");
    assert!(stopped.success());
    let exited = within_a_minute("the watch to exit on SIGTERM", || {
        watch.0.try_wait().ok().flatten()
    });
    assert!(!exited.success(), "killed by the signal: {exited:?}");
}
