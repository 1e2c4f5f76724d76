//! cairn's own BERT encoder forward pass for the CPU: the arithmetic of
//! candle's `BertModel`, run over one unpadded sequence at a time with each
//! layer's element-wise work fused (bias with the matrix product, GELU in
//! place, residual with layer norm, softmax over contiguous rows) in buffers
//! that each thread keeps between texts. gemm's kernels (the ones candle
//! calls) do the matrix products in f32; `bf16.rs` does them in bfloat16
//! with f32 sums where the CPU has AVX-512 BF16, and `amx.rs` on AMX tiles
//! where it has those ([`Precision`]); in the f32 pass a query of a few
//! tokens takes its own kernel (`kernels::few_rows`). `linear.rs` holds the
//! dense layers and their products, `precision.rs` picks the arithmetic,
//! `profile.rs` times each stage for `embed_bench --profile`.
//!
//! Why: candle's element-wise kernels allocate a tensor per op and run on one
//! core, and were over half of the build's model time; a query of ten tokens
//! paid for that overhead many times over. Candle still loads the weights
//! and runs the `cuda` path, and is the reference this pass is tested against.
//!
//! Most of the workspace's `unsafe` lives here (the rest is the index's
//! memory maps, `index/src/{snapshot,vectors}.rs`): gemm's entry point takes
//! raw pointers and strides, the AVX2 and AVX-512 variants are called only
//! after the CPU was seen to have the features they were compiled for, and
//! the AMX tile instructions only after Linux granted the tile state.
#![allow(unsafe_code)]

use crate::error::EmbedError;
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{Config, HiddenAct};
use std::cell::RefCell;

mod amx;
mod bf16;
mod linear;
mod precision;
pub mod profile;

use kernels::PANEL;
use linear::{LayerNorm, Linear, SKINNY_ROWS, flat, matmul};
pub use precision::Precision;

use profile::{Stage, time};

struct Layer {
    /// Query, key and value in one `hidden × 3·hidden` product.
    qkv: Linear,
    attn_out: Linear,
    ln1: LayerNorm,
    up: Linear,
    down: Linear,
    ln2: LayerNorm,
}

/// The encoder's weights in plain buffers.
pub(crate) struct CpuBert {
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    ln: LayerNorm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    positions: usize,
    vocab: usize,
    eps: f32,
    act: HiddenAct,
    /// The products' arithmetic (AMX also takes attention's products).
    precision: Precision,
}

/// Per-thread working buffers, grown to the longest text seen.
#[derive(Default)]
struct Scratch {
    qkv: Vec<f32>,
    scores: Vec<f32>,
    context: Vec<f32>,
    attn: Vec<f32>,
    up: Vec<f32>,
    /// The activated intermediate rows in bfloat16 (the AMX pass).
    rounded: Vec<u16>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

fn grow(buf: &mut Vec<f32>, n: usize) -> &mut [f32] {
    if buf.len() < n {
        buf.resize(n, 0.0);
    }
    &mut buf[..n]
}

impl CpuBert {
    /// Copies the encoder's weights out of `vb` (the model's root, as candle's
    /// `BertModel::load` takes it).
    pub(crate) fn load(
        vb: &VarBuilder,
        config: &Config,
        precision: Precision,
    ) -> Result<Self, EmbedError> {
        if !precision.available() {
            return Err(EmbedError::Device(format!(
                "the {} CPU pass needs {}, which this CPU lacks",
                precision.name(),
                precision.needs()
            )));
        }
        let err = |e: candle_core::Error| EmbedError::Device(format!("CPU encoder: {e}"));
        // Checkpoints name the encoder at the root or under the model type.
        let prefix = [None, config.model_type.as_deref(), Some("bert")]
            .into_iter()
            .find(|p| {
                let name = match p {
                    Some(p) => format!("{p}.embeddings.word_embeddings.weight"),
                    None => "embeddings.word_embeddings.weight".to_owned(),
                };
                vb.contains_tensor(&name)
            })
            .ok_or_else(|| EmbedError::Device("no embeddings.word_embeddings.weight".to_owned()))?;
        let vb = match prefix {
            Some(p) => vb.pp(p),
            None => vb.clone(),
        };
        let h = config.hidden_size;
        let inter = config.intermediate_size;
        if config.num_attention_heads == 0 || !h.is_multiple_of(config.num_attention_heads) {
            return Err(EmbedError::Device(format!(
                "hidden size {h} is not a multiple of {} heads",
                config.num_attention_heads
            )));
        }
        let emb = vb.pp("embeddings");
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let attn = l.pp("attention");
                let own = attn.pp("self");
                Ok(Layer {
                    qkv: Linear::stacked(
                        &[&own.pp("query"), &own.pp("key"), &own.pp("value")],
                        h,
                        h,
                        precision,
                    )?,
                    attn_out: Linear::load(&attn.pp("output.dense"), h, h, precision)?,
                    ln1: LayerNorm::load(&attn.pp("output.LayerNorm"), h)?,
                    up: Linear::load(&l.pp("intermediate.dense"), h, inter, precision)?,
                    down: Linear::load(&l.pp("output.dense"), inter, h, precision)?,
                    ln2: LayerNorm::load(&l.pp("output.LayerNorm"), h)?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()
            .map_err(err)?;
        Ok(Self {
            word: flat(
                emb.get((config.vocab_size, h), "word_embeddings.weight")
                    .map_err(err)?,
            )
            .map_err(err)?,
            position: flat(
                emb.get(
                    (config.max_position_embeddings, h),
                    "position_embeddings.weight",
                )
                .map_err(err)?,
            )
            .map_err(err)?,
            token_type: flat(
                emb.get((config.type_vocab_size, h), "token_type_embeddings.weight")
                    .map_err(err)?,
            )
            .map_err(err)?,
            ln: LayerNorm::load(&emb.pp("LayerNorm"), h).map_err(err)?,
            layers,
            hidden: h,
            heads: config.num_attention_heads,
            positions: config.max_position_embeddings,
            vocab: config.vocab_size,
            eps: config.layer_norm_eps as f32,
            act: config.hidden_act,
            precision,
        })
    }

    /// The last layer's state of every token of `ids` (`ids.len() × hidden`,
    /// row-major). Every token attends to every other: the text is alone, so
    /// there is no padding to mask.
    pub(crate) fn token_states(&self, ids: &[u32]) -> Result<Vec<f32>, EmbedError> {
        let n = ids.len();
        if n > self.positions {
            return Err(EmbedError::Device(format!(
                "{n} tokens is over the model's {} positions",
                self.positions
            )));
        }
        if let Some(&bad) = ids.iter().find(|&&t| t as usize >= self.vocab) {
            return Err(EmbedError::Tokenizer(format!(
                "token id {bad} is outside the model's vocabulary of {}",
                self.vocab
            )));
        }
        let h = self.hidden;
        let mut x = time(Stage::Embeddings, || {
            let mut x = vec![0.0f32; n * h];
            for (t, (row, &id)) in x.chunks_exact_mut(h).zip(ids).enumerate() {
                let word = &self.word[id as usize * h..][..h];
                let pos = &self.position[t * h..][..h];
                for (((o, w), p), ty) in
                    row.iter_mut().zip(word).zip(pos).zip(&self.token_type[..h])
                {
                    *o = w + p + ty;
                }
            }
            kernels::layer_norm_rows(&mut x, None, &self.ln.gamma, &self.ln.beta, self.eps);
            x
        });
        SCRATCH.with(|s| {
            let s = &mut *s.borrow_mut();
            for layer in &self.layers {
                self.layer(layer, &mut x, n, s);
            }
        });
        Ok(x)
    }

    fn layer(&self, l: &Layer, x: &mut [f32], n: usize, s: &mut Scratch) {
        let h = self.hidden;
        let qkv = grow(&mut s.qkv, n * 3 * h);
        time(Stage::Qkv, || l.qkv.forward(x, n, qkv));
        let scores = grow(&mut s.scores, n * n);
        let context = grow(&mut s.context, n * h);
        self.attention(qkv, n, scores, context);
        let attn = grow(&mut s.attn, n * h);
        time(Stage::AttnOut, || l.attn_out.forward(context, n, attn));
        time(Stage::Norm1, || {
            kernels::layer_norm_rows(attn, Some(x), &l.ln1.gamma, &l.ln1.beta, self.eps)
        });
        // attn now holds the attention block's output; x gets the layer's.
        let up = grow(&mut s.up, n * l.up.out);
        time(Stage::Up, || l.up.forward(attn, n, up));
        match (&l.down.amx, self.act) {
            // On tiles, GELU writes the down product's bfloat16 rows itself.
            (Some(down), HiddenAct::Gelu) => {
                let (rows, width) = down.rounded_shape(n);
                s.rounded.clear();
                s.rounded.resize(rows * width, 0);
                let rounded = &mut s.rounded;
                time(Stage::Gelu, || {
                    amx::gelu_rows(up, n, l.up.out, rounded, width)
                });
                time(Stage::Down, || {
                    l.down.bias(n, x);
                    down.matmul_add_rounded(rounded, n, x);
                });
            }
            _ => {
                time(Stage::Gelu, || kernels::activate(up, self.act));
                time(Stage::Down, || l.down.forward(up, n, x));
            }
        }
        time(Stage::Norm2, || {
            kernels::layer_norm_rows(x, Some(attn), &l.ln2.gamma, &l.ln2.beta, self.eps)
        });
    }

    /// Every head's attention: `context` (n × hidden) from `qkv` (n × 3·hidden).
    fn attention(&self, qkv: &[f32], n: usize, scores: &mut [f32], context: &mut [f32]) {
        let h = self.hidden;
        let d = h / self.heads;
        let scale = 1.0 / (d as f32).sqrt();
        if n <= SKINNY_ROWS {
            time(Stage::Scores, || {
                kernels::attention_few_rows(qkv, n, h, self.heads, scale, scores, context)
            });
            return;
        }
        if self.precision == Precision::Amx && d.is_multiple_of(32) {
            for head in 0..self.heads {
                let at = head * d;
                amx::attention_head(
                    qkv,
                    3 * h,
                    (at, h + at, 2 * h + at),
                    d,
                    n,
                    scale,
                    scores,
                    context,
                    (h, at),
                );
            }
            return;
        }
        for head in 0..self.heads {
            let q = qkv[head * d..].as_ptr();
            let k = qkv[h + head * d..].as_ptr();
            let v = qkv[2 * h + head * d..].as_ptr();
            let row = (3 * h) as isize;
            // SAFETY: q, k and v walk n rows of d columns with row stride 3h
            // inside qkv (n × 3h); scores is n × n; context's n rows of d
            // columns with row stride h start at head·d inside n × h.
            time(Stage::Scores, || unsafe {
                // scores = scale · q · kᵀ (kᵀ: row stride 1, column stride 3h).
                matmul(
                    n,
                    n,
                    d,
                    scores.as_mut_ptr(),
                    n,
                    false,
                    q,
                    row,
                    1,
                    k,
                    1,
                    row,
                    scale,
                );
            });
            time(Stage::Softmax, || kernels::softmax_rows(scores, n));
            time(Stage::Context, || unsafe {
                matmul(
                    n,
                    d,
                    n,
                    context[head * d..].as_mut_ptr(),
                    h,
                    false,
                    scores.as_ptr(),
                    n as isize,
                    1,
                    v,
                    row,
                    1,
                    1.0,
                );
            });
        }
    }
}

mod kernels;

#[cfg(test)]
mod tests {
    use crate::{BertEmbedder, DevicePref, Embedder, ModelSpec, Pass, Precision, SpanText};

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        dot / (norm(a) * norm(b))
    }

    /// The CPU pass and candle's forward agree on the tiny model, for texts
    /// from one token to past the model's limit, alone and pooled over spans:
    /// to 0.9999 in f32 and 0.999 in bfloat16 (where the CPU has it).
    #[test]
    fn the_cpu_pass_agrees_with_candle() {
        let dir = tempfile::tempdir().expect("tempdir");
        crate::fixtures::write_tiny_bert(dir.path()).expect("model");
        let files = ModelSpec::Dir(dir.path().to_owned())
            .locate()
            .expect("files");
        let reference =
            BertEmbedder::load_pass(&files, DevicePref::Cpu, Pass::Candle).expect("reference");
        for (precision, bar) in [
            (Precision::F32, 0.9999),
            (Precision::Bf16, 0.999),
            (Precision::Amx, 0.999),
        ] {
            if precision.available() {
                agree(&files, &reference, precision, bar);
            } else {
                eprintln!("this CPU has no {}; not checked", precision.name());
            }
        }
    }

    /// Ids the model cannot read are errors, not panics: a token outside the
    /// vocabulary, and a text longer than the model's positions.
    #[test]
    fn ids_outside_the_model_are_refused() {
        use candle_core::{DType, Device};
        let dir = tempfile::tempdir().expect("tempdir");
        crate::fixtures::write_tiny_bert(dir.path()).expect("model");
        let files = ModelSpec::Dir(dir.path().to_owned())
            .locate()
            .expect("files");
        let config: candle_transformers::models::bert::Config =
            serde_json::from_slice(&std::fs::read(&files.config).expect("config")).expect("json");
        let vb = var_builder(&files.weights, DType::F32, &Device::Cpu);
        let cpu = super::CpuBert::load(&vb, &config, Precision::F32).expect("load");
        assert!(cpu.token_states(&[2, config.vocab_size as u32, 3]).is_err());
        let long = vec![5u32; config.max_position_embeddings + 1];
        assert!(cpu.token_states(&long).is_err());
        assert!(cpu.token_states(&[2, 5, 3]).is_ok());
    }

    fn var_builder(
        weights: &std::path::Path,
        dtype: candle_core::DType,
        device: &candle_core::Device,
    ) -> candle_nn::VarBuilder<'static> {
        let bytes = std::fs::read(weights).expect("weights");
        candle_nn::VarBuilder::from_buffered_safetensors(bytes, dtype, device).expect("vb")
    }

    fn agree(files: &crate::ModelFiles, reference: &BertEmbedder, precision: Precision, bar: f32) {
        let fast =
            BertEmbedder::load_pass(files, DevicePref::Cpu, Pass::Cpu(precision)).expect("fast");
        let long = "the model fits the data of a lens ".repeat(40);
        let texts = [
            "a",
            "fit the model",
            "def fit(data):\n    return data!",
            long.as_str(),
            "",
        ];
        let got = fast.embed(&texts).expect("embed");
        let want = reference.embed(&texts).expect("embed");
        for ((g, w), t) in got.iter().zip(&want).zip(&texts) {
            let c = cosine(g, w);
            assert!(c >= bar, "{precision:?} {t:?}: cosine {c}");
        }
        let spans = [SpanText {
            text: "the model fits\nthe data",
            spans: vec![vec![0..14], vec![15..23]],
        }];
        let got = fast.embed_spans(&spans).expect("spans");
        let want = reference.embed_spans(&spans).expect("spans");
        assert!(cosine(&got[0].whole, &want[0].whole) >= bar);
        for (g, w) in got[0].parts.iter().zip(&want[0].parts) {
            let (g, w) = (g.as_ref().expect("part"), w.as_ref().expect("part"));
            assert!(cosine(g, w) >= bar);
        }
    }
}
