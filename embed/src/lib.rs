//! Sentence embeddings for cairn.
//!
//! What lives here: the [`Embedder`] trait the builder and the searchers call,
//! [`BertEmbedder`] (a BERT-family sentence model with mean pooling and L2
//! normalisation: candle loads it and runs it on a GPU with the `cuda`
//! feature; on the CPU it runs cairn's own fused forward pass, `cpu/`), and
//! [`ModelSpec`], which finds a model's files in a folder or in the Hugging
//! Face hub cache; `gpu` opens and describes an NVIDIA GPU; `adapt`
//! fine-tunes such a model on text pairs. It knows nothing of indexes, git or
//! HTTP.

pub mod adapt;
mod bert;
mod cpu;
mod error;
#[cfg(any(test, feature = "test-fixtures"))]
pub mod fixtures;
mod gpu;
mod model_files;

pub use bert::{BertEmbedder, DevicePref, Pass};
pub use cpu::{Precision, profile};
pub use error::EmbedError;
pub use gpu::{CUDA_BUILT, GpuInfo, gpu_info};
pub use model_files::{DEFAULT_MODEL, ModelFiles, ModelSpec};

use serde::{Deserialize, Serialize};

/// What identifies a model: an index records it, and queries must match it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelId {
    /// Hub id or folder name.
    pub id: String,
    /// Hub revision, or `local`.
    pub revision: String,
    /// Output dimension.
    pub dim: usize,
    /// Texts are truncated to this many tokens (special tokens included).
    pub max_tokens: usize,
    /// sha256 of the weights file.
    pub weights_sha256: String,
    /// Which forward pass makes the vectors (`cpu` for cairn's CPU pass,
    /// `candle-cpu` or `candle-cuda`): the passes agree to a cosine of about
    /// 0.999999, not bit for bit, so caches of vectors keep them apart.
    #[serde(default)]
    pub forward: String,
}

/// Turns texts into L2-normalised vectors.
pub trait Embedder: Send + Sync {
    /// Which model this is.
    fn model(&self) -> &ModelId;

    /// Tokens `text` takes, special tokens included, before truncation.
    fn count_tokens(&self, text: &str) -> Result<usize, EmbedError>;

    /// [`Embedder::count_tokens`] for many texts at once.
    fn count_tokens_batch(&self, texts: &[&str]) -> Result<Vec<usize>, EmbedError> {
        texts.iter().map(|t| self.count_tokens(t)).collect()
    }

    /// One unit vector per text, in order. Texts longer than
    /// [`ModelId::max_tokens`] are truncated.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// For each text, in order, its vector and one vector per span, all from
    /// one forward pass ("late chunking"): a span's vector is the unit-length
    /// mean of the token states whose bytes fall in its ranges, so it carries
    /// the whole text's context. A span none of whose tokens survived
    /// truncation gets `None`.
    fn embed_spans(&self, items: &[SpanText<'_>]) -> Result<Vec<SpanVectors>, EmbedError>;
}

/// A text and the spans of it to pool on their own.
#[derive(Clone, Debug)]
pub struct SpanText<'a> {
    /// The text, as [`Embedder::embed`] would take it.
    pub text: &'a str,
    /// Each span: the byte ranges of `text` whose tokens it pools.
    pub spans: Vec<Vec<std::ops::Range<usize>>>,
}

/// What [`Embedder::embed_spans`] gives for one text.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanVectors {
    /// The whole text's vector (what [`Embedder::embed`] gives).
    pub whole: Vec<f32>,
    /// One per span, in order.
    pub parts: Vec<Option<Vec<f32>>>,
}
