//! What a configuration file can get wrong, located at its `file:line:column`,
//! and the helpers every reader of a file shares: reading it, and turning a
//! YAML error or a value's span into that location. Depends on nothing
//! else in `config`.

use serde_saphyr::Spanned;
use std::path::{Path, PathBuf};

/// A configuration error, located in its file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Bad YAML or a bad value, at a known place.
    #[error("{path}:{line}:{column}: {message}")]
    At {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// What is wrong.
        message: String,
    },
}

pub(super) fn at<T>(path: &Path, s: &Spanned<T>, message: impl Into<String>) -> ConfigError {
    ConfigError::At {
        path: path.to_owned(),
        line: s.referenced.line(),
        column: s.referenced.column(),
        message: message.into(),
    }
}

pub(super) fn yaml_error(path: &Path, e: &serde_saphyr::Error) -> ConfigError {
    let (line, column) = e.location().map_or((1, 1), |l| (l.line(), l.column()));
    // The rendered error repeats the location and a snippet; keep its message line.
    let rendered = e.to_string();
    let first = rendered
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid YAML")
        .trim();
    let first = first.strip_prefix("error:").unwrap_or(first).trim_start();
    // Drop the "line N column M:" prefix: the location leads our message already.
    let message = match first.strip_prefix("line ").and_then(|r| r.split_once(": ")) {
        Some((_, rest)) => rest.to_owned(),
        None => first.to_owned(),
    };
    ConfigError::At {
        path: path.to_owned(),
        line,
        column,
        message,
    }
}

pub(super) fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })
}
