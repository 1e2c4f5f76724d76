//! RFC 9457 problem details: the one shape every HTTP error takes.
//!
//! Handlers return [`ApiError`]; the trace middleware renders it (and any
//! error actix produced itself) as `application/problem+json` carrying the
//! request's trace id, so a client can quote it and an operator can find the
//! log line.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use cairn_search::{Code, SearchError};
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
    pub code: Code,
    /// The request field at fault, if one is.
    pub field: Option<String>,
    /// What went wrong, for a person.
    pub detail: String,
    /// Seconds a client should wait before trying again (429, 503).
    pub retry_after: Option<u32>,
    /// The `WWW-Authenticate` challenge of a 401 or 403 (the default 401
    /// challenge when `None`): an OAuth resource server's names its metadata.
    pub challenge: Option<String>,
    /// The request's trace id and path, when the error must render itself
    /// (errors that escape the middleware, such as a handler's panic).
    pub request: Option<Box<(String, String)>>,
}

impl ApiError {
    /// An error with no field, answered with its code's status.
    pub fn new(code: Code, detail: impl Into<String>) -> Self {
        Self {
            status: status_of(code),
            code,
            field: None,
            detail: detail.into(),
            retry_after: None,
            challenge: None,
            request: None,
        }
    }

    /// A value that parsed but is not acceptable (422).
    pub fn invalid(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            field: Some(field.into()),
            ..Self::new(Code::InvalidArgument, detail)
        }
    }

    /// A body or query string that does not parse (400).
    pub fn malformed(field: Option<String>, detail: impl Into<String>) -> Self {
        Self {
            field,
            ..Self::new(Code::MalformedRequest, detail)
        }
    }

    /// Sets the `WWW-Authenticate` challenge.
    pub fn challenge(mut self, challenge: String) -> Self {
        self.challenge = Some(challenge);
        self
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
            code: self.code,
            field: self.field.clone(),
            instance: instance.to_owned(),
            trace_id: trace_id.to_owned(),
        }
    }

    /// The full response for this error.
    pub fn response(&self, trace_id: &str, instance: &str) -> HttpResponse {
        let mut res = HttpResponse::build(self.status);
        res.insert_header((header::CONTENT_TYPE, PROBLEM_JSON));
        res.insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"));
        if let Ok(v) = HeaderValue::from_str(trace_id) {
            res.insert_header(("x-trace-id", v));
        }
        if let Some(s) = self.retry_after {
            res.insert_header((header::RETRY_AFTER, s.to_string()));
        }
        match self.challenge.as_deref().map(HeaderValue::from_str) {
            Some(Ok(c)) => {
                res.insert_header((header::WWW_AUTHENTICATE, c));
            }
            _ if self.status == StatusCode::UNAUTHORIZED => {
                res.insert_header((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"cairn\""),
                ));
            }
            _ => {}
        }
        res.body(serde_json::to_string(&self.problem(trace_id, instance)).unwrap_or_default())
    }

    /// The error actix's own failures (unknown route, wrong method, oversized body …) map to.
    pub fn from_status(status: StatusCode, detail: &str) -> Self {
        let code = Code::from_http_status(status.as_u16());
        // Never echo internal error text to clients.
        let detail = if status.is_server_error() {
            "the server failed to answer; quote the trace_id when reporting it".to_owned()
        } else {
            detail.to_owned()
        };
        Self {
            status,
            ..Self::new(code, detail)
        }
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
                Code::Overloaded,
                "every search worker is busy and the queue is full; retry shortly",
            )
            .retry_after(1),
            PoolError::DeadlineExceeded => ApiError::new(
                Code::DeadlineExceeded,
                "the answer took longer than the server's deadline; retry shortly",
            )
            .retry_after(2),
            PoolError::Panicked => ApiError::new(
                Code::Internal,
                "the search failed; quote the trace_id when reporting it",
            ),
        }
    }
}

impl From<crate::llm::LlmError> for ApiError {
    /// The configured model's failure as a caller is told it: its status and
    /// words, never its address (the caller logs the whole error first).
    fn from(e: crate::llm::LlmError) -> Self {
        if let crate::llm::LlmError::OverBudget { wait } = e {
            return ApiError::new(Code::RateLimited, e.for_caller()).retry_after(wait);
        }
        let refused = ApiError::new(Code::ModelUnavailable, e.for_caller());
        match e.retryable() {
            true => refused.retry_after(5),
            false => refused,
        }
    }
}

impl From<SearchError> for ApiError {
    fn from(e: SearchError) -> Self {
        let code = e.code();
        match e {
            SearchError::Invalid { field, message } => ApiError::invalid(field, message),
            SearchError::NotFound(id) => ApiError {
                field: Some("doc_id".to_owned()),
                ..ApiError::new(code, format!("doc_id {id:?} not found"))
            },
            SearchError::Forbidden(message) => ApiError::new(code, message),
            SearchError::DeadlineExceeded => crate::pool::PoolError::DeadlineExceeded.into(),
            // The caller's own doing, said to the caller, not logged as the server's fault.
            e @ SearchError::VersionGone(_) => ApiError {
                field: Some("index_version".to_owned()),
                ..ApiError::new(code, e.to_string())
            },
            other => {
                // Never echo a library's internal text to clients; only the
                // server's own failures are errors in its log.
                match code.http_status() >= 500 {
                    true => tracing::error!(error = %other, %code, "search library failed"),
                    false => tracing::debug!(error = %other, %code, "refused"),
                }
                let e = ApiError::new(
                    code,
                    "the search failed; quote the trace_id when reporting it",
                );
                match code.retryable() {
                    true => e.retry_after(2),
                    false => e,
                }
            }
        }
    }
}

/// The HTTP status of `code`.
pub fn status_of(code: Code) -> StatusCode {
    StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// RFC 9457 problem details, with cairn's `code`, `field` and `trace_id` members.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema, schemars::JsonSchema)]
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
    /// Stable code, one of [`Code`]'s names.
    pub code: Code,
    /// The request field at fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The request path.
    pub instance: String,
    /// Identifies the request in the server's logs.
    pub trace_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/API.md's table of codes: (code, HTTP status, exit code, retryable).
    fn documented_codes() -> Vec<(String, u16, u8, bool)> {
        include_str!("../../docs/API.md")
            .lines()
            .filter_map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                let code = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
                Some((
                    code.to_owned(),
                    cells.get(2)?.parse().ok()?,
                    cells.get(3)?.parse().ok()?,
                    cells.get(4)?.starts_with("yes"),
                ))
            })
            .collect()
    }

    #[test]
    fn the_api_docs_list_every_code_as_the_table_defines_it() {
        let table: Vec<_> = Code::ALL
            .iter()
            .map(|c| {
                (
                    c.name().to_owned(),
                    c.http_status(),
                    c.exit_code(),
                    c.retryable(),
                )
            })
            .collect();
        assert_eq!(documented_codes(), table);
    }

    #[test]
    fn the_openapi_document_enumerates_every_code() {
        let doc = serde_json::to_value(crate::http::openapi::document(None)).expect("json");
        let listed: Vec<&str> = doc["components"]["schemas"]["Code"]["enum"]
            .as_array()
            .expect("Code is an enum in the OpenAPI document")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        let names: Vec<&str> = Code::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(listed, names);
        assert_eq!(
            doc["components"]["schemas"]["Problem"]["properties"]["code"]["$ref"],
            "#/components/schemas/Code"
        );
    }

    #[test]
    fn retryable_codes_tell_the_client_when() {
        for e in [
            ApiError::from(crate::pool::PoolError::Overloaded),
            ApiError::from(crate::pool::PoolError::DeadlineExceeded),
        ] {
            assert!(e.code.retryable() && e.retry_after.is_some(), "{e}");
            assert_eq!(e.status.as_u16(), e.code.http_status());
        }
    }
}
