//! Prometheus metrics: requests, latency histograms, errors by code, the
//! live index version, its age and the repositories behind their remotes,
//! swaps, the CPU queue, the query-vector cache, and each MCP tool's calls
//! and durations. Every label comes from a fixed set (routes, methods,
//! codes, tool names, the configured repositories), so no caller can mint series.

use cairn_search::{CacheStats, HealthResponse};
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};
use std::time::Duration;

/// The `method` label of a request: a fixed set, so a caller cannot mint series.
pub fn method_label(method: &actix_web::http::Method) -> &'static str {
    match method.as_str() {
        "GET" => "GET",
        "POST" => "POST",
        _ => "OTHER",
    }
}

/// The server's metrics, registered in their own registry.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    errors: IntCounterVec,
    index: IntGaugeVec,
    swaps: IntCounterVec,
    queue: IntGauge,
    /// Query-vector cache: hits, misses, entries (since the model was loaded).
    cache: IntGaugeVec,
    /// Seconds since the live version was built.
    age: IntGauge,
    /// Repositories behind their remotes, and by how many commits each.
    behind: IntGauge,
    commits_behind: IntGaugeVec,
    /// MCP tool calls by tool and outcome, and their durations.
    tool_calls: IntCounterVec,
    tool_latency: HistogramVec,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Result<Self, prometheus::Error> {
        let registry = Registry::new_custom(Some("cairn".to_owned()), None)?;
        let requests = IntCounterVec::new(
            Opts::new("http_requests_total", "HTTP requests by route and status"),
            &["route", "method", "status"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "HTTP request latency by route",
            )
            .buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            &["route"],
        )?;
        let errors = IntCounterVec::new(
            Opts::new("errors_total", "Error responses by problem code"),
            &["code"],
        )?;
        let index = IntGaugeVec::new(
            Opts::new("index_info", "The index version being served (value 1)"),
            &["index_version"],
        )?;
        let swaps = IntCounterVec::new(
            Opts::new("index_swaps_total", "Hot swaps by result"),
            &["result"],
        )?;
        let queue = IntGauge::new("cpu_queue_depth", "Search jobs queued or running")?;
        let cache = IntGaugeVec::new(
            Opts::new(
                "query_cache",
                "Query-vector cache since the model was loaded: hits, misses, entries",
            ),
            &["kind"],
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(errors.clone()))?;
        registry.register(Box::new(index.clone()))?;
        registry.register(Box::new(swaps.clone()))?;
        registry.register(Box::new(queue.clone()))?;
        registry.register(Box::new(cache.clone()))?;
        let age = IntGauge::new(
            "index_age_seconds",
            "Seconds since the version being served was built",
        )?;
        let behind = IntGauge::new(
            "repositories_behind",
            "Repositories whose remote has commits the served version lacks (as cairn watch last saw)",
        )?;
        let commits_behind = IntGaugeVec::new(
            Opts::new(
                "repository_commits_behind",
                "Commits each repository's remote is ahead of the served version, where counted",
            ),
            &["repo"],
        )?;
        let tool_calls = IntCounterVec::new(
            Opts::new(
                "mcp_tool_calls_total",
                "MCP tool calls by tool and outcome (ok, error: a tool error; cancelled)",
            ),
            &["tool", "outcome"],
        )?;
        let tool_latency = HistogramVec::new(
            HistogramOpts::new(
                "mcp_tool_duration_seconds",
                "MCP tool call duration by tool",
            )
            .buckets(vec![
                0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
            ]),
            &["tool"],
        )?;
        for m in [&age, &behind] {
            registry.register(Box::new(m.clone()))?;
        }
        registry.register(Box::new(commits_behind.clone()))?;
        registry.register(Box::new(tool_calls.clone()))?;
        registry.register(Box::new(tool_latency.clone()))?;
        Ok(Self {
            age,
            behind,
            commits_behind,
            tool_calls,
            tool_latency,
            registry,
            requests,
            latency,
            errors,
            index,
            swaps,
            queue,
            cache,
        })
    }

    /// Adds the configured model's token counts (`model_tokens_total`).
    pub fn model_tokens(&self, spent: &IntCounterVec) -> Result<(), prometheus::Error> {
        self.registry.register(Box::new(spent.clone()))
    }

    /// Records one finished request. Every label must come from a fixed set:
    /// `route` is a matched pattern or `unmatched`, `method` a [`method_label`].
    pub fn request(&self, route: &str, method: &str, status: u16, took: Duration) {
        self.requests
            .with_label_values(&[route, method, status.to_string().as_str()])
            .inc();
        self.latency
            .with_label_values(&[route])
            .observe(took.as_secs_f64());
    }

    /// Records an error response.
    pub fn error(&self, code: &str) {
        self.errors.with_label_values(&[code]).inc();
    }

    /// Records the version now live.
    pub fn live_version(&self, version: &str) {
        self.index.reset();
        self.index.with_label_values(&[version]).set(1);
    }

    /// Records one MCP tool call: `tool` (a tool's name, else `unknown`),
    /// `outcome` (`ok`, `error`, `cancelled`) and how long it took.
    pub fn tool_call(&self, tool: &str, outcome: &str, took: Duration) {
        let tool = match crate::ops::by_tool(tool) {
            Some(op) => op.meta.tool.unwrap_or("unknown"),
            None => "unknown",
        };
        self.tool_calls.with_label_values(&[tool, outcome]).inc();
        self.tool_latency
            .with_label_values(&[tool])
            .observe(took.as_secs_f64());
    }

    /// Records how fresh the served version is: its age, and the
    /// repositories behind their remotes, as `health` gives them to the
    /// scraper (an admin's token sees every repository).
    pub fn freshness(&self, health: &HealthResponse) {
        if let Ok(built) = time::OffsetDateTime::parse(
            &health.built_at,
            &time::format_description::well_known::Rfc3339,
        ) {
            let age = (time::OffsetDateTime::now_utc() - built).whole_seconds();
            self.age.set(age.max(0));
        }
        self.behind
            .set(i64::try_from(health.repos_behind).unwrap_or(i64::MAX));
        self.commits_behind.reset();
        for (repo, n) in &health.commits_behind {
            self.commits_behind
                .with_label_values(&[repo.as_str()])
                .set(i64::try_from(*n).unwrap_or(i64::MAX));
        }
    }

    /// Records a swap attempt (`ok` or `refused`).
    pub fn swap(&self, result: &str) {
        self.swaps.with_label_values(&[result]).inc();
    }

    /// The text exposition, with the queue depth and cache figures read now.
    pub fn render(&self, queue_depth: usize, cache: Option<CacheStats>) -> String {
        self.queue.set(queue_depth as i64);
        if let Some(c) = cache {
            let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            self.cache.with_label_values(&["hits"]).set(clamp(c.hits));
            self.cache
                .with_label_values(&["misses"])
                .set(clamp(c.misses));
            self.cache
                .with_label_values(&["entries"])
                .set(clamp(c.entries as u64));
        }
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::error!(error = %e, "metrics encoding failed");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}
