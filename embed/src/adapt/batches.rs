//! Forming training batches: the tokenizers that cut each side of a pair,
//! padded id and mask tensors, a seeded order of the pairs and the
//! learning-rate schedule. Kept apart from the model so the training loop
//! reads as steps.

use crate::error::EmbedError;
use crate::model_files::ModelFiles;
use crate::model_files::bad_model;
use candle_core::{Device, Tensor};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// A batch of texts as `ids` and `mask` tensors, padded to its longest.
pub(super) fn encode(tok: &Tokenizer, texts: &[&str]) -> Result<(Tensor, Tensor), EmbedError> {
    let enc = tok
        .encode_batch(texts.to_vec(), true)
        .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
    let len = enc.iter().map(|e| e.len()).max().unwrap_or(1).max(1);
    let mut ids = Vec::with_capacity(texts.len() * len);
    let mut mask = Vec::with_capacity(texts.len() * len);
    for e in &enc {
        ids.extend(e.get_ids().iter().copied());
        mask.extend(e.get_attention_mask().iter().copied());
        ids.extend(std::iter::repeat_n(0, len - e.len()));
        mask.extend(std::iter::repeat_n(0, len - e.len()));
    }
    let shape = (texts.len(), len);
    Ok((
        Tensor::from_vec(ids, shape, &Device::Cpu)?,
        Tensor::from_vec(mask, shape, &Device::Cpu)?,
    ))
}

/// The model's tokenizer, padding each batch to its longest text and
/// cutting texts to `max` tokens.
pub(super) fn tokenizer(files: &ModelFiles, max: usize) -> Result<Tokenizer, EmbedError> {
    let mut t =
        Tokenizer::from_file(&files.tokenizer).map_err(|e| bad_model(&files.tokenizer, e))?;
    t.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        ..PaddingParams::default()
    }));
    t.with_truncation(Some(TruncationParams {
        max_length: max,
        ..TruncationParams::default()
    }))
    .map_err(|e| bad_model(&files.tokenizer, e))?;
    Ok(t)
}

/// A seeded permutation (splitmix64 and Fisher–Yates), so the order and
/// hence the weights depend only on the seed.
pub(super) fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// The learning rate at `step` of `total`: linear warm-up, then linear decay.
pub(super) fn rate(peak: f64, step: usize, total: usize) -> f64 {
    let warm = (total / 10).max(1);
    if step < warm {
        peak * (step + 1) as f64 / warm as f64
    } else {
        peak * (total - step) as f64 / (total - warm).max(1) as f64
    }
}
