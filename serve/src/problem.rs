//! RFC 9457 problem details: the one shape every HTTP error takes.
//!
//! Handlers return [`ApiError`]; the trace middleware renders it (and any
//! error actix produced itself) as `application/problem+json` carrying the
//! request's trace id, so a client can quote it and an operator can find the
//! log line.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use cairn_search::SearchError;
use serde::Serialize;
use std::fmt;

/// Media type of problem bodies.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// An error an endpoint answers with: status, stable code, offending field.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable machine-readable code (the same codes MCP tool errors carry).
    pub code: &'static str,
    /// The request field at fault, if one is.
    pub field: Option<String>,
    /// What went wrong, for a person.
    pub detail: String,
    /// Seconds a client should wait before trying again (429, 503).
    pub retry_after: Option<u32>,
    /// The request's trace id and path, when the error must render itself
    /// (errors that escape the middleware, such as a handler's panic).
    pub request: Option<Box<(String, String)>>,
}

impl ApiError {
    /// An error with no field.
    pub fn new(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Self {
        Self {
            status,
            code,
            field: None,
            detail: detail.into(),
            retry_after: None,
            request: None,
        }
    }

    /// A value that parsed but is not acceptable (422).
    pub fn invalid(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            field: Some(field.into()),
            ..Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", detail)
        }
    }

    /// A body or query string that does not parse (400).
    pub fn malformed(field: Option<String>, detail: impl Into<String>) -> Self {
        Self {
            field,
            ..Self::new(StatusCode::BAD_REQUEST, "malformed_request", detail)
        }
    }

    /// Sets Retry-After.
    pub fn retry_after(mut self, seconds: u32) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// The problem body for this error.
    pub fn problem(&self, trace_id: &str, instance: &str) -> Problem {
        Problem {
            type_uri: format!("urn:cairn:problem:{}", self.code),
            title: self.status.canonical_reason().unwrap_or("Error").to_owned(),
            status: self.status.as_u16(),
            detail: self.detail.clone(),
            code: self.code.to_owned(),
            field: self.field.clone(),
            instance: instance.to_owned(),
            trace_id: trace_id.to_owned(),
        }
    }

    /// The full response for this error.
    pub fn response(&self, trace_id: &str, instance: &str) -> HttpResponse {
        let mut res = HttpResponse::build(self.status);
        res.insert_header((header::CONTENT_TYPE, PROBLEM_JSON));
        if let Ok(v) = HeaderValue::from_str(trace_id) {
            res.insert_header(("x-trace-id", v));
        }
        if let Some(s) = self.retry_after {
            res.insert_header((header::RETRY_AFTER, s.to_string()));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            res.insert_header((
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"cairn\""),
            ));
        }
        res.body(serde_json::to_string(&self.problem(trace_id, instance)).unwrap_or_default())
    }

    /// The error actix's own failures (unknown route, wrong method, oversized body …) map to.
    pub fn from_status(status: StatusCode, detail: &str) -> Self {
        let code = match status {
            StatusCode::NOT_FOUND => "not_found",
            StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
            StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            StatusCode::UNAUTHORIZED => "unauthorized",
            StatusCode::FORBIDDEN => "forbidden",
            StatusCode::TOO_MANY_REQUESTS => "rate_limited",
            StatusCode::SERVICE_UNAVAILABLE => "overloaded",
            s if s.is_client_error() => "malformed_request",
            _ => "internal",
        };
        // Never echo internal error text to clients.
        let detail = if status.is_server_error() {
            "the server failed to answer; quote the trace_id when reporting it".to_owned()
        } else {
            detail.to_owned()
        };
        Self::new(status, code, detail)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{} ({field}): {}", self.code, self.detail),
            None => write!(f, "{}: {}", self.code, self.detail),
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    /// The trace middleware renders handler errors itself, with the trace id;
    /// this is for errors that leave the middleware as errors.
    fn error_response(&self) -> HttpResponse {
        match self.request.as_deref() {
            Some((trace_id, path)) => self.response(trace_id, path),
            None => self.response("", ""),
        }
    }
}

/// Deserializes `T`, naming the field at fault (`items[0].start`, or the
/// field serde reports missing or unknown): the one parser of both connectors.
pub fn parse_json<'de, T, D>(de: D) -> Result<T, ApiError>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
    D::Error: std::fmt::Display,
{
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().to_string();
        let field = if path == "." {
            // serde names missing and unknown fields in backticks.
            message.split('`').nth(1).map(str::to_owned)
        } else {
            Some(path)
        };
        ApiError::malformed(field, message)
    })
}

impl From<crate::pool::PoolError> for ApiError {
    fn from(e: crate::pool::PoolError) -> Self {
        use crate::pool::PoolError;
        match e {
            PoolError::Overloaded => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "overloaded",
                "every search worker is busy and the queue is full; retry shortly",
            )
            .retry_after(1),
            PoolError::DeadlineExceeded => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "deadline_exceeded",
                "the answer took longer than the server's deadline; retry shortly",
            )
            .retry_after(2),
            PoolError::Panicked => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the search failed; quote the trace_id when reporting it",
            ),
        }
    }
}

impl From<SearchError> for ApiError {
    fn from(e: SearchError) -> Self {
        match e {
            SearchError::Invalid { field, message } => ApiError::invalid(field, message),
            SearchError::NotFound(id) => ApiError {
                field: Some("doc_id".to_owned()),
                ..ApiError::new(
                    StatusCode::NOT_FOUND,
                    "not_found",
                    format!("doc_id {id:?} not found"),
                )
            },
            SearchError::DeadlineExceeded => crate::pool::PoolError::DeadlineExceeded.into(),
            other => {
                tracing::error!(error = %other, code = other.code(), "search library failed");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "the search failed; quote the trace_id when reporting it",
                )
            }
        }
    }
}

/// RFC 9457 problem details, with cairn's `code`, `field` and `trace_id` members.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Problem {
    /// A URI naming the problem type: `urn:cairn:problem:<code>`.
    #[serde(rename = "type")]
    pub type_uri: String,
    /// Short summary of the status.
    pub title: String,
    /// HTTP status.
    pub status: u16,
    /// What went wrong and how to fix the request.
    pub detail: String,
    /// Stable code: invalid_argument, malformed_request, not_found, unauthorized, forbidden,
    /// payload_too_large, rate_limited, overloaded, deadline_exceeded, index_unavailable, internal.
    pub code: String,
    /// The request field at fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The request path.
    pub instance: String,
    /// Identifies the request in the server's logs.
    pub trace_id: String,
}
