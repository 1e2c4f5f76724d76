//! The one table of error codes: every failure a connector reports (HTTP
//! problem+json, MCP tool errors, the CLI's `error [code]` line and exit
//! status) maps through [`Code`], so a code, its HTTP status, its exit code
//! and whether it is worth retrying are written down once.
//!
//! HTTP statuses are plain numbers here: this crate knows nothing of HTTP;
//! `cairn-serve` turns them into actix's type.

use std::fmt;

/// Declares [`Code`] and its table from one list of
/// `Variant = "name", http status, exit code, retryable`.
macro_rules! codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal, $status:literal, $exit:literal, $retry:literal;)+) => {
        /// A stable, machine-readable error code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $($(#[doc = $doc])* $variant,)+
        }

        impl Code {
            /// Every code, in the order of the table.
            pub const ALL: &'static [Code] = &[$(Code::$variant),+];

            /// The name clients match on (`invalid_argument`).
            pub const fn name(self) -> &'static str {
                match self { $(Code::$variant => $name),+ }
            }

            /// The HTTP status this code is answered with.
            pub const fn http_status(self) -> u16 {
                match self { $(Code::$variant => $status),+ }
            }

            /// The CLI's exit status when a command fails with this code.
            pub const fn exit_code(self) -> u8 {
                match self { $(Code::$variant => $exit),+ }
            }

            /// Whether the same request may succeed later (503s, 429).
            pub const fn retryable(self) -> bool {
                match self { $(Code::$variant => $retry),+ }
            }
        }
    };
}

codes! {
    /// The body or query string does not parse.
    MalformedRequest = "malformed_request", 400, 2, false;
    /// No credentials, or credentials that are not valid.
    Unauthorized = "unauthorized", 401, 2, false;
    /// Valid credentials that may not do this (or a Host/Origin not served).
    Forbidden = "forbidden", 403, 2, false;
    /// No such document, route or tool for this caller.
    NotFound = "not_found", 404, 2, false;
    /// A cited index version that is no longer kept.
    VersionGone = "version_gone", 410, 2, false;
    /// The route exists with another method.
    MethodNotAllowed = "method_not_allowed", 405, 2, false;
    /// The request's body did not arrive whole within the body deadline.
    RequestTimeout = "request_timeout", 408, 1, true;
    /// The body is over the size limit.
    PayloadTooLarge = "payload_too_large", 413, 2, false;
    /// A compressed body, or a body that is not JSON.
    UnsupportedMediaType = "unsupported_media_type", 415, 2, false;
    /// A value that parsed but is not acceptable; the field is named.
    InvalidArgument = "invalid_argument", 422, 2, false;
    /// The caller is over its request budget.
    RateLimited = "rate_limited", 429, 1, true;
    /// Every worker is busy and the queue is full.
    Overloaded = "overloaded", 503, 1, true;
    /// The answer took longer than the deadline.
    DeadlineExceeded = "deadline_exceeded", 503, 1, true;
    /// No index could be opened.
    IndexUnavailable = "index_unavailable", 503, 1, true;
    /// The configured language model failed, refused or could not be reached.
    ModelUnavailable = "model_unavailable", 502, 1, true;
    /// The index was built with another model than the one found.
    ModelMismatch = "model_mismatch", 500, 1, false;
    /// Anything else; the details are in the server's log.
    Internal = "internal", 500, 1, false;
}

impl Code {
    /// The code a bare HTTP status maps to (errors the web framework makes itself).
    pub fn from_http_status(status: u16) -> Code {
        match status {
            404 => Code::NotFound,
            410 => Code::VersionGone,
            408 => Code::RequestTimeout,
            422 => Code::InvalidArgument,
            405 => Code::MethodNotAllowed,
            413 => Code::PayloadTooLarge,
            415 => Code::UnsupportedMediaType,
            401 => Code::Unauthorized,
            403 => Code::Forbidden,
            429 => Code::RateLimited,
            503 => Code::Overloaded,
            502 => Code::ModelUnavailable,
            400..=499 => Code::MalformedRequest,
            _ => Code::Internal,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The JSON schema of a code (MCP's output schemas): one of the names.
impl schemars::JsonSchema for Code {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Code".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Code::ALL.iter().map(|c| c.name()).collect();
        schemars::json_schema!({
            "type": "string",
            "description": "Stable error code; see the table in docs/API.md.",
            "enum": names,
        })
    }
}

impl utoipa::PartialSchema for Code {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some("Stable error code; see the table in docs/API.md."))
            .enum_values(Some(Code::ALL.iter().map(|c| c.name())))
            .into()
    }
}

impl utoipa::ToSchema for Code {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_statuses_are_errors() {
        let mut names: Vec<_> = Code::ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Code::ALL.len());
        for c in Code::ALL {
            assert!((400..600).contains(&c.http_status()), "{c}");
            assert_ne!(c.exit_code(), 0, "{c}");
            // A bare status maps back to a code with that status.
            assert_eq!(
                Code::from_http_status(c.http_status()).http_status(),
                c.http_status()
            );
        }
    }
}
