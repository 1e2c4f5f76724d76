//! The fourth adversarial review (issue 57): history text, tree depth and
//! the builder's other inputs bounded, against the real `cairn` binary on
//! hostile fixture repositories. Each test bounds the work it shows (bytes,
//! time), not only the answer. The server-side findings (bodies that never
//! finish, bursts, Slack's edges, webhook replays) are in
//! `hardening4_serve.rs`; the pieces' own rules are their modules' tests.

use crate::fixtures::{World, current_dir, read_json, skip_reasons, stderr};
use git2::Signature;
use std::time::{Duration, Instant};

#[test]
fn a_huge_commit_message_leaves_every_answer_small() {
    let w = World::new();
    // Every indexed text file changed by one commit with a 4 MB first
    // paragraph and a 100 KB author name: every hit cites it.
    let touched: Vec<(&str, Vec<u8>)> = ["README.md", "src/alpha/core.py", "docs/guide.rst"]
        .into_iter()
        .map(|rel| {
            let text = std::fs::read_to_string(w.alpha.join(rel)).expect("read");
            (rel, format!("{text}\n# touched\n").into_bytes())
        })
        .collect();
    let message = format!("{}\n\nthe body", "fit the model ".repeat(300_000));
    let author = Signature::new(
        &"N".repeat(100_000),
        "a@example.org",
        &git2::Time::new(1_700_500_000, 0),
    )
    .expect("signature");
    cairn_pipeline::fixtures::commit_by(&w.alpha_repo(), &touched, &message, &author);
    let o = w.build("out", &[]);
    assert!(o.status.success(), "{}", stderr(&o));

    // What the version records: each commit one bounded line.
    let history = std::fs::metadata(current_dir(&w.path("out")).join("history.json"))
        .expect("history.json")
        .len();
    assert!(history < 32 * 1024, "history.json is {history} bytes");

    let search = w.json("out", &["search", "fit the model", "--limit", "5"]);
    let bytes = search.to_string().len();
    eprintln!("a huge commit message: history.json {history} bytes, a search answer {bytes} bytes");
    assert!(bytes < 64 * 1024, "a search answer of {bytes} bytes");
    let hits = search["hits"].as_array().expect("hits");
    let cited: Vec<&str> = hits
        .iter()
        .filter_map(|h| h["last_changed"]["summary"].as_str())
        .collect();
    assert!(
        cited.iter().any(|s| s.starts_with("fit the model")),
        "no hit cites the long commit: {search:.2000}"
    );
    for s in cited {
        assert!(s.chars().count() <= 200, "{s:.300}");
    }

    let history = w.json(
        "out",
        &[
            "history",
            "science/alpha/src/alpha/core.py",
            "--lines",
            "1:20",
        ],
    );
    let bytes = history.to_string().len();
    assert!(bytes < 16 * 1024, "a history answer of {bytes} bytes");
    let author = history["log"][0]["author"].as_str().expect("author");
    assert_eq!(author.chars().count(), 100, "{author:.200}");
}

/// Finding 2: a tree nested 30,000 deep (about 1.3 MB of git objects)
/// beside ordinary files builds: the walk is iterative, stops at its depth
/// limit and records the folder as skipped, and a path no doc id can hold
/// is recorded too (before: the main thread's stack overflowed, SIGABRT,
/// and 20,000 levels took 2.4 GB).
#[test]
fn a_deeply_nested_tree_builds_around_its_depth() {
    let w = World::new();
    let base = build_summary(&w, "base");
    let repo = w.alpha_repo();
    let blob = repo.blob(b"print('deep')\n").expect("blob");
    let deep = cairn_pipeline::fixtures::nested_tree(&repo, 30_000, blob);
    let head = repo.head().expect("head").peel_to_commit().expect("head");
    let mut root = repo
        .treebuilder(Some(&head.tree().expect("tree")))
        .expect("builder");
    root.insert("deep", deep, 0o040000).expect("insert");
    root.insert("p".repeat(1_100), blob, 0o100644)
        .expect("insert");
    let tree = repo.find_tree(root.write().expect("tree")).expect("tree");
    let sig = Signature::new("T", "t@example.org", &git2::Time::new(1_700_600_000, 0))
        .expect("signature");
    repo.commit(Some("HEAD"), &sig, &sig, "deep", &tree, &[&head])
        .expect("commit");

    let got = build_summary(&w, "out");
    let mb =
        |v: &serde_json::Value| v["peak_rss_bytes"].as_u64().expect("peak_rss_bytes") as f64 / 1e6;
    let secs = |v: &serde_json::Value| v["wall_seconds"].as_f64().expect("wall_seconds");
    eprintln!(
        "a tree 30,000 deep: peak {:.0} MB against {:.0} MB, {:.1} s against {:.1} s",
        mb(&got),
        mb(&base),
        secs(&got),
        secs(&base)
    );
    assert!(
        mb(&got) - mb(&base) < 100.0 && secs(&got) - secs(&base) < 30.0,
        "+{:.0} MB, +{:.1} s over the build without the tree",
        mb(&got) - mb(&base),
        secs(&got) - secs(&base)
    );
    let skipped = skip_reasons(&read_json(
        &current_dir(&w.path("out")).join("manifest.json"),
    ));
    let deep_path = format!("science/alpha/deep/{}d", "d/".repeat(126));
    assert_eq!(
        skipped.get(&deep_path).map(String::as_str),
        Some("too-deep")
    );
    let long = skipped
        .iter()
        .find(|(p, _)| p.starts_with("science/alpha/ppp"))
        .expect("the long path is recorded");
    assert_eq!(long.1, "invalid-path");
    assert!(long.0.len() < 1100, "{} bytes", long.0.len());
    // The rest of the repository is indexed as before.
    assert_eq!(got["docs"], base["docs"], "{got}");
}

/// `cairn build --json` of the fixture into `out`: its summary.
fn build_summary(w: &World, out: &str) -> serde_json::Value {
    let started = Instant::now();
    let o = w.build(out, &["--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(started.elapsed() < Duration::from_secs(300));
    serde_json::from_str(&crate::fixtures::stdout(&o)).expect("summary")
}

/// Finding 9: a pack interrupted by a deploy or an OOM kill left its
/// `*.tar.partial` in the packs folder for good (up to a whole pack each
/// time). Now the next pack removes every partial file no live writer
/// holds, and leaves alone one a writer holds locked.
#[test]
fn an_interrupted_pack_leaves_nothing_behind() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let packs = w.path("packs");
    std::fs::create_dir_all(&packs).expect("mkdir");
    let dead = packs.join("cairn-index-0123456789abcdef.tar.partial");
    std::fs::write(&dead, vec![0u8; 4 << 20]).expect("dead partial");
    let live = packs.join("cairn-index-fedcba9876543210.tar.partial");
    let held = std::fs::File::create(&live).expect("live partial");
    held.lock().expect("lock");
    let other = packs.join("notes.partial");
    std::fs::write(&other, b"not a pack").expect("other");
    let (out, dir) = (w.path("out"), packs.clone());
    let o = crate::fixtures::cairn(&[
        "pack",
        "--index",
        out.to_str().expect("utf8"),
        "--out-dir",
        dir.to_str().expect("utf8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!dead.exists(), "the dead partial pack is still there");
    assert!(live.exists(), "a live writer's partial pack was removed");
    assert!(other.exists(), "a file not named like a pack was removed");
    let left: Vec<String> = std::fs::read_dir(&packs)
        .expect("list")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tar.partial"))
        .collect();
    assert_eq!(left, ["cairn-index-fedcba9876543210.tar.partial"]);
    drop(held);
}
