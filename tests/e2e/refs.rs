//! A repository indexed at several refs (`refs: [main, v2]`): the default
//! ref keeps today's ids, the other gets `<repo>@v2`, a search sees only the
//! default unless asked for a ref, links point at each ref, and explain
//! follows the installed version.

use crate::explain::{TRACEBACK, UNITS_PY};
use crate::fixtures::{World, cairn, stderr, stdout};
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = cairn(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("json")
}

#[test]
fn each_ref_is_its_own_set_of_documents() {
    let w = World::new();
    let repo = w.alpha_repo();
    // v2 has check_t_E raising on line 6; main later moved it to line 8.
    let v2 = crate::fixtures::commit(&repo, &[(UNITS_PY.0, UNITS_PY.1.to_vec())], "units");
    repo.tag_lightweight("v2", &repo.find_object(v2, None).expect("object"), false)
        .expect("tag");
    let moved = format!(
        "# Checks of units,\n# used by the fitters.\n{}",
        String::from_utf8_lossy(UNITS_PY.1)
    );
    crate::fixtures::commit(&repo, &[(UNITS_PY.0, moved.into_bytes())], "move");
    w.write_config("    refs: [main, v2]\n");
    let built = w.build("out", &[]);
    assert!(built.status.success(), "{}", stderr(&built));

    let index = w.path("out");
    let model = w.model.to_str().expect("utf8").to_owned();
    let open = [
        "--index",
        index.to_str().expect("utf8"),
        "--model-dir",
        &model,
    ];
    let cmd = |head: &[&str]| -> Vec<String> {
        head.iter()
            .chain(open.iter())
            .map(|s| (*s).to_owned())
            .collect()
    };
    let run = |head: &[&str]| {
        let args = cmd(head);
        json(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };

    let tree = run(&["tree", "science", "--json"]);
    let names = tree.to_string();
    assert!(
        names.contains("science/alpha/") && names.contains("science/alpha@v2/"),
        "{names}"
    );

    // By default only the default ref; `--ref v2` only v2, linked at v2.
    let r = run(&["search", "check_t_E", "--mode", "bm25", "--json"]);
    let hits = r["hits"].as_array().expect("hits");
    assert!(
        !hits.is_empty()
            && hits
                .iter()
                .all(|h| !h["doc_id"].as_str().unwrap_or("").contains('@')),
        "{r}"
    );
    let r = run(&[
        "search",
        "check_t_E",
        "--mode",
        "bm25",
        "--ref",
        "v2",
        "--json",
    ]);
    let hits = r["hits"].as_array().expect("hits");
    assert!(hits.iter().all(|h| h["repo"] == "alpha@v2"), "{r}");
    let hit = hits
        .iter()
        .find(|h| h["doc_id"] == "science/alpha@v2/src/alpha/units.py")
        .expect("v2's units.py");
    assert!(
        hit["github_url"]
            .as_str()
            .is_some_and(|u| u.contains("/blob/v2/src/alpha/units.py#L")),
        "{hit}"
    );
    assert!(
        hit["permalink"]
            .as_str()
            .is_some_and(|u| u.contains(&format!("/blob/{v2}/"))),
        "{hit}"
    );

    // Explain follows the installed version: v2's lines match the traceback as printed.
    let r = run(&["explain", TRACEBACK, "--json"]);
    assert_eq!(
        r["raise_sites"][0]["doc_id"], "science/alpha/src/alpha/units.py",
        "{r}"
    );
    assert_eq!(r["raise_sites"][0]["start_line"], 8);
    assert_eq!(r["frames"][1]["located"], "moved");
    let r = run(&["explain", TRACEBACK, "--version", "2", "--json"]);
    assert_eq!(
        r["raise_sites"][0]["doc_id"], "science/alpha@v2/src/alpha/units.py",
        "{r}"
    );
    assert_eq!(
        (
            r["raise_sites"][0]["start_line"].as_u64(),
            r["frames"][1]["located"].as_str()
        ),
        (Some(6), Some("line"))
    );
}

#[test]
fn refs_are_checked_where_they_are_written() {
    let w = World::new();
    for (extra, says) in [
        ("    ref: main\n    refs: [main, v1]\n", "not both"),
        ("    refs: [main, release/1.x]\n", "ref in refs"),
        ("    refs: [main, v1, v1]\n", "listed twice"),
    ] {
        w.write_config(extra);
        let out = w.build("out", &[]);
        assert_eq!(out.status.code(), Some(2), "{extra}");
        assert!(
            stderr(&out).contains("repositories.yml:") && stderr(&out).contains(says),
            "{extra}: {}",
            stderr(&out)
        );
    }
}
