//! The builder as a library: a whole build, an unchanged rebuild, and a
//! sharded build merged into the same index, with real git repositories, the
//! real tiny model and the real index writer (no binary involved).

use cairn_index::{IndexRoot, IndexVersion};
use cairn_pipeline::fixtures::Sandbox;
use cairn_pipeline::{BuildError, Shard, Silent, build, build_shard, merge};
use std::path::Path;

fn sandbox() -> Sandbox {
    Sandbox::new(
        &[
            ("README.md", b"# Alpha\n\nAlpha fits light curves.\n\n## Usage\n\nCall fit_model.\n".to_vec()),
            ("alpha/core.py", b"def fit_model(data):\n    \"\"\"Fit a point lens.\"\"\"\n    return data\n\n\nclass Model:\n    def magnification(self, t):\n        return 1.0 + t\n".to_vec()),
        ],
        &[("README.md", b"# Beta\n\nBinary lens magnification.\n".to_vec())],
        &[],
    )
}

fn current(out: &Path) -> IndexVersion {
    IndexRoot::new(out).current().expect("CURRENT")
}

fn file(out: &Path, name: &str) -> Vec<u8> {
    let v = current(out);
    std::fs::read(out.join("versions").join(v.as_str()).join(name)).expect("read")
}

#[test]
fn a_build_publishes_a_verified_version_and_a_rebuild_changes_nothing() {
    let s = sandbox();
    let first = build(&s.options("out"), &Silent).expect("build");
    assert!(
        !first.unchanged && first.docs == 3 && first.chunks >= 3,
        "{first:?}"
    );
    assert_eq!(current(&s.path("out")), first.index_version);
    let report = cairn_index::verify(&IndexRoot::new(s.path("out"))).expect("verify");
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!(report.chunks_checked, first.chunks);

    let again = build(&s.options("out"), &Silent).expect("rebuild");
    assert!(again.unchanged);
    assert_eq!(again.index_version, first.index_version);
    assert_eq!(
        again.embedded, 0,
        "nothing to embed: the version is published"
    );
}

#[test]
fn shards_merge_into_the_index_one_machine_builds() {
    let s = sandbox();
    let whole = build(&s.options("whole"), &Silent).expect("build");
    let mut parts = Vec::new();
    let mut built = 0;
    for i in 1..=2 {
        let shard = Shard::parse(&format!("{i}/2")).expect("shard");
        let part = format!("part-{i}");
        let summary = build_shard(&s.options(&part), shard, &Silent).expect("shard");
        built += summary.repos.len();
        parts.push(s.path(&part));
    }
    // Repositories go to shards by a hash of their names: each is built once.
    assert_eq!(built, 2, "every repository built by exactly one shard");
    let merged = merge(&s.options("merged"), &parts, &Silent).expect("merge");
    assert_eq!(merged.index_version, whole.index_version);
    for name in [
        "chunks.json",
        "subchunks.json",
        "vectors.f32",
        "subchunks.f32",
        "docs.json",
        "definitions.json",
    ] {
        assert_eq!(
            file(&s.path("merged"), name),
            file(&s.path("whole"), name),
            "{name}"
        );
    }
    // A missing shard is refused by name; nothing is published.
    let err = merge(&s.options("half"), &parts[..1], &Silent).expect_err("one of two");
    assert!(err.to_string().contains("shard 2/2 is missing"), "{err}");
    assert!(!s.path("half/CURRENT").exists());
}

/// A part file is input: shard numbers that do not fit are an error, never a panic.
#[test]
fn a_part_with_impossible_shard_numbers_is_refused() {
    let s = sandbox();
    let shard = Shard::parse("1/1").expect("shard");
    build_shard(&s.options("part"), shard, &Silent).expect("shard");
    let json = s.path("part/part.json");
    let text = std::fs::read_to_string(&json).expect("read part");
    let edited = text.replacen("\"index\":1", "\"index\":0", 1);
    assert_ne!(edited, text, "the part names its shard index");
    std::fs::write(&json, edited).expect("write part");
    let err = merge(&s.options("out"), &[s.path("part")], &Silent).expect_err("index 0");
    assert!(matches!(err, BuildError::Part(_)), "{err}");
    assert!(err.to_string().contains("does not fit"), "{err}");
}

/// A part whose documents and definition lists differ in number is refused
/// by name: a merge never pairs one document with another's definitions.
#[test]
fn a_part_missing_definitions_is_refused() {
    let s = sandbox();
    let shard = Shard::parse("1/1").expect("shard");
    build_shard(&s.options("part"), shard, &Silent).expect("shard");
    let json = s.path("part/part.json");
    let mut part: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("read part")).expect("json");
    let lists = part["repos"][0]["definitions"]
        .as_array_mut()
        .expect("definitions per document");
    assert!(!lists.is_empty());
    lists.pop();
    std::fs::write(&json, part.to_string()).expect("write part");
    let err = merge(&s.options("out"), &[s.path("part")], &Silent).expect_err("short");
    assert!(err.to_string().contains("definition lists"), "{err}");
    assert!(!s.path("out/CURRENT").exists());
}

/// Late-chunked subchunk vectors: a version of their own, vectors unlike the
/// independent ones, every file verified, and a rebuild served from the cache.
#[test]
fn late_chunked_subchunks_build_and_rebuild_from_the_cache() {
    let s = sandbox();
    let independent = build(&s.options("independent"), &Silent).expect("build");
    std::fs::write(s.path("config/build.yaml"), "subchunk_vectors: late\n").expect("settings");
    let late = build(&s.options("late"), &Silent).expect("late build");
    assert_ne!(late.index_version, independent.index_version);
    assert_eq!(late.chunks, independent.chunks);
    let report = cairn_index::verify(&IndexRoot::new(s.path("late"))).expect("verify");
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!(
        file(&s.path("late"), "vectors.f32"),
        file(&s.path("independent"), "vectors.f32"),
        "chunk vectors are the same pass"
    );
    assert_ne!(
        file(&s.path("late"), "subchunks.f32"),
        file(&s.path("independent"), "subchunks.f32")
    );
    std::fs::remove_dir_all(s.path("late")).expect("rm");
    let again = build(&s.options("late"), &Silent).expect("rebuild");
    assert_eq!(again.index_version, late.index_version);
    assert_eq!(again.embedded, 0, "every row from the cache");
}
