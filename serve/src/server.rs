//! Starting a server: the policy that turns a [`ServeConfig`] into a running
//! one (the loopback rule for an open server, a pack unpacked before
//! anything is served), and the application with its web pages. The top of
//! serve's imports: it depends on [`crate::config`], [`crate::http`],
//! [`crate::ui`], [`crate::auth`] and [`crate::live`]; nothing depends on it.

use crate::auth::{Authenticator, JwtConfig, TokenStore};
use crate::config::{Access, IndexSource, ServeConfig, ServeError};
use crate::http::{self, AppState, HttpOptions, Pages};
use crate::live::LiveIndex;
use crate::oauth::ResourceServer;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, Error, web};
use cairn_index::IndexRoot;
use cairn_search::EngineOptions;
use std::path::PathBuf;
use std::sync::Arc;

/// The pages a server with these options serves (none with `--no-ui`).
fn pages(opts: &HttpOptions) -> Option<Pages> {
    opts.ui.then_some(crate::ui::PAGES)
}

/// The application: the API, MCP and, unless turned off, the web pages
/// (the server and the in-process tests use this one).
pub fn app(
    state: web::Data<AppState>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    let pages = pages(&state.opts);
    http::app(state, pages)
}

/// The authenticator this configuration asks for.
fn authenticator(config: &ServeConfig) -> Result<Authenticator, ServeError> {
    match &config.access {
        Access::Open if !config.http.bind.ip().is_loopback() => {
            Err(ServeError::OpenOffLoopback(config.http.bind))
        }
        Access::Open => Ok(Authenticator::new(None, None, true)?),
        Access::Credentials { tokens, jwt, oauth } => {
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
            if jwt.is_none() && oauth.is_none() && TokenStore::new(tokens).list()?.is_empty() {
                tracing::warn!(tokens = %tokens.display(), "no tokens yet: every API call will get 401; make one with `cairn token add NAME`");
            }
            let auth = Authenticator::new(Some(tokens.clone()), jwt, false)?;
            match oauth {
                Some(settings) => {
                    let rs = ResourceServer::new((**settings).clone())?;
                    // Keys are fetched before the first request; an issuer that is down is retried on use.
                    rs.refresh_all();
                    Ok(auth.with_oauth(rs))
                }
                None => Ok(auth),
            }
        }
    }
}

/// The index root to serve, after unpacking a pack into it (or adopting
/// the packs dropped into it, as a replica's first `cairn pull` leaves one).
fn index_root(config: &ServeConfig) -> Result<PathBuf, ServeError> {
    match &config.source {
        IndexSource::Root(root) => {
            let dropped =
                cairn_index::pack::adopt_dropped_packs(&IndexRoot::new(root), config.keep);
            for (pack, outcome) in dropped {
                tracing::info!(pack = %pack.display(), outcome = ?outcome, "a dropped pack, tried at startup");
            }
            Ok(root.clone())
        }
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
pub fn run(config: ServeConfig) -> Result<(), ServeError> {
    let auth = authenticator(&config)?;
    let index = index_root(&config)?;
    let open = EngineOptions {
        index: index.clone(),
        model_dir: config.model_dir.clone(),
        device: cairn_embed::DevicePref::Cpu,
    };
    let live = LiveIndex::open(open)
        .map_err(|source| ServeError::Open { index, source })?
        .with_keep(config.keep);
    let state = AppState::new(Arc::new(live), Arc::new(auth), config.http.clone())
        .map_err(|e| ServeError::Io(e.to_string()))?;
    actix_web::rt::System::new()
        .block_on(http::serve(state, pages(&config.http)))
        .map_err(|e| ServeError::Io(e.to_string()))
}
