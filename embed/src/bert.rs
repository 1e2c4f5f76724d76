//! A BERT-family sentence model on candle: mean pooling, L2 normalisation.

use crate::cpu::{CpuBert, Precision};
use crate::error::EmbedError;
use crate::model_files::ModelFiles;
use crate::model_files::{bad_model, read, weights_sha256};
use crate::{Embedder, ModelId, SpanText, SpanVectors};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use rayon::prelude::*;
use std::ops::Range;
use tokenizers::{Encoding, PaddingParams, Tokenizer, TruncationParams};

/// Where the model runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevicePref {
    /// All CPU cores.
    Cpu,
    /// The CUDA GPU with this ordinal (needs the `cuda` feature).
    Cuda(usize),
}

/// How candle's forward is fed: padded tokens and rows per forward pass.
#[derive(Clone, Copy)]
struct Batching {
    tokens: usize,
    rows: usize,
}

/// On the CPU, measured on 2 cores (embed_bench): 1,024 padded tokens give
/// 2,900 tokens/s, 4,096 give 2,400 and 16,384 give 1,700; small batches keep
/// each op's tensors in cache and give the batch-level parallelism below more
/// batches to share out.
const CPU_BATCHING: Batching = Batching {
    tokens: 1024,
    rows: 128,
};
/// On a GPU, large batches fill the device: a build hands the embedder 256
/// texts a call, which then run as one or two passes.
const GPU_BATCHING: Batching = Batching {
    tokens: 32 * 1024,
    rows: 256,
};

/// Which forward pass runs the encoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// On the CPU, cairn's own pass at the best precision the CPU has
    /// ([`Precision::best`]); on a GPU, candle's.
    Best,
    /// cairn's own CPU pass at this precision.
    Cpu(Precision),
    /// candle's forward on the device: the reference the CPU pass is checked
    /// and measured against.
    Candle,
}

/// A sentence-transformers style BERT embedder.
pub struct BertEmbedder {
    model: BertModel,
    /// On the CPU, cairn's own forward pass (`cpu/`); candle's otherwise.
    cpu: Option<CpuBert>,
    /// Truncates to the model's limit; used for embedding.
    tokenizer: Tokenizer,
    /// Never truncates; used for counting.
    counter: Tokenizer,
    device: Device,
    id: ModelId,
}

impl BertEmbedder {
    /// Loads the model's files onto `device` with the fastest pass it has
    /// ([`Pass::Best`]).
    pub fn load(files: &ModelFiles, device: DevicePref) -> Result<Self, EmbedError> {
        Self::load_pass(files, device, Pass::Best)
    }

    /// Loads the model's files onto `device` to run on `pass`.
    pub fn load_pass(
        files: &ModelFiles,
        device: DevicePref,
        pass: Pass,
    ) -> Result<Self, EmbedError> {
        let device = match device {
            DevicePref::Cpu => Device::Cpu,
            DevicePref::Cuda(i) => crate::gpu::open(i)?,
        };
        let config = files.bert_config()?;
        let max_tokens = max_tokens(files, &config)?;

        let weights = read(&files.weights)?;
        let weights_sha256 = weights_sha256(&weights);
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| bad_model(&files.weights, e))?;
        // A GPU always runs candle's forward.
        let precision = match (pass, device.is_cpu()) {
            (_, false) | (Pass::Candle, _) => None,
            (Pass::Best, true) => Some(Precision::best()?),
            (Pass::Cpu(p), true) => Some(p),
        };
        let cpu = match precision {
            Some(p) => Some(CpuBert::load(&vb, &config, p)?),
            None => None,
        };
        let model = BertModel::load(vb, &config).map_err(|e| bad_model(&files.weights, e))?;

        let mut counter =
            Tokenizer::from_file(&files.tokenizer).map_err(|e| bad_model(&files.tokenizer, e))?;
        counter.with_padding(None);
        counter
            .with_truncation(None)
            .map_err(|e| bad_model(&files.tokenizer, e))?;
        let mut tokenizer = counter.clone();
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| bad_model(&files.tokenizer, e))?;
        let _: Option<&PaddingParams> = tokenizer.get_padding();
        let forward = match (precision, device.is_cpu()) {
            (Some(p), _) => format!("cpu-{}", p.name()),
            (None, true) => "candle-cpu".to_owned(),
            (None, false) => "candle-cuda".to_owned(),
        };
        Ok(Self {
            model,
            cpu,
            tokenizer,
            counter,
            device,
            id: ModelId {
                id: files.id.clone(),
                revision: files.revision.clone(),
                dim: config.hidden_size,
                max_tokens,
                weights_sha256,
                forward,
            },
        })
    }

    /// Runs one padded batch: each row's token states (`len × dim`, padding
    /// included) and the attention mask.
    fn hidden(&self, rows: &[&[u32]]) -> Result<(Tensor, Tensor), EmbedError> {
        let len = rows.iter().map(|r| r.len()).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(rows.len() * len);
        let mut mask = Vec::with_capacity(rows.len() * len);
        for r in rows {
            ids.extend_from_slice(r);
            ids.extend(std::iter::repeat_n(0u32, len - r.len()));
            mask.extend(std::iter::repeat_n(1u32, r.len()));
            mask.extend(std::iter::repeat_n(0u32, len - r.len()));
        }
        let shape = (rows.len(), len);
        let ids = Tensor::from_vec(ids, shape, &self.device)?;
        let mask = Tensor::from_vec(mask, shape, &self.device)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        Ok((hidden, mask))
    }

    /// Each row's token states, its real tokens only (`len × dim`, row-major).
    fn states(&self, rows: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if let Some(cpu) = &self.cpu {
            return rows.iter().map(|r| cpu.token_states(r)).collect();
        }
        let (hidden, _) = self.hidden(rows)?;
        Ok(hidden
            .to_vec3::<f32>()?
            .into_iter()
            .zip(rows)
            .map(|(states, r)| states[..r.len()].concat())
            .collect())
    }

    /// Runs one batch; each row's unit-length mean over its tokens, in the order given.
    fn forward(&self, rows: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let dim = self.id.dim;
        Ok(self
            .states(rows)?
            .iter()
            .map(|s| unit_mean(s.chunks_exact(dim)))
            .collect())
    }

    /// One batch pooled per row over the whole text and over each of its
    /// spans' tokens (a token belongs to a span when its bytes overlap one of
    /// the span's ranges).
    fn forward_spans(
        &self,
        rows: &[&Encoding],
        spans: &[&[Vec<Range<usize>>]],
    ) -> Result<Vec<SpanVectors>, EmbedError> {
        let ids: Vec<&[u32]> = rows.iter().map(|e| e.get_ids()).collect();
        let dim = self.id.dim;
        let states = self.states(&ids)?;
        let mut out = Vec::with_capacity(rows.len());
        for ((enc, states), spans) in rows.iter().zip(&states).zip(spans) {
            let whole = unit_mean(states.chunks_exact(dim));
            let offsets = enc.get_offsets();
            let parts = spans
                .iter()
                .map(|ranges| {
                    let picked: Vec<&[f32]> = states
                        .chunks_exact(dim)
                        .zip(offsets)
                        .filter(|(_, (a, b))| {
                            a < b && ranges.iter().any(|r| *a < r.end && r.start < *b)
                        })
                        .map(|(h, _)| h)
                        .collect();
                    (!picked.is_empty()).then(|| unit_mean(picked.into_iter()))
                })
                .collect();
            out.push(SpanVectors { whole, parts });
        }
        Ok(out)
    }

    /// The batches `encodings` run in. The CPU pass runs each text alone
    /// (no padding at all), longest first so the last to finish are short.
    /// Candle's runs padded batches sorted by length (so padding, and so
    /// wasted work, stays small), each within its device's [`Batching`].
    fn batches(&self, encodings: &[Encoding]) -> Vec<Vec<usize>> {
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        if self.cpu.is_some() {
            order.sort_by_key(|&i| std::cmp::Reverse(encodings[i].get_ids().len()));
            return order.into_iter().map(|i| vec![i]).collect();
        }
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        let limit = if self.device.is_cpu() {
            CPU_BATCHING
        } else {
            GPU_BATCHING
        };
        let mut batches = Vec::new();
        let mut start = 0;
        while start < order.len() {
            let mut end = start;
            while end < order.len() && end - start < limit.rows {
                let longest = encodings[order[end]].get_ids().len();
                if end > start && (end - start + 1) * longest > limit.tokens {
                    break;
                }
                end += 1;
            }
            batches.push(order[start..end].to_vec());
            start = end;
        }
        batches
    }

    /// Runs `run` on every batch of `encodings` and returns its results in
    /// the texts' order. On the CPU batches run side by side: candle
    /// parallelises its matrix products but not its element-wise kernels
    /// (softmax, GELU, layer norm), which would otherwise leave cores idle. A
    /// GPU takes them one after another: one batch fills it, and batches side
    /// by side would only hold more of its memory at once.
    fn in_batches<T: Send>(
        &self,
        encodings: &[Encoding],
        run: impl Fn(&[usize]) -> Result<Vec<T>, EmbedError> + Sync,
    ) -> Result<Vec<T>, EmbedError> {
        let batches = self.batches(encodings);
        let results: Vec<Result<Vec<T>, EmbedError>> = if self.device.is_cpu() {
            batches.par_iter().map(|b| run(b)).collect()
        } else {
            batches.iter().map(|b| run(b)).collect()
        };
        let mut out: Vec<Option<T>> = (0..encodings.len()).map(|_| None).collect();
        for (batch, values) in batches.iter().zip(results) {
            for (&i, v) in batch.iter().zip(values?) {
                out[i] = Some(v);
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<Encoding>, EmbedError> {
        self.tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))
    }
}

/// The unit-length mean of `states`.
fn unit_mean<'a>(states: impl Iterator<Item = &'a [f32]>) -> Vec<f32> {
    let mut sum: Vec<f32> = Vec::new();
    let mut n = 0usize;
    for s in states {
        if sum.is_empty() {
            sum = vec![0.0; s.len()];
        }
        sum.iter_mut().zip(s).for_each(|(a, b)| *a += b);
        n += 1;
    }
    let n = n.max(1) as f32;
    sum.iter_mut().for_each(|x| *x /= n);
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    sum.iter_mut().for_each(|x| *x /= norm);
    sum
}

/// sentence-transformers' `max_seq_length` when given, else the position limit (at most 512).
fn max_tokens(files: &ModelFiles, config: &Config) -> Result<usize, EmbedError> {
    let from_sentence = match &files.sentence_config {
        Some(p) => {
            let bytes = read(p)?;
            let v: serde_json::Value =
                serde_json::from_slice(&bytes).map_err(|e| bad_model(p, e))?;
            v.get("max_seq_length").and_then(serde_json::Value::as_u64)
        }
        None => None,
    };
    let limit = config.max_position_embeddings.min(512);
    Ok(from_sentence.map_or(limit, |n| (n as usize).min(limit)))
}

impl Embedder for BertEmbedder {
    fn model(&self) -> &ModelId {
        &self.id
    }

    fn count_tokens(&self, text: &str) -> Result<usize, EmbedError> {
        let enc = self
            .counter
            .encode(text, true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        Ok(enc.len())
    }

    fn count_tokens_batch(&self, texts: &[&str]) -> Result<Vec<usize>, EmbedError> {
        let encs = self
            .counter
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        Ok(encs.iter().map(tokenizers::Encoding::len).collect())
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self.encode(texts)?;
        self.in_batches(&encodings, |batch| {
            let rows: Vec<&[u32]> = batch.iter().map(|&i| encodings[i].get_ids()).collect();
            self.forward(&rows)
        })
    }

    fn embed_spans(&self, items: &[SpanText<'_>]) -> Result<Vec<SpanVectors>, EmbedError> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let texts: Vec<&str> = items.iter().map(|t| t.text).collect();
        let encodings = self.encode(&texts)?;
        self.in_batches(&encodings, |batch| {
            let rows: Vec<&Encoding> = batch.iter().map(|&i| &encodings[i]).collect();
            let spans: Vec<&[Vec<Range<usize>>]> =
                batch.iter().map(|&i| items[i].spans.as_slice()).collect();
            self.forward_spans(&rows, &spans)
        })
    }
}
