//! The oldest index format this cairn claims to read
//! (`OLDEST_READABLE_FORMAT`), read for real: a version written by the cairn
//! that wrote format 3 (`scripts/make-format3-fixture.sh`: commit 85a5d14^,
//! one repository, the tests' tiny model), committed under
//! `tests/e2e/data/format3`. Today's binary verifies it and answers every
//! call over it; what format 3 lacks (the trigram file, definitions) is said,
//! not guessed.

use crate::fixtures::{cairn, stdout};
use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("fixture folder").flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = cairn(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&stdout(&o)).expect("json")
}

#[test]
fn a_format_3_index_is_verified_and_answers() {
    assert_eq!(
        cairn_index::OLDEST_READABLE_FORMAT,
        3,
        "the oldest readable format moved: make its fixture (scripts/make-format3-fixture.sh)"
    );
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/data/format3");
    let dir = tempfile::tempdir().expect("tempdir");
    let index = dir.path().join("index");
    copy_dir(&fixture, &index);
    let model = dir.path().join("model");
    cairn_embed::fixtures::write_tiny_bert(&model).expect("tiny model");
    let (idx, model) = (index.to_str().expect("utf8"), model.to_str().expect("utf8"));
    let manifest = std::fs::read_dir(index.join("versions"))
        .expect("versions")
        .flatten()
        .map(|e| e.path().join("manifest.json"))
        .next()
        .expect("one version");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(manifest).expect("manifest")).expect("json");
    assert_eq!(manifest["format_version"], 3, "the fixture is format 3");

    let o = cairn(&["verify", "--index", idx]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let core = "science/alpha/src/alpha/core.py";
    let found = json(&[
        "search",
        "fit_model",
        "--index",
        idx,
        "--model-dir",
        model,
        "--json",
    ]);
    assert_eq!(found["hits"][0]["doc_id"], core, "{found}");
    assert_eq!(found["mode"], "hybrid", "the model the index names is used");

    let lines = json(&[
        "retrieve",
        core,
        "--lines",
        "5:6",
        "--index",
        idx,
        "--model-dir",
        model,
        "--json",
    ]);
    assert_eq!(
        lines["text"],
        "def fit_model(data, t_E=1.0):\n    \"\"\"Fit a point lens model to data.\"\"\"\n"
    );

    let tree = json(&["tree", "--index", idx, "--model-dir", model, "--json"]);
    assert!(
        tree["entries"].to_string().contains("science/alpha"),
        "{tree}"
    );

    // No trigram file in format 3: grep reads every document, and finds.
    let grep = json(&[
        "grep",
        "magnification",
        "--index",
        idx,
        "--model-dir",
        model,
        "--json",
    ]);
    assert!(grep["matches"].as_u64().is_some_and(|n| n >= 1), "{grep}");

    // No definitions.json in format 3: the answer is none, not an error.
    let defs = json(&[
        "definitions",
        "fit_model",
        "--index",
        idx,
        "--model-dir",
        model,
        "--json",
    ]);
    assert_eq!(defs["matched"], "none", "{defs}");

    let explained = json(&[
        "explain",
        "ValueError: time must be positive",
        "--index",
        idx,
        "--model-dir",
        model,
        "--json",
    ]);
    assert_eq!(explained["raise_sites"][0]["doc_id"], core, "{explained}");
}
