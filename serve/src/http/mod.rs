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

pub mod api;
pub mod client;
pub mod openapi;

use crate::auth::{Authenticator, Caller, Verdict};
use crate::live::{LiveIndex, SwapOutcome};
use crate::mcp::McpOptions;
use crate::metrics::Metrics;
use crate::pool::CpuPool;
use crate::problem::{ApiError, PROBLEM_JSON};
use crate::ratelimit::RateLimiter;
use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::{Compress, Next, from_fn};
use actix_web::{App, Error, HttpMessage, HttpResponse, web};
use cairn_search::Code;
use futures_util::FutureExt;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::limits::MAX_BODY_BYTES;

/// The web pages, as this module needs to know them: their routes, which
/// paths are pages (answered to anonymous visitors, who may carry a
/// session cookie), and how a browser is shown an error.
#[derive(Clone, Copy, Debug)]
pub struct Pages {
    /// Registers the page routes.
    pub routes: fn(&mut web::ServiceConfig),
    /// Whether a path is a page.
    pub is_page: fn(&str) -> bool,
    /// Whether a path is a static asset (not counted against a visitor's budget).
    pub is_asset: fn(&str) -> bool,
    /// The signed-in session a request's cookie names.
    pub session_cookie: fn(&actix_web::HttpRequest) -> Option<String>,
    /// Whether a request is a browser's (its errors get a page).
    pub wants_html: fn(&actix_web::HttpRequest) -> bool,
    /// An error as a page.
    pub problem_page: fn(&ApiError, &str) -> HttpResponse,
}

pub use crate::limits::ANONYMOUS_SHARE;

/// Longest request path written to the access log.
const MAX_LOGGED_CHARS: usize = 512;

/// The server's own routes anyone may call without credentials (besides the
/// public operations). `/metrics` is not one: its cache and error counters
/// say what others asked and when, so it wants a token like the API.
const OPEN_ROUTES: [&str; 3] = [
    "/openapi.json",
    crate::oauth::METADATA_PATH,
    crate::oauth::MCP_METADATA_PATH,
];

/// Whether `path` answers without credentials.
fn is_public(path: &str) -> bool {
    OPEN_ROUTES.contains(&path) || crate::ops::public_paths().any(|p| p == path)
}

/// How the server runs.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Where to listen.
    pub bind: SocketAddr,
    /// Threads for CPU work (embedding, ranking).
    pub cpu_workers: usize,
    /// Jobs that may wait for a CPU thread before requests get 503.
    pub queue: usize,
    /// How long one request may take.
    pub deadline: Duration,
    /// Requests per minute per caller (None: unlimited); an anonymous
    /// visitor is a caller by address ([`client::client_ip`]).
    pub rate_limit: Option<u32>,
    /// Requests per minute all anonymous visitors share for the pages,
    /// which search and explain for them (None: unlimited).
    pub anonymous_rate_limit: Option<u32>,
    /// Milliseconds of the CPU pool each token holder's calls may take a
    /// minute (None: unlimited).
    pub cpu_budget_ms: Option<u32>,
    /// Milliseconds of the CPU pool all anonymous callers' calls may take a
    /// minute (None: unlimited); each visitor a [`ANONYMOUS_SHARE`] of it.
    pub anonymous_cpu_budget_ms: Option<u32>,
    /// Proxies whose `Forwarded` / `X-Forwarded-For` say who the visitor is.
    pub trusted_proxies: Vec<client::Cidr>,
    /// Browser origins allowed to call (any other `Origin` gets 403).
    pub allowed_origins: Vec<String>,
    /// Host names every route answers to (DNS-rebinding protection); an IP
    /// address in `Host` is always accepted, see [`host_allowed`].
    pub allowed_hosts: Vec<String>,
    /// The public base URL written into the OpenAPI document's `servers`.
    pub public_url: Option<String>,
    /// How often CURRENT and the tokens file are checked for changes.
    pub watch_interval: Duration,
    /// actix worker threads (async I/O).
    pub http_workers: usize,
    /// Serve the web pages ([`crate::ui`]).
    pub ui: bool,
    /// Answer the API and MCP without credentials, as an anonymous caller
    /// (documents without groups, the anonymous budgets).
    pub public_read: bool,
}

impl HttpOptions {
    /// Defaults for `bind`: CPU threads = cores, and the defaults in [`crate::limits`].
    pub fn new(bind: SocketAddr) -> Self {
        use crate::limits::{
            DEFAULT_ANONYMOUS_PER_MINUTE, DEFAULT_DEADLINE_MS, DEFAULT_QUEUE, DEFAULT_WATCH_MS,
            default_workers,
        };
        let origins = if bind.ip().is_loopback() {
            vec![
                format!("http://localhost:{}", bind.port()),
                format!("http://127.0.0.1:{}", bind.port()),
            ]
        } else {
            Vec::new()
        };
        Self {
            bind,
            cpu_workers: default_workers(),
            queue: DEFAULT_QUEUE,
            deadline: Duration::from_millis(DEFAULT_DEADLINE_MS),
            rate_limit: None,
            anonymous_rate_limit: Some(DEFAULT_ANONYMOUS_PER_MINUTE),
            cpu_budget_ms: None,
            anonymous_cpu_budget_ms: Some(crate::limits::DEFAULT_ANONYMOUS_CPU_MS_PER_MINUTE),
            trusted_proxies: Vec::new(),
            allowed_origins: origins,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            public_url: None,
            watch_interval: Duration::from_millis(DEFAULT_WATCH_MS),
            http_workers: default_workers(),
            ui: true,
            public_read: false,
        }
    }

    /// What each MCP session mounted at `/mcp` runs with.
    pub fn mcp(&self) -> McpOptions {
        McpOptions {
            deadline: self.deadline,
            allowed_origins: self.origins(),
        }
    }

    /// The browser origins allowed to call: the configured ones and the
    /// origin of `public_url`, whose own pages post their forms back to it.
    pub fn origins(&self) -> Vec<String> {
        let mut all = self.allowed_origins.clone();
        all.extend(self.public().map(|u| u.origin().ascii_serialization()));
        all
    }

    /// The host names served: the configured ones and `public_url`'s host.
    pub fn hosts(&self) -> Vec<String> {
        let mut all = self.allowed_hosts.clone();
        all.extend(self.public().and_then(|u| u.host_str().map(str::to_owned)));
        all
    }

    /// `public_url`, when it is an http(s) URL with a host (an opaque one
    /// would add the origin `null`, which sandboxed pages send).
    fn public(&self) -> Option<url::Url> {
        self.public_url
            .as_deref()
            .and_then(|u| url::Url::parse(u).ok())
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.origin().is_tuple())
    }
}

/// Everything a request handler needs, shared by every actix worker.
pub struct AppState {
    /// The engine being served.
    pub live: Arc<LiveIndex>,
    /// Credentials.
    pub auth: Arc<Authenticator>,
    /// CPU threads.
    pub pool: CpuPool,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Per-caller budgets.
    pub limiter: Option<RateLimiter>,
    /// What callers' CPU work costs them (see [`crate::costs`]).
    pub costs: Arc<crate::costs::Costs>,
    /// The budget every anonymous visitor draws from (one bucket).
    anonymous: Option<RateLimiter>,
    /// Each anonymous visitor's own budget when `--rate-limit` sets none: a
    /// [`ANONYMOUS_SHARE`] of the shared one, so no one visitor drains it.
    anonymous_each: Option<RateLimiter>,
    /// Options.
    pub opts: HttpOptions,
    /// The MCP transport (stateless: every POST answered on its own).
    pub mcp: crate::mcp::HttpTransport,
    /// The web page's signed-in sessions.
    pub sessions: crate::session::Sessions,
    /// [`HttpOptions::origins`], computed once.
    origins: Vec<String>,
    /// [`HttpOptions::hosts`], computed once.
    hosts: Vec<String>,
    /// `/openapi.json`'s body, made at its first request.
    openapi: std::sync::OnceLock<String>,
}

impl AppState {
    /// Shared state for the server and its tests.
    pub fn new(
        live: Arc<LiveIndex>,
        auth: Arc<Authenticator>,
        opts: HttpOptions,
    ) -> Result<web::Data<Self>, prometheus::Error> {
        let metrics = Arc::new(Metrics::new()?);
        metrics.live_version(live.current().snapshot().version.as_str());
        let pool = CpuPool::new(opts.cpu_workers, opts.queue);
        let mcp = crate::mcp::http_transport(Arc::clone(&live), pool.clone(), opts.mcp());
        let (origins, hosts) = (opts.origins(), opts.hosts());
        let costs = Arc::new(crate::costs::Costs::new(
            opts.cpu_workers,
            opts.cpu_budget_ms,
            opts.anonymous_cpu_budget_ms,
        ));
        Ok(web::Data::new(Self {
            pool,
            costs,
            limiter: opts.rate_limit.map(RateLimiter::new),
            anonymous: opts.anonymous_rate_limit.map(RateLimiter::new),
            anonymous_each: opts
                .anonymous_rate_limit
                .map(|n| RateLimiter::new((n / ANONYMOUS_SHARE).max(1))),
            live,
            auth,
            metrics,
            opts,
            mcp,
            sessions: crate::session::Sessions::default(),
            origins,
            hosts,
            openapi: std::sync::OnceLock::new(),
        }))
    }

    /// When a request starting now stops being wanted.
    pub fn deadline_at(&self) -> Instant {
        Instant::now() + self.opts.deadline
    }

    /// Checks the tokens file and CURRENT once, logging and counting a swap.
    pub fn check_for_changes(&self, force: bool) -> SwapOutcome {
        self.reload_tokens();
        self.check_index(force)
    }

    /// Rereads the tokens file if it changed; the web sessions of tokens it
    /// no longer accepts end with it.
    pub fn reload_tokens(&self) {
        if self.auth.refresh() {
            self.sessions
                .retain_tokens(|d| self.auth.caller_of_digest(d).is_some());
        }
    }

    /// Checks CURRENT (and dropped packs) once, logging and counting a swap.
    pub fn check_index(&self, force: bool) -> SwapOutcome {
        let outcome = self.live.check(force);
        match &outcome {
            SwapOutcome::Unchanged => {}
            SwapOutcome::Swapped { from, to } => {
                tracing::info!(from = %from, to = %to, "hot swap: now serving the new index version");
                self.metrics.swap("ok");
                self.metrics.live_version(to);
            }
            SwapOutcome::Refused { version, reason } => {
                tracing::error!(version = %version, reason = %reason, "hot swap refused: the previous version keeps serving");
                self.metrics.swap("refused");
            }
        }
        outcome
    }
}

/// The request's trace id (also in its log lines and problem bodies).
#[derive(Clone, Debug)]
pub struct TraceId(pub String);

fn trace_id_for(req: &ServiceRequest) -> String {
    // Honour a caller's request id when it is safe to log and echo.
    let given = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|s| {
            !s.is_empty()
                && s.len() <= 64
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
    given.map_or_else(crate::ops::new_trace_id, str::to_owned)
}

/// Outermost middleware: trace id, panic containment, problem+json for every
/// error, metrics and the access log.
async fn trace(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let started = Instant::now();
    let trace_id = trace_id_for(&req);
    req.extensions_mut().insert(TraceId(trace_id.clone()));
    let path: String = req.path().chars().take(MAX_LOGGED_CHARS).collect();
    // Only the label set is fixed; the log keeps a bounded prefix of what was sent.
    let method_label = crate::metrics::method_label(req.method());
    let method: String = req.method().as_str().chars().take(16).collect();
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let record = |route: &str, status: StatusCode, caller: &str, code: Option<Code>| {
        let took = started.elapsed();
        if let Some(s) = &state {
            s.metrics
                .request(route, method_label, status.as_u16(), took);
            if let Some(code) = code {
                s.metrics.error(code.name());
            }
        }
        tracing::info!(
            target: "cairn::access",
            trace_id = %trace_id,
            method = %method,
            path = %path,
            route = %route,
            status = status.as_u16(),
            micros = took.as_micros() as u64,
            caller = %caller,
            code = code.map_or("", Code::name),
            "request"
        );
    };

    let res = match AssertUnwindSafe(next.call(req)).catch_unwind().await {
        Ok(Ok(res)) => res.map_into_boxed_body(),
        // Nothing to answer with but the error: it renders itself with the trace id.
        failed => {
            let mut api = match failed {
                Ok(Err(e)) => e.as_error::<ApiError>().cloned().unwrap_or_else(|| {
                    ApiError::from_status(e.as_response_error().status_code(), &e.to_string())
                }),
                _ => {
                    tracing::error!(trace_id = %trace_id, path = %path, "handler panicked");
                    ApiError::from_status(StatusCode::INTERNAL_SERVER_ERROR, "")
                }
            };
            record("unmatched", api.status, "", Some(api.code));
            api.request = Some(Box::new((trace_id.clone(), path.clone())));
            return Err(api.into());
        }
    };
    let (http_req, mut http_res) = res.into_parts();
    // Errors from handlers carry an ApiError; errors from actix itself (unknown
    // route, body too large, wrong method) do not: both leave as problems with the trace id.
    let status = http_res.status();
    let mut code = None;
    if status.is_client_error() || status.is_server_error() {
        let carried = http_res
            .error()
            .and_then(|e| e.as_error::<ApiError>().cloned());
        let content_type = http_res
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.as_bytes().to_vec())
            .unwrap_or_default();
        let is_problem = content_type.starts_with(PROBLEM_JSON.as_bytes());
        // A page a handler rendered for its error (a refused sign-in says
        // why, beside the form) is what the visitor should see.
        let is_page = content_type.starts_with(b"text/html");
        let api = carried.or_else(|| {
            // The MCP transport answers its own protocol errors.
            (!is_problem && !is_page && !path.starts_with("/mcp")).then(|| {
                let detail = http_res
                    .error()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| status.canonical_reason().unwrap_or("").to_owned());
                ApiError::from_status(status, &detail)
            })
        });
        if let Some(api) = api {
            if status.is_server_error() {
                tracing::error!(trace_id = %trace_id, code = api.code.name(), detail = %api.detail, "server error");
            }
            code = Some(api.code);
            // A browser gets a page; an API client, problem+json.
            let pages = http_req.app_data::<Pages>().copied();
            http_res = match pages {
                Some(p) if (p.wants_html)(&http_req) => (p.problem_page)(&api, &trace_id),
                _ => api.response(&trace_id, &path),
            };
        }
    }
    if let Ok(v) = HeaderValue::from_str(&trace_id) {
        http_res
            .headers_mut()
            .insert(HeaderName::from_static("x-trace-id"), v);
    }
    let route = http_req
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_owned());
    let caller = http_req
        .extensions()
        .get::<Caller>()
        .map(|c| c.name.clone())
        .unwrap_or_default();
    record(&route, http_res.status(), &caller, code);
    Ok(ServiceResponse::new(http_req, http_res))
}

/// Second middleware: the Origin check, then who the caller is (and their budget).
async fn authenticate(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody + 'static>>, Error> {
    // An access token signed by a key its issuer has not shown us yet (a
    // rotation), or keys past their age: fetch the issuer's keys off this
    // thread, at most once per key-refresh interval, before judging the token.
    if let Some(state) = req.app_data::<web::Data<AppState>>()
        && let Some(rs) = state.auth.oauth()
        && let Some(i) = bearer(&req).and_then(|t| rs.wants_refresh(t))
    {
        let state = state.clone();
        let _ = web::block(move || state.auth.oauth().map(|rs| rs.refresh(i))).await;
    }
    match admit(&req) {
        Ok((caller, anonymous, key)) => {
            if anonymous {
                req.extensions_mut().insert(Anonymous);
            }
            if let Some(state) = req.app_data::<web::Data<AppState>>() {
                let payer = crate::costs::Payer::new(Arc::clone(&state.costs), key, anonymous);
                req.extensions_mut().insert(payer);
            }
            req.extensions_mut().insert(caller);
            Ok(next.call(req).await?.map_into_left_body())
        }
        // The error rides on the response; the trace middleware renders it.
        Err(api) => Ok(req.error_response(api).map_into_right_body()),
    }
}

/// The bearer token of `req`'s Authorization header, if it has one.
fn bearer(req: &ServiceRequest) -> Option<&str> {
    crate::auth::bearer_token(req.headers().get(header::AUTHORIZATION)?.to_str().ok()?)
}

/// Whether the query string carries an OAuth access token (`access_token`).
fn has_query_token(req: &ServiceRequest) -> bool {
    url::form_urlencoded::parse(req.query_string().as_bytes()).any(|(k, _)| k == "access_token")
}

/// The body length a request declares, if it declares one.
fn declared_length(req: &ServiceRequest) -> Option<u64> {
    req.headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// The host a request is addressed to: the Host header, or the URI's
/// authority (HTTP/2). Never `X-Forwarded-Host`: a same-origin page may set it.
fn request_host(req: &ServiceRequest) -> Option<String> {
    match req.headers().get(header::HOST) {
        Some(h) => Some(String::from_utf8_lossy(h.as_bytes()).into_owned()),
        None => req.uri().authority().map(|a| a.as_str().to_owned()),
    }
}

/// Whether `host` (`name`, `name:port`, `1.2.3.4:80`, `[::1]:80`) may be served.
///
/// An IP address is always accepted: DNS rebinding needs a name the attacker
/// controls, and a caller that addresses the server by IP (a load balancer's
/// probe, a pod's health check) is not a browser tricked by DNS. A name must
/// be on `allowed` (as `name` or `name:port`), compared without case.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let host = host.trim();
    let name = match host.strip_prefix('[') {
        // [v6]:port
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => host,
        },
    };
    if name.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    allowed
        .iter()
        .any(|a| a.eq_ignore_ascii_case(name) || a.eq_ignore_ascii_case(host))
}

pub use crate::ops::Anonymous;

/// The caller of `req`, whether it is anonymous, and the name its work is
/// paid under (its own, or an anonymous visitor's address); or why it may
/// not proceed.
fn admit(req: &ServiceRequest) -> Result<(Caller, bool, String), ApiError> {
    let Some(state) = req.app_data::<web::Data<AppState>>() else {
        return Err(ApiError::from_status(StatusCode::INTERNAL_SERVER_ERROR, ""));
    };
    // A compressed body is refused unread: decoding is where a kilobyte
    // becomes gigabytes, before any size limit can see it.
    if let Some(enc) = req.headers().get(header::CONTENT_ENCODING)
        && !enc
            .as_bytes()
            .trim_ascii()
            .eq_ignore_ascii_case(b"identity")
    {
        return Err(ApiError::new(
            Code::UnsupportedMediaType,
            "request bodies must not be compressed: send them without Content-Encoding",
        ));
    }
    if declared_length(req).is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(ApiError::new(
            Code::PayloadTooLarge,
            format!("request bodies are limited to {MAX_BODY_BYTES} bytes"),
        ));
    }
    // DNS rebinding: a page on the attacker's name that resolves to this
    // server is same-origin to the browser, so only Host tells it apart.
    if let Some(host) = request_host(req)
        && !host_allowed(&host, &state.hosts)
    {
        return Err(ApiError::new(
            Code::Forbidden,
            "this Host is not served; the operator must add it to the allowed hosts",
        ));
    }
    // Cross-site protection: a browser always sends Origin on a cross-site
    // call; one we do not know never gets an answer.
    if let Some(origin) = req.headers().get(header::ORIGIN)
        && !state
            .origins
            .iter()
            .any(|o| o.as_bytes() == origin.as_bytes())
    {
        return Err(ApiError::new(
            Code::Forbidden,
            "this Origin is not allowed; the operator must add it to the allowed origins",
        ));
    }
    // Every decision below is made on the path the router matches: decoded
    // (`/%6detrics` is `/metrics`), not the raw URI a client chose.
    let path = req.match_info().as_str();
    // Pages answer anonymous visitors (who see documents without groups).
    let pages = req.app_data::<Pages>().copied();
    let page = pages.is_some_and(|p| (p.is_page)(path));
    let public = is_public(path) || page;
    // `--public-read`: the API and MCP answer callers without credentials as
    // anonymous too (`/metrics` still wants a token).
    let read_openly = state.opts.public_read && !public && path != "/metrics";
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if has_query_token(req) {
        // RFC 6750 §2.3 tokens in URLs end up in logs and Referer headers:
        // never accepted, with or without a header, and said so (400
        // invalid_request, §3.1) rather than answered as anonymous.
        let e = ApiError::malformed(
            Some("access_token".to_owned()),
            "a token in the query string is never accepted: send it in the Authorization header",
        );
        return Err(match state.auth.oauth() {
            Some(rs) => e.challenge(rs.challenge(req.path(), Some("invalid_request"))),
            None => e,
        });
    }
    let mut verdict = state.auth.check(presented);
    // A page without a bearer token may carry a signed-in session's cookie.
    if page
        && presented.is_none()
        && verdict == Verdict::Missing
        && let Some(c) = state.sessions.caller(
            pages
                .and_then(|p| (p.session_cookie)(req.request()))
                .as_deref(),
            &state.auth,
        )
    {
        verdict = Verdict::Caller(c);
    }
    // An OAuth resource server's challenge names its metadata, so a client
    // can find where to get a token (RFC 9728 §5.1).
    let challenge = |error: Option<&str>, e: ApiError| match state.auth.oauth() {
        Some(rs) => e.challenge(rs.challenge(req.path(), error)),
        None => e,
    };
    let (caller, anonymous) = match verdict {
        Verdict::Caller(c) => (c, false),
        Verdict::Missing | Verdict::Refused | Verdict::InsufficientScope if public => {
            (Caller::anonymous(), true)
        }
        // Credentials that were sent are still judged: an expired token gets
        // 401, so its client renews it instead of silently seeing less.
        Verdict::Missing if read_openly => (Caller::anonymous(), true),
        Verdict::Missing => {
            let how = match state.auth.oauth() {
                Some(_) => {
                    "send `Authorization: Bearer <token>`: an access token from the authorization server the WWW-Authenticate header's resource_metadata names, or a cairn token"
                }
                None => {
                    "send `Authorization: Bearer <token>` (make one with `cairn token add NAME`)"
                }
            };
            return Err(challenge(None, ApiError::new(Code::Unauthorized, how)));
        }
        Verdict::Refused => {
            return Err(challenge(
                Some("invalid_token"),
                ApiError::new(
                    Code::Unauthorized,
                    "the bearer token is not valid (wrong, revoked or expired; or an access token for another server)",
                ),
            ));
        }
        Verdict::InsufficientScope => {
            return Err(challenge(
                Some("insufficient_scope"),
                ApiError::new(
                    Code::Forbidden,
                    "the access token lacks the scope this server requires (see the WWW-Authenticate header)",
                ),
            ));
        }
    };
    // Pages count against the visitor's budget like API calls: an anonymous
    // visitor's budget is its address's (assets are free), and all anonymous
    // visitors together also draw from one budget, limited by default.
    let counted_page = page && !pages.is_some_and(|p| (p.is_asset)(path));
    // Anonymous API and MCP calls (`--public-read`) draw from the same
    // budgets as anonymous page views.
    let counted = counted_page || (anonymous && read_openly);
    let now = Instant::now();
    let over = |wait: u32, who: &str| {
        ApiError::new(
            Code::RateLimited,
            format!("{who} is over its request budget; retry in {wait} s"),
        )
        .retry_after(wait)
    };
    let budget = match anonymous {
        true => format!(
            "anonymous@{}",
            client::client_ip(
                req.peer_addr().map(|a| a.ip()),
                req.headers(),
                &state.opts.trusted_proxies
            )
            .map(client::visitor)
            .unwrap_or_default()
        ),
        false => caller.name.clone(),
    };
    // The caller's own budget first (an anonymous visitor's is its address's,
    // limited by default), so one visitor refused there draws nothing from
    // the budget all anonymous visitors share.
    let own = match anonymous && counted {
        true => state.limiter.as_ref().or(state.anonymous_each.as_ref()),
        false => state.limiter.as_ref(),
    };
    if (!public || counted)
        && let Some(limiter) = own
        && let Err(wait) = limiter.take(&budget, now)
    {
        return Err(over(wait, &caller.name));
    }
    // Signing in and out never waits on anonymous searches: a flood of those
    // must not keep token holders from signing in.
    if anonymous
        && counted
        && !matches!(path, "/login" | "/logout")
        && let Some(shared) = &state.anonymous
        && let Err(wait) = shared.take("anonymous", now)
    {
        return Err(over(wait, "anonymous use of this server"));
    }
    Ok((caller, anonymous, budget))
}

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
    let mut app = App::new()
        .app_data(state)
        .app_data(web::PayloadConfig::new(MAX_BODY_BYTES));
    if let Some(p) = pages {
        app = app.app_data(p);
    }
    app.configure(api::routes)
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
    let server = actix_web::HttpServer::new(move || app(factory_state.clone(), pages))
        .workers(state.opts.http_workers)
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

/// A response the default JSON way, for handlers.
pub(crate) fn json<T: serde::Serialize>(value: &T) -> HttpResponse {
    HttpResponse::Ok().json(value)
}

#[cfg(test)]
mod tests {
    use super::host_allowed;

    #[test]
    fn hosts_are_names_on_the_list_or_ip_addresses() {
        let allowed = vec!["localhost".to_owned(), "cairn.example.org:8443".to_owned()];
        for ok in [
            "localhost",
            "LocalHost:8080",
            "127.0.0.1",
            "10.0.0.7:8080",
            "[::1]:8080",
            "[fe80::1]",
            "cairn.example.org:8443",
        ] {
            assert!(host_allowed(ok, &allowed), "{ok}");
        }
        for bad in [
            "rebind.attacker.example",
            "localhost.attacker.example",
            "cairn.example.org",
            "cairn.example.org:80",
            "127.0.0.1.nip.io",
            "",
        ] {
            assert!(!host_allowed(bad, &allowed), "{bad}");
        }
    }
}
