//! What the server holds for every request: how it runs ([`HttpOptions`]),
//! the shared state each handler reads ([`AppState`]), and the web pages as
//! this module knows them ([`Pages`]). A leaf of `http`: the middleware and
//! the routes read it, and it imports none of them.

use crate::auth::Authenticator;
use crate::limits::ANONYMOUS_SHARE;
use crate::live::{LiveIndex, SwapOutcome};
use crate::mcp::McpOptions;
use crate::metrics::Metrics;
use crate::pool::CpuPool;
use crate::problem::ApiError;
use crate::ratelimit::RateLimiter;
use actix_web::{HttpResponse, web};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    pub trusted_proxies: Vec<super::client::Cidr>,
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
    /// The Slack app (`/slack/commands`, `/slack/events`), when configured.
    pub slack: Option<crate::slack::SlackConfig>,
    /// How long a request body may take to arrive whole ([`crate::body`]).
    pub body_timeout: Duration,
    /// The configured model, when there is one: the chat gateway
    /// (`POST /v1/chat/completions`) is served with it.
    pub llm: Option<crate::llm::LlmConfig>,
    /// The tools `/mcp` lists unless a request's query chooses others.
    pub mcp_tools: crate::toolsets::ToolChoice,
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
            slack: None,
            body_timeout: crate::body::DEFAULT_BODY_TIMEOUT,
            llm: None,
            mcp_tools: crate::toolsets::ToolChoice::default(),
        }
    }

    /// What each MCP session mounted at `/mcp` runs with.
    pub fn mcp(&self) -> McpOptions {
        McpOptions {
            llm: None,
            deadline: self.deadline,
            allowed_origins: self.origins(),
            tools: self.mcp_tools.clone(),
            metrics: None,
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
    pub(super) anonymous: Option<RateLimiter>,
    /// Each anonymous visitor's own budget when `--rate-limit` sets none: a
    /// [`ANONYMOUS_SHARE`] of the shared one, so no one visitor drains it.
    pub(super) anonymous_each: Option<RateLimiter>,
    /// Options.
    pub opts: HttpOptions,
    /// The MCP transport (stateless: every POST answered on its own).
    pub mcp: crate::mcp::HttpTransport,
    /// The web page's signed-in sessions.
    pub sessions: crate::session::Sessions,
    /// [`HttpOptions::origins`], computed once.
    pub(super) origins: Vec<String>,
    /// [`HttpOptions::hosts`], computed once.
    pub(super) hosts: Vec<String>,
    /// `/openapi.json`'s body, made at its first request.
    pub(super) openapi: std::sync::OnceLock<String>,
    /// The Slack app, when configured.
    pub(super) slack: Option<Arc<crate::slack::Slack>>,
    /// The configured model's client, when there is one.
    pub(super) llm: Option<Arc<crate::llm::LlmClient>>,
    /// Request bodies: their deadline, and who is sending which.
    pub bodies: Arc<crate::body::BodyLimits>,
}

impl AppState {
    /// Whether a model is configured (`ask`, the chat gateway, the ask page).
    pub fn has_model(&self) -> bool {
        self.llm.is_some()
    }

    /// Shared state for the server and its tests.
    pub fn new(
        live: Arc<LiveIndex>,
        auth: Arc<Authenticator>,
        opts: HttpOptions,
    ) -> Result<web::Data<Self>, prometheus::Error> {
        let metrics = Arc::new(Metrics::new()?);
        metrics.live_version(live.current().snapshot().version.as_str());
        let pool = CpuPool::new(opts.cpu_workers, opts.queue);
        let llm = opts
            .llm
            .clone()
            .map(|config| Arc::new(crate::llm::LlmClient::new(config)));
        if let Some(llm) = &llm {
            metrics.model_tokens(llm.spending().counter())?;
        }
        let mcp = crate::mcp::http_transport(
            Arc::clone(&live),
            pool.clone(),
            McpOptions {
                llm: llm.clone(),
                metrics: Some(Arc::clone(&metrics)),
                ..opts.mcp()
            },
        );
        let (origins, hosts) = (opts.origins(), opts.hosts());
        let costs = Arc::new(crate::costs::Costs::new(
            opts.cpu_workers,
            opts.cpu_budget_ms,
            opts.anonymous_cpu_budget_ms,
        ));
        let slack = opts.slack.clone().map(|config| {
            let server = crate::slack::Server {
                live: Arc::clone(&live),
                pool: pool.clone(),
                costs: Arc::clone(&costs),
                deadline: opts.deadline,
                public_url: opts.public_url.clone(),
                llm: llm.clone(),
            };
            Arc::new(crate::slack::Slack::new(config, server))
        });
        Ok(web::Data::new(Self {
            llm,
            bodies: crate::body::BodyLimits::new(
                opts.body_timeout,
                crate::body::DEFAULT_BODIES_PER_ADDRESS,
            ),
            slack,
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
