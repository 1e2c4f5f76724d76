//! How a server is set up, decided once: which credentials it checks,
//! where its index comes from, how it listens, and why it may fail to
//! start. Data only; [`crate::server`] turns it into a running server.

use crate::auth::{AuthError, JwtKeyFile};
use crate::http::HttpOptions;
use cairn_index::pack::{PackError, Rollback};
use cairn_search::SearchError;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Which JWTs are accepted besides tokens.
#[derive(Clone, Debug)]
pub struct JwtSettings {
    /// The verification key.
    pub key: JwtKeyFile,
    /// Required `iss`.
    pub issuer: Option<String>,
    /// Required `aud`.
    pub audience: Option<String>,
    /// Members of this group may set weights.
    pub admin_group: String,
}

/// Who may call.
#[derive(Clone, Debug)]
pub enum Access {
    /// Everyone, without credentials (allowed on loopback addresses only).
    Open,
    /// Bearer tokens from `tokens`, and JWTs when configured.
    Credentials {
        /// The tokens file.
        tokens: PathBuf,
        /// JWTs accepted besides tokens.
        jwt: Option<JwtSettings>,
        /// OAuth access tokens accepted besides tokens.
        oauth: Option<Box<crate::oauth::OAuthSettings>>,
    },
}

/// What `--index` names: an index root, or a pack to unpack into one first.
#[derive(Clone, Debug)]
pub enum IndexSource {
    /// An index root holding CURRENT.
    Root(PathBuf),
    /// A pack, checked and unpacked into `into` before anything is served.
    Pack {
        /// The pack file.
        pack: PathBuf,
        /// The index root it joins.
        into: PathBuf,
        /// Whether it may replace a newer CURRENT.
        rollback: Rollback,
    },
}

impl IndexSource {
    /// A pack when `path` is a file, else an index root.
    pub fn from_path(path: &Path, unpack_into: &Path, rollback: Rollback) -> Self {
        match path.is_file() {
            true => IndexSource::Pack {
                pack: path.to_owned(),
                into: unpack_into.to_owned(),
                rollback,
            },
            false => IndexSource::Root(path.to_owned()),
        }
    }
}

/// Everything `cairn serve` needs to start.
#[derive(Clone)]
pub struct ServeConfig {
    /// The index and the query model.
    pub source: IndexSource,
    /// A model folder instead of the hub cache.
    pub model_dir: Option<PathBuf>,
    /// Who may call.
    pub access: Access,
    /// Listening, limits and workers.
    pub http: HttpOptions,
    /// Index versions (and tried packs) kept after a dropped pack is adopted.
    pub keep: usize,
}

/// Why a server did not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// An open server asked for on an address others can reach.
    #[error(
        "an open server (no credentials) may only listen on a loopback address; {0} is not one"
    )]
    OpenOffLoopback(SocketAddr),
    /// The tokens file or a JWT key could not be read.
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// The OAuth settings name no usable resource or issuer.
    #[error(transparent)]
    OAuth(#[from] crate::oauth::OAuthError),
    /// The pack could not be unpacked.
    #[error("unpacking {}", pack.display())]
    Unpack {
        /// The pack.
        pack: PathBuf,
        /// Why.
        source: PackError,
    },
    /// The index could not be opened.
    #[error("opening the index at {}", index.display())]
    Open {
        /// The index root.
        index: PathBuf,
        /// Why.
        source: SearchError,
    },
    /// Metrics could not be registered, or the listener failed.
    #[error("serving: {0}")]
    Io(String),
}
