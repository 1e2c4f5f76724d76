//! Line history recorded at build time matches git: a file with a rename,
//! a merge of a side branch and a reverted change, every line's recorded
//! commit equal to `git blame --porcelain` at the indexed commit; the
//! file's log names its commits newest first; another group's document is
//! not found.

use crate::fixtures::World;
use std::process::Command;

/// Runs git in `dir` at a fixed time per step, so commits order by date.
fn git(dir: &std::path::Path, step: u32, args: &[&str]) -> String {
    let date = format!("{} +0000", 1_700_100_000 + u64::from(step) * 3600);
    let o = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=Histo Rian",
            "-c",
            "user.email=h@example.org",
        ])
        .args(args)
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

fn write(dir: &std::path::Path, rel: &str, lines: &[&str]) {
    std::fs::write(dir.join(rel), lines.join("\n") + "\n").expect("write");
}

#[test]
fn recorded_blame_matches_git_through_a_rename_a_merge_and_a_revert() {
    let w = World::new();
    let a = w.alpha.clone();
    // Changes far enough apart that git merges them cleanly.
    let mut v = [
        "def one():",
        "    return 1",
        "",
        "",
        "",
        "def two():",
        "    return 2",
        "",
        "",
        "",
        "# end",
    ];
    write(&a, "src/alpha/hist.py", &v);
    git(&a, 1, &["add", "."]);
    git(&a, 1, &["commit", "-qm", "add hist"]);
    let mut edited = v;
    edited[1] = "    return 11";
    write(&a, "src/alpha/hist.py", &edited);
    git(&a, 2, &["commit", "-qam", "edit line 2"]);
    git(&a, 3, &["revert", "--no-edit", "HEAD"]);
    git(&a, 4, &["mv", "src/alpha/hist.py", "src/alpha/history.py"]);
    v[5] = "def deux():";
    write(&a, "src/alpha/history.py", &v);
    git(&a, 4, &["commit", "-qam", "rename, and rename two"]);
    git(&a, 5, &["checkout", "-qb", "side"]);
    let mut side = v;
    side[10] = "# the end";
    write(&a, "src/alpha/history.py", &side);
    git(&a, 5, &["commit", "-qam", "side: the end"]);
    git(&a, 6, &["checkout", "-q", "main"]);
    v[6] = "    return 22";
    write(&a, "src/alpha/history.py", &v);
    git(&a, 6, &["commit", "-qam", "main: 22"]);
    git(&a, 7, &["merge", "-q", "--no-edit", "side"]);
    let head = git(&a, 7, &["rev-parse", "HEAD"]);

    // alpha belongs to team-a: only its members may read its history.
    w.write_config("    groups: [team-a]\n");
    assert!(w.build("out", &[]).status.success());
    let doc = "science/alpha/src/alpha/history.py";
    let ask = |a: u32, b: u32| w.json("out", &["history", doc, "--lines", &format!("{a}:{b}")]);
    let whole = ask(1, 11);
    assert_eq!(whole["commit"], head, "{whole}");
    for n in 1..=11u32 {
        let porcelain = git(
            &a,
            8,
            &[
                "blame",
                "--porcelain",
                "-L",
                &format!("{n},{n}"),
                &head,
                "--",
                "src/alpha/history.py",
            ],
        );
        let expected = porcelain.split_whitespace().next().unwrap_or("").to_owned();
        let h = ask(n, n);
        let got = h["blame"][0]["sha"].as_str().unwrap_or("");
        assert_eq!(got, expected, "line {n}: {h}");
        assert_eq!(h["blame"].as_array().map(Vec::len), Some(1), "{h}");
    }
    // The log: newest first, the merge on top.
    let log: Vec<&str> = whole["log"]
        .as_array()
        .expect("log")
        .iter()
        .filter_map(|c| c["summary"].as_str())
        .collect();
    assert_eq!(log.first().copied(), Some("Merge branch 'side'"), "{whole}");
    assert!(
        whole["blame_url"]
            .as_str()
            .is_some_and(|u| u.contains(&format!("/blame/{head}/src/alpha/history.py#L1-L11"))),
        "{whole}"
    );
    assert!(
        !whole.to_string().contains("h@example.org"),
        "no e-mail addresses"
    );

    // A search hit says when its lines last changed: the newest of their commits.
    let found = w.json("out", &["search", "deux", "--mode", "bm25"]);
    let hit = found["hits"]
        .as_array()
        .and_then(|h| h.iter().find(|h| h["doc_id"] == doc))
        .cloned()
        .expect("the file is found");
    let in_span = ask(
        hit["start_line"].as_u64().expect("start") as u32,
        hit["end_line"].as_u64().expect("end") as u32,
    );
    let newest = in_span["blame"][0]["sha"].as_str().expect("sha");
    assert_eq!(hit["last_changed"]["sha"], newest[..12], "{hit}");

    // A context block's citations say it too, when asked.
    let context = w.json("out", &["context", "deux", "--mode", "bm25", "--history"]);
    assert!(
        context["citations"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["last_changed"]["sha"].is_string())),
        "{context}"
    );

    // Over HTTP, as for retrieve: another group's document is not found.
    let token = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("reader", &[], false)
        .expect("token");
    let s = crate::serve_process::Server::start(&w, "out", &[]);
    let url = s.url(&format!("/history?doc_id={doc}&start=1&end=3"));
    let (status, body) = crate::serve_process::get_json(&url, &token);
    assert_eq!(status, 404, "{body}");
    let public = s.url("/history?doc_id=tools/beta/lib/beta.cpp&start=1&end=3");
    let (status, body) = crate::serve_process::get_json(&public, &token);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["blame"].as_array().map(Vec::len), Some(1), "{body}");
    // Bad input names its field; a path outside the index is no document;
    // a span past the file is cut to it (the work is one file's runs).
    for (query, status, field) in [
        (
            "doc_id=tools/beta/lib/beta.cpp&start=0&end=3",
            422,
            Some("start"),
        ),
        ("doc_id=tools/beta/lib/beta.cpp&start=x", 400, Some("start")),
        (
            "doc_id=tools/beta/../../../etc/passwd&start=1&end=3",
            0,
            Some("doc_id"),
        ),
        (
            "doc_id=tools/beta/lib/beta.cpp&start=1&end=4294967295",
            200,
            None,
        ),
    ] {
        let url = s.url(&format!("/history?{query}"));
        let (got, body) = crate::serve_process::get_json(&url, &token);
        match status {
            // A traversal is refused as bad input or as no such document, never read.
            0 => assert!([400, 404, 422].contains(&got), "{query}: {got} {body}"),
            _ => assert_eq!(got, status, "{query}: {body}"),
        }
        if let Some(f) = field.filter(|_| got != 404) {
            assert_eq!(body["field"], f, "{query}: {body}");
        }
        if got == 200 {
            assert!(body["end_line"].as_u64() <= Some(10), "{query}: {body}");
        }
    }
}
