//! `cairn build`: branches, documents, skips, spans, determinism, caching, pins.

use crate::fixtures::{World, cairn, commit, current_dir, read_json, skip_reasons, stderr, stdout};
use cairn_index::{LineIndex, LineSpan};
use std::collections::BTreeMap;

fn summary(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "build failed: {}", stderr(o));
    serde_json::from_str(&stdout(o)).expect("--json summary")
}

#[test]
fn builds_both_branches_and_records_every_skip() {
    let w = World::new();
    let s = summary(&w.build("out", &["--json"]));
    let dir = current_dir(&w.path("out"));
    let manifest = read_json(&dir.join("manifest.json"));

    let repos = manifest["repos"].as_array().expect("repos");
    let by_name: BTreeMap<&str, &serde_json::Value> = repos
        .iter()
        .map(|r| (r["name"].as_str().expect("name"), r))
        .collect();
    assert_eq!(by_name["alpha"]["default_branch"], "main");
    assert_eq!(by_name["beta"]["default_branch"], "master");
    let alpha_head = w
        .alpha_repo()
        .head()
        .expect("head")
        .target()
        .expect("oid")
        .to_string();
    assert_eq!(by_name["alpha"]["commit"], alpha_head.as_str());
    assert_eq!(
        by_name["alpha"]["web_url"],
        "https://github.com/example/alpha"
    );

    let skipped = skip_reasons(&manifest);
    assert_eq!(skipped["science/alpha/data/blob.bin"], "binary");
    assert_eq!(skipped["science/alpha/data/latin1.txt"], "non-utf8");
    assert_eq!(skipped["science/alpha/data/big.txt"], "too-large");
    assert_eq!(skipped["science/alpha/data/lightcurve.dat"], "lfs-pointer");
    assert_eq!(s["skipped_by_reason"]["binary"], 1);

    let docs = read_json(&dir.join("docs.json"));
    let docs = docs.as_array().expect("docs");
    let doctype = |id: &str| {
        docs.iter()
            .find(|d| d["doc_id"] == id)
            .map(|d| d["doctype"].as_str().expect("doctype").to_owned())
            .unwrap_or_else(|| panic!("{id} not indexed"))
    };
    assert_eq!(doctype("science/alpha/README.md"), "readme");
    assert_eq!(doctype("science/alpha/src/alpha/core.py"), "code");
    assert_eq!(doctype("science/alpha/notebooks/demo.ipynb"), "notebook");
    assert_eq!(doctype("science/alpha/docs/guide.rst"), "doc");
    assert_eq!(doctype("tools/beta/lib/beta.cpp"), "code");
    assert_eq!(doctype("science/alpha/src/alpha/nofinal.py"), "code");

    let v = cairn(&["verify", "--index", w.path("out").to_str().expect("utf8")]);
    assert!(v.status.success(), "verify: {}{}", stdout(&v), stderr(&v));
    assert!(stdout(&v).starts_with("ok "), "{}", stdout(&v));
}

/// Every chunk's span, read from the content store, is exactly those lines of the file at the commit.
#[test]
fn chunk_spans_are_the_raw_lines() {
    let w = World::new();
    summary(&w.build("out", &["--json"]));
    let dir = current_dir(&w.path("out"));
    let docs = read_json(&dir.join("docs.json"));
    let chunks = read_json(&dir.join("chunks.json"));
    let content = std::fs::read(dir.join("content.bin")).expect("content");
    let repo = w.alpha_repo();
    let tree = repo.head().expect("head").peel_to_tree().expect("tree");
    let mut seen_notebook = false;
    for c in chunks.as_array().expect("chunks") {
        let d = &docs[c["doc"].as_u64().expect("doc") as usize];
        let start = d["content_offset"].as_u64().expect("offset") as usize;
        let bytes = &content[start..start + d["size"].as_u64().expect("size") as usize];
        let span = LineSpan::new(
            c["span"]["start"].as_i64().expect("s"),
            c["span"]["end"].as_i64().expect("e"),
        )
        .expect("valid span");
        let li = LineIndex::new(bytes);
        assert!(span.end <= li.line_count(), "span past the end");
        let id = d["doc_id"].as_str().expect("id");
        if let Some(path) = id.strip_prefix("science/alpha/") {
            let blob = tree
                .get_path(std::path::Path::new(path))
                .expect("in tree")
                .to_object(&repo)
                .expect("obj");
            let raw = blob.as_blob().expect("blob").content();
            assert_eq!(bytes, raw, "{id}: content store differs from git");
            let want: Vec<&[u8]> = raw.split_inclusive(|b| *b == b'\n').collect();
            let got = &bytes[li.byte_range(span).expect("range")];
            assert_eq!(
                got,
                want[span.start as usize - 1..span.end as usize].concat(),
                "{id} {span}"
            );
        }
        if id.ends_with("demo.ipynb") {
            seen_notebook = true;
            let text =
                std::str::from_utf8(&bytes[li.byte_range(span).expect("range")]).expect("utf8");
            assert!(
                !text.contains("output_type"),
                "notebook span covers outputs: {text}"
            );
        }
    }
    assert!(seen_notebook);
}

#[test]
fn same_inputs_same_version() {
    let w = World::new();
    let a = summary(&w.build("out1", &["--json"]));
    // A second build with an empty cache elsewhere must agree byte for byte.
    let o = w.build_with("out2", "cache2", Some(&w.model), &["--json"]);
    let b = summary(&o);
    assert_eq!(a["index_version"], b["index_version"]);
    let (d1, d2) = (current_dir(&w.path("out1")), current_dir(&w.path("out2")));
    for f in ["docs.json", "chunks.json", "content.bin", "vectors.f32"] {
        assert_eq!(
            std::fs::read(d1.join(f)).expect("1"),
            std::fs::read(d2.join(f)).expect("2"),
            "{f} differs"
        );
    }
}

#[test]
fn unchanged_rebuild_embeds_nothing_and_changes_reuse_the_cache() {
    let w = World::new();
    let first = summary(&w.build("out", &["--json"]));
    assert!(first["embedded"].as_u64().expect("n") > 0);
    let again = summary(&w.build("out", &["--json"]));
    assert_eq!(again["unchanged"], true);
    assert_eq!(again["embedded"], 0);
    assert_eq!(again["index_version"], first["index_version"]);

    // One file changes: only its chunks are embedded again, and a new version goes live.
    commit(
        &w.alpha_repo(),
        &[("docs/guide.rst", b"Guide\n=====\n\nA new guide.\n".to_vec())],
        "edit",
    );
    let third = summary(&w.build("out", &["--json", "--keep", "2"]));
    assert_ne!(third["index_version"], first["index_version"]);
    let embedded = third["embedded"].as_u64().expect("n");
    assert!((1..=3).contains(&embedded), "embedded {embedded}");
    assert!(third["cached"].as_u64().expect("n") > 5);
    let live = std::fs::read_to_string(w.path("out/CURRENT")).expect("CURRENT");
    assert_eq!(live.trim(), third["index_version"].as_str().expect("v"));
    assert_eq!(
        std::fs::read_dir(w.path("out/versions"))
            .expect("versions")
            .count(),
        2
    );
}

#[test]
fn tag_pin_reads_the_tagged_commit() {
    let w = World::new();
    let tagged = w
        .alpha_repo()
        .revparse_single("v1")
        .expect("tag")
        .id()
        .to_string();
    commit(
        &w.alpha_repo(),
        &[("later.md", b"# Later\n".to_vec())],
        "after the tag",
    );
    w.write_config("    ref: v1\n");
    summary(&w.build("out", &["--json"]));
    let manifest = read_json(&current_dir(&w.path("out")).join("manifest.json"));
    let alpha = &manifest["repos"]
        .as_array()
        .expect("repos")
        .iter()
        .find(|r| r["name"] == "alpha")
        .expect("alpha")
        .clone();
    assert_eq!(alpha["commit"], tagged.as_str());
    assert_eq!(alpha["ref"], "v1");
    assert_eq!(alpha["default_branch"], "main");
    let docs =
        std::fs::read_to_string(current_dir(&w.path("out")).join("docs.json")).expect("docs");
    assert!(!docs.contains("later.md"));
}

#[test]
fn a_failing_repo_fails_the_build_unless_keep_going() {
    let w = World::new();
    std::fs::create_dir_all(w.path("repos/broken")).expect("mkdir");
    let yml = std::fs::read_to_string(w.path("config/repositories.yml")).expect("yml")
        + "  - name: broken\n    url: ../repos/broken\n    web_url: https://github.com/example/broken\n";
    w.write("config/repositories.yml", &yml);
    let o = w.build("out", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("broken"), "{}", stderr(&o));
    assert!(!w.path("out/CURRENT").exists(), "a failed build published");

    let o = w.build("out", &["--keep-going", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a partial build still reports failure"
    );
    let manifest = read_json(&current_dir(&w.path("out")).join("manifest.json"));
    let broken = manifest["repos"]
        .as_array()
        .expect("repos")
        .iter()
        .find(|r| r["name"] == "broken")
        .expect("broken")
        .clone();
    assert!(broken["error"].as_str().expect("error").contains("broken"));
    assert!(manifest["counts"]["docs"].as_u64().expect("docs") > 5);
}
