//! A tiny random BERT written to disk (feature `test-fixtures`), so tests run
//! the real loading, tokenizing and embedding code in milliseconds; and the
//! one way a test says it is skipped ([`skip_unless_required`]).

use candle_core::{Device, Tensor};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;

const HIDDEN: usize = 32;
const LAYERS: usize = 2;
const HEADS: usize = 4;
const INTERMEDIATE: usize = 64;
const MAX_POSITIONS: usize = 128;

/// Says that the running test is skipped, and what it `needs` to run:
/// on stderr, and as a line (`<test name>: <needs>`) appended to the file
/// `CAIRN_SKIP_LOG` names, from which `scripts/test.sh` names every
/// skipped test. When the variable `require` is `1` (CI sets it after
/// installing what the test needs) the test fails instead.
pub fn skip_unless_required(require: &str, needs: &str) {
    assert!(
        std::env::var(require).map_or(true, |v| v != "1"),
        "{require}=1, but this test cannot run: it needs {needs}"
    );
    let name = std::thread::current().name().unwrap_or("a test").to_owned();
    eprintln!("skipped {name}: it needs {needs} ({require}=1 makes this a failure)");
    if let Some(log) = std::env::var_os("CAIRN_SKIP_LOG") {
        use std::io::Write;
        let line = format!("{name}: {}\n", needs.replace('\n', " "));
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = appended {
            eprintln!("CAIRN_SKIP_LOG: {e}");
        }
    }
}

/// Writes config.json, tokenizer.json, model.safetensors and
/// sentence_bert_config.json (max 64 tokens) into `dir`. Deterministic.
pub fn write_tiny_bert(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let vocab = vocab();
    let config = json!({
        "architectures": ["BertModel"], "model_type": "bert",
        "vocab_size": vocab.len(), "hidden_size": HIDDEN, "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS, "intermediate_size": INTERMEDIATE, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
        "max_position_embeddings": MAX_POSITIONS, "type_vocab_size": 2,
        "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": 0,
        "position_embedding_type": "absolute"
    });
    std::fs::write(dir.join("config.json"), config.to_string())?;
    std::fs::write(
        dir.join("sentence_bert_config.json"),
        r#"{"max_seq_length": 64}"#,
    )?;
    std::fs::write(
        dir.join("tokenizer.json"),
        tokenizer_json(&vocab).to_string(),
    )?;
    let tensors = weights(vocab.len()).map_err(std::io::Error::other)?;
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors"))
        .map_err(std::io::Error::other)
}

fn vocab() -> Vec<String> {
    let mut v: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .map(String::from)
        .to_vec();
    let chars = "abcdefghijklmnopqrstuvwxyz0123456789";
    v.extend(chars.chars().map(String::from));
    v.extend(chars.chars().map(|c| format!("##{c}")));
    v.extend(
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
            .chars()
            .map(String::from),
    );
    for w in [
        "the",
        "model",
        "fit",
        "data",
        "lens",
        "light",
        "curve",
        "install",
        "def",
        "class",
        "import",
        "return",
        "parameter",
        "sampler",
        "plot",
        "event",
        "source",
        "time",
        "magnification",
    ] {
        v.push(w.to_owned());
    }
    v
}

fn tokenizer_json(vocab: &[String]) -> Value {
    let map: serde_json::Map<String, Value> = vocab
        .iter()
        .enumerate()
        .map(|(i, w)| (w.clone(), json!(i)))
        .collect();
    let special = |id: usize, content: &str| {
        json!({"id": id, "content": content, "single_word": false, "lstrip": false,
               "rstrip": false, "normalized": false, "special": true})
    };
    json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [special(0, "[PAD]"), special(1, "[UNK]"), special(2, "[CLS]"),
                          special(3, "[SEP]"), special(4, "[MASK]")],
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                        "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}
            }
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": map}
    })
}

/// A fixed-seed generator: the fixture is byte-identical every time.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.2
    }
}

fn weights(vocab: usize) -> candle_core::Result<HashMap<String, Tensor>> {
    let mut rng = Lcg(42);
    let mut t = HashMap::new();
    let mut add = |name: String, shape: &[usize], fill: Option<f32>| -> candle_core::Result<()> {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|_| fill.unwrap_or_else(|| rng.next())).collect();
        t.insert(name, Tensor::from_vec(data, shape, &Device::Cpu)?);
        Ok(())
    };
    add(
        "embeddings.word_embeddings.weight".into(),
        &[vocab, HIDDEN],
        None,
    )?;
    add(
        "embeddings.position_embeddings.weight".into(),
        &[MAX_POSITIONS, HIDDEN],
        None,
    )?;
    add(
        "embeddings.token_type_embeddings.weight".into(),
        &[2, HIDDEN],
        None,
    )?;
    add("embeddings.LayerNorm.weight".into(), &[HIDDEN], Some(1.0))?;
    add("embeddings.LayerNorm.bias".into(), &[HIDDEN], Some(0.0))?;
    for l in 0..LAYERS {
        let p = format!("encoder.layer.{l}");
        for m in ["query", "key", "value"] {
            add(
                format!("{p}.attention.self.{m}.weight"),
                &[HIDDEN, HIDDEN],
                None,
            )?;
            add(format!("{p}.attention.self.{m}.bias"), &[HIDDEN], None)?;
        }
        add(
            format!("{p}.attention.output.dense.weight"),
            &[HIDDEN, HIDDEN],
            None,
        )?;
        add(format!("{p}.attention.output.dense.bias"), &[HIDDEN], None)?;
        add(
            format!("{p}.attention.output.LayerNorm.weight"),
            &[HIDDEN],
            Some(1.0),
        )?;
        add(
            format!("{p}.attention.output.LayerNorm.bias"),
            &[HIDDEN],
            Some(0.0),
        )?;
        add(
            format!("{p}.intermediate.dense.weight"),
            &[INTERMEDIATE, HIDDEN],
            None,
        )?;
        add(
            format!("{p}.intermediate.dense.bias"),
            &[INTERMEDIATE],
            None,
        )?;
        add(
            format!("{p}.output.dense.weight"),
            &[HIDDEN, INTERMEDIATE],
            None,
        )?;
        add(format!("{p}.output.dense.bias"), &[HIDDEN], None)?;
        add(format!("{p}.output.LayerNorm.weight"), &[HIDDEN], Some(1.0))?;
        add(format!("{p}.output.LayerNorm.bias"), &[HIDDEN], Some(0.0))?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BertEmbedder, DevicePref, Embedder, ModelSpec};

    /// The tiny model, loaded from a temp folder (kept alive by the caller).
    fn tiny() -> (tempfile::TempDir, BertEmbedder) {
        let dir = tempfile::tempdir().expect("tempdir");
        write_tiny_bert(dir.path()).expect("fixture");
        let files = ModelSpec::Dir(dir.path().to_owned())
            .locate()
            .expect("files");
        let e = BertEmbedder::load(&files, DevicePref::Cpu).expect("load");
        (dir, e)
    }

    #[test]
    fn tiny_model_embeds_unit_vectors() {
        let (_dir, e) = tiny();
        assert_eq!(e.model().dim, HIDDEN);
        assert_eq!(e.model().max_tokens, 64);
        let long = "model fit ".repeat(200);
        let texts = [
            "fit the model",
            "light curve data",
            long.as_str(),
            "fit the model",
        ];
        let v = e.embed(&texts).expect("embed");
        assert_eq!(v.len(), 4);
        for row in &v {
            let norm: f32 = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
        }
        // Batching and sorting must not change a text's vector.
        assert_eq!(v[0], v[3]);
        let alone = e.embed(&["fit the model"]).expect("embed");
        let cos: f32 = alone[0].iter().zip(&v[0]).map(|(a, b)| a * b).sum();
        assert!(cos > 0.9999, "cos {cos}");
        assert_ne!(v[0], v[1]);
        assert!(e.count_tokens(&long).expect("count") > 64);
    }

    /// Late chunking's pass gives each text the vector `embed` gives, and each
    /// span a unit vector pooled from the tokens inside it.
    #[test]
    fn spans_pool_their_tokens_from_the_same_pass() {
        let (_dir, e) = tiny();
        let text = "fit the model\nlight curve data";
        let items = [crate::SpanText {
            text,
            spans: vec![vec![0..13], vec![14..text.len()], vec![0..0]],
        }];
        let got = e.embed_spans(&items).expect("spans");
        let plain = e.embed(&[text]).expect("embed");
        let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        assert!(cos(&got[0].whole, &plain[0]) > 0.9999);
        let first = got[0].parts[0].as_ref().expect("tokens in 0..13");
        let second = got[0].parts[1].as_ref().expect("tokens in the second line");
        for v in [first, second] {
            assert!((cos(v, v) - 1.0).abs() < 1e-4);
        }
        assert!(
            cos(first, second) < 0.9999,
            "different tokens, different vectors"
        );
        assert_eq!(got[0].parts[2], None, "an empty range pools nothing");
    }

    #[test]
    fn missing_files_say_what_to_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = ModelSpec::Dir(dir.path().to_owned())
            .locate()
            .expect_err("empty dir");
        let msg = err.to_string();
        assert!(
            msg.contains("fetch-model.sh") && msg.contains("config.json"),
            "{msg}"
        );
    }

    #[test]
    fn cuda_without_gpu_is_a_clear_error() {
        if candle_core::utils::cuda_is_available() {
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        write_tiny_bert(dir.path()).expect("fixture");
        let files = ModelSpec::Dir(dir.path().to_owned())
            .locate()
            .expect("files");
        let err = BertEmbedder::load(&files, DevicePref::Cuda(0))
            .err()
            .expect("no gpu");
        assert!(err.to_string().contains("--features cuda"));
    }
}
