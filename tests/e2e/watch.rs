//! `cairn watch`: a commit pushed to a watched repository reaches the served
//! index at the next poll, and a poll with nothing moved builds nothing.

use crate::fixtures::{World, cairn, commit, stdout};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The watch process, killed when the test ends however it ends.
struct Watching(Child);

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What `f` gives once it gives something, within a minute.
fn within_a_minute<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < until, "waited a minute for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn freshness(out: &Path) -> Option<serde_json::Value> {
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
    let (config, out, cache) = (
        w.path("config/repositories.yml"),
        w.path("out"),
        w.path("cache"),
    );
    let arg = |p: &Path| p.to_str().expect("utf8").to_owned();
    let _watch = Watching(
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["watch", "--every", "1", "--config", &arg(&config)])
            .args(["--out", &arg(&out), "--cache", &arg(&cache)])
            .args(["--model-dir", &arg(&w.model)])
            .env("CAIRN_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start cairn watch"),
    );
    let current = || std::fs::read_to_string(out.join("CURRENT")).ok();
    let first = within_a_minute("the first build", current);
    let head = w.alpha_repo().head().expect("head").target().expect("oid");
    within_a_minute("a poll that reads alpha's head", || {
        freshness(&out).filter(|f| alpha_head(f) == Some(head.to_string()))
    });

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
    let o = cairn(&[
        "search",
        "freshly_pushed_helper",
        "--index",
        &arg(&out),
        "--model-dir",
        &arg(&w.model),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(
        v["hits"][0]["doc_id"], "science/alpha/src/alpha/fresh.py",
        "{v}"
    );
    // A bot reads how fresh each cited commit is.
    let version = cairn(&[
        "version",
        "--index",
        &arg(&out),
        "--model-dir",
        &arg(&w.model),
        "--json",
    ]);
    let version: serde_json::Value = serde_json::from_str(&stdout(&version)).expect("json");
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
