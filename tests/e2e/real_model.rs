//! The real default model, end to end. `.ci/run` fetches it first and sets
//! CAIRN_REQUIRE_MODEL=1, so in CI this runs rather than skips.

use crate::fixtures::{World, cairn, current_dir, read_json, stderr, stdout};

#[test]
fn builds_with_the_default_model() {
    let w = World::new();
    let o = w.build_with("out", "cache", None, &[]);
    if !o.status.success() && stderr(&o).contains("fetch-model.sh") {
        cairn_embed::fixtures::skip_unless_required(
            "CAIRN_REQUIRE_MODEL",
            "the default model in the hub cache (scripts/fetch-model.sh)",
        );
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = current_dir(&w.path("out"));
    let m = read_json(&dir.join("manifest.json"));
    assert_eq!(m["model"]["id"], "sentence-transformers/all-MiniLM-L6-v2");
    assert_eq!(m["model"]["dim"], 384);
    assert_eq!(m["model"]["max_tokens"], 256);
    assert_eq!(
        m["model"]["weights_sha256"],
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    );
    let chunks = m["counts"]["chunks"].as_u64().expect("chunks");
    let vectors = std::fs::metadata(dir.join("vectors.f32"))
        .expect("vectors")
        .len();
    assert_eq!(vectors, chunks * 384 * 4);

    // The server side opens the revision the manifest records (a commit,
    // not a branch) in the same hub cache: vector search is on.
    let out = w.path("out");
    let found = cairn(&[
        "search",
        "fit a point lens model",
        "--index",
        out.to_str().expect("utf8"),
        "--json",
    ]);
    assert!(found.status.success(), "{}", stderr(&found));
    let resp: serde_json::Value = serde_json::from_str(&stdout(&found)).expect("json");
    assert_eq!(resp["mode"], "hybrid", "{resp}");
    assert!(resp["notice"].is_null(), "{resp}");
}
