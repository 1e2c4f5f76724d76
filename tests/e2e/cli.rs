//! The CLI's search, retrieve, tree and eval over a fixture index, as a user types them.

use crate::fixtures::{World, cairn, stderr, stdout};

#[test]
fn cli_search_retrieve_tree_and_eval() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let idx = w.path("out");
    let idx = idx.to_str().expect("utf8");
    let model = w.model.to_str().expect("utf8");
    let o = cairn(&[
        "search",
        "fit_model",
        "--index",
        idx,
        "--model-dir",
        model,
        "--json",
    ]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["hits"][0]["doc_id"], "science/alpha/src/alpha/core.py");
    let o = cairn(&[
        "search",
        "fit_model",
        "--index",
        idx,
        "--model-dir",
        model,
        "--toolkit",
        "alpha",
    ]);
    assert!(
        stdout(&o).contains("science/alpha/src/alpha/core.py:"),
        "{}",
        stdout(&o)
    );
    // Other phrasings are `--queries` (the API's word); `--also` still works.
    let phrased = |flag: &str| {
        let o = cairn(&[
            "search",
            "light curve",
            flag,
            "fit_model",
            "--index",
            idx,
            "--model-dir",
            model,
            "--json",
        ]);
        assert!(
            o.status.success(),
            "{flag}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
        v["hits"].clone()
    };
    assert_eq!(phrased("--queries"), phrased("--also"));
    let o = cairn(&[
        "retrieve",
        "science/alpha/src/alpha/core.py",
        "--lines",
        "5:6",
        "--index",
        idx,
        "--model-dir",
        model,
    ]);
    assert!(
        stdout(&o).contains("def fit_model(data, t_E=1.0):"),
        "{}",
        stdout(&o)
    );
    let o = cairn(&[
        "retrieve",
        "../etc/passwd",
        "--lines",
        "1:2",
        "--index",
        idx,
        "--model-dir",
        model,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = cairn(&["tree", "--index", idx, "--model-dir", model]);
    assert!(stdout(&o).contains("science/alpha/"));
    w.write(
        "golden.yaml",
        "- id: def\n  query: fit_model\n  filters: {}\n  relevant:\n    - doc_id: science/alpha/src/alpha/core.py\n      lines: [5, 7]\n  kind: api\n",
    );
    let golden = w.path("golden.yaml");
    let golden = golden.to_str().expect("utf8");
    let eval = |extra: &[&str]| {
        let mut args = vec![
            "eval",
            golden,
            "--index",
            idx,
            "--model-dir",
            model,
            "--mode",
            "bm25",
        ];
        args.extend(extra);
        cairn(&args)
    };
    let o = eval(&["--min-recall", "1.0"]);
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(stdout(&o).contains("lines@5 1.000"), "{}", stdout(&o));
    // The learned ranker's training rows: each candidate, labelled, with
    // the fusion's parts and the lists that found it.
    let rows = w.path("features.jsonl");
    let o = eval(&["--features", rows.to_str().expect("utf8")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&rows).expect("features");
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let first = rows.first().expect("a candidate");
    assert_eq!(
        (first["id"].as_str(), first["rank"].as_u64()),
        (Some("def"), Some(1))
    );
    assert_eq!(first["relevant"], true, "{first}");
    let feature = |name: &str| first["features"][name].as_f64().unwrap_or(-1.0);
    assert!(
        feature("bm25") > 0.0 && feature("rr_identifier") > 0.0,
        "{first}"
    );
    assert_eq!(feature("doctype_code"), 1.0, "{first}");
    assert!(
        rows.iter().skip(1).all(|r| r["relevant"] == false),
        "{text}"
    );
    // The nightly's step summary: a table per mode, a row per kind.
    let o = eval(&["--markdown"]);
    assert!(o.status.success(), "{}", stdout(&o));
    let md = stdout(&o);
    assert!(
        md.contains(
            "| bm25 | questions | document@5 | lines@5 | focus@5 | precise recall@5 | MRR@10 |"
        ),
        "{md}"
    );
    assert!(md.contains("| **all** | 1 | 1.000 | 1.000 |"), "{md}");
    assert!(md.contains("| api | 1 | 1.000 |"), "{md}");
    assert!(!md.contains("Misses"), "{md}");
    // The nightly's gate: today's figures against the last release's.
    let o = eval(&["--json"]);
    let baseline = w.path("baseline.json");
    std::fs::write(&baseline, stdout(&o)).expect("baseline");
    let baseline = baseline.to_str().expect("utf8");
    let o = eval(&["--baseline", baseline]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("recall@k 1.000 (baseline 1.000, +0.000)"),
        "{}",
        stderr(&o)
    );
    // The same question answered elsewhere now: recall fell, the gate says by how much.
    std::fs::write(
        w.path("golden.yaml"),
        "- id: def\n  query: fit_model\n  filters: {}\n  relevant:\n    - doc_id: science/alpha/docs/crlf.txt\n      lines: [1, 1]\n  kind: api\n",
    )
    .expect("golden");
    let o = eval(&["--baseline", baseline]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("recall@k fell by 1.000, more than --max-drop 0.02"),
        "{}",
        stderr(&o)
    );
    // A guard that breaks fails the gate only when asked.
    std::fs::write(
        w.path("golden.yaml"),
        "- id: g\n  query: fit_model\n  relevant:\n    - doc_id: science/alpha/src/alpha/core.py\n  never_first: [science/alpha/src/]\n  kind: guard\n",
    )
    .expect("golden");
    assert!(eval(&[]).status.success());
    let o = eval(&["--fail-on-guard"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stderr(&o).contains("a guard question failed"));
    let o = eval(&["--baseline", "/nonexistent/eval.json"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("--baseline /nonexistent/eval.json"),
        "{}",
        stderr(&o)
    );
}
