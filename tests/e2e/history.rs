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

/// `scripts/check-history.py` over `out`: random (file, line) pairs, each
/// the commit `git blame --porcelain` names; its report on failure.
fn check_with_git(w: &World, out: &str, cache: &str) {
    let o = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/check-history.py"
        ))
        .args(["--cairn", env!("CARGO_BIN_EXE_cairn"), "--pairs", "200"])
        .arg("--index")
        .arg(w.path(out))
        .arg("--cache")
        .arg(w.path(cache))
        .output()
        .expect("python3");
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && report.contains("agree with git blame: 200"),
        "{report}{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_check_script_agrees_with_git_on_a_history_of_renames_merges_and_a_revert() {
    let w = World::new();
    let a = w.alpha.clone();
    let v = ["one", "two", "three", "", "", "four", "five", "", "", "six"];
    write(&a, "src/alpha/walk.py", &v);
    git(&a, 1, &["add", "."]);
    git(&a, 1, &["commit", "-qm", "walk"]);
    let mut e = v;
    e[0] = "ONE";
    write(&a, "src/alpha/walk.py", &e);
    git(&a, 2, &["commit", "-qam", "shout"]);
    git(&a, 3, &["revert", "--no-edit", "HEAD"]);
    git(&a, 4, &["mv", "src/alpha/walk.py", "src/alpha/stroll.py"]);
    git(&a, 4, &["commit", "-qm", "rename"]);
    git(&a, 5, &["checkout", "-qb", "side"]);
    let mut s = v;
    s[9] = "SIX";
    write(&a, "src/alpha/stroll.py", &s);
    git(&a, 5, &["commit", "-qam", "side"]);
    git(&a, 6, &["checkout", "-q", "main"]);
    let mut m = v;
    m[1] = "TWO";
    write(&a, "src/alpha/stroll.py", &m);
    git(&a, 6, &["commit", "-qam", "main"]);
    git(&a, 7, &["merge", "-q", "--no-edit", "side"]);
    w.write_config("");
    assert!(w.build("out", &[]).status.success());
    check_with_git(&w, "out", "cache");
}

#[test]
fn a_span_is_compared_across_refs_and_a_warm_rebuild_writes_what_a_cold_one_does() {
    use crate::explain::UNITS_PY;
    use crate::fixtures::commit;
    let w = World::new();
    let repo = w.alpha_repo();
    // v2 has the units file; main later put two lines above it and added a file.
    let v2 = commit(&repo, &[(UNITS_PY.0, UNITS_PY.1.to_vec())], "units");
    let v2_object = repo.find_object(v2, None).expect("object");
    repo.tag_lightweight("v2", &v2_object, false).expect("tag");
    let moved = format!(
        "# Checks of units,\n# used by the fitters.\n{}",
        String::from_utf8_lossy(UNITS_PY.1)
    );
    commit(
        &repo,
        &[
            (UNITS_PY.0, moved.into_bytes()),
            ("src/alpha/only_main.py", b"X = 1\n".to_vec()),
        ],
        "move",
    );
    w.write_config("    refs: [main, v2]\n");
    assert!(w.build("out", &[]).status.success());
    let main_doc = format!("science/alpha/{}", UNITS_PY.0);
    let v2_doc = format!("science/alpha@v2/{}", UNITS_PY.0);
    let ask = |doc: &str, lines: &str| w.json("out", &["history", doc, "--lines", lines]);

    // main's lines 3-5 are v2's lines 1-3, linked at v2's commit.
    let h = ask(&main_doc, "3:5");
    let at = &h["at_refs"][0];
    assert_eq!(at["ref"], "v2", "{h}");
    assert_eq!(at["doc_id"], v2_doc.as_str(), "{h}");
    assert_eq!(at["status"], "unchanged", "{h}");
    assert_eq!(
        (at["start_line"].as_u64(), at["end_line"].as_u64()),
        (Some(1), Some(3)),
        "{h}"
    );
    let permalink = format!("/blob/{v2}/{}#L1-L3", UNITS_PY.0);
    assert!(
        at["url"].as_str().is_some_and(|u| u.ends_with(&permalink)),
        "{h}"
    );
    // A span reaching into the new lines has changed; which lines did not is said.
    let h = ask(&main_doc, "1:4");
    assert_eq!(h["at_refs"][0]["status"], "changed", "{h}");
    assert_eq!(
        h["at_refs"][0]["same_lines"],
        serde_json::json!([[3, 4]]),
        "{h}"
    );
    // From v2's side, the same lines are main's 3-5.
    let h = ask(&v2_doc, "1:3");
    assert_eq!(h["at_refs"][0]["ref"], "main", "{h}");
    assert_eq!(h["at_refs"][0]["start_line"], 3, "{h}");
    // A file main added is not at v2.
    let h = ask("science/alpha/src/alpha/only_main.py", "1:1");
    assert_eq!(h["at_refs"][0]["status"], "absent", "{h}");
    let text = crate::fixtures::cairn(&[
        "history",
        &main_doc,
        "--lines",
        "3:5",
        "--index",
        w.path("out").to_str().expect("utf8"),
    ]);
    assert!(
        crate::fixtures::stdout(&text).contains("at v2: unchanged, lines 1-3"),
        "{}",
        crate::fixtures::stdout(&text)
    );

    // One more commit touching one file: the rebuild with the warm cache
    // blames that file again and reuses the rest, and writes exactly what
    // a build with an empty cache writes.
    commit(
        &repo,
        &[("src/alpha/only_main.py", b"X = 2\n".to_vec())],
        "two",
    );
    assert!(w.build("out", &[]).status.success());
    assert!(
        w.build_with("cold", "cache-cold", Some(&w.model), &[])
            .status
            .success()
    );
    let history_of = |out: &str| {
        let dir = crate::fixtures::current_dir(&w.path(out));
        std::fs::read(dir.join("history.json")).expect("history.json")
    };
    assert!(
        history_of("out") == history_of("cold"),
        "warm and cold builds differ"
    );
    check_with_git(&w, "out", "cache");
}
