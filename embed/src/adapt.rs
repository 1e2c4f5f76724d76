//! Adapting a sentence model to a corpus: contrastive fine-tuning of a
//! BERT-family model on (anchor, positive) text pairs, each batch's other
//! positives serving as negatives (the "multiple negatives ranking" loss of
//! sentence-transformers), written out as a model folder that
//! [`crate::ModelSpec::Dir`] loads like any other.
//!
//! Why here and in candle: the weights never leave Rust, no PyTorch is
//! needed on a build machine, and the output is byte-for-byte reproducible
//! from the same pairs, options and base weights. candle's own `BertModel`
//! cannot be trained (its layer norm is a kernel without a backward pass), so
//! this file holds a second, differentiable forward built from candle's
//! primitive ops; its vectors are checked against the embedder's in the tests.
//! The word, position and token-type embedding tables stay frozen (their
//! layer norm and every encoder layer train): with a few thousand pairs,
//! moving 12 M embedding parameters would overfit the corpus's vocabulary
//! and cost most of the step time. The weights are reproducible on one kind
//! of CPU: gemm picks other kernels (AVX2, AVX-512) on others.
//!
//! Depends on candle and the tokenizer only; the pairs come from the caller
//! (the pipeline mines them from a published index).

mod batches;

use crate::error::EmbedError;
use crate::model_files::ModelFiles;
use crate::model_files::{bad_model, read, weights_sha256};
use batches::{encode, rate, shuffled, tokenizer};
use candle_core::{D, DType, Device, Tensor, Var};
use candle_nn::Optimizer;
use candle_transformers::models::bert::{Config, HiddenAct};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use tokenizers::Tokenizer;

/// One training example: a short text and the passage it should land near.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pair {
    /// The question-like side (a docstring's summary, a parameter's
    /// description, a heading).
    pub anchor: String,
    /// The passage as the index embeds it, without the anchor's own words.
    pub positive: String,
}

/// How to train.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdaptOptions {
    /// Passes over the pairs.
    pub epochs: usize,
    /// Pairs per step (each step's in-batch negatives are `batch - 1`).
    pub batch: usize,
    /// AdamW's peak learning rate (linear warm-up over the first tenth of
    /// the steps, then linear decay to zero).
    pub learning_rate: f64,
    /// Tokens an anchor is cut to.
    pub anchor_tokens: usize,
    /// Tokens a positive is cut to.
    pub positive_tokens: usize,
    /// Cosine similarities are multiplied by this before the softmax.
    pub scale: f64,
    /// Seeds the order of the pairs.
    pub seed: u64,
}

impl Default for AdaptOptions {
    fn default() -> Self {
        Self {
            epochs: 1,
            batch: 32,
            learning_rate: 2e-5,
            anchor_tokens: 64,
            positive_tokens: 128,
            scale: 20.0,
            seed: 17,
        }
    }
}

/// What a run did, written beside the weights as `adapt.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdaptReport {
    /// sha256 of the base model's weights.
    pub base_weights_sha256: String,
    /// sha256 of the adapted weights.
    pub weights_sha256: String,
    /// Pairs trained on.
    pub pairs: usize,
    /// Optimizer steps taken.
    pub steps: usize,
    /// Mean loss over the first tenth of the steps.
    pub loss_first: f32,
    /// Mean loss over the last tenth of the steps.
    pub loss_last: f32,
    /// The options used.
    pub options: AdaptOptions,
}

/// One encoder layer's weights, as trainable variables.
struct Layer {
    q: Dense,
    k: Dense,
    v: Dense,
    attn_out: Dense,
    ln1: Norm,
    up: Dense,
    down: Dense,
    ln2: Norm,
}

struct Dense {
    w: Var,
    b: Var,
}

impl Dense {
    /// `x` is `batch × len × in`; the product runs on its rows as one
    /// matrix (a broadcast product would copy the weights once per text).
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, len, inp) = x.dims3()?;
        x.reshape((batch * len, inp))?
            .matmul(&self.w.as_tensor().t()?)?
            .broadcast_add(self.b.as_tensor())?
            .reshape((batch, len, ()))
    }
}

struct Norm {
    gamma: Var,
    beta: Var,
}

impl Norm {
    fn forward(&self, x: &Tensor, eps: f32) -> candle_core::Result<Tensor> {
        candle_nn::ops::layer_norm_slow(x, self.gamma.as_tensor(), self.beta.as_tensor(), eps)
    }
}

/// A BERT encoder whose layers can be trained.
struct Trainable {
    word: Tensor,
    position: Tensor,
    token_type: Tensor,
    ln: Norm,
    layers: Vec<Layer>,
    heads: usize,
    eps: f32,
    act: HiddenAct,
    /// Every tensor of the weights file, by name, to write back.
    all: HashMap<String, Tensor>,
    /// Each trainable variable's full name in that file.
    names: Vec<(String, Var)>,
}

impl Trainable {
    fn load(files: &ModelFiles, config: &Config) -> Result<Self, EmbedError> {
        let all = candle_core::safetensors::load(&files.weights, &Device::Cpu)
            .map_err(|e| bad_model(&files.weights, e))?;
        let prefix = [None, config.model_type.as_deref(), Some("bert")]
            .into_iter()
            .map(|p| p.map_or(String::new(), |p| format!("{p}.")))
            .find(|p| all.contains_key(&format!("{p}embeddings.word_embeddings.weight")))
            .ok_or_else(|| bad_model(&files.weights, "no embeddings.word_embeddings.weight"))?;
        let tensor = |name: &str| -> Result<Tensor, EmbedError> {
            let full = format!("{prefix}{name}");
            all.get(&full)
                .ok_or_else(|| bad_model(&files.weights, format!("no tensor {full}")))?
                .to_dtype(DType::F32)
                .map_err(EmbedError::from)
        };
        let mut names = Vec::new();
        let mut var = |name: String| -> Result<Var, EmbedError> {
            let v = Var::from_tensor(&tensor(&name)?)?;
            names.push((format!("{prefix}{name}"), v.clone()));
            Ok(v)
        };
        let mut dense = |base: String| -> Result<Dense, EmbedError> {
            Ok(Dense {
                w: var(format!("{base}.weight"))?,
                b: var(format!("{base}.bias"))?,
            })
        };
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let l = format!("encoder.layer.{i}");
            let q = dense(format!("{l}.attention.self.query"))?;
            let k = dense(format!("{l}.attention.self.key"))?;
            let v = dense(format!("{l}.attention.self.value"))?;
            let attn_out = dense(format!("{l}.attention.output.dense"))?;
            let ln1 = dense(format!("{l}.attention.output.LayerNorm"))?;
            let up = dense(format!("{l}.intermediate.dense"))?;
            let down = dense(format!("{l}.output.dense"))?;
            let ln2 = dense(format!("{l}.output.LayerNorm"))?;
            layers.push(Layer {
                q,
                k,
                v,
                attn_out,
                ln1: Norm {
                    gamma: ln1.w,
                    beta: ln1.b,
                },
                up,
                down,
                ln2: Norm {
                    gamma: ln2.w,
                    beta: ln2.b,
                },
            });
        }
        let ln = dense("embeddings.LayerNorm".to_owned())?;
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return Err(bad_model(
                &files.config,
                "hidden size is not a multiple of heads",
            ));
        }
        Ok(Self {
            word: tensor("embeddings.word_embeddings.weight")?,
            position: tensor("embeddings.position_embeddings.weight")?,
            token_type: tensor("embeddings.token_type_embeddings.weight")?,
            ln: Norm {
                gamma: ln.w,
                beta: ln.b,
            },
            layers,
            heads: config.num_attention_heads,
            eps: config.layer_norm_eps as f32,
            act: config.hidden_act,
            all,
            names,
        })
    }

    fn vars(&self) -> Vec<Var> {
        self.names.iter().map(|(_, v)| v.clone()).collect()
    }

    /// Mean-pooled, L2-normalised sentence vectors of a padded batch
    /// (`ids` and `mask` are `batch × len`).
    fn embed(&self, ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, len) = ids.dims2()?;
        let positions = Tensor::arange(0u32, len as u32, ids.device())?;
        let x = self
            .word
            .embedding(&ids.flatten_all()?)?
            .reshape((batch, len, ()))?
            .broadcast_add(&self.position.embedding(&positions)?)?
            .broadcast_add(&self.token_type.get(0)?)?;
        let mut x = self.ln.forward(&x, self.eps)?;
        let hidden = x.dim(D::Minus1)?;
        let head = hidden / self.heads;
        let maskf = mask.to_dtype(DType::F32)?;
        // 0 where a token may be attended to, a large negative where it is padding.
        let bias = ((maskf.clone() - 1.0)? * 1e4)?.reshape((batch, 1, 1, len))?;
        let split = |t: Tensor| -> candle_core::Result<Tensor> {
            t.reshape((batch, len, self.heads, head))?
                .transpose(1, 2)?
                .contiguous()
        };
        for l in &self.layers {
            let q = split(l.q.forward(&x)?)?;
            let k = split(l.k.forward(&x)?)?;
            let v = split(l.v.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?)? / (head as f64).sqrt())?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax(&scores, D::Minus1)?;
            let context = probs
                .matmul(&v)?
                .transpose(1, 2)?
                .reshape((batch, len, hidden))?;
            let attended = l
                .ln1
                .forward(&(l.attn_out.forward(&context)? + &x)?, self.eps)?;
            let up = l.up.forward(&attended)?;
            let up = match self.act {
                HiddenAct::GeluApproximate => up.gelu()?,
                HiddenAct::Relu => up.relu()?,
                _ => up.gelu_erf()?,
            };
            x = l
                .ln2
                .forward(&(l.down.forward(&up)? + &attended)?, self.eps)?;
        }
        let m = maskf.unsqueeze(2)?;
        let summed = x.broadcast_mul(&m)?.sum(1)?;
        let counts = m.sum(1)?.clamp(1.0, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norm)
    }

    /// Writes every tensor of the original file, the trained ones replaced.
    fn save(&self, path: &Path) -> Result<(), EmbedError> {
        let mut out = self.all.clone();
        for (name, v) in &self.names {
            let dtype = out.get(name).map_or(DType::F32, Tensor::dtype);
            out.insert(name.clone(), v.as_tensor().to_dtype(dtype)?);
        }
        candle_core::safetensors::save(&out, path).map_err(|e| bad_model(path, e))
    }
}

/// Whether writing into `out` would overwrite a file of the base model
/// (copying a file onto itself empties it).
fn writes_over(out: &Path, files: &ModelFiles) -> bool {
    let Ok(out) = out.canonicalize() else {
        return false;
    };
    [&files.config, &files.tokenizer, &files.weights]
        .into_iter()
        .chain(files.sentence_config.as_ref())
        .filter_map(|f| f.parent()?.canonicalize().ok())
        .any(|dir| dir == out)
}

/// Fine-tunes the model in `files` on `pairs` and writes a model folder to
/// `out` (config, tokenizer, weights, `adapt.json`). `progress` hears each
/// step's number, the step count and its loss.
pub fn adapt(
    files: &ModelFiles,
    pairs: &[Pair],
    opts: &AdaptOptions,
    out: &Path,
    progress: &mut dyn FnMut(usize, usize, f32),
) -> Result<AdaptReport, EmbedError> {
    check_request(files, pairs, opts, out)?;
    let config = files.bert_config()?;
    let model = Trainable::load(files, &config)?;
    let losses = train(&model, files, pairs, opts, progress)?;
    let weights = write_model_folder(&model, files, out)?;
    let report = summarize(files, &weights, pairs.len(), &losses, opts)?;
    let json = serde_json::to_vec_pretty(&report).map_err(|e| bad_model(out, e))?;
    std::fs::write(out.join("adapt.json"), json).map_err(|source| EmbedError::Io {
        path: out.join("adapt.json"),
        source,
    })?;
    Ok(report)
}

/// The tokenizers for each side of a pair, each cutting to its own length.
struct PairTokenizers {
    anchors: Tokenizer,
    positives: Tokenizer,
}

/// Refuses a run that cannot train or would overwrite the base model, before any weights load.
fn check_request(
    files: &ModelFiles,
    pairs: &[Pair],
    opts: &AdaptOptions,
    out: &Path,
) -> Result<(), EmbedError> {
    if opts.batch < 2 || opts.epochs == 0 {
        return Err(EmbedError::Device(
            "adapting needs a batch of at least 2 pairs and at least one epoch".to_owned(),
        ));
    }
    if !(opts.learning_rate.is_finite() && opts.learning_rate > 0.0) {
        return Err(EmbedError::Device(format!(
            "the learning rate must be a positive number, not {}",
            opts.learning_rate
        )));
    }
    if writes_over(out, files) {
        return Err(EmbedError::Device(format!(
            "{} holds the base model: write the adapted model to another folder",
            out.display()
        )));
    }
    if pairs.len() < opts.batch {
        return Err(EmbedError::Device(format!(
            "adapting needs at least one batch of pairs: {} pairs, batch {}",
            pairs.len(),
            opts.batch
        )));
    }
    Ok(())
}

/// Runs every epoch's optimizer steps over `model`; returns each step's loss.
fn train(
    model: &Trainable,
    files: &ModelFiles,
    pairs: &[Pair],
    opts: &AdaptOptions,
    progress: &mut dyn FnMut(usize, usize, f32),
) -> Result<Vec<f32>, EmbedError> {
    let tokenizers = PairTokenizers {
        anchors: tokenizer(files, opts.anchor_tokens)?,
        positives: tokenizer(files, opts.positive_tokens)?,
    };
    let mut optimizer = candle_nn::AdamW::new(
        model.vars(),
        candle_nn::ParamsAdamW {
            lr: opts.learning_rate,
            weight_decay: 0.01,
            ..candle_nn::ParamsAdamW::default()
        },
    )?;
    let per_epoch = pairs.len() / opts.batch;
    let total = per_epoch * opts.epochs;
    let mut losses = Vec::with_capacity(total);
    for epoch in 0..opts.epochs {
        let order = shuffled(pairs.len(), opts.seed.wrapping_add(epoch as u64));
        for b in 0..per_epoch {
            let batch: Vec<&Pair> = order[b * opts.batch..(b + 1) * opts.batch]
                .iter()
                .map(|&i| &pairs[i])
                .collect();
            let loss = batch_loss(model, &tokenizers, &batch, opts.scale)?;
            let step = losses.len();
            optimizer.set_learning_rate(rate(opts.learning_rate, step, total));
            optimizer.backward_step(&loss)?;
            let value = loss.to_scalar::<f32>()?;
            if !value.is_finite() {
                return Err(EmbedError::Device(format!(
                    "the loss is not finite at step {step}: lower the learning rate"
                )));
            }
            losses.push(value);
            progress(step + 1, total, value);
        }
    }
    Ok(losses)
}

/// The in-batch loss: each anchor should score its own positive above the batch's others.
fn batch_loss(
    model: &Trainable,
    tokenizers: &PairTokenizers,
    batch: &[&Pair],
    scale: f64,
) -> Result<Tensor, EmbedError> {
    let a: Vec<&str> = batch.iter().map(|p| p.anchor.as_str()).collect();
    let p: Vec<&str> = batch.iter().map(|p| p.positive.as_str()).collect();
    let (a_ids, a_mask) = encode(&tokenizers.anchors, &a)?;
    let (p_ids, p_mask) = encode(&tokenizers.positives, &p)?;
    let va = model.embed(&a_ids, &a_mask)?;
    let vp = model.embed(&p_ids, &p_mask)?;
    let logits = (va.matmul(&vp.t()?)? * scale)?;
    let target = Tensor::arange(0u32, batch.len() as u32, &Device::Cpu)?;
    Ok(candle_nn::loss::cross_entropy(&logits, &target)?)
}

/// Writes the weights beside the base model's config and tokenizer so the folder loads as a model.
fn write_model_folder(
    model: &Trainable,
    files: &ModelFiles,
    out: &Path,
) -> Result<std::path::PathBuf, EmbedError> {
    std::fs::create_dir_all(out).map_err(|source| EmbedError::Io {
        path: out.to_owned(),
        source,
    })?;
    let weights = out.join("model.safetensors");
    model.save(&weights)?;
    let copy = |from: &Path, name: &str| {
        std::fs::copy(from, out.join(name))
            .map(|_| ())
            .map_err(|source| EmbedError::Io {
                path: from.to_owned(),
                source,
            })
    };
    copy(&files.config, "config.json")?;
    copy(&files.tokenizer, "tokenizer.json")?;
    if let Some(s) = &files.sentence_config {
        copy(s, "sentence_bert_config.json")?;
    }
    Ok(weights)
}

/// The run's report: both weights' hashes and the mean loss of its first and last tenth.
fn summarize(
    files: &ModelFiles,
    weights: &Path,
    pairs: usize,
    losses: &[f32],
    opts: &AdaptOptions,
) -> Result<AdaptReport, EmbedError> {
    let tenth = (losses.len() / 10).max(1);
    let mean = |xs: &[f32]| xs.iter().sum::<f32>() / xs.len().max(1) as f32;
    Ok(AdaptReport {
        base_weights_sha256: weights_sha256(&read(&files.weights)?),
        weights_sha256: weights_sha256(&read(weights)?),
        pairs,
        steps: losses.len(),
        loss_first: mean(&losses[..tenth.min(losses.len())]),
        loss_last: mean(&losses[losses.len().saturating_sub(tenth)..]),
        options: opts.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BertEmbedder, DevicePref, Embedder, ModelSpec};

    fn tiny() -> (tempfile::TempDir, ModelFiles) {
        let dir = tempfile::tempdir().expect("tempdir");
        crate::fixtures::write_tiny_bert(dir.path()).expect("model");
        let files = ModelSpec::Dir(dir.path().to_owned())
            .locate()
            .expect("files");
        (dir, files)
    }

    #[test]
    fn the_trainable_forward_gives_the_embedders_vectors() {
        let (_dir, files) = tiny();
        let config = files.bert_config().expect("config");
        let model = Trainable::load(&files, &config).expect("load");
        let embedder = BertEmbedder::load(&files, DevicePref::Cpu).expect("embedder");
        let texts = ["hello world", "the walkers move in an ensemble of chains"];
        let tok = tokenizer(&files, 64).expect("tokenizer");
        let (ids, mask) = encode(&tok, &texts).expect("encode");
        let ours = model.embed(&ids, &mask).expect("embed");
        let theirs = embedder.embed(&texts).expect("embed");
        for (i, t) in theirs.iter().enumerate() {
            let row: Vec<f32> = ours.get(i).and_then(|r| r.to_vec1()).expect("row");
            let cos: f32 = row.iter().zip(t).map(|(a, b)| a * b).sum();
            assert!(cos > 0.9999, "row {i}: cosine {cos}");
        }
    }

    #[test]
    fn training_lowers_the_loss_and_is_reproducible() {
        let (_dir, files) = tiny();
        let words = [
            "alpha", "beta", "gamma", "delta", "walker", "chain", "prior", "sample",
        ];
        let pairs: Vec<Pair> = (0..32)
            .map(|i| Pair {
                anchor: format!("{} {}", words[i % 8], words[(i / 8) % 8]),
                positive: format!(
                    "def f{i}(): return {} {} {}",
                    words[i % 8],
                    words[(i / 8) % 8],
                    words[(i * 3) % 8]
                ),
            })
            .collect();
        let opts = AdaptOptions {
            epochs: 6,
            batch: 8,
            learning_rate: 1e-3,
            ..AdaptOptions::default()
        };
        let out = tempfile::tempdir().expect("out");
        let mut seen = 0;
        let report = adapt(&files, &pairs, &opts, out.path(), &mut |s, total, _| {
            seen = s;
            assert!(s <= total);
        })
        .expect("adapt");
        assert_eq!(report.steps, 24);
        assert_eq!(seen, 24);
        assert!(
            report.loss_last < report.loss_first,
            "loss {} -> {}",
            report.loss_first,
            report.loss_last
        );
        assert_ne!(report.weights_sha256, report.base_weights_sha256);

        // The folder loads as a model and gives other vectors than the base.
        let adapted = ModelSpec::Dir(out.path().to_owned())
            .locate()
            .expect("adapted files");
        let a = BertEmbedder::load(&adapted, DevicePref::Cpu).expect("load adapted");
        assert_eq!(a.model().weights_sha256, report.weights_sha256);
        let base = BertEmbedder::load(&files, DevicePref::Cpu).expect("load base");
        let (va, vb) = (
            a.embed(&["walker chain"]).expect("a"),
            base.embed(&["walker chain"]).expect("b"),
        );
        assert_ne!(va, vb);

        // The same pairs, options and base give the same weights.
        let again = tempfile::tempdir().expect("again");
        let second = adapt(&files, &pairs, &opts, again.path(), &mut |_, _, _| {}).expect("again");
        assert_eq!(second.weights_sha256, report.weights_sha256);
    }

    #[test]
    fn too_few_pairs_is_an_error_not_a_model() {
        let (_dir, files) = tiny();
        let pair = Pair {
            anchor: "a".into(),
            positive: "b".into(),
        };
        let out = tempfile::tempdir().expect("out");
        let err = adapt(
            &files,
            &[pair],
            &AdaptOptions::default(),
            out.path(),
            &mut |_, _, _| {},
        )
        .expect_err("one pair");
        assert!(err.to_string().contains("at least one batch"), "{err}");
        assert!(!out.path().join("model.safetensors").exists());
    }

    #[test]
    fn the_base_models_folder_is_never_written_over() {
        let (dir, files) = tiny();
        let before = std::fs::read(&files.weights).expect("weights");
        let pairs: Vec<Pair> = (0..4)
            .map(|i| Pair {
                anchor: format!("anchor {i}"),
                positive: format!("positive {i}"),
            })
            .collect();
        let opts = AdaptOptions {
            batch: 2,
            ..AdaptOptions::default()
        };
        let err =
            adapt(&files, &pairs, &opts, dir.path(), &mut |_, _, _| {}).expect_err("same folder");
        assert!(err.to_string().contains("holds the base model"), "{err}");
        assert_eq!(std::fs::read(&files.weights).expect("weights"), before);
        let bad_rate = AdaptOptions {
            learning_rate: -1.0,
            ..opts
        };
        let out = tempfile::tempdir().expect("out");
        let err = adapt(&files, &pairs, &bad_rate, out.path(), &mut |_, _, _| {})
            .expect_err("negative rate");
        assert!(err.to_string().contains("learning rate"), "{err}");
    }

    #[test]
    fn the_schedule_warms_up_then_decays_to_zero() {
        assert!(rate(1.0, 0, 100) < rate(1.0, 9, 100));
        assert!((rate(1.0, 9, 100) - 1.0).abs() < 1e-9);
        assert!(rate(1.0, 99, 100) < 0.02);
        let order = shuffled(50, 3);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_eq!(order, shuffled(50, 3));
        assert_ne!(order, shuffled(50, 4));
    }
}
