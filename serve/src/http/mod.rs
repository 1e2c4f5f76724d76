//! The read-only HTTP API (actix-web) over the search library, for Slack and
//! GPT Actions bots, and the MCP streamable-HTTP transport at `/mcp`.
//!
//! [`app`] is the application factory (`crate::server::app` adds the web
//! pages, which reach this module only as the data of [`Pages`], so the
//! imports point one way); [`serve`] binds it, watches the index for hot
//! swaps and shuts down gracefully. Handlers live in [`api`], the OpenAPI
//! document in [`openapi`]; the middleware here gives every request a trace
//! id, an access log line, metrics, an authenticated caller and
//! problem+json errors.

mod admit;
pub mod api;
pub mod client;
pub mod events;
pub mod gateway;
pub mod openapi;
mod state;
mod trace;

pub use crate::ops::Anonymous;
use admit::authenticate;
pub use admit::host_allowed;
pub use state::{AppState, HttpOptions, Pages};
pub use trace::TraceId;
use trace::trace;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::{Compress, from_fn};
use actix_web::{App, Error, web};
use std::sync::Arc;

pub use crate::limits::{ANONYMOUS_SHARE, MAX_BODY_BYTES};

/// The application: every route, the MCP transport, the `pages` when
/// given, and the middleware.
pub fn app(
    state: web::Data<AppState>,
    pages: Option<Pages>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    let mcp = state.mcp.clone().scope_with_path("/mcp");
    let slack = state.slack.clone();
    let llm = state.llm.is_some();
    let mut app = App::new()
        .app_data(state)
        .app_data(web::PayloadConfig::new(MAX_BODY_BYTES));
    if let Some(p) = pages {
        app = app.app_data(p);
    }
    if let Some(s) = &slack {
        app = app.app_data(web::Data::from(Arc::clone(s)));
    }
    app.configure(api::routes)
        .configure(|cfg| {
            if slack.is_some() {
                crate::slack::routes(cfg);
            }
        })
        .configure(|cfg| {
            if llm {
                gateway::routes(cfg);
            }
        })
        .configure(|cfg| {
            if let Some(p) = pages {
                (p.routes)(cfg);
            }
        })
        .service(mcp)
        .wrap(from_fn(authenticate))
        .wrap(Compress::default())
        .wrap(from_fn(trace))
}

/// Serves until SIGTERM or SIGINT: binds, watches CURRENT (and reloads on
/// SIGHUP), and finishes in-flight requests before exiting.
pub async fn serve(state: web::Data<AppState>, pages: Option<Pages>) -> std::io::Result<()> {
    let opts = state.opts.clone();
    let (nudge, nudged) = crossbeam_channel::bounded::<()>(1);
    {
        // Credentials on a thread of their own: a revocation takes effect
        // within one interval even while a pack takes minutes to adopt.
        let state = state.clone();
        std::thread::Builder::new()
            .name("cairn-tokens".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(state.opts.watch_interval);
                    state.reload_tokens();
                }
            })?;
    }
    {
        let state = state.clone();
        std::thread::Builder::new()
            .name("cairn-watch".into())
            .spawn(move || {
                loop {
                    match nudged.recv_timeout(opts.watch_interval) {
                        Ok(()) => {
                            state.reload_tokens();
                            state.check_index(true);
                        }
                        Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                            state.check_index(false);
                        }
                        Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
                    }
                }
            })?;
    }
    #[cfg(unix)]
    actix_web::rt::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut hup) = signal(SignalKind::hangup()) else {
            return;
        };
        while hup.recv().await.is_some() {
            tracing::info!("SIGHUP: checking the index now");
            let _ = nudge.try_send(());
        }
    });
    let factory_state = state.clone();
    // Held connections are descriptors: as many as the limit allows, and
    // never so many that the server cannot open its own files.
    let files = crate::limits::raise_open_files();
    let server = actix_web::HttpServer::new(move || app(factory_state.clone(), pages))
        .workers(state.opts.http_workers)
        .max_connections(crate::limits::connections_per_worker(
            files,
            state.opts.http_workers,
        ))
        .shutdown_timeout(30)
        .bind(state.opts.bind)?;
    for addr in server.addrs() {
        tracing::info!(
            addr = %addr,
            index_version = %state.live.current().snapshot().version,
            "serving"
        );
    }
    server.run().await
}
