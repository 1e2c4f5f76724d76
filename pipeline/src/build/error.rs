//! Why a build failed (nothing was published), and what each failure's
//! exit code is. A leaf: every stage returns it, none is imported back.

use crate::config::ConfigError;
use crate::part::PartError;
use crate::sync::SyncError;
use cairn_embed::EmbedError;
use cairn_index::{LayoutError, WriteError};
use std::path::PathBuf;

/// Why a build failed. Nothing was published.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A configuration file is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The model could not be loaded or run.
    #[error(transparent)]
    Model(#[from] EmbedError),
    /// A repository could not be synced.
    #[error(transparent)]
    Sync(#[from] SyncError),
    /// A repository's tree could not be read.
    #[error("{repo}: read tree: {source}")]
    Tree {
        /// Repository name.
        repo: String,
        /// git's message.
        source: git2::Error,
    },
    /// The output could not be written.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// The version's files could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Another build holds the output folder.
    #[error("{0}: another build is writing this index (build.lock is held)")]
    Locked(PathBuf),
    /// A file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Every repository failed.
    #[error("every repository failed; nothing to publish")]
    NothingBuilt,
    /// A part of a sharded build is unreadable or does not fit.
    #[error(transparent)]
    Part(#[from] PartError),
    /// An article's PDF could not be fetched.
    #[error(transparent)]
    Article(#[from] crate::articles::FetchError),
}

impl BuildError {
    /// The process exit code: 2 for bad configuration, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            BuildError::Config(_) => 2,
            _ => 1,
        }
    }
}
