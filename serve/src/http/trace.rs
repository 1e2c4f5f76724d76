//! The outermost middleware: every request's trace id (a W3C `traceparent`'s
//! trace id when the caller sends one, else its `x-request-id`, else a new
//! one), panic containment, problem+json for every error, metrics and the
//! access log line.

use super::state::{AppState, Pages};
use crate::auth::Caller;
use crate::problem::{ApiError, PROBLEM_JSON};
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::http::{StatusCode, header};
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, HttpRequest, HttpResponse, web};
use cairn_search::Code;
use futures_util::FutureExt;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

/// Longest request path written to the access log.
const MAX_LOGGED_CHARS: usize = 512;

/// The request's trace id (also in its log lines and problem bodies).
#[derive(Clone, Debug)]
pub struct TraceId(pub String);

/// The trace id of a W3C `traceparent` (`00-<trace id>-<parent id>-<flags>`):
/// its 32 lowercase hex digits, when the header is well formed and the id not all zeros.
fn trace_parent(value: &str) -> Option<&str> {
    let mut parts = value.trim().split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |s: &str, n: usize| {
        s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    // Version 00 has exactly four fields; later versions may add some; ff is invalid.
    let well_formed = hex(version, 2)
        && version != "ff"
        && (version != "00" || parts.next().is_none())
        && hex(trace, 32)
        && hex(parent, 16)
        && hex(flags, 2)
        && trace.bytes().any(|b| b != b'0')
        && parent.bytes().any(|b| b != b'0');
    well_formed.then_some(trace)
}

fn trace_id_for(req: &ServiceRequest) -> String {
    // A W3C trace context first: the caller's trace continues through cairn's logs.
    if let Some(trace) = req
        .headers()
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .and_then(trace_parent)
    {
        return trace.to_owned();
    }
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
pub(super) async fn trace(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let started = Instant::now();
    let trace_id = trace_id_for(&req);
    req.extensions_mut().insert(TraceId(trace_id.clone()));
    let log = RequestLog::of(&req, started, trace_id);

    let res = match AssertUnwindSafe(next.call(req)).catch_unwind().await {
        Ok(Ok(res)) => res.map_into_boxed_body(),
        // Nothing to answer with but the error: it renders itself with the trace id.
        Ok(Err(e)) => return Err(log.escaped(api_error_of(&e))),
        Err(_) => return Err(log.escaped(log.panicked())),
    };
    let (http_req, mut http_res) = res.into_parts();
    // Errors from handlers carry an ApiError; errors from actix itself (unknown
    // route, body too large, wrong method) do not: both leave as problems with the trace id.
    let status = http_res.status();
    let mut code = None;
    // Whether the connection ends with this answer: a body refused unread
    // or cut off at its deadline leaves nothing to read the next request by.
    let mut close = false;
    if status.is_client_error() || status.is_server_error() {
        let answer = error_answer(&http_res, status, &log.path);
        close = answer.close;
        if let Some(api) = answer.api {
            code = Some(api.code);
            http_res = log.problem_response(&http_req, &api, status);
        }
    }
    if close {
        http_res
            .head_mut()
            .set_connection_type(actix_web::http::ConnectionType::Close);
    }
    if let Ok(v) = HeaderValue::from_str(&log.trace_id) {
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
    log.record(&route, http_res.status(), &caller, code);
    Ok(ServiceResponse::new(http_req, http_res))
}

/// What the metrics and the access log keep of a request, taken as it arrives.
struct RequestLog {
    started: Instant,
    trace_id: String,
    /// At most [`MAX_LOGGED_CHARS`] of it.
    path: String,
    method_label: &'static str,
    method: String,
    state: Option<web::Data<AppState>>,
}

impl RequestLog {
    /// `req`'s log, its time counted from `started`.
    fn of(req: &ServiceRequest, started: Instant, trace_id: String) -> Self {
        Self {
            started,
            trace_id,
            path: req.path().chars().take(MAX_LOGGED_CHARS).collect(),
            // Only the label set is fixed; the log keeps a bounded prefix of what was sent.
            method_label: crate::metrics::method_label(req.method()),
            method: req.method().as_str().chars().take(16).collect(),
            state: req.app_data::<web::Data<AppState>>().cloned(),
        }
    }

    /// Counts the answer in the metrics and writes its access log line.
    fn record(&self, route: &str, status: StatusCode, caller: &str, code: Option<Code>) {
        let took = self.started.elapsed();
        if let Some(s) = &self.state {
            s.metrics
                .request(route, self.method_label, status.as_u16(), took);
            if let Some(code) = code {
                s.metrics.error(code.name());
            }
        }
        tracing::info!(
            target: "cairn::access",
            trace_id = %self.trace_id,
            method = %self.method,
            path = %self.path,
            route = %route,
            status = status.as_u16(),
            micros = took.as_micros() as u64,
            caller = %caller,
            code = code.map_or("", Code::name),
            "request"
        );
    }

    /// The 500 a handler's panic leaves, logged.
    fn panicked(&self) -> ApiError {
        tracing::error!(trace_id = %self.trace_id, path = %self.path, "handler panicked");
        ApiError::from_status(StatusCode::INTERNAL_SERVER_ERROR, "")
    }

    /// An error with no response to carry it, recorded and made to render
    /// itself with the request's trace id and path.
    fn escaped(&self, mut api: ApiError) -> Error {
        self.record("unmatched", api.status, "", Some(api.code));
        api.request = Some(Box::new((self.trace_id.clone(), self.path.clone())));
        api.into()
    }

    /// `api` as the answer: a page for a browser, problem+json otherwise.
    fn problem_response(
        &self,
        http_req: &HttpRequest,
        api: &ApiError,
        status: StatusCode,
    ) -> HttpResponse {
        if status.is_server_error() {
            tracing::error!(trace_id = %self.trace_id, code = api.code.name(), detail = %api.detail, "server error");
        }
        // A browser gets a page; an API client, problem+json.
        let pages = http_req.app_data::<Pages>().copied();
        match pages {
            Some(p) if (p.wants_html)(http_req) => (p.problem_page)(api, &self.trace_id),
            _ => api.response(&self.trace_id, &self.path),
        }
    }
}

/// The problem an error a handler returned stands for.
fn api_error_of(e: &Error) -> ApiError {
    e.as_error::<ApiError>().cloned().unwrap_or_else(|| {
        ApiError::from_status(e.as_response_error().status_code(), &e.to_string())
    })
}

/// What an error answer becomes: the problem to answer with (`None`: it
/// stands as it is), and whether the connection closes after it.
struct ErrorAnswer {
    api: Option<ApiError>,
    close: bool,
}

/// How the error answer `http_res` (with `status`, for `path`) leaves.
fn error_answer(http_res: &HttpResponse, status: StatusCode, path: &str) -> ErrorAnswer {
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
    // A body that did not arrive in time: 408, and the connection is
    // closed (what is left of the body is never read).
    let late = http_res
        .error()
        .and_then(|e| e.as_error::<actix_web::error::PayloadError>())
        .is_some_and(crate::body::timed_out);
    let close = late || status == StatusCode::TOO_MANY_REQUESTS;
    let carried = match late {
        true => Some(ApiError::from_status(
            StatusCode::REQUEST_TIMEOUT,
            &http_res.error().map(|e| e.to_string()).unwrap_or_default(),
        )),
        false => carried,
    };
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
    ErrorAnswer { api, close }
}

#[cfg(test)]
mod tests {
    use super::trace_parent;

    #[test]
    fn a_traceparent_gives_its_trace_id_when_well_formed() {
        let id = "4bf92f3577b34da6a3ce929d0e0e4736";
        assert_eq!(
            trace_parent(&format!("00-{id}-00f067aa0ba902b7-01")),
            Some(id)
        );
        assert_eq!(
            trace_parent(&format!("01-{id}-00f067aa0ba902b7-01-more")),
            Some(id)
        );
        for bad in [
            format!("00-{id}-00f067aa0ba902b7-01-extra"),
            format!("ff-{id}-00f067aa0ba902b7-01"),
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01".to_owned(),
            format!("00-{id}-0000000000000000-01"),
            format!("00-{}-00f067aa0ba902b7-01", id.to_uppercase()),
            "00-short-00f067aa0ba902b7-01".to_owned(),
            String::new(),
        ] {
            assert_eq!(trace_parent(&bad), None, "{bad}");
        }
    }
}
