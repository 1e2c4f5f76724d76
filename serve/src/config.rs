//! How a server is set up, decided once: the defaults every front end refers
//! to (the CLI's flags take theirs from here), which credentials it checks,
//! where its index comes from, and [`ServeConfig::run`], the policy that
//! turns a configuration into a running server (the loopback rule for an
//! open server, a pack unpacked before anything is served).

use crate::auth::{AuthError, Authenticator, JwtConfig, TokenStore};
use crate::http::{AppState, HttpOptions};
use crate::live::LiveIndex;
use cairn_index::IndexRoot;
use cairn_index::pack::{PackError, Rollback};
use cairn_search::{EngineOptions, SearchError};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the server listens unless told otherwise.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
/// The tokens file unless told otherwise.
pub const DEFAULT_TOKENS: &str = ".cairn/tokens.json";
/// Milliseconds one request may take.
pub const DEFAULT_DEADLINE_MS: u64 = 10_000;
/// CPU jobs that may wait for a thread before requests are refused.
pub const DEFAULT_QUEUE: usize = 64;
/// Milliseconds between checks of CURRENT, dropped packs and the tokens file.
pub const DEFAULT_WATCH_MS: u64 = 2_000;
/// Members of this JWT group may set ranking weights.
pub const DEFAULT_JWT_ADMIN_GROUP: &str = "cairn-admin";
/// Page requests a minute all anonymous visitors share (each page may
/// search or explain: about 10 ms of a core each, so this keeps anonymous
/// use to about a tenth of one core).
pub const DEFAULT_ANONYMOUS_PER_MINUTE: u32 = 600;
/// The largest request body on any route, MCP included.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The machine's cores: the default number of CPU and HTTP worker threads.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// The file holding a JWT verification key, and so the algorithm.
#[derive(Clone, Debug)]
pub enum JwtKeyFile {
    /// A shared secret of at least 32 bytes (HS256).
    Hs256Secret(PathBuf),
    /// An RSA public key in PEM (RS256).
    Rs256PublicKey(PathBuf),
}

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

impl ServeConfig {
    /// The authenticator this configuration asks for.
    fn authenticator(&self) -> Result<Authenticator, ServeError> {
        match &self.access {
            Access::Open if !self.http.bind.ip().is_loopback() => {
                Err(ServeError::OpenOffLoopback(self.http.bind))
            }
            Access::Open => Ok(Authenticator::new(None, None, true)?),
            Access::Credentials { tokens, jwt } => {
                let jwt = jwt
                    .as_ref()
                    .map(|j| {
                        JwtConfig::from_file(
                            &j.key,
                            j.issuer.clone(),
                            j.audience.clone(),
                            j.admin_group.clone(),
                        )
                    })
                    .transpose()?;
                if jwt.is_none() && TokenStore::new(tokens).list()?.is_empty() {
                    tracing::warn!(tokens = %tokens.display(), "no tokens yet: every API call will get 401; make one with `cairn token add NAME`");
                }
                Ok(Authenticator::new(Some(tokens.clone()), jwt, false)?)
            }
        }
    }

    /// The index root to serve, after unpacking a pack into it.
    fn index_root(&self) -> Result<PathBuf, ServeError> {
        match &self.source {
            IndexSource::Root(root) => Ok(root.clone()),
            IndexSource::Pack {
                pack,
                into,
                rollback,
            } => {
                let u = cairn_index::pack::unpack(pack, &IndexRoot::new(into), *rollback).map_err(
                    |source| ServeError::Unpack {
                        pack: pack.clone(),
                        source,
                    },
                )?;
                if u.current {
                    tracing::info!(pack = %pack.display(), root = %into.display(), version = %u.version, "unpacked; now CURRENT");
                } else {
                    tracing::warn!(pack = %pack.display(), version = %u.version, built_at = %u.built_at, current_built_at = %u.previous_built_at, "the pack is older than CURRENT's version: serving CURRENT (allow a rollback to serve the pack)");
                }
                Ok(into.clone())
            }
        }
    }

    /// Starts the server and serves until SIGTERM or SIGINT.
    pub fn run(self) -> Result<(), ServeError> {
        let auth = self.authenticator()?;
        let index = self.index_root()?;
        let open = EngineOptions {
            index: index.clone(),
            model_dir: self.model_dir.clone(),
            device: cairn_embed::DevicePref::Cpu,
        };
        let live = LiveIndex::open(open)
            .map_err(|source| ServeError::Open { index, source })?
            .with_keep(self.keep);
        let state = AppState::new(Arc::new(live), Arc::new(auth), self.http)
            .map_err(|e| ServeError::Io(e.to_string()))?;
        actix_web::rt::System::new()
            .block_on(crate::http::serve(state))
            .map_err(|e| ServeError::Io(e.to_string()))
    }
}
