//! Why a model could not be found, loaded or run. A leaf: every part of
//! the crate returns it, and this file imports none of them.

/// Errors loading or running a model.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model's files are not where they were looked for.
    #[error(
        "model {id} not found: {detail}. Run scripts/fetch-model.sh, or name the model's folder"
    )]
    NotFound {
        /// Model id asked for.
        id: String,
        /// Where it was looked for.
        detail: String,
    },
    /// A model file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// config.json or the tokenizer is malformed.
    #[error("{path}: {message}")]
    BadModel {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Tokenization failed.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// The tensor library failed.
    #[error("candle: {0}")]
    Candle(#[from] candle_core::Error),
    /// A GPU was asked for but this build or machine has none.
    #[error("{0}")]
    Device(String),
    /// `CAIRN_CPU_PRECISION` names no precision, or one this CPU lacks.
    #[error("{0}")]
    Precision(String),
}
