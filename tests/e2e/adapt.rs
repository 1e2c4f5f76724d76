//! `cairn adapt`: pairs mined from an index's own text, the model trained on
//! them, and a build with the adapted model that records its sha256.

use crate::fixtures::{World, cairn, commit, current_dir, read_json, stderr, stdout};
use std::path::Path;
use std::process::Output;

/// A documented module: numpy-style parameters, summaries, and a test file
/// whose docstrings must not be mined.
fn documented() -> Vec<(&'static str, Vec<u8>)> {
    let mut src = String::from("\"\"\"Samplers.\"\"\"\n\n");
    for (name, summary, param) in [
        (
            "run_chain",
            "Advance every walker of the ensemble by a number of steps.",
            "How many steps each walker takes before the chain is returned.",
        ),
        (
            "thin_chain",
            "Keep only every n-th sample of a finished chain.",
            "The stride between the samples that are kept in the output.",
        ),
        (
            "burn_chain",
            "Drop the first samples of a chain while it settles.",
            "How many initial samples are thrown away as the burn-in part.",
        ),
        (
            "mix_chain",
            "Shuffle the walkers between two chains at random.",
            "The seed of the generator that decides which walkers swap places.",
        ),
    ] {
        src.push_str(&format!(
            "def {name}(chain, value):\n    \"\"\"{summary}\n\n    Parameters\n    ----------\n    value : int\n        {param}\n    \"\"\"\n    out = []\n    for step, sample in enumerate(chain):\n        if step % 2 == 0 and value > 0:\n            out.append(sample * value + step)\n        else:\n            out.append(sample - value - step)\n    return [x for x in out if x is not None]\n\n\n"
        ));
    }
    let test = "def test_run_chain_moves_every_walker_forward():\n    \"\"\"A test docstring describes the test and is never mined as a pair.\"\"\"\n    chain = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]\n    assert run_chain(chain, 2) != chain and len(chain) == 18 and chain[0] == 1\n";
    vec![
        ("src/alpha/samplers.py", src.into_bytes()),
        ("tests/test_samplers.py", test.as_bytes().to_vec()),
    ]
}

fn path(p: &Path) -> String {
    p.to_str().expect("utf8").to_owned()
}

/// `cairn adapt` of the world's index `out` with its tiny model into `to`.
fn adapt(w: &World, to: &Path, extra: &[&str]) -> Output {
    let (index, model, to) = (path(&w.path("out")), path(&w.model), path(to));
    let mut args = vec![
        "adapt",
        "--index",
        &index,
        "--model-dir",
        &model,
        "--out",
        &to,
    ];
    args.extend(extra);
    cairn(&args)
}

#[test]
fn an_adapted_model_is_trained_on_the_corpus_text_and_recorded_by_the_build() {
    let w = World::new();
    commit(&w.alpha_repo(), &documented(), "document the samplers");
    let o = w.build("out", &[]);
    assert!(o.status.success(), "{}", stderr(&o));

    let (out, pairs) = (w.path("adapted"), w.path("pairs.jsonl"));
    let o = adapt(
        &w,
        &out,
        &[
            "--batch",
            "4",
            "--epochs",
            "3",
            "--learning-rate",
            "1e-3",
            "--dump-pairs",
            &path(&pairs),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("build with --model-dir"),
        "{}",
        stdout(&o)
    );

    let mined: Vec<serde_json::Value> = std::fs::read_to_string(&pairs)
        .expect("pairs")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let anchors: Vec<&str> = mined
        .iter()
        .map(|p| p["anchor"].as_str().expect("anchor"))
        .collect();
    for expected in [
        "Advance every walker of the ensemble by a number of steps.",
        "How many steps each walker takes before the chain is returned.",
    ] {
        assert!(anchors.contains(&expected), "{expected} not in {anchors:?}");
    }
    assert!(
        !anchors.iter().any(|a| a.contains("test docstring")),
        "a test's docstring was mined: {anchors:?}"
    );
    for p in &mined {
        let (a, positive) = (
            p["anchor"].as_str().expect("a"),
            p["positive"].as_str().expect("p"),
        );
        assert!(
            !positive.contains(a),
            "the positive repeats its anchor {a:?}"
        );
    }
    let summary = mined
        .iter()
        .find(|p| p["anchor"] == "Advance every walker of the ensemble by a number of steps.")
        .expect("summary pair");
    // The passage keeps the definition (its name and the parameter's entry).
    let positive = summary["positive"].as_str().expect("positive");
    assert!(
        positive.starts_with("alpha src/alpha/samplers.py"),
        "{positive}"
    );
    assert!(positive.contains("def run_chain(chain, value):") && positive.contains("value : int"));

    // The adapted folder builds an index that records its weights.
    let report = read_json(&out.join("adapt.json"));
    assert!(
        report["loss_last"].as_f64() < report["loss_first"].as_f64(),
        "{report}"
    );
    let o = w.build_with("out2", "cache", Some(&out), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest = read_json(&current_dir(&w.path("out2")).join("manifest.json"));
    assert_eq!(
        manifest["model"]["weights_sha256"],
        report["weights_sha256"]
    );
    assert_ne!(report["weights_sha256"], report["base_weights_sha256"]);
    let o = cairn(&[
        "search",
        "--index",
        &path(&w.path("out2")),
        "--model-dir",
        &path(&out),
        "--json",
        "walkers take steps",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("samplers.py"), "{}", stdout(&o));
}

#[test]
fn adapting_an_index_with_too_little_text_says_so() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let o = adapt(&w, &w.path("adapted"), &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("at least one batch"), "{}", stderr(&o));
    assert!(!w.path("adapted/model.safetensors").exists());
}
